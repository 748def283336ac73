// nn.MaxPool2d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode }).
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { maxPool2d, type MaxPool2dOptions } from '../functional/pooling.js';
import { pair, type Pair } from '../internal/args.js';

/** The max over each window of a [N, C, H, W] (or [C, H, W]) input, PyTorch's `nn.MaxPool2d` (`F.maxPool2d`). */
export class MaxPool2d extends Module {
  /** The window size, [h, w]. */
  readonly kernelSize: [number, number];
  /** The window step, [h, w] (default: the kernel size). */
  readonly stride: [number, number];
  /** −∞ padding on each side, [h, w]. */
  readonly padding: [number, number];
  /** Spacing between window elements, [h, w]. */
  readonly dilation: [number, number];
  /** Whether the output size rounds up. */
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
