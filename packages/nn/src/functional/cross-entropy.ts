// F.nllLoss and F.crossEntropy with PyTorch's exact reductions: the weighted mean divides by the
// summed weights of the non-ignored targets; label smoothing mixes in the uniform distribution as
// (1 − ε)·nll + ε/C·smooth, where smooth = −Σ_c w_c·log p_c. Class indices are int32.
import { DTypeError, int32, ShapeError, ValueError, where, type Tensor } from '@core/tensor';
import { checkFloating, checkReduction, checkTensor, sameShape, shapeText, type Reduction } from '../internal/args.js';
import { checkSameDevice } from '@core/tensor';
import { autocastOp, fusedCrossEntropy, isCompiling } from '@core/tensor';

/** nllLoss's options (PyTorch's keyword arguments). */
export interface NLLLossOptions {
  /** A rescaling weight per class, shape [C]. */
  readonly weight?: Tensor | null;
  /** Targets equal to this contribute nothing (and are not counted by the mean). */
  readonly ignoreIndex?: number;
  /** 'mean' (default; weighted by the class weights), 'sum', or 'none' (one loss per target). */
  readonly reduction?: Reduction;
}

/** crossEntropy's options: nllLoss's plus label smoothing. */
export interface CrossEntropyOptions extends NLLLossOptions {
  /** ε in [0, 1]: the target becomes (1 − ε)·one-hot + ε/C. */
  readonly labelSmoothing?: number;
}

/** The class dim: 1 for [N, C, …], 0 for an unbatched [C] input. */
function classDimOf(input: Tensor, op: string): number {
  if (input.ndim === 0) throw new ShapeError(`${op}(): expected input of shape [N, C], [N, C, d1, …] or [C], got a 0-dim tensor`, op);
  return input.ndim === 1 ? 0 : 1;
}

function checkWeight(weight: Tensor | null | undefined, classes: number, op: string): void {
  if (weight == null) return;
  checkTensor(weight, 'weight', op);
  if (weight.ndim !== 1 || weight.shape[0] !== classes) {
    throw new ShapeError(`${op}(): weight tensor should be defined either for all ${classes} classes or no classes but got weight tensor of shape: ${shapeText(weight.shape)}`, op);
  }
}

/** The target shape class indices must have: the input's shape without the class dim. */
function checkIndexTarget(input: Tensor, target: Tensor, classDim: number, op: string): void {
  const expected = input.shape.filter((_, i) => i !== classDim);
  if (target.dtype !== int32) {
    const probabilities = op === 'crossEntropy' ? ` — or, for class probabilities, a floating target of the input's shape ${shapeText(input.shape)}` : '';
    throw new DTypeError(
      `${op}(): expected target of dtype int32 (class indices), got ${target.dtype.name} with shape ${shapeText(target.shape)} ` +
        `(input has shape ${shapeText(input.shape)}); convert labels with target.int()${probabilities}`,
      op,
      target.dtype.name,
    );
  }
  if (!sameShape(target.shape, expected)) {
    const batch = input.ndim > 1 && target.ndim > 0 && target.shape[0] !== input.shape[0]
      ? `Expected input batch_size (${input.shape[0]}) to match target batch_size (${target.shape[0]}). ` : '';
    throw new ShapeError(
      `${op}(): ${batch}Expected target of shape ${shapeText(expected)} (the input's shape ${shapeText(input.shape)} without the class dim ${classDim}), got ${shapeText(target.shape)}`,
      op,
    );
  }
}

/**
 * Class indices must be in [0, C) or equal ignoreIndex: checked where the data can be read
 * synchronously, but not while a compiled function is captured (its replays could not repeat a
 * host check: as on the other devices, the kernels get the indices unchecked).
 */
function checkClassRange(target: Tensor, classes: number, ignoreIndex: number, op: string): void {
  if (target.device.type !== 'cpu' || target.numel() === 0 || isCompiling()) return;
  const values = target.dataSync();
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== ignoreIndex && (v < 0 || v >= classes)) {
      throw new ValueError(
        `${op}(): Target ${v} is out of bounds: class indices must be in [0, ${classes - 1}] (input has ${classes} classes) or equal ignoreIndex (${ignoreIndex}); found at flat position ${i}`,
      );
    }
  }
}

interface Picked {
  /** −w[y]·logp[y] per target element, 0 where ignored. */
  readonly losses: Tensor;
  /** w[y] per target element (1 without weights), 0 where ignored: the mean's denominator terms. */
  readonly weights: Tensor;
  /** 1 where the target is not ignored, else 0. */
  readonly valid: Tensor;
}

function pickTargets(logp: Tensor, target: Tensor, weight: Tensor | null | undefined, ignoreIndex: number, classDim: number): Picked {
  const validMask = target.ne(ignoreIndex);
  const safe = where(validMask, target, 0); // ignored targets read class 0, then get weight 0
  const valid = validMask.to(logp.dtype);
  const weights = weight != null ? weight.to(logp.dtype).indexSelect(0, safe.reshape([-1])).reshape(target.shape).mul(valid) : valid;
  const picked = logp.gather(classDim, safe.unsqueeze(classDim)).squeeze(classDim);
  return { losses: picked.neg().mul(weights), weights, valid };
}

function reduceWeighted(losses: Tensor, denominator: Tensor, reduction: Reduction): Tensor {
  switch (reduction) {
    case 'none': return losses;
    case 'sum': return losses.sum();
    case 'mean': return losses.sum().div(denominator.sum());
    default: return reduction satisfies never;
  }
}

/** Negative log likelihood of log-probabilities at int32 class indices. Autocast: float32 (AC-9). */
export function nllLoss(input: Tensor, target: Tensor, options: NLLLossOptions = {}): Tensor {
  return autocastOp('nllLoss', [input, target] as const, (x, t) => nllLossImpl(x, t, options));
}

/** Negative log likelihood of log-probabilities `input` ([N, C, …] or [C]) at int32 class indices. */
function nllLossImpl(input: Tensor, target: Tensor, options: NLLLossOptions = {}): Tensor {
  const { weight, ignoreIndex = -100 } = options;
  const reduction = checkReduction(options.reduction ?? 'mean', 'nllLoss');
  checkTensor(input, 'input', 'nllLoss');
  checkTensor(target, 'target', 'nllLoss');
  checkFloating(input, 'input', 'nllLoss');
  const classDim = classDimOf(input, 'nllLoss');
  checkSameDevice('nllLoss', [{ name: 'input', tensor: input }, { name: 'target', tensor: target }, { name: 'weight', tensor: weight }]);
  checkIndexTarget(input, target, classDim, 'nllLoss');
  checkWeight(weight, input.shape[classDim]!, 'nllLoss');
  checkClassRange(target, input.shape[classDim]!, ignoreIndex, 'nllLoss');
  const { losses, weights } = pickTargets(input, target, weight, ignoreIndex, classDim);
  return reduceWeighted(losses, weights, reduction);
}

/** Cross entropy of logits against class indices or probabilities. Autocast: float32 (AC-9). */
export function crossEntropy(input: Tensor, target: Tensor, options: CrossEntropyOptions = {}): Tensor {
  return autocastOp('crossEntropy', [input, target] as const, (x, t) => crossEntropyImpl(x, t, options));
}

/**
 * Cross entropy of logits `input` ([N, C, …] or [C]) against int32 class indices ([N, …]), or
 * against class probabilities (a floating target of the input's shape).
 */
function crossEntropyImpl(input: Tensor, target: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const { weight, ignoreIndex = -100, labelSmoothing = 0 } = options;
  const reduction = checkReduction(options.reduction ?? 'mean', 'crossEntropy');
  checkTensor(input, 'input', 'crossEntropy');
  checkTensor(target, 'target', 'crossEntropy');
  checkFloating(input, 'input', 'crossEntropy');
  const classDim = classDimOf(input, 'crossEntropy');
  const classes = input.shape[classDim]!;
  if (typeof labelSmoothing !== 'number' || !(labelSmoothing >= 0 && labelSmoothing <= 1)) {
    throw new ValueError(`crossEntropy(): labelSmoothing must be between 0.0 and 1.0. Got: ${labelSmoothing}`);
  }
  checkSameDevice('crossEntropy', [{ name: 'input', tensor: input }, { name: 'target', tensor: target }, { name: 'weight', tensor: weight }]);
  checkWeight(weight, classes, 'crossEntropy');
  if (weight == null && target.dtype === int32) {
    // The common case, through the backend's fused kernel when it has one (same semantics).
    checkIndexTarget(input, target, classDim, 'crossEntropy');
    checkClassRange(target, classes, ignoreIndex, 'crossEntropy');
    const fused = fusedCrossEntropy(input, target, { ignoreIndex, labelSmoothing, reduction });
    if (fused) return fused;
  }
  const logp = input.logSoftmax(classDim);
  const classWeights = weight != null ? weight.to(logp.dtype).reshape(input.shape.map((s, i) => (i === classDim ? s : 1))) : null;
  if (target.dtype.isFloatingPoint && sameShape(target.shape, input.shape)) {
    if (ignoreIndex >= 0) throw new ValueError('crossEntropy(): ignoreIndex is not supported for floating point target (class probabilities)');
    return probabilityTargets(logp, target, classWeights, labelSmoothing, reduction, classDim);
  }
  checkIndexTarget(input, target, classDim, 'crossEntropy');
  checkClassRange(target, classes, ignoreIndex, 'crossEntropy');
  const { losses, weights, valid } = pickTargets(logp, target, weight, ignoreIndex, classDim);
  const nll = reduceWeighted(losses, weights, reduction);
  if (labelSmoothing === 0) return nll;
  // −Σ_c w_c·log p_c per element, zero where ignored; the mean divides like nll's (PyTorch).
  const smooth = (classWeights ? logp.mul(classWeights) : logp).sum(classDim).neg().mul(valid);
  const smoothReduced = reduceWeighted(smooth, weight != null ? weights : valid, reduction);
  return nll.mul(1 - labelSmoothing).add(smoothReduced.mul(labelSmoothing / classes));
}

/** −Σ_c w_c·t_c·log p_c; the mean divides by the number of elements per class (N·d…). */
function probabilityTargets(logp: Tensor, target: Tensor, classWeights: Tensor | null, labelSmoothing: number, reduction: Reduction, classDim: number): Tensor {
  const classes = logp.shape[classDim]!;
  const t = labelSmoothing > 0 ? target.mul(1 - labelSmoothing).add(labelSmoothing / classes) : target;
  const terms = classWeights ? logp.mul(t).mul(classWeights) : logp.mul(t);
  switch (reduction) {
    case 'none': return terms.sum(classDim).neg();
    case 'sum': return terms.sum().neg();
    case 'mean': return terms.sum().neg().div(logp.numel() / classes);
    default: return reduction satisfies never;
  }
}
