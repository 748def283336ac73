// How values are kept: every element of every dtype is a float64 number, always exactly a value of
// its dtype (rounded on store). Only the host boundary (write/read) sees the contract's typed arrays.
import {
  bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, hostArrayFor,
  roundToBFloat16, roundToFloat16, type DTypeName, type HostArray,
} from '@core/tensor';

/** The value `v` becomes when stored as `dtype` (halves round to nearest even, through f32). */
export function roundTo(dtype: DTypeName, v: number): number {
  switch (dtype) {
    case 'float64': return v;
    case 'float32': return Math.fround(v);
    case 'float16': return roundToFloat16(v);
    case 'bfloat16': return roundToBFloat16(v);
    case 'int32': return Math.trunc(v) | 0; // toward zero, wrapping like C
    case 'bool': return v !== 0 ? 1 : 0; // NaN is true
    default: throw new TypeError(`jsref: unknown dtype ${String(dtype satisfies never)}`);
  }
}

/** Host array → values. */
export function decode(dtype: DTypeName, data: HostArray): Float64Array {
  const out = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    out[i] = dtype === 'float16' ? float16BitsToNumber(v) : dtype === 'bfloat16' ? bfloat16BitsToNumber(v) : v;
  }
  return out;
}

/** Values → the dtype's host array (half types as bit patterns). */
export function encode(dtype: DTypeName, values: Float64Array): HostArray {
  const out = hostArrayFor(dtype, values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    out[i] = dtype === 'float16' ? float32ToFloat16Bits(v) : dtype === 'bfloat16' ? float32ToBFloat16Bits(v) : v;
  }
  return out;
}

/** One allocation: a device index, a dtype and the values. `values` is null once freed. */
export class JsStorage {
  values: Float64Array | null;

  constructor(readonly device: number, readonly dtype: DTypeName, readonly numel: number) {
    this.values = new Float64Array(numel);
  }

  live(what: string): Float64Array {
    if (this.values === null) throw new Error(`jsref ${what}: this ${this.dtype} storage was freed`);
    return this.values;
  }
}
