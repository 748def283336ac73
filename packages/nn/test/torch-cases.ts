// Reference cases of one-input ops against PyTorch 1.13, shared by pooling.test.ts and
// resample.test.ts. Each case ran its `torch` expression on x = seq(shape, 0.1) in float64
// (sine-inputs.ts's formula) and backpropagated sum(y · seq(y.shape, 0.3)):
//   x = seq(shape, 0.1).requires_grad_(); y = <torch>; (y * seq(list(y.shape), 0.3)).sum().backward()
//   y: y.flatten(), g: x.grad.flatten(), printed with '%.12g'
import { describe, expect, it } from 'vitest';
import { float32, float64, type Tensor } from '@core/tensor';
import { expectClose } from './helpers.js';
import { seq } from './sine-inputs.js';

/** One PyTorch call, the library's equivalent, and PyTorch's results. */
export interface TorchCase {
  /** The PyTorch 1.13 call that produced `y` and `g`. */
  readonly torch: string;
  /** The input's shape. */
  readonly shape: number[];
  /** The same call in this library. */
  readonly call: (x: Tensor) => Tensor;
  /** The output's shape. */
  readonly out: number[];
  /** The output, flattened. */
  readonly y: number[];
  /** The input's gradient, flattened. */
  readonly g: number[];
}

/**
 * One test per case: values and gradients in float64 (to 1e-9 relative to max(1, |expected|)),
 * and one test of all the calls in float32 (to 1e-6).
 */
export function describeTorchCases(title: string, cases: readonly TorchCase[]): void {
  describe(title, () => {
    for (const c of cases) {
      it(c.torch, () => {
        const x = seq(c.shape, 0.1, 1, float64).requiresGrad_();
        const y = c.call(x);
        expect(y.shape).toEqual(c.out);
        expectClose(y, c.y, 1e-9);
        y.mul(seq(c.out, 0.3, 1, float64)).sum().backward();
        expectClose(x.grad!, c.g, 1e-9);
      });
    }

    it('gives the same values in float32 (to 1e-6)', () => {
      for (const c of cases) {
        const y = c.call(seq(c.shape, 0.1));
        expect(y.dtype).toBe(float32);
        expectClose(y, c.y, 1e-6);
      }
    });
  });
}
