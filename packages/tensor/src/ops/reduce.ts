// Reductions over dims with keepdim. Half types accumulate in f32 and round once (TP-6).
import type { ArgReduceOp, ReduceOp } from '../backend/contract.js';
import { float32, float64, int32, type DType, type DTypeName } from '../dtype/dtype.js';
import { DTypeError, ShapeError } from '../errors/errors.js';
import { iteratorDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { binary, cast, scalarTensor } from './elementwise.js';
import { expand, reshape } from './views.js';
import { record } from '../autograd/engine.js';
import { gatherInRange } from './indexing.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';

/**
 * What `max(dim)`, `min(dim)`, `sort` and `topk` return, like PyTorch's named tuples: values and
 * their int32 positions along the dim, by name (`const { values, indices } = x.topk(3)`), by
 * position (`const [values, indices] = x.topk(3)`) or by index (`r[0]`, `r[1]`).
 */
export interface ValuesIndices extends Iterable<Tensor> {
  /** The values (the max or min along the dim; the sorted or top-k elements). */
  readonly values: Tensor;
  /** Their int32 positions along the dim. */
  readonly indices: Tensor;
  /** `values`. */
  readonly 0: Tensor;
  /** `indices`. */
  readonly 1: Tensor;
  /** 2, as for a tuple. */
  readonly length: 2;
}

/** The named tuple of `values` and `indices` (frozen). */
export function valuesIndices(values: Tensor, indices: Tensor): ValuesIndices {
  return Object.freeze({
    values, indices, 0: values, 1: indices, length: 2 as const,
    *[Symbol.iterator]() {
      yield values;
      yield indices;
    },
  });
}

type Dims = number | readonly number[] | null | undefined;

function axesOf(x: Tensor, dim: Dims, op: string): number[] {
  if (dim === undefined || dim === null) return x.shape.map((_, i) => i);
  const list = typeof dim === 'number' ? [dim] : dim;
  const axes = list.map((d) => normalizeDim(d, x.ndim, op));
  if (new Set(axes).size !== axes.length) throw new ShapeError(`${op}: dim ${axes.join(', ')} appears multiple times in the list of dims`, op);
  return x.ndim === 0 ? [] : axes.sort((a, b) => a - b);
}

/** The dtype reductions accumulate `dtype` in: float64 for float64, float32 for the other floats, int32 for ints and bools. */
export function accumulatorOf(dtype: DType): DTypeName {
  if (dtype === float64) return 'float64';
  return dtype.isFloatingPoint ? 'float32' : 'int32';
}

function reducedShape(x: Tensor, axes: readonly number[], keepdim: boolean): { kept: number[]; out: number[] } {
  const kept = x.shape.map((s, i) => (axes.includes(i) ? 1 : s));
  return { kept, out: keepdim ? kept : x.shape.filter((_, i) => !axes.includes(i)) };
}

/** Run the reduce primitive into `outDType`, accumulating in the input's accumulator dtype. */
function reduceInto(op: ReduceOp, x: Tensor, axes: number[], keepdim: boolean, outDType: DType, name: string): Tensor {
  const { device } = iteratorDevice(name, [{ name: 'self', tensor: x }]);
  const backend = backendOf(device);
  requireCompute(backend, x.dtype, name);
  const { kept, out: outShape } = reducedShape(x, axes, keepdim);
  const raw = allocate(kept, outDType, device);
  if (raw.numel() > 0) backend.kernels.reduce(op, ref(x), axes, ref(raw), accumulatorOf(x.dtype));
  // sum's gradient needs only x's shape: don't keep x alive for it.
  const shape = x.shape;
  const out = op === 'sum'
    ? record('sumBackward', raw, [x], (g) => [expand(g, shape)])
    : record(`${op}Backward`, raw, [x], (g) => [reduceGrad(op, g, x, raw)], [x, raw]);
  return keepdim ? out : reshape(out, outShape);
}

/** Gradient of a keepdim reduction: g (in the reduced shape) spread back over x's shape. */
function reduceGrad(op: ReduceOp, g: Tensor, x: Tensor, y: Tensor): Tensor {
  const spread = expand(g, x.shape);
  switch (op) {
    case 'sum': return spread;
    case 'prod': {
      // ∂Π/∂xᵢ = Π_{j≠i} xⱼ (PyTorch's prod_backward): Π/xᵢ in a slice without zeros; in a slice with
      // one zero, the product of the others at that zero and 0 elsewhere; with more zeros, 0.
      const axes = y.shape.flatMap((s, i) => (s === 1 ? [i] : []));
      const isZero = x.eq(0);
      const zeros = reduceInto('sum', cast(isZero, int32), axes, true, int32, 'prod');
      const others = reduceInto('prod', binary('add', x, cast(isZero, x.dtype)), axes, true, x.dtype, 'prod'); // zeros → 1
      const atZero = binary('mul', binary('mul', spread, others), cast(isZero, g.dtype));
      return binary('div', binary('mul', spread, y), x).where(zeros.eq(0), atZero.where(zeros.eq(1), 0));
    }
    case 'max':
    case 'min': {
      // Ties share the gradient evenly, like PyTorch's amax/amin.
      const hits = cast(x.eq(y), g.dtype);
      const count = hits.sum(y.shape.flatMap((s, i) => (s === 1 ? [i] : [])), true);
      return binary('div', binary('mul', spread, hits), count);
    }
    default: return op satisfies never;
  }
}

/** sum/prod of ints and bools give int32 (PyTorch: int64); floats keep their dtype unless `dtype` is given. */
function sumLike(op: 'sum' | 'prod', x: Tensor, dim: Dims, keepdim: boolean, dtype: DType | undefined): Tensor {
  const input = dtype ? cast(x, dtype) : x.dtype.isFloatingPoint ? x : cast(x, int32);
  return reduceInto(op, input, axesOf(x, dim, op), keepdim, input.dtype, op);
}

/** Sum over dims; autocast runs it in float32 on GPUs unless `dtype` is given (AC-10). */
export function sum(x: Tensor, dim: Dims, keepdim: boolean, dtype?: DType): Tensor {
  if (dtype) return sumImpl(x, dim, keepdim, dtype);
  if (autocastIdle()) return sumImpl(x, dim, keepdim);
  return autocastOp('sum', [x] as const, (t) => sumImpl(t, dim, keepdim));
}

function sumImpl(x: Tensor, dim: Dims, keepdim: boolean, dtype?: DType): Tensor {
  return sumLike('sum', x, dim, keepdim, dtype);
}

export function prod(x: Tensor, dim: number | null | undefined, keepdim: boolean, dtype?: DType): Tensor {
  if (dtype) return prodImpl(x, dim, keepdim, dtype);
  return autocastOp('prod', [x] as const, (t) => prodImpl(t, dim, keepdim));
}

function prodImpl(x: Tensor, dim: number | null | undefined, keepdim: boolean, dtype?: DType): Tensor {
  return sumLike('prod', x, dim, keepdim, dtype);
}

export function mean(x: Tensor, dim: Dims, keepdim: boolean, dtype?: DType): Tensor {
  const outDType = dtype ?? x.dtype;
  if (!outDType.isFloatingPoint) {
    throw new DTypeError(
      `mean(): could not infer output dtype. Input dtype must be a floating point dtype. Got: ${x.dtype.name}; use x.float().mean()`,
      'mean',
      x.dtype.name,
    );
  }
  const axes = axesOf(x, dim, 'mean');
  const count = axes.reduce((n, a) => n * x.shape[a]!, 1);
  // Sum in the accumulator dtype, divide there, round once into the output dtype.
  const acc = outDType === float64 ? float64 : float32;
  const total = reduceInto('sum', cast(x, outDType), axes, keepdim, acc, 'mean');
  return cast(binary('div', total, scalarTensor(count, acc, total.device)), outDType);
}

function requireNonEmpty(x: Tensor, axes: readonly number[], op: string): void {
  if (x.numel() > 0) return;
  const emptyAxis = axes.find((a) => x.shape[a] === 0);
  if (x.ndim === 0 || emptyAxis !== undefined || axes.length === x.ndim) {
    throw new ShapeError(
      `${op}(): Expected reduction dim to be specified for input.numel() == 0` +
        (emptyAxis !== undefined ? ` (dim ${emptyAxis} has size 0).` : '. Specify the reduction dim with the \'dim\' argument.'),
      op,
    );
  }
}

/** `max()`/`min()`: the extreme element, or `{ values, indices }` along a dim. NaN propagates. */
export function extreme(op: 'max' | 'min', x: Tensor, dim: number | undefined, keepdim: boolean): Tensor | ValuesIndices {
  if (dim === undefined) return amax(op, x, null, false);
  const indices = argReduce(op === 'max' ? 'argmax' : 'argmin', x, dim, true);
  if (x.ndim === 0) return valuesIndices(amax(op, x, dim, keepdim), reshape(indices, []));
  // Values gathered at the indices: the gradient goes to that one element, as in PyTorch.
  const axis = normalizeDim(dim, x.ndim, op);
  const values = gatherInRange(x, axis, indices);
  return keepdim ? valuesIndices(values, indices) : valuesIndices(values.squeeze(axis), indices.squeeze(axis));
}

export function amax(op: 'max' | 'min', x: Tensor, dim: Dims, keepdim: boolean): Tensor {
  const axes = axesOf(x, dim, op);
  requireNonEmpty(x, axes, op);
  return reduceInto(op, x, axes, keepdim, x.dtype, op);
}

/** Index of the first max/min (int32; PyTorch: int64). Without a dim, over the flattened tensor. */
export function argReduce(op: ArgReduceOp, x: Tensor, dim: number | null | undefined, keepdim: boolean): Tensor {
  if (dim === undefined || dim === null) {
    const flat = argReduce(op, reshape(x, [x.numel()]), 0, false);
    return keepdim ? reshape(flat, x.shape.map(() => 1)) : flat;
  }
  const axis = normalizeDim(dim, x.ndim, op);
  const source = x.ndim === 0 ? reshape(x, [1]) : x;
  requireNonEmpty(source, [axis], op);
  const { device } = iteratorDevice(op, [{ name: 'self', tensor: x }]);
  const backend = backendOf(device);
  requireCompute(backend, x.dtype, op);
  const { kept, out: outShape } = reducedShape(source, [axis], keepdim);
  const out = allocate(kept, int32, device);
  if (out.numel() > 0) backend.kernels.argReduce(op, ref(source), axis, ref(out));
  if (x.ndim === 0) return reshape(out, []);
  return keepdim ? out : reshape(out, outShape);
}

/** Variance with Bessel-style `correction` (PyTorch's default 1), computed in f32 for half types. */
export function variance(x: Tensor, dim: Dims, keepdim: boolean, correction: number): Tensor {
  if (!x.dtype.isFloatingPoint) {
    throw new DTypeError(`var(): input dtype should be a floating point dtype, got ${x.dtype.name}; use x.float()`, 'var', x.dtype.name);
  }
  if (typeof correction !== 'number' || !Number.isFinite(correction)) throw new ShapeError(`var(): correction must be a finite number, got ${correction}`, 'var');
  const work = x.dtype === float64 ? x : cast(x, float32);
  const axes = axesOf(x, dim, 'var');
  const count = axes.reduce((n, a) => n * x.shape[a]!, 1);
  const centered = binary('sub', work, mean(work, axes, true));
  const squares = sum(binary('mul', centered, centered), axes, keepdim);
  // N − correction ≤ 0 divides by ≤ 0, giving inf/NaN as in PyTorch (which also warns).
  return cast(binary('div', squares, Math.max(count - correction, 0)), x.dtype);
}
