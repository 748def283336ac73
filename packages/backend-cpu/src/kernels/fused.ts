// Fused softmax, logSoftmax and crossEntropy, numerically stable (the row max is subtracted
// before exp). Rows are computed in f64; float32 and half outputs are rounded to f32 first and
// then (halves only) to the half format when stored, float64 keeps f64. Also GradScaler's
// unscale-and-check and the Adam/AdamW update, which repeat the decompositions' roundings exactly.
import { roundToBFloat16, roundToFloat16, type AdamSpec, type CrossEntropySpec, type DTypeName, type FusedKernels } from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { checkDType, checkShape, commitValues, numelOf, permuteRef, readValues, type Ref, scatterFrom, valueBuffer } from './io.js';
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

function checkFloating(what: string, ref: Ref): void {
  if (ref.dtype !== 'float32' && ref.dtype !== 'float64' && ref.dtype !== 'float16' && ref.dtype !== 'bfloat16') {
    throw new TypeError(`cpu ${what}: needs a floating dtype, got ${ref.dtype}`);
  }
}

/** Per-row `lse − (1 − ε)·x[t] − (ε/C)·Σx`, 0 for ignored rows, NaN for a target outside [0, C). */
export function crossEntropy(x: Ref, target: Ref, spec: CrossEntropySpec, out: Ref): void {
  checkFloating('crossEntropy', x);
  checkDType('crossEntropy', 'target', target, 'int32');
  checkDType('crossEntropy', 'out', out, x.dtype);
  if (x.shape.length !== 2) throw new TypeError(`cpu crossEntropy: needs logits [N, C], got [${x.shape.join(', ')}]`);
  const [rows, classes] = x.shape as [number, number];
  checkShape('crossEntropy', 'target', target, [rows]);
  checkShape('crossEntropy', 'out', out, [rows]);
  const values = readValues(x);
  const targets = readValues(target);
  const result = x.dtype === 'float64' ? new Float64Array(rows) : new Float32Array(rows);
  const { ignoreIndex, labelSmoothing } = spec;
  for (let r = 0; r < rows; r++) {
    const t = targets[r]!;
    if (t === ignoreIndex) continue; // result[r] stays 0
    if (!(t >= 0 && t < classes)) {
      result[r] = NaN;
      continue;
    }
    const start = r * classes;
    let max = -Infinity;
    let total = 0;
    for (let c = start; c < start + classes; c++) {
      const v = values[c]!;
      if (v > max || v !== v) max = v;
      total += v;
    }
    // An infinite max would give Inf − Inf below; exp(x − max) with max = +Inf is NaN as PyTorch's.
    let sum = 0;
    for (let c = start; c < start + classes; c++) sum += Math.exp(values[c]! - max);
    const lse = max + Math.log(sum);
    const picked = values[start + t]!;
    result[r] = labelSmoothing === 0 ? lse - picked : lse - (1 - labelSmoothing) * picked - (labelSmoothing / classes) * total;
  }
  scatterFrom(result, out);
}

/** Rounding into a stored dtype, from a value already computed in the dtype's compute precision. */
function storeRounding(dtype: DTypeName): (v: number) => number {
  switch (dtype) {
    case 'float64': return (v) => v;
    case 'float16': return roundToFloat16;
    case 'bfloat16': return roundToBFloat16;
    default: return Math.fround;
  }
}

/** GS-6 in place: foundInf = 1 if any element is non-finite, then each element times invScale. */
export function unscaleAndCheck(grads: readonly Ref[], foundInf: Ref, invScale: Ref): void {
  checkDType('unscaleAndCheck', 'foundInf', foundInf, 'float32');
  checkDType('unscaleAndCheck', 'invScale', invScale, 'float32');
  const inv = invScale.storage.data[invScale.offset]!;
  let found = false;
  for (const g of grads) {
    checkFloating('unscaleAndCheck', g);
    const values = readValues(g);
    const result = g.dtype === 'float64' ? new Float64Array(values.length) : new Float32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (!Number.isFinite(v)) found = true;
      result[i] = v * inv; // f64 product, rounded once into f32 (or kept in f64) by the store
    }
    scatterFrom(result, g);
  }
  if (found) foundInf.storage.data[foundInf.offset] = 1;
}

/**
 * One Adam/AdamW update per element, op for op as @core/optim's decomposition computes it: each op
 * in f32 (f64 for float64) with its scalar rounded to that precision, the state stored in its
 * dtype, and `g + wd·p`, `sqrt(v)` and the denominator rounded to the dtype as the decomposition
 * does. So results are bit-identical to the unfused path.
 */
export function adamw(param: Ref, grad: Ref, expAvg: Ref, expAvgSq: Ref, maxExpAvgSq: Ref | null, spec: AdamSpec): void {
  checkFloating('adamw', param);
  const n = numelOf(param);
  for (const [name, ref] of [['grad', grad], ['expAvg', expAvg], ['expAvgSq', expAvgSq], ['maxExpAvgSq', maxExpAvgSq]] as const) {
    if (ref === null) continue;
    checkDType('adamw', name, ref, param.dtype);
    checkShape('adamw', name, ref, param.shape);
  }
  const c = param.dtype === 'float64' ? (v: number) => v : Math.fround; // one op's rounding
  const store = storeRounding(param.dtype);
  const { lr, beta1, beta2, eps, weightDecay, decoupled, maximize, stepSize, biasCorrection2Sqrt } = spec;
  const decay = c(1 - lr * weightDecay);
  const wd = c(weightDecay);
  const w = 1 - beta1;
  const lerpW = c(Math.abs(w) < 0.5 ? w : 1 - w);
  const b2 = c(beta2);
  const oneMinusB2 = c(1 - beta2);
  const bc2 = c(biasCorrection2Sqrt);
  const epsC = c(eps);
  const negStep = c(-stepSize);
  // Copies: readValues may alias the storage, and every array is written below.
  const p = Float64Array.from(readValues(param));
  const gs = readValues(grad);
  const m = Float64Array.from(readValues(expAvg));
  const v = Float64Array.from(readValues(expAvgSq));
  const vmax = maxExpAvgSq ? Float64Array.from(readValues(maxExpAvgSq)) : null;
  for (let i = 0; i < n; i++) {
    let g = maximize ? -gs[i]! : gs[i]!;
    let pi = p[i]!;
    if (weightDecay !== 0) {
      if (decoupled) pi = store(c(pi * decay));
      else g = store(c(g + c(pi * wd)));
    }
    const diff = c(g - m[i]!);
    const mi = store(Math.abs(w) < 0.5 ? c(m[i]! + c(diff * lerpW)) : c(g - c(diff * lerpW)));
    const vScaled = store(c(v[i]! * b2));
    let vi = store(c(vScaled + c(c(g * oneMinusB2) * g)));
    m[i] = mi;
    v[i] = vi;
    if (vmax) {
      vmax[i] = vi = store(Math.max(vmax[i]!, vi));
    }
    const root = store(c(Math.sqrt(vi)));
    const denom = store(c(store(c(root / bc2)) + epsC));
    p[i] = store(c(pi + c(c(mi * negStep) / denom)));
  }
  scatterFrom(toCompute(param.dtype, p), param);
  scatterFrom(toCompute(param.dtype, m), expAvg);
  scatterFrom(toCompute(param.dtype, v), expAvgSq);
  if (vmax && maxExpAvgSq) scatterFrom(toCompute(param.dtype, vmax), maxExpAvgSq);
}

function toCompute(dtype: DTypeName, values: Float64Array): Float32Array | Float64Array {
  return dtype === 'float64' ? values : Float32Array.from(values);
}

/** `out = x + t1·t2`: the product rounded to f32 (f64 for float64) before the sum, as the decomposition rounds it. */
export function addcmul(x: Ref, t1: Ref, t2: Ref, out: Ref): void {
  const what = 'addcmul';
  checkFloating(what, out);
  for (const [name, r] of [['x', x], ['t1', t1], ['t2', t2]] as const) {
    checkShape(what, name, r, out.shape);
    checkDType(what, name, r, out.dtype);
  }
  const n = numelOf(out);
  if (n === 0) return;
  const a = readValues(x);
  const b = readValues(t1);
  const c = readValues(t2);
  const dst = valueBuffer(out);
  if (out.dtype === 'float64') for (let i = 0; i < n; i++) dst[i] = a[i] + b[i] * c[i];
  else for (let i = 0; i < n; i++) dst[i] = a[i] + Math.fround(b[i] * c[i]);
  commitValues(out, dst);
}

/**
 * The fused kernels the cpu backend has. Not `attention`: its wasm matmuls and softmax run the
 * decomposition faster than a scalar flash loop would.
 */
export type CpuFusedKernels = Omit<FusedKernels<CpuStorage>, 'attention'>;

/** The CPU backend's fused kernels: softmax, logSoftmax, crossEntropy, unscale-and-check, Adam/AdamW and addcmul. */
export const CpuFused: CpuFusedKernels = { softmax, logSoftmax, crossEntropy, unscaleAndCheck, adamw, addcmul };
