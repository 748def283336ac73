// cumsum and cumprod on the cumulative primitive. Integer and bool inputs run in int32 (PyTorch:
// int64), floats keep their dtype and accumulate like reductions (f32 for half types, rounded once
// per output). In a CUDA (and webgpu) autocast region both run in float32 unless a dtype is given
// (fp32_set_opt_dtype, AC-10); CPU regions leave them alone.
import type { CumulativeOp } from '../backend/contract.js';
import { DTYPES, int32, type DType } from '../dtype/dtype.js';
import { iteratorDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute, requireKernel } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { record } from '../autograd/engine.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { bindArguments, intArgument, required } from './arguments.js';
import { cast, where } from './elementwise.js';
import { accumulatorOf } from './reduce.js';
import { reshape } from './views.js';

/** `x.cumsum(dim, { dtype })` / `x.cumprod(dim, { dtype })`. */
export function cumulative(op: CumulativeOp, x: Tensor, args: readonly unknown[]): Tensor {
  const a = bindArguments(op, args, ['dim'], ['dtype']);
  const dim = intArgument(op, 'dim', required(op, 'dim', a.dim), 0);
  if (a.dtype !== undefined && !Object.values(DTYPES).includes(a.dtype as DType)) {
    throw new TypeError(`${op}(): argument 'dtype' must be a DType (float32, int32, …), got ${String(a.dtype)}`);
  }
  const dtype = a.dtype as DType | undefined;
  // An explicit dtype bypasses autocast, as PyTorch's fp32_set_opt_dtype does.
  if (dtype !== undefined || autocastIdle()) return running(op, x, dim, dtype);
  return autocastOp(op, [x] as const, (t) => running(op, t, dim));
}

function running(op: CumulativeOp, x: Tensor, dim: number, dtype?: DType): Tensor {
  const input = dtype ? cast(x, dtype) : x.dtype.isFloatingPoint ? x : cast(x, int32);
  const d = normalizeDim(dim, input.ndim, op);
  const { device } = iteratorDevice(op, [{ name: 'self', tensor: input }]);
  const backend = backendOf(device);
  requireCompute(backend, input.dtype, op);
  const kernel = requireKernel(backend, 'cumulative', op);
  const out = allocate(input.shape, input.dtype, device);
  const vector = (t: Tensor) => (t.ndim === 0 ? reshape(t, [1]) : t);
  if (out.numel() > 0) kernel(op, ref(vector(input)), d, ref(vector(out)), accumulatorOf(input.dtype));
  if (op === 'cumsum') return record('cumsumBackward', out, [input], (g) => [reverseCumsum(g, d)]);
  return record('cumprodBackward', out, [input], (g) => [cumprodGrad(g, input, out, d)], [input, out]);
}

/** `out[i] = g[i] + … + g[n−1]` along `dim`: cumsum's gradient (differentiable, for double backward). */
function reverseCumsum(g: Tensor, dim: number): Tensor {
  return running('cumsum', g.flip(dim), dim).flip(dim);
}

/**
 * cumprod's gradient, exact with zeros: with z the first zero of a fibre, ∂y_k/∂x_j is y_k/x_j for
 * j < z (where x_j ≠ 0, and y_k = 0 for k ≥ z); for j = z it is the product of the others,
 * Σ_{k≥z} g_k·y'_k with y' the running product of x with x_z replaced by 1; beyond z every product
 * still holds x_z, so it is 0.
 */
function cumprodGrad(g: Tensor, x: Tensor, y: Tensor, dim: number): Tensor {
  const isZero = x.eq(0);
  const zerosSoFar = running('cumsum', isZero, dim);
  const beforeZero = zerosSoFar.eq(0);
  const firstZero = isZero.logicalAnd(zerosSoFar.eq(1));
  const beforeGrad = reverseCumsum(g.mul(y), dim).div(where(beforeZero, x, 1));
  const atZeroGrad = reverseCumsum(g.mul(running('cumprod', where(firstZero, 1, x), dim)), dim);
  return where(beforeZero, beforeGrad, where(firstZero, atZeroGrad, 0));
}
