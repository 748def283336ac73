import type { Backend, Capabilities, DTypeName, DTypeSupport, FusedKernels, HostArray, Kernels, MemoryStats, PreparedCall, PrepareOptions } from '@core/tensor';
import { CpuFused, CpuKernels } from './kernels/index.js';
import { CpuPreparedProgram } from './prepared.js';
import { bytesPerElement, CpuStorage, isArrayFor } from './storage.js';
import { wasmFused, wasmKernels } from './wasm/kernels.js';
import { env } from './wasm/host.js';
import { WasmRuntime } from './wasm/runtime.js';
import { autocastSpeed, checkNativeOptions, type CpuGemmPath, type CpuNativeInfo, loadNative, nativeFused, nativeKernels } from './native.js';

export { CpuStorage } from './storage.js';

/** The contract version this backend implements; core checks its major against its own. */
const IMPLEMENTS_CONTRACT = '1.9.0';

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

/** Options of `createCpuBackend`. */
export interface CpuBackendOptions {
  /**
   * Run the hot float32 kernels (matmul unless the native path runs it, common elementwise ops, sums, softmax) in WebAssembly
   * SIMD, on worker threads where SharedArrayBuffer is available, with tensors stored in wasm
   * memory. Default: on, unless the environment variable CORE_CPU_WASM is '0'. Ignored when
   * `kernels` is given. Everything else runs the TypeScript kernels either way.
   */
  readonly wasm?: boolean;
  /**
   * Threads for the wasm kernels and the native GEMM, this one included. Default: the environment
   * variable CORE_CPU_THREADS, else the machine's cores (at most 8 for the wasm kernels).
   */
  readonly threads?: number;
  /**
   * In Node, run float32, bfloat16 and float16 matmuls (matmul, bmm, linear), large strided copies and add/sub/mul/div (a convolution's data movement), casts between float32 and the 16-bit dtypes and the 16-bit max-pool kernels in the native addon built with the package
   * (and random fills, float32 sums/max/min, softmax, logSoftmax, crossEntropy and the Adam/AdamW update)
   * (see `CpuBackend.native`). Default: on, unless the environment variable CORE_CPU_NATIVE is '0'.
   * Ignored when `kernels` is given. When the addon cannot load, the backend runs without it and
   * `native.reason` says why.
   */
  readonly native?: boolean;
  /** The addon file to load instead of the package's build/<platform>-<arch>/Release/core_cpu.node for the running platform. */
  readonly nativeAddon?: string;
  /**
   * The native GEMM to run. Default: the environment variable CORE_CPU_GEMM, else the AVX-512
   * micro-kernel where the CPU has it, else OpenBLAS where libopenblas.so.0 is installed, else the
   * AVX2 or portable micro-kernel. One the machine cannot run leaves the native path off, saying why.
   */
  readonly gemm?: CpuGemmPath;
  /**
   * false: keep wasm tensors in a plain (non-shared) memory and run on one thread, which is what
   * pages without cross-origin isolation get. Default: shared wherever SharedArrayBuffer exists.
   */
  readonly sharedMemory?: boolean;
  /** Replace the kernels wholesale (the storage stays plain host arrays). */
  readonly kernels?: Kernels<CpuStorage>;
  /** Replace the fused kernels (softmax, logSoftmax, …); default: CpuFused. */
  readonly fused?: Partial<FusedKernels<CpuStorage>>;
}

/** How the wasm kernels of a CPU backend run. */
export interface CpuWasmInfo {
  /** True once the kernels module runs (in browsers it compiles asynchronously after creation). */
  readonly active: boolean;
  /** Threads that run large kernels, this one included. */
  readonly threads: number;
  /** Whether the wasm memory is shared (SharedArrayBuffer), which worker threads need. */
  readonly shared: boolean;
  /** Whether the kernels use relaxed SIMD (fused multiply-adds; CORE_CPU_RELAXED_SIMD=0 turns it off). */
  readonly relaxedSimd: boolean;
  /** Why the kernels are not running, when they are not. */
  readonly failure: string | null;
  /** Resolves once the kernels module has started or failed. */
  readonly ready: Promise<void>;
  /** Tasks each thread has run in parallel kernels so far (index 0: the calling thread), e.g. to see that workers take part. */
  tasksRun(): number[];
}

/** The CPU backend object: a `Backend` plus what it says about its wasm and native kernels. */
export interface CpuBackend extends Backend<CpuStorage> {
  /** The wasm kernels' state, or null when the backend runs TypeScript kernels only. */
  readonly wasm: CpuWasmInfo | null;
  /**
   * Whether float32 matmuls run in the native addon: `{ loaded: true, gemm, features, threads, halfGemm }`
   * with the GEMM in use ('avx512', 'avx2', 'portable' or 'openblas'), the CPU's features, the
   * threads and the GEMM of bfloat16 and float16 matmuls ('avx512_bf16': vdpbf16ps), or `{ loaded: false, reason }` (browsers, CORE_CPU_NATIVE=0, an addon that was not
   * built or does not load), in which case the wasm or TypeScript kernels run them.
   */
  readonly native: CpuNativeInfo;
}

function wasmWanted(options: CpuBackendOptions): boolean {
  if (options.kernels) return false;
  if (options.wasm !== undefined) return options.wasm;
  return env('CORE_CPU_WASM') !== '0' && typeof WebAssembly === 'object';
}

function checkDevice(index: number, what: string): void {
  if (index !== 0) throw new RangeError(`cpu ${what}: device index ${index} does not exist (the cpu backend has one device, 0)`);
}

/** The CPU backend: storage is host typed arrays and every kernel runs synchronously. */
export function createCpuBackend(options: CpuBackendOptions = {}): CpuBackend {
  checkNativeOptions(options);
  const runtime = wasmWanted(options) ? new WasmRuntime({ threads: options.threads, sharedMemory: options.sharedMemory }) : null;
  // Parking the wasm pool before each native call leaves the cores to the native threads.
  const native = options.kernels ? { loaded: false as const, reason: 'the backend option kernels replaces every kernel' } : loadNative(options, runtime ? () => runtime.park() : undefined);
  const kernels = options.kernels ?? (runtime ? wasmKernels(runtime, CpuKernels) : CpuKernels);
  const withNativeFused = (fused: Partial<FusedKernels<CpuStorage>>) => ('info' in native ? nativeFused(native, fused) : fused);
  // Storages carry the tag of the backend that allocated them: catches double frees and foreign storages.
  const tag = {};
  let allocations = 0;
  let allocatedBytes = 0;

  function own(storage: CpuStorage, what: string): void {
    if (!(storage instanceof CpuStorage) || storage.owner !== tag || storage.freed) {
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
    capabilities: { ...CAPABILITIES, autocastSpeed: autocastSpeed(native) },

    alloc(index: number, dtype: DTypeName, numel: number): CpuStorage {
      checkDevice(index, 'alloc');
      if (!Number.isSafeInteger(numel) || numel < 0) throw new RangeError(`cpu alloc: numel must be a non-negative integer, got ${numel}`);
      const bytes = numel * bytesPerElement(dtype);
      if (bytes > MAX_BUFFER_BYTES) {
        throw new RangeError(`cpu alloc: ${numel} ${dtype} elements need ${bytes} bytes, more than the ${MAX_BUFFER_BYTES} a buffer may hold`);
      }
      const storage = new CpuStorage(dtype, numel, runtime?.heap);
      storage.owner = tag;
      allocations++;
      allocatedBytes += storage.byteLength;
      return storage;
    },

    free(storage: CpuStorage): void {
      own(storage, 'free');
      allocations--;
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
      // With the wasm kernels, reserved is the wasm heap in use (live and cached free blocks, thread scratch).
      return { allocatedBytes, allocations, reservedBytes: runtime ? runtime.heap.stats().reservedBytes : allocatedBytes };
    },

    kernels: 'info' in native ? nativeKernels(native, kernels) : kernels,
    fused: withNativeFused(runtime ? wasmFused(runtime, { ...CpuFused, ...options.fused }) : (options.fused ?? CpuFused)),

    // Bound calls, elementwise chains fused (prepared.ts): only wasm tasks can be bound, so without the wasm kernels core's replay makes each call.
    ...(runtime && { prepare: (calls: readonly PreparedCall[], options?: PrepareOptions<CpuStorage>) => new CpuPreparedProgram(runtime, calls, options) }),

    wasm: runtime && {
      get active() {
        return runtime.active;
      },
      get threads() {
        return runtime.threads;
      },
      shared: runtime.heap.shared,
      relaxedSimd: runtime.relaxedSimd,
      get failure() {
        return runtime.failure;
      },
      ready: runtime.ready,
      tasksRun: () => runtime.tasksRun(),
    },

    native: 'info' in native ? native.info : native,
  };
}
