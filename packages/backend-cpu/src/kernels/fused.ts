// Fused softmax and logSoftmax along any dim, numerically stable (the row max is subtracted
// before exp). Rows are computed in f64; float32 and half outputs are rounded to f32 first and
// then (halves only) to the half format when stored, float64 keeps f64.
import type { FusedKernels } from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { checkDType, checkShape, numelOf, permuteRef, readValues, type Ref, scatterFrom } from './io.js';
import { normalizeAxis } from './strided.js';

function softmaxLike(what: string, x: Ref, dim: number, out: Ref, log: boolean): void {
  checkShape(what, 'out', out, x.shape);
  checkDType(what, 'out', out, x.dtype);
  if (x.dtype !== 'float32' && x.dtype !== 'float64' && x.dtype !== 'float16' && x.dtype !== 'bfloat16') {
    throw new TypeError(`cpu ${what}: needs a floating dtype, got ${x.dtype}`);
  }
  const rank = x.shape.length;
  const d = normalizeAxis(dim, rank, what);
  const total = numelOf(x);
  if (total === 0) return;
  // Move `dim` last so each row is contiguous in the value array.
  const perm = rank === 0 ? [] : [...[...Array(rank).keys()].filter((a) => a !== d), d];
  const length = rank === 0 ? 1 : x.shape[d];
  const values = readValues(permuteRef(x, perm));
  const result = x.dtype === 'float64' ? new Float64Array(total) : new Float32Array(total);
  const exps = new Float64Array(length);
  for (let start = 0; start < total; start += length) {
    const end = start + length;
    let max = -Infinity;
    for (let i = start; i < end; i++) {
      const v = values[i];
      if (v > max || v !== v) max = v; // once NaN, `v > max` is never true again
    }
    let sum = 0;
    for (let i = start; i < end; i++) {
      const e = Math.exp(values[i] - max);
      exps[i - start] = e;
      sum += e;
    }
    if (log) {
      const logSum = Math.log(sum);
      for (let i = start; i < end; i++) result[i] = values[i] - max - logSum;
    } else {
      for (let i = start; i < end; i++) result[i] = exps[i - start] / sum;
    }
  }
  scatterFrom(result, permuteRef(out, perm));
}

export function softmax(x: Ref, dim: number, out: Ref): void {
  softmaxLike('softmax', x, dim, out, false);
}

export function logSoftmax(x: Ref, dim: number, out: Ref): void {
  softmaxLike('logSoftmax', x, dim, out, true);
}

/** The CPU backend's fused kernels: one-pass, numerically stable softmax and logSoftmax. */
export const CpuFused: FusedKernels<CpuStorage> = { softmax, logSoftmax };
