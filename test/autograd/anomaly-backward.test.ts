// detectAnomaly through the backward pass: a NaN made inside a backward rule (with createGraph,
// and in an autograd.Function's backward) is reported naming the node and where its forward ran;
// a backward that returns NaN without a kernel making it is PyTorch's "returned nan values" error.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { AnomalyError, autograd, detectAnomaly, float64, tensor, TensorError, type Tensor } from '@core/tensor';
import { expectError, here, thrown } from '../helpers/assert.js';

const leaf = (data: number[]): Tensor => tensor(data, { dtype: float64 }).requiresGrad_();

describe('detectAnomaly in backward', () => {
  it('a NaN made by a built-in rule during a createGraph backward names the node and its forward line', () => {
    const x = leaf([0, 1]);
    let line = 0;
    const e = thrown(() => detectAnomaly(() => {
      line = here().line + 1;
      const y = x.sqrt().mul(0).sum(); // sqrt's rule: 0 / (2·sqrt(0)) = NaN
      autograd.grad(y, x, { createGraph: true });
    }));
    expect(e).toBeInstanceOf(AnomalyError);
    const a = e as AnomalyError;
    expect(a.value).toBe('NaN');
    expect(a.op).toBe('div');
    expect(a.backward).toBe('SqrtBackward');
    expect(a.forwardSite).toContain(`anomaly-backward.test.ts:${line}:`);
    expect(a.message).toContain('in SqrtBackward, the backward of the op run at');
  });

  it('a NaN made in an autograd.Function\'s backward names the function', () => {
    class Square extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
        ctx.saveForBackward(x);
        return x.mul(x);
      }
      static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
        const x = ctx.savedTensors[0]!;
        return g.mul(x).mul(x).div(x).mul(2); // 0/0 at x = 0
      }
    }
    const x = leaf([0, 3]);
    const e = thrown(() => detectAnomaly(() => Square.apply(x).sum().backward()));
    expect(e).toBeInstanceOf(AnomalyError);
    expect((e as AnomalyError).backward).toBe('SquareBackward');
    expect(e.message).toContain('div produced NaN from finite inputs');
    // Outside anomaly mode the same backward runs and yields the NaN.
    x.grad = null;
    Square.apply(x).sum().backward();
    expect(Number.isNaN(x.grad!.dataSync()[0])).toBe(true);
  });

  it('a backward that returns NaN values no kernel made: "Function \'...\' returned nan values in its 0th output"', () => {
    class Broken extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor { return x.mul(2); }
      static backward(): Tensor { return tensor([NaN, 1], { dtype: float64 }); }
    }
    const x = leaf([1, 2]);
    expectError(() => detectAnomaly(() => Broken.apply(x).sum().backward()), TensorError,
      "Function 'BrokenBackward' returned nan values in its 0th output.");
    expect(x.grad, 'nothing accumulated').toBeNull();
  });
});
