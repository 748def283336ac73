// nn.Linear(inFeatures, outFeatures): y = x·Wᵀ + b, with PyTorch's default init.
import { empty, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { linear } from '../functional/linear.js';
import { defaultLayerInit } from '../internal/layer-init.js';
import { bindArgs, factoryOf, type Args, type FactoryOptions } from '../internal/args.js';

/** Linear's options, plus where its parameters go. */
export interface LinearOptions extends FactoryOptions {
  /** Learn an additive bias (default true). */
  readonly bias?: boolean;
}

function checkSize(value: number, name: string, op: string): void {
  if (!Number.isInteger(value) || value < 0) throw new ValueError(`${op}: ${name} must be a non-negative integer, got ${value}`);
}

/** y = x·Wᵀ + b over the last dim, PyTorch's `nn.Linear` with its default initialisation. */
export class Linear extends Module {
  /** The size of each input's last dim. */
  readonly inFeatures: number;
  /** The size of each output's last dim. */
  readonly outFeatures: number;
  /** [outFeatures, inFeatures]. */
  weight: Parameter;
  /** [outFeatures], or null without bias. */
  bias: Parameter | null;

  /** `new nn.Linear(4, 3, false)` or `new nn.Linear(4, 3, { bias: false, dtype: float64 })`. */
  constructor(inFeatures: number, outFeatures: number, ...args: Args<[bias: boolean], LinearOptions>) {
    super();
    const options = bindArgs<LinearOptions>('Linear', ['bias'], args, ['device', 'dtype']);
    const { bias = true } = options;
    checkSize(inFeatures, 'inFeatures', 'Linear');
    checkSize(outFeatures, 'outFeatures', 'Linear');
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    const factory = factoryOf(options);
    this.weight = Parameter(empty([outFeatures, inFeatures], factory));
    this.bias = bias ? Parameter(empty([outFeatures], factory)) : null;
    this.resetParameters();
  }

  /** weight ~ U(±1/√inFeatures) (kaiming_uniform with a = √5), bias ~ U(±1/√inFeatures). */
  resetParameters(): void {
    defaultLayerInit(this.weight, this.bias);
  }

  forward(input: Tensor): Tensor {
    return linear(input, this.weight, this.bias);
  }

  override extraRepr(): string {
    return `inFeatures=${this.inFeatures}, outFeatures=${this.outFeatures}, bias=${this.bias !== null}`;
  }
}

/** A placeholder that returns its input (handy when swapping layers out). */
export class Identity extends Module {
  forward(input: Tensor): Tensor {
    return input;
  }
}
