// F.dropout and its channel-wise and self-normalising forms. Inverted dropout: each element (or
// whole channel) is kept with probability 1 − p and scaled by 1/(1 − p), so eval mode is the
// identity. Masks come from the seeded generator: rand(shape) < 1 − p.
import { freeingTemporaries, full, rand, releaseWithGraph, ShapeError, ValueError, where, type Generator, type Tensor } from '@core/tensor';
import { bindArgs, checkTensor, shapeText, type Args } from '../internal/args.js';

/** dropout's options. */
export interface DropoutOptions {
  /** Defaults to the global generator (`manualSeed`). */
  readonly generator?: Generator;
}

/** The dropout functions' parameters by name. */
export interface DropoutArgs extends DropoutOptions {
  /** The probability of zeroing an element (or channel). */
  readonly p?: number;
  /** Apply dropout (true) or return the input unchanged (false). */
  readonly training?: boolean;
}

type DropoutCall = Args<[p: number, training: boolean], DropoutArgs>;

/** Check the input and bind p, training and the generator. */
function dropoutArgs(op: string, input: Tensor, args: readonly unknown[], trainingDefault: boolean): { p: number; training: boolean; generator: Generator | undefined } {
  const { p = 0.5, training = trainingDefault, generator } = bindArgs<DropoutArgs>(op, ['p', 'training'], args, ['generator']);
  checkTensor(input, 'input', op);
  checkProbability(p);
  return { p, training, generator };
}

/** PyTorch's check of a dropout probability. */
export function checkProbability(p: unknown): asserts p is number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new ValueError(`dropout probability has to be between 0 and 1, but got ${String(p)}`);
}

/** True where kept (probability 1 − p), of `shape` (broadcast against the input), on its device. */
function keeps(input: Tensor, shape: readonly number[], p: number, generator: Generator | undefined): Tensor {
  return rand(shape, { device: input.device, ...(generator ? { generator } : {}) }).lt(1 - p);
}

/** 1 where kept, else 0, in `input`'s dtype. */
function keepMask(input: Tensor, shape: readonly number[], p: number, generator: Generator | undefined): Tensor {
  return keeps(input, shape, p, generator).to(input.dtype);
}

/** The kept elements' scale 1/(1 − p), in the input's dtype, and zeros elsewhere: one select rather than a cast of the bool mask and a multiply, with the same bits. */
function scaledKeepMask(input: Tensor, shape: readonly number[], p: number, generator: Generator | undefined): Tensor {
  return where(keeps(input, shape, p, generator), full([], 1 / (1 - p), { dtype: input.dtype, device: input.device }), 0);
}

/**
 * `input` times the scaled mask of `shape`. The uniform draws and the bool mask are freed as soon as
 * the mask is made, the mask once autograd is done with it: none of them reaches user code.
 */
function scaledByKeepMask(input: Tensor, shape: readonly number[], p: number, generator: Generator | undefined): Tensor {
  let mask: Tensor | undefined;
  freeingTemporaries(() => (mask = scaledKeepMask(input, shape, p, generator)), (t) => t === mask);
  const out = input.mul(mask!);
  releaseWithGraph(mask!);
  return out;
}

/**
 * Zero each element with probability `p` and scale the rest by 1/(1 − p) (inverted dropout); the identity when `training` is false.
 */
export function dropout(input: Tensor, ...args: DropoutCall): Tensor {
  const { p, training, generator } = dropoutArgs('dropout', input, args, true);
  if (!training || p === 0) return input;
  if (p === 1) return input.mul(0);
  return scaledByKeepMask(input, input.shape, p, generator);
}

/** Zero whole channels (dim 1 of [N, C, *]) with probability p, scaling the kept ones by 1/(1 − p). */
function featureDropout(input: Tensor, p: number, training: boolean, generator: Generator | undefined): Tensor {
  if (!training || p === 0) return input;
  if (p === 1) return input.mul(0);
  const maskShape = input.shape.map((s, i) => (i < 2 ? s : 1));
  return scaledByKeepMask(input, maskShape, p, generator);
}

/** Channel-wise dropout of [N, C, L] or unbatched [C, L] input: each channel zeroed whole with probability p. */
export function dropout1d(input: Tensor, ...args: DropoutCall): Tensor {
  const { p, training, generator } = dropoutArgs('dropout1d', input, args, true);
  if (input.ndim !== 2 && input.ndim !== 3) {
    throw new ShapeError(
      `dropout1d(): Expected 2D or 3D input, but received a ${input.ndim}D input of shape ${shapeText(input.shape)}. Note that dropout1d exists to provide channel-wise ` +
        'dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).',
      'dropout1d',
    );
  }
  if (input.ndim === 3) return featureDropout(input, p, training, generator);
  return featureDropout(input.unsqueeze(0), p, training, generator).squeeze(0);
}

/**
 * Channel-wise dropout of [N, C, H, W] input: each channel zeroed whole with probability p. As in
 * PyTorch 1.13, a 3-D input is taken as [N, C, L] (use dropout1d for that), not as unbatched.
 */
export function dropout2d(input: Tensor, ...args: DropoutCall): Tensor {
  const { p, training, generator } = dropoutArgs('dropout2d', input, args, true);
  if (input.ndim < 2) throw new ShapeError(`dropout2d(): Feature dropout requires at least 2 dimensions in the input, got ${shapeText(input.shape)}`, 'dropout2d');
  return featureDropout(input, p, training, generator);
}

/** SELU's α·λ: a dropped element becomes −α·λ before the affine correction. */
const ALPHA_DROPOUT_VALUE = 1.7580993408473766;

/**
 * Dropout that keeps SELU's self-normalising mean and variance: dropped elements become
 * −α·λ, then a·x + b restores zero mean and unit variance, a = 1/√((α²λ²p + 1)(1 − p)).
 * `training` defaults to false, as PyTorch's `F.alpha_dropout`.
 */
export function alphaDropout(input: Tensor, ...args: DropoutCall): Tensor {
  const { p, training, generator } = dropoutArgs('alphaDropout', input, args, false);
  if (!training || p === 0 || input.numel() === 0) return input;
  if (p === 1) return input.mul(0);
  const alpha = ALPHA_DROPOUT_VALUE;
  const a = 1 / Math.sqrt((alpha * alpha * p + 1) * (1 - p));
  const keep = keepMask(input, input.shape, p, generator);
  // PyTorch's b = (keep − 1)·α·a + α·a·p, added to x·keep·a.
  const b = keep.sub(1).mul(alpha * a).add(alpha * a * p);
  return input.mul(keep.mul(a)).add(b);
}
