// Generated from the op table (src/ops/table.ts) by test/op-table.test.ts: do not edit. Regenerate with
//   UPDATE_GENERATED=1 npx -y pnpm@12.4.2 --filter @core/tensor exec vitest run test/op-table.test.ts
import type { DType } from '../dtype/dtype.js';
import type { IndexSpec } from '../ops/advanced-indexing.js';
import type { FactoryOptions, TensorData } from '../ops/creation.js';
import type { UniqueOptions, UniqueResult } from '../ops/data-dependent.js';
import type { ValuesIndices } from '../ops/reduce.js';
import type { Generator } from '../random/generator.js';
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
  /** `value` where the bool `mask` is true, else this tensor's element (they broadcast); `value` is a number or a 0-dim tensor, which gets a gradient. */
  maskedFill(mask: Tensor, value: number | boolean | Tensor): Tensor;
  /** This tensor with `source`'s elements (of its dtype), read in row-major order, written one after another where the bool `mask` is true (they broadcast): `source` needs at least as many elements as the mask has trues. That count is checked where the mask's device reads synchronously; elsewhere nothing outside `source` is read, and positions past its end keep this tensor's elements. */
  maskedScatter(mask: Tensor, source: Tensor): Tensor;
  /** The lower triangle of the last two dims: the elements on and below diagonal `diagonal` (0 the main one, positive above it), zeros elsewhere. */
  tril(diagonal?: number): Tensor;
  /** The lower triangle of the last two dims: the elements on and below diagonal `diagonal` (0 the main one, positive above it), zeros elsewhere. */
  tril(options?: { diagonal?: number }): Tensor;
  /** The upper triangle of the last two dims: the elements on and above diagonal `diagonal` (0 the main one, negative below it), zeros elsewhere. */
  triu(diagonal?: number): Tensor;
  /** The upper triangle of the last two dims: the elements on and above diagonal `diagonal` (0 the main one, negative below it), zeros elsewhere. */
  triu(options?: { diagonal?: number }): Tensor;
  /** Views of this tensor along `dim` (default 0): pieces of `splitSize` elements (the last may be smaller), or one per size in a list, which must add up to the size of `dim`. */
  split(splitSize: number | readonly number[], dim?: number): Tensor[];
  /** Views of this tensor along `dim` (default 0): pieces of `splitSize` elements (the last may be smaller), or one per size in a list, which must add up to the size of `dim`. */
  split(splitSize: number | readonly number[], options?: { dim?: number }): Tensor[];
  /** At most `chunks` views along `dim` (default 0), of ceil(size / chunks) elements each but the last, as PyTorch splits them. */
  chunk(chunks: number, dim?: number): Tensor[];
  /** At most `chunks` views along `dim` (default 0), of ceil(size / chunks) elements each but the last, as PyTorch splits them. */
  chunk(chunks: number, options?: { dim?: number }): Tensor[];
  /** The views at each index of `dim` (default 0), with that dim removed. */
  unbind(dim?: number): Tensor[];
  /** The views at each index of `dim` (default 0), with that dim removed. */
  unbind(options?: { dim?: number }): Tensor[];
  /** A copy with the elements along each of `dims` in reverse order. */
  flip(dims: number | readonly number[]): Tensor;
  /** A copy with the elements moved `shifts` places along `dims`, wrapping around; without dims, along the flattened tensor (the shape is kept). */
  roll(shifts: number | readonly number[], dims?: number | readonly number[] | null): Tensor;
  /** A copy with the elements moved `shifts` places along `dims`, wrapping around; without dims, along the flattened tensor (the shape is kept). */
  roll(shifts: number | readonly number[], options?: { dims?: number | readonly number[] | null }): Tensor;
  /** A copy tiled `sizes[i]` times along each dim; sizes beyond this tensor's rank add leading dims. */
  repeat(sizes: readonly number[]): Tensor;
  /** `repeat`, with `dims` padded with leading 1s when shorter than this tensor's rank. */
  tile(dims: readonly number[]): Tensor;
  /** Each element (slice along `dim`) repeated `repeats` times in a row; of the flattened tensor without a dim. `repeats` is an integer (per-element repeats, a tensor, are not supported). */
  repeatInterleave(repeats: number, dim?: number | null, options?: { outputSize?: number }): Tensor;
  /** Each element (slice along `dim`) repeated `repeats` times in a row; of the flattened tensor without a dim. `repeats` is an integer (per-element repeats, a tensor, are not supported). */
  repeatInterleave(repeats: number, options?: { dim?: number | null; outputSize?: number }): Tensor;
  /** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  any(dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
  /** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  any(options?: { dim?: number | readonly number[] | null; keepdim?: boolean }): Tensor;
  /** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  any(dim?: number | readonly number[] | null, options?: { keepdim?: boolean }): Tensor;
  /** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  all(dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
  /** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  all(options?: { dim?: number | readonly number[] | null; keepdim?: boolean }): Tensor;
  /** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. */
  all(dim?: number | readonly number[] | null, options?: { keepdim?: boolean }): Tensor;
  /** The number of non-zero elements over `dim` (every dim when omitted), as int32. */
  countNonzero(dim?: number | readonly number[] | null): Tensor;
  /** The number of non-zero elements over `dim` (every dim when omitted), as int32. */
  countNonzero(options?: { dim?: number | readonly number[] | null }): Tensor;
  /** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. */
  norm(p?: number | 'fro' | 'nuc' | null, dim?: number | readonly number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
  /** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. */
  norm(options?: { p?: number | 'fro' | 'nuc' | null; dim?: number | readonly number[] | null; keepdim?: boolean; dtype?: DType }): Tensor;
  /** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. */
  norm(p?: number | 'fro' | 'nuc' | null, options?: { dim?: number | readonly number[] | null; keepdim?: boolean; dtype?: DType }): Tensor;
  /** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. */
  norm(p?: number | 'fro' | 'nuc' | null, dim?: number | readonly number[] | null, options?: { keepdim?: boolean; dtype?: DType }): Tensor;
  /** The `p`-norm (default 2) of `this - other`, broadcasting. */
  dist(other: Tensor, p?: number): Tensor;
  /** The `p`-norm (default 2) of `this - other`, broadcasting. */
  dist(other: Tensor, options?: { p?: number }): Tensor;
  /** The outer product of two vectors: `out[i][j] = this[i] · vec2[j]`. */
  outer(vec2: Tensor): Tensor;
  /** `beta · this + alpha · (mat1 @ mat2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too). */
  addmm(mat1: Tensor, mat2: Tensor, options?: { beta?: number; alpha?: number }): Tensor;
  /** `beta · this + alpha · bmm(batch1, batch2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too). */
  baddbmm(batch1: Tensor, batch2: Tensor, options?: { beta?: number; alpha?: number }): Tensor;
  /** `this + weight · (end - this)` for floating tensors of one dtype, computed from `end` where |weight| ≥ 0.5, as PyTorch does. */
  lerp(end: Tensor, weight: number | Tensor): Tensor;
  /** `this + value · tensor1 · tensor2` (value 1 by default), broadcasting: the product rounded, then added by the fused addcmul kernel where the backend has one. */
  addcmul(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
  /** `this + value · tensor1 / tensor2` (value 1 by default), broadcasting: the quotient rounded, then added by the fused addcmul kernel where the backend has one. */
  addcdiv(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
  /** `clamp(min)`: each element at least `min`. */
  clampMin(min: number | Tensor): Tensor;
  /** `clamp(null, max)`: each element at most `max`. */
  clampMax(max: number | Tensor): Tensor;
  /** `sqrt(this² + other²)` elementwise for floating tensors, broadcasting, without overflow or underflow in the squares. */
  hypot(other: Tensor): Tensor;
  /** The elements at the int32 `index` positions of this tensor read as 1-D (negatives count from the end), in index's shape. */
  take(index: Tensor): Tensor;
  /** `gather` along `dim` with this tensor and the int32 `indices` broadcast in the other dims; without a dim, from the flattened tensor. */
  takeAlongDim(indices: Tensor, dim?: number | null): Tensor;
  /** `gather` along `dim` with this tensor and the int32 `indices` broadcast in the other dims; without a dim, from the flattened tensor. */
  takeAlongDim(indices: Tensor, options?: { dim?: number | null }): Tensor;
  /** A copy with the slices along `dim` at the positions in the 1-D int32 `index` (negatives count from the end) set to `value`. */
  indexFill(dim: number, index: Tensor, value: number | boolean | Tensor): Tensor;
  /** A copy with slice `index[i]` along `dim` replaced by slice i of `source` (for repeated indices, their slices add up). */
  indexCopy(dim: number, index: Tensor, source: Tensor): Tensor;
  /** A copy with `alpha · source`'s slice i added to slice `index[i]` along `dim` (alpha 1 by default); repeated indices accumulate. */
  indexAdd(dim: number, index: Tensor, source: Tensor, options?: { alpha?: number }): Tensor;
  /** `view` to `other`'s shape. */
  viewAs(other: Tensor): Tensor;
  /** `reshape` to `other`'s shape. */
  reshapeAs(other: Tensor): Tensor;
  /** This tensor in `other`'s dtype and on its device, like `to(other)`. */
  typeAs(other: Tensor): Tensor;
  /** Of a 1-D tensor: a square matrix with it on diagonal `diagonal` (0 the main one, positive above it) and zeros elsewhere; of a 2-D tensor: that diagonal, as a 1-D copy. */
  diag(diagonal?: number): Tensor;
  /** Of a 1-D tensor: a square matrix with it on diagonal `diagonal` (0 the main one, positive above it) and zeros elsewhere; of a 2-D tensor: that diagonal, as a 1-D copy. */
  diag(options?: { diagonal?: number }): Tensor;
  /** The sum of the main diagonal of a matrix. */
  trace(): Tensor;
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
  /** Python's `x[indices]`, items as in `IndexItem` (`x.index([':', [-1], '1:3'])` is `x[:, [-1], 1:3]`): a view for integers, slices, `'...'` and null; a copy for advanced (integer and boolean) indices, with PyTorch's broadcasting and placement rules. A boolean tensor index reads the mask (the sync/async rule: `indexAsync`). */
  index(indices: IndexSpec): Tensor;
  /** `index`, reading boolean masks with `await`: works on every device. */
  indexAsync(indices: IndexSpec): Promise<Tensor>;
  /** A copy with Python's `x[indices] = values` done (values broadcast to the indexed shape); `accumulate` adds them instead, repeated indices adding up. Repeated indices without it: the last one wins. */
  indexPut(indices: IndexSpec, values: Tensor | number | boolean, accumulate?: boolean): Tensor;
  /** A copy with Python's `x[indices] = values` done (values broadcast to the indexed shape); `accumulate` adds them instead, repeated indices adding up. Repeated indices without it: the last one wins. */
  indexPut(indices: IndexSpec, values: Tensor | number | boolean, options?: { accumulate?: boolean }): Tensor;
  /** In-place `indexPut`: Python's `x[indices] = values` (or `+=` with `accumulate`). */
  indexPut_(indices: IndexSpec, values: Tensor | number | boolean, accumulate?: boolean): this;
  /** In-place `indexPut`: Python's `x[indices] = values` (or `+=` with `accumulate`). */
  indexPut_(indices: IndexSpec, values: Tensor | number | boolean, options?: { accumulate?: boolean }): this;
  /** The elements where the bool `mask` (broadcast with this tensor) is true, as a 1-D tensor (reads the mask: `maskedSelectAsync` on devices without synchronous reads). */
  maskedSelect(mask: Tensor): Tensor;
  /** `maskedSelect`, reading the mask with `await`: works on every device. */
  maskedSelectAsync(mask: Tensor): Promise<Tensor>;
  /** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). */
  nonzero(options?: { asTuple?: false }): Tensor;
  /** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). */
  nonzero(options: { asTuple: true }): Tensor[];
  /** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). */
  nonzero(options: { asTuple?: boolean }): Tensor | Tensor[];
  /** `nonzero`, reading the values with `await`: works on every device. */
  nonzeroAsync(options?: { asTuple?: false }): Promise<Tensor>;
  /** `nonzero`, reading the values with `await`: works on every device. */
  nonzeroAsync(options: { asTuple: true }): Promise<Tensor[]>;
  /** `nonzero`, reading the values with `await`: works on every device. */
  nonzeroAsync(options: { asTuple?: boolean }): Promise<Tensor | Tensor[]>;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(options?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Tensor;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(options: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): UniqueResult;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(options: UniqueOptions): Tensor | UniqueResult;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(sorted?: boolean, returnInverse?: false, returnCounts?: false, dim?: number | null): Tensor;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(sorted: boolean, returnInverse: true, returnCounts?: boolean, dim?: number | null): UniqueResult;
  /** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. */
  unique(sorted: boolean, returnInverse: boolean, returnCounts: true, dim?: number | null): UniqueResult;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(options?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Promise<Tensor>;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(options: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): Promise<UniqueResult>;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(options: UniqueOptions): Promise<Tensor | UniqueResult>;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(sorted?: boolean, returnInverse?: false, returnCounts?: false, dim?: number | null): Promise<Tensor>;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(sorted: boolean, returnInverse: true, returnCounts?: boolean, dim?: number | null): Promise<UniqueResult>;
  /** `unique`, reading the values with `await`: works on every device. */
  uniqueAsync(sorted: boolean, returnInverse: boolean, returnCounts: true, dim?: number | null): Promise<UniqueResult>;
  /** int32 indices of `numSamples` categories drawn from each row of (unnormalized) probabilities, without replacement unless `replacement`. Checks the values as PyTorch does, which reads them: `multinomialAsync` on devices without synchronous reads. */
  multinomial(numSamples: number, replacement?: boolean, options?: { generator?: Generator }): Tensor;
  /** int32 indices of `numSamples` categories drawn from each row of (unnormalized) probabilities, without replacement unless `replacement`. Checks the values as PyTorch does, which reads them: `multinomialAsync` on devices without synchronous reads. */
  multinomial(numSamples: number, options?: { replacement?: boolean; generator?: Generator }): Tensor;
  /** `multinomial`, reading its checks with `await`: works on every device. */
  multinomialAsync(numSamples: number, replacement?: boolean, options?: { generator?: Generator }): Promise<Tensor>;
  /** `multinomial`, reading its checks with `await`: works on every device. */
  multinomialAsync(numSamples: number, options?: { replacement?: boolean; generator?: Generator }): Promise<Tensor>;
  /** 1 with probability p, else 0, in this tensor's dtype: p is each element of this tensor (in [0, 1]), or the number `p` for every element. */
  bernoulli(p?: number, options?: { generator?: Generator }): Tensor;
  /** 1 with probability p, else 0, in this tensor's dtype: p is each element of this tensor (in [0, 1]), or the number `p` for every element. */
  bernoulli(options?: { p?: number; generator?: Generator }): Tensor;
  /** Fill with 1 with probability `p` (default 0.5; a number or a tensor that broadcasts to this one), else 0, in place. */
  bernoulli_(p?: number | Tensor, options?: { generator?: Generator }): this;
  /** Fill with 1 with probability `p` (default 0.5; a number or a tensor that broadcasts to this one), else 0, in place. */
  bernoulli_(options?: { p?: number | Tensor; generator?: Generator }): this;
  /** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). */
  sort(dim?: number, descending?: boolean, options?: { stable?: boolean }): ValuesIndices;
  /** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). */
  sort(options?: { dim?: number; descending?: boolean; stable?: boolean }): ValuesIndices;
  /** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). */
  sort(dim?: number, options?: { descending?: boolean; stable?: boolean }): ValuesIndices;
  /** The int32 indices that sort `dim` (default -1): `sort(...).indices`. */
  argsort(dim?: number, descending?: boolean, options?: { stable?: boolean }): Tensor;
  /** The int32 indices that sort `dim` (default -1): `sort(...).indices`. */
  argsort(options?: { dim?: number; descending?: boolean; stable?: boolean }): Tensor;
  /** The int32 indices that sort `dim` (default -1): `sort(...).indices`. */
  argsort(dim?: number, options?: { descending?: boolean; stable?: boolean }): Tensor;
  /** The values sorted along dim 0, ascending: `sort(0).values`. */
  msort(): Tensor;
  /** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. */
  topk(k: number, dim?: number, largest?: boolean, sorted?: boolean): ValuesIndices;
  /** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. */
  topk(k: number, options?: { dim?: number; largest?: boolean; sorted?: boolean }): ValuesIndices;
  /** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. */
  topk(k: number, dim?: number, options?: { largest?: boolean; sorted?: boolean }): ValuesIndices;
  /** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. */
  topk(k: number, dim?: number, largest?: boolean, options?: { sorted?: boolean }): ValuesIndices;
  /** The running sum along `dim`: `out[i] = x[0] + … + x[i]`. Integers and bools give int32; `dtype` casts the input first (and bypasses autocast). */
  cumsum(dim: number, options?: { dtype?: DType }): Tensor;
  /** The running product along `dim`: `out[i] = x[0] · … · x[i]`. Integers and bools give int32; `dtype` casts the input first. Its gradient is exact with zeros in the input. */
  cumprod(dim: number, options?: { dtype?: DType }): Tensor;
  /** A copy of this tensor with `src` (a tensor, or one `value` everywhere) written at the positions `index` gives along `dim`; with `reduce` added or multiplied in instead. Repeated indices: the last one wins (deterministic on every backend). */
  scatter(dim: number, index: Tensor, src: Tensor | number, options?: { reduce?: 'add' | 'multiply' }): Tensor;
  /** A copy of this tensor with `src` (a tensor, or one `value` everywhere) written at the positions `index` gives along `dim`; with `reduce` added or multiplied in instead. Repeated indices: the last one wins (deterministic on every backend). */
  scatter(dim: number, index: Tensor, options: { src?: Tensor; value?: number; reduce?: 'add' | 'multiply' }): Tensor;
  /** In-place `scatter`. */
  scatter_(dim: number, index: Tensor, src: Tensor | number, options?: { reduce?: 'add' | 'multiply' }): this;
  /** In-place `scatter`. */
  scatter_(dim: number, index: Tensor, options: { src?: Tensor; value?: number; reduce?: 'add' | 'multiply' }): this;
  /** A copy of this tensor with `src` reduced (`sum`, `prod`, `mean`, `amax` or `amin`) into the positions `index` gives along `dim`; `includeSelf: false` leaves this tensor's values out of the positions written to. */
  scatterReduce(dim: number, index: Tensor, src: Tensor, reduce: 'sum' | 'prod' | 'mean' | 'amax' | 'amin', options?: { includeSelf?: boolean }): Tensor;
  /** `exp(x) / sum(exp(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  softmax(dim: number, options?: { dtype?: DType }): Tensor;
  /** `log(softmax(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  logSoftmax(dim: number, options?: { dtype?: DType }): Tensor;
  /** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. */
  diagonal(offset?: number, dim1?: number, dim2?: number): Tensor;
  /** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. */
  diagonal(options?: { offset?: number; dim1?: number; dim2?: number }): Tensor;
  /** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. */
  diagonal(offset?: number, options?: { dim1?: number; dim2?: number }): Tensor;
  /** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. */
  diagonal(offset?: number, dim1?: number, options?: { dim2?: number }): Tensor;
  /** In-place `maskedFill`: the mask broadcasts to this tensor's shape. */
  maskedFill_(mask: Tensor, value: number | boolean | Tensor): this;
  /** In-place `maskedScatter`: the mask broadcasts to this tensor's shape. */
  maskedScatter_(mask: Tensor, source: Tensor): this;
  /** In-place `addcmul`. */
  addcmul_(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): this;
  /** In-place `addcdiv`. */
  addcdiv_(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): this;
  /** In-place `indexFill`. */
  indexFill_(dim: number, index: Tensor, value: number | boolean | Tensor): this;
  /** In-place `indexCopy`. */
  indexCopy_(dim: number, index: Tensor, source: Tensor): this;
  /** In-place `indexAdd`. */
  indexAdd_(dim: number, index: Tensor, source: Tensor, options?: { alpha?: number }): this;
  /** Zeros of `size`, in this tensor's dtype and on its device unless `options` say otherwise (DEV-5). */
  newZeros(size: readonly number[], options?: FactoryOptions): Tensor;
  /** Ones of `size`, in this tensor's dtype and on its device unless `options` say otherwise (DEV-5). */
  newOnes(size: readonly number[], options?: FactoryOptions): Tensor;
  /** `fillValue` everywhere in a tensor of `size`, in this tensor's dtype and on its device unless `options` say otherwise (DEV-5). */
  newFull(size: readonly number[], fillValue: number | boolean, options?: FactoryOptions): Tensor;
  /** Uninitialised memory of `size`, in this tensor's dtype and on its device unless `options` say otherwise (DEV-5). */
  newEmpty(size: readonly number[], options?: FactoryOptions): Tensor;
  /** A tensor of `data` (copied), in this tensor's dtype and on its device unless `options` say otherwise (DEV-5). */
  newTensor(data: TensorData, options?: FactoryOptions): Tensor;
}

/** `log(sum(exp(x)))` over `dim`, computed stably (the max is subtracted first); `keepdim` keeps reduced dims as size 1. The function form of `Tensor.logsumexp`. */
export function logsumexp(input: Tensor, dim: number | readonly number[], keepdim?: boolean): Tensor {
  return input.logsumexp(dim, keepdim);
}

/** `value` where the bool `mask` is true, else this tensor's element (they broadcast); `value` is a number or a 0-dim tensor, which gets a gradient. The function form of `Tensor.maskedFill`. */
export function maskedFill(input: Tensor, mask: Tensor, value: number | boolean | Tensor): Tensor {
  return input.maskedFill(mask, value);
}

/** This tensor with `source`'s elements (of its dtype), read in row-major order, written one after another where the bool `mask` is true (they broadcast): `source` needs at least as many elements as the mask has trues. That count is checked where the mask's device reads synchronously; elsewhere nothing outside `source` is read, and positions past its end keep this tensor's elements. The function form of `Tensor.maskedScatter`. */
export function maskedScatter(input: Tensor, mask: Tensor, source: Tensor): Tensor {
  return input.maskedScatter(mask, source);
}

/** The lower triangle of the last two dims: the elements on and below diagonal `diagonal` (0 the main one, positive above it), zeros elsewhere. The function form of `Tensor.tril`. */
export function tril(input: Tensor, diagonal?: number): Tensor;
/** The lower triangle of the last two dims: the elements on and below diagonal `diagonal` (0 the main one, positive above it), zeros elsewhere. The function form of `Tensor.tril`. */
export function tril(input: Tensor, options?: { diagonal?: number }): Tensor;
export function tril(input: Tensor, ...args: unknown[]): unknown {
  return (input.tril as (...args: unknown[]) => unknown)(...args);
}

/** The upper triangle of the last two dims: the elements on and above diagonal `diagonal` (0 the main one, negative below it), zeros elsewhere. The function form of `Tensor.triu`. */
export function triu(input: Tensor, diagonal?: number): Tensor;
/** The upper triangle of the last two dims: the elements on and above diagonal `diagonal` (0 the main one, negative below it), zeros elsewhere. The function form of `Tensor.triu`. */
export function triu(input: Tensor, options?: { diagonal?: number }): Tensor;
export function triu(input: Tensor, ...args: unknown[]): unknown {
  return (input.triu as (...args: unknown[]) => unknown)(...args);
}

/** Views of this tensor along `dim` (default 0): pieces of `splitSize` elements (the last may be smaller), or one per size in a list, which must add up to the size of `dim`. The function form of `Tensor.split`. */
export function split(input: Tensor, splitSize: number | readonly number[], dim?: number): Tensor[];
/** Views of this tensor along `dim` (default 0): pieces of `splitSize` elements (the last may be smaller), or one per size in a list, which must add up to the size of `dim`. The function form of `Tensor.split`. */
export function split(input: Tensor, splitSize: number | readonly number[], options?: { dim?: number }): Tensor[];
export function split(input: Tensor, ...args: unknown[]): unknown {
  return (input.split as (...args: unknown[]) => unknown)(...args);
}

/** At most `chunks` views along `dim` (default 0), of ceil(size / chunks) elements each but the last, as PyTorch splits them. The function form of `Tensor.chunk`. */
export function chunk(input: Tensor, chunks: number, dim?: number): Tensor[];
/** At most `chunks` views along `dim` (default 0), of ceil(size / chunks) elements each but the last, as PyTorch splits them. The function form of `Tensor.chunk`. */
export function chunk(input: Tensor, chunks: number, options?: { dim?: number }): Tensor[];
export function chunk(input: Tensor, ...args: unknown[]): unknown {
  return (input.chunk as (...args: unknown[]) => unknown)(...args);
}

/** The views at each index of `dim` (default 0), with that dim removed. The function form of `Tensor.unbind`. */
export function unbind(input: Tensor, dim?: number): Tensor[];
/** The views at each index of `dim` (default 0), with that dim removed. The function form of `Tensor.unbind`. */
export function unbind(input: Tensor, options?: { dim?: number }): Tensor[];
export function unbind(input: Tensor, ...args: unknown[]): unknown {
  return (input.unbind as (...args: unknown[]) => unknown)(...args);
}

/** A copy with the elements along each of `dims` in reverse order. The function form of `Tensor.flip`. */
export function flip(input: Tensor, dims: number | readonly number[]): Tensor {
  return input.flip(dims);
}

/** A copy with the elements moved `shifts` places along `dims`, wrapping around; without dims, along the flattened tensor (the shape is kept). The function form of `Tensor.roll`. */
export function roll(input: Tensor, shifts: number | readonly number[], dims?: number | readonly number[] | null): Tensor;
/** A copy with the elements moved `shifts` places along `dims`, wrapping around; without dims, along the flattened tensor (the shape is kept). The function form of `Tensor.roll`. */
export function roll(input: Tensor, shifts: number | readonly number[], options?: { dims?: number | readonly number[] | null }): Tensor;
export function roll(input: Tensor, ...args: unknown[]): unknown {
  return (input.roll as (...args: unknown[]) => unknown)(...args);
}

/** `repeat`, with `dims` padded with leading 1s when shorter than this tensor's rank. The function form of `Tensor.tile`. */
export function tile(input: Tensor, dims: readonly number[]): Tensor {
  return input.tile(dims);
}

/** Each element (slice along `dim`) repeated `repeats` times in a row; of the flattened tensor without a dim. `repeats` is an integer (per-element repeats, a tensor, are not supported). The function form of `Tensor.repeatInterleave`. */
export function repeatInterleave(input: Tensor, repeats: number, dim?: number | null, options?: { outputSize?: number }): Tensor;
/** Each element (slice along `dim`) repeated `repeats` times in a row; of the flattened tensor without a dim. `repeats` is an integer (per-element repeats, a tensor, are not supported). The function form of `Tensor.repeatInterleave`. */
export function repeatInterleave(input: Tensor, repeats: number, options?: { dim?: number | null; outputSize?: number }): Tensor;
export function repeatInterleave(input: Tensor, ...args: unknown[]): unknown {
  return (input.repeatInterleave as (...args: unknown[]) => unknown)(...args);
}

/** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.any`. */
export function any(input: Tensor, dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
/** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.any`. */
export function any(input: Tensor, options?: { dim?: number | readonly number[] | null; keepdim?: boolean }): Tensor;
/** True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.any`. */
export function any(input: Tensor, dim?: number | readonly number[] | null, options?: { keepdim?: boolean }): Tensor;
export function any(input: Tensor, ...args: unknown[]): unknown {
  return (input.any as (...args: unknown[]) => unknown)(...args);
}

/** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.all`. */
export function all(input: Tensor, dim?: number | readonly number[] | null, keepdim?: boolean): Tensor;
/** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.all`. */
export function all(input: Tensor, options?: { dim?: number | readonly number[] | null; keepdim?: boolean }): Tensor;
/** True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor. The function form of `Tensor.all`. */
export function all(input: Tensor, dim?: number | readonly number[] | null, options?: { keepdim?: boolean }): Tensor;
export function all(input: Tensor, ...args: unknown[]): unknown {
  return (input.all as (...args: unknown[]) => unknown)(...args);
}

/** The number of non-zero elements over `dim` (every dim when omitted), as int32. The function form of `Tensor.countNonzero`. */
export function countNonzero(input: Tensor, dim?: number | readonly number[] | null): Tensor;
/** The number of non-zero elements over `dim` (every dim when omitted), as int32. The function form of `Tensor.countNonzero`. */
export function countNonzero(input: Tensor, options?: { dim?: number | readonly number[] | null }): Tensor;
export function countNonzero(input: Tensor, ...args: unknown[]): unknown {
  return (input.countNonzero as (...args: unknown[]) => unknown)(...args);
}

/** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. The function form of `Tensor.norm`. */
export function norm(input: Tensor, p?: number | 'fro' | 'nuc' | null, dim?: number | readonly number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
/** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. The function form of `Tensor.norm`. */
export function norm(input: Tensor, options?: { p?: number | 'fro' | 'nuc' | null; dim?: number | readonly number[] | null; keepdim?: boolean; dtype?: DType }): Tensor;
/** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. The function form of `Tensor.norm`. */
export function norm(input: Tensor, p?: number | 'fro' | 'nuc' | null, options?: { dim?: number | readonly number[] | null; keepdim?: boolean; dtype?: DType }): Tensor;
/** The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, 'fro' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is. The function form of `Tensor.norm`. */
export function norm(input: Tensor, p?: number | 'fro' | 'nuc' | null, dim?: number | readonly number[] | null, options?: { keepdim?: boolean; dtype?: DType }): Tensor;
export function norm(input: Tensor, ...args: unknown[]): unknown {
  return (input.norm as (...args: unknown[]) => unknown)(...args);
}

/** The `p`-norm (default 2) of `this - other`, broadcasting. The function form of `Tensor.dist`. */
export function dist(input: Tensor, other: Tensor, p?: number): Tensor;
/** The `p`-norm (default 2) of `this - other`, broadcasting. The function form of `Tensor.dist`. */
export function dist(input: Tensor, other: Tensor, options?: { p?: number }): Tensor;
export function dist(input: Tensor, ...args: unknown[]): unknown {
  return (input.dist as (...args: unknown[]) => unknown)(...args);
}

/** The outer product of two vectors: `out[i][j] = this[i] · vec2[j]`. The function form of `Tensor.outer`. */
export function outer(input: Tensor, vec2: Tensor): Tensor {
  return input.outer(vec2);
}

/** `beta · this + alpha · (mat1 @ mat2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too). The function form of `Tensor.addmm`. */
export function addmm(input: Tensor, mat1: Tensor, mat2: Tensor, options?: { beta?: number; alpha?: number }): Tensor {
  return input.addmm(mat1, mat2, options);
}

/** `beta · this + alpha · bmm(batch1, batch2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too). The function form of `Tensor.baddbmm`. */
export function baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, options?: { beta?: number; alpha?: number }): Tensor {
  return input.baddbmm(batch1, batch2, options);
}

/** `this + weight · (end - this)` for floating tensors of one dtype, computed from `end` where |weight| ≥ 0.5, as PyTorch does. The function form of `Tensor.lerp`. */
export function lerp(input: Tensor, end: Tensor, weight: number | Tensor): Tensor {
  return input.lerp(end, weight);
}

/** `this + value · tensor1 · tensor2` (value 1 by default), broadcasting: the product rounded, then added by the fused addcmul kernel where the backend has one. The function form of `Tensor.addcmul`. */
export function addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor {
  return input.addcmul(tensor1, tensor2, options);
}

/** `this + value · tensor1 / tensor2` (value 1 by default), broadcasting: the quotient rounded, then added by the fused addcmul kernel where the backend has one. The function form of `Tensor.addcdiv`. */
export function addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor {
  return input.addcdiv(tensor1, tensor2, options);
}

/** `clamp(min)`: each element at least `min`. The function form of `Tensor.clampMin`. */
export function clampMin(input: Tensor, min: number | Tensor): Tensor {
  return input.clampMin(min);
}

/** `clamp(null, max)`: each element at most `max`. The function form of `Tensor.clampMax`. */
export function clampMax(input: Tensor, max: number | Tensor): Tensor {
  return input.clampMax(max);
}

/** `sqrt(this² + other²)` elementwise for floating tensors, broadcasting, without overflow or underflow in the squares. The function form of `Tensor.hypot`. */
export function hypot(input: Tensor, other: Tensor): Tensor {
  return input.hypot(other);
}

/** The elements at the int32 `index` positions of this tensor read as 1-D (negatives count from the end), in index's shape. The function form of `Tensor.take`. */
export function take(input: Tensor, index: Tensor): Tensor {
  return input.take(index);
}

/** `gather` along `dim` with this tensor and the int32 `indices` broadcast in the other dims; without a dim, from the flattened tensor. The function form of `Tensor.takeAlongDim`. */
export function takeAlongDim(input: Tensor, indices: Tensor, dim?: number | null): Tensor;
/** `gather` along `dim` with this tensor and the int32 `indices` broadcast in the other dims; without a dim, from the flattened tensor. The function form of `Tensor.takeAlongDim`. */
export function takeAlongDim(input: Tensor, indices: Tensor, options?: { dim?: number | null }): Tensor;
export function takeAlongDim(input: Tensor, ...args: unknown[]): unknown {
  return (input.takeAlongDim as (...args: unknown[]) => unknown)(...args);
}

/** A copy with the slices along `dim` at the positions in the 1-D int32 `index` (negatives count from the end) set to `value`. The function form of `Tensor.indexFill`. */
export function indexFill(input: Tensor, dim: number, index: Tensor, value: number | boolean | Tensor): Tensor {
  return input.indexFill(dim, index, value);
}

/** A copy with slice `index[i]` along `dim` replaced by slice i of `source` (for repeated indices, their slices add up). The function form of `Tensor.indexCopy`. */
export function indexCopy(input: Tensor, dim: number, index: Tensor, source: Tensor): Tensor {
  return input.indexCopy(dim, index, source);
}

/** A copy with `alpha · source`'s slice i added to slice `index[i]` along `dim` (alpha 1 by default); repeated indices accumulate. The function form of `Tensor.indexAdd`. */
export function indexAdd(input: Tensor, dim: number, index: Tensor, source: Tensor, options?: { alpha?: number }): Tensor {
  return input.indexAdd(dim, index, source, options);
}

/** Of a 1-D tensor: a square matrix with it on diagonal `diagonal` (0 the main one, positive above it) and zeros elsewhere; of a 2-D tensor: that diagonal, as a 1-D copy. The function form of `Tensor.diag`. */
export function diag(input: Tensor, diagonal?: number): Tensor;
/** Of a 1-D tensor: a square matrix with it on diagonal `diagonal` (0 the main one, positive above it) and zeros elsewhere; of a 2-D tensor: that diagonal, as a 1-D copy. The function form of `Tensor.diag`. */
export function diag(input: Tensor, options?: { diagonal?: number }): Tensor;
export function diag(input: Tensor, ...args: unknown[]): unknown {
  return (input.diag as (...args: unknown[]) => unknown)(...args);
}

/** The sum of the main diagonal of a matrix. The function form of `Tensor.trace`. */
export function trace(input: Tensor): Tensor {
  return input.trace();
}

/** The dims `startDim`..`endDim` merged into one (a view when possible). The function form of `Tensor.flatten`. */
export function flatten(input: Tensor, startDim?: number, endDim?: number): Tensor {
  return input.flatten(startDim, endDim);
}

/** A copy with Python's `x[indices] = values` done (values broadcast to the indexed shape); `accumulate` adds them instead, repeated indices adding up. Repeated indices without it: the last one wins. The function form of `Tensor.indexPut`. */
export function indexPut(input: Tensor, indices: IndexSpec, values: Tensor | number | boolean, accumulate?: boolean): Tensor;
/** A copy with Python's `x[indices] = values` done (values broadcast to the indexed shape); `accumulate` adds them instead, repeated indices adding up. Repeated indices without it: the last one wins. The function form of `Tensor.indexPut`. */
export function indexPut(input: Tensor, indices: IndexSpec, values: Tensor | number | boolean, options?: { accumulate?: boolean }): Tensor;
export function indexPut(input: Tensor, ...args: unknown[]): unknown {
  return (input.indexPut as (...args: unknown[]) => unknown)(...args);
}

/** The elements where the bool `mask` (broadcast with this tensor) is true, as a 1-D tensor (reads the mask: `maskedSelectAsync` on devices without synchronous reads). The function form of `Tensor.maskedSelect`. */
export function maskedSelect(input: Tensor, mask: Tensor): Tensor {
  return input.maskedSelect(mask);
}

/** `maskedSelect`, reading the mask with `await`: works on every device. The function form of `Tensor.maskedSelectAsync`. */
export function maskedSelectAsync(input: Tensor, mask: Tensor): Promise<Tensor> {
  return input.maskedSelectAsync(mask);
}

/** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). The function form of `Tensor.nonzero`. */
export function nonzero(input: Tensor, options?: { asTuple?: false }): Tensor;
/** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). The function form of `Tensor.nonzero`. */
export function nonzero(input: Tensor, options: { asTuple: true }): Tensor[];
/** The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads). The function form of `Tensor.nonzero`. */
export function nonzero(input: Tensor, options: { asTuple?: boolean }): Tensor | Tensor[];
export function nonzero(input: Tensor, ...args: unknown[]): unknown {
  return (input.nonzero as (...args: unknown[]) => unknown)(...args);
}

/** `nonzero`, reading the values with `await`: works on every device. The function form of `Tensor.nonzeroAsync`. */
export function nonzeroAsync(input: Tensor, options?: { asTuple?: false }): Promise<Tensor>;
/** `nonzero`, reading the values with `await`: works on every device. The function form of `Tensor.nonzeroAsync`. */
export function nonzeroAsync(input: Tensor, options: { asTuple: true }): Promise<Tensor[]>;
/** `nonzero`, reading the values with `await`: works on every device. The function form of `Tensor.nonzeroAsync`. */
export function nonzeroAsync(input: Tensor, options: { asTuple?: boolean }): Promise<Tensor | Tensor[]>;
export function nonzeroAsync(input: Tensor, ...args: unknown[]): unknown {
  return (input.nonzeroAsync as (...args: unknown[]) => unknown)(...args);
}

/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, options?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Tensor;
/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, options: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): UniqueResult;
/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, options: UniqueOptions): Tensor | UniqueResult;
/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, sorted?: boolean, returnInverse?: false, returnCounts?: false, dim?: number | null): Tensor;
/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, sorted: boolean, returnInverse: true, returnCounts?: boolean, dim?: number | null): UniqueResult;
/** The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads. The function form of `Tensor.unique`. */
export function unique(input: Tensor, sorted: boolean, returnInverse: boolean, returnCounts: true, dim?: number | null): UniqueResult;
export function unique(input: Tensor, ...args: unknown[]): unknown {
  return (input.unique as (...args: unknown[]) => unknown)(...args);
}

/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, options?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Promise<Tensor>;
/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, options: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): Promise<UniqueResult>;
/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, options: UniqueOptions): Promise<Tensor | UniqueResult>;
/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, sorted?: boolean, returnInverse?: false, returnCounts?: false, dim?: number | null): Promise<Tensor>;
/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, sorted: boolean, returnInverse: true, returnCounts?: boolean, dim?: number | null): Promise<UniqueResult>;
/** `unique`, reading the values with `await`: works on every device. The function form of `Tensor.uniqueAsync`. */
export function uniqueAsync(input: Tensor, sorted: boolean, returnInverse: boolean, returnCounts: true, dim?: number | null): Promise<UniqueResult>;
export function uniqueAsync(input: Tensor, ...args: unknown[]): unknown {
  return (input.uniqueAsync as (...args: unknown[]) => unknown)(...args);
}

/** int32 indices of `numSamples` categories drawn from each row of (unnormalized) probabilities, without replacement unless `replacement`. Checks the values as PyTorch does, which reads them: `multinomialAsync` on devices without synchronous reads. The function form of `Tensor.multinomial`. */
export function multinomial(input: Tensor, numSamples: number, replacement?: boolean, options?: { generator?: Generator }): Tensor;
/** int32 indices of `numSamples` categories drawn from each row of (unnormalized) probabilities, without replacement unless `replacement`. Checks the values as PyTorch does, which reads them: `multinomialAsync` on devices without synchronous reads. The function form of `Tensor.multinomial`. */
export function multinomial(input: Tensor, numSamples: number, options?: { replacement?: boolean; generator?: Generator }): Tensor;
export function multinomial(input: Tensor, ...args: unknown[]): unknown {
  return (input.multinomial as (...args: unknown[]) => unknown)(...args);
}

/** `multinomial`, reading its checks with `await`: works on every device. The function form of `Tensor.multinomialAsync`. */
export function multinomialAsync(input: Tensor, numSamples: number, replacement?: boolean, options?: { generator?: Generator }): Promise<Tensor>;
/** `multinomial`, reading its checks with `await`: works on every device. The function form of `Tensor.multinomialAsync`. */
export function multinomialAsync(input: Tensor, numSamples: number, options?: { replacement?: boolean; generator?: Generator }): Promise<Tensor>;
export function multinomialAsync(input: Tensor, ...args: unknown[]): unknown {
  return (input.multinomialAsync as (...args: unknown[]) => unknown)(...args);
}

/** 1 with probability p, else 0, in this tensor's dtype: p is each element of this tensor (in [0, 1]), or the number `p` for every element. The function form of `Tensor.bernoulli`. */
export function bernoulli(input: Tensor, p?: number, options?: { generator?: Generator }): Tensor;
/** 1 with probability p, else 0, in this tensor's dtype: p is each element of this tensor (in [0, 1]), or the number `p` for every element. The function form of `Tensor.bernoulli`. */
export function bernoulli(input: Tensor, options?: { p?: number; generator?: Generator }): Tensor;
export function bernoulli(input: Tensor, ...args: unknown[]): unknown {
  return (input.bernoulli as (...args: unknown[]) => unknown)(...args);
}

/** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). The function form of `Tensor.sort`. */
export function sort(input: Tensor, dim?: number, descending?: boolean, options?: { stable?: boolean }): ValuesIndices;
/** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). The function form of `Tensor.sort`. */
export function sort(input: Tensor, options?: { dim?: number; descending?: boolean; stable?: boolean }): ValuesIndices;
/** The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable). The function form of `Tensor.sort`. */
export function sort(input: Tensor, dim?: number, options?: { descending?: boolean; stable?: boolean }): ValuesIndices;
export function sort(input: Tensor, ...args: unknown[]): unknown {
  return (input.sort as (...args: unknown[]) => unknown)(...args);
}

/** The int32 indices that sort `dim` (default -1): `sort(...).indices`. The function form of `Tensor.argsort`. */
export function argsort(input: Tensor, dim?: number, descending?: boolean, options?: { stable?: boolean }): Tensor;
/** The int32 indices that sort `dim` (default -1): `sort(...).indices`. The function form of `Tensor.argsort`. */
export function argsort(input: Tensor, options?: { dim?: number; descending?: boolean; stable?: boolean }): Tensor;
/** The int32 indices that sort `dim` (default -1): `sort(...).indices`. The function form of `Tensor.argsort`. */
export function argsort(input: Tensor, dim?: number, options?: { descending?: boolean; stable?: boolean }): Tensor;
export function argsort(input: Tensor, ...args: unknown[]): unknown {
  return (input.argsort as (...args: unknown[]) => unknown)(...args);
}

/** The values sorted along dim 0, ascending: `sort(0).values`. The function form of `Tensor.msort`. */
export function msort(input: Tensor): Tensor {
  return input.msort();
}

/** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. The function form of `Tensor.topk`. */
export function topk(input: Tensor, k: number, dim?: number, largest?: boolean, sorted?: boolean): ValuesIndices;
/** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. The function form of `Tensor.topk`. */
export function topk(input: Tensor, k: number, options?: { dim?: number; largest?: boolean; sorted?: boolean }): ValuesIndices;
/** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. The function form of `Tensor.topk`. */
export function topk(input: Tensor, k: number, dim?: number, options?: { largest?: boolean; sorted?: boolean }): ValuesIndices;
/** The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first. The function form of `Tensor.topk`. */
export function topk(input: Tensor, k: number, dim?: number, largest?: boolean, options?: { sorted?: boolean }): ValuesIndices;
export function topk(input: Tensor, ...args: unknown[]): unknown {
  return (input.topk as (...args: unknown[]) => unknown)(...args);
}

/** The running sum along `dim`: `out[i] = x[0] + … + x[i]`. Integers and bools give int32; `dtype` casts the input first (and bypasses autocast). The function form of `Tensor.cumsum`. */
export function cumsum(input: Tensor, dim: number, options?: { dtype?: DType }): Tensor {
  return input.cumsum(dim, options);
}

/** The running product along `dim`: `out[i] = x[0] · … · x[i]`. Integers and bools give int32; `dtype` casts the input first. Its gradient is exact with zeros in the input. The function form of `Tensor.cumprod`. */
export function cumprod(input: Tensor, dim: number, options?: { dtype?: DType }): Tensor {
  return input.cumprod(dim, options);
}

/** A copy of this tensor with `src` (a tensor, or one `value` everywhere) written at the positions `index` gives along `dim`; with `reduce` added or multiplied in instead. Repeated indices: the last one wins (deterministic on every backend). The function form of `Tensor.scatter`. */
export function scatter(input: Tensor, dim: number, index: Tensor, src: Tensor | number, options?: { reduce?: 'add' | 'multiply' }): Tensor;
/** A copy of this tensor with `src` (a tensor, or one `value` everywhere) written at the positions `index` gives along `dim`; with `reduce` added or multiplied in instead. Repeated indices: the last one wins (deterministic on every backend). The function form of `Tensor.scatter`. */
export function scatter(input: Tensor, dim: number, index: Tensor, options: { src?: Tensor; value?: number; reduce?: 'add' | 'multiply' }): Tensor;
export function scatter(input: Tensor, ...args: unknown[]): unknown {
  return (input.scatter as (...args: unknown[]) => unknown)(...args);
}

/** A copy of this tensor with `src` reduced (`sum`, `prod`, `mean`, `amax` or `amin`) into the positions `index` gives along `dim`; `includeSelf: false` leaves this tensor's values out of the positions written to. The function form of `Tensor.scatterReduce`. */
export function scatterReduce(input: Tensor, dim: number, index: Tensor, src: Tensor, reduce: 'sum' | 'prod' | 'mean' | 'amax' | 'amin', options?: { includeSelf?: boolean }): Tensor {
  return input.scatterReduce(dim, index, src, reduce, options);
}

/** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. The function form of `Tensor.diagonal`. */
export function diagonal(input: Tensor, offset?: number, dim1?: number, dim2?: number): Tensor;
/** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. The function form of `Tensor.diagonal`. */
export function diagonal(input: Tensor, options?: { offset?: number; dim1?: number; dim2?: number }): Tensor;
/** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. The function form of `Tensor.diagonal`. */
export function diagonal(input: Tensor, offset?: number, options?: { dim1?: number; dim2?: number }): Tensor;
/** A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim. The function form of `Tensor.diagonal`. */
export function diagonal(input: Tensor, offset?: number, dim1?: number, options?: { dim2?: number }): Tensor;
export function diagonal(input: Tensor, ...args: unknown[]): unknown {
  return (input.diagonal as (...args: unknown[]) => unknown)(...args);
}
