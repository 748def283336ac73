// `torch.linalg` as `linalg` (API.md's naming rule: torch.linalg.vector_norm → linalg.vectorNorm).
import type { DType } from '../dtype/dtype.js';
import type { Tensor } from '../tensor/tensor.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { checkCompute } from '../dispatch/run.js';
import { vectorNorm, vectorNormArguments } from './decompositions.js';

/** The options of `linalg.vectorNorm`: its positional parameters by name, and `dtype`. */
export interface VectorNormOptions {
  /** The order: 2 by default; Infinity and -Infinity give the max and min of |x|, 0 the count of non-zeros. */
  readonly ord?: number;
  /** The dims to reduce (all when null or omitted). */
  readonly dim?: number | readonly number[] | null;
  /** Keep the reduced dims as size 1. */
  readonly keepdim?: boolean;
  /** Cast the input to this floating dtype first (then autocast leaves the call alone, AC-10). */
  readonly dtype?: DType;
}

/**
 * `(Σ|x|^ord)^(1/ord)` over `dim` (every element when omitted), PyTorch's
 * `torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)`. Floating inputs
 * only; half types are computed in float32 and rounded once. In a CUDA (and webgpu) autocast
 * region it runs in float32 unless `dtype` is given (AC-10). The gradient is zero (not NaN) where
 * the norm is zero.
 */
function vectorNormFn(
  x: Tensor,
  ord?: number | VectorNormOptions,
  dim?: number | readonly number[] | null | VectorNormOptions,
  keepdim?: boolean | VectorNormOptions,
  options?: VectorNormOptions,
): Tensor {
  const given: unknown[] = [x, ord, dim, keepdim, options];
  while (given.length > 1 && given[given.length - 1] === undefined) given.pop(); // the keyword object comes last
  const [input, ...rest] = vectorNormArguments(given);
  checkCompute('linalg.vectorNorm', input); // half types are computed in float32, but the device must compute them
  const dtype = rest[3];
  if (autocastIdle() || dtype !== undefined) return vectorNorm(input, ...rest);
  return autocastOp('linalg.vectorNorm', [input] as const, (t) => vectorNorm(t, ...rest));
}

/** PyTorch's `torch.linalg` functions, by their names in camelCase. */
export const linalg = {
  /**
   * `(Σ|x|^ord)^(1/ord)` over `dim` (every element when omitted), PyTorch's
   * `torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)`; any parameter
   * may be given by name in a trailing options object.
   */
  vectorNorm: vectorNormFn,
} as const;
