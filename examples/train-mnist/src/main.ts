// Train a digit classifier on real MNIST digits: `pnpm demo -- --help` lists the flags.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoArgs, oneOf, positive, Progress } from '@core/example-common';
import { renderChart } from './chart.js';
import { train, type AmpMode, type TrainConfig } from './train.js';

const HELP = `train-mnist: trains a classifier on 8,000 real MNIST digits and tests it on 2,000 held-out ones.

  --device auto|cpu|webgpu|cuda[:n]  where to train (auto: the best available)   [auto]
  --model cnn|mlp                    the model                                     [cnn]
  --amp off|fp16|bf16|auto           mixed precision: autocast (+ GradScaler for fp16) [off]
  --epochs N                                                                       [5]
  --batch-size N                                                                   [64]
  --lr X                             AdamW learning rate                           [0.002]
  --seed N                                                                         [0]
  --train-limit N                    train on the first N of the 8,000 digits only (quick runs)
  --out DIR                          where the chart, log and checkpoint go        [out]
  --resume PATH                      continue from a checkpoint (PATH.safetensors; the extension may be given)
  --compile                          record the training step once, then replay it (compile())

A checkpoint (DIR/checkpoint.safetensors) is written after every epoch, replacing the previous one
atomically: a crash while it is written leaves the previous one whole.
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: demoArgs(process.argv.slice(2)),
    options: {
      device: { type: 'string', default: 'auto' },
      model: { type: 'string', default: 'cnn' },
      amp: { type: 'string', default: 'off' },
      epochs: { type: 'string', default: '5' },
      'batch-size': { type: 'string', default: '64' },
      lr: { type: 'string', default: '0.002' },
      seed: { type: 'string', default: '0' },
      'train-limit': { type: 'string' },
      out: { type: 'string', default: 'out' },
      resume: { type: 'string' },
      compile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const outDir = values.out!;
  await mkdir(outDir, { recursive: true });
  const config: TrainConfig = {
    device: values.device!,
    model: oneOf('model', values.model!, ['cnn', 'mlp'] as const),
    amp: oneOf<AmpMode>('amp', values.amp!, ['off', 'fp16', 'bf16', 'auto']),
    epochs: positive('epochs', values.epochs!, true),
    batchSize: positive('batch-size', values['batch-size']!, true),
    lr: positive('lr', values.lr!, false),
    seed: Number.isInteger(Number(values.seed)) ? Number(values.seed) : 0,
    checkpoint: join(outDir, 'checkpoint'),
    ...(values['train-limit'] ? { trainLimit: positive('train-limit', values['train-limit'], true) } : {}),
    ...(values.resume ? { resume: values.resume } : {}),
    compile: values.compile!,
  };

  const progress = new Progress();
  const started = performance.now();
  const result = await train(config, {
    onNotice: (text) => progress.line(`note: ${text}`),
    onStep: (s) => progress.update(`epoch ${s.epoch}/${config.epochs}`, s.done, s.total, `loss ${s.loss.toFixed(4)}  ${s.imagesPerSecond.toFixed(0)} img/s`),
    onEpoch: (e) => progress.line(
      `epoch ${e.epoch}/${config.epochs}  train loss ${e.trainLoss.toFixed(4)}  test accuracy ${(e.testAccuracy * 100).toFixed(2)}%  ` +
        `${e.seconds.toFixed(1)} s  ${e.stepsPerSecond.toFixed(1)} steps/s  ${e.imagesPerSecond.toFixed(0)} img/s  ` +
        `amp ${e.amp}${e.skippedSteps ? ` (${e.skippedSteps} skipped)` : ''}  peak ${(e.peakBytes / 2 ** 20).toFixed(1)} MiB`,
    ),
  });
  const total = (performance.now() - started) / 1000;
  const final = result.epochs[result.epochs.length - 1];

  await writeFile(join(outDir, 'chart.svg'), renderChart({ stepLosses: result.stepLosses, epochs: result.epochs.map((e) => ({ step: e.step, testAccuracy: e.testAccuracy })) }));
  await writeFile(join(outDir, 'log.json'), JSON.stringify({ config, wallSeconds: total, ...result }, null, 1));
  console.log(`\nTrained a ${config.model} on ${result.device} in ${total.toFixed(1)} s: test accuracy ${final ? (final.testAccuracy * 100).toFixed(2) : '–'}% on 2,000 held-out digits.`);
  console.log(`Wrote ${join(outDir, 'chart.svg')}, ${join(outDir, 'log.json')} and ${join(outDir, 'checkpoint.safetensors')}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
