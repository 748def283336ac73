import type { DTypeName } from '@core/tensor';

/** Bytes per element as the cuda backend stores each dtype. */
export const ITEM_BYTES: Readonly<Partial<Record<DTypeName, number>>> = { float32: 4, float16: 2, bfloat16: 2, int32: 4, bool: 1 };

/** A device allocation of the cuda backend: a device address from its caching allocator. */
export class CudaStorage {
  /** False once freed; a freed storage must not be used again. */
  live = true;

  /** Wraps an allocation the addon returned. */
  constructor(
    /** The device index (cuda:N). */
    readonly device: number,
    /** The device address (exact in a double: CUDA addresses stay below 2^53). */
    readonly ptr: number,
    /** The element type. */
    readonly dtype: DTypeName,
    /** Elements in the allocation. */
    readonly numel: number,
  ) {}

  /** Size in bytes. */
  get byteLength(): number {
    return this.numel * (ITEM_BYTES[this.dtype] ?? 0);
  }
}
