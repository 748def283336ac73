// BERT against PyTorch: fixtures written by scripts/make_bert_fixture.py (Hugging Face's
// BertForMaskedLM math with BertModel's pooler, in plain torch 1.13, random weights). bert-tiny and
// bert-tiny-legacy hold the same weights, under today's key names and under older ones.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { bfloat16, DTypeError, float32, int32, noGrad, ones, ShapeError, tensor, ValueError, type Tensor } from '@core/tensor';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BertForMaskedLM, BertModel, bertConfigFromJson, resolveBertConfig, type BertConfig } from '../src/bert.js';
import { fixtureDir, loadExpected } from './fixtures.js';

const fixture = fixtureDir;
const expected = (): Promise<Record<string, Tensor>> => loadExpected('bert-tiny');

/** The largest |a − b| over all elements, in float32. */
function maxAbsDiff(a: Tensor, b: Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return a.to(float32).sub(b.to(float32)).abs().max().dataSync()[0]!;
}

const TINY: BertConfig = { vocabSize: 30, hiddenSize: 16, numHiddenLayers: 1, numAttentionHeads: 4, intermediateSize: 32, maxPositionEmbeddings: 8 };

describe('BertModel and BertForMaskedLM against PyTorch (fixtures from scripts/make_bert_fixture.py)', () => {
  it("has Hugging Face's parameter names: BertForMaskedLM's stateDict() keys are the file's less the pooler, plus the tied decoder", async () => {
    const file = Object.keys(await nn.loadSafetensors(`${fixture('bert-tiny')}/model.safetensors`));
    const model = await BertForMaskedLM.fromPretrained(fixture('bert-tiny'));
    const withoutPooler = file.filter((k) => !k.startsWith('bert.pooler.'));
    expect(Object.keys(model.stateDict()).sort()).toEqual([...withoutPooler, 'cls.predictions.decoder.weight', 'cls.predictions.decoder.bias'].sort());
    expect(model.cls.predictions.decoder.weight).toBe(model.bert.embeddings.wordEmbeddings.weight);
    expect(model.cls.predictions.decoder.bias).toBe(model.cls.predictions.bias);
    const bert = await BertModel.fromPretrained(fixture('bert-tiny'));
    expect(Object.keys(bert.stateDict()).sort()).toEqual(file.filter((k) => k.startsWith('bert.')).map((k) => k.slice('bert.'.length)).sort());
  });

  for (const name of ['bert-tiny', 'bert-tiny-legacy']) {
    it(`${name}: hidden states, pooled output and masked-LM logits of a padded batch within 1e-5 (fp32, cpu)`, async () => {
      const e = await expected();
      const options = { attentionMask: e.attention_mask!, tokenTypeIds: e.token_type_ids! };
      const bert = await BertModel.fromPretrained(fixture(name));
      const { lastHiddenState, poolerOutput } = noGrad(() => bert.forward(e.input_ids!, options));
      expect(maxAbsDiff(lastHiddenState, e.last_hidden_state!)).toBeLessThan(1e-5);
      expect(maxAbsDiff(poolerOutput!, e.pooler_output!)).toBeLessThan(1e-5);
      const mlm = await BertForMaskedLM.fromPretrained(fixture(name));
      const logits = noGrad(() => mlm.forward(e.input_ids!, options));
      expect(maxAbsDiff(logits, e.logits!)).toBeLessThan(1e-5);
      expect(maxAbsDiff(logits, e.logits_f64!)).toBeLessThan(2 * maxAbsDiff(e.logits!, e.logits_f64!) + 1e-6);
    });
  }

  it('leaves padding out of attention: the real tokens of a padded row equal that row alone, unpadded', async () => {
    const e = await expected();
    const bert = await BertModel.fromPretrained(fixture('bert-tiny'));
    const padded = noGrad(() => bert.forward(e.input_ids!, { attentionMask: e.attention_mask!, tokenTypeIds: e.token_type_ids! })).lastHiddenState;
    const alone = noGrad(() => bert.forward(e.input_ids!.narrow(0, 1, 1).narrow(1, 0, 5), { tokenTypeIds: e.token_type_ids!.narrow(0, 1, 1).narrow(1, 0, 5) }));
    expect(maxAbsDiff(padded.narrow(0, 1, 1).narrow(1, 0, 5), alone.lastHiddenState)).toBeLessThan(1e-5);
    // Without the mask the padding is attended to, and the real tokens change.
    const unmasked = noGrad(() => bert.forward(e.input_ids!, { tokenTypeIds: e.token_type_ids! })).lastHiddenState;
    expect(maxAbsDiff(unmasked.narrow(0, 1, 1).narrow(1, 0, 5), alone.lastHiddenState)).toBeGreaterThan(1e-2);
  });

  it("gives PyTorch's masked-LM loss over the real tokens and every gradient within 1e-5", async () => {
    const e = await expected();
    const model = await BertForMaskedLM.fromPretrained(fixture('bert-tiny')); // eval mode: no dropout, as the fixture
    const logits = model.forward(e.input_ids!, { attentionMask: e.attention_mask!, tokenTypeIds: e.token_type_ids! });
    const vocab = model.config.vocabSize;
    // Padded positions are ignored by label -100, PyTorch's ignoreIndex.
    const labels = e.input_ids!.where(e.attention_mask!.gt(0), -100).reshape([-1]);
    const loss = F.crossEntropy(logits.reshape([-1, vocab]), labels);
    expect(Math.abs(loss.dataSync()[0]! - e.loss!.dataSync()[0]!)).toBeLessThan(1e-5);
    loss.backward();
    const params = model.namedParameters();
    expect(params.map(([k]) => `grad.${k}`).sort()).toEqual(Object.keys(e).filter((k) => k.startsWith('grad.')).sort());
    for (const [key, p] of params) expect(maxAbsDiff(p.grad!, e[`grad.${key}`]!), key).toBeLessThan(1e-5);
  });

  it("stays within 3x PyTorch's own bf16 drift with the whole model in bf16", async () => {
    const e = await expected();
    const model = await BertForMaskedLM.fromPretrained(fixture('bert-tiny'), { dtype: bfloat16 });
    const logits = noGrad(() => model.forward(e.input_ids!, { attentionMask: e.attention_mask!, tokenTypeIds: e.token_type_ids! }));
    expect(logits.dtype).toBe(bfloat16);
    const torchDrift = maxAbsDiff(e.logits_bf16!, e.logits!);
    expect(torchDrift).toBeGreaterThan(1e-3);
    expect(maxAbsDiff(logits, e.logits!)).toBeLessThan(3 * torchDrift);
  });
});

describe('config', () => {
  it("reads Hugging Face's config.json keys and fills BertConfig's defaults", async () => {
    const json = JSON.parse(await readFile(`${fixture('bert-tiny')}/config.json`, 'utf8')) as Record<string, unknown>;
    expect(resolveBertConfig(bertConfigFromJson(json))).toMatchObject({
      vocabSize: 100, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 4, intermediateSize: 64, hiddenAct: 'gelu',
      maxPositionEmbeddings: 32, typeVocabSize: 2, layerNormEps: 1e-12, padTokenId: 0, hiddenDropoutProb: 0.1,
    });
    expect(resolveBertConfig(bertConfigFromJson({}))).toMatchObject({ vocabSize: 30522, hiddenSize: 768, maxPositionEmbeddings: 512 });
  });

  it('rejects configs that cannot build the model (ValueError) and config.json values of the wrong type (TypeError naming the key)', () => {
    expect(() => new BertModel({ ...TINY, hiddenSize: 18 })).toThrow(ValueError);
    expect(() => new BertModel({ ...TINY, hiddenSize: 18 })).toThrow(/hiddenSize \(18\) must be divisible by numAttentionHeads \(4\)/);
    expect(() => new BertModel({ ...TINY, hiddenAct: 'tanh' as never })).toThrow(/hiddenAct 'tanh' is not supported/);
    expect(() => new BertModel({ ...TINY, hiddenDropoutProb: 1 })).toThrow(/hiddenDropoutProb must be a probability/);
    expect(() => bertConfigFromJson({ num_hidden_layers: 2.5 })).not.toThrow();
    expect(() => resolveBertConfig(bertConfigFromJson({ num_hidden_layers: 2.5 }))).toThrow(/numHiddenLayers must be a positive integer, got 2.5/);
    expect(() => bertConfigFromJson({ layer_norm_eps: '1e-12' })).toThrow(/config.json key 'layer_norm_eps' should be a number/);
    expect(() => bertConfigFromJson({ position_embedding_type: 'relative_key' })).toThrow(ValueError);
  });
});

describe('bad input', () => {
  const model = new BertModel(TINY);
  const ids = tensor([[1, 2, 3]], { dtype: int32 });

  it('rejects ids out of the vocabulary and token types out of range with ShapeErrors naming the index', () => {
    expect(() => model.forward(tensor([[1, 30]], { dtype: int32 }))).toThrow(/index 30 .* out of range for an embedding with 30 rows/);
    expect(() => model.forward(ids, { tokenTypeIds: tensor([[0, 2, 0]], { dtype: int32 }) })).toThrow(/index 2 .* out of range for an embedding with 2 rows/);
  });

  it('rejects float ids, a sequence longer than maxPositionEmbeddings, and a mask of another shape', () => {
    expect(() => model.forward(tensor([[1, 2]]))).toThrow(DTypeError);
    expect(() => model.forward(ones([1, 9], { dtype: int32 }))).toThrow(/9 tokens is longer than maxPositionEmbeddings \(8\); truncate/);
    expect(() => model.forward(ids, { attentionMask: ones([1, 4]) })).toThrow(ShapeError);
    expect(() => model.forward(ids, { attentionMask: ones([1, 4]) })).toThrow(/attentionMask must have inputIds' shape \[1, 3\], got \[1, 4\]/);
  });
});
