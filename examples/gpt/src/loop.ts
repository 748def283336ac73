// nanoGPT's train.py loop, in the shape a PyTorch user writes it: random windows of the text as
// batches, AdamW with nanoGPT's two parameter groups, linear warmup then cosine decay of the
// learning rate, mixed precision behind one flag (autocast + GradScaler, watched by the stability
// guard, as in the MNIST demo), gradient clipping, and the validation loss every few steps. It runs
// on a device it is given and imports nothing but the library, so a web page runs it too
// (examples/browser); train.ts adds the command line's backends and its --device flag.
import { nn } from '@core/nn';
import { AdamW, CosineAnnealingLR, LinearLR, SequentialLR } from '@core/optim';
import {
  ampConfig, autocast, compile, Generator, GradScaler, int32, manualSeed, noGrad, randint, StabilityGuard, tensor,
  type AmpMode, type AutocastOptions, type Device, type Tensor,
} from '@core/tensor';
import { yieldToEventLoop } from './event-loop.js';
import { GPT, paramGroups, type GPTConfig } from './model.js';

export type { AmpMode };

/** The model's sizes but the vocabulary's, which comes from the text. */
export type ModelSizes = Omit<GPTConfig, 'vocabSize'>;

/** How to train a language model, whatever the model: everything but the model and the device. */
export interface FitSettings {
  readonly amp: AmpMode;
  readonly seed: number;
  /** Optimizer steps. */
  readonly steps: number;
  /** Windows of blockSize + 1 tokens per batch. */
  readonly batchSize: number;
  /** The peak learning rate, reached after the warmup. */
  readonly lr: number;
  /** The learning rate the cosine decay ends at. */
  readonly minLr: number;
  /** Steps of linear warmup. */
  readonly warmupSteps: number;
  /** AdamW's decoupled weight decay of the ≥2-D parameters. */
  readonly weightDecay: number;
  /** AdamW's betas. */
  readonly betas: readonly [number, number];
  /** The largest total gradient norm; larger gradients are scaled down to it. */
  readonly gradClip: number;
  /** Estimate the validation loss every this many steps (and before the first and after the last). */
  readonly evalInterval: number;
  /** Batches the validation loss is averaged over (the same batches every time). */
  readonly evalBatches: number;
  /** Record the training step on its second call and replay it after (compile()): the same losses, less host work per step. */
  readonly compile?: boolean;
}

/** A training run's settings but its device: the GPT's sizes, and how to train it. */
export interface TrainSettings extends FitSettings {
  readonly model: ModelSizes;
}

/** The text as token ids, split. */
export interface TokenSplit {
  readonly vocabSize: number;
  readonly train: Int32Array;
  readonly val: Int32Array;
}

/** One validation estimate. */
export interface EvalRecord {
  /** Optimizer steps taken before it. */
  readonly step: number;
  /** The mean loss over the fixed validation batches, in nats per character. */
  readonly valLoss: number;
  /** The mean training loss of the steps since the previous estimate (NaN before the first step). */
  readonly trainLoss: number;
}

/**
 * What `fitLanguageModel` trains: a module, its mean next-token loss of inputs x against targets y
 * (both int32 [B, T]), and the window length T it trains on. The GPT here and a pretrained GPT-2
 * (examples/finetune-gpt2) are both trained through it.
 */
export interface LanguageModel<M extends nn.Module = nn.Module> {
  readonly model: M;
  loss(x: Tensor, y: Tensor): Tensor;
  readonly blockSize: number;
}

/** What a run gives back. */
export interface FitResult<M extends nn.Module = nn.Module> {
  readonly model: M;
  readonly device: Device;
  /** Every step's training loss. */
  readonly stepLosses: number[];
  readonly evals: EvalRecord[];
  /** Seconds the steps took (evaluations excluded). */
  readonly trainSeconds: number;
  /** The precision the run ended in ('off' is float32). */
  readonly amp: Exclude<AmpMode, 'auto'>;
  /** Steps the GradScaler skipped for Inf/NaN gradients. */
  readonly skippedSteps: number;
  readonly notices: string[];
}

/** What a GPT training run gives back. */
export type TrainResult = FitResult<GPT>;

/** Progress callbacks, and a way to stop early. */
export interface TrainHooks {
  onStep?(info: { step: number; steps: number; loss: number; lr: number; stepsPerSecond: number }): void;
  onEval?(record: EvalRecord): void;
  onNotice?(text: string): void;
  /** Once aborted, the run ends after the step under way, with a last validation estimate: its results cover the steps taken. */
  readonly signal?: AbortSignal;
}

/**
 * `batchSize` random windows of `tokens`: inputs x and next-token targets y, int32 [batchSize, blockSize]
 * on the cpu (nanoGPT's get_batch). The window starts come from `generator`.
 */
export function getBatch(tokens: Int32Array, batchSize: number, blockSize: number, generator: Generator): { x: Tensor; y: Tensor } {
  if (tokens.length <= blockSize) throw new Error(`the text has ${tokens.length} tokens: it needs more than blockSize (${blockSize})`);
  const starts = randint(0, tokens.length - blockSize, [batchSize], { generator }).dataSync();
  const x = new Int32Array(batchSize * blockSize);
  const y = new Int32Array(batchSize * blockSize);
  starts.forEach((start, b) => {
    x.set(tokens.subarray(start, start + blockSize), b * blockSize);
    y.set(tokens.subarray(start + 1, start + 1 + blockSize), b * blockSize);
  });
  return { x: tensor(x, { dtype: int32 }).view([batchSize, blockSize]), y: tensor(y, { dtype: int32 }).view([batchSize, blockSize]) };
}

/** The mean loss of `model` over `batches` windows of `tokens` drawn from a generator seeded with `seed`: the same windows on every call. */
export async function estimateLoss(
  lm: GPT | LanguageModel, tokens: Int32Array, { batches, batchSize, seed, device, precision }:
  { batches: number; batchSize: number; seed: number; device: Device; precision: AutocastOptions },
): Promise<number> {
  const { model, blockSize } = lm instanceof GPT ? gptTask(lm) : lm;
  const generator = new Generator(seed);
  const wasTraining = model.training;
  model.eval();
  let sum = 0;
  for (let i = 0; i < batches; i++) {
    const { x, y } = getBatch(tokens, batchSize, blockSize, generator);
    const loss = noGrad(() => autocast(precision, () => lm.loss(x.to(device), y.to(device))));
    sum += await loss.item();
    await yieldToEventLoop();
  }
  model.train(wasTraining);
  return sum / batches;
}

/**
 * nanoGPT's get_lr as schedulers: the first step at lr/warmupSteps, rising linearly to lr at step
 * warmupSteps + 1, then a cosine decay that reaches minLr when the steps end.
 */
function lrSchedule(optimizer: AdamW, config: FitSettings): SequentialLR | CosineAnnealingLR {
  const decaySteps = Math.max(1, config.steps - config.warmupSteps);
  const cosine = new CosineAnnealingLR(optimizer, { tMax: decaySteps, etaMin: config.minLr });
  if (config.warmupSteps === 0) return cosine;
  const warmup = new LinearLR(optimizer, { startFactor: 1 / config.warmupSteps, endFactor: 1, totalIters: config.warmupSteps });
  return new SequentialLR(optimizer, { schedulers: [warmup, cosine], milestones: [config.warmupSteps] });
}

/** A GPT as `fitLanguageModel` trains it. */
function gptTask(model: GPT): LanguageModel<GPT> {
  return { model, loss: (x, y) => model.loss(x, y), blockSize: model.config.blockSize };
}

/** Build a GPT for `data`'s vocabulary on `dev` and train it as `config` says. */
export async function trainOn(dev: Device, config: TrainSettings, data: TokenSplit, hooks: TrainHooks = {}): Promise<TrainResult> {
  manualSeed(config.seed);
  return fitLanguageModel(gptTask(new GPT({ ...config.model, vocabSize: data.vocabSize }).to(dev)), dev, config, data, hooks);
}

/** Train `lm.model` (already on `dev`) on random windows of `data.train` as `config` says, estimating the loss on `data.val`. */
export async function fitLanguageModel<M extends nn.Module>(
  lm: LanguageModel<M>, dev: Device, config: FitSettings, data: TokenSplit, hooks: TrainHooks = {},
): Promise<FitResult<M>> {
  const notices: string[] = [];
  const notice = (text: string) => { notices.push(text); hooks.onNotice?.(text); };
  const { model } = lm;
  const optimizer = new AdamW(paramGroups(model, config.weightDecay), { lr: config.lr, betas: [...config.betas] });
  const scheduler = lrSchedule(optimizer, config);
  const batches = new Generator(config.seed);

  const guard = new StabilityGuard(dev, ampConfig(dev, config.amp), { log: notice });
  notice(guard.config.reason);
  let scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });
  const stepLosses: number[] = [];
  const evals: EvalRecord[] = [];
  const evaluate = async (step: number, trainLoss: number): Promise<void> => {
    const valLoss = await estimateLoss(lm, data.val, {
      batches: config.evalBatches, batchSize: config.batchSize, seed: config.seed + 1, device: dev, precision: guard.autocastOptions,
    });
    const record = { step, valLoss, trainLoss };
    evals.push(record);
    hooks.onEval?.(record);
  };

  // One step's device work: forward, backward, clipping and the optimizer (which the scaler skips
  // after Inf/NaN gradients). Compiled, it runs eagerly twice, then replays what it recorded; a new
  // scaler (the guard changed the precision) needs a new one.
  const makeStep = (stepScaler: GradScaler) => compile(async (x: Tensor, y: Tensor) => {
    const loss = autocast(guard.autocastOptions, () => lm.loss(x, y));
    optimizer.zeroGrad();
    stepScaler.scale(loss).backward();
    stepScaler.unscale_(optimizer); // clip the true gradients, not the scaled ones
    nn.utils.clipGradNorm_(model.parameters(), config.gradClip);
    await stepScaler.step(optimizer);
    stepScaler.update();
    return loss;
  }, { mode: config.compile ? 'replay' : 'eager' }); // 'eager': a pass-through
  let trainStep = makeStep(scaler);
  if (config.compile) notice('compiled training step: recorded on its second call, replayed after (compile())');

  let skippedSteps = 0;
  let trainSeconds = 0;
  let sinceEval = 0;
  await evaluate(0, NaN);
  for (let step = 1; step <= config.steps; step++) {
    const started = performance.now();
    const lr = optimizer.paramGroups[0]!.lr;
    const { x: xb, y: yb } = getBatch(data.train, config.batchSize, lm.blockSize, batches);
    const x = xb.to(dev, { nonBlocking: true });
    const y = yb.to(dev, { nonBlocking: true });
    const scaleBefore = scaler.getScale();
    const loss = await trainStep(x, y);
    scheduler.step(); // a compiled step's replay reads the new lr
    const skipped = scaler.isEnabled() && scaler.getScale() < scaleBefore; // the scale backs off only after Inf/NaN grads
    const value = await loss.item();
    if (skipped) skippedSteps++;
    if (guard.observe(value, { skipped, rerun: () => lm.loss(x, y) })?.to) {
      scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });
      trainStep = makeStep(scaler);
    }
    stepLosses.push(value);
    trainSeconds += (performance.now() - started) / 1000;
    sinceEval++;
    hooks.onStep?.({ step, steps: config.steps, loss: value, lr, stepsPerSecond: step / trainSeconds });
    const stopping = hooks.signal?.aborted === true;
    if (step % config.evalInterval === 0 || step === config.steps || stopping) {
      await evaluate(step, stepLosses.slice(-sinceEval).reduce((a, b) => a + b, 0) / sinceEval);
      sinceEval = 0;
    }
    if (stopping) break;
    await yieldToEventLoop();
  }
  if (config.compile) notice(`compiled training step: ${trainStep.explain().replays} of ${trainStep.explain().calls} calls replayed`);
  model.eval();
  return { model, device: dev, stepLosses, evals, trainSeconds, amp: guard.config.mode, skippedSteps, notices };
}
