// softmax and logSoftmax: a fused kernel when the backend has one, else the decomposition
// exp(x − max) / Σ exp(x − max), computed in f32 for half types and rounded once.
import { inheritSite } from '../tensor/site.js';
import { fusedKernel } from '../dispatch/fused.js';
import { float32, float64, type DType } from '../dtype/dtype.js';
import { DTypeError } from '../errors/errors.js';
import { allocate, backendOf, ref, requireCompute } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { binary, cast, unary } from './elementwise.js';
import { amax, sum } from './reduce.js';
import { record } from '../autograd/engine.js';
import { autocastOp } from '../amp/autocast.js';

function run(op: 'softmax' | 'logSoftmax', x: Tensor, dim: number): Tensor {
  if (!x.dtype.isFloatingPoint) {
    throw new DTypeError(`${op}(): expected a floating point tensor, got ${x.dtype.name}; use x.float().${op}(${dim})`, op, x.dtype.name);
  }
  const d = normalizeDim(dim, x.ndim, op);
  inheritSite(x._site);
  const backend = backendOf(x.device);
  requireCompute(backend, x.dtype, op);
  if (x.numel() === 0) return allocate(x.shape, x.dtype, x.device);
  const fused = fusedKernel(backend, op);
  if (fused) {
    const out = allocate(x.shape, x.dtype, x.device);
    const axis = x.ndim === 0 ? null : d;
    fused(ref(x), x.ndim === 0 ? 0 : d, ref(out));
    // softmax: dx = y·(g − Σ g·y); logSoftmax: dx = g − exp(y)·Σ g.
    return record(`${op}Backward`, out, [x], (g) => [op === 'softmax'
      ? binary('mul', out, binary('sub', g, sum(binary('mul', g, out), axis, true)))
      : binary('sub', g, binary('mul', unary('exp', out), sum(g, axis, true)))], [out]);
  }
  const work = x.dtype === float64 ? x : cast(x, float32);
  const shifted = binary('sub', work, amax('max', work, x.ndim === 0 ? null : d, true));
  const exps = unary('exp', shifted);
  const total = sum(exps, x.ndim === 0 ? null : d, true);
  const result = op === 'softmax' ? binary('div', exps, total) : binary('sub', shifted, unary('log', total));
  return cast(result, x.dtype);
}

/** Softmax along `dim`; `dtype` casts the input first (and, like PyTorch, bypasses autocast, AC-10). */
export function softmax(x: Tensor, dim: number, dtype?: DType): Tensor {
  if (dtype) return softmaxImpl(cast(x, dtype), dim);
  return autocastOp('softmax', [x] as const, (t) => softmaxImpl(t, dim));
}

function softmaxImpl(x: Tensor, dim: number): Tensor {
  return run('softmax', x, dim);
}

export function logSoftmax(x: Tensor, dim: number, dtype?: DType): Tensor {
  if (dtype) return logSoftmaxImpl(cast(x, dtype), dim);
  return autocastOp('logSoftmax', [x] as const, (t) => logSoftmaxImpl(t, dim));
}

function logSoftmaxImpl(x: Tensor, dim: number): Tensor {
  return run('logSoftmax', x, dim);
}
