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
import { pythonSignatures } from './arguments.js';
import * as dec from './decompositions.js';

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
  /** The Tensor method's signature(s) (the parameters after `this`). */
  readonly signature: string | readonly string[];
  /** The op in terms of Tensor methods, `self` first (split-like ops give several tensors). */
  readonly decomposition: (self: Tensor, ...args: any[]) => Tensor | Tensor[];
  /** The backend's fused kernel that may run it instead. */
  readonly fused?: FusedKernelName;
  /** Exported as a function from `@core/tensor` too (`torch.X` as well as `Tensor.X`). */
  readonly fn?: true;
  /**
   * Computes 16-bit float inputs in float32 and rounds once (PyTorch's opmath, TP-6), so its parts
   * never compute in their dtype: core checks first that the backend computes every tensor
   * argument's dtype, as a primitive would.
   */
  readonly opmath?: true;
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
  /** The contract primitive family it is, by this name (`Kernels.reduce`, `Kernels.argReduce`, `Kernels.cumulative`). */
  readonly kernel?: KernelFamily;
  /** Exported as a function from `@core/tensor` too (`torch.X` as well as `Tensor.X`). */
  readonly fn?: true;
  /**
   * PyTorch computes it with a kernel of its own, so autocast never reaches the ops this library
   * decomposes it into: when a region's table does not list it, it runs wholly in its inputs'
   * dtypes (AC-7). Ops without it decompose above autocast, like PyTorch's composite ops.
   */
  readonly ownKernel?: true;
}

/** The contract primitive families that take an op name from the table. */
export type KernelFamily = 'reduce' | 'argReduce' | 'cumulative';

/** One entry of the op table. */
export type OpEntry = UnaryEntry | BinaryEntry | CompareEntry | CompositeEntry | ImplementedEntry;

const FLOAT32_CUDA: AutocastRule = { cuda: 'fp32' };
const LOWER: AutocastRule = { cuda: 'lowerPrecision', cpu: 'lowerPrecision' };
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
const DIM_LIST = 'number | readonly number[] | null';
type Args = unknown[];
const INDEX_SOURCE = (returns: string) => `(dim: number, index: Tensor, source: Tensor): ${returns}`;
const INDEX_VALUE = (returns: string) => `(dim: number, index: Tensor, value: number | boolean | Tensor): ${returns}`;
const ADD_C = (returns: string) => pythonSignatures(['tensor1: Tensor', 'tensor2: Tensor'], ['value?: number'], returns);
const INDEX_ADD = (returns: string) => pythonSignatures(['dim: number', 'index: Tensor', 'source: Tensor'], ['alpha?: number'], returns);
const MASKED_FILL = (returns: string) => `(mask: Tensor, value: number | boolean | Tensor): ${returns}`;
const MASKED_SCATTER = (returns: string) => `(mask: Tensor, source: Tensor): ${returns}`;

/** PyTorch's composite ops written in ops/decompositions.ts. */
const PYTORCH_COMPOSITES = {
  maskedFill: {
    kind: 'composite', fn: true, signature: MASKED_FILL('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.maskedFill(x, args),
    doc: '`value` where the bool `mask` is true, else this tensor\'s element (they broadcast); `value` is a number or a 0-dim tensor, which gets a gradient.',
  },
  maskedScatter: {
    kind: 'composite', fn: true, signature: MASKED_SCATTER('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.maskedScatter(x, args),
    doc: 'This tensor with `source`\'s elements (of its dtype), read in row-major order, written one after another where the bool `mask` is true (they broadcast): `source` needs at least as many elements as the mask has trues. That count is checked where the mask\'s device reads synchronously; elsewhere nothing outside `source` is read, and positions past its end keep this tensor\'s elements.',
  },
  tril: {
    kind: 'composite', fn: true, signature: pythonSignatures(['diagonal?: number'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.triangle('tril', x, args),
    doc: 'The lower triangle of the last two dims: the elements on and below diagonal `diagonal` (0 the main one, positive above it), zeros elsewhere.',
  },
  triu: {
    kind: 'composite', fn: true, signature: pythonSignatures(['diagonal?: number'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.triangle('triu', x, args),
    doc: 'The upper triangle of the last two dims: the elements on and above diagonal `diagonal` (0 the main one, negative below it), zeros elsewhere.',
  },
  split: {
    kind: 'composite', fn: true, signature: pythonSignatures(['splitSize: number | readonly number[]', 'dim?: number'], [], 'Tensor[]'),
    decomposition: (x: Tensor, ...args: Args) => dec.split(x, args),
    doc: 'Views of this tensor along `dim` (default 0): pieces of `splitSize` elements (the last may be smaller), or one per size in a list, which must add up to the size of `dim`.',
  },
  chunk: {
    kind: 'composite', fn: true, signature: pythonSignatures(['chunks: number', 'dim?: number'], [], 'Tensor[]'), decomposition: (x: Tensor, ...args: Args) => dec.chunk(x, args),
    doc: 'At most `chunks` views along `dim` (default 0), of ceil(size / chunks) elements each but the last, as PyTorch splits them.',
  },
  unbind: {
    kind: 'composite', fn: true, signature: pythonSignatures(['dim?: number'], [], 'Tensor[]'), decomposition: (x: Tensor, ...args: Args) => dec.unbind(x, args),
    doc: 'The views at each index of `dim` (default 0), with that dim removed.',
  },
  flip: {
    kind: 'composite', fn: true, signature: '(dims: number | readonly number[]): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.flip(x, args),
    doc: 'A copy with the elements along each of `dims` in reverse order.',
  },
  roll: {
    kind: 'composite', fn: true, signature: pythonSignatures(['shifts: number | readonly number[]', 'dims?: number | readonly number[] | null'], [], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.roll(x, args),
    doc: 'A copy with the elements moved `shifts` places along `dims`, wrapping around; without dims, along the flattened tensor (the shape is kept).',
  },
  repeat: {
    kind: 'composite', signature: '(sizes: readonly number[]): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.repeat(x, args),
    doc: 'A copy tiled `sizes[i]` times along each dim; sizes beyond this tensor\'s rank add leading dims.',
  },
  tile: {
    kind: 'composite', fn: true, signature: '(dims: readonly number[]): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.tile(x, args),
    doc: '`repeat`, with `dims` padded with leading 1s when shorter than this tensor\'s rank.',
  },
  repeatInterleave: {
    kind: 'composite', fn: true, signature: pythonSignatures(['repeats: number', 'dim?: number | null'], ['outputSize?: number'], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.repeatInterleave(x, args),
    doc: 'Each element (slice along `dim`) repeated `repeats` times in a row; of the flattened tensor without a dim. `repeats` is an integer (per-element repeats, a tensor, are not supported).',
  },
  any: {
    kind: 'composite', fn: true, signature: pythonSignatures([`dim?: ${DIM_LIST}`, 'keepdim?: boolean'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.truth('any', x, args),
    doc: 'True where any element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor.',
  },
  all: {
    kind: 'composite', fn: true, signature: pythonSignatures([`dim?: ${DIM_LIST}`, 'keepdim?: boolean'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.truth('all', x, args),
    doc: 'True where every element over `dim` (every dim when omitted) is non-zero, NaN included, as a bool tensor.',
  },
  countNonzero: {
    kind: 'composite', fn: true, signature: pythonSignatures([`dim?: ${DIM_LIST}`], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.countNonzero(x, args),
    doc: 'The number of non-zero elements over `dim` (every dim when omitted), as int32.',
  },
  norm: {
    kind: 'composite', fn: true, opmath: true, autocast: FLOAT32_CUDA,
    signature: pythonSignatures(["p?: number | 'fro' | 'nuc' | null", `dim?: ${DIM_LIST}`, 'keepdim?: boolean'], ['dtype?: DType'], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.norm(x, args),
    doc: 'The vector norm of order `p` over `dim` (every element when omitted): `(Σ|x|^p)^(1/p)`; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros, \'fro\' (the default) the 2-norm over at most 2 dims. Floating tensors (`dtype` casts first); the gradient is zero where the norm is.',
  },
  dist: {
    kind: 'composite', fn: true, opmath: true, autocast: FLOAT32_CUDA, signature: pythonSignatures(['other: Tensor', 'p?: number'], [], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.dist(x, args),
    doc: 'The `p`-norm (default 2) of `this - other`, broadcasting.',
  },
  outer: {
    kind: 'composite', fn: true, signature: '(vec2: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.outer(x, args),
    doc: 'The outer product of two vectors: `out[i][j] = this[i] · vec2[j]`.',
  },
  addmm: {
    kind: 'composite', fn: true, opmath: true, autocast: LOWER, signature: pythonSignatures(['mat1: Tensor', 'mat2: Tensor'], ['beta?: number', 'alpha?: number'], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.addProduct('addmm', x, args),
    doc: '`beta · this + alpha · (mat1 @ mat2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too).',
  },
  baddbmm: {
    kind: 'composite', fn: true, opmath: true, autocast: LOWER, signature: pythonSignatures(['batch1: Tensor', 'batch2: Tensor'], ['beta?: number', 'alpha?: number'], 'Tensor'),
    decomposition: (x: Tensor, ...args: Args) => dec.addProduct('baddbmm', x, args),
    doc: '`beta · this + alpha · bmm(batch1, batch2)`, beta and alpha 1 by default; this tensor broadcasts, and with beta 0 it is ignored (its NaN and Inf too).',
  },
  lerp: {
    kind: 'composite', fn: true, opmath: true, signature: '(end: Tensor, weight: number | Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.lerp(x, args),
    doc: '`this + weight · (end - this)` for floating tensors of one dtype, computed from `end` where |weight| ≥ 0.5, as PyTorch does.',
  },
  addcmul: {
    kind: 'composite', fn: true, opmath: true, fused: 'addcmul', autocast: { cuda: 'promote' }, signature: ADD_C('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.addcOp('addcmul', x, args),
    doc: '`this + value · tensor1 · tensor2` (value 1 by default), broadcasting: the product rounded, then added by the fused addcmul kernel where the backend has one.',
  },
  addcdiv: {
    kind: 'composite', fn: true, opmath: true, fused: 'addcmul', autocast: { cuda: 'promote' }, signature: ADD_C('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.addcOp('addcdiv', x, args),
    doc: '`this + value · tensor1 / tensor2` (value 1 by default), broadcasting: the quotient rounded, then added by the fused addcmul kernel where the backend has one.',
  },
  clampMin: { kind: 'composite', fn: true, signature: '(min: number | Tensor): Tensor', decomposition: (x: Tensor, min: number | Tensor) => x.clamp(min), doc: '`clamp(min)`: each element at least `min`.' },
  clampMax: { kind: 'composite', fn: true, signature: '(max: number | Tensor): Tensor', decomposition: (x: Tensor, max: number | Tensor) => x.clamp(null, max), doc: '`clamp(null, max)`: each element at most `max`.' },
  hypot: {
    kind: 'composite', fn: true, opmath: true, signature: '(other: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.hypot(x, args),
    doc: '`sqrt(this² + other²)` elementwise for floating tensors, broadcasting, without overflow or underflow in the squares.',
  },
  take: {
    kind: 'composite', fn: true, signature: '(index: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.take(x, args),
    doc: 'The elements at the int32 `index` positions of this tensor read as 1-D (negatives count from the end), in index\'s shape.',
  },
  takeAlongDim: {
    kind: 'composite', fn: true, signature: pythonSignatures(['indices: Tensor', 'dim?: number | null'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.takeAlongDim(x, args),
    doc: '`gather` along `dim` with this tensor and the int32 `indices` broadcast in the other dims; without a dim, from the flattened tensor.',
  },
  indexFill: {
    kind: 'composite', fn: true, signature: INDEX_VALUE('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.indexFill(x, args),
    doc: 'A copy with the slices along `dim` at the positions in the 1-D int32 `index` (negatives count from the end) set to `value`.',
  },
  indexCopy: {
    kind: 'composite', fn: true, autocast: { cpu: 'promote' }, signature: INDEX_SOURCE('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.indexCopy(x, args),
    doc: 'A copy with slice `index[i]` along `dim` replaced by slice i of `source` (for repeated indices, their slices add up).',
  },
  indexAdd: {
    kind: 'composite', fn: true, signature: INDEX_ADD('Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.indexAdd(x, args),
    doc: 'A copy with `alpha · source`\'s slice i added to slice `index[i]` along `dim` (alpha 1 by default); repeated indices accumulate.',
  },
  viewAs: { kind: 'composite', signature: '(other: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.likeOther('viewAs', x, args), doc: '`view` to `other`\'s shape.' },
  reshapeAs: { kind: 'composite', signature: '(other: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.likeOther('reshapeAs', x, args), doc: '`reshape` to `other`\'s shape.' },
  typeAs: { kind: 'composite', signature: '(other: Tensor): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.likeOther('typeAs', x, args), doc: 'This tensor in `other`\'s dtype and on its device, like `to(other)`.' },
  diag: {
    kind: 'composite', fn: true, signature: pythonSignatures(['diagonal?: number'], [], 'Tensor'), decomposition: (x: Tensor, ...args: Args) => dec.diag(x, args),
    doc: 'Of a 1-D tensor: a square matrix with it on diagonal `diagonal` (0 the main one, positive above it) and zeros elsewhere; of a 2-D tensor: that diagonal, as a 1-D copy.',
  },
  trace: {
    kind: 'composite', fn: true, autocast: { cpu: 'fp32' }, signature: '(): Tensor', decomposition: (x: Tensor, ...args: Args) => dec.trace(x, args),
    doc: 'The sum of the main diagonal of a matrix.',
  },
} as const satisfies Record<string, CompositeEntry>;

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
  // PyTorch's composite ops (ops/decompositions.ts): each binds its arguments as Python does.
  ...PYTORCH_COMPOSITES,
} as const satisfies Record<string, CompositeEntry>;

const BCE_UNSAFE =
  'torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n' +
  'Many models use a sigmoid layer right before the binary cross entropy layer. In this case, combine the two layers ' +
  'using F.binaryCrossEntropyWithLogits or nn.BCEWithLogitsLoss, which are safe to autocast.';

const LOSS: AutocastRule = { cuda: 'fp32', cpu: 'fp32' };
const CUDA_LOWER: AutocastRule = { cuda: 'lowerPrecision' };
const DTYPE_OPTION = 'options?: { dtype?: DType }';
/** scatter's forms: `src` a tensor or a number, or given by name (`src` or `value`) in the options. */
const scatterSignatures = (returns: string): string[] => {
  const reduce = "reduce?: 'add' | 'multiply'";
  return [`(dim: number, index: Tensor, src: Tensor | number, options?: { ${reduce} }): ${returns}`, `(dim: number, index: Tensor, options: { src?: Tensor; value?: number; ${reduce} }): ${returns}`];
};
const SCATTER_REDUCE = "'sum' | 'prod' | 'mean' | 'amax' | 'amin'";
/** nonzero's forms: a tensor, or with `asTuple` one tensor per dim. */
const NONZERO = (wrap: (returns: string) => string): string[] => [
  `(options?: { asTuple?: false }): ${wrap('Tensor')}`, `(options: { asTuple: true }): ${wrap('Tensor[]')}`, `(options: { asTuple?: boolean }): ${wrap('Tensor | Tensor[]')}`,
];
/** unique's forms: a tensor, or a UniqueResult when the inverse indices or the counts are asked for. */
const UNIQUE = (wrap: (returns: string) => string): string[] => [
  `(options?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): ${wrap('Tensor')}`,
  `(options: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): ${wrap('UniqueResult')}`,
  `(options: UniqueOptions): ${wrap('Tensor | UniqueResult')}`,
  `(sorted?: boolean, returnInverse?: false, returnCounts?: false, dim?: number | null): ${wrap('Tensor')}`,
  `(sorted: boolean, returnInverse: true, returnCounts?: boolean, dim?: number | null): ${wrap('UniqueResult')}`,
  `(sorted: boolean, returnInverse: boolean, returnCounts: true, dim?: number | null): ${wrap('UniqueResult')}`,
];

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
  flatten: { kind: 'implemented', fn: true, signature: '(startDim?: number, endDim?: number): Tensor', doc: 'The dims `startDim`..`endDim` merged into one (a view when possible).' },
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
  // Python's subscripts, the ops whose output shape depends on the data (each with an async form for
  // devices without synchronous reads), and sampling: ops/advanced-indexing.ts, data-dependent.ts, sampling.ts
  index: {
    kind: 'implemented', signature: '(indices: IndexSpec): Tensor',
    doc: 'Python\'s `x[indices]`, items as in `IndexItem` (`x.index([\':\', [-1], \'1:3\'])` is `x[:, [-1], 1:3]`): a view for integers, slices, `\'...\'` and null; a copy for advanced (integer and boolean) indices, with PyTorch\'s broadcasting and placement rules. A boolean tensor index reads the mask (the sync/async rule: `indexAsync`).',
  },
  indexAsync: { kind: 'implemented', signature: '(indices: IndexSpec): Promise<Tensor>', doc: '`index`, reading boolean masks with `await`: works on every device.' },
  indexPut: {
    kind: 'implemented', fn: true, autocast: { cuda: 'promote' }, signature: pythonSignatures(['indices: IndexSpec', 'values: Tensor | number | boolean', 'accumulate?: boolean'], [], 'Tensor'),
    doc: 'A copy with Python\'s `x[indices] = values` done (values broadcast to the indexed shape); `accumulate` adds them instead, repeated indices adding up. Repeated indices without it: the last one wins.',
  },
  indexPut_: { kind: 'implemented', signature: pythonSignatures(['indices: IndexSpec', 'values: Tensor | number | boolean', 'accumulate?: boolean'], [], 'this'), doc: 'In-place `indexPut`: Python\'s `x[indices] = values` (or `+=` with `accumulate`).' },
  maskedSelect: { kind: 'implemented', fn: true, signature: '(mask: Tensor): Tensor', doc: 'The elements where the bool `mask` (broadcast with this tensor) is true, as a 1-D tensor (reads the mask: `maskedSelectAsync` on devices without synchronous reads).' },
  maskedSelectAsync: { kind: 'implemented', fn: true, signature: '(mask: Tensor): Promise<Tensor>', doc: '`maskedSelect`, reading the mask with `await`: works on every device.' },
  nonzero: {
    kind: 'implemented', fn: true, signature: NONZERO((r) => r),
    doc: 'The int32 indices of the non-zero (and NaN) elements, row-major: an [n, ndim] tensor, or with `asTuple` one 1-D tensor per dim (reads the values: `nonzeroAsync` on devices without synchronous reads).',
  },
  nonzeroAsync: { kind: 'implemented', fn: true, signature: NONZERO((r) => `Promise<${r}>`), doc: '`nonzero`, reading the values with `await`: works on every device.' },
  unique: {
    kind: 'implemented', fn: true, signature: UNIQUE((r) => r),
    doc: 'The unique elements, sorted (or with `dim` the unique slices along it); with `returnInverse` and/or `returnCounts` a `UniqueResult` with the int32 inverse indices and counts. Each NaN is its own value. Reads the values: `uniqueAsync` on devices without synchronous reads.',
  },
  uniqueAsync: { kind: 'implemented', fn: true, signature: UNIQUE((r) => `Promise<${r}>`), doc: '`unique`, reading the values with `await`: works on every device.' },
  multinomial: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['numSamples: number', 'replacement?: boolean'], ['generator?: Generator'], 'Tensor'),
    doc: 'int32 indices of `numSamples` categories drawn from each row of (unnormalized) probabilities, without replacement unless `replacement`. Checks the values as PyTorch does, which reads them: `multinomialAsync` on devices without synchronous reads.',
  },
  multinomialAsync: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['numSamples: number', 'replacement?: boolean'], ['generator?: Generator'], 'Promise<Tensor>'),
    doc: '`multinomial`, reading its checks with `await`: works on every device.',
  },
  bernoulli: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['p?: number'], ['generator?: Generator'], 'Tensor'),
    doc: '1 with probability p, else 0, in this tensor\'s dtype: p is each element of this tensor (in [0, 1]), or the number `p` for every element.',
  },
  bernoulli_: { kind: 'implemented', signature: pythonSignatures(['p?: number | Tensor'], ['generator?: Generator'], 'this'), doc: 'Fill with 1 with probability `p` (default 0.5; a number or a tensor that broadcasts to this one), else 0, in place.' },
  normal: { kind: 'implemented', doc: '`normal(mean, std, size?, { generator })`: normal samples with a tensor (or number) mean and std, as PyTorch\'s torch.normal.' },
  randperm: { kind: 'implemented', doc: '`randperm(n, { generator, dtype, device })`: a random permutation of 0..n-1.' },
  // sorting, running reductions and scatters (the argsort, cumulative and scatter primitives)
  sort: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['dim?: number', 'descending?: boolean'], ['stable?: boolean'], 'ValuesIndices'),
    doc: 'The elements sorted along `dim` (default -1), ascending unless `descending`: `{ values, indices }` (also `[values, indices]`), indices int32. NaN sorts as the largest; equal elements keep their order (always stable).',
  },
  argsort: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['dim?: number', 'descending?: boolean'], ['stable?: boolean'], 'Tensor'),
    doc: 'The int32 indices that sort `dim` (default -1): `sort(...).indices`.',
  },
  msort: { kind: 'implemented', fn: true, signature: '(): Tensor', doc: 'The values sorted along dim 0, ascending: `sort(0).values`.' },
  topk: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['k: number', 'dim?: number', 'largest?: boolean', 'sorted?: boolean'], [], 'ValuesIndices'),
    doc: 'The `k` largest (or, with `largest: false`, smallest) elements along `dim` (default -1) and their int32 indices, as `{ values, indices }` (also `[values, indices]`), always in sorted order; ties keep the lower index first.',
  },
  cumsum: {
    kind: 'implemented', kernel: 'cumulative', fn: true, signature: pythonSignatures(['dim: number'], [`dtype?: DType`], 'Tensor'), autocast: { cuda: 'fp32FirstArg' },
    doc: 'The running sum along `dim`: `out[i] = x[0] + … + x[i]`. Integers and bools give int32; `dtype` casts the input first (and bypasses autocast).',
  },
  cumprod: {
    kind: 'implemented', kernel: 'cumulative', fn: true, signature: pythonSignatures(['dim: number'], [`dtype?: DType`], 'Tensor'), autocast: { cuda: 'fp32FirstArg' },
    doc: 'The running product along `dim`: `out[i] = x[0] · … · x[i]`. Integers and bools give int32; `dtype` casts the input first. Its gradient is exact with zeros in the input.',
  },
  scatter: {
    kind: 'implemented', fn: true,
    signature: scatterSignatures('Tensor'),
    doc: 'A copy of this tensor with `src` (a tensor, or one `value` everywhere) written at the positions `index` gives along `dim`; with `reduce` added or multiplied in instead. Repeated indices: the last one wins (deterministic on every backend).',
  },
  scatter_: {
    kind: 'implemented',
    signature: scatterSignatures('this'),
    doc: 'In-place `scatter`.',
  },
  scatterReduce: {
    kind: 'implemented', fn: true,
    signature: pythonSignatures(['dim: number', 'index: Tensor', 'src: Tensor', `reduce: ${SCATTER_REDUCE}`], ['includeSelf?: boolean'], 'Tensor'),
    doc: 'A copy of this tensor with `src` reduced (`sum`, `prod`, `mean`, `amax` or `amin`) into the positions `index` gives along `dim`; `includeSelf: false` leaves this tensor\'s values out of the positions written to.',
  },
  softmax: {
    kind: 'implemented', signature: `(dim: number, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg' }, fused: 'softmax',
    doc: '`exp(x) / sum(exp(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast).',
  },
  logSoftmax: {
    kind: 'implemented', signature: `(dim: number, ${DTYPE_OPTION}): Tensor`, autocast: { cuda: 'fp32FirstArg' }, fused: 'logSoftmax',
    doc: '`log(softmax(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast).',
  },
  // views, in-place forms and factories of PyTorch's composite ops (ops/decompositions.ts)
  diagonal: {
    kind: 'implemented', fn: true, signature: pythonSignatures(['offset?: number', 'dim1?: number', 'dim2?: number'], [], 'Tensor'),
    doc: 'A view of diagonal `offset` (0 the main one, positive above it) of dims `dim1` and `dim2` (0 and 1 by default): those dims are removed and the diagonal is the last dim.',
  },
  maskedFill_: { kind: 'implemented', signature: MASKED_FILL('this'), doc: 'In-place `maskedFill`: the mask broadcasts to this tensor\'s shape.' },
  maskedScatter_: { kind: 'implemented', signature: MASKED_SCATTER('this'), doc: 'In-place `maskedScatter`: the mask broadcasts to this tensor\'s shape.' },
  addcmul_: { kind: 'implemented', signature: ADD_C('this'), doc: 'In-place `addcmul`.' },
  addcdiv_: { kind: 'implemented', signature: ADD_C('this'), doc: 'In-place `addcdiv`.' },
  indexFill_: { kind: 'implemented', signature: INDEX_VALUE('this'), doc: 'In-place `indexFill`.' },
  indexCopy_: { kind: 'implemented', signature: INDEX_SOURCE('this'), doc: 'In-place `indexCopy`.' },
  indexAdd_: { kind: 'implemented', signature: INDEX_ADD('this'), doc: 'In-place `indexAdd`.' },
  newZeros: { kind: 'implemented', signature: '(size: readonly number[], options?: FactoryOptions): Tensor', doc: 'Zeros of `size`, in this tensor\'s dtype and on its device unless `options` say otherwise (DEV-5).' },
  newOnes: { kind: 'implemented', signature: '(size: readonly number[], options?: FactoryOptions): Tensor', doc: 'Ones of `size`, in this tensor\'s dtype and on its device unless `options` say otherwise (DEV-5).' },
  newFull: {
    kind: 'implemented', signature: '(size: readonly number[], fillValue: number | boolean, options?: FactoryOptions): Tensor',
    doc: '`fillValue` everywhere in a tensor of `size`, in this tensor\'s dtype and on its device unless `options` say otherwise (DEV-5).',
  },
  newEmpty: { kind: 'implemented', signature: '(size: readonly number[], options?: FactoryOptions): Tensor', doc: 'Uninitialised memory of `size`, in this tensor\'s dtype and on its device unless `options` say otherwise (DEV-5).' },
  newTensor: { kind: 'implemented', signature: '(data: TensorData, options?: FactoryOptions): Tensor', doc: 'A tensor of `data` (copied), in this tensor\'s dtype and on its device unless `options` say otherwise (DEV-5).' },
  // functions (no Tensor method)
  cat: { kind: 'implemented', autocast: { cpu: 'promote' }, doc: 'Tensors joined along an existing dim.' },
  stack: { kind: 'implemented', autocast: { cpu: 'promote' }, doc: 'Tensors joined along a new dim.' },
  pad: { kind: 'implemented', doc: 'Constant padding of the last dims.' },
  einsum: { kind: 'implemented', autocast: { cuda: 'lowerPrecision' }, doc: '`einsum(equation, ...operands)`: Einstein summation, as batched matrix products.' },
  'linalg.vectorNorm': { kind: 'implemented', autocast: { cuda: 'fp32FirstArg' }, doc: '`linalg.vectorNorm(x, ord, dim, keepdim, { dtype })`: PyTorch\'s torch.linalg.vector_norm.' },
  // @core/nn's functional ops, listed for their autocast class
  linear: { kind: 'implemented', autocast: LOWER, doc: '`F.linear`: `x @ Wᵀ + b`.' },
  conv2d: { kind: 'implemented', autocast: LOWER, doc: '`F.conv2d`: 2-D convolution.' },
  conv1d: { kind: 'implemented', autocast: LOWER, doc: '`F.conv1d`: 1-D convolution.' },
  convTranspose1d: { kind: 'implemented', autocast: LOWER, doc: '`F.convTranspose1d`: 1-D transposed convolution.' },
  convTranspose2d: { kind: 'implemented', autocast: LOWER, doc: '`F.convTranspose2d`: 2-D transposed convolution.' },
  layerNorm: { kind: 'implemented', autocast: FLOAT32_CUDA, doc: '`F.layerNorm`: normalization over the last dims.' },
  mseLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.mseLoss`: mean squared error.' },
  nllLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.nllLoss`: negative log likelihood of log-probabilities.' },
  crossEntropy: { kind: 'implemented', autocast: LOSS, fused: 'crossEntropy', doc: '`F.crossEntropy`: logSoftmax then nllLoss, fused where the backend can.' },
  binaryCrossEntropy: { kind: 'implemented', autocast: { cuda: { banned: BCE_UNSAFE }, cpu: 'fp32' }, doc: '`F.binaryCrossEntropy` of probabilities.' },
  binaryCrossEntropyWithLogits: { kind: 'implemented', autocast: LOSS, doc: '`F.binaryCrossEntropyWithLogits`: sigmoid and binary cross entropy in one stable op.' },
  l1Loss: { kind: 'implemented', autocast: LOSS, doc: '`F.l1Loss`: mean absolute error.' },
  smoothL1Loss: { kind: 'implemented', autocast: LOSS, doc: '`F.smoothL1Loss`: quadratic below `beta`, linear above.' },
  huberLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.huberLoss`: quadratic below `delta`, linear above.' },
  klDiv: { kind: 'implemented', autocast: LOSS, doc: '`F.klDiv`: Kullback-Leibler divergence of log-probabilities.' },
  cosineEmbeddingLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.cosineEmbeddingLoss`: 1 − cos for similar pairs, max(0, cos − margin) for dissimilar ones.' },
  marginRankingLoss: { kind: 'implemented', autocast: LOSS, doc: '`F.marginRankingLoss`: max(0, −y·(x1 − x2) + margin).' },
  // PyTorch 1.13 registers ctc_loss for CPU autocast only (its CUDA kernels have no half form, and
  // its CUDA lists omit it, as the spec's AC-9 does): half log-probabilities in a cuda or webgpu
  // region are refused as outside one.
  ctcLoss: { kind: 'implemented', autocast: { cpu: 'fp32' }, doc: '`F.ctcLoss`: connectionist temporal classification loss of log-probabilities against unaligned targets.' },
  elu: { kind: 'implemented', ownKernel: true, doc: '`F.elu`: x above 0, α·(eˣ − 1) below.' },
  selu: { kind: 'implemented', ownKernel: true, doc: '`F.selu`: scaled ELU with the self-normalizing constants.' },
  softplus: { kind: 'implemented', ownKernel: true, autocast: FLOAT32_CUDA, doc: '`F.softplus`: log(1 + e^(βx))/β, linear above `threshold`.' },
  mish: { kind: 'implemented', ownKernel: true, doc: '`F.mish`: x·tanh(softplus(x)).' },
  hardswish: { kind: 'implemented', ownKernel: true, doc: '`F.hardswish`: x·relu6(x + 3)/6.' },
  hardsigmoid: { kind: 'implemented', ownKernel: true, doc: '`F.hardsigmoid`: relu6(x + 3)/6.' },
  softsign: { kind: 'implemented', ownKernel: true, doc: '`F.softsign`: x/(1 + |x|).' },
  prelu: { kind: 'implemented', ownKernel: true, autocast: LOWER, doc: '`F.prelu`: x above 0, a·x below, with a learned slope per channel.' },
  glu: { kind: 'implemented', ownKernel: true, doc: '`F.glu`: the first half of `dim` times the sigmoid of the second.' },
  rmsNorm: { kind: 'implemented', doc: '`F.rmsNorm`: x scaled by its root mean square over the last dims.' },
  groupNorm: { kind: 'implemented', autocast: FLOAT32_CUDA, doc: '`F.groupNorm`: normalization over groups of channels.' },
  instanceNorm: { kind: 'implemented', doc: '`F.instanceNorm`: normalization per sample and channel.' },
  normalize: { kind: 'implemented', autocast: FLOAT32_CUDA, doc: '`F.normalize`: x divided by its p-norm along `dim`.' },
  cosineSimilarity: { kind: 'implemented', autocast: FLOAT32_CUDA, doc: '`F.cosineSimilarity`: cosine of the angle between x1 and x2 along `dim`.' },
  scaledDotProductAttention: { kind: 'implemented', autocast: LOWER, fused: 'attention', doc: '`F.scaledDotProductAttention`: softmax(q·kᵀ·scale + mask)·v, fused (without dropout) where the backend can.' },
  interpolate: { kind: 'implemented', ownKernel: true, autocast: FLOAT32_CUDA, doc: '`F.interpolate`: nearest, linear and bicubic resizing (PyTorch\'s upsample ops).' },
  // The recurrences behind nn.RNN, nn.LSTM, nn.GRU and their cells (PyTorch's torch.lstm,
  // torch.lstm_cell, …). CUDA lists the cells and cuDNN's whole-sequence op as lower precision:
  // every input, state and weight is cast once at entry. PyTorch 1.13's CPU lists have none of them
  // (the spec's AC-8 names mkldnn_rnn_layer, which arrived after 1.13; this table follows 1.13, as
  // measured): they decompose above autocast, so their products are linear's (lower precision) and
  // the gate arithmetic promotes with the state, which keeps LSTM's and GRU's outputs float32 for a
  // float32 state while a plain RNN's are in the region dtype.
  lstm: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.lstm`: the layers of nn.LSTM over a sequence (PyTorch\'s torch.lstm).' },
  gru: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.gru`: the layers of nn.GRU over a sequence (PyTorch\'s torch.gru).' },
  rnnTanh: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.rnnTanh`: the layers of nn.RNN with tanh over a sequence (PyTorch\'s torch.rnn_tanh).' },
  rnnRelu: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.rnnRelu`: the layers of nn.RNN with relu over a sequence (PyTorch\'s torch.rnn_relu).' },
  lstmCell: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.lstmCell`: one step of nn.LSTMCell (PyTorch\'s torch.lstm_cell).' },
  gruCell: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.gruCell`: one step of nn.GRUCell (PyTorch\'s torch.gru_cell).' },
  rnnTanhCell: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.rnnTanhCell`: one step of nn.RNNCell with tanh (PyTorch\'s torch.rnn_tanh_cell).' },
  rnnReluCell: { kind: 'implemented', autocast: CUDA_LOWER, doc: '`F.rnnReluCell`: one step of nn.RNNCell with relu (PyTorch\'s torch.rnn_relu_cell).' },
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
type KernelOf<K extends KernelFamily> = { [N in keyof typeof IMPLEMENTED]: (typeof IMPLEMENTED)[N] extends { readonly kernel: K } ? N : never }[keyof typeof IMPLEMENTED];
/** The name of a reduction primitive. */
export type ReduceOp = KernelOf<'reduce'>;
/** The name of an arg-reduction primitive. */
export type ArgReduceOp = KernelOf<'argReduce'>;
/** The name of a running-reduction primitive (`Kernels.cumulative`). */
export type CumulativeOp = KernelOf<'cumulative'>;

/** The implemented ops that are the contract primitive family `kernel`, in table order. */
export function kernelOps<K extends KernelFamily>(kernel: K): KernelOf<K>[] {
  return Object.entries(IMPLEMENTED).filter(([, e]) => (e as ImplementedEntry).kernel === kernel).map(([n]) => n as KernelOf<K>);
}

/** The name of a composite op. */
export type CompositeOp = keyof typeof COMPOSITE;
