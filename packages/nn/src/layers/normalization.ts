// nn.LayerNorm, nn.RMSNorm, nn.GroupNorm, nn.BatchNorm1d/2d and nn.InstanceNorm1d/2d. Batch and
// instance norm share PyTorch's _NormBase: per-channel weight and bias, and the buffers
// running_mean / running_var / num_batches_tracked in fields runningMean / runningVar /
// numBatchesTracked (numBatchesTracked is int32 here; PyTorch: int64).
import { empty, int32, ShapeError, ValueError, zeros, noGrad, type Tensor } from '@core/tensor';
import { Module, type RegisteredNames } from '../module.js';
import { Parameter } from '../parameter.js';
import { batchNorm, groupNorm, instanceNorm, layerNorm, rmsNorm } from '../functional/normalization.js';
import { ones_, zeros_ } from '../init.js';
import { bindArgs, factoryOf, shapeText, type Args, type FactoryOptions } from '../internal/args.js';

/** weight = 1, bias = 0: the affine that changes nothing. */
function resetAffine(weight: Tensor | null, bias: Tensor | null): void {
  if (weight) ones_(weight);
  if (bias) zeros_(bias);
}

/** LayerNorm's options, plus where its parameters go. */
export interface LayerNormOptions extends FactoryOptions {
  /** Added to the variance for numerical stability (default 1e-5). */
  readonly eps?: number;
  /** Learn a per-element scale (and bias) over the normalised shape (default true). */
  readonly elementwiseAffine?: boolean;
  /** Learn a bias too (when elementwiseAffine). */
  readonly bias?: boolean;
}

/** A normalised shape as a frozen list of sizes, checked. */
function shapeOf(normalizedShape: number | readonly number[], op: string): readonly number[] {
  const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
  if (shape.length === 0 || shape.some((s) => !Number.isInteger(s) || s < 0)) throw new ValueError(`${op}: normalizedShape must be non-negative integers, got ${JSON.stringify(normalizedShape)}`);
  return Object.freeze(shape);
}

/**
 * Normalises over the last dims (`normalizedShape`) of each sample to zero mean and unit variance, then scales and shifts: PyTorch's `nn.LayerNorm`.
 */
export class LayerNorm extends Module {
  /** The trailing shape normalised over. */
  readonly normalizedShape: readonly number[];
  /** Added to the variance for numerical stability. */
  readonly eps: number;
  /** Whether `weight` and `bias` are learned. */
  readonly elementwiseAffine: boolean;
  /** The scale, shaped like normalizedShape (null without elementwiseAffine). */
  weight: Parameter | null;
  /** The shift, shaped like normalizedShape (null without it). */
  bias: Parameter | null;

  /** PyTorch's order: `new nn.LayerNorm(512, 1e-6)`, or the arguments after normalizedShape by name. */
  constructor(normalizedShape: number | readonly number[], ...args: Args<[eps: number, elementwiseAffine: boolean, bias: boolean], LayerNormOptions>) {
    super();
    const options = bindArgs<LayerNormOptions>('LayerNorm', ['eps', 'elementwiseAffine', 'bias'], args, ['device', 'dtype']);
    const { eps = 1e-5, elementwiseAffine = true, bias = true } = options;
    const shape = shapeOf(normalizedShape, 'LayerNorm');
    this.normalizedShape = shape;
    this.eps = eps;
    this.elementwiseAffine = elementwiseAffine;
    this.weight = elementwiseAffine ? Parameter(empty(shape, factoryOf(options))) : null;
    this.bias = elementwiseAffine && bias ? Parameter(empty(shape, factoryOf(options))) : null;
    this.resetParameters();
  }

  /** weight = 1, bias = 0. */
  resetParameters(): void {
    resetAffine(this.weight, this.bias);
  }

  forward(input: Tensor): Tensor {
    return layerNorm(input, this.normalizedShape, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `${shapeText(this.normalizedShape)}, eps=${this.eps}, elementwiseAffine=${this.elementwiseAffine}`;
  }
}

/** RMSNorm's options, plus where its weight goes. */
export interface RMSNormOptions extends FactoryOptions {
  /** Added to the mean square (default null: the computation dtype's machine epsilon). */
  readonly eps?: number | null;
  /** Learn a per-element scale over the normalised shape (default true). */
  readonly elementwiseAffine?: boolean;
}

/** x / √(mean(x²) + eps) · weight over the last dims (`normalizedShape`): PyTorch's `nn.RMSNorm` (`F.rmsNorm`). */
export class RMSNorm extends Module {
  /** The trailing shape normalised over. */
  readonly normalizedShape: readonly number[];
  /** Added to the mean square; null: the computation dtype's machine epsilon. */
  readonly eps: number | null;
  /** Whether `weight` is learned. */
  readonly elementwiseAffine: boolean;
  /** The scale, shaped like normalizedShape (null without elementwiseAffine). */
  weight: Parameter | null;

  /** PyTorch's order: `new nn.RMSNorm(512, 1e-6)`, or the arguments after normalizedShape by name. */
  constructor(normalizedShape: number | readonly number[], ...args: Args<[eps: number | null, elementwiseAffine: boolean], RMSNormOptions>) {
    super();
    const options = bindArgs<RMSNormOptions>('RMSNorm', ['eps', 'elementwiseAffine'], args, ['device', 'dtype']);
    const { eps = null, elementwiseAffine = true } = options;
    this.normalizedShape = shapeOf(normalizedShape, 'RMSNorm');
    this.eps = eps;
    this.elementwiseAffine = elementwiseAffine;
    this.weight = elementwiseAffine ? Parameter(empty(this.normalizedShape, factoryOf(options))) : null;
    this.resetParameters();
  }

  /** weight = 1. */
  resetParameters(): void {
    resetAffine(this.weight, null);
  }

  forward(input: Tensor): Tensor {
    return rmsNorm(input, this.normalizedShape, this.weight, this.eps);
  }

  override extraRepr(): string {
    return `${shapeText(this.normalizedShape)}, eps=${this.eps}, elementwiseAffine=${this.elementwiseAffine}`;
  }
}

/** GroupNorm's options, plus where its parameters go. */
export interface GroupNormOptions extends FactoryOptions {
  /** Added to the variance (default 1e-5). */
  readonly eps?: number;
  /** Learn a per-channel scale and shift (default true). */
  readonly affine?: boolean;
}

/** Normalises each sample's channel groups over their channels and positions, then a per-channel affine: PyTorch's `nn.GroupNorm` (`F.groupNorm`). */
export class GroupNorm extends Module {
  /** Groups the channels are split into. */
  readonly numGroups: number;
  /** Channels (C), divisible by numGroups. */
  readonly numChannels: number;
  /** Added to the variance. */
  readonly eps: number;
  /** Whether `weight` and `bias` are learned. */
  readonly affine: boolean;
  /** The per-channel scale [C] (null without affine). */
  weight: Parameter | null;
  /** The per-channel shift [C] (null without affine). */
  bias: Parameter | null;

  /** PyTorch's order: `new nn.GroupNorm(8, 64)`, then eps and affine (or by name). */
  constructor(numGroups: number, numChannels: number, ...args: Args<[eps: number, affine: boolean], GroupNormOptions>) {
    super();
    const options = bindArgs<GroupNormOptions>('GroupNorm', ['eps', 'affine'], args, ['device', 'dtype']);
    const { eps = 1e-5, affine = true } = options;
    if (!Number.isInteger(numGroups) || numGroups < 1) throw new ValueError(`GroupNorm: numGroups must be a positive integer, got ${numGroups}`);
    if (!Number.isInteger(numChannels) || numChannels < 0 || numChannels % numGroups !== 0) {
      throw new ValueError(`GroupNorm: num_channels must be divisible by num_groups (got numChannels=${numChannels}, numGroups=${numGroups})`);
    }
    this.numGroups = numGroups;
    this.numChannels = numChannels;
    this.eps = eps;
    this.affine = affine;
    this.weight = affine ? Parameter(empty([numChannels], factoryOf(options))) : null;
    this.bias = affine ? Parameter(empty([numChannels], factoryOf(options))) : null;
    this.resetParameters();
  }

  /** weight = 1, bias = 0. */
  resetParameters(): void {
    resetAffine(this.weight, this.bias);
  }

  forward(input: Tensor): Tensor {
    return groupNorm(input, this.numGroups, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `${this.numGroups}, ${this.numChannels}, eps=${this.eps}, affine=${this.affine}`;
  }
}

/** Batch and instance norm's options, plus where their parameters and buffers go. */
export interface BatchNormOptions extends FactoryOptions {
  /** Added to the variance for numerical stability (default 1e-5). */
  readonly eps?: number;
  /** Weight of the new batch in the running averages; null = cumulative average. */
  readonly momentum?: number | null;
  /** Learn a per-channel scale and shift (default true for batch norm, false for instance norm). */
  readonly affine?: boolean;
  /** Keep running mean and variance for eval mode (default true for batch norm, false for instance norm); without them, batch statistics are used always. */
  readonly trackRunningStats?: boolean;
}

/** The arguments after numFeatures, in PyTorch's order. */
type NormArgs = Args<[eps: number, momentum: number | null, affine: boolean, trackRunningStats: boolean], BatchNormOptions>;

/** PyTorch's _NormBase: what batch and instance norm share (parameters, buffers, resets, ranks). */
abstract class NormBase extends Module {
  /** The buffers' PyTorch names: `running_mean`, `running_var`, `num_batches_tracked`. */
  static override readonly registeredNames: RegisteredNames<NormBase> = {
    runningMean: 'running_mean', runningVar: 'running_var', numBatchesTracked: 'num_batches_tracked',
  };
  /** Channels (C). */
  readonly numFeatures: number;
  /** Added to the variance for numerical stability. */
  readonly eps: number;
  /** Weight of the new batch in the running averages; null = cumulative average. */
  readonly momentum: number | null;
  /** Whether `weight` and `bias` are learned. */
  readonly affine: boolean;
  /** Whether running statistics are kept (and used in eval mode). */
  readonly trackRunningStats: boolean;
  /** The per-channel scale [C] (null without affine). */
  weight: Parameter | null;
  /** The per-channel shift [C] (null without affine). */
  bias: Parameter | null;
  /** The running mean per channel [C], buffer `running_mean` (null without trackRunningStats). */
  declare runningMean: Tensor | null;
  /** The running (unbiased) variance per channel [C], buffer `running_var` (null without trackRunningStats). */
  declare runningVar: Tensor | null;
  /** Training batches seen, int32 buffer `num_batches_tracked` (null without trackRunningStats). */
  declare numBatchesTracked: Tensor | null;

  /** The input ranks accepted. */
  protected abstract readonly ranks: readonly number[];

  constructor(numFeatures: number, args: NormArgs, defaults: { affine: boolean; trackRunningStats: boolean }) {
    super();
    const name = this.constructor.name;
    const options = bindArgs<BatchNormOptions>(name, ['eps', 'momentum', 'affine', 'trackRunningStats'], args, ['device', 'dtype']);
    const { eps = 1e-5, momentum = 0.1, affine = defaults.affine, trackRunningStats = defaults.trackRunningStats, device } = options;
    if (!Number.isInteger(numFeatures) || numFeatures < 1) throw new ValueError(`${name}: numFeatures must be a positive integer, got ${numFeatures}`);
    this.numFeatures = numFeatures;
    this.eps = eps;
    this.momentum = momentum;
    this.affine = affine;
    this.trackRunningStats = trackRunningStats;
    this.weight = affine ? Parameter(empty([numFeatures], factoryOf(options))) : null;
    this.bias = affine ? Parameter(empty([numFeatures], factoryOf(options))) : null;
    this.registerBuffer('running_mean', trackRunningStats ? zeros([numFeatures], factoryOf(options)) : null);
    this.registerBuffer('running_var', trackRunningStats ? zeros([numFeatures], factoryOf(options)) : null);
    this.registerBuffer('num_batches_tracked', trackRunningStats ? zeros([], { dtype: int32, ...(device !== undefined ? { device } : {}) }) : null);
    this.resetParameters();
  }

  /** runningMean = 0, runningVar = 1, numBatchesTracked = 0. */
  resetRunningStats(): void {
    if (this.runningMean) zeros_(this.runningMean);
    if (this.runningVar) ones_(this.runningVar);
    if (this.numBatchesTracked) zeros_(this.numBatchesTracked);
  }

  /** Running stats reset, weight = 1, bias = 0. */
  resetParameters(): void {
    this.resetRunningStats();
    resetAffine(this.weight, this.bias);
  }

  /** Throw PyTorch's error for an input rank the layer does not take. */
  protected checkRank(input: Tensor): void {
    if (!this.ranks.includes(input.ndim)) {
      throw new ShapeError(`${this.constructor.name}: expected ${this.ranks.map((r) => `${r}D`).join(' or ')} input (got ${input.ndim}D input of shape ${shapeText(input.shape)})`, this.constructor.name);
    }
  }

  override extraRepr(): string {
    return `${this.numFeatures}, eps=${this.eps}, momentum=${this.momentum}, affine=${this.affine}, trackRunningStats=${this.trackRunningStats}`;
  }
}

/** Shared by BatchNorm1d and BatchNorm2d, which differ only in the input ranks they accept. */
abstract class BatchNormBase extends NormBase {
  /** PyTorch's order: `new nn.BatchNorm2d(64, 1e-3, 0.01)`, or the arguments after numFeatures by name. */
  constructor(numFeatures: number, ...args: NormArgs) {
    super(numFeatures, args, { affine: true, trackRunningStats: true });
  }

  forward(input: Tensor): Tensor {
    this.checkRank(input);
    let factor = this.momentum ?? 0;
    if (this.training && this.trackRunningStats && this.numBatchesTracked) {
      const tracked = this.numBatchesTracked;
      noGrad(() => tracked.add_(1));
      // momentum null: a cumulative moving average, 1/n for the n-th batch.
      if (this.momentum === null) factor = 1 / tracked.dataSync()[0]!;
    }
    // Batch statistics in training, and in eval when no running stats are kept (PyTorch's
    // bn_training); the running stats, when kept, are then updated with `factor`.
    const useBatchStats = this.training || (this.runningMean === null && this.runningVar === null);
    return batchNorm(input, this.runningMean, this.runningVar, this.weight, this.bias, useBatchStats, factor, this.eps);
  }
}

/** Batch norm over [N, C] or [N, C, L]. */
export class BatchNorm1d extends BatchNormBase {
  /** Input ranks accepted: [N, C] and [N, C, L]. */
  protected readonly ranks = [2, 3] as const;
}

/** Batch norm over [N, C, H, W]. */
export class BatchNorm2d extends BatchNormBase {
  /** Input rank accepted: [N, C, H, W]. */
  protected readonly ranks = [4] as const;
}

/**
 * Shared by InstanceNorm1d and InstanceNorm2d: each sample's channels normalised over their
 * positions. PyTorch's defaults: no affine, no running stats; with trackRunningStats, eval mode
 * normalises with the running stats. An unbatched input (one rank less) is one sample.
 */
abstract class InstanceNormBase extends NormBase {
  /** PyTorch's order: `new nn.InstanceNorm2d(64, 1e-5, 0.1, true)`, or the arguments after numFeatures by name. */
  constructor(numFeatures: number, ...args: NormArgs) {
    super(numFeatures, args, { affine: false, trackRunningStats: false });
    if (this.momentum === null) throw new ValueError(`${this.constructor.name}: momentum must be a number (instance norm has no cumulative average)`);
  }

  forward(input: Tensor): Tensor {
    this.checkRank(input);
    const unbatched = input.ndim === this.ranks[0];
    const channelDim = unbatched ? 0 : 1;
    if (this.affine && input.shape[channelDim] !== this.numFeatures) {
      throw new ValueError(`${this.constructor.name}: expected input's size at dim=${channelDim} to match num_features (${this.numFeatures}), but got: ${input.shape[channelDim]}.`);
    }
    const x = unbatched ? input.unsqueeze(0) : input;
    const useInputStats = this.training || !this.trackRunningStats;
    const y = instanceNorm(x, this.runningMean, this.runningVar, this.weight, this.bias, useInputStats, this.momentum!, this.eps);
    return unbatched ? y.squeeze(0) : y;
  }
}

/** Instance norm over [N, C, L] (or unbatched [C, L]). */
export class InstanceNorm1d extends InstanceNormBase {
  /** Input ranks accepted: [C, L] and [N, C, L]. */
  protected readonly ranks = [2, 3] as const;
}

/** Instance norm over [N, C, H, W] (or unbatched [C, H, W]). */
export class InstanceNorm2d extends InstanceNormBase {
  /** Input ranks accepted: [C, H, W] and [N, C, H, W]. */
  protected readonly ranks = [3, 4] as const;
}
