// nanoGPT's model.py and train.py, ported (nanogpt.ts, nanogpt-train.ts), against PyTorch 1.13
// running the same programs from the same initial weights on the same batches
// (reference/nanogpt.py wrote the fixtures). Dropout is 0 (nanoGPT's default), so the two runs
// compute the same thing whatever their random streams.
import '@core/backend-cpu';
import { bfloat16, float32, int32, manualSeed, tensor, type AutocastOptions, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { loadReferenceRecord, loadReferenceStateDict, shapes } from './load-reference.js';
import { GPT, gptConfig, type GPTConfig } from './nanogpt.js';
import { train, type DrawIndices, type TrainConfig, type TrainRecord } from './nanogpt-train.js';
import { expectCurveWithin, expectDriftWithin } from './parity.js';

/** What reference/nanogpt.py recorded. */
interface Run {
  readonly losses: number[];
  readonly evals: Array<{ iter: number; train: number; val: number }>;
}
interface NanoGptRecord {
  readonly torch: string;
  readonly config: { block_size: number; vocab_size: number; n_layer: number; n_head: number; n_embd: number; dropout: number; bias: boolean };
  readonly train: Record<string, number>;
  readonly vocab: string;
  readonly tokens: number[];
  readonly draws: number[][];
  readonly lrs: number[];
  readonly fp32: Run;
  readonly bf16: Run;
  readonly greedy: number[];
  readonly num_params: number;
  readonly groups: Array<{ tensors: number; numel: number; weight_decay: number }>;
  readonly no_bias_state: Record<string, number[]>;
}

const record = loadReferenceRecord<NanoGptRecord>('nanogpt.json');
const initState = loadReferenceStateDict('nanogpt.safetensors');
const { block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias } = record.config;
const config = (overrides: Partial<GPTConfig> = {}): GPTConfig =>
  gptConfig({ blockSize: block_size, vocabSize: vocab_size, nLayer: n_layer, nHead: n_head, nEmbd: n_embd, dropout, bias, ...overrides });
const t = record.train;
const trainConfig: TrainConfig = {
  batchSize: t.batch_size!, gradientAccumulationSteps: t.gradient_accumulation_steps!, maxIters: t.max_iters!,
  evalInterval: t.eval_interval!, evalIters: t.eval_iters!, learningRate: t.learning_rate!, weightDecay: t.weight_decay!,
  beta1: t.beta1!, beta2: t.beta2!, gradClip: t.grad_clip!, decayLr: true, warmupIters: t.warmup_iters!,
  lrDecayIters: t.lr_decay_iters!, minLr: t.min_lr!,
};
const tokens = tensor(Int32Array.from(record.tokens), { dtype: int32 });
const n = Math.floor(0.9 * record.tokens.length);
const data = { train: tokens.slice(0, 0, n), val: tokens.slice(0, n) };
const FP32: AutocastOptions = { deviceType: 'cpu', enabled: false };
const BF16: AutocastOptions = { deviceType: 'cpu', dtype: bfloat16 };

/** get_batch's start positions as PyTorch drew them, in order (each checked against the range asked for). */
function replayDraws(): DrawIndices {
  let next = 0;
  return (high, batchSize) => {
    const ix = record.draws[next++];
    if (ix === undefined || ix.length !== batchSize || ix.some((i) => i < 0 || i >= high)) {
      throw new Error(`draw ${next - 1}: PyTorch's ${JSON.stringify(ix)} does not fit ${batchSize} indices in [0, ${high})`);
    }
    return tensor(Int32Array.from(ix), { dtype: int32 });
  };
}

/** A GPT holding PyTorch's initial weights (the flash path has no attn.bias buffers to take). */
function fromInitialWeights(overrides: Partial<GPTConfig> = {}): GPT {
  const model = new GPT(config(overrides));
  const { unexpectedKeys, missingKeys } = model.loadStateDict(initState, { strict: !model.config.flash });
  expect(missingKeys).toEqual([]);
  expect(unexpectedKeys).toEqual(model.config.flash ? Object.keys(initState).filter((k) => k.endsWith('.attn.bias')) : []);
  return model;
}

async function trainFromInitialWeights(ctx: AutocastOptions, overrides: Partial<GPTConfig> = {}): Promise<{ model: GPT; run: TrainRecord }> {
  const model = fromInitialWeights(overrides);
  const run = await train(model, data, trainConfig, ctx, replayDraws());
  expect(run.microLosses).toHaveLength(record.fp32.losses.length);
  return { model, run };
}

/** How far the sample standard deviation of `x` is from `expected`, relatively. */
async function stdOff(x: Tensor, expected: number): Promise<number> {
  return Math.abs((await x.std().item()) / expected - 1);
}

describe('nanoGPT port: model.py structure', () => {
  it("has PyTorch's state-dict keys and shapes, with and without biases, and loads PyTorch's checkpoint", () => {
    expect(shapes(new GPT(config({ flash: false })).stateDict())).toEqual(shapes(initState));
    expect(shapes(new GPT(config({ flash: false, bias: false })).stateDict())).toEqual(record.no_bias_state);
    const flash = shapes(new GPT(config()).stateDict());
    expect(flash).toEqual(Object.fromEntries(Object.entries(shapes(initState)).filter(([k]) => !k.endsWith('.attn.bias'))));
    expect(fromInitialWeights().lm_head.weight.dataSync()).toEqual(initState['lm_head.weight']!.dataSync());
  });

  it('initialises as _init_weights says: N(0, 0.02), residual projections N(0, 0.02/√(2·nLayer)), zero biases, tied head', async () => {
    manualSeed(7);
    const model = new GPT(config());
    const block = model.transformer.h.at(0);
    // ≥512 samples each: the sample std is off by ~1/√(2n) ≤ 3.1% (10% is over 3σ); 0.02 and 0.01 are 2× apart.
    const residualStd = 0.02 / Math.sqrt(2 * n_layer);
    for (const [weight, expected] of [
      [block.attn.c_attn.weight, 0.02], [block.mlp.c_fc.weight, 0.02], [model.transformer.wpe.weight, 0.02], [model.lm_head.weight, 0.02],
      [block.attn.c_proj.weight, residualStd], [block.mlp.c_proj.weight, residualStd],
    ] as const) {
      expect(await stdOff(weight, expected)).toBeLessThan(0.1);
    }
    expect(await block.attn.c_attn.bias!.abs().sum().item()).toBe(0);
    expect(await block.ln_1.weight.sub(1).abs().sum().item()).toBe(0);
    expect(model.lm_head.weight).toBe(model.transformer.wte.weight);
    expect(model.parameters().filter((p) => p === model.lm_head.weight)).toHaveLength(1);
    expect(model.getNumParams()).toBe(record.num_params);
    expect(model.getNumParams(false)).toBe(record.num_params + block_size * n_embd);
  });

  it("configureOptimizers makes PyTorch's decay and no-decay groups", () => {
    const optimizer = new GPT(config()).configureOptimizers(0.1, 1e-3, [0.9, 0.99]);
    expect(optimizer.paramGroups.map((g) => ({ tensors: g.params.length, numel: g.params.reduce((s, p) => s + p.numel(), 0), weight_decay: g.weightDecay })))
      .toEqual(record.groups);
    expect(optimizer.paramGroups.map((g) => [g.lr, g.betas])).toEqual([[1e-3, [0.9, 0.99]], [1e-3, [0.9, 0.99]]]);
  });

  it('refuses a sequence longer than the block size; cropBlockSize shrinks wpe and the mask buffers', async () => {
    const model = fromInitialWeights({ flash: false });
    const long = tensor(Int32Array.from({ length: block_size + 1 }, (_, i) => i % vocab_size), { dtype: int32 }).view([1, -1]);
    expect(() => model.call(long)).toThrow(new RangeError(`Cannot forward sequence of length ${block_size + 1}, block size is only ${block_size}`));
    const [full] = model.call(long.slice(1, 0, 8));
    model.cropBlockSize(8);
    expect(model.transformer.wpe.weight.shape).toEqual([8, n_embd]);
    expect(model.transformer.wpe.weight.dataSync()).toEqual(initState['transformer.wpe.weight']!.slice(0, 0, 8).contiguous().dataSync());
    expect(model.transformer.h.at(1).attn.bias!.shape).toEqual([1, 1, 8, 8]);
    expect(() => model.call(long.slice(1, 0, 9))).toThrow(RangeError);
    const [cropped] = model.call(long.slice(1, 0, 8));
    expect(cropped.dataSync()).toEqual(full.dataSync()); // the first 8 positions do not change
    expect(() => model.cropBlockSize(9)).toThrow(RangeError);
  });
});

describe(`nanoGPT port: train.py against PyTorch ${record.torch} from the same weights and batches`, () => {
  // Absolute tolerance on losses of ~3.6-4.2 nats: float32 rounding differences (summation order,
  // the attention formulation) stay near 1e-6 over 30 AdamW steps; 1e-4 catches any real difference.
  const FP32_TOLERANCE = 1e-4;

  it('float32, attention through F.scaledDotProductAttention: every micro-step loss and estimate_loss within 1e-4; greedy generate matches', async () => {
    const { model, run } = await trainFromInitialWeights(FP32);
    expectCurveWithin(run.lrs, record.lrs, 1e-15, 'learning rate'); // Math.cos and libm's may differ in the last bit
    expectCurveWithin(run.microLosses, record.fp32.losses, FP32_TOLERANCE, 'micro-step loss');
    expectCurveWithin(run.evals.map((e) => e.train), record.fp32.evals.map((e) => e.train), FP32_TOLERANCE, 'estimate_loss train');
    expectCurveWithin(run.evals.map((e) => e.val), record.fp32.evals.map((e) => e.val), FP32_TOLERANCE, 'estimate_loss val');
    model.eval();
    // topK 1 makes sampling deterministic; 24 new tokens run past the block size (the context is cropped).
    const prompt = tensor([[record.vocab.indexOf('\n')]], { dtype: int32 });
    const out = model.generate(prompt, 24, 1.0, 1);
    expect(out.dtype).toBe(int32);
    expect([...out.view([-1]).dataSync()]).toEqual(record.greedy);
  });

  it("float32, nanoGPT's manual attention (tril mask, maskedFill, softmax): every micro-step loss within 1e-4", async () => {
    const { run } = await trainFromInitialWeights(FP32, { flash: false });
    expectCurveWithin(run.microLosses, record.fp32.losses, FP32_TOLERANCE, 'micro-step loss');
  });

  it("bfloat16 autocast: every micro-step loss within 2× PyTorch's own bf16 drift from float32 + its largest drift; our drift as large as PyTorch's", async () => {
    const { model, run } = await trainFromInitialWeights(BF16);
    expect(model.lm_head.weight.dtype).toBe(float32); // autocast casts op inputs, never the parameters
    expectDriftWithin(run.microLosses, { low: record.bf16.losses, fp32: record.fp32.losses }, 2);
  });
});
