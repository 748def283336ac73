// View ops: new shape/strides/offset over the same storage; only contiguousCopy touches data.
import { ShapeError } from '../errors/errors.js';
import { bfloat16, float16, float32, type DType } from '../dtype/dtype.js';
import { cast } from './elementwise.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { fusedKernel } from '../dispatch/fused.js';
import { Tensor } from '../tensor/tensor.js';
import { broadcastStrides, checkShape, inferShape, normalizeDim, numelOf, viewStrides } from '../tensor/shape.js';
import { noGrad } from '../autograd/grad-mode.js';
import { record } from '../autograd/engine.js';
import type { BackwardFn } from '../autograd/node.js';
import { inheritSite } from '../tensor/site.js';

/**
 * A view of x's storage. `backward` maps the view's gradient to x's; the default, a reshape,
 * fits every view with x's elements in x's order (view, reshape, squeeze, unsqueeze, alias).
 */
function make(x: Tensor, shape: readonly number[], strides: readonly number[], offset: number, name = 'ViewBackward', backward?: BackwardFn): Tensor {
  const out = Tensor._viewOf(x, shape, strides, offset);
  return record(name, out, [x], backward ?? ((g) => [g.reshape(x.shape)]));
}

/** A new tensor object over the same memory, still part of the graph. */
export function alias(x: Tensor): Tensor {
  return make(x, x.shape, x._strides, x._offset, 'AliasBackward');
}

/** A new tensor object over the same memory, cut from the graph (`detach()`). */
export function detach(x: Tensor): Tensor {
  return Tensor._viewOf(x, x.shape, x._strides, x._offset);
}

/** A contiguous copy of any view. */
export function contiguousCopy(x: Tensor): Tensor {
  inheritSite(x._site);
  const out = allocate(x.shape, x.dtype, x.device);
  if (x.numel() > 0) backendOf(x.device).kernels.copy(ref(x), ref(out));
  return record('CloneBackward', out, [x], (g) => [g]);
}

/**
 * Gradient of a view that picks some of x's elements: zeros, with g written where the view was.
 * It is linear in g, and its own gradient is the same view of the incoming one, so under
 * createGraph a second backward passes through it (double backward of slicing, pooling, conv).
 */
function scatterBack(x: Tensor, pick: (base: Tensor) => Tensor): BackwardFn {
  return (g) => {
    const gx = noGrad(() => {
      const out = allocate(x.shape, g.dtype, g.device);
      const kernels = backendOf(g.device).kernels;
      if (out.numel() > 0) kernels.fill(ref(out), 0);
      const region = pick(out);
      if (region.numel() > 0) kernels.copy(ref(g), ref(region));
      return out;
    });
    return [record('ViewScatterBackward', gx, [g], (gg) => [pick(gg)])];
  };
}

export function view(x: Tensor, shape: readonly number[]): Tensor {
  const target = inferShape(checkSizes(shape, 'view'), x.numel(), 'view');
  const strides = viewStrides(x.shape, x._strides, target);
  if (!strides) {
    throw new ShapeError(
      'view size is not compatible with input tensor\'s size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.',
      'view',
    );
  }
  return make(x, target, strides, x._offset);
}

export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  const target = inferShape(checkSizes(shape, 'reshape'), x.numel(), 'reshape');
  const strides = viewStrides(x.shape, x._strides, target);
  if (strides) return make(x, target, strides, x._offset);
  // The copy's own tensor lets go of its memory at once: the view returned is its only holder, so
  // the memory goes when that view does, not when the collector finds both.
  const copy = contiguousCopy(x);
  const reshaped = view(copy, target);
  copy.dispose();
  return reshaped;
}

function checkSizes(shape: readonly number[], op: string): readonly number[] {
  if (!Array.isArray(shape)) throw new ShapeError(`${op}: expected an array of sizes, got ${String(shape)}`, op);
  return shape;
}

export function permute(x: Tensor, dims: readonly number[]): Tensor {
  if (!Array.isArray(dims) || dims.length !== x.ndim) {
    throw new ShapeError(`permute: number of dims don't match in permute (got ${dims?.length}, tensor has ${x.ndim})`, 'permute');
  }
  const norm = dims.map((d) => normalizeDim(d, x.ndim, 'permute'));
  if (new Set(norm).size !== norm.length) throw new ShapeError(`permute: repeated dim in [${dims.join(', ')}]`, 'permute');
  const inverse = norm.map((_, i) => norm.indexOf(i));
  return make(x, norm.map((d) => x.shape[d]!), norm.map((d) => x._strides[d]!), x._offset, 'PermuteBackward', (g) => [g.permute(inverse)]);
}

export function transpose(x: Tensor, dim0: number, dim1: number): Tensor {
  if (x.ndim === 0) return alias(x);
  const a = normalizeDim(dim0, x.ndim, 'transpose');
  const b = normalizeDim(dim1, x.ndim, 'transpose');
  const order = x.shape.map((_, i) => i);
  order[a] = b;
  order[b] = a;
  return permute(x, order);
}

export function t(x: Tensor): Tensor {
  if (x.ndim > 2) throw new ShapeError(`t() expects a tensor with <= 2 dimensions, but self is ${x.ndim}D`, 't');
  return x.ndim < 2 ? alias(x) : transpose(x, 0, 1);
}

export function expand(x: Tensor, shape: readonly number[]): Tensor {
  const target = checkSizes(shape, 'expand').slice();
  if (target.length < x.ndim) {
    throw new ShapeError(
      `expand: the number of sizes provided (${target.length}) must be greater or equal to the number of dimensions in the tensor (${x.ndim})`,
      'expand',
    );
  }
  const lead = target.length - x.ndim;
  for (let i = 0; i < target.length; i++) {
    const own = i >= lead ? x.shape[i - lead]! : 1;
    if (target[i] === -1) {
      if (i < lead) throw new ShapeError('expand: -1 is not allowed in a leading, non-existing dimension', 'expand');
      target[i] = own;
    }
    if (own !== 1 && own !== target[i]) {
      throw new ShapeError(
        `expand: the expanded size of the tensor (${target[i]}) must match the existing size (${own}) at non-singleton dimension ${i}. Target sizes: [${shape.join(', ')}]. Tensor sizes: [${x.shape.join(', ')}]`,
        'expand',
      );
    }
  }
  checkShape(target, 'expand');
  // The engine sums the gradient over the expanded dims.
  return make(x, target, broadcastStrides(x.shape, x._strides, target), x._offset, 'ExpandBackward', (g) => [g]);
}

/** Python-style `x[start:end:step]` along one dim; bounds are clamped like Python slices. */
export function slice(x: Tensor, dim: number, start = 0, end?: number, step = 1): Tensor {
  const d = normalizeDim(dim, x.ndim, 'slice');
  if (!Number.isInteger(step) || step <= 0) throw new ShapeError(`slice: step must be a positive integer, got ${step}`, 'slice');
  const size = x.shape[d]!;
  const clampIdx = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const s = clampIdx(start);
  const e = Math.max(clampIdx(end ?? size), s);
  const shape = x.shape.slice();
  shape[d] = Math.ceil((e - s) / step);
  const strides = x._strides.slice();
  strides[d] = x._strides[d]! * step;
  return make(x, shape, strides, x._offset + s * x._strides[d]!, 'SliceBackward', scatterBack(x, (base) => slice(base, d, s, e, step)));
}

export function narrow(x: Tensor, dim: number, start: number, length: number): Tensor {
  const d = normalizeDim(dim, x.ndim, 'narrow');
  const size = x.shape[d]!;
  const s = start < 0 ? start + size : start;
  if (!Number.isInteger(s) || !Number.isInteger(length) || s < 0 || length < 0 || s + length > size) {
    throw new ShapeError(`narrow: start (${start}) + length (${length}) exceeds dimension size (${size}).`, 'narrow');
  }
  return slice(x, d, s, s + length);
}

export function select(x: Tensor, dim: number, index: number): Tensor {
  if (x.ndim === 0) throw new ShapeError('select() cannot be applied to a 0-dim tensor.', 'select');
  const d = normalizeDim(dim, x.ndim, 'select');
  const size = x.shape[d]!;
  if (!Number.isInteger(index) || index < -size || index >= size) {
    throw new ShapeError(`select: index ${index} out of range for tensor of size [${x.shape.join(', ')}] at dimension ${d}`, 'select');
  }
  const i = index < 0 ? index + size : index;
  const shape = x.shape.filter((_, k) => k !== d);
  const strides = x._strides.filter((_, k) => k !== d);
  return make(x, shape, strides, x._offset + i * x._strides[d]!, 'SelectBackward', scatterBack(x, (base) => select(base, d, i)));
}

/**
 * A view of the diagonal `offset` (above the main one when positive, below when negative) of the
 * dims dim1 and dim2: those dims are removed and the diagonal appended as the last dim, whose
 * stride steps along both at once. Any strided x, like PyTorch's.
 */
export function diagonal(x: Tensor, offset = 0, dim1 = 0, dim2 = 1): Tensor {
  const a = normalizeDim(dim1, x.ndim, 'diagonal');
  const b = normalizeDim(dim2, x.ndim, 'diagonal');
  if (a === b) throw new ShapeError(`diagonal dimensions cannot be identical ${dim1}, ${dim2}`, 'diagonal');
  if (!Number.isInteger(offset)) throw new TypeError(`diagonal(): argument 'offset' must be an integer, not ${String(offset)}`);
  const length = Math.max(Math.min(x.shape[a]! - Math.max(-offset, 0), x.shape[b]! - Math.max(offset, 0)), 0);
  const start = length === 0 ? 0 : offset >= 0 ? offset * x._strides[b]! : -offset * x._strides[a]!;
  const keep = (_: number, k: number) => k !== a && k !== b;
  const shape = [...x.shape.filter(keep), length];
  const strides = [...x._strides.filter(keep), x._strides[a]! + x._strides[b]!];
  return make(x, shape, strides, x._offset + start, 'DiagonalBackward', scatterBack(x, (base) => diagonal(base, offset, a, b)));
}

export function squeeze(x: Tensor, dim?: number | readonly number[]): Tensor {
  const dims = dim === undefined ? null : new Set((typeof dim === 'number' ? [dim] : dim).map((d) => normalizeDim(d, x.ndim, 'squeeze')));
  const keep = x.shape.map((s, i) => !(s === 1 && (dims === null || dims.has(i))));
  return make(x, x.shape.filter((_, i) => keep[i]), x._strides.filter((_, i) => keep[i]), x._offset);
}

export function unsqueeze(x: Tensor, dim: number): Tensor {
  const d = normalizeDim(dim, x.ndim + 1, 'unsqueeze');
  const shape = x.shape.slice();
  const strides = x._strides.slice();
  const inner = d < x.ndim ? x._strides[d]! * x.shape[d]! : 1;
  shape.splice(d, 0, 1);
  strides.splice(d, 0, inner);
  return make(x, shape, strides, x._offset);
}

/**
 * A view with explicit sizes and strides over x's elements (x must be contiguous), PyTorch's
 * `as_strided` relative to x: windows may overlap (unfold for convolutions and pooling). The
 * gradient sums over every place an element was viewed.
 */
export function asStrided(x: Tensor, size: readonly number[], stride: readonly number[], offset = 0): Tensor {
  const shape = checkShape(size, 'asStrided');
  if (!x.isContiguous()) throw new ShapeError('asStrided: the input must be contiguous; call .contiguous() first', 'asStrided');
  if (!Array.isArray(stride) || stride.length !== shape.length || stride.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new ShapeError(`asStrided: expected ${shape.length} non-negative integer strides, got [${stride}]`, 'asStrided');
  }
  if (!Number.isInteger(offset) || offset < 0) throw new ShapeError(`asStrided: offset must be a non-negative integer, got ${offset}`, 'asStrided');
  const last = offset + shape.reduce((acc, s, i) => acc + (s - 1) * stride[i]!, 0);
  if (numelOf(shape) > 0 && last >= x.numel()) {
    throw new ShapeError(`asStrided: size [${shape}] with stride [${stride}] and offset ${offset} reaches element ${last}, but the input has ${x.numel()}`, 'asStrided');
  }
  const backward: BackwardFn = (g) => [asStridedGradient(g, x.shape, shape, stride, offset)];
  return make(x, shape, stride, x._offset + offset, 'AsStridedBackward', backward);
}

/**
 * @internal asStrided's gradient: `g` (the view's shape) summed into a contiguous tensor of
 * `baseShape` at the places the view (`shape`, `stride`, `offset`) read. Differentiable: the summed
 * gradient is linear in g, and its gradient is the same strided view of the incoming one. Half
 * types are summed in float32 and rounded once.
 */
export function asStridedGradient(g: Tensor, baseShape: readonly number[], shape: readonly number[], stride: readonly number[], offset: number): Tensor {
  return record('StridedSumBackward', noGrad(() => stridedSum(g, baseShape, numelOf(baseShape), shape, stride, offset)), [g], (gg) => [asStrided(gg.contiguous(), shape, stride, offset)]);
}

/** Whether distinct indices of (shape, strides) always land on distinct elements (a sufficient test). */
function nonOverlapping(shape: readonly number[], strides: readonly number[]): boolean {
  const dims = shape.map((s, i) => [s, strides[i]!] as const).filter(([s]) => s > 1).sort((a, b) => a[1] - b[1]);
  let reach = 0; // the largest offset the dims so far can reach
  for (const [size, st] of dims) {
    if (st <= reach) return false;
    reach += (size - 1) * st;
  }
  return true;
}

/**
 * asStrided's gradient: the sum, into x's layout, of g at every place the view read. The view is
 * split into a few loop dims (the window offsets of an unfold) and a non-overlapping rest, which
 * is accumulated with one strided add per loop index: no scatter, so it is fast on GPUs too. A
 * backend's fused `stridedSum` does it in one pass instead (the native cpu: in cache). Half
 * types accumulate in float32 and round once at the end, as PyTorch's col2im does (a float16 conv's
 * input gradient would otherwise round once per overlapping window).
 */
function stridedSum(g: Tensor, xShape: readonly number[], n: number, shape: readonly number[], stride: readonly number[], offset: number): Tensor {
  const kernels = backendOf(g.device).kernels;
  const half = g.dtype === float16 || g.dtype === bfloat16;
  const acc = half ? float32 : g.dtype;
  const gx = allocate(xShape, acc, g.device);
  const fused = acc === float32 && numelOf(shape) > 0 ? fusedKernel(backendOf(g.device), 'stridedSum') : undefined;
  if (n > 0 && !fused) kernels.fill(ref(gx), 0);
  if (n === 0 || numelOf(shape) === 0) return half ? roundedInto(gx, g.dtype) : gx;
  const src = cast(g, acc);
  if (fused) {
    fused(ref(src), { strides: stride, offset }, ref(gx));
    if (src !== g) src.dispose();
    return half ? roundedInto(gx, g.dtype) : gx;
  }
  // Loop over the smallest dims until what remains cannot hit an element twice.
  const loop: number[] = [];
  const rest = shape.map((_, i) => i);
  const bySize = rest.slice().sort((a, b) => shape[a]! - shape[b]!);
  while (!nonOverlapping(rest.map((d) => shape[d]!), rest.map((d) => stride[d]!))) {
    const d = bySize.shift()!;
    loop.push(d);
    rest.splice(rest.indexOf(d), 1);
  }
  const restShape = rest.map((d) => shape[d]!);
  const index = new Array<number>(loop.length).fill(0);
  const combos = loop.reduce((c, d) => c * shape[d]!, 1);
  const sum = allocate(restShape, acc, g.device);
  for (let k = 0; k < combos; k++) {
    let gOffset = src._offset;
    let xOffset = offset;
    loop.forEach((d, j) => {
      gOffset += index[j]! * src._strides[d]!;
      xOffset += index[j]! * stride[d]!;
    });
    const gPart = Tensor._internal(src._storage, restShape, rest.map((d) => src._strides[d]!), gOffset);
    const target = Tensor._internal(gx._storage, restShape, rest.map((d) => stride[d]!), xOffset);
    kernels.binary('add', ref(target), ref(gPart), ref(sum));
    kernels.copy(ref(sum), ref(target));
    for (let j = loop.length - 1; j >= 0; j--) {
      if (++index[j]! < shape[loop[j]!]!) break;
      index[j] = 0;
    }
  }
  sum.dispose();
  if (src !== g) src.dispose();
  return half ? roundedInto(gx, g.dtype) : gx;
}

/** `acc` rounded once into `dtype`; the float32 accumulator is freed. */
function roundedInto(acc: Tensor, dtype: DType): Tensor {
  const out = cast(acc, dtype);
  acc.dispose();
  return out;
}

export function flatten(x: Tensor, startDim = 0, endDim = -1): Tensor {
  if (x.ndim === 0) return reshape(x, [1]);
  const s = normalizeDim(startDim, x.ndim, 'flatten');
  const e = normalizeDim(endDim, x.ndim, 'flatten');
  if (s > e) throw new ShapeError('flatten() has invalid args: start_dim cannot come after end_dim', 'flatten');
  const shape = [...x.shape.slice(0, s), numelOf(x.shape.slice(s, e + 1)), ...x.shape.slice(e + 1)];
  return reshape(x, shape);
}
