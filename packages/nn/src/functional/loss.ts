// Regression, binary, divergence and embedding losses: F.mseLoss, F.l1Loss, F.smoothL1Loss,
// F.huberLoss, F.binaryCrossEntropy (of probabilities, logs clamped at −100 as PyTorch's),
// F.binaryCrossEntropyWithLogits (the stable form (1 − t)·x + lw·softplus(−x),
// lw = 1 + (posWeight − 1)·t), F.klDiv, F.cosineEmbeddingLoss and F.marginRankingLoss.
import { checkSameDevice, autocastOp, DTypeError, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkReduction, checkTensor, reduce, sameShape, shapeText, type Args, type Reduction } from '../internal/args.js';
import { logOnePlusExp } from './activation.js';

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

/** The reduction of an elementwise loss (PyTorch's keyword argument). */
export interface ReductionOptions {
  /** 'mean' (default), 'sum', or 'none' (one loss per element). */
  readonly reduction?: Reduction;
}

/** The elementwise losses `loss(|input − target|)` of the regression losses, checked and reduced. */
function regressionLoss(op: string, input: Tensor, target: Tensor, reduction: Reduction, loss: (absDiff: Tensor) => Tensor): Tensor {
  checkReduction(reduction, op);
  checkPair(op, input, target);
  return reduce(loss(input.sub(target).abs()), reduction);
}

/** Mean (or sum, or elementwise) squared error. Autocast: float32 (AC-9). */
export function mseLoss(input: Tensor, target: Tensor, options: ReductionOptions = {}): Tensor {
  const { reduction = 'mean' } = bindArgs<ReductionOptions>('mseLoss', [], [options], ['reduction']);
  return autocastOp('mseLoss', [input, target] as const, (x, t) => regressionLoss('mseLoss', x, t, reduction, (d) => d.mul(d)));
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
  const softplusNeg = logOnePlusExp(input.neg());
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

/** Mean (or sum, or elementwise) absolute error |input − target|. Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9). */
export function l1Loss(input: Tensor, target: Tensor, options: ReductionOptions = {}): Tensor {
  const { reduction = 'mean' } = bindArgs<ReductionOptions>('l1Loss', [], [options], ['reduction']);
  return autocastOp('l1Loss', [input, target] as const, (x, t) => regressionLoss('l1Loss', x, t, reduction, (d) => d));
}

/** smoothL1Loss's options (PyTorch's keyword arguments). */
export interface SmoothL1LossOptions extends ReductionOptions {
  /** Where the loss turns from quadratic to linear (default 1; 0 gives l1Loss). */
  readonly beta?: number;
}

/**
 * ½d²/β where d = |input − target| < β, d − ½β elsewhere (Fast R-CNN's loss); β = 0 is l1Loss.
 * Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9).
 */
export function smoothL1Loss(input: Tensor, target: Tensor, options: SmoothL1LossOptions = {}): Tensor {
  const { reduction = 'mean', beta = 1 } = bindArgs<SmoothL1LossOptions>('smoothL1Loss', [], [options], ['reduction', 'beta']);
  if (typeof beta !== 'number' || !(beta >= 0)) throw new ValueError(`smoothL1Loss(): smooth_l1_loss does not support negative values for beta, got ${beta}`);
  return autocastOp('smoothL1Loss', [input, target] as const, (x, t) => regressionLoss('smoothL1Loss', x, t, reduction, (d) =>
    // β = 0 would divide by zero in the branch `where` drops, and 0·∞ is NaN in its gradient.
    (beta === 0 ? d : d.mul(0.5).mul(d).div(beta).where(d.lt(beta), d.sub(0.5 * beta)))));
}

/** huberLoss's options (PyTorch's keyword arguments). */
export interface HuberLossOptions extends ReductionOptions {
  /** Where the loss turns from quadratic to linear (default 1, must be positive). */
  readonly delta?: number;
}

/** ½d² where d = |input − target| < δ, δ·(d − ½δ) elsewhere: smoothL1Loss scaled by δ. Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9). */
export function huberLoss(input: Tensor, target: Tensor, options: HuberLossOptions = {}): Tensor {
  const { reduction = 'mean', delta = 1 } = bindArgs<HuberLossOptions>('huberLoss', [], [options], ['reduction', 'delta']);
  if (typeof delta !== 'number' || !(delta > 0)) throw new ValueError(`huberLoss(): huber_loss does not support non-positive values for delta, got ${delta}`);
  return autocastOp('huberLoss', [input, target] as const, (x, t) => regressionLoss('huberLoss', x, t, reduction, (d) =>
    d.mul(0.5).mul(d).where(d.lt(delta), d.sub(0.5 * delta).mul(delta))));
}

/** How klDiv reduces: PyTorch's reductions plus 'batchmean' (the sum divided by the batch size). */
export type KLDivReduction = Reduction | 'batchmean';

/** klDiv's options (PyTorch's keyword arguments). */
export interface KLDivOptions {
  /** 'mean' (default: over every element), 'batchmean' (the sum over the batch size, KL's definition), 'sum' or 'none'. */
  readonly reduction?: KLDivReduction;
  /** `target` holds log-probabilities instead of probabilities (default false). */
  readonly logTarget?: boolean;
}

/**
 * The Kullback-Leibler divergence of `target` from the distribution whose log-probabilities are
 * `input`: t·(log t − input) pointwise (0 where t = 0), or e^t·(t − input) with `logTarget`.
 * Input and target broadcast. 'mean' divides by the element count, as PyTorch's (which warns
 * that 'batchmean' is the divergence's definition). Where a target probability is 0 its gradient
 * is −input (PyTorch's xlogy gives NaN there). Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9).
 */
export function klDiv(input: Tensor, target: Tensor, options: KLDivOptions = {}): Tensor {
  const { reduction = 'mean', logTarget = false } = bindArgs<KLDivOptions>('klDiv', [], [options], ['reduction', 'logTarget']);
  if (reduction !== 'batchmean') checkReduction(reduction, 'klDiv');
  return autocastOp('klDiv', [input, target] as const, (x, t) => {
    checkTensor(x, 'input', 'klDiv');
    checkTensor(t, 'target', 'klDiv');
    checkSameDevice('klDiv', [{ name: 'input', tensor: x }, { name: 'target', tensor: t }]);
    for (const [name, v] of [['input', x], ['target', t]] as const) {
      if (!v.dtype.isFloatingPoint) throw new DTypeError(`klDiv(): Integral inputs not supported (${name} is ${v.dtype.name}); convert with ${name}.float()`, 'klDiv', v.dtype.name);
    }
    let pointwise: Tensor;
    if (logTarget) pointwise = t.exp().mul(t.sub(x));
    else {
      // xlogy(t, t) − t·x: t·log t is taken as 0 where t = 0 (log of 1 there, so no 0·∞ in the gradient).
      pointwise = t.mul(t.where(t.ne(0), 1).log()).sub(t.mul(x));
    }
    if (reduction !== 'batchmean') return reduce(pointwise, reduction);
    const total = pointwise.sum();
    return x.ndim === 0 ? total : total.div(x.shape[0]!);
  });
}

/** cosineEmbeddingLoss's and marginRankingLoss's options (PyTorch's keyword arguments). */
export interface MarginLossOptions extends ReductionOptions {
  /** The margin (default 0). */
  readonly margin?: number;
}

/** The (input1, input2, target) of the pair losses: tensors on one device, floating inputs. */
function checkTriplet(op: string, x1: Tensor, x2: Tensor, t: Tensor): void {
  checkTensor(x1, 'input1', op);
  checkTensor(x2, 'input2', op);
  checkTensor(t, 'target', op);
  checkSameDevice(op, [{ name: 'input1', tensor: x1 }, { name: 'input2', tensor: x2 }, { name: 'target', tensor: t }]);
  checkFloating(x1, 'input1', op);
}

/** PyTorch's EPSILON in cosine_embedding_loss: added to each squared magnitude. */
const COSINE_EMBEDDING_EPS = 1e-12;

/**
 * 1 − cos(x1, x2) where target = 1, max(0, cos(x1, x2) − margin) where target = −1 (0 for other
 * targets), cos over dim 1 of [N, D] inputs with [N] targets (or [D] inputs with a 0-dim target).
 * Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9).
 */
export function cosineEmbeddingLoss(input1: Tensor, input2: Tensor, target: Tensor, ...args: Args<[margin: number], MarginLossOptions>): Tensor {
  const { margin = 0, reduction = 'mean' } = bindArgs<MarginLossOptions>('cosineEmbeddingLoss', ['margin'], args, ['reduction']);
  checkReduction(reduction, 'cosineEmbeddingLoss');
  return autocastOp('cosineEmbeddingLoss', [input1, input2, target] as const, (x1, x2, t) => {
    const op = 'cosineEmbeddingLoss';
    checkTriplet(op, x1, x2, t);
    if (t.ndim > 1) throw new ShapeError(`${op}(): 0D or 1D target tensor expected, multi-target not supported, got target of shape ${shapeText(t.shape)}`, op);
    const rank = t.ndim + 1;
    if (x1.ndim !== rank || x2.ndim !== rank) {
      throw new ShapeError(`${op}(): ${t.ndim}D target tensor expects ${rank}D input tensors, but found inputs with sizes ${shapeText(x1.shape)} and ${shapeText(x2.shape)}.`, op);
    }
    if (!sameShape(x1.shape, x2.shape) || (t.ndim === 1 && t.shape[0] !== x1.shape[0])) {
      throw new ShapeError(`${op}(): input1 ${shapeText(x1.shape)}, input2 ${shapeText(x2.shape)} and target ${shapeText(t.shape)} must agree: two [N, D] inputs and [N] targets, or two [D] inputs and a 0-dim target`, op);
    }
    const d = t.ndim;
    const magnitudes = x1.mul(x1).sum(d).add(COSINE_EMBEDDING_EPS).mul(x2.mul(x2).sum(d).add(COSINE_EMBEDDING_EPS));
    const cos = x1.mul(x2).sum(d).div(magnitudes.sqrt());
    const positive = cos.neg().add(1).where(t.eq(1), 0);
    const negative = cos.sub(margin).clamp(0).where(t.eq(-1), 0);
    return reduce(positive.add(negative), reduction);
  });
}

/** max(0, −target·(input1 − input2) + margin): ranks input1 above input2 where target = 1, below where −1. Autocast: by its name's class in the region's policy table (PyTorch: float32, AC-9). */
export function marginRankingLoss(input1: Tensor, input2: Tensor, target: Tensor, ...args: Args<[margin: number], MarginLossOptions>): Tensor {
  const { margin = 0, reduction = 'mean' } = bindArgs<MarginLossOptions>('marginRankingLoss', ['margin'], args, ['reduction']);
  checkReduction(reduction, 'marginRankingLoss');
  return autocastOp('marginRankingLoss', [input1, input2, target] as const, (x1, x2, t) => {
    const op = 'marginRankingLoss';
    checkTriplet(op, x1, x2, t);
    if (x1.ndim !== x2.ndim || x1.ndim !== t.ndim) {
      throw new ShapeError(`${op}(): All input tensors should have same dimension but got sizes: input1: ${shapeText(x1.shape)}, input2: ${shapeText(x2.shape)}, target: ${shapeText(t.shape)}`, op);
    }
    return reduce(t.neg().mul(x1.sub(x2)).add(margin).clamp(0), reduction);
  });
}
