// The native kernel path of the cpu device in Node: an N-API addon (native/cpu, built into
// build/Release/core_cpu.node when the package is built where cmake and a C++ compiler are) whose
// fp32 GEMM runs AVX-512 or AVX2 FMA micro-kernels, or OpenBLAS where that is installed. Loading
// never throws: any failure (not Node, not built, turned off, a broken file) leaves the wasm and
// TypeScript kernels in charge and says why in one line.
import type { DTypeName, Kernels } from '@core/tensor';
import type { Ref } from './kernels/io.js';
import { matmulShapesMatch } from './kernels/matmul.js';
import { sizeOf } from './kernels/strided.js';
import type { CpuStorage } from './storage.js';
import { defaultThreads, env, isNode, nodeModule } from './wasm/host.js';

/**
 * Below this many flops (2·b·m·n·k; a 32³ product) the wasm or TypeScript kernel is faster: the
 * addon call and the packing cost more than the product (measured: 1.4 µs native against 0.5 µs wasm at 4³).
 */
const NATIVE_MIN_FLOPS = 1 << 16;
/** Below this many flops (a 128³ product) the GEMM runs on one thread: waking the pool costs more than it saves. */
const NATIVE_PARALLEL_FLOPS = 1 << 22;

/**
 * A GEMM implementation of the native addon: its AVX-512 or AVX2+FMA micro-kernels, its portable
 * C++ kernel (CPUs with neither), or OpenBLAS's `cblas_sgemm` (libopenblas.so.0, when installed).
 */
export type CpuGemmPath = 'avx512' | 'avx2' | 'portable' | 'openblas';

const GEMM_PATHS: readonly CpuGemmPath[] = ['avx512', 'avx2', 'portable', 'openblas'];

/** The native path is running: float32 matmuls (matmul, bmm, linear) go through it. */
export interface CpuNativeLoaded {
  /** The addon is loaded and runs float32 matmuls. */
  readonly loaded: true;
  /** The GEMM that float32 matmuls run. */
  readonly gemm: CpuGemmPath;
  /** The CPU's features as CPUID (and the OS) report them, e.g. 'avx2', 'fma', 'avx512f', 'avx512_bf16'. */
  readonly features: readonly string[];
  /** Threads a large GEMM runs on, the calling one included. */
  readonly threads: number;
}

/** The native path is not running, and why (one line); the wasm and TypeScript kernels do the work. */
export interface CpuNativeUnavailable {
  /** The addon does not run. */
  readonly loaded: false;
  /** Why, in one line: e.g. 'turned off by CORE_CPU_NATIVE=0', or the path of an addon that was not built or failed to load and the error. */
  readonly reason: string;
}

/** What `backend.native` reports: which kernel path float32 matmuls take. */
export type CpuNativeInfo = CpuNativeLoaded | CpuNativeUnavailable;

/** The addon's surface (native/cpu/src/addon.cpp). */
interface CpuAddon {
  info(): { features: string[]; kernels: CpuGemmPath[]; openblas: boolean; openblasDetail: string; cores: number };
  gemm(a: Float32Array, b: Float32Array, out: Float32Array, params: Float64Array, kind: CpuGemmPath): CpuGemmPath;
}

/** How the native path is chosen (the backend options of the same names). */
export interface NativeChoice {
  readonly native?: boolean;
  readonly nativeAddon?: string;
  readonly gemm?: CpuGemmPath;
  readonly threads?: number;
}

/** The loaded native path: what it reports and the matmul it runs. */
export interface NativePath {
  readonly info: CpuNativeLoaded;
  /**
   * Runs a float32 matmul natively and returns true, or returns false (doing nothing) for what it
   * does not take. `threads` overrides the choice by size (one thread below NATIVE_PARALLEL_FLOPS).
   */
  matmul(a: Ref, b: Ref, out: Ref, accumulate: DTypeName, threads?: number): boolean;
}

/** The addon's default location: build/Release/core_cpu.node in this package (src/ and dist/ are one level below its root). */
function defaultAddonPath(): string | undefined {
  const url = nodeModule<typeof import('node:url')>('node:url');
  const path = nodeModule<typeof import('node:path')>('node:path');
  if (!url || !path) return undefined;
  return path.join(path.dirname(url.fileURLToPath(import.meta.url)), '..', 'build', 'Release', 'core_cpu.node');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function requireAddon(path: string): CpuAddon | string {
  const fs = nodeModule<typeof import('node:fs')>('node:fs');
  const module = nodeModule<typeof import('node:module')>('node:module');
  if (!fs || !module) return 'Node built-in modules are not reachable (process.getBuiltinModule needs Node ≥ 20.16)';
  if (!fs.existsSync(path)) {
    return `the native addon was not built (${path} is missing: cmake or a C++ compiler was absent when the package was built; run \`pnpm --filter @core/backend-cpu build:native\`)`;
  }
  try {
    const addon = module.createRequire(path)(path) as Partial<CpuAddon>;
    if (typeof addon.info !== 'function' || typeof addon.gemm !== 'function') return `${path} is not the cpu backend's addon (it has no info() and gemm())`;
    return addon as CpuAddon;
  } catch (error) {
    return `the native addon ${path} failed to load: ${(error as Error).message}`;
  }
}

/**
 * The GEMM to run: the one asked for (option, else CORE_CPU_GEMM) if this machine has it; else the
 * AVX-512 micro-kernel where the CPU has it (it outran OpenBLAS 0.3.21's cblas_sgemm on the
 * AVX-512 Xeon this was measured on), else OpenBLAS when installed (its tuned AVX2 kernels), else
 * the widest micro-kernel.
 */
function chooseGemm(info: ReturnType<CpuAddon['info']>, wanted: string | undefined, from: string): CpuGemmPath | string {
  const available: CpuGemmPath[] = info.openblas ? [...info.kernels, 'openblas'] : info.kernels;
  if (wanted === undefined || wanted === '' || wanted === 'auto') return info.kernels[0] !== 'avx512' && info.openblas ? 'openblas' : info.kernels[0];
  if (available.includes(wanted as CpuGemmPath)) return wanted as CpuGemmPath;
  const why = wanted === 'openblas' ? `OpenBLAS is not available (${info.openblasDetail})` : `this machine runs only ${available.join(', ')}`;
  return `${from} asks for the '${wanted}' GEMM, but ${why}`;
}

/** Checks the backend options that steer the native path, naming a bad one. */
export function checkNativeOptions(options: NativeChoice): void {
  if (options.gemm !== undefined && !GEMM_PATHS.includes(options.gemm)) {
    throw new TypeError(`createCpuBackend: option gemm must be one of ${GEMM_PATHS.map((p) => `'${p}'`).join(', ')}, got ${JSON.stringify(options.gemm)}`);
  }
  if (options.nativeAddon !== undefined && typeof options.nativeAddon !== 'string') {
    throw new TypeError(`createCpuBackend: option nativeAddon must be a file path string, got ${typeof options.nativeAddon}`);
  }
}

/** Loads the native path, or says in one line why it does not run. Never throws. */
export function loadNative(options: NativeChoice): NativePath | CpuNativeUnavailable {
  const off = (reason: string): CpuNativeUnavailable => ({ loaded: false, reason: oneLine(reason) });
  if (options.native === false) return off('turned off by the backend option native: false');
  if (options.native === undefined && env('CORE_CPU_NATIVE') === '0') return off('turned off by CORE_CPU_NATIVE=0');
  if (!isNode()) return off('native kernels run only in Node');
  const path = options.nativeAddon ?? defaultAddonPath();
  if (path === undefined) return off('Node built-in modules are not reachable (process.getBuiltinModule needs Node ≥ 20.16)');
  const addon = requireAddon(path);
  if (typeof addon === 'string') return off(addon);
  let probe: ReturnType<CpuAddon['info']>;
  try {
    probe = addon.info();
  } catch (error) {
    return off(`the native addon ${path} failed to start: ${(error as Error).message}`);
  }
  const gemm = chooseGemm(probe, options.gemm ?? env('CORE_CPU_GEMM'), options.gemm !== undefined ? 'the backend option gemm' : 'CORE_CPU_GEMM');
  if (!GEMM_PATHS.includes(gemm as CpuGemmPath)) return off(gemm);
  const threads = Math.max(1, Math.floor(options.threads ?? defaultThreads(probe.cores)));
  const info: CpuNativeLoaded = { loaded: true, gemm: gemm as CpuGemmPath, features: Object.freeze([...probe.features]), threads };
  // One parameter block, refilled per call: [batches, m, n, k, (offset, batch, row, column strides) of a, b, out, threads].
  const params = new Float64Array(17);
  const put = (at: number, ref: Ref): void => {
    params[at] = ref.offset;
    params[at + 1] = ref.shape[0] === 1 ? 0 : ref.strides[0];
    params[at + 2] = ref.strides[1];
    params[at + 3] = ref.strides[2];
  };
  return {
    info,
    matmul(a, b, out, accumulate, threadsNow) {
      const float32 = a.dtype === 'float32' && b.dtype === 'float32' && out.dtype === 'float32' && accumulate === 'float32';
      // Out must not share storage with an input: the kernels read a and b while writing out.
      if (!float32 || !matmulShapesMatch(a, b, out) || out.storage === a.storage || out.storage === b.storage) return false;
      const [batches, m, n] = out.shape;
      const k = a.shape[2];
      if (batches * m * n * k === 0) return false;
      params[0] = batches;
      params[1] = m;
      params[2] = n;
      params[3] = k;
      put(4, a);
      put(8, b);
      put(12, out);
      params[16] = threadsNow ?? (2 * batches * m * n * k >= NATIVE_PARALLEL_FLOPS ? threads : 1);
      addon.gemm(a.storage.data as Float32Array, b.storage.data as Float32Array, out.storage.data as Float32Array, params, info.gemm);
      return true;
    },
  };
}

/** `base` with float32 matmuls of at least NATIVE_MIN_FLOPS routed to the native path. */
export function nativeKernels(native: NativePath, base: Kernels<CpuStorage>): Kernels<CpuStorage> {
  return {
    ...base,
    matmul(a, b, out, accumulate) {
      const flops = 2 * sizeOf(out.shape) * (a.shape[a.shape.length - 1] ?? 0);
      if (flops < NATIVE_MIN_FLOPS || !native.matmul(a, b, out, accumulate)) base.matmul(a, b, out, accumulate);
    },
  };
}
