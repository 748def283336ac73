// The native addon's surface as the TypeScript side sees it, and where it is loaded from. The
// addon is optional: without nvcc at build time it is absent, and the backend reports why.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DTypeName } from '@core/tensor';

/** A strided view as the addon reads it: the storage's device address instead of the storage. */
export interface NativeRef {
  readonly ptr: number;
  readonly dtype: number;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

/** One GPU as the addon found it. */
export interface CudaDeviceInfo {
  /** The product name, e.g. "NVIDIA H200". */
  readonly name: string;
  /** "major.minor", e.g. "9.0". */
  readonly computeCapability: string;
  /** Device memory in bytes. */
  readonly totalMemory: number;
  /** The cuBLASLt library that was loaded (e.g. "libcublasLt.so.13"), or null (our GEMM kernels only). */
  readonly cublasLt: string | null;
}

/** What `probe()` reports: availability with the precise reason, and the devices. */
export interface CudaProbe {
  /** A device can be used. */
  readonly available: boolean;
  /** Why not, when not: "no NVIDIA driver (libcuda.so.1 not found)", "driver too old: needs ≥ …", "no device …". */
  readonly reason: string;
  /** Usable devices (0 when unavailable). */
  readonly deviceCount: number;
  /** cuDriverGetVersion (1000·major + 10·minor), 0 without a driver. */
  readonly driverVersion: number;
  /** One entry per device. */
  readonly devices: readonly CudaDeviceInfo[];
}

/** Counters of one device, for tests, benchmarks and profiling. */
export interface CudaStats {
  /** Kernel launches queued. */
  readonly launches: number;
  /** Matmuls run by cuBLASLt. */
  readonly cublasLtCalls: number;
  /** Matmuls run by our tensor-core (wmma) kernel. */
  readonly wmmaCalls: number;
  /** Matmuls run by our tiled fp32/int32 kernel. */
  readonly tiledCalls: number;
  /** Bytes copied host → device. */
  readonly h2dBytes: number;
  /** Bytes copied device → host. */
  readonly d2hBytes: number;
  /** Pinned host staging memory allocated. */
  readonly stagingBytes: number;
  /** The current GEMM selection. */
  readonly gemmMode: GemmMode;
  /** CUDA graphs launched (prepared programs' runs). */
  readonly graphLaunches: number;
  /** CUDA graphs alive (instantiated and not yet destroyed). */
  readonly graphs: number;
}

/** Which GEMM runs matmul: cuBLASLt when loaded else ours ('auto'), ours only ('own'), or cuBLASLt required ('cublaslt'). */
export type GemmMode = 'auto' | 'own' | 'cublaslt';

/** The scalars of one Adam/AdamW update, derived in double on the host. */
export interface NativeAdamScalars {
  readonly oneMinusBeta1: number;
  readonly beta2: number;
  readonly oneMinusBeta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  readonly decayFactor: number;
  readonly stepSize: number;
  readonly biasCorrection2Sqrt: number;
  readonly decoupled: boolean;
  readonly maximize: boolean;
}

/** The addon's exports (native/cuda/src/addon.cpp). */
export interface CudaAddon {
  probe(): CudaProbe;
  alloc(device: number, bytes: number): number;
  free(device: number, ptr: number): void;
  emptyCache(device: number): void;
  write(device: number, ptr: number, byteOffset: number, data: ArrayBufferView): void;
  read(device: number, ptr: number, bytes: number): Promise<ArrayBuffer>;
  synchronize(device: number): Promise<void>;
  memoryStats(device: number): { allocatedBytes: number; allocations: number; reservedBytes: number };
  stats(device: number): CudaStats;
  setGemmMode(device: number, mode: GemmMode): void;
  /** Arm a stream capture: it starts on the device the next call queues on; calls that cannot join it throw (code CUDA_NOT_CAPTURABLE or CUDA_CAPTURE_OTHER_DEVICE). */
  captureBegin(): void;
  /** Kernels and copies captured so far. */
  captureNodes(): number;
  /** End the capture and instantiate its graph (graph 0: nothing captured); null when no call queued anything. */
  captureEnd(): { device: number; graph: number; nodes: number } | null;
  /** End a capture after a failure, dropping it. */
  captureAbort(): void;
  graphLaunch(device: number, graph: number): void;
  /** NVRTC as the addon found it (dlopened on the first call): elementwise fusion needs it. */
  nvrtc(): { available: boolean; library: string; version: string; reason: string };
  /**
   * Compile a module of fused kernels (src/fusion.ts) with NVRTC for the device (cached by source and
   * architecture) and load it; returns its handle. Throws with code CUDA_FUSION_COMPILE and NVRTC's log
   * when the source does not compile.
   */
  fusedBuild(device: number, source: string): number;
  /** The program NVRTC compiles for a fused module's source: the embedded kernel headers inlined. */
  fusionProgram(source: string): string;
  /**
   * NVRTC's step of fusedBuild for an architecture, with no device: the cubin (not loaded) or the log
   * of the failure. The tests compile generated modules with a real NVRTC this way without a GPU.
   */
  fusionCompile(source: string, ccMajor: number, ccMinor: number): { ok: boolean; log: string; image: Uint8Array };
  /** Launch kernel `name` of a fused module over `numel` elements with its buffers' device addresses (captured when a capture is under way). */
  fusedLaunch(device: number, module: number, name: string, numel: number, ptrs: readonly number[]): void;
  graphDestroy(device: number, graph: number): void;
  unary(device: number, op: number, x: NativeRef, out: NativeRef): void;
  binary(device: number, op: number, a: NativeRef, b: NativeRef, out: NativeRef): void;
  compare(device: number, op: number, a: NativeRef, b: NativeRef, out: NativeRef): void;
  where(device: number, cond: NativeRef, a: NativeRef, b: NativeRef, out: NativeRef): void;
  cast(device: number, x: NativeRef, out: NativeRef): void;
  copy(device: number, x: NativeRef, out: NativeRef): void;
  fill(device: number, out: NativeRef, value: number): void;
  reduce(device: number, op: number, x: NativeRef, axes: readonly number[], out: NativeRef): void;
  argReduce(device: number, op: number, x: NativeRef, axis: number, out: NativeRef): void;
  matmul(device: number, a: NativeRef, b: NativeRef, out: NativeRef): void;
  gather(device: number, x: NativeRef, dim: number, index: NativeRef, out: NativeRef): void;
  scatterAdd(device: number, out: NativeRef, dim: number, index: NativeRef, src: NativeRef): void;
  random(device: number, out: NativeRef, key0: number, key1: number, offset: number, kind: number, low: number, range: number): void;
  argsort(device: number, x: NativeRef, axis: number, descending: boolean, out: NativeRef): void;
  cumulative(device: number, op: number, x: NativeRef, axis: number, out: NativeRef): void;
  scatter(device: number, out: NativeRef, dim: number, index: NativeRef, src: NativeRef, mode: number): void;
  softmax(device: number, x: NativeRef, dim: number, out: NativeRef, log: boolean): void;
  crossEntropy(device: number, x: NativeRef, target: NativeRef, ignoreIndex: number, labelSmoothing: number, out: NativeRef): void;
  unscaleAndCheck(device: number, grads: readonly NativeRef[], foundInf: NativeRef, invScale: NativeRef): void;
  adam(device: number, p: NativeRef, g: NativeRef, m: NativeRef, v: NativeRef, vmax: NativeRef | null, scalars: NativeAdamScalars): void;
  addcmul(device: number, x: NativeRef, t1: NativeRef, t2: NativeRef, out: NativeRef): void;
  attention(device: number, q: NativeRef, k: NativeRef, v: NativeRef, mask: NativeRef | null, scale: number, isCausal: boolean, out: NativeRef,
    logSumExp: NativeRef): void;
}

/** dtype codes shared with native/cuda/kernels/args.h (enum DType). */
export const DTYPE_CODES: Readonly<Partial<Record<DTypeName, number>>> = { float32: 0, float16: 1, bfloat16: 2, int32: 3, bool: 4 };

/** The addon's default location: build/Release/core_cuda.node in this package (dist/ is one level below the root). */
export function defaultAddonPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(here, '..', 'build', 'Release', 'core_cuda.node');
}

/** The addon, or why it cannot be loaded. CORE_CUDA_ADDON overrides the path. */
export function loadAddon(path: string = process.env.CORE_CUDA_ADDON ?? defaultAddonPath()): { addon: CudaAddon } | { reason: string } {
  if (!existsSync(path)) {
    return {
      reason: `the native addon was not built (${path} is missing: nvcc was not found when the package was built; install the CUDA toolkit and run \`pnpm --filter @core/backend-cuda build:native\`)`,
    };
  }
  try {
    const require = createRequire(import.meta.url);
    return { addon: require(path) as CudaAddon };
  } catch (e) {
    return { reason: `the native addon ${path} failed to load: ${(e as Error).message}` };
  }
}
