// generate(): greedy search against PyTorch's greedy continuation of the tiny GPT-2 fixture, the
// sampling warpers (temperature → top-k → top-p, as Hugging Face's) on hand-made logits, seeded
// sampling, stop tokens and padding, the KV cache vs none, no gradient recording, and bad options.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { float32, Generator, int32, isGradEnabled, tensor, ValueError, type Tensor } from '@core/tensor';
import { generate, GPT2LMHeadModel, maskTopK, maskTopP } from '../src/index.js';
import { GPT2_TINY, loadGPT2Expected } from './fixtures.js';

const { json: expected } = await loadGPT2Expected();
const model = await GPT2LMHeadModel.fromPretrained(GPT2_TINY);
const prompt = tensor(expected.prompt, { dtype: int32 });
const rows = async (t: Tensor) => (await t.toArray()) as number[][];
const continuation = async (t: Tensor) => (await rows(t)).map((r) => r.slice(expected.prompt[0]!.length));

describe('generate: greedy search', () => {
  it("continues the prompt by PyTorch's 32 greedy tokens exactly, with and without the KV cache", async () => {
    for (const useCache of [true, false]) {
      const out = await generate(model, prompt, { maxNewTokens: 32, useCache });
      expect(out.shape).toEqual([2, 40]);
      expect((await rows(out)).map((r) => r.slice(0, 8))).toEqual(expected.prompt);
      expect(await continuation(out)).toEqual(expected.generated);
    }
  });

  it('records no gradients and leaves grad mode as it was', async () => {
    const recorded: boolean[] = [];
    const handle = model.registerForwardHook((_m, _args, out) => {
      recorded.push(out.requiresGrad);
    });
    try {
      await generate(model, prompt, { maxNewTokens: 3 });
    } finally {
      handle.remove();
    }
    expect(recorded).toEqual([false, false, false]);
    expect(isGradEnabled()).toBe(true);
  });

  it('maxNewTokens 0 returns the prompt', async () => {
    expect(await rows(await generate(model, prompt, { maxNewTokens: 0 }))).toEqual(expected.prompt);
  });
});

describe('generate: stop tokens', () => {
  it('a row that produces a stop token keeps it and is padded after it; the others go on', async () => {
    // Greedy row 1 produces 8 at its third step; row 0 never produces 8.
    const out = await continuation(await generate(model, prompt, { maxNewTokens: 32, eosTokenId: 8, padTokenId: 63 }));
    expect(out[0]).toEqual(expected.generated[0]);
    expect(out[1]).toEqual([...expected.generated[1]!.slice(0, 3), ...new Array<number>(29).fill(63)]);
  });

  it('generation ends when every row has stopped; the pad defaults to the first stop token', async () => {
    // Row 0 produces 17 at step 2, row 1 produces 8 at step 3.
    const out = await continuation(await generate(model, prompt, { maxNewTokens: 32, eosTokenId: [17, 8] }));
    expect(out).toEqual([[...expected.generated[0]!.slice(0, 2), 17], expected.generated[1]!.slice(0, 3)]);
  });
});

describe('generate: sampling warpers', () => {
  const logits = tensor([[1, 3, 2, 5, 4], [2, 2, 0, 1, -1]], { dtype: float32 });
  const kept = async (t: Tensor) => (await rows(t)).map((r) => r.map((v) => v !== -Infinity));

  it('maskTopK keeps the k largest logits of each row (and ties with the k-th); 0 or k ≥ vocab keeps all', async () => {
    expect(await rows(maskTopK(logits, 2))).toEqual([[-Infinity, -Infinity, -Infinity, 5, 4], [2, 2, -Infinity, -Infinity, -Infinity]]);
    expect(await kept(maskTopK(logits, 1))).toEqual([[false, false, false, true, false], [true, true, false, false, false]]);
    expect(await rows(maskTopK(logits, 0))).toEqual(await rows(logits));
    expect(await rows(maskTopK(logits, 5))).toEqual(await rows(logits));
  });

  it('maskTopP keeps the smallest set of most likely tokens holding at least p, and always the best one', async () => {
    // Probabilities 0.5, 0.3, 0.15, 0.05 in two orders.
    const p = tensor([[0.15, 0.5, 0.05, 0.3], [0.3, 0.05, 0.5, 0.15]], { dtype: float32 }).log();
    expect(await kept(maskTopP(p, 0.75))).toEqual([[false, true, false, true], [true, false, true, false]]);
    expect(await kept(maskTopP(p, 0.4))).toEqual([[false, true, false, false], [false, false, true, false]]);
    expect(await kept(maskTopP(p, 0.9))).toEqual([[true, true, false, true], [true, false, true, true]]);
    expect(await kept(maskTopP(p, 0))).toEqual([[false, true, false, false], [false, false, true, false]]);
    expect(await rows(maskTopP(p, 1))).toEqual(await rows(p));
  });
});

describe('generate: sampling', () => {
  const sampled = (seed: number, options: { topK?: number; topP?: number; temperature?: number; useCache?: boolean } = {}) =>
    generate(model, prompt, { maxNewTokens: 16, doSample: true, generator: new Generator(seed), ...options });

  it('the same seed gives the same tokens, with or without the cache; another seed other tokens', async () => {
    const a = await rows(await sampled(7));
    expect(await rows(await sampled(7))).toEqual(a);
    expect(await rows(await sampled(7, { useCache: false }))).toEqual(a);
    expect(await rows(await sampled(8))).not.toEqual(a);
  });

  it('topK 1 is greedy search whatever the seed or temperature', async () => {
    const greedy = expected.generated.map((r) => r.slice(0, 16));
    expect(await continuation(await sampled(3, { topK: 1, temperature: 5 }))).toEqual(greedy);
  });

  it('every sampled token is among the topK most likely of its step', async () => {
    const out = await sampled(11, { topK: 3, temperature: 2 });
    const logits = (await model.forward(out).toArray()) as number[][][];
    const ids = await rows(out);
    ids.forEach((row, b) => {
      for (let t = 8; t < row.length; t++) {
        const scores = logits[b]![t - 1]!;
        const higher = scores.filter((s) => s > scores[row[t]!]!).length;
        expect(higher, `row ${b} step ${t}`).toBeLessThan(3);
      }
    });
  });
});

describe('generate: bad input', () => {
  it('unknown options are a TypeError naming them; bad values a ValueError saying what is allowed', async () => {
    await expect(generate(model, prompt, { maxNewTokens: 2, topk: 3 } as never)).rejects.toThrow(/topk/);
    await expect(generate(model, prompt, { maxNewTokens: 2, doSample: true, temperature: 0 })).rejects.toThrow(ValueError);
    await expect(generate(model, prompt, { maxNewTokens: 2, topP: 1.5 })).rejects.toThrow(/topP must be a probability in \[0, 1\]/);
    await expect(generate(model, prompt, { maxNewTokens: -1 })).rejects.toThrow(/maxNewTokens/);
    await expect(generate(model, prompt, { maxNewTokens: 2, eosTokenId: [1.5] })).rejects.toThrow(/eosTokenId/);
    await expect(generate(model, tensor([1, 2], { dtype: int32 }), { maxNewTokens: 2 })).rejects.toThrow(/int32 Tensor \[batch, seq\]/);
  });

  it("generating past the model's nPositions is the model's error saying how many positions", async () => {
    await expect(generate(model, prompt, { maxNewTokens: 42 })).rejects.toThrow(/49 positions \(48 cached \+ 1 new\) exceed the model's nPositions \(48\)/);
  });
});
