// nn.Conv1d, nn.Conv2d, nn.ConvTranspose1d and nn.ConvTranspose2d with PyTorch's constructor
// order, each argument after kernelSize also by name ({ stride, padding, …, device, dtype }):
//   Conv:          (inChannels, outChannels, kernelSize, stride, padding, dilation, groups, bias, paddingMode)
//   ConvTranspose: (inChannels, outChannels, kernelSize, stride, padding, outputPadding, groups, bias, dilation, paddingMode)
import { empty, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import {
  conv1d, conv2d, convPadding, convTranspose1d, convTranspose2d, type Conv1dPadding, type Conv2dPadding, type Single,
} from '../functional/conv.js';
import { pad } from '../functional/pad.js';
import { spatialSizes } from '../functional/windows.js';
import { defaultLayerInit } from '../internal/layer-init.js';
import { bindArgs, factoryOf, type Args, type FactoryOptions, type Pair } from '../internal/args.js';

/** How a convolution layer pads its input: zeros, or F.pad's reflect, replicate or circular modes. */
export type ConvPaddingMode = 'zeros' | 'reflect' | 'replicate' | 'circular';

const PADDING_MODES: readonly ConvPaddingMode[] = ['zeros', 'reflect', 'replicate', 'circular'];

/** Conv2d's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface Conv2dLayerOptions extends FactoryOptions {
  /** The window step (default 1). */
  readonly stride?: Pair;
  /** Padding on each side, 'valid' (none) or 'same' (keep the size; stride 1 only). Default 0. */
  readonly padding?: Conv2dPadding;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Pair;
  /** Independent channel groups; both channel counts must divide by it (default 1). */
  readonly groups?: number;
  /** Learn an additive bias per output channel (default true). */
  readonly bias?: boolean;
  /** What the padding holds: zeros (default), or a reflection, replica or wrap-around of the input. */
  readonly paddingMode?: ConvPaddingMode;
}

/** Conv1d's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface Conv1dLayerOptions extends FactoryOptions {
  /** The window step (default 1). */
  readonly stride?: Single;
  /** Padding at both ends, 'valid' (none) or 'same' (keep the length; stride 1 only). Default 0. */
  readonly padding?: Conv1dPadding;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Single;
  /** Independent channel groups; both channel counts must divide by it (default 1). */
  readonly groups?: number;
  /** Learn an additive bias per output channel (default true). */
  readonly bias?: boolean;
  /** What the padding holds: zeros (default), or a reflection, replica or wrap-around of the input. */
  readonly paddingMode?: ConvPaddingMode;
}

/** ConvTranspose2d's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface ConvTranspose2dLayerOptions extends FactoryOptions {
  /** The step between the input pixels' windows in the output (default 1). */
  readonly stride?: Pair;
  /** Cut from both sides of the output (default 0). */
  readonly padding?: Pair;
  /** Added to the end of the output, below max(stride, dilation) (default 0). */
  readonly outputPadding?: Pair;
  /** Independent channel groups; both channel counts must divide by it (default 1). */
  readonly groups?: number;
  /** Learn an additive bias per output channel (default true). */
  readonly bias?: boolean;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Pair;
  /** Only 'zeros', as in PyTorch. */
  readonly paddingMode?: 'zeros';
}

/** ConvTranspose1d's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface ConvTranspose1dLayerOptions extends FactoryOptions {
  /** The step between the input elements' windows in the output (default 1). */
  readonly stride?: Single;
  /** Cut from both ends of the output (default 0). */
  readonly padding?: Single;
  /** Added to the end of the output, below max(stride, dilation) (default 0). */
  readonly outputPadding?: Single;
  /** Independent channel groups; both channel counts must divide by it (default 1). */
  readonly groups?: number;
  /** Learn an additive bias per output channel (default true). */
  readonly bias?: boolean;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Single;
  /** Only 'zeros', as in PyTorch. */
  readonly paddingMode?: 'zeros';
}

type AnyLayerOptions = Conv1dLayerOptions | Conv2dLayerOptions | ConvTranspose1dLayerOptions | ConvTranspose2dLayerOptions;
const FACTORY = ['device', 'dtype'] as const;

/** What every convolution layer holds (PyTorch's _ConvNd): sizes per spatial dim, [w] or [h, w]. */
abstract class ConvNd<S extends [number] | [number, number], In extends unknown[]> extends Module<In> {
  /** Channels of the input. */
  readonly inChannels: number;
  /** Channels of the output. */
  readonly outChannels: number;
  /** The kernel's size per spatial dim. */
  readonly kernelSize: S;
  /** The window step per spatial dim. */
  readonly stride: S;
  /** The padding per spatial dim, or 'valid' / 'same'. */
  readonly padding: S | 'valid' | 'same';
  /** Spacing between kernel elements per spatial dim. */
  readonly dilation: S;
  /** Whether it is a transposed convolution (the gradient of one with respect to its input). */
  readonly transposed: boolean;
  /** What a transposed convolution adds to the end of its output (zeros for the others). */
  readonly outputPadding: S;
  /** Independent channel groups. */
  readonly groups: number;
  /** What the padding holds. */
  readonly paddingMode: ConvPaddingMode;
  /** [outChannels, inChannels / groups, ...kernelSize], transposed [inChannels, outChannels / groups, ...kernelSize]. */
  weight: Parameter;
  /** [outChannels], or null without bias. */
  bias: Parameter | null;

  constructor(name: string, dims: 1 | 2, transposed: boolean, inChannels: number, outChannels: number, kernelSize: number | readonly number[], options: AnyLayerOptions) {
    super();
    const { stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, paddingMode = 'zeros' } = options;
    if (!Number.isInteger(groups) || groups < 1) throw new ValueError(`${name}: groups must be a positive integer, got ${groups}`);
    if (!Number.isInteger(inChannels) || inChannels < 1 || inChannels % groups !== 0) throw new ValueError(`${name}: inChannels (${inChannels}) must be a positive integer divisible by groups (${groups})`);
    if (!Number.isInteger(outChannels) || outChannels < 1 || outChannels % groups !== 0) throw new ValueError(`${name}: outChannels (${outChannels}) must be a positive integer divisible by groups (${groups})`);
    if (transposed && paddingMode !== 'zeros') throw new ValueError(`${name}: Only "zeros" padding mode is supported for ${name}, got '${String(paddingMode)}'`);
    if (!PADDING_MODES.includes(paddingMode)) throw new ValueError(`${name}: paddingMode must be one of 'zeros', 'reflect', 'replicate' or 'circular', got '${String(paddingMode)}'`);
    const sizes = (value: unknown, what: string, min: number) => spatialSizes(value, dims, what, name, min) as S;
    this.inChannels = inChannels;
    this.outChannels = outChannels;
    this.kernelSize = sizes(kernelSize, 'kernelSize', 1);
    this.stride = sizes(stride, 'stride', 1);
    this.dilation = sizes(dilation, 'dilation', 1);
    this.padding = typeof padding === 'string' && !transposed ? padding : sizes(padding, 'padding', 0);
    this.outputPadding = sizes('outputPadding' in options ? (options.outputPadding ?? 0) : 0, 'outputPadding', 0);
    this.transposed = transposed;
    this.groups = groups;
    this.paddingMode = paddingMode;
    if (!transposed) convPadding(name, this.padding, this.kernelSize, this.stride, this.dilation); // checks 'same' and strings
    const factory = factoryOf(options);
    const channels = transposed ? [inChannels, outChannels / groups] : [outChannels, inChannels / groups];
    this.weight = Parameter(empty([...channels, ...this.kernelSize], factory));
    this.bias = bias ? Parameter(empty([outChannels], factory)) : null;
    this.resetParameters();
  }

  /** weight ~ U(±1/√fan_in) (kaiming_uniform with a = √5), bias ~ U(±1/√fan_in), fan_in = weight.shape[1]·∏kernelSize. */
  resetParameters(): void {
    defaultLayerInit(this.weight, this.bias);
  }

  /** The input padded by a non-zero padding mode, with the padding the convolution then adds (none there). */
  protected padded(input: Tensor): [Tensor, S | 'valid' | 'same' | 0] {
    if (this.paddingMode === 'zeros') return [input, this.padding];
    // F.pad lists (before, after) pairs from the last dim backwards.
    const perDim = convPadding(this.constructor.name, this.padding, this.kernelSize, this.stride, this.dilation);
    return [pad(input, perDim.reverse().flat(), this.paddingMode), 0];
  }

  override extraRepr(): string {
    const list = (s: readonly number[]) => `[${s}]`;
    const parts = [`${this.inChannels}, ${this.outChannels}, kernelSize=${list(this.kernelSize)}, stride=${list(this.stride)}`];
    if (typeof this.padding === 'string' ? this.padding !== 'valid' : this.padding.some((p) => p !== 0)) {
      parts.push(`padding=${typeof this.padding === 'string' ? `'${this.padding}'` : list(this.padding)}`);
    }
    if (this.dilation.some((d) => d !== 1)) parts.push(`dilation=${list(this.dilation)}`);
    if (this.outputPadding.some((p) => p !== 0)) parts.push(`outputPadding=${list(this.outputPadding)}`);
    if (this.groups !== 1) parts.push(`groups=${this.groups}`);
    if (this.bias === null) parts.push('bias=false');
    if (this.paddingMode !== 'zeros') parts.push(`paddingMode='${this.paddingMode}'`);
    return parts.join(', ');
  }
}

const CONV_ARGS = ['stride', 'padding', 'dilation', 'groups', 'bias', 'paddingMode'] as const;
const TRANSPOSE_ARGS = ['stride', 'padding', 'outputPadding', 'groups', 'bias', 'dilation', 'paddingMode'] as const;

/** A 1-D convolution over [N, C, L] (or [C, L]) inputs, PyTorch's `nn.Conv1d` with its default initialisation. */
export class Conv1d extends ConvNd<[number], [Tensor]> {
  /** PyTorch's order: `new nn.Conv1d(16, 33, 3, 2)` is stride 2; the arguments after kernelSize may be given by name instead. */
  constructor(inChannels: number, outChannels: number, kernelSize: Single, ...args: Args<[stride: Single, padding: Conv1dPadding, dilation: Single, groups: number, bias: boolean, paddingMode: ConvPaddingMode], Conv1dLayerOptions>) {
    super('Conv1d', 1, false, inChannels, outChannels, kernelSize, bindArgs<Conv1dLayerOptions>('Conv1d', CONV_ARGS, args, FACTORY));
  }

  forward(input: Tensor): Tensor {
    const [x, padding] = this.padded(input);
    return conv1d(x, this.weight, this.bias, this.stride, padding as Conv1dPadding, this.dilation, this.groups);
  }
}

/** A 2-D convolution over [N, C, H, W] (or [C, H, W]) inputs, PyTorch's `nn.Conv2d` with its default initialisation. */
export class Conv2d extends ConvNd<[number, number], [Tensor]> {
  /** PyTorch's order: `new nn.Conv2d(1, 32, 3, 1)` is stride 1; the arguments after kernelSize may be given by name instead. */
  constructor(inChannels: number, outChannels: number, kernelSize: Pair, ...args: Args<[stride: Pair, padding: Conv2dPadding, dilation: Pair, groups: number, bias: boolean, paddingMode: ConvPaddingMode], Conv2dLayerOptions>) {
    super('Conv2d', 2, false, inChannels, outChannels, kernelSize, bindArgs<Conv2dLayerOptions>('Conv2d', CONV_ARGS, args, FACTORY));
  }

  forward(input: Tensor): Tensor {
    const [x, padding] = this.padded(input);
    return conv2d(x, this.weight, this.bias, this.stride, padding as Conv2dPadding, this.dilation, this.groups);
  }
}

/** The transposed layers: `forward(input, outputSize?)` picks the output padding that gives `outputSize`. */
abstract class ConvTransposeNd<S extends [number] | [number, number]> extends ConvNd<S, [input: Tensor, outputSize?: readonly number[] | null]> {
  /** The padding cut from both sides of the output, per spatial dim. */
  declare readonly padding: S;

  /** PyTorch's `_output_padding`: `outputPadding`, or what makes the output `outputSize` (spatial sizes, or with the batch and channel dims). */
  protected outputPaddingFor(input: Tensor, outputSize: readonly number[] | null | undefined): S {
    if (outputSize == null) return this.outputPadding;
    const dims = this.kernelSize.length;
    const leading = input.ndim === dims + 2 ? 2 : 1;
    const spatial = outputSize.length === dims + leading ? outputSize.slice(leading) : outputSize;
    if (spatial.length !== dims) {
      throw new ValueError(`${this.constructor.name}: for ${input.ndim}D input, outputSize must have ${dims} or ${dims + leading} elements (got ${outputSize.length})`);
    }
    const inputSize = input.shape.slice(-dims);
    const min = inputSize.map((n, i) => (n - 1) * this.stride[i]! - 2 * this.padding[i]! + this.dilation[i]! * (this.kernelSize[i]! - 1) + 1);
    const max = min.map((m, i) => m + this.stride[i]! - 1);
    if (spatial.some((s, i) => !Number.isInteger(s) || s < min[i]! || s > max[i]!)) {
      throw new ValueError(`${this.constructor.name}: requested an output size of [${spatial}], but valid sizes range from [${min}] to [${max}] (for an input of [${inputSize}])`);
    }
    return spatial.map((s, i) => s - min[i]!) as S;
  }
}

/** A 1-D transposed convolution over [N, C, L] (or [C, L]) inputs, PyTorch's `nn.ConvTranspose1d` with its default initialisation. */
export class ConvTranspose1d extends ConvTransposeNd<[number]> {
  /** PyTorch's order: `new nn.ConvTranspose1d(16, 33, 3, 2)` is stride 2; the arguments after kernelSize may be given by name instead. */
  constructor(
    inChannels: number, outChannels: number, kernelSize: Single,
    ...args: Args<[stride: Single, padding: Single, outputPadding: Single, groups: number, bias: boolean, dilation: Single, paddingMode: 'zeros'], ConvTranspose1dLayerOptions>
  ) {
    super('ConvTranspose1d', 1, true, inChannels, outChannels, kernelSize, bindArgs<ConvTranspose1dLayerOptions>('ConvTranspose1d', TRANSPOSE_ARGS, args, FACTORY));
  }

  /** The transposed convolution; `outputSize` ([L] or with the leading dims) picks the output length among the valid ones. */
  forward(input: Tensor, outputSize?: readonly number[] | null): Tensor {
    return convTranspose1d(input, this.weight, this.bias, this.stride, this.padding, this.outputPaddingFor(input, outputSize), this.groups, this.dilation);
  }
}

/** A 2-D transposed convolution over [N, C, H, W] (or [C, H, W]) inputs, PyTorch's `nn.ConvTranspose2d` with its default initialisation. */
export class ConvTranspose2d extends ConvTransposeNd<[number, number]> {
  /** PyTorch's order: `new nn.ConvTranspose2d(16, 33, 3, 2)` is stride 2; the arguments after kernelSize may be given by name instead. */
  constructor(
    inChannels: number, outChannels: number, kernelSize: Pair,
    ...args: Args<[stride: Pair, padding: Pair, outputPadding: Pair, groups: number, bias: boolean, dilation: Pair, paddingMode: 'zeros'], ConvTranspose2dLayerOptions>
  ) {
    super('ConvTranspose2d', 2, true, inChannels, outChannels, kernelSize, bindArgs<ConvTranspose2dLayerOptions>('ConvTranspose2d', TRANSPOSE_ARGS, args, FACTORY));
  }

  /** The transposed convolution; `outputSize` ([H, W] or with the leading dims) picks the output size among the valid ones. */
  forward(input: Tensor, outputSize?: readonly number[] | null): Tensor {
    return convTranspose2d(input, this.weight, this.bias, this.stride, this.padding, this.outputPaddingFor(input, outputSize), this.groups, this.dilation);
  }
}
