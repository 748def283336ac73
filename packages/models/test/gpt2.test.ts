// GPT-2 against PyTorch 1.13 on the cpu backend: a tiny random-weight GPT-2 with Hugging Face's
// names and math (scripts/make_gpt2_fixture.py) — state dict names, logits, the KV cache, the
// loss's gradients and one AdamW step (float32 here vs float64 references, to 1e-5), bf16 autocast
// within PyTorch's own bf16 drift, checkpoint renaming, config.json, and bad input.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { F, nn } from '@core/nn';
import { readFile } from 'node:fs/promises';
import { autocast, bfloat16, cat, DTypeError, float16, float32, float64, int32, manualSeed, tensor, ValueError } from '@core/tensor';
// @core/optim is not a dependency of @core/models: its built dist, for the AdamW step only.
import { AdamW } from '@core/optim';
import {
  GPT2LMHeadModel, GPT2Model, gpt2CheckpointKey, gpt2ConfigFromJson, KVCache, loadPretrainedWeights, PretrainedError,
} from '../src/index.js';
import { GPT2_TINY, GPT2_TINY_HUB, loadGPT2Expected, maxAbsDiff } from './fixtures.js';

const TOL = 1e-5;
const { json: expected, tensors: ref } = await loadGPT2Expected();
const ids = tensor(expected.inputIds, { dtype: int32 });

describe('GPT2LMHeadModel: names and loading', () => {
  it("has exactly Hugging Face's state dict keys, with lm_head.weight the same Parameter as transformer.wte.weight", async () => {
    const model = GPT2LMHeadModel.fromConfigJson(JSON.parse(await readFile(`${GPT2_TINY}/config.json`, 'utf8')));
    const file = await nn.loadSafetensors(`${GPT2_TINY}/model.safetensors`);
    expect(Object.keys(model.stateDict()).sort()).toEqual(Object.keys(file).sort());
    expect(model.lmHead.weight).toBe(model.transformer.wte.weight);
    // The tied weight is one parameter: an optimizer steps it once.
    expect(model.parameters()).toHaveLength(Object.keys(file).length - 1);
    expect(model.transformer.h.at(0).attn.cAttn.weight.shape).toEqual([16, 48]); // Conv1D: [in, out]
  });

  it('loads a PyTorch state dict unchanged with loadStateDict and gives its logits within 1e-5', async () => {
    const model = new GPT2LMHeadModel(gpt2ConfigFromJson(JSON.parse(await readFile(`${GPT2_TINY}/config.json`, 'utf8'))));
    model.loadStateDict(await nn.loadSafetensors(`${GPT2_TINY}/model.safetensors`));
    model.eval();
    const logits = model.forward(ids);
    expect(logits.shape).toEqual([2, 10, 64]);
    expect(await maxAbsDiff(logits, ref.logits!)).toBeLessThan(TOL);
  });

  it('fromPretrained loads a folder in eval mode and gives the logits within 1e-5', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    expect(model.training).toBe(false);
    expect(model.config.nLayer).toBe(2);
    expect(await maxAbsDiff(model.forward(ids), ref.logits!)).toBeLessThan(TOL);
  });

  it("fromPretrained loads the Hub's GPT2Model layout: no transformer. prefix, no lm_head, attn.bias/masked_bias skipped", async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY_HUB);
    expect(model.lmHead.weight).toBe(model.transformer.wte.weight);
    expect(await maxAbsDiff(model.forward(ids), ref.logits!)).toBeLessThan(TOL);
  });

  it('gpt2CheckpointKey adds the transformer. prefix where missing and skips the attention-mask buffers', () => {
    expect(gpt2CheckpointKey('h.0.attn.c_attn.weight')).toBe('transformer.h.0.attn.c_attn.weight');
    expect(gpt2CheckpointKey('wte.weight')).toBe('transformer.wte.weight');
    expect(gpt2CheckpointKey('transformer.ln_f.bias')).toBe('transformer.ln_f.bias');
    expect(gpt2CheckpointKey('lm_head.weight')).toBe('lm_head.weight');
    expect(gpt2CheckpointKey('h.11.attn.bias')).toBeUndefined();
    expect(gpt2CheckpointKey('transformer.h.3.attn.masked_bias')).toBeUndefined();
    expect(gpt2CheckpointKey('h.0.attn.c_attn.bias')).toBe('transformer.h.0.attn.c_attn.bias');
  });

  it('fromPretrained converts to the requested dtype', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY, { dtype: float64 });
    expect(model.transformer.h.at(1).mlp.cFc.weight.dtype).toBe(float64);
    expect(await maxAbsDiff(model.forward(ids), ref.logits!)).toBeLessThan(TOL);
  });
});

describe('GPT2LMHeadModel: the KV cache', () => {
  it('prefill, one token, then several tokens (a bottom-right causal mask) give the logits of one full pass', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    const cache = new KVCache(model.numLayers);
    const parts = [ids.narrow(1, 0, 4), ids.narrow(1, 4, 1), ids.narrow(1, 5, 5)].map((part) => model.forward(part, { cache }));
    expect(cache.length).toBe(10);
    expect(await maxAbsDiff(cat(parts, 1), ref.logits!)).toBeLessThan(TOL);
  });
});

describe('GPT2LMHeadModel: training', () => {
  it('the next-token loss, its gradients and one AdamW step match PyTorch within 1e-5', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    const logits = model.forward(ids);
    const V = model.config.vocabSize;
    const loss = F.crossEntropy(logits.narrow(1, 0, 9).reshape([-1, V]), ids.narrow(1, 1, 9).reshape([-1]));
    expect(Math.abs((await loss.item()) - expected.loss)).toBeLessThan(TOL);
    loss.backward();
    const { lr, betas, eps, weightDecay } = expected.adamw;
    const params = model.namedParameters();
    for (const [name, p] of params) {
      expect(p.grad, name).not.toBeNull();
      expect(await maxAbsDiff(p.grad!, ref[`grad.${name}`]!), name).toBeLessThan(TOL);
    }
    new AdamW(model.parameters(), { lr, betas, eps, weightDecay }).step();
    for (const [name, p] of params) expect(await maxAbsDiff(p, ref[`adamw.${name}`]!), name).toBeLessThan(TOL);
  });
});

describe('GPT2LMHeadModel: mixed precision', () => {
  it("bf16 autocast logits are within 2x PyTorch's own bf16-vs-fp32 drift of PyTorch's fp32 logits", async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    const logits = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => model.forward(ids));
    expect(logits.dtype).toBe(bfloat16);
    const torchDrift = await maxAbsDiff(ref.logits_bf16_torch!, ref.logits_fp32_torch!);
    expect(torchDrift).toBeGreaterThan(1e-3); // PyTorch's run really was in bf16
    const ours = await maxAbsDiff(logits, ref.logits_fp32_torch!);
    expect(ours).toBeGreaterThan(0);
    expect(ours).toBeLessThan(2 * torchDrift);
  });

  it("a float16 model's logits are within PyTorch's bf16 drift / 4 of PyTorch's fp32 logits (fp16 keeps 3 more mantissa bits)", async () => {
    // PyTorch 1.13 has no float16 matmul or LayerNorm on the CPU, so it cannot give an fp16 run to
    // compare with; float16's unit roundoff is 1/8 of bfloat16's, so its drift must be well inside bf16's.
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY, { dtype: float16 });
    expect(model.transformer.wte.weight.dtype).toBe(float16);
    const logits = model.forward(ids);
    expect(logits.dtype).toBe(float16);
    const torchDrift = await maxAbsDiff(ref.logits_bf16_torch!, ref.logits_fp32_torch!);
    const ours = await maxAbsDiff(logits, ref.logits_fp32_torch!);
    expect(ours).toBeGreaterThan(0);
    expect(ours).toBeLessThan(torchDrift / 4);
  });
});

describe('GPT2LMHeadModel: dropout', () => {
  it('train mode drops out with the configured probabilities, eval mode does not', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    expect(model.transformer.drop.p).toBe(0.1);
    expect(model.transformer.h.at(0).attn.attnDropout.p).toBe(0.1);
    model.train();
    manualSeed(0);
    const [a, b] = [model.forward(ids), model.forward(ids)];
    expect(await maxAbsDiff(a, b)).toBeGreaterThan(1e-3);
    expect(await maxAbsDiff(a, ref.logits!)).toBeGreaterThan(1e-3);
    model.eval();
    expect(await maxAbsDiff(model.forward(ids), ref.logits!)).toBeLessThan(TOL);
  });
});

describe('GPT2 config', () => {
  it("gpt2ConfigFromJson reads Hugging Face's keys and fills the rest with GPT2Config's defaults", async () => {
    const config = gpt2ConfigFromJson(JSON.parse(await readFile(`${GPT2_TINY}/config.json`, 'utf8')));
    expect(config).toMatchObject({ vocabSize: 64, nPositions: 48, nEmbd: 16, nLayer: 2, nHead: 2, nInner: null, layerNormEpsilon: 1e-5, activationFunction: 'gelu_new', residPdrop: 0.1 });
    expect(gpt2ConfigFromJson({})).toMatchObject({ vocabSize: 50257, nPositions: 1024, nEmbd: 768, nLayer: 12, nHead: 12, initializerRange: 0.02 });
    expect(gpt2ConfigFromJson({ n_inner: 40, activation_function: 'gelu' })).toMatchObject({ nInner: 40, activationFunction: 'gelu' });
  });

  it('bad configs are errors naming the key', () => {
    expect(() => gpt2ConfigFromJson({ n_embd: '16' })).toThrow(TypeError);
    expect(() => gpt2ConfigFromJson({ n_embd: '16' })).toThrow(/n_embd/);
    expect(() => gpt2ConfigFromJson({ n_embd: 10, n_head: 3 })).toThrow(/nEmbd \(10\) must be divisible by nHead \(3\)/);
    expect(() => gpt2ConfigFromJson({ activation_function: 'swiglu' })).toThrow(ValueError);
    expect(() => gpt2ConfigFromJson({ scale_attn_by_inverse_layer_idx: true })).toThrow(/scale_attn_by_inverse_layer_idx/);
    expect(() => new GPT2Model({ nLayer: 0 })).toThrow(/nLayer must be a positive integer/);
  });

  it('the MLP uses nInner and the configured activation', async () => {
    manualSeed(0);
    // Weights of unit scale, so that the MLP's inputs are where GELU's two forms differ (~1e-3).
    const config = { vocabSize: 8, nPositions: 4, nEmbd: 4, nLayer: 1, nHead: 1, nInner: 6, initializerRange: 1 };
    const exact = new GPT2LMHeadModel({ ...config, activationFunction: 'gelu' });
    expect(exact.transformer.h.at(0).mlp.cFc.weight.shape).toEqual([4, 6]);
    const tanh = new GPT2LMHeadModel(config);
    tanh.loadStateDict(exact.stateDict());
    const x = tensor([[1, 2, 3]], { dtype: int32 });
    expect(await maxAbsDiff(exact.eval().forward(x), tanh.eval().forward(x))).toBeGreaterThan(1e-5);
  });
});

describe('GPT2LMHeadModel: bad input', () => {
  it('token ids outside the vocabulary are a ValueError naming the id and its place', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    const bad = tensor([[1, 2, 3], [4, 64, 5]], { dtype: int32 });
    expect(() => model.forward(bad)).toThrow(ValueError);
    expect(() => model.forward(bad)).toThrow(/token id 64 \(row 1, position 1\) is outside the vocabulary 0\.\.63/);
    expect(() => model.forward(tensor([[-1]], { dtype: int32 }))).toThrow(/token id -1/);
  });

  it('more positions than nPositions are a ValueError saying how many, with or without a cache', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    const long = tensor([Array.from({ length: 49 }, (_, i) => i % 64)], { dtype: int32 });
    expect(() => model.forward(long)).toThrow(/49 positions \(0 cached \+ 49 new\) exceed the model's nPositions \(48\)/);
    const cache = new KVCache(model.numLayers);
    model.forward(long.narrow(1, 0, 45), { cache });
    expect(() => model.forward(long.narrow(1, 45, 4), { cache })).toThrow(/49 positions \(45 cached \+ 4 new\)/);
    expect(cache.length).toBe(45); // the failed pass left the cache as it was
  });

  it('ids that are not int32 [batch, seq], or a cache of another depth, are typed errors', async () => {
    const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
    expect(() => model.forward(tensor([[1, 2]], { dtype: float32 }))).toThrow(DTypeError);
    expect(() => model.forward(tensor([1, 2], { dtype: int32 }))).toThrow(/\[batch, seq\]/);
    expect(() => model.forward(ids, { cache: new KVCache(3) })).toThrow(/the cache has 3 layers but the model 2/);
  });

  it('a checkpoint that does not fit is a PretrainedError', async () => {
    const model = new GPT2LMHeadModel({ vocabSize: 64, nPositions: 48, nEmbd: 32, nLayer: 2, nHead: 2 });
    await expect(loadPretrainedWeights(model, GPT2_TINY)).rejects.toThrow(PretrainedError);
  });
});
