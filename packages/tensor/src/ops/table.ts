// The op table: PyTorch's native_functions.yaml and derivatives.yaml, written as TypeScript. One
// entry per op holds its kind, dtype rule, gradient (what it saves and the formula), autocast class
// per device type, decomposition or fused kernel, Tensor method signature and doc line. The
// contract's primitive lists, elementwise dispatch, autograd, the autocast policy tables, the
// generated Tensor method declarations (src/generated/tensor-methods.ts) and the conformance
// coverage check all read it.
//
// This module imports no op: gradient formulas and decompositions are written with Tensor methods,
// which ops/methods.ts attaches before any op runs.
import type { FusedKernelName } from '../backend/contract.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';

/**
 * How an elementwise op picks its compute dtype from its (promoted) input dtype:
 * - `float`: int/bool inputs are promoted to float32 (exp, sqrt, div…)
 * - `numeric`: keeps the dtype; bool is rejected (neg, abs, sub…)
 * - `same`: keeps the dtype, bool included (relu, floor…)
 * - `logical`: inputs are cast to bool, output bool
 */
export type DTypeRule = 'float' | 'numeric' | 'same' | 'logical';

/**
 * An op's class in an autocast region (PyTorch's autocast lists, AC-8..AC-13):
 * - `lowerPrecision`: eligible args cast to the region dtype (AC-8);
 * - `fp32`: eligible args cast to float32 (AC-9);
 * - `fp32FirstArg`: runs in float32 when its first arg is eligible (AC-10);
 * - `promote`: eligible args cast to the widest of them and the region dtype (AC-12);
 * - `{ banned }`: refuses to run in a region, with that message (AC-13).
 */
export type AutocastClass = 'lowerPrecision' | 'fp32' | 'fp32FirstArg' | 'promote' | {
  /** The error an op call in a region throws: what to use instead. */
  readonly banned: string;
};

/** An op's autocast class per built-in device type; webgpu follows cuda. Absent: runs in its inputs' dtypes. */
export interface AutocastRule {
  /** PyTorch's CUDA lists (also webgpu's). */
  readonly cuda?: AutocastClass;
  /** PyTorch's CPU lists. */
  readonly cpu?: AutocastClass;
}

/** What every entry has. */
export interface EntryBase {
  /** The doc line of the op (its Tensor method's TSDoc). */
  readonly doc: string;
  /** Its class in autocast regions per device type; absent: it runs in its inputs' dtypes. */
  readonly autocast?: AutocastRule;
}

/** A unary elementwise primitive: one backend kernel (`Kernels.unary`). */
export interface UnaryEntry extends EntryBase {
  /** A unary primitive. */
  readonly kind: 'unary';
  /** How it picks its compute dtype. */
  readonly dtype: DTypeRule;
  /** Which tensor the gradient reads: only that one is kept alive (and version-checked). */
  readonly saves: 'x' | 'y' | 'none';
  /** The gradient of the input, from g, the input x and the output y; null: not differentiable. */
  readonly grad: ((g: Tensor, x: Tensor, y: Tensor) => Tensor) | null;
}

/** The gradient for one input of a binary primitive, and which tensors it reads. */
export interface PartialGrad {
  /** The tensors `fn` reads (inputs a, b and output y): only those are kept alive and version-checked. */
  readonly reads: readonly ('a' | 'b' | 'y')[];
  /** The gradient from g, the inputs (as tensors of the result's dtype) and the output. */
  readonly fn: (g: Tensor, a: Tensor, b: Tensor, y: Tensor) => Tensor;
}

/** The gradients of a binary primitive's inputs. */
export interface BinaryGrad {
  /** The first input's (null: not differentiable). */
  readonly a: PartialGrad | null;
  /** The second input's (null: not differentiable). */
  readonly b: PartialGrad | null;
}

/** A binary elementwise primitive: one backend kernel (`Kernels.binary`), with promotion and broadcasting. */
export interface BinaryEntry extends EntryBase {
  /** A binary primitive. */
  readonly kind: 'binary';
  /** How it picks its compute dtype. */
  readonly dtype: DTypeRule;
  /** The gradients of a and b. */
  readonly grad: BinaryGrad;
  /** The primitive that computes it on bool tensors (PyTorch's add/mul/max/min are the logical ops there). */
  readonly onBool?: 'logicalAnd' | 'logicalOr';
  /** The Tensor method's signature when it is not `(other: TensorOrScalar): Tensor`. */
  readonly signature?: string;
}

/** A comparison primitive (`Kernels.compare`): bool output, no gradient. */
export interface CompareEntry extends EntryBase {
  /** A comparison primitive. */
  readonly kind: 'compare';
  /** The operator it is, for error messages and docs. */
  readonly symbol: string;
}

/**
 * An op written as Tensor methods: autograd follows from its parts. With `fused`, a backend's fused
 * kernel may run it instead (conformance then runs it both ways).
 */
export interface CompositeEntry extends EntryBase {
  /** An op made of other ops. */
  readonly kind: 'composite';
  /** The Tensor method's signature (the parameters after `this`). */
  readonly signature: string;
  /** The op in terms of Tensor methods, `self` first. */
  readonly decomposition: (self: Tensor, ...args: any[]) => Tensor;
  /** The backend's fused kernel that may run it instead. */
  readonly fused?: FusedKernelName;
  /** Exported as a function from `@core/tensor` too (`torch.X` as well as `Tensor.X`). */
  readonly fn?: true;
}

/**
 * An op with its own implementation in an ops module (views, reductions, matmul, indexing…), bound
 * to its Tensor method in ops/methods.ts; or, without `signature`, a functional op implemented in
 * another package (`F.linear` in @core/nn), listed for its autocast class.
 */
export interface ImplementedEntry extends EntryBase {
  /** An op with its own implementation. */
  readonly kind: 'implemented';
  /** The Tensor method's signature(s); absent for functions only. */
  readonly signature?: string | readonly string[];
  /** The backend's fused kernel that may run it instead of its decomposition. */
  readonly fused?: FusedKernelName;
  /** The contract primitive family it is, by this name (`Kernels.reduce`, `Kernels.argReduce`). */
  readonly kernel?: 'reduce' | 'argReduce';
}

/** One entry of the op table. */
export type OpEntry = UnaryEntry | BinaryEntry | CompareEntry | CompositeEntry | ImplementedEntry;

const FLOAT32_CUDA: AutocastRule = { cuda: 'fp32' };
const zeroGrad = (g: Tensor): Tensor => g.mul(0);
const same: PartialGrad = { reads: [], fn: (g) => g };

/** maximum/minimum: ties split the gradient in half, as PyTorch's do. */
function extremeGrad(wins: 'gt' | 'lt'): BinaryGrad {
  const part = (self: 'a' | 'b'): PartialGrad => ({
    reads: ['a', 'b'],
    fn: (g, a, b) => {
      const [mine, other] = self === 'a' ? [a, b] : [b, a];
      return g.where(mine[wins](other), g.mul(0.5).where(a.eq(b), 0));
    },
  });
  return { a: part('a'), b: part('b') };
}

/** The unary elementwise primitives, in the contract's order (a backend's op codes follow it). */
export const UNARY = {
  neg: { kind: 'unary', dtype: 'numeric', saves: 'none', grad: (g) => g.neg(), doc: '`-this`.' },
  abs: { kind: 'unary', dtype: 'numeric', saves: 'x', grad: (g, x) => g.mul(x.sign()), doc: 'Absolute value.' },
  sign: { kind: 'unary', dtype: 'numeric', saves: 'none', grad: zeroGrad, doc: '-1, 0 or 1 by the sign of each element.' },
  exp: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y), autocast: FLOAT32_CUDA, doc: 'e to the power of each element.' },
  expm1: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.add(1)), autocast: FLOAT32_CUDA, doc: '`exp(x) - 1`, accurate for small x.' },
  log: { kind: 'unary', dtype: 'float', saves: 'x', grad: (g, x) => g.div(x), autocast: FLOAT32_CUDA, doc: 'Natural logarithm.' },
  log1p: { kind: 'unary', dtype: 'float', saves: 'x', grad: (g, x) => g.div(x.add(1)), autocast: FLOAT32_CUDA, doc: '`log(1 + x)`, accurate for small x.' },
  sqrt: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.div(y.mul(2)), doc: 'Square root.' },
  rsqrt: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.pow(3).mul(-0.5)), autocast: FLOAT32_CUDA, doc: '`1 / sqrt(x)`.' },
  reciprocal: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.mul(y).neg()), autocast: FLOAT32_CUDA, doc: '`1 / x`.' },
  sin: { kind: 'unary', dtype: 'float', saves: 'x', grad: (g, x) => g.mul(x.cos()), doc: 'Sine (radians).' },
  cos: { kind: 'unary', dtype: 'float', saves: 'x', grad: (g, x) => g.mul(x.sin().neg()), doc: 'Cosine (radians).' },
  tan: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.mul(y).add(1)), autocast: FLOAT32_CUDA, doc: 'Tangent (radians).' },
  // 1 − y² is written −y² + 1: negation is exact and addition commutes, so the bits are the same.
  tanh: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.mul(y).neg().add(1)), doc: 'Hyperbolic tangent.' },
  sigmoid: { kind: 'unary', dtype: 'float', saves: 'y', grad: (g, _x, y) => g.mul(y.mul(y.neg().add(1))), doc: 'The logistic function `1 / (1 + exp(-x))`.' },
  erf: { kind: 'unary', dtype: 'float', saves: 'x', grad: (g, x) => g.mul(x.mul(x).neg().exp().mul(2 / Math.sqrt(Math.PI))), doc: 'The Gauss error function.' },
  relu: { kind: 'unary', dtype: 'numeric', saves: 'y', grad: (g, _x, y) => g.where(y.gt(0), 0), doc: '`max(x, 0)`.' },
  floor: { kind: 'unary', dtype: 'same', saves: 'none', grad: zeroGrad, doc: 'Round down to an integer value (same dtype).' },
  ceil: { kind: 'unary', dtype: 'same', saves: 'none', grad: zeroGrad, doc: 'Round up to an integer value (same dtype).' },
  round: { kind: 'unary', dtype: 'same', saves: 'none', grad: zeroGrad, doc: 'Round to the nearest integer value, halves to even (same dtype).' },
  trunc: { kind: 'unary', dtype: 'same', saves: 'none', grad: zeroGrad, doc: 'Round toward zero (same dtype).' },
  logicalNot: { kind: 'unary', dtype: 'logical', saves: 'none', grad: null, doc: 'Elementwise NOT of truth values, as a bool tensor.' },
} as const satisfies Record<string, UnaryEntry>;

const ALPHA_SIGNATURE = '(other: TensorOrScalar, alpha?: number): Tensor';

/** The binary elementwise primitives, in the contract's order. */
export const BINARY = {
  add: { kind: 'binary', dtype: 'same', onBool: 'logicalOr', grad: { a: same, b: same }, signature: ALPHA_SIGNATURE, doc: '`this + alpha * other`, broadcasting, with PyTorch\'s type promotion.' },
  sub: { kind: 'binary', dtype: 'numeric', grad: { a: same, b: { reads: [], fn: (g) => g.neg() } }, signature: ALPHA_SIGNATURE, doc: '`this - alpha * other`, broadcasting.' },
  mul: {
    kind: 'binary', dtype: 'same', onBool: 'logicalAnd',
    grad: { a: { reads: ['b'], fn: (g, _a, b) => g.mul(b) }, b: { reads: ['a'], fn: (g, a) => g.mul(a) } },
    doc: 'Elementwise product, broadcasting.',
  },
  div: {
    kind: 'binary', dtype: 'float',
    grad: { a: { reads: ['b'], fn: (g, _a, b) => g.div(b) }, b: { reads: ['a', 'b'], fn: (g, a, b) => g.mul(a).div(b.mul(b)).neg() } },
    doc: 'True division (integers give float32), broadcasting.',
  },
  pow: {
    kind: 'binary', dtype: 'numeric', autocast: FLOAT32_CUDA, signature: '(exponent: TensorOrScalar): Tensor',
    grad: {
      // d/da a^b = b·a^(b−1); PyTorch defines it as 0 where b = 0 (else 0·0^−1 = NaN at a = 0).
      a: { reads: ['a', 'b'], fn: (g, a, b) => g.mul(b.mul(a.pow(b.sub(1)))).where(b.ne(0), 0) },
      // d/db a^b = a^b·log a; PyTorch defines it as 0 where a = 0.
      b: { reads: ['a', 'y'], fn: (g, a, _b, y) => g.mul(y.mul(a.log())).where(a.ne(0), 0) },
    },
    doc: '`this` raised to `exponent`, elementwise.',
  },
  maximum: { kind: 'binary', dtype: 'same', onBool: 'logicalOr', grad: extremeGrad('gt'), doc: 'Elementwise maximum of two tensors (NaN if either is NaN).' },
  minimum: { kind: 'binary', dtype: 'same', onBool: 'logicalAnd', grad: extremeGrad('lt'), doc: 'Elementwise minimum of two tensors (NaN if either is NaN).' },
  remainder: {
    kind: 'binary', dtype: 'numeric',
    grad: { a: same, b: { reads: ['a', 'b'], fn: (g, a, b) => g.mul(a.div(b).floor()).neg() } },
    doc: 'Python-style modulus: the result has the sign of the divisor.',
  },
  atan2: {
    kind: 'binary', dtype: 'float', autocast: { cuda: 'promote' },
    grad: {
      a: { reads: ['a', 'b'], fn: (g, a, b) => g.mul(b.div(a.mul(a).add(b.mul(b)))) },
      b: { reads: ['a', 'b'], fn: (g, a, b) => g.mul(a.neg().div(a.mul(a).add(b.mul(b)))) },
    },
    doc: 'The angle of the point (other, this), elementwise, in radians.',
  },
  logicalAnd: { kind: 'binary', dtype: 'logical', grad: { a: null, b: null }, doc: 'Elementwise AND of truth values, as a bool tensor.' },
  logicalOr: { kind: 'binary', dtype: 'logical', grad: { a: null, b: null }, doc: 'Elementwise OR of truth values, as a bool tensor.' },
} as const satisfies Record<string, BinaryEntry>;

/** The comparison primitives, in the contract's order. */
export const COMPARE = {
  eq: { kind: 'compare', symbol: '==', doc: 'Elementwise `==`, as a bool tensor.' },
  ne: { kind: 'compare', symbol: '!=', doc: 'Elementwise `!=`, as a bool tensor.' },
  lt: { kind: 'compare', symbol: '<', doc: 'Elementwise `<`, as a bool tensor.' },
  le: { kind: 'compare', symbol: '<=', doc: 'Elementwise `<=`, as a bool tensor.' },
  gt: { kind: 'compare', symbol: '>', doc: 'Elementwise `>`, as a bool tensor.' },
  ge: { kind: 'compare', symbol: '>=', doc: 'Elementwise `>=`, as a bool tensor.' },
} as const satisfies Record<string, CompareEntry>;

const DIMS = 'dim?: number | readonly number[] | null, keepdim?: boolean';

/** Ops written as Tensor methods. */
export const COMPOSITE = {
  square: { kind: 'composite', signature: '(): Tensor', decomposition: (x: Tensor) => x.mul(x), doc: '`x * x`.' },
  isnan: { kind: 'composite', signature: '(): Tensor', decomposition: (x: Tensor) => x.ne(x), doc: 'True where an element is NaN.' },
  std: {
    kind: 'composite', signature: `(${DIMS}, options?: { correction?: number }): Tensor`,
    decomposition: (x: Tensor, dim?: number | readonly number[] | null, keepdim?: boolean, options?: { correction?: number }) => x.var(dim, keepdim, options).sqrt(),
    doc: 'Standard deviation: the square root of `var`.',
  },
  expandAs: { kind: 'composite', signature: '(other: Tensor): Tensor', decomposition: (x: Tensor, other: Tensor) => x.expand(other.shape), doc: '`expand` to `other`\'s shape.' },
  contiguous: {
    kind: 'composite', signature: '(): Tensor', decomposition: (x: Tensor) => (x.isContiguous() ? x : x.clone()),
    doc: 'This tensor when already contiguous, else a row-major copy.',
  },
  logsumexp: {
    kind: 'composite', signature: '(dim: number | readonly number[], keepdim?: boolean): Tensor', fn: true, autocast: FLOAT32_CUDA,
    // The max is subtracted for stability and cut from autograd (it cancels in the gradient); an
    // infinite max would give inf − inf = NaN, so those rows subtract 0 instead, as PyTorch does.
    decomposition: (x: Tensor, dim: number | readonly number[], keepdim = false) => {
      if (dim === undefined || dim === null) throw new TypeError("logsumexp(): missing the required argument 'dim' (a dim or a list of dims)");
      for (const d of typeof dim === 'number' ? [dim] : dim) normalizeDim(d, x.ndim, 'logsumexp');
      // Empty fibres: the sum of no exps is 0, so the result is −Inf (amax would refuse them).
      if (x.numel() === 0) return x.sum(dim, keepdim).log();
      const m = x.detach().amax(dim, true);
      const shift = m.where(m.isfinite(), 0);
      const out = x.sub(shift).exp().sum(dim, true).log().add(shift);
      return keepdim ? out : out.squeeze(dim);
    },
    doc: '`log(sum(exp(x)))` over `dim`, computed stably (the max is subtracted first); `keepdim` keeps reduced dims as size 1.',
  },
} as const satisfies Record<string, CompositeEntry>;

const BCE_UNSAFE =
  'torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n' +
  'Many models use a sigmoid layer right before the binary cross entropy layer. In this case, combine the two layers ' +
  'using F.binaryCrossEntropyWithLogits or nn.BCEWithLogitsLoss, which are safe to autocast.';

const LOWER: AutocastRule = { cuda: 'lowerPrecision', cpu: 'lowerPrecision' };
const LOSS: AutocastRule = { cuda: 'fp32', cpu: 'fp32' };
const DTYPE_OPTION = 'options?: { dtype?: DType }';

/** Ops with their own implementation (bound in ops/methods.ts), and functional ops of other packages. */
export const IMPLEMENTED = {
  // views
  reshape: { kind: 'implemented', signature: '(shape: readonly number[]): Tensor', doc: 'The same elements in a new shape (one size may be -1): a view when the strides allow it, else a copy.' },
  view: { kind: 'implemented', signature: '(shape: readonly number[]): Tensor', doc: 'The same elements in a new shape, always a view; throws when the strides do not allow one (use `reshape`).' },
  permute: { kind: 'implemented', signature: '(dims: readonly number[]): Tensor', doc: 'A view with the dims reordered: dim i of the result is dim `dims[i]` of this tensor.' },
  transpose: { kind: 'implemented', signature: '(dim0: number, dim1: number): Tensor', doc: 'A view with two dims swapped.' },
  t: { kind: 'implemented', signature: '(): Tensor', doc: 'Transpose of a ≤2-D tensor.' },
  expand: { kind: 'implemented', signature: '(shape: readonly number[]): Tensor', doc: 'A view that repeats size-1 dims to `shape` without copying (-1 keeps a size); the repeats share memory.' },
  slice: {
    kind: 'implemented', signature: '(dim: number, start?: number, end?: number, step?: number): Tensor',
    doc: 'A view of the elements `start` to `end` (exclusive, negatives count from the end) along `dim`, every `step`-th: Python\'s `x[..., start:end:step]`.',
  },
  narrow: { kind: 'implemented', signature: '(dim: number, start: number, length: number): Tensor', doc: 'A view of `length` elements along `dim` from `start`.' },
  select: { kind: 'implemented', signature: '(dim: number, index: number): Tensor', doc: 'A view at one index of `dim`, with that dim removed.' },
  squeeze: { kind: 'implemented', signature: '(dim?: number | readonly number[]): Tensor', doc: 'A view without size-1 dims (all of them, or only those given).' },
  unsqueeze: { kind: 'implemented', signature: '(dim: number): Tensor', doc: 'A view with a new size-1 dim inserted at `dim`.' },
  flatten: { kind: 'implemented', signature: '(startDim?: number, endDim?: number): Tensor', doc: 'The dims `startDim`..`endDim` merged into one (a view when possible).' },
  asStrided: {
    kind: 'implemented', signature: '(size: readonly number[], stride: readonly number[], storageOffset?: number): Tensor',
    doc: 'A view with explicit sizes and strides over this (contiguous) tensor\'s elements; windows may overlap.',
  },
  clone: { kind: 'implemented', signature: '(): Tensor', doc: 'A contiguous copy with its own memory; gradients flow back to this tensor.' },
  detach: { kind: 'implemented', signature: '(): Tensor', doc: 'A tensor over the same memory, cut from autograd.' },
  // elementwise beyond the primitives
  isinf: { kind: 'implemented', signature: '(): Tensor', doc: 'True where an element is +Inf or -Inf.' },
  isfinite: { kind: 'implemented', signature: '(): Tensor', doc: 'True where an element is neither NaN nor infinite.' },
  clamp: { kind: 'implemented', signature: '(min?: number | Tensor | null, max?: number | Tensor | null): Tensor', doc: 'Each element limited to [min, max]; either bound may be omitted (null), and may be a tensor.' },
  where: { kind: 'implemented', signature: '(condition: Tensor, other: TensorOrScalar): Tensor', doc: '`cond ? this : other`, PyTorch\'s `Tensor.where(condition, other)`.' },
  // in place (TP-4: the result must be castable to this dtype)
  copy_: { kind: 'implemented', signature: '(src: Tensor): this', doc: 'Overwrite this tensor\'s values with `src` (any device, broadcast, cast as needed): SD-8.' },
  fill_: { kind: 'implemented', signature: '(value: number): this', doc: 'Set every element to `value`, in place.' },
  zero_: { kind: 'implemented', signature: '(): this', doc: 'Set every element to 0, in place.' },
  add_: { kind: 'implemented', signature: '(other: TensorOrScalar, alpha?: number): this', doc: 'In-place `add`: writes `this + alpha * other` into this tensor.' },
  sub_: { kind: 'implemented', signature: '(other: TensorOrScalar, alpha?: number): this', doc: 'In-place `sub`.' },
  mul_: { kind: 'implemented', signature: '(other: TensorOrScalar): this', doc: 'In-place `mul`.' },
  div_: { kind: 'implemented', signature: '(other: TensorOrScalar): this', doc: 'In-place `div` (throws on an integer tensor, whose result would be float).' },
  clamp_: { kind: 'implemented', signature: '(min?: number | Tensor | null, max?: number | Tensor | null): this', doc: 'In-place `clamp`.' },
  // reductions
  sum: {
    kind: 'implemented', kernel: 'reduce', signature: `(${DIMS}, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg' },
    doc: 'Sum over `dim` (all dims when omitted); `keepdim` keeps reduced dims as size 1. Integers and bools sum to int32; `dtype` picks the accumulation and result type.',
  },
  mean: { kind: 'implemented', signature: `(${DIMS}, ${DTYPE_OPTION}): Tensor`, doc: 'Mean over `dim` (all dims when omitted), for floating-point tensors (or with a floating `dtype`).' },
  prod: {
    kind: 'implemented', kernel: 'reduce', signature: `(dim?: number | null, keepdim?: boolean, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg', cpu: 'fp32' },
    doc: 'Product over one dim (all elements when omitted).',
  },
  max: {
    kind: 'implemented', kernel: 'reduce', signature: ['(): Tensor', '(dim: number, keepdim?: boolean): ValuesIndices'],
    doc: 'Without a dim: the max element. With a dim: `{ values, indices }` like PyTorch.',
  },
  min: {
    kind: 'implemented', kernel: 'reduce', signature: ['(): Tensor', '(dim: number, keepdim?: boolean): ValuesIndices'],
    doc: 'Without a dim: the min element. With a dim: `{ values, indices }` like PyTorch.',
  },
  amax: { kind: 'implemented', signature: `(${DIMS}): Tensor`, doc: 'The max over one or more dims (values only; the gradient is shared evenly among ties).' },
  amin: { kind: 'implemented', signature: `(${DIMS}): Tensor`, doc: 'The min over one or more dims (values only; the gradient is shared evenly among ties).' },
  argmax: { kind: 'implemented', kernel: 'argReduce', signature: '(dim?: number | null, keepdim?: boolean): Tensor', doc: 'The int32 index of the max along `dim` (of the flattened tensor when omitted); the first on ties.' },
  argmin: { kind: 'implemented', kernel: 'argReduce', signature: '(dim?: number | null, keepdim?: boolean): Tensor', doc: 'The int32 index of the min along `dim` (of the flattened tensor when omitted); the first on ties.' },
  var: { kind: 'implemented', signature: `(${DIMS}, options?: { correction?: number }): Tensor`, doc: 'Variance over `dim`, dividing by N - `correction` (default 1, Bessel\'s correction).' },
  // linear algebra, indexing, softmax
  matmul: { kind: 'implemented', signature: '(other: Tensor): Tensor', autocast: LOWER, doc: 'Matrix product with PyTorch\'s rules: vectors, matrices, and batches that broadcast.' },
  mm: { kind: 'implemented', signature: '(mat2: Tensor): Tensor', autocast: LOWER, doc: 'The product of two 2-D matrices.' },
  bmm: { kind: 'implemented', signature: '(mat2: Tensor): Tensor', autocast: LOWER, doc: 'Batched matrix product of [b, n, m] and [b, m, p] tensors.' },
  gather: { kind: 'implemented', signature: '(dim: number, index: Tensor): Tensor', doc: 'Values picked along `dim` by an int32 `index` tensor: `out[i][j] = this[index[i][j]][j]` for dim 0.' },
  scatterAdd: {
    kind: 'implemented', signature: '(dim: number, index: Tensor, src: Tensor): Tensor', autocast: { cuda: 'promote' },
    doc: 'A copy of this tensor with `src`\'s values added at the positions `index` gives along `dim` (the inverse of `gather`).',
  },
  indexSelect: { kind: 'implemented', signature: '(dim: number, index: Tensor): Tensor', doc: 'The slices along `dim` at the positions in a 1-D int32 `index` tensor.' },
  softmax: {
    kind: 'implemented', signature: `(dim: number, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg' }, fused: 'softmax',
    doc: '`exp(x) / sum(exp(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast).',
  },
  logSoftmax: {
    kind: 'implemented', signature: `(dim: number, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg' }, fused: 'logSoftmax',
    doc: '`log(softmax(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast).',
  },
  // functions (no Tensor method)
  cat: { kind: 'implemented', autocast: { cpu: 'promote' }, doc: 'Tensors joined along an existing dim.' },
  stack: { kind: 'implemented', autocast: { cpu: 'promote' }, doc: 'Tensors joined along a new dim.' },
  pad: { kind: 'implemented', doc: 'Constant padding of the last dims.' },
  // @core/nn's functional ops, listed for their autocast class
  linear: { kind: 'implemented', autocast: LOWER, doc: '`F.linear`: `x @ Wᵀ + b`.' },
  conv2d: { kind: 'implemented', autocast: LOWER, doc: '`F.conv2d`: 2-D convolution.' },
  layerNorm: { kind: 'implemented', autocast: FLOAT32_CUDA, doc: '`F.layerNorm`: normalization over the last dims.' },
  mseLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.mseLoss`: mean squared error.' },
  nllLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.nllLoss`: negative log likelihood of log-probabilities.' },
  crossEntropy: { kind: 'implemented', autocast: LOSS, fused: 'crossEntropy', doc: '`F.crossEntropy`: logSoftmax then nllLoss, fused where the backend can.' },
  binaryCrossEntropy: { kind: 'implemented', autocast: { cuda: { banned: BCE_UNSAFE }, cpu: 'fp32' }, doc: '`F.binaryCrossEntropy` of probabilities.' },
  binaryCrossEntropyWithLogits: { kind: 'implemented', autocast: LOSS, doc: '`F.binaryCrossEntropyWithLogits`: sigmoid and binary cross entropy in one stable op.' },
} as const satisfies Record<string, ImplementedEntry>;

const OPS = { ...UNARY, ...BINARY, ...COMPARE, ...COMPOSITE, ...IMPLEMENTED } as const satisfies Record<string, OpEntry>;

/** The name of an op in the table: what autocast lists, `autocastOp` and conformance coverage speak of. */
export type OpName = keyof typeof OPS;

/**
 * Every op, by name: PyTorch's native_functions.yaml and derivatives.yaml as TypeScript. Read it for
 * names, kinds, dtype rules, autocast classes and fused kernel names.
 */
export const OP_TABLE: Readonly<Record<OpName, OpEntry>> = OPS;
/** The name of a unary elementwise primitive. */
export type UnaryOp = keyof typeof UNARY;
/** The name of a binary elementwise primitive. */
export type BinaryOp = keyof typeof BINARY;
/** The name of a comparison primitive. */
export type CompareOp = keyof typeof COMPARE;
type KernelOf<K extends string> = { [N in keyof typeof IMPLEMENTED]: (typeof IMPLEMENTED)[N] extends { readonly kernel: K } ? N : never }[keyof typeof IMPLEMENTED];
/** The name of a reduction primitive. */
export type ReduceOp = KernelOf<'reduce'>;
/** The name of an arg-reduction primitive. */
export type ArgReduceOp = KernelOf<'argReduce'>;

/** The implemented ops that are the contract primitive family `kernel`, in table order. */
export function kernelOps<K extends 'reduce' | 'argReduce'>(kernel: K): KernelOf<K>[] {
  return Object.entries(IMPLEMENTED).filter(([, e]) => (e as ImplementedEntry).kernel === kernel).map(([n]) => n as KernelOf<K>);
}

/** The name of a composite op. */
export type CompositeOp = keyof typeof COMPOSITE;
