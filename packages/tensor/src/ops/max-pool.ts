// Max-pooling through a backend's fused kernels, PyTorch's max_pool2d_with_indices and its
// backward: one pass writes each window's maximum and where it came from, and the gradient goes
// back to those places in one more. @core/nn's F.maxPool2d calls this first and runs its
// decomposition (a window view's max) when it returns undefined; both give the same bits.
import type { MaxPool2dGeometry } from '../backend/contract.js';
import { inheritSite } from '../tensor/site.js';
import { int32 } from '../dtype/dtype.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { record } from '../autograd/engine.js';
import { noGrad } from '../autograd/grad-mode.js';
import type { Tensor } from '../tensor/tensor.js';
import { zeros } from './creation.js';
import { fusedKernel } from '../dispatch/fused.js';

/** What `fusedMaxPool2d` returns: the pooled values and, per value, its flat position h·W + w in its input plane. */
export interface MaxPool2dResult {
  /** [N, C, oh, ow], the input's dtype; its gradient goes to `indices`. */
  readonly output: Tensor;
  /** [N, C, oh, ow] int32 (PyTorch's `return_indices`). */
  readonly indices: Tensor;
}

/**
 * PyTorch's `max_pool2d_with_indices` of a [N, C, H, W] `input` through the backend's fused
 * `maxPool2d` kernel (the contract describes the windows). Returns undefined when the kernel does
 * not apply: no kernel, fusion disabled, a dtype the backend does not compute, an empty tensor, or
 * a geometry with a window that has no position inside the input (the decomposition then runs,
 * with the same semantics). The gradient goes through the backend's `maxPool2dBackward` (else a
 * scatter-add), and is differentiable again: its gradient is a gather at the indices.
 * @internal Called by \@core/nn; arguments are checked there.
 */
export function fusedMaxPool2d(input: Tensor, geometry: MaxPool2dGeometry): MaxPool2dResult | undefined {
  const dtype = input.dtype;
  if (!dtype.isFloatingPoint || input.ndim !== 4 || input.numel() === 0) return undefined;
  const [N, C, H, W] = input.shape as [number, number, number, number];
  const [oh, ow] = geometry.out;
  if (oh < 1 || ow < 1 || !everyWindowInside(H, 0, geometry) || !everyWindowInside(W, 1, geometry)) return undefined;
  const backend = backendOf(input.device);
  if (!backend.capabilities.dtypes[dtype.name]?.compute) return undefined;
  const kernel = fusedKernel(backend, 'maxPool2d');
  if (!kernel) return undefined;
  inheritSite(input._site);
  const out = allocate([N, C, oh, ow], dtype, input.device);
  const indices = allocate([N, C, oh, ow], int32, input.device);
  kernel(ref(input), ref(out), ref(indices), geometry);
  const output = record('maxPool2dWithIndicesBackward', out, [input], (g) => [maxPool2dBackward(g, indices, input.shape)], [indices]);
  return { output, indices };
}

/** Whether every window along dim `d` (0: rows, 1: columns) of a dim of `size` has a position in [0, size). */
function everyWindowInside(size: number, d: 0 | 1, g: MaxPool2dGeometry): boolean {
  for (let o = 0; o < g.out[d]; o++) {
    const start = o * g.stride[d] - g.padding[d];
    const first = start >= 0 ? 0 : Math.ceil(-start / g.dilation[d]); // the first position at or after 0
    if (first >= g.kernel[d] || start + first * g.dilation[d] >= size) return false;
  }
  return true;
}

/**
 * The input's gradient [N, C, H, W] from the output's, `g` [N, C, oh, ow]: each element of g added
 * at its index, zeros elsewhere. Recorded so that a second backward (createGraph) sees it: it is
 * linear in g, and its gradient is the incoming one gathered at the indices.
 */
function maxPool2dBackward(g: Tensor, indices: Tensor, shape: readonly number[]): Tensor {
  const planes = (t: Tensor) => t.flatten(2);
  const kernel = fusedKernel(backendOf(g.device), 'maxPool2dBackward');
  // Without the kernel (fusion turned off since the forward pass): the same sums as a scatter-add, itself differentiable.
  if (!kernel) return planes(zeros(shape, { dtype: g.dtype, device: g.device })).scatterAdd(2, planes(indices), planes(g)).reshape(shape);
  inheritSite(g._site);
  const gradInput = noGrad(() => {
    const gi = allocate(shape, g.dtype, g.device);
    kernel(ref(g), ref(indices), ref(gi));
    return gi;
  });
  return record('maxPool2dWithIndicesBackwardBackward', gradInput, [g], (gg) => [planes(gg).gather(2, planes(indices)).reshape(indices.shape)], [indices]);
}
