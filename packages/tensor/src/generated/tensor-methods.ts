// Generated from the op table (src/ops/table.ts) by test/op-table.test.ts: do not edit. Regenerate with
//   UPDATE_GENERATED=1 npx -y pnpm@12.4.2 --filter @core/tensor exec vitest run test/op-table.test.ts
import type { DType } from '../dtype/dtype.js';
import type { ValuesIndices } from '../ops/reduce.js';
import type { Tensor, TensorOrScalar } from '../tensor/tensor.js';

/** The op methods of `Tensor`, one per op of the table that has a method. */
export interface TensorOps {
  /** `-this`. */
  neg(): Tensor;
  /** Absolute value. */
  abs(): Tensor;
  /** -1, 0 or 1 by the sign of each element. */
  sign(): Tensor;
  /** e to the power of each element. */
  exp(): Tensor;
  /** `exp(x) - 1`, accurate for small x. */
  expm1(): Tensor;
  /** Natural logarithm. */
  log(): Tensor;
  /** `log(1 + x)`, accurate for small x. */
  log1p(): Tensor;
  /** Square root. */
  sqrt(): Tensor;
  /** `1 / sqrt(x)`. */
  rsqrt(): Tensor;
  /** `1 / x`. */
  reciprocal(): Tensor;
  /** Sine (radians). */
  sin(): Tensor;
  /** Cosine (radians). */
  cos(): Tensor;
  /** Tangent (radians). */
  tan(): Tensor;
  /** Hyperbolic tangent. */
  tanh(): Tensor;
  /** The logistic function `1 / (1 + exp(-x))`. */
  sigmoid(): Tensor;
  /** The Gauss error function. */
  erf(): Tensor;
  /** `max(x, 0)`. */
  relu(): Tensor;
  /** Round down to an integer value (same dtype). */
  floor(): Tensor;
  /** Round up to an integer value (same dtype). */
  ceil(): Tensor;
  /** Round to the nearest integer value, halves to even (same dtype). */
  round(): Tensor;
  /** Round toward zero (same dtype). */
  trunc(): Tensor;
  /** Elementwise NOT of truth values, as a bool tensor. */
  logicalNot(): Tensor;
  /** `this + alpha * other`, broadcasting, with PyTorch's type promotion. */
  add(other: TensorOrScalar, alpha?: number): Tensor;
  /** `this - alpha * other`, broadcasting. */
  sub(other: TensorOrScalar, alpha?: number): Tensor;
  /** Elementwise product, broadcasting. */
  mul(other: TensorOrScalar): Tensor;
  /** True division (integers give float32), broadcasting. */
  div(other: TensorOrScalar): Tensor;
  /** `this` raised to `exponent`, elementwise. */
  pow(exponent: TensorOrScalar): Tensor;
  /** Elementwise maximum of two tensors (NaN if either is NaN). */
  maximum(other: TensorOrScalar): Tensor;
  /** Elementwise minimum of two tensors (NaN if either is NaN). */
  minimum(other: TensorOrScalar): Tensor;
  /** Python-style modulus: the result has the sign of the divisor. */
  remainder(other: TensorOrScalar): Tensor;
  /** The angle of the point (other, this), elementwise, in radians. */
  atan2(other: TensorOrScalar): Tensor;
  /** Elementwise AND of truth values, as a bool tensor. */
  logicalAnd(other: TensorOrScalar): Tensor;
  /** Elementwise OR of truth values, as a bool tensor. */
  logicalOr(other: TensorOrScalar): Tensor;
  /** Elementwise `==`, as a bool tensor. */
  eq(other: TensorOrScalar): Tensor;
  /** Elementwise `!=`, as a bool tensor. */
  ne(other: TensorOrScalar): Tensor;
  /** Elementwise `<`, as a bool tensor. */
  lt(other: TensorOrScalar): Tensor;
  /** Elementwise `<=`, as a bool tensor. */
  le(other: TensorOrScalar): Tensor;
  /** Elementwise `>`, as a bool tensor. */
  gt(other: TensorOrScalar): Tensor;
  /** Elementwise `>=`, as a bool tensor. */
  ge(other: TensorOrScalar): Tensor;
  /** `x * x`. */
  square(): Tensor;
  /** True where an element is NaN. */
  isnan(): Tensor;
  /** Standard deviation: the square root of `var`. */
  std(dim?: number | readonly number[] | null, keepdim?: boolean, options?: { correction?: number }): Tensor;
  /** `expand` to `other`'s shape. */
  expandAs(other: Tensor): Tensor;
  /** This tensor when already contiguous, else a row-major copy. */
  contiguous(): Tensor;
  /** `log(sum(exp(x)))` over `dim`, computed stably (the max is subtracted first); `keepdim` keeps reduced dims as size 1. */
  logsumexp(dim: number | readonly number[], keepdim?: boolean): Tensor;
  /** The same elements in a new shape (one size may be -1): a view when the strides allow it, else a copy. */
  reshape(shape: readonly number[]): Tensor;
  /** The same elements in a new shape, always a view; throws when the strides do not allow one (use `reshape`). */
  view(shape: readonly number[]): Tensor;
  /** A view with the dims reordered: dim i of the result is dim `dims[i]` of this tensor. */
  permute(dims: readonly number[]): Tensor;
  /** A view with two dims swapped. */
  transpose(dim0: number, dim1: number): Tensor;
  /** Transpose of a ≤2-D tensor. */
  t(): Tensor;
  /** A view that repeats size-1 dims to `shape` without copying (-1 keeps a size); the repeats share memory. */
  expand(shape: readonly number[]): Tensor;
  /** A view of the elements `start` to `end` (exclusive, negatives count from the end) along `dim`, every `step`-th: Python's `x[..., start:end:step]`. */
  slice(dim: number, start?: number, end?: number, step?: number): Tensor;
  /** A view of `length` elements along `dim` from `start`. */
  narrow(dim: number, start: number, length: number): Tensor;
  /** A view at one index of `dim`, with that dim removed. */
  select(dim: number, index: number): Tensor;
  /** A view without size-1 dims (all of them, or only those given). */
  squeeze(dim?: number | readonly number[]): Tensor;
  /** A view with a new size-1 dim inserted at `dim`. */
  unsqueeze(dim: number): Tensor;
  /** The dims `startDim`..`endDim` merged into one (a view when possible). */
  flatten(startDim?: number, endDim?: number): Tensor;
  /** A view with explicit sizes and strides over this (contiguous) tensor's elements; windows may overlap. */
  asStrided(size: readonly number[], stride: readonly number[], storageOffset?: number): Tensor;
  /** A contiguous copy with its own memory; gradients flow back to this tensor. */
  clone(): Tensor;
  /** A tensor over the same memory, cut from autograd. */
  detach(): Tensor;
  /** True where an element is +Inf or -Inf. */
  isinf(): Tensor;
  /** True where an element is neither NaN nor infinite. */
  isfinite(): Tensor;
  /** Each element limited to [min, max]; either bound may be omitted (null), and may be a tensor. */
  clamp(min?: number | Tensor | null, max?: number | Tensor | null): Tensor;
  /** `cond ? this : other`, PyTorch's `Tensor.where(condition, other)`. */
  where(condition: Tensor, other: TensorOrScalar): Tensor;
  /** Overwrite this tensor's values with `src` (any device, broadcast, cast as needed): SD-8. */
  copy_(src: Tensor): this;
  /** Set every element to `value`, in place. */
  fill_(value: number): this;
  /** Set every element to 0, in place. */
  zero_(): this;
  /** In-place `add`: writes `this + alpha * other` into this tensor. */
  add_(other: TensorOrScalar, alpha?: number): this;
  /** In-place `sub`. */
  sub_(other: TensorOrScalar, alpha?: number): this;
  /** In-place `mul`. */
  mul_(other: TensorOrScalar): this;
  /** In-place `div` (throws on an integer tensor, whose result would be float). */
  div_(other: TensorOrScalar): this;
  /** In-place `clamp`. */
  clamp_(min?: number | Tensor | null, max?: number | Tensor | null): this;
  /** Sum over `dim` (all dims when omitted); `keepdim` keeps reduced dims as size 1. Integers and bools sum to int32; `dtype` picks the accumulation and result type. */
  sum(dim?: number | readonly number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
  /** Mean over `dim` (all dims when omitted), for floating-point tensors (or with a floating `dtype`). */
  mean(dim?: number | readonly number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
  /** Product over one dim (all elements when omitted). */
  prod(dim?: number | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
  /** Without a dim: the max element. With a dim: `{ values, indices }` like PyTorch. */
  max(): Tensor;
  /** Without a dim: the max element. With a dim: `{ values, indices }` like PyTorch. */
  max(dim: number, keepdim?: boolean): ValuesIndices;
  /** Without a dim: the min element. With a dim: `{ values, indices }` like PyTorch. */
  min(): Tensor;
  /** Without a dim: the min element. With a dim: `{ values, indices }` like PyTorch. */
  min(dim: number, keepdim?: boolean): ValuesIndices;
  /** The max over one or more dims (values only; the gradient is shared evenly among ties). */
  amax(dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
  /** The min over one or more dims (values only; the gradient is shared evenly among ties). */
  amin(dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
  /** The int32 index of the max along `dim` (of the flattened tensor when omitted); the first on ties. */
  argmax(dim?: number | null, keepdim?: boolean): Tensor;
  /** The int32 index of the min along `dim` (of the flattened tensor when omitted); the first on ties. */
  argmin(dim?: number | null, keepdim?: boolean): Tensor;
  /** Variance over `dim`, dividing by N - `correction` (default 1, Bessel's correction). */
  var(dim?: number | readonly number[] | null, keepdim?: boolean, options?: { correction?: number }): Tensor;
  /** Matrix product with PyTorch's rules: vectors, matrices, and batches that broadcast. */
  matmul(other: Tensor): Tensor;
  /** The product of two 2-D matrices. */
  mm(mat2: Tensor): Tensor;
  /** Batched matrix product of [b, n, m] and [b, m, p] tensors. */
  bmm(mat2: Tensor): Tensor;
  /** Values picked along `dim` by an int32 `index` tensor: `out[i][j] = this[index[i][j]][j]` for dim 0. */
  gather(dim: number, index: Tensor): Tensor;
  /** A copy of this tensor with `src`'s values added at the positions `index` gives along `dim` (the inverse of `gather`). */
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor;
  /** The slices along `dim` at the positions in a 1-D int32 `index` tensor. */
  indexSelect(dim: number, index: Tensor): Tensor;
  /** `exp(x) / sum(exp(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  softmax(dim: number, options?: { dtype?: DType }): Tensor;
  /** `log(softmax(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  logSoftmax(dim: number, options?: { dtype?: DType }): Tensor;
}

/** `log(sum(exp(x)))` over `dim`, computed stably (the max is subtracted first); `keepdim` keeps reduced dims as size 1. The function form of `Tensor.logsumexp`. */
export function logsumexp(input: Tensor, dim: number | readonly number[], keepdim?: boolean): Tensor {
  return input.logsumexp(dim, keepdim);
}
