// Fused softmax, logSoftmax and crossEntropy, numerically stable (the row max is subtracted
// before exp). Rows are computed in f64; float32 and half outputs are rounded to f32 first and
// then (halves only) to the half format when stored, float64 keeps f64. Also GradScaler's
// unscale-and-check and the Adam/AdamW, Adadelta and RMSprop updates, which repeat the decompositions'
// roundings exactly.
import {
  roundToBFloat16, roundToFloat16, type AdadeltaSpec, type AdamSpec, type CrossEntropySpec, type DTypeName, type FusedKernels, type RMSpropSpec,
} from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { checkDType, checkShape, commitValues, gatherInto, numelOf, permuteRef, readValues, type Ref, scatterFrom, valueBuffer } from './io.js';
import { normalizeAxis } from './strided.js';
import { maxPool2d, maxPool2dBackward } from './max-pool.js';

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
  checkLikeParam('adamw', param, { grad, expAvg, expAvgSq, maxExpAvgSq });
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

/** An optimizer kernel's other tensors (null: absent) have param's dtype and shape. */
function checkLikeParam(what: string, param: Ref, others: Readonly<Record<string, Ref | null>>): void {
  for (const [name, ref] of Object.entries(others)) {
    if (ref === null) continue;
    checkDType(what, name, ref, param.dtype);
    checkShape(what, name, ref, param.shape);
  }
}

/**
 * An Adadelta or RMSprop kernel's float32 or float64 values: the gradient's (read only), and the
 * parameter's and the state's (null stays null) to update in place and then `commit`; and `c`,
 * the rounding of one operation in that dtype.
 */
function updateBuffers<T extends Record<string, Ref | null>>(what: string, param: Ref, grad: Ref, state: T) {
  if (param.dtype !== 'float32' && param.dtype !== 'float64') {
    throw new TypeError(`cpu ${what}: takes float32 or float64 tensors, got ${param.dtype} (core runs the decomposition for other dtypes)`);
  }
  checkLikeParam(what, param, { grad, ...state });
  const written = Object.entries({ param, ...state });
  const values = Object.fromEntries(written.map(([k, r]) => [k, r && readWritable(r)])) as { param: CpuValues } & { [K in keyof T]: null extends T[K] ? CpuValues | null : CpuValues };
  const commit = () => {
    for (const [k, r] of written) if (r) commitValues(r, values[k]!);
  };
  return { n: numelOf(param), g: readValues(grad), values, commit, c: param.dtype === 'float64' ? (v: number) => v : Math.fround };
}

type CpuValues = ReturnType<typeof valueBuffer>;

/** `ref`'s values where a kernel updates them in place: the storage itself when contiguous, else a filled temporary. */
function readWritable(ref: Ref): CpuValues {
  const values = valueBuffer(ref);
  if (values.buffer !== ref.storage.data.buffer) gatherInto(ref, values);
  return values;
}

/**
 * One Adadelta update per element, op for op as @core/optim's decomposition computes it in
 * float32 (every scalar and result rounded to f32) or float64, so results are bit-identical to it.
 */
export function adadelta(param: Ref, grad: Ref, squareAvg: Ref, accDelta: Ref, spec: AdadeltaSpec): void {
  const { n, g: gs, values: { param: p, squareAvg: v, accDelta: u }, commit, c } = updateBuffers('adadelta', param, grad, { squareAvg, accDelta });
  const { maximize, weightDecay } = spec;
  const [rho, oneMinusRho, eps, wd, negLr] = [spec.rho, 1 - spec.rho, spec.eps, weightDecay, -spec.lr].map(c) as [number, number, number, number, number];
  for (let i = 0; i < n; i++) {
    let g = maximize ? -gs[i]! : gs[i]!;
    if (weightDecay !== 0) g = c(g + c(p[i]! * wd));
    const vi = (v[i] = c(c(v[i]! * rho) + c(c(g * oneMinusRho) * g)));
    const std = c(Math.sqrt(c(vi + eps)));
    const delta = c(c(c(Math.sqrt(c(u[i]! + eps))) / std) * g);
    u[i] = c(c(u[i]! * rho) + c(c(delta * oneMinusRho) * delta));
    p[i] = c(p[i]! + c(delta * negLr));
  }
  commit();
}

/**
 * One RMSprop update per element (momentum and centered variants), op for op as @core/optim's
 * decomposition computes it in float32 or float64, so results are bit-identical to it.
 */
export function rmsprop(param: Ref, grad: Ref, squareAvg: Ref, momentumBuffer: Ref | null, gradAvg: Ref | null, spec: RMSpropSpec): void {
  const what = 'rmsprop';
  if ((momentumBuffer !== null) !== spec.momentum > 0 || (gradAvg !== null) !== spec.centered) {
    throw new TypeError(`cpu ${what}: needs momentumBuffer exactly when momentum > 0 and gradAvg exactly when centered`);
  }
  const { n, g: gs, values: { param: p, squareAvg: v, momentumBuffer: b, gradAvg: a }, commit, c } =
    updateBuffers(what, param, grad, { squareAvg, momentumBuffer, gradAvg });
  const { maximize, weightDecay } = spec;
  const [alpha, oneMinusAlpha, eps, wd, momentum, negLr] =
    [spec.alpha, 1 - spec.alpha, spec.eps, weightDecay, spec.momentum, -spec.lr].map(c) as [number, number, number, number, number, number];
  for (let i = 0; i < n; i++) {
    let g = maximize ? -gs[i]! : gs[i]!;
    if (weightDecay !== 0) g = c(g + c(p[i]! * wd));
    let variance = (v[i] = c(c(v[i]! * alpha) + c(c(g * oneMinusAlpha) * g)));
    if (a) {
      const mean = (a[i] = c(c(a[i]! * alpha) + c(g * oneMinusAlpha)));
      variance = c(variance - c(mean * mean));
    }
    const avg = c(c(Math.sqrt(variance)) + eps);
    if (b) {
      const bi = (b[i] = c(c(b[i]! * momentum) + c(g / avg)));
      p[i] = c(p[i]! + c(bi * negLr));
    } else {
      p[i] = c(p[i]! + c(c(g * negLr) / avg));
    }
  }
  commit();
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
 * decomposition faster than a scalar flash loop would. `stridedSum` only with the native addon: the
 * decomposition's wasm strided adds beat a TypeScript scatter loop. `matmulToFloat32`,
 * `matmulRounded` and `matmulStridedSum` only with the native addon too: core's widened float32
 * matmul runs the wasm GEMM, faster than a TypeScript one.
 */
export type CpuFusedKernels = Omit<FusedKernels<CpuStorage>, 'attention' | 'stridedSum' | 'matmulToFloat32' | 'matmulRounded' | 'matmulStridedSum'>;

/** The CPU backend's fused kernels: softmax, logSoftmax, crossEntropy, unscale-and-check, Adam/AdamW, Adadelta, RMSprop, addcmul and max-pooling. */
export const CpuFused: CpuFusedKernels = { softmax, logSoftmax, crossEntropy, unscaleAndCheck, adamw, adadelta, rmsprop, addcmul, maxPool2d, maxPool2dBackward };
