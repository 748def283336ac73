// Table entries for the functional ops of @core/nn that core's op table lists (for their autocast
// classes): F.linear, F.conv2d, F.layerNorm and the losses F.mseLoss, F.nllLoss,
// F.binaryCrossEntropy and F.binaryCrossEntropyWithLogits. Each oracle is PyTorch's documented
// definition in float64. Each bound follows the roundings of a decomposition into core ops, to
// first order: products and sums in the accumulation dtype (u_acc·Σ|terms|), each elementwise step
// rounded into the dtype it runs in (u·|result|), each transcendental step (exp, log, log1p, rsqrt)
// within what its own approx cases allow (APPROX atol + rtol·|result|). The last rounding into the
// column dtype, and the oracle's own, are left to the class's rtol, which is at least 2u for every
// float dtype.
import { F } from '@core/nn';
import type { DTypeName, Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff, type FloatDType } from '../oracle/dtype.js';
import { broadcastTo, nd, numel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { APPROX } from '../tolerance.js';

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

type Reduction = 'none' | 'sum' | 'mean';

/** How far a transcendental primitive's result v may be off in `dtype`: what its approx cases allow. */
function approxError(dtype: DTypeName, v: number): number {
  const t = APPROX[dtype as FloatDType];
  return t.atol + t.rtol * Math.abs(v);
}

/** The exact values rounded into `dtype`, with their per-element bounds. */
function expected(shape: readonly number[], values: readonly number[], bounds: readonly number[], dtype: DTypeName): Expected {
  return { value: nd(shape, values.map((v) => roundTo(dtype, v))), dtype, bound: Float64Array.from(bounds) };
}

/**
 * Elementwise losses (with their per-element error bounds) reduced as PyTorch's reductions do:
 * 'none' keeps them, 'sum' adds the n terms in the accumulation dtype ((n + 2)·u_acc·Σ|ℓ|), 'mean'
 * divides that sum by n (allowing the sum one rounding into the dtype before the division).
 */
function reduceLosses(shape: readonly number[], losses: readonly number[], bounds: readonly number[], reduction: Reduction, dtype: DTypeName): Expected {
  if (reduction === 'none') return expected(shape, losses, bounds, dtype);
  const n = losses.length;
  const total = losses.reduce((s, v) => s + v, 0);
  const magnitude = losses.reduce((s, v) => s + Math.abs(v), 0);
  const sumBound = bounds.reduce((s, b) => s + b, 0) + (n + 2) * unitRoundoff(accumulatorOf(dtype)) * magnitude;
  if (reduction === 'sum') return expected([], [total], [sumBound], dtype);
  const mean = total / n;
  return expected([], [mean], [sumBound / n + unitRoundoff(dtype) * Math.abs(mean)], dtype);
}

/**
 * A loss computed element by element, then weighted and reduced: `perElement(i)` gives element i's
 * unweighted loss and its error bound; an optional weight (broadcast to `shape`) scales both and,
 * as the decomposition multiplies by it, adds one rounding of the weighted loss.
 */
function weightedLosses(
  shape: readonly number[],
  w: NdArray | undefined,
  reduction: Reduction,
  dtype: DTypeName,
  perElement: (i: number) => { readonly loss: number; readonly bound: number },
): Expected {
  const u = unitRoundoff(dtype);
  const weight = w ? broadcastTo(w, shape) : undefined;
  const losses: number[] = [];
  const bounds: number[] = [];
  for (let i = 0; i < numel(shape); i++) {
    const { loss, bound } = perElement(i);
    const wi = weight ? weight.data[i]! : 1;
    losses.push(wi * loss);
    bounds.push(Math.abs(wi) * bound + (weight ? u * Math.abs(wi * loss) : 0));
  }
  return reduceLosses(shape, losses, bounds, reduction, dtype);
}

// ---- linear ----

/**
 * y = x·Wᵀ + b over the last dim of x ([in], [N, in] or [B, N, in]) with W [out, in]. The bound is
 * (K + 2)·u_acc·Σ|x·w| for the product accumulated in the accumulation dtype, plus u·Σ|x·w| for its
 * rounding into the dtype before the bias is added (the add's own rounding is within rtol).
 */
function linearReference(x: NdArray, w: NdArray, b: NdArray | undefined, dtype: DTypeName): Expected {
  const [outF, inF] = w.shape as [number, number];
  const rows = numel(x.shape) / inF;
  const ua = unitRoundoff(accumulatorOf(dtype));
  const ud = unitRoundoff(dtype);
  const values: number[] = [];
  const bounds: number[] = [];
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outF; o++) {
      let s = 0;
      let m = 0;
      for (let k = 0; k < inF; k++) {
        const t = x.data[r * inF + k]! * w.data[o * inF + k]!;
        s += t;
        m += Math.abs(t);
      }
      values.push(s + (b ? b.data[o]! : 0));
      bounds.push((inF + 2) * ua * m + ud * m);
    }
  }
  return expected([...x.shape.slice(0, -1), outF], values, bounds, dtype);
}

const LINEAR: OpInfo = {
  name: 'linear',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const lin = (name: string, xs: number[], ws: number[], bias: boolean, lx: Layout = 'contiguous', lw: Layout = 'contiguous', lb: Layout = 'contiguous'): Sample => ({
      name,
      inputs: [input(r(xs), dtype, lx), input(r(ws), dtype, lw), ...(bias ? [input(r([ws[0]!]), dtype, lb)] : [])],
    });
    return [
      lin('1d-4-to-3', [4], [3, 4], true),
      lin('2d-5x4-to-3', [5, 4], [3, 4], true),
      lin('3d-2x3x4-to-5', [2, 3, 4], [5, 4], true),
      lin('no-bias-3x6-to-2', [3, 6], [2, 6], false),
      lin('transposed-weight-3x4-to-5', [3, 4], [5, 4], true, 'contiguous', 'transposed'),
      lin('strided-x-offset-weight-strided-bias', [3, 5], [4, 5], true, 'strided', 'offset', 'strided'),
      lin('long-2x300-to-3', [2, 300], [3, 300], true),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    return [
      { name: 'grad-2d-3x4-to-2', inputs: [input(r([3, 4]), dtype), input(r([2, 4]), dtype), input(r([2]), dtype)] },
      { name: 'grad-3d-permuted-x-transposed-weight-no-bias', inputs: [input(r([2, 2, 3]), dtype, 'permuted'), input(r([4, 3]), dtype, 'transposed')] },
    ];
  },
  call: ([x, w, b]) => F.linear(x!, w!, b ?? null),
  reference: ([x, w, b], _args, dtype) => linearReference(x!, w!, b, dtype),
};

// ---- conv2d ----

type Pair = number | readonly [number, number];

interface ConvArgs {
  readonly stride?: Pair;
  readonly padding?: Pair | 'same' | 'valid';
  readonly dilation?: Pair;
  readonly groups?: number;
}

const pairOf = (p: Pair): [number, number] => (typeof p === 'number' ? [p, p] : [p[0], p[1]]);

/**
 * PyTorch's conv2d (cross-correlation) of [N, C, H, W] or [C, H, W] input with weight
 * [O, C/groups, kh, kw]: out[n, o, i, j] = b[o] + Σ_{c, p, q} w[o, c, p, q]·x[n, g·C/groups + c,
 * i·s₀ + p·d₀ − top, j·s₁ + q·d₁ − left] (zeros outside), g = o's group; 'same' puts the odd pixel
 * of padding at the end. The bound is linear's, with K = C/groups·kh·kw terms per output.
 */
function conv2dReference(x: NdArray, w: NdArray, b: NdArray | undefined, a: ConvArgs, dtype: DTypeName): Expected {
  const batched = x.shape.length === 4;
  const [N, C, H, W] = (batched ? x.shape : [1, ...x.shape]) as [number, number, number, number];
  const [O, Cg, kh, kw] = w.shape as [number, number, number, number];
  const groups = a.groups ?? 1;
  const [sh, sw] = pairOf(a.stride ?? 1);
  const [dh, dw] = pairOf(a.dilation ?? 1);
  let top: number, bottom: number, left: number, right: number;
  if (a.padding === 'same') {
    const th = dh * (kh - 1);
    const tw = dw * (kw - 1);
    [top, bottom, left, right] = [Math.floor(th / 2), th - Math.floor(th / 2), Math.floor(tw / 2), tw - Math.floor(tw / 2)];
  } else if (a.padding === 'valid') {
    [top, bottom, left, right] = [0, 0, 0, 0];
  } else {
    const [ph, pw] = pairOf(a.padding ?? 0);
    [top, bottom, left, right] = [ph, ph, pw, pw];
  }
  const outH = Math.floor((H + top + bottom - dh * (kh - 1) - 1) / sh) + 1;
  const outW = Math.floor((W + left + right - dw * (kw - 1) - 1) / sw) + 1;
  const perGroup = O / groups;
  const K = Cg * kh * kw;
  const ua = unitRoundoff(accumulatorOf(dtype));
  const ud = unitRoundoff(dtype);
  const values: number[] = [];
  const bounds: number[] = [];
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < O; o++) {
      const g = Math.floor(o / perGroup);
      for (let i = 0; i < outH; i++) {
        for (let j = 0; j < outW; j++) {
          let s = 0;
          let m = 0;
          for (let c = 0; c < Cg; c++) {
            for (let p = 0; p < kh; p++) {
              for (let q = 0; q < kw; q++) {
                const h = i * sh + p * dh - top;
                const v = j * sw + q * dw - left;
                if (h < 0 || h >= H || v < 0 || v >= W) continue;
                const t = w.data[((o * Cg + c) * kh + p) * kw + q]! * x.data[((n * C + g * Cg + c) * H + h) * W + v]!;
                s += t;
                m += Math.abs(t);
              }
            }
          }
          values.push(s + (b ? b.data[o]! : 0));
          bounds.push((K + 2) * ua * m + ud * m);
        }
      }
    }
  }
  return expected(batched ? [N, O, outH, outW] : [O, outH, outW], values, bounds, dtype);
}

const CONV2D: OpInfo = {
  name: 'conv2d',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const conv = (name: string, xs: number[], ws: number[], bias: boolean, args: ConvArgs, lx: Layout = 'contiguous', lw: Layout = 'contiguous'): Sample => ({
      name,
      inputs: [input(r(xs), dtype, lx), input(r(ws), dtype, lw), ...(bias ? [input(r([ws[0]!]), dtype)] : [])],
      args: { ...args },
    });
    return [
      conv('1x2x5x5-k3', [1, 2, 5, 5], [3, 2, 3, 3], true, {}),
      conv('stride2-pad1-2x3x6x5', [2, 3, 6, 5], [4, 3, 3, 3], true, { stride: 2, padding: 1 }),
      conv('dilation2-same-1x2x6x6', [1, 2, 6, 6], [2, 2, 3, 3], true, { padding: 'same', dilation: 2 }),
      conv('same-even-kernel-no-bias-1x1x4x5', [1, 1, 4, 5], [2, 1, 2, 2], false, { padding: 'same' }),
      conv('groups2-stride1x2-pad1x0-1x4x5x6', [1, 4, 5, 6], [6, 2, 2, 3], true, { groups: 2, stride: [1, 2], padding: [1, 0] }),
      conv('depthwise-valid-unbatched-3x4x4', [3, 4, 4], [3, 1, 3, 3], true, { groups: 3, padding: 'valid' }),
      conv('permuted-x-transposed-weight-2x2x4x4', [2, 2, 4, 4], [3, 2, 2, 2], true, { padding: 1 }, 'permuted', 'transposed'),
      conv('deep-1x16x4x4-k3', [1, 16, 4, 4], [2, 16, 3, 3], true, { padding: 1 }),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    return [
      { name: 'grad-stride2-pad1-1x2x5x5', inputs: [input(r([1, 2, 5, 5]), dtype), input(r([2, 2, 3, 3]), dtype), input(r([2]), dtype)], args: { stride: 2, padding: 1 } },
      { name: 'grad-groups2-dilation2-permuted', inputs: [input(r([1, 4, 5, 5]), dtype, 'permuted'), input(r([4, 2, 2, 2]), dtype)], args: { groups: 2, dilation: 2 } },
    ];
  },
  call: ([x, w, b], a) => F.conv2d(x!, w!, b ?? null, a as ConvArgs),
  reference: ([x, w, b], a, dtype) => conv2dReference(x!, w!, b, a as ConvArgs, dtype),
};

// ---- layerNorm ----

interface LayerNormArgs {
  readonly normalizedShape: number | readonly number[];
  readonly weight?: boolean;
  readonly bias?: boolean;
  readonly eps?: number;
}

/**
 * PyTorch's layer_norm: over the last dims (normalizedShape), y = (x − E[x]) / √(Var[x] + eps)·w + b
 * with the biased variance. The bound follows the two-pass computation in the accumulation dtype
 * (u): the mean errs by eμ = (n + 2)·u·mean|x|; the variance of the centred values by
 * (n + 7)·u·V + eμ² (the mean's error cancels to first order: Σ(x − μ) = 0); rsqrt adds its approx
 * error; each normalised value errs by eμ/σ (the centring) plus |y|·(2u + the rsqrt's relative
 * error); the weight and bias steps round once each.
 */
function layerNormReference(x: NdArray, w: NdArray | undefined, b: NdArray | undefined, a: LayerNormArgs, dtype: DTypeName): Expected {
  const normalized = typeof a.normalizedShape === 'number' ? [a.normalizedShape] : a.normalizedShape;
  const n = numel(normalized);
  const rows = numel(x.shape) / n;
  const eps = a.eps ?? 1e-5;
  const acc = accumulatorOf(dtype);
  const u = unitRoundoff(acc);
  const values: number[] = [];
  const bounds: number[] = [];
  for (let r = 0; r < rows; r++) {
    const xs = Array.from(x.data.subarray(r * n, (r + 1) * n));
    const mean = xs.reduce((s, v) => s + v, 0) / n;
    const variance = xs.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
    const V = variance + eps;
    const rstd = 1 / Math.sqrt(V);
    const eMean = (n + 2) * u * (xs.reduce((s, v) => s + Math.abs(v), 0) / n);
    const eV = (n + 7) * u * V + eMean ** 2;
    const rhoRstd = eV / (2 * V) + approxError(acc, rstd) / rstd;
    for (let i = 0; i < n; i++) {
      const y = (xs[i]! - mean) * rstd;
      const wi = w ? w.data[i]! : 1;
      const z = y * wi;
      const out = z + (b ? b.data[i]! : 0);
      const eY = rstd * eMean + Math.abs(y) * (2 * u + rhoRstd);
      const eZ = Math.abs(wi) * eY + (w ? u * Math.abs(z) : 0);
      values.push(out);
      bounds.push(eZ + (b ? u * Math.abs(out) : 0));
    }
  }
  return expected(x.shape, values, bounds, dtype);
}

const LAYER_NORM: OpInfo = {
  name: 'layerNorm',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  // Half inputs are normalised in float32 (cast in, cast out, like PyTorch): no primitive sees a
  // half dtype, so the column needs storage only (as var does).
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], lo = -3, hi = 3) => randomArray(rng, dtype, shape, { lo, hi });
    const ln = (name: string, x: Input, args: LayerNormArgs, lb: Layout = 'contiguous'): Sample => {
      const shape = typeof args.normalizedShape === 'number' ? [args.normalizedShape] : [...args.normalizedShape];
      const extra = [...(args.weight ? [input(r(shape, -2, 2), dtype)] : []), ...(args.bias ? [input(r(shape, -1, 1), dtype, lb)] : [])];
      return { name, inputs: [x, ...extra], args: { ...args } };
    };
    return [
      ln('last-4x6-affine', input(r([4, 6]), dtype), { normalizedShape: [6], weight: true, bias: true }),
      ln('last2-2x3x4-affine', input(r([2, 3, 4]), dtype), { normalizedShape: [3, 4], weight: true, bias: true }),
      ln('no-affine-3x5', input(r([3, 5]), dtype), { normalizedShape: [5] }),
      ln('weight-only-eps-1e-3-1d-8', input(r([8]), dtype), { normalizedShape: 8, weight: true, eps: 1e-3 }),
      ln('transposed-x-strided-bias-5x4', input(r([5, 4]), dtype, 'transposed'), { normalizedShape: [4], weight: true, bias: true }, 'strided'),
      ln('permuted-2x3x4-last', input(r([2, 3, 4]), dtype, 'permuted'), { normalizedShape: [4], bias: true }),
      // Values far from 0: centring cancels most of each value (eμ/σ dominates the bound).
      ln('offset-values-3x6', input(r([3, 6], 49, 51), dtype), { normalizedShape: [6], weight: true, bias: true }),
      ln('long-2x512', input(r([2, 512]), dtype), { normalizedShape: [512], weight: true, bias: true }),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], lo = -3, hi = 3) => randomArray(rng, dtype, shape, { lo, hi });
    return [
      { name: 'grad-last-3x4-affine', inputs: [input(r([3, 4]), dtype), input(r([4], -2, 2), dtype), input(r([4], -1, 1), dtype)], args: { normalizedShape: [4], weight: true, bias: true } },
      { name: 'grad-last2-transposed-2x3x2', inputs: [input(r([2, 3, 2]), dtype, 'transposed')], args: { normalizedShape: [3, 2] } },
    ];
  },
  call: (xs, a) => {
    const [x, ...rest] = xs;
    const w = a.weight ? rest.shift()! : null;
    const b = a.bias ? rest.shift()! : null;
    return F.layerNorm(x!, a.normalizedShape, w, b, a.eps ?? 1e-5);
  },
  reference: (xs, a, dtype) => {
    const [x, ...rest] = xs;
    const w = a.weight ? rest.shift() : undefined;
    const b = a.bias ? rest.shift() : undefined;
    return layerNormReference(x!, w, b, a as LayerNormArgs, dtype);
  },
};

// ---- mseLoss ----

const MSE_LOSS: OpInfo = {
  name: 'mseLoss',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    const mse = (name: string, x: Input, t: Input, reduction: Reduction): Sample => ({ name, inputs: [x, t], args: { reduction } });
    return [
      mse('mean-3x4', r([3, 4]), r([3, 4]), 'mean'),
      mse('sum-2x3x2', r([2, 3, 2]), r([2, 3, 2]), 'sum'),
      mse('none-5', r([5]), r([5]), 'none'),
      mse('0-dim-mean', r([]), r([]), 'mean'),
      mse('transposed-x-strided-target-mean', r([4, 3], 'transposed'), r([4, 3], 'strided'), 'mean'),
      mse('permuted-none-2x3x2', r([2, 3, 2], 'permuted'), r([2, 3, 2], 'offset'), 'none'),
      mse('long-sum-2x500', r([2, 500]), r([2, 500]), 'sum'),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    return [
      { name: 'grad-mean-3x4', inputs: [r([3, 4]), r([3, 4])], args: { reduction: 'mean' } },
      { name: 'grad-none-transposed-3x2', inputs: [r([3, 2], 'transposed'), r([3, 2])], args: { reduction: 'none' } },
    ];
  },
  call: ([x, t], a) => F.mseLoss(x!, t!, { reduction: a.reduction }),
  // (x − t)²: the difference and the square each rounded into the dtype (3u relative).
  reference: ([x, t], a, dtype) => {
    const losses = Array.from(x!.data, (v, i) => (v - t!.data[i]!) ** 2);
    return reduceLosses(x!.shape, losses, losses.map((l) => 3 * unitRoundoff(dtype) * l), a.reduction, dtype);
  },
};

// ---- nllLoss ----

interface NllArgs {
  readonly reduction: Reduction;
  readonly ignoreIndex?: number;
  readonly weight?: boolean;
}

/** Class indices in [0, classes), with `ignored` positions set to ignoreIndex. */
function classTargets(rng: Rng, shape: number[], classes: number, ignored: readonly number[] = [], ignoreIndex = -100): Input {
  return input(nd(shape, (i) => (ignored.includes(i) ? ignoreIndex : rng.int(0, classes))), 'int32');
}

/**
 * PyTorch's nll_loss of log-probabilities [N, C, d…] or [C] at class indices [N, d…] or []:
 * ℓ = −w[t]·x[n, t, d…], 0 where t = ignoreIndex; 'mean' divides Σℓ by Σ w[t] over the
 * non-ignored targets. The bound: one rounding of each weighted term, the sums of the terms and of
 * the weights in the accumulation dtype (each then rounded into the dtype), and the division.
 */
function nllReference(x: NdArray, t: NdArray, w: NdArray | undefined, a: NllArgs, dtype: DTypeName): Expected {
  const unbatched = x.shape.length === 1;
  const classes = unbatched ? x.shape[0]! : x.shape[1]!;
  const batch = unbatched ? 1 : x.shape[0]!;
  const inner = unbatched ? 1 : numel(x.shape.slice(2));
  const ignoreIndex = a.ignoreIndex ?? -100;
  const ud = unitRoundoff(dtype);
  const ua = unitRoundoff(accumulatorOf(dtype));
  const losses: number[] = [];
  const bounds: number[] = [];
  let denominator = 0;
  for (let n = 0; n < batch; n++) {
    for (let k = 0; k < inner; k++) {
      const target = t.data[n * inner + k]!;
      if (target === ignoreIndex) {
        losses.push(0);
        bounds.push(0);
        continue;
      }
      const wt = w ? w.data[target]! : 1;
      const loss = -wt * x.data[(n * classes + target) * inner + k]!;
      losses.push(loss);
      bounds.push(w ? ud * Math.abs(loss) : 0);
      denominator += wt;
    }
  }
  const shape = unbatched ? [] : [batch, ...x.shape.slice(2)];
  if (a.reduction !== 'mean') return reduceLosses(shape, losses, bounds, a.reduction, dtype);
  const count = losses.length;
  const total = losses.reduce((s, v) => s + v, 0);
  const magnitude = losses.reduce((s, v) => s + Math.abs(v), 0);
  const eTotal = bounds.reduce((s, v) => s + v, 0) + (count + 2) * ua * magnitude + ud * Math.abs(total);
  const eDenominator = (count + 2) * ua * denominator + ud * denominator;
  const mean = total / denominator;
  return expected([], [mean], [eTotal / denominator + (Math.abs(mean) * eDenominator) / denominator], dtype);
}

const NLL_LOSS: OpInfo = {
  name: 'nllLoss',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0],
  samples: (dtype, rng) => {
    // Log-probabilities: what logSoftmax gives (the op itself does not require them normalised).
    const logp = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo: -5, hi: -0.01 }), dtype, layout);
    const weights = (classes: number) => input(randomArray(rng, dtype, [classes], { lo: 0.5, hi: 2 }), dtype);
    const nll = (name: string, x: Input, t: Input, args: NllArgs, w?: Input): Sample => ({ name, inputs: [x, t, ...(w ? [w] : [])], args: { ...args, weight: !!w } });
    return [
      nll('mean-4x5', logp([4, 5]), classTargets(rng, [4], 5), { reduction: 'mean' }),
      nll('sum-3x4', logp([3, 4]), classTargets(rng, [3], 4), { reduction: 'sum' }),
      nll('none-6x3', logp([6, 3]), classTargets(rng, [6], 3), { reduction: 'none' }),
      nll('ignore-index-mean', logp([5, 4]), classTargets(rng, [5], 4, [1, 3]), { reduction: 'mean' }),
      nll('ignore-index-2-none', logp([4, 3]), classTargets(rng, [4], 3, [0], 2), { reduction: 'none', ignoreIndex: 2 }),
      nll('class-weights-ignored-mean', logp([5, 3]), classTargets(rng, [5], 3, [2]), { reduction: 'mean' }, weights(3)),
      nll('class-weights-transposed-sum', logp([4, 3], 'transposed'), classTargets(rng, [4], 3), { reduction: 'sum' }, weights(3)),
      nll('class-weights-strided-none', logp([3, 4], 'strided'), classTargets(rng, [3], 4), { reduction: 'none' }, weights(4)),
      nll('spatial-2x3x4-mean', logp([2, 3, 4]), classTargets(rng, [2, 4], 3), { reduction: 'mean' }),
      nll('unbatched-5-none', logp([5]), classTargets(rng, [], 5), { reduction: 'none' }),
    ];
  },
  gradSamples: (dtype, rng) => {
    const logp = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo: -5, hi: -0.01 }), dtype, layout);
    return [
      { name: 'grad-class-weights-mean-4x3', inputs: [logp([4, 3]), classTargets(rng, [4], 3, [1]), input(randomArray(rng, dtype, [3], { lo: 0.5, hi: 2 }), dtype)], args: { reduction: 'mean', weight: true } },
      { name: 'grad-spatial-none-transposed', inputs: [logp([2, 3, 2], 'transposed'), classTargets(rng, [2, 2], 3)], args: { reduction: 'none' } },
    ];
  },
  call: ([x, t, w], a) => F.nllLoss(x!, t!, { reduction: a.reduction, ignoreIndex: a.ignoreIndex ?? -100, weight: w ?? null }),
  reference: ([x, t, w], a, dtype) => nllReference(x!, t!, w, a as NllArgs, dtype),
};

// ---- binaryCrossEntropy ----

interface BceArgs {
  readonly reduction: Reduction;
  readonly weight?: boolean;
  readonly posWeight?: boolean;
}

/**
 * PyTorch's binary_cross_entropy of probabilities p: ℓ = −w·(t·max(log p, −100) + (1 − t)·max(log(1 − p), −100)),
 * the logs clamped so that p = 0 or 1 gives a finite loss. The bound: each log within its approx
 * error (log(1 − p) also carries the rounding of 1 − p, u absolute), the products with t and
 * 1 − t, their sum and the weight each rounded into the dtype.
 */
function bceReference(p: NdArray, t: NdArray, w: NdArray | undefined, a: BceArgs, dtype: DTypeName): Expected {
  const u = unitRoundoff(dtype);
  return weightedLosses(p.shape, w, a.reduction, dtype, (i) => {
    const pi = p.data[i]!;
    const ti = t.data[i]!;
    const log1 = Math.max(Math.log(pi), -100);
    const log2 = Math.max(Math.log(1 - pi), -100);
    const term1 = ti * log1;
    const term2 = (1 - ti) * log2;
    const s = term1 + term2;
    const eLog1 = approxError(dtype, log1);
    const eLog2 = u + approxError(dtype, log2);
    return { loss: -s, bound: Math.abs(ti) * eLog1 + u * Math.abs(term1) + Math.abs(1 - ti) * eLog2 + 2 * u * Math.abs(term2) + u * Math.abs(s) };
  });
}

const BINARY_CROSS_ENTROPY: OpInfo = {
  name: 'binaryCrossEntropy',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0],
  samples: (dtype, rng) => {
    const r = (shape: number[], lo: number, hi: number, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo, hi }), dtype, layout);
    const hard = (shape: number[]) => input(nd(shape, () => (rng.next() < 0.5 ? 0 : 1)), dtype);
    const bce = (name: string, p: Input, t: Input, reduction: Reduction, w?: Input): Sample => ({ name, inputs: [p, t, ...(w ? [w] : [])], args: { reduction, weight: !!w } });
    return [
      bce('mean-3x4', r([3, 4], 0.02, 0.98), r([3, 4], 0, 1), 'mean'),
      bce('sum-hard-targets-4x3', r([4, 3], 0.02, 0.98), hard([4, 3]), 'sum'),
      bce('none-weight-broadcast-3x4', r([3, 4], 0.02, 0.98), r([3, 4], 0, 1), 'none', r([4], 0.5, 2)),
      bce('transposed-p-strided-target-mean', r([4, 3], 0.02, 0.98, 'transposed'), r([4, 3], 0, 1, 'strided'), 'mean'),
      // p = 0 and p = 1 exactly: the logs are −∞ and are clamped to −100 before the products.
      bce('clamped-logs-none', input(nd([6], [0, 1, 0, 1, 0, 1]), dtype), input(nd([6], [0, 1, 1, 0, 0.5, 0.25].map((v) => roundTo(dtype, v))), dtype), 'none'),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], lo: number, hi: number, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo, hi }), dtype, layout);
    return [
      { name: 'grad-mean-3x4', inputs: [r([3, 4], 0.1, 0.9), r([3, 4], 0, 1)], args: { reduction: 'mean' } },
      { name: 'grad-weight-none-transposed', inputs: [r([3, 2], 0.1, 0.9, 'transposed'), r([3, 2], 0, 1), r([3, 1], 0.5, 2)], args: { reduction: 'none', weight: true } },
    ];
  },
  call: ([p, t, w], a) => F.binaryCrossEntropy(p!, t!, { reduction: a.reduction, weight: w ?? null }),
  reference: ([p, t, w], a, dtype) => bceReference(p!, t!, w, a as BceArgs, dtype),
};

// ---- binaryCrossEntropyWithLogits ----

/** log(1 + e^z) without overflow. */
const softplus = (z: number): number => Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)));

/**
 * PyTorch's binary_cross_entropy_with_logits: ℓ = −w·(pw·t·log σ(x) + (1 − t)·log(1 − σ(x)))
 * = w·(pw·t·softplus(−x) + (1 − t)·softplus(x)), pw (pos_weight) broadcast over the last dim. The
 * bound follows the stable form (1 − t)·x + (1 + (pw − 1)·t)·(log1p(e^−|x|) + max(−x, 0)) step by
 * step: exp and log1p within their approx errors, every other step one rounding. Its two terms
 * cancel for large negative x, so the bound is absolute in their size.
 */
function bceWithLogitsReference(x: NdArray, t: NdArray, w: NdArray | undefined, pw: NdArray | undefined, a: BceArgs, dtype: DTypeName): Expected {
  const u = unitRoundoff(dtype);
  const posWeight = pw ? broadcastTo(pw, x.shape) : undefined;
  return weightedLosses(x.shape, w, a.reduction, dtype, (i) => {
    const xi = x.data[i]!;
    const ti = t.data[i]!;
    const pwi = posWeight ? posWeight.data[i]! : 1;
    const loss = pwi * ti * softplus(-xi) + (1 - ti) * softplus(xi);
    // The stable form's steps.
    const e = Math.exp(-Math.abs(xi));
    const l1 = Math.log1p(e);
    const sp = l1 + Math.max(-xi, 0);
    const eSp = approxError(dtype, e) + approxError(dtype, l1) + u * sp;
    const lw = 1 + (pwi - 1) * ti;
    const eLw = posWeight ? 2 * u * Math.abs((pwi - 1) * ti) + u * Math.abs(lw) : 0;
    const term2 = sp * lw;
    const eTerm2 = Math.abs(lw) * eSp + sp * eLw + (posWeight ? u * Math.abs(term2) : 0);
    const term1 = (1 - ti) * xi;
    const eTerm1 = 2 * u * Math.abs(term1);
    return { loss, bound: eTerm1 + eTerm2 + u * Math.abs(term1 + term2) };
  });
}

const BINARY_CROSS_ENTROPY_WITH_LOGITS: OpInfo = {
  name: 'binaryCrossEntropyWithLogits',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0, 1],
  samples: (dtype, rng) => {
    const r = (shape: number[], lo: number, hi: number, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo, hi }), dtype, layout);
    const hard = (shape: number[]) => input(nd(shape, () => (rng.next() < 0.5 ? 0 : 1)), dtype);
    const bce = (name: string, x: Input, t: Input, args: BceArgs, w?: Input, pw?: Input): Sample => ({
      name,
      inputs: [x, t, ...(w ? [w] : []), ...(pw ? [pw] : [])],
      args: { ...args, weight: !!w, posWeight: !!pw },
    });
    return [
      bce('mean-3x4', r([3, 4], -4, 4), r([3, 4], 0, 1), { reduction: 'mean' }),
      bce('sum-hard-targets-4x3', r([4, 3], -4, 4), hard([4, 3]), { reduction: 'sum' }),
      bce('none-pos-weight-3x4', r([3, 4], -4, 4), r([3, 4], 0, 1), { reduction: 'none' }, undefined, r([4], 0.5, 3)),
      bce('weight-pos-weight-mean', r([3, 4], -4, 4), hard([3, 4]), { reduction: 'mean' }, r([3, 1], 0.5, 2), r([4], 0.5, 3)),
      // |x| in [20, 80]: σ(x) rounds to 0 or 1 in every dtype, so only the stable form is finite and accurate.
      bce('large-logits-none', input(nd([2, 4], (i) => roundTo(dtype, (i % 3 === 0 ? -1 : 1) * rng.uniform(20, 80))), dtype), hard([2, 4]), { reduction: 'none' }),
      bce('transposed-x-strided-target-sum', r([4, 3], -4, 4, 'transposed'), r([4, 3], 0, 1, 'strided'), { reduction: 'sum' }),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], lo: number, hi: number, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo, hi }), dtype, layout);
    return [
      { name: 'grad-pos-weight-mean-3x4', inputs: [r([3, 4], -3, 3), r([3, 4], 0, 1), r([4], 0.5, 3)], args: { reduction: 'mean', posWeight: true } },
      { name: 'grad-weight-none-transposed', inputs: [r([3, 2], -3, 3, 'transposed'), r([3, 2], 0, 1), r([3, 2], 0.5, 2)], args: { reduction: 'none', weight: true } },
    ];
  },
  call: (xs, a) => {
    const [x, t, ...rest] = xs;
    const weight = a.weight ? rest.shift()! : null;
    const posWeight = a.posWeight ? rest.shift()! : null;
    return F.binaryCrossEntropyWithLogits(x!, t!, { reduction: a.reduction, weight, posWeight });
  },
  reference: (xs, a, dtype) => {
    const [x, t, ...rest] = xs;
    const w = a.weight ? rest.shift() : undefined;
    const pw = a.posWeight ? rest.shift() : undefined;
    return bceWithLogitsReference(x!, t!, w, pw, a as BceArgs, dtype);
  },
};

/** The entries of @core/nn's functional ops. */
export const NN_INFOS: OpInfo[] = [
  LINEAR, CONV2D, LAYER_NORM, MSE_LOSS, NLL_LOSS, BINARY_CROSS_ENTROPY, BINARY_CROSS_ENTROPY_WITH_LOGITS,
];
