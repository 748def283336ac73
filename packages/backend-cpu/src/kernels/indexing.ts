// gather, scatterAdd and scatter along any dim, N-d and strided. They walk the index tensor's
// shape with the `dim` stride of the indexed tensor zeroed: the walker supplies the base offset of
// the element's fibre and the index value picks the position along `dim`.
import { float32ToBFloat16Bits, float32ToFloat16Bits, type ScatterMode } from '@core/tensor';
import { bfloat16Table, checkDType, checkShape, float16Table, type Ref } from './io.js';
import { normalizeAxis, RowWalker, spanOf, sizeOf } from './strided.js';

function withoutDim(strides: readonly number[], dim: number): number[] {
  return strides.map((s, d) => (d === dim ? 0 : s));
}

function checkIndex(what: string, x: Ref, dim: number, index: Ref, other: Ref, otherName: string): void {
  checkDType(what, 'index', index, 'int32');
  if (index.shape.length !== x.shape.length || other.shape.length !== x.shape.length) {
    throw new RangeError(`cpu ${what}: index and ${otherName} must have the rank of the indexed tensor (${x.shape.length})`);
  }
  for (let d = 0; d < x.shape.length; d++) {
    const size = index.shape[d];
    if (size > other.shape[d] || (d !== dim && size > x.shape[d])) {
      throw new RangeError(`cpu ${what}: index shape [${index.shape.join(', ')}] does not fit ${otherName} [${other.shape.join(', ')}] and the indexed tensor [${x.shape.join(', ')}] at dim ${d}`);
    }
  }
}

/**
 * PyTorch lets a 0-dim tensor stand for a 1-element vector in gather/scatter (core sends a 0-dim x
 * as shape [1] next to a 0-dim index): when no operand has rank above 1, 0-dim views become [1].
 */
function asVectors(refs: Ref[]): Ref[] {
  if (refs.some((r) => r.shape.length > 1)) return refs;
  return refs.map((r) => (r.shape.length === 0 ? { ...r, shape: [1], strides: [1] } : r));
}

/** out[…, j, …] = x[…, index[…, j, …], …] along `dim` (PyTorch's gather); out has index's shape. */
export function gather(xRef: Ref, dim: number, indexRef: Ref, outRef: Ref): void {
  const [x, index, out] = asVectors([xRef, indexRef, outRef]);
  const d = normalizeAxis(dim, x.shape.length, 'gather');
  checkShape('gather', 'out', out, index.shape);
  checkDType('gather', 'out', out, x.dtype);
  checkIndex('gather', x, d, index, out, 'out');
  const xs = x.storage.data;
  const os = out.storage.data;
  const is = index.storage.data;
  const dimStride = x.strides[d];
  const w = new RowWalker(index.shape, [index.strides, out.strides, withoutDim(x.strides, d)], [index.offset, out.offset, x.offset]);
  const n = w.rowLength;
  const [iStep, oStep, xStep] = w.step;
  for (let r = 0; r < w.rows; r++, w.next()) {
    let i = w.pos[0];
    let o = w.pos[1];
    let xb = w.pos[2];
    for (let j = 0; j < n; j++, i += iStep, o += oStep, xb += xStep) os[o] = xs[xb + is[i] * dimStride];
  }
}

/**
 * What scatterAdd and scatter walk: index's shape, with index, src and the base of out's fibre
 * along `dim` as the walker's operands (the index value supplies the position along `dim`). Null
 * when index is empty.
 */
function scatterWalk(what: string, outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref) {
  const [out, index, src] = asVectors([outRef, indexRef, srcRef]);
  const d = normalizeAxis(dim, out.shape.length, what);
  checkIndex(what, out, d, index, src, 'src');
  checkDType(what, 'src', src, out.dtype);
  if (sizeOf(index.shape) === 0) return null;
  const w = new RowWalker(index.shape, [index.strides, src.strides, withoutDim(out.strides, d)], [index.offset, src.offset, out.offset]);
  return { out, d, dimStride: out.strides[d], w, is: index.storage.data, ss: src.storage.data, os: out.storage.data };
}

/**
 * In place: out[…, index[…, j, …], …] += src[…, j, …] along `dim`, duplicates accumulating.
 * float32 adds round to f32 at every add, float64 is plain, int32 wraps, bool is a logical or.
 * Half types: the touched elements of out are decoded once, every contribution is added in f32
 * (Math.fround per add), and each touched element is rounded to the half format once at the end;
 * untouched elements keep their exact bits.
 */
export function scatterAdd(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref): void {
  const walk = scatterWalk('scatterAdd', outRef, dim, indexRef, srcRef);
  if (walk === null) return;
  const { out, dimStride, w, is, ss, os } = walk;
  const n = w.rowLength;
  const [iStep, sStep, oStep] = w.step;

  if (out.dtype === 'float16' || out.dtype === 'bfloat16') {
    // f32 accumulators for the storage range out spans (a view never overlaps itself, so each
    // offset in it is one element).
    const table = out.dtype === 'float16' ? float16Table() : bfloat16Table();
    const encode = out.dtype === 'float16' ? float32ToFloat16Bits : float32ToBFloat16Bits;
    const { lo, hi } = spanOf(out.shape, out.strides, out.offset);
    const acc = new Float32Array(hi - lo + 1);
    const touched = new Uint8Array(hi - lo + 1);
    for (let r = 0; r < w.rows; r++, w.next()) {
      let i = w.pos[0];
      let s = w.pos[1];
      let ob = w.pos[2];
      for (let j = 0; j < n; j++, i += iStep, s += sStep, ob += oStep) {
        const t = ob + is[i] * dimStride - lo;
        if (touched[t] === 0) {
          touched[t] = 1;
          acc[t] = table[os[t + lo]];
        }
        acc[t] += table[ss[s]]; // the Float32Array store makes this an f32 add
      }
    }
    for (let t = 0; t < touched.length; t++) if (touched[t] !== 0) os[t + lo] = encode(acc[t]);
    return;
  }

  const isBool = out.dtype === 'bool';
  for (let r = 0; r < w.rows; r++, w.next()) {
    let i = w.pos[0];
    let s = w.pos[1];
    let ob = w.pos[2];
    for (let j = 0; j < n; j++, i += iStep, s += sStep, ob += oStep) {
      const t = ob + is[i] * dimStride;
      // Typed-array stores round (float32) or wrap (int32) the exact f64 sum.
      os[t] = isBool ? os[t] | ss[s] : os[t] + ss[s];
    }
  }
}

/** How scatter combines the current element with a src value (numbers as the value arrays hold them). */
function combineFor(mode: ScatterMode, dtype: string): (current: number, v: number) => number {
  switch (mode) {
    case 'assign': return (_current, v) => v;
    case 'prod': return dtype === 'int32' ? Math.imul : dtype === 'bool' ? (a, b) => a & b : (a, b) => a * b;
    case 'amax': return (a, b) => (a !== a || b !== b ? NaN : a > b ? a : b);
    case 'amin': return (a, b) => (a !== a || b !== b ? NaN : a < b ? a : b);
    default: throw new TypeError(`cpu scatter: unknown mode '${String(mode satisfies never)}'`);
  }
}

/**
 * In place: out[…, index[…, j, …], …] = combine(current, src[…, j, …]) along `dim`, in index order
 * (so `assign` keeps the last of repeated indices). Each combination is rounded on store: f32 for
 * float32 (half types computed in f32, then rounded to the half format), int32 products wrap, bool
 * prod/amin are AND and amax OR. An index out of range throws before anything is written past it.
 */
export function scatter(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref, mode: ScatterMode): void {
  const walk = scatterWalk('scatter', outRef, dim, indexRef, srcRef);
  if (walk === null) return;
  const { out, d, dimStride, w, is, ss, os } = walk;
  const size = out.shape[d];
  const n = w.rowLength;
  const [iStep, sStep, oStep] = w.step;
  const half = out.dtype === 'float16' ? { table: float16Table(), encode: float32ToFloat16Bits } : out.dtype === 'bfloat16' ? { table: bfloat16Table(), encode: float32ToBFloat16Bits } : null;
  const combine = combineFor(mode, out.dtype);
  for (let r = 0; r < w.rows; r++, w.next()) {
    let i = w.pos[0];
    let s = w.pos[1];
    let ob = w.pos[2];
    for (let j = 0; j < n; j++, i += iStep, s += sStep, ob += oStep) {
      const at = is[i];
      if (at < 0 || at >= size) throw new RangeError(`cpu scatter: index ${at} is out of bounds for dimension ${d} with size ${size}`);
      const t = ob + at * dimStride;
      // Typed-array stores round (float32) or wrap (int32) the combined value.
      os[t] = half ? half.encode(Math.fround(combine(half.table[os[t]], half.table[ss[s]]))) : combine(os[t], ss[s]);
    }
  }
}
