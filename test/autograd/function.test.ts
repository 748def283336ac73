// autograd.Function (PyTorch 1.13's torch.autograd.Function): user-defined forward and backward
// through a ctx (saveForBackward / savedTensors, needsInputGrad, markNonDifferentiable,
// markDirty, other values kept on ctx), several outputs with zero-filled missing gradients,
// non-tensor arguments, gradcheck and gradgradcheck of a custom op, and PyTorch's errors.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import {
  autograd, float32, float64, gradcheck, gradgradcheck, inferenceMode, noGrad, tensor, TensorError, type Tensor,
} from '@core/tensor';
import { expectClose, expectError } from '../helpers/assert.js';

const vals = (t: Tensor | null | undefined): number[] => {
  expect(t, 'a tensor').toBeTruthy();
  return Array.from(t!.dataSync());
};
const f64 = (data: number[] | number[][]): Tensor => tensor(data, { dtype: float64 });
const leaf = (data: number[] | number[][]): Tensor => f64(data).requiresGrad_();

class Exp extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    const y = x.exp();
    ctx.saveForBackward(y);
    return y;
  }
  static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
    const [y] = ctx.savedTensors;
    return g.mul(y!);
  }
}

describe('autograd.Function: forward, backward, ctx', () => {
  it('Exp.apply: the forward value, gradFn "ExpBackward", and the gradient from the saved output', () => {
    const x = leaf([0, 1, -1]);
    const y = Exp.apply(x);
    expectClose(vals(y), [1, Math.E, 1 / Math.E], { rtol: 1e-15 });
    expect(y.gradFn).toBe('ExpBackward');
    expect(y.requiresGrad).toBe(true);
    y.sum().backward();
    expectClose(vals(x.grad), [1, Math.E, 1 / Math.E], { rtol: 1e-15 });
  });

  it('forward runs without recording; nothing is recorded when no input requires grad', () => {
    let recordedInside: boolean | undefined;
    class Probe extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        const y = x.mul(2);
        recordedInside = y.requiresGrad;
        return y;
      }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.mul(2); }
    }
    const y = Probe.apply(leaf([1]));
    expect(recordedInside).toBe(false);
    expect(y.gradFn).toBe('ProbeBackward');
    const plain = Probe.apply(f64([1]));
    expect(plain.requiresGrad).toBe(false);
    expect(noGrad(() => Probe.apply(leaf([1]))).requiresGrad, 'under noGrad').toBe(false);
  });

  it('passes gradcheck and gradgradcheck (its backward, written with Tensor ops, is differentiable)', () => {
    const x = leaf([0.3, -0.2, 1.1]);
    const r1 = gradcheck((t) => Exp.apply(t).mul(t), [x]);
    expect(r1.ok, r1.mismatch).toBe(true);
    const r2 = gradgradcheck((t) => Exp.apply(t).mul(t), [x]);
    expect(r2.ok, r2.mismatch).toBe(true);
  });

  it('non-tensor arguments: kept on ctx, their gradient is null, needsInputGrad is false for them', () => {
    let needs: readonly boolean[] = [];
    class Scale extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor, k: number, w: Tensor): Tensor {
        ctx.k = k;
        needs = ctx.needsInputGrad;
        return x.mul(k).mul(w);
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor): (Tensor | null)[] {
        return [g.mul(ctx.k as number), null, null];
      }
    }
    const x = leaf([1, 2]);
    const w = f64([1, 1]);
    Scale.apply(x, 3, w).sum().backward();
    expect(needs).toEqual([true, false, false]);
    expect(vals(x.grad)).toEqual([3, 3]);
  });

  it('extra trailing null gradients are allowed', () => {
    class Twice extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.mul(2); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor) { return [g.mul(2), null, undefined]; }
    }
    const x = leaf([1]);
    Twice.apply(x).sum().backward();
    expect(vals(x.grad)).toEqual([2]);
  });

  it('several outputs: one gradient per output, zeros for an output no gradient reached', () => {
    const seen: number[][] = [];
    class Split extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor[] { return [x.mul(2), x.mul(3)]; }
      static backward(_ctx: autograd.FunctionCtx, ga: Tensor, gb: Tensor): Tensor {
        seen.push(vals(ga), vals(gb));
        return ga.mul(2).add(gb.mul(3));
      }
    }
    const x = leaf([1, 2]);
    const [a, b] = Split.apply(x);
    expect(a!.gradFn).toBe('SplitBackward');
    expect(b!.gradFn).toBe('SplitBackward');
    b!.sum().backward();
    expect(seen).toEqual([[0, 0], [1, 1]]);
    expect(vals(x.grad)).toEqual([3, 3]);
    // Both outputs used: their gradients arrive together, in one call.
    x.grad = null;
    seen.length = 0;
    const [c, d] = Split.apply(x);
    c!.mul(10).add(d!).sum().backward();
    expect(seen).toEqual([[10, 10], [1, 1]]);
    expect(vals(x.grad)).toEqual([23, 23]);
  });

  it('markNonDifferentiable: that output does not require grad, and backward gets zeros for it', () => {
    let gradOfIndex: number[] = [];
    class MaxWithIndex extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor[] {
        const { values, indices } = x.max(0);
        const mask = x.eq(values).to(float64);
        ctx.markNonDifferentiable(mask);
        ctx.saveForBackward(mask);
        return [values, mask];
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor, gMask: Tensor): Tensor {
        gradOfIndex = vals(gMask);
        return ctx.savedTensors[0]!.mul(g);
      }
    }
    const x = leaf([1, 5, 2]);
    const [v, mask] = MaxWithIndex.apply(x);
    expect(mask!.requiresGrad).toBe(false);
    expect(v!.requiresGrad).toBe(true);
    v!.backward();
    expect(gradOfIndex).toEqual([0, 0, 0]);
    expect(vals(x.grad)).toEqual([0, 1, 0]);
  });

  it('markDirty: an input modified in place takes the function as its history', () => {
    class Double_ extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        x.mul_(2);
        ctx.markDirty(x);
        return x;
      }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.mul(2); }
    }
    const x = leaf([1, 2]);
    const h = x.mul(1);
    const out = Double_.apply(h);
    expect(out, 'the same tensor object').toBe(h);
    expect(h.gradFn).toBe('Double_Backward');
    expect(vals(h)).toEqual([2, 4]);
    out.mul(out).sum().backward(); // d/dx (2x)² = 8x
    expect(vals(x.grad)).toEqual([8, 16]);
  });

  it('an input returned unchanged comes back as a new tensor over the same memory; the input keeps its history', () => {
    class Ident extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x; }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.mul(5); }
    }
    const x = leaf([1, 2]);
    const o = Ident.apply(x);
    expect(o).not.toBe(x);
    expect(x.isLeaf).toBe(true);
    expect(o.gradFn).toBe('IdentBackward');
    o.sum().backward();
    expect(vals(x.grad)).toEqual([5, 5]);
  });

  it('a float32 gradient for a float64 input is cast back, as for built-in ops (AC-14)', () => {
    class Cast extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.mul(3); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.mul(3).to(float32); }
    }
    const x = leaf([1, 2]);
    Cast.apply(x).sum().backward();
    expect(x.grad!.dtype).toBe(float64);
    expect(vals(x.grad)).toEqual([3, 3]);
  });

  it('a gradient of a broadcast shape is summed back to the input (PyTorch\'s validate_outputs)', () => {
    class Wide extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.mul(1); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.unsqueeze(0).expand([3, 2]); }
    }
    const x = leaf([1, 2]);
    Wide.apply(x).sum().backward();
    expect(vals(x.grad)).toEqual([3, 3]);
  });
});

describe('autograd.Function: PyTorch\'s errors', () => {
  it('backward returning the wrong number of gradients', () => {
    class Exp2 extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.exp(); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor) { return [g, g]; }
    }
    expectError(() => Exp2.apply(leaf([1, 2])).sum().backward(), TensorError,
      'function Exp2Backward returned an incorrect number of gradients (expected 1, got 2)');
    class Pair extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, a: Tensor, b: Tensor): Tensor { return a.add(b); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor) { return g; }
    }
    expectError(() => Pair.apply(leaf([1]), leaf([2])).sum().backward(), TensorError,
      'function PairBackward returned an incorrect number of gradients (expected 2, got 1)');
  });

  it('a gradient of the wrong shape', () => {
    class WrongShape extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.exp(); }
      static backward(): Tensor { return f64([1, 1, 1]); }
    }
    expectError(() => WrongShape.apply(leaf([1, 2])).sum().backward(), TensorError,
      'Function WrongShapeBackward returned an invalid gradient at index 0 - got [3] but expected shape compatible with [2]');
  });

  it('a gradient for an argument that is not a tensor', () => {
    class Scale extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor, k: number): Tensor { return x.mul(k); }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor) { return [g, g]; }
    }
    expectError(() => Scale.apply(leaf([1]), 3).sum().backward(), TensorError,
      'function ScaleBackward returned a gradient different than None at position 2, but the corresponding forward input was not a Variable');
  });

  it('a saved tensor modified in place before backward', () => {
    class Square extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        ctx.saveForBackward(x);
        return x.mul(x);
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g.mul(ctx.savedTensors[0]!).mul(2); }
    }
    const h = leaf([1, 2]).mul(1);
    const y = Square.apply(h);
    noGrad(() => h.add_(1));
    expectError(() => y.sum().backward(), TensorError, 'modified by an inplace operation', 'SquareBackward');
  });

  it('dirty tensors: not returned, or a leaf that requires grad', () => {
    class NotReturned extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        ctx.markDirty(x);
        return x.mul(2);
      }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g; }
    }
    expectError(() => NotReturned.apply(leaf([1]).mul(1)), TensorError, 'Some elements marked as dirty during the forward method were not returned as output');
    class Inc_ extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        x.add_(1);
        ctx.markDirty(x);
        return x;
      }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g; }
    }
    expectError(() => Inc_.apply(leaf([1])), TensorError, 'a leaf Variable that requires grad has been used in an in-place operation');
  });

  it('forward returning something other than tensors, and a class without backward', () => {
    class Bad extends autograd.Function {
      static forward(): Tensor { return 3 as unknown as Tensor; }
      static backward(_ctx: autograd.FunctionCtx, g: Tensor): Tensor { return g; }
    }
    expectError(() => Bad.apply(), TypeError, 'Bad.forward must return a Tensor or an array of Tensors');
    class NoBackward extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x; }
    }
    const apply = NoBackward.apply as unknown as (x: Tensor) => Tensor;
    expectError(() => apply.call(NoBackward, leaf([1])), TypeError, 'NoBackward must define static forward(ctx, ...args) and static backward(ctx, ...grads)');
  });

  it('saving an inference tensor for backward', () => {
    const frozen = inferenceMode(() => f64([2, 3]));
    class MulBy extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor, w: Tensor): Tensor {
        ctx.saveForBackward(w);
        return x.mul(w);
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor) { return [g.mul(ctx.savedTensors[0]!), null]; }
    }
    expectError(() => MulBy.apply(leaf([1, 1]), frozen), TensorError, 'Inference tensors cannot be saved for backward');
  });
});
