// Training goldens: four real training programs, 100 steps each, as a user's loop writes them — an
// MLP with SGD (momentum, weight decay, a StepLR), an MLP with AdamW, a small CNN (conv, ReLU,
// max-pool, linear) and a small GPT under bfloat16 autocast with a GradScaler that meets Infs.
// Eagerly each must learn, and the scaler must skip exactly the poisoned steps with PyTorch's scale
// arithmetic (GS-7, GS-9, GS-10). Compiled, every step's loss, the scaler's scale after every step
// and the final parameters must be eager's bits on the same backend.
import { F, nn } from '@core/nn';
import { AdamW, SGD, StepLR } from '@core/optim';
import { arange, autocast, autocastPolicy, bfloat16, compile, full, GradScaler, int32, manualSeed, randint, randn, type DTypeName, type Device, type Tensor } from '@core/tensor';
import { fmt } from '../check.js';
import { fail, type Case, type Env } from '../types.js';

/** Steps of every golden run. */
export const GOLDEN_STEPS = 100;
/**
 * The hang guard of a golden case: its 100 steps (200 compiled, eager's included) take 30–60 s on
 * SwiftShader on a busy 2-core machine, past the 60 s a case gets by default.
 */
const GOLDEN_TIMEOUT_MS = 600_000;

/** One training program, built from its own seed on `device`: the step, what it trains, and its batches. */
interface Program {
  /** The parameters whose final bits are compared. */
  readonly params: readonly Tensor[];
  /** One training step on a batch; returns the loss. */
  readonly step: (...batch: Tensor[]) => Tensor | Promise<Tensor>;
  /** The batch of step `i`. */
  readonly batch: (i: number) => Tensor[];
  /** Runs after each step, outside the step (a scheduler step); returns what the run records (the scaler's scale). */
  readonly after?: () => Promise<number | undefined> | number | undefined;
}

/** What one run of a program produced. */
interface Run {
  readonly losses: number[];
  readonly recorded: number[];
  readonly params: number[][];
  readonly replays?: number;
  readonly explain?: string;
}

/** A small GPT: token and position embeddings, one pre-norm block (causal attention, a GELU MLP), a head tied to the embedding. */
class TinyGpt extends nn.Module<[tokens: Tensor, targets: Tensor], Tensor> {
  readonly tokens: nn.Embedding;
  readonly positions: nn.Embedding;
  readonly norm1: nn.LayerNorm;
  readonly qkv: nn.Linear;
  readonly proj: nn.Linear;
  readonly norm2: nn.LayerNorm;
  readonly up: nn.Linear;
  readonly down: nn.Linear;
  readonly norm: nn.LayerNorm;
  readonly head: nn.Linear;

  constructor(readonly vocab: number, context: number, readonly width: number, readonly heads: number, device: Device) {
    super();
    const on = { device };
    this.tokens = new nn.Embedding(vocab, width, on);
    this.positions = new nn.Embedding(context, width, on);
    this.norm1 = new nn.LayerNorm(width, on);
    this.qkv = new nn.Linear(width, 3 * width, on);
    this.proj = new nn.Linear(width, width, on);
    this.norm2 = new nn.LayerNorm(width, on);
    this.up = new nn.Linear(width, 4 * width, on);
    this.down = new nn.Linear(4 * width, width, on);
    this.norm = new nn.LayerNorm(width, on);
    this.head = new nn.Linear(width, vocab, { bias: false, device });
    this.head.weight = this.tokens.weight;
  }

  forward(tokens: Tensor, targets: Tensor): Tensor {
    const [b, t] = tokens.shape as [number, number];
    const heads = (u: Tensor) => u.view([b, t, this.heads, this.width / this.heads]).transpose(1, 2);
    let x = this.tokens.call(tokens).add(this.positions.call(arange(0, t, { dtype: int32, device: tokens.device })));
    const [q, k, v] = this.qkv.call(this.norm1.call(x)).split(this.width, 2).map(heads) as [Tensor, Tensor, Tensor];
    const y = F.scaledDotProductAttention(q, k, v, { isCausal: true }).transpose(1, 2).contiguous().view([b, t, this.width]);
    x = x.add(this.proj.call(y));
    x = x.add(this.down.call(F.gelu(this.up.call(this.norm2.call(x)))));
    const logits = this.head.call(this.norm.call(x));
    return F.crossEntropy(logits.view([-1, this.vocab]), targets.view([-1]));
  }
}

/** `count` batches of classification data on `device` (inputs of `shape`, int32 labels below `classes`), cycled as epochs. */
function cycled(device: Device, count: number, shape: readonly number[], classes: number): (i: number) => Tensor[] {
  const data = Array.from({ length: count }, () => [randn(shape, { device }), randint(0, classes, [shape[0]!], { dtype: int32, device })]);
  return (i) => data[i % count]!;
}

/** A classifier trained with cross entropy by `opt`. */
function classifier(model: nn.Module<[Tensor], Tensor>, opt: { zeroGrad(): void; step(): unknown }) {
  return (x: Tensor, y: Tensor): Tensor => {
    opt.zeroGrad();
    const loss = F.crossEntropy(model.call(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
}

/** Steps whose loss the GPT program multiplies by Inf: their gradients overflow and the scaler must skip them. */
const POISONED = new Set([17, 18, 50, 77]);
/** The GPT program's GradScaler options: growth is seen several times within the run. */
const SCALER = { initScale: 2 ** 10, growthInterval: 10 } as const;

/** GS-9/GS-10 on the host: the scale after each step, backing off ×0.5 on a poisoned step, growing ×2 after `growthInterval` clean ones. */
function expectedScales(): number[] {
  const scales: number[] = [];
  let scale: number = SCALER.initScale;
  let tracker = 0;
  for (let i = 0; i < GOLDEN_STEPS; i++) {
    if (POISONED.has(i)) { scale *= 0.5; tracker = 0; }
    else if (++tracker === SCALER.growthInterval) { scale *= 2; tracker = 0; }
    scales.push(scale);
  }
  return scales;
}

interface Golden {
  readonly id: string;
  /** The dtypes it computes in, beyond int32 labels and float32 parameters. */
  readonly needs: readonly DTypeName[];
  readonly build: (device: Device, deviceType: string) => Program;
}

const GOLDENS: readonly Golden[] = [
  {
    id: 'mlp-sgd',
    needs: [],
    build: (device) => {
      manualSeed(11);
      const model = new nn.Sequential(new nn.Linear(8, 32, { device }), new nn.ReLU(), new nn.Linear(32, 4, { device }));
      const opt = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 1e-4 });
      const sched = new StepLR(opt, { stepSize: 25, gamma: 0.5 });
      return { params: model.parameters(), step: classifier(model, opt), batch: cycled(device, 4, [16, 8], 4), after: () => { sched.step(); return undefined; } };
    },
  },
  {
    id: 'mlp-adamw',
    needs: [],
    build: (device) => {
      manualSeed(12);
      const model = new nn.Sequential(new nn.Linear(8, 32, { device }), new nn.GELU(), new nn.Linear(32, 4, { device }));
      const opt = new AdamW(model.parameters(), { lr: 1e-2, weightDecay: 0.05 });
      return { params: model.parameters(), step: classifier(model, opt), batch: cycled(device, 4, [16, 8], 4) };
    },
  },
  {
    id: 'cnn-sgd',
    needs: [],
    build: (device) => {
      manualSeed(13);
      const model = new nn.Sequential(
        new nn.Conv2d(1, 4, 3, { padding: 1, device }), new nn.ReLU(), new nn.MaxPool2d(2), new nn.Flatten(), new nn.Linear(64, 3, { device }),
      );
      const opt = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
      return { params: model.parameters(), step: classifier(model, opt), batch: cycled(device, 4, [8, 1, 8, 8], 3) };
    },
  },
  {
    id: 'gpt-bf16-gradscaler',
    needs: ['bfloat16'],
    build: (device, deviceType) => {
      manualSeed(14);
      const vocab = 16, context = 8;
      const model = new TinyGpt(vocab, context, 16, 2, device);
      const opt = new AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.1 });
      const scaler = new GradScaler(deviceType, SCALER);
      // Sequences counting up from a random start: the next token is learnable from the current one.
      const data = Array.from({ length: 4 }, () => {
        const tokens = randint(0, vocab, [4, 1], { dtype: int32, device }).add(arange(0, context + 1, { dtype: int32, device })).remainder(vocab);
        return [tokens.narrow(1, 0, context).contiguous(), tokens.narrow(1, 1, context).contiguous()];
      });
      const poison = [full([], 1, { device }), full([], Infinity, { device })];
      const step = async (x: Tensor, y: Tensor, factor: Tensor): Promise<Tensor> => {
        opt.zeroGrad();
        const loss = autocast({ deviceType, dtype: bfloat16 }, () => model.call(x, y)).mul(factor);
        scaler.scale(loss).backward();
        await scaler.step(opt);
        scaler.update();
        return loss;
      };
      return {
        params: model.parameters(),
        step,
        batch: (i) => [...data[i % data.length]!, poison[POISONED.has(i) ? 1 : 0]!],
        after: () => scaler.getScaleAsync(),
      };
    },
  },
];

/** The float32 bits of `t`, for an exact comparison (NaNs of any payload are one value). */
async function bitsOf(t: Tensor): Promise<number[]> {
  return Array.from(new Uint32Array(new Float32Array(await t.detach().float().data()).buffer));
}

/** Build `golden` and train it GOLDEN_STEPS steps, eagerly or compiled. */
async function train(golden: Golden, env: Env, compiled: boolean): Promise<Run> {
  const program = golden.build(env.device, env.name);
  const compiledStep = compiled ? compile(program.step) : undefined;
  const step = compiledStep ?? program.step;
  const losses: number[] = [];
  const recorded: number[] = [];
  for (let i = 0; i < GOLDEN_STEPS; i++) {
    const loss = await step(...program.batch(i));
    losses.push(await loss.item());
    const r = await program.after?.();
    if (r !== undefined) recorded.push(r);
  }
  const params = await Promise.all(program.params.map(bitsOf));
  if (!compiledStep) return { losses, recorded, params };
  const info = compiledStep.explain();
  return { losses, recorded, params, replays: info.replays, explain: info.text };
}

/** The run learned: its losses (but those of `poisoned` steps) are finite and the last ones well below the first. */
function checkLearned(label: string, losses: readonly number[], poisoned: ReadonlySet<number>): void {
  const clean = losses.filter((_, i) => !poisoned.has(i));
  const bad = clean.findIndex((l) => !Number.isFinite(l));
  if (bad >= 0) fail(`${label}: a clean step's loss is ${fmt(clean[bad]!)} (losses ${clean.slice(0, bad + 1).map(fmt).join(', ')})`);
  const first = clean[0]!;
  const last = clean.slice(-10).reduce((a, b) => a + b, 0) / 10;
  if (!(last < 0.7 * first)) fail(`${label}: did not learn in ${GOLDEN_STEPS} steps: first loss ${fmt(first)}, mean of the last 10 ${fmt(last)}`);
}

export function goldenCases(env: Env): Case[] {
  return GOLDENS.map((golden): Case => {
    const label = `training golden ${golden.id}`;
    const missing = (['float32', 'int32', ...golden.needs] as DTypeName[]).find((d) => !env.compute.has(d));
    const gpt = golden.id.startsWith('gpt');
    const policy = autocastPolicy(env.name);
    const noAutocast = gpt && !policy?.allowedDtypes.some((d) => d.name === 'bfloat16')
      ? `no autocast policy for ${env.name} that allows bfloat16 (the GPT golden trains under bfloat16 autocast)`
      : undefined;
    return {
      id: `training/golden-${golden.id}/${gpt ? 'bfloat16' : 'float32'}`,
      category: 'training',
      op: `golden ${golden.id}`,
      dtype: gpt ? 'bfloat16' : 'float32',
      timeoutMs: GOLDEN_TIMEOUT_MS,
      ...(missing ? { skip: `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` } : noAutocast ? { skip: noAutocast } : {}),
      run: async () => {
        const eager = await train(golden, env, false);
        checkLearned(label, eager.losses, gpt ? POISONED : new Set());
        if (gpt) {
          const want = expectedScales();
          const at = want.findIndex((s, i) => s !== eager.recorded[i]);
          if (at >= 0) fail(`${label}: the scale after step ${at} is ${eager.recorded[at]}, GS-9/GS-10 give ${want[at]} (steps ${[...POISONED].join(', ')} are poisoned with Inf; growth every ${SCALER.growthInterval} clean steps)`);
          const skipped = eager.losses.map((l, i) => (Number.isFinite(l) ? -1 : i)).filter((i) => i >= 0);
          if (skipped.join() !== [...POISONED].join()) fail(`${label}: steps ${skipped.join(', ')} had non-finite losses; only ${[...POISONED].join(', ')} are poisoned`);
        }
      },
      compiled: async () => {
        const eager = await train(golden, env, false);
        const comp = await train(golden, env, true);
        checkLearned(`${label} (compiled)`, comp.losses, gpt ? POISONED : new Set());
        if (comp.replays! < GOLDEN_STEPS - 4) fail(`${label}: ${comp.replays} of ${GOLDEN_STEPS} steps replayed, expected at least ${GOLDEN_STEPS - 4}:\n${comp.explain}`);
        const at = comp.losses.findIndex((l, i) => !Object.is(l, eager.losses[i]));
        if (at >= 0) fail(`${label}: the compiled loss at step ${at} is ${fmt(comp.losses[at]!)}, eager's ${fmt(eager.losses[at]!)} (compared bit for bit on the same backend)`);
        const scaleAt = comp.recorded.findIndex((s, i) => s !== eager.recorded[i]);
        if (scaleAt >= 0 || comp.recorded.length !== eager.recorded.length) fail(`${label}: the compiled scale after step ${scaleAt} is ${comp.recorded[scaleAt]}, eager's ${eager.recorded[scaleAt]}`);
        const p = comp.params.findIndex((bits, i) => bits.join() !== eager.params[i]!.join());
        if (p >= 0) fail(`${label}: parameter ${p} after ${GOLDEN_STEPS} compiled steps differs from eager's in its bits`);
      },
    };
  });
}
