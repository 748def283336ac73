// Loss modules: options as in PyTorch; class weights are buffers, so `to()` moves them.
import type { Tensor } from '@core/tensor';
import { Module, type RegisteredNames } from '../module.js';
import { crossEntropy, nllLoss, type CrossEntropyOptions, type NLLLossOptions } from '../functional/cross-entropy.js';
import {
  binaryCrossEntropy, binaryCrossEntropyWithLogits, cosineEmbeddingLoss, huberLoss, klDiv, l1Loss, marginRankingLoss, mseLoss, smoothL1Loss,
  type BCEOptions, type BCEWithLogitsOptions, type HuberLossOptions, type KLDivOptions, type KLDivReduction, type MarginLossOptions,
  type ReductionOptions, type SmoothL1LossOptions,
} from '../functional/loss.js';
import { ctcLoss, type CTCLengths, type CTCLossOptions } from '../functional/ctc.js';
import { bindArgs, checkReduction, type Args, type Reduction } from '../internal/args.js';

abstract class Loss<In extends unknown[] = [Tensor, Tensor]> extends Module<In, Tensor> {
  /** 'mean' (default), 'sum' or 'none'. */
  readonly reduction: Reduction;

  constructor(reduction: Reduction = 'mean') {
    super();
    this.reduction = checkReduction(reduction, new.target.name);
  }

  override extraRepr(): string {
    return `reduction='${this.reduction}'`;
  }
}

/**
 * Cross entropy between logits [N, C] (or [N, C, d1, …]) and int32 class indices, or class probabilities, with class weights, ignoreIndex and label smoothing (`F.crossEntropy`).
 */
export class CrossEntropyLoss extends Loss {
  /** Targets equal to this contribute nothing (default -100). */
  readonly ignoreIndex: number;
  /** ε in [0, 1]: the target becomes (1 − ε)·one-hot + ε/C (default 0). */
  readonly labelSmoothing: number;
  /** A rescaling weight per class, shape [C] (a buffer, so `to()` moves it), or null. */
  declare weight: Tensor | null;

  constructor({ weight = null, ignoreIndex = -100, reduction = 'mean', labelSmoothing = 0 }: CrossEntropyOptions = {}) {
    super(reduction);
    this.registerBuffer('weight', weight);
    this.ignoreIndex = ignoreIndex;
    this.labelSmoothing = labelSmoothing;
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return crossEntropy(input, target, { weight: this.weight, ignoreIndex: this.ignoreIndex, reduction: this.reduction, labelSmoothing: this.labelSmoothing });
  }
}

/**
 * Negative log-likelihood of log-probabilities [N, C] at int32 class indices (`F.nllLoss`); pair it with LogSoftmax.
 */
export class NLLLoss extends Loss {
  /** Targets equal to this contribute nothing (default -100). */
  readonly ignoreIndex: number;
  /** A rescaling weight per class, shape [C] (a buffer), or null. */
  declare weight: Tensor | null;

  constructor({ weight = null, ignoreIndex = -100, reduction = 'mean' }: NLLLossOptions = {}) {
    super(reduction);
    this.registerBuffer('weight', weight);
    this.ignoreIndex = ignoreIndex;
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return nllLoss(input, target, { weight: this.weight, ignoreIndex: this.ignoreIndex, reduction: this.reduction });
  }
}

/** The reduction of a loss module, bound from `{ reduction }`. */
function reductionOf(op: string, options: ReductionOptions): Reduction {
  return bindArgs<ReductionOptions>(op, [], [options], ['reduction']).reduction ?? 'mean';
}

/** Mean squared error (or its sum, or per element) as a module (`F.mseLoss`). */
export class MSELoss extends Loss {
  constructor(options: ReductionOptions = {}) {
    super(reductionOf('MSELoss', options));
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return mseLoss(input, target, { reduction: this.reduction });
  }
}

/** Binary cross entropy of probabilities (`F.binaryCrossEntropy`); prefer `BCEWithLogitsLoss` after a sigmoid. */
export class BCELoss extends Loss {
  /** Rescales each element's loss, broadcast to the input (a buffer), or null. */
  declare weight: Tensor | null;

  constructor({ weight = null, reduction = 'mean' }: BCEOptions = {}) {
    super(reduction);
    this.registerBuffer('weight', weight);
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropy(input, target, { weight: this.weight, reduction: this.reduction });
  }
}

/** Binary cross entropy on logits, with the sigmoid folded in stably (`F.binaryCrossEntropyWithLogits`). */
export class BCEWithLogitsLoss extends Loss {
  /** PyTorch's name of the positive-example weights: buffer `pos_weight`. */
  static override readonly registeredNames: RegisteredNames<BCEWithLogitsLoss> = { posWeight: 'pos_weight' };
  /** Rescales each element's loss, broadcast to the input (a buffer), or null. */
  declare weight: Tensor | null;
  /** Weight of positive examples per class, broadcast over the last dim (buffer `pos_weight`), or null. */
  declare posWeight: Tensor | null;

  constructor({ weight = null, posWeight = null, reduction = 'mean' }: BCEWithLogitsOptions = {}) {
    super(reduction);
    this.registerBuffer('weight', weight);
    this.registerBuffer('pos_weight', posWeight);
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropyWithLogits(input, target, { weight: this.weight, posWeight: this.posWeight, reduction: this.reduction });
  }
}

/** Mean absolute error (or its sum, or per element) as a module (`F.l1Loss`). */
export class L1Loss extends Loss {
  constructor(options: ReductionOptions = {}) {
    super(reductionOf('L1Loss', options));
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return l1Loss(input, target, { reduction: this.reduction });
  }
}

/** Quadratic below `beta`, linear above (`F.smoothL1Loss`). */
export class SmoothL1Loss extends Loss {
  /** Where the loss turns from quadratic to linear. */
  readonly beta: number;

  constructor(options: SmoothL1LossOptions = {}) {
    const { reduction = 'mean', beta = 1 } = bindArgs<SmoothL1LossOptions>('SmoothL1Loss', [], [options], ['reduction', 'beta']);
    super(reduction);
    this.beta = beta;
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return smoothL1Loss(input, target, { reduction: this.reduction, beta: this.beta });
  }

  /** The base's arguments, then this layer's. */
  override extraRepr(): string {
    return `${super.extraRepr()}, beta=${this.beta}`;
  }
}

/** Quadratic below `delta`, linear (slope delta) above (`F.huberLoss`). */
export class HuberLoss extends Loss {
  /** Where the loss turns from quadratic to linear. */
  readonly delta: number;

  /** PyTorch's order: `new nn.HuberLoss('sum', 0.5)`, or by name. */
  constructor(...args: Args<[reduction: Reduction, delta: number], HuberLossOptions>) {
    const { reduction = 'mean', delta = 1 } = bindArgs<HuberLossOptions>('HuberLoss', ['reduction', 'delta'], args);
    super(reduction);
    this.delta = delta;
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return huberLoss(input, target, { reduction: this.reduction, delta: this.delta });
  }

  /** The base's arguments, then this layer's. */
  override extraRepr(): string {
    return `${super.extraRepr()}, delta=${this.delta}`;
  }
}

/** The Kullback-Leibler divergence of the target from the input's distribution (`F.klDiv`); the input holds log-probabilities. */
export class KLDivLoss extends Module<[Tensor, Tensor], Tensor> {
  /** 'mean' (default), 'batchmean', 'sum' or 'none'. */
  readonly reduction: KLDivReduction;
  /** The target holds log-probabilities. */
  readonly logTarget: boolean;

  constructor(options: KLDivOptions = {}) {
    super();
    const { reduction = 'mean', logTarget = false } = bindArgs<KLDivOptions>('KLDivLoss', [], [options], ['reduction', 'logTarget']);
    if (reduction !== 'batchmean') checkReduction(reduction, 'KLDivLoss');
    this.reduction = reduction;
    this.logTarget = logTarget;
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return klDiv(input, target, { reduction: this.reduction, logTarget: this.logTarget });
  }

  override extraRepr(): string {
    return `reduction='${this.reduction}', logTarget=${this.logTarget}`;
  }
}

/** The loss modules of (input1, input2, target) with a margin. */
abstract class MarginLoss extends Loss<[Tensor, Tensor, Tensor]> {
  /** The margin. */
  readonly margin: number;

  constructor(op: string, args: readonly unknown[]) {
    const { margin = 0, reduction = 'mean' } = bindArgs<MarginLossOptions>(op, ['margin'], args, ['reduction']);
    super(reduction);
    this.margin = margin;
  }

  /** The margin, then the reduction. */
  override extraRepr(): string {
    return `margin=${this.margin}, ${super.extraRepr()}`;
  }
}

/** 1 − cos for similar pairs (target 1), max(0, cos − margin) for dissimilar ones (target −1) (`F.cosineEmbeddingLoss`). */
export class CosineEmbeddingLoss extends MarginLoss {
  /** `new nn.CosineEmbeddingLoss(0.5)` or `new nn.CosineEmbeddingLoss({ margin: 0.5, reduction: 'sum' })`. */
  constructor(...args: Args<[margin: number], MarginLossOptions>) {
    super('CosineEmbeddingLoss', args);
  }

  forward(input1: Tensor, input2: Tensor, target: Tensor): Tensor {
    return cosineEmbeddingLoss(input1, input2, target, this.margin, { reduction: this.reduction });
  }
}

/** max(0, −target·(input1 − input2) + margin) (`F.marginRankingLoss`). */
export class MarginRankingLoss extends MarginLoss {
  /** `new nn.MarginRankingLoss(0.5)` or `new nn.MarginRankingLoss({ margin: 0.5, reduction: 'sum' })`. */
  constructor(...args: Args<[margin: number], MarginLossOptions>) {
    super('MarginRankingLoss', args);
  }

  forward(input1: Tensor, input2: Tensor, target: Tensor): Tensor {
    return marginRankingLoss(input1, input2, target, this.margin, { reduction: this.reduction });
  }
}

/** The connectionist temporal classification loss of log-probabilities against target sequences (`F.ctcLoss`). */
export class CTCLoss extends Loss<[logProbs: Tensor, targets: Tensor, inputLengths: CTCLengths, targetLengths: CTCLengths]> {
  /** The blank class (default 0). */
  readonly blank: number;
  /** Whether infinite losses (targets no alignment fits) and their gradients become 0 (default false). */
  readonly zeroInfinity: boolean;

  /** PyTorch's order: `new nn.CTCLoss(0, 'sum', true)`, or by name (`{ zeroInfinity: true }`). */
  constructor(...args: Args<[blank: number, reduction: Reduction, zeroInfinity: boolean], CTCLossOptions>) {
    const { blank = 0, reduction = 'mean', zeroInfinity = false } = bindArgs<CTCLossOptions>('CTCLoss', ['blank', 'reduction', 'zeroInfinity'], args);
    super(reduction);
    this.blank = blank;
    this.zeroInfinity = zeroInfinity;
  }

  /** `logProbs` [T, N, C] (or [T, C]), targets [N, S] or concatenated, and each sample's frame and label counts. */
  forward(logProbs: Tensor, targets: Tensor, inputLengths: CTCLengths, targetLengths: CTCLengths): Tensor {
    return ctcLoss(logProbs, targets, inputLengths, targetLengths, { blank: this.blank, reduction: this.reduction, zeroInfinity: this.zeroInfinity });
  }

  /** The blank, the reduction, then zeroInfinity. */
  override extraRepr(): string {
    return `blank=${this.blank}, ${super.extraRepr()}, zeroInfinity=${this.zeroInfinity}`;
  }
}
