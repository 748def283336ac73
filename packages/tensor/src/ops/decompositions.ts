// The op table's composite ops that take more than a line, written with Tensor methods only (like
// the table's one-liners): autograd, autocast and every backend follow from the parts, and no op
// module is imported (ops import the table, which imports this module). Index tensors these ops
// build (flip's reversed positions, tril's diagonal offsets) are made with `newTensor` on the
// input's device. Each op takes its call's arguments as they came and binds them as Python does
// (arguments.ts): PyTorch's positional order, then an optional object of keyword arguments.
import { bfloat16, bool, DTYPES, float16, float32, float64, int32, type DType } from '../dtype/dtype.js';
import { resultType } from '../dtype/promotion.js';
import { DTypeError, ShapeError, ValueError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { broadcastShapes, checkShape, normalizeDim } from '../tensor/shape.js';
import { bindArguments, boolArgument, intArgument, required } from './arguments.js';
import { valuesNow } from '../tensor/host-data.js';

/** A dim argument: one dim, several, or null (all of them). */
type Dims = number | readonly number[] | null;

/** A call's arguments, as they came (bound here). */
type Args = readonly unknown[];

const INDEX = { dtype: int32 } as const;

// ---- arguments ----

function describe(v: unknown): string {
  if (v instanceof Tensor) return `a ${v.dtype.name} Tensor`;
  return Array.isArray(v) ? 'an array' : `${typeof v} ${String(v)}`;
}

function tensorArgument(op: string, name: string, v: unknown): Tensor {
  if (!(v instanceof Tensor)) throw new TypeError(`${op}(): argument '${name}' must be a Tensor, not ${describe(v)}`);
  return v;
}

/** One dim, a list of dims, or all of them (undefined or null). */
function dimsArgument(op: string, name: string, v: unknown): Dims {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number') return intArgument(op, name, v, 0);
  if (!Array.isArray(v)) throw new TypeError(`${op}(): argument '${name}' must be an integer, an array of integers or null, not ${describe(v)}`);
  return v.map((d: unknown) => intArgument(op, name, d, 0));
}

/** A scalar multiplier (alpha, beta, value, p): a number, an integer for integral tensors (PyTorch's rule). */
function numberArgument(op: string, name: string, v: unknown, fallback: number, dtype?: DType): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number') throw new TypeError(`${op}(): argument '${name}' must be a number, not ${describe(v)}`);
  if (dtype && !dtype.isFloatingPoint && !Number.isInteger(v)) {
    throw new ValueError(`${op}(): for integral input tensors, argument ${name} must not be a floating point number (got ${v})`);
  }
  return v;
}

function dtypeArgument(op: string, v: unknown): DType | undefined {
  if (v === undefined) return undefined;
  if (!Object.values(DTYPES).includes(v as DType)) throw new TypeError(`${op}(): argument 'dtype' must be a DType (float32, float64, …), not ${describe(v)}`);
  return v as DType;
}

// ---- helpers ----

/** `f(0), f(1), …, f(n − 1)` as an int32 tensor on x's device. */
function positions(x: Tensor, n: number, f: (i: number) => number = (i) => i): Tensor {
  return x.newTensor(Int32Array.from({ length: n }, (_, i) => f(i)), INDEX);
}

/** `j − i` at row i, column j of a rows × cols grid (int32, on x's device): the diagonal each element is on. */
function diagonalOffsets(x: Tensor, rows: number, cols: number): Tensor {
  return positions(x, cols).sub(positions(x, rows).unsqueeze(1));
}

/** A 0-dim zero of x's dtype and device: the other branch of a `where` that keeps x's dtype. */
function zeroOf(x: Tensor): Tensor {
  return x.newZeros([]);
}

/**
 * Half types are computed in float32 and rounded once, as PyTorch's kernels compute them (TP-6).
 * The ops that do this are marked `opmath` in the table, and methods.ts checks first that the
 * backend computes their dtypes.
 */
function inOpmath(dtype: DType, tensors: readonly Tensor[], fn: (...ts: Tensor[]) => Tensor): Tensor {
  if (dtype !== float16 && dtype !== bfloat16) return fn(...tensors);
  return fn(...tensors.map((t) => t.to(float32))).to(dtype);
}

/** x at least 1-D: a 0-dim tensor is viewed as one element. */
function atLeast1d(x: Tensor): Tensor {
  return x.ndim === 0 ? x.reshape([1]) : x;
}

// ---- masking ----

/** A fill value as a 0-dim tensor of x's dtype: a number, or a 0-dim tensor (whose gradient is kept). */
function fillValue(op: string, x: Tensor, value: unknown): Tensor {
  if (value instanceof Tensor) {
    if (value.ndim !== 0) throw new ShapeError(`${op} only supports a 0-dimensional value tensor, but got tensor with ${value.ndim} dimension(s).`, op);
    return value.to(x.dtype);
  }
  if (typeof value !== 'number' && typeof value !== 'boolean') {
    throw new TypeError(`${op}(): argument 'value' must be a number, a boolean or a 0-dim Tensor, not ${describe(value)}`);
  }
  return x.newFull([], value);
}

/** A mask argument: a bool tensor (PyTorch 1.13's deprecated uint8 masks have no counterpart here). */
function boolMask(op: string, v: unknown): Tensor {
  const mask = tensorArgument(op, 'mask', v);
  if (mask.dtype !== bool) throw new DTypeError(`${op} only supports boolean masks, but got mask with dtype ${mask.dtype.name}`, op, mask.dtype.name);
  return mask;
}

/** `(mask, value)`: value where the bool mask is true, else x; mask and x broadcast (in place: to x's shape). */
export function maskedFill(x: Tensor, args: Args, op = 'maskedFill'): Tensor {
  const a = bindArguments(op, args, ['mask', 'value']);
  const mask = boolMask(op, a.mask);
  return fillValue(op, x, required(op, 'value', a.value)).where(mask, x);
}

/**
 * Where the running count of a mask's trues can be read now (its backend reads synchronously), it
 * must not pass the number of source elements. Elsewhere the count goes unchecked and maskedScatter
 * clamps its reads into the source.
 */
function checkSourceSize(op: string, trues: Tensor, available: number): void {
  const n = trues.numel();
  const count = n === 0 ? 0 : valuesNow(trues.narrow(0, n - 1, 1))?.[0] ?? 0;
  if (count > available) {
    throw new ShapeError(`${op}: Number of elements of source (${available}) < number of ones in mask (${count}): source needs at least ${count} elements`, op);
  }
}

/**
 * `(mask, source)`: x with source's elements, read in row-major order, written one after another
 * where the bool mask is true (mask and x broadcast; in place: to x's shape). The k-th true position
 * takes source's element k: the running count of trues, less one, indexes the flattened source.
 * Indices are clamped into the source, so nothing outside it is read even where the count could
 * not be checked; positions past its end then keep x's elements.
 */
export function maskedScatter(x: Tensor, args: Args, op = 'maskedScatter'): Tensor {
  const a = bindArguments(op, args, ['mask', 'source']);
  const mask = boolMask(op, a.mask);
  const source = tensorArgument(op, 'source', a.source);
  if (source.dtype !== x.dtype) {
    throw new DTypeError(`${op}: expected self and source to have same dtypes but got ${x.dtype.name} and ${source.dtype.name}`, op, source.dtype.name);
  }
  const shape = broadcastShapes([x.shape, mask.shape], op);
  const trues = mask.expand(shape).reshape([-1]).cumsum(0); // int32: the trues up to each position
  const n = source.numel();
  checkSourceSize(op, trues, n);
  const values = n === 0 ? x : source.reshape([-1]).gather(0, trues.sub(1).clamp(0, n - 1)).view(shape);
  return values.where(mask.logicalAnd(trues.le(n).view(shape)), x);
}

/** tril/triu `(diagonal = 0)`: the elements on and below (above) that diagonal of the last two dims, zeros elsewhere. */
export function triangle(op: 'tril' | 'triu', x: Tensor, args: Args): Tensor {
  const diagonal = intArgument(op, 'diagonal', bindArguments(op, args, ['diagonal']).diagonal, 0);
  if (x.ndim < 2) throw new ShapeError(`${op}: input tensor must have at least 2 dimensions`, op);
  const [rows, cols] = x.shape.slice(-2) as [number, number];
  const offsets = diagonalOffsets(x, rows, cols);
  return x.where(op === 'tril' ? offsets.le(diagonal) : offsets.ge(diagonal), zeroOf(x));
}

// ---- splitting (views) ----

function splitDim(op: string, x: Tensor, dim: unknown): number {
  if (x.ndim === 0) throw new ShapeError(`${op} expects at least a 1-dimensional tensor`, op);
  return normalizeDim(intArgument(op, 'dim', dim, 0), x.ndim, op);
}

function splitWithSizes(x: Tensor, sizes: readonly unknown[], d: number): Tensor[] {
  const size = x.shape[d]!;
  if (!sizes.every((s): s is number => typeof s === 'number' && Number.isInteger(s) && s >= 0)) {
    throw new ValueError(`split expects splitSizes have only non-negative integer entries, but got splitSizes=[${sizes.join(', ')}]`);
  }
  if (sizes.reduce((a, b) => a + b, 0) !== size) {
    throw new ShapeError(`split expects splitSizes to sum exactly to ${size} (input tensor's size at dimension ${d}), but got splitSizes=[${sizes.join(', ')}]`, 'split');
  }
  let start = 0;
  return sizes.map((s) => {
    const part = x.narrow(d, start, s);
    start += s;
    return part;
  });
}

/** Views of x along dim d in pieces of `step` (the last may be smaller). */
function splitEvery(x: Tensor, step: number, d: number): Tensor[] {
  const size = x.shape[d]!;
  if (step < 0) throw new ValueError(`split expects splitSize be non-negative, but got splitSize=${step}`);
  if (step === 0 && size !== 0) throw new ValueError(`splitSize can only be 0 if dimension size is 0, but got dimension size of ${size}`);
  const count = step === 0 ? 1 : Math.max(Math.ceil(size / step), 1);
  return Array.from({ length: count }, (_, i) => x.narrow(d, i * step, Math.min(step, size - i * step)));
}

/** `(splitSize, dim = 0)`: views of x along dim, of splitSize each (the last may be smaller) or of each size in a list. */
export function split(x: Tensor, args: Args): Tensor[] {
  const a = bindArguments('split', args, ['splitSize', 'dim']);
  const splitSize = required('split', 'splitSize', a.splitSize);
  const d = splitDim('split', x, a.dim);
  return Array.isArray(splitSize) ? splitWithSizes(x, splitSize, d) : splitEvery(x, intArgument('split', 'splitSize', splitSize, 0), d);
}

/** `(chunks, dim = 0)`: that many views of x along dim (fewer when the size does not allow it), PyTorch's sizes. */
export function chunk(x: Tensor, args: Args): Tensor[] {
  const a = bindArguments('chunk', args, ['chunks', 'dim']);
  const chunks = intArgument('chunk', 'chunks', required('chunk', 'chunks', a.chunks), 0);
  if (x.ndim === 0) throw new ShapeError('chunk expects at least a 1-dimensional tensor', 'chunk');
  if (chunks <= 0) throw new ValueError(`chunk expects \`chunks\` to be greater than 0, got: ${chunks}`);
  const d = splitDim('chunk', x, a.dim);
  const size = x.shape[d]!;
  return size === 0 ? splitWithSizes(x, new Array<number>(chunks).fill(0), d) : splitEvery(x, Math.ceil(size / chunks), d);
}

/** `(dim = 0)`: the views at each index of dim, with that dim removed. */
export function unbind(x: Tensor, args: Args): Tensor[] {
  const dim = intArgument('unbind', 'dim', bindArguments('unbind', args, ['dim']).dim, 0);
  if (x.ndim === 0) throw new ShapeError('unbind: Dimension specified as 0 but tensor has no dimensions', 'unbind');
  const d = normalizeDim(dim, x.ndim, 'unbind');
  return Array.from({ length: x.shape[d]! }, (_, i) => x.select(d, i));
}

// ---- reordering (copies) ----

/** An integer or an array of integers, as an array. */
function intList(op: string, name: string, v: unknown): number[] {
  const list = typeof v === 'number' ? [v] : v;
  if (!Array.isArray(list)) throw new TypeError(`${op}(): argument '${name}' must be an integer or an array of integers, not ${describe(v)}`);
  return list.map((d: unknown) => intArgument(op, name, d, 0));
}

/** `(dims)`: a copy of x with its elements along each of dims reversed. */
export function flip(x: Tensor, args: Args): Tensor {
  const dims = intList('flip', 'dims', required('flip', 'dims', bindArguments('flip', args, ['dims']).dims));
  const axes = dims.map((d) => normalizeDim(d, x.ndim, 'flip'));
  const repeated = axes.find((d, i) => axes.indexOf(d) !== i);
  if (repeated !== undefined) throw new ShapeError(`flip: dim ${repeated} appears multiple times in the list of dims`, 'flip');
  const out = axes.reduce((t, d) => {
    const n = x.shape[d] ?? 1;
    return n > 1 ? t.indexSelect(d, positions(x, n, (i) => n - 1 - i)) : t;
  }, x);
  return out === x ? x.clone() : out;
}

/** A copy of x rolled by shifts[k] along dims[k]. */
function rollDims(x: Tensor, shifts: readonly number[], dims: readonly number[]): Tensor {
  let out = x;
  dims.forEach((dim, k) => {
    const d = normalizeDim(dim, x.ndim, 'roll');
    const n = x.shape[d] ?? 1;
    const shift = n === 0 ? 0 : ((shifts[k]! % n) + n) % n;
    if (shift !== 0) out = out.indexSelect(d, positions(x, n, (i) => (i - shift + n) % n));
  });
  return out === x ? x.clone() : out;
}

/** `(shifts, dims = null)`: a copy of x rolled along dims (of the flattened tensor without dims). */
export function roll(x: Tensor, args: Args): Tensor {
  const a = bindArguments('roll', args, ['shifts', 'dims']);
  const shifts = intList('roll', 'shifts', required('roll', 'shifts', a.shifts));
  const dims = a.dims === undefined || a.dims === null ? [] : intList('roll', 'dims', a.dims);
  if (dims.length === 0 && shifts.length === 1) return rollDims(x.reshape([-1]), shifts, [0]).view(x.shape);
  if (shifts.length !== dims.length) throw new ShapeError(`roll: shifts and dimensions must align. shifts: ${shifts.length}, dims: ${dims.length}`, 'roll');
  return rollDims(x, shifts, dims);
}

// ---- repeating (copies) ----

/** x tiled sizes[i] times along each dim (new leading dims when sizes is longer than x's rank). */
function repeatSizes(op: string, x: Tensor, sizes: unknown): Tensor {
  if (!Array.isArray(sizes)) throw new TypeError(`${op}(): argument '${op === 'tile' ? 'dims' : 'sizes'}' must be an array of integers, not ${describe(sizes)}`);
  if (sizes.length < x.ndim) throw new ShapeError(`${op}: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor`, op);
  const counts = checkShape(sizes, op);
  const shape = [...new Array<number>(counts.length - x.ndim).fill(1), ...x.shape];
  // Each dim s becomes [r, s]: expanded r times (a view), copied, then merged into r·s.
  return x.reshape(shape.flatMap((s) => [1, s]))
    .expand(shape.flatMap((s, i) => [counts[i]!, s]))
    .clone()
    .view(shape.map((s, i) => s * counts[i]!));
}

/** `(sizes)`: x tiled sizes[i] times along each dim. */
export function repeat(x: Tensor, args: Args): Tensor {
  return repeatSizes('repeat', x, required('repeat', 'sizes', bindArguments('repeat', args, ['sizes']).sizes));
}

/** `(dims)`: `repeat`, with dims padded with leading 1s to x's rank. */
export function tile(x: Tensor, args: Args): Tensor {
  const dims = required('tile', 'dims', bindArguments('tile', args, ['dims']).dims);
  const padded = Array.isArray(dims) ? [...new Array<number>(Math.max(x.ndim - dims.length, 0)).fill(1), ...dims] : dims;
  return repeatSizes('tile', x, padded);
}

/** `(repeats, dim = null, { outputSize })`: each element (slice along dim) repeated in place; of the flattened tensor without a dim. */
export function repeatInterleave(x: Tensor, args: Args): Tensor {
  const op = 'repeatInterleave';
  const a = bindArguments(op, args, ['repeats', 'dim'], ['outputSize']);
  if (a.repeats instanceof Tensor) {
    throw new TypeError(`${op}(): repeats must be an integer here; a tensor of per-element repeats gives an output shape that depends on the data, which this op does not support`);
  }
  const repeats = intArgument(op, 'repeats', required(op, 'repeats', a.repeats), 0);
  if (repeats < 0) throw new ValueError(`${op}: repeats can not be negative`);
  const flat = a.dim === undefined || a.dim === null;
  const src = flat ? x.reshape([-1]) : atLeast1d(x);
  const d = flat ? 0 : normalizeDim(intArgument(op, 'dim', a.dim, 0), x.ndim, op);
  const size = src.shape[d]!;
  const outputSize = a.outputSize === undefined ? undefined : intArgument(op, 'outputSize', a.outputSize, 0);
  if (outputSize !== undefined && outputSize !== size * repeats) {
    throw new ValueError(`${op}: allocated size does not match required size: outputSize is ${outputSize}, but ${size} elements repeated ${repeats} times make ${size * repeats}`);
  }
  return src.unsqueeze(d + 1).expand([...src.shape.slice(0, d + 1), repeats, ...src.shape.slice(d + 1)]).clone().flatten(d, d + 1);
}

// ---- truth ----

/** any/all `(dim = null, keepdim = false)`: whether any (every) element over dim is non-zero; NaN counts as non-zero. */
export function truth(op: 'any' | 'all', x: Tensor, args: Args): Tensor {
  const a = bindArguments(op, args, ['dim', 'keepdim']);
  const dim = dimsArgument(op, 'dim', a.dim);
  const keepdim = boolArgument(op, 'keepdim', a.keepdim, false);
  return op === 'any' ? x.ne(0).sum(dim, keepdim).gt(0) : x.eq(0).sum(dim, keepdim).eq(0);
}

/** `(dim = null)`: the number of non-zero elements over dim (all dims when omitted), as int32. */
export function countNonzero(x: Tensor, args: Args): Tensor {
  return x.ne(0).sum(dimsArgument('countNonzero', 'dim', bindArguments('countNonzero', args, ['dim']).dim));
}

// ---- norms ----

/** s^(1/p), with a zero gradient (not NaN) where s = 0 for p > 0, as PyTorch's norm backward masks it. */
function root(s: Tensor, p: number): Tensor {
  if (p < 0) return s.pow(1 / p);
  const nonzero = s.ne(0);
  const safe = s.where(nonzero, 1);
  return (p === 2 ? safe.sqrt() : safe.pow(1 / p)).where(nonzero, 0);
}

/** `(Σ|x|^ord)^(1/ord)` over dim; ord ±Infinity is the max (min) of |x|, 0 the count of non-zeros. */
function vectorNormOf(op: string, x: Tensor, ord: number, dim: Dims, keepdim: boolean, dtype: DType | undefined): Tensor {
  const input = dtype === undefined ? x : x.to(dtype);
  if (!input.dtype.isFloatingPoint) throw new DTypeError(`${op}: Expected a floating point tensor as input. Got ${input.dtype.name}`, op, input.dtype.name);
  if (ord < 0 || ord === Infinity) {
    const reduced = dim === null ? input.shape : (typeof dim === 'number' ? [dim] : dim).map((d) => input.shape[normalizeDim(d, input.ndim, op)] ?? 1);
    if (reduced.includes(0)) throw new ShapeError(`${op} cannot compute the ${ord} norm on an empty tensor because the operation does not have an identity`, op);
  }
  return inOpmath(input.dtype, [input], (t) => {
    if (ord === Infinity) return t.abs().amax(dim, keepdim);
    if (ord === -Infinity) return t.abs().amin(dim, keepdim);
    // |sign(x)| counts the non-zeros with a zero gradient; NaN counts as non-zero.
    if (ord === 0) return t.sign().abs().where(t.eq(t), 1).sum(dim, keepdim);
    if (ord === 1) return t.abs().sum(dim, keepdim);
    return root((ord === 2 ? t.square() : t.abs().pow(ord)).sum(dim, keepdim), ord);
  });
}

/** linalg.vectorNorm's `(x, ord = 2, dim = null, keepdim = false, { dtype })`, bound: what autocast sees. */
export function vectorNormArguments(args: Args): [x: Tensor, ord: number, dim: Dims, keepdim: boolean, dtype: DType | undefined] {
  const op = 'linalg.vectorNorm';
  const a = bindArguments(op, args, ['x', 'ord', 'dim', 'keepdim'], ['dtype']);
  return [
    tensorArgument(op, 'x', required(op, 'x', a.x)), numberArgument(op, 'ord', a.ord, 2), dimsArgument(op, 'dim', a.dim),
    boolArgument(op, 'keepdim', a.keepdim, false), dtypeArgument(op, a.dtype),
  ];
}

/** PyTorch's linalg.vector_norm, on bound arguments. */
export function vectorNorm(x: Tensor, ord: number, dim: Dims, keepdim: boolean, dtype: DType | undefined): Tensor {
  return vectorNormOf('linalg.vectorNorm', x, ord, dim, keepdim, dtype);
}

/** Tensor.norm `(p = 'fro', dim = null, keepdim = false, { dtype })`: a vector norm of order p; 'fro' is the 2-norm over at most 2 dims. */
export function norm(x: Tensor, args: Args): Tensor {
  const a = bindArguments('norm', args, ['p', 'dim', 'keepdim'], ['dtype']);
  const p = a.p ?? 'fro';
  const dim = dimsArgument('norm', 'dim', a.dim);
  const keepdim = boolArgument('norm', 'keepdim', a.keepdim, false);
  const dtype = dtypeArgument('norm', a.dtype);
  if (p === 'nuc') throw new ValueError("norm: the nuclear norm (p = 'nuc') needs a singular value decomposition, which this library does not have");
  if (p === 'fro') {
    const count = dim === null ? 0 : typeof dim === 'number' ? 1 : dim.length;
    if (count > 2) throw new ShapeError(`norm: the 'fro' norm is over at most 2 dims, got ${count}: give a number p for a vector norm over more`, 'norm');
  } else if (typeof p !== 'number') {
    throw new TypeError(`norm(): argument 'p' must be a number, 'fro' or 'nuc', not ${describe(p)}`);
  }
  return vectorNormOf('norm', x, p === 'fro' ? 2 : p, dim, keepdim, dtype);
}

/** `(other, p = 2)`: the p-norm of `x − other` (broadcasting). */
export function dist(x: Tensor, args: Args): Tensor {
  const a = bindArguments('dist', args, ['other', 'p']);
  const other = tensorArgument('dist', 'other', a.other);
  return vectorNormOf('dist', x.sub(other), numberArgument('dist', 'p', a.p, 2), null, false, undefined);
}

// ---- products ----

/** `(vec2)`: the outer product of two vectors, `out[i][j] = x[i]·vec2[j]`. */
export function outer(x: Tensor, args: Args): Tensor {
  const vec2 = tensorArgument('outer', 'vec2', bindArguments('outer', args, ['vec2']).vec2);
  for (const [name, t] of [['self', x], ['vec2', vec2]] as const) {
    if (t.ndim !== 1) throw new ShapeError(`outer: Expected 1-D argument ${name}, but got ${t.ndim}-D`, 'outer');
  }
  return x.unsqueeze(1).mul(vec2.unsqueeze(0));
}

/** addmm/baddbmm `(a, b, { beta = 1, alpha = 1 })`: `beta·x + alpha·(a @ b)`; with beta 0, x is ignored (its NaN and Inf too). */
export function addProduct(op: 'addmm' | 'baddbmm', x: Tensor, args: Args): Tensor {
  const [first, second] = op === 'addmm' ? ['mat1', 'mat2'] as const : ['batch1', 'batch2'] as const;
  const a = bindArguments(op, args, [first, second], ['beta', 'alpha']);
  const m1 = tensorArgument(op, first, a[first]);
  const m2 = tensorArgument(op, second, a[second]);
  const beta = numberArgument(op, 'beta', a.beta, 1, x.dtype);
  const alpha = numberArgument(op, 'alpha', a.alpha, 1, x.dtype);
  if (x.dtype !== m1.dtype) throw new DTypeError(`${op}: expected self and ${first} to have the same dtype, but got: ${x.dtype.name} != ${m1.dtype.name}`, op, m1.dtype.name);
  // Half types: the GEMM accumulates in float32 and the epilogue adds beta·x there, rounding once
  // (PyTorch's addmm); widening is exact and a product of two halves is exact in float32.
  return inOpmath(x.dtype, [x, m1, m2], (c, p, q) => {
    const product = op === 'addmm' ? p.mm(q) : p.bmm(q);
    const scaled = alpha === 1 ? product : product.mul(alpha);
    if (beta === 0) return scaled;
    const base = c.expand(product.shape);
    return (beta === 1 ? base : base.mul(beta)).add(scaled);
  });
}

// ---- pointwise ----

/** `(end, weight)`: `x + weight·(end − x)` as PyTorch's lerp computes it: from end when |weight| ≥ 0.5, for accuracy there. */
export function lerp(x: Tensor, args: Args): Tensor {
  const a = bindArguments('lerp', args, ['end', 'weight']);
  const end = tensorArgument('lerp', 'end', a.end);
  const weight = required('lerp', 'weight', a.weight);
  if (!x.dtype.isFloatingPoint) throw new DTypeError(`lerp: expected a floating point tensor, got ${x.dtype.name}`, 'lerp', x.dtype.name);
  for (const [name, t] of [['end', end], ['weight', weight]] as const) {
    if (t instanceof Tensor && t.dtype !== x.dtype) throw new DTypeError(`lerp: expected dtype ${x.dtype.name} for \`${name}\` but got dtype ${t.dtype.name}`, 'lerp', t.dtype.name);
  }
  if (weight instanceof Tensor) {
    return inOpmath(x.dtype, [x, end, weight], (s, e, w) => {
      const diff = e.sub(s);
      return s.add(diff.mul(w)).where(w.abs().lt(0.5), e.sub(diff.mul(w.neg().add(1))));
    });
  }
  // The weight in the compute dtype (float32 below float64), and 1 − weight computed from it, as PyTorch does.
  const given = numberArgument('lerp', 'weight', weight, 0);
  const w = x.dtype === float64 ? given : Math.fround(given);
  return inOpmath(x.dtype, [x, end], (s, e) => {
    const diff = e.sub(s);
    return Math.abs(w) < 0.5 ? s.add(diff.mul(w)) : e.sub(diff.mul(1 - w));
  });
}

const ADDCDIV_INTEGERS =
  'Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. ' +
  'The historic addcdiv behavior can be implemented as (input + value * trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as ' +
  '(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.';

/**
 * addcmul/addcdiv `(tensor1, tensor2, { value = 1 })`: `x + value·(tensor1 ∘ tensor2)`, the
 * product (quotient) rounded, then added with alpha = value: the fused addcmul kernel's form.
 */
export function addcOp(op: 'addcmul' | 'addcdiv', x: Tensor, args: Args, name: string = op): Tensor {
  const a = bindArguments(name, args, ['tensor1', 'tensor2'], ['value']);
  const t1 = tensorArgument(name, 'tensor1', a.tensor1);
  const t2 = tensorArgument(name, 'tensor2', a.tensor2);
  if (op === 'addcdiv' && !t1.dtype.isFloatingPoint && !t2.dtype.isFloatingPoint) throw new DTypeError(ADDCDIV_INTEGERS, name, t1.dtype.name);
  const dtype = resultType(x, t1, t2);
  const value = numberArgument(name, 'value', a.value, 1, dtype);
  return inOpmath(dtype, [x, t1, t2], (s, b, c) => s.add(op === 'addcmul' ? b.mul(c) : b.div(c), value));
}

/** `(other)`: `sqrt(x² + other²)` without overflow or underflow in the squares: `m·sqrt(1 + (n/m)²)` with m, n the larger and smaller of |x|, |other|. */
export function hypot(x: Tensor, args: Args): Tensor {
  const other = tensorArgument('hypot', 'other', bindArguments('hypot', args, ['other']).other);
  const dtype = resultType(x, other);
  if (!dtype.isFloatingPoint) throw new DTypeError(`hypot: expected floating point tensors, got ${x.dtype.name} and ${other.dtype.name}`, 'hypot', dtype.name);
  return inOpmath(dtype, [x, other], (s, o) => {
    const [p, q] = [s.abs(), o.abs()];
    const big = p.maximum(q);
    const ratio = p.minimum(q).div(big.where(big.ne(0), 1)); // both zero: 0/1, so the gradient stays finite
    // An infinite side makes the result +Inf, even next to a NaN (C's hypot).
    return big.mul(ratio.square().add(1).sqrt()).where(p.isinf().logicalOr(q.isinf()).logicalNot(), Infinity);
  });
}

// ---- indexing ----

function indexArgument(op: string, v: unknown, name = 'index'): Tensor {
  const index = tensorArgument(op, name, v);
  if (index.dtype !== int32) throw new DTypeError(`${op}(): Expected dtype int32 for ${name}, got ${index.dtype.name}; convert with ${name}.int()`, op, index.dtype.name);
  return index;
}

/**
 * Index values must lie in [0, size), or [−size, size) where negatives count from the end. They
 * are read here where the index's backend reads synchronously (through that backend's own read);
 * elsewhere GPU kernels guard every read and write: an out-of-range index never touches memory
 * outside the tensor.
 */
function checkRange(op: string, index: Tensor, size: number, dim: number, negatives: boolean): void {
  if (index.numel() === 0) return;
  const low = negatives ? -size : 0;
  for (const v of valuesNow(index) ?? []) {
    if (v < low || v >= size) throw new ShapeError(`${op}(): index ${v} is out of bounds for dimension ${dim} with size ${size}`, op);
  }
}

/** In-range negative indices counted from the end. */
function wrapNegative(index: Tensor, size: number): Tensor {
  return index.add(size).where(index.lt(0), index);
}

/** A 1-D index as [1, …, n, …, 1]: n along dim d of a rank-`rank` tensor. */
function along(index: Tensor, d: number, rank: number): Tensor {
  return index.reshape(Array.from({ length: rank }, (_, k) => (k === d ? -1 : 1)));
}

/** True at the positions along dim d of x (at least 1-D) that `index` names: a [1, …, size, …, 1] bool tensor. */
function hits(x: Tensor, index: Tensor, d: number): Tensor {
  const counts = x.newZeros(x.shape.map((s, k) => (k === d ? s : 1)), INDEX);
  return counts.scatterAdd(d, along(index, d, x.ndim), along(index.newOnes(index.shape), d, x.ndim)).gt(0);
}

/** base with src added at `index` along dim d, duplicates adding up (bool: or-ed, through int32). */
function scatterAlong(base: Tensor, d: number, index: Tensor, src: Tensor): Tensor {
  const idx = along(index, d, base.ndim).expand(src.shape);
  return base.dtype === bool ? base.int().scatterAdd(d, idx, src.int()).ne(0) : base.scatterAdd(d, idx, src);
}

/** `(index)`: the elements of x (as if 1-D) at index, in index's shape; negative indices count from the end. */
export function take(x: Tensor, args: Args): Tensor {
  const index = indexArgument('take', bindArguments('take', args, ['index']).index);
  const n = x.numel();
  checkRange('take', index, n, 0, true);
  return x.reshape([-1]).gather(0, wrapNegative(index, n).reshape([-1])).view(index.shape);
}

/** `(indices, dim = null)`: gather with x and indices broadcast in every dim but dim (of the flattened x without a dim). */
export function takeAlongDim(x: Tensor, args: Args): Tensor {
  const op = 'takeAlongDim';
  const a = bindArguments(op, args, ['indices', 'dim']);
  const indices = indexArgument(op, a.indices, 'indices');
  if (a.dim === undefined || a.dim === null) {
    checkRange(op, indices, x.numel(), 0, false);
    return x.reshape([-1]).gather(0, indices.reshape([-1]));
  }
  if (x.ndim !== indices.ndim) {
    throw new ShapeError(`${op}: input and indices should have the same number of dimensions, but got ${x.ndim} dimensions for input, and ${indices.ndim} dimensions for indices`, op);
  }
  const d = normalizeDim(intArgument(op, 'dim', a.dim, 0), x.ndim, op);
  checkRange(op, indices, x.shape[d] ?? 1, d, false);
  const shape = broadcastShapes([x.shape.map((s, k) => (k === d ? indices.shape[k]! : s)), indices.shape], op);
  return x.expand(shape.map((s, k) => (k === d ? x.shape[k]! : s))).gather(d, indices.expand(shape));
}

/** The bound `(dim, index, third)` of indexFill/indexCopy/indexAdd, checked, with the size along dim. */
function indexArguments(op: string, x: Tensor, args: Args, third: 'value' | 'source', keywordOnly: readonly 'alpha'[] = []) {
  const a = bindArguments(op, args, ['dim', 'index', third], keywordOnly);
  const index = indexArgument(op, a.index);
  if (index.ndim > 1) throw new ShapeError(`${op}(): Index is supposed to be a vector`, op);
  const d = normalizeDim(intArgument(op, 'dim', required(op, 'dim', a.dim), 0), x.ndim, op);
  return { a, index, d, size: x.ndim === 0 ? 1 : x.shape[d]! };
}

/** indexCopy/indexAdd's source: x's dtype and shape, but index.numel() along dim d. */
function sourceArgument(op: string, x: Tensor, d: number, index: Tensor, v: unknown): Tensor {
  const source = tensorArgument(op, 'source', v);
  if (source.dtype !== x.dtype) throw new DTypeError(`${op}(): self (${x.dtype.name}) and source (${source.dtype.name}) must have the same scalar type`, op, source.dtype.name);
  const [xs, ss] = [atLeast1d(x).shape, atLeast1d(source).shape];
  if (ss.length !== xs.length || ss.some((s, k) => k !== d && s !== xs[k])) {
    throw new ShapeError(`${op}(): source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [${x.shape.join(', ')}] source.shape = [${source.shape.join(', ')}]`, op);
  }
  if (ss[d] !== index.numel()) throw new ShapeError(`${op}(): Number of indices (${index.numel()}) should be equal to source.size(dim) (${ss[d]})`, op);
  return source;
}

/** `(dim, index, value)`: x with the slices along dim at index set to value; negative indices count from the end. */
export function indexFill(x: Tensor, args: Args, op = 'indexFill'): Tensor {
  const { a, index, d, size } = indexArguments(op, x, args, 'value');
  const value = fillValue(op, x, required(op, 'value', a.value));
  checkRange(op, index, size, d, true);
  const mask = hits(atLeast1d(x), wrapNegative(index, size), d);
  return value.where(x.ndim === 0 ? mask.reshape([]) : mask, x);
}

/** `(dim, index, source)`: x with slice index[i] along dim replaced by source's slice i (duplicate indices add up their slices). */
export function indexCopy(x: Tensor, args: Args, op = 'indexCopy'): Tensor {
  const { a, index, d, size } = indexArguments(op, x, args, 'source');
  const source = sourceArgument(op, x, d, index, a.source);
  checkRange(op, index, size, d, false);
  const x1 = atLeast1d(x);
  // Placed onto −0, since −0 + v is v for every v (−0 included): the copy is exact.
  const placed = scatterAlong(x1.newFull(x1.shape, -0), d, index, atLeast1d(source));
  return placed.where(hits(x1, index, d), x1).view(x.shape);
}

/** `(dim, index, source, { alpha = 1 })`: x with alpha·source's slice i added to slice index[i] along dim (duplicates accumulate). */
export function indexAdd(x: Tensor, args: Args, op = 'indexAdd'): Tensor {
  const { a, index, d, size } = indexArguments(op, x, args, 'source', ['alpha']);
  const source = atLeast1d(sourceArgument(op, x, d, index, a.source));
  const alpha = numberArgument(op, 'alpha', a.alpha, 1, x.dtype);
  checkRange(op, index, size, d, false);
  return scatterAlong(atLeast1d(x), d, index, alpha === 1 ? source : source.mul(alpha)).view(x.shape);
}

// ---- diagonals ----

/** `(diagonal = 0)`: a 1-D x as that diagonal of a square matrix; that diagonal of a 2-D x, as a copy. */
export function diag(x: Tensor, args: Args): Tensor {
  const diagonal = intArgument('diag', 'diagonal', bindArguments('diag', args, ['diagonal']).diagonal, 0);
  if (x.ndim === 2) return x.diagonal(diagonal).clone();
  if (x.ndim !== 1) throw new ShapeError(`diag(): Supports 1D or 2D tensors. Got ${x.ndim}D`, 'diag');
  const n = x.shape[0]!;
  const size = n + Math.abs(diagonal);
  if (n === 0) return x.newZeros([size, size]);
  // Row i holds x[i + min(diagonal, 0)] (clamped: the rows without a diagonal element are masked).
  const shift = Math.min(diagonal, 0);
  const rows = x.indexSelect(0, positions(x, size, (i) => Math.min(Math.max(i + shift, 0), n - 1)));
  return rows.unsqueeze(1).where(diagonalOffsets(x, size, size).eq(diagonal), zeroOf(x));
}

/** `()`: the sum of a matrix's main diagonal (an int32 sum for integers and bools). */
export function trace(x: Tensor, args: Args): Tensor {
  bindArguments('trace', args, []);
  if (x.ndim !== 2) throw new ShapeError(`trace: expected a matrix, but got tensor with dim ${x.ndim}`, 'trace');
  // The dtype given outright: trace is one op in PyTorch, so a CUDA autocast region leaves its sum alone.
  return x.diagonal().sum(null, false, { dtype: x.dtype.isFloatingPoint ? x.dtype : int32 });
}

// ---- like another tensor ----

/** viewAs/reshapeAs/typeAs `(other)`: x viewed or reshaped to other's shape, or cast to its dtype and device. */
export function likeOther(op: 'viewAs' | 'reshapeAs' | 'typeAs', x: Tensor, args: Args): Tensor {
  const other = tensorArgument(op, 'other', bindArguments(op, args, ['other']).other);
  if (op === 'typeAs') return x.to(other);
  return op === 'viewAs' ? x.view(other.shape) : x.reshape(other.shape);
}
