// Moving elements between strided storage views and contiguous arrays in row-major logical
// order. Kernels read their inputs as "values" (numbers in the dtype's compute array: halves
// decoded exactly to f32), compute on contiguous arrays, and store once into the output, where
// the conversion to the output dtype (and so the single rounding of half types) happens.
import type { DTypeName, TensorRef } from '@core/tensor';
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits } from '@core/tensor';
import { allocArray, type CpuArray, type CpuStorage } from '../storage.js';
import { isContiguous, RowWalker, sizeOf } from './strided.js';

export type Ref = TensorRef<CpuStorage>;

let f16Table: Float32Array | null = null;
let bf16Table: Float32Array | null = null;

/** bits → value for every f16 bit pattern, built once (256 KiB); every f16 value is exact in f32. */
export function float16Table(): Float32Array {
  if (f16Table === null) {
    f16Table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = float16BitsToNumber(h);
  }
  return f16Table;
}

export function bfloat16Table(): Float32Array {
  if (bf16Table === null) {
    bf16Table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) bf16Table[h] = bfloat16BitsToNumber(h);
  }
  return bf16Table;
}

export function isHalf(dtype: DTypeName): boolean {
  return dtype === 'float16' || dtype === 'bfloat16';
}

export function isFloat(dtype: DTypeName): boolean {
  return dtype === 'float32' || dtype === 'float64' || dtype === 'float16' || dtype === 'bfloat16';
}

/**
 * A new array that holds values of `dtype` for computing: f32 for float32 and the half types
 * (arithmetic stored into it rounds to f32), f64, int32 (stores wrap like C), bool as u8.
 */
export function valueArray(dtype: DTypeName, length: number): CpuArray {
  return allocArray(isHalf(dtype) ? 'float32' : dtype, length);
}

export function numelOf(ref: Ref): number {
  return sizeOf(ref.shape);
}

function contiguousRange(ref: Ref): CpuArray | null {
  if (!isContiguous(ref.shape, ref.strides)) return null;
  return ref.storage.data.subarray(ref.offset, ref.offset + numelOf(ref));
}

/**
 * Copy `ref`'s elements in logical order into `dst[0..numel)`. Half bit patterns are decoded to
 * their values unless `raw`; any other conversion is the typed-array store into `dst`.
 */
export function gatherInto(ref: Ref, dst: CpuArray, raw = false): void {
  const src = ref.storage.data;
  const table = raw ? null : ref.dtype === 'float16' ? float16Table() : ref.dtype === 'bfloat16' ? bfloat16Table() : null;
  const w = new RowWalker(ref.shape, [ref.strides], [ref.offset]);
  const n = w.rowLength;
  const step = w.step[0];
  let k = 0;
  if (table !== null) {
    for (let r = 0; r < w.rows; r++, w.next()) {
      for (let j = 0, i = w.pos[0]; j < n; j++, i += step) dst[k++] = table[src[i]];
    }
  } else if (step === 1) {
    for (let r = 0; r < w.rows; r++, w.next()) {
      const start = w.pos[0];
      dst.set(src.subarray(start, start + n), k);
      k += n;
    }
  } else {
    for (let r = 0; r < w.rows; r++, w.next()) {
      for (let j = 0, i = w.pos[0]; j < n; j++, i += step) dst[k++] = src[i];
    }
  }
}

/** `ref`'s values in logical order, in its dtype's value array; no copy for contiguous non-half views. */
export function readValues(ref: Ref): CpuArray {
  if (!isHalf(ref.dtype)) {
    const direct = contiguousRange(ref);
    if (direct !== null) return direct;
  }
  const dst = valueArray(ref.dtype, numelOf(ref));
  gatherInto(ref, dst);
  return dst;
}

/** `ref`'s raw storage elements (half bit patterns undecoded) in logical order; no copy when contiguous. */
export function readRaw(ref: Ref): CpuArray {
  const direct = contiguousRange(ref);
  if (direct !== null) return direct;
  const dst = allocArray(ref.dtype, numelOf(ref));
  gatherInto(ref, dst, true);
  return dst;
}

/**
 * Store `src[0..numel)` into `out` in logical order, converting each value to out's dtype:
 * half types round to nearest even, bool is `v != 0` (NaN → 1), int32 truncates toward zero and
 * wraps, float32 rounds to nearest even. With `raw`, elements are copied as they are.
 */
export function scatterFrom(src: CpuArray, out: Ref, raw = false): void {
  const dst = out.storage.data;
  const w = new RowWalker(out.shape, [out.strides], [out.offset]);
  const n = w.rowLength;
  const step = w.step[0];
  const kind = raw ? 'plain' : out.dtype === 'float16' ? 'f16' : out.dtype === 'bfloat16' ? 'bf16' : out.dtype === 'bool' ? 'bool' : 'plain';
  let k = 0;
  for (let r = 0; r < w.rows; r++, w.next()) {
    let o = w.pos[0];
    switch (kind) {
      case 'f16':
        for (let j = 0; j < n; j++, o += step) dst[o] = float32ToFloat16Bits(src[k++]);
        break;
      case 'bf16':
        for (let j = 0; j < n; j++, o += step) dst[o] = float32ToBFloat16Bits(src[k++]);
        break;
      case 'bool':
        for (let j = 0; j < n; j++, o += step) dst[o] = src[k++] !== 0 ? 1 : 0;
        break;
      default:
        if (step === 1) {
          dst.set(src.subarray(k, k + n), o);
          k += n;
        } else {
          for (let j = 0; j < n; j++, o += step) dst[o] = src[k++];
        }
    }
  }
}

/**
 * Where a kernel writes `out`'s values: the storage itself when the view is contiguous and the
 * value array is the storage type (float32, float64, int32), otherwise a temporary that
 * `commitValues` converts and stores.
 */
export function valueBuffer(out: Ref): CpuArray {
  if (out.dtype === 'float32' || out.dtype === 'float64' || out.dtype === 'int32') {
    const direct = contiguousRange(out);
    if (direct !== null) return direct;
  }
  return valueArray(out.dtype, numelOf(out));
}

export function commitValues(out: Ref, buf: CpuArray): void {
  if (buf.buffer !== out.storage.data.buffer) scatterFrom(buf, out);
}

/** Like valueBuffer, for raw storage elements (any dtype). */
export function rawBuffer(out: Ref): CpuArray {
  return contiguousRange(out) ?? allocArray(out.dtype, numelOf(out));
}

export function commitRaw(out: Ref, buf: CpuArray): void {
  if (buf.buffer !== out.storage.data.buffer) scatterFrom(buf, out, true);
}

/** The storage element that holds `value` in `dtype` (half bit pattern, bool 0/1, or the number). */
export function encodeScalar(dtype: DTypeName, value: number): number {
  switch (dtype) {
    case 'float16': return float32ToFloat16Bits(value);
    case 'bfloat16': return float32ToBFloat16Bits(value);
    case 'bool': return value !== 0 ? 1 : 0;
    default: return value;
  }
}

/** A view of `ref` with its axes reordered (no data moves). */
export function permuteRef(ref: Ref, perm: readonly number[]): Ref {
  return {
    storage: ref.storage,
    dtype: ref.dtype,
    shape: perm.map((a) => ref.shape[a]),
    strides: perm.map((a) => ref.strides[a]),
    offset: ref.offset,
  };
}

export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function checkShape(what: string, name: string, ref: Ref, shape: readonly number[]): void {
  if (!sameShape(ref.shape, shape)) {
    throw new RangeError(`cpu ${what}: ${name} has shape [${ref.shape.join(', ')}], expected [${shape.join(', ')}]`);
  }
}

export function checkDType(what: string, name: string, ref: Ref, dtype: DTypeName): void {
  if (ref.dtype !== dtype) throw new TypeError(`cpu ${what}: ${name} is ${ref.dtype}, expected ${dtype}`);
}
