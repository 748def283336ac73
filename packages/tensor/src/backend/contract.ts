// The backend contract, version 1. A backend is an object of type `Backend<S>` where `S` is its own
// storage handle; the compiler lists anything missing. Backends execute primitives on storage and
// nothing else: views, broadcasting, promotion, the device rule, autograd and autocast live in core.
//
// These doc comments are the one statement of every rule the conformance suite (@core/conformance)
// holds a backend to. Each rule names the case ids that check it, as `conformance:` followed by ids
// or id prefixes ending in '/' (a case id is `category/op/dtype/sample[/fused|decomposed]`); the
// docs test test/docs/contract-rules.test.ts fails when a category has no rule here or a cited id
// matches no case. packages/tensor/BACKENDS.md summarises them.
import type { DTypeName, HostArray } from '../dtype/dtype.js';
import {
  BINARY, COMPARE, kernelOps, UNARY, type ArgReduceOp, type BinaryOp, type CompareOp, type CumulativeOp, type ReduceOp, type UnaryOp,
} from '../ops/table.js';

export type { ArgReduceOp, BinaryOp, CompareOp, CumulativeOp, ReduceOp, UnaryOp };

/**
 * Semver of this contract. Core accepts a backend whose major version matches: a minor bump only
 * adds optional members (1.1.0: the crossEntropy, unscaleAndCheck and adamw fused kernels; 1.2.0:
 * addcmul; 1.3.0: the argsort, cumulative and scatter primitives; 1.4.0: the attention fused
 * kernel; 1.5.0: `prepare` and the `autocastSpeed` capability; 1.6.0: the maxPool2d, adadelta and
 * rmsprop fused kernels and stridedSum, asStrided's gradient, and `prepare`'s options; 1.7.0: the
 * matmulToFloat32 fused kernel; 1.8.0: matmulRounded; 1.9.0: matmulStridedSum), so a backend built
 * against 1.0.0
 * still registers. A backend's `contractVersion` is a semver string with this major
 * (conformance: `storage/identity`).
 */
export const CONTRACT_VERSION = '1.9.0';

/**
 * A strided view of a storage: element (i0, i1, …) lives at `offset + Σ ik·strides[k]` (in
 * elements). Inputs may be non-contiguous, transposed, permuted, sliced with a step, offset or
 * broadcast (stride 0); the suite's strided samples hold a sentinel in the elements a view skips,
 * so reading the wrong element shows. Outputs are strided too (core writes in-place ops, `copy_`,
 * `fill_`, `cat` and `pad` through views, and what is written through a view must land in its
 * base) but never overlap themselves; an output never aliases an input unless the primitive says
 * so (conformance: `storage/strided-kernel-copy`, `views/`).
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

/**
 * Unary elementwise primitives, in the op table's order (backends' op codes follow it). x has
 * out's dtype and shape. Which dtypes reach the backend: floating ops (exp … erf) only floating
 * ones, as core converts int32 and bool inputs to float32 first; `neg`, `abs`, `sign` and `relu`
 * floating ones and int32 (core rejects bool with a DTypeError); `floor`, `ceil`, `round` and
 * `trunc` every dtype (the identity on int32 and bool); `logicalNot` bool only (core casts to bool
 * first). The tolerance classes are Kernels' (exact unless said otherwise). Per op:
 *
 * - `neg`, `abs`: int32 wraps like C (`abs(−2³¹) = −2³¹`) (conformance: `primitives/neg/`, `primitives/abs/`, `numerics/neg/`, `numerics/abs/`).
 * - `sign`: −1, 0 or 1, and NaN for NaN; either zero for ±0 (exact-any-zero) (conformance: `primitives/sign/`, `numerics/sign/`).
 * - `exp`, `expm1`, `log`, `log1p`, `rsqrt`, `sin`, `cos`, `tan`, `tanh`, `sigmoid` (`1 / (1 + e^−x)`):
 *   approx, with IEEE results at ±Inf, NaN and outside the domain (`log(−1)` is NaN, `log(0)` is −Inf)
 *   (conformance: `primitives/exp/`, `primitives/expm1/`, `primitives/log/`, `primitives/log1p/`,
 *   `primitives/rsqrt/`, `primitives/sin/`, `primitives/cos/`, `primitives/tan/`, `primitives/tanh/`,
 *   `primitives/sigmoid/`, `numerics/exp/`, `numerics/log/`, `numerics/sigmoid/`).
 * - `erf`: approx, so within 1e-10 relative for float64: an approximation good only to float32
 *   (Abramowitz–Stegun 7.1.26, error 1.5e-7) fails every float64 case; erf(±Inf) = ±1 (conformance: `primitives/erf/`, `numerics/erf/`).
 * - `sqrt`, `reciprocal`: correctly rounded, so exact (conformance: `primitives/sqrt/`, `primitives/reciprocal/`, `numerics/sqrt/`, `numerics/reciprocal/`).
 * - `relu`: `max(x, 0)`; NaN stays NaN; either zero for ±0 (conformance: `primitives/relu/`, `numerics/relu/`).
 * - `floor`, `ceil`, `trunc`: keep the sign of zero (`ceil(−0.5) = −0`) (conformance: `primitives/floor/`, `primitives/ceil/`, `primitives/trunc/`).
 * - `round`: half to even, keeping the sign of zero: `round(2.5) = 2`, `round(−0.5) = −0`
 *   (JavaScript's Math.round rounds halves up) (conformance: `primitives/round/`, `numerics/round/`).
 * - `logicalNot`: 1 where x is 0, else 0 (conformance: `primitives/logicalNot/`).
 */
export const UNARY_OPS: readonly UnaryOp[] = Object.freeze(Object.keys(UNARY) as UnaryOp[]);

/**
 * Binary elementwise primitives; both inputs have the output's dtype and shape (core promotes and
 * broadcasts first, broadcast inputs by stride 0). A scalar operand (`x.mul(2)`) arrives as a 0-dim
 * tensor core made with `fill`, broadcast by strides; for float16/bfloat16 with a scalar, core runs
 * the op in float32 and casts once (PyTorch's opmath). Which dtypes reach the backend: `div` and
 * `atan2` floating ones only (integer division is true division: core converts int32 and bool to
 * float32, so no int32 `div` reaches a backend); `sub`, `pow` and `remainder` floating ones and
 * int32; on bool, core sends `add` and `maximum` as `logicalOr` and `mul` and `minimum` as
 * `logicalAnd`, so the backend sees bool only in the logical ops; `logicalAnd`/`logicalOr` get bool
 * inputs (core casts first). Per op:
 *
 * - `add`, `sub`, `mul`: exact; int32 wraps like C. A float64 product of two int32 values loses its
 *   low bits past 2⁵³: multiply in 32 bits (`Math.imul`) (conformance: `primitives/add/`, `primitives/sub/`,
 *   `primitives/mul/`, `numerics/add/`, `numerics/sub/`, `numerics/mul/`).
 * - `div`: exact (correctly rounded), IEEE at 0 and ±Inf (conformance: `primitives/div/`, `numerics/div/`).
 * - `pow`: C's pow, approx: `1^y = 1` and `x^0 = 1` even for NaN, `(−1)^±Inf = 1` (JavaScript's
 *   `**` gives NaN for the first and last). int32: exponents ≥ 0 by repeated multiplication that
 *   wraps like C (the suite checks exponents 0 to 8). Negative int32 exponents reach the backend
 *   too, unchecked by the suite; PyTorch's integer pow gives 1 for base 1, ±1 for base −1 and 0
 *   otherwise, as the cpu backend does (conformance: `primitives/pow/`, `numerics/pow/`).
 * - `maximum`, `minimum`: NaN when either input is NaN; either zero for ±0 (exact-any-zero) (conformance:
 *   `primitives/maximum/`, `primitives/minimum/`, `numerics/maximum/`, `numerics/minimum/`).
 * - `remainder`: Python's modulo, `a − b·floor(a/b)` with the divisor's sign (`remainder(−1, 3) = 2`,
 *   JavaScript's `%` gives −1); approx for floats (`a − b·floor(a/b)` may round, fmod plus the sign
 *   fix-up is exact); int32 exact.
 *   An int32 divisor of 0 reaches the backend unchecked by the suite; PyTorch raises, and the cpu
 *   backend throws a RangeError (conformance: `primitives/remainder/`, `numerics/remainder/`).
 * - `atan2(a, b)`: the angle of the point (b, a), approx (conformance: `primitives/atan2/`, `numerics/atan2/`).
 * - `logicalAnd`, `logicalOr`: 1 or 0 (conformance: `primitives/logicalAnd/`, `primitives/logicalOr/`).
 */
export const BINARY_OPS: readonly BinaryOp[] = Object.freeze(Object.keys(BINARY) as BinaryOp[]);

/**
 * Comparisons: inputs share a dtype (any dtype, bool included), the output is bool (1 or 0). NaN
 * compares unequal to everything (`ne` is true, the others false); −0 equals +0. A scalar operand is
 * rounded to the inputs' dtype, never widened (conformance: `primitives/eq/`, `primitives/ne/`,
 * `primitives/lt/`, `primitives/le/`, `primitives/gt/`, `primitives/ge/`, `numerics/eq/`, `numerics/lt/`).
 */
export const COMPARE_OPS: readonly CompareOp[] = Object.freeze(Object.keys(COMPARE) as CompareOp[]);

/** Reduction primitives over a set of axes (see `Kernels.reduce`). */
export const REDUCE_OPS: readonly ReduceOp[] = Object.freeze(kernelOps('reduce'));

/** Index-of-extreme primitives along one axis (see `Kernels.argReduce`). */
export const ARG_REDUCE_OPS: readonly ArgReduceOp[] = Object.freeze(kernelOps('argReduce'));

/** Running (inclusive) reductions along one axis: `Kernels.cumulative` (since 1.3.0). */
export const CUMULATIVE_OPS: readonly CumulativeOp[] = Object.freeze(kernelOps('cumulative'));

/** How `Kernels.scatter` combines a src element with the out element it lands on (since 1.3.0). */
export const SCATTER_MODES = Object.freeze(['assign', 'prod', 'amax', 'amin'] as const);

/** One of SCATTER_MODES: `assign` (src replaces), `prod`, `amax` or `amin`. */
export type ScatterMode = (typeof SCATTER_MODES)[number];

/**
 * Counter-based random streams: Philox4x32-10 (Salmon et al., SC'11) keyed by the seed, counted by
 * `offset`, so a seed gives the same bits on every backend. One block maps a 128-bit counter
 * (x0, x1, x2, x3) and the key (k0, k1) to four 32-bit words by ten rounds of
 *
 * - `p = 0xD2511F53 · x0` and `q = 0xCD9E8D57 · x2`, full 64-bit products (hi, lo: their 32-bit halves);
 * - `(x0, x1, x2, x3) ← (hi(q) ^ x1 ^ k0, lo(q), hi(p) ^ x3 ^ k1, lo(p))`;
 * - `k0 ← k0 + 0x9E3779B9`, `k1 ← k1 + 0xBB67AE85` (mod 2³²);
 *
 * and the block's result is (x0, x1, x2, x3) after the tenth round. A product of two 32-bit words
 * needs 64 bits: in JavaScript, BigInt or 16-bit halves, not a float64 multiply (conformance:
 * `random/rand/`, `random/randint/`, `random/stream/`, `random/randn/`, `random/same-as-cpu/`).
 */
export interface RandomSpec {
  /** The 64-bit key as two u32 words: (seed mod 2³², floor(seed / 2³²)). */
  readonly key: readonly [number, number];
  /**
   * Counter of the first 4-word Philox block. Element i takes word (i mod 4) of the block at
   * counter `offset + floor(i / 4)` (128-bit counter: low word first, upper words zero but the
   * second, which carries overflow of the first: counter 2³² is (0, 1, 0, 0)) (conformance:
   * `random/stream/`).
   */
  readonly offset: number;
  /**
   * - `uniform` (float32 out): `(bits >>> 8) · 2^-24`, exact, in [0, 1).
   * - `randint` (int32 out): `low + floor(bits · (high − low) / 2^32)`, exact integer arithmetic
   *   (the product needs up to 64 bits).
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
 * a backend may queue the work and run it later, in call order (conformance: `storage/ordering`).
 * Half types are computed in f32 and rounded once on store (round-to-nearest-even), so a sum of
 * 3,000 float16 ones is 3000, not the 2048 where float16 accumulation stalls; reductions and matmul
 * accumulate in `accumulate` (conformance: `promotion/TP-6/`).
 *
 * Which dtypes reach a kernel: `cast`, `copy` and `fill` every dtype the backend declares `storage`
 * for (data movement: views, `.to()`, `cat`, `copy_` need nothing else); every other primitive only
 * dtypes it declares `compute` for, as core raises a DTypeError before calling it otherwise
 * (conformance: `capabilities/`). Core promotes operands first (both inputs of a binary op arrive in
 * the result dtype), so the promotion rules never reach a backend, but their results are computed by
 * its kernels (conformance: `promotion/`).
 *
 * How results are compared with the suite's float64 oracle (computed from the same inputs and
 * rounded once into the result dtype), per primitive as stated: exact (bit for bit, the sign of zero
 * included; NaN matches NaN); exact-any-zero (the same, but −0 and +0 interchangeable); approx
 * (|got − want| ≤ atol + rtol·|want| with atol/rtol 1e-12/1e-10 for float64, 1e-6/1e-5 for float32,
 * 1e-5/1e-3 for float16, 1e-5/2e-2 for bfloat16); accumulated (approx plus a bound
 * (n + k)·u·Σ|terms| that grows with the reduced length n in the accumulation dtype's unit roundoff
 * u, so accumulating in more precision than `accumulate` asks for passes). ±Inf must match;
 * int32 and bool are always exact.
 *
 * Everything core builds from these primitives must then come out right too: composites
 * (conformance: `composites/`), gradients (conformance: `autograd/`), optimizers (conformance:
 * `optimizers/`), mixed precision (conformance: `autocast/`, `gradscaler/`) and a short training
 * run whose loss follows the oracle's float64 run step by step (conformance: `training/`).
 */
export interface Kernels<S> {
  /** out = op(x), elementwise; x has out's dtype and shape (the rules per op: UNARY_OPS). */
  unary(op: UnaryOp, x: TensorRef<S>, out: TensorRef<S>): void;
  /** out = op(a, b), elementwise (the rules per op: BINARY_OPS). */
  binary(op: BinaryOp, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /** out = op(a, b) as bool, elementwise (the rules: COMPARE_OPS). */
  compare(op: CompareOp, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * out = cond ? a : b; cond is bool (core rejects other conditions), a/b have out's dtype, any
   * dtype; NaN and ±Inf pass through untouched (conformance: `primitives/where/`, `numerics/where/`).
   */
  where(cond: TensorRef<S>, a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * Convert dtype, between any two dtypes the backend stores (exact):
   * - floats → int32 truncate toward zero (NaN, ±Inf and values outside int32: unspecified, core
   *   never relies on them and the suite never samples them);
   * - anything → bool is `x != 0` (NaN is true); bool → numbers is 0/1;
   * - to float32 rounds to nearest even (int32 values past 2²⁴ too);
   * - to float16/bfloat16 rounds to float32 first, then to nearest even, as PyTorch does: a float64
   *   or int32 value rounds twice (float64 1 + 2⁻¹¹ + 2⁻⁴⁰ becomes float16 1, not 1 + 2⁻¹⁰); ties go
   *   to the even neighbour, subnormals and overflow to ±Inf follow IEEE, NaN stays a NaN (its bits
   *   may differ);
   * - float16/bfloat16 → float32 or float64 is exact.
   *
   * conformance: `primitives/to(float32)/`, `primitives/to(float16)/`, `primitives/to(bfloat16)/`,
   * `primitives/to(float64)/`, `primitives/to(int32)/`, `primitives/to(bool)/`, `numerics/to(float16)/`,
   * `promotion/RND-1/`, `promotion/RND-2/`, `promotion/RND-3/`, `promotion/RND-4/`, `promotion/RND-5/`,
   * `promotion/RND-6/`, `promotion/RND-7/`.
   */
  cast(x: TensorRef<S>, out: TensorRef<S>): void;
  /** Strided copy, same dtype, exact bits: materialises views and writes into views (conformance: `storage/strided-kernel-copy`, `views/`). */
  copy(x: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * Set every element of `out` to `value`, converted as `cast` converts a float64: rounded into
   * float types, truncated toward zero into int32, and `value != 0` into bool. Core fills scalar
   * operands this way, e.g. a bool 0-dim tensor from 0.384 for `x.logicalAnd(0.384)`, which must
   * hold true (conformance: `primitives/full/`, `primitives/logicalAnd/`, `primitives/logicalOr/`).
   */
  fill(out: TensorRef<S>, value: number): void;
  /**
   * Reduce `x` over `axes` (non-negative, ascending; empty for a 0-dim x, when out is a copy of x);
   * `out` has x's rank with those axes of size 1 and x's dtype (core converts int and bool inputs to
   * int32 before sum and prod; max and min get any computed dtype, bool included). Accumulates in
   * `accumulate` (float64 for float64, float32 for the other floats, int32 for int32 and bool, which
   * wraps like C: use 32-bit products for prod) and rounds once into out's dtype; more precision is
   * fine. Empty reductions give the identity (sum 0, prod 1); core rejects empty max/min. max/min
   * propagate NaN and may return either zero for ±0 (conformance: `primitives/sum/`, `primitives/prod/`,
   * `primitives/amax/`, `primitives/amin/`, `promotion/TP-6/`).
   */
  reduce(op: ReduceOp, x: TensorRef<S>, axes: readonly number[], out: TensorRef<S>, accumulate: DTypeName): void;
  /**
   * Index (int32) of the first max/min along `axis` (in [0, rank)); out keeps the axis with size 1.
   * x has rank ≥ 1 (core passes a 0-dim x as shape [1]) and is never empty along `axis`. Ties go to
   * the first; NaN counts as the maximum and the minimum, so the first NaN wins both (conformance:
   * `primitives/argmax/`, `primitives/argmin/`, `composites/max(dim).indices/`, `composites/min(dim).indices/`).
   */
  argReduce(op: ArgReduceOp, x: TensorRef<S>, axis: number, out: TensorRef<S>): void;
  /**
   * Batched matmul, always rank 3: a [B,M,K] @ b [B,K,N] → out [B,M,N], all of one dtype (floating
   * or int32; core rejects bool and never promotes). A product of two matrices arrives as B = 1,
   * and transposes and batch broadcasting arrive as strides (a batch stride may be 0). K ≥ 1 and
   * out is never empty (core fills zeros itself when K = 0). Accumulates in `accumulate` as
   * `reduce` does; int32 wraps like C (conformance: `primitives/matmul/`, `composites/mm/`,
   * `composites/bmm/`, `promotion/TP-5/`).
   */
  matmul(a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>, accumulate: DTypeName): void;
  /**
   * PyTorch's gather along any `dim` in [0, rank): for every position p of `index`,
   * `out[p] = x[p with its dim coordinate replaced by index[p]]` (for dim = 1 on rank 3:
   * `out[i][j][k] = x[i][index[i][j][k]][k]`). index is int32, possibly strided, with x's rank; it
   * may be smaller than x on every dim but `dim` and of any size along `dim`; out has index's shape
   * and is never empty. A 0-dim x arrives as shape [1], with index and out 0-dim or of shape [1]
   * (treat a 0-dim one as [1]). Index values are in range when the backend has `readSync` (core
   * checks them); otherwise the kernel must not read outside x (conformance: `primitives/gather/`,
   * `composites/indexSelect/`, `composites/takeAlongDim/`).
   */
  gather(x: TensorRef<S>, dim: number, index: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * In place, PyTorch's scatter_add along any `dim` in [0, rank): for every position p of `index`,
   * `out[p with its dim coordinate replaced by index[p]] += src[p]` (for dim = 1 on rank 3:
   * `out[i][index[i][j][k]][k] += src[i][j][k]`). out is contiguous (for bool, adding is OR); index (int32,
   * never empty) has out's rank and, but along `dim`, at most out's extent; src has out's dtype and
   * at least index's extent on every dim: it may be larger than index (only the index-shaped corner
   * of src is added) and strided. A 0-dim out is passed as for `gather`. Duplicates accumulate
   * (accumulated tolerance): in f32 for half types, each touched element rounded once; int32 wraps
   * like C. Index values as for `gather` (conformance: `primitives/scatterAdd/`, `composites/indexAdd/`,
   * `composites/scatterReduce(sum)/`, `autograd/gather/`).
   */
  scatterAdd(out: TensorRef<S>, dim: number, index: TensorRef<S>, src: TensorRef<S>): void;
  /**
   * Fill a contiguous `out` (float32 for `uniform`, int32 for `randint`) from the counter-based
   * generator RandomSpec defines: the same numbers on every backend, bit for bit (conformance:
   * `random/rand/`, `random/randint/`).
   */
  random(out: TensorRef<S>, spec: RandomSpec): void;
  /**
   * Since 1.3.0, optional: without it `sort`, `argsort`, `topk` and `msort` throw on the backend
   * (and their conformance cases fail). The stable order of each fibre of `x` along `axis` (in
   * [0, rank); a 0-dim x arrives as shape [1]): out (int32, x's shape, strided) holds at position j
   * of each fibre the index along `axis` of the element that sorts j-th. The order is total, so
   * every backend gives the same indices:
   * - ascending: a before b when a < b; NaN is larger than every number (+Inf too), NaNs equal each
   *   other (PyTorch: NaN sorts as the largest); −0 and +0 are equal;
   * - descending: b before a when a < b (NaN first);
   * - elements that are equal keep their order along `axis`, in both directions (a stable sort).
   * Half types compare as their f32 values, bool as 0 < 1; x has any dtype the backend computes in
   * (conformance: `primitives/sort(dim).values/`, `primitives/sort(dim).indices/`, `composites/argsort/`,
   * `composites/msort/`, `composites/topk(k).values/`, `composites/topk(k).indices/`, `numerics/sort(dim).values/`,
   * `numerics/argsort/`).
   */
  argsort?(x: TensorRef<S>, axis: number, descending: boolean, out: TensorRef<S>): void;
  /**
   * Since 1.3.0, optional: without it `cumsum` and `cumprod` throw on the backend (and their cases
   * fail). Inclusive running sum (`cumsum`) or product (`cumprod`) along `axis` (in [0, rank); a
   * 0-dim x arrives as shape [1]):
   * `out[…, i, …] = x[…, 0, …] ∘ x[…, 1, …] ∘ … ∘ x[…, i, …]`, combined in index order. x and out
   * share dtype and shape (core casts int and bool inputs to int32 first). The running value is kept
   * in `accumulate` (float32 for float32 and the half types, float64, or int32, which wraps like C)
   * and each output is rounded once from it into out's dtype (conformance: `primitives/cumsum/`,
   * `primitives/cumprod/`, `numerics/cumsum/`, `numerics/cumprod/`).
   */
  cumulative?(op: CumulativeOp, x: TensorRef<S>, axis: number, out: TensorRef<S>, accumulate: DTypeName): void;
  /**
   * Since 1.3.0, optional: without it `scatter`, `scatter_` and `scatterReduce` (but for sums,
   * which run on `scatterAdd`) throw on the backend (and their cases fail). In place, PyTorch's
   * scatter along `dim` with a combine mode: for each position p of `index` (int32), the element of
   * `out` at p with its `dim` coordinate replaced by `index[p]` becomes `combine(current, src[p])`:
   * - `assign`: src[p]; `prod`: current·src[p];
   * - `amax` / `amin`: the larger / smaller of the two, NaN when either is NaN.
   *
   * src has out's dtype and at least index's extent (it may be broadcast by stride 0); index has
   * out's rank and, but along `dim`, at most out's extent. Contributions to one element are applied
   * in the order of their position along `dim`, so with repeated indices `assign` keeps the last
   * one on every backend (PyTorch leaves the winner unspecified). Half types compute each
   * combination in f32 and round it on store; int32 products wrap like C; for bool, `prod` is AND,
   * `amax` OR and `amin` AND. An index outside [0, out.shape[dim]) never writes outside `out`: the
   * backend skips it or throws (core reports it first where it can read indices synchronously)
   * (conformance: `primitives/scatter(src)/`, `primitives/scatterReduce(prod)/`, `primitives/scatterReduce(amax)/`,
   * `primitives/scatterReduce(amin)/`, `composites/scatter(value)/`, `composites/scatter(reduce)/`,
   * `composites/scatter_/`, `numerics/scatterReduce(amax)/`).
   */
  scatter?(out: TensorRef<S>, dim: number, index: TensorRef<S>, src: TensorRef<S>, mode: ScatterMode): void;
}

/**
 * Optional fused kernels for composite ops. Core uses one when present (and fused kernels are
 * enabled); otherwise it runs the op's decomposition into primitives. Results must match the
 * decomposition within the op's tolerance class: the suite runs every such composite twice, with
 * ids ending in `/fused` and `/decomposed`, and skips the fused ones for a backend without the
 * kernel.
 */
export interface FusedKernels<S> {
  /** Softmax of `x` along `dim` into `out` (same dtype and shape) (conformance: `composites/softmax/`, `numerics/softmax/`). */
  softmax(x: TensorRef<S>, dim: number, out: TensorRef<S>): void;
  /** Log-softmax of `x` along `dim` into `out` (same dtype and shape) (conformance: `composites/logSoftmax/`, `numerics/logSoftmax/`). */
  logSoftmax(x: TensorRef<S>, dim: number, out: TensorRef<S>): void;
  /**
   * `out = x + t1·t2` elementwise (since 1.2.0): core's `a.add(b, alpha)` and `sub` with an alpha
   * (t2 is then a 0-dim scalar broadcast by stride 0), one kernel instead of a mul and an add.
   * All four share out's floating dtype and shape (broadcast inputs arrive as strides). The
   * product is rounded to out's dtype before the sum, as the decomposition `x + (t1·t2)` rounds:
   * no fused multiply-add, so float32 and float64 results equal it bit for bit. Half types are
   * computed in f32 (the product rounded to f32) and rounded once on store (conformance:
   * `composites/addAlpha/`, `composites/subAlpha/`, `composites/addcmul/`).
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
   * gradient rule, so the kernel is forward only. Class weights are never passed: core decomposes
   * (conformance: `composites/crossEntropy/`).
   */
  crossEntropy(x: TensorRef<S>, target: TensorRef<S>, spec: CrossEntropySpec, out: TensorRef<S>): void;
  /**
   * GradScaler's `_amp_foreach_non_finite_check_and_unscale_` (GS-6), in place and with no host
   * read: `foundInf` (float32, 1 element) becomes 1 if any element of any grad is Inf or NaN (it is
   * never cleared), then every element becomes `v·invScale` (invScale: float32, 1 element). Grads
   * are contiguous (offset may be non-zero), share one floating dtype; half types are multiplied in
   * f32 and rounded once on store, float64 by the exactly widened invScale. The finiteness test
   * reads the values before they are scaled (conformance: `gradscaler/GS-6/`).
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
   *
   * conformance: `optimizers/steps/`.
   */
  adamw(
    param: TensorRef<S>,
    grad: TensorRef<S>,
    expAvg: TensorRef<S>,
    expAvgSq: TensorRef<S>,
    maxExpAvgSq: TensorRef<S> | null,
    spec: AdamSpec,
  ): void;
  /**
   * One Adadelta update of one parameter, in place (since 1.6.0). `param`, `grad`,
   * `squareAvg` and `accDelta` are contiguous, one numel, all float32 or all float64 (core runs
   * the decomposition for other dtypes). Per element, every operation in the dtype (f32 or f64)
   * with its scalar first rounded to it, each result rounded as it is made, no fused
   * multiply-adds, so results equal @core/optim's decomposition bit for bit:
   * 1. `g = maximize ? −grad : grad`; if wd ≠ 0: `g = g + (p·wd)`;
   * 2. `v = (v·ρ) + ((g·(1 − ρ))·g)`;
   * 3. `Δ = (sqrt(u + eps) / sqrt(v + eps))·g`;
   * 4. `u = (u·ρ) + ((Δ·(1 − ρ))·Δ)`;
   * 5. `p = p + (Δ·(−lr))`.
   *
   * conformance: `optimizers/steps/adadelta/`, `optimizers/steps/adadelta-wd-maximize/`.
   */
  adadelta(param: TensorRef<S>, grad: TensorRef<S>, squareAvg: TensorRef<S>, accDelta: TensorRef<S>, spec: AdadeltaSpec): void;
  /**
   * One RMSprop update of one parameter, in place (since 1.6.0). `param`, `grad`,
   * `squareAvg`, `momentumBuffer` (present exactly when `spec.momentum > 0`) and `gradAvg`
   * (present exactly when `spec.centered`) are contiguous, one numel, all float32 or all float64
   * (core runs the decomposition for other dtypes). Per element, every operation in the dtype
   * with its scalar first rounded to it, each result rounded as it is made, no fused
   * multiply-adds, so results equal @core/optim's decomposition bit for bit:
   * 1. `g = maximize ? −grad : grad`; if wd ≠ 0: `g = g + (p·wd)`;
   * 2. `v = (v·α) + ((g·(1 − α))·g)`; the variance is `v`, or when centered
   *    `a = (a·α) + (g·(1 − α))`, variance `v − (a·a)`;
   * 3. `avg = sqrt(variance) + eps`;
   * 4. momentum > 0: `b = (b·μ) + (g / avg)`, `p = p + (b·(−lr))`; else `p = p + ((g·(−lr)) / avg)`.
   *
   * conformance: `optimizers/steps/rmsprop/`, `optimizers/steps/rmsprop-momentum-wd/`, `optimizers/steps/rmsprop-centered-maximize/`.
   */
  rmsprop(
    param: TensorRef<S>,
    grad: TensorRef<S>,
    squareAvg: TensorRef<S>,
    momentumBuffer: TensorRef<S> | null,
    gradAvg: TensorRef<S> | null,
    spec: RMSpropSpec,
  ): void;
  /**
   * Scaled dot-product attention's forward pass in one flash-style kernel (since 1.4.0): core's
   * `F.scaledDotProductAttention` without dropout. `q` [B, L, E], `k` [B, S, E] and `v` [B, S, Ev]
   * are contiguous (the offset may be non-zero) and share out's floating dtype; B, L, S, E and Ev
   * are at least 1. Per batch b and query row l, with every key s that takes part:
   *
   * - `score[s] = spec.scale · Σ_e q[b, l, e]·k[b, s, e] + mask[b, l, s]`;
   * - `logSumExp[b, l] = log Σ_s exp(score[s])`, computed stably (running maximum);
   * - `out[b, l, :] = Σ_s exp(score[s] − logSumExp[b, l]) · v[b, s, :]`.
   *
   * `mask` is null or an additive mask of out's dtype with shape [B, L, S], strided (a broadcast dim
   * has stride 0); core turns bool masks into 0 and −∞. With `spec.isCausal` (mask then null) key s
   * takes part in row l only when s ≤ l. A row with no key taking part (every score −∞) gets NaN in
   * `out` and −∞ in `logSumExp`, as the decomposition's softmax does; NaN inputs propagate.
   * Computed in f32 (f64 for float64), `out` rounded once on store. `out` [B, L, Ev] is contiguous
   * of q's dtype; `logSumExp` [B, L] is contiguous float32 (float64 for float64): core's backward
   * recomputes the weights from it. The [L, S] scores must not be materialised in device memory:
   * keys stream through in tiles with an online softmax, so memory is O(B·L·(E + Ev)). Tolerance:
   * approx (conformance: `composites/scaledDotProductAttention/`).
   */
  attention(
    q: TensorRef<S>,
    k: TensorRef<S>,
    v: TensorRef<S>,
    mask: TensorRef<S> | null,
    spec: AttentionSpec,
    out: TensorRef<S>,
    logSumExp: TensorRef<S>,
  ): void;
  /**
   * Max-pooling's forward pass with its argmax, PyTorch's max_pool2d_with_indices (since 1.6.0).
   * `x` [N, C, H, W] has any strides and a floating dtype the backend computes (float32, float64,
   * float16, bfloat16); `out` [N, C, oh, ow] is contiguous of x's dtype and `indices` [N, C, oh, ow]
   * contiguous int32, with [oh, ow] = `geometry.out`, none of N, C, H, W, oh, ow zero. Window (i, j)
   * of plane (n, c) reads row `i·stride[0] − padding[0] + a·dilation[0]` and column
   * `j·stride[1] − padding[1] + b·dilation[1]` for a < kernel[0] and b < kernel[1], in row-major
   * (a, b) order; positions outside [0, H) × [0, W) (the padding, and ceilMode's overhang past the
   * end) are skipped, as PyTorch's −∞ padding never wins, and core never passes a window without a
   * position inside. `indices[n, c, i, j]` is the flat position h·W + w in its plane of the element
   * argReduce's argmax would pick over the window's positions in that order: the first maximum wins
   * ties (of −0 and +0, the first), NaN counts as the maximum and the first NaN wins, and a window
   * of −∞ gives its first position inside; `out[n, c, i, j]` is that element, exactly (a NaN's
   * payload aside; half types compare as their f32 values). These are the decomposition's results
   * (a −∞-padded window view's `max(-1)`, whose windows of −∞ pick their first position inside)
   * bit for bit. Tolerance: exact (conformance: `composites/maxPool2d/`, `numerics/maxPool2d/`,
   * `autograd/maxPool2d/`).
   */
  maxPool2d(x: TensorRef<S>, out: TensorRef<S>, indices: TensorRef<S>, geometry: MaxPool2dGeometry): void;
  /**
   * Max-pooling's backward pass (since 1.6.0): `gradInput` [N, C, H, W] (contiguous, of grad's
   * dtype) is written whole: zeros, then each element of `grad` [N, C, oh, ow] is added at flat
   * position `indices[n, c, i, j]` (in [0, H·W), as `maxPool2d` wrote it) of its plane, the output
   * positions taken in row-major order. `grad` (floating, as maxPool2d's dtypes) and `indices`
   * (int32) have any strides; gradInput shares no storage with them. Where overlapping windows
   * picked one element their gradients add up in that order, each sum rounded to grad's dtype
   * (half types sum in f32 and round once), so an element no window picked is +0 and a picked −0
   * becomes +0, as the decomposition's scatter-add into zeros gives. Tolerance: exact where no two
   * windows pick one element, else accumulated (conformance: `autograd/maxPool2d/`).
   */
  maxPool2dBackward(grad: TensorRef<S>, indices: TensorRef<S>, gradInput: TensorRef<S>): void;
  /**
   * asStrided's gradient (since 1.6.0), col2im for a convolution's input: `out` (contiguous,
   * float32) becomes zeros, then each element of `src` (float32, any strides, rank ≤ 8) is added at
   * element `view.offset + Σ_k i_k·view.strides[k]` of out, where (i_0, i_1, …) is its index; src
   * has the view's shape. Where several elements land on one place (overlapping windows) they add
   * up in src's row-major order, each sum rounded to float32, so the result is the same bits
   * whichever way the work is split. The view stays inside out (core checks it); its strides are
   * non-negative. Core passes half types as float32 and rounds once after (conformance:
   * `autograd/asStrided/`).
   */
  stridedSum(src: TensorRef<S>, view: StridedView, out: TensorRef<S>): void;
  /**
   * A matmul of 16-bit operands into a float32 out (since 1.7.0): `matmul`'s layout (rank 3, any
   * strides, a batch stride may be 0, K ≥ 1, out never empty), a and b of one dtype, float16 or
   * bfloat16, out float32. The products are summed in float32 and stored as they are: the
   * accumulator a 16-bit GEMM holds before it rounds. Core's `matmulInFloat32` uses it (the 16-bit
   * convolutions and linears of @core/nn add their bias there and round once, as PyTorch's GEMMs
   * do); without it, core multiplies the operands widened to float32. Tolerance: as `matmul`
   * (conformance: `composites/matmulInFloat32/`).
   */
  matmulToFloat32(a: TensorRef<S>, b: TensorRef<S>, out: TensorRef<S>): void;
  /**
   * matmulToFloat32's product rounded once (since 1.8.0): a and b as there; `bias` null, or a
   * float32 view of out's shape (any strides, 0 where it is broadcast) added to each float32 sum;
   * the result rounded once into `out`, of a's dtype. It is PyTorch's half addmm, and a 16-bit
   * convolution's product plus its bias: core's `matmulInFloat32` uses it for `round` (the layers
   * of @core/nn); without it, core adds the bias and rounds with its own kernels. Tolerance: as
   * `matmul` (conformance: `composites/matmulInFloat32Rounded/`).
   */
  matmulRounded(a: TensorRef<S>, b: TensorRef<S>, bias: TensorRef<S> | null, out: TensorRef<S>): void;
  /**
   * matmulToFloat32's product summed into place by stridedSum (since 1.9.0): a 16-bit
   * convolution's input gradient, col2im of its columns' gradient, without those columns in
   * memory. a and b as in matmulToFloat32; their float32 product [B, M, N], read in row-major order,
   * is the source of a stridedSum whose shape is `size` (numel(size) = B·M·N) and whose view is
   * `view`; `out` (contiguous, float32 or a's dtype) becomes zeros plus those sums, each element's
   * terms added in the source's row-major order, rounded once into out's dtype. The same bits as
   * matmulToFloat32 into a float32 array, stridedSum of it, and a cast. Core's `matmulInFloat32`
   * uses it for an operand given with `otherView`; without it, core runs those three steps
   * (conformance: `composites/matmulInFloat32Windows/`).
   */
  matmulStridedSum(a: TensorRef<S>, b: TensorRef<S>, size: readonly number[], view: StridedView, out: TensorRef<S>): void;
}

/**
 * How core moves host data into a storage (see `Backend.write`). Whatever the hint, what arrives is
 * what a blocking copy gives (conformance: `transfers/XFER-1/`, `transfers/XFER-2/`).
 */
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

/** Where `stridedSum`'s source lands in its output: the asStrided view's strides and offset, in elements (since 1.6.0). */
export interface StridedView {
  /** One non-negative stride per dim of the source. */
  readonly strides: readonly number[];
  /** Where the source's element (0, 0, …) lands. */
  readonly offset: number;
}

/** maxPool2d's window geometry over [height, width] (since 1.6.0): each pair is [rows, columns]. */
export interface MaxPool2dGeometry {
  /** The window's size, at least 1. */
  readonly kernel: readonly [number, number];
  /** Between window starts, at least 1. */
  readonly stride: readonly [number, number];
  /** How far the first window starts before the input (≥ 0). */
  readonly padding: readonly [number, number];
  /** Between a window's positions, at least 1. */
  readonly dilation: readonly [number, number];
  /** The output size [oh, ow] (ceilMode's last window may hang past the end). */
  readonly out: readonly [number, number];
}

/** attention's scalar arguments. */
export interface AttentionSpec {
  /** The factor q·kᵀ is multiplied by (any finite number; core's default is 1/√E). */
  readonly scale: number;
  /** Key s takes part in query row l only when s ≤ l (top-left aligned); `mask` is then null. */
  readonly isCausal: boolean;
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

/** One Adadelta step's options (since 1.6.0), PyTorch's. */
export interface AdadeltaSpec {
  /** Scale of the update. */
  readonly lr: number;
  /** Decay of both running averages. */
  readonly rho: number;
  /** Added inside both square roots. */
  readonly eps: number;
  /** L2 penalty added to the gradient (0: none). */
  readonly weightDecay: number;
  /** Ascend the objective: the gradient is negated. */
  readonly maximize: boolean;
}

/** One RMSprop step's options (since 1.6.0), PyTorch's. */
export interface RMSpropSpec {
  /** Learning rate. */
  readonly lr: number;
  /** Smoothing constant of the running averages. */
  readonly alpha: number;
  /** Added to the denominator. */
  readonly eps: number;
  /** L2 penalty added to the gradient (0: none). */
  readonly weightDecay: number;
  /** Momentum factor (0: no momentum buffer). */
  readonly momentum: number;
  /** Divide by an estimate of the variance (the running mean of the gradient subtracted). */
  readonly centered: boolean;
  /** Ascend the objective: the gradient is negated. */
  readonly maximize: boolean;
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

/**
 * What a backend declares about itself; core and the conformance suite act on it. Every field has
 * its type (booleans are booleans, `features` an array), `dtypes` names only known dtypes, and
 * `compute` implies `storage` (conformance: `storage/capabilities`).
 */
export interface Capabilities {
  /**
   * Per dtype: storage and compute support (a missing dtype is unsupported). float32, int32 and
   * bool storage and float32 compute are required: core creates float32 tensors by default, bool
   * results (comparisons) and int32 ones (argmax, indices) (conformance: `storage/required-dtypes`).
   * For anything undeclared core raises a DTypeError before a kernel runs, and the suite skips those
   * cases, saying why, and checks the DTypeError instead (conformance: `capabilities/`). Autocast
   * regions need `compute` for their dtype (conformance: `autocast/`).
   */
  readonly dtypes: Readonly<Partial<Record<DTypeName, DTypeSupport>>>;
  /** `readSync` exists (and only then): `dataSync()` works and reads need not await (conformance: `storage/capabilities`, `devices/reads/`). */
  readonly syncRead: boolean;
  /**
   * Largest single allocation, in bytes; core refuses a larger tensor before `alloc` is called, and
   * 32 MiB (or this limit, if smaller) must work (conformance: `storage/limit`, `storage/large-buffer`).
   */
  readonly maxBufferBytes: number;
  /** Free-form feature flags, e.g. 'shader-f16'. */
  readonly features: readonly string[];
  /** NaN/Inf follow IEEE 754 everywhere; the NaN/Inf cases are skipped otherwise (conformance: `numerics/`). */
  readonly strictNumerics: boolean;
  /**
   * An accelerator that reads page-locked host memory faster: `pinMemory()` needs one such backend to
   * be available (conformance: `transfers/PIN-1/`, `transfers/PIN-2/`).
   */
  readonly pinnedMemory: boolean;
  /**
   * Optional: per 16-bit dtype, whether autocast to it trains faster here than float32, and why in
   * one line (e.g. `{ bfloat16: { faster: false, reason: 'no AVX512-BF16: …' } }`).
   * `ampConfig(device, 'auto')` picks only a dtype it marks faster and otherwise says why not; an
   * explicit mode ignores it. Left out (the member or a dtype): faster wherever `compute` holds.
   */
  readonly autocastSpeed?: Readonly<Partial<Record<'float16' | 'bfloat16', AutocastSpeed>>>;
}

/** Whether autocast to one 16-bit dtype trains faster than float32 on a backend (`Capabilities.autocastSpeed`). */
export interface AutocastSpeed {
  /** Faster than float32 here: `ampConfig(device, 'auto')` may pick it. */
  readonly faster: boolean;
  /** Why, in one line (what `ampConfig` repeats when it passes the dtype over). */
  readonly reason: string;
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
 * A compute backend: storage management plus the closed list of primitives, for one device type.
 * `S` is the backend's own storage handle. Register it with `registerBackend`. Its package depends
 * on the application's one copy of `@core/tensor` (a peer dependency), never a copy of its own:
 * tensors of one copy mean nothing to another (conformance: `storage/one-core-copy`).
 *
 * The `core-conformance` CLI runs it on its own by default, as a program that imports only it
 * uses it: the cpu backend is not registered, so the cases that need the cpu device (transfers to
 * and from it, the same-device and 0-dim cpu scalar rules against it) are skipped and counted;
 * `--with-cpu` runs them. A backend with two or more devices gets the device-rule and
 * transfer cases between its own devices (conformance: `devices/`, `transfers/`).
 */
export interface Backend<S = unknown> {
  /** The device type it serves, e.g. 'cpu', 'webgpu', 'cuda', or a third party's name; the name it is registered under (conformance: `storage/identity`). */
  readonly name: string;
  /** The contract version it implements (CONTRACT_VERSION it was built against) (conformance: `storage/identity`). */
  readonly contractVersion: string;
  /** How many devices of this type exist (indices 0..deviceCount-1), an integer ≥ 1 (conformance: `storage/identity`, `storage/multi-device-stats`). */
  readonly deviceCount: number;
  /** Supported dtypes and features. */
  readonly capabilities: Capabilities;

  /**
   * Allocate `numel` elements of `dtype` on device `index`; contents are unspecified. `numel` may
   * be 0. An index outside 0..deviceCount-1 throws (conformance: `storage/invalid-device-index`,
   * `storage/empty/`, `storage/large-buffer`).
   */
  alloc(index: number, dtype: DTypeName, numel: number): S;
  /**
   * Release a storage. Core calls it once, when the last tensor over it is disposed or collected
   * (a view keeps its base's storage alive) (conformance: `storage/dispose`, `storage/view-keeps-storage`).
   * Afterwards the storage is dead: `read` must throw or reject, never return stale data, and a
   * `write` or a second `free` should throw too; a second free must not corrupt `memoryStats`
   * (conformance: `storage/read-freed-storage`, `storage/double-free`).
   */
  free(storage: S): void;
  /**
   * Copy host data (the dtype's host array, see HostArrayByDType) into the storage from element
   * `offset`. `data` may be reused by the caller once this returns. `hint` (since 1.1.0, optional
   * to honour) says how core moves it: a non-blocking copy from pinned host memory may be queued
   * with the device's work (through a mapped staging buffer) instead of flushing it first. The
   * storage holds exactly what was written: every bit pattern of the half types, NaN, ±0, ±Inf and
   * subnormals (conformance: `storage/roundtrip/`, `storage/write-offset/`, `transfers/XFER-1/`).
   */
  write(storage: S, data: HostArray, offset: number, hint?: WriteHint): void;
  /**
   * Read the whole storage once all queued work on it is done: a promise of the dtype's host array
   * type (Float32Array, Uint16Array bit patterns for the half types, Float64Array, Int32Array,
   * Uint8Array of 0/1 for bool), a fresh copy that the caller owns (conformance: `storage/roundtrip/`,
   * `storage/read-returns-a-copy/`, `storage/empty/`, `storage/ordering`).
   */
  read(storage: S): Promise<HostArray>;
  /** Synchronous read, for backends that declare `syncRead`: the same array as `read` (conformance: `storage/readSync/`). */
  readSync?(storage: S): HostArray;
  /** Wait until all queued work on device `index` is done; resolves for every index (conformance: `storage/synchronize`). */
  synchronize(index: number): Promise<void>;
  /**
   * Memory in use on device `index`: an allocation adds at least its bytes to `allocatedBytes` and
   * one to `allocations` on its own device only, and its `free` takes them back exactly;
   * `reservedBytes ≥ allocatedBytes` (conformance: `storage/memory-stats/`, `storage/multi-device-stats`).
   */
  memoryStats(index: number): MemoryStats;

  /** The primitives. */
  readonly kernels: Kernels<S>;
  /** Optional fused kernels; core falls back to decompositions for any that are missing. */
  readonly fused?: Partial<FusedKernels<S>>;
  /**
   * Optional (since 1.5.0): turn a list of this backend's calls into a program that queues them
   * again and again at less cost, as a CUDA graph or prebuilt WebGPU bind groups do. `compile()`
   * hands it the calls a captured step makes between two host reads, once; without it, a replay
   * makes each call again. `prepare` runs every call once to see what it queues, but nothing
   * reaches the device then. The caller keeps every storage the calls use allocated while the
   * program lives; a storage a call uses that is freed anyway makes `run` throw. `options` (since
   * 1.6.0) tells what core knows of the storages' uses, so a backend may, say, keep an intermediate
   * in registers instead of memory.
   */
  prepare?(calls: readonly PreparedCall[], options?: PrepareOptions<S>): PreparedProgram;
}

/** What core tells `Backend.prepare` of a program's storages (since 1.6.0); every member optional. */
export interface PrepareOptions<S = unknown> {
  /**
   * Per call (same length and order as the calls): the storages whose contents nothing reads once
   * that call has run, neither a later call of the program (until one writes them anew) nor anyone
   * after the program (the host, the next replay, a returned tensor). A backend may leave such a
   * storage's last contents unwritten, as long as every read before then still sees them.
   */
  readonly deadAfter?: readonly (readonly S[])[];
}

/** One call of a program `Backend.prepare` builds: a kernel, fused kernel or `write` of that backend. */
export interface PreparedCall {
  /** Makes the call with the arguments of the current replay. */
  readonly run: () => void;
  /**
   * Its arguments change between replays (another input storage, a learning rate, an Adam spec):
   * `run` is called again at every replay, and only for such calls.
   */
  readonly varies: boolean;
}

/** What `Backend.prepare` returns: its calls, ready to queue. */
export interface PreparedProgram {
  /** What it is, for `explain()`, e.g. 'webgpu: 46 dispatches, 1 command buffer per run'. */
  readonly description: string;
  /**
   * Queue the calls once more, in order, as making them would: the varying calls are run first
   * for their new arguments. Returns false, having queued nothing, when a varying call now queues
   * other work than it did at prepare (the caller then makes the calls itself and drops the program).
   */
  run(): boolean;
  /** Free what `prepare` made; the program is not run after this. */
  release(): void;
}

/** How a backend is registered: its name, its priority, and a way to build it on first use. */
export interface BackendFactory {
  /** The device type the backend will serve. */
  readonly name: string;
  /** Higher wins in `bestDevice()`: cuda 300, webgpu 200, cpu 100 by convention. */
  readonly priority: number;
  /** Build the backend. May be async and may throw: the reason is reported as "unavailable". */
  create(): Backend<any> | Promise<Backend<any>>;
  /**
   * Optional: what `create()` would give, found without starting the backend in this process
   * (e.g. from a short-lived child process), or null when that can't be told. `bestDevice()` asks
   * it first and does not start a backend whose probe says it is unavailable or declares the
   * feature 'software-adapter' while a better device is available: starting one can cost seconds
   * and print the native runtime's own notices.
   */
  probe?(): Promise<BackendProbe | null>;
}

/** A backend's availability and features, told without starting it (`BackendFactory.probe`). */
export interface BackendProbe {
  /** Whether `create()` is expected to succeed. */
  readonly available: boolean;
  /** The features its `capabilities.features` would declare, e.g. 'software-adapter'. */
  readonly features: readonly string[];
}
