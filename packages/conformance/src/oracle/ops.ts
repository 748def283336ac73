// Array-level reference ops: reductions, argmax, matmul, gather/scatter, cat/stack/pad, softmax.
// Each computes exactly in float64 and, for ops whose result is accumulated, also returns the
// magnitude that bounds a correct implementation's rounding error (Σ|terms|), from which the
// tolerance is derived. Rounding into the result dtype is the caller's job (Expected).
import { at, generate, nd, numel, type NdArray, unravel } from './ndarray.js';

/** Result of an accumulated op: the exact value and Σ|terms| per output element. */
export interface Accumulated {
  /** The exact result. */
  readonly value: NdArray;
  /** Σ|terms| per output element, which bounds the rounding error of an accumulation. */
  readonly magnitude: NdArray;
  /** Number of terms accumulated into each output element. */
  readonly length: number;
}

function normalizeAxes(axes: readonly number[] | null, rank: number): number[] {
  if (axes === null) return [...Array(rank).keys()];
  return [...new Set(axes.map((a) => (a < 0 ? a + rank : a)))].sort((x, y) => x - y);
}

/** The shape after reducing `axes` (kept as size 1 with keepdim). */
export function reducedShape(shape: readonly number[], axes: readonly number[] | null, keepdim: boolean): number[] {
  const ax = normalizeAxes(axes, shape.length);
  return keepdim ? shape.map((s, i) => (ax.includes(i) ? 1 : s)) : shape.filter((_, i) => !ax.includes(i));
}

/** Apply `combine` to the elements of each reduced fibre, in index order. */
function fold(x: NdArray, axes: readonly number[] | null, keepdim: boolean, fibre: (values: number[]) => number): NdArray {
  const ax = normalizeAxes(axes, x.shape.length);
  const kept = x.shape.map((s, i) => (ax.includes(i) ? 1 : s));
  const reducedSizes = ax.map((a) => x.shape[a]!);
  const out = generate(kept, (idx) => {
    const values: number[] = [];
    for (let r = 0; r < numel(reducedSizes); r++) {
      const sub = unravel(r, reducedSizes);
      const full = idx.slice();
      ax.forEach((a, k) => { full[a] = sub[k]!; });
      values.push(at(x, full));
    }
    return fibre(values);
  });
  return { shape: reducedShape(x.shape, axes, keepdim), data: out.data };
}

/** How many elements each output of a reduction over `axes` combines (all of them for null). */
export function reduceLength(shape: readonly number[], axes: readonly number[] | null): number {
  return normalizeAxes(axes, shape.length).reduce((n, a) => n * shape[a]!, 1);
}

/** Exact sum over `axes` (all for null), with the magnitude bound. */
export function sum(x: NdArray, axes: readonly number[] | null, keepdim = false): Accumulated {
  return {
    value: fold(x, axes, keepdim, (v) => v.reduce((s, t) => s + t, 0)),
    magnitude: fold(x, axes, keepdim, (v) => v.reduce((s, t) => s + Math.abs(t), 0)),
    length: reduceLength(x.shape, axes),
  };
}

/** Exact product over `axes` (all for null), with the magnitude bound. */
export function prod(x: NdArray, axes: readonly number[] | null, keepdim = false): Accumulated {
  const value = fold(x, axes, keepdim, (v) => v.reduce((p, t) => p * t, 1));
  return { value, magnitude: { shape: value.shape, data: value.data.map(Math.abs) }, length: reduceLength(x.shape, axes) };
}

/** max/min over axes; NaN propagates. */
export function extreme(x: NdArray, axes: readonly number[] | null, keepdim: boolean, isMax: boolean): NdArray {
  return fold(x, axes, keepdim, (v) => {
    if (v.some(Number.isNaN)) return NaN;
    return v.reduce((m, t) => (isMax ? (t > m ? t : m) : t < m ? t : m));
  });
}

/** Index of the first max/min along one axis; the first NaN counts as both. */
export function argExtreme(x: NdArray, axis: number, keepdim: boolean, isMax: boolean): NdArray {
  const src = x.shape.length === 0 ? nd([1], x.data) : x;
  return fold(src, [axis], keepdim, (v) => {
    const nan = v.findIndex(Number.isNaN);
    if (nan >= 0) return nan;
    let best = 0;
    for (let i = 1; i < v.length; i++) if (isMax ? v[i]! > v[best]! : v[i]! < v[best]!) best = i;
    return best;
  });
}

/** Variance with `correction` (Bessel's by default), two-pass. */
export function variance(x: NdArray, axes: readonly number[] | null, keepdim: boolean, correction: number): Accumulated {
  const n = reduceLength(x.shape, axes);
  const value = fold(x, axes, keepdim, (v) => {
    const mean = v.reduce((s, t) => s + t, 0) / v.length;
    return v.reduce((s, t) => s + (t - mean) ** 2, 0) / Math.max(v.length - correction, 0);
  });
  // A correct two-pass f32 computation errs by about n·u·Σ(|xᵢ| + |μ|)²/(N − c).
  const magnitude = fold(x, axes, keepdim, (v) => {
    const mean = Math.abs(v.reduce((s, t) => s + t, 0) / v.length);
    return v.reduce((s, t) => s + (Math.abs(t) + mean) ** 2, 0) / Math.max(v.length - correction, 1);
  });
  return { value, magnitude, length: n };
}

/** PyTorch's matmul by rank: dot, matrix-vector, matrix-matrix, broadcast batched. */
export function matmul(a: NdArray, b: NdArray): Accumulated {
  const a2 = a.shape.length === 1 ? { shape: [1, a.shape[0]!], data: a.data } : a;
  const b2 = b.shape.length === 1 ? { shape: [b.shape[0]!, 1], data: b.data } : b;
  const [m, k] = a2.shape.slice(-2) as [number, number];
  const n = b2.shape[b2.shape.length - 1]!;
  const batchA = a2.shape.slice(0, -2);
  const batchB = b2.shape.slice(0, -2);
  const rank = Math.max(batchA.length, batchB.length);
  const batch: number[] = [];
  for (let i = 0; i < rank; i++) {
    const da = batchA[batchA.length - rank + i] ?? 1;
    const db = batchB[batchB.length - rank + i] ?? 1;
    batch.push(da === 1 ? db : da);
  }
  const pick = (x: NdArray, xb: readonly number[], idx: readonly number[], r: number, c: number) => {
    const lead = idx.slice(rank - xb.length).map((v, i) => (xb[i] === 1 ? 0 : v));
    return at(x, [...lead, r, c]);
  };
  const compute = (abs: boolean) => generate([...batch, m, n], (idx) => {
    const bi = idx.slice(0, rank);
    const i = idx[rank]!;
    const j = idx[rank + 1]!;
    let s = 0;
    for (let p = 0; p < k; p++) {
      const t = pick(a2, batchA, bi, i, p) * pick(b2, batchB, bi, p, j);
      s += abs ? Math.abs(t) : t;
    }
    return s;
  });
  let shape = [...batch, m, n];
  if (a.shape.length === 1) shape = [...batch, n];
  if (b.shape.length === 1) shape = a.shape.length === 1 ? [...batch] : [...batch, m];
  const value = compute(false);
  const magnitude = compute(true);
  return { value: { shape, data: value.data }, magnitude: { shape, data: magnitude.data }, length: k };
}

/** out[…, j, …] = x[…, index[…, j, …], …] along `dim`; out has index's shape. */
export function gather(x: NdArray, dim: number, index: NdArray): NdArray {
  const src = x.shape.length === 0 ? nd([1], x.data) : x;
  const d = dim < 0 ? dim + Math.max(x.shape.length, 1) : dim;
  return generate(index.shape, (idx) => {
    const from = idx.length === 0 ? [0] : idx.slice();
    from[d] = at(index, idx);
    return at(src, from);
  });
}

/**
 * A copy of x with src added at index along dim; duplicates accumulate (exactly here). Returns the
 * number of contributions per element as `length` and their Σ|·| as the magnitude.
 */
export function scatterAdd(x: NdArray, dim: number, index: NdArray, src: NdArray): Accumulated {
  const d = dim < 0 ? dim + x.shape.length : dim;
  const value = nd(x.shape, x.data);
  const magnitude = nd(x.shape, (i) => Math.abs(x.data[i]!));
  const counts = new Float64Array(numel(x.shape)).fill(1);
  for (let i = 0; i < numel(index.shape); i++) {
    const idx = unravel(i, index.shape);
    const to = idx.slice();
    to[d] = index.data[i]!;
    const t = ravelInto(to, x.shape);
    const v = at(src, idx);
    value.data[t] += v;
    magnitude.data[t] += Math.abs(v);
    counts[t]! += 1;
  }
  return { value, magnitude, length: Math.max(...counts, 1) };
}

function ravelInto(idx: readonly number[], shape: readonly number[]): number {
  let f = 0;
  for (let k = 0; k < shape.length; k++) f = f * shape[k]! + idx[k]!;
  return f;
}

/** Slices along `dim` picked by a 1-D index. */
export function indexSelect(x: NdArray, dim: number, index: NdArray): NdArray {
  if (x.shape.length === 0) return nd([index.data.length], () => x.data[0]!);
  const d = dim < 0 ? dim + x.shape.length : dim;
  const shape = x.shape.map((s, i) => (i === d ? index.data.length : s));
  return generate(shape, (idx) => {
    const from = idx.slice();
    from[d] = index.data[idx[d]!]!;
    return at(x, from);
  });
}

/** Concatenate along `dim`; 1-D empty arrays are skipped (PyTorch's legacy rule). */
export function cat(parts: readonly NdArray[], dim: number): NdArray {
  const used = parts.filter((p) => !(p.shape.length === 1 && p.shape[0] === 0));
  if (used.length === 0) return nd([0]);
  const rank = used[0]!.shape.length;
  const d = dim < 0 ? dim + rank : dim;
  const shape = used[0]!.shape.slice();
  shape[d] = used.reduce((n, p) => n + p.shape[d]!, 0);
  return generate(shape, (idx) => {
    let i = idx[d]!;
    for (const p of used) {
      if (i < p.shape[d]!) {
        const from = idx.slice();
        from[d] = i;
        return at(p, from);
      }
      i -= p.shape[d]!;
    }
    throw new Error('oracle cat: index out of range');
  });
}

/** Same-shaped arrays joined along a new dim `dim`. */
export function stack(parts: readonly NdArray[], dim: number): NdArray {
  const rank = parts[0]!.shape.length + 1;
  const d = dim < 0 ? dim + rank : dim;
  const expanded = parts.map((p) => ({ shape: [...p.shape.slice(0, d), 1, ...p.shape.slice(d)], data: p.data }));
  return cat(expanded, d);
}

/** Constant padding: (before, after) pairs from the last dim; negative amounts crop. */
export function pad(x: NdArray, padding: readonly number[], value: number): NdArray {
  const rank = x.shape.length;
  const before = new Array<number>(rank).fill(0);
  const shape = x.shape.slice();
  for (let i = 0; i < padding.length / 2; i++) {
    const d = rank - 1 - i;
    before[d] = padding[2 * i]!;
    shape[d] = x.shape[d]! + padding[2 * i]! + padding[2 * i + 1]!;
  }
  return generate(shape, (idx) => {
    const from = idx.map((v, d) => v - before[d]!);
    return from.every((v, d) => v >= 0 && v < x.shape[d]!) ? at(x, from) : value;
  });
}

/** softmax along dim, with the max subtracted first (exact math; the shift changes nothing). */
export function softmax(x: NdArray, dim: number, log: boolean): NdArray {
  const rank = x.shape.length;
  if (rank === 0) return { shape: [], data: softmax(nd([1], x.data), 0, log).data };
  const d = dim < 0 ? dim + rank : dim;
  const out = nd(x.shape);
  // Visit each row (every index with idx[d] = 0) once, then write its outputs.
  const rowStarts = x.shape.map((s, i) => (i === d ? 1 : s));
  for (let r = 0; r < numel(rowStarts); r++) {
    const start = unravel(r, rowStarts);
    const positions = Array.from({ length: x.shape[d]! }, (_, k) => {
      const idx = start.slice();
      idx[d] = k;
      return ravelInto(idx, x.shape);
    });
    const row = positions.map((p) => x.data[p]!);
    const max = row.some(Number.isNaN) ? NaN : Math.max(...row);
    const logTotal = Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0));
    positions.forEach((p, k) => {
      const shifted = row[k]! - max;
      out.data[p] = log ? shifted - logTotal : Math.exp(shifted - logTotal);
    });
  }
  return out;
}

/**
 * log Σ exp over `axes`, exactly in float64: the largest finite-or-not term is factored out
 * (log Σ exp(x − m) + m), so large inputs do not overflow; an empty fibre gives −Inf.
 */
export function logsumexp(x: NdArray, axes: readonly number[], keepdim: boolean): NdArray {
  return fold(x, axes, keepdim, (values) => {
    if (values.length === 0) return -Infinity;
    if (values.some(Number.isNaN)) return NaN;
    const m = Math.max(...values);
    if (!Number.isFinite(m)) return m; // all −Inf → −Inf; any +Inf → +Inf
    return Math.log(values.reduce((s, v) => s + Math.exp(v - m), 0)) + m;
  });
}
