// Through core's API on the webgpu device: the fused crossEntropy, unscaleAndCheck and adamw
// kernels are what runs (one dispatch each) and agree with the decompositions; non-blocking copies
// from pinned memory are queued through mapped staging buffers (XFER-2, PIN-1) with the same
// results as plain copies; a tensor over the adapter's binding limit is a typed error that leaves
// the device usable. (The conformance suite checks the fused kernels against the float64 oracle.)
import '@core/backend-cpu';
import { F } from '@core/nn';
import { AdamW } from '@core/optim';
import {
  ampForeachNonFiniteCheckAndUnscale_, bfloat16, bool, float16, float32, getBackend, int32, manualSeed, randn, registerBackend,
  setFusedKernelsEnabled, tensor, TensorError, zeros, type DType, type Tensor,
} from '@core/tensor';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend } from '../src/index.js';
import { startBackend } from './helpers.js';

let gpu: WebGPUBackend;

beforeAll(async () => {
  gpu = await startBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => gpu });
});

afterEach(() => setFusedKernelsEnabled(true));

/** Dispatches queued while `fn` runs (its device work is queued synchronously). */
function dispatchesOf(fn: () => void): number {
  const before = gpu.stats().dispatches;
  fn();
  return gpu.stats().dispatches - before;
}

async function values(t: Tensor): Promise<number[]> {
  return Array.from(await t.data(), Number);
}

function close(got: number[], want: number[], tol: number): void {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i]!), `element ${i}: ${g} vs ${want[i]}`).toBeLessThanOrEqual(tol * (1 + Math.abs(want[i]!))));
}

describe('fused kernels through core', () => {
  it('declares contract 1.1.0 and all five fused kernels', () => {
    expect(gpu.contractVersion).toBe('1.1.0');
    expect(Object.keys(gpu.fused ?? {}).sort()).toEqual(['adamw', 'crossEntropy', 'logSoftmax', 'softmax', 'unscaleAndCheck']);
  });

  it('F.crossEntropy (ignoreIndex, label smoothing) runs the fused kernel: one dispatch for the losses, same value and gradient as the decomposition', async () => {
    manualSeed(3);
    const base = randn([6, 5]);
    const target = tensor([0, 4, -100, 2, 1, 3], { dtype: int32 });
    const run = async (fused: boolean) => {
      setFusedKernelsEnabled(fused);
      const x = base.to('webgpu').requiresGrad_();
      const t = target.to('webgpu');
      let loss!: Tensor;
      const n = dispatchesOf(() => { loss = F.crossEntropy(x, t, { labelSmoothing: 0.1, reduction: 'none' }); });
      loss.sum().backward();
      return { n, loss: await values(loss), grad: await values(x.grad!) };
    };
    const fused = await run(true);
    const decomposed = await run(false);
    expect(fused.n).toBe(1);
    expect(decomposed.n).toBeGreaterThan(5);
    expect(fused.loss[2]).toBe(0); // the ignored row
    close(fused.loss, decomposed.loss, 1e-5);
    close(fused.grad, decomposed.grad, 1e-5);
  });

  it('GS-6: unscaleAndCheck is one dispatch per grad, flags Inf and NaN on the device and unscales exactly like the decomposition', async () => {
    const grads = (d: DType) => [tensor([1000.5, -7, 0.3, 3e4], { dtype: d, device: 'webgpu' }), tensor([2, Number.NaN, 6], { dtype: d, device: 'webgpu' })];
    for (const d of [float32, bfloat16, float16]) {
      const result = async (fused: boolean) => {
        setFusedKernelsEnabled(fused);
        const gs = grads(d);
        const found = zeros([], { device: 'webgpu' });
        const inv = tensor(1 / 3000.5, { device: 'webgpu' });
        const n = dispatchesOf(() => ampForeachNonFiniteCheckAndUnscale_(gs, found, inv));
        return { n, found: await found.item(), gs: [await values(gs[0]!), await values(gs[1]!)] };
      };
      const fused = await result(true);
      const decomposed = await result(false);
      expect(fused.n).toBe(2);
      expect(fused.found).toBe(1);
      expect(fused.gs).toEqual(decomposed.gs); // bit for bit (NaN compares equal in toEqual)
    }
  });

  it('OPT-9: AdamW (amsgrad, weight decay) steps with one dispatch per parameter and matches the decomposition bit for bit in float32', async () => {
    const run = async (fused: boolean) => {
      setFusedKernelsEnabled(fused);
      manualSeed(4);
      const p = randn([4, 3]).to('webgpu').requiresGrad_();
      const opt = new AdamW([p], { lr: 0.01, weightDecay: 0.1, amsgrad: true });
      const counts: number[] = [];
      for (let step = 0; step < 3; step++) {
        p.grad = randn([4, 3]).to('webgpu');
        counts.push(dispatchesOf(() => opt.step()));
      }
      return { counts, p: await values(p.detach()) };
    };
    const fused = await run(true);
    const decomposed = await run(false);
    expect(fused.counts).toEqual([4, 1, 1]); // the first step also zero-fills expAvg, expAvgSq and maxExpAvgSq
    expect(Math.min(...decomposed.counts)).toBeGreaterThan(10);
    close(fused.p, decomposed.p, 2e-7);
  });
});

describe('pinned memory and non-blocking copies', () => {
  it('PIN-1: webgpu declares pinnedMemory, so pinMemory() works and returns a pinned copy', async () => {
    expect(getBackend('webgpu').capabilities.pinnedMemory).toBe(true);
    const x = tensor([1, 2, 3]);
    const p = x.pinMemory();
    expect(p.isPinned()).toBe(true);
    expect(p.pinMemory()).toBe(p);
    expect(await values(p)).toEqual([1, 2, 3]);
  });

  it('XFER-2: a non-blocking copy of a pinned tensor is queued behind the device work through a mapped staging buffer (no flush), with the same result as a plain copy', async () => {
    for (const d of [float32, float16, bfloat16, int32]) {
      const host = tensor([1, -2, 3, 4, 0, 8], { dtype: d });
      const pinned = host.pinMemory();
      const a = tensor([1, 1, 1, 1, 1, 1], { dtype: d, device: 'webgpu' });
      await a.data();
      const before = gpu.stats();
      const busy = a.add(a); // queued, not submitted yet
      const queued = pinned.to('webgpu', { nonBlocking: true });
      const sum = queued.add(busy); // later work on the queue sees the copy (XFER-2)
      const mid = gpu.stats();
      expect(mid.stagedUploads - before.stagedUploads).toBe(1);
      expect(mid.submits - before.submits).toBe(0); // nothing was flushed for the copy
      const plain = host.to('webgpu'); // a pageable source: the queued work is submitted first
      expect(gpu.stats().submits - mid.submits).toBe(1);
      expect(await values(queued)).toEqual(await values(plain));
      expect(await values(sum)).toEqual((await values(host)).map((v) => v + 2));
    }
  });

  it('XFER-2: odd-length half copies and pageable non-blocking copies take the plain path, same values', async () => {
    const before = gpu.stats().stagedUploads;
    const odd = tensor([1, 2, 3], { dtype: float16 }).pinMemory().to('webgpu', { nonBlocking: true });
    const pageable = tensor([4, 5]).to('webgpu', { nonBlocking: true });
    expect(gpu.stats().stagedUploads).toBe(before);
    expect(await values(odd)).toEqual([1, 2, 3]);
    expect(await values(pageable)).toEqual([4, 5]);
  });

  it('XFER-3: a non-blocking download lands in pinned memory, read through a staging buffer', async () => {
    const x = tensor([1, 2, 3], { device: 'webgpu' });
    const nb = await x.toAsync('cpu', { nonBlocking: true });
    expect(nb.isPinned()).toBe(true);
    expect(await values(nb)).toEqual([1, 2, 3]);
    // and back again from that pinned tensor, queued
    const again = nb.to('webgpu', { nonBlocking: true });
    expect(await values(again)).toEqual([1, 2, 3]);
  });
});

describe('the storage-binding limit through core', () => {
  it('a tensor over maxStorageBufferBindingSize is a TensorError naming the limit, and the device keeps working', async () => {
    const limit = gpu.capabilities.maxBufferBytes;
    const tooMany = Math.floor(limit / 4) + 1;
    expect(() => zeros([tooMany], { device: 'webgpu' })).toThrow(TensorError);
    expect(() => zeros([tooMany], { device: 'webgpu' })).toThrow(`the webgpu backend's largest buffer is ${limit} bytes`);
    // bool is 1 byte on the host but 4 on the device: the backend's own typed error names the binding limit.
    expect(() => zeros([tooMany], { device: 'webgpu', dtype: bool })).toThrow(/maxStorageBufferBindingSize/);
    expect(() => zeros([tooMany], { device: 'webgpu', dtype: bool })).toThrow(TensorError);
    expect(await values(tensor([1, 2], { device: 'webgpu' }).mul(3))).toEqual([3, 6]);
  });
});
