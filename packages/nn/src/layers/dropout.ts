// nn.Dropout(p): active in training mode, the identity in eval mode.
import { ValueError, type Generator, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { dropout } from '../functional/dropout.js';

/**
 * Zeroes each element with probability `p` while training, scaling the rest by 1/(1 − p); the identity in eval mode.
 */
export class Dropout extends Module {
  /** The probability of zeroing an element. */
  readonly p: number;
  /** The generator masks are drawn from (undefined: the global one). */
  readonly generator: Generator | undefined;

  /** `generator` defaults to the global one (`manualSeed`). */
  constructor(p = 0.5, { generator }: { generator?: Generator } = {}) {
    super();
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new ValueError(`dropout probability has to be between 0 and 1, but got ${p}`);
    this.p = p;
    this.generator = generator;
  }

  forward(input: Tensor): Tensor {
    return dropout(input, this.p, this.training, this.generator ? { generator: this.generator } : {});
  }

  override extraRepr(): string {
    return `p=${this.p}`;
  }
}
