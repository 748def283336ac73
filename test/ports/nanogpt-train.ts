// nanoGPT's train.py loop, ported line by line (single process, no DDP, no checkpointing or
// logging): get_batch from a token array, estimate_loss on both splits every evalInterval
// iterations, AdamW from configureOptimizers, the learning rate of get_lr (linear warmup, then
// cosine decay to minLr) set on every param group each iteration, gradient accumulation with the
// next batch fetched while the step is pending, GradScaler (enabled for float16 only),
// nn.utils.clipGradNorm_ and zeroGrad({ setToNone: true }). `with ctx:` is `autocast(ctx, () => …)`.
import { nn } from '@core/nn';
import { autocast, float16, GradScaler, noGrad, randint, stack, zeros, type AutocastOptions, type Generator, type Tensor } from '@core/tensor';
import type { GPT } from './nanogpt.js';

/** train.py's settings that this loop reads. */
export interface TrainConfig {
  /** Sequences per micro-step. */
  readonly batchSize: number;
  /** Micro-steps whose gradients add up to one optimizer step. */
  readonly gradientAccumulationSteps: number;
  /** The last iteration (iterations 0..maxIters each take one optimizer step). */
  readonly maxIters: number;
  /** estimate_loss runs before every iteration that is a multiple of this. */
  readonly evalInterval: number;
  /** Batches estimate_loss averages over, per split. */
  readonly evalIters: number;
  /** The peak learning rate. */
  readonly learningRate: number;
  /** AdamW's decoupled weight decay of the ≥2-D parameters. */
  readonly weightDecay: number;
  /** AdamW's beta1. */
  readonly beta1: number;
  /** AdamW's beta2. */
  readonly beta2: number;
  /** The largest total gradient norm; 0 turns clipping off. */
  readonly gradClip: number;
  /** Whether the learning rate follows getLr (else it stays learningRate). */
  readonly decayLr: boolean;
  /** Iterations of linear warmup. */
  readonly warmupIters: number;
  /** The iteration the cosine decay ends at. */
  readonly lrDecayIters: number;
  /** The learning rate after the decay. */
  readonly minLr: number;
}

/** The token ids of both splits, int32 1-D. */
export interface TrainData {
  /** Tokens batches are drawn from. */
  readonly train: Tensor;
  /** Held-out tokens, for estimate_loss only. */
  readonly val: Tensor;
}

/** One estimate_loss: the mean loss over evalIters batches of each split. */
export interface EvalRecord {
  /** The iteration it ran before. */
  readonly iter: number;
  /** Mean loss on training batches. */
  readonly train: number;
  /** Mean loss on validation batches. */
  readonly val: number;
}

/** What a run gives back. */
export interface TrainRecord {
  /** Every micro-step's loss, undivided (train.py's `loss.item() * gradient_accumulation_steps`). */
  readonly microLosses: number[];
  /** Every estimate_loss. */
  readonly evals: EvalRecord[];
  /** The learning rate of every iteration. */
  readonly lrs: number[];
}

/**
 * Where get_batch's start positions come from: `batchSize` integers in [0, high) as an int32
 * tensor. train.py draws them with torch.randint from the global generator.
 */
export type DrawIndices = (high: number, batchSize: number) => Tensor;

/** train.py's draw: randint(0, high, [batchSize]) from `generator`. */
export function randintIndices(generator: Generator): DrawIndices {
  return (high, batchSize) => randint(0, high, [batchSize], { generator });
}

/** Learning rate of iteration `it`: linear warmup for warmupIters, then cosine decay to minLr at lrDecayIters, minLr after. */
export function getLr(it: number, c: TrainConfig): number {
  // 1) linear warmup
  if (it < c.warmupIters) return (c.learningRate * (it + 1)) / (c.warmupIters + 1);
  // 2) past the decay, the minimum
  if (it > c.lrDecayIters) return c.minLr;
  // 3) in between, cosine decay down to the minimum
  const decayRatio = (it - c.warmupIters) / (c.lrDecayIters - c.warmupIters);
  const coeff = 0.5 * (1.0 + Math.cos(Math.PI * decayRatio)); // from 1 to 0
  return c.minLr + coeff * (c.learningRate - c.minLr);
}

/** Lets other work run between steps: a training loop must not hold the event loop. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Train `model` as train.py does, under `ctx` (autocast settings; enabled: false is train.py's nullcontext). */
export async function train(model: GPT, data: TrainData, c: TrainConfig, ctx: AutocastOptions, drawIndices: DrawIndices): Promise<TrainRecord> {
  const blockSize = model.config.blockSize;

  /** Random windows of blockSize tokens: inputs x and next-token targets y, [batchSize, blockSize]. */
  function getBatch(split: keyof TrainData): [Tensor, Tensor] {
    const d = data[split];
    const ix = drawIndices(d.shape[0]! - blockSize, c.batchSize);
    const starts = [...ix.dataSync()];
    const x = stack(starts.map((i) => d.slice(0, i, i + blockSize)));
    const y = stack(starts.map((i) => d.slice(0, i + 1, i + 1 + blockSize)));
    return [x, y];
  }

  /** The mean loss over evalIters batches of each split, in eval mode and without grad. */
  async function estimateLoss(): Promise<{ train: number; val: number }> {
    const out = { train: 0, val: 0 };
    model.eval();
    for (const split of ['train', 'val'] as const) {
      const losses = zeros([c.evalIters]);
      for (let k = 0; k < c.evalIters; k++) {
        const [X, Y] = getBatch(split);
        const [, loss] = noGrad(() => autocast(ctx, () => model.call(X, Y)));
        losses.indexPut_(k, await loss!.item());
      }
      out[split] = await losses.mean().item();
    }
    model.train();
    return out;
  }

  const optimizer = model.configureOptimizers(c.weightDecay, c.learningRate, [c.beta1, c.beta2]);
  // A GradScaler only for float16; a disabled one passes everything through.
  const scaler = new GradScaler(ctx.deviceType, { enabled: ctx.enabled !== false && ctx.dtype === float16 });
  const microLosses: number[] = [];
  const evals: EvalRecord[] = [];
  const lrs: number[] = [];

  let [X, Y] = getBatch('train'); // the very first batch
  let iterNum = 0;
  for (;;) {
    // The learning rate of this iteration, on every group.
    const lr = c.decayLr ? getLr(iterNum, c) : c.learningRate;
    for (const paramGroup of optimizer.paramGroups) paramGroup.lr = lr;
    lrs.push(lr);
    if (iterNum % c.evalInterval === 0) evals.push({ iter: iterNum, ...(await estimateLoss()) });
    // Forward and backward, with gradient accumulation over micro-steps.
    for (let microStep = 0; microStep < c.gradientAccumulationSteps; microStep++) {
      const loss = autocast(ctx, () => {
        const [, l] = model.call(X, Y);
        return l!.div(c.gradientAccumulationSteps); // scale the loss to account for accumulation
      });
      microLosses.push((await loss.item()) * c.gradientAccumulationSteps);
      [X, Y] = getBatch('train'); // the next batch, while the model works on this one
      scaler.scale(loss).backward();
    }
    // Clip the gradients (unscaled first, when a scaler is at work).
    if (c.gradClip !== 0.0) {
      scaler.unscale_(optimizer);
      nn.utils.clipGradNorm_(model.parameters(), c.gradClip);
    }
    // Step the optimizer and the scaler, then free the gradients.
    await scaler.step(optimizer);
    scaler.update();
    optimizer.zeroGrad({ setToNone: true });
    iterNum += 1;
    await yieldToEventLoop();
    if (iterNum > c.maxIters) break;
  }
  return { microLosses, evals, lrs };
}
