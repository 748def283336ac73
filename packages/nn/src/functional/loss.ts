// Regression and binary losses: F.mseLoss and F.binaryCrossEntropyWithLogits (the stable form
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
