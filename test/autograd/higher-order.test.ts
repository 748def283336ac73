// Higher-order gradients: with createGraph the backward pass is recorded, so gradients can be
// differentiated again. Worked values (d²/dx² x³ = 6x, mixed partials, a gradient penalty against
// torch), backward({ createGraph }) and .grad's history, gradgradcheck of the core ops' double
// backward (elementwise, reductions, matmul, softmax/logSoftmax fused and decomposed, a small MLP),
// gradgradcheck catching a wrong double backward, and the clear error of a backward that cannot
// be differentiated twice.
import '@core/backend-cpu';
import { afterEach, describe, expect, it } from 'vitest';
import {
  autograd, float64, gradgradcheck, noGrad, setFusedKernelsEnabled, tensor, TensorError, type Tensor,
} from '@core/tensor';
import { expectClose, expectError } from '../helpers/assert.js';
import { prng } from '../helpers/random.js';

const vals = (t: Tensor | null | undefined): number[] => {
  expect(t, 'a gradient').toBeTruthy();
  return Array.from(t!.dataSync());
};
const leaf = (data: number[] | number[][], grad = true): Tensor => {
  const t = tensor(data, { dtype: float64 });
  return grad ? t.requiresGrad_() : t;
};

/** A float64 leaf of `shape` with values in [lo, hi). */
function uniform(shape: readonly number[], seed: number, lo = -1, hi = 1): Tensor {
  const r = prng(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(Array.from({ length: n }, () => lo + (hi - lo) * r()), { dtype: float64 }).reshape(shape).requiresGrad_();
}

afterEach(() => setFusedKernelsEnabled(true));

describe('worked values', () => {
  it('d/dx x³ = 3x², d²/dx² = 6x, d³/dx³ = 6 (createGraph at each order)', () => {
    const x = leaf([1, 2, -3]);
    const y = x.pow(3).sum();
    const [d1] = autograd.grad(y, x, { createGraph: true });
    expect(vals(d1)).toEqual([3, 12, 27]);
    expect(d1!.requiresGrad).toBe(true);
    const [d2] = autograd.grad(d1!.sum(), x, { createGraph: true });
    expect(vals(d2)).toEqual([6, 12, -18]);
    const [d3] = autograd.grad(d2!.sum(), x);
    expect(vals(d3)).toEqual([6, 6, 6]);
  });

  it('mixed partials of f(x, y) = x²·y: ∂²f/∂x∂y = 2x, ∂²f/∂x² = 2y', () => {
    const x = leaf([3]);
    const y = leaf([5]);
    const f = x.mul(x).mul(y).sum();
    const [fx] = autograd.grad(f, x, { createGraph: true }); // 2xy
    expect(vals(fx)).toEqual([30]);
    const [fxx, fxy] = autograd.grad(fx!.sum(), [x, y]);
    expect(vals(fxx)).toEqual([10]);
    expect(vals(fxy)).toEqual([6]);
  });

  it('a Hessian-vector product: ∇(∇f · v) for f = Σ exp(x)·x', () => {
    // f = Σ x·eˣ: ∇f = (1 + x)eˣ, H = diag((2 + x)eˣ).
    const x = leaf([0.5, -1]);
    const v = tensor([2, 3], { dtype: float64 });
    const [g] = autograd.grad(x.exp().mul(x).sum(), x, { createGraph: true });
    const [hv] = autograd.grad(g!.mul(v).sum(), x);
    expectClose(vals(hv), [2 * 2.5 * Math.exp(0.5), 3 * 1 * Math.exp(-1)], { rtol: 1e-14 });
  });

  it('a gradient penalty ‖∂f/∂x‖² differentiated with respect to the weights matches torch', () => {
    // torch (float64): x = [[0.3, -0.7], [1.1, 0.4]], W = [[0.5, -0.2, 0.8], [-0.6, 0.9, 0.1]], b = [0.05, -0.1, 0.2]
    //   gx, = grad(tanh(x @ W + b).sum(), x, create_graph=True); pen = gx.pow(2).sum(); grad(pen, [W, b])
    const x = leaf([[0.3, -0.7], [1.1, 0.4]]);
    const W = leaf([[0.5, -0.2, 0.8], [-0.6, 0.9, 0.1]]);
    const b = tensor([0.05, -0.1, 0.2], { dtype: float64 }).requiresGrad_();
    const [gx] = autograd.grad(x.matmul(W).add(b).tanh().sum(), x, { createGraph: true });
    const penalty = gx!.pow(2).sum();
    expectClose(vals(penalty), [1.3389472566801097], { rtol: 1e-13 });
    const [gW, gb] = autograd.grad(penalty, [W, b]);
    expectClose(vals(gW), [2.027955160176948, 2.0381254544737035, 1.1483084718763843, 1.3414916695862682, 1.0216383553823756, 1.0547316937330722], { rtol: 1e-12 });
    expectClose(vals(gb), [-0.5720608527729261, -0.07936323940571734, -1.4602507249075476], { rtol: 1e-12 });
  });

  it('without createGraph the gradient is a constant: differentiating it again is the "does not require grad" error', () => {
    const x = leaf([1, 2]);
    const [g] = autograd.grad(x.pow(3).sum(), x);
    expect(g!.requiresGrad).toBe(false);
    expectError(() => autograd.grad(g!.sum(), x), TensorError, 'does not require grad');
  });
});

describe('backward({ createGraph })', () => {
  it('.grad gets a history; differentiating it gives the second derivative', () => {
    const x = leaf([1, 2]);
    x.pow(3).sum().backward(undefined, { createGraph: true });
    const g = x.grad!;
    expect(vals(g)).toEqual([3, 12]);
    expect(g.requiresGrad).toBe(true);
    expect(g.gradFn).not.toBeNull();
    x.grad = null;
    g.sum().backward();
    expect(vals(x.grad)).toEqual([6, 12]);
  });

  it('accumulating into an existing .grad is out of place under createGraph, so the sum stays differentiable', () => {
    const x = leaf([1, 2]);
    x.pow(2).sum().backward(undefined, { createGraph: true }); // .grad = 2x
    const first = x.grad!;
    x.pow(3).sum().backward(undefined, { createGraph: true }); // .grad = 2x + 3x²
    expect(x.grad, 'a new tensor, not first modified in place').not.toBe(first);
    expect(vals(first)).toEqual([2, 4]);
    expect(vals(x.grad)).toEqual([5, 16]);
    const [h] = autograd.grad(x.grad!.sum(), x); // 2 + 6x
    expect(vals(h)).toEqual([8, 14]);
  });

  it('createGraph keeps the graph by default (retainGraph defaults to createGraph)', () => {
    const x = leaf([1, 2]);
    const y = x.exp().sum();
    y.backward(undefined, { createGraph: true });
    noGrad(() => { x.grad = null; });
    expect(() => y.backward()).not.toThrow();
    expectClose(vals(x.grad), [Math.exp(1), Math.exp(2)], { rtol: 1e-15 });
  });
});

describe('gradgradcheck: the double backward of the core ops', () => {
  const ok = (fn: (...xs: Tensor[]) => Tensor, ...inputs: Tensor[]) => {
    const r = gradgradcheck(fn, inputs);
    expect(r.ok, r.mismatch).toBe(true);
  };

  it.each([
    ['exp', (x: Tensor) => x.exp()],
    ['sin', (x: Tensor) => x.sin()],
    ['tanh', (x: Tensor) => x.tanh()],
    ['sigmoid', (x: Tensor) => x.sigmoid()],
    ['pow by a scalar', (x: Tensor) => x.pow(3)],
    ['sum over a dim', (x: Tensor) => x.pow(2).sum(1)],
    ['mean', (x: Tensor) => x.exp().mean()],
    ['mean over a dim, keepdim', (x: Tensor) => x.sin().mean(0, true)],
  ])('%s', (_, fn) => ok(fn, uniform([2, 3], 1)));

  it('log (positive inputs)', () => ok((x) => x.log(), uniform([2, 3], 2, 0.5, 2)));

  it.each([
    ['mul', (a: Tensor, b: Tensor) => a.mul(b)],
    ['div', (a: Tensor, b: Tensor) => a.div(b)],
    ['pow of two tensors', (a: Tensor, b: Tensor) => a.pow(b)],
  ])('%s', (_, fn) => ok(fn, uniform([2, 3], 3, 0.5, 2), uniform([2, 3], 4, 0.5, 2)));

  it('mul with broadcasting (the gradient is summed back to [3])', () => ok((a, b) => a.mul(b).mul(a), uniform([2, 3], 5), uniform([3], 6)));

  it('matmul: matrices, a vector, broadcast batches', () => {
    ok((a, b) => a.matmul(b), uniform([2, 3], 7), uniform([3, 2], 8));
    ok((a, b) => a.matmul(b), uniform([3], 9), uniform([3, 2], 10));
    ok((a, b) => a.matmul(b).tanh(), uniform([2, 2, 3], 11), uniform([3, 2], 12));
  });

  it.each([true, false])('softmax and logSoftmax (fused kernels %s)', (fused) => {
    setFusedKernelsEnabled(fused);
    ok((x) => x.softmax(1), uniform([2, 3], 13));
    ok((x) => x.logSoftmax(1), uniform([2, 3], 14));
    ok((x) => x.softmax(0).mul(x), uniform([2, 3], 15));
  });

  it('a small MLP with a log-softmax loss, every parameter and the input', () => {
    const onehot = tensor([[1, 0], [0, 1]], { dtype: float64 });
    const mlp = (x: Tensor, W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor) =>
      x.matmul(W1).add(b1).tanh().matmul(W2).add(b2).sigmoid().logSoftmax(1).mul(onehot).sum().neg();
    ok(mlp, uniform([2, 3], 16), uniform([3, 4], 17), uniform([4], 18), uniform([4, 2], 19), uniform([2], 20));
  });

  it('fails on a wrong double backward: a first derivative that drops its dependence on x', () => {
    // backward returns g·2x with x detached: right first derivative, second derivative lost.
    class DetachedSquare extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        ctx.saveForBackward(x);
        return x.mul(x);
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
        return g.mul(ctx.savedTensors[0]!.detach().mul(2));
      }
    }
    const x = uniform([3], 21, 0.5, 1.5);
    expect(autograd.gradcheck((t) => DetachedSquare.apply(t), [x]).ok, 'the first derivative is right').toBe(true);
    const r = gradgradcheck((t) => DetachedSquare.apply(t), [x]);
    expect(r.ok).toBe(false);
    expect(r.mismatch).toMatch(/input 0/);
  });
});

describe('a backward that cannot be differentiated twice', () => {
  class RawSquare extends autograd.Function {
    static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
      ctx.saveForBackward(x);
      return x.mul(x);
    }
    static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
      // Read back and recomputed outside autograd.
      const x = ctx.savedTensors[0]!;
      return noGrad(() => g.mul(x).mul(2));
    }
  }

  it('raises a clear error naming it when a second backward reaches it', () => {
    const x = leaf([1, 2]);
    const y = RawSquare.apply(x).mul(leaf([1, 1])).sum(); // the seed gradient reaching RawSquareBackward requires grad
    const [g] = autograd.grad(y, x, { createGraph: true });
    expect(vals(g), 'the first derivative is still right').toEqual([2, 4]);
    expectError(() => autograd.grad(g!.sum(), x), TensorError, 'the backward of RawSquareBackward is not differentiable twice');
  });

  it('the view rules that write the gradient with raw kernels (slice) record it, so a second backward passes through', () => {
    const x = leaf([1, 2, 3]);
    const [g] = autograd.grad(x.pow(2).slice(0, 0, 2).pow(2).sum(), x, { createGraph: true });
    expect(vals(g)).toEqual([4, 32, 0]); // 4x³ on the sliced part
    const [gg] = autograd.grad(g!.sum(), x);
    expect(vals(gg)).toEqual([12, 48, 0]); // 12x²
  });

  it('without createGraph nothing changes: the first derivative is a plain tensor', () => {
    const x = leaf([1, 2]);
    const [g] = autograd.grad(RawSquare.apply(x).sum(), x);
    expect(vals(g)).toEqual([2, 4]);
    expect(g!.requiresGrad).toBe(false);
  });
});
