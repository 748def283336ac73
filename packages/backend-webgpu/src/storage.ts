// Storage: one GPUBuffer per tensor storage, taken from a pool of size classes.
//
// Element layout on the device:
//   float32, int32  4 bytes, the value's bits
//   bool            4 bytes (a u32 holding 0 or 1): every kernel can write one element without
//                   touching its neighbours, and the host Uint8Array is widened/narrowed on write/read
//   float16         2 bytes: an array<f16> when the device has shader-f16, else two per u32
//   bfloat16        2 bytes, always two per u32 (no WGSL type), converted with RNE in the shader
// Buffer sizes are rounded up to a size class (≥ 256 bytes, at most 25% more than asked), so a
// freed buffer is reused by the next allocation of its class without asking the device.
import type { DTypeName } from '@core/tensor';
import type { WebGPUType } from './gpu-types.js';

export const Usage = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128 } as const;
export const MapMode = { READ: 1, WRITE: 2 } as const;

const STORAGE_USAGE = Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST;

/** Bytes one element takes on the device. */
export function deviceItemSize(dtype: DTypeName): number {
  switch (dtype) {
    case 'float32':
    case 'int32':
    case 'bool':
      return 4;
    case 'float16':
    case 'bfloat16':
      return 2;
    default:
      throw new TypeError(`webgpu: dtype '${dtype}' has no device layout`);
  }
}

/** The size class of a request: 256 bytes at least, then four classes per power of two. */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const k = Math.floor(Math.log2(bytes - 1));
  const step = 2 ** Math.max(k - 2, 0);
  return Math.ceil(bytes / step) * step;
}

/** The storage handle of the webgpu backend: a pooled GPUBuffer holding `numel` elements of `dtype`. */
export class WebGPUStorage {
  /** The element type. */
  readonly dtype: DTypeName;
  /** Number of elements. */
  readonly numel: number;
  /** Bytes the elements occupy on the device (before rounding to the size class). */
  readonly byteLength: number;
  /** The size class actually reserved. */
  readonly capacity: number;
  private buf: GPUBuffer | null;

  constructor(dtype: DTypeName, numel: number, byteLength: number, buffer: WebGPUType<'GPUBuffer'>, capacity: number) {
    this.dtype = dtype;
    this.numel = numel;
    this.byteLength = byteLength;
    this.buf = buffer;
    this.capacity = capacity;
  }

  /** The buffer; throws once the storage has been freed, so use-after-free fails loudly. */
  get buffer(): WebGPUType<'GPUBuffer'> {
    if (this.buf === null) throw new Error(`webgpu: ${this.dtype} storage of ${this.numel} elements used after free()`);
    return this.buf;
  }

  /** True after `free()`. */
  get freed(): boolean {
    return this.buf === null;
  }

  /** How many storages have been released so far (a prepared program checks its storages only after one was). */
  static releases = 0;

  /** Detach the buffer (the backend returns it to the pool). */
  release(): WebGPUType<'GPUBuffer'> {
    const b = this.buffer;
    this.buf = null;
    WebGPUStorage.releases++;
    return b;
  }
}

/**
 * Free buffers by size class. Returning a buffer is safe even while queued commands still use it:
 * every later use is encoded after them in the same queue, and host writes flush the queue first.
 * Buffers are destroyed (oldest first) when the pool holds more than `maxPooledBytes`, only right
 * after a submit (a buffer used by commands not yet submitted must not be destroyed).
 */
export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly order: { size: number; buffer: GPUBuffer }[] = [];
  pooledBytes = 0;
  /** Every buffer created by this pool and not destroyed, in bytes. */
  createdBytes = 0;

  constructor(
    private readonly create: (size: number, usage: number) => GPUBuffer,
    private readonly usage: number = STORAGE_USAGE,
    public maxPooledBytes = 256 * 2 ** 20,
  ) {}

  acquire(size: number): GPUBuffer {
    const list = this.free.get(size);
    const b = list?.pop();
    if (b) {
      this.pooledBytes -= size;
      // The buffer popped is its class's last released: search from the newest end.
      for (let i = this.order.length - 1; i >= 0; i--) {
        if (this.order[i]!.buffer === b) {
          this.order.splice(i, 1);
          break;
        }
      }
      return b;
    }
    const made = this.create(size, this.usage);
    this.createdBytes += size;
    return made;
  }

  release(size: number, buffer: GPUBuffer): void {
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(buffer);
    this.order.push({ size, buffer });
    this.pooledBytes += size;
  }

  /** Destroy pooled buffers until at most `keep` bytes stay pooled. */
  trim(keep: number): void {
    while (this.pooledBytes > keep && this.order.length > 0) {
      const { size, buffer } = this.order.shift()!;
      const list = this.free.get(size)!;
      list.splice(list.indexOf(buffer), 1);
      this.pooledBytes -= size;
      this.createdBytes -= size;
      buffer.destroy();
    }
  }
}
