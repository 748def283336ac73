// autograd.grad (PyTorch 1.13's torch.autograd.grad): gradients returned instead of accumulated,
// gradOutputs, several outputs and inputs, non-leaf inputs, allowUnused, retainGraph's default, the
// part of the graph that runs, PyTorch's errors, and the positional / keyword argument forms.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { autograd, float32, float64, noGrad, tensor, TensorError, type Tensor } from '@core/tensor';
import { expectClose, expectError } from '../helpers/assert.js';

const vals = (t: Tensor | null | undefined): number[] => {
  expect(t, 'a gradient').toBeTruthy();
  return Array.from(t!.dataSync());
};
const leaf = (data: number[] | number[][], dtype = float64): Tensor => tensor(data, { dtype }).requiresGrad_();

describe('autograd.grad: values', () => {
  it('returns d(Σ x²)/dx = 2x and leaves every .grad alone', () => {
    const x = leaf([1, -2, 3]);
    const [g] = autograd.grad(x.mul(x).sum(), x);
    expect(vals(g)).toEqual([2, -4, 6]);
    expect(x.grad).toBeNull();
    expect(g!.requiresGrad, 'without createGraph the result is a plain tensor').toBe(false);
  });

  it('leaves that are not inputs do not get a .grad either', () => {
    const x = leaf([1, 2]);
    const w = leaf([3, 4]);
    const [gx] = autograd.grad(x.mul(w).sum(), [x]);
    expect(vals(gx)).toEqual([3, 4]);
    expect(w.grad).toBeNull();
  });

  it('gradOutputs weighs a non-scalar output: vᵀJ', () => {
    const x = leaf([1, 2, 3]);
    const y = x.mul(x); // J = diag(2x)
    const [g] = autograd.grad(y, x, { gradOutputs: tensor([1, 10, 100], { dtype: float64 }) });
    expect(vals(g)).toEqual([2, 40, 600]);
  });

  it('several outputs sum their contributions; several inputs get one gradient each', () => {
    const x = leaf([1, 2]);
    const w = leaf([3, 5]);
    const a = x.mul(w).sum(); // ∂a/∂x = w, ∂a/∂w = x
    const b = x.mul(x).sum(); // ∂b/∂x = 2x
    const [gx, gw] = autograd.grad([a, b], [x, w]);
    expect(vals(gx)).toEqual([3 + 2, 5 + 4]);
    expect(vals(gw)).toEqual([1, 2]);
  });

  it('a null gradOutputs entry stands for 1 for a one-element output', () => {
    const x = leaf([1, 2]);
    const y1 = x.mul(3).sum();
    const y2 = x.mul(x);
    const [g] = autograd.grad([y1, y2], x, { gradOutputs: [null, tensor([1, 1], { dtype: float64 })] });
    expect(vals(g)).toEqual([3 + 2, 3 + 4]);
  });

  it('a non-leaf input gets the whole gradient that reached it', () => {
    const x = leaf([1, 2]);
    const h = x.mul(2); // non-leaf
    const y = h.mul(h).sum().add(h.sum()); // ∂y/∂h = 2h + 1
    const [gh, gx] = autograd.grad(y, [h, x]);
    expect(vals(gh)).toEqual([5, 9]);
    expect(vals(gx)).toEqual([10, 18]);
  });

  it('the same input listed twice gets its gradient twice', () => {
    const x = leaf([1, 2]);
    const [g1, g2] = autograd.grad(x.mul(x).sum(), [x, x]);
    expect(vals(g1)).toEqual([2, 4]);
    expect(vals(g2)).toEqual([2, 4]);
  });

  it('an output that is itself an input: the gradient is the seed', () => {
    const x = leaf([[1, 2]]);
    const [g] = autograd.grad(x, x, { gradOutputs: tensor([[7, 8]], { dtype: float64 }) });
    expect(vals(g)).toEqual([7, 8]);
  });

  it('gradients come back in the inputs\' dtypes (float32 leaf through a float64 computation, AC-14)', () => {
    const x = leaf([1, 2], float32);
    const [g] = autograd.grad(x.to(float64).mul(3).sum(), x);
    expect(g!.dtype).toBe(float32);
    expect(vals(g)).toEqual([3, 3]);
  });

  it('matches torch.autograd.grad on a small network', () => {
    // torch: x = tensor([[0.5, -1.0, 2.0]], f64, rg); W = tensor([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]], f64, rg)
    //        y = tanh(x @ W.T).pow(2).sum(); torch.autograd.grad(y, [x, W])
    const x = leaf([[0.5, -1.0, 2.0]]);
    const W = leaf([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]]);
    const y = x.matmul(W.t()).tanh().pow(2).sum();
    const [gx, gW] = autograd.grad(y, [x, W]);
    expectClose(vals(gx), [-0.010293437584632387, -0.2334317562595665, 0.32558860964816105], { atol: 1e-12 });
    expectClose(vals(gW), [-0.3789208511390107, 0.7578417022780214, -1.5156834045560428, 0.0818634158039622, -0.1637268316079244, 0.3274536632158488], { atol: 1e-12 });
  });
});

describe('autograd.grad: which part of the graph runs', () => {
  it('only the nodes on a path to an input run: a broken branch elsewhere is never reached', () => {
    const x = leaf([1, 2]);
    const other = leaf([3, 4]);
    const e = other.exp();
    const y = x.mul(2).sum().add(e.sum());
    noGrad(() => e.add_(1)); // exp saved e: backward through it would fail
    const [g] = autograd.grad(y, x, { retainGraph: true });
    expect(vals(g)).toEqual([2, 2]);
    // Tensor.backward runs the whole graph and meets the broken node.
    expectError(() => y.backward(), TensorError, 'modified by an inplace operation');
  });

  it('without retainGraph the nodes that ran are freed; the rest of the graph stays usable', () => {
    const x = leaf([1, 2]);
    const w = leaf([3, 4]);
    const xw = x.exp();
    const y = xw.sum().add(w.exp().sum());
    autograd.grad(y, x);
    expectError(() => autograd.grad(y, x), TensorError, 'Trying to backward through the graph a second time');
    // w's branch never ran, so it still holds its saved tensors.
    const w2 = w.exp().sum();
    expect(vals(autograd.grad(w2, w)[0])).toEqual([Math.exp(3), Math.exp(4)]);
  });

  it('retainGraph: true keeps the graph for another pass', () => {
    const x = leaf([1, 2]);
    const y = x.exp().sum();
    const [a] = autograd.grad(y, x, { retainGraph: true });
    const [b] = autograd.grad(y, x);
    expect(vals(a)).toEqual(vals(b));
  });
});

describe('autograd.grad: PyTorch\'s errors', () => {
  it('an input the outputs do not depend on: allowUnused', () => {
    const x = leaf([1, 2]);
    const unused = leaf([3]);
    expectError(() => autograd.grad(x.sum(), [x, unused]), TensorError,
      'One of the differentiated Tensors appears to not have been used in the graph. Set allowUnused: true');
    const [gx, gu] = autograd.grad(x.sum(), [x, unused], { allowUnused: true });
    expect(vals(gx)).toEqual([1, 1]);
    expect(gu).toBeNull();
  });

  it('an output that does not require grad', () => {
    const x = leaf([1, 2]);
    expectError(() => autograd.grad(tensor(1, { dtype: float64 }), x), TensorError, 'element 0 of tensors does not require grad and does not have a grad_fn');
    expectError(() => autograd.grad([x.sum(), noGrad(() => x.sum())], x), TensorError, 'element 1 of tensors does not require grad');
  });

  it('an input that does not require grad', () => {
    const x = leaf([1, 2]);
    expectError(() => autograd.grad(x.sum(), tensor([1], { dtype: float64 })), TensorError, 'One of the differentiated Tensors does not require grad');
  });

  it('a non-scalar output without gradOutputs', () => {
    const x = leaf([1, 2]);
    expectError(() => autograd.grad(x.mul(2), x), TensorError, 'grad can be implicitly created only for scalar outputs', '[2]');
  });

  it('gradOutputs of the wrong shape or count', () => {
    const x = leaf([1, 2]);
    expectError(() => autograd.grad(x.mul(2), x, { gradOutputs: tensor([1, 2, 3], { dtype: float64 }) }), TensorError,
      'Mismatch in shape: grad_output[0] has a shape of [3] and output[0] has a shape of [2].');
    expectError(() => autograd.grad(x.sum(), x, { gradOutputs: [tensor(1, { dtype: float64 }), tensor(1, { dtype: float64 })] }), TensorError,
      'got 1 tensors and 2 gradients');
  });

  it('bad arguments are TypeErrors that name them', () => {
    const x = leaf([1, 2]);
    expectError(() => autograd.grad(x.sum(), [] as Tensor[]), TypeError, "'inputs' must be a Tensor or a non-empty array of Tensors");
    expectError(() => autograd.grad(x.sum(), x, { createGraf: true } as never), TypeError, "unexpected keyword argument 'createGraf'");
    expectError(() => autograd.grad(x.sum(), x, { allowUnused: 1 } as never), TypeError, "argument 'allowUnused' must be a boolean");
  });
});

describe('autograd.grad: argument forms (API.md naming rule)', () => {
  it('gradOutputs, retainGraph and createGraph positionally, in PyTorch\'s order', () => {
    const x = leaf([1, 2]);
    const y = x.pow(3);
    const [g] = autograd.grad(y, x, tensor([1, 1], { dtype: float64 }), null, true);
    expect(g!.requiresGrad, 'createGraph given positionally').toBe(true);
    expect(vals(g)).toEqual([3, 12]);
    const [g2] = autograd.grad(y, x, tensor([1, 1], { dtype: float64 }), { retainGraph: true });
    expect(vals(g2)).toEqual([3, 12]);
  });

  it('a name given both ways is a TypeError', () => {
    const x = leaf([1, 2]);
    const v = tensor([1, 1], { dtype: float64 });
    expectError(() => autograd.grad(x.mul(2), x, v, { gradOutputs: v } as never), TypeError, "got multiple values for argument 'gradOutputs'");
  });
});
