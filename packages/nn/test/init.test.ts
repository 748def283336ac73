// nn.init: gains, fans, ranges and moments of each initialiser, in place under noGrad, seeded.
import { describe, expect, it } from 'vitest';
import { bfloat16, empty, float64, Generator, zeros, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { values } from './helpers.js';

const { init } = nn;

function stats(t: Tensor) {
  const v = values(t);
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
  return { min: Math.min(...v), max: Math.max(...v), mean, std };
}

describe('calculateGain and fans', () => {
  it('PyTorch\'s gains', () => {
    expect(init.calculateGain('linear')).toBe(1);
    expect(init.calculateGain('conv2d')).toBe(1);
    expect(init.calculateGain('sigmoid')).toBe(1);
    expect(init.calculateGain('tanh')).toBeCloseTo(5 / 3, 15);
    expect(init.calculateGain('relu')).toBeCloseTo(Math.SQRT2, 15);
    expect(init.calculateGain('leakyRelu')).toBeCloseTo(Math.sqrt(2 / (1 + 0.01 ** 2)), 15);
    expect(init.calculateGain('leaky_relu', Math.sqrt(5))).toBeCloseTo(Math.sqrt(1 / 3), 15);
    expect(init.calculateGain('selu')).toBe(0.75);
    expect(() => init.calculateGain('softmax' as 'relu')).toThrow('Unsupported nonlinearity softmax');
  });

  it('fan in/out of linear and conv weights; 1-D tensors have none', () => {
    expect(init.calculateFanInAndFanOut(zeros([64, 256]))).toEqual({ fanIn: 256, fanOut: 64 });
    expect(init.calculateFanInAndFanOut(zeros([16, 8, 3, 3]))).toEqual({ fanIn: 72, fanOut: 144 });
    expect(() => init.kaimingUniform_(zeros([5]))).toThrow('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions');
  });
});

describe('initialisers', () => {
  const big = () => empty([200, 300], { dtype: float64 });

  it('uniform_ and normal_', () => {
    const u = stats(init.uniform_(big(), -2, 3));
    expect(u.min).toBeGreaterThanOrEqual(-2);
    expect(u.max).toBeLessThan(3);
    expect(u.mean).toBeCloseTo(0.5, 1);
    const n = stats(init.normal_(big(), 1, 0.5));
    expect(n.mean).toBeCloseTo(1, 2);
    expect(n.std).toBeCloseTo(0.5, 2);
    expect(() => init.uniform_(big(), 2, 1)).toThrow('from=2 > to=1');
  });

  it('constant_, zeros_, ones_', () => {
    expect(values(init.constant_(zeros([3]), 2.5))).toEqual([2.5, 2.5, 2.5]);
    expect(values(init.ones_(zeros([2])))).toEqual([1, 1]);
    expect(values(init.zeros_(init.ones_(zeros([2]))))).toEqual([0, 0]);
  });

  it('xavier: bound gain·√(6/(fan_in + fan_out)), std gain·√(2/(fan_in + fan_out))', () => {
    const bound = 2 * Math.sqrt(6 / 500);
    const u = stats(init.xavierUniform_(big(), 2));
    expect(u.max).toBeLessThanOrEqual(bound);
    expect(u.min).toBeGreaterThanOrEqual(-bound);
    expect(u.max).toBeGreaterThan(0.99 * bound);
    expect(stats(init.xavierNormal_(big())).std).toBeCloseTo(Math.sqrt(2 / 500), 3);
  });

  it('kaiming: bound gain·√(3/fan), std gain/√fan, by mode and nonlinearity', () => {
    const relu = stats(init.kaimingUniform_(big(), 0, 'fanIn', 'relu'));
    const bound = Math.SQRT2 * Math.sqrt(3 / 300);
    expect(relu.max).toBeLessThanOrEqual(bound);
    expect(relu.max).toBeGreaterThan(0.99 * bound);
    const fanOut = stats(init.kaimingUniform_(big(), { mode: 'fanOut', nonlinearity: 'relu' }));
    expect(fanOut.max).toBeGreaterThan(Math.SQRT2 * Math.sqrt(3 / 300)); // bound √(6/200) is larger
    expect(fanOut.max).toBeLessThanOrEqual(Math.SQRT2 * Math.sqrt(3 / 200));
    expect(stats(init.kaimingNormal_(big(), 0, 'fan_out', 'relu')).std).toBeCloseTo(Math.SQRT2 / Math.sqrt(200), 3);
    // a = √5 (PyTorch's default layer init) gives bound 1/√fan_in
    const layer = stats(init.kaimingUniform_(big(), Math.sqrt(5)));
    expect(layer.max).toBeLessThanOrEqual(1 / Math.sqrt(300));
    expect(layer.max).toBeGreaterThan(0.99 / Math.sqrt(300));
    expect(() => init.kaimingUniform_(big(), 0, 'fan' as 'fanIn')).toThrow('Mode fan not supported, please use one of fanIn, fanOut');
  });

  it('write in place under noGrad, into parameters that require grad, in their dtype', () => {
    const p = nn.Parameter(zeros([4, 4], { dtype: bfloat16 }));
    const same = init.kaimingUniform_(p, Math.sqrt(5));
    expect(same).toBe(p);
    expect(p.dtype).toBe(bfloat16);
    expect(p.isLeaf).toBe(true);
    expect(p.requiresGrad).toBe(true);
    expect(values(p).some((v) => v !== 0)).toBe(true);
  });

  it('a generator makes them reproducible and independent of the global stream', () => {
    const a = values(init.normal_(zeros([10]), 0, 1, { generator: new Generator(5) }));
    const b = values(init.normal_(zeros([10]), 0, 1, { generator: new Generator(5) }));
    expect(a).toEqual(b);
    const c = values(init.kaimingUniform_(zeros([3, 3]), { generator: new Generator(9) }));
    const d = values(init.kaimingUniform_(zeros([3, 3]), 0, 'fanIn', 'leakyRelu', { generator: new Generator(9) }));
    expect(c).toEqual(d);
  });
});
