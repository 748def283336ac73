// The activations added beside relu/gelu: values and gradients against PyTorch 1.13 (float64, at
// and around every kink: the gradient at a kink must be the one PyTorch's backward gives), their
// errors, and their modules.
import { describe, expect, it } from 'vitest';
import { DTypeError, float64, int32, ShapeError, tensor, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, torchInput, torchRef, values } from './helpers.js';

/** y = fn(x) and ∂Σy/∂x for the reference input X1 (kinks at −3, 0, 3 and softplus's threshold). */
function valueAndGrad(fn: (x: Tensor) => Tensor): { y: Tensor; g: Tensor } {
  const x = torchInput('X1', true);
  const y = fn(x);
  y.sum().backward();
  return { y, g: x.grad! };
}

describe('activations against PyTorch 1.13 (float64, 1e-12)', () => {
  const cases: Array<[string, (x: Tensor) => Tensor, number?]> = [
    ['elu', (x) => F.elu(x)],
    ['elu0.5', (x) => F.elu(x, 0.5)],
    ['selu', (x) => F.selu(x)],
    ['softplus', (x) => F.softplus(x)],
    ['softplus2,5', (x) => F.softplus(x, 2, 5)],
    ['mish', (x) => F.mish(x)],
    ['hardswish', (x) => F.hardswish(x)],
    // PyTorch's hardsigmoid backward multiplies by float32(1/6) even in float64 (rel. error 3e-8).
    ['hardsigmoid', (x) => F.hardsigmoid(x), 1e-7],
    ['softsign', (x) => F.softsign(x)],
    ['glu0', (x) => F.glu(x, 0)],
  ];
  for (const [key, fn, tol = 1e-12] of cases) {
    it(`${key}: values and gradients, kinks included`, () => {
      const ref = torchRef(key);
      const { y, g } = valueAndGrad(fn);
      expectClose(y, ref.y!, 1e-12);
      // At exactly x = 3 PyTorch's vectorised CPU hardswish backward gives 1, while its scalar and
      // CUDA kernels give (2·3 + 3)/6 = 1.5; this library follows the latter (checked below).
      const expectedGrad = key === 'hardswish' ? ref.g!.map((v, i) => (i === 7 ? 1.5 : v)) : ref.g!;
      expectClose(g, expectedGrad, tol);
    });
  }

  it("hardswish's gradient at its kinks is PyTorch's scalar rule: (2x + 3)/6 on [−3, 3], bounds included", () => {
    const x = tensor([-3, 3, -3.5, 3.5], { dtype: float64 }).requiresGrad_();
    F.hardswish(x).sum().backward();
    expect(values(x.grad!)).toEqual([-0.5, 1.5, 0, 1]);
  });

  it('prelu with one slope per channel and with one shared slope: values, input and weight gradients', () => {
    for (const [key, slopes] of [['prelu3', [0.25, -0.5, 2]], ['prelu1', [0.25]]] as const) {
      const ref = torchRef(key);
      const x = torchInput('X3', true);
      const w = tensor([...slopes], { dtype: float64 }).requiresGrad_();
      const y = F.prelu(x, w);
      y.sum().backward();
      expectClose(y, ref.y!, 1e-12);
      expectClose(x.grad!, ref.g!, 1e-12);
      expectClose(w.grad!, ref.gw!, 1e-12);
    }
  });

  it('softplus is x itself above the threshold, finite for large |x|, and σ(βx) is its gradient', async () => {
    const x = tensor([-800, -30, 30, 800], { dtype: float64 }).requiresGrad_();
    const y = F.softplus(x, { threshold: 50 });
    y.sum().backward();
    expect(await y.toArray()).toEqual([Math.log1p(Math.exp(-800)), Math.log1p(Math.exp(-30)), 30 + Math.log1p(Math.exp(-30)), 800]);
    expectClose(x.grad!, [0, 1 / (1 + Math.exp(30)), 1 / (1 + Math.exp(-30)), 1], 1e-15);
  });

  it('positional and keyword forms give the same result', () => {
    const x = torchInput('X1');
    expect(values(F.elu(x, { alpha: 0.5 }))).toEqual(values(F.elu(x, 0.5)));
    expect(values(F.softplus(x, { threshold: 5, beta: 2 }))).toEqual(values(F.softplus(x, 2, 5)));
    expect(values(F.glu(x, { dim: 0 }))).toEqual(values(F.glu(x, 0)));
    expect(values(F.gelu(x, 'tanh'))).toEqual(values(F.gelu(x, { approximate: 'tanh' })));
  });
});

describe('activation errors', () => {
  it('glu: the halved dim must be even; no scalars; dims in range', () => {
    expect(() => F.glu(torchInput('X1'))).toThrow(ShapeError);
    expect(() => F.glu(torchInput('X1'))).toThrow('Halving dimension must be even, but dimension 1 is size 5');
    expect(() => F.glu(tensor(1))).toThrow('glu does not support scalars because halving size must be even');
    expect(() => F.glu(torchInput('X1'), 2)).toThrow('Dimension out of range (expected to be in range of [-2, 1], but got 2)');
  });

  it('prelu: 1 or C slopes, at most 1-D', () => {
    const x = torchInput('X3');
    expect(() => F.prelu(x, tensor([1, 2], { dtype: float64 }))).toThrow(ShapeError);
    expect(() => F.prelu(x, tensor([1, 2], { dtype: float64 }))).toThrow('Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and channel size = 3.');
    expect(() => F.prelu(x, tensor([[1], [2], [3]], { dtype: float64 }))).toThrow('Expected `weight` to be a scalar or 1D tensor, but got ndim = 2');
  });

  it('integer inputs are refused with a DTypeError naming the fix', () => {
    const ints = tensor([1, -2], { dtype: int32 });
    for (const fn of [F.elu, F.selu, F.softplus, F.mish, F.hardswish, F.hardsigmoid, F.glu] as Array<(x: Tensor) => Tensor>) {
      expect(() => fn(ints)).toThrow(DTypeError);
      expect(() => fn(ints)).toThrow('convert with input.float()');
    }
  });

  it('a keyword the function lacks, or a value given both ways, is a TypeError naming it', () => {
    const x = torchInput('X1');
    expect(() => F.elu(x, { alpa: 1 } as never)).toThrow(TypeError);
    expect(() => F.elu(x, { alpa: 1 } as never)).toThrow("elu() got an unexpected keyword argument 'alpa' (it takes alpha)");
    expect(() => F.softplus(x, 2, { beta: 3 })).toThrow("softplus() got multiple values for argument 'beta'");
    expect(() => F.softplus(x, 2, 3, 4 as never)).toThrow('softplus() takes at most 2 positional arguments (beta, threshold) but 3 were given');
  });
});

describe('activation modules', () => {
  it('forward is the functional form, with the constructor arguments', () => {
    const x = torchInput('X1');
    expect(values(new nn.ELU(0.5).forward(x))).toEqual(values(F.elu(x, 0.5)));
    expect(values(new nn.ELU({ alpha: 0.5 }).forward(x))).toEqual(values(F.elu(x, 0.5)));
    expect(values(new nn.SELU().forward(x))).toEqual(values(F.selu(x)));
    expect(values(new nn.Softplus(2, 5).forward(x))).toEqual(values(F.softplus(x, 2, 5)));
    expect(values(new nn.Mish().forward(x))).toEqual(values(F.mish(x)));
    expect(values(new nn.Hardswish().forward(x))).toEqual(values(F.hardswish(x)));
    expect(values(new nn.Hardsigmoid().forward(x))).toEqual(values(F.hardsigmoid(x)));
    expect(values(new nn.GLU(0).forward(x))).toEqual(values(F.glu(x, 0)));
    expect(values(new nn.Softsign().forward(x))).toEqual(values(F.softsign(x)));
    expect(values(new nn.GELU('tanh').forward(x))).toEqual(values(F.gelu(x, 'tanh')));
  });

  it('print their arguments as PyTorch does', () => {
    expect(new nn.ELU(0.5).toString()).toBe('ELU(alpha=0.5)');
    expect(new nn.Softplus({ beta: 2 }).toString()).toBe('Softplus(beta=2, threshold=20)');
    expect(new nn.GLU().toString()).toBe('GLU(dim=-1)');
    expect(new nn.PReLU(3).toString()).toBe('PReLU(numParameters=3)');
    expect(new nn.SELU().toString()).toBe('SELU()');
  });

  it('PReLU: numParameters slopes at init (a trained parameter named weight), per channel of dim 1', () => {
    const layer = new nn.PReLU(3, 0.1, { dtype: float64 });
    expect(layer.namedParameters().map(([n, p]) => [n, p.shape])).toEqual([['weight', [3]]]);
    expect(Object.keys(layer.stateDict())).toEqual(['weight']);
    expect(values(layer.weight)).toEqual([0.1, 0.1, 0.1]);
    expect(layer.weight.requiresGrad).toBe(true);
    expect(values(new nn.PReLU().weight)).toEqual([0.25]);
    const x = torchInput('X3', true);
    const ref = torchRef('prelu3');
    const trained = new nn.PReLU({ numParameters: 3, dtype: float64 });
    trained.weight.detach().copy_(tensor([0.25, -0.5, 2], { dtype: float64 }));
    const y = trained.forward(x);
    y.sum().backward();
    expectClose(y, ref.y!, 1e-12);
    expectClose(trained.weight.grad!, ref.gw!, 1e-12);
    expect(() => new nn.PReLU(0)).toThrow('PReLU: numParameters must be a positive integer, got 0');
  });
});
