// nn.LayerNorm and nn.BatchNorm1d/2d. BatchNorm keeps runningMean/runningVar/numBatchesTracked
// buffers (numBatchesTracked is int32 here; PyTorch: int64).
import { empty, int32, ShapeError, ValueError, zeros, noGrad, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { batchNorm, layerNorm } from '../functional/normalization.js';
import { ones_, zeros_ } from '../init.js';
import { shapeText, type FactoryOptions } from '../internal/args.js';

function factoryOf({ device, dtype }: FactoryOptions) {
  return { ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) };
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

  constructor(normalizedShape: number | readonly number[], options: LayerNormOptions = {}) {
    super();
    const { eps = 1e-5, elementwiseAffine = true, bias = true } = options;
    const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
    if (shape.length === 0 || shape.some((s) => !Number.isInteger(s) || s < 0)) throw new ValueError(`LayerNorm: normalizedShape must be non-negative integers, got ${JSON.stringify(normalizedShape)}`);
    this.normalizedShape = Object.freeze(shape);
    this.eps = eps;
    this.elementwiseAffine = elementwiseAffine;
    this.weight = elementwiseAffine ? Parameter(empty(shape, factoryOf(options))) : null;
    this.bias = elementwiseAffine && bias ? Parameter(empty(shape, factoryOf(options))) : null;
    this.resetParameters();
  }

  /** weight = 1, bias = 0. */
  resetParameters(): void {
    if (this.weight) ones_(this.weight);
    if (this.bias) zeros_(this.bias);
  }

  forward(input: Tensor): Tensor {
    return layerNorm(input, this.normalizedShape, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `${shapeText(this.normalizedShape)}, eps=${this.eps}, elementwiseAffine=${this.elementwiseAffine}`;
  }
}

export interface BatchNormOptions extends FactoryOptions {
  /** Added to the variance for numerical stability (default 1e-5). */
  readonly eps?: number;
  /** Weight of the new batch in the running averages; null = cumulative average. */
  readonly momentum?: number | null;
  /** Learn a per-channel scale and shift (default true). */
  readonly affine?: boolean;
  /** Keep running mean and variance for eval mode (default true); without them, batch statistics are used always. */
  readonly trackRunningStats?: boolean;
}

/** Shared by BatchNorm1d and BatchNorm2d, which differ only in the input ranks they accept. */
abstract class BatchNormBase extends Module {
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
  /** The running mean per channel [C], a buffer (null without trackRunningStats). */
  declare runningMean: Tensor | null;
  /** The running (unbiased) variance per channel [C], a buffer (null without trackRunningStats). */
  declare runningVar: Tensor | null;
  /** Training batches seen, an int32 buffer (null without trackRunningStats). */
  declare numBatchesTracked: Tensor | null;

  protected abstract readonly ranks: readonly number[];

  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    super();
    const { eps = 1e-5, momentum = 0.1, affine = true, trackRunningStats = true, device } = options;
    if (!Number.isInteger(numFeatures) || numFeatures < 1) throw new ValueError(`${new.target.name}: numFeatures must be a positive integer, got ${numFeatures}`);
    this.numFeatures = numFeatures;
    this.eps = eps;
    this.momentum = momentum;
    this.affine = affine;
    this.trackRunningStats = trackRunningStats;
    this.weight = affine ? Parameter(empty([numFeatures], factoryOf(options))) : null;
    this.bias = affine ? Parameter(empty([numFeatures], factoryOf(options))) : null;
    if (trackRunningStats) {
      this.registerBuffer('runningMean', zeros([numFeatures], factoryOf(options)));
      this.registerBuffer('runningVar', zeros([numFeatures], factoryOf(options)));
      this.registerBuffer('numBatchesTracked', zeros([], { dtype: int32, ...(device !== undefined ? { device } : {}) }));
    } else {
      this.registerBuffer('runningMean', null);
      this.registerBuffer('runningVar', null);
      this.registerBuffer('numBatchesTracked', null);
    }
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
    if (this.weight) ones_(this.weight);
    if (this.bias) zeros_(this.bias);
  }

  forward(input: Tensor): Tensor {
    if (!this.ranks.includes(input.ndim)) {
      throw new ShapeError(`${this.constructor.name}: expected ${this.ranks.map((r) => `${r}D`).join(' or ')} input (got ${input.ndim}D input of shape ${shapeText(input.shape)})`, this.constructor.name);
    }
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

  override extraRepr(): string {
    return `${this.numFeatures}, eps=${this.eps}, momentum=${this.momentum}, affine=${this.affine}, trackRunningStats=${this.trackRunningStats}`;
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
