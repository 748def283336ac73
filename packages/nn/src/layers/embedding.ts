// nn.Embedding(numEmbeddings, embeddingDim, { paddingIdx }): a lookup table of N(0, 1) rows; the
// paddingIdx row starts at zero and receives no gradient.
import { empty, noGrad, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { embedding, paddingIndex } from '../functional/embedding.js';
import { normal_ } from '../init.js';
import type { FactoryOptions } from '../internal/args.js';

/** Embedding's options, plus where its weight goes. */
export interface EmbeddingOptions extends FactoryOptions {
  /** A row that starts at zero and receives no gradient (negative counts from the end). */
  readonly paddingIdx?: number | null;
}

/**
 * A lookup table of `numEmbeddings` vectors of size `embeddingDim`, indexed by int32 tensors (PyTorch's `nn.Embedding`).
 */
export class Embedding extends Module {
  /** Rows in the table. */
  readonly numEmbeddings: number;
  /** The size of each vector. */
  readonly embeddingDim: number;
  /** The padding row (normalised to non-negative), or null. */
  readonly paddingIdx: number | null;
  /** [numEmbeddings, embeddingDim]. */
  weight: Parameter;

  constructor(numEmbeddings: number, embeddingDim: number, { paddingIdx, device, dtype }: EmbeddingOptions = {}) {
    super();
    for (const [name, v] of [['numEmbeddings', numEmbeddings], ['embeddingDim', embeddingDim]] as const) {
      if (!Number.isInteger(v) || v < 0) throw new ValueError(`Embedding: ${name} must be a non-negative integer, got ${v}`);
    }
    this.numEmbeddings = numEmbeddings;
    this.embeddingDim = embeddingDim;
    this.paddingIdx = paddingIndex(paddingIdx, numEmbeddings, 'Embedding');
    this.weight = Parameter(empty([numEmbeddings, embeddingDim], { ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) }));
    this.resetParameters();
  }

  /** weight ~ N(0, 1), with the paddingIdx row zeroed. */
  resetParameters(): void {
    normal_(this.weight);
    if (this.paddingIdx !== null) {
      const row = this.weight.select(0, this.paddingIdx);
      noGrad(() => row.fill_(0));
    }
  }

  /** `input`: int32 indices of any shape; the output appends embeddingDim. */
  forward(input: Tensor): Tensor {
    return embedding(input, this.weight, this.paddingIdx);
  }

  override extraRepr(): string {
    return `${this.numEmbeddings}, ${this.embeddingDim}${this.paddingIdx !== null ? `, paddingIdx=${this.paddingIdx}` : ''}`;
  }
}
