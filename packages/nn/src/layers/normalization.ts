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

export interface LayerNormOptions extends FactoryOptions {
  readonly eps?: number;
  readonly elementwiseAffine?: boolean;
  /** Learn a bias too (when elementwiseAffine). */
  readonly bias?: boolean;
}

export class LayerNorm extends Module {
  readonly normalizedShape: readonly number[];
  readonly eps: number;
  readonly elementwiseAffine: boolean;
  weight: Parameter | null;
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
  readonly eps?: number;
  /** Weight of the new batch in the running averages; null = cumulative average. */
  readonly momentum?: number | null;
  readonly affine?: boolean;
  readonly trackRunningStats?: boolean;
}

/** Shared by BatchNorm1d and BatchNorm2d, which differ only in the input ranks they accept. */
abstract class BatchNormBase extends Module {
  readonly numFeatures: number;
  readonly eps: number;
  readonly momentum: number | null;
  readonly affine: boolean;
  readonly trackRunningStats: boolean;
  weight: Parameter | null;
  bias: Parameter | null;
  declare runningMean: Tensor | null;
  declare runningVar: Tensor | null;
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
  protected readonly ranks = [2, 3] as const;
}

/** Batch norm over [N, C, H, W]. */
export class BatchNorm2d extends BatchNormBase {
  protected readonly ranks = [4] as const;
}
