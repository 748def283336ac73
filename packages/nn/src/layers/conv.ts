// nn.Conv2d(inChannels, outChannels, kernelSize, stride, padding, dilation, groups, bias,
// paddingMode), each after kernelSize also by name: { stride, padding, …, device, dtype }.
import { empty, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { conv2d, type Conv2dPadding } from '../functional/conv.js';
import { defaultLayerInit } from '../internal/layer-init.js';
import { bindArgs, factoryOf, pair, type Args, type FactoryOptions, type Pair } from '../internal/args.js';

/** Conv2d's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface Conv2dLayerOptions extends FactoryOptions {
  /** The window step (default 1). */
  readonly stride?: Pair;
  /** Zeros added on each side, 'valid' (none) or 'same' (keep the size; stride 1 only). Default 0. */
  readonly padding?: Conv2dPadding;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Pair;
  /** Independent channel groups; both channel counts must divide by it (default 1). */
  readonly groups?: number;
  /** Learn an additive bias per output channel (default true). */
  readonly bias?: boolean;
  /** Only zero padding is implemented. */
  readonly paddingMode?: 'zeros';
}

/** A 2-D convolution over [N, C, H, W] (or [C, H, W]) inputs, PyTorch's `nn.Conv2d` with its default initialisation. */
export class Conv2d extends Module {
  /** Channels of the input. */
  readonly inChannels: number;
  /** Channels of the output. */
  readonly outChannels: number;
  /** [kH, kW]. */
  readonly kernelSize: [number, number];
  /** The window step, [h, w]. */
  readonly stride: [number, number];
  /** The zero padding, [h, w], or 'valid' / 'same'. */
  readonly padding: [number, number] | 'valid' | 'same';
  /** Spacing between kernel elements, [h, w]. */
  readonly dilation: [number, number];
  /** Independent channel groups. */
  readonly groups: number;
  /** [outChannels, inChannels / groups, kH, kW]. */
  weight: Parameter;
  /** [outChannels], or null without bias. */
  bias: Parameter | null;

  /** PyTorch's order: `new nn.Conv2d(1, 32, 3, 1)` is stride 1; the arguments after kernelSize may be given by name instead. */
  constructor(inChannels: number, outChannels: number, kernelSize: Pair, ...args: Args<[stride: Pair, padding: Conv2dPadding, dilation: Pair, groups: number, bias: boolean, paddingMode: 'zeros'], Conv2dLayerOptions>) {
    super();
    const options = bindArgs<Conv2dLayerOptions>('Conv2d', ['stride', 'padding', 'dilation', 'groups', 'bias', 'paddingMode'], args, ['device', 'dtype']);
    const { stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, paddingMode = 'zeros' } = options;
    if (!Number.isInteger(groups) || groups < 1) throw new ValueError(`Conv2d: groups must be a positive integer, got ${groups}`);
    if (!Number.isInteger(inChannels) || inChannels < 1 || inChannels % groups !== 0) throw new ValueError(`Conv2d: inChannels (${inChannels}) must be a positive integer divisible by groups (${groups})`);
    if (!Number.isInteger(outChannels) || outChannels < 1 || outChannels % groups !== 0) throw new ValueError(`Conv2d: outChannels (${outChannels}) must be a positive integer divisible by groups (${groups})`);
    if (paddingMode !== 'zeros') throw new ValueError(`Conv2d: paddingMode '${String(paddingMode)}' is not implemented; only 'zeros' is`);
    this.inChannels = inChannels;
    this.outChannels = outChannels;
    this.kernelSize = pair(kernelSize, 'kernelSize', 'Conv2d', 1);
    this.stride = pair(stride, 'stride', 'Conv2d', 1);
    this.padding = typeof padding === 'string' ? padding : pair(padding, 'padding', 'Conv2d');
    this.dilation = pair(dilation, 'dilation', 'Conv2d', 1);
    this.groups = groups;
    if (padding === 'same' && (this.stride[0] !== 1 || this.stride[1] !== 1)) throw new ValueError("Conv2d: padding='same' is not supported for strided convolutions");
    const factory = factoryOf(options);
    this.weight = Parameter(empty([outChannels, inChannels / groups, ...this.kernelSize], factory));
    this.bias = bias ? Parameter(empty([outChannels], factory)) : null;
    this.resetParameters();
  }

  /** weight ~ U(±1/√fan_in) (kaiming_uniform with a = √5), bias ~ U(±1/√fan_in), fan_in = C/groups·kH·kW. */
  resetParameters(): void {
    defaultLayerInit(this.weight, this.bias);
  }

  forward(input: Tensor): Tensor {
    return conv2d(input, this.weight, this.bias, { stride: this.stride, padding: this.padding, dilation: this.dilation, groups: this.groups });
  }

  override extraRepr(): string {
    const parts = [`${this.inChannels}, ${this.outChannels}, kernelSize=[${this.kernelSize}], stride=[${this.stride}]`];
    if (this.padding !== 'valid' && (typeof this.padding === 'string' || this.padding.some((p) => p !== 0))) parts.push(`padding=${typeof this.padding === 'string' ? `'${this.padding}'` : `[${this.padding}]`}`);
    if (this.dilation.some((d) => d !== 1)) parts.push(`dilation=[${this.dilation}]`);
    if (this.groups !== 1) parts.push(`groups=${this.groups}`);
    if (this.bias === null) parts.push('bias=false');
    return parts.join(', ');
  }
}
