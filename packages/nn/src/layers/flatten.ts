// nn.Flatten(startDim = 1, endDim = -1): keeps the batch dim.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';

/** Merges dims `startDim`..`endDim` into one (by default all but the batch dim). */
export class Flatten extends Module {
  constructor(
    /** The first dim to merge (default 1: keep the batch dim). */
    readonly startDim = 1,
    /** The last dim to merge (default -1: the last). */
    readonly endDim = -1,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return input.flatten(this.startDim, this.endDim);
  }

  override extraRepr(): string {
    return `startDim=${this.startDim}, endDim=${this.endDim}`;
  }
}
