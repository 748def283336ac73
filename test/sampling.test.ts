// multinomial, bernoulli / bernoulli_, normal and randperm on the cpu backend: distributions checked
// by their statistics (bounds of 5 standard deviations, on seeded draws, so the results are fixed),
// exact equality with the generator's uniform stream where the op is defined by it, PyTorch's
// errors, gradients of normal's mean and std, and the sync/async rule on the 'fake' backend.
import '@core/backend-cpu';
import {
  arange, bernoulli, DTypeError, float16, float32, float64, Generator, gradcheck, int32, multinomial, multinomialAsync, normal,
  rand, randn, randperm, ShapeError, tensor, TensorError, ValueError, zeros, type Tensor,
} from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { expectClose, expectError, expectRejection, flat } from './helpers/assert.js';
import { registerFakeBackend } from './helpers/fake-backend.js';

registerFakeBackend();

const vals = (t: Tensor): number[] => Array.from(t.dataSync());
const gen = (seed: number) => new Generator(seed);

/** How often each of `k` values occurs in `samples`. */
function histogram(samples: readonly number[], k: number): number[] {
  const counts = new Array<number>(k).fill(0);
  for (const s of samples) counts[s]!++;
  return counts;
}

/** Each frequency within 5 binomial standard deviations of n·p (n: the number of draws, by default the sum of the counts). */
function expectFrequencies(counts: readonly number[], p: readonly number[], n = counts.reduce((a, b) => a + b, 0)): void {
  counts.forEach((c, i) => {
    const sigma = Math.sqrt(n * p[i]! * (1 - p[i]!));
    expect(Math.abs(c - n * p[i]!), `category ${i}: ${c} of ${n}, expected ${n * p[i]!} ± ${5 * sigma}`).toBeLessThanOrEqual(5 * sigma);
  });
}

describe('multinomial', () => {
  const p = [0.1, 0.2, 0.3, 0.4];

  it('without replacement, one sample: category i with probability p_i / Σp (unnormalized rows)', () => {
    const rows = tensor(p).mul(7).expand([20000, 4]);
    const s = rows.multinomial(1, false, { generator: gen(1) });
    expect(s.shape).toEqual([20000, 1]);
    expect(s.dtype).toBe(int32);
    expectFrequencies(histogram(vals(s), 4), p);
  });

  it('without replacement: every row is distinct categories; the pair drawn first follows sequential draws', () => {
    const s = vals(tensor(p).expand([20000, 4]).multinomial(4, { generator: gen(2) }));
    const firstTwo = new Array<number>(16).fill(0);
    for (let r = 0; r < 20000; r++) {
      const row = s.slice(4 * r, 4 * r + 4);
      expect(new Set(row).size).toBe(4);
      firstTwo[row[0]! * 4 + row[1]!]!++;
    }
    // P(first 3, then 2) = 0.4 · 0.3 / 0.6; P(first 0, then 1) = 0.1 · 0.2 / 0.9
    expectFrequencies([firstTwo[3 * 4 + 2]!, firstTwo[0 * 4 + 1]!], [0.2, 0.1 * 0.2 / 0.9], 20000);
  });

  it('with replacement: frequencies follow p; zero-probability categories are never drawn', () => {
    const s = tensor([0.1, 0, 0.2, 0.3, 0, 0.4]).multinomial(30000, true, { generator: gen(3) });
    expect(s.shape).toEqual([30000]);
    const counts = histogram(vals(s), 6);
    expect([counts[1], counts[4]]).toEqual([0, 0]);
    expectFrequencies(counts, [0.1, 0, 0.2, 0.3, 0, 0.4]);
    const without = vals(tensor([[0, 5, 0, 1], [2, 0, 0, 0]]).multinomial(2, true, { generator: gen(4) }));
    expect(without.slice(2)).toEqual([0, 0]);
    expect(without.slice(0, 2).every((c) => c === 1 || c === 3)).toBe(true);
  });

  it('with replacement over many rows draws in chunks that keep every row\'s samples its own (one-hot rows)', () => {
    const k = 2048;
    const hot = arange(k, { dtype: int32 }).mul(7).remainder(k);
    const probs = zeros([k, k]).scatter(1, hot.reshape([k, 1]), 1);
    const s = probs.multinomial(3, true, { generator: gen(5) });
    expect(s.shape).toEqual([k, 3]);
    expect(vals(s)).toEqual(vals(hot).flatMap((c) => [c, c, c]));
  });

  it('is the exponential race on the generator\'s uniform stream: argmax of p / −log(1 − u)', () => {
    const probs = tensor([[0.3, 0.5, 0.2], [1, 2, 3]]);
    const u = rand([2, 3], { generator: gen(6) });
    const want = probs.div(u.neg().log1p().neg()).argmax(1, true);
    expect(vals(probs.multinomial(1, { generator: gen(6) }))).toEqual(vals(want));
    expect(vals(multinomial(probs, 2, { generator: gen(9) }))).toEqual(vals(multinomial(probs, 2, { generator: gen(9) })));
    expect(vals(probs.multinomial(3, { generator: gen(9) }))).not.toEqual(vals(probs.multinomial(3, { generator: gen(10) })));
  });

  it('float16 and float64 probabilities, rows without any sample: PyTorch\'s shapes', () => {
    expect(tensor([1, 1], { dtype: float16 }).multinomial(2).shape).toEqual([2]);
    expect(tensor([[1, 1]], { dtype: float64 }).multinomial(1, true).shape).toEqual([1, 1]);
    expect(zeros([0, 3]).multinomial(2, true).shape).toEqual([0, 2]);
  });

  it('PyTorch\'s errors; a refused call leaves the generator where it was', () => {
    const g = gen(11);
    const before = g.getState();
    const refuse = (probs: Tensor, n: number, replacement: boolean, message: string) =>
      expectError(() => probs.multinomial(n, replacement, { generator: g }), ValueError, `multinomial(): ${message}`);
    refuse(tensor([1, -1, 0]), 1, false, 'probability tensor contains either `inf`, `nan` or element < 0');
    refuse(tensor([1, NaN]), 1, false, 'probability tensor contains either `inf`, `nan` or element < 0');
    refuse(tensor([[1, 2], [0, 0]]), 1, false, 'invalid multinomial distribution (sum of probabilities <= 0)');
    refuse(tensor([1, 0, 0]), 2, false, 'invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)');
    refuse(tensor([1, -1]), 2, true, 'invalid multinomial distribution (encountering probability entry < 0)');
    refuse(tensor([1, NaN]), 2, true, 'invalid multinomial distribution (encountering probability entry < 0)');
    refuse(tensor([1, Infinity]), 1, true, 'invalid multinomial distribution (encountering probability entry = infinity or NaN)');
    refuse(tensor([0, 0]), 3, true, 'invalid multinomial distribution (sum of probabilities <= 0)');
    refuse(tensor([1, 2, 0]), 4, false, 'cannot sample n_sample > prob_dist.size(-1) samples without replacement');
    refuse(tensor([1, 2]), 0, true, 'cannot sample n_sample <= 0 samples');
    expect(g.getState()).toEqual(before);
    expectError(() => tensor([1, 2], { dtype: int32 }).multinomial(1), DTypeError, 'only supports floating-point dtypes for input, got int32');
    expectError(() => zeros([2, 2, 2]).multinomial(1), ShapeError, 'prob_dist must be 1 or 2 dim');
    expectError(() => tensor([1, 2]).multinomial(1.5), TypeError, "argument 'numSamples' must be an integer");
    expectError(() => tensor([1, 2]).multinomial(1, { generator: 3 } as never), TypeError, "argument 'generator' must be a Generator");
  });

  it('needs a read for its checks: on a device without synchronous reads the sync form names multinomialAsync, which draws the same samples', async () => {
    const probs = tensor([[0.2, 0.8, 0], [3, 1, 1]]);
    expectError(() => probs.to('fake').multinomial(2), TensorError, 'use `await probs.multinomialAsync(...)`');
    const onFake = await multinomialAsync(probs.to('fake'), 5, true, { generator: gen(12) });
    expect(onFake.device.type).toBe('fake');
    expect(flat(await onFake.toArray())).toEqual(vals(probs.multinomial(5, true, { generator: gen(12) })));
    expect(vals(await probs.multinomialAsync(2, { generator: gen(13) }))).toEqual(vals(probs.multinomial(2, { generator: gen(13) })));
    await expectRejection(() => tensor([0, 0]).to('fake').multinomialAsync(1), ValueError, 'sum of probabilities <= 0');
  });
});

describe('bernoulli and bernoulli_', () => {
  it('is u < p on the generator\'s uniform stream, in the input\'s dtype', () => {
    const p = tensor([[0.1, 0.5, 0.9], [0, 1, 0.25]], { dtype: float64 });
    const b = p.bernoulli({ generator: gen(20) });
    expect(b.dtype).toBe(float64);
    expect(vals(b)).toEqual(vals(rand([2, 3], { generator: gen(20) }).lt(p).double()));
    expect(vals(bernoulli(zeros([5], { dtype: int32 }), 0.3, { generator: gen(21) }))).toEqual(vals(rand([5], { generator: gen(21) }).lt(0.3).int()));
  });

  it('has mean p (20000 draws, 5σ) and gives exactly 0 for p = 0 and 1 for p = 1', () => {
    const draws = vals(tensor([0.3]).expand([20000]).bernoulli({ generator: gen(22) }));
    expectFrequencies([draws.filter((v) => v === 1).length], [0.3], draws.length);
    expect(vals(tensor([0, 1, 0, 1]).bernoulli())).toEqual([0, 1, 0, 1]);
  });

  it('bernoulli_ fills in place with p (default 0.5, a number or a broadcast tensor) on the same stream', () => {
    const t = zeros([2, 3]);
    expect(t.bernoulli_(tensor([1, 0, 0.5]), { generator: gen(23) })).toBe(t);
    const u = rand([2, 3], { generator: gen(23) });
    expect(vals(t)).toEqual(vals(u.lt(tensor([1, 0, 0.5])).float()));
    const b = tensor([false, false, false, false]).bernoulli_(undefined, { generator: gen(24) });
    expect(vals(b)).toEqual(vals(rand([4], { generator: gen(24) }).lt(0.5)));
    const h = zeros([1000], { dtype: float16 }).bernoulli_(0.25, { generator: gen(25) });
    expect(h.dtype).toBe(float16);
    expectFrequencies([vals(h).filter((v) => v === 1).length], [0.25], 1000);
  });

  it('PyTorch\'s errors; nothing is drawn or written by a refused call', () => {
    const g = gen(26);
    const before = g.getState();
    const t = tensor([5, 5]);
    expectError(() => t.bernoulli_(1.5, { generator: g }), ValueError, 'bernoulli_ expects p to be in [0, 1], but got p=1.5');
    expectError(() => t.bernoulli_(tensor([0.5, -0.1]), { generator: g }), ValueError, 'Expected p_in >= 0 && p_in <= 1 to be true, but got false');
    expectError(() => tensor([0.5, NaN]).bernoulli({ generator: g }), ValueError, 'Expected p_in >= 0 && p_in <= 1');
    expectError(() => t.bernoulli(-1, { generator: g }), ValueError, 'bernoulli expects p to be in [0, 1], but got p=-1');
    expectError(() => t.bernoulli_(zeros([3])), ShapeError, 'expand');
    expect(g.getState()).toEqual(before);
    expect(vals(t)).toEqual([5, 5]);
    expectError(() => tensor([1, 0], { dtype: int32 }).bernoulli(), DTypeError, 'expected a floating point tensor of probabilities, got int32');
    expectError(() => t.bernoulli(tensor([0.5]) as never), TypeError, "argument 'p' must be a number, got a Tensor");
  });

  it('runs on a device without synchronous reads and draws what the cpu draws', async () => {
    const p = tensor([0.2, 0.4, 0.6, 0.8, 0.5]);
    const onFake = p.to('fake').bernoulli({ generator: gen(27) });
    expect(flat(await onFake.toArray())).toEqual(vals(p.bernoulli({ generator: gen(27) })));
  });
});

describe('normal', () => {
  it('tensor mean and std broadcast, in their dtype: mean + std · randn on the same stream', () => {
    const mean = tensor([[1], [-2]], { dtype: float64 });
    const std = tensor([0.5, 1, 2], { dtype: float64 });
    const out = normal(mean, std, { generator: gen(30) });
    expect(out.shape).toEqual([2, 3]);
    expect(out.dtype).toBe(float64);
    const z = randn([2, 3], { generator: gen(30), dtype: float64 });
    expectClose(vals(out), vals(z.mul(std).add(mean)), { atol: 1e-12 });
    expectClose(vals(normal(tensor([1, 2]), 3, { generator: gen(31) })), vals(randn([2], { generator: gen(31) }).mul(3).add(tensor([1, 2]))), { atol: 1e-6 });
    expectClose(vals(normal(-1, tensor([2, 0]), { generator: gen(32) })), vals(randn([2], { generator: gen(32) }).mul(tensor([2, 0])).sub(1)), { atol: 1e-6 });
  });

  it('numbers and a size make a tensor as factories do (dtype, device, requiresGrad), with the asked mean and std', async () => {
    const s = normal(3, 2, [50000], { generator: gen(33) });
    expect(s.dtype).toBe(float32);
    const v = vals(s);
    const m = v.reduce((a, b) => a + b, 0) / v.length;
    const sd = Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / v.length);
    expect(Math.abs(m - 3)).toBeLessThan(5 * 2 / Math.sqrt(v.length));
    expect(Math.abs(sd - 2)).toBeLessThan(0.05);
    const h = normal(0, 1, [4], { dtype: float16, requiresGrad: true });
    expect([h.dtype, h.requiresGrad, h.isLeaf]).toEqual([float16, true, true]);
    const f = normal(0, 1, [3], { device: 'fake', generator: gen(34) });
    expect(f.device.type).toBe('fake');
    expectClose(flat(await f.toArray()), vals(normal(0, 1, [3], { generator: gen(34) })), { atol: 1e-6 });
  });

  it('gradients flow to a tensor mean and std (gradcheck with a re-seeded generator)', () => {
    const mean = tensor([0.5, -1, 2], { dtype: float64, requiresGrad: true });
    const std = tensor([[1.5], [0.25]], { dtype: float64, requiresGrad: true });
    const r = gradcheck((m, s) => normal(m, s, { generator: gen(35) }), [mean, std]);
    expect(r.ok, r.mismatch).toBe(true);
  });

  it('PyTorch\'s errors', () => {
    expectError(() => normal(0, -1, [2]), ValueError, 'normal expects std >= 0.0, but found std -1');
    expectError(() => normal(zeros([2]), -1), ValueError, 'normal expects std >= 0.0, but found std -1');
    expectError(() => normal(zeros([2]), tensor([1, -1])), ValueError, 'normal expects all elements of std >= 0.0');
    expectError(() => normal(zeros([2], { dtype: int32 }), 1), DTypeError, 'expected a floating point mean and std, got int32');
    expectError(() => normal(0, 1, [2], { dtype: int32 }), DTypeError, 'expected a floating point dtype, got int32');
    expectError(() => normal(zeros([2]), 1, [3] as never), TypeError, "unexpected argument 'size'");
    expectError(() => (normal as (...args: unknown[]) => Tensor)(0, 1), TypeError, "missing required argument 'size'");
    expectError(() => normal(zeros([2]), zeros([3])), ShapeError, 'must match');
  });
});

describe('randperm', () => {
  const isPermutation = (v: readonly number[]) => [...v].sort((a, b) => a - b).every((x, i) => x === i);

  it('a permutation of 0..n−1, int32 by default, the same for the same seed', () => {
    for (const n of [0, 1, 2, 7, 1000]) {
      const p = randperm(n, { generator: gen(n) });
      expect(p.shape).toEqual([n]);
      expect(p.dtype).toBe(int32);
      expect(isPermutation(vals(p))).toBe(true);
    }
    expect(vals(randperm(50, { generator: gen(40) }))).toEqual(vals(randperm(50, { generator: gen(40) })));
    expect(vals(randperm(50, { generator: gen(40) }))).not.toEqual(vals(randperm(50, { generator: gen(41) })));
    expect(vals(randperm(5, { dtype: float32, generator: gen(42) })).every(Number.isInteger)).toBe(true);
  });

  it('every order is equally likely (the 6 orders of 3, 3000 draws, 5σ each)', () => {
    const g = gen(43);
    const counts = new Array<number>(6).fill(0);
    const code = (v: number[]) => ['012', '021', '102', '120', '201', '210'].indexOf(v.join(''));
    for (let i = 0; i < 3000; i++) counts[code(vals(randperm(3, { generator: g })))]!++;
    expectFrequencies(counts, new Array(6).fill(1 / 6));
  });

  it('on another device: the same permutation', async () => {
    const f = randperm(20, { device: 'fake', generator: gen(44) });
    expect(f.device.type).toBe('fake');
    expect(flat(await f.toArray())).toEqual(vals(randperm(20, { generator: gen(44) })));
  });

  it('errors: a negative or non-integer n, bool, an n too large for the dtype', () => {
    expectError(() => randperm(-1), ValueError, 'n must be non-negative, got -1');
    expectError(() => randperm(2.5), TypeError, "argument 'n' must be an integer");
    expectError(() => randperm(3, { dtype: tensor([true]).dtype }), DTypeError, 'needs a numeric dtype, got bool');
    expectError(() => randperm(2050, { dtype: float16 }), ValueError, "n is too large for result tensor type: 'float16'");
    expect(randperm(2049, { dtype: float16 }).shape).toEqual([2049]);
    expectError(() => randperm(3, { seed: 1 } as never), TypeError, "unexpected keyword argument 'seed'");
  });
});
