// Pure helpers for walking strided N-d views. Kernels iterate row by row: the innermost
// (coalesced) axis is a "row" walked with a constant step, and an odometer advances the outer
// axes, so the per-element work is one add per operand and nothing is allocated per element.

export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major strides of a contiguous tensor of `shape`. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

/** True when the view is row-major contiguous (axes of size 1 may carry any stride). */
export function isContiguous(shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    const size = shape[d];
    if (size === 0) return true;
    if (size !== 1 && strides[d] !== expected) return false;
    expected *= size;
  }
  return true;
}

/** Smallest and largest element offsets a non-empty view touches. */
export function spanOf(shape: readonly number[], strides: readonly number[], offset: number): { lo: number; hi: number } {
  let lo = offset;
  let hi = offset;
  for (let d = 0; d < shape.length; d++) {
    const reach = (shape[d] - 1) * strides[d];
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  return { lo, hi };
}

/** The axes of `rank` listed in `perm` order applied to `values` (shape or strides). */
export function permute(values: readonly number[], perm: readonly number[]): number[] {
  return perm.map((axis) => values[axis]);
}

/** Sorted, de-duplicated axes in [0, rank); negative axes count from the end. */
export function normalizeAxes(axes: readonly number[], rank: number, what: string): number[] {
  const seen = new Set<number>();
  for (const axis of axes) {
    const a = axis < 0 ? axis + rank : axis;
    if (!Number.isInteger(a) || a < 0 || a >= rank) throw new RangeError(`cpu ${what}: axis ${axis} is out of range for rank ${rank}`);
    seen.add(a);
  }
  return [...seen].sort((x, y) => x - y);
}

/** `axis` normalised into [0, rank) (a 0-dim tensor accepts 0 and -1). */
export function normalizeAxis(axis: number, rank: number, what: string): number {
  const r = Math.max(rank, 1);
  const a = axis < 0 ? axis + r : axis;
  if (!Number.isInteger(a) || a < 0 || a >= r) throw new RangeError(`cpu ${what}: dim ${axis} is out of range for rank ${rank}`);
  return a;
}

/**
 * Walks the index space `shape` for several operands at once, each with its own strides and
 * offset. Axes of size 1 are dropped and neighbouring axes merged where every operand allows it,
 * so a contiguous view becomes a single row.
 *
 *   const w = new RowWalker(shape, [x.strides, out.strides], [x.offset, out.offset]);
 *   for (let r = 0; r < w.rows; r++, w.next()) {
 *     let xi = w.pos[0], oi = w.pos[1];
 *     for (let j = 0; j < w.rowLength; j++, xi += w.step[0], oi += w.step[1]) out[oi] = x[xi];
 *   }
 */
export class RowWalker {
  /** Number of rows (0 for an empty index space). */
  readonly rows: number;
  /** Elements per row. */
  readonly rowLength: number;
  /** Per operand: the stride along a row. */
  readonly step: Float64Array;
  /** Per operand: the offset of the current row's first element. */
  readonly pos: Float64Array;

  private readonly outerSizes: number[];
  /** outerStrides[op * outerRank + axis] */
  private readonly outerStrides: Float64Array;
  private readonly index: Float64Array;
  private readonly operands: number;

  constructor(shape: readonly number[], strides: readonly (readonly number[])[], offsets: readonly number[]) {
    const ops = strides.length;
    this.operands = ops;
    this.pos = Float64Array.from(offsets);
    this.step = new Float64Array(ops);

    // Coalesce from outer to inner: merge an axis into the previous kept one when, for every
    // operand, stepping the outer axis once equals stepping the inner one `size` times.
    const sizes: number[] = [];
    const kept: number[][] = []; // kept[k][op]
    let empty = false;
    for (let d = 0; d < shape.length; d++) {
      const size = shape[d];
      if (size === 0) empty = true;
      if (size === 1) continue;
      const s = strides.map((st) => st[d]);
      const last = kept.length - 1;
      if (last >= 0 && s.every((v, op) => kept[last][op] === v * size)) {
        sizes[last] *= size;
        kept[last] = s;
      } else {
        sizes.push(size);
        kept.push(s);
      }
    }

    if (empty) {
      this.rows = 0;
      this.rowLength = 0;
      this.outerSizes = [];
      this.outerStrides = new Float64Array(0);
      this.index = new Float64Array(0);
      return;
    }
    if (sizes.length === 0) {
      // A single element (0-dim, or every axis of size 1).
      this.rows = 1;
      this.rowLength = 1;
      this.outerSizes = [];
      this.outerStrides = new Float64Array(0);
      this.index = new Float64Array(0);
      return;
    }

    const inner = sizes.length - 1;
    this.rowLength = sizes[inner];
    for (let op = 0; op < ops; op++) this.step[op] = kept[inner][op];
    this.outerSizes = sizes.slice(0, inner);
    this.rows = sizeOf(this.outerSizes);
    this.outerStrides = new Float64Array(ops * inner);
    for (let op = 0; op < ops; op++) {
      for (let d = 0; d < inner; d++) this.outerStrides[op * inner + d] = kept[d][op];
    }
    this.index = new Float64Array(inner);
  }

  /** Advance to the next row (wraps to the first after the last). */
  next(): void {
    const rank = this.outerSizes.length;
    for (let d = rank - 1; d >= 0; d--) {
      const size = this.outerSizes[d];
      if (++this.index[d] < size) {
        for (let op = 0; op < this.operands; op++) this.pos[op] += this.outerStrides[op * rank + d];
        return;
      }
      this.index[d] = 0;
      for (let op = 0; op < this.operands; op++) this.pos[op] -= this.outerStrides[op * rank + d] * (size - 1);
    }
  }
}
