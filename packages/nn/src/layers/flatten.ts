// nn.Flatten(startDim = 1, endDim = -1): keeps the batch dim.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';

export class Flatten extends Module {
  constructor(readonly startDim = 1, readonly endDim = -1) {
    super();
  }

  forward(input: Tensor): Tensor {
    return input.flatten(this.startDim, this.endDim);
  }

  override extraRepr(): string {
    return `startDim=${this.startDim}, endDim=${this.endDim}`;
  }
}
