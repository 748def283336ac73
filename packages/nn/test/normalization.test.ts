// RMS, group and instance normalisation, F.normalize and F.cosineSimilarity: values and gradients
// against PyTorch 1.13 (float64) or, for rmsNorm (PyTorch 2.4), its definition in float64; the
// modules' parameters, buffers, running statistics and printing; the errors.
import { describe, expect, it } from 'vitest';
import { bfloat16, float16, float32, float64, int32, ShapeError, tensor, ValueError, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, torchInput, torchRef, uniform, values } from './helpers.js';

/** The reference [2, 6, 3] input and upstream gradient of the group/instance norm entries. */
const X = () => tensor(torchRef('X') as unknown as number[][][], { dtype: float64 });
const G = () => tensor(torchRef('G') as unknown as number[][][], { dtype: float64 });

describe('F.rmsNorm: x / √(mean(x²) + eps) · weight (PyTorch 2.4), against the formula in float64', () => {
  /** Row-wise RMS norm of [rows, n] values, each row scaled by weight. */
  function reference(x: number[][], weight: number[] | null, eps: number): number[] {
    return x.flatMap((row) => {
      const rms = Math.sqrt(row.reduce((s, v) => s + v * v, 0) / row.length + eps);
      return row.map((v, i) => (v / rms) * (weight ? weight[i]! : 1));
    });
  }

  it('over the last dim, with weight and the default eps (the float64 machine epsilon)', () => {
    const x = uniform([3, 4], 1, -2, 2);
    const w = [0.5, -1, 2, 1.5];
    const rows = [0, 1, 2].map((r) => values(x.select(0, r)));
    expectClose(F.rmsNorm(x, [4], tensor(w, { dtype: float64 })), reference(rows, w, 2 ** -52), 1e-14);
    expectClose(F.rmsNorm(x, 4, { eps: 0.5 }), reference(rows, null, 0.5), 1e-14);
  });

  it('over the last two dims; gradients by gradcheck live in gradcheck.test.ts', () => {
    const x = uniform([2, 2, 3], 2, -2, 2);
    const flat = [0, 1].map((b) => values(x.select(0, b)));
    expectClose(F.rmsNorm(x, [2, 3], null, 1e-6), reference(flat, null, 1e-6), 1e-14);
  });

  it('half inputs are computed in float32 with float32\'s epsilon and rounded once', () => {
    const x = uniform([2, 8], 3, -300, 300, float16);
    const y = F.rmsNorm(x, [8]);
    expect(y.dtype).toBe(float16);
    expectClose(y.float(), values(F.rmsNorm(x.float(), [8])).map((v) => values(tensor([v]).half())[0]!), 0);
    expect(F.rmsNorm(uniform([2, 4], 4, -1, 1, bfloat16), 4, tensor([1, 1, 1, 1])).dtype).toBe(float32);
  });

  it('nn.RMSNorm: weight of ones, stateDict key, repr, positional and keyword forms', () => {
    const layer = new nn.RMSNorm([2, 3], 1e-6);
    expect(layer.namedParameters().map(([n, p]) => [n, p.shape])).toEqual([['weight', [2, 3]]]);
    expect(values(layer.weight!)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(layer.toString()).toBe('RMSNorm([2, 3], eps=0.000001, elementwiseAffine=true)');
    expect(new nn.RMSNorm(4, { elementwiseAffine: false }).parameters()).toEqual([]);
    expect(new nn.RMSNorm(4).toString()).toBe('RMSNorm([4], eps=null, elementwiseAffine=true)');
    const x = uniform([3, 2, 3], 5, -2, 2);
    expectClose(layer.double().forward(x), F.rmsNorm(x, [2, 3], null, 1e-6), 0);
  });

  it('errors name the shapes', () => {
    expect(() => F.rmsNorm(uniform([3, 4], 1), [5])).toThrow(ShapeError);
    expect(() => F.rmsNorm(uniform([3, 4], 1), [5])).toThrow('Given normalized_shape=[5], expected input with shape [*, 5], but got input of size [3, 4]');
    expect(() => F.rmsNorm(uniform([3, 4], 1), [4], tensor([1, 2]))).toThrow('expected weight of shape [4] (normalized_shape), got [2]');
  });
});

describe('F.groupNorm against PyTorch 1.13 (float64)', () => {
  it('3 groups of 2 channels, with weight and bias: values and gradients of input, weight, bias', () => {
    const ref = torchRef('gn');
    const x = X().requiresGrad_();
    const w = torchInput('W', true);
    const b = torchInput('Bn', true);
    const y = F.groupNorm(x, 3, w, b, 1e-5);
    y.backward(G());
    expectClose(y, ref.y!, 1e-12);
    expectClose(x.grad!, ref.gx!, 1e-11);
    expectClose(w.grad!, ref.gw!, 1e-12);
    expectClose(b.grad!, ref.gb!, 1e-12);
  });

  it('2 groups without affine; nn.GroupNorm', () => {
    const ref = torchRef('gn2-noaffine');
    const x = X().requiresGrad_();
    const y = F.groupNorm(x, 2);
    y.backward(G());
    expectClose(y, ref.y!, 1e-12);
    expectClose(x.grad!, ref.gx!, 1e-11);
    const layer = new nn.GroupNorm(2, 6, { affine: false, dtype: float64 });
    expect(layer.parameters()).toEqual([]);
    expectClose(layer.forward(X()), ref.y!, 1e-12);
    const affine = new nn.GroupNorm(3, 6, 1e-5);
    expect(Object.keys(affine.stateDict())).toEqual(['weight', 'bias']);
    expect(affine.toString()).toBe('GroupNorm(3, 6, eps=0.00001, affine=true)');
  });

  it('errors as PyTorch', () => {
    expect(() => F.groupNorm(X(), 4)).toThrow('Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 6, 3] and num_groups=4');
    expect(() => F.groupNorm(tensor([1, 2]), 1)).toThrow('Expected at least 2 dimensions for input tensor but received 1');
    expect(() => F.groupNorm(tensor([[1, 2]]), 2)).toThrow(ValueError);
    expect(() => F.groupNorm(tensor([[1, 2]]), 2)).toThrow('Expected more than 1 value per channel when training, got input size [1, 2]');
    expect(() => F.groupNorm(X(), 3, tensor([1, 1, 1, 1], { dtype: float64 }))).toThrow('weight should contain 6 elements');
    expect(() => new nn.GroupNorm(4, 6)).toThrow('num_channels must be divisible by num_groups');
  });
});

describe('F.instanceNorm and nn.InstanceNorm1d/2d against PyTorch 1.13 (float64)', () => {
  it('input statistics with affine, updating running stats (momentum 0.2)', () => {
    const ref = torchRef('in');
    const x = X().requiresGrad_();
    const w = torchInput('W', true);
    const b = torchInput('Bn', true);
    const rm = tensor([0.1, 0.2, 0, -0.1, 0.3, 0], { dtype: float64 });
    const rv = tensor([1, 2, 0.5, 1, 1.5, 1], { dtype: float64 });
    const y = F.instanceNorm(x, rm, rv, w, b, true, 0.2, 1e-5);
    y.backward(G());
    expectClose(y, ref.y!, 1e-12);
    expectClose(x.grad!, ref.gx!, 1e-11);
    expectClose(w.grad!, ref.gw!, 1e-12);
    expectClose(b.grad!, ref.gb!, 1e-12);
    expectClose(rm, ref.rm!, 1e-14);
    expectClose(rv, ref.rv!, 1e-14);
  });

  it('running statistics (useInputStats false), by keyword', () => {
    const ref = torchRef('in-eval');
    const x = X().requiresGrad_();
    const y = F.instanceNorm(x, {
      runningMean: tensor([0.1, 0.2, 0, -0.1, 0.3, 0], { dtype: float64 }), runningVar: tensor([1, 2, 0.5, 1, 1.5, 1], { dtype: float64 }),
      useInputStats: false, momentum: 0.2,
    });
    y.backward(G());
    expectClose(y, ref.y!, 1e-12);
    expectClose(x.grad!, ref.gx!, 1e-12);
  });

  it('nn.InstanceNorm2d with affine and trackRunningStats: training then eval, buffers as PyTorch (numBatchesTracked stays 0)', async () => {
    const layer = new nn.InstanceNorm2d(6, { affine: true, trackRunningStats: true, dtype: float64 });
    expect(Object.keys(layer.stateDict())).toEqual(['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
    const x4 = X().reshape([2, 6, 3, 1]).expand([2, 6, 3, 2]);
    const train = torchRef('in2d-train');
    expectClose(layer.forward(x4), train.y!, 1e-12);
    expectClose(layer.runningMean!, train.rm!, 1e-14);
    expectClose(layer.runningVar!, train.rv!, 1e-14);
    expect(await layer.numBatchesTracked!.item()).toBe(0);
    layer.eval();
    expectClose(layer.forward(x4.mul(2)), torchRef('in2d-eval').y!, 1e-12);
  });

  it('defaults: no affine and no running stats, so eval mode still uses the input statistics; unbatched input', () => {
    const layer = new nn.InstanceNorm1d(6).double().eval();
    expect(layer.parameters()).toEqual([]);
    expect(layer.buffers()).toEqual([]);
    expect(layer.toString()).toBe('InstanceNorm1d(6, eps=0.00001, momentum=0.1, affine=false, trackRunningStats=false)');
    const x = X();
    const batched = layer.forward(x);
    expectClose(batched, F.instanceNorm(x), 0);
    expectClose(layer.forward(x.select(0, 1)), batched.select(0, 1), 0);
    expect(new nn.InstanceNorm2d(3, 1e-3, 0.2, true).affine).toBe(true);
  });

  it('errors: one spatial element, ranks, channel count with affine', () => {
    expect(() => F.instanceNorm(tensor([[[1], [2]]], { dtype: float64 }))).toThrow('Expected more than 1 spatial element when training, got input size [1, 2, 1]');
    expect(() => new nn.InstanceNorm2d(6).forward(X())).not.toThrow();
    expect(() => new nn.InstanceNorm2d(6).forward(X().reshape([36]))).toThrow('InstanceNorm2d: expected 3D or 4D input (got 1D input of shape [36])');
    expect(() => new nn.InstanceNorm1d(4, { affine: true }).forward(X())).toThrow("InstanceNorm1d: expected input's size at dim=1 to match num_features (4), but got: 6.");
    expect(() => new nn.InstanceNorm1d(4, { momentum: null })).toThrow('momentum must be a number');
  });
});

describe('F.normalize against PyTorch 1.13 (float64)', () => {
  const cases: Array<[string, number, number]> = [['normalize-2-1', 2, 1], ['normalize-1-0', 1, 0], ['normalize-inf-1', Infinity, 1], ['normalize-3-1', 3, 1], ['normalize-0.5-1', 0.5, 1]];
  for (const [key, p, dim] of cases) {
    it(`p = ${p}, dim = ${dim}: values and the gradient of Σ B·y`, () => {
      const ref = torchRef(key);
      const x = torchInput('A', true);
      const y = F.normalize(x, p, dim);
      y.backward(torchInput('B'));
      expectClose(y, ref.y!, 1e-12);
      expectClose(x.grad!, ref.g!, 1e-10);
    });
  }

  it('a zero vector stays zero; its gradient is 1/eps (the clamped norm), as PyTorch\'s', () => {
    const ref = torchRef('normalize-zero');
    const x = tensor([[0, 0, 0], [3, 4, 0]], { dtype: float64 }).requiresGrad_();
    const y = F.normalize(x, { dim: 1 });
    y.sum().backward();
    expectClose(y, ref.y!, 1e-15);
    expectClose(x.grad!, ref.g!, 1e-12);
  });
});

describe('F.cosineSimilarity against PyTorch 1.13 (float64)', () => {
  function check(key: string, a: Tensor, b: Tensor, fn: (a: Tensor, b: Tensor) => Tensor): void {
    const ref = torchRef(key);
    const y = fn(a, b);
    y.sum().backward();
    expectClose(y, ref.y!, 1e-12);
    expectClose(a.grad!, ref.g1!, 1e-10);
    expectClose(b.grad!, ref.g2!, 1e-10);
  }

  it('rows of [3, 4] inputs (dim 1)', () => check('cos', torchInput('A', true), torchInput('B', true), (a, b) => F.cosineSimilarity(a, b)));

  it('broadcast [2, 1, 4] against [3, 4] along the last dim', () => {
    const a = torchInput('A').narrow(0, 0, 2).reshape([2, 1, 4]).detach().requiresGrad_();
    check('cos-bcast', a, torchInput('B', true), (x, y) => {
      const out = F.cosineSimilarity(x, y, { dim: -1 });
      expect(out.shape).toEqual(torchRef('cos-bcast').shape);
      return out;
    });
  });

  it('norms below eps: clamped, and the gradient reads the clamped norm, as PyTorch\'s', () => {
    const a = tensor([[1e-10, 0], [0, 0], [1, 2]], { dtype: float64 }).requiresGrad_();
    const b = tensor([[1, 1], [1, 0], [3, -1]], { dtype: float64 }).requiresGrad_();
    check('cos-eps', a, b, (x, y) => F.cosineSimilarity(x, y, 1, 1e-8));
  });

  it('errors: integer inputs, dims out of range, shapes that do not broadcast', () => {
    expect(() => F.cosineSimilarity(tensor([1, 2], { dtype: int32 }), tensor([1, 2], { dtype: int32 }), 0)).toThrow('expected common dtype to be floating point, yet common dtype is int32');
    expect(() => F.cosineSimilarity(tensor([1, 2]), tensor([1, 2]))).toThrow('Dimension out of range (expected to be in range of [-1, 0], but got 1)');
    expect(() => F.cosineSimilarity(torchInput('A'), torchInput('A').narrow(1, 0, 3))).toThrow('The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1');
  });
});

describe('LayerNorm and BatchNorm take PyTorch\'s positional arguments too', () => {
  it('new nn.LayerNorm(4, 1e-3, false) and new nn.BatchNorm1d(3, 1e-3, 0.5, false)', () => {
    const ln = new nn.LayerNorm(4, 1e-3, false);
    expect([ln.eps, ln.elementwiseAffine, ln.weight]).toEqual([1e-3, false, null]);
    const bn = new nn.BatchNorm1d(3, 1e-3, 0.5, false);
    expect([bn.eps, bn.momentum, bn.affine, bn.trackRunningStats]).toEqual([1e-3, 0.5, false, true]);
    expect(() => new nn.BatchNorm2d(3, 1e-3, { eps: 1e-4 })).toThrow("BatchNorm2d() got multiple values for argument 'eps'");
    expect(() => new nn.LayerNorm(4, { epsilon: 1 } as never)).toThrow("LayerNorm() got an unexpected keyword argument 'epsilon'");
  });
});
