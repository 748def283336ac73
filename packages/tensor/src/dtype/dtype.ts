/** The element types a tensor can hold. */
export type DTypeName = 'float32' | 'float16' | 'bfloat16' | 'int32' | 'bool' | 'float64';

/** The kind of a dtype, which drives type promotion: bool < int < float. */
export type DTypeCategory = 'bool' | 'int' | 'float';

/**
 * A dtype is a frozen singleton: compare with `===` (`x.dtype === float16`).
 * `itemsize` is bytes per element in storage; half types are stored as 16-bit words.
 */
export interface DType {
  /** 'float32', 'int32', …. */
  readonly name: DTypeName;
  /** bool, int or float. */
  readonly category: DTypeCategory;
  /** Bytes per element in storage. */
  readonly itemsize: number;
  /** True for float16, bfloat16, float32 and float64. */
  readonly isFloatingPoint: boolean;
  /** The name. */
  toString(): string;
}

function make(name: DTypeName, category: DTypeCategory, itemsize: number): DType {
  return Object.freeze({
    name,
    category,
    itemsize,
    isFloatingPoint: category === 'float',
    toString: () => name,
  });
}

/** 32-bit IEEE float: the default dtype of floating tensors. */
export const float32 = make('float32', 'float', 4);
/** 16-bit IEEE half (5-bit exponent: max 65504); computed in float32 and rounded to nearest even. */
export const float16 = make('float16', 'float', 2);
/** bfloat16: float32's exponent range with 8 bits of precision; computed in float32 and rounded to nearest even. */
export const bfloat16 = make('bfloat16', 'float', 2);
/** 64-bit IEEE double (not every backend computes it; see Capabilities). */
export const float64 = make('float64', 'float', 8);
/** 32-bit signed integer: also what PyTorch's int64 results (argmax, indices) are here. */
export const int32 = make('int32', 'int', 4);
/** Booleans, one byte each. */
export const bool = make('bool', 'bool', 1);

/** Every dtype by name. */
export const DTYPES: Readonly<Record<DTypeName, DType>> = Object.freeze({
  float32, float16, bfloat16, float64, int32, bool,
});

/** Host arrays used to move data in and out of storage, one per dtype. */
export interface HostArrayByDType {
  /** Values. */
  float32: Float32Array;
  /** IEEE binary16 bit patterns (see float32ToFloat16Bits / float16BitsToNumber). */
  float16: Uint16Array;
  /** bfloat16 bit patterns: the upper 16 bits of a float32 (see float32ToBFloat16Bits). */
  bfloat16: Uint16Array;
  /** Values. */
  float64: Float64Array;
  /** Values. */
  int32: Int32Array;
  /** 0 or 1. */
  bool: Uint8Array;
}
/** Any dtype's host array: what backends' `write` takes and `read` returns. */
export type HostArray = HostArrayByDType[DTypeName];

/** A zeroed host array of the type that carries `dtype` (by object or name). */
export function hostArrayFor(dtype: DType | DTypeName, length: number): HostArray {
  const name = typeof dtype === 'string' ? dtype : dtype.name;
  switch (name) {
    case 'float32': return new Float32Array(length);
    case 'float16':
    case 'bfloat16': return new Uint16Array(length);
    case 'float64': return new Float64Array(length);
    case 'int32': return new Int32Array(length);
    case 'bool': return new Uint8Array(length);
    default: throw new TypeError(`unknown dtype '${String(name satisfies never)}'`);
  }
}

/** Finite-number limits of a floating dtype (PyTorch's `finfo`, RND-8). */
export interface FInfo {
  /** The largest finite value. */
  readonly max: number;
  /** The smallest positive normal value. */
  readonly tiny: number;
  /** The gap between 1 and the next representable value. */
  readonly eps: number;
  /** Bits per element. */
  readonly bits: number;
}

/** The limits of a floating dtype; throws for int32 and bool. */
export function finfo(dtype: DType): FInfo {
  switch (dtype.name) {
    case 'float16': return { max: 65504, tiny: 2 ** -14, eps: 2 ** -10, bits: 16 };
    case 'bfloat16': return { max: 3.3895313892515355e38, tiny: 2 ** -126, eps: 2 ** -7, bits: 16 };
    case 'float32': return { max: 3.4028234663852886e38, tiny: 2 ** -126, eps: 2 ** -23, bits: 32 };
    case 'float64': return { max: Number.MAX_VALUE, tiny: 2 ** -1022, eps: Number.EPSILON, bits: 64 };
    default: throw new TypeError(`finfo() needs a floating dtype, got ${dtype.name}`);
  }
}
