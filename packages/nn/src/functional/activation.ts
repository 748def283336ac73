// Activations and (log-)softmax. GELU's exact form uses erf; every op here is differentiated
// through the core ops it is written in.
import { ValueError, where, type DType, type Tensor } from '@core/tensor';
import { checkTensor } from '../internal/args.js';

/** max(0, x), elementwise. */
export function relu(input: Tensor): Tensor {
  checkTensor(input, 'input', 'relu');
  return input.relu();
}

/** GELU's form: 'none' (exact, with erf) or 'tanh' (the tanh approximation). */
export type GeluApproximate = 'none' | 'tanh';

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** x·Φ(x) = ½x(1 + erf(x/√2)); `approximate: 'tanh'` uses ½x(1 + tanh(√(2/π)(x + 0.044715x³))). */
export function gelu(input: Tensor, { approximate = 'none' }: { approximate?: GeluApproximate } = {}): Tensor {
  checkTensor(input, 'input', 'gelu');
  const half = input.mul(0.5);
  if (approximate === 'tanh') {
    const inner = input.add(input.mul(input).mul(input).mul(0.044715)).mul(SQRT_2_OVER_PI);
    return half.mul(inner.tanh().add(1));
  }
  if (approximate !== 'none') throw new ValueError(`gelu(): approximate must be 'none' or 'tanh', got ${JSON.stringify(approximate)}`);
  return half.mul(input.mul(Math.SQRT1_2).erf().add(1));
}

/** Hyperbolic tangent, elementwise. */
export function tanh(input: Tensor): Tensor {
  checkTensor(input, 'input', 'tanh');
  return input.tanh();
}

/** The logistic function 1 / (1 + e^-x), elementwise. */
export function sigmoid(input: Tensor): Tensor {
  checkTensor(input, 'input', 'sigmoid');
  return input.sigmoid();
}

/** max(0, x) + negativeSlope·min(0, x). */
export function leakyRelu(input: Tensor, negativeSlope = 0.01): Tensor {
  checkTensor(input, 'input', 'leakyRelu');
  return where(input.gt(0), input, input.mul(negativeSlope));
}

/** x·σ(x) (a.k.a. swish). */
export function silu(input: Tensor): Tensor {
  checkTensor(input, 'input', 'silu');
  return input.mul(input.sigmoid());
}

/** Options of `softmax` and `logSoftmax`. */
export interface SoftmaxOptions {
  /** Cast the input to this dtype first (PyTorch's `dtype=`), e.g. float32 for half inputs. */
  readonly dtype?: DType;
}

/** e^x / Σ e^x along `dim`, computed stably. */
export function softmax(input: Tensor, dim: number, { dtype }: SoftmaxOptions = {}): Tensor {
  checkTensor(input, 'input', 'softmax');
  return input.softmax(dim, { dtype });
}

/** log(softmax(x)) along `dim`, computed stably (use it with nllLoss, or crossEntropy on logits). */
export function logSoftmax(input: Tensor, dim: number, { dtype }: SoftmaxOptions = {}): Tensor {
  checkTensor(input, 'input', 'logSoftmax');
  return input.logSoftmax(dim, { dtype });
}
