// Table entries for @core/nn's normalisations beside layerNorm/batchNorm: F.rmsNorm,
// F.groupNorm, F.instanceNorm, F.normalize and F.cosineSimilarity. The oracles are the
// definitions in float64. rmsNorm, groupNorm, instanceNorm and cosineSimilarity compute half
// inputs in float32 (cast in, cast out), so their steps round into the accumulation dtype and the
// column needs storage only; normalize divides in the column dtype by core's norm (whose steps the
// bound lets round in the column dtype, more than its float32 computation needs). Bounds are first
// order, per step (see `Trace`), with the reductions' (n + k)·u·Σ|terms|.
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Domain, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { broadcastShapes, broadcastTo, nd, numel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { Trace, traced, type Traced } from './activations.js';

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** The next optional tensor input when its flag is set (the call and the reference read them in the same order). */
function optional<T>(rest: T[], present: boolean | undefined): T | undefined {
  return present ? rest.shift() : undefined;
}

/**
 * (x − mean)/√(var + eps) of one group, computed in `tr`'s dtype by the two-pass decomposition:
 * the mean errs by eμ = (n + 2)·u·mean|x|; the biased variance by (n + 7)·u·V + eμ² (the mean's
 * error cancels to first order); rsqrt adds its approx error; each value errs by eμ/σ plus
 * |y|·(2u + the rsqrt's relative error).
 */
function standardizedGroup(tr: Trace, xs: readonly number[], eps: number): Traced[] {
  const n = xs.length;
  const mean = xs.reduce((s, v) => s + v, 0) / n;
  const V = xs.reduce((s, v) => s + (v - mean) ** 2, 0) / n + eps;
  const rstd = 1 / Math.sqrt(V);
  const eMean = (n + 2) * tr.u * (xs.reduce((s, v) => s + Math.abs(v), 0) / n);
  const rhoRstd = ((n + 7) * tr.u * V + eMean ** 2) / (2 * V) + tr.approx(rstd) / rstd;
  return xs.map((x) => {
    const y = (x - mean) * rstd;
    return { v: y, e: rstd * eMean + Math.abs(y) * (2 * tr.u + rhoRstd) };
  });
}

/** Per-channel (dim 1) affine of traced values of an [N, C, *] tensor. */
function channelAffine(tr: Trace, shape: readonly number[], ys: readonly Traced[], w: NdArray | undefined, b: NdArray | undefined): Traced[] {
  const C = shape[1]!;
  const spatial = numel(shape.slice(2));
  return ys.map((y, i) => {
    const c = Math.floor(i / spatial) % C;
    const z = w ? tr.mul(y, tr.exact(w.data[c]!)) : y;
    return b ? tr.add(z, tr.exact(b.data[c]!)) : z;
  });
}

/** Standardise each contiguous block of `size` elements. */
function standardizeBlocks(tr: Trace, x: NdArray, size: number, eps: number): Traced[] {
  const out: Traced[] = [];
  for (let start = 0; start < x.data.length; start += size) out.push(...standardizedGroup(tr, Array.from(x.data.subarray(start, start + size)), eps));
  return out;
}

/** Samples of [N, C, *] inputs with optional per-channel weight and bias, flagged in args. */
function channelSamples(dtype: DTypeName, rng: Rng, specs: ReadonlyArray<[name: string, shape: number[], args: Record<string, unknown>, layout?: Layout]>): Sample[] {
  const r = (shape: number[], domain: Domain, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, domain), dtype, layout);
  return specs.map(([name, shape, args, layout]) => ({
    name,
    inputs: [
      r(shape, { lo: -3, hi: 3 }, layout),
      ...(args.weight ? [r([shape[1]!], { lo: -2, hi: 2 })] : []),
      ...(args.bias ? [r([shape[1]!], { lo: -1, hi: 1 })] : []),
      ...(args.running ? [r([shape[1]!], { lo: -1, hi: 1 }), r([shape[1]!], { lo: 0.5, hi: 2 })] : []),
    ],
    args,
  }));
}

// ---- rmsNorm ----

/**
 * x / √(mean(x²) + eps) · w over the last dims: the mean of squares errs by (n + 3)·u·ms (each
 * square, the sum, the division), rsqrt by its approx error, and each value by |y|·(ρ + u).
 */
function rmsNormReference(x: NdArray, w: NdArray | undefined, normalized: readonly number[], eps: number | undefined, dtype: DTypeName): Expected {
  const tr = new Trace(accumulatorOf(dtype));
  const n = numel(normalized);
  const e = eps ?? (dtype === 'float64' ? 2 ** -52 : 2 ** -23);
  const out: Traced[] = [];
  for (let start = 0; start < x.data.length; start += n) {
    const xs = Array.from(x.data.subarray(start, start + n));
    const ms = xs.reduce((s, v) => s + v * v, 0) / n;
    const r = 1 / Math.sqrt(ms + e);
    const rho = ((n + 3) * tr.u * ms) / (2 * (ms + e)) + tr.approx(r) / r;
    xs.forEach((v, i) => {
      const y: Traced = { v: v * r, e: Math.abs(v * r) * (rho + tr.u) };
      out.push(w ? tr.mul(y, tr.exact(w.data[i]!)) : y);
    });
  }
  return traced(x.shape, out, dtype);
}

const RMS_NORM: OpInfo = {
  name: 'rmsNorm',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    const rms = (name: string, x: Input, normalizedShape: number[], weight: boolean, eps?: number): Sample => ({
      name, inputs: [x, ...(weight ? [r(normalizedShape)] : [])], args: { normalizedShape, weight, ...(eps !== undefined ? { eps } : {}) },
    });
    return [
      rms('last-4x6-weight', r([4, 6]), [6], true),
      rms('last2-2x3x4', r([2, 3, 4]), [3, 4], false),
      rms('eps-0.1-transposed-5x4-weight', r([5, 4], 'transposed'), [4], true, 0.1),
      rms('permuted-2x3x4', r([2, 3, 4], 'permuted'), [4], false),
      rms('long-2x512-weight', r([2, 512]), [512], true),
    ];
  },
  call: ([x, w], a) => F.rmsNorm(x!, a.normalizedShape, a.weight ? w! : null, a.eps ?? null),
  reference: ([x, w], a, dtype) => rmsNormReference(x!, a.weight ? w : undefined, a.normalizedShape, a.eps, dtype),
};

// ---- groupNorm ----

const GROUP_NORM: OpInfo = {
  name: 'groupNorm',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => channelSamples(dtype, rng, [
    ['2-groups-2x4x3-affine', [2, 4, 3], { groups: 2, weight: true, bias: true }],
    ['3-groups-2x6', [2, 6], { groups: 3 }],
    ['1-group-2x3x2x2-weight', [2, 3, 2, 2], { groups: 1, weight: true }],
    ['4-groups-permuted-2x4x3-bias', [2, 4, 3], { groups: 4, bias: true }, 'permuted'],
    ['long-1x4x256-affine', [1, 4, 256], { groups: 2, weight: true, bias: true }],
  ]),
  call: ([x, ...rest], a) => F.groupNorm(x!, a.groups, optional(rest, a.weight) ?? null, optional(rest, a.bias) ?? null, 1e-5),
  reference: ([x, ...rest], a, dtype) => {
    const tr = new Trace(accumulatorOf(dtype));
    const ys = standardizeBlocks(tr, x!, numel(x!.shape.slice(1)) / a.groups, 1e-5);
    return traced(x!.shape, channelAffine(tr, x!.shape, ys, optional(rest, a.weight), optional(rest, a.bias)), dtype);
  },
};

// ---- instanceNorm ----

/** (x − rm)·rsqrt(rv + eps) per channel: the running statistics normalise. */
function runningNormalized(tr: Trace, x: NdArray, rm: NdArray, rv: NdArray, eps: number): Traced[] {
  const C = x.shape[1]!;
  const spatial = numel(x.shape.slice(2));
  return Array.from(x.data, (v, i) => {
    const c = Math.floor(i / spatial) % C;
    const r = tr.apply(tr.add(tr.exact(rv.data[c]!), tr.exact(eps)), (s) => 1 / Math.sqrt(s), (s) => -0.5 * s ** -1.5);
    return tr.mul(tr.sub(tr.exact(v), tr.exact(rm.data[c]!)), r);
  });
}

const INSTANCE_NORM: OpInfo = {
  name: 'instanceNorm',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => channelSamples(dtype, rng, [
    ['input-stats-2x3x4-affine', [2, 3, 4], { weight: true, bias: true }],
    ['input-stats-2x2x3x3', [2, 2, 3, 3], {}],
    ['input-stats-transposed-2x3x5-weight', [2, 3, 5], { weight: true }, 'transposed'],
    ['running-stats-2x3x4-affine', [2, 3, 4], { weight: true, bias: true, running: true }],
    ['long-1x2x300', [1, 2, 300], {}],
  ]),
  gradSamples: (dtype, rng) => channelSamples(dtype, rng, [
    ['grad-input-stats-2x3x4-affine', [2, 3, 4], { weight: true, bias: true }],
    ['grad-running-stats-2x2x3', [2, 2, 3], { running: true }],
  ]),
  call: ([x, ...rest], a) => {
    const weight = optional(rest, a.weight) ?? null;
    const bias = optional(rest, a.bias) ?? null;
    // Copies: the library updates running statistics in place, the inputs must stay as given.
    const runningMean = a.running ? rest.shift()!.clone() : null;
    const runningVar = a.running ? rest.shift()!.clone() : null;
    return F.instanceNorm(x!, { runningMean, runningVar, weight, bias, useInputStats: !a.running });
  },
  reference: ([x, ...rest], a, dtype) => {
    const tr = new Trace(accumulatorOf(dtype));
    const w = optional(rest, a.weight);
    const b = optional(rest, a.bias);
    const ys = a.running ? runningNormalized(tr, x!, rest[0]!, rest[1]!, 1e-5) : standardizeBlocks(tr, x!, numel(x!.shape.slice(2)), 1e-5);
    return traced(x!.shape, channelAffine(tr, x!.shape, ys, w, b), dtype);
  },
};

// ---- normalize and cosineSimilarity: vectors along a dim ----

/** The vectors of `a` along `dim`: each a list of flat indices. */
function vectorsAlong(shape: readonly number[], dim: number): number[][] {
  const d = dim < 0 ? dim + shape.length : dim;
  const len = shape[d]!;
  const inner = numel(shape.slice(d + 1));
  const outer = numel(shape.slice(0, d));
  const out: number[][] = [];
  for (let o = 0; o < outer; o++) for (let i = 0; i < inner; i++) out.push(Array.from({ length: len }, (_, k) => (o * len + k) * inner + i));
  return out;
}

/**
 * ‖x‖_p of one vector, each step allowed a rounding in the column dtype (sums in the accumulation
 * dtype, rounded once into the column dtype), clamped at eps.
 */
function tracedNorm(tr: Trace, xs: readonly number[], p: number, eps: number, uAcc: number): Traced {
  const n = xs.length;
  const abs = xs.map(Math.abs);
  let norm: Traced;
  if (p === Infinity) norm = tr.exact(Math.max(...abs));
  else if (p === 1) {
    const s = abs.reduce((t, v) => t + v, 0);
    norm = { v: s, e: ((n + 2) * uAcc + tr.u) * s };
  } else {
    // Each |x|^p (a square for p = 2, pow otherwise), their sum, then the root.
    const terms = abs.map((v) => v ** p);
    const s = terms.reduce((t, v) => t + v, 0);
    const eTerms = p === 2 ? tr.u * s : terms.reduce((t, v) => t + tr.approx(v), 0);
    const sum: Traced = { v: s, e: eTerms + ((n + 2) * uAcc + tr.u) * s };
    norm = p === 2 ? { v: Math.sqrt(s), e: sum.e / (2 * Math.sqrt(s)) + tr.u * Math.sqrt(s) } : tr.apply(sum, (v) => v ** (1 / p), (v) => (v ** (1 / p - 1)) / p);
  }
  return norm.v < eps ? tr.exact(eps) : norm;
}

const NORMALIZE: OpInfo = {
  name: 'normalize',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo: -3, hi: 3, awayFromZero: 0.1 }), dtype, layout);
    const zeroRow = input(nd([2, 3], [0, 0, 0, 1, -2, 2]), dtype);
    return [
      { name: 'p2-dim1-3x4', inputs: [r([3, 4])], args: { p: 2, dim: 1 } },
      { name: 'p1-dim0-3x4', inputs: [r([3, 4])], args: { p: 1, dim: 0 } },
      { name: 'pinf-dim-1-transposed-4x3', inputs: [r([4, 3], 'transposed')], args: { p: Infinity, dim: -1 } },
      { name: 'p3-dim1-permuted-2x3x4', inputs: [r([2, 3, 4], 'permuted')], args: { p: 3, dim: 1 } },
      // eps = 1e-12 is 0 in float16, so there a zero vector gives 0/0 = NaN, as PyTorch's does.
      { name: 'p2-zero-vector-clamped', inputs: [zeroRow], args: { p: 2, dim: 1 }, numerics: dtype === 'float16' },
      { name: 'p2-long-2x600', inputs: [r([2, 600])], args: { p: 2, dim: 1 } },
    ];
  },
  call: ([x], a) => F.normalize(x!, a.p, a.dim),
  reference: ([x], a, dtype) => {
    const tr = new Trace(dtype);
    const uAcc = unitRoundoff(accumulatorOf(dtype));
    const out: Traced[] = new Array(x!.data.length);
    for (const idx of vectorsAlong(x!.shape, a.dim)) {
      // The clamp's bound is a scalar of the column dtype.
      const norm = tracedNorm(tr, idx.map((i) => x!.data[i]!), a.p, roundTo(dtype, 1e-12), uAcc);
      for (const i of idx) out[i] = tr.div(tr.exact(x!.data[i]!), norm);
    }
    return traced(x!.shape, out, dtype);
  },
};

/** Σ (a/‖a‖)·(b/‖b‖) along `dim`, computed in the accumulation dtype, norms clamped at eps. */
function cosineReference(a: NdArray, b: NdArray, dim: number, eps: number, dtype: DTypeName): Expected {
  const tr = new Trace(accumulatorOf(dtype));
  const shape = broadcastShapes(a.shape, b.shape);
  const [ea, eb] = [broadcastTo(a, shape), broadcastTo(b, shape)];
  const d = dim < 0 ? dim + shape.length : dim;
  const out: Traced[] = vectorsAlong(shape, d).map((idx) => {
    const unit = (t: NdArray) => {
      const xs = idx.map((i) => t.data[i]!);
      const norm = tracedNorm(tr, xs, 2, eps, tr.u);
      return xs.map((v) => tr.div(tr.exact(v), norm));
    };
    const [ua, ub] = [unit(ea), unit(eb)];
    const terms = ua.map((t, k) => tr.mul(t, ub[k]!));
    const v = terms.reduce((s, t) => s + t.v, 0);
    const e = terms.reduce((s, t) => s + t.e, 0) + (terms.length + 2) * tr.u * terms.reduce((s, t) => s + Math.abs(t.v), 0);
    return { v, e };
  });
  return traced(shape.filter((_, i) => i !== d), out, dtype);
}

const COSINE_SIMILARITY: OpInfo = {
  name: 'cosineSimilarity',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    return [
      { name: 'dim1-3x4', inputs: [r([3, 4]), r([3, 4])], args: { dim: 1 } },
      { name: 'dim0-transposed-4x3', inputs: [r([4, 3], 'transposed'), r([4, 3])], args: { dim: 0 } },
      { name: 'broadcast-2x1x4+3x4-dim-1', inputs: [r([2, 1, 4]), r([3, 4], 'strided')], args: { dim: -1 } },
      { name: 'long-2x700', inputs: [r([2, 700]), r([2, 700])], args: { dim: 1 } },
    ];
  },
  call: ([a, b], args) => F.cosineSimilarity(a!, b!, args.dim),
  reference: ([a, b], args, dtype) => cosineReference(a!, b!, args.dim, 1e-8, dtype),
};

/** The entries of @core/nn's normalisations beside layerNorm. */
export const NORMALIZATION_INFOS: OpInfo[] = [RMS_NORM, GROUP_NORM, INSTANCE_NORM, NORMALIZE, COSINE_SIMILARITY];
