// dtype conversion. Reading decodes halves exactly; the store into out does the conversion:
// → half rounds to nearest even (an f64 value goes through f32 first, as PyTorch does),
// → int32 truncates toward zero (the Int32Array store; NaN/Inf/out of range are unspecified),
// → bool is `x != 0` with NaN true, and bool → numbers is 0/1 (the two encodings made once).
import { copy } from './copy.js';
import { checkShape, encodeScalar, readValues, type Ref, scatterFrom } from './io.js';
import { isContiguous, RowWalker, sizeOf } from './strided.js';

export function cast(x: Ref, out: Ref): void {
  checkShape('cast', 'out', out, x.shape);
  if (x.dtype === out.dtype) {
    copy(x, out); // bit for bit, so NaN payloads survive
    return;
  }
  if (x.dtype === 'bool') fromBool(x, out);
  else scatterFrom(readValues(x), out);
}

/** bool → any dtype: one of two encodings per element (a dropout mask cast to bfloat16 rounds nothing per element). */
function fromBool(x: Ref, out: Ref): void {
  const zero = encodeScalar(out.dtype, 0);
  const one = encodeScalar(out.dtype, 1);
  const src = x.storage.data;
  const dst = out.storage.data;
  if (dst instanceof Uint16Array && isContiguous(x.shape, x.strides) && isContiguous(out.shape, out.strides)) {
    boolToHalf(src as Uint8Array, x.offset, dst, out.offset, sizeOf(out.shape), one);
    return;
  }
  const w = new RowWalker(out.shape, [x.strides, out.strides], [x.offset, out.offset]);
  const n = w.rowLength;
  const [xs, os] = w.step;
  for (let r = 0; r < w.rows; r++, w.next()) {
    for (let j = 0, i = w.pos[0], o = w.pos[1]; j < n; j++, i += xs, o += os) dst[o] = src[i] !== 0 ? one : zero;
  }
}

/** A contiguous bool run into 16-bit storage, without a branch per element (a random mask would mispredict half of them). */
function boolToHalf(src: Uint8Array, from: number, dst: Uint16Array, to: number, n: number, one: number): void {
  // −b >>> 31 is 1 for any nonzero byte b and 0 for 0.
  for (let k = 0; k < n; k++) dst[to + k] = (-src[from + k] >>> 31) * one;
}
