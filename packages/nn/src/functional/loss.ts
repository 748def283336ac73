// Regression and binary losses: F.mseLoss, F.binaryCrossEntropy (of probabilities, logs clamped
// at −100 as PyTorch's) and F.binaryCrossEntropyWithLogits (the stable form
// (1 − t)·x + lw·(log(1 + e^−|x|) + max(−x, 0)), lw = 1 + (posWeight − 1)·t).
import { ShapeError, type Tensor } from '@core/tensor';
import { checkFloating, checkReduction, checkTensor, reduce, sameShape, shapeText, type Reduction } from '../internal/args.js';
import { checkSameDevice } from '@core/tensor';
import { autocastOp } from '@core/tensor';

function checkPair(op: string, input: Tensor, target: Tensor): void {
  checkTensor(input, 'input', op);
  checkTensor(target, 'target', op);
  checkSameDevice(op, [{ name: 'input', tensor: input }, { name: 'target', tensor: target }]);
  checkFloating(input, 'input', op);
  if (!sameShape(input.shape, target.shape)) {
    throw new ShapeError(
      `${op}(): Target size (${shapeText(target.shape)}) must be the same as input size (${shapeText(input.shape)}); ` +
        'reshape one of them (e.g. target.reshape(input.shape)) — silently broadcasting them is almost always a bug',
      op,
    );
  }
}

/** Mean (or sum, or elementwise) squared error. Autocast: float32 (AC-9). */
export function mseLoss(input: Tensor, target: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  return autocastOp('mseLoss', [input, target] as const, (x, t) => mseLossImpl(x, t, options));
}

/** Mean (or sum, or elementwise) squared error. */
function mseLossImpl(input: Tensor, target: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  const reduction = checkReduction(options.reduction ?? 'mean', 'mseLoss');
  checkPair('mseLoss', input, target);
  const diff = input.sub(target);
  return reduce(diff.mul(diff), reduction);
}

/** binaryCrossEntropyWithLogits's options (PyTorch's keyword arguments). */
export interface BCEWithLogitsOptions {
  /** Rescales each element's loss; broadcast to the input. */
  readonly weight?: Tensor | null;
  /** Weight of positive examples per class (broadcast over the last dim). */
  readonly posWeight?: Tensor | null;
  /** 'mean' (default), 'sum', or 'none' (one loss per element). */
  readonly reduction?: Reduction;
}

/** Binary cross entropy of logits, σ folded in stably. Autocast: float32 (AC-9). */
export function binaryCrossEntropyWithLogits(input: Tensor, target: Tensor, options: BCEWithLogitsOptions = {}): Tensor {
  return autocastOp('binaryCrossEntropyWithLogits', [input, target] as const, (x, t) => bceWithLogitsImpl(x, t, options));
}

/** Binary cross entropy of logits, σ folded in stably (no overflow for large |x|). */
function bceWithLogitsImpl(input: Tensor, target: Tensor, options: BCEWithLogitsOptions = {}): Tensor {
  const { weight, posWeight } = options;
  const reduction = checkReduction(options.reduction ?? 'mean', 'binaryCrossEntropyWithLogits');
  checkPair('binaryCrossEntropyWithLogits', input, target);
  checkSameDevice('binaryCrossEntropyWithLogits', [{ name: 'input', tensor: input }, { name: 'weight', tensor: weight }, { name: 'posWeight', tensor: posWeight }]);
  // softplus(−x) = log(1 + e^−|x|) + max(−x, 0). `maximum` splits the gradient at a tie, so the
  // derivative at x = 0 is exactly −½ = −σ(0), as PyTorch's explicit backward gives.
  const softplusNeg = input.abs().neg().exp().log1p().add(input.neg().maximum(0));
  const logWeight = posWeight != null ? posWeight.sub(1).mul(target).add(1) : null;
  let loss = target.neg().add(1).mul(input).add(logWeight ? softplusNeg.mul(logWeight) : softplusNeg);
  if (weight != null) loss = loss.mul(weight);
  return reduce(loss, reduction);
}

/** binaryCrossEntropy's options (PyTorch's keyword arguments). */
export interface BCEOptions {
  /** Rescales each element's loss; broadcast to the input. */
  readonly weight?: Tensor | null;
  /** 'mean' (default), 'sum', or 'none' (one loss per element). */
  readonly reduction?: Reduction;
}

/**
 * Binary cross entropy of probabilities in [0, 1]: `−w·(t·log p + (1 − t)·log(1 − p))`, each log
 * clamped at −100 as PyTorch's, so p = 0 or 1 gives a finite loss. Prefer
 * `binaryCrossEntropyWithLogits` after a sigmoid: it is stabler, and it is the one autocast allows
 * (this one is banned in CUDA and WebGPU regions, AC-13, and float32 in CPU regions, AC-9).
 */
export function binaryCrossEntropy(input: Tensor, target: Tensor, options: BCEOptions = {}): Tensor {
  return autocastOp('binaryCrossEntropy', [input, target] as const, (x, t) => bceImpl(x, t, options));
}

function bceImpl(input: Tensor, target: Tensor, options: BCEOptions): Tensor {
  const reduction = checkReduction(options.reduction ?? 'mean', 'binaryCrossEntropy');
  checkPair('binaryCrossEntropy', input, target);
  checkSameDevice('binaryCrossEntropy', [{ name: 'input', tensor: input }, { name: 'weight', tensor: options.weight }]);
  let loss = target.mul(clampedLog(input)).add(target.neg().add(1).mul(clampedLog(input.neg().add(1)))).neg();
  if (options.weight != null) loss = loss.mul(options.weight);
  return reduce(loss, reduction);
}

/**
 * max(log p, −100). Where p = 0 the log is taken of 1 instead and replaced by −100, so its backward
 * (g/p) never divides 0 by 0. Where the clamp applies (p ≤ e^−100, 0 included) the gradient is 0,
 * where PyTorch's explicit rule gives (p − t)/max(p(1 − p), 1e-12); everywhere else they agree.
 */
function clampedLog(p: Tensor): Tensor {
  const positive = p.gt(0);
  return p.where(positive, 1).log().clamp(-100).where(positive, -100);
}
