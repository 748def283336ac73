// The pooling layers, each PyTorch's constructor order with every argument after the first also by
// name; the geometry is checked when the layer is built and forward calls the functional op.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import {
  adaptiveAvgPool1d, adaptiveAvgPool2d, adaptiveMaxPool1d, adaptiveMaxPool2d, avgPool1d, avgPool2d, checkNoIndices, maxPool1d, maxPool2d, single,
  type AdaptiveMaxPoolOptions, type AdaptiveSize2d, type AvgPool1dOptions, type AvgPool2dOptions, type MaxPool1dOptions, type MaxPool2dOptions,
} from '../functional/pooling.js';
import type { Single } from '../functional/conv.js';
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

/** The max over each window of a [N, C, L] (or [C, L]) input, PyTorch's `nn.MaxPool1d` (`F.maxPool1d`). */
export class MaxPool1d extends Module {
  /** The window size. */
  readonly kernelSize: number;
  /** The window step (default: the kernel size). */
  readonly stride: number;
  /** −∞ padding on each side. */
  readonly padding: number;
  /** Spacing between window elements. */
  readonly dilation: number;
  /** Whether the output size rounds up. */
  readonly ceilMode: boolean;

  /** PyTorch's order (returnIndices before ceilMode, unlike F.maxPool1d): `new nn.MaxPool1d(3, 2)`. */
  constructor(kernelSize: Single, ...args: Args<[stride: Single | null, padding: Single, dilation: Single, returnIndices: boolean, ceilMode: boolean], MaxPool1dOptions>) {
    super();
    const { stride, padding = 0, dilation = 1, ceilMode = false, returnIndices } = bindArgs<MaxPool1dOptions>(
      'MaxPool1d', ['stride', 'padding', 'dilation', 'returnIndices', 'ceilMode'], args,
    );
    checkNoIndices(returnIndices, 'MaxPool1d');
    this.kernelSize = single(kernelSize, 'kernelSize', 'MaxPool1d', 1);
    this.stride = single(stride ?? kernelSize, 'stride', 'MaxPool1d', 1);
    this.padding = single(padding, 'padding', 'MaxPool1d');
    this.dilation = single(dilation, 'dilation', 'MaxPool1d', 1);
    this.ceilMode = ceilMode;
  }

  forward(input: Tensor): Tensor {
    return maxPool1d(input, this.kernelSize, this.stride, this.padding, this.dilation, this.ceilMode);
  }

  override extraRepr(): string {
    return `kernelSize=${this.kernelSize}, stride=${this.stride}, padding=${this.padding}, dilation=${this.dilation}, ceilMode=${this.ceilMode}`;
  }
}

/** The mean of each window of a [N, C, H, W] (or [C, H, W]) input, PyTorch's `nn.AvgPool2d` (`F.avgPool2d`). */
export class AvgPool2d extends Module {
  /** The window size, [h, w]. */
  readonly kernelSize: [number, number];
  /** The window step, [h, w] (default: the kernel size). */
  readonly stride: [number, number];
  /** Zero padding on each side, [h, w]. */
  readonly padding: [number, number];
  /** Whether the output size rounds up. */
  readonly ceilMode: boolean;
  /** Whether the padding counts in each window's divisor. */
  readonly countIncludePad: boolean;
  /** The divisor of every window instead of its size, or null. */
  readonly divisorOverride: number | null;

  /** PyTorch's order: `new nn.AvgPool2d(kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride)`. */
  constructor(kernelSize: Pair, ...args: Args<[stride: Pair | null, padding: Pair, ceilMode: boolean, countIncludePad: boolean, divisorOverride: number | null], AvgPool2dOptions>) {
    super();
    const o = bindArgs<AvgPool2dOptions>('AvgPool2d', ['stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride'], args);
    this.kernelSize = pair(kernelSize, 'kernelSize', 'AvgPool2d', 1);
    this.stride = pair(o.stride ?? this.kernelSize, 'stride', 'AvgPool2d', 1);
    this.padding = pair(o.padding ?? 0, 'padding', 'AvgPool2d');
    this.ceilMode = o.ceilMode ?? false;
    this.countIncludePad = o.countIncludePad ?? true;
    this.divisorOverride = o.divisorOverride ?? null;
  }

  forward(input: Tensor): Tensor {
    return avgPool2d(input, this.kernelSize, this.stride, this.padding, this.ceilMode, this.countIncludePad, this.divisorOverride);
  }

  override extraRepr(): string {
    return `kernelSize=[${this.kernelSize}], stride=[${this.stride}], padding=[${this.padding}]`;
  }
}

/** The mean of each window of a [N, C, L] (or [C, L]) input, PyTorch's `nn.AvgPool1d` (`F.avgPool1d`). */
export class AvgPool1d extends Module {
  /** The window size. */
  readonly kernelSize: number;
  /** The window step (default: the kernel size). */
  readonly stride: number;
  /** Zero padding on each side. */
  readonly padding: number;
  /** Whether the output size rounds up. */
  readonly ceilMode: boolean;
  /** Whether the padding counts in each window's divisor. */
  readonly countIncludePad: boolean;

  /** PyTorch's order: `new nn.AvgPool1d(kernelSize, stride, padding, ceilMode, countIncludePad)`. */
  constructor(kernelSize: Single, ...args: Args<[stride: Single | null, padding: Single, ceilMode: boolean, countIncludePad: boolean], AvgPool1dOptions>) {
    super();
    const o = bindArgs<AvgPool1dOptions>('AvgPool1d', ['stride', 'padding', 'ceilMode', 'countIncludePad'], args);
    this.kernelSize = single(kernelSize, 'kernelSize', 'AvgPool1d', 1);
    this.stride = single(o.stride ?? kernelSize, 'stride', 'AvgPool1d', 1);
    this.padding = single(o.padding ?? 0, 'padding', 'AvgPool1d');
    this.ceilMode = o.ceilMode ?? false;
    this.countIncludePad = o.countIncludePad ?? true;
  }

  forward(input: Tensor): Tensor {
    return avgPool1d(input, this.kernelSize, this.stride, this.padding, this.ceilMode, this.countIncludePad);
  }

  override extraRepr(): string {
    return `kernelSize=${this.kernelSize}, stride=${this.stride}, padding=${this.padding}`;
  }
}

/** The output size as extraRepr writes it. */
function sizeText(size: number | readonly (number | null)[]): string {
  return typeof size === 'number' ? `${size}` : `[${size.map((s) => (s === null ? 'null' : s)).join(', ')}]`;
}

/** The mean over adaptive windows of a [N, C, L] (or [C, L]) input, PyTorch's `nn.AdaptiveAvgPool1d` (`F.adaptiveAvgPool1d`). */
export class AdaptiveAvgPool1d extends Module {
  /** `new nn.AdaptiveAvgPool1d(outputSize)`. */
  constructor(
    /** The output length. */
    readonly outputSize: Single,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return adaptiveAvgPool1d(input, this.outputSize);
  }

  override extraRepr(): string {
    return `outputSize=${sizeText(this.outputSize)}`;
  }
}

/** The mean over adaptive windows of a [N, C, H, W] (or [C, H, W]) input, PyTorch's `nn.AdaptiveAvgPool2d` (`F.adaptiveAvgPool2d`). */
export class AdaptiveAvgPool2d extends Module {
  /** `new nn.AdaptiveAvgPool2d(outputSize)`: `new nn.AdaptiveAvgPool2d(1)` for global average pooling. */
  constructor(
    /** The output size: one number for both dims, or [h, w] (null keeps that dim). */
    readonly outputSize: AdaptiveSize2d,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return adaptiveAvgPool2d(input, this.outputSize);
  }

  override extraRepr(): string {
    return `outputSize=${sizeText(this.outputSize)}`;
  }
}

/** The max over adaptive windows of a [N, C, L] (or [C, L]) input, PyTorch's `nn.AdaptiveMaxPool1d` (`F.adaptiveMaxPool1d`). */
export class AdaptiveMaxPool1d extends Module {
  /** `new nn.AdaptiveMaxPool1d(outputSize, returnIndices)`; returnIndices must be false. */
  constructor(
    /** The output length. */
    readonly outputSize: Single,
    ...args: Args<[returnIndices: boolean], AdaptiveMaxPoolOptions>
  ) {
    super();
    checkNoIndices(bindArgs<AdaptiveMaxPoolOptions>('AdaptiveMaxPool1d', ['returnIndices'], args).returnIndices, 'AdaptiveMaxPool1d');
  }

  forward(input: Tensor): Tensor {
    return adaptiveMaxPool1d(input, this.outputSize);
  }

  override extraRepr(): string {
    return `outputSize=${sizeText(this.outputSize)}`;
  }
}

/** The max over adaptive windows of a [N, C, H, W] (or [C, H, W]) input, PyTorch's `nn.AdaptiveMaxPool2d` (`F.adaptiveMaxPool2d`). */
export class AdaptiveMaxPool2d extends Module {
  /** `new nn.AdaptiveMaxPool2d(outputSize, returnIndices)`; returnIndices must be false. */
  constructor(
    /** The output size: one number for both dims, or [h, w] (null keeps that dim). */
    readonly outputSize: AdaptiveSize2d,
    ...args: Args<[returnIndices: boolean], AdaptiveMaxPoolOptions>
  ) {
    super();
    checkNoIndices(bindArgs<AdaptiveMaxPoolOptions>('AdaptiveMaxPool2d', ['returnIndices'], args).returnIndices, 'AdaptiveMaxPool2d');
  }

  forward(input: Tensor): Tensor {
    return adaptiveMaxPool2d(input, this.outputSize);
  }

  override extraRepr(): string {
    return `outputSize=${sizeText(this.outputSize)}`;
  }
}
