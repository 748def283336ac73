// The oracle's one data structure: a dense row-major array of exact numbers with a shape. Written
// for clarity, not speed: every function builds a new array element by element from multi-indices,
// so each one reads like its definition. Nothing here uses @core/tensor.

/** The oracle's array: a shape and row-major float64 values (every dtype's values fit a float64 exactly). */
export interface NdArray {
  /** The size of each dim. */
  readonly shape: readonly number[];
  /** The values, row-major. */
  readonly data: Float64Array;
}

/** The number of elements of a shape (1 for []). */
export function numel(shape: readonly number[]): number {
  return shape.reduce((n, s) => n * s, 1);
}

/** An array from a shape and flat values (or a function of the flat index). */
export function nd(shape: readonly number[], values: ArrayLike<number> | ((i: number) => number) = () => 0): NdArray {
  const n = numel(shape);
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = typeof values === 'function' ? values(i) : values[i]!;
  return { shape: [...shape], data };
}

/** A 0-dim array. */
export function scalar(v: number): NdArray {
  return nd([], [v]);
}

/** A 1-D array of the values. */
export function vector(values: readonly number[]): NdArray {
  return nd([values.length], values);
}

/** Row-major strides, in elements. */
export function stridesOf(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d]!;
  }
  return strides;
}

/** The multi-index of row-major position `flat` in `shape`. */
export function unravel(flat: number, shape: readonly number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = flat % shape[d]!;
    flat = Math.floor(flat / shape[d]!);
  }
  return idx;
}

/** The row-major position of multi-index `idx` in `shape` (the inverse of `unravel`). */
export function ravel(idx: readonly number[], shape: readonly number[]): number {
  let flat = 0;
  for (let d = 0; d < shape.length; d++) flat = flat * shape[d]! + idx[d]!;
  return flat;
}

/** The element at a multi-index. */
export function at(a: NdArray, idx: readonly number[]): number {
  return a.data[ravel(idx, a.shape)]!;
}

/** out[idx] = f(idx) for every multi-index of `shape`. */
export function generate(shape: readonly number[], f: (idx: number[]) => number): NdArray {
  return nd(shape, (i) => f(unravel(i, shape)));
}

/** A new array of `f(value, flatIndex)` for every element. */
export function map(a: NdArray, f: (x: number, i: number) => number): NdArray {
  return nd(a.shape, (i) => f(a.data[i]!, i));
}

/** Whether two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

/** NumPy/PyTorch broadcasting: align from the right; sizes must match or be 1. */
export function broadcastShapes(...shapes: (readonly number[])[]): number[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let k = 0; k < rank; k++) {
    let size = 1;
    for (const s of shapes) {
      const d = s[s.length - rank + k] ?? 1;
      if (d !== 1) {
        if (size !== 1 && size !== d) throw new Error(`oracle: shapes [${shapes.map((x) => x.join(',')).join('] [')}] do not broadcast`);
        size = d;
      }
    }
    out.push(size);
  }
  return out;
}

/** `a` broadcast to `shape` (materialised). */
export function broadcastTo(a: NdArray, shape: readonly number[]): NdArray {
  const lead = shape.length - a.shape.length;
  return generate(shape, (idx) => at(a, a.shape.map((s, d) => (s === 1 ? 0 : idx[lead + d]!))));
}

/** Apply f elementwise over broadcast operands. */
export function zipWith(arrays: readonly NdArray[], f: (...xs: number[]) => number): NdArray {
  const shape = broadcastShapes(...arrays.map((a) => a.shape));
  const full = arrays.map((a) => broadcastTo(a, shape));
  return nd(shape, (i) => f(...full.map((a) => a.data[i]!)));
}

/** The same values in a new shape (one size may be -1). */
export function reshape(a: NdArray, shape: readonly number[]): NdArray {
  const known = shape.filter((s) => s !== -1);
  const resolved = shape.map((s) => (s === -1 ? numel(a.shape) / numel(known) : s));
  if (numel(resolved) !== numel(a.shape)) throw new Error(`oracle: cannot reshape [${a.shape}] to [${shape}]`);
  return { shape: resolved, data: a.data.slice() };
}

/** A copy with dims reordered: dim i of the result is dim `dims[i]` of `a`. */
export function permute(a: NdArray, dims: readonly number[]): NdArray {
  const shape = dims.map((d) => a.shape[d]!);
  return generate(shape, (idx) => {
    const src = new Array<number>(dims.length);
    dims.forEach((d, k) => { src[d] = idx[k]!; });
    return at(a, src);
  });
}

/** A copy with two dims swapped. */
export function transpose(a: NdArray, d0: number, d1: number): NdArray {
  const n = a.shape.length;
  const x = (d0 + n) % n;
  const y = (d1 + n) % n;
  const dims = a.shape.map((_, i) => (i === x ? y : i === y ? x : i));
  return permute(a, dims);
}

/** Python-style a[start:end:step] along one dim (positive step; bounds clamped). */
export function slice(a: NdArray, dim: number, start = 0, end?: number, step = 1): NdArray {
  const d = (dim + a.shape.length) % a.shape.length;
  const size = a.shape[d]!;
  const clamp = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const s = clamp(start);
  const e = Math.max(clamp(end ?? size), s);
  const shape = a.shape.slice();
  shape[d] = Math.ceil((e - s) / step);
  return generate(shape, (idx) => {
    const src = idx.slice();
    src[d] = s + idx[d]! * step;
    return at(a, src);
  });
}

/** The slice at one index of `dim`, with that dim removed (negative dim and index count from the end). */
export function select(a: NdArray, dim: number, index: number): NdArray {
  const d = (dim + a.shape.length) % a.shape.length;
  const i = index < 0 ? index + a.shape[d]! : index;
  const shape = a.shape.filter((_, k) => k !== d);
  return generate(shape, (idx) => at(a, [...idx.slice(0, d), i, ...idx.slice(d)]));
}

/** The values as a plain array, row-major. */
export function flat(a: NdArray): number[] {
  return Array.from(a.data);
}

/** A 1-D array 0, 1, …, n−1. */
export function arange(n: number): NdArray {
  return nd([n], (i) => i);
}
