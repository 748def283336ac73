// Table entries for losses. F.crossEntropy with int32 class indices: a composite (logSoftmax,
// gather, reductions) that a backend may fuse (`FusedKernels.crossEntropy`), so its cases run fused
// and decomposed. The samples with class weights or spatial dims are ones the fused kernel
// declines: both variants must still agree with the oracle there (core falls back to the
// decomposition). Then F.l1Loss, F.smoothL1Loss, F.huberLoss, F.klDiv, F.cosineEmbeddingLoss and
// F.marginRankingLoss, whose oracles trace the library's elementwise steps (`Trace`) and reduce.
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Domain, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { nd, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { Trace, traced, type Traced } from './activations.js';

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

type Reduction = 'none' | 'sum' | 'mean';

interface Args {
  readonly reduction: Reduction;
  readonly ignoreIndex?: number;
  readonly labelSmoothing?: number;
}

/** Class indices in [0, classes), with `ignored` positions set to ignoreIndex. */
function targets(rng: Rng, shape: number[], classes: number, ignored: readonly number[] = [], ignoreIndex = -100): Input {
  const value = nd(shape, (i) => (ignored.includes(i) ? ignoreIndex : Math.min(classes - 1, Math.floor(rng.uniform(0, classes)))));
  return input(value, 'int32');
}

/**
 * PyTorch's cross entropy in float64 for logits [N, C, d…] or [C], targets [N, d…] or [], optional
 * weights [C]: per position `(1 − ε)·w[t]·(lse − x[t]) + (ε/C)·Σ_c w_c·(lse − x_c)`, 0 where ignored;
 * the mean divides both parts by Σ w[t] over the non-ignored positions. The bound covers the
 * decomposition's roundings: log-probabilities and the row's terms rounded to the dtype, the exp-sum
 * in the accumulation dtype, and the accumulations of the reductions.
 */
function crossEntropyReference(x: NdArray, t: NdArray, w: NdArray | undefined, a: Args, dtype: DTypeName): Expected {
  const unbatched = x.shape.length === 1;
  const classes = unbatched ? x.shape[0]! : x.shape[1]!;
  const batch = unbatched ? 1 : x.shape[0]!;
  const inner = unbatched ? 1 : x.shape.slice(2).reduce((p, s) => p * s, 1);
  const eps = a.labelSmoothing ?? 0;
  const ignoreIndex = a.ignoreIndex ?? -100;
  const ud = unitRoundoff(dtype);
  const ua = unitRoundoff(accumulatorOf(dtype));
  const rows: number[] = [];
  const rowBounds: number[] = [];
  let nll = 0;
  let smooth = 0;
  let denominator = 0;
  for (let n = 0; n < batch; n++) {
    for (let k = 0; k < inner; k++) {
      const at = (c: number) => x.data[(n * classes + c) * inner + k]!;
      const target = t.data[n * inner + k]!;
      let max = -Infinity;
      for (let c = 0; c < classes; c++) max = Math.max(max, at(c));
      let sum = 0;
      for (let c = 0; c < classes; c++) sum += Math.exp(at(c) - max);
      const lse = max + Math.log(sum);
      if (target === ignoreIndex) {
        rows.push(0);
        rowBounds.push(0);
        continue;
      }
      const wt = w ? w.data[target]! : 1;
      let smoothRow = 0;
      let smoothMagnitude = 0;
      let big = 0;
      for (let c = 0; c < classes; c++) {
        smoothRow += (w ? w.data[c]! : 1) * (lse - at(c));
        smoothMagnitude += Math.abs((w ? w.data[c]! : 1) * (lse - at(c)));
        big = Math.max(big, Math.abs(at(c)));
      }
      const nllRow = wt * (lse - at(target));
      const row = (1 - eps) * nllRow + (eps / classes) * smoothRow;
      rows.push(row);
      // Log-probabilities rounded to the dtype, the row's few products and sums rounded to it,
      // and the shifted exp-sum accumulated in the accumulation dtype.
      const wmax = w ? Math.max(...Array.from(w.data, Math.abs)) : 1;
      rowBounds.push(ud * (4 * Math.abs(row) + Math.abs(nllRow) + 2 * (eps / classes) * smoothMagnitude) + (classes + 4) * ua * (Math.abs(lse) + big) * wmax);
      nll += nllRow;
      smooth += smoothRow;
      denominator += wt;
    }
  }
  const magnitude = rows.reduce((p, v) => p + Math.abs(v), 0);
  // The rows' errors, their sum accumulated in the accumulation dtype, and a few final roundings
  // (the sum, the smoothing mix) in the dtype.
  const total = rows.reduce((p, v) => p + v, 0);
  const boundSum = rowBounds.reduce((p, v) => p + v, 0) + (rows.length + 4) * ua * magnitude + 4 * ud * Math.abs(total);
  switch (a.reduction) {
    case 'none': {
      const shape = unbatched ? [] : [batch, ...x.shape.slice(2)];
      return { value: nd(shape, rows.map((v) => roundTo(dtype, v))), dtype, bound: Float64Array.from(rowBounds) };
    }
    case 'sum':
      return { value: nd([], [roundTo(dtype, total)]), dtype, bound: Float64Array.of(boundSum) };
    case 'mean': {
      const mean = (1 - eps) * (nll / denominator) + (eps / classes) * (smooth / denominator);
      return { value: nd([], [roundTo(dtype, mean)]), dtype, bound: Float64Array.of(boundSum / Math.abs(denominator) + 4 * ud * Math.abs(mean)) };
    }
    default: return a.reduction satisfies never;
  }
}

const CROSS_ENTROPY: OpInfo = {
  name: 'crossEntropy',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0],
  fused: 'crossEntropy',
  samples: (dtype, rng) => {
    const r = (shape: number[], lo = -4, hi = 4) => randomArray(rng, dtype, shape, { lo, hi });
    const sample = (name: string, logits: Input, target: Input, args: Args, extra: Input[] = []): Sample =>
      ({ name, inputs: [logits, target, ...extra], args: { ...args } });
    return [
      sample('mean-4x5', input(r([4, 5]), dtype), targets(rng, [4], 5), { reduction: 'mean' }),
      sample('sum-3x4', input(r([3, 4]), dtype), targets(rng, [3], 4), { reduction: 'sum' }),
      sample('none-6x3', input(r([6, 3]), dtype), targets(rng, [6], 3), { reduction: 'none' }),
      sample('ignore-index-mean', input(r([5, 4]), dtype), targets(rng, [5], 4, [1, 3]), { reduction: 'mean' }),
      sample('ignore-index-2-none', input(r([4, 3]), dtype), targets(rng, [4], 3, [0], 2), { reduction: 'none', ignoreIndex: 2 }),
      sample('label-smoothing-0.1-mean', input(r([4, 6]), dtype), targets(rng, [4], 6), { reduction: 'mean', labelSmoothing: 0.1 }),
      sample('label-smoothing-ignored-none', input(r([5, 3]), dtype), targets(rng, [5], 3, [2]), { reduction: 'none', labelSmoothing: 0.25 }),
      sample('transposed-logits', input(r([4, 3]), dtype, 'transposed'), targets(rng, [4], 3), { reduction: 'mean' }),
      sample('strided-logits-sum', input(r([3, 6]), dtype, 'strided'), targets(rng, [3], 6), { reduction: 'sum', labelSmoothing: 0.1 }),
      sample('unbatched-5', input(r([5]), dtype), targets(rng, [], 5), { reduction: 'none' }),
      sample('large-logits', input(r([2, 6], dtype === 'float16' ? 9000 : 900, dtype === 'float16' ? 9990 : 1000), dtype), targets(rng, [2], 6), { reduction: 'none' }),
      sample('long-rows-2x1000', input(r([2, 1000]), dtype), targets(rng, [2], 1000), { reduction: 'mean' }),
      // Cases the fused kernel declines: class weights and spatial dims run the decomposition.
      sample('class-weights-mean', input(r([4, 3]), dtype), targets(rng, [4], 3, [1]), { reduction: 'mean' }, [input(r([3], 0.5, 2), dtype)]),
      sample('spatial-2x3x4', input(r([2, 3, 4]), dtype), targets(rng, [2, 4], 3), { reduction: 'mean' }),
    ];
  },
  gradSamples: (dtype, rng) => [
    { name: 'grad-mean-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype), targets(rng, [3], 4)], args: { reduction: 'mean' } },
    { name: 'grad-smoothing-ignored-none', inputs: [input(randomArray(rng, dtype, [4, 3]), dtype, 'transposed'), targets(rng, [4], 3, [1])], args: { reduction: 'none', labelSmoothing: 0.2 } },
  ],
  call: ([x, t, w], a) => F.crossEntropy(x!, t!, {
    reduction: a.reduction, ignoreIndex: a.ignoreIndex ?? -100, labelSmoothing: a.labelSmoothing ?? 0, weight: w ?? null,
  }),
  reference: ([x, t, w], a, dtype) => crossEntropyReference(x!, t!, w, a as Args, dtype),
};

// ---- elementwise losses, reduced ----

/**
 * Traced elementwise losses reduced as PyTorch's reductions do: 'none' keeps them; 'sum' adds the
 * n terms in the accumulation dtype ((n + 2)·u_acc·Σ|ℓ| on top of their own errors); 'mean' and
 * 'batchmean' divide that sum by n or by the batch size (one more rounding).
 */
function reduceTraced(shape: readonly number[], losses: readonly Traced[], reduction: Reduction | 'batchmean', dtype: DTypeName): Expected {
  if (reduction === 'none') return traced(shape, losses, dtype);
  const total = losses.reduce((s, l) => s + l.v, 0);
  const e = losses.reduce((s, l) => s + l.e, 0) + (losses.length + 2) * unitRoundoff(accumulatorOf(dtype)) * losses.reduce((s, l) => s + Math.abs(l.v), 0);
  const divisor = reduction === 'sum' ? 1 : reduction === 'mean' ? losses.length : shape.length === 0 ? 1 : shape[0]!;
  const v = total / divisor;
  return traced([], [{ v, e: e / divisor + (divisor === 1 ? 0 : unitRoundoff(dtype) * Math.abs(v)) }], dtype);
}

type PairLoss = (tr: Trace, x: number, t: number, args: Readonly<Record<string, any>>) => Traced;

/** An OpInfo for a loss of (input, target) pairs of one shape, elementwise then reduced. */
function pairLossInfo(
  name: string, call: OpInfo['call'], loss: PairLoss, domains: { x: Domain; t: Domain }, variants: ReadonlyArray<Readonly<Record<string, unknown>>>,
  options: {
    /** More forward samples. */
    readonly extra?: (dtype: DTypeName, rng: Rng) => Sample[];
    /** The values of |x − t| where the loss's derivative is not smooth, kept clear of in gradient samples. */
    readonly kinks?: (args: Readonly<Record<string, any>>) => number[];
  } = {},
): OpInfo {
  const { extra = () => [], kinks = () => [] } = options;
  const pair = (rng: Rng, dtype: DTypeName, shape: number[], layouts: [Layout, Layout] = ['contiguous', 'contiguous']): Input[] => [
    input(randomArray(rng, dtype, shape, domains.x), dtype, layouts[0]),
    input(randomArray(rng, dtype, shape, domains.t), dtype, layouts[1]),
  ];
  return {
    name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    samples: (dtype, rng) => [
      ...variants.map((args, i): Sample => ({ name: `${Object.entries(args).map(([k, v]) => `${k}-${v}`).join('-')}-3x4`, inputs: pair(rng, dtype, [3, 4], i % 2 === 0 ? ['contiguous', 'contiguous'] : ['transposed', 'strided']), args })),
      { name: 'none-0-dim', inputs: pair(rng, dtype, []), args: { ...variants[0], reduction: 'none' } },
      { name: 'sum-permuted-2x3x4', inputs: pair(rng, dtype, [2, 3, 4], ['permuted', 'offset']), args: { ...variants[0], reduction: 'sum' } },
      { name: 'mean-long-2x500', inputs: pair(rng, dtype, [2, 500]), args: { ...variants[0], reduction: 'mean' } },
      ...extra(dtype, rng),
    ],
    gradSamples: (dtype, rng) => variants.slice(0, 2).map((args, i) => {
      const [x, t] = pair(rng, dtype, [3, 4], i === 0 ? ['contiguous', 'contiguous'] : ['transposed', 'contiguous']);
      // Targets moved off the kinks: finite differences stepping over one measure the wrong slope.
      const near = (xv: number, tv: number) => kinks(args).some((k) => Math.abs(Math.abs(xv - tv) - k) < 0.05);
      const moved = nd(t!.value.shape, (j) => {
        let tv = t!.value.data[j]!;
        while (near(x!.value.data[j]!, tv)) tv = roundTo(dtype, tv + 0.1);
        return tv;
      });
      return { name: `grad-${i}-3x4`, inputs: [x!, { ...t!, value: moved }], args };
    }),
    call,
    reference: ([x, t], a, dtype) => {
      const tr = new Trace(dtype);
      return reduceTraced(x!.shape, Array.from(x!.data, (v, i) => loss(tr, v, t!.data[i]!, a)), a.reduction, dtype);
    },
  };
}

/** |x − t|, traced. */
const absDiff = (tr: Trace, x: number, t: number): Traced => {
  const d = tr.sub(tr.exact(x), tr.exact(t));
  return { v: Math.abs(d.v), e: d.e };
};

const L1_LOSS = pairLossInfo('l1Loss', ([x, t], a) => F.l1Loss(x!, t!, { reduction: a.reduction }), absDiff, { x: { lo: -3, hi: 3 }, t: { lo: -3, hi: 3 } }, [
  { reduction: 'mean' }, { reduction: 'none' }, { reduction: 'sum' },
], { kinks: () => [0] });

/** ½d²/β below β, d − ½β above (PyTorch's smooth_l1 in the library's step order). */
const smoothL1: PairLoss = (tr, x, t, a) => {
  const beta = a.beta ?? 1;
  const d = absDiff(tr, x, t);
  if (beta === 0) return d;
  return d.v < beta ? tr.scale(tr.mul(tr.scale(d, 0.5), d), 1 / beta) : tr.sub(d, tr.exact(0.5 * beta));
};

const SMOOTH_L1_LOSS = pairLossInfo('smoothL1Loss', ([x, t], a) => F.smoothL1Loss(x!, t!, { reduction: a.reduction, beta: a.beta ?? 1 }), smoothL1, { x: { lo: -3, hi: 3 }, t: { lo: -3, hi: 3 } }, [
  { reduction: 'mean', beta: 1 }, { reduction: 'none', beta: 0.5 }, { reduction: 'sum', beta: 0 },
], { kinks: (a) => [a.beta, 0] });

/** ½d² below δ, δ·(d − ½δ) above. */
const huber: PairLoss = (tr, x, t, a) => {
  const delta = a.delta ?? 1;
  const d = absDiff(tr, x, t);
  return d.v < delta ? tr.mul(tr.scale(d, 0.5), d) : tr.scale(tr.sub(d, tr.exact(0.5 * delta)), delta);
};

const HUBER_LOSS = pairLossInfo('huberLoss', ([x, t], a) => F.huberLoss(x!, t!, { reduction: a.reduction, delta: a.delta ?? 1 }), huber, { x: { lo: -3, hi: 3 }, t: { lo: -3, hi: 3 } }, [
  { reduction: 'mean', delta: 1 }, { reduction: 'none', delta: 0.5 }, { reduction: 'sum', delta: 2 },
], { kinks: (a) => [a.delta] });

/** t·(log t − x) (0·log 0 = 0), or e^t·(t − x) with logTarget. */
const klPointwise: PairLoss = (tr, x, t, a) => {
  if (a.logTarget) return tr.mul(tr.apply(tr.exact(t), Math.exp, Math.exp), tr.sub(tr.exact(t), tr.exact(x)));
  const tLogT = t === 0 ? tr.exact(0) : tr.mul(tr.exact(t), tr.apply(tr.exact(t), Math.log, (v) => 1 / v));
  return tr.sub(tLogT, tr.mul(tr.exact(t), tr.exact(x)));
};

const KL_DIV = pairLossInfo(
  'klDiv',
  ([x, t], a) => F.klDiv(x!, t!, { reduction: a.reduction, logTarget: a.logTarget ?? false }),
  klPointwise,
  // Log-probabilities and probabilities (kept above 0 for the finite differences of t·log t).
  { x: { lo: -5, hi: -0.01 }, t: { lo: 0.05, hi: 1 } },
  [{ reduction: 'batchmean' }, { reduction: 'none' }, { reduction: 'mean' }, { reduction: 'sum', logTarget: true }],
  {
    // Zero target probabilities: t·log t is 0 there.
    extra: (dtype, rng) => [{
      name: 'zero-targets-none-2x3',
      inputs: [input(randomArray(rng, dtype, [2, 3], { lo: -5, hi: -0.01 }), dtype), input(nd([2, 3], [0, 0.5, 0, 0.25, 1, 0]), dtype)],
      args: { reduction: 'none' },
    }],
  },
);

// ---- cosineEmbeddingLoss and marginRankingLoss: (input1, input2, target) ----

/** Targets ±1 (and 0, which contributes nothing, when `zeros`), in the column dtype. */
function signs(rng: Rng, dtype: DTypeName, n: number, zeros = false): Input {
  return input(nd([n], () => (zeros && rng.next() < 0.2 ? 0 : rng.next() < 0.5 ? -1 : 1)), dtype);
}

/** Σ a·b of a vector pair computed in the column dtype (products rounded, the sum in the accumulation dtype, rounded once). */
function tracedDot(tr: Trace, a: readonly number[], b: readonly number[], uAcc: number): Traced {
  const terms = a.map((v, i) => v * b[i]!);
  const v = terms.reduce((s, t) => s + t, 0);
  const magnitude = terms.reduce((s, t) => s + Math.abs(t), 0);
  return { v, e: (tr.u + (terms.length + 2) * uAcc) * magnitude + tr.u * Math.abs(v) };
}

/** PyTorch's cosine_embedding_loss rows: cos = Σab / √((Σa² + ε)(Σb² + ε)), ε = 1e-12. */
function cosineEmbeddingReference(x1: NdArray, x2: NdArray, t: NdArray, a: Readonly<Record<string, any>>, dtype: DTypeName): Expected {
  const tr = new Trace(dtype);
  const uAcc = unitRoundoff(accumulatorOf(dtype));
  const D = x1.shape[x1.shape.length - 1]!;
  const rows = t.data.length;
  const losses = Array.from({ length: rows }, (_, r): Traced => {
    const row = (m: NdArray) => Array.from(m.data.subarray(r * D, (r + 1) * D));
    const [a1, a2] = [row(x1), row(x2)];
    const magnitude = (v: number[]) => tr.add(tracedDot(tr, v, v, uAcc), tr.exact(1e-12));
    const m = tr.mul(magnitude(a1), magnitude(a2));
    const cos = tr.div(tracedDot(tr, a1, a2, uAcc), { v: Math.sqrt(m.v), e: m.e / (2 * Math.sqrt(m.v)) + tr.u * Math.sqrt(m.v) });
    const target = t.data[r]!;
    if (target === 1) return tr.sub(tr.exact(1), cos);
    if (target !== -1) return tr.exact(0);
    const hinge = tr.sub(cos, tr.exact(a.margin ?? 0));
    return hinge.v > 0 ? hinge : tr.exact(0);
  });
  return reduceTraced(t.shape, losses, a.reduction, dtype);
}

const COSINE_EMBEDDING_LOSS: OpInfo = {
  name: 'cosineEmbeddingLoss',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0, 1],
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous', bound = 3) => input(randomArray(rng, dtype, shape, { lo: -bound, hi: bound }), dtype, layout);
    return [
      { name: 'mean-4x5-margin-0.2', inputs: [r([4, 5]), r([4, 5]), signs(rng, dtype, 4)], args: { margin: 0.2, reduction: 'mean' } },
      { name: 'none-6x3-targets-with-0', inputs: [r([6, 3], 'transposed'), r([6, 3], 'strided'), signs(rng, dtype, 6, true)], args: { margin: -0.3, reduction: 'none' } },
      // Values in [−1, 1]: PyTorch's Σa²·Σb² (kept here) overflows float16 for larger ones.
      { name: 'sum-3x200', inputs: [r([3, 200], 'contiguous', 1), r([3, 200], 'contiguous', 1), signs(rng, dtype, 3)], args: { margin: 0, reduction: 'sum' } },
      { name: 'unbatched-7', inputs: [r([7]), r([7]), input(nd([], [-1]), dtype)], args: { margin: -0.5, reduction: 'mean' } },
    ];
  },
  // A margin below −1 keeps every hinge active (no kink for the finite differences to step over).
  gradSamples: (dtype, rng) => [
    { name: 'grad-none-4x3', inputs: [input(randomArray(rng, dtype, [4, 3]), dtype), input(randomArray(rng, dtype, [4, 3]), dtype, 'transposed'), signs(rng, dtype, 4)], args: { margin: -1.5, reduction: 'none' } },
  ],
  call: ([x1, x2, t], a) => F.cosineEmbeddingLoss(x1!, x2!, t!, a.margin, { reduction: a.reduction }),
  reference: ([x1, x2, t], a, dtype) => cosineEmbeddingReference(x1!, x2!, t!, a, dtype),
};

const MARGIN_RANKING_LOSS: OpInfo = {
  name: 'marginRankingLoss',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0, 1],
  samples: (dtype, rng) => {
    const r = (n: number, layout: Layout = 'contiguous') => input(randomArray(rng, dtype, [n]), dtype, layout);
    return [
      { name: 'mean-8-margin-0.5', inputs: [r(8), r(8), signs(rng, dtype, 8)], args: { margin: 0.5, reduction: 'mean' } },
      { name: 'none-strided-6', inputs: [r(6, 'strided'), r(6, 'offset'), signs(rng, dtype, 6)], args: { margin: 0, reduction: 'none' } },
      { name: 'sum-long-700', inputs: [r(700), r(700), signs(rng, dtype, 700)], args: { margin: 1, reduction: 'sum' } },
    ];
  },
  // A margin above |x1 − x2| keeps every hinge active.
  gradSamples: (dtype, rng) => [
    { name: 'grad-none-6', inputs: [input(randomArray(rng, dtype, [6]), dtype), input(randomArray(rng, dtype, [6]), dtype), signs(rng, dtype, 6)], args: { margin: 10, reduction: 'none' } },
  ],
  call: ([x1, x2, t], a) => F.marginRankingLoss(x1!, x2!, t!, a.margin, { reduction: a.reduction }),
  // −t·(x1 − x2) + margin, clamped at 0: the difference and the sum round once each (t = ±1 is exact).
  reference: ([x1, x2, t], a, dtype) => {
    const tr = new Trace(dtype);
    const losses = Array.from(x1!.data, (v, i) => {
      const hinge = tr.add(tr.scale(tr.sub(tr.exact(v), tr.exact(x2!.data[i]!)), -t!.data[i]!), tr.exact(a.margin));
      return hinge.v > 0 ? hinge : tr.exact(0);
    });
    return reduceTraced(x1!.shape, losses, a.reduction, dtype);
  },
};

export const LOSS_INFOS: OpInfo[] = [CROSS_ENTROPY, L1_LOSS, SMOOTH_L1_LOSS, HUBER_LOSS, KL_DIV, COSINE_EMBEDDING_LOSS, MARGIN_RANKING_LOSS];
