// nn.Embedding(numEmbeddings, embeddingDim, paddingIdx, maxNorm, normType, scaleGradByFreq,
// sparse, _weight) and nn.EmbeddingBag: lookup tables of N(0, 1) rows; the paddingIdx row starts
// at zero and receives no gradient.
import { empty, noGrad, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { embedding, embeddingBag, paddingIndex, type EmbeddingArgs, type EmbeddingBagMode } from '../functional/embedding.js';
import { normal_ } from '../init.js';
import { bindArgs, factoryOf, shapeText, type Args, type FactoryOptions } from '../internal/args.js';

/** Embedding's options, plus where its weight goes. */
export interface EmbeddingOptions extends EmbeddingArgs, FactoryOptions {
  /** A ready weight [numEmbeddings, embeddingDim] to use (shared, not copied) instead of N(0, 1) rows. */
  readonly _weight?: Tensor | null;
}

/** EmbeddingBag's options, plus where its weight goes. */
export interface EmbeddingBagOptions extends EmbeddingOptions {
  /** 'mean' (default), 'sum' or 'max' over each bag. */
  readonly mode?: EmbeddingBagMode;
  /** `offsets` has one more entry, the end of the last bag (default false). */
  readonly includeLastOffset?: boolean;
}

/** The lookup table both layers hold, and its options. */
abstract class Table<In extends unknown[]> extends Module<In, Tensor> {
  /** Rows in the table. */
  readonly numEmbeddings: number;
  /** The size of each vector. */
  readonly embeddingDim: number;
  /** The padding row (normalised to non-negative), or null. */
  readonly paddingIdx: number | null;
  /** Looked-up rows with a larger norm are renormalised in place to it; null: never. */
  readonly maxNorm: number | null;
  /** The p of the norm `maxNorm` bounds. */
  readonly normType: number;
  /** Each row's gradient is divided by how often the batch looks it up. */
  readonly scaleGradByFreq: boolean;
  /** [numEmbeddings, embeddingDim]. */
  weight: Parameter;

  constructor(numEmbeddings: number, embeddingDim: number, options: EmbeddingOptions) {
    super();
    const name = this.constructor.name;
    for (const [what, v] of [['numEmbeddings', numEmbeddings], ['embeddingDim', embeddingDim]] as const) {
      if (!Number.isInteger(v) || v < 0) throw new ValueError(`${name}: ${what} must be a non-negative integer, got ${v}`);
    }
    if (options.sparse) throw new ValueError(`${name}: sparse gradients are not supported; use sparse: false (dense gradients, the default)`);
    this.numEmbeddings = numEmbeddings;
    this.embeddingDim = embeddingDim;
    this.paddingIdx = paddingIndex(options.paddingIdx, numEmbeddings, name);
    this.maxNorm = options.maxNorm ?? null;
    this.normType = options.normType ?? 2;
    this.scaleGradByFreq = options.scaleGradByFreq ?? false;
    const given = options._weight;
    if (given != null) {
      if (given.ndim !== 2 || given.shape[0] !== numEmbeddings || given.shape[1] !== embeddingDim) {
        throw new ShapeError(`${name}: Shape of weight does not match num_embeddings and embedding_dim: expected [${numEmbeddings}, ${embeddingDim}], got ${shapeText(given.shape)}`, name);
      }
      this.weight = Parameter(given);
    } else {
      this.weight = Parameter(empty([numEmbeddings, embeddingDim], factoryOf(options)));
      this.resetParameters();
    }
  }

  /** weight ~ N(0, 1), with the paddingIdx row zeroed. */
  resetParameters(): void {
    normal_(this.weight);
    if (this.paddingIdx !== null) {
      const row = this.weight.select(0, this.paddingIdx);
      noGrad(() => row.fill_(0));
    }
  }

  /** The lookup options the functional forms take. */
  protected get lookup(): EmbeddingArgs {
    return { paddingIdx: this.paddingIdx, maxNorm: this.maxNorm, normType: this.normType, scaleGradByFreq: this.scaleGradByFreq };
  }

  override extraRepr(): string {
    const parts = [`${this.numEmbeddings}, ${this.embeddingDim}`];
    if (this.paddingIdx !== null) parts.push(`paddingIdx=${this.paddingIdx}`);
    if (this.maxNorm !== null) parts.push(`maxNorm=${this.maxNorm}`);
    if (this.normType !== 2) parts.push(`normType=${this.normType}`);
    if (this.scaleGradByFreq) parts.push('scaleGradByFreq=true');
    return parts.join(', ');
  }
}

const EMBEDDING_ARGS = ['paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse', '_weight'] as const;

/**
 * A lookup table of `numEmbeddings` vectors of size `embeddingDim`, indexed by int32 tensors (PyTorch's `nn.Embedding`).
 */
export class Embedding extends Table<[Tensor]> {
  /** PyTorch's order: `new nn.Embedding(1000, 64, 0)` has paddingIdx 0; the arguments after embeddingDim may be given by name. */
  constructor(numEmbeddings: number, embeddingDim: number, ...args: Args<[paddingIdx: number | null, maxNorm: number | null, normType: number, scaleGradByFreq: boolean, sparse: boolean, _weight: Tensor | null], EmbeddingOptions>) {
    super(numEmbeddings, embeddingDim, bindArgs<EmbeddingOptions>('Embedding', [...EMBEDDING_ARGS], args, ['device', 'dtype']));
  }

  /**
   * An Embedding over `embeddings` [rows, dim] (shared, not copied), frozen (no gradient) unless
   * `freeze` is false. PyTorch's `nn.Embedding.from_pretrained`.
   */
  static fromPretrained(embeddings: Tensor, ...args: Args<[freeze: boolean, paddingIdx: number | null, maxNorm: number | null, normType: number, scaleGradByFreq: boolean, sparse: boolean], EmbeddingArgs & { readonly freeze?: boolean }>): Embedding {
    const { freeze = true, ...options } = bindArgs<EmbeddingArgs & { freeze: boolean }>(
      'Embedding.fromPretrained', ['freeze', 'paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse'], args,
    );
    if (embeddings.ndim !== 2) throw new ShapeError(`Embedding.fromPretrained: Embeddings parameter is expected to be 2-dimensional, got ${shapeText(embeddings.shape)}`, 'Embedding.fromPretrained');
    const layer = new Embedding(embeddings.shape[0]!, embeddings.shape[1]!, { ...options, _weight: embeddings });
    layer.weight.requiresGrad_(!freeze);
    return layer;
  }

  /** `input`: int32 indices of any shape; the output appends embeddingDim. */
  forward(input: Tensor): Tensor {
    return embedding(input, this.weight, this.lookup);
  }
}

/**
 * Sums, means or maxima of bags of embeddings without materialising each lookup per bag (PyTorch's `nn.EmbeddingBag`, `F.embeddingBag`).
 */
export class EmbeddingBag extends Table<[input: Tensor, offsets?: Tensor | null, perSampleWeights?: Tensor | null]> {
  /** How each bag is reduced. */
  readonly mode: EmbeddingBagMode;
  /** `offsets` has one more entry, the end of the last bag. */
  readonly includeLastOffset: boolean;

  /** PyTorch's order: (numEmbeddings, embeddingDim, maxNorm, normType, scaleGradByFreq, mode, sparse, _weight, includeLastOffset, paddingIdx), or by name. */
  constructor(
    numEmbeddings: number,
    embeddingDim: number,
    ...args: Args<[maxNorm: number | null, normType: number, scaleGradByFreq: boolean, mode: EmbeddingBagMode, sparse: boolean, _weight: Tensor | null, includeLastOffset: boolean, paddingIdx: number | null], EmbeddingBagOptions>
  ) {
    const options = bindArgs<EmbeddingBagOptions>(
      'EmbeddingBag', ['maxNorm', 'normType', 'scaleGradByFreq', 'mode', 'sparse', '_weight', 'includeLastOffset', 'paddingIdx'], args, ['device', 'dtype'],
    );
    super(numEmbeddings, embeddingDim, options);
    this.mode = options.mode ?? 'mean';
    if (this.mode !== 'sum' && this.mode !== 'mean' && this.mode !== 'max') throw new ValueError(`EmbeddingBag: mode has to be one of sum, mean or max, got ${JSON.stringify(this.mode)}`);
    this.includeLastOffset = options.includeLastOffset ?? false;
  }

  /** `input`: [B, L] int32 indices (B bags of L), or 1-D with `offsets` [B] (bag starts); output [B, embeddingDim]. */
  forward(input: Tensor, offsets: Tensor | null = null, perSampleWeights: Tensor | null = null): Tensor {
    return embeddingBag(input, this.weight, { ...this.lookup, offsets, mode: this.mode, perSampleWeights, includeLastOffset: this.includeLastOffset });
  }

  /** The base's arguments, then this layer's. */
  override extraRepr(): string {
    return `${super.extraRepr()}, mode='${this.mode}'`;
  }
}
