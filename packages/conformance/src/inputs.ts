// Sample inputs: exact values (NdArrays already representable in their dtype) and the memory layout
// they reach the backend in. Non-contiguous layouts are views of a larger stored tensor whose other
// elements hold a sentinel, so a kernel that reads the wrong element reads a value that shows.
import { DTYPES, tensor, type Device, type DType, type DTypeName, type Tensor } from '@core/tensor';
import { limits, roundTo, type FloatDType } from './oracle/dtype.js';
import { at, generate, nd, permute, transpose, type NdArray } from './oracle/ndarray.js';
import type { Rng } from './rng.js';

/**
 * - contiguous: a fresh row-major tensor
 * - transposed: the last two dims swapped in memory and swapped back by a view
 * - strided:    every other element of the last dim, from offset 1 (step-2 slice)
 * - permuted:   rank ≥ 3, dims rotated in memory and a permute view restoring them
 * - offset:     rows 2.. of a taller tensor (non-zero storage offset, contiguous rows)
 */
export type Layout = 'contiguous' | 'transposed' | 'strided' | 'permuted' | 'offset';

export interface Input {
  readonly value: NdArray;
  readonly dtype: DTypeName;
  readonly layout?: Layout;
}

/** A value of `dtype` that never appears in samples by accident, stored where views do not look. */
export function sentinel(dtype: DTypeName): number {
  return dtype === 'bool' ? 1 : dtype === 'int32' ? -777 : 1000;
}

/** How an input is stored: the base array, the view that shows the input, and how a base gradient maps back. */
export interface Stored {
  readonly base: NdArray;
  readonly view: (t: Tensor) => Tensor;
  /** The input's gradient laid out like the base (zeros where the view does not look). */
  readonly baseGrad: (g: NdArray) => NdArray;
}

export function stored(input: Input): Stored {
  const { value } = input;
  const rank = value.shape.length;
  const layout = input.layout ?? 'contiguous';
  const fill = sentinel(input.dtype);
  if (layout === 'transposed' && rank >= 2) {
    return { base: transpose(value, -1, -2), view: (t) => t.transpose(-1, -2), baseGrad: (g) => transpose(g, -1, -2) };
  }
  if (layout === 'permuted' && rank >= 3) {
    // Stored with dims rotated left by one; permute [rank-1, 0, 1, …] restores the order.
    const rotate = [...Array(rank).keys()].map((d) => (d + 1) % rank);
    const restore = [...Array(rank).keys()].map((d) => (d + rank - 1) % rank);
    return { base: permute(value, rotate), view: (t) => t.permute(restore), baseGrad: (g) => permute(g, rotate) };
  }
  if (layout === 'strided' && rank >= 1) {
    const last = value.shape[rank - 1]!;
    const shape = [...value.shape.slice(0, -1), 2 * last + 1];
    const pick = (idx: number[], src: NdArray, other: number) => {
      const j = idx[rank - 1]!;
      return j % 2 === 1 ? at(src, [...idx.slice(0, -1), (j - 1) / 2]) : other;
    };
    return {
      base: generate(shape, (idx) => pick(idx, value, fill)),
      view: (t) => t.slice(-1, 1, undefined, 2),
      baseGrad: (g) => generate(shape, (idx) => pick(idx, g, 0)),
    };
  }
  if (layout === 'offset' && rank >= 1) {
    const shape = [value.shape[0]! + 2, ...value.shape.slice(1)];
    const pick = (idx: number[], src: NdArray, other: number) => (idx[0]! >= 2 ? at(src, [idx[0]! - 2, ...idx.slice(1)]) : other);
    return {
      base: generate(shape, (idx) => pick(idx, value, fill)),
      view: (t) => t.narrow(0, 2, value.shape[0]!),
      baseGrad: (g) => generate(shape, (idx) => pick(idx, g, 0)),
    };
  }
  return { base: value, view: (t) => t, baseGrad: (g) => g };
}

/** Upload exact values to `device` as `dtype`, with the given shape. */
export function toDevice(value: NdArray, dtype: DTypeName, device: Device, requiresGrad = false): Tensor {
  const t = tensor(Float64Array.from(value.data), { dtype: dtypeObject(dtype), device }).reshape(value.shape);
  return requiresGrad ? t.requiresGrad_() : t;
}

/** The input as a tensor on `device`, in its layout. */
export function upload(input: Input, device: Device): Tensor {
  const s = stored(input);
  return s.view(toDevice(s.base, input.dtype, device));
}

export function dtypeObject(name: DTypeName): DType {
  return DTYPES[name];
}

// ---- values ----

/** Where an op's inputs are drawn from. */
export interface Domain {
  readonly lo: number;
  readonly hi: number;
  /** Keep |x| at least this far from 0 (poles, kinks). */
  readonly awayFromZero?: number;
}

export const REAL: Domain = { lo: -3, hi: 3 };

/** Random values of `dtype` in `domain`, rounded into the dtype. */
export function randomArray(rng: Rng, dtype: DTypeName, shape: readonly number[], domain: Domain = REAL): NdArray {
  return nd(shape, () => randomValue(rng, dtype, domain));
}

export function randomValue(rng: Rng, dtype: DTypeName, domain: Domain = REAL): number {
  if (dtype === 'bool') return rng.next() < 0.5 ? 0 : 1;
  if (dtype === 'int32') {
    const lo = Math.ceil(Math.max(domain.lo * 10, -50));
    const hi = Math.floor(Math.min(domain.hi * 10, 50));
    let v = rng.int(lo, hi + 1);
    if (domain.awayFromZero && v === 0) v = 1;
    return v;
  }
  let v = rng.uniform(domain.lo, domain.hi);
  const away = domain.awayFromZero ?? 0;
  if (Math.abs(v) < away) v = v < 0 ? -away - rng.next() : away + rng.next();
  return roundTo(dtype, v);
}

/** Exactly representable edge values of a float dtype: ±0, subnormals, the smallest normals, the largest values, near-ties. */
export function floatEdges(dtype: FloatDType): number[] {
  const { max, tiny, subnormal, eps } = limits(dtype);
  const values = [0, -0, subnormal, -subnormal, subnormal * 3, tiny, -tiny, tiny * 1.5, 1, -1, 0.5, 1 + eps, -(1 + eps), 2, 3,
    max, -max, max / 2, roundTo(dtype, Math.sqrt(max)), 0.1, -2.5, 1e-3];
  return values.map((v) => roundTo(dtype, v));
}

export function intEdges(): number[] {
  return [0, 1, -1, 2, -2, 7, -7, 46340, -46341, 2147483647, -2147483648];
}

export function edges(dtype: DTypeName): number[] {
  if (dtype === 'bool') return [0, 1];
  if (dtype === 'int32') return intEdges();
  return floatEdges(dtype as FloatDType);
}

export const NONFINITE = [NaN, Infinity, -Infinity];

/** Values rounded into `dtype`, as a 1-D array. */
export function roundValues(dtype: DTypeName, values: readonly number[]): NdArray {
  return nd([values.length], values.map((v) => roundTo(dtype, v)));
}
