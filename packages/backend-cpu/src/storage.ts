import { DTYPES, hostArrayFor, type DTypeName } from '@core/tensor';

/** The host array behind a CPU storage: the dtype's HostArray (half types hold their 16-bit bit patterns). */
export type CpuArray = Float32Array | Float64Array | Int32Array | Uint16Array | Uint8Array;

export function bytesPerElement(dtype: DTypeName): number {
  const size = DTYPES[dtype]?.itemsize;
  if (size === undefined) throw new TypeError(`cpu: unknown dtype '${String(dtype)}'`);
  return size;
}

/** A new zeroed host array of the storage type for `dtype`. */
export function allocArray(dtype: DTypeName, length: number): CpuArray {
  return hostArrayFor(dtype, length);
}

/** True when `data` is the host array type that holds `dtype`. */
export function isArrayFor(dtype: DTypeName, data: unknown): boolean {
  switch (dtype) {
    case 'float32': return data instanceof Float32Array;
    case 'float16':
    case 'bfloat16': return data instanceof Uint16Array;
    case 'float64': return data instanceof Float64Array;
    case 'int32': return data instanceof Int32Array;
    case 'bool': return data instanceof Uint8Array;
    default: return false;
  }
}

/** One allocation of the CPU backend: a host typed array plus its dtype and length. */
export class CpuStorage {
  /** The element type. */
  readonly dtype: DTypeName;
  /** The number of elements. */
  readonly numel: number;
  /** The size in bytes (numel × itemsize). */
  readonly byteLength: number;
  private array: CpuArray | null;

  constructor(dtype: DTypeName, numel: number) {
    this.dtype = dtype;
    this.numel = numel;
    this.byteLength = numel * bytesPerElement(dtype);
    this.array = allocArray(dtype, numel);
  }

  /** The host array; throws once the storage has been freed, so use-after-free fails loudly. */
  get data(): CpuArray {
    if (this.array === null) throw new Error(`cpu: ${this.dtype} storage of ${this.numel} elements used after free()`);
    return this.array;
  }

  /** True after `release()`. */
  get freed(): boolean {
    return this.array === null;
  }

  /** Drops the array so its memory can be collected even while handles to the storage survive. */
  release(): void {
    this.array = null;
  }
}
