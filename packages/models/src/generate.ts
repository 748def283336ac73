// Text generation for any CausalLM, as Hugging Face's `generate` does it for greedy search and
// sampling: the logits of the last position, for sampling warped by temperature → top-k → top-p,
// then argmax or a draw; rows that produced a stop token are padded until every row has stopped.
// With the KV cache (the default) the prompt is run once and each step feeds only the new token.
import {
  bindArguments, bool, cat, Generator, int32, multinomialAsync, noGrad, tensor, Tensor, ValueError, zeros, zerosLike,
} from '@core/tensor';
import { KVCache, type CausalLM } from './causal-lm.js';

/** How `generate` continues its input; the defaults are Hugging Face's. */
export interface GenerateOptions {
  /** Tokens to add to each row (at most; fewer when every row stops early). */
  readonly maxNewTokens: number;
  /** Draw each token from the warped distribution (true) or take the argmax (false, the default: greedy search). */
  readonly doSample?: boolean;
  /** Sampling only: the logits are divided by it first (default 1; must be > 0). */
  readonly temperature?: number;
  /** Sampling only: keep the `topK` largest logits (default 50, Hugging Face's; 0 keeps all). */
  readonly topK?: number;
  /** Sampling only: keep the smallest set of most likely tokens whose probability is at least `topP` (default 1: all), always at least one. */
  readonly topP?: number;
  /** Sampling only: the random stream of the draws (default: the global one, seeded by `manualSeed`). */
  readonly generator?: Generator;
  /** Stop token(s): a row that produces one stops, and generation ends when every row has. */
  readonly eosTokenId?: number | readonly number[];
  /** The token that fills rows after they stop (default: the first of `eosTokenId`). */
  readonly padTokenId?: number;
  /** Run the prompt once and then one token per step with a `KVCache` (default true), or rerun the whole sequence every step. */
  readonly useCache?: boolean;
}

const OPTION_KEYS = ['maxNewTokens', 'doSample', 'temperature', 'topK', 'topP', 'generator', 'eosTokenId', 'padTokenId', 'useCache'] as const;

/** `options` checked and completed with the defaults. */
function resolveOptions(options: GenerateOptions): Required<Omit<GenerateOptions, 'generator' | 'eosTokenId' | 'padTokenId'>> & {
  generator: Generator | undefined; eos: readonly number[]; pad: number | undefined;
} {
  const op = 'generate';
  bindArguments(op, [options], [], OPTION_KEYS);
  const { maxNewTokens, doSample = false, temperature = 1, topK = 50, topP = 1, generator, eosTokenId, useCache = true } = options;
  const isTokenId = (id: unknown): id is number => Number.isInteger(id) && (id as number) >= 0;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 0) throw new ValueError(`${op}(): maxNewTokens must be a non-negative integer, got ${maxNewTokens}`);
  if (typeof doSample !== 'boolean') throw new TypeError(`${op}(): doSample must be a boolean, got ${typeof doSample}`);
  if (typeof useCache !== 'boolean') throw new TypeError(`${op}(): useCache must be a boolean, got ${typeof useCache}`);
  if (!(typeof temperature === 'number' && temperature > 0 && Number.isFinite(temperature))) {
    throw new ValueError(`${op}(): temperature must be a positive number (sampling divides the logits by it), got ${temperature}`);
  }
  if (!Number.isInteger(topK) || topK < 0) throw new ValueError(`${op}(): topK must be a non-negative integer (0 keeps every token), got ${topK}`);
  if (!(typeof topP === 'number' && topP >= 0 && topP <= 1)) throw new ValueError(`${op}(): topP must be a probability in [0, 1], got ${topP}`);
  if (generator !== undefined && !(generator instanceof Generator)) throw new TypeError(`${op}(): generator must be a Generator, got ${typeof generator}`);
  const eos = eosTokenId === undefined ? [] : typeof eosTokenId === 'number' ? [eosTokenId] : [...eosTokenId];
  if (!eos.every(isTokenId)) throw new ValueError(`${op}(): eosTokenId must be a token id or a list of them, got ${JSON.stringify(eosTokenId)}`);
  const pad = options.padTokenId ?? eos[0];
  if (pad !== undefined && !isTokenId(pad)) throw new ValueError(`${op}(): padTokenId must be a token id, got ${pad}`);
  return { maxNewTokens, doSample, temperature, topK, topP, generator, eos, pad, useCache };
}

/**
 * `scores` `[..., vocab]` with every logit below the `k`-th largest of its row set to −∞ (Hugging
 * Face's TopKLogitsWarper: values tied with the k-th are kept). `k` of 0, or not below the vocab
 * size, keeps everything.
 */
export function maskTopK(scores: Tensor, k: number): Tensor {
  const vocab = scores.shape[scores.ndim - 1]!;
  if (k === 0 || k >= vocab) return scores;
  const kth = scores.topk(k, -1).values.narrow(-1, k - 1, 1);
  return scores.maskedFill(scores.lt(kth), -Infinity);
}

/**
 * `scores` `[batch, vocab]` with every logit outside the nucleus set to −∞ (Hugging Face's
 * TopPLogitsWarper): the nucleus is the smallest set of the most likely tokens whose softmax
 * probability sums to at least `p`; the most likely token is always kept. `p` of 1 keeps everything.
 */
export function maskTopP(scores: Tensor, p: number): Tensor {
  if (p >= 1) return scores;
  const { values, indices } = scores.sort(-1, false);
  // Ascending: a token is dropped when it and every less likely token together hold at most 1 − p;
  // the last (most likely) one never is.
  const below = values.softmax(-1).cumsum(-1).le(1 - p);
  const last = below.shape[below.ndim - 1]! - 1;
  const dropSorted = cat([below.narrow(-1, 0, last), zeros([...below.shape.slice(0, -1), 1], { dtype: bool, device: below.device })], -1);
  return scores.maskedFill(zerosLike(below).scatter(-1, indices, dropSorted), -Infinity);
}

/**
 * Continues each row of `inputIds` (int32 `[batch, seq]`) by up to `maxNewTokens` tokens from
 * `model` and returns the rows with their continuations, `[batch, seq + new]`. Greedy by default;
 * `doSample` draws from the logits warped as Hugging Face's generate does (temperature, then
 * `topK`, then `topP`) with `generator`. With `eosTokenId`, a row that produces a stop token keeps
 * it and is padded with `padTokenId` from then on, and generation ends once every row has stopped
 * (which reads the new tokens back each step). Runs without recording gradients. With or without
 * the cache (`useCache`) the tokens are the same.
 */
export async function generate(model: CausalLM, inputIds: Tensor, options: GenerateOptions): Promise<Tensor> {
  const o = resolveOptions(options);
  if (!(inputIds instanceof Tensor) || inputIds.dtype !== int32 || inputIds.ndim !== 2) {
    const got = inputIds instanceof Tensor ? `${inputIds.dtype.name} [${inputIds.shape.join(', ')}]` : typeof inputIds;
    throw new TypeError(`generate(): inputIds must be an int32 Tensor [batch, seq], got ${got}`);
  }
  const cache = o.useCache ? new KVCache(model.numLayers) : undefined;
  const rows = inputIds.shape[0]!;
  const running = new Array<boolean>(rows).fill(true);
  let ids = inputIds;
  let feed = inputIds;
  for (let step = 0; step < o.maxNewTokens && running.includes(true); step++) {
    const scores = noGrad(() => {
      const logits = model.forward(feed, cache === undefined ? {} : { cache });
      // The last position's logits, compared and warped in float32 (Hugging Face's `.float()`).
      return logits.select(1, logits.shape[1]! - 1).float();
    });
    let next = o.doSample ? await sample(scores, o) : noGrad(() => scores.argmax(-1));
    if (o.eos.length > 0) next = await stopRows(next, running, o.eos, o.pad!);
    feed = next.unsqueeze(1);
    ids = cat([ids, feed], 1);
    if (cache === undefined) feed = ids;
  }
  return ids;
}

/** One token per row drawn from `scores` [batch, vocab] after temperature, top-k and top-p. */
async function sample(scores: Tensor, o: { temperature: number; topK: number; topP: number; generator: Generator | undefined }): Promise<Tensor> {
  const probs = noGrad(() => maskTopP(maskTopK(o.temperature === 1 ? scores : scores.div(o.temperature), o.topK), o.topP).softmax(-1));
  const drawn = await multinomialAsync(probs, 1, o.generator === undefined ? {} : { generator: o.generator });
  return drawn.squeeze(1);
}

/**
 * `next` with rows that had already stopped replaced by `pad`; marks in `running` the rows whose
 * token is a stop token.
 */
async function stopRows(next: Tensor, running: boolean[], eos: readonly number[], pad: number): Promise<Tensor> {
  const tokens = (await next.toArray()) as number[];
  const out = tokens.map((t, i) => (running[i] ? t : pad));
  out.forEach((t, i) => {
    if (eos.includes(t)) running[i] = false;
  });
  return tensor(out, { dtype: int32, device: next.device });
}
