// Table entries for the sampling ops: bernoulli, bernoulli_, randperm (exact: the oracle draws the
// same Philox4x32-10 stream), normal (mean + std·z with z the Box–Muller transform of that stream,
// within randn's bound) and multinomial (statistical: the frequency of each category over
// thousands of seeded draws, within 5 standard deviations of p / Σp).
import { arange, Generator, normal, randperm, type DTypeName, type Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { dtypeObject, randomArray, type Input, type Layout } from '../inputs.js';
import { ALL_DTYPES, FLOAT_DTYPES, roundTo } from '../oracle/dtype.js';
import { broadcastShapes, broadcastTo, map, nd, numel, type NdArray } from '../oracle/ndarray.js';
import { keyOf, philoxWords, randintFromWord, uniformFromWord } from '../oracle/philox.js';
import type { CallContext, OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { syncOrAsync } from './advanced-indexing.js';

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });
const PROBABILITY = { lo: 0, hi: 1 };

/** The generator of a call seeded with `a.seed`: the context's when it gives one, else a new one. */
const generatorOf = (a: Readonly<Record<string, any>>, ctx: CallContext): { generator: Generator } => ({ generator: ctx.generator?.(a.seed) ?? new Generator(a.seed) });

/** The uniform values a generator seeded with `seed` gives for n elements, from block `offset`. */
function uniforms(seed: number, n: number, offset = 0): number[] {
  return philoxWords(keyOf(seed), offset, n).map(uniformFromWord);
}

/** u < p elementwise, for u the stream of `seed`, in `dtype`. */
function bernoulliOracle(p: NdArray | number, shape: readonly number[], seed: number, dtype: DTypeName): Expected {
  const u = uniforms(seed, numel(shape));
  return { value: nd(shape, (i) => (u[i]! < (typeof p === 'number' ? p : p.data[i]!) ? 1 : 0)), dtype };
}

const BERNOULLI: OpInfo = {
  name: 'bernoulli',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'exact',
  differentiable: false,
  samples: (dtype, rng) => [
    { name: 'probabilities-3x5', inputs: [input(randomArray(rng, dtype, [3, 5], PROBABILITY), dtype)], args: { seed: 1 } },
    { name: 'transposed-4x3', inputs: [input(randomArray(rng, dtype, [4, 3], PROBABILITY), dtype, 'transposed')], args: { seed: 2 } },
    { name: 'zeros-and-ones', inputs: [input(nd([6], [0, 1, 0, 1, 1, 0]), dtype)], args: { seed: 3 } },
    { name: 'number-p', inputs: [input(randomArray(rng, dtype, [2, 7]), dtype)], args: { seed: 4, p: 0.3 } },
  ],
  call: ([x], a, ctx) => (a.p === undefined ? x!.bernoulli(generatorOf(a, ctx)) : x!.bernoulli(a.p, generatorOf(a, ctx))),
  reference: ([x], a, dtype) => bernoulliOracle(a.p ?? x!, x!.shape, a.seed, dtype),
};

const BERNOULLI_INPLACE: OpInfo = {
  name: 'bernoulli_',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: false,
  samples: (dtype, rng) => [
    { name: 'default-p', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype, 'transposed')], args: { seed: 5 } },
    { name: 'number-p', inputs: [input(randomArray(rng, dtype, [9]), dtype)], args: { seed: 6, p: 0.8 } },
    { name: 'tensor-p-broadcast', inputs: [input(randomArray(rng, dtype, [2, 3]), dtype), input(nd([3], [0.25, 1, 0]), 'float32')], args: { seed: 7 } },
  ],
  call: ([x, p], a, ctx) => x!.clone().bernoulli_(p ?? a.p, generatorOf(a, ctx)),
  reference: ([x, p], a, dtype) => bernoulliOracle(p ? nd(x!.shape, (i) => p.data[i % p.data.length]!) : a.p ?? 0.5, x!.shape, a.seed, dtype),
};

/** randperm's order: by the first key stream, ties by the second, then by position. */
function permutationOracle(n: number, seed: number): number[] {
  const words = philoxWords(keyOf(seed), 0, n);
  const second = philoxWords(keyOf(seed), Math.ceil(n / 4), n);
  const key = (w: number) => randintFromWord(w, -(2 ** 31), 2 ** 31);
  return [...Array(n).keys()].sort((i, j) => key(words[i]!) - key(words[j]!) || key(second[i]!) - key(second[j]!) || i - j);
}

const RANDPERM: OpInfo = {
  name: 'randperm',
  category: 'composites',
  dtypes: ['int32', 'float32', 'float64'],
  needs: 'storage',
  tolerance: 'exact',
  differentiable: false,
  samples: () => [0, 1, 5, 300].map((n) => ({ name: `n-${n}`, inputs: [], args: { n, seed: 10 + n } })),
  call: (_xs, a, ctx) => randperm(a.n, { ...generatorOf(a, ctx), device: ctx.device, dtype: dtypeObject(ctx.dtype) }),
  reference: (_xs, a, dtype) => ({ value: nd([a.n], permutationOracle(a.n, a.seed)), dtype }),
};

const NORMAL: OpInfo = {
  name: 'normal',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'approx',
  // Its gradients (1 for the mean, z for the std) are checked by gradcheck in the integration tests.
  differentiable: false,
  samples: (dtype, rng) => [
    { name: 'tensors-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype), input(randomArray(rng, dtype, [3, 4], { lo: 0, hi: 2 }), dtype, 'transposed')], args: { seed: 20 } },
    { name: 'broadcast-2x1-and-3', inputs: [input(randomArray(rng, dtype, [2, 1]), dtype), input(randomArray(rng, dtype, [3], { lo: 0, hi: 2 }), dtype)], args: { seed: 21 } },
  ],
  call: ([mean, std], a, ctx) => normal(mean!, std!, generatorOf(a, ctx)),
  reference: ([mean, std], a, dtype) => {
    const shape = broadcastShapes(mean!.shape, std!.shape);
    const [m, s] = [broadcastTo(mean!, shape), broadcastTo(std!, shape)];
    const n = numel(shape);
    const u1 = uniforms(a.seed, n);
    const u2 = uniforms(a.seed, n, Math.ceil(n / 4));
    const z = u1.map((u, i) => Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * u2[i]!));
    // randn's float32 Box–Muller: 4e-6 absolute in z (cos near its zeros) and a few float32 ulps of it.
    const bound = new Float64Array(n).map((_, i) => Math.abs(s.data[i]!) * (4e-6 + 4e-7 * Math.abs(z[i]!)) + 2e-7 * Math.abs(m.data[i]!));
    return { value: nd(shape, (i) => roundTo(dtype, m.data[i]! + s.data[i]! * z[i]!)), dtype, bound };
  },
};

/** Per category, the share of the draws that picked it, as float32 [rows, K]. */
function frequencies(samples: Tensor, categories: number): Tensor {
  const hits = samples.unsqueeze(-1).eq(arange(categories, { device: samples.device })).float().sum(-2);
  return hits.div(samples.shape[samples.ndim - 1]!);
}

/** p / Σp per row, within 5 binomial standard deviations of `draws` draws. */
function frequencyOracle(p: NdArray, draws: number): Expected {
  const k = p.shape[p.shape.length - 1]!;
  const sums = Array.from({ length: numel(p.shape) / k }, (_, r) => p.data.slice(r * k, r * k + k).reduce((s, v) => s + v, 0));
  const value = nd(p.shape, (i) => p.data[i]! / sums[Math.floor(i / k)]!);
  return { value: map(value, (v) => Math.fround(v)), dtype: 'float32', bound: value.data.map((q) => 5 * Math.sqrt((q * (1 - q)) / draws) + 1e-6) };
}

function multinomialSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const probs = (shape: number[], zeros: number[]) => {
    const p = randomArray(rng, dtype, shape, { lo: 0.05, hi: 2 });
    return nd(shape, (i) => (zeros.includes(i) ? 0 : p.data[i]!));
  };
  return [
    { name: 'replacement-2x5', inputs: [input(probs([2, 5], [1, 8]), dtype)], args: { seed: 30, draws: 3000, replacement: true } },
    { name: 'first-of-3-without-replacement-4', inputs: [input(probs([4], [2]), dtype)], args: { seed: 31, draws: 3000, numSamples: 3 } },
    { name: 'one-transposed-3x2', inputs: [input(probs([3, 2], []), dtype, 'transposed')], args: { seed: 32, draws: 3000, numSamples: 1 } },
  ];
}

function multinomialInfo(form: 'multinomial' | 'multinomialAsync'): OpInfo {
  /**
   * The draws and how their frequencies are read. With replacement: all `draws` samples of each
   * row. Without: `draws` rows of the same probabilities, the first sample of each (category i is
   * first with probability p_i / Σp).
   */
  const plan = (p: Tensor, a: Readonly<Record<string, any>>) => {
    const k = p.shape[p.ndim - 1]!;
    if (a.replacement) return { probs: p, n: a.draws as number, replacement: true, finish: (s: Tensor) => frequencies(s, k) };
    const rows = p.reshape([-1, k]);
    const probs = rows.unsqueeze(1).expand([rows.shape[0]!, a.draws, k]).reshape([-1, k]);
    const finish = (s: Tensor) => frequencies(s.narrow(1, 0, 1).reshape([rows.shape[0]!, a.draws]), k).reshape(p.shape);
    return { probs, n: a.numSamples as number, replacement: false, finish };
  };
  return {
    name: form,
    // Its checks of the probabilities read them on the host: with `await` where reads are asynchronous.
    eagerOnly: {
      code: 'COMPILE_HOST_READ',
      reason: 'multinomial checks the probabilities on the host (its async form reads them with await)',
      ...(form === 'multinomial' ? { withoutSyncRead: true } : {}),
    },
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    outDtype: () => 'float32',
    tolerance: 'approx',
    differentiable: false,
    samples: multinomialSamples,
    call: ([p], a, ctx) => {
      const q = plan(p!, a);
      return q.finish(q.probs.multinomial(q.n, q.replacement, generatorOf(a, ctx)));
    },
    callAsync: async ([p], a, ctx) => {
      const q = plan(p!, a);
      const later = () => q.probs.multinomialAsync(q.n, q.replacement, generatorOf(a, ctx));
      return q.finish(await (form === 'multinomialAsync' ? later() : syncOrAsync(ctx.device, () => q.probs.multinomial(q.n, q.replacement, generatorOf(a, ctx)), later, 'multinomialAsync')));
    },
    reference: ([p], a) => frequencyOracle(p!, a.draws),
  };
}

export const SAMPLING_INFOS: OpInfo[] = [BERNOULLI, BERNOULLI_INPLACE, RANDPERM, NORMAL, multinomialInfo('multinomial'), multinomialInfo('multinomialAsync')];
