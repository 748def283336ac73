// Cross entropy through a backend's fused kernel: the forward value comes from the kernel (one pass
// over the logits), the gradient from the closed form softmax(x) − target distribution, so
// autograd is the same whichever path ran. @core/nn's F.crossEntropy calls this first and runs its
// decomposition when it returns undefined (no kernel, fusion disabled, or a case the kernel
// declines: class weights, probability targets, spatial dims, empty inputs).
import { inheritSite } from '../tensor/site.js';
import { bfloat16, float16, float32, int32 } from '../dtype/dtype.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { record } from '../autograd/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { arange } from './creation.js';
import { fusedKernel } from '../dispatch/fused.js';

/** What `fusedCrossEntropy` needs of F.crossEntropy's options (already validated by the caller). */
export interface FusedCrossEntropyOptions {
  /** Targets equal to this contribute nothing and are not counted by the mean. */
  readonly ignoreIndex: number;
  /** ε in [0, 1]. */
  readonly labelSmoothing: number;
  /** 'none' (one loss per target), 'sum' or 'mean' (over the non-ignored targets). */
  readonly reduction: 'none' | 'sum' | 'mean';
}

/**
 * `F.crossEntropy(input, target, options)` without class weights, for logits [N, C] or [C] and int32
 * class indices [N] or [], through the backend's fused `crossEntropy` kernel. Returns undefined when
 * the kernel does not apply (the caller then runs the decomposition, with the same semantics).
 * @internal Called by \@core/nn; arguments are checked there.
 */
export function fusedCrossEntropy(input: Tensor, target: Tensor, options: FusedCrossEntropyOptions): Tensor | undefined {
  if (input.ndim < 1 || input.ndim > 2 || !input.dtype.isFloatingPoint || target.dtype !== int32) return undefined;
  if (target.ndim !== input.ndim - 1 || (input.ndim === 2 && target.shape[0] !== input.shape[0])) return undefined;
  if (!input.device.equals(target.device) || input.numel() === 0) return undefined;
  const backend = backendOf(input.device);
  if (!backend.capabilities.dtypes[input.dtype.name]?.compute) return undefined;
  const kernel = fusedKernel(backend, 'crossEntropy');
  if (!kernel) return undefined;
  const { ignoreIndex, labelSmoothing, reduction } = options;
  inheritSite(input._site);
  const x = input.ndim === 1 ? input.unsqueeze(0) : input;
  const t = target.ndim === 0 ? target.reshape([1]) : target;
  const [n, classes] = x.shape as [number, number];
  const rows = allocate([n], x.dtype, x.device);
  kernel(ref(x), ref(t), { ignoreIndex, labelSmoothing }, ref(rows));
  const losses = record('crossEntropyBackward', rows, [x], (g) => [crossEntropyGrad(x, t, g, ignoreIndex, labelSmoothing, classes)], [x, t]);
  switch (reduction) {
    case 'none': return input.ndim === 1 ? losses.reshape([]) : losses;
    case 'sum': return losses.sum();
    case 'mean': return losses.sum().div(t.ne(ignoreIndex).to(x.dtype).sum());
    default: return reduction satisfies never;
  }
}

/**
 * ∂loss_i/∂x[i, c] = softmax(x_i)_c − (1 − ε)·[c = t_i] − ε/C, times the incoming g_i, and 0 for
 * ignored rows. Half logits are differentiated in f32 and the result rounded once.
 */
function crossEntropyGrad(x: Tensor, t: Tensor, g: Tensor, ignoreIndex: number, labelSmoothing: number, classes: number): Tensor {
  const work = x.dtype === float16 || x.dtype === bfloat16 ? x.to(float32) : x;
  const probabilities = work.softmax(1);
  const oneHot = arange(classes, { device: x.device, dtype: int32 }).reshape([1, classes]).eq(t.reshape([-1, 1])).to(work.dtype);
  const targetDistribution = labelSmoothing === 0 ? oneHot : oneHot.mul(1 - labelSmoothing).add(labelSmoothing / classes);
  const rowScale = g.to(work.dtype).mul(t.ne(ignoreIndex).to(work.dtype)).unsqueeze(1);
  return probabilities.sub(targetDistribution).mul(rowScale).to(x.dtype);
}
