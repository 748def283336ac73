// Embedding's maxNorm (in-place renormalisation of the looked-up rows), scaleGradByFreq, the
// paddingIdx gradient, fromPretrained, and EmbeddingBag's sum/mean/max bags, all against
// PyTorch 1.13 (float64); the errors.
import { describe, expect, it } from 'vitest';
import { float64, int32, ShapeError, tensor, ValueError, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, torchRef, values } from './helpers.js';

const ids = (v: number[] | number[][]) => tensor(v, { dtype: int32 });
/** The reference table: row norms 5, 0.5, √5, 0, 10. */
const table = (requiresGrad = false): Tensor => {
  const w = tensor(torchRef('W0') as unknown as number[][], { dtype: float64 });
  return requiresGrad ? w.requiresGrad_() : w;
};

describe('maxNorm renormalises the looked-up rows in place, as PyTorch\'s embedding_renorm_', () => {
  it('L2 norm 2: rows 0 and 2 (looked up, too long) scaled to norm 2; row 1 (short) and row 4 (not looked up) unchanged', () => {
    const ref = torchRef('maxnorm');
    const w = table();
    const y = F.embedding(ids([[0, 2], [2, 1]]), w, null, 2);
    expectClose(y, ref.y!, 1e-12);
    expectClose(w, ref.w!, 1e-12);
  });

  it('L1 norm 1.5, by keyword; nn.Embedding with maxNorm renormalises its weight', () => {
    const ref = torchRef('maxnorm-p1');
    const w = table();
    expectClose(F.embedding(ids([[0, 2], [2, 1]]), w, { maxNorm: 1.5, normType: 1 }), ref.y!, 1e-12);
    expectClose(w, ref.w!, 1e-12);
    const layer = new nn.Embedding(5, 2, { maxNorm: 1.5, normType: 1, _weight: table() });
    layer.forward(ids([[0, 2], [2, 1]]));
    expectClose(layer.weight, ref.w!, 1e-12);
    expect(layer.toString()).toBe('Embedding(5, 2, maxNorm=1.5, normType=1)');
  });
});

describe('embedding gradients', () => {
  it('scaleGradByFreq divides each row\'s gradient by its count in the batch', () => {
    const w = table(true);
    F.embedding(ids([0, 2, 2, 1, 2, 4]), w, { scaleGradByFreq: true }).sum().backward();
    expectClose(w.grad!, torchRef('freq').g!, 1e-12);
  });

  it('with paddingIdx too: the padding row\'s gradient stays zero', () => {
    const w = table(true);
    F.embedding(ids([0, 2, 2, 1, 3]), w, 2, null, 2, true).mul(2).sum().backward();
    expectClose(w.grad!, torchRef('freq-pad').g!, 1e-12);
  });

  it('nn.Embedding(numEmbeddings, embeddingDim, paddingIdx): the padding row starts at zero and its gradient stays zero', () => {
    const layer = new nn.Embedding(4, 3, 1);
    expect(layer.paddingIdx).toBe(1);
    expect(values(layer.weight.select(0, 1))).toEqual([0, 0, 0]);
    layer.forward(ids([1, 1, 0, 3])).sum().backward();
    expect(values(layer.weight.grad!.select(0, 1))).toEqual([0, 0, 0]);
    expect(values(layer.weight.grad!.select(0, 0))).toEqual([1, 1, 1]);
  });

  it('fromPretrained shares the given rows and freezes them unless freeze is false', () => {
    const rows = table();
    const frozen = nn.Embedding.fromPretrained(rows);
    expect(frozen.weight.requiresGrad).toBe(false);
    expect(values(frozen.forward(ids([4])))).toEqual([6, -8]);
    rows.fill_(1);
    expect(values(frozen.weight.select(0, 0))).toEqual([1, 1]);
    const trainable = nn.Embedding.fromPretrained(table(), false, { paddingIdx: 0 });
    expect(trainable.weight.requiresGrad).toBe(true);
    expect(trainable.paddingIdx).toBe(0);
  });

  it('errors: sparse gradients, a weight of the wrong shape, unknown keywords', () => {
    expect(() => F.embedding(ids([0]), table(), { sparse: true })).toThrow(ValueError);
    expect(() => F.embedding(ids([0]), table(), { sparse: true })).toThrow('sparse gradients are not supported');
    expect(() => new nn.Embedding(4, 2, { _weight: table() })).toThrow('Shape of weight does not match num_embeddings and embedding_dim: expected [4, 2], got [5, 2]');
    expect(() => new nn.Embedding(5, 2, { padding: 0 } as never)).toThrow("Embedding() got an unexpected keyword argument 'padding'");
    expect(() => nn.Embedding.fromPretrained(tensor([1, 2]))).toThrow('Embeddings parameter is expected to be 2-dimensional');
  });
});

describe('F.embeddingBag and nn.EmbeddingBag against PyTorch 1.13 (float64)', () => {
  // Bags [0, 2, 2], [] (empty), [1, 4], [3, 1].
  const input = ids([0, 2, 2, 1, 4, 3, 1]);
  const offsets = ids([0, 3, 3, 5]);
  const upstream = tensor([[1, 2], [0.5, -1], [3, 3], [1, 1]], { dtype: float64 });

  for (const mode of ['sum', 'mean', 'max'] as const) {
    it(`mode '${mode}': values (an empty bag gives zeros) and the weight's gradient`, () => {
      const ref = torchRef(`bag-${mode}`);
      const w = table(true);
      const y = F.embeddingBag(input, w, offsets, { mode });
      y.backward(upstream);
      expectClose(y, ref.y!, 1e-12);
      expectClose(w.grad!, ref.g!, 1e-12);
    });
  }

  it('perSampleWeights (sum mode): gradients for the weight and the per-sample weights', () => {
    const ref = torchRef('bag-psw');
    const w = table(true);
    const psw = tensor([0.5, 1, 2, -1, 0.25, 3, 1], { dtype: float64 }).requiresGrad_();
    const y = F.embeddingBag(input, w, offsets, { mode: 'sum', perSampleWeights: psw });
    y.sum().backward();
    expectClose(y, ref.y!, 1e-12);
    expectClose(w.grad!, ref.g!, 1e-12);
    expectClose(psw.grad!, ref.gp!, 1e-12);
  });

  for (const mode of ['mean', 'max'] as const) {
    it(`paddingIdx leaves its entries out of the bag and of the mean's count (mode '${mode}')`, () => {
      const ref = torchRef(`bag-pad-${mode}`);
      const w = table(true);
      const y = F.embeddingBag(input, w, offsets, { mode, paddingIdx: 2 });
      y.sum().backward();
      expectClose(y, ref.y!, 1e-12);
      expectClose(w.grad!, ref.g!, 1e-12);
    });
  }

  it('2-D input is bags of equal length; includeLastOffset; nn.EmbeddingBag', () => {
    expectClose(F.embeddingBag(ids([[0, 2, 4], [1, 1, 3]]), table()), torchRef('bag-2d').y!, 1e-12);
    expectClose(F.embeddingBag(input, table(), ids([0, 3, 3, 5, 7]), { mode: 'sum', includeLastOffset: true }), torchRef('bag-last').y!, 1e-12);
    const layer = new nn.EmbeddingBag(5, 2, { mode: 'max', _weight: table() });
    expectClose(layer.forward(input, offsets), torchRef('bag-max').y!, 1e-12);
    expect(layer.toString()).toBe("EmbeddingBag(5, 2, mode='max')");
    expect(Object.keys(layer.stateDict())).toEqual(['weight']);
    const positional = new nn.EmbeddingBag(5, 2, null, 2, false, 'sum');
    expect(positional.mode).toBe('sum');
  });

  it('errors as PyTorch', () => {
    expect(() => F.embeddingBag(ids([1, 2]), table(), ids([1]))).toThrow('offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1');
    expect(() => F.embeddingBag(ids([1, 2]), table(), ids([0]), { perSampleWeights: tensor([1, 1], { dtype: float64 }) })).toThrow(
      "per_sample_weights is only supported for mode='sum' (got mode='mean')",
    );
    expect(() => F.embeddingBag(ids([[1, 2]]), table(), ids([0]))).toThrow('if input is 2D, then offsets has to be None');
    expect(() => F.embeddingBag(ids([1, 2]), table())).toThrow('offsets has to be a 1D Tensor but got None');
    expect(() => F.embeddingBag(tensor([[[1]]], { dtype: int32 }), table())).toThrow(ShapeError);
    expect(() => F.embeddingBag(ids([1, 7]), table(), ids([0]))).toThrow('index 7 (at flat position 1) is out of range for an embedding with 5 rows');
    expect(() => new nn.EmbeddingBag(5, 2, { mode: 'min' as 'max' })).toThrow('mode has to be one of sum, mean or max');
  });
});
