// What fine-tuning GPT-2 adds to the GPT demo's training loop, shared by the command line
// (finetune.ts) and the browser page (examples/browser/src/finetune.ts): the model as the loop
// trains it, and a sample from it. Browser-safe: no Node built-ins, no backend imports.
import { generate, type GPT2LMHeadModel, type Tokenizer } from '@core/models';
import { F } from '@core/nn';
import { Generator, int32, tensor } from '@core/tensor';
import type { LanguageModel } from '../../gpt/src/loop.js';

/** GPT-2 as the training loop sees it: the mean next-token cross entropy over windows of `blockSize` tokens. */
export function gpt2LanguageModel(model: GPT2LMHeadModel, blockSize: number): LanguageModel<GPT2LMHeadModel> {
  const vocab = model.config.vocabSize;
  return { model, blockSize, loss: (x, y) => F.crossEntropy(model.forward(x).view([-1, vocab]), y.view([-1])) };
}

/** How to sample. */
export interface SampleSettings {
  readonly maxNewTokens: number;
  readonly temperature: number;
  readonly topK: number;
  readonly seed: number;
}

/** `prompt` continued by `maxNewTokens` tokens sampled from `model` (temperature, then top-k, seeded) in eval mode, decoded. */
export async function sampleText(model: GPT2LMHeadModel, tokenizer: Tokenizer, prompt: string, settings: SampleSettings): Promise<string> {
  const promptIds = tokenizer.encode(prompt);
  if (promptIds.length === 0) throw new Error('the prompt must hold at least one token');
  const device = model.transformer.wte.weight.device;
  const input = tensor(Int32Array.from(promptIds), { dtype: int32 }).view([1, -1]).to(device);
  const wasTraining = model.training;
  model.eval();
  const out = await generate(model, input, {
    maxNewTokens: settings.maxNewTokens, doSample: true, temperature: settings.temperature, topK: settings.topK, generator: new Generator(settings.seed),
  });
  model.train(wasTraining);
  return tokenizer.decode(Array.from(await out.view([-1]).data()));
}
