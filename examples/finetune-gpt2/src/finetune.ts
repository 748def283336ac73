// Fine-tuning a pretrained GPT-2: load it and its tokenizer from the Hub (or a folder), cut the text
// into token windows, and train it with the same loop as the GPT demo (examples/gpt/src/loop.ts:
// AdamW with decay and no-decay groups, warmup then cosine decay, gradient clipping, autocast and
// the GradScaler behind --amp), then write the result as a folder that `fromPretrained` loads.
import '@core/backend-cpu';
import '@core/backend-webgpu'; // registers 'webgpu' when an adapter is found (else it reports why not)
import '@core/backend-cuda'; // registers 'cuda' when the addon, a driver and a GPU are present (else it reports why not)
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chooseDevice } from '@core/example-common';
import { GPT2LMHeadModel, resolvePretrained, Tokenizer, type PretrainedOptions } from '@core/models';
import { nn } from '@core/nn';
import { manualSeed, type Device } from '@core/tensor';
import { fitLanguageModel, type FitResult, type FitSettings, type TrainHooks } from '../../gpt/src/loop.js';
import { splitTokens } from '../../gpt/src/vocab.js';
import { gpt2LanguageModel } from './gpt2-task.js';

/** What to fine-tune, on what, and how. */
export interface FinetuneConfig extends FitSettings {
  /** A Hub repo id (`openai-community/gpt2`) or a folder holding config.json, model.safetensors and tokenizer.json. */
  readonly model: string;
  /** The Hub's download settings (revision, cache folder, offline, progress). */
  readonly hub: Omit<PretrainedOptions, 'device' | 'dtype'>;
  /** 'auto' | 'cpu' | 'webgpu' | 'cuda' | 'cuda:1' … */
  readonly device: string;
  /** Tokens per training window; at most the model's context (n_positions). */
  readonly blockSize: number;
}

/** A fine-tuned model, its tokenizer and what the run measured. */
export interface FinetuneResult extends FitResult<GPT2LMHeadModel> {
  readonly tokenizer: Tokenizer;
  /** The folder the model came from (the Hub's cache snapshot, or the folder given). */
  readonly source: string;
  /** Tokens of the text to train on and to validate on. */
  readonly tokens: { readonly train: number; readonly val: number };
}

/** The training loop's callbacks, and one for the loaded model before training starts (the demo samples from it there). */
export interface FinetuneHooks extends TrainHooks {
  onReady?(model: GPT2LMHeadModel, tokenizer: Tokenizer): Promise<void> | void;
}

/** Load `config.model`, tokenize `text` (90% to train on, the last 10% to validate), and fine-tune it. */
export async function finetune(text: string, config: FinetuneConfig, hooks: FinetuneHooks = {}): Promise<FinetuneResult> {
  const device: Device = await chooseDevice(config.device);
  const { dir } = await resolvePretrained(config.model, config.hub);
  manualSeed(config.seed);
  const model = await GPT2LMHeadModel.fromPretrained(dir, { device });
  const tokenizer = await Tokenizer.fromPretrained(dir);
  if (config.blockSize > model.config.nPositions) {
    throw new Error(`--block-size ${config.blockSize} is longer than the model's context of ${model.config.nPositions} tokens`);
  }
  const ids = Int32Array.from(tokenizer.encode(text));
  const split = splitTokens(ids);
  for (const [name, part] of [['training', split.train], ['validation', split.val]] as const) {
    if (part.length <= config.blockSize) {
      throw new Error(`the text's ${name} part has ${part.length} tokens: it needs more than --block-size (${config.blockSize}); give a longer text or a shorter block`);
    }
  }
  await hooks.onReady?.(model, tokenizer);
  model.train();
  const result = await fitLanguageModel(gpt2LanguageModel(model, config.blockSize), device, config, { vocabSize: model.config.vocabSize, ...split }, hooks);
  return { ...result, tokenizer, source: dir, tokens: { train: split.train.length, val: split.val.length } };
}

/** The files of a model folder besides the weights, copied so that the output loads like the input. */
const COPIED = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];

/**
 * Write `model` to `dir` as Hugging Face lays a model out: config.json and the tokenizer files from
 * `source`, and model.safetensors without the head's weight, which is tied to the token embedding
 * (as `save_pretrained` writes GPT-2). `GPT2LMHeadModel.fromPretrained(dir)` loads it.
 */
export async function saveFinetuned(dir: string, model: GPT2LMHeadModel, source: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of COPIED) {
    await copyFile(join(source, name), join(dir, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT' || name === 'config.json' || name === 'tokenizer.json') throw e;
    });
  }
  const weights = Object.fromEntries(Object.entries(model.stateDict()).filter(([key]) => key !== 'lm_head.weight'));
  await nn.saveSafetensors(join(dir, 'model.safetensors'), weights, { format: 'pt' });
}
