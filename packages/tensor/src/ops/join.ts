// cat, stack and pad, written as strided copies into views of one output (no extra primitives).
import { ShapeError, ValueError } from '../errors/errors.js';
import { schemaDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { resultType } from '../dtype/promotion.js';
import { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { cast } from './elementwise.js';
import { slice, unsqueeze } from './views.js';
import { record } from '../autograd/engine.js';
import { noGrad } from '../autograd/grad-mode.js';
import { autocastOp } from '../amp/autocast.js';

function checkList(op: string, tensors: readonly Tensor[]): void {
  if (!Array.isArray(tensors) || tensors.length === 0) throw new ValueError(`${op}(): expected a non-empty list of Tensors`);
  tensors.forEach((t, i) => { if (!(t instanceof Tensor)) throw new TypeError(`${op}(): expected Tensor as element ${i} in argument 'tensors'`); });
}

/** Concatenate along a dim (promoting dtypes); autocast promotes on cpu (AC-12). */
export function cat(tensors: readonly Tensor[], dim = 0): Tensor {
  return autocastOp('cat', [tensors] as const, (ts) => catImpl(ts, dim));
}

function catImpl(tensors: readonly Tensor[], dim = 0): Tensor {
  checkList('cat', tensors);
  const device = schemaDevice('cat', tensors.map((t, i) => ({ name: `tensors[${i}]`, tensor: t })));
  // Legacy rule kept by PyTorch: 1-D empty tensors are skipped.
  const parts = tensors.filter((t) => !(t.ndim === 1 && t.shape[0] === 0));
  const dtype = resultType(...tensors);
  if (parts.length === 0) return allocate([0], dtype, device);
  const first = parts[0]!;
  if (first.ndim === 0) throw new ShapeError('cat(): zero-dimensional tensor (at position 0) cannot be concatenated', 'cat');
  const d = normalizeDim(dim, first.ndim, 'cat');
  parts.forEach((t, i) => {
    if (t.ndim !== first.ndim) throw new ShapeError(`cat(): Tensors must have same number of dimensions: got ${first.ndim} and ${t.ndim}`, 'cat');
    t.shape.forEach((s, k) => {
      if (k !== d && s !== first.shape[k]) {
        throw new ShapeError(`cat(): Sizes of tensors must match except in dimension ${d}. Expected size ${first.shape[k]} but got size ${s} for tensor number ${i} in the list.`, 'cat');
      }
    });
  });
  const shape = first.shape.slice();
  shape[d] = parts.reduce((n, t) => n + t.shape[d]!, 0);
  const out = allocate(shape, dtype, device);
  const kernels = backendOf(device).kernels;
  // Where each input starts in the output, by position: the same tensor may be listed twice.
  const starts: Array<number | undefined> = [];
  let at = 0;
  noGrad(() => {
    for (const [i, t] of tensors.entries()) {
      if (t.ndim === 1 && t.shape[0] === 0) continue; // skipped, as in `parts`
      const size = t.shape[d]!;
      starts[i] = at;
      if (t.numel() > 0) kernels.copy(ref(cast(t, dtype)), ref(slice(out, d, at, at + size)));
      at += size;
    }
  });
  // Each input's gradient is its slice of the output's.
  return record('CatBackward', out, tensors, (g) => tensors.map((t, i) => {
    const start = starts[i];
    return start === undefined || !t.requiresGrad ? null : slice(g, d, start, start + t.shape[d]!);
  }));
}

/** Join same-shaped tensors along a new dim inserted at `dim`. */
export function stack(tensors: readonly Tensor[], dim = 0): Tensor {
  return autocastOp('stack', [tensors] as const, (ts) => stackImpl(ts, dim));
}

function stackImpl(tensors: readonly Tensor[], dim = 0): Tensor {
  checkList('stack', tensors);
  const first = tensors[0]!;
  tensors.forEach((t, i) => {
    if (t.shape.length !== first.shape.length || t.shape.some((s, k) => s !== first.shape[k])) {
      throw new ShapeError(`stack expects each tensor to be equal size, but got [${first.shape.join(', ')}] at entry 0 and [${t.shape.join(', ')}] at entry ${i}`, 'stack');
    }
  });
  const d = normalizeDim(dim, first.ndim + 1, 'stack');
  return cat(tensors.map((t) => unsqueeze(t, d)), d);
}

/**
 * Constant padding like `F.pad(x, pad, 'constant', value)`: `pad` lists (before, after) pairs
 * starting from the last dim; negative amounts crop.
 */
export function pad(x: Tensor, padding: readonly number[], value = 0): Tensor {
  if (!(x instanceof Tensor)) throw new TypeError('pad(): input must be a Tensor');
  if (!Array.isArray(padding) || padding.length % 2 !== 0 || padding.length / 2 > x.ndim) {
    throw new ShapeError(`pad(): padding length must be even and at most 2 × ${x.ndim} (the input's dims), got ${padding?.length}`, 'pad');
  }
  if (padding.some((p) => !Number.isInteger(p))) throw new ShapeError(`pad(): padding must be integers, got [${padding.join(', ')}]`, 'pad');
  if (typeof value !== 'number') throw new TypeError('pad(): value must be a number');
  const shape = x.shape.slice();
  let src = detachedView(x);
  const crops: Array<[number, number, number]> = []; // dim, start in x, end in x
  const placed: Array<[number, number, number]> = []; // dim, start in out, length
  for (let i = 0; i < padding.length / 2; i++) {
    const d = x.ndim - 1 - i;
    const before = padding[2 * i]!;
    const after = padding[2 * i + 1]!;
    const size = x.shape[d]! + before + after;
    if (size < 0) throw new ShapeError(`pad(): resulting size of dimension ${d} would be ${size} (input ${x.shape[d]}, padding ${before}, ${after})`, 'pad');
    shape[d] = size;
    // Crop the source for negative padding, then place it after the positive padding.
    crops.push([d, Math.max(-before, 0), x.shape[d]! - Math.max(-after, 0)]);
    src = slice(src, d, crops[i]![1], crops[i]![2]);
    placed.push([d, Math.max(before, 0), src.shape[d]!]);
  }
  const out = allocate(shape, x.dtype, x.device);
  if (out.numel() === 0) return out;
  const kernels = backendOf(x.device).kernels;
  kernels.fill(ref(out), value);
  const region = (t: Tensor) => placed.reduce((r, [d, start, length]) => slice(r, d, start, start + length), t);
  if (src.numel() > 0) kernels.copy(ref(src), ref(region(out)));
  // The gradient is the output's gradient over the region x landed in, with zeros for cropped
  // parts: padding by the opposite amounts. Being a pad itself, it records under createGraph.
  const inverse = padding.map((p) => -p);
  return record('PadBackward', out, [x], (g) => [pad(g, inverse)]);
}

/** x's memory as a tensor outside the graph, for internal data movement. */
function detachedView(x: Tensor): Tensor {
  return Tensor._internal(x._storage, x.shape, x._strides, x._offset);
}
