// Through core's API on the webgpu device: the fused crossEntropy, unscaleAndCheck, adamw and
// addcmul kernels are what runs (one dispatch each) and agree with the decompositions; non-blocking copies
// from pinned memory are queued through mapped staging buffers (XFER-2, PIN-1) with the same
// results as plain copies; a tensor over the adapter's binding limit is a typed error that leaves
// the device usable. (The conformance suite checks the fused kernels against the float64 oracle.)
import '@core/backend-cpu';
import { F } from '@core/nn';
import { AdamW } from '@core/optim';
import {
  ampForeachNonFiniteCheckAndUnscale_, bfloat16, bfloat16BitsToNumber, bool, float16, float16BitsToNumber, float32, float32ToBFloat16Bits,
  float32ToFloat16Bits, getBackend, int32, manualSeed, randn, registerBackend, setFusedKernelsEnabled, tensor, TensorError, zeros,
  type DType, type Tensor, type TensorRef,
} from '@core/tensor';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend, WebGPUStorage } from '../src/index.js';
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
  it('declares contract 1.5.0 (prepared programs) and all seven fused kernels', () => {
    expect(gpu.contractVersion).toBe('1.6.0');
    expect(gpu.prepare).toBeTypeOf('function');
    expect(Object.keys(gpu.fused ?? {}).sort()).toEqual(['adamw', 'addcmul', 'attention', 'crossEntropy', 'logSoftmax', 'softmax', 'unscaleAndCheck']);
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

/** The float32 bit patterns of a tensor's values: +0 and −0, and NaN payloads, compare as bits. */
async function bits(t: Tensor): Promise<number[]> {
  return Array.from(new Uint32Array(Float32Array.from(await t.data(), Number).buffer));
}

describe('addcmul (x + t1·t2, contract 1.2.0)', () => {
  it('p.add(g, alpha) and p.sub(g, alpha) run it in one dispatch and give the decomposition\'s bits, also where an FMA would round differently', async () => {
    // Element 0: −1 + (1 + 2^-23)(1 − 2^-23): the product 1 − 2^-46 rounds to 1, so the sum is +0; an FMA gives −2^-46.
    const alpha = 1 - 2 ** -23;
    const run = async (fused: boolean) => {
      setFusedKernelsEnabled(fused);
      manualSeed(5);
      const p = randn([40, 33]).to('webgpu');
      const g = randn([33, 40]).to('webgpu').transpose(0, 1); // read through strides
      const row = randn([33]).to('webgpu'); // broadcast over the rows
      const cancel = tensor([-1, Infinity, 3]).to('webgpu');
      const gCancel = tensor([1 + 2 ** -23, 2, Number.NaN]).to('webgpu');
      const results = [p.add(g, -0.01), p.sub(row, 0.3), cancel.add(gCancel, alpha), p.sub(g, 1.7)];
      // Counted once its scalar is on the device (core caches it after the first use).
      const n = dispatchesOf(() => { results.push(p.sub(g, 1.7)); });
      return { n, bits: await Promise.all(results.map(bits)) };
    };
    const fused = await run(true);
    const decomposed = await run(false);
    expect(fused.n).toBe(1);
    expect(decomposed.n).toBe(2);
    expect(fused.bits[2]![0]).toBe(0); // +0
    expect(fused.bits).toEqual(decomposed.bits);
  });

  it('float16 and bfloat16 (the kernel called directly: core fuses float32 only) compute in f32 and round once on store, strided, broadcast and at odd offsets', async () => {
    const addcmul = gpu.fused!.addcmul!;
    const codecs = [
      { dtype: 'float16', encode: float32ToFloat16Bits, decode: float16BitsToNumber },
      { dtype: 'bfloat16', encode: float32ToBFloat16Bits, decode: bfloat16BitsToNumber },
    ] as const;
    for (const { dtype, encode, decode } of codecs) {
      const made: WebGPUStorage[] = [];
      const store = (values: number[]) => {
        const s = gpu.alloc(0, dtype, values.length);
        gpu.write(s, Uint16Array.from(values, encode), 0);
        made.push(s);
        return s;
      };
      const at = (storage: WebGPUStorage, shape: number[], strides: number[], offset: number): TensorRef<WebGPUStorage> =>
        ({ storage, dtype, shape, strides, offset });
      // x [3, 5] at offset 1; t1 [3, 5] read transposed from [5, 3]; t2 a 0-dim scalar (stride 0); out [3, 5] at offset 1 of 17 (odd, so packed words are shared).
      const xs = Array.from({ length: 16 }, (_, i) => (i - 7) * 0.37);
      const t1s = Array.from({ length: 15 }, (_, i) => 1.5 - i * 0.21);
      const t2s = [0.333];
      const out = store(new Array<number>(17).fill(9));
      addcmul(at(store(xs), [3, 5], [5, 1], 1), at(store(t1s), [3, 5], [1, 3], 0), at(store(t2s), [3, 5], [0, 0], 0), at(out, [3, 5], [5, 1], 1));
      const got = Array.from((await gpu.read(out)) as Uint16Array);
      const v = (values: number[], i: number) => decode(encode(values[i]!));
      const want = [encode(9)];
      for (let r = 0; r < 3; r++) {
        for (let c = 0; c < 5; c++) want.push(encode(Math.fround(v(xs, 1 + r * 5 + c) + Math.fround(v(t1s, c * 3 + r) * v(t2s, 0)))));
      }
      want.push(encode(9));
      made.forEach((m) => gpu.free(m));
      expect(got, dtype).toEqual(want);
    }
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
