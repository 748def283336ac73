// Deliberately broken CPU backends (wrapped kernel objects, never committed source changes) that
// the suite must catch: the conformance suite's mutation check.
// Mutants of fused kernels turn the wasm kernels off (`wasm: false`): the wasm softmax and
// logSoftmax would otherwise shadow the TypeScript ones being broken.
import { createCpuBackend, CpuFused, CpuKernels, CpuStorage } from '@core/backend-cpu';
import type { AdamSpec, CrossEntropySpec } from '@core/tensor';
import { float32BitsFromNumber, type Backend, type TensorRef } from './mutant-helpers.js';

type Ref = TensorRef<CpuStorage>;

function contiguous(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) { s[d] = acc; acc *= shape[d]!; }
  return s;
}

function isContiguous(r: Ref): boolean {
  const want = contiguous(r.shape);
  return r.shape.every((s, d) => s === 1 || r.strides[d] === want[d]);
}

/** f32 → f16 bits like the library's conversion, but ties round up (away from zero) instead of to even. */
export function float16RoundHalfUp(x: number): number {
  const bits = float32BitsFromNumber(x);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return mant !== 0 ? sign | 0x7e00 : sign | 0x7c00;
  const e = exp - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    let half = ((e + 15) << 10) | (mant >>> 13);
    if ((mant & 0x1fff) >= 0x1000) half += 1; // the mutation: ≥ instead of > or (= and odd)
    return sign | half;
  }
  if (e < -25) return sign;
  const full = mant | 0x800000;
  const shift = -e - 1;
  let half = full >>> shift;
  if ((full & ((1 << shift) - 1)) >= 1 << (shift - 1)) half += 1;
  return sign | half;
}

/** Mutant 1: the float16 cast rounds half up. */
export function castRoundHalfUp(): Backend<CpuStorage> {
  return createCpuBackend({
    kernels: {
      ...CpuKernels,
      cast(x: Ref, out: Ref) {
        if (out.dtype !== 'float16') return CpuKernels.cast(x, out);
        const n = out.shape.reduce((a, b) => a * b, 1);
        const tmp = new CpuStorage('float32', n);
        CpuKernels.cast(x, { storage: tmp, dtype: 'float32', shape: out.shape, strides: contiguous(out.shape), offset: 0 });
        const bits = new CpuStorage('float16', n);
        for (let i = 0; i < n; i++) bits.data[i] = float16RoundHalfUp(tmp.data[i]!);
        CpuKernels.copy({ storage: bits, dtype: 'float16', shape: out.shape, strides: contiguous(out.shape), offset: 0 }, out);
      },
    },
  });
}

/** Mutant 2: strided (non-contiguous) inputs are read one element late along their last axis. */
export function stridedReadOffByOne(): Backend<CpuStorage> {
  const shift = (r: Ref): Ref => (r.shape.length > 0 && !isContiguous(r) ? { ...r, offset: r.offset + r.strides[r.shape.length - 1]! } : r);
  const k = CpuKernels;
  return createCpuBackend({
    kernels: {
      ...k,
      unary: (op, x, out) => k.unary(op, shift(x), out),
      binary: (op, a, b, out) => k.binary(op, shift(a), shift(b), out),
      copy: (x, out) => k.copy(shift(x), out),
    },
  });
}

/** Mutant 3: the fused softmax forgets to subtract the row maximum (overflows for large inputs). */
export function softmaxWithoutMax(): Backend<CpuStorage> {
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      softmax(x: Ref, dim: number, out: Ref) {
        // exp(x) / Σ exp(x) through the primitives, without the shift.
        const n = x.shape.reduce((a, b) => a * b, 1);
        const e = new CpuStorage(x.dtype, n);
        const eRef: Ref = { storage: e, dtype: x.dtype, shape: x.shape, strides: contiguous(x.shape), offset: 0 };
        CpuKernels.unary('exp', x, eRef);
        const rank = x.shape.length;
        const axis = rank === 0 ? 0 : (dim + rank) % rank;
        const kept = x.shape.map((s, i) => (i === axis ? 1 : s));
        const sum = new CpuStorage(x.dtype, kept.reduce((a, b) => a * b, 1));
        const sumRef: Ref = { storage: sum, dtype: x.dtype, shape: kept, strides: contiguous(kept), offset: 0 };
        CpuKernels.reduce('sum', eRef, rank === 0 ? [] : [axis], sumRef, x.dtype === 'float64' ? 'float64' : 'float32');
        CpuKernels.binary('div', eRef, { ...sumRef, shape: x.shape, strides: sumRef.strides.map((s, i) => (kept[i] === 1 && x.shape[i] !== 1 ? 0 : s)) }, out);
      },
    },
  });
}

/** Mutant 4 (subtle): the fused logSoftmax normalises with log(Σ + 1e-7) — a "safe log" epsilon. */
export function logSoftmaxEpsilon(): Backend<CpuStorage> {
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      logSoftmax(x: Ref, dim: number, out: Ref) {
        CpuFused.logSoftmax(x, dim, out);
        const n = out.shape.reduce((a, b) => a * b, 1);
        const tmp = new CpuStorage(out.dtype, n);
        const ref: Ref = { storage: tmp, dtype: out.dtype, shape: out.shape, strides: contiguous(out.shape), offset: 0 };
        CpuKernels.copy(out, ref);
        const eps = new CpuStorage(out.dtype, 1);
        CpuKernels.fill({ storage: eps, dtype: out.dtype, shape: [], strides: [], offset: 0 }, 1e-7);
        CpuKernels.binary('sub', ref, { storage: eps, dtype: out.dtype, shape: out.shape, strides: out.shape.map(() => 0), offset: 0 }, out);
      },
    },
  });
}

/**
 * Mutant 5: max/min reductions skip NaN (C's fmax/fmin semantics) instead of propagating it, for
 * float32 and float64. The GradScaler's inf check reduces each grad to its max and min, so a NaN
 * gradient goes unnoticed and the optimizer steps with it.
 */
export function maxMinSkipNaN(): Backend<CpuStorage> {
  return createCpuBackend({
    // Without the fused unscale-and-check, whose own test does not reduce: the scaler decomposes.
    fused: { softmax: CpuFused.softmax, logSoftmax: CpuFused.logSoftmax, crossEntropy: CpuFused.crossEntropy, adamw: CpuFused.adamw },
    kernels: {
      ...CpuKernels,
      reduce(op, x: Ref, axes, out: Ref, accumulate) {
        if ((op !== 'max' && op !== 'min') || (x.dtype !== 'float32' && x.dtype !== 'float64')) return CpuKernels.reduce(op, x, axes, out, accumulate);
        const n = x.shape.reduce((a, b) => a * b, 1);
        const tmp = new CpuStorage(x.dtype, n);
        const ref: Ref = { storage: tmp, dtype: x.dtype, shape: x.shape, strides: contiguous(x.shape), offset: 0 };
        CpuKernels.copy(x, ref);
        const data = tmp.data as Float32Array | Float64Array;
        for (let i = 0; i < n; i++) if (Number.isNaN(data[i]!)) data[i] = op === 'max' ? -Infinity : Infinity;
        return CpuKernels.reduce(op, ref, axes, out, accumulate);
      },
    },
  });
}

/** Mutant 6: the fused crossEntropy drops label smoothing (the plain −log p[t] per row). */
export function crossEntropyIgnoresSmoothing(): Backend<CpuStorage> {
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      crossEntropy(x: Ref, target: Ref, spec: CrossEntropySpec, out: Ref) {
        CpuFused.crossEntropy(x, target, { ...spec, labelSmoothing: 0 }, out);
      },
    },
  });
}

/** Whether element i of a contiguous float ref is ±Inf (half types compared as bit patterns). */
function isInfAt(r: Ref, i: number): boolean {
  const raw = r.storage.data[r.offset + i]!;
  if (r.dtype === 'float16') return (raw & 0x7fff) === 0x7c00;
  if (r.dtype === 'bfloat16') return (raw & 0x7fff) === 0x7f80;
  return raw === Infinity || raw === -Infinity;
}

/** Mutant 7: the fused unscale-and-check flags Inf but not NaN (an `abs(v) == inf` test). */
export function unscaleMissesNaN(): Backend<CpuStorage> {
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      unscaleAndCheck(grads: readonly Ref[], foundInf: Ref, invScale: Ref) {
        const before = foundInf.storage.data[foundInf.offset]!;
        const sawInf = grads.some((g) => Array.from({ length: g.shape.reduce((a, b) => a * b, 1) }, (_, i) => isInfAt(g, i)).some(Boolean));
        CpuFused.unscaleAndCheck(grads, foundInf, invScale);
        if (!sawInf) foundInf.storage.data[foundInf.offset] = before;
      },
    },
  });
}

/** Mutant 8 (subtle): the fused Adam update forgets the second moment's bias correction. */
export function adamWithoutBiasCorrection2(): Backend<CpuStorage> {
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      adamw(param: Ref, grad: Ref, expAvg: Ref, expAvgSq: Ref, maxExpAvgSq: Ref | null, spec: AdamSpec) {
        CpuFused.adamw(param, grad, expAvg, expAvgSq, maxExpAvgSq, { ...spec, biasCorrection2Sqrt: 1 });
      },
    },
  });
}

export const MUTANTS = {
  castRoundHalfUp, stridedReadOffByOne, softmaxWithoutMax, logSoftmaxEpsilon, maxMinSkipNaN, crossEntropyIgnoresSmoothing, unscaleMissesNaN, adamWithoutBiasCorrection2,
} as const;
