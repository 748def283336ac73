import type { Backend, Capabilities, DTypeName, DTypeSupport, FusedKernels, HostArray, Kernels, MemoryStats } from '@core/tensor';
import { CpuFused, CpuKernels } from './kernels/index.js';
import { bytesPerElement, CpuStorage, isArrayFor } from './storage.js';

export { CpuStorage } from './storage.js';

/** The contract version this backend implements; core checks its major against its own. */
const IMPLEMENTS_CONTRACT = '1.0.0';

const FULL: DTypeSupport = { storage: true, compute: true };

/** Typed arrays may be larger in some engines; 2^31 − 1 bytes is safe in every current one. */
const MAX_BUFFER_BYTES = 2 ** 31 - 1;

const CAPABILITIES: Capabilities = {
  dtypes: { float32: FULL, float16: FULL, bfloat16: FULL, float64: FULL, int32: FULL, bool: FULL },
  syncRead: true,
  maxBufferBytes: MAX_BUFFER_BYTES,
  features: [],
  strictNumerics: true,
  pinnedMemory: false,
};

/** Options of `createCpuBackend`: swap in other kernel implementations over the same storage. */
export interface CpuBackendOptions {
  /** Replace the TypeScript kernels, e.g. with WebAssembly ones. */
  readonly kernels?: Kernels<CpuStorage>;
  /** Replace the fused kernels (softmax, logSoftmax); default: CpuFused. */
  readonly fused?: Partial<FusedKernels<CpuStorage>>;
}

function checkDevice(index: number, what: string): void {
  if (index !== 0) throw new RangeError(`cpu ${what}: device index ${index} does not exist (the cpu backend has one device, 0)`);
}

/** The CPU backend: storage is host typed arrays and every kernel runs synchronously. */
export function createCpuBackend(options: CpuBackendOptions = {}): Backend<CpuStorage> {
  // Storages this instance allocated and has not freed: catches double frees and foreign storages.
  const live = new Set<CpuStorage>();
  let allocatedBytes = 0;

  function own(storage: CpuStorage, what: string): void {
    if (!live.has(storage)) {
      const why = storage instanceof CpuStorage && storage.freed ? 'has already been freed' : 'was not allocated by this backend';
      throw new Error(`cpu ${what}: the storage ${why}`);
    }
  }

  function readSync(storage: CpuStorage): HostArray {
    own(storage, 'read');
    return storage.data.slice(); // a copy: the caller owns it
  }

  return {
    name: 'cpu',
    contractVersion: IMPLEMENTS_CONTRACT,
    deviceCount: 1,
    capabilities: CAPABILITIES,

    alloc(index: number, dtype: DTypeName, numel: number): CpuStorage {
      checkDevice(index, 'alloc');
      if (!Number.isSafeInteger(numel) || numel < 0) throw new RangeError(`cpu alloc: numel must be a non-negative integer, got ${numel}`);
      const bytes = numel * bytesPerElement(dtype);
      if (bytes > MAX_BUFFER_BYTES) {
        throw new RangeError(`cpu alloc: ${numel} ${dtype} elements need ${bytes} bytes, more than the ${MAX_BUFFER_BYTES} a buffer may hold`);
      }
      const storage = new CpuStorage(dtype, numel);
      live.add(storage);
      allocatedBytes += storage.byteLength;
      return storage;
    },

    free(storage: CpuStorage): void {
      own(storage, 'free');
      live.delete(storage);
      allocatedBytes -= storage.byteLength;
      storage.release();
    },

    write(storage: CpuStorage, data: HostArray, offset: number): void {
      own(storage, 'write');
      if (!isArrayFor(storage.dtype, data)) {
        throw new TypeError(`cpu write: a ${storage.dtype} storage takes its host array type, got ${data.constructor.name}`);
      }
      if (!Number.isInteger(offset) || offset < 0 || offset + data.length > storage.numel) {
        throw new RangeError(`cpu write: ${data.length} elements at offset ${offset} do not fit a storage of ${storage.numel}`);
      }
      storage.data.set(data, offset);
    },

    read(storage: CpuStorage): Promise<HostArray> {
      // Evaluated now, so a bad storage gives a rejected promise rather than a throw.
      try {
        return Promise.resolve(readSync(storage));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    readSync,

    synchronize(index: number): Promise<void> {
      checkDevice(index, 'synchronize');
      return Promise.resolve(); // kernels run synchronously
    },

    memoryStats(index: number): MemoryStats {
      checkDevice(index, 'memoryStats');
      return { allocatedBytes, allocations: live.size, reservedBytes: allocatedBytes };
    },

    kernels: options.kernels ?? CpuKernels,
    fused: options.fused ?? CpuFused,
  };
}
