// Loss modules: options as in PyTorch; class weights are buffers, so `to()` moves them.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { crossEntropy, nllLoss, type CrossEntropyOptions, type NLLLossOptions } from '../functional/cross-entropy.js';
import { binaryCrossEntropy, binaryCrossEntropyWithLogits, mseLoss, type BCEOptions, type BCEWithLogitsOptions } from '../functional/loss.js';
import { checkReduction, type Reduction } from '../internal/args.js';

abstract class Loss extends Module<[Tensor, Tensor], Tensor> {
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

/** Mean squared error (or its sum, or per element) as a module (`F.mseLoss`). */
export class MSELoss extends Loss {
  constructor({ reduction = 'mean' }: { reduction?: Reduction } = {}) {
    super(reduction);
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
  /** Rescales each element's loss, broadcast to the input (a buffer), or null. */
  declare weight: Tensor | null;
  /** Weight of positive examples per class, broadcast over the last dim (a buffer), or null. */
  declare posWeight: Tensor | null;

  constructor({ weight = null, posWeight = null, reduction = 'mean' }: BCEWithLogitsOptions = {}) {
    super(reduction);
    this.registerBuffer('weight', weight);
    this.registerBuffer('posWeight', posWeight);
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropyWithLogits(input, target, { weight: this.weight, posWeight: this.posWeight, reduction: this.reduction });
  }
}
