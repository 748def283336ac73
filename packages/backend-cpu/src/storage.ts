import { DTYPES, hostArrayFor, type DTypeName } from '@core/tensor';
import type { WasmHeap } from './wasm/heap.js';
import { binding, HostAccess } from './bind.js';

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

/** Typed-array constructors by dtype, for views into wasm memory. */
function viewOf(dtype: DTypeName, buffer: ArrayBufferLike, address: number, length: number): CpuArray {
  switch (dtype) {
    case 'float32': return new Float32Array(buffer, address, length);
    case 'float64': return new Float64Array(buffer, address, length);
    case 'int32': return new Int32Array(buffer, address, length);
    case 'float16':
    case 'bfloat16': return new Uint16Array(buffer, address, length);
    case 'bool': return new Uint8Array(buffer, address, length);
    default: throw new TypeError(`cpu: unknown dtype '${String(dtype)}'`);
  }
}

/**
 * One allocation of the CPU backend: a host typed array plus its dtype and length. With the wasm
 * kernels on, the array is a view into the wasm heap (`address` is its byte address there), so
 * kernels in WebAssembly and in TypeScript work on the same bytes; otherwise it is a plain array.
 */
export class CpuStorage {
  /** The element type. */
  readonly dtype: DTypeName;
  /** The number of elements. */
  readonly numel: number;
  /** The size in bytes (numel × itemsize). */
  readonly byteLength: number;
  /** Byte address in the wasm heap, or -1 for a plain host array. */
  readonly address: number;
  /** The host array, or for heap storages a view made when TypeScript code first asks for it (wasm kernels use the address). */
  private array: CpuArray | null;
  private live = true;
  /** @internal The backend instance that allocated it. */
  owner: object | null = null;
  private readonly heap: WasmHeap | null;
  /** GC accounting for wasm-heap bytes (see WasmHeap.takeBallast); dropped on release. */
  private ballast: unknown;

  /** A storage of `numel` elements of `dtype` in a plain host array, zeroed. */
  constructor(dtype: DTypeName, numel: number);
  /** @internal In the backend's wasm heap when it has room, else a plain host array. */
  constructor(dtype: DTypeName, numel: number, heap?: WasmHeap);
  constructor(dtype: DTypeName, numel: number, heap?: WasmHeap) {
    this.dtype = dtype;
    this.numel = numel;
    this.byteLength = numel * bytesPerElement(dtype);
    const address = heap ? heap.alloc(this.byteLength) : -1;
    this.address = address;
    this.heap = address >= 0 ? heap! : null;
    this.ballast = this.heap ? this.heap.takeBallast() : null;
    // Heap blocks are recycled without clearing (like torch.empty); plain arrays start zeroed.
    this.array = this.heap ? null : allocArray(dtype, numel);
  }

  /** The host array; throws once the storage has been freed, so use-after-free fails loudly. */
  get data(): CpuArray {
    if (!this.live) throw new Error(`cpu: ${this.dtype} storage of ${this.numel} elements used after free()`);
    // A prepared program binding a call: the kernel reaching here is one to make, not bind (bind.ts).
    if (binding.record !== null) throw new HostAccess();
    const heap = this.heap;
    if (heap === null) return this.array!;
    // A plain (non-shared) wasm memory detaches its buffer when it grows: re-view the new one.
    const array = this.array;
    if (array !== null && array.buffer === heap.memory.buffer) return array;
    return (this.array = viewOf(this.dtype, heap.memory.buffer, this.address, this.numel));
  }

  /** True after `release()`. */
  get freed(): boolean {
    return !this.live;
  }

  /** Drops the array (and returns a heap block) so its memory can be reused even while handles to the storage survive. */
  release(): void {
    if (this.live && this.heap !== null) this.heap.free(this.address, this.byteLength);
    this.live = false;
    this.array = null;
    this.ballast = null;
  }
}
