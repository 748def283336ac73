// nn.Conv2d(inChannels, outChannels, kernelSize, { stride, padding, dilation, groups, bias }).
import { empty, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { conv2d, type Conv2dPadding } from '../functional/conv.js';
import { defaultLayerInit } from '../internal/layer-init.js';
import { pair, type FactoryOptions, type Pair } from '../internal/args.js';

export interface Conv2dLayerOptions extends FactoryOptions {
  readonly stride?: Pair;
  readonly padding?: Conv2dPadding;
  readonly dilation?: Pair;
  readonly groups?: number;
  readonly bias?: boolean;
  /** Only zero padding is implemented. */
  readonly paddingMode?: 'zeros';
}

export class Conv2d extends Module {
  readonly inChannels: number;
  readonly outChannels: number;
  readonly kernelSize: [number, number];
  readonly stride: [number, number];
  readonly padding: [number, number] | 'valid' | 'same';
  readonly dilation: [number, number];
  readonly groups: number;
  /** [outChannels, inChannels / groups, kH, kW]. */
  weight: Parameter;
  bias: Parameter | null;

  constructor(inChannels: number, outChannels: number, kernelSize: Pair, options: Conv2dLayerOptions = {}) {
    super();
    const { stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, paddingMode = 'zeros', device, dtype } = options;
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
    const factory = { ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) };
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
