// Rounding a float64 value into each dtype, the way the architecture specifies storage: f32 is
// IEEE round-to-nearest-even (Math.fround); f16 and bf16 round through f32 (so an f64 value rounds
// twice, RND-7) with the library's exported bit-exact conversions, which the RND cases pin to
// PyTorch's values; int32 truncates toward zero and wraps; bool is `x != 0` (NaN is true).
import { roundToBFloat16, roundToFloat16, type DTypeName } from '@core/tensor';
import { map, type NdArray } from './ndarray.js';

/** The floating dtypes. */
export const FLOAT_DTYPES = ['float32', 'float16', 'bfloat16', 'float64'] as const satisfies readonly DTypeName[];
/** Every dtype the library has. */
export const ALL_DTYPES = ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'bool'] as const satisfies readonly DTypeName[];
export type FloatDType = (typeof FLOAT_DTYPES)[number];

export function isFloat(dtype: DTypeName): dtype is FloatDType {
  return dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16' || dtype === 'float64';
}

export function isHalf(dtype: DTypeName): boolean {
  return dtype === 'float16' || dtype === 'bfloat16';
}

/** The value `v` becomes when stored as `dtype`. */
export function roundTo(dtype: DTypeName, v: number): number {
  switch (dtype) {
    case 'float64': return v;
    case 'float32': return Math.fround(v);
    case 'float16': return roundToFloat16(v);
    case 'bfloat16': return roundToBFloat16(v);
    case 'int32': return Math.trunc(v) | 0;
    case 'bool': return v !== 0 ? 1 : 0;
    default: return dtype satisfies never;
  }
}

/** `roundTo` applied to every element. */
export function roundArray(dtype: DTypeName, a: NdArray): NdArray {
  return map(a, (v) => roundTo(dtype, v));
}

/**
 * The value an elementwise op stores: half types are computed in f32 and rounded once (TP-6), so
 * the f64 result first becomes the f32 a correct f32 computation gives, then the half value.
 */
export function storeResult(dtype: DTypeName, v: number): number {
  return isHalf(dtype) ? roundTo(dtype, Math.fround(v)) : roundTo(dtype, v);
}

/** Unit roundoff u (half an ulp of 1): the relative error of one correctly rounded operation. */
export function unitRoundoff(dtype: DTypeName): number {
  switch (dtype) {
    case 'float64': return 2 ** -53;
    case 'float32': return 2 ** -24;
    case 'float16': return 2 ** -11;
    case 'bfloat16': return 2 ** -8;
    default: return 0;
  }
}

/** The dtype reductions and matmul accumulate in (half types accumulate in f32). */
export function accumulatorOf(dtype: DTypeName): DTypeName {
  if (dtype === 'float64') return 'float64';
  return isFloat(dtype) ? 'float32' : 'int32';
}

/** Largest finite value, smallest normal, smallest subnormal of a float dtype. */
export function limits(dtype: FloatDType): {
  /** The largest finite value. */
  max: number;
  /** The smallest positive normal value. */
  tiny: number;
  /** The smallest positive subnormal value. */
  subnormal: number;
  /** The gap between 1 and the next representable value. */
  eps: number;
} {
  switch (dtype) {
    case 'float16': return { max: 65504, tiny: 2 ** -14, subnormal: 2 ** -24, eps: 2 ** -10 };
    case 'bfloat16': return { max: 3.3895313892515355e38, tiny: 2 ** -126, subnormal: 2 ** -133, eps: 2 ** -7 };
    case 'float32': return { max: 3.4028234663852886e38, tiny: 2 ** -126, subnormal: 2 ** -149, eps: 2 ** -23 };
    case 'float64': return { max: Number.MAX_VALUE, tiny: 2 ** -1022, subnormal: Number.MIN_VALUE, eps: Number.EPSILON };
    default: return dtype satisfies never;
  }
}

/**
 * PyTorch's type promotion over our dtypes (TP-1), written as a table lookup by category and width
 * rather than the library's code path: bool < int32 < floats; two different floats below f64
 * promote to f32 (f16∘bf16 = f32); anything with f64 is f64.
 */
export function promote(a: DTypeName, b: DTypeName): DTypeName {
  if (a === b) return a;
  const rank = (d: DTypeName) => (d === 'bool' ? 0 : d === 'int32' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) > rank(b) ? a : b;
  if (a === 'float64' || b === 'float64') return 'float64';
  return 'float32';
}
