// nn.Dropout, nn.Dropout1d, nn.Dropout2d and nn.AlphaDropout: active in training mode, the
// identity in eval mode.
import type { Generator, Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { alphaDropout, checkProbability, dropout, dropout1d, dropout2d, type DropoutArgs } from '../functional/dropout.js';
import { bindArgs, type Args } from '../internal/args.js';

/** What the dropout layers share: p, the generator, and how they print. */
abstract class DropoutBase extends Module {
  /** The probability of zeroing an element (or channel); assignable, as in PyTorch (`m.p = 0`), and checked at each forward. */
  p: number;
  /** The generator masks are drawn from (undefined: the global one). */
  readonly generator: Generator | undefined;

  /** `new nn.Dropout(0.2)` or `new nn.Dropout({ p: 0.2, generator })`; `generator` defaults to the global one (`manualSeed`). */
  constructor(...args: Args<[p: number], Omit<DropoutArgs, 'training'>>) {
    super();
    const { p = 0.5, generator } = bindArgs<DropoutArgs>(this.constructor.name, ['p'], args, ['generator']);
    checkProbability(p);
    this.p = p;
    this.generator = generator;
  }

  /** The functional form's keyword arguments. */
  protected get keywords(): DropoutArgs {
    return this.generator ? { generator: this.generator } : {};
  }

  override extraRepr(): string {
    return `p=${this.p}`;
  }
}

/**
 * Zeroes each element with probability `p` while training, scaling the rest by 1/(1 − p); the identity in eval mode.
 */
export class Dropout extends DropoutBase {
  forward(input: Tensor): Tensor {
    return dropout(input, this.p, this.training, this.keywords);
  }
}

/** Zeroes whole channels of [N, C, L] (or [C, L]) input with probability `p` while training (`F.dropout1d`). */
export class Dropout1d extends DropoutBase {
  forward(input: Tensor): Tensor {
    return dropout1d(input, this.p, this.training, this.keywords);
  }
}

/** Zeroes whole channels of [N, C, H, W] input with probability `p` while training (`F.dropout2d`). */
export class Dropout2d extends DropoutBase {
  forward(input: Tensor): Tensor {
    return dropout2d(input, this.p, this.training, this.keywords);
  }
}

/** Dropout that keeps SELU's zero mean and unit variance while training (`F.alphaDropout`). */
export class AlphaDropout extends DropoutBase {
  forward(input: Tensor): Tensor {
    return alphaDropout(input, this.p, this.training, this.keywords);
  }
}
