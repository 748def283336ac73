// sort, argsort, msort and topk on the argsort primitive: the backend gives the stable order of each
// fibre (NaN as the largest value), and the values are gathered at it, so their gradient scatters
// back through the indices as PyTorch's does. Indices are int32 (PyTorch: int64).
import { int32 } from '../dtype/dtype.js';
import { ValueError } from '../errors/errors.js';
import { iteratorDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute, requireKernel } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { bindArguments, boolArgument, intArgument, required } from './arguments.js';
import { gather } from './indexing.js';
import { valuesIndices, type ValuesIndices } from './reduce.js';
import { contiguousCopy, narrow, reshape } from './views.js';

/** The int32 stable order of `x` along `dim` (ascending, or descending): indices carry no gradient. */
function order(op: string, x: Tensor, dim: number, descending: boolean): Tensor {
  const d = normalizeDim(dim, x.ndim, op);
  const { device } = iteratorDevice(op, [{ name: 'self', tensor: x }]);
  const backend = backendOf(device);
  requireCompute(backend, x.dtype, op);
  const argsort = requireKernel(backend, 'argsort', op);
  const source = x.ndim === 0 ? reshape(x, [1]) : x;
  const out = allocate(source.shape, int32, device);
  if (out.numel() > 0) argsort(ref(source), d, descending, ref(out));
  return x.ndim === 0 ? reshape(out, []) : out;
}

/** `(dim = -1, descending = false, *, stable = false)`: every order is stable here. */
function sortArguments(op: string, args: readonly unknown[]): { dim: number; descending: boolean } {
  const a = bindArguments(op, args, ['dim', 'descending'], ['stable']);
  boolArgument(op, 'stable', a.stable, false);
  return { dim: intArgument(op, 'dim', a.dim, -1), descending: boolArgument(op, 'descending', a.descending, false) };
}

/** `x.sort(dim?, descending?, { stable? })`: values and their int32 indices. */
export function sort(x: Tensor, args: readonly unknown[]): ValuesIndices {
  const { dim, descending } = sortArguments('sort', args);
  const indices = order('sort', x, dim, descending);
  return valuesIndices(gather(x, dim, indices), indices);
}

/** `x.argsort(dim?, descending?, { stable? })`: the int32 indices of `sort`. */
export function argsort(x: Tensor, args: readonly unknown[]): Tensor {
  const { dim, descending } = sortArguments('argsort', args);
  return order('argsort', x, dim, descending);
}

/** `x.msort()`: the values sorted along dim 0. */
export function msort(x: Tensor): Tensor {
  return gather(x, 0, order('msort', x, 0, false));
}

/**
 * `x.topk(k, dim?, largest?, sorted?)`: the first k of the stable descending (or ascending) order,
 * so ties keep the lower index first; the result is sorted whatever `sorted` says (PyTorch leaves
 * the order unspecified without it).
 */
export function topk(x: Tensor, args: readonly unknown[]): ValuesIndices {
  const a = bindArguments('topk', args, ['k', 'dim', 'largest', 'sorted']);
  const k = intArgument('topk', 'k', required('topk', 'k', a.k), 0);
  const dim = intArgument('topk', 'dim', a.dim, -1);
  const largest = boolArgument('topk', 'largest', a.largest, true);
  boolArgument('topk', 'sorted', a.sorted, true);
  const d = normalizeDim(dim, x.ndim, 'topk');
  const size = x.ndim === 0 ? 1 : x.shape[d]!;
  if (k < 0 || k > size) throw new ValueError(`topk(): selected index k out of range (k = ${k}, dim ${d} has size ${size})`);
  const all = order('topk', x, d, largest);
  // A copy of the first k, so the result does not hold the whole order's memory.
  const indices = x.ndim === 0 ? all : contiguousCopy(narrow(all, d, 0, k));
  return valuesIndices(gather(x, d, indices), indices);
}
