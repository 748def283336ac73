// Kernels along one axis: argsort and the running reductions (cumsum, cumprod). x is read through a
// permuted view with the axis last, so each fibre is one contiguous run of the value array, and the
// results are stored back through the same permutation of out.
import type { CumulativeOp, DTypeName } from '@core/tensor';
import { checkDType, checkShape, permuteRef, readValues, scatterFrom, type Ref } from './io.js';
import { normalizeAxis, sizeOf } from './strided.js';

/** Axis `a` last: the permutation, and the fibre length. */
function axisLast(x: Ref, axis: number, what: string): { perm: number[]; length: number } {
  const rank = x.shape.length;
  const a = normalizeAxis(axis, rank, what);
  if (rank === 0) return { perm: [], length: 1 };
  return { perm: [...[...Array(rank).keys()].filter((d) => d !== a), a], length: x.shape[a] };
}

/** Ascending order with NaN the largest (NaNs equal each other; −0 equals +0). */
function compareValues(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  const aNaN = a !== a;
  return aNaN === (b !== b) ? 0 : aNaN ? 1 : -1;
}

/** The stable order of each fibre along `axis` (ascending or descending, NaN the largest) as int32 indices. */
export function argsort(x: Ref, axis: number, descending: boolean, out: Ref): void {
  checkShape('argsort', 'out', out, x.shape);
  checkDType('argsort', 'out', out, 'int32');
  const { perm, length } = axisLast(x, axis, 'argsort');
  const total = sizeOf(x.shape);
  if (total === 0) return;
  const values = readValues(permuteRef(x, perm));
  const result = new Int32Array(total);
  const order = new Int32Array(length);
  for (let start = 0; start < total; start += length) {
    for (let j = 0; j < length; j++) order[j] = j;
    // Ties fall back to the position, so the order is total (and stable in both directions).
    order.sort((i, j) => (descending ? compareValues(values[start + j], values[start + i]) : compareValues(values[start + i], values[start + j])) || i - j);
    result.set(order, start);
  }
  scatterFrom(result, permuteRef(out, perm));
}

/**
 * The running sum or product along `axis`, combined in index order. The running value is kept in
 * `accumulate` (f32 rounding per step, plain f64, or int32 wrapping) and each output is rounded
 * once from it into out's dtype on store.
 */
export function cumulative(op: CumulativeOp, x: Ref, axis: number, out: Ref, accumulate: DTypeName): void {
  const what = op;
  checkShape(what, 'out', out, x.shape);
  checkDType(what, 'out', out, x.dtype);
  const { perm, length } = axisLast(x, axis, what);
  const total = sizeOf(x.shape);
  if (total === 0) return;
  const isSum = op === 'cumsum';
  let step: (acc: number, v: number) => number;
  switch (accumulate) {
    case 'float64': step = isSum ? (acc, v) => acc + v : (acc, v) => acc * v; break;
    case 'float32': step = isSum ? (acc, v) => Math.fround(acc + v) : (acc, v) => Math.fround(acc * v); break;
    case 'int32': step = isSum ? (acc, v) => (acc + v) | 0 : Math.imul; break;
    default: throw new TypeError(`cpu ${what}: cannot accumulate in ${accumulate}`);
  }
  const values = readValues(permuteRef(x, perm));
  const result = new Float64Array(total); // holds every f32 or int32 running value exactly
  for (let start = 0; start < total; start += length) {
    let acc = isSum ? 0 : 1;
    for (let j = start; j < start + length; j++) result[j] = acc = step(acc, values[j]);
  }
  scatterFrom(result, permuteRef(out, perm));
}
