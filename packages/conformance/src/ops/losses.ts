// Table entry for F.crossEntropy with int32 class indices: a composite (logSoftmax, gather, reductions)
// that a backend may fuse (`FusedKernels.crossEntropy`), so its cases run fused and decomposed. The
// samples with class weights or spatial dims are ones the fused kernel declines: both variants must
// still agree with the oracle there (core falls back to the decomposition).
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { nd, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

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

export const LOSS_INFOS: OpInfo[] = [CROSS_ENTROPY];
