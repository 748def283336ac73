// The native kernel path of the cpu device in Node: an N-API addon (native/cpu, built into
// build/<platform>-<arch>/Release/core_cpu.node when the package is built where cmake and a C++
// compiler are: linux-x64, and linux-arm64 cross-compiled there; the loader takes the running one's) whose
// fp32 GEMM runs AVX-512 or AVX2 FMA micro-kernels, or OpenBLAS where that is installed, and whose
// strided fp32 copies and add/sub/mul/div take a convolution's data movement (im2col, the adds of
// its adjoint, the bias) off the wasm and TypeScript kernels; it also fills random numbers and runs
// reductions (float32, and 16-bit ones summed in float32), softmax, cross entropy and the Adam/AdamW, Adadelta and RMSprop
// updates. bfloat16 and float16 have their own kernels there (half*.cpp): a GEMM summing in float32 (vdpbf16ps on AVX512-BF16), casts
// to and from float32, strided copies and arithmetic, exp, erf and relu, and max-pool's argmax, gather and
// scatter-add, bit for bit the TypeScript kernels but for the GEMM's summation order. Loading never throws: any failure
// (not Node, not built, turned off, a broken file) leaves the wasm and TypeScript kernels in
// charge and says why in one line.
import type { AdadeltaSpec, AdamSpec, Capabilities, CompareOp, CrossEntropySpec, DTypeName, FusedKernels, Kernels, RandomSpec, MaxPool2dGeometry, ReduceOp, RMSpropSpec, StridedView } from '@core/tensor';
import type { CpuFusedKernels } from './kernels/fused.js';
import { type Ref, sameShape } from './kernels/io.js';
import { matmulRounded, matmulShapesMatch, matmulStridedSum, matmulToFloat32 } from './kernels/matmul.js';
import { stridedSum } from './kernels/strided-sum.js';
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

/**
 * The native GEMM of bfloat16 and float16 matmuls (summed in float32, rounded once):
 * 'avx512_bf16' multiplies bfloat16 pairs with vdpbf16ps (AVX512-BF16; float16 operands widen into
 * the AVX-512 kernel), the others widen both operands to float32 while packing and run that fp32
 * micro-kernel.
 */
export type CpuHalfGemmPath = 'avx512_bf16' | 'avx512' | 'avx2' | 'portable';
/** The 16-bit dtypes the addon computes and their codes in halfElementwise's params (0 is float32). */
const HALF_CODES: Partial<Record<DTypeName, number>> = { float32: 0, float16: 1, bfloat16: 2 };

/**
 * The native path is running: float32 matmuls (matmul, bmm, linear), large strided float32 copies and
 * arithmetic, random fills, reductions and the fused float32 softmax, crossEntropy, Adam/AdamW, Adadelta and RMSprop go through it.
 */
export interface CpuNativeLoaded {
  /** The addon is loaded and runs float32 matmuls. */
  readonly loaded: true;
  /** The GEMM that float32 matmuls run. */
  readonly gemm: CpuGemmPath;
  /** The CPU's features as CPUID (and the OS) report them, e.g. 'avx2', 'fma', 'avx512f', 'avx512_bf16'. */
  readonly features: readonly string[];
  /** Threads a large GEMM runs on, the calling one included. */
  readonly threads: number;
  /**
   * The GEMM that bfloat16 and float16 matmuls run (autocast's matmuls, linears and convolutions):
   * 'avx512_bf16' where the CPU has AVX512-BF16 and no `gemm` option or CORE_CPU_GEMM names a
   * kernel, else the float32 micro-kernel in use (OpenBLAS has no half GEMM: then the widest
   * micro-kernel), fed operands widened to float32.
   */
  readonly halfGemm: CpuHalfGemmPath;
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
interface CpuAddon extends Partial<NumericAddon> {
  info(): { features: string[]; kernels: CpuGemmPath[]; openblas: boolean; openblasDetail: string; cores: number; dpbf16: boolean };
  gemm(a: Float32Array, b: Float32Array, out: Float32Array, params: Float64Array, kind: CpuGemmPath): CpuGemmPath;
  elementwise(op: NativeElementOp, out: Float32Array, a: Float32Array, b: Float32Array, params: Float64Array): void;
  halfGemm(a: Uint16Array, b: Uint16Array, out: Uint16Array | Float32Array, params: Float64Array, type: 'bf16' | 'f16', kind: CpuHalfGemmPath, bias?: Float32Array, biasParams?: Float64Array): CpuHalfGemmPath;
  halfGemmStridedSum(a: Uint16Array, b: Uint16Array, out: Uint16Array | Float32Array, params: Float64Array, type: 'bf16' | 'f16', kind: CpuHalfGemmPath, sumParams: Float64Array): CpuHalfGemmPath;
  halfElementwise(op: NativeElementOp, out: HalfOrFloat, a: HalfOrFloat, b: HalfOrFloat, params: Float64Array): void;
  halfArgReduce(op: 'argmax' | 'argmin', x: Uint16Array, out: Int32Array, params: Float64Array): void;
  halfScatterAdd(out: Uint16Array, index: Int32Array, src: Uint16Array, params: Float64Array): void;
  halfGather(x: Uint16Array, index: Int32Array, out: Uint16Array, params: Float64Array): void;
  halfUnary(op: HalfUnaryOp, x: HalfOrFloat, out: HalfOrFloat, params: Float64Array): void;
  compare(op: CompareOp, x: HalfOrFloat, y: HalfOrFloat, out: Uint8Array, params: Float64Array): void;
  where(cond: Uint8Array, a: HalfOrFloat, b: HalfOrFloat, out: HalfOrFloat, params: Float64Array): void;
}

type HalfOrFloat = Uint16Array | Float32Array;
/** The unary ops the addon computes on contiguous 16-bit tensors. */
type HalfUnaryOp = 'exp' | 'erf' | 'relu';
const HALF_UNARY_OPS: ReadonlySet<string> = new Set<HalfUnaryOp>(['exp', 'erf', 'relu']);
/** The addon's 16-bit entry points: an addon without them is an older build, and the native path stays off. */
const HALF_ENTRY_POINTS = ['halfGemm', 'halfElementwise', 'halfArgReduce', 'halfScatterAdd', 'halfGather', 'halfUnary', 'compare', 'where'] as const;

/** How the native path is chosen (the backend options of the same names). */
export interface NativeChoice {
  readonly native?: boolean;
  readonly nativeAddon?: string;
  readonly gemm?: CpuGemmPath;
  readonly threads?: number;
}

/** The loaded native path: what it reports and the matmul it runs. */
export interface NativePath extends NativeNumerics {
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
  /**
   * `matmul` for bfloat16 and float16 operands summed in float32, into an out of their dtype or
   * float32 (the fused matmulToFloat32): returns false (doing nothing) for anything else.
   */
  halfMatmul(a: Ref, b: Ref, out: Ref, accumulate: DTypeName, threads?: number, bias?: Ref | null): boolean;
  /**
   * The fused matmulStridedSum (a 16-bit convolution's input gradient): each batch's float32 product
   * summed into place as it is made, never stored. Takes a source whose dim 0 is the product's batch
   * (reaching disjoint ranges of a contiguous out) and whose other dims split into the product's rows
   * and columns, with at least as many batches as threads; returns false (doing nothing) otherwise.
   */
  halfMatmulStridedSum(a: Ref, b: Ref, size: readonly number[], view: StridedView, out: Ref): boolean;
  /**
   * `elementwise` where some operand is float16 or bfloat16 (the rest float32): a copy between
   * dtypes is `cast` (bit for bit the TypeScript cast), arithmetic is one float32 operation rounded
   * once into out's dtype. Returns false (doing nothing) for what it does not take.
   */
  halfElementwise(op: NativeElementOp, a: Ref, b: Ref, out: Ref, threads?: number): boolean;
  /** `argReduce` of a float16 or bfloat16 x of rank ≥ 1 (max-pooling's window argmax): returns false (doing nothing) for anything else. */
  halfArgReduce(op: 'argmax' | 'argmin', x: Ref, axis: number, out: Ref, threads?: number): boolean;
  /**
   * `scatterAdd` into a float16 or bfloat16 out of rank ≥ 1 (max-pooling's backward), each touched
   * element summed in float32 and rounded once: returns false (doing nothing) for anything else.
   * Throws a RangeError, out unchanged, for an index out of range.
   */
  halfScatterAdd(out: Ref, dim: number, index: Ref, src: Ref): boolean;
  /** `gather` of a float16 or bfloat16 x of rank ≥ 1 (max-pooling's winners): returns false (doing nothing) for anything else; an index out of range is a RangeError. */
  halfGather(x: Ref, dim: number, index: Ref, out: Ref): boolean;
  /**
   * `unary` exp, erf or relu of contiguous float16 or bfloat16 x and out, or exp and erf of float32
   * ones (out may be x itself), bit for bit the TypeScript kernels (a NaN's payload aside): returns
   * false (doing nothing) for anything else.
   */
  halfUnary(op: string, x: Ref, out: Ref, threads?: number): boolean;
  /**
   * `compare` of a contiguous float32, float16 or bfloat16 x with a y of its dtype, contiguous or a
   * broadcast single element (a relu's backward mask, y > 0), into a contiguous bool out, halves
   * compared as their f32 values: returns false (doing nothing) for anything else.
   */
  compare(op: CompareOp, x: Ref, y: Ref, out: Ref, threads?: number): boolean;
  /**
   * `where` of float32, float16 or bfloat16 a and b (and out) with a bool cond, each contiguous or a
   * broadcast single element (out contiguous), bits moved as they are: returns false (doing nothing)
   * for anything else.
   */
  where(cond: Ref, a: Ref, b: Ref, out: Ref, threads?: number): boolean;
}

/** The platforms (`${process.platform}-${process.arch}`) the package build compiles the addon for. */
export const NATIVE_PLATFORMS: readonly string[] = ['linux-x64', 'linux-arm64'];

/** The running process's `${process.platform}-${process.arch}`, e.g. 'linux-x64'. */
function runningPlatform(): string {
  const proc = nodeModule<typeof import('node:process')>('node:process');
  return `${proc?.platform}-${proc?.arch}`;
}

/**
 * The addon built for `platform` (default: the running one) in this package:
 * build/<platform>-<arch>/Release/core_cpu.node (src/ and dist/ are one level below its root).
 */
export function defaultAddonPath(platform = runningPlatform()): string | undefined {
  const url = nodeModule<typeof import('node:url')>('node:url');
  const path = nodeModule<typeof import('node:path')>('node:path');
  if (!url || !path) return undefined;
  return path.join(path.dirname(url.fileURLToPath(import.meta.url)), '..', 'build', platform, 'Release', 'core_cpu.node');
}

/** ELF e_machine codes of the platforms' binaries, to name the one a file was built for. */
const ELF_MACHINES: Readonly<Record<number, string>> = { 0x3e: 'x64', 0xb7: 'arm64', 0x03: 'ia32', 0x28: 'arm', 0xf3: 'riscv64' };

/** The architecture a little-endian ELF file was built for ('x64', 'arm64', …), or null when it is not one or unknown. */
function elfArch(fs: typeof import('node:fs'), path: string): string | null {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    const head = new Uint8Array(20);
    if (fs.readSync(fd, head, 0, 20, 0) < 20) return null;
    // \x7fELF, then EI_DATA = 1 (little-endian); e_machine is the u16 at byte 18.
    if (head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46 || head[5] !== 1) return null;
    return ELF_MACHINES[head[18]! | (head[19]! << 8)] ?? null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function requireAddon(path: string): CpuAddon | string {
  const fs = nodeModule<typeof import('node:fs')>('node:fs');
  const module = nodeModule<typeof import('node:module')>('node:module');
  if (!fs || !module) return 'Node built-in modules are not reachable (process.getBuiltinModule needs Node ≥ 20.16)';
  const platform = runningPlatform();
  if (!NATIVE_PLATFORMS.includes(platform)) return `the native addon is built for ${NATIVE_PLATFORMS.join(' and ')} only, and this is ${platform}; the wasm kernels run`;
  if (!fs.existsSync(path)) {
    // In node_modules the file comes from the published tarball; in a checkout, from the package build.
    const why = platform === 'linux-arm64' ? 'a linux-x64 package build cross-compiles it only where aarch64-linux-gnu-g++ is installed, a linux-arm64 one where cmake and a C++ compiler are' : 'cmake or a C++ compiler was absent when the package was built';
    return path.includes('node_modules')
      ? `the native addon for ${platform} is not in this installed package (${path} is missing); the wasm kernels run`
      : `the native addon for ${platform} was not built (${path} is missing: ${why}; run \`pnpm --filter @core/backend-cpu build:native\`)`;
  }
  // A binary for another architecture (a nativeAddon path, a copied build) is named before dlopen's own words.
  const arch = elfArch(fs, path);
  if (arch !== null && `linux-${arch}` !== platform) return `the native addon ${path} is built for linux-${arch}, and this is ${platform}; the wasm kernels run`;
  try {
    const addon = module.createRequire(path)(path) as Partial<CpuAddon>;
    if (typeof addon.info !== 'function' || typeof addon.gemm !== 'function' || typeof addon.elementwise !== 'function') {
      return `${path} is not the cpu backend's addon (it has no info(), gemm() and elementwise())`;
    }
    const missing = HALF_ENTRY_POINTS.filter((name) => typeof addon[name] !== 'function');
    if (missing.length > 0) return `the native addon ${path} is an older build without ${missing.join(', ')}(): rebuild it (\`pnpm --filter @core/backend-cpu build:native\`)`;
    return addon as CpuAddon;
  } catch (error) {
    return `the native addon ${path} failed to load: ${(error as Error).message}`;
  }
}

/** The addon with `beforeCall` run ahead of each of its functions (looked up on the module at each call). */
function announcing(addon: CpuAddon, beforeCall: () => void): CpuAddon {
  const module = addon as unknown as Record<string, (...args: unknown[]) => unknown>;
  const entries = Object.entries(addon).map(([name, value]) => [name, typeof value === 'function'
    ? (...args: unknown[]) => {
        beforeCall();
        return module[name]!(...args);
      }
    : value]);
  return Object.fromEntries(entries) as CpuAddon;
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

/**
 * Loads the native path, or says in one line why it does not run. Never throws. `beforeCall` runs
 * before each call into the addon (the wasm pool parks its spinning workers there).
 */
export function loadNative(options: NativeChoice, beforeCall?: () => void): NativePath | CpuNativeUnavailable {
  const off = (reason: string): CpuNativeUnavailable => ({ loaded: false, reason: oneLine(reason) });
  if (options.native === false) return off('turned off by the backend option native: false');
  if (options.native === undefined && env('CORE_CPU_NATIVE') === '0') return off('turned off by CORE_CPU_NATIVE=0');
  if (!isNode()) return off('native kernels run only in Node');
  const path = options.nativeAddon ?? defaultAddonPath();
  if (path === undefined) return off('Node built-in modules are not reachable (process.getBuiltinModule needs Node ≥ 20.16)');
  const loaded = requireAddon(path);
  if (typeof loaded === 'string') return off(loaded);
  const addon = beforeCall ? announcing(loaded, beforeCall) : loaded;
  let probe: ReturnType<CpuAddon['info']>;
  try {
    probe = addon.info();
  } catch (error) {
    return off(`the native addon ${path} failed to start: ${(error as Error).message}`);
  }
  const wanted = options.gemm ?? env('CORE_CPU_GEMM');
  const gemm = chooseGemm(probe, wanted, options.gemm !== undefined ? 'the backend option gemm' : 'CORE_CPU_GEMM');
  if (!GEMM_PATHS.includes(gemm as CpuGemmPath)) return off(gemm);
  const threads = Math.max(1, Math.floor(options.threads ?? defaultThreads(probe.cores)));
  const halfGemm = chooseHalfGemm(probe, gemm as CpuGemmPath, wanted);
  const info: CpuNativeLoaded = { loaded: true, gemm: gemm as CpuGemmPath, features: Object.freeze([...probe.features]), threads, halfGemm };
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
  // halfElementwise's: elementwise's then the dtype codes of out, a and b.
  const halfParamsByRank: Float64Array[] = [];
  return {
    info,
    ...numericPath(addon, threads),
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
      fillStridedParams(elementParams, threadsNow ?? (numel >= NATIVE_PARALLEL_ELEMENTS ? threads : 1), out, a, b);
      addon.elementwise(op, out.storage.data as Float32Array, a.storage.data as Float32Array, b.storage.data as Float32Array, elementParams);
      return true;
    },
    halfMatmul(a, b, out, accumulate, threadsNow, bias) {
      const type = a.dtype === 'bfloat16' ? 'bf16' : a.dtype === 'float16' ? 'f16' : null;
      if (type === null || b.dtype !== a.dtype || (out.dtype !== a.dtype && out.dtype !== 'float32') || accumulate !== 'float32') return false;
      if (!matmulShapesMatch(a, b, out) || out.storage === a.storage || out.storage === b.storage) return false;
      if (bias && (bias.dtype !== 'float32' || !sameShape(bias.shape, out.shape) || bias.storage === out.storage)) return false;
      const [batches, m, n] = out.shape;
      const k = a.shape[2];
      if (batches * m * n * k === 0) return false;
      params.set([batches, m, n, k]);
      put(4, a);
      put(8, b);
      put(12, out);
      params[16] = threadsNow ?? (2 * batches * m * n * k >= NATIVE_PARALLEL_FLOPS ? threads : 1);
      const outData = out.storage.data as Uint16Array | Float32Array;
      if (bias) addon.halfGemm(a.storage.data as Uint16Array, b.storage.data as Uint16Array, outData, params, type, halfGemm, f32(bias), Float64Array.from([bias.offset, ...bias.strides]));
      else addon.halfGemm(a.storage.data as Uint16Array, b.storage.data as Uint16Array, outData, params, type, halfGemm);
      return true;
    },
    halfMatmulStridedSum(a, b, size, view, out) {
      const type = a.dtype === 'bfloat16' ? 'bf16' : a.dtype === 'float16' ? 'f16' : null;
      if (type === null || b.dtype !== a.dtype || (out.dtype !== a.dtype && out.dtype !== 'float32') || !dense(out)) return false;
      if (a.shape.length !== 3 || b.shape.length !== 3 || out.storage === a.storage || out.storage === b.storage) return false;
      const [batches, m, k] = a.shape as [number, number, number];
      const n = b.shape[2]!;
      const rank = size.length;
      if (b.shape[0] !== batches || b.shape[1] !== k || batches * m * n * k === 0 || batches < threads || rank < 3 || rank > NATIVE_MAX_RANK || size[0] !== batches) return false;
      // The dims after the batch split into the product's rows (m) and columns (n).
      let split = 1;
      for (let rows = 1; split < rank && rows < m; split++) rows *= size[split]!;
      if (split >= rank || sizeOf(size.slice(1, split)) !== m || sizeOf(size.slice(split)) !== n) return false;
      const reach = size.reduce((r, d, i) => (i === 0 ? r : r + (d - 1) * view.strides[i]!), 0);
      if (batches > 1 && view.strides[0]! <= reach) return false;
      params.fill(0);
      params.set([batches, m, n, k]);
      put(4, a);
      put(8, b);
      params[16] = threads;
      const sumParams = Float64Array.from([rank, split, out.offset, sizeOf(out.shape), view.offset, ...size, ...view.strides]);
      addon.halfGemmStridedSum(a.storage.data as Uint16Array, b.storage.data as Uint16Array, out.storage.data as Uint16Array | Float32Array, params, type, halfGemm, sumParams);
      return true;
    },
    halfElementwise(op, a, b, out, threadsNow) {
      const rank = out.shape.length;
      const inputs = op === 'copy' ? [a] : [a, b];
      const numel = sizeOf(out.shape);
      if (!ELEMENT_OPS.has(op) || rank > NATIVE_MAX_RANK || numel === 0 || HALF_CODES[out.dtype] === undefined) return false;
      if (![out, ...inputs].some((x) => x.dtype !== 'float32')) return false;
      if (!inputs.every((x) => HALF_CODES[x.dtype] !== undefined && sameShape(x.shape, out.shape) && (x.storage !== out.storage || (op !== 'copy' && x.dtype === out.dtype && sameView(x, out))))) return false;
      const size = 2 + rank + 3 * (1 + rank);
      const halfParams = (halfParamsByRank[rank] ??= new Float64Array(size + 3));
      fillStridedParams(halfParams, threadsNow ?? (numel >= NATIVE_PARALLEL_ELEMENTS ? threads : 1), out, a, b);
      [out, a, op === 'copy' ? a : b].forEach((x, i) => (halfParams[size + i] = HALF_CODES[x.dtype]!));
      addon.halfElementwise(op, elements(out), elements(a), elements(op === 'copy' ? a : b), halfParams);
      return true;
    },
    halfArgReduce(op, x, axis, out, threadsNow) {
      const rank = x.shape.length;
      const a = axis < 0 ? axis + rank : axis;
      const code = x.dtype === 'float32' ? undefined : HALF_CODES[x.dtype];
      if (code === undefined || out.dtype !== 'int32' || rank === 0 || rank > NATIVE_MAX_RANK || a < 0 || a >= rank) return false;
      if (out.shape.length !== rank || !x.shape.every((n, d) => n > 0 && out.shape[d] === (d === a ? 1 : n))) return false;
      const numel = sizeOf(x.shape);
      addon.halfArgReduce(op, x.storage.data as Uint16Array, out.storage.data as Int32Array, Float64Array.from([
        rank, a, threadsNow ?? (numel >= NATIVE_PARALLEL_ELEMENTS ? threads : 1), code, ...x.shape, x.offset, ...x.strides, out.offset, ...out.strides,
      ]));
      return true;
    },
    halfScatterAdd(out, dim, index, src) {
      const params = alongAxisParams(out, dim, index, src);
      if (params === null || out.storage === src.storage) return false;
      addon.halfScatterAdd(out.storage.data as Uint16Array, index.storage.data as Int32Array, src.storage.data as Uint16Array, params);
      return true;
    },
    halfUnary(op, x, out, threadsNow) {
      const code = x.dtype === 'float32' ? (op === 'relu' ? undefined : 0) : HALF_CODES[x.dtype];
      if (!HALF_UNARY_OPS.has(op) || code === undefined || out.dtype !== x.dtype || !sameShape(x.shape, out.shape)) return false;
      const n = sizeOf(x.shape);
      if (n === 0 || !isContiguous(x.shape, x.strides) || !isContiguous(out.shape, out.strides) || (x.storage === out.storage && x.offset !== out.offset)) return false;
      addon.halfUnary(op as HalfUnaryOp, x.storage.data as HalfOrFloat, out.storage.data as HalfOrFloat,
        Float64Array.of(n, x.offset, out.offset, threadsNow ?? (n >= NATIVE_MIN_ELEMENTS / 8 ? threads : 1), code));
      return true;
    },
    compare(op, x, y, out, threadsNow) {
      const code = HALF_CODES[x.dtype];
      const n = sizeOf(out.shape);
      if (code === undefined || y.dtype !== x.dtype || out.dtype !== 'bool' || n === 0) return false;
      const yStride = runStride(y, out);
      if (!sameShape(x.shape, out.shape) || runStride(x, out) !== 1 || yStride === null || runStride(out, out) !== 1) return false;
      addon.compare(op, x.storage.data as HalfOrFloat, y.storage.data as HalfOrFloat, out.storage.data as Uint8Array,
        Float64Array.of(n, x.offset, y.offset, yStride, out.offset, threadsNow ?? (n >= NATIVE_PARALLEL_ELEMENTS ? threads : 1), code));
      return true;
    },
    where(cond, a, b, out, threadsNow) {
      const n = sizeOf(out.shape);
      const code = HALF_CODES[out.dtype];
      if (code === undefined || a.dtype !== out.dtype || b.dtype !== out.dtype || cond.dtype !== 'bool' || n === 0) return false;
      const [cs, as, bs] = [runStride(cond, out), runStride(a, out), runStride(b, out)];
      if (cs === null || as === null || bs === null || runStride(out, out) !== 1 || [cond, a, b].some((x) => x.storage === out.storage)) return false;
      addon.where(cond.storage.data as Uint8Array, a.storage.data as HalfOrFloat, b.storage.data as HalfOrFloat, out.storage.data as HalfOrFloat,
        Float64Array.of(n, cond.offset, cs, a.offset, as, b.offset, bs, out.offset, threadsNow ?? (n >= NATIVE_PARALLEL_ELEMENTS ? threads : 1), code));
      return true;
    },
    halfGather(x, dim, index, out) {
      const params = alongAxisParams(x, dim, index, out);
      if (params === null || !sameShape(out.shape, index.shape)) return false;
      addon.halfGather(x.storage.data as Uint16Array, index.storage.data as Int32Array, out.storage.data as Uint16Array, params);
      return true;
    },
  };
}

/**
 * The params of halfGather and halfScatterAdd, or null for what they do not take: `indexed` (gather's
 * x, scatterAdd's out) and `other` (out, src) of one 16-bit dtype, an int32 index of their rank
 * (1 to NATIVE_MAX_RANK) that fits both, `other` in storage apart from the other two.
 */
function alongAxisParams(indexed: Ref, dim: number, index: Ref, other: Ref): Float64Array | null {
  const rank = indexed.shape.length;
  const d = dim < 0 ? dim + rank : dim;
  const code = indexed.dtype === 'float32' ? undefined : HALF_CODES[indexed.dtype];
  if (code === undefined || other.dtype !== indexed.dtype || index.dtype !== 'int32' || rank === 0 || rank > NATIVE_MAX_RANK || d < 0 || d >= rank) return null;
  if (index.shape.length !== rank || other.shape.length !== rank || indexed.shape[d] === 0 || other.storage === indexed.storage || other.storage === index.storage) return null;
  if (!index.shape.every((n, i) => n > 0 && n <= other.shape[i] && (i === d || n <= indexed.shape[i]))) return null;
  return Float64Array.from([rank, d, code, indexed.shape[d], ...index.shape, ...[indexed, index, other].flatMap((x) => [x.offset, ...x.strides])]);
}

/**
 * What `capabilities.autocastSpeed` says for the cpu backend: bfloat16 faster only where the bf16
 * GEMM runs vdpbf16ps; float16 never. Measured with `bench:cpu` (ours-bf16 against ours) on a 2-core
 * AVX512-BF16 EPYC, quiet: the MNIST Net step at 1.3–1.5× float32's speed and the GPT step at
 * 1.2–1.7× (noisy), since convolutions and biased linears run their GEMMs in bfloat16
 * (matmulToFloat32), the 16-bit elementwise loops have AVX-512 clones and convolutions cast their
 * columns straight from the input's windows (before all that, 0.66–0.78× and 0.9–1.1×). An
 * overhead-bound tiny model (the bench's gpt-tiny) runs slower under autocast. Re-measure before
 * changing it.
 */
export function autocastSpeed(native: NativePath | CpuNativeUnavailable): NonNullable<Capabilities['autocastSpeed']> {
  const float16 = { faster: false, reason: 'the cpu has no native float16 arithmetic: float16 matmuls widen to float32' };
  if (!('info' in native)) return { bfloat16: { faster: false, reason: `no native bfloat16 kernels (${native.reason})` }, float16 };
  const gemm = native.info.halfGemm;
  if (gemm !== 'avx512_bf16') {
    const { features } = native.info;
    // AArch64 reports 'asimd' (NEON): its build has no bfloat16 dot-product kernel, whatever the CPU offers.
    const why = features.includes('avx512_bf16') ? 'the gemm option or CORE_CPU_GEMM asks for it' : features.includes('asimd') ? 'the arm64 addon has no bfloat16 GEMM kernel' : 'no AVX512-BF16 on this CPU';
    return { bfloat16: { faster: false, reason: `bfloat16 matmuls widen to float32 for the ${gemm} kernel (${why})` }, float16 };
  }
  return { bfloat16: { faster: true, reason: 'bfloat16 matmuls and convolutions run vdpbf16ps (AVX512-BF16), measured faster than float32' }, float16 };
}

/**
 * The half GEMM: vdpbf16ps where the CPU has AVX512-BF16, unless `wanted` (the gemm option or
 * CORE_CPU_GEMM) names a kernel, which then runs widened operands; OpenBLAS's place is taken by the
 * widest micro-kernel.
 */
function chooseHalfGemm(info: ReturnType<CpuAddon['info']>, gemm: CpuGemmPath, wanted: string | undefined): CpuHalfGemmPath {
  if (info.dpbf16 && (wanted === undefined || wanted === '' || wanted === 'auto')) return 'avx512_bf16';
  return gemm === 'openblas' ? (info.kernels[0] as CpuHalfGemmPath) : gemm;
}

/** Fills elementwise's params [rank, threads, shape, then the offset and strides of out, a and b] (halfElementwise's begin so). */
function fillStridedParams(params: Float64Array, threads: number, out: Ref, a: Ref, b: Ref): void {
  const rank = out.shape.length;
  params[0] = rank;
  params[1] = threads;
  params.set(out.shape, 2);
  [out, a, b].forEach((x, i) => {
    params[2 + rank + i * (1 + rank)] = x.offset;
    params.set(x.strides, 3 + rank + i * (1 + rank));
  });
}

/** The very same elements in the same order: computing out from x in place reads each element before writing it. */
function sameView(x: Ref, out: Ref): boolean {
  return x.offset === out.offset && x.strides.every((s, i) => s === out.strides[i] || out.shape[i] === 1);
}

/**
 * How `x` runs over out's elements as one flat run: 1 when it is contiguous with out's shape, 0 when
 * it is one element broadcast to all of them (every stride 0, or a single element), else null.
 */
function runStride(x: Ref, out: Ref): 0 | 1 | null {
  if (sizeOf(x.shape) === 1 || (sameShape(x.shape, out.shape) && x.strides.every((s) => s === 0))) return 0;
  return sameShape(x.shape, out.shape) && isContiguous(x.shape, x.strides) ? 1 : null;
}

/** Whether a strided op is worth the addon: float32 or 16-bit, large, and not plain contiguous runs the base kernels stream already. */
function stridedWork(refs: readonly Ref[], out: Ref): boolean {
  return HALF_CODES[out.dtype] !== undefined && sizeOf(out.shape) >= NATIVE_MIN_ELEMENTS && !refs.every((x) => isContiguous(x.shape, x.strides));
}

/**
 * `base` with float32, bfloat16 and float16 matmuls of at least NATIVE_MIN_FLOPS, casts between float32 and
 * the 16-bit dtypes and strided copies and
 * add/sub/mul/div of float32 and 16-bit views of at least NATIVE_MIN_ELEMENTS, routed to the native path.
 */
export function nativeKernels(native: NativePath, base: Kernels<CpuStorage>): Kernels<CpuStorage> {
  return {
    ...base,
    ...numericKernels(native, base),
    matmul(a, b, out, accumulate) {
      const flops = 2 * sizeOf(out.shape) * (a.shape[a.shape.length - 1] ?? 0);
      if (flops < NATIVE_MIN_FLOPS || !(native.matmul(a, b, out, accumulate) || native.halfMatmul(a, b, out, accumulate))) base.matmul(a, b, out, accumulate);
    },
    copy(x, out) {
      if (!stridedWork([x, out], out) || !(native.elementwise('copy', x, x, out) || native.halfElementwise('copy', x, x, out))) base.copy(x, out);
    },
    cast(x, out) {
      // Casts between float32 and a 16-bit dtype (autocast's casts of weights and activations), contiguous ones too.
      if (x.dtype === out.dtype || sizeOf(out.shape) < NATIVE_MIN_ELEMENTS || !native.halfElementwise('copy', x, x, out)) base.cast(x, out);
    },
    argReduce(op, x, axis, out) {
      if (sizeOf(x.shape) < NATIVE_MIN_ELEMENTS || !native.halfArgReduce(op, x, axis, out)) base.argReduce(op, x, axis, out);
    },
    scatterAdd(out, dim, index, src) {
      if (sizeOf(index.shape) < NATIVE_MIN_ELEMENTS || !native.halfScatterAdd(out, dim, index, src)) base.scatterAdd(out, dim, index, src);
    },
    compare(op, a, b, out) {
      // A relu's backward mask and its where: the wasm kernels widen each 16-bit element on its own
      // (3× slower than float32), and take 0.6 ns an element even in float32.
      if (sizeOf(out.shape) < NATIVE_MIN_ELEMENTS || !native.compare(op, a, b, out)) base.compare(op, a, b, out);
    },
    where(cond, a, b, out) {
      if (sizeOf(out.shape) < NATIVE_MIN_ELEMENTS || !native.where(cond, a, b, out)) base.where(cond, a, b, out);
    },
    unary(op, x, out) {
      // exp and erf cost ~100 ns an element in TypeScript, and the wasm relu converts each 16-bit element on its own: worth the addon from a few thousand.
      if (sizeOf(x.shape) < NATIVE_MIN_ELEMENTS / 8 || !native.halfUnary(op, x, out)) base.unary(op, x, out);
    },
    gather(x, dim, index, out) {
      if (sizeOf(index.shape) < NATIVE_MIN_ELEMENTS || !native.halfGather(x, dim, index, out)) base.gather(x, dim, index, out);
    },
    binary(op, a, b, out) {
      // 16-bit arithmetic runs natively contiguous too: the wasm kernels convert each element on its own (5–7× slower, measured).
      const half = out.dtype !== 'float32' && HALF_CODES[out.dtype] !== undefined && sizeOf(out.shape) >= NATIVE_MIN_ELEMENTS;
      if (!ELEMENT_OPS.has(op) || !(half || stridedWork([a, b, out], out)) ||
        !(native.elementwise(op as NativeElementOp, a, b, out) || native.halfElementwise(op as NativeElementOp, a, b, out))) base.binary(op, a, b, out);
    },
  };
}

// ---- Random numbers, reductions and the fused float32 kernels ---------------------------------

/**
 * Below this many elements a random fill, a reduction or a fused kernel stays on the wasm or
 * TypeScript kernel: the addon call costs about a microsecond. (The TypeScript Philox stream costs
 * about 30 ns an element, so random fills take the addon from a smaller size.)
 */
const NATIVE_MIN_NUMERIC = 1 << 12;
const NATIVE_MIN_RANDOM = 1 << 6;
/** The TypeScript kernel widens 16-bit elements one by one (0.13 ms for 640 of them, a linear's bias gradient): those reductions take the addon from a smaller size. */
const NATIVE_MIN_HALF_REDUCE = 1 << 6;
/** The reductions the addon runs (over float32, float16 and bfloat16). */
const NATIVE_REDUCE_OPS: ReadonlySet<string> = new Set<ReduceOp>(['sum', 'max', 'min']);

/** The addon's entry points for random numbers, reductions and the fused kernels (native/cpu/src/numeric_addon.h). */
interface NumericAddon {
  random(out: Float32Array | Int32Array, params: Float64Array): void;
  reduce(op: ReduceOp, x: Float32Array | Uint16Array, out: Float32Array | Uint16Array, params: Float64Array): void;
  softmax(x: Float32Array, out: Float32Array, params: Float64Array): void;
  crossEntropy(x: Float32Array, target: Int32Array, out: Float32Array, params: Float64Array): void;
  adamw(p: Float32Array, g: Float32Array, m: Float32Array, v: Float32Array, vmax: Float32Array | null, params: Float64Array): void;
  adadelta(p: Float32Array, g: Float32Array, v: Float32Array, u: Float32Array, params: Float64Array): void;
  rmsprop(p: Float32Array, g: Float32Array, v: Float32Array, b: Float32Array | null, a: Float32Array | null, params: Float64Array): void;
  stridedSum(src: Float32Array, out: Float32Array, params: Float64Array): void;
  maxPool2d(x: Float32Array | Uint16Array, out: Float32Array | Uint16Array, indices: Int32Array, params: Float64Array): void;
  maxPool2dBackward(grad: Float32Array | Uint16Array, indices: Int32Array, gradInput: Float32Array | Uint16Array, params: Float64Array): void;
}

/**
 * What the native path runs of random numbers, reductions and the fused kernels. Each runs the
 * kernel natively and returns true, or returns false (doing nothing) for what the addon does not
 * take: other dtypes or layouts, fewer elements than pay for the call, arguments the TypeScript
 * kernel would reject (it words the error).
 */
export interface NativeNumerics {
  /** The Philox4x32-10 stream of `spec` into a contiguous float32 (uniform, randint) or int32 (randint) out: the TypeScript kernel's bits. */
  random(out: Ref, spec: RandomSpec): boolean;
  /** A sum (accumulated in float32 or float64, as `accumulate` says), max or min over `axes` of a strided float32, float16 or bfloat16 x of at most 8 dims, into an out of x's dtype. */
  reduce(op: ReduceOp, x: Ref, axes: readonly number[], out: Ref, accumulate: DTypeName): boolean;
  /** Float32 softmax or log-softmax over the last dim of a contiguous x into a contiguous out. */
  softmax(x: Ref, dim: number, out: Ref, log: boolean): boolean;
  /** Float32 per-row cross entropy of logits [N, C] whose rows are contiguous. */
  crossEntropy(x: Ref, target: Ref, spec: CrossEntropySpec, out: Ref): boolean;
  /** The float32 Adam/AdamW update of contiguous tensors in separate storages: the TypeScript kernel's bits. */
  adamw(param: Ref, grad: Ref, expAvg: Ref, expAvgSq: Ref, maxExpAvgSq: Ref | null, spec: AdamSpec): boolean;
  /** The float32 Adadelta update of contiguous tensors in separate storages: the TypeScript kernel's bits. */
  adadelta(param: Ref, grad: Ref, squareAvg: Ref, accDelta: Ref, spec: AdadeltaSpec): boolean;
  /** The float32 RMSprop update of contiguous tensors in separate storages: the TypeScript kernel's bits. */
  rmsprop(param: Ref, grad: Ref, squareAvg: Ref, momentumBuffer: Ref | null, gradAvg: Ref | null, spec: RMSpropSpec): boolean;
  /** asStrided's float32 gradient of a src of at most 8 dims into a contiguous out in another storage: the TypeScript kernel's bits. */
  stridedSum(src: Ref, view: StridedView, out: Ref): boolean;
  /** Float32, float16 or bfloat16 max-pooling of a strided x of at least NATIVE_MIN_NUMERIC elements into contiguous out and indices: the TypeScript kernel's bits. */
  maxPool2d(x: Ref, out: Ref, indices: Ref, geometry: MaxPool2dGeometry): boolean;
  /** Max-pooling's float32, float16 or bfloat16 gradient (halves summed in f32, rounded once) into a contiguous gradInput of at least NATIVE_MIN_NUMERIC elements: the TypeScript kernel's bits. */
  maxPool2dBackward(grad: Ref, indices: Ref, gradInput: Ref): boolean;
}

const f32 = (x: Ref): Float32Array => x.storage.data as Float32Array;
/** The elements of a float32 or 16-bit storage, as the addon takes them. */
const elements = (x: Ref): HalfOrFloat => x.storage.data as HalfOrFloat;
const dense = (x: Ref): boolean => isContiguous(x.shape, x.strides);

/** The reduced axes of `rank` dims as 0/1 flags, or null when an axis is out of range (the TypeScript kernel words that). */
function reducedFlags(axes: readonly number[], rank: number): number[] | null {
  const flags = new Array<number>(rank).fill(0);
  for (const axis of axes) {
    const a = axis < 0 ? axis + rank : axis;
    if (!Number.isInteger(a) || a < 0 || a >= rank) return null;
    flags[a] = 1;
  }
  return flags;
}

/**
 * Whether the addon takes an optimizer update's tensors (null: absent): float32, one shape, dense,
 * each in its own storage, at least NATIVE_MIN_NUMERIC elements.
 */
function nativeUpdateFits(refs: readonly (Ref | null)[]): boolean {
  const present = refs.filter((r): r is Ref => r !== null);
  const shape = present[0]!.shape;
  return sizeOf(shape) >= NATIVE_MIN_NUMERIC && present.every((r) => r.dtype === 'float32' && sameShape(r.shape, shape) && dense(r)) &&
    new Set(present.map((r) => r.storage)).size === present.length;
}

/** The random, reduce and fused entry points of a loaded addon (those a stale build lacks return false). */
function numericPath(addon: CpuAddon, threads: number): NativeNumerics {
  const randomParams = new Float64Array(9);
  const softmaxParams = new Float64Array(6);
  const entropyParams = new Float64Array(11);
  const adamParams = new Float64Array(19);
  return {
    ...maxPoolPath(addon, threads),
    random(out, spec) {
      const n = sizeOf(out.shape);
      const { distribution: dist, key, offset } = spec;
      if (!addon.random || n < NATIVE_MIN_RANDOM || !dense(out) || !Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(offset + Math.ceil(n / 4))) return false;
      let low = 0;
      let range = 1;
      if (dist.kind === 'uniform') {
        if (out.dtype !== 'float32') return false;
      } else {
        ({ low } = dist);
        range = dist.high - low;
        if (!Number.isInteger(low) || !Number.isInteger(dist.high) || !(range >= 1 && range <= 2 ** 32)) return false;
        if (out.dtype === 'int32' ? low < -(2 ** 31) || dist.high > 2 ** 31 : out.dtype !== 'float32') return false;
      }
      randomParams.set([out.offset, n, key[0] >>> 0, key[1] >>> 0, offset, dist.kind === 'uniform' ? 0 : 1, low, range, threads]);
      addon.random(out.storage.data as Float32Array | Int32Array, randomParams);
      return true;
    },
    reduce(op, x, axes, out, accumulate) {
      const rank = x.shape.length;
      const code = HALF_CODES[x.dtype];
      if (!addon.reduce || !NATIVE_REDUCE_OPS.has(op) || code === undefined || out.dtype !== x.dtype || x.storage === out.storage) return false;
      if (op === 'sum' && accumulate !== 'float32' && accumulate !== 'float64') return false;
      const flags = reducedFlags(axes, rank);
      if (flags === null || rank > NATIVE_MAX_RANK || sizeOf(x.shape) < (x.dtype === 'float32' ? NATIVE_MIN_NUMERIC : NATIVE_MIN_HALF_REDUCE) || !sameShape(out.shape, x.shape.map((d, i) => (flags[i] ? 1 : d)))) return false;
      if (out.strides.some((st, i) => st === 0 && out.shape[i]! > 1)) return false; // outputs sharing an element: the TypeScript kernel's order decides
      addon.reduce(op, elements(x), elements(out), Float64Array.from([rank, threads, accumulate === 'float64' ? 1 : 0, ...x.shape, ...flags, x.offset, ...x.strides, out.offset, ...out.strides, code]));
      return true;
    },
    softmax(x, dim, out, log) {
      const rank = x.shape.length;
      const length = x.shape[rank - 1];
      if (!addon.softmax || x.dtype !== 'float32' || out.dtype !== 'float32' || rank === 0 || (dim < 0 ? dim + rank : dim) !== rank - 1) return false;
      if (!sameShape(x.shape, out.shape) || !dense(x) || !dense(out) || length === 0 || sizeOf(x.shape) < NATIVE_MIN_NUMERIC) return false;
      if (x.storage === out.storage && x.offset !== out.offset) return false; // in place only as the very same elements
      softmaxParams.set([x.offset, out.offset, sizeOf(x.shape) / length, length, log ? 1 : 0, threads]);
      addon.softmax(f32(x), f32(out), softmaxParams);
      return true;
    },
    crossEntropy(x, target, spec, out) {
      if (!addon.crossEntropy || x.dtype !== 'float32' || out.dtype !== 'float32' || target.dtype !== 'int32' || x.shape.length !== 2) return false;
      const [rows, classes] = x.shape;
      if (!sameShape(target.shape, [rows]) || !sameShape(out.shape, [rows]) || classes === 0 || (classes > 1 && x.strides[1] !== 1)) return false;
      if (rows * classes < NATIVE_MIN_NUMERIC || !Number.isSafeInteger(spec.ignoreIndex) || out.storage === x.storage || (rows > 1 && out.strides[0] === 0)) return false;
      entropyParams.set([x.offset, x.strides[0], target.offset, target.strides[0], out.offset, out.strides[0], rows, classes, spec.ignoreIndex, spec.labelSmoothing, threads]);
      addon.crossEntropy(f32(x), target.storage.data as Int32Array, f32(out), entropyParams);
      return true;
    },
    adamw(param, grad, expAvg, expAvgSq, maxExpAvgSq, spec) {
      if (!addon.adamw || !nativeUpdateFits([param, grad, expAvg, expAvgSq, maxExpAvgSq])) return false;
      // The scalars as the TypeScript kernel computes them; the addon rounds each to float32 as it does.
      const { lr, beta1, beta2, eps, weightDecay, decoupled, maximize, stepSize, biasCorrection2Sqrt } = spec;
      const w = 1 - beta1;
      const lerpFromM = Math.abs(w) < 0.5;
      adamParams.set([param.offset, grad.offset, expAvg.offset, expAvgSq.offset, maxExpAvgSq?.offset ?? 0, sizeOf(param.shape)]);
      adamParams.set([maximize ? 1 : 0, weightDecay !== 0 ? 1 : 0, decoupled ? 1 : 0, lerpFromM ? 1 : 0], 6);
      adamParams.set([1 - lr * weightDecay, weightDecay, lerpFromM ? w : 1 - w, beta2, 1 - beta2, biasCorrection2Sqrt, eps, -stepSize, threads], 10);
      addon.adamw(f32(param), f32(grad), f32(expAvg), f32(expAvgSq), maxExpAvgSq ? f32(maxExpAvgSq) : null, adamParams);
      return true;
    },
    adadelta(param, grad, squareAvg, accDelta, spec) {
      if (!addon.adadelta || !nativeUpdateFits([param, grad, squareAvg, accDelta])) return false;
      // The scalars as the TypeScript kernel computes them; the addon rounds each to float32 as it does.
      const { lr, rho, eps, weightDecay, maximize } = spec;
      const offsets = [param.offset, grad.offset, squareAvg.offset, accDelta.offset, sizeOf(param.shape)];
      const params = Float64Array.from([...offsets, maximize ? 1 : 0, weightDecay !== 0 ? 1 : 0, rho, 1 - rho, eps, weightDecay, -lr, threads]);
      addon.adadelta(f32(param), f32(grad), f32(squareAvg), f32(accDelta), params);
      return true;
    },
    rmsprop(param, grad, squareAvg, momentumBuffer, gradAvg, spec) {
      if (!addon.rmsprop || !nativeUpdateFits([param, grad, squareAvg, momentumBuffer, gradAvg])) return false;
      const { lr, alpha, eps, weightDecay, momentum, maximize } = spec;
      const offsets = [param.offset, grad.offset, squareAvg.offset, momentumBuffer?.offset ?? 0, gradAvg?.offset ?? 0, sizeOf(param.shape)];
      const params = Float64Array.from([...offsets, maximize ? 1 : 0, weightDecay !== 0 ? 1 : 0, alpha, 1 - alpha, eps, weightDecay, momentum, -lr, threads]);
      addon.rmsprop(f32(param), f32(grad), f32(squareAvg), momentumBuffer && f32(momentumBuffer), gradAvg && f32(gradAvg), params);
      return true;
    },
    stridedSum(src, view, out) {
      const rank = src.shape.length;
      if (!addon.stridedSum || src.dtype !== 'float32' || out.dtype !== 'float32' || rank > NATIVE_MAX_RANK || !dense(out) || src.storage === out.storage) return false;
      addon.stridedSum(f32(src), f32(out), Float64Array.from([rank, threads, ...src.shape, src.offset, ...src.strides, out.offset, sizeOf(out.shape), view.offset, ...view.strides]));
      return true;
    },
  };
}

/** `base`'s random and reduce with what the native path takes routed to it. */
function numericKernels(native: NativeNumerics, base: Kernels<CpuStorage>): Pick<Kernels<CpuStorage>, 'random' | 'reduce'> {
  return {
    random(out, spec) {
      if (!native.random(out, spec)) base.random(out, spec);
    },
    reduce(op, x, axes, out, accumulate) {
      if (!native.reduce(op, x, axes, out, accumulate)) base.reduce(op, x, axes, out, accumulate);
    },
  };
}

/**
 * `base` with its float32 softmax, logSoftmax, crossEntropy, adamw, adadelta, rmsprop, maxPool2d and
 * maxPool2dBackward of at least NATIVE_MIN_NUMERIC elements routed to the native path (a kernel `base` lacks stays absent), and
 * stridedSum, matmulToFloat32, matmulRounded and matmulStridedSum, which only the native path offers (in TypeScript for what the
 * addon does not take).
 */
export function nativeFused(native: NativeNumerics & Pick<NativePath, 'halfMatmul' | 'halfMatmulStridedSum'>, base: Partial<CpuFusedKernels>): Partial<FusedKernels<CpuStorage>> {
  const { softmax, logSoftmax, crossEntropy, adamw, adadelta, rmsprop, maxPool2d, maxPool2dBackward } = base;
  const sum = (src: Ref, view: StridedView, out: Ref): void => void (native.stridedSum(src, view, out) || stridedSum(src, view, out));
  const product = (a: Ref, b: Ref, out: Ref): void => void (native.halfMatmul(a, b, out, 'float32') || matmulToFloat32(a, b, out));
  return {
    ...base,
    stridedSum: sum,
    matmulToFloat32: product,
    // What the addon does not take runs as its three steps: the product, its sum, the rounding.
    matmulStridedSum: (a, b, size, view, out) => native.halfMatmulStridedSum(a, b, size, view, out) || matmulStridedSum(a, b, size, view, out, { product, sum }),
    // Out of a's dtype only (halfMatmul also takes a float32 out, which the TypeScript kernel refuses here).
    matmulRounded: (a, b, bias, out) => (out.dtype === a.dtype && native.halfMatmul(a, b, out, 'float32', undefined, bias)) || matmulRounded(a, b, bias, out),
    ...(softmax && { softmax: (x, dim, out) => native.softmax(x, dim, out, false) || softmax(x, dim, out) }),
    ...(logSoftmax && { logSoftmax: (x, dim, out) => native.softmax(x, dim, out, true) || logSoftmax(x, dim, out) }),
    ...(crossEntropy && { crossEntropy: (x, target, spec, out) => native.crossEntropy(x, target, spec, out) || crossEntropy(x, target, spec, out) }),
    ...(adamw && { adamw: (p, g, m, v, vmax, spec) => native.adamw(p, g, m, v, vmax, spec) || adamw(p, g, m, v, vmax, spec) }),
    ...(adadelta && { adadelta: (p, g, v, u, spec) => native.adadelta(p, g, v, u, spec) || adadelta(p, g, v, u, spec) }),
    ...(rmsprop && { rmsprop: (p, g, v, b, a, spec) => native.rmsprop(p, g, v, b, a, spec) || rmsprop(p, g, v, b, a, spec) }),
    ...(maxPool2d && { maxPool2d: (x, out, indices, geometry) => native.maxPool2d(x, out, indices, geometry) || maxPool2d(x, out, indices, geometry) }),
    ...(maxPool2dBackward && { maxPool2dBackward: (grad, indices, gi) => native.maxPool2dBackward(grad, indices, gi) || maxPool2dBackward(grad, indices, gi) }),
  };
}

// ---- Max pooling ----------------------------------------------------------------------------

/** Max-pooling's native entry points: float32, float16 or bfloat16, all four dims non-empty, strides ≥ 0 (else false, and the TypeScript kernel runs). */
function maxPoolPath(addon: CpuAddon, threads: number): Pick<NativeNumerics, 'maxPool2d' | 'maxPool2dBackward'> {
  // `typed` share one dtype the addon takes (its type code is returned), or null.
  const fits = (refs: readonly Ref[], typed: readonly Ref[]): number | null => {
    const code = HALF_CODES[typed[0]!.dtype];
    if (code === undefined || !typed.every((r) => r.dtype === typed[0]!.dtype)) return null;
    return refs.every((r) => r.shape.length === 4 && r.shape.every((n) => n > 0) && r.strides.every((st) => st >= 0)) ? code : null;
  };
  const threadsFor = (numel: number) => (numel >= NATIVE_PARALLEL_ELEMENTS ? threads : 1);
  return {
    maxPool2d(x, out, indices, g) {
      const code = fits([x, out, indices], [x, out]);
      if (!addon.maxPool2d || code === null || indices.dtype !== 'int32' || sizeOf(x.shape) < NATIVE_MIN_NUMERIC) return false;
      const [N, C] = x.shape;
      if (!sameShape(out.shape, [N, C, ...g.out]) || !sameShape(indices.shape, out.shape) || !dense(out) || !dense(indices)) return false;
      if (out.storage === x.storage) return false;
      addon.maxPool2d(elements(x), elements(out), indices.storage.data as Int32Array, Float64Array.from([
        threadsFor(sizeOf(x.shape)), ...x.shape, x.offset, ...x.strides, out.offset, indices.offset, ...g.kernel, ...g.stride, ...g.padding, ...g.dilation, ...g.out, code,
      ]));
      return true;
    },
    maxPool2dBackward(grad, indices, gi) {
      const code = fits([grad, indices, gi], [grad, gi]);
      if (!addon.maxPool2dBackward || code === null || indices.dtype !== 'int32' || sizeOf(gi.shape) < NATIVE_MIN_NUMERIC) return false;
      if (!sameShape(indices.shape, grad.shape) || gi.shape[0] !== grad.shape[0] || gi.shape[1] !== grad.shape[1] || !dense(gi) || gi.storage === grad.storage) return false;
      addon.maxPool2dBackward(elements(grad), indices.storage.data as Int32Array, elements(gi), Float64Array.from([
        threadsFor(sizeOf(gi.shape)), ...gi.shape, grad.shape[2]!, grad.shape[3]!, grad.offset, ...grad.strides, indices.offset, ...indices.strides, gi.offset, code,
      ]));
      return true;
    },
  };
}
