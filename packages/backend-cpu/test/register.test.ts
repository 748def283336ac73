// The package entry registers the cpu backend with core; a few ops then run end to end through
// core's public API (the kernels themselves are tested directly in the other files).
import { getBackend, int32, listBackends, tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/index.js';

describe('registration', () => {
  it('registers the cpu backend on import', () => {
    expect(listBackends()).toContain('cpu');
    const be = getBackend('cpu');
    expect(be.name).toBe('cpu');
    expect(be.deviceCount).toBe(1);
    expect(typeof createCpuBackend).toBe('function');
  });

  it('runs ops from core on cpu tensors', () => {
    const a = tensor([[1, 2, 3], [4, 5, 6]]);
    const b = tensor([10, 20, 30]);
    expect(Array.from(a.add(b).dataSync())).toEqual([11, 22, 33, 14, 25, 36]);
    expect(Array.from(a.matmul(a.t()).dataSync())).toEqual([14, 32, 32, 77]);
    expect(Array.from(a.sum(0).dataSync())).toEqual([5, 7, 9]);
    const sm = Array.from(a.softmax(1).dataSync());
    expect(Math.abs(sm[0]! + sm[1]! + sm[2]! - 1)).toBeLessThan(1e-6);
    const idx = tensor([[2, 0], [1, 1]], { dtype: int32 });
    expect(Array.from(a.gather(1, idx).dataSync())).toEqual([3, 1, 5, 5]);
  });
});
