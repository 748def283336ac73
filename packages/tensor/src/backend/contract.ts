// The backend contract, version 1. A backend is an object of type `Backend<S>` where `S` is its own
// storage handle; the compiler lists anything missing. Backends execute primitives on storage and
// nothing else: views, broadcasting, promotion, the device rule, autograd and autocast live in core.
import type { DTypeName, HostArray } from '../dtype/dtype.js';
import {
  BINARY, COMPARE, kernelOps, UNARY, type ArgReduceOp, type BinaryOp, type CompareOp, type CumulativeOp, type ReduceOp, type UnaryOp,
} from '../ops/table.js';

export type { ArgReduceOp, BinaryOp, CompareOp, CumulativeOp, ReduceOp, UnaryOp };

/**
 * Semver of this contract. Core accepts a backend whose major version matches: a minor bump only
 * adds optional members (1.1.0: the crossEntropy, unscaleAndCheck and adamw fused kernels; 1.2.0:
 * addcmul; 1.3.0: the argsort, cumulative and scatter primitives), so a backend built against 1.0.0
 * still registers.
 */
export const CONTRACT_VERSION = '1.3.0';

/**
 * A strided view of a storage: element (i0, i1, …) lives at `offset + Σ ik·strides[k]` (in
 * elements). Inputs may be non-contiguous, transposed or broadcast (stride 0). Outputs are
 * strided too (core writes in-place ops and `cat`/`pad` through views) but never overlap
 * themselves; an output never aliases an input unless the primitive says so.
 */
export interface TensorRef<S> {
  /** The backend's storage handle. */
  readonly storage: S;
  /** The element type of the storage. */
  readonly dtype: DTypeName;
  /** The size of each dim. */
  readonly shape: readonly number[];
  /** The step between neighbours of each dim, in elements (0 for a broadcast dim). */
  readonly strides: readonly number[];
  /** Where element (0, 0, …) lives in the storage, in elements. */
  readonly offset: number;
}

/** Unary elementwise primitives, in the op table's order (backends' op codes follow it). Floating ops on int/bool inputs never reach a backend: core promotes first. */
export const UNARY_OPS: readonly UnaryOp[] = Object.freeze(Object.keys(UNARY) as UnaryOp[]);

/** Binary elementwise primitives; both inputs have the output's dtype and shape (broadcast by strides). */
export const BINARY_OPS: readonly BinaryOp[] = Object.freeze(Object.keys(BINARY) as BinaryOp[]);

/** Comparisons: inputs share a dtype, the output is bool. NaN compares unequal to everything. */
export const COMPARE_OPS: readonly CompareOp[] = Object.freeze(Object.keys(COMPARE) as CompareOp[]);

/** Reduction primitives over a set of axes. */
export const REDUCE_OPS: readonly ReduceOp[] = Object.freeze(kernelOps('reduce'));

/** Index-of-extreme primitives along one axis. */
export const ARG_REDUCE_OPS: readonly ArgReduceOp[] = Object.freeze(kernelOps('argReduce'));

/** Running (inclusive) reductions along one axis: `Kernels.cumulative` (since 1.3.0). */
export const CUMULATIVE_OPS: readonly CumulativeOp[] = Object.freeze(kernelOps('cumulative'));

/** How `Kernels.scatter` combines a src element with the out element it lands on (since 1.3.0). */
export const SCATTER_MODES = Object.freeze(['assign', 'prod', 'amax', 'amin'] as const);

/** One of SCATTER_MODES: `assign` (src replaces), `prod`, `amax` or `amin`. */
export type ScatterMode = (typeof SCATTER_MODES)[number];

/** Counter-based random streams: Philox4x32-10 keyed by the seed, counted by `offset`. */
export interface RandomSpec {
  /** The 64-bit key as two u32 words (seed low, seed high). */
  readonly key: readonly [number, number];
  /**
   * Counter of the first 4-word Philox block. Element i takes word (i mod 4) of the block at
   * counter `offset + floor(i / 4)` (128-bit counter: low word first, upper words zero but the
   * second, which carries overflow of the first).
   */
  readonly offset: number;
  /**
   * - `uniform` (float32 out): `(bits >>> 8) · 2^-24`, exact, in [0, 1).
   * - `randint` (int32 out): `low + floor(bits · (high − low) / 2^32)`, exact integer arithmetic.
   */
  readonly distribution:
    | {
      /** Uniform float32 values in [0, 1). */
      readonly kind: 'uniform';
    }
    | {
      /** Uniform int32 values in [low, high). */
      readonly kind: 'randint';
      /** The smallest value (inclusive). */
      readonly low: number;
      /** The bound (exclusive). */
      readonly high: number;
    };
}

/**
 * The primitives. Every method writes into `out` (storage allocated by core) and returns nothing;
 * a backend may queue the work and run it later, in call order. Half types are computed in f32 and
 * rounded once on store (round-to-nearest-even); reductions and matmul accumulate in `accumulate`.
 */
export interface Kernels<S> {
  /** out = op(x), elementwise; x has out's dtype and shape. */
  unary(op: UnaryOp, x: TensorRef<S>, out: TensorRef<S>): void;
  /** out = op(a, b), elementwise. */
  binary(op: BinaryOp, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /** out = op(a, b) as bool, elementwise. */
  compare(op: CompareOp, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /** out = cond ? a : b; cond is bool, a/b have out's dtype. */
  where(cond: TensorRef<S>, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * Convert dtype. Floats → int truncate toward zero (NaN/Inf/out of range: unspecified, core
   * never relies on it); anything → bool is `x != 0` (NaN is true); bool → numbers is 0/1;
   * to half types rounds to nearest even.
   */
  cast(x: TensorRef<S>, out: TensorRef<S>): void;
  /** Strided copy, same dtype: materialises views and writes into views. */
  copy(x: TensorRef<S>, out: TensorRef<S>): void;
  /** Set every element of `out` to `value` (already representable in out's dtype after rounding). */
  fill(out: TensorRef<S>, value: number): void;
  /**
   * Reduce `x` over `axes`; `out` has x's rank with those axes of size 1. Accumulates in
   * `accumulate` and rounds once into out's dtype. Empty reductions give the identity (sum 0,
   * prod 1); core rejects empty max/min. max/min propagate NaN.
   */
  reduce(op: ReduceOp, x: TensorRef<S>, axes: readonly number[], out: TensorRef<S>, accumulate: DTypeName): void;
  /** Index (int32) of the first max/min along `axis`; NaN counts as the maximum and the minimum. out keeps the axis with size 1. */
  argReduce(op: ArgReduceOp, x: TensorRef<S>, axis: number, out: TensorRef<S>): void;
  /** Batched matmul: a [B,M,K] @ b [B,K,N] → out [B,M,N]; transposes and batch broadcasting arrive as strides. */
  matmul(a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>, accumulate: DTypeName): void;
  /** out[i][j][k] = x[i][index[i][j][k]][k] for dim = 1 (PyTorch's gather); index is int32 and in range (core checks). */
  gather(x: TensorRef<S>, dim: number, index: TensorRef<S>, out: TensorRef<S>): void;
  /** In place: out[i][index[i][j][k]][k] += src[i][j][k] for dim = 1; accumulates duplicates in f32 for half types. */
  scatterAdd(out: TensorRef<S>, dim: number, index: TensorRef<S>, src: TensorRef<S>): void;
  /** Fill a contiguous `out` from the counter-based generator (same numbers on every backend). */
  random(out: TensorRef<S>, spec: RandomSpec): void;
  /**
   * Since 1.3.0, optional: without it `sort`, `argsort`, `topk` and `msort` throw on the backend.
   * The stable order of each fibre of `x` along `axis`: out (int32, x's shape, strided) holds at
   * position j of each fibre the index along `axis` of the element that sorts j-th. The order is
   * total, so every backend gives the same indices:
   * - ascending: a before b when a < b; NaN is larger than every number (+Inf too), NaNs equal each
   *   other (PyTorch: NaN sorts as the largest); −0 and +0 are equal;
   * - descending: b before a when a < b (NaN first);
   * - elements that are equal keep their order along `axis`, in both directions (a stable sort).
   * Half types compare as their f32 values, bool as 0 < 1; x has any dtype the backend computes in.
   */
  argsort?(x: TensorRef<S>, axis: number, descending: boolean, out: TensorRef<S>): void;
  /**
   * Since 1.3.0, optional: without it `cumsum` and `cumprod` throw on the backend. Inclusive
   * running sum (`cumsum`) or product (`cumprod`) along `axis`:
   * `out[…, i, …] = x[…, 0, …] ∘ x[…, 1, …] ∘ … ∘ x[…, i, …]`, combined in index order. x and out
   * share dtype and shape (core casts int and bool inputs to int32 first). The running value is kept
   * in `accumulate` (float32 for float32 and the half types, float64, or int32, which wraps like C)
   * and each output is rounded once from it into out's dtype.
   */
  cumulative?(op: CumulativeOp, x: TensorRef<S>, axis: number, out: TensorRef<S>, accumulate: DTypeName): void;
  /**
   * Since 1.3.0, optional: without it `scatter`, `scatter_` and `scatterReduce` (but for sums,
   * which run on `scatterAdd`) throw on the backend. In place, PyTorch's scatter along `dim` with a
   * combine mode: for each position p of `index` (int32), the element of `out` at p with its `dim`
   * coordinate replaced by `index[p]` becomes `combine(current, src[p])`:
   * - `assign`: src[p]; `prod`: current·src[p];
   * - `amax` / `amin`: the larger / smaller of the two, NaN when either is NaN.
   *
   * src has out's dtype and at least index's extent (it may be broadcast by stride 0); index has
   * out's rank and, but along `dim`, at most out's extent. Contributions to one element are applied
   * in the order of their position along `dim`, so with repeated indices `assign` keeps the last
   * one on every backend (PyTorch leaves the winner unspecified). Half types compute each
   * combination in f32 and round it on store; int32 products wrap like C; for bool, `prod` is AND,
   * `amax` OR and `amin` AND. An index outside [0, out.shape[dim]) never writes outside `out`: the
   * backend skips it or throws (core reports it first where it can read indices synchronously).
   */
  scatter?(out: TensorRef<S>, dim: number, index: TensorRef<S>, src: TensorRef<S>, mode: ScatterMode): void;
}

/**
 * Optional fused kernels for composite ops. Core uses one when present (and fused kernels are
 * enabled); otherwise it runs the op's decomposition into primitives. Results must match the
 * decomposition within the op's tolerance class.
 */
export interface FusedKernels<S> {
  /** Softmax of `x` along `dim` into `out` (same dtype and shape). */
  softmax(x: TensorRef<S>, dim: number, out: TensorRef<S>): void;
  /** Log-softmax of `x` along `dim` into `out` (same dtype and shape). */
  logSoftmax(x: TensorRef<S>, dim: number, out: TensorRef<S>): void;
  /**
   * `out = x + t1·t2` elementwise (since 1.2.0): core's `a.add(b, alpha)` and `sub` with an alpha
   * (t2 is then a 0-dim scalar broadcast by stride 0), one kernel instead of a mul and an add.
   * All four share out's floating dtype and shape (broadcast inputs arrive as strides). The
   * product is rounded to out's dtype before the sum, as the decomposition `x + (t1·t2)` rounds:
   * no fused multiply-add, so float32 and float64 results equal it bit for bit. Half types are
   * computed in f32 (the product rounded to f32) and rounded once on store.
   */
  addcmul(x: TensorRef<S>, t1: TensorRef<S>, t2: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * Per-row cross entropy of logits `x` [N, C] (floating, possibly strided) against int32 class
   * indices `target` [N], into `out` [N] of x's dtype:
   * `out[i] = lse_i − (1 − ε)·x[i, t_i] − (ε/C)·Σ_c x[i, c]` with `lse_i = log Σ_c exp(x[i, c])`
   * computed stably (row max subtracted), `ε = spec.labelSmoothing`; `out[i] = 0` where
   * `t_i == spec.ignoreIndex`. Computed in at least f32 (f64 for float64), rounded once on store. A target
   * outside [0, C) that is not ignoreIndex gives NaN (core reports it where it can read the target).
   * Core reduces the rows ('mean' divides by the count of non-ignored targets) and keeps the
   * gradient rule, so the kernel is forward only. Class weights are never passed: core decomposes.
   */
  crossEntropy(x: TensorRef<S>, target: TensorRef<S>, spec: CrossEntropySpec, out: TensorRef<S>): void;
  /**
   * GradScaler's `_amp_foreach_non_finite_check_and_unscale_` (GS-6), in place and with no host
   * read: `foundInf` (float32, 1 element) becomes 1 if any element of any grad is Inf or NaN (it is
   * never cleared), then every element becomes `v·invScale` (invScale: float32, 1 element). Grads
   * are contiguous (offset may be non-zero), share one floating dtype; half types are multiplied in
   * f32 and rounded once on store, float64 by the exactly widened invScale. The finiteness test
   * reads the values before they are scaled.
   */
  unscaleAndCheck(grads: readonly TensorRef<S>[], foundInf: TensorRef<S>, invScale: TensorRef<S>): void;
  /**
   * One AdamW update of one parameter, in place (OPT-9), or Adam's (OPT-8) with `decoupled: false`. `param`, `grad`, `expAvg`,
   * `expAvgSq` and `maxExpAvgSq` (present only with amsgrad) are contiguous, of one floating dtype
   * and one numel. Per element, computed in f32 (f64 for float64), with the moments and the
   * parameter rounded to their dtype on store (and, for half types, `g + wd·p`, `sqrt(v)` and the
   * denominator rounded to it as the decomposition does):
   * 1. `g = maximize ? −grad : grad`; if wd ≠ 0: decoupled ? `p = p·(1 − lr·wd)` : `g = g + wd·p`;
   * 2. `m = lerp(m, g, 1 − β1)` (ATen's lerp); `v = v·β2 + g·(1 − β2)·g`;
   * 3. amsgrad: `vmax = max(vmax, v)`, used as v below;
   * 4. `p = p + (m·(−stepSize)) / (sqrt(v) / biasCorrection2Sqrt + eps)`.
   */
  adamw(
    param: TensorRef<S>,
    grad: TensorRef<S>,
    expAvg: TensorRef<S>,
    expAvgSq: TensorRef<S>,
    maxExpAvgSq: TensorRef<S> | null,
    spec: AdamSpec,
  ): void;
}

/** How core moves host data into a storage (see `Backend.write`). */
export interface WriteHint {
  /** `.to(device, { nonBlocking: true })`: the copy need not be complete when write returns. */
  readonly nonBlocking: boolean;
  /** The source is a pinned CPU tensor (`pinMemory()`). */
  readonly pinned: boolean;
}

/** crossEntropy's scalar arguments. */
export interface CrossEntropySpec {
  /** Targets equal to this contribute 0. */
  readonly ignoreIndex: number;
  /** ε in [0, 1]: the target distribution is (1 − ε)·one-hot + ε/C. */
  readonly labelSmoothing: number;
}

/** One Adam/AdamW step's scalars; the bias corrections are computed on the host in f64. */
export interface AdamSpec {
  /** The step count after this update (1 on the first). */
  readonly step: number;
  /** Learning rate. */
  readonly lr: number;
  /** First moment decay. */
  readonly beta1: number;
  /** Second moment decay. */
  readonly beta2: number;
  /** Added to the denominator. */
  readonly eps: number;
  /** Weight decay (0: none). */
  readonly weightDecay: number;
  /** AdamW: decay the parameter (`p·(1 − lr·wd)`) instead of adding `wd·p` to the gradient. */
  readonly decoupled: boolean;
  /** Ascend the objective: the gradient is negated. */
  readonly maximize: boolean;
  /** `lr / (1 − β1^step)`. */
  readonly stepSize: number;
  /** `sqrt(1 − β2^step)`. */
  readonly biasCorrection2Sqrt: number;
}

/** The names of the optional fused kernels. */
export type FusedKernelName = keyof FusedKernels<unknown>;

/** What a backend can do with one dtype. */
export interface DTypeSupport {
  /** Tensors of this dtype can be allocated, written, read and copied. */
  readonly storage: boolean;
  /** Primitives accept it. */
  readonly compute: boolean;
}

/** What a backend declares about itself; core and the conformance suite act on it. */
export interface Capabilities {
  /** Per dtype: storage and compute support (a missing dtype is unsupported). */
  readonly dtypes: Readonly<Partial<Record<DTypeName, DTypeSupport>>>;
  /** `readSync` exists: `dataSync()` works and reads need not await. */
  readonly syncRead: boolean;
  /** Largest single allocation, in bytes. */
  readonly maxBufferBytes: number;
  /** Free-form feature flags, e.g. 'shader-f16'. */
  readonly features: readonly string[];
  /** NaN/Inf follow IEEE 754 everywhere (conformance skips NaN/Inf cases otherwise). */
  readonly strictNumerics: boolean;
  /** An accelerator that reads page-locked host memory faster: `pinMemory()` needs one such backend to be available. */
  readonly pinnedMemory: boolean;
}

/** A device's memory use, as `memoryStats()` reports it. */
export interface MemoryStats {
  /** Bytes held by live storages. */
  readonly allocatedBytes: number;
  /** Live storages. */
  readonly allocations: number;
  /** Bytes reserved from the device (pools, caches), ≥ allocatedBytes. */
  readonly reservedBytes: number;
}

/**
 * A compute backend: storage management plus the closed list of primitives, for one device type. `S` is the backend's own storage handle. Register it with `registerBackend`.
 */
export interface Backend<S = unknown> {
  /** The device type it serves, e.g. 'cpu', 'webgpu', 'cuda', or a third party's name. */
  readonly name: string;
  /** The contract version it implements (CONTRACT_VERSION it was built against). */
  readonly contractVersion: string;
  /** How many devices of this type exist (indices 0..deviceCount-1). */
  readonly deviceCount: number;
  /** Supported dtypes and features. */
  readonly capabilities: Capabilities;

  /** Allocate `numel` elements of `dtype` on device `index`; contents are unspecified. */
  alloc(index: number, dtype: DTypeName, numel: number): S;
  /** Release a storage. Core calls it once, when the last tensor over it is disposed or collected. */
  free(storage: S): void;
  /**
   * Copy host data (the dtype's host array, see HostArrayByDType) into the storage from element
   * `offset`. `data` may be reused by the caller once this returns. `hint` (since 1.1.0, optional
   * to honour) says how core moves it: a non-blocking copy from pinned host memory may be queued
   * with the device's work (through a mapped staging buffer) instead of flushing it first.
   */
  write(storage: S, data: HostArray, offset: number, hint?: WriteHint): void;
  /** Read the whole storage once all queued work on it is done. */
  read(storage: S): Promise<HostArray>;
  /** Synchronous read, for backends that declare `syncRead`. */
  readSync?(storage: S): HostArray;
  /** Wait until all queued work on device `index` is done. */
  synchronize(index: number): Promise<void>;
  /** Memory in use on device `index`. */
  memoryStats(index: number): MemoryStats;

  /** The primitives. */
  readonly kernels: Kernels<S>;
  /** Optional fused kernels; core falls back to decompositions for any that are missing. */
  readonly fused?: Partial<FusedKernels<S>>;
}

/** How a backend is registered: its name, its priority, and a way to build it on first use. */
export interface BackendFactory {
  /** The device type the backend will serve. */
  readonly name: string;
  /** Higher wins in `bestDevice()`: cuda 300, webgpu 200, cpu 100 by convention. */
  readonly priority: number;
  /** Build the backend. May be async and may throw: the reason is reported as "unavailable". */
  create(): Backend<any> | Promise<Backend<any>>;
}
