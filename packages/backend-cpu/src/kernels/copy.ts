// Strided copy (same dtype, raw elements) and fill.
import { checkDType, checkShape, encodeScalar, type Ref } from './io.js';
import { isContiguous, RowWalker, sizeOf } from './strided.js';

export function copy(x: Ref, out: Ref): void {
  checkShape('copy', 'out', out, x.shape);
  checkDType('copy', 'out', out, x.dtype);
  const src = x.storage.data;
  const dst = out.storage.data;
  const numel = sizeOf(x.shape);
  if (numel === 0) return;
  if (isContiguous(x.shape, x.strides) && isContiguous(out.shape, out.strides)) {
    dst.set(src.subarray(x.offset, x.offset + numel), out.offset);
    return;
  }
  const w = new RowWalker(out.shape, [x.strides, out.strides], [x.offset, out.offset]);
  const n = w.rowLength;
  const xs = w.step[0];
  const os = w.step[1];
  for (let r = 0; r < w.rows; r++, w.next()) {
    for (let j = 0, i = w.pos[0], o = w.pos[1]; j < n; j++, i += xs, o += os) dst[o] = src[i];
  }
}

/** Every element of `out` becomes `value`, stored as out's dtype stores it (halves rounded to nearest even). */
export function fill(out: Ref, value: number): void {
  const v = encodeScalar(out.dtype, value);
  const dst = out.storage.data;
  const numel = sizeOf(out.shape);
  if (numel === 0) return;
  if (isContiguous(out.shape, out.strides)) {
    dst.fill(v, out.offset, out.offset + numel);
    return;
  }
  const w = new RowWalker(out.shape, [out.strides], [out.offset]);
  const n = w.rowLength;
  const step = w.step[0];
  for (let r = 0; r < w.rows; r++, w.next()) {
    for (let j = 0, o = w.pos[0]; j < n; j++, o += step) dst[o] = v;
  }
}
