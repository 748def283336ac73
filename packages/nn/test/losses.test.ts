// Losses against PyTorch's formulas written out in plain JS numbers, and their errors.
import { describe, expect, it } from 'vitest';
import { bool, DTypeError, float64, int32, ShapeError, tensor, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, uniform, values } from './helpers.js';

const labels = (v: number[], shape = [v.length]) => tensor(v, { dtype: int32 }).reshape(shape);

function rows(x: Tensor): number[][] {
  const [n, c] = x.shape as [number, number];
  const v = values(x);
  return Array.from({ length: n }, (_, i) => v.slice(i * c, (i + 1) * c));
}

function logSoftmaxRow(r: number[]): number[] {
  const m = Math.max(...r);
  const lse = m + Math.log(r.reduce((s, v) => s + Math.exp(v - m), 0));
  return r.map((v) => v - lse);
}

/**
 * PyTorch's cross_entropy for [N, C] logits and class indices, written from its definition:
 * nll_i = −w[y_i]·logp_i[y_i]; smooth_i = −Σ_c w_c·logp_i[c]; ignored targets contribute 0;
 * mean divides by Σ w[y_i] over kept targets; result = (1 − ε)·nll + ε/C·smooth.
 */
function referenceCE(x: Tensor, y: number[], opts: { weight?: number[]; ignoreIndex?: number; labelSmoothing?: number; reduction?: 'mean' | 'sum' | 'none' }) {
  const { ignoreIndex = -100, labelSmoothing: eps = 0, reduction = 'mean' } = opts;
  const C = x.shape[1]!;
  const w = opts.weight ?? new Array<number>(C).fill(1);
  const nll: number[] = [];
  const smooth: number[] = [];
  let denom = 0;
  let count = 0;
  rows(x).forEach((r, i) => {
    const lp = logSoftmaxRow(r);
    if (y[i] === ignoreIndex) { nll.push(0); smooth.push(0); return; }
    nll.push(-w[y[i]!]! * lp[y[i]!]!);
    smooth.push(-lp.reduce((s, v, c) => s + w[c]! * v, 0));
    denom += w[y[i]!]!;
    count++;
  });
  const sum = (a: number[]) => a.reduce((s, v) => s + v, 0);
  const smoothDenom = opts.weight ? denom : count;
  if (reduction === 'none') return nll.map((v, i) => (1 - eps) * v + (eps / C) * smooth[i]!);
  if (reduction === 'sum') return [(1 - eps) * sum(nll) + (eps / C) * sum(smooth)];
  return [(1 - eps) * (sum(nll) / denom) + (eps / C) * (sum(smooth) / smoothDenom)];
}

describe('F.crossEntropy matches PyTorch formulas', () => {
  const x = uniform([6, 4], 1, -3, 3);
  const y = [0, 3, 1, 1, 2, 3];
  const yIgnored = [0, -100, 1, 1, -100, 3];
  const weight = [0.5, 2, 1, 3];
  const cases: Array<[string, number[], Parameters<typeof referenceCE>[2]]> = [
    ['plain mean', y, {}],
    ['sum', y, { reduction: 'sum' }],
    ['none', y, { reduction: 'none' }],
    ['weighted mean divides by the summed target weights', y, { weight }],
    ['ignoreIndex -100 is left out of the mean', yIgnored, {}],
    ['custom ignoreIndex with weights', [0, 5, 1, 5, 2, 3], { ignoreIndex: 5, weight }],
    ['label smoothing 0.1', y, { labelSmoothing: 0.1 }],
    ['label smoothing + weight (mean over target weights)', y, { labelSmoothing: 0.25, weight }],
    ['label smoothing + ignoreIndex + weight, sum', yIgnored, { labelSmoothing: 0.3, weight, reduction: 'sum' }],
    ['label smoothing + ignoreIndex, mean over kept targets', yIgnored, { labelSmoothing: 0.2 }],
    ['label smoothing, none', yIgnored, { labelSmoothing: 0.2, weight, reduction: 'none' }],
  ];
  for (const [id, target, opts] of cases) {
    it(id, () => {
      const got = F.crossEntropy(x, labels(target), { ...opts, weight: opts.weight ? tensor(opts.weight, { dtype: float64 }) : null });
      expectClose(got, referenceCE(x, target, opts), 1e-12);
    });
  }

  it('a worked example: logits [[1, 2, 3]], target 2 → log(e + e² + e³) − 3', async () => {
    const loss = F.crossEntropy(tensor([[1, 2, 3]], { dtype: float64 }), labels([2]));
    expect(await loss.item()).toBeCloseTo(Math.log(Math.E + Math.E ** 2 + Math.E ** 3) - 3, 12);
  });

  it('[N, C, d1, d2] input with [N, d1, d2] targets is the same as flattening the positions', () => {
    const x4 = uniform([2, 3, 2, 2], 2, -2, 2);
    const t = [0, 2, 1, 1, 2, 0, -100, 1];
    const flatX = x4.permute([0, 2, 3, 1]).reshape([8, 3]);
    const got = F.crossEntropy(x4, labels(t, [2, 2, 2]), { labelSmoothing: 0.1 });
    expectClose(got, referenceCE(flatX, t, { labelSmoothing: 0.1 }), 1e-12);
  });

  it('unbatched [C] input with a 0-dim target', async () => {
    const v = uniform([4], 3);
    const got = await F.crossEntropy(v, labels([2], [])).item();
    expect(got).toBeCloseTo(-logSoftmaxRow(values(v))[2]!, 12);
  });

  it('class-probability targets (with smoothing and weights)', () => {
    const p = F.softmax(uniform([3, 4], 4), 1);
    const w = [1, 2, 0.5, 1];
    const got = F.crossEntropy(x.narrow(0, 0, 3), p, { labelSmoothing: 0.2, weight: tensor(w, { dtype: float64 }) });
    const pr = rows(p);
    let total = 0;
    rows(x.narrow(0, 0, 3)).forEach((r, i) => {
      const lp = logSoftmaxRow(r);
      lp.forEach((v, c) => { total -= w[c]! * v * (pr[i]![c]! * 0.8 + 0.2 / 4); });
    });
    expectClose(got, [total / 3], 1e-12);
  });

  it('class-probability targets take no ignoreIndex', () => {
    expect(() => F.crossEntropy(x, F.softmax(x, 1), { ignoreIndex: 0 })).toThrow('ignoreIndex is not supported for floating point target');
  });

  it('all targets ignored: the mean is NaN, as in PyTorch', async () => {
    expect(Number.isNaN(await F.crossEntropy(x, labels([-100, -100, -100, -100, -100, -100])).item())).toBe(true);
  });

  it('nn.CrossEntropyLoss passes its options through; its weight is a buffer', () => {
    const loss = new nn.CrossEntropyLoss({ weight: tensor(weight, { dtype: float64 }), labelSmoothing: 0.1, reduction: 'sum' });
    expect(loss.namedBuffers().map(([n]) => n)).toEqual(['weight']);
    expectClose(loss.forward(x, labels(y)), referenceCE(x, y, { weight, labelSmoothing: 0.1, reduction: 'sum' }), 1e-12);
  });
});

describe('crossEntropy / nllLoss errors', () => {
  const x = zeros([4, 3]);
  it('wrong target dtype: float labels', () => {
    const err = (() => { try { F.crossEntropy(x, tensor([0, 1, 2, 1])); } catch (e) { return e as Error; } })();
    expect(err).toBeInstanceOf(DTypeError);
    expect(err!.message).toContain('expected target of dtype int32 (class indices), got float32 with shape [4] (input has shape [4, 3])');
    expect(err!.message).toContain('target.int()');
  });
  it('wrong target dtype: bool', () => {
    expect(() => F.nllLoss(x, tensor([true, false, true, true]))).toThrow('expected target of dtype int32 (class indices), got bool');
    expect(tensor([true]).dtype).toBe(bool);
  });
  it('wrong target shape: batch size and extra dims', () => {
    expect(() => F.crossEntropy(x, labels([0, 1, 2]))).toThrow(ShapeError);
    expect(() => F.crossEntropy(x, labels([0, 1, 2]))).toThrow('Expected input batch_size (4) to match target batch_size (3)');
    expect(() => F.crossEntropy(x, labels([0, 1, 2, 1], [4, 1]))).toThrow('Expected target of shape [4] (the input\'s shape [4, 3] without the class dim 1), got [4, 1]');
  });
  it('class index out of range', () => {
    expect(() => F.crossEntropy(x, labels([0, 1, 3, 1]))).toThrow('Target 3 is out of bounds: class indices must be in [0, 2]');
    expect(() => F.nllLoss(x, labels([0, -1, 2, 1]))).toThrow('Target -1 is out of bounds');
  });
  it('bad weight, labelSmoothing and reduction', () => {
    expect(() => F.crossEntropy(x, labels([0, 1, 2, 1]), { weight: zeros([4]) })).toThrow(
      'weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [4]',
    );
    expect(() => F.crossEntropy(x, labels([0, 1, 2, 1]), { labelSmoothing: 1.5 })).toThrow('labelSmoothing must be between 0.0 and 1.0. Got: 1.5');
    expect(() => F.crossEntropy(x, labels([0, 1, 2, 1]), { reduction: 'avg' as 'mean' })).toThrow('"avg" is not a valid value for reduction');
  });
});

describe('F.nllLoss', () => {
  it('weighted mean over kept targets', async () => {
    const logp = F.logSoftmax(uniform([4, 3], 5), 1);
    const w = [1, 0.5, 2];
    const y = [1, 0, -100, 2];
    const lp = rows(logp);
    const num = -(w[1]! * lp[0]![1]! + w[0]! * lp[1]![0]! + w[2]! * lp[3]![2]!);
    const got = await F.nllLoss(logp, labels(y), { weight: tensor(w, { dtype: float64 }) }).item();
    expect(got).toBeCloseTo(num / (w[1]! + w[0]! + w[2]!), 12);
  });
});

describe('F.mseLoss', () => {
  it('mean, sum and none', async () => {
    const a = tensor([1, 2, 3], { dtype: float64 });
    const b = tensor([2, 0, 3], { dtype: float64 });
    expect(await F.mseLoss(a, b).item()).toBeCloseTo(5 / 3, 12);
    expect(await F.mseLoss(a, b, { reduction: 'sum' }).item()).toBe(5);
    expect(await F.mseLoss(a, b, { reduction: 'none' }).toArray()).toEqual([1, 4, 0]);
    expect(await new nn.MSELoss().forward(a, b).item()).toBeCloseTo(5 / 3, 12);
  });
  it('refuses to broadcast mismatched shapes ([N, 1] vs [N])', () => {
    expect(() => F.mseLoss(zeros([4, 1]), zeros([4]))).toThrow('Target size ([4]) must be the same as input size ([4, 1])');
  });
});

describe('F.binaryCrossEntropyWithLogits', () => {
  const ref = (x: number, t: number, pw = 1, w = 1) => {
    const s = 1 / (1 + Math.exp(-x));
    return -w * (pw * t * Math.log(s) + (1 - t) * Math.log(1 - s));
  };
  it('matches −[pw·t·log σ(x) + (1 − t)·log(1 − σ(x))]·w', () => {
    const x = [-2, -0.5, 0, 0.7, 3];
    const t = [0, 1, 0.3, 1, 0.5];
    const pw = [1, 2, 0.5, 3, 1];
    const w = [1, 0.5, 2, 1, 1];
    const got = F.binaryCrossEntropyWithLogits(tensor(x, { dtype: float64 }), tensor(t, { dtype: float64 }), {
      posWeight: tensor(pw, { dtype: float64 }), weight: tensor(w, { dtype: float64 }), reduction: 'none',
    });
    expectClose(got, x.map((v, i) => ref(v, t[i]!, pw[i], w[i])), 1e-12);
    const mean = F.binaryCrossEntropyWithLogits(tensor(x, { dtype: float64 }), tensor(t, { dtype: float64 }));
    expectClose(mean, [x.reduce((s, v, i) => s + ref(v, t[i]!), 0) / x.length], 1e-12);
  });
  it('is finite for huge logits in float32, and its gradient at 0 is σ(0) − t', async () => {
    const x = tensor([-1000, 1000, 0]).requiresGrad_();
    const t = tensor([1, 0, 0.25]);
    const loss = F.binaryCrossEntropyWithLogits(x, t, { reduction: 'sum' });
    expect(await loss.item()).toBeCloseTo(2000 + Math.log(2), 3);
    loss.backward();
    expect(values(x.grad!)).toEqual([-1, 1, 0.25]);
  });
  it('nn.BCEWithLogitsLoss keeps weight and posWeight as buffers', () => {
    const m = new nn.BCEWithLogitsLoss({ posWeight: tensor([2]) });
    expect(m.namedBuffers().map(([n]) => n)).toEqual(['posWeight']);
  });
});
