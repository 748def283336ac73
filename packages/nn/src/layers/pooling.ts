// nn.MaxPool2d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode }).
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { maxPool2d, type MaxPool2dOptions } from '../functional/pooling.js';
import { pair, type Pair } from '../internal/args.js';

export class MaxPool2d extends Module {
  readonly kernelSize: [number, number];
  readonly stride: [number, number];
  readonly padding: [number, number];
  readonly dilation: [number, number];
  readonly ceilMode: boolean;

  constructor(kernelSize: Pair, { stride, padding = 0, dilation = 1, ceilMode = false }: MaxPool2dOptions = {}) {
    super();
    this.kernelSize = pair(kernelSize, 'kernelSize', 'MaxPool2d', 1);
    this.stride = pair(stride ?? this.kernelSize, 'stride', 'MaxPool2d', 1);
    this.padding = pair(padding, 'padding', 'MaxPool2d');
    this.dilation = pair(dilation, 'dilation', 'MaxPool2d', 1);
    this.ceilMode = ceilMode;
  }

  forward(input: Tensor): Tensor {
    return maxPool2d(input, this.kernelSize, { stride: this.stride, padding: this.padding, dilation: this.dilation, ceilMode: this.ceilMode });
  }

  override extraRepr(): string {
    return `kernelSize=[${this.kernelSize}], stride=[${this.stride}], padding=[${this.padding}], dilation=[${this.dilation}], ceilMode=${this.ceilMode}`;
  }
}
