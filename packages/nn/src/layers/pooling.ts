// nn.MaxPool2d(kernelSize, stride = kernelSize, padding, dilation, returnIndices, ceilMode), each
// after kernelSize also by name.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { checkNoIndices, maxPool2d, type MaxPool2dOptions } from '../functional/pooling.js';
import { bindArgs, pair, type Args, type Pair } from '../internal/args.js';

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

  /** PyTorch's order (note returnIndices before ceilMode, unlike F.maxPool2d): `new nn.MaxPool2d(2, 2)`. */
  constructor(kernelSize: Pair, ...args: Args<[stride: Pair | null, padding: Pair, dilation: Pair, returnIndices: boolean, ceilMode: boolean], MaxPool2dOptions>) {
    super();
    const { stride, padding = 0, dilation = 1, ceilMode = false, returnIndices } = bindArgs<MaxPool2dOptions>(
      'MaxPool2d', ['stride', 'padding', 'dilation', 'returnIndices', 'ceilMode'], args,
    );
    checkNoIndices(returnIndices, 'MaxPool2d');
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
