// Ops read scalars (`x.mul(2)`) from a cache of 0-dim tensors. A backend registered again under
// the same name (tests and conformance runs do it) has its own memory, so it must get its own.
import '@core/backend-cpu';
import { createCpuBackend } from '@core/backend-cpu';
import { arange, getBackend, registerBackend, tensor, type Backend } from '@core/tensor';
import { afterEach, describe, expect, it } from 'vitest';

const original = getBackend('cpu') as Backend;

afterEach(() => registerBackend({ name: 'cpu', priority: 100, create: () => original }));

describe('the scalar operand cache', () => {
  it("is per backend instance: a cpu backend registered again reads its own scalars, not the previous one's memory", () => {
    expect(Array.from(tensor([1, 2, 3, 4]).mul(1).dataSync())).toEqual([1, 2, 3, 4]);
    registerBackend({ name: 'cpu', priority: 100, create: () => createCpuBackend() });
    expect(getBackend('cpu')).not.toBe(original);
    // Fill the new backend's memory where the old one kept its cached scalar.
    const filler = arange(4096).add(0.5);
    expect(Array.from(tensor([1, 2, 3, 4]).mul(1).dataSync())).toEqual([1, 2, 3, 4]);
    expect(Array.from(tensor([1, 2, 3, 4]).add(2).dataSync())).toEqual([3, 4, 5, 6]);
    filler.dispose();
  });
});
