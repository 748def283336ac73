// gather, scatterAdd and indexSelect with PyTorch's shape rules. Index tensors are int32 (PyTorch: int64).
import { int32 } from '../dtype/dtype.js';
import { DTypeError, ShapeError } from '../errors/errors.js';
import { schemaDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute } from '../dispatch/run.js';
import { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { cast } from './elementwise.js';
import { contiguousCopy, expand, reshape } from './views.js';
import { record } from '../autograd/engine.js';
import { autocastOp } from '../amp/autocast.js';
import { valuesNow } from '../tensor/host-data.js';

/** `index` must be an int32 tensor. */
export function checkIndex(op: string, index: Tensor): void {
  if (!(index instanceof Tensor)) throw new TypeError(`${op}(): index must be a Tensor`);
  if (index.dtype !== int32) {
    throw new DTypeError(`${op}(): Expected dtype int32 for index, got ${index.dtype.name}; convert with index.int()`, op, index.dtype.name);
  }
}

/**
 * Check index values against `size` where the index's backend reads synchronously, through that
 * backend's own read (no other device is involved); GPU backends guard in-kernel instead.
 */
export function checkIndexValues(op: string, index: Tensor, size: number, dim: number): void {
  if (index.numel() === 0) return;
  for (const v of valuesNow(index) ?? []) {
    if (v < 0 || v >= size) throw new ShapeError(`${op}(): index ${v} is out of bounds for dimension ${dim} with size ${size}`, op);
  }
}

/** PyTorch's gather/scatter shape rules: index has self's rank and, but along `dim`, fits in self (and in src). */
export function checkGatherShapes(op: string, self: Tensor, dim: number, index: Tensor, src?: Tensor): void {
  if (index.ndim !== Math.max(self.ndim, 1) && !(self.ndim === 0 && index.ndim <= 1)) {
    throw new ShapeError(`${op}(): Index tensor must have the same number of dimensions as ${src ? 'self' : 'input'} tensor`, op);
  }
  for (let d = 0; d < index.ndim; d++) {
    const selfSize = self.ndim === 0 ? 1 : self.shape[d]!;
    if (d !== dim && index.shape[d]! > selfSize) {
      throw new ShapeError(`${op}(): Size does not match at dimension ${d} expected index [${index.shape.join(', ')}] to be smaller than self [${self.shape.join(', ')}] apart from dimension ${dim}`, op);
    }
    if (src && index.shape[d]! > src.shape[d]!) {
      throw new ShapeError(`${op}(): Expected index [${index.shape.join(', ')}] to be smaller than src [${src.shape.join(', ')}] at dimension ${d}`, op);
    }
  }
}

export function gather(x: Tensor, dim: number, index: Tensor): Tensor {
  checkIndex('gather', index);
  schemaDevice('gather', [{ name: 'self', tensor: x }, { name: 'index', tensor: index }]);
  const d = normalizeDim(dim, x.ndim, 'gather');
  checkGatherShapes('gather', x, d, index);
  checkIndexValues('gather', index, x.ndim === 0 ? 1 : x.shape[d]!, d);
  return gatherInRange(x, d, index);
}

/**
 * gather along the normalized dim `d` with an index whose values are known to fit: made by an
 * argmax, or checked when the forward that saved it ran (reading every index value again on the
 * host would cost as much as the gather itself).
 */
export function gatherInRange(x: Tensor, d: number, index: Tensor): Tensor {
  const backend = backendOf(x.device);
  requireCompute(backend, x.dtype, 'gather');
  const out = allocate(index.shape, x.dtype, x.device);
  if (out.numel() > 0) backend.kernels.gather(ref(x.ndim === 0 ? reshape(x, [1]) : x), d, ref(index), ref(out));
  // Each picked element's gradient goes back to where it came from; repeats add up. Under
  // createGraph the scatterAdd is recorded, so a second backward gathers again (maxPool's double backward).
  return record('GatherBackward', out, [x, index], (g) => [
    autocastOp('scatterAdd', [zerosOf(x, g), index, g] as const, (a, i, s) => scatterAddInRange(a, d, i, s)).reshape(x.shape),
    null,
  ], [index]);
}

/** Out of place: a copy of `x` with `src` added at `index` along `dim`; autocast promotes on GPUs (AC-12). */
export function scatterAdd(x: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  return autocastOp('scatterAdd', [x, index, src] as const, (a, i, s) => scatterAddImpl(a, dim, i, s));
}

/** Out of place: a copy of `x` with `src` values added at `index` along `dim` (duplicates accumulate). */
function scatterAddImpl(x: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  checkIndex('scatterAdd', index);
  if (!(src instanceof Tensor)) throw new TypeError('scatterAdd(): src must be a Tensor');
  schemaDevice('scatterAdd', [{ name: 'self', tensor: x }, { name: 'index', tensor: index }, { name: 'src', tensor: src }]);
  if (src.dtype !== x.dtype) {
    throw new DTypeError(`scatterAdd(): Expected self.dtype to be equal to src.dtype (${x.dtype.name} != ${src.dtype.name})`, 'scatterAdd', src.dtype.name);
  }
  const d = normalizeDim(dim, x.ndim, 'scatterAdd');
  checkGatherShapes('scatterAdd', x, d, index, src);
  checkIndexValues('scatterAdd', index, x.ndim === 0 ? 1 : x.shape[d]!, d);
  return scatterAddInRange(x, d, index, src);
}

/** scatterAdd along the normalized dim `d` with an index whose values are known to fit (see gatherInRange). */
function scatterAddInRange(x: Tensor, d: number, index: Tensor, src: Tensor): Tensor {
  const backend = backendOf(x.device);
  requireCompute(backend, x.dtype, 'scatterAdd');
  const out = contiguousCopy(x);
  if (index.numel() > 0) backend.kernels.scatterAdd(ref(out), d, ref(index), ref(src));
  return record('ScatterAddBackward', out, [x, index, src], (g) => [g, null, src.requiresGrad ? srcGradient(gatherInRange(g, d, index), src) : null], [index]);
}

/**
 * The gradient of scatterAdd's src: g gathered at index, which has index's shape. src may be larger
 * than index (PyTorch allows it); its elements beyond index's extent were never added anywhere, so
 * their gradient is zero.
 */
export function srcGradient(picked: Tensor, src: Tensor): Tensor {
  if (picked.ndim !== src.ndim) return reshape(picked, src.shape); // 0-dim src with a 1-element index
  if (picked.shape.every((s, i) => s === src.shape[i])) return picked;
  const full = allocate(src.shape, picked.dtype, picked.device);
  const kernels = backendOf(picked.device).kernels;
  kernels.fill(ref(full), 0);
  const region = picked.shape.reduce((t, size, dim) => t.narrow(dim, 0, size), full);
  if (picked.numel() > 0) kernels.copy(ref(picked), ref(region));
  return full;
}

/** Zeros with x's shape (at least 1-D) in g's dtype and device. */
function zerosOf(x: Tensor, g: Tensor): Tensor {
  const z = allocate(x.ndim === 0 ? [1] : x.shape, g.dtype, g.device);
  if (z.numel() > 0) backendOf(g.device).kernels.fill(ref(z), 0);
  return z;
}

/** Rows (or slices along `dim`) picked by a 1-D index, as a gather with the index broadcast. */
export function indexSelect(x: Tensor, dim: number, index: Tensor): Tensor {
  checkIndex('indexSelect', index);
  schemaDevice('indexSelect', [{ name: 'self', tensor: x }, { name: 'index', tensor: index }]);
  if (index.ndim > 1) throw new ShapeError('indexSelect(): Index is supposed to be a vector', 'indexSelect');
  const d = normalizeDim(dim, x.ndim, 'indexSelect');
  if (x.ndim === 0) return gather(x, 0, reshape(index, [-1]));
  const n = index.numel();
  const idxShape = x.shape.map((_, i) => (i === d ? n : 1));
  const outShape = x.shape.map((s, i) => (i === d ? n : s));
  return gather(x, d, expand(reshape(cast(index, int32), idxShape), outShape));
}
