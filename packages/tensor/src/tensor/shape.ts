// Pure shape and stride arithmetic. Strides and offsets are in elements.
import { ShapeError, ValueError } from '../errors/errors.js';

export type Shape = readonly number[];

export function numelOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** True when two shapes are the same size for every dim. */
export function sameShape(a: Shape, b: Shape): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= Math.max(shape[i]!, 1);
  }
  return strides;
}

/**
 * For backends: whether a view of `shape` with `strides` gives each element a place of its own (no
 * two indices land on one memory location), so a kernel may write it in any order, one thread per
 * element. Dims are taken by stride, each past the span of the smaller ones; negative strides count
 * by their size.
 */
export function isNonOverlapping(shape: Shape, strides: readonly number[]): boolean {
  const dims = shape.map((size, d) => ({ size, stride: Math.abs(strides[d]!) })).filter((x) => x.size > 1).sort((a, b) => a.stride - b.stride);
  let span = 1;
  for (const { size, stride } of dims) {
    if (stride < span) return false;
    span = stride * (size - 1) + 1;
  }
  return true;
}

export function isContiguous(shape: Shape, strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === 1) continue; // the stride of a size-1 dim never matters
    if (strides[i] !== expected) return false;
    expected *= shape[i]!;
  }
  return true;
}

/** Validate a user-given shape: non-negative integers. */
export function checkShape(shape: unknown, op: string): number[] {
  if (!Array.isArray(shape)) throw new ShapeError(`${op}: shape must be an array of sizes, got ${String(shape)}`, op);
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new ShapeError(`${op}: sizes must be non-negative integers, got [${shape.join(', ')}]`, op);
    }
  }
  return shape.slice();
}

/** Wrap a possibly negative dim into [0, rank); rank-0 tensors accept dims -1 and 0 (PyTorch). */
export function normalizeDim(dim: number, rank: number, op: string): number {
  const r = Math.max(rank, 1);
  if (!Number.isInteger(dim) || dim < -r || dim >= r) {
    throw new ShapeError(
      `${op}: Dimension out of range (expected to be in range of [${-r}, ${r - 1}], but got ${dim})`,
      op,
    );
  }
  return dim < 0 ? dim + r : dim;
}

/** Broadcast shapes right-aligned (NumPy/PyTorch rules). */
export function broadcastShapes(shapes: readonly Shape[], op: string): number[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const o = rank - s.length + i;
      const d = s[i]!;
      if (d === out[o] || d === 1) continue;
      if (out[o] === 1) out[o] = d;
      else {
        throw new ShapeError(
          `${op}: The size of tensor a (${out[o]}) must match the size of tensor b (${d}) at non-singleton dimension ${o}` +
            ` (shapes ${shapes.map((x) => `[${x.join(', ')}]`).join(' and ')} cannot broadcast)`,
          op,
        );
      }
    }
  }
  return out;
}

/** Strides that view `shape`/`strides` as the larger broadcast `target` (stride 0 on new/expanded dims). */
export function broadcastStrides(shape: Shape, strides: readonly number[], target: Shape): number[] {
  const out = new Array<number>(target.length).fill(0);
  const lead = target.length - shape.length;
  for (let i = 0; i < shape.length; i++) out[lead + i] = shape[i] === 1 && target[lead + i] !== 1 ? 0 : strides[i]!;
  return out;
}

/** Resolve a reshape target with at most one -1. */
export function inferShape(target: readonly number[], numel: number, op: string): number[] {
  let infer = -1;
  let known = 1;
  for (let i = 0; i < target.length; i++) {
    const d = target[i]!;
    if (d === -1) {
      if (infer >= 0) throw new ShapeError(`${op}: only one dimension can be inferred`, op);
      infer = i;
    } else if (!Number.isInteger(d) || d < 0) {
      throw new ShapeError(`${op}: invalid shape dimension ${d} in [${target.join(', ')}]`, op);
    } else known *= d;
  }
  const out = target.slice();
  if (infer >= 0) {
    if (known === 0 || numel % known !== 0) {
      throw new ShapeError(`${op}: shape '[${target.join(', ')}]' is invalid for input of size ${numel}`, op);
    }
    out[infer] = numel / known;
  } else if (known !== numel) {
    throw new ShapeError(`${op}: shape '[${target.join(', ')}]' is invalid for input of size ${numel}`, op);
  }
  return out;
}

/**
 * Strides for viewing (shape, strides) as `target` without copying, or null when the memory
 * layout does not allow it (then reshape copies and view throws). Groups of dims that are
 * contiguous with each other can be split and merged freely.
 */
export function viewStrides(shape: Shape, strides: readonly number[], target: Shape): number[] | null {
  const numel = numelOf(shape);
  if (numel === 0 || target.length === 0 || shape.length === 0) return contiguousStrides(target);
  // Drop size-1 dims: their strides are irrelevant.
  const dims: number[] = [];
  const strs: number[] = [];
  for (let i = 0; i < shape.length; i++) if (shape[i] !== 1) { dims.push(shape[i]!); strs.push(strides[i]!); }
  const out = new Array<number>(target.length);
  let ti = 0;
  let di = 0;
  while (ti < target.length || di < dims.length) {
    // Skip size-1 target dims: any stride works.
    if (ti < target.length && target[ti] === 1) { out[ti] = 1; ti++; continue; }
    if (di >= dims.length) return null;
    // Take one chunk of source dims that are mutually contiguous and match a run of target dims.
    let chunk = dims[di]!;
    let chunkEnd = di;
    let want = 1;
    const tStart = ti;
    while (ti < target.length && want * target[ti]! <= chunk) {
      want *= target[ti]!;
      ti++;
      if (want === chunk) break;
    }
    while (want !== chunk) {
      // Extend the source chunk only if the next dim is contiguous with it.
      if (chunkEnd + 1 >= dims.length || strs[chunkEnd]! !== strs[chunkEnd + 1]! * dims[chunkEnd + 1]!) return null;
      chunkEnd++;
      chunk *= dims[chunkEnd]!;
      while (ti < target.length && want * target[ti]! <= chunk) {
        want *= target[ti]!;
        ti++;
        if (want === chunk) break;
      }
      if (ti >= target.length && want !== chunk && chunkEnd + 1 >= dims.length) return null;
    }
    // Assign strides to target dims tStart..ti-1 from the innermost stride of the chunk.
    let s = strs[chunkEnd]!;
    for (let k = ti - 1; k >= tStart; k--) {
      out[k] = s;
      s *= target[k]!;
    }
    di = chunkEnd + 1;
  }
  return out;
}

export function checkFiniteNumber(value: unknown, what: string, op: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ValueError(`${op}: ${what} must be a finite number, got ${String(value)}`);
  }
  return value;
}
