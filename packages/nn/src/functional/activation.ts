// Activations and (log-)softmax. GELU's exact form uses erf; every op here is differentiated
// through the core ops it is written in, with PyTorch's derivative at each kink (the branch a
// `where` takes there is the one PyTorch's backward formula uses).
import { autocastOp, checkSameDevice, ShapeError, ValueError, where, type DType, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkTensor, dimIndex, type Args } from '../internal/args.js';

/** max(0, x), elementwise. */
export function relu(input: Tensor): Tensor {
  checkTensor(input, 'input', 'relu');
  return input.relu();
}

/** GELU's form: 'none' (exact, with erf) or 'tanh' (the tanh approximation). */
export type GeluApproximate = 'none' | 'tanh';

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** x·Φ(x) = ½x(1 + erf(x/√2)); `approximate: 'tanh'` uses ½x(1 + tanh(√(2/π)(x + 0.044715x³))). */
export function gelu(input: Tensor, ...args: Args<[approximate: GeluApproximate], { approximate?: GeluApproximate }>): Tensor {
  const { approximate = 'none' } = bindArgs<{ approximate: GeluApproximate }>('gelu', ['approximate'], args);
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

/** SELU's α and λ (Klambauer et al.), as PyTorch's. */
const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;

/** scale·x for x > 0, scale·alpha·(e^x − 1) otherwise; the derivative at 0 is the left one, scale·alpha (PyTorch's elu_backward). */
function scaledElu(input: Tensor, alpha: number, scale: number, op: 'elu' | 'selu'): Tensor {
  checkTensor(input, 'input', op);
  checkFloating(input, 'input', op);
  return autocastOp(op, [input] as const, (x) => (scale === 1 ? x : x.mul(scale)).where(x.gt(0), x.expm1().mul(alpha * scale)));
}

/** x for x > 0, alpha·(e^x − 1) otherwise (the exponential linear unit). */
export function elu(input: Tensor, ...args: Args<[alpha: number], { alpha?: number }>): Tensor {
  const { alpha = 1 } = bindArgs<{ alpha: number }>('elu', ['alpha'], args);
  return scaledElu(input, alpha, 1, 'elu');
}

/** scale·elu(x, alpha) with the self-normalising constants α ≈ 1.6733, scale ≈ 1.0507. */
export function selu(input: Tensor): Tensor {
  return scaledElu(input, SELU_ALPHA, SELU_SCALE, 'selu');
}

/** log(1 + e^z) = log1p(e^−|z|) + max(z, 0): no overflow for large |z|, and derivative σ(0) = ½ at 0. */
export function logOnePlusExp(z: Tensor): Tensor {
  return z.abs().neg().exp().log1p().add(z.maximum(0));
}

/** softplus's parameters by name. */
export interface SoftplusOptions {
  /** The sharpness β (default 1). */
  readonly beta?: number;
  /** Above this value of β·x the result is x itself (default 20). */
  readonly threshold?: number;
}

/** log(1 + e^(β·x))/β, and x itself where β·x > threshold (a smooth relu). Autocast: by its name's class in the region's policy table (PyTorch: float32 on GPUs, AC-9). */
export function softplus(input: Tensor, ...args: Args<[beta: number, threshold: number], SoftplusOptions>): Tensor {
  const { beta = 1, threshold = 20 } = bindArgs<SoftplusOptions>('softplus', ['beta', 'threshold'], args);
  return autocastOp('softplus', [input] as const, (x) => {
    checkTensor(x, 'input', 'softplus');
    checkFloating(x, 'input', 'softplus');
    const z = beta === 1 ? x : x.mul(beta);
    const soft = logOnePlusExp(z);
    return (beta === 1 ? soft : soft.div(beta)).where(z.le(threshold), x);
  });
}

/** x·tanh(softplus(x)) (Misra). */
export function mish(input: Tensor): Tensor {
  checkTensor(input, 'input', 'mish');
  checkFloating(input, 'input', 'mish');
  return autocastOp('mish', [input] as const, (x) => x.mul(logOnePlusExp(x).tanh()));
}

/** 0 for x < −3, x for x > 3, x·(x + 3)/6 between: derivative (2x + 3)/6 on [−3, 3], bounds included, as PyTorch's. */
export function hardswish(input: Tensor): Tensor {
  checkTensor(input, 'input', 'hardswish');
  checkFloating(input, 'input', 'hardswish');
  return autocastOp('hardswish', [input] as const, (x) => x.mul(x.add(3)).div(6).where(x.le(3), x).where(x.ge(-3), 0));
}

/** 0 for x ≤ −3, 1 for x ≥ 3, x/6 + ½ between: derivative 1/6 strictly inside (−3, 3) only, as PyTorch's. */
export function hardsigmoid(input: Tensor): Tensor {
  checkTensor(input, 'input', 'hardsigmoid');
  checkFloating(input, 'input', 'hardsigmoid');
  return autocastOp('hardsigmoid', [input] as const, (x) => x.add(3).div(6).where(x.lt(3), 1).where(x.gt(-3), 0));
}

/**
 * x for x > 0, weight·x otherwise, with one learned slope per channel (dim 1) or one for all.
 * `weight` has 1 or C elements. Autocast: by its name's class in the region's policy table (PyTorch: lower precision, AC-8).
 */
export function prelu(input: Tensor, weight: Tensor): Tensor {
  return autocastOp('prelu', [input, weight] as const, (x, w) => {
    checkTensor(x, 'input', 'prelu');
    checkTensor(w, 'weight', 'prelu');
    checkSameDevice('prelu', [{ name: 'weight', tensor: w }, { name: 'input', tensor: x }]);
    checkFloating(x, 'input', 'prelu');
    if (w.ndim > 1) throw new ShapeError(`prelu(): Expected \`weight\` to be a scalar or 1D tensor, but got ndim = ${w.ndim}`, 'prelu');
    const channels = x.ndim >= 2 ? x.shape[1]! : 1;
    if (w.numel() !== 1 && w.numel() !== channels) {
      throw new ShapeError(`prelu(): Mismatch of parameter numbers and input channel size. Found parameter numbers = ${w.numel()} and channel size = ${channels}.`, 'prelu');
    }
    const slope = w.numel() === 1 ? w.reshape([]) : w.reshape([channels, ...x.shape.slice(2).map(() => 1)]);
    return x.where(x.gt(0), x.mul(slope));
  });
}

/** a·σ(b), where a and b are the two halves of `input` along `dim` (the gated linear unit). */
export function glu(input: Tensor, ...args: Args<[dim: number], { dim?: number }>): Tensor {
  const { dim = -1 } = bindArgs<{ dim: number }>('glu', ['dim'], args);
  checkTensor(input, 'input', 'glu');
  checkFloating(input, 'input', 'glu');
  if (input.ndim === 0) throw new ShapeError('glu(): glu does not support scalars because halving size must be even', 'glu');
  const d = dimIndex(dim, input.ndim, 'glu');
  const size = input.shape[d]!;
  if (size % 2 !== 0) throw new ShapeError(`glu(): Halving dimension must be even, but dimension ${d} is size ${size}`, 'glu');
  return autocastOp('glu', [input] as const, (x) => x.narrow(d, 0, size / 2).mul(x.narrow(d, size / 2, size / 2).sigmoid()));
}

/** x / (1 + |x|). */
export function softsign(input: Tensor): Tensor {
  checkTensor(input, 'input', 'softsign');
  return autocastOp('softsign', [input] as const, (x) => x.div(x.abs().add(1)));
}
