import { Generator, int32, tensor } from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GPT } from '../src/model.js';
import { generate } from '../src/sample.js';
import { train } from '../src/train.js';
import { data, tinyRun, vocab } from './helpers.js';

let model: GPT;
const tensorOf = (ids: Int32Array) => tensor(ids, { dtype: int32 }).view([1, -1]);

beforeAll(async () => {
  ({ model } = await train({ ...tinyRun, steps: 20, evalInterval: 20 }, data));
});

describe("sampling (nanoGPT's generate)", () => {
  const prompt = vocab.encode('The whale');

  it('is the same for the same seeded generator and differs for another seed', async () => {
    const options = { maxNewTokens: 30, temperature: 1, topK: 10 };
    const a = await generate(model, prompt, { ...options, generator: new Generator(5) });
    const b = await generate(model, prompt, { ...options, generator: new Generator(5) });
    const c = await generate(model, prompt, { ...options, generator: new Generator(6) });
    expect(a).toHaveLength(prompt.length + 30);
    expect([...a.subarray(0, prompt.length)]).toEqual([...prompt]);
    expect(vocab.decode(b)).toBe(vocab.decode(a));
    expect(vocab.decode(c)).not.toBe(vocab.decode(a));
  });

  it('with top-k 1 picks the likeliest character each time, whatever the generator (longer than the block size: the context slides)', async () => {
    const greedy = (seed: number) => generate(model, prompt, { maxNewTokens: 24, topK: 1, generator: new Generator(seed) });
    const a = await greedy(1);
    expect([...(await greedy(2))]).toEqual([...a]);
    // Each drawn token is the argmax of the logits of the (at most blockSize) tokens before it.
    for (const at of [prompt.length, a.length - 1]) {
      const context = a.subarray(Math.max(0, at - model.config.blockSize), at);
      const logits = model.forward(tensorOf(context));
      expect(await logits.select(1, -1).argmax(-1).item()).toBe(a[at]);
    }
  });

  it('refuses an empty prompt, a temperature ≤ 0 and a top-k that is not a positive integer', async () => {
    await expect(generate(model, new Int32Array(0), { maxNewTokens: 1 })).rejects.toThrow(/at least one token/);
    await expect(generate(model, prompt, { maxNewTokens: 1, temperature: 0 })).rejects.toThrow(/temperature must be > 0, got 0/);
    await expect(generate(model, prompt, { maxNewTokens: 1, topK: 2.5 })).rejects.toThrow(/topK must be a positive integer or null, got 2.5/);
  });
});
