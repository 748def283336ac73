// The native kernel path of the cpu device in Node: an N-API addon (native/cpu, built into
// build/Release/core_cpu.node when the package is built where cmake and a C++ compiler are) whose
// fp32 GEMM runs AVX-512 or AVX2 FMA micro-kernels, or OpenBLAS where that is installed, and whose
// strided fp32 copies and add/sub/mul/div take a convolution's data movement (im2col, the adds of
// its adjoint, the bias) off the wasm and TypeScript kernels. Loading never throws: any failure
// (not Node, not built, turned off, a broken file) leaves the wasm and TypeScript kernels in
// charge and says why in one line.
import type { DTypeName, Kernels } from '@core/tensor';
import { type Ref, sameShape } from './kernels/io.js';
import { matmulShapesMatch } from './kernels/matmul.js';
import { isContiguous, sizeOf } from './kernels/strided.js';
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
 * Strided float32 copies and elementwise ops of at least this many elements run natively (a
 * convolution's im2col copy of a window view, its adjoint's adds of shifted windows, a broadcast
 * bias); smaller ones and contiguous ones, which the wasm kernels stream as fast, stay where they were.
 */
const NATIVE_MIN_ELEMENTS = 1 << 15;
/** Below this many elements a strided op runs on one thread. */
const NATIVE_PARALLEL_ELEMENTS = 1 << 17;
/** The most dims the addon's strided ops take. */
const NATIVE_MAX_RANK = 8;
/** The elementwise ops the addon runs over strided views: a copy, and the four float32 arithmetic ops. */
export type NativeElementOp = 'copy' | 'add' | 'sub' | 'mul' | 'div';
const ELEMENT_OPS: ReadonlySet<string> = new Set<NativeElementOp>(['copy', 'add', 'sub', 'mul', 'div']);

/**
 * A GEMM implementation of the native addon: its AVX-512 or AVX2+FMA micro-kernels, its portable
 * C++ kernel (CPUs with neither), or OpenBLAS's `cblas_sgemm` (libopenblas.so.0, when installed).
 */
export type CpuGemmPath = 'avx512' | 'avx2' | 'portable' | 'openblas';

const GEMM_PATHS: readonly CpuGemmPath[] = ['avx512', 'avx2', 'portable', 'openblas'];

/** The native path is running: float32 matmuls (matmul, bmm, linear) and large strided float32 copies and arithmetic go through it. */
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
  elementwise(op: NativeElementOp, out: Float32Array, a: Float32Array, b: Float32Array, params: Float64Array): void;
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
  /**
   * Runs `out = a` ('copy', b ignored) or `out = a op b` over float32 views of out's shape natively
   * and returns true, or returns false (doing nothing) for what it does not take: other dtypes or
   * shapes, more than NATIVE_MAX_RANK dims, an out that overlaps an input other than as the very
   * same view. `threads` overrides the choice by size.
   */
  elementwise(op: NativeElementOp, a: Ref, b: Ref, out: Ref, threads?: number): boolean;
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
  const proc = nodeModule<typeof import('node:process')>('node:process');
  const platform = `${proc?.platform}-${proc?.arch}`;
  if (!fs.existsSync(path)) {
    // In node_modules the file comes from the published tarball; in a checkout, from the package build.
    return path.includes('node_modules')
      ? `the native addon is not in this installed package (${path} is missing); the wasm kernels run`
      : `the native addon was not built (${path} is missing: cmake or a C++ compiler was absent when the package was built; run \`pnpm --filter @core/backend-cpu build:native\`)`;
  }
  if (platform !== 'linux-x64') return `the native addon is built for linux-x64 only, and this is ${platform}; the wasm kernels run`;
  try {
    const addon = module.createRequire(path)(path) as Partial<CpuAddon>;
    if (typeof addon.info !== 'function' || typeof addon.gemm !== 'function' || typeof addon.elementwise !== 'function') {
      return `${path} is not the cpu backend's addon (it has no info(), gemm() and elementwise())`;
    }
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
  // elementwise's: [rank, threads, shape, (offset, strides) of out, a, b], one block per rank.
  const elementParamsByRank: Float64Array[] = [];
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
    elementwise(op, a, b, out, threadsNow) {
      const rank = out.shape.length;
      const inputs = op === 'copy' ? [a] : [a, b];
      const numel = sizeOf(out.shape);
      if (!ELEMENT_OPS.has(op) || rank > NATIVE_MAX_RANK || numel === 0 || out.dtype !== 'float32') return false;
      if (!inputs.every((x) => x.dtype === 'float32' && sameShape(x.shape, out.shape) && (x.storage !== out.storage || (op !== 'copy' && sameView(x, out))))) return false;
      const elementParams = (elementParamsByRank[rank] ??= new Float64Array(2 + rank + 3 * (1 + rank)));
      elementParams[0] = rank;
      elementParams[1] = threadsNow ?? (numel >= NATIVE_PARALLEL_ELEMENTS ? threads : 1);
      elementParams.set(out.shape, 2);
      [out, a, b].forEach((x, i) => {
        elementParams[2 + rank + i * (1 + rank)] = x.offset;
        elementParams.set(x.strides, 3 + rank + i * (1 + rank));
      });
      addon.elementwise(op, out.storage.data as Float32Array, a.storage.data as Float32Array, b.storage.data as Float32Array, elementParams);
      return true;
    },
  };
}

/** The very same elements in the same order: computing out from x in place reads each element before writing it. */
function sameView(x: Ref, out: Ref): boolean {
  return x.offset === out.offset && x.strides.every((s, i) => s === out.strides[i] || out.shape[i] === 1);
}

/** Whether a strided op is worth the addon: float32, large, and not plain contiguous runs the base kernels stream already. */
function stridedWork(refs: readonly Ref[], out: Ref): boolean {
  return out.dtype === 'float32' && sizeOf(out.shape) >= NATIVE_MIN_ELEMENTS && !refs.every((x) => isContiguous(x.shape, x.strides));
}

/**
 * `base` with float32 matmuls of at least NATIVE_MIN_FLOPS, and strided float32 copies and
 * add/sub/mul/div of at least NATIVE_MIN_ELEMENTS, routed to the native path.
 */
export function nativeKernels(native: NativePath, base: Kernels<CpuStorage>): Kernels<CpuStorage> {
  return {
    ...base,
    matmul(a, b, out, accumulate) {
      const flops = 2 * sizeOf(out.shape) * (a.shape[a.shape.length - 1] ?? 0);
      if (flops < NATIVE_MIN_FLOPS || !native.matmul(a, b, out, accumulate)) base.matmul(a, b, out, accumulate);
    },
    copy(x, out) {
      if (!stridedWork([x, out], out) || !native.elementwise('copy', x, x, out)) base.copy(x, out);
    },
    binary(op, a, b, out) {
      if (!ELEMENT_OPS.has(op) || !stridedWork([a, b, out], out) || !native.elementwise(op as NativeElementOp, a, b, out)) base.binary(op, a, b, out);
    },
  };
}
