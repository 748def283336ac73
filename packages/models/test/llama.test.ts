// The Llama-style decoder against PyTorch: fixtures written by scripts/make_llama_fixture.py (Hugging
// Face's LlamaForCausalLM math in plain torch 1.13, random weights). llama-tiny has grouped-query
// attention (4 query heads, 2 key/value heads) and an untied head; llama-tiny-tied has one key/value
// head per query head, head_dim 16 apart from hidden / heads, attention biases and a tied head.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { AdamW } from '@core/optim';
import { autocast, bfloat16, cat, DTypeError, float32, int32, noGrad, ShapeError, tensor, ValueError, type Tensor } from '@core/tensor';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { KVCache } from '../src/causal-lm.js';
import { generate } from '../src/generate.js';
import { LlamaForCausalLM, LlamaModel, llamaConfigFromJson, resolveLlamaConfig, type LlamaConfig } from '../src/llama.js';
import { PretrainedError } from '../src/pretrained.js';
import { fixtureDir, loadExpected } from './fixtures.js';

const [fixture, expected] = [fixtureDir, loadExpected];

/** The largest |a − b| over all elements, in float32. */
function maxAbsDiff(a: Tensor, b: Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return a.to(float32).sub(b.to(float32)).abs().max().dataSync()[0]!;
}

const TINY: LlamaConfig = { vocabSize: 40, hiddenSize: 16, intermediateSize: 24, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 2 };

describe('LlamaForCausalLM against PyTorch (fixtures from scripts/make_llama_fixture.py)', () => {
  for (const name of ['llama-tiny', 'llama-tiny-tied']) {
    describe(name, () => {
      it("has Hugging Face's parameter names: stateDict() keys equal the checkpoint's (a tied head adds lm_head.weight)", async () => {
        const model = await LlamaForCausalLM.fromPretrained(fixture(name));
        const fileKeys = Object.keys(await nn.loadSafetensors(`${fixture(name)}/model.safetensors`));
        const tied = model.config.tieWordEmbeddings;
        expect(Object.keys(model.stateDict()).sort()).toEqual((tied ? [...fileKeys, 'lm_head.weight'] : fileKeys).sort());
        expect(model.lmHead.weight === model.model.embedTokens.weight).toBe(tied);
      });

      it("gives PyTorch's fp32 logits of a [2, 7] batch within 2e-5, and is no farther from the float64 logits than 2x PyTorch's fp32", async () => {
        // Measured: llama-tiny 6.1e-6 from PyTorch; llama-tiny-tied 1.5e-5 from PyTorch, 9.6e-6 from
        // float64, where PyTorch's fp32 is 6.5e-6 from float64 (logits up to ~7.5): rounding, not math.
        const model = await LlamaForCausalLM.fromPretrained(fixture(name));
        const e = await expected(name);
        const logits = noGrad(() => model.forward(e.input_ids!));
        expect(maxAbsDiff(logits, e.logits!)).toBeLessThan(name === 'llama-tiny' ? 1e-5 : 2e-5);
        expect(maxAbsDiff(logits, e.logits_f64!)).toBeLessThan(2 * maxAbsDiff(e.logits!, e.logits_f64!));
      });

      it("generates PyTorch's 32 greedy tokens, with the KV cache and without", async () => {
        const model = await LlamaForCausalLM.fromPretrained(fixture(name));
        const e = await expected(name);
        for (const useCache of [true, false]) {
          const tokens = await generate(model, e.prompt!, { maxNewTokens: 32, useCache });
          expect(tokens.dataSync(), `useCache: ${useCache}`).toEqual(e.greedy!.dataSync());
        }
      });

      it("stays within 3x PyTorch's own bf16 drift, under bf16 autocast and with the whole model in bf16", async () => {
        const e = await expected(name);
        const model = await LlamaForCausalLM.fromPretrained(fixture(name));
        const autocastLogits = noGrad(() => autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => model.forward(e.input_ids!)));
        const torchAutocastDrift = maxAbsDiff(e.logits_autocast_bf16!, e.logits!);
        expect(torchAutocastDrift).toBeGreaterThan(1e-3); // bf16 really ran in PyTorch
        expect(maxAbsDiff(autocastLogits, e.logits!)).toBeLessThan(3 * torchAutocastDrift);

        const half = await LlamaForCausalLM.fromPretrained(fixture(name), { dtype: bfloat16 });
        expect(half.model.layers.at(0).mlp.upProj.weight.dtype).toBe(bfloat16);
        const halfLogits = noGrad(() => half.forward(e.input_ids!));
        expect(halfLogits.dtype).toBe(bfloat16);
        expect(maxAbsDiff(halfLogits, e.logits!)).toBeLessThan(3 * maxAbsDiff(e.logits_bf16!, e.logits!));
      });
    });
  }
});

describe('LlamaModel', () => {
  it("loads a LlamaForCausalLM checkpoint without its head, and gives the hidden states the head turns into PyTorch's logits", async () => {
    const e = await expected('llama-tiny');
    const decoder = await LlamaModel.fromPretrained(fixture('llama-tiny'));
    const full = await LlamaForCausalLM.fromPretrained(fixture('llama-tiny'));
    expect(Object.keys(decoder.stateDict()).map((k) => `model.${k}`).sort()).toEqual(Object.keys(full.stateDict()).filter((k) => k !== 'lm_head.weight').sort());
    const logits = noGrad(() => full.lmHead.forward(decoder.forward(e.input_ids!)));
    expect(maxAbsDiff(logits, e.logits!)).toBeLessThan(1e-5);
  });
});

describe('training llama-tiny', () => {
  it("gives PyTorch's loss and gradients of next-token cross entropy within 1e-5, and its weights after one AdamW step", async () => {
    const model = (await LlamaForCausalLM.fromPretrained(fixture('llama-tiny'))).train();
    const e = await expected('llama-tiny');
    const ids = e.input_ids!;
    const logits = model.forward(ids);
    const vocab = model.config.vocabSize;
    const loss = F.crossEntropy(logits.narrow(1, 0, 6).reshape([-1, vocab]), ids.narrow(1, 1, 6).reshape([-1]));
    expect(Math.abs(loss.dataSync()[0]! - e.loss!.dataSync()[0]!)).toBeLessThan(1e-5);
    loss.backward();
    const params = model.namedParameters();
    expect(params.map(([k]) => `grad.${k}`).sort()).toEqual(Object.keys(e).filter((k) => k.startsWith('grad.')).sort());
    for (const [key, p] of params) expect(maxAbsDiff(p.grad!, e[`grad.${key}`]!), key).toBeLessThan(1e-5);
    new AdamW(model.parameters(), 1e-2).step();
    const state = model.stateDict();
    const updated = Object.keys(e).filter((k) => k.startsWith('adamw.'));
    expect(updated.length).toBe(6);
    for (const key of updated) expect(maxAbsDiff(state[key.slice('adamw.'.length)]!, e[key]!), key).toBeLessThan(1e-5);
  });
});

describe('LlamaForCausalLM with a KV cache', () => {
  it('gives the logits of one full pass when fed 3 tokens, then 1, then 3 more (a bottom-right causal mask), then 1', async () => {
    const model = await LlamaForCausalLM.fromPretrained(fixture('llama-tiny'));
    const ids = (await expected('llama-tiny')).input_ids!;
    const full = noGrad(() => model.forward(ids));
    const cache = new KVCache(model.numLayers);
    const pieces = noGrad(() => [[0, 3], [3, 1], [4, 2], [6, 1]].map(([start, length]) => model.forward(ids.narrow(1, start!, length!), { cache })));
    expect(cache.length).toBe(7);
    expect(maxAbsDiff(cat(pieces, 1), full)).toBeLessThan(1e-5);
  });
});

describe('grouped-query attention', () => {
  it('equals multi-head attention whose key/value heads are the shared ones repeated, each for its group of query heads', () => {
    const gqa = new LlamaForCausalLM(TINY).eval();
    const mha = new LlamaForCausalLM({ ...TINY, numKeyValueHeads: 4 }).eval();
    const headDim = 4;
    const state = Object.fromEntries(Object.entries(gqa.stateDict()).map(([k, v]) => {
      // [kvHeads * headDim, hidden] → each key/value head twice in a row: query heads 0,1 read kv head 0, heads 2,3 read kv head 1.
      const repeated = /\.(k|v)_proj\.weight$/.test(k) ? v.view([2, 1, headDim, 16]).expand([2, 2, headDim, 16]).reshape([16, 16]) : v;
      return [k, repeated];
    }));
    mha.loadStateDict(state);
    const ids = tensor([[1, 5, 9, 2, 33, 7]], { dtype: int32 });
    expect(maxAbsDiff(noGrad(() => gqa.forward(ids)), noGrad(() => mha.forward(ids)))).toBeLessThan(1e-5);
  });
});

describe('config', () => {
  it("reads Hugging Face's config.json keys and fills LlamaConfig's defaults", async () => {
    const json = JSON.parse(await readFile(`${fixture('llama-tiny-tied')}/config.json`, 'utf8')) as Record<string, unknown>;
    const config = resolveLlamaConfig(llamaConfigFromJson(json));
    expect(config).toMatchObject({
      vocabSize: 96, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 4, headDim: 16,
      rmsNormEps: 1e-6, ropeTheta: 500000, maxPositionEmbeddings: 128, tieWordEmbeddings: true, attentionBias: true, mlpBias: false,
    });
    expect(resolveLlamaConfig(TINY)).toMatchObject({ headDim: 4, rmsNormEps: 1e-6, ropeTheta: 10000, tieWordEmbeddings: false });
    expect(resolveLlamaConfig({ ...TINY, headDim: undefined, numKeyValueHeads: undefined })).toMatchObject({ headDim: 4, numKeyValueHeads: 4 });
  });

  it('rejects a config that cannot build the model with a ValueError naming the fields', () => {
    expect(() => new LlamaForCausalLM({ ...TINY, hiddenSize: 18 })).toThrow(ValueError);
    expect(() => new LlamaForCausalLM({ ...TINY, hiddenSize: 18 })).toThrow(/hiddenSize \(18\) must be divisible by numAttentionHeads \(4\), or give headDim/);
    expect(() => new LlamaForCausalLM({ ...TINY, numKeyValueHeads: 3 })).toThrow(/numAttentionHeads \(4\) must be a multiple of numKeyValueHeads \(3\)/);
    expect(() => new LlamaForCausalLM({ ...TINY, numHiddenLayers: 0 })).toThrow(/numHiddenLayers must be a positive integer, got 0/);
    expect(() => new LlamaForCausalLM({ ...TINY, headDim: 5 })).toThrow(/headDim must be even/);
  });

  it('rejects config.json values of the wrong type (TypeError naming the key) and unsupported variants (ValueError)', () => {
    expect(() => llamaConfigFromJson({ hidden_size: '32' })).toThrow(TypeError);
    expect(() => llamaConfigFromJson({ hidden_size: '32' })).toThrow(/config.json key 'hidden_size' should be a number, got "32"/);
    expect(() => llamaConfigFromJson({ hidden_act: 'gelu' })).toThrow(ValueError);
    expect(() => llamaConfigFromJson({ rope_scaling: { type: 'linear', factor: 2 } })).toThrow(/rope_scaling .* is not supported/);
  });
});

describe('bad input', () => {
  const model = new LlamaForCausalLM(TINY);

  it('rejects token ids out of the vocabulary with a ShapeError naming the id and the valid range', () => {
    const ids = tensor([[1, 2, 40]], { dtype: int32 });
    expect(() => model.forward(ids)).toThrow(ShapeError);
    expect(() => model.forward(ids)).toThrow(/index 40 .* out of range for an embedding with 40 rows \(valid indices are 0..39\)/);
    expect(ids.dataSync()).toEqual(new Int32Array([1, 2, 40]));
  });

  it('rejects float ids (DTypeError), ids without a batch dim (ShapeError) and a cache of another depth (ValueError), leaving the cache as it was', () => {
    expect(() => model.forward(tensor([[1, 2]]))).toThrow(DTypeError);
    expect(() => model.forward(tensor([1, 2], { dtype: int32 }))).toThrow(/inputIds must be \[batch, seq\].*unsqueeze\(0\)/);
    const cache = new KVCache(3);
    expect(() => model.forward(tensor([[1, 2]], { dtype: int32 }), { cache })).toThrow(ValueError);
    expect(cache.length).toBe(0);
  });

  it('fromPretrained on a folder whose weights do not fit the config is a PretrainedError naming the key', async () => {
    const dir = await mkdtemp(`${tmpdir()}/llama-`);
    const json = JSON.parse(await readFile(`${fixture('llama-tiny')}/config.json`, 'utf8')) as Record<string, unknown>;
    await writeFile(`${dir}/config.json`, JSON.stringify({ ...json, intermediate_size: 48 }));
    await copyFile(`${fixture('llama-tiny')}/model.safetensors`, `${dir}/model.safetensors`);
    await expect(LlamaForCausalLM.fromPretrained(dir)).rejects.toThrow(PretrainedError);
    await expect(LlamaForCausalLM.fromPretrained(dir)).rejects.toThrow(/model\.layers\.0\.mlp\.down_proj\.weight/);
  });
});
