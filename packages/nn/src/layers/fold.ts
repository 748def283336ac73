// nn.Unfold(kernelSize, dilation, padding, stride) and nn.Fold(outputSize, kernelSize, dilation,
// padding, stride): F.unfold and F.fold as layers, each argument after the sizes also by name.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { blockGeometry, fold, unfold, type UnfoldOptions } from '../functional/fold.js';
import { bindArgs, pair, type Args, type Pair } from '../internal/args.js';

const OPTIONS = ['dilation', 'padding', 'stride'] as const;

/** The block sizes both layers hold. */
abstract class Blocks extends Module {
  /** The block size, [h, w]. */
  readonly kernelSize: [number, number];
  /** Spacing between the elements of a block, [h, w]. */
  readonly dilation: [number, number];
  /** Zeros around the image, [h, w]. */
  readonly padding: [number, number];
  /** The step between blocks, [h, w]. */
  readonly stride: [number, number];

  constructor(name: string, kernelSize: Pair, args: readonly unknown[]) {
    super();
    const g = blockGeometry(name, kernelSize, bindArgs<UnfoldOptions>(name, OPTIONS, args));
    [this.kernelSize, this.dilation, this.padding, this.stride] = [g.kernel, g.dilation, g.padding, g.stride];
  }

  /** dilation, padding and stride, as F.unfold and F.fold take them. */
  protected get options(): UnfoldOptions {
    return { dilation: this.dilation, padding: this.padding, stride: this.stride };
  }

  override extraRepr(): string {
    return `kernelSize=[${this.kernelSize}], dilation=[${this.dilation}], padding=[${this.padding}], stride=[${this.stride}]`;
  }
}

/** The sliding blocks of [N, C, H, W] (or [C, H, W]) input as columns [N, C·kH·kW, L], PyTorch's `nn.Unfold` (`F.unfold`). */
export class Unfold extends Blocks {
  /** PyTorch's order: `new nn.Unfold(kernelSize, dilation, padding, stride)`, each after kernelSize also by name. */
  constructor(kernelSize: Pair, ...args: Args<[dilation: Pair, padding: Pair, stride: Pair], UnfoldOptions>) {
    super('Unfold', kernelSize, args);
  }

  forward(input: Tensor): Tensor {
    return unfold(input, this.kernelSize, this.options);
  }
}

/** Columns [N, C·kH·kW, L] (or [C·kH·kW, L]) summed into an image of `outputSize` at their blocks' places, PyTorch's `nn.Fold` (`F.fold`). */
export class Fold extends Blocks {
  /** The image size, [h, w]. */
  readonly outputSize: [number, number];

  /** PyTorch's order: `new nn.Fold(outputSize, kernelSize, dilation, padding, stride)`, each after kernelSize also by name. */
  constructor(outputSize: Pair, kernelSize: Pair, ...args: Args<[dilation: Pair, padding: Pair, stride: Pair], UnfoldOptions>) {
    super('Fold', kernelSize, args);
    this.outputSize = pair(outputSize, 'outputSize', 'Fold', 1);
  }

  forward(input: Tensor): Tensor {
    return fold(input, this.outputSize, this.kernelSize, this.options);
  }

  /** The image size, then the block sizes. */
  override extraRepr(): string {
    return `outputSize=[${this.outputSize}], ${super.extraRepr()}`;
  }
}
