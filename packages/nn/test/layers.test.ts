// Layers: default inits, forward values against hand computations, training/eval behaviour,
// running statistics, and errors.
import { describe, expect, it } from 'vitest';
import { float32, float64, Generator, int32, manualSeed, ones, tensor, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, uniform, values } from './helpers.js';

const labels = (v: number[], shape = [v.length]) => tensor(v, { dtype: int32 }).reshape(shape);

function range(t: Tensor): { min: number; max: number; mean: number; std: number } {
  const v = values(t);
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
  return { min: Math.min(...v), max: Math.max(...v), mean, std };
}

describe('default initialisation (PyTorch: kaiming_uniform(a=√5) weights, U(±1/√fan_in) bias)', () => {
  it('Linear(256, 64): weight and bias in ±1/16, spread over the range', () => {
    manualSeed(1);
    const fc = new nn.Linear(256, 64);
    expect(fc.weight.shape).toEqual([64, 256]);
    expect(fc.weight.dtype).toBe(float32);
    expect(fc.weight.requiresGrad).toBe(true);
    const w = range(fc.weight);
    expect(w.max).toBeLessThanOrEqual(1 / 16);
    expect(w.min).toBeGreaterThanOrEqual(-1 / 16);
    expect(w.max).toBeGreaterThan(0.95 / 16);
    expect(w.std).toBeCloseTo(1 / 16 / Math.sqrt(3), 3); // uniform's std = bound/√3
    const b = range(fc.bias!);
    expect(b.max).toBeLessThanOrEqual(1 / 16);
    expect(b.min).toBeGreaterThanOrEqual(-1 / 16);
  });

  it('Conv2d(8, 16, 3): fan_in = 8·3·3 = 72', () => {
    const conv = new nn.Conv2d(8, 16, 3);
    const bound = 1 / Math.sqrt(72);
    const w = range(conv.weight);
    expect(w.max).toBeLessThanOrEqual(bound);
    expect(w.min).toBeGreaterThanOrEqual(-bound);
    expect(w.max).toBeGreaterThan(0.9 * bound);
    const b = range(conv.bias!);
    expect(Math.max(Math.abs(b.min), Math.abs(b.max))).toBeLessThanOrEqual(bound);
  });

  it('LayerNorm and BatchNorm start at weight 1, bias 0; Embedding ~ N(0, 1) with a zero padding row', () => {
    const ln = new nn.LayerNorm([3, 4]);
    expect(values(ln.weight!)).toEqual(new Array(12).fill(1));
    expect(values(ln.bias!)).toEqual(new Array(12).fill(0));
    const bn = new nn.BatchNorm1d(5);
    expect(values(bn.runningVar!)).toEqual([1, 1, 1, 1, 1]);
    expect(values(bn.runningMean!)).toEqual([0, 0, 0, 0, 0]);
    expect(bn.numBatchesTracked!.dtype).toBe(int32);
    const emb = new nn.Embedding(200, 50, { paddingIdx: -1 });
    expect(emb.paddingIdx).toBe(199);
    const e = range(emb.weight.narrow(0, 0, 199));
    expect(Math.abs(e.mean)).toBeLessThan(0.05);
    expect(e.std).toBeGreaterThan(0.95);
    expect(e.std).toBeLessThan(1.05);
    expect(values(emb.weight.select(0, 199))).toEqual(new Array(50).fill(0));
  });

  it('layers take { device, dtype } for their parameters', () => {
    const fc = new nn.Linear(3, 2, { dtype: float64, bias: false });
    expect(fc.weight.dtype).toBe(float64);
    expect(fc.bias).toBeNull();
    expect(fc.parameters()).toHaveLength(1);
  });

  it('the same seed gives the same parameters', () => {
    manualSeed(42);
    const a = new nn.Linear(5, 3);
    manualSeed(42);
    const b = new nn.Linear(5, 3);
    expect(values(a.weight)).toEqual(values(b.weight));
    expect(values(a.bias!)).toEqual(values(b.bias!));
  });
});

describe('forward values', () => {
  it('Linear: x·Wᵀ + b', () => {
    const fc = new nn.Linear(2, 2).double();
    nn.init.constant_(fc.bias!, 0.5);
    const w = values(fc.weight);
    const x = tensor([[1, 2]], { dtype: float64 });
    expectClose(fc.forward(x), [w[0]! + 2 * w[1]! + 0.5, w[2]! + 2 * w[3]! + 0.5], 1e-12);
  });

  it('GELU: x·Φ(x) exactly, and the tanh approximation', () => {
    const xs = [-3, -1, 0, 0.5, 2];
    const x = tensor(xs, { dtype: float64 });
    // Φ, the standard normal CDF, at those points (tabulated to 16 digits).
    const phi = [0.0013498980316301, 0.15865525393145707, 0.5, 0.6914624612740131, 0.9772498680518208];
    expectClose(new nn.GELU().forward(x), xs.map((v, i) => v * phi[i]!), 1e-12);
    const tanhVals = xs.map((v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3))));
    expectClose(new nn.GELU({ approximate: 'tanh' }).forward(x), tanhVals, 1e-12);
  });

  it('ReLU, Tanh, Sigmoid, LeakyReLU, SiLU, Softmax, LogSoftmax, Identity', () => {
    const x = tensor([[-2, 0.5, 1]], { dtype: float64 });
    const xs = [-2, 0.5, 1];
    expectClose(new nn.ReLU().forward(x), [0, 0.5, 1], 0);
    expectClose(new nn.Tanh().forward(x), xs.map(Math.tanh), 1e-12);
    expectClose(new nn.Sigmoid().forward(x), xs.map((v) => 1 / (1 + Math.exp(-v))), 1e-12);
    expectClose(new nn.LeakyReLU(0.2).forward(x), [-0.4, 0.5, 1], 1e-12);
    expectClose(new nn.SiLU().forward(x), xs.map((v) => v / (1 + Math.exp(-v))), 1e-12);
    const z = xs.reduce((s, v) => s + Math.exp(v), 0);
    expectClose(new nn.Softmax(1).forward(x), xs.map((v) => Math.exp(v) / z), 1e-12);
    expectClose(new nn.LogSoftmax(-1).forward(x), xs.map((v) => v - Math.log(z)), 1e-12);
    expect(new nn.Identity().forward(x)).toBe(x);
  });

  it('Flatten keeps the batch dim; F.flatten starts at 0', () => {
    expect(new nn.Flatten().forward(zeros([2, 3, 4, 5])).shape).toEqual([2, 60]);
    expect(new nn.Flatten(2).forward(zeros([2, 3, 4, 5])).shape).toEqual([2, 3, 20]);
    expect(F.flatten(zeros([2, 3, 4])).shape).toEqual([24]);
  });

  it('Sequential feeds each output to the next, names children 0, 1, … and may repeat a module', () => {
    const double = new nn.Linear(1, 1, { bias: false }).double();
    nn.init.constant_(double.weight, 2);
    const seq = new nn.Sequential(double, new nn.ReLU(), double);
    expect(seq.length).toBe(3);
    expect(seq.at(-1)).toBe(double);
    expect(values(seq.forward(tensor([[3]], { dtype: float64 })))).toEqual([12]);
    expect(seq.namedParameters().map(([n]) => n)).toEqual(['0.weight']); // shared: listed once
    expect(Object.keys(seq.stateDict())).toEqual(['0.weight', '2.weight']);
    expect(seq.toString()).toBe('Sequential(\n  (0): Linear(inFeatures=1, outFeatures=1, bias=false)\n  (1): ReLU()\n  (2): Linear(inFeatures=1, outFeatures=1, bias=false)\n)');
  });
});

describe('Dropout', () => {
  it('zeros about p of the elements and scales the rest by 1/(1 − p) in training', () => {
    const d = new nn.Dropout(0.25);
    const y = values(d.forward(ones([100, 100])));
    const zerosFraction = y.filter((v) => v === 0).length / y.length;
    expect(zerosFraction).toBeGreaterThan(0.23);
    expect(zerosFraction).toBeLessThan(0.27);
    expect(new Set(y.filter((v) => v !== 0))).toEqual(new Set([Math.fround(1 / 0.75)]));
  });

  it('is the identity in eval mode and for p = 0; p = 1 zeros everything', () => {
    const x = uniform([4, 4], 3);
    expect(new nn.Dropout(0.5).eval().forward(x)).toBe(x);
    expect(F.dropout(x, 0)).toBe(x);
    expect(values(F.dropout(x, 1)).every((v) => v === 0)).toBe(true);
  });

  it('follows the seeded generator: the same seed, the same mask', () => {
    manualSeed(7);
    const a = values(new nn.Dropout(0.5).forward(ones([64])));
    manualSeed(7);
    const b = values(new nn.Dropout(0.5).forward(ones([64])));
    expect(a).toEqual(b);
    const c = values(new nn.Dropout(0.5, { generator: new Generator(3) }).forward(ones([64])));
    const d = values(F.dropout(ones([64]), 0.5, true, { generator: new Generator(3) }));
    expect(c).toEqual(d);
  });

  it('rejects p outside [0, 1]', () => {
    expect(() => new nn.Dropout(1.5)).toThrow('dropout probability has to be between 0 and 1, but got 1.5');
  });
});

describe('LayerNorm', () => {
  it('normalises the last dims with the biased variance, then scales and shifts', () => {
    const ln = new nn.LayerNorm(4, { eps: 1e-5 }).double();
    nn.init.constant_(ln.weight!, 2);
    nn.init.constant_(ln.bias!, 1);
    const row = [1, 2, 3, 6];
    const mean = 3;
    const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / 4;
    const expected = row.map((v) => ((v - mean) / Math.sqrt(variance + 1e-5)) * 2 + 1);
    expectClose(ln.forward(tensor([row], { dtype: float64 })), expected, 1e-12);
  });

  it('errors name the expected trailing shape', () => {
    expect(() => new nn.LayerNorm(4).forward(zeros([2, 3]))).toThrow(
      'Given normalized_shape=[4], expected input with shape [*, 4], but got input of size [2, 3]',
    );
  });
});

describe('BatchNorm', () => {
  it('training: batch statistics (biased), running stats updated with the unbiased variance', () => {
    const bn = new nn.BatchNorm1d(2, { momentum: 0.1 }).double();
    const x = tensor([[1, 10], [2, 20], [6, 30]], { dtype: float64 });
    const y = bn.forward(x);
    const col = (c: number) => [0, 1, 2].map((i) => [[1, 10], [2, 20], [6, 30]][i]![c]!);
    const expected: number[][] = [[], [], []];
    const runningMean: number[] = [];
    const runningVar: number[] = [];
    for (const c of [0, 1]) {
      const v = col(c);
      const m = v.reduce((a, b) => a + b, 0) / 3;
      const biased = v.reduce((a, b) => a + (b - m) ** 2, 0) / 3;
      v.forEach((vi, i) => expected[i]!.push((vi - m) / Math.sqrt(biased + 1e-5)));
      runningMean.push(0.9 * 0 + 0.1 * m);
      runningVar.push(0.9 * 1 + 0.1 * biased * 3 / 2);
    }
    expectClose(y, expected.flat(), 1e-12);
    expectClose(bn.runningMean!, runningMean, 1e-12);
    expectClose(bn.runningVar!, runningVar, 1e-12);
    expect(values(bn.numBatchesTracked!)).toEqual([1]);
  });

  it('eval: the running statistics', () => {
    const bn = new nn.BatchNorm1d(2).double();
    bn.runningMean!.copy_(tensor([1, 2]));
    bn.runningVar!.copy_(tensor([4, 9]));
    bn.eval();
    const y = bn.forward(tensor([[3, 8]], { dtype: float64 }));
    expectClose(y, [2 / Math.sqrt(4 + 1e-5), 6 / Math.sqrt(9 + 1e-5)], 1e-12);
    expect(values(bn.numBatchesTracked!)).toEqual([0]);
  });

  it('momentum null: a cumulative average over batches', () => {
    const bn = new nn.BatchNorm1d(1, { momentum: null }).double();
    bn.forward(tensor([[1], [3]], { dtype: float64 })); // mean 2
    bn.forward(tensor([[5], [7]], { dtype: float64 })); // mean 6
    expectClose(bn.runningMean!, [4], 1e-12);
  });

  it('BatchNorm1d over [N, C, L] and BatchNorm2d over [N, C, H, W] normalise per channel', () => {
    const x3 = uniform([4, 3, 5], 8, -2, 5);
    const y3 = new nn.BatchNorm1d(3).double().forward(x3);
    const perChannel = y3.permute([1, 0, 2]).reshape([3, 20]);
    expectClose(perChannel.mean(1), [0, 0, 0], 1e-12);
    expectClose(perChannel.var(1, false, { correction: 0 }), [1, 1, 1], 1e-4);
    const y4 = new nn.BatchNorm2d(2).double().forward(uniform([3, 2, 2, 2], 9, 0, 4));
    expectClose(y4.permute([1, 0, 2, 3]).reshape([2, 12]).mean(1), [0, 0], 1e-12);
  });

  it('without running stats it uses batch statistics in eval too', () => {
    const bn = new nn.BatchNorm1d(2, { trackRunningStats: false }).double().eval();
    expect(bn.buffers()).toHaveLength(0);
    const y = bn.forward(tensor([[1, 2], [3, 6]], { dtype: float64 }));
    const [a, b] = [1 / Math.sqrt(1 + 1e-5), 2 / Math.sqrt(4 + 1e-5)];
    expectClose(y, [-a, -b, a, b], 1e-12);
  });

  it('errors: one value per channel in training, wrong rank, wrong channel count', () => {
    expect(() => new nn.BatchNorm1d(3).forward(zeros([1, 3]))).toThrow('Expected more than 1 value per channel when training, got input size [1, 3]');
    expect(() => new nn.BatchNorm1d(3).forward(zeros([2, 3, 4, 5]))).toThrow('BatchNorm1d: expected 2D or 3D input (got 4D input of shape [2, 3, 4, 5])');
    expect(() => new nn.BatchNorm2d(3).forward(zeros([2, 4, 2, 2]))).toThrow('runningMean should contain 4 elements');
  });
});

describe('Embedding', () => {
  it('looks up rows for int32 indices of any shape', () => {
    const emb = new nn.Embedding(4, 2).double();
    const w = values(emb.weight);
    const y = emb.forward(labels([3, 0, 3, 1], [2, 2]));
    expect(y.shape).toEqual([2, 2, 2]);
    expectClose(y, [w[6]!, w[7]!, w[0]!, w[1]!, w[6]!, w[7]!, w[2]!, w[3]!], 0);
  });

  it('the paddingIdx row gets no gradient, even when the loss reads it', () => {
    const emb = new nn.Embedding(3, 2, { paddingIdx: 1 });
    emb.forward(labels([1, 2, 1])).mul(tensor([[1, 1], [1, 1], [1, 1]])).sum().backward();
    expect(values(emb.weight.grad!)).toEqual([0, 0, 0, 0, 1, 1]);
  });

  it('errors: float indices, out-of-range indices, bad paddingIdx', () => {
    const emb = new nn.Embedding(10, 3);
    expect(() => emb.forward(tensor([1, 2]))).toThrow('embedding(): expected indices of dtype int32, got float32; convert with indices.int()');
    expect(() => emb.forward(labels([1, 10]))).toThrow('index 10 (at flat position 1) is out of range for an embedding with 10 rows (valid indices are 0..9)');
    expect(() => emb.forward(labels([-1]))).toThrow('index -1');
    expect(() => new nn.Embedding(10, 3, { paddingIdx: 10 })).toThrow('paddingIdx must be within num_embeddings (10), got 10');
  });
});
