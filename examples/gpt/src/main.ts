// Train a character-level GPT on Moby Dick, then sample from it: `pnpm demo:gpt -- --help` lists the flags.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { count, oneOf, parseFlags, positive, Progress, renderLossChart, type FlagSpec } from '@core/example-common';
import { Generator } from '@core/tensor';
import { saveModel } from './checkpoint.js';
import { generate } from './sample.js';
import { CharVocab, loadMobyDick, splitTokens, unigramEntropy } from './text.js';
import { train, type AmpMode, type TrainConfig } from './train.js';

const FLAGS: readonly FlagSpec[] = [
  ['device', 'auto', 'auto|cpu|webgpu|cuda[:n]', 'where to train (auto: the best available)'],
  ['amp', 'off', 'off|fp16|bf16|auto', 'mixed precision: autocast (+ GradScaler for fp16)'],
  ['steps', '400', 'N', 'optimizer steps'],
  ['batch-size', '12', 'N', 'windows of the text per step'],
  ['block-size', '64', 'N', 'context length, in characters'],
  ['layers', '4', 'N', 'transformer blocks'],
  ['heads', '4', 'N', 'attention heads (must divide --embd)'],
  ['embd', '128', 'N', 'width of the residual stream'],
  ['dropout', '0', 'X', 'dropout probability'],
  ['lr', '0.004', 'X', 'peak AdamW learning rate (cosine decay to lr/10)'],
  ['warmup', '20', 'N', 'steps of linear learning-rate warmup'],
  ['eval-interval', '100', 'N', 'validation loss every N steps'],
  ['seed', '0', 'N', 'seeds the weights, the batches and the sample'],
  ['prompt', 'CHAPTER 1', 'TEXT', 'the start of the sample'],
  ['tokens', '400', 'N', 'characters to sample'],
  ['temperature', '0.8', 'X', 'below 1: likelier characters, above 1: more varied ones'],
  ['top-k', '20', 'N', 'sample from the k likeliest characters only'],
  ['out', 'out', 'DIR', 'where the chart, log and checkpoint go'],
  ['compile', 'off', '', 'record the training step once, then replay it'],
];

const INTRO = [
  "gpt: trains a character-level GPT (nanoGPT's model) on the full text of Moby Dick (90% to train on,",
  'the last 10% to validate), then prints a sample from it.',
];

async function main(): Promise<void> {
  const flag = parseFlags(process.argv.slice(2), FLAGS, INTRO);
  if (flag === null) return;
  const dropout = Number(flag.dropout);
  if (!(dropout >= 0 && dropout < 1)) throw new Error(`--dropout must be a number in [0, 1), got '${flag.dropout}'`);
  const lr = positive('lr', flag.lr, false);
  const config: TrainConfig = {
    model: {
      blockSize: positive('block-size', flag['block-size'], true),
      nLayer: positive('layers', flag.layers, true),
      nHead: positive('heads', flag.heads, true),
      nEmbd: positive('embd', flag.embd, true),
      dropout,
      bias: true,
    },
    device: flag.device,
    amp: oneOf<AmpMode>('amp', flag.amp, ['off', 'fp16', 'bf16', 'auto']),
    seed: count('seed', flag.seed),
    steps: positive('steps', flag.steps, true),
    batchSize: positive('batch-size', flag['batch-size'], true),
    lr,
    minLr: lr / 10,
    warmupSteps: count('warmup', flag.warmup),
    weightDecay: 0.1,
    betas: [0.9, 0.99],
    gradClip: 1,
    evalInterval: positive('eval-interval', flag['eval-interval'], true),
    evalBatches: 8,
    compile: flag.compile === 'on',
  };
  const sampling = {
    maxNewTokens: positive('tokens', flag.tokens, true),
    temperature: positive('temperature', flag.temperature, false),
    topK: positive('top-k', flag['top-k'], true),
  };
  const outDir = flag.out;
  await mkdir(outDir, { recursive: true });

  const started = performance.now();
  const text = loadMobyDick();
  const vocab = CharVocab.of(text);
  const prompt = vocab.encode(flag.prompt); // refuses a character the book lacks before training starts
  const tokens = splitTokens(vocab.encode(text));
  const baseline = unigramEntropy(tokens.val);
  const progress = new Progress();
  progress.line(
    `Moby Dick: ${text.length.toLocaleString('en')} characters, a vocabulary of ${vocab.size}; ${tokens.train.length.toLocaleString('en')} to train on, ` +
      `${tokens.val.length.toLocaleString('en')} to validate. Unigram baseline of the validation text: ${baseline.toFixed(4)} nats per character.`,
  );

  let lastEval = '';
  const result = await train(config, { vocabSize: vocab.size, ...tokens }, {
    onNotice: (line) => progress.line(`note: ${line}`),
    onStep: (s) => progress.update('train', s.step, s.steps, `loss ${s.loss.toFixed(4)}  lr ${s.lr.toExponential(2)}  ${s.stepsPerSecond.toFixed(2)} steps/s${lastEval}`),
    onEval: (e) => {
      lastEval = `  val ${e.valLoss.toFixed(4)}`;
      progress.line(`step ${e.step}/${config.steps}  ${Number.isNaN(e.trainLoss) ? '' : `train loss ${e.trainLoss.toFixed(4)}  `}val loss ${e.valLoss.toFixed(4)}`);
    },
  });
  const { model, evals, stepLosses } = result;
  const finalVal = evals[evals.length - 1]!.valLoss;
  const stepsPerSecond = config.steps / result.trainSeconds;
  console.log(
    `Trained ${model.numParams().toLocaleString('en')} parameters on ${result.device} for ${config.steps} steps in ${result.trainSeconds.toFixed(1)} s ` +
      `(${stepsPerSecond.toFixed(2)} steps/s, ${Math.round(stepsPerSecond * config.batchSize * config.model.blockSize).toLocaleString('en')} tokens/s, amp ${result.amp}` +
      `${result.skippedSteps ? `, ${result.skippedSteps} steps skipped` : ''}): validation loss ${finalVal.toFixed(4)} nats ` +
      `against the unigram baseline's ${baseline.toFixed(4)}.`,
  );

  const checkpoint = join(outDir, 'gpt.safetensors');
  await saveModel(checkpoint, model, vocab);
  await writeFile(join(outDir, 'loss.svg'), renderLossChart({ stepLosses, evals, baseline }));
  await writeFile(join(outDir, 'log.json'), JSON.stringify({ config, vocabSize: vocab.size, baseline, trainSeconds: result.trainSeconds, evals, stepLosses }, null, 1));

  const sample = await generate(model, prompt, { ...sampling, generator: new Generator(config.seed) });
  console.log(`\nSample (temperature ${sampling.temperature}, top-k ${sampling.topK}):\n\n${vocab.decode(sample)}\n`);
  console.log(`Wrote ${join(outDir, 'loss.svg')}, ${join(outDir, 'log.json')} and ${checkpoint} in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
