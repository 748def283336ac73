// Core's host reads on a third-party backend that reads synchronously, in a process where the cpu
// backend is not registered (this file never imports it, and vitest runs each file in a process
// of its own): index range checks, the data-dependent ops and anomaly mode read through the
// backend's own readSync, never by way of the cpu, and a backend without readSync leaves the range
// checks to its kernels.
import { describe, expect, it } from 'vitest';
import {
  autograd, detectAnomaly, float64, int32, listBackends, registerBackend, ShapeError, tensor, TensorError, type Tensor,
} from '@core/tensor';
import { createJsRefBackend } from '../src/index.js';
import { createSyncJsRef } from './sync-jsref.mjs';

registerBackend({ name: 'jsref', priority: 10, create: createSyncJsRef });
const dev = 'jsref:0';
const values = (t: Tensor) => t.toArray();

describe('synchronous reads without a cpu backend', () => {
  it('runs in a process with no cpu backend registered', () => {
    expect(listBackends()).toEqual(['jsref']);
  });

  it('gather, scatterAdd and indexSelect range-check their indices with the backend\'s own read', async () => {
    const x = tensor([[1, 2], [3, 4], [5, 6]], { device: dev });
    const bad = tensor([[0, 1], [3, 0]], { dtype: int32, device: dev });
    expect(() => x.gather(0, bad)).toThrow(ShapeError);
    expect(() => x.gather(0, bad)).toThrow('gather(): index 3 is out of bounds for dimension 0 with size 3');
    expect(() => x.scatterAdd(0, bad, x.narrow(0, 0, 2))).toThrow('scatterAdd(): index 3 is out of bounds for dimension 0 with size 3');
    expect(() => x.indexSelect(1, tensor([2], { dtype: int32, device: dev }))).toThrow('index 2 is out of bounds for dimension 1 with size 2');
    expect(await values(x), 'a failed op leaves its input unchanged').toEqual([[1, 2], [3, 4], [5, 6]]);
    expect(await values(x.gather(0, tensor([[2, 0]], { dtype: int32, device: dev })))).toEqual([[5, 2]]);
  });

  it('ops that allow negative indices report the index as given (take, indexFill)', async () => {
    const x = tensor([10, 20, 30], { device: dev });
    expect(() => x.take(tensor([-4], { dtype: int32, device: dev }))).toThrow('take(): index -4 is out of bounds for dimension 0 with size 3');
    expect(() => x.indexFill(0, tensor([3], { dtype: int32, device: dev }), 0)).toThrow(/index 3 is out of bounds for dimension 0 with size 3/);
    expect(await values(x.take(tensor([-1, 0], { dtype: int32, device: dev })))).toEqual([30, 10]);
  });

  it('data-dependent ops run without await: nonzero, maskedSelect, boolean indexing', async () => {
    const x = tensor([[0, 1.5], [-2, 0]], { device: dev });
    expect(await values(x.nonzero())).toEqual([[0, 1], [1, 0]]);
    expect(await values(x.maskedSelect(x.ne(0)))).toEqual([1.5, -2]);
    expect(await values(x.index([x.lt(0)]))).toEqual([-2]);
  });

  it('anomaly mode reads a backward\'s results with the backend\'s own read', () => {
    class Broken extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.mul(2); }
      static backward(): Tensor { return tensor([NaN, 1], { dtype: float64, device: dev }); }
    }
    const x = tensor([1, 2], { dtype: float64, device: dev }).requiresGrad_();
    expect(() => detectAnomaly(() => Broken.apply(x).sum().backward())).toThrow("Function 'BrokenBackward' returned nan values in its 0th output.");
  });

  it('a backend without readSync gets no host-side range check, and data-dependent ops ask for await', async () => {
    registerBackend({ name: 'jsrefasync', priority: 0, create: () => ({ ...createJsRefBackend(), name: 'jsrefasync' }) });
    const x = tensor([1, 2, 3], { device: 'jsrefasync:0' });
    const bad = tensor([5], { dtype: int32, device: 'jsrefasync:0' });
    // The kernel guards the index instead: the error is jsref's own, not core's ShapeError.
    expect(() => x.gather(0, bad)).toThrow(RangeError);
    expect(() => x.gather(0, bad)).toThrow('jsref gather: index 5 is out of bounds');
    // An op that must see values says how to read them.
    expect(() => x.nonzero()).toThrow(TensorError);
    expect(() => x.nonzero()).toThrow('nonzeroAsync');
    expect(await values(await x.nonzeroAsync())).toEqual([[0], [1], [2]]);
  });
});
