// Sampling beyond the factories: multinomial, bernoulli and bernoulli_, normal and randperm. Each is
// made of the counter-based generator's streams (rand, randn, randint) and ops on the tensors'
// device, so a seeded Generator gives the same samples on every backend (multinomial and normal
// up to the rounding of the log and Box–Muller transforms each backend computes).
import { bfloat16, bool, DTYPES, float16, float32, int32, type DType } from '../dtype/dtype.js';
import { resultType } from '../dtype/promotion.js';
import { DTypeError, ShapeError, ValueError } from '../errors/errors.js';
import { defaultGenerator, Generator } from '../random/generator.js';
import { Tensor } from '../tensor/tensor.js';
import { broadcastShapes } from '../tensor/shape.js';
import { bindArguments, boolArgument, intArgument, required } from './arguments.js';
import { rand, randint, randn, type RandomOptions } from './creation.js';
import { cast } from './elementwise.js';
import { runLater, runNow, type HostPlan } from './host-reads.js';
import { valuesNow } from '../tensor/host-data.js';
import { cat, stack } from './join.js';
import { expand } from './views.js';
import { checkCompute } from '../dispatch/run.js';

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Tensor) return 'a Tensor';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return `${typeof v} ${String(v)}`;
}

function dtypeArgument(op: string, v: unknown): DType {
  if (!Object.values(DTYPES).includes(v as DType)) throw new TypeError(`${op}(): argument 'dtype' must be a DType (float32, int32, …), got ${describe(v)}`);
  return v as DType;
}

function generatorArgument(op: string, v: unknown): Generator {
  if (v === undefined) return defaultGenerator;
  if (!(v instanceof Generator)) throw new TypeError(`${op}(): argument 'generator' must be a Generator, got ${describe(v)}`);
  return v;
}

/** A probability given as a number: in [0, 1]. */
function probabilityArgument(op: string, p: unknown): number {
  if (typeof p !== 'number') throw new TypeError(`${op}(): argument 'p' must be a number${op === 'bernoulli_' ? ' or a Tensor' : ''}, got ${describe(p)}`);
  if (!(p >= 0 && p <= 1)) throw new ValueError(`${op} expects p to be in [0, 1], but got p=${p}`);
  return p;
}

/**
 * A tensor of probabilities: every element in [0, 1], checked where the device reads
 * synchronously (elsewhere a value out of range draws as 0 below 0 and 1 above 1, NaN as 0).
 */
function checkProbabilities(op: string, p: Tensor): void {
  const outside = valuesNow(p.ge(0).logicalAnd(p.le(1)).logicalNot().any());
  if (outside !== null && outside[0]) throw new ValueError(`${op}(): Expected p_in >= 0 && p_in <= 1 to be true, but got false: every probability must be in [0, 1]`);
}

/**
 * Exponential race scores: p / E with E ~ Exp(1) drawn as −log(1 − u), −1 where p is 0. The
 * largest score is category i with probability p_i / Σp, and the k largest are k draws without
 * replacement (PyTorch's algorithm).
 */
function raceScores(p: Tensor, positive: Tensor, shape: readonly number[], generator: Generator): Tensor {
  const exponential = rand(shape, { generator, device: p.device }).neg().log1p().neg();
  return p.div(exponential).where(positive, -1);
}

/** Scores of at most this many elements at a time when sampling with replacement. */
const CHUNK = 2 ** 22;

/** `numSamples` categories per row of the float32 [rows, K] probabilities. */
function draw(p: Tensor, numSamples: number, replacement: boolean, generator: Generator): Tensor {
  const [rows, categories] = p.shape as [number, number];
  const positive = p.gt(0);
  if (!replacement || numSamples === 1) {
    const scores = raceScores(p, positive, p.shape, generator);
    return numSamples === 1 ? scores.argmax(1, true) : scores.topk(numSamples, 1).indices;
  }
  // With replacement every sample is its own race, over [rows, samples, K] scores, in chunks.
  const chunk = Math.max(1, Math.floor(CHUNK / Math.max(1, rows * categories)));
  const parts: Tensor[] = [];
  for (let start = 0; start < numSamples; start += chunk) {
    const m = Math.min(chunk, numSamples - start);
    parts.push(raceScores(p.unsqueeze(1), positive.unsqueeze(1), [rows, m, categories], generator).argmax(2));
  }
  return parts.length === 1 ? parts[0]! : cat(parts, 1);
}

/** Why PyTorch refuses these distributions, from per-row [not ≥ 0, infinite, non-zero count], or null. */
function refusal(flags: ArrayLike<number>, rows: number, numSamples: number, replacement: boolean): string | null {
  const row = (r: number) => ({ bad: flags[3 * r]! !== 0, inf: flags[3 * r + 1]! !== 0, nonzero: flags[3 * r + 2]! });
  const all = Array.from({ length: rows }, (_, r) => row(r));
  if (replacement) {
    for (const r of all) {
      if (r.bad) return 'invalid multinomial distribution (encountering probability entry < 0)';
      if (r.inf) return 'invalid multinomial distribution (encountering probability entry = infinity or NaN)';
      if (r.nonzero === 0) return 'invalid multinomial distribution (sum of probabilities <= 0)';
    }
    return null;
  }
  if (all.some((r) => r.bad || r.inf)) return 'probability tensor contains either `inf`, `nan` or element < 0';
  if (all.some((r) => r.nonzero === 0)) return 'invalid multinomial distribution (sum of probabilities <= 0)';
  if (all.some((r) => r.nonzero < numSamples)) {
    return `invalid multinomial distribution (with replacement=False, not enough non-negative category to sample): ${numSamples} samples asked for, and a row has ${Math.min(...all.map((r) => r.nonzero))} non-zero probabilities`;
  }
  return null;
}

/**
 * `probs.multinomial(numSamples, replacement?, { generator })`: int32 category indices drawn from
 * each row of (unnormalized) probabilities. The samples are drawn when called; the checks of the
 * values (negative, NaN or infinite entries, rows without a non-zero one, too few of them without
 * replacement) read a per-row summary, and a refused call puts the generator back.
 */
function multinomialPlan(probs: Tensor, args: readonly unknown[]): HostPlan<Tensor> {
  const op = 'multinomial';
  const a = bindArguments(op, args, ['numSamples', 'replacement'], ['generator']);
  const numSamples = intArgument(op, 'numSamples', required(op, 'numSamples', a.numSamples), 0);
  const replacement = boolArgument(op, 'replacement', a.replacement, false);
  const generator = generatorArgument(op, a.generator);
  if (probs.ndim !== 1 && probs.ndim !== 2) throw new ShapeError(`multinomial(): prob_dist must be 1 or 2 dim, got ${probs.ndim} dims`, op);
  if (!probs.dtype.isFloatingPoint) throw new DTypeError(`multinomial(): only supports floating-point dtypes for input, got ${probs.dtype.name}`, op, probs.dtype.name);
  checkCompute(op, probs);
  if (numSamples <= 0) throw new ValueError(`multinomial(): cannot sample n_sample <= 0 samples (got ${numSamples})`);
  const categories = probs.shape[probs.ndim - 1]!;
  if (!replacement && numSamples > categories) {
    throw new ValueError(`multinomial(): cannot sample n_sample > prob_dist.size(-1) samples without replacement (${numSamples} > ${categories})`);
  }
  if (categories > 2 ** 24) throw new ValueError(`multinomial(): number of categories cannot exceed 2^24 (got ${categories})`);
  const p = cast(probs.detach(), float32);
  const matrix = probs.ndim === 1 ? p.reshape([1, categories]) : p;
  const rows = matrix.shape[0]!;
  const summary = stack([matrix.ge(0).logicalNot().any(1), matrix.isinf().any(1), matrix.ne(0).sum(1)].map((t) => cast(t, int32)), 1);
  const before = generator.getState();
  const samples = rows === 0 ? matrix.newZeros([0, numSamples], { dtype: int32 }) : draw(matrix, numSamples, replacement, generator);
  const after = generator.getState();
  return {
    needs: [summary],
    needsOnlyChecked: true,
    finish: ([flags]) => {
      const why = refusal(flags!, rows, numSamples, replacement);
      if (why !== null) {
        const now = generator.getState();
        if (now.seed === after.seed && now.offset === after.offset) generator.setState(before);
        throw new ValueError(`multinomial(): ${why}`);
      }
      return probs.ndim === 1 ? samples.reshape([numSamples]) : samples;
    },
  };
}

/** `probs.multinomial(...)`, reading its checks synchronously. */
export function multinomial(probs: Tensor, args: readonly unknown[]): Tensor {
  return runNow(multinomialPlan(probs, args), 'multinomial', 'use `await probs.multinomialAsync(...)`');
}

/** `probs.multinomialAsync(...)`: `multinomial` on any device. */
export function multinomialAsync(probs: Tensor, args: readonly unknown[]): Promise<Tensor> {
  return runLater(multinomialPlan(probs, args));
}

/**
 * `x.bernoulli(p?, { generator })`: 1 with probability p (each element of x, or the number `p`),
 * else 0, in x's dtype: `u < p` for u of `rand`.
 */
export function bernoulli(x: Tensor, args: readonly unknown[]): Tensor {
  const op = 'bernoulli';
  const a = bindArguments(op, args, ['p'], ['generator']);
  const generator = generatorArgument(op, a.generator);
  checkCompute(op, x);
  if (a.p !== undefined) {
    const p = probabilityArgument(op, a.p);
    return cast(rand(x.shape, { generator, device: x.device }).lt(p), x.dtype);
  }
  if (!x.dtype.isFloatingPoint) throw new DTypeError(`bernoulli(): expected a floating point tensor of probabilities, got ${x.dtype.name}`, op, x.dtype.name);
  checkProbabilities(op, x);
  return cast(rand(x.shape, { generator, device: x.device }).lt(x.detach()), x.dtype);
}

/** The values `x.bernoulli_(p = 0.5, { generator })` writes: `u < p`, p a number or a tensor that broadcasts to x. */
export function bernoulliValues(x: Tensor, args: readonly unknown[]): Tensor {
  const op = 'bernoulli_';
  const a = bindArguments(op, args, ['p'], ['generator']);
  const generator = generatorArgument(op, a.generator);
  checkCompute(op, x);
  let p: number | Tensor;
  if (a.p instanceof Tensor) {
    checkProbabilities(op, a.p);
    p = expand(a.p.detach(), x.shape);
  } else {
    p = probabilityArgument(op, a.p ?? 0.5);
  }
  return cast(rand(x.shape, { generator, device: x.device }).lt(p), x.dtype);
}

/** The dtype random values are computed in for `dtype`: float32 for the 16-bit floats (rounded once). */
function opmathOf(dtype: DType): DType {
  return dtype === float16 || dtype === bfloat16 ? float32 : dtype;
}

/** `mean + std · z` for z of `randn(shape)`, computed in `dtype`'s opmath and rounded into it. */
function shifted(mean: Tensor | number, std: Tensor | number, shape: readonly number[], dtype: DType, options: RandomOptions): Tensor {
  const opmath = opmathOf(dtype);
  const up = (v: Tensor | number) => (v instanceof Tensor ? cast(v, opmath) : v);
  const z = randn(shape, { ...options, dtype: opmath });
  return cast(z.mul(up(std)).add(up(mean)), dtype);
}

/** Where `normal` with a number mean and std makes its tensor (`torch.normal`'s keyword arguments). */
export interface NormalOptions {
  /** The generator to draw from (default: the global one). */
  readonly generator?: Generator;
  /** A floating dtype (default float32). */
  readonly dtype?: DType;
  /** The device (default: the default device). */
  readonly device?: RandomOptions['device'];
  /** Make the result a leaf that requires grad. */
  readonly requiresGrad?: boolean;
}

/**
 * `normal(mean, std = 1, { generator })`: normal samples with a tensor mean, and a tensor or number
 * std (≥ 0), broadcast together, in their floating dtype and on their device; gradients flow to
 * both (PyTorch's `torch.normal`). A tensor std is checked where its device reads synchronously.
 */
export function normal(mean: Tensor, std?: Tensor | number, options?: { readonly generator?: Generator }): Tensor;
/** `normal(mean, std, { generator })` with a number mean and a tensor std: samples in std's shape. */
export function normal(mean: number, std: Tensor, options?: { readonly generator?: Generator }): Tensor;
/** `normal(mean, std, size, { generator, dtype, device, requiresGrad })`: a new tensor of `size` with numbers for mean and std. */
export function normal(mean: number, std: number, size: readonly number[], options?: NormalOptions): Tensor;
export function normal(...args: unknown[]): Tensor {
  // Arguments bound as Python does: (mean, std, size) positionally or by name, then the keywords.
  const op = 'normal';
  const a = bindArguments(op, args, ['mean', 'std', 'size'], ['generator', 'dtype', 'device', 'requiresGrad']);
  const mean = required(op, 'mean', a.mean);
  const generator = generatorArgument(op, a.generator);
  for (const [name, v] of [['mean', mean], ['std', a.std]] as const) {
    if (v !== undefined && typeof v !== 'number' && !(v instanceof Tensor)) throw new TypeError(`${op}(): argument '${name}' must be a Tensor or a number, got ${describe(v)}`);
  }
  if (typeof a.std === 'number' && !(a.std >= 0)) throw new ValueError(`normal expects std >= 0.0, but found std ${a.std}`);
  if (mean instanceof Tensor || a.std instanceof Tensor) {
    const std = (a.std ?? 1) as Tensor | number;
    const given = (['size', 'dtype', 'device', 'requiresGrad'] as const).find((k) => a[k] !== undefined);
    if (given) throw new TypeError(`${op}() got an unexpected argument '${given}': with a tensor mean or std, the result takes their shape, dtype and device`);
    const tensors = [mean, std].filter((v): v is Tensor => v instanceof Tensor);
    const dtype = resultType(mean as Tensor | number, std);
    if (!dtype.isFloatingPoint) throw new DTypeError(`normal(): expected a floating point mean and std, got ${dtype.name}`, op, dtype.name);
    if (std instanceof Tensor) {
      const negative = valuesNow(std.ge(0).logicalNot().any());
      if (negative !== null && negative[0]) throw new ValueError('normal expects all elements of std >= 0.0');
    }
    for (const t of tensors) checkCompute(op, t);
    const shape = broadcastShapes(tensors.map((t) => t.shape), op);
    return shifted(mean as Tensor | number, std, shape, dtype, { generator, device: tensors[0]!.device });
  }
  const std = required(op, 'std', a.std) as number;
  const size = required(op, 'size', a.size) as readonly number[];
  const dtype = dtypeArgument(op, a.dtype ?? float32);
  if (!dtype.isFloatingPoint) throw new DTypeError(`normal(): expected a floating point dtype, got ${dtype.name}`, op, dtype.name);
  const out = shifted(mean as number, std, size, dtype, { generator, ...(a.device === undefined ? {} : { device: a.device as RandomOptions['device'] }) });
  return boolArgument(op, 'requiresGrad', a.requiresGrad, false) ? out.requiresGrad_() : out;
}

/** The largest n a permutation in `dtype` can hold exactly (its last value is n − 1). */
function permutationLimit(dtype: DType): number {
  if (dtype === int32) return 2 ** 31;
  if (dtype === float16) return 2 ** 11 + 1;
  if (dtype === bfloat16) return 2 ** 8 + 1;
  if (dtype === float32) return 2 ** 24 + 1;
  return Number.MAX_SAFE_INTEGER;
}

/**
 * `randperm(n, { generator, dtype, device, requiresGrad })`: a random permutation of 0..n−1 (int32
 * by default), on the device: the order that sorts two streams of random 32-bit keys (PyTorch's
 * CUDA algorithm; ties need both keys equal, about n² / 2^65).
 */
export function randperm(n: number, options?: RandomOptions): Tensor {
  const op = 'randperm';
  const a = bindArguments(op, options === undefined ? [] : [options], [], ['generator', 'dtype', 'device', 'requiresGrad', 'pinMemory']);
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new TypeError(`${op}(): argument 'n' must be an integer, got ${describe(n)}`);
  if (n < 0) throw new ValueError(`randperm(): n must be non-negative, got ${n}`);
  const dtype = dtypeArgument(op, a.dtype ?? int32);
  if (dtype === bool) throw new DTypeError(`randperm(): a permutation needs a numeric dtype, got ${dtype.name}`, op, dtype.name);
  if (n > permutationLimit(dtype)) throw new ValueError(`randperm(): n is too large for result tensor type: '${dtype.name}' (n = ${n})`);
  const draw = { generator: generatorArgument(op, a.generator), ...(a.device === undefined ? {} : { device: a.device as RandomOptions['device'] }) };
  const primary = randint(-(2 ** 31), 2 ** 31, [n], draw);
  const secondary = randint(-(2 ** 31), 2 ** 31, [n], draw);
  const bySecondary = secondary.argsort(0);
  let out = cast(bySecondary.gather(0, primary.gather(0, bySecondary).argsort(0)), dtype);
  if (a.pinMemory === true) out = out.pinMemory();
  return boolArgument(op, 'requiresGrad', a.requiresGrad, false) ? out.requiresGrad_() : out;
}
