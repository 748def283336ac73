// The native path's fused float32 kernels: softmax, log-softmax and per-row cross entropy (rows in
// double, as the TypeScript kernels compute them) within one float32 ulp of the TypeScript kernels,
// special values included; the Adam/AdamW update bit for bit, over every branch of the update and
// several steps of state; and what the addon leaves to the wasm and TypeScript kernels.
import type { AdamSpec, CrossEntropySpec } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuFused } from '../src/kernels/index.js';
import { loadNative, type NativePath } from '../src/native.js';
import { backend, type Ref, seeded, strides } from './helpers.js';

const loaded = loadNative({ native: true, threads: 2 });
if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
const native: NativePath = loaded;

const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** A float32 view of `shape` (contiguous unless strides are given) over a fresh storage holding `data` from `offset`. */
function f32(data: Float32Array, shape: readonly number[], viewStrides: readonly number[] = strides(shape), offset = 0): Ref {
  const storage = backend.alloc(0, 'float32', offset + data.length);
  storage.data.fill(NaN);
  (storage.data as Float32Array).set(data, offset);
  return { storage, dtype: 'float32', shape, strides: viewStrides, offset };
}

/** `n` seeded floats in [lo, hi). */
function floats(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = seeded(seed);
  return Float32Array.from({ length: n }, () => next(lo, hi));
}

/** The elements of a contiguous ref. */
const elements = (r: Ref): Float32Array => (r.storage.data as Float32Array).subarray(r.offset, r.offset + numel(r.shape));

/** One float32 ulp of |v|'s binade (at least the smallest normal's). */
const ulp = (v: number): number => 2 ** (Math.max(Math.floor(Math.log2(Math.abs(v) || 1)), -126) - 23);

/** Index of the first element of `got` more than `slack(want)` from `want` (NaN only matching NaN, infinities exactly), or -1. */
function farFrom(got: Float32Array, want: Float32Array, slack: (w: number) => number): number {
  return got.findIndex((g, i) => {
    const w = want[i]!;
    if (Number.isNaN(w) || !Number.isFinite(w)) return !Object.is(g, w) && !(Number.isNaN(g) && Number.isNaN(w));
    return !(Math.abs(g - w) <= slack(w));
  });
}

/** Rows that reach the special cases: NaN, +Inf, all −Inf, a spread that underflows e^x, zeros of both signs, a constant row. */
function withSpecials(data: Float32Array, length: number): Float32Array {
  const rows = data.length / length;
  const set = (row: number, f: (i: number) => number): void => {
    for (let i = 0; i < length; i++) data[(row % rows) * length + i] = f(i);
  };
  set(1, (i) => (i === 3 ? NaN : data[length + i]!));
  set(2, (i) => (i === 0 ? Infinity : data[2 * length + i]!));
  set(3, () => -Infinity);
  set(4, (i) => (i % 2 === 0 ? -1000 : i % 3 === 0 ? -50 : 80));
  set(5, (i) => (i % 2 === 0 ? 0 : -0));
  set(6, () => 3.5);
  return data;
}

describe('native softmax and log-softmax', () => {
  const shapes: number[][] = [[128, 1000], [3, 5, 333], [10, 4099], [4096, 1], [700, 7]];
  for (const shape of shapes) {
    for (const log of [false, true]) {
      it(`${log ? 'log-softmax' : 'softmax'} of [${shape}] is within one float32 ulp of the TypeScript kernel's, special rows included`, () => {
        const length = shape[shape.length - 1]!;
        const x = f32(withSpecials(floats(numel(shape), 11, -20, 20), length), shape, strides(shape), 3);
        const got = f32(new Float32Array(numel(shape)), shape, strides(shape), 1);
        const want = f32(new Float32Array(numel(shape)), shape);
        expect(native.softmax(x, -1, got, log)).toBe(true);
        (log ? CpuFused.logSoftmax : CpuFused.softmax)(x, shape.length - 1, want);
        expect(farFrom(elements(got), elements(want), ulp)).toBe(-1);
        expect(got.storage.data[0], 'the element before out').toBeNaN();
      });
    }
  }

  it('runs in place, out the very same view as x', () => {
    const x = f32(floats(64 * 100, 3, -5, 5), [64, 100]);
    const want = f32(new Float32Array(6400), [64, 100]);
    CpuFused.softmax(x, 1, want);
    expect(native.softmax(x, 1, x, false)).toBe(true);
    expect(farFrom(elements(x), elements(want), ulp)).toBe(-1);
  });
});

describe('native cross entropy', () => {
  const spec = (labelSmoothing: number): CrossEntropySpec => ({ ignoreIndex: -100, labelSmoothing } as CrossEntropySpec);
  for (const smoothing of [0, 0.1]) {
    it(`per-row losses with label smoothing ${smoothing} are within one float32 ulp of the TypeScript kernel's; ignored rows 0, bad targets NaN`, () => {
      const [rows, classes] = [128, 1000];
      // Rows 1010 apart in the storage; targets every other element of theirs.
      const x = f32(withSpecials(floats(rows * 1010, 5, -10, 10), 1010), [rows, classes], [1010, 1]);
      const next = seeded(9);
      const t = Int32Array.from({ length: 2 * rows }, (_, i) => (i === 14 ? -100 : i === 16 ? classes : i === 18 ? -1 : Math.floor(next(0, classes))));
      const targetStorage = backend.alloc(0, 'int32', t.length);
      targetStorage.data.set(t);
      const target: Ref = { storage: targetStorage, dtype: 'int32', shape: [rows], strides: [2], offset: 0 };
      const got = f32(new Float32Array(rows), [rows]);
      const want = f32(new Float32Array(rows), [rows]);
      expect(native.crossEntropy(x, target, spec(smoothing), got)).toBe(true);
      CpuFused.crossEntropy(x, target, spec(smoothing), want);
      // Double rows rounded once: an ulp of the loss, or of the double error of lse and x[t] where they cancel.
      expect(farFrom(elements(got), elements(want), (w) => ulp(w) + 1e-12)).toBe(-1);
      expect([got.storage.data[7], got.storage.data[8], got.storage.data[9]]).toEqual([0, NaN, NaN]);
    });
  }
});

describe('native Adam/AdamW', () => {
  const base: AdamSpec = {
    step: 1, lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, maximize: false,
    stepSize: 0, biasCorrection2Sqrt: 0,
  };
  /** The spec of step `step` with the bias corrections the optimizer computes. */
  const at = (spec: Partial<AdamSpec>, step: number): AdamSpec => {
    const s = { ...base, ...spec, step };
    return { ...s, stepSize: s.lr / (1 - s.beta1 ** step), biasCorrection2Sqrt: Math.sqrt(1 - s.beta2 ** step) };
  };
  const configs: [string, Partial<AdamSpec>, boolean][] = [
    ['Adam (OPT-8)', {}, false],
    ['Adam with weight decay (OPT-8)', { weightDecay: 0.1 }, false],
    ['AdamW (OPT-9)', { weightDecay: 0.01, decoupled: true }, false],
    ['AdamW, amsgrad', { weightDecay: 0.01, decoupled: true }, true],
    ['Adam, maximize, amsgrad', { maximize: true }, true],
    ['Adam with β1 = 0.2 (the other lerp branch)', { beta1: 0.2, lr: 0.01 }, false],
  ];

  /** param, grad, expAvg, expAvgSq and (amsgrad) maxExpAvgSq over fresh storages, the grad holding specials. */
  function state(n: number, amsgrad: boolean): Ref[] {
    const g = floats(n, 2, -3, 3);
    [g[5], g[6], g[7], g[8]] = [NaN, Infinity, 0, -0];
    const refs = [f32(floats(n, 1), [n], [1], 2), f32(g, [n]), f32(new Float32Array(n), [n]), f32(new Float32Array(n), [n], [1], 5)];
    return amsgrad ? [...refs, f32(new Float32Array(n), [n])] : refs;
  }

  for (const [name, spec, amsgrad] of configs) {
    it(`${name}: three steps give the TypeScript kernel's bits in every tensor`, async () => {
      for (const n of [5003, 100003]) {
        const got = state(n, amsgrad);
        const want = state(n, amsgrad);
        for (let step = 1; step <= 3; step++) {
          const [p, g, m, v, vmax = null] = got;
          expect(native.adamw(p!, g!, m!, v!, vmax, at(spec, step))).toBe(true);
          const [wp, wg, wm, wv, wvmax = null] = want;
          CpuFused.adamw(wp!, wg!, wm!, wv!, wvmax, at(spec, step));
          await new Promise((resolve) => setImmediate(resolve));
        }
        got.forEach((r, k) => expect(farFrom(elements(r), elements(want[k]!), () => 0), `tensor ${k}, n ${n}`).toBe(-1));
      }
    });
  }

  it('AdamW with p = 1, g = 0.5, lr = 0.1 steps to 0.899 (OPT-9)', () => {
    const n = 4096;
    const [p, g, m, v] = [1, 0.5, 0, 0].map((value) => f32(new Float32Array(n).fill(value), [n]));
    expect(native.adamw(p!, g!, m!, v!, null, at({ lr: 0.1, weightDecay: 0.01, decoupled: true }, 1))).toBe(true);
    expect(elements(p!).every((x) => Math.abs(x - 0.899) < 1e-6)).toBe(true);
  });
});

describe('what the native fused kernels leave to the others', () => {
  it('leaves float64, another softmax dim, strided or small inputs, shared storages and odd targets', () => {
    const x = f32(floats(6400, 1), [64, 100]);
    const out = f32(new Float32Array(6400), [64, 100]);
    expect(native.softmax(x, 0, out, false)).toBe(false);
    expect(native.softmax(f32(floats(64, 1), [8, 8]), 1, f32(new Float32Array(64), [8, 8]), false)).toBe(false);
    expect(native.softmax({ ...x, shape: [100, 64], strides: [1, 100] }, 1, { ...out, shape: [100, 64] }, false)).toBe(false);
    expect(native.softmax(x, 1, { ...x, offset: 1, shape: [64, 100] }, false)).toBe(false); // overlapping, not the same view
    const f64 = backend.alloc(0, 'float64', 6400);
    expect(native.softmax({ ...x, storage: f64, dtype: 'float64' }, 1, { ...out, storage: backend.alloc(0, 'float64', 6400), dtype: 'float64' }, false)).toBe(false);
    const targets = backend.alloc(0, 'int32', 64);
    const target: Ref = { storage: targets, dtype: 'int32', shape: [64], strides: [1], offset: 0 };
    const losses = f32(new Float32Array(64), [64]);
    expect(native.crossEntropy(x, target, { ignoreIndex: 0.5, labelSmoothing: 0 } as CrossEntropySpec, losses)).toBe(false);
    expect(native.crossEntropy({ ...x, strides: [1, 64] }, target, { ignoreIndex: -100, labelSmoothing: 0 } as CrossEntropySpec, losses)).toBe(false);
    expect(native.crossEntropy(x, target, { ignoreIndex: -100, labelSmoothing: 0 } as CrossEntropySpec, { ...losses, strides: [0] })).toBe(false);
    const p = f32(floats(5000, 1), [5000]);
    const spec = { step: 1, lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false, maximize: false, stepSize: 1e-2, biasCorrection2Sqrt: 0.03 };
    const fresh = (): Ref => f32(new Float32Array(5000), [5000]);
    expect(native.adamw(p, p, fresh(), fresh(), null, spec)).toBe(false); // grad is the param's storage
    expect(native.adamw(p, fresh(), fresh(), { ...fresh(), shape: [2500], strides: [2] }, null, spec)).toBe(false);
  });

  it('routes the backend\'s fused kernels with native on, and keeps a kernel the fused option leaves out absent', () => {
    const on = createCpuBackend({ native: true, wasm: false });
    const off = createCpuBackend({ native: false, wasm: false });
    const data = floats(128 * 1000, 4, -8, 8);
    const [a, b] = [on, off].map((be) => {
      const storage = be.alloc(0, 'float32', data.length);
      be.write(storage, data, 0);
      const out = be.alloc(0, 'float32', data.length);
      const ref = (s: typeof storage): Ref => ({ storage: s, dtype: 'float32', shape: [128, 1000], strides: [1000, 1], offset: 0 });
      be.fused!.logSoftmax!(ref(storage), 1, ref(out));
      return be.readSync!(out) as Float32Array;
    });
    expect(farFrom(a, b, ulp)).toBe(-1);
    expect(createCpuBackend({ native: true, wasm: false, fused: { softmax: CpuFused.softmax } }).fused?.adamw).toBeUndefined();
  });
});
