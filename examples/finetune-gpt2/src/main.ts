// Fine-tune a pretrained GPT-2 on a small text, then sample from it: `pnpm demo:finetune -- --help` lists the flags.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { count, oneOf, parseFlags, positive, Progress, renderLossChart, type FlagSpec } from '@core/example-common';
import { progressBar } from '@core/hub';
import type { AmpMode } from '@core/tensor';
import { loadMobyDick } from '../../gpt/src/text.js';
import { finetune, saveFinetuned, type FinetuneConfig } from './finetune.js';
import { sampleText } from './gpt2-task.js';

const FLAGS: readonly FlagSpec[] = [
  ['model', 'openai-community/gpt2', 'ID|DIR', 'a Hub repo id or a folder with config.json, model.safetensors, tokenizer.json'],
  ['revision', 'main', 'REV', 'the Hub branch, tag or commit to download'],
  ['text', undefined, 'FILE', 'a UTF-8 text to fine-tune on (default: the start of Moby Dick)'],
  ['chars', '60000', 'N', 'characters of the text to use (0: all)'],
  ['device', 'auto', 'auto|cpu|webgpu|cuda[:n]', 'where to train (auto: the best available)'],
  ['amp', 'off', 'off|fp16|bf16|auto', 'mixed precision: autocast (+ GradScaler for fp16)'],
  ['steps', '40', 'N', 'optimizer steps'],
  ['batch-size', '4', 'N', 'windows of the text per step'],
  ['block-size', '128', 'N', 'tokens per window (at most the model\'s context)'],
  ['lr', '0.0001', 'X', 'peak AdamW learning rate (cosine decay to lr/10)'],
  ['warmup', '4', 'N', 'steps of linear learning-rate warmup'],
  ['eval-interval', '10', 'N', 'validation loss every N steps'],
  ['seed', '0', 'N', 'seeds the batches and the samples'],
  ['prompt', 'Call me', 'TEXT', 'the start of the samples'],
  ['tokens', '40', 'N', 'tokens to sample, before and after fine-tuning'],
  ['temperature', '0.8', 'X', 'below 1: likelier tokens, above 1: more varied ones'],
  ['top-k', '40', 'N', 'sample from the k likeliest tokens only'],
  ['out', 'out', 'DIR', 'where the chart, log and fine-tuned model go'],
];

const INTRO = [
  'finetune-gpt2: fine-tunes a pretrained GPT-2 (from the Hugging Face Hub, or a folder) on a text, 90% to',
  'train on and the last 10% to validate, then writes it as a folder that --model (and fromPretrained) loads.',
  'The Hub needs network access; HF_ENDPOINT, HF_HUB_CACHE, HF_HUB_OFFLINE and HF_TOKEN work as in Python.',
];

async function main(): Promise<void> {
  const flag = parseFlags(process.argv.slice(2), FLAGS, INTRO);
  if (flag === null) return;
  const lr = positive('lr', flag.lr, false);
  const progress = new Progress();
  const config: FinetuneConfig = {
    model: flag.model,
    hub: { revision: flag.revision, onProgress: progressBar() },
    device: flag.device,
    amp: oneOf<AmpMode>('amp', flag.amp, ['off', 'fp16', 'bf16', 'auto']),
    seed: count('seed', flag.seed),
    steps: positive('steps', flag.steps, true),
    batchSize: positive('batch-size', flag['batch-size'], true),
    blockSize: positive('block-size', flag['block-size'], true),
    lr,
    minLr: lr / 10,
    warmupSteps: count('warmup', flag.warmup),
    weightDecay: 0.1,
    betas: [0.9, 0.95],
    gradClip: 1,
    evalInterval: positive('eval-interval', flag['eval-interval'], true),
    evalBatches: 4,
  };
  const sampling = {
    maxNewTokens: positive('tokens', flag.tokens, true),
    temperature: positive('temperature', flag.temperature, false),
    topK: positive('top-k', flag['top-k'], true),
    seed: config.seed,
  };
  const chars = count('chars', flag.chars);
  const fullText = flag.text === undefined ? loadMobyDick() : await readFile(flag.text, 'utf8');
  const text = chars === 0 ? fullText : fullText.slice(0, chars);
  const started = performance.now();

  let before = '';
  let lastEval = '';
  const result = await finetune(text, config, {
    onNotice: (line) => progress.line(`note: ${line}`),
    onStep: (s) => progress.update('fine-tune', s.step, s.steps, `loss ${s.loss.toFixed(4)}  lr ${s.lr.toExponential(2)}  ${s.stepsPerSecond.toFixed(2)} steps/s${lastEval}`),
    onEval: (e) => {
      lastEval = `  val ${e.valLoss.toFixed(4)}`;
      progress.line(`step ${e.step}/${config.steps}  ${Number.isNaN(e.trainLoss) ? '' : `train loss ${e.trainLoss.toFixed(4)}  `}val loss ${e.valLoss.toFixed(4)}`);
    },
    onReady: async (model, tokenizer) => {
      before = await sampleText(model, tokenizer, flag.prompt!, sampling);
    },
  });
  const { model, tokenizer, evals, stepLosses } = result;
  const initial = evals[0]!.valLoss;
  const final = evals[evals.length - 1]!.valLoss;
  console.log(
    `Fine-tuned ${config.model} (${model.parameters().reduce((n, p) => n + p.numel(), 0).toLocaleString('en')} parameters) on ${result.device} ` +
      `for ${config.steps} steps of ${config.batchSize}×${config.blockSize} tokens in ${result.trainSeconds.toFixed(1)} s ` +
      `(${(config.steps / result.trainSeconds).toFixed(2)} steps/s, amp ${result.amp}${result.skippedSteps ? `, ${result.skippedSteps} steps skipped` : ''}): ` +
      `validation loss ${initial.toFixed(4)} → ${final.toFixed(4)} nats per token (${result.tokens.train.toLocaleString('en')} tokens to train on, ${result.tokens.val.toLocaleString('en')} to validate).`,
  );

  const outModel = join(flag.out!, 'model');
  await saveFinetuned(outModel, model, result.source);
  await writeFile(join(flag.out!, 'loss.svg'), renderLossChart({ stepLosses, evals, baseline: initial, baselineLabel: 'before fine-tuning' }));
  await writeFile(join(flag.out!, 'log.json'), JSON.stringify({ config: { ...config, hub: { revision: config.hub.revision } }, trainSeconds: result.trainSeconds, evals, stepLosses }, null, 1));
  const after = await sampleText(model, tokenizer, flag.prompt!, sampling);
  console.log(`\nBefore fine-tuning (temperature ${sampling.temperature}, top-k ${sampling.topK}):\n\n${before}\n\nAfter:\n\n${after}\n`);
  console.log(`Wrote ${outModel}, ${join(flag.out!, 'loss.svg')} and ${join(flag.out!, 'log.json')} in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
