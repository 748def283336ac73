import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nn } from '@core/nn';
import { int32, tensor } from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEY, loadModel, saveModel, VOCAB_KEY } from '../src/checkpoint.js';
import type { GPT } from '../src/model.js';
import { CharVocab } from '../src/text.js';
import { train } from '../src/train.js';
import { data, tinyRun, vocab } from './helpers.js';

let dir: string;
let model: GPT;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gpt-checkpoint-'));
  ({ model } = await train({ ...tinyRun, steps: 10, evalInterval: 10 }, data));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the checkpoint (one safetensors file)', () => {
  it('loads back the same model: the same weights, sizes, vocabulary and logits, with the head still tied', async () => {
    const file = join(dir, 'gpt.safetensors');
    await saveModel(file, model, vocab);
    const loaded = await loadModel(file);
    expect(loaded.model.config).toEqual(model.config);
    expect(loaded.vocab.chars).toEqual(vocab.chars);
    expect(loaded.model.training).toBe(false);
    expect(loaded.model.lmHead.weight).toBe(loaded.model.wte.weight);
    const saved = model.stateDict();
    for (const [name, t] of Object.entries(loaded.model.stateDict())) expect(await t.data(), name).toEqual(await saved[name]!.data());
    const idx = tensor(vocab.encode('Call me Ishmael.'), { dtype: int32 }).view([1, -1]);
    expect(await loaded.model.forward(idx).data()).toEqual(await model.forward(idx).data());
  });

  it('refuses a safetensors file without the model sizes or with damaged ones, naming the field', async () => {
    const weights = model.stateDict();
    const bare = join(dir, 'bare.safetensors');
    await nn.saveSafetensors(bare, weights);
    await expect(loadModel(bare)).rejects.toThrow(`${bare}: no '${CONFIG_KEY}' in the safetensors metadata`);
    const damaged = join(dir, 'damaged.safetensors');
    await nn.saveSafetensors(damaged, weights, { [CONFIG_KEY]: JSON.stringify({ ...model.config, nHead: 0 }), [VOCAB_KEY]: JSON.stringify(vocab.chars) });
    await expect(loadModel(damaged)).rejects.toThrow(`${CONFIG_KEY}.nHead must be a positive integer, got 0`);
    const shortVocab = join(dir, 'short-vocab.safetensors');
    await nn.saveSafetensors(shortVocab, weights, { [CONFIG_KEY]: JSON.stringify(model.config), [VOCAB_KEY]: JSON.stringify(vocab.chars.slice(1)) });
    await expect(loadModel(shortVocab)).rejects.toThrow(`${VOCAB_KEY} must list ${vocab.size} distinct single characters`);
  });

  it('refuses to save a vocabulary that does not fit the model', async () => {
    await expect(saveModel(join(dir, 'x.safetensors'), model, new CharVocab(['a', 'b']))).rejects.toThrow(/the vocabulary has 2 characters but the model 89 tokens/);
  });
});
