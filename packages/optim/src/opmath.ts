// PyTorch's kernels compute float16/bfloat16 in float32 ("opmath") and round once per op, with
// scalars such as lr kept in float32. Our elementwise ops compute in the operands' dtype, so a
// half-precision update would round every intermediate and every scalar to half. The optimizers
// therefore write each PyTorch op as: upcast the inputs with `up`, compute, and round once into
// the state or parameter (`x.copy_(...)`) or, for an out-of-place result, with `roundTo`.
// For float32/float64 tensors `up` is the identity, so this is exactly the plain formula.
import { bfloat16, type DType, float16, float32, type Tensor } from '@core/tensor';

/** `t` in the dtype PyTorch computes it in: float32 for half types, else `t` itself. */
export function up(t: Tensor): Tensor {
  return t.dtype === float16 || t.dtype === bfloat16 ? t.to(float32) : t;
}

/** An out-of-place op's result as PyTorch stores it (rounded to `dtype`), upcast for the next op. */
export function roundTo(value: Tensor, dtype: DType): Tensor {
  return up(value.to(dtype));
}

/** ATen's lerp (Lerp.h): `a + w·(b − a)` if |w| < 0.5, else `b − (b − a)·(1 − w)`. */
export function lerp(a: Tensor, b: Tensor, w: number): Tensor {
  const diff = b.sub(a);
  return Math.abs(w) < 0.5 ? a.add(diff.mul(w)) : b.sub(diff.mul(1 - w));
}

/**
 * The gradient as the updates use it, upcast: negated when maximizing, then plus `wd·p` (one
 * out-of-place op, rounded to the grad's dtype as PyTorch's `grad.add(param, alpha=wd)`) when
 * wd ≠ 0.
 */
export function gradWithDecay(param: Tensor, grad: Tensor, weightDecay: number, maximize: boolean): Tensor {
  const g = maximize ? up(grad).neg() : up(grad);
  return weightDecay === 0 ? g : roundTo(g.add(up(param), weightDecay), grad.dtype);
}

/** PyTorch's `avg.mul_(beta).add_(x, alpha=1 − beta)`: a running average, two ops each rounded into `avg`. */
export function runningAverage_(avg: Tensor, x: Tensor, beta: number): void {
  avg.copy_(up(avg).mul(beta));
  avg.copy_(up(avg).add(x, 1 - beta));
}

/**
 * The gradient with L2 decay (upcast), after updating the running averages of it (`m`, by β1) and
 * of its square (`v`, by β2) with it: the first half of an Adam-style update.
 */
export function updateMoments_(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, [beta1, beta2]: readonly [number, number], weightDecay: number): Tensor {
  const g = gradWithDecay(param, grad, weightDecay, false);
  runningAverage_(m, g, beta1);
  runningSquareAverage_(v, g, beta2);
  return g;
}

/** PyTorch's `avg.mul_(beta).addcmul_(x, x, value=1 − beta)`: a running average of squares. */
export function runningSquareAverage_(avg: Tensor, x: Tensor, beta: number): void {
  avg.copy_(up(avg).mul(beta));
  avg.copy_(up(avg).add(x.mul(1 - beta).mul(x)));
}
