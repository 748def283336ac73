// scatter (src or value, with reduce), scatter_ and scatterReduce on the scatter primitive (sums on
// scatterAdd). Shapes, index dtype and range are checked as for gather and scatterAdd. Repeated
// indices are deterministic on every backend: contributions apply in order along `dim`, so plain
// scatter keeps the last one (PyTorch leaves the winner unspecified). Gradients follow PyTorch's
// derivatives.yaml (scatter_reduce_backward), for every reduction.
import type { ScatterMode } from '../backend/contract.js';
import { bool, int32, type DType } from '../dtype/dtype.js';
import { DTypeError, ValueError } from '../errors/errors.js';
import { schemaDevice } from '../dispatch/device-rule.js';
import { backendOf, ref, requireCompute, requireKernel } from '../dispatch/run.js';
import { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { record } from '../autograd/engine.js';
import { noGrad } from '../autograd/grad-mode.js';
import { bindArguments, boolArgument, intArgument, required } from './arguments.js';
import { binary, cast, scalarTensor, unary, where } from './elementwise.js';
import { checkGatherShapes, checkIndex, checkIndexValues, gather, scatterAdd, srcGradient } from './indexing.js';
import { arange, full } from './creation.js';
import { contiguousCopy, expand, narrow, reshape } from './views.js';

/** scatterReduce's reductions (PyTorch's names). */
type ScatterReduction = 'sum' | 'prod' | 'mean' | 'amax' | 'amin';
const REDUCTIONS: readonly ScatterReduction[] = ['sum', 'prod', 'mean', 'amax', 'amin'];

/** `x.scatter(dim, index, src | value, { reduce })`, out of place. */
export function scatter(x: Tensor, args: readonly unknown[], op = 'scatter'): Tensor {
  const a = bindArguments(op, args, ['dim', 'index', 'src'], ['value', 'reduce']);
  const dim = intArgument(op, 'dim', required(op, 'dim', a.dim), 0);
  const index = required(op, 'index', a.index) as Tensor;
  if (a.src !== undefined && a.value !== undefined) throw new TypeError(`${op}() got both 'src' and 'value': give one of them`);
  const source = a.src ?? a.value;
  if (source === undefined) throw new TypeError(`${op}() missing required argument 'src' (a tensor) or 'value' (a number)`);
  if (!(source instanceof Tensor) && typeof source !== 'number' && typeof source !== 'boolean') {
    throw new TypeError(`${op}(): 'src' must be a Tensor and 'value' a number, got ${typeof source}`);
  }
  if (a.value !== undefined && source instanceof Tensor) throw new TypeError(`${op}(): 'value' must be a number; pass a tensor as 'src'`);
  if (a.reduce !== undefined && a.reduce !== 'add' && a.reduce !== 'multiply') {
    throw new ValueError(`${op}(): reduce argument must be either add or multiply, got '${String(a.reduce)}'`);
  }
  checkIndex(op, index);
  const d = normalizeDim(dim, x.ndim, op);
  const src = source instanceof Tensor ? checkedSource(op, x, d, index, source) : valueSource(op, x, d, index, Number(source));
  if (a.reduce !== undefined) return reduced(op, x, d, index, src, a.reduce === 'add' ? 'sum' : 'prod', true);
  const out = contiguousCopy(x);
  runScatter(op, out, d, index, src, 'assign');
  return record('ScatterBackward', out, [x, index, src], (g) => [
    scatterValue(g, d, index, 0),
    null,
    src.requiresGrad ? srcGradient(where(winners(x, d, index), gather(g, d, index), 0), src) : null,
  ], [index]);
}

/**
 * True at the positions of index whose value was kept: the last of repeated indices along `dim`
 * (the others were overwritten, so their src elements get no gradient; PyTorch, whose winner is
 * unspecified, gives every one of them the gradient).
 */
function winners(x: Tensor, d: number, index: Tensor): Tensor {
  if (index.ndim === 0) return scalarTensor(1, bool, x.device);
  const n = index.shape[d]!;
  const position = expand(reshape(arange(n, { dtype: int32, device: x.device }), index.shape.map((s, i) => (i === d ? n : 1))), index.shape);
  const last = scatter(full(x.ndim === 0 ? [1] : x.shape, -1, { dtype: int32, device: x.device }), [d, index, position]);
  return gather(last, d, index).eq(position);
}

/** `x.scatterReduce(dim, index, src, reduce, { includeSelf })`, out of place. */
export function scatterReduce(x: Tensor, args: readonly unknown[]): Tensor {
  const op = 'scatterReduce';
  const a = bindArguments(op, args, ['dim', 'index', 'src', 'reduce'], ['includeSelf']);
  const dim = intArgument(op, 'dim', required(op, 'dim', a.dim), 0);
  const index = required(op, 'index', a.index) as Tensor;
  const src = required(op, 'src', a.src);
  const reduce = required(op, 'reduce', a.reduce) as ScatterReduction;
  const includeSelf = boolArgument(op, 'includeSelf', a.includeSelf, true);
  if (!(src instanceof Tensor)) throw new TypeError(`${op}(): 'src' must be a Tensor, got ${typeof src}`);
  if (!REDUCTIONS.includes(reduce)) throw new ValueError(`${op}(): reduce argument must be either sum, prod, mean, amax or amin, got '${String(reduce)}'`);
  checkIndex(op, index);
  const d = normalizeDim(dim, x.ndim, op);
  return reduced(op, x, d, index, checkedSource(op, x, d, index, src), reduce, includeSelf);
}

/** src after the device, dtype, shape and index-range checks. */
function checkedSource(op: string, x: Tensor, d: number, index: Tensor, src: Tensor): Tensor {
  schemaDevice(op, [{ name: 'self', tensor: x }, { name: 'index', tensor: index }, { name: 'src', tensor: src }]);
  if (src.dtype !== x.dtype) {
    throw new DTypeError(`${op}(): Expected self.dtype to be equal to src.dtype (${x.dtype.name} != ${src.dtype.name})`, op, src.dtype.name);
  }
  checkGatherShapes(op, x, d, index, src);
  checkIndexValues(op, index, x.ndim === 0 ? 1 : x.shape[d]!, d);
  return src;
}

/** One value everywhere index points: a 0-dim tensor of x's dtype broadcast to index's shape. */
function valueSource(op: string, x: Tensor, d: number, index: Tensor, value: number): Tensor {
  schemaDevice(op, [{ name: 'self', tensor: x }, { name: 'index', tensor: index }]);
  checkGatherShapes(op, x, d, index);
  checkIndexValues(op, index, x.ndim === 0 ? 1 : x.shape[d]!, d);
  return expand(scalarTensor(x.dtype === bool ? (value ? 1 : 0) : value, x.dtype, x.device), index.shape);
}

/** `t` with `value` written where index points (no checks: the caller's index fits `t`). */
function scatterValue(t: Tensor, d: number, index: Tensor, value: number): Tensor {
  const out = contiguousCopy(t);
  runScatter('scatter', out, d, index, expand(scalarTensor(value, t.dtype, t.device), index.shape), 'assign');
  return record('ScatterBackward', out, [t], (g) => [scatterValue(g, d, index, 0)]);
}

/** The scatter primitive into `out`, in place. */
function runScatter(op: string, out: Tensor, d: number, index: Tensor, src: Tensor, mode: ScatterMode): void {
  const backend = backendOf(out.device);
  requireCompute(backend, out.dtype, op);
  const kernel = requireKernel(backend, 'scatter', op);
  if (index.numel() > 0) kernel(ref(out), d, ref(index), ref(src), mode);
}

/** What a reduction starts from at the positions written to when self is left out. */
function identity(reduce: ScatterReduction, dtype: DType): number {
  switch (reduce) {
    case 'sum': case 'mean': return 0;
    case 'prod': return 1;
    case 'amax': return dtype === bool ? 0 : dtype === int32 ? -2147483648 : -Infinity;
    case 'amin': return dtype === bool ? 1 : dtype === int32 ? 2147483647 : Infinity;
    default: return reduce satisfies never;
  }
}

/** How many values land on each element: self's (when included) and src's, never below 1. */
function counts(x: Tensor, d: number, index: Tensor, includeSelf: boolean): Tensor {
  const dtype = x.dtype.isFloatingPoint ? x.dtype : int32;
  const base = expand(scalarTensor(includeSelf ? 1 : 0, dtype, x.device), x.shape);
  const n = scatterAdd(base, d, index, expand(scalarTensor(1, dtype, x.device), index.shape));
  return where(n.eq(0), 1, n);
}

/** scatterReduce forward under noGrad, then its own backward node. */
function reduced(op: string, x: Tensor, d: number, index: Tensor, src: Tensor, reduce: ScatterReduction, includeSelf: boolean): Tensor {
  const out = noGrad(() => {
    const base = includeSelf ? contiguousCopy(x) : scatterValue(x, d, index, identity(reduce, x.dtype));
    if (reduce === 'prod' || reduce === 'amax' || reduce === 'amin') {
      runScatter(op, base, d, index, src, reduce);
      return base;
    }
    const sum = scatterAdd(base, d, index, src);
    if (reduce === 'sum') return sum;
    const n = counts(x, d, index, includeSelf);
    // Integer means round toward −∞ like PyTorch's (computed through float32: exact while |sum| < 2^24).
    return x.dtype.isFloatingPoint ? binary('div', sum, n) : cast(unary('floor', binary('div', sum, n)), x.dtype);
  });
  return record('ScatterReduceBackward', out, [x, index, src], (g) => scatterReduceGrad(g, x, d, index, src, out, reduce, includeSelf), [x, index, src, out]);
}

/** PyTorch's scatter_reduce_backward: the gradients of self and src. */
function scatterReduceGrad(g: Tensor, x: Tensor, d: number, index: Tensor, src: Tensor, out: Tensor, reduce: ScatterReduction, includeSelf: boolean): (Tensor | null)[] {
  // Only the part of src that index reaches takes part; the rest gets a zero gradient (srcGradient).
  const used = index.ndim === 0 ? src : index.shape.reduce((t, size, dim) => narrow(t, dim, 0, size), src);
  let gSelf: Tensor;
  let gSrc: Tensor;
  switch (reduce) {
    case 'sum':
      gSelf = g;
      gSrc = gather(g, d, index);
      break;
    case 'mean': {
      const n = counts(x, d, index, includeSelf);
      gSelf = g.div(n);
      gSrc = gather(g, d, index).div(gather(n, d, index));
      break;
    }
    case 'prod': {
      // Zeros of self and single zeros of src get the product of the others, as PyTorch computes it.
      const maskedSelf = where(x.eq(0), 1, x);
      gSelf = g.mul(reduced('scatterReduce', maskedSelf, d, index, used, 'prod', includeSelf)).div(maskedSelf);
      const srcZero = used.eq(0);
      const zerosPerTarget = gather(scatterAdd(g.mul(0), d, index, cast(srcZero, g.dtype)), d, index);
      const singleZero = srcZero.logicalAnd(zerosPerTarget.eq(1));
      const othersAtZero = reduced('scatterReduce', x, d, index, where(singleZero, 1, used), 'prod', includeSelf);
      gSrc = where(singleZero, gather(g.mul(othersAtZero), d, index), gather(g.mul(out), d, index).div(where(srcZero, 1, used)));
      break;
    }
    case 'amax':
    case 'amin': {
      // Ties share the gradient evenly among self (when included) and the src values equal to the result.
      const value = gather(out, d, index);
      const selfIs = includeSelf ? cast(x.eq(out), g.dtype) : scatterValue(cast(x.eq(out), g.dtype), d, index, 0);
      const srcIs = cast(used.eq(value), g.dtype);
      const share = g.div(scatterAdd(selfIs, d, index, srcIs));
      gSelf = selfIs.mul(share);
      gSrc = srcIs.mul(gather(share, d, index));
      break;
    }
    default: return reduce satisfies never;
  }
  if (!includeSelf) gSelf = scatterValue(gSelf, d, index, 0);
  return [x.requiresGrad ? gSelf : null, null, src.requiresGrad ? srcGradient(gSrc, src) : null];
}
