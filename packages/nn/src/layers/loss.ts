// Loss modules: options as in PyTorch; class weights are buffers, so `to()` moves them.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { crossEntropy, nllLoss, type CrossEntropyOptions, type NLLLossOptions } from '../functional/cross-entropy.js';
import { binaryCrossEntropyWithLogits, mseLoss, type BCEWithLogitsOptions } from '../functional/loss.js';
import { checkReduction, type Reduction } from '../internal/args.js';

abstract class Loss extends Module<[Tensor, Tensor], Tensor> {
  readonly reduction: Reduction;

  constructor(reduction: Reduction = 'mean') {
    super();
    this.reduction = checkReduction(reduction, new.target.name);
  }

  override extraRepr(): string {
    return `reduction='${this.reduction}'`;
  }
}

export class CrossEntropyLoss extends Loss {
  readonly ignoreIndex: number;
  readonly labelSmoothing: number;
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

export class NLLLoss extends Loss {
  readonly ignoreIndex: number;
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

export class MSELoss extends Loss {
  constructor({ reduction = 'mean' }: { reduction?: Reduction } = {}) {
    super(reduction);
  }

  forward(input: Tensor, target: Tensor): Tensor {
    return mseLoss(input, target, { reduction: this.reduction });
  }
}

export class BCEWithLogitsLoss extends Loss {
  declare weight: Tensor | null;
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
