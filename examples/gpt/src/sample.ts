// nanoGPT's generate(): extend a prompt one token at a time, each drawn from the model's
// next-token distribution, sharpened or flattened by a temperature and cut to the top k tokens.
import { cat, int32, noGrad, tensor, type Generator, type Tensor } from '@core/tensor';
import { yieldToEventLoop } from './event-loop.js';
import type { GPT } from './model.js';

/** How to sample. */
export interface SampleOptions {
  /** Tokens to add to the prompt. */
  readonly maxNewTokens: number;
  /** Divides the logits: below 1 sharpens the distribution, above 1 flattens it (default 1). */
  readonly temperature?: number;
  /** Draw only from the k likeliest tokens (default: from all). */
  readonly topK?: number | null;
  /** The generator the draws come from (default: the global one, `manualSeed`). */
  readonly generator?: Generator;
}

/** The next-token logits at the last position, scaled by 1/temperature, with all but the top k set to −∞. */
function lastLogits(model: GPT, context: Tensor, temperature: number, topK: number | null): Tensor {
  const logits = model.forward(context).select(1, -1).div(temperature);
  if (topK === null || topK >= model.config.vocabSize) return logits;
  const kth = logits.topk(topK).values.narrow(-1, topK - 1, 1);
  return logits.maskedFill(logits.lt(kth), -Infinity);
}

/**
 * The prompt's token ids followed by `maxNewTokens` sampled ones. The model sees at most its last
 * blockSize tokens. Runs in eval mode without autograd, on the model's device.
 */
export async function generate(model: GPT, prompt: Int32Array, { maxNewTokens, temperature = 1, topK = null, generator }: SampleOptions): Promise<Int32Array> {
  if (prompt.length === 0) throw new Error('generate(): the prompt must hold at least one token');
  if (!(temperature > 0)) throw new Error(`generate(): temperature must be > 0, got ${temperature}`);
  if (topK !== null && !(Number.isInteger(topK) && topK > 0)) throw new Error(`generate(): topK must be a positive integer or null, got ${topK}`);
  const device = model.wte.weight.device;
  const wasTraining = model.training;
  model.eval();
  let ids = tensor(prompt, { dtype: int32 }).view([1, -1]).to(device);
  for (let i = 0; i < maxNewTokens; i++) {
    const context = ids.shape[1]! > model.config.blockSize ? ids.narrow(1, ids.shape[1]! - model.config.blockSize, model.config.blockSize) : ids;
    const probs = noGrad(() => lastLogits(model, context, temperature, topK).softmax(-1));
    const next = await probs.multinomialAsync(1, generator ? { generator } : {});
    ids = cat([ids, next], 1);
    await yieldToEventLoop();
  }
  model.train(wasTraining);
  return Int32Array.from(await ids.view([-1]).data());
}
