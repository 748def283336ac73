// The README's training loop, written the way a PyTorch user writes it: pick the device once, move
// the model once, move each batch right before the forward pass.
import '@core/backend-cpu';
import '@core/backend-webgpu'; // registers 'webgpu' when an adapter is found (else it reports why not)
import '@core/backend-cuda'; // registers 'cuda' when the addon, a driver and a GPU are present (else it reports why not)
import { DataLoader, TensorDataset } from '@core/data';
import { F } from '@core/nn';
import { AdamW } from '@core/optim';
import { chooseDevice } from '@core/example-common';
import {
  ampConfig, autocast, compile, getBackend, Generator, GradScaler, manualSeed, memoryStats, noGrad, StabilityGuard,
  type AmpMode, type AutocastOptions, type Device, type Tensor,
} from '@core/tensor';
import { readCheckpoint, saveCheckpoint } from './checkpoint.js';
import { loadMnist, type MnistSplit } from './mnist.js';
import { buildModel, type ModelKind } from './models.js';

export type { AmpMode };

export interface TrainConfig {
  readonly device: string; // 'auto' | 'cpu' | 'webgpu' | 'cuda' | 'cuda:1' …
  readonly model: ModelKind;
  readonly epochs: number;
  readonly batchSize: number;
  readonly lr: number;
  readonly seed: number;
  readonly amp: AmpMode;
  /** Use only the first n training digits (quick runs, tests). */
  readonly trainLimit?: number;
  /** Write a checkpoint here (without extension) after every epoch. */
  readonly checkpoint?: string;
  /** Resume from this checkpoint (with or without its .safetensors extension). */
  readonly resume?: string;
  /** Stop after this many epochs in this run (the rest can be resumed). */
  readonly stopAfterEpochs?: number;
  /** Record the training step on its second call and replay it after (compile()): the same losses, less host work per step. */
  readonly compile?: boolean;
}

export interface EpochRecord {
  readonly epoch: number;
  readonly step: number;
  readonly trainLoss: number;
  readonly testAccuracy: number;
  readonly seconds: number;
  readonly imagesPerSecond: number;
  readonly stepsPerSecond: number;
  /** The precision this epoch ended in ('off' is float32). */
  readonly amp: Exclude<AmpMode, 'auto'>;
  /** Steps the GradScaler skipped for Inf/NaN gradients. */
  readonly skippedSteps: number;
  /** Most bytes the device held at the end of a step in this epoch. */
  readonly peakBytes: number;
}

export interface TrainResult {
  readonly device: string;
  readonly stepLosses: number[];
  readonly epochs: EpochRecord[];
  readonly notices: string[];
}

export interface TrainHooks {
  onStep?(info: { epoch: number; done: number; total: number; loss: number; imagesPerSecond: number }): void;
  onEpoch?(record: EpochRecord): void;
  onNotice?(text: string): void;
}

/** Fraction of `images` the model classifies correctly, in eval mode and without autograd. */
export async function evaluate(
  model: { forward(x: Tensor): Tensor; eval(): unknown; train(): unknown }, images: Tensor, labels: Tensor, dev: Device,
  precision: AutocastOptions = { deviceType: dev.type, enabled: false },
): Promise<number> {
  model.eval();
  let correct = 0;
  const n = images.shape[0]!;
  for (let start = 0; start < n; start += 500) {
    const end = Math.min(start + 500, n);
    const hits = noGrad(() => {
      const x = images.slice(0, start, end).to(dev);
      const y = labels.slice(0, start, end).to(dev);
      return autocast(precision, () => model.forward(x)).argmax(1).eq(y).sum();
    });
    correct += await hits.item();
  }
  model.train();
  return correct / n;
}

/** Train as `config` says; `data` defaults to the MNIST split (loaded after a --resume checkpoint has been checked). */
export async function train(config: TrainConfig, hooks: TrainHooks = {}, data?: MnistSplit): Promise<TrainResult> {
  const notices: string[] = [];
  const notice = (text: string) => { notices.push(text); hooks.onNotice?.(text); };

  const dev = await chooseDevice(config.device);
  manualSeed(config.seed);
  const model = buildModel(config.model).to(dev);
  const optimizer = new AdamW(model.parameters(), { lr: config.lr });
  const loaderGenerator = new Generator(config.seed);

  // --amp: autocast + GradScaler behind one flag, watched by the guard (fp16 → bf16 → fp32).
  let amp = ampConfig(dev, config.amp);
  const objects = { modelKind: config.model, model, optimizer, loaderGenerator };
  // The whole checkpoint is read and checked before anything changes (and before the data load, so a
  // refusal comes at once); it is applied below, once the scaler for its precision exists.
  const resumed = config.resume ? await readCheckpoint(config.resume, objects) : null;
  if (resumed && resumed.progress.amp !== amp.mode) amp = ampConfig(dev, resumed.progress.amp); // a guard fallback carries over

  const { trainImages, trainLabels, testImages, testLabels } = data ?? loadMnist({ limit: config.trainLimit });
  const loader = new DataLoader(new TensorDataset(trainImages, trainLabels), {
    // Pinned batches only help a device that reads page-locked memory faster (PIN-3).
    batchSize: config.batchSize, shuffle: true, generator: loaderGenerator, pinMemory: getBackend(dev.type).capabilities.pinnedMemory,
  });

  notice(amp.reason);
  if (config.compile) notice('compiled training step: recorded on its second call, replayed after (compile())');
  const guard = new StabilityGuard(dev, amp, { log: notice });
  let scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });

  let startEpoch = 0;
  let step = 0;
  const stepLosses: number[] = [];
  const epochs: EpochRecord[] = [];
  if (resumed) {
    resumed.restore(scaler);
    ({ epoch: startEpoch, step } = resumed.progress);
    stepLosses.push(...resumed.progress.stepLosses);
    epochs.push(...resumed.progress.epochs);
    notice(`resumed from ${resumed.file} after epoch ${startEpoch} (step ${step})`);
  }

  // One step's device work: forward, backward and the optimizer (which the scaler skips after Inf/NaN
  // gradients). Compiled, it runs eagerly twice, then replays what it recorded; a new scaler (the
  // guard changed the precision) needs a new one.
  const lossOf = (x: Tensor, y: Tensor) => F.crossEntropy(model.forward(x), y);
  const makeStep = (stepScaler: GradScaler) => compile(async (x: Tensor, y: Tensor) => {
    const loss = autocast(guard.autocastOptions, () => lossOf(x, y));
    optimizer.zeroGrad();
    stepScaler.scale(loss).backward();
    await stepScaler.step(optimizer);
    stepScaler.update();
    return loss;
  }, { mode: config.compile ? 'replay' : 'eager' }); // 'eager': a pass-through
  let trainStep = makeStep(scaler);

  const lastEpoch = Math.min(config.epochs, startEpoch + (config.stopAfterEpochs ?? Infinity));
  for (let epoch = startEpoch; epoch < lastEpoch; epoch++) {
    model.train();
    const started = performance.now();
    let seen = 0;
    let lossSum = 0;
    let done = 0;
    let skippedSteps = 0;
    let peakBytes = 0;
    for await (const [xb, yb] of loader) {
      const x = xb.to(dev, { nonBlocking: true });
      const y = yb.to(dev, { nonBlocking: true });
      const scaleBefore = scaler.getScale();
      const loss = await trainStep(x, y);
      const skipped = scaler.isEnabled() && scaler.getScale() < scaleBefore; // the scale backs off only after Inf/NaN grads

      const value = await loss.item();
      if (skipped) skippedSteps++;
      if (guard.observe(value, { skipped, rerun: () => lossOf(x, y) })?.to) {
        scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });
        trainStep = makeStep(scaler);
      }
      peakBytes = Math.max(peakBytes, memoryStats(dev).allocatedBytes);
      stepLosses.push(value);
      lossSum += value * x.shape[0]!;
      seen += x.shape[0]!;
      step++;
      done++;
      hooks.onStep?.({ epoch: epoch + 1, done, total: loader.length, loss: value, imagesPerSecond: seen / ((performance.now() - started) / 1000) });
    }
    const seconds = (performance.now() - started) / 1000;
    const testAccuracy = await evaluate(model, testImages, testLabels, dev, guard.autocastOptions);
    const record: EpochRecord = {
      epoch: epoch + 1, step, trainLoss: lossSum / seen, testAccuracy, seconds,
      imagesPerSecond: seen / seconds, stepsPerSecond: done / seconds, amp: guard.config.mode, skippedSteps, peakBytes,
    };
    epochs.push(record);
    hooks.onEpoch?.(record);
    if (config.checkpoint) {
      await saveCheckpoint(config.checkpoint, { ...objects, scaler }, { epoch: epoch + 1, step, amp: guard.config.mode, stepLosses, epochs });
    }
  }
  if (config.compile) notice(`compiled training step: ${trainStep.explain().replays} of ${trainStep.explain().calls} calls replayed`);
  return { device: dev.toString(), stepLosses, epochs, notices };
}
