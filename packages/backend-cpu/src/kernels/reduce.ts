// Reductions. x is read through a permuted view (kept axes first, reduced axes last), so each
// output element reduces one contiguous run of the value array. Results are kept as f64 (which
// holds every f32 or int32 accumulator exactly) and rounded once into out's dtype on store.
import type { ArgReduceOp, DTypeName, ReduceOp } from '@core/tensor';
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits } from '@core/tensor';
import type { CpuArray } from '../storage.js';
import { checkDType, numelOf, permuteRef, readValues, type Ref, scatterFrom } from './io.js';
import { normalizeAxes, normalizeAxis, sizeOf } from './strided.js';

const roundF16 = (v: number): number => float16BitsToNumber(float32ToFloat16Bits(v));
const roundBF16 = (v: number): number => bfloat16BitsToNumber(float32ToBFloat16Bits(v));

/** Rounding applied after every accumulation step; int32 accumulators are handled separately (they wrap). */
function accumulatorRounding(accumulate: DTypeName, op: string): (v: number) => number {
  switch (accumulate) {
    case 'float64': return (v) => v;
    case 'float32': return Math.fround;
    case 'float16': return roundF16;
    case 'bfloat16': return roundBF16;
    default: throw new TypeError(`cpu reduce ${op}: cannot accumulate in ${accumulate}`);
  }
}

function checkReducedShape(what: string, x: Ref, reduced: readonly number[], out: Ref): void {
  const expected = x.shape.map((d, axis) => (reduced.includes(axis) ? 1 : d));
  if (out.shape.length !== expected.length || out.shape.some((d, i) => d !== expected[i])) {
    throw new RangeError(`cpu ${what}: out has shape [${out.shape.join(', ')}], expected [${expected.join(', ')}]`);
  }
}

export function reduce(op: ReduceOp, x: Ref, axes: readonly number[], out: Ref, accumulate: DTypeName): void {
  const what = `reduce ${op}`;
  const rank = x.shape.length;
  const reduced = normalizeAxes(axes, rank, what);
  checkReducedShape(what, x, reduced, out);
  const kept = [...Array(rank).keys()].filter((a) => !reduced.includes(a));
  const length = sizeOf(reduced.map((a) => x.shape[a]));
  const outer = numelOf(out);
  if (outer === 0) return;
  if (length === 0 && (op === 'max' || op === 'min')) {
    throw new RangeError(`cpu ${what}: cannot reduce over an empty axis (core rejects empty max/min)`);
  }

  const values = readValues(permuteRef(x, [...kept, ...reduced]));
  const result = new Float64Array(outer);
  for (let o = 0; o < outer; o++) {
    const start = o * length;
    switch (op) {
      case 'sum': result[o] = sum(values, start, length, accumulate); break;
      case 'prod': result[o] = prod(values, start, length, accumulate); break;
      case 'max': result[o] = extreme(values, start, length, true); break;
      case 'min': result[o] = extreme(values, start, length, false); break;
      default: throw new TypeError(`cpu reduce: unknown op '${String(op satisfies never)}'`);
    }
  }
  scatterFrom(result, out);
}

function sum(v: CpuArray, start: number, n: number, accumulate: DTypeName): number {
  const end = start + n;
  let acc = 0;
  if (accumulate === 'float64') {
    for (let i = start; i < end; i++) acc += v[i];
  } else if (accumulate === 'float32') {
    for (let i = start; i < end; i++) acc = Math.fround(acc + v[i]);
  } else if (accumulate === 'int32') {
    for (let i = start; i < end; i++) acc = (acc + v[i]) | 0;
  } else {
    const round = accumulatorRounding(accumulate, 'sum');
    for (let i = start; i < end; i++) acc = round(acc + v[i]);
  }
  return acc;
}

function prod(v: CpuArray, start: number, n: number, accumulate: DTypeName): number {
  const end = start + n;
  let acc = 1;
  if (accumulate === 'float64') {
    for (let i = start; i < end; i++) acc *= v[i];
  } else if (accumulate === 'float32') {
    for (let i = start; i < end; i++) acc = Math.fround(acc * v[i]);
  } else if (accumulate === 'int32') {
    for (let i = start; i < end; i++) acc = Math.imul(acc, v[i]);
  } else {
    const round = accumulatorRounding(accumulate, 'prod');
    for (let i = start; i < end; i++) acc = round(acc * v[i]);
  }
  return acc;
}

/** max (or min) of a non-empty run; NaN wins. */
function extreme(v: CpuArray, start: number, n: number, isMax: boolean): number {
  const end = start + n;
  let m = v[start];
  for (let i = start; i < end; i++) {
    const x = v[i];
    if (x !== x) return NaN;
    if (isMax ? x > m : x < m) m = x;
  }
  return m;
}

export function argReduce(op: ArgReduceOp, x: Ref, axis: number, out: Ref): void {
  const what = op;
  const rank = x.shape.length;
  const a = normalizeAxis(axis, rank, what);
  checkDType(what, 'out', out, 'int32');
  const reduced = rank === 0 ? [] : [a];
  checkReducedShape(what, x, reduced, out);
  const length = rank === 0 ? 1 : x.shape[a];
  const outer = numelOf(out);
  if (outer === 0) return;
  if (length === 0) throw new RangeError(`cpu ${what}: cannot reduce over an empty axis`);

  const kept = [...Array(rank).keys()].filter((d) => d !== a);
  const values = readValues(permuteRef(x, rank === 0 ? [] : [...kept, a]));
  const result = new Int32Array(outer);
  const isMax = op === 'argmax';
  for (let o = 0; o < outer; o++) {
    const start = o * length;
    let best = values[start];
    let at = 0;
    if (best === best) {
      for (let j = 1; j < length; j++) {
        const v = values[start + j];
        if (v !== v) {
          at = j; // the first NaN is both the max and the min
          break;
        }
        if (isMax ? v > best : v < best) {
          best = v;
          at = j;
        }
      }
    }
    result[o] = at;
  }
  scatterFrom(result, out);
}
