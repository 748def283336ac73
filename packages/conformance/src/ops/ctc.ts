// Table entry for F.ctcLoss: the CTC loss of log-probabilities [T, N, C] against padded int32
// targets [N, S], with per-sample input and target lengths, the three reductions, a blank other
// than 0 and zeroInfinity. Float32 and float64 only, as PyTorch's kernels (a half input is cast by
// a cpu autocast region, AC-9).
//
// The oracle sums the probability of every alignment with the α recursion in float64. The library
// runs the same recursion in log space in the column dtype: each of the T steps rounds a
// log-sum-exp of three terms and an addition, errors of a few u relative to the running log
// probability, which grows to at most Σ_t max_c |lp[t, c]|; the bound allows 10·(T + 2)·u times
// that (and the reductions' own roundings).
//
// PyTorch's gradient, exp(lp) − γ (γ the posterior of each class at each frame), is the derivative
// of ctc(logSoftmax(lp)), not of ctc(lp) taken with free inputs (−γ): the two agree in value when
// lp is a log-softmax. The gradient samples therefore ask the oracle to normalize first
// (`normalize`), which the call ignores.
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import type { Input } from '../inputs.js';
import { roundTo, unitRoundoff } from '../oracle/dtype.js';
import { nd, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

interface CtcArgs {
  readonly inputLengths: readonly number[];
  readonly targetLengths: readonly number[];
  readonly blank: number;
  readonly reduction: 'none' | 'sum' | 'mean';
  readonly zeroInfinity: boolean;
  /** Gradient samples: the oracle is ctc(logSoftmax(lp)), whose derivative is PyTorch's gradient. */
  readonly normalize?: boolean;
}

const logAdd = (a: number, b: number): number => {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
};

/** −log p(target | lp) for one sample: frames lp(t, c), `length` frames, target labels. */
function sampleLoss(lp: (t: number, c: number) => number, length: number, target: readonly number[], blank: number): number {
  const extended = [blank, ...target.flatMap((label) => [label, blank])];
  const u = extended.length;
  if (length === 0) return target.length === 0 ? 0 : Infinity;
  let alpha = extended.map((label, s) => (s < 2 ? lp(0, label) : -Infinity));
  for (let t = 1; t < length; t++) {
    alpha = extended.map((label, s) => {
      let sum = alpha[s]!;
      if (s >= 1) sum = logAdd(sum, alpha[s - 1]!);
      if (s >= 2 && label !== blank && label !== extended[s - 2]) sum = logAdd(sum, alpha[s - 2]!);
      return sum + lp(t, label);
    });
  }
  return -logAdd(alpha[u - 1]!, u >= 2 ? alpha[u - 2]! : -Infinity);
}

function ctcReference([logProbs, targets]: readonly NdArray[], a: CtcArgs, dtype: DTypeName): Expected {
  const [, batch, classes] = logProbs!.shape as [number, number, number];
  const width = targets!.shape[1]!;
  const u = unitRoundoff(dtype);
  const losses: number[] = [];
  const bounds: number[] = [];
  for (let n = 0; n < batch; n++) {
    const length = a.inputLengths[n]!;
    // Each frame's log-sum-exp, subtracted when the oracle normalizes.
    const shift = Array.from({ length }, (_, t) => {
      if (!a.normalize) return 0;
      let sum = 0;
      for (let c = 0; c < classes; c++) sum += Math.exp(logProbs!.data[(t * batch + n) * classes + c]!);
      return Math.log(sum);
    });
    const lp = (t: number, c: number) => logProbs!.data[(t * batch + n) * classes + c]! - shift[t]!;
    const target = Array.from({ length: a.targetLengths[n]! }, (_, s) => targets!.data[n * width + s]!);
    const loss = sampleLoss(lp, length, target, a.blank);
    let magnitude = 0;
    for (let t = 0; t < length; t++) {
      let big = 0;
      for (let c = 0; c < classes; c++) big = Math.max(big, Math.abs(lp(t, c)));
      magnitude += big;
    }
    const infinite = !Number.isFinite(loss);
    losses.push(infinite && a.zeroInfinity ? 0 : loss);
    bounds.push(infinite ? 0 : 10 * (length + 2) * u * (magnitude + 1));
  }
  const finite = (v: number) => (Number.isFinite(v) ? Math.abs(v) : 0);
  switch (a.reduction) {
    case 'none':
      return { value: nd([batch], losses.map((v) => roundTo(dtype, v))), dtype, bound: Float64Array.from(bounds) };
    case 'sum': {
      const total = losses.reduce((p, v) => p + v, 0);
      return { value: nd([], [roundTo(dtype, total)]), dtype, bound: Float64Array.of(bounds.reduce((p, v) => p + v, 0) + (batch + 2) * u * losses.reduce((p, v) => p + finite(v), 0)) };
    }
    case 'mean': {
      const scaled = losses.map((v, n) => v / Math.max(1, a.targetLengths[n]!));
      const mean = scaled.reduce((p, v) => p + v, 0) / batch;
      const bound = bounds.reduce((p, v, n) => p + v / Math.max(1, a.targetLengths[n]!), 0) / batch + (batch + 4) * u * scaled.reduce((p, v) => p + finite(v), 0) / batch;
      return { value: nd([], [roundTo(dtype, mean)]), dtype, bound: Float64Array.of(bound) };
    }
    default: return a.reduction satisfies never;
  }
}

/** Log-probabilities: a log-softmax over C of random logits, computed in float64 and rounded to the dtype. */
function logProbabilities(rng: Rng, dtype: DTypeName, frames: number, batch: number, classes: number): Input {
  const logits = Array.from({ length: frames * batch * classes }, () => rng.uniform(-2, 2));
  const value = nd([frames, batch, classes], (i) => {
    const row = Math.floor(i / classes) * classes;
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp(logits[row + c]!);
    return roundTo(dtype, logits[i]! - Math.log(sum));
  });
  return { value, dtype };
}

/** Padded targets [N, S]: each row's first targetLengths[n] labels drawn from the classes other than blank, then padding. */
function paddedTargets(rng: Rng, lengths: readonly number[], width: number, classes: number, blank: number, repeat = false): Input {
  const value = nd([lengths.length, width], (i) => {
    const [n, s] = [Math.floor(i / width), i % width];
    if (s >= lengths[n]!) return blank;
    if (repeat) return (blank + 1) % classes;
    const label = rng.int(0, classes - 1);
    return label >= blank ? label + 1 : label;
  });
  return { value, dtype: 'int32' };
}

function ctcSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const sample = (name: string, frames: number, classes: number, a: CtcArgs, options: { repeat?: boolean; numerics?: boolean } = {}): Sample => {
    const width = Math.max(1, ...a.targetLengths);
    return {
      name,
      inputs: [logProbabilities(rng, dtype, frames, a.inputLengths.length, classes), paddedTargets(rng, a.targetLengths, width, classes, a.blank, options.repeat)],
      args: { ...a },
      ...(options.numerics ? { numerics: true } : {}),
    };
  };
  const base = { blank: 0, zeroInfinity: false } as const;
  return [
    sample('none-6x3x5', 6, 5, { ...base, inputLengths: [6, 5, 4], targetLengths: [3, 2, 1], reduction: 'none' }),
    sample('sum-8x2x4', 8, 4, { ...base, inputLengths: [8, 7], targetLengths: [3, 4], reduction: 'sum' }),
    sample('mean-empty-target-5x3x3', 5, 3, { ...base, inputLengths: [5, 3, 5], targetLengths: [2, 0, 1], reduction: 'mean' }),
    sample('blank-last-7x2x6', 7, 6, { ...base, blank: 5, inputLengths: [7, 6], targetLengths: [3, 2], reduction: 'none' }),
    sample('zero-infinity-mean', 4, 4, { ...base, zeroInfinity: true, inputLengths: [4, 4], targetLengths: [3, 2], reduction: 'mean' }, { repeat: true }),
    sample('zero-infinity-none', 4, 4, { ...base, zeroInfinity: true, inputLengths: [4, 3], targetLengths: [3, 1], reduction: 'none' }, { repeat: true }),
    // Three equal labels need 5 frames (a blank between repeats): the first sample's loss is infinite.
    sample('infeasible-none', 4, 4, { ...base, inputLengths: [4, 4], targetLengths: [3, 1], reduction: 'none' }, { repeat: true, numerics: true }),
    sample('long-20x2x5', 20, 5, { ...base, inputLengths: [20, 17], targetLengths: [6, 5], reduction: 'sum' }),
  ];
}

/** F.ctcLoss. */
export const CTC_LOSS: OpInfo = {
  name: 'ctcLoss',
  category: 'composites',
  dtypes: ['float32', 'float64'],
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0],
  samples: ctcSamples,
  gradSamples: (dtype, rng) => ctcSamples(dtype, rng)
    .filter((sample) => ['none-6x3x5', 'mean-empty-target-5x3x3', 'blank-last-7x2x6', 'zero-infinity-mean'].includes(sample.name))
    .map((sample) => ({ ...sample, name: `grad-${sample.name}`, args: { ...sample.args, normalize: true } })),
  call: ([logProbs, targets], a) => F.ctcLoss(logProbs!, targets!, a.inputLengths, a.targetLengths, { blank: a.blank, reduction: a.reduction, zeroInfinity: a.zeroInfinity }),
  reference: (inputs, a, dtype) => ctcReference(inputs, a as CtcArgs, dtype),
  overrides: [{
    dtypes: ['float16', 'bfloat16'],
    samples: ['grad-none-6x3x5', 'grad-mean-empty-target-5x3x3', 'grad-blank-last-7x2x6', 'grad-zero-infinity-mean'],
    tolerance: { atol: 1e-2, rtol: 2e-2 },
    reason: 'log-probabilities rounded to a half type are no longer normalized (each frame off by up to about 2⁻⁹·its entropy): PyTorch\'s gradient exp(lp) − γ then differs from the oracle\'s, the derivative of ctc(logSoftmax(lp)), by that fraction of exp(lp)',
  }],
};
