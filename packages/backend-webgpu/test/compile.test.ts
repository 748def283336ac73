// compile(fn) on webgpu: replayed training steps (an MLP with SGD, Adam and AdamW under a scheduler,
// with dropout, float16 autocast with GradScaler skipping the steps with Infs, a 2-block GPT-like
// model) give eager's loss and parameter bits step for step; guards retrace; tensors kept from a
// capture go stale. The replay runs prepared programs (Backend.prepare): nothing queued at prepare,
// one submit per replay, varying scalars rewritten, a freed storage or a changed call refused, and
// compile falling back to making the calls itself, with eager's bits, when a program refuses.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { Adam, AdamW, SGD, StepLR } from '@core/optim';
import {
  type AdamSpec, autocast, compile, CompileError, float16, GradScaler, int32, manualSeed, randint, randn, registerBackend, zeros, type Tensor,
} from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebGPUError, type WebGPUBackend } from '../src/index.js';
import type { WebGPUPreparedProgram } from '../src/prepared.js';
import { startBackend } from './helpers.js';
import { TinyGpt } from './tiny-gpt.js';

let backend: WebGPUBackend;
beforeAll(async () => {
  backend = await startBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
});

const bits = async (t: Tensor) => Array.from(new Uint32Array(new Float32Array(await t.float().data()).buffer));

/** A 32→64→10 MLP on webgpu, weights from seed 1. */
function mlp(): nn.Sequential {
  manualSeed(1);
  return new nn.Sequential(new nn.Linear(32, 64), new nn.ReLU(), new nn.Linear(64, 10)).to('webgpu');
}

/** `n` batches of 16 inputs and class labels, drawn on the cpu with seed 7 and moved to webgpu. */
function batches(n: number, batch = 16): [Tensor, Tensor][] {
  manualSeed(7);
  return Array.from({ length: n }, () => [randn([batch, 32]).to('webgpu'), randint(0, 10, [batch]).to('webgpu')] as [Tensor, Tensor]);
}

type StepFn = (x: Tensor, y: Tensor) => Tensor | Promise<Tensor>;

/**
 * Trains a fresh model over `data`, eagerly or compiled; `after` runs after each step (a scheduler).
 * Returns the loss bits per step, the final parameter bits and the compiled function.
 */
async function train(
  make: (model: nn.Sequential) => { step: StepFn; after?: () => void },
  compiled: boolean,
  data: readonly [Tensor, Tensor][],
) {
  const model = mlp();
  const { step: raw, after } = make(model);
  const fn = compiled ? compile(raw) : undefined;
  const losses: number[][] = [];
  for (const [x, y] of data) {
    losses.push(await bits(await (fn ?? raw)(x, y)));
    after?.();
  }
  return { losses, params: await Promise.all(model.parameters().map(bits)), fn };
}

/** Trains eagerly and compiled over `data`, expecting the same loss bits per step and parameter bits; returns the compiled function's explain(). */
async function expectEagerBits(make: Parameters<typeof train>[0], data: readonly [Tensor, Tensor][]) {
  const eager = await train(make, false, data);
  const comp = await train(make, true, data);
  expect(comp.losses).toEqual(eager.losses);
  expect(comp.params).toEqual(eager.params);
  return comp.fn!.explain();
}

/** zeroGrad, cross entropy, backward, step. */
const plainStep = (model: nn.Sequential, opt: { zeroGrad(): void; step(): unknown }): StepFn => (x, y) => {
  opt.zeroGrad();
  const loss = F.crossEntropy(model.call(x), y);
  loss.backward();
  opt.step();
  return loss;
};

describe('compile on webgpu: replays give eager bits', () => {
  for (const [name, makeOpt] of [
    ['SGD with momentum', (p: Tensor[]) => new SGD(p, { lr: 0.1, momentum: 0.9 })],
    ['Adam', (p: Tensor[]) => new Adam(p, { lr: 0.01 })],
    ['AdamW', (p: Tensor[]) => new AdamW(p, { lr: 0.01, weightDecay: 0.1 })],
  ] as const) {
    it(`MLP + ${name} + StepLR changing lr between replays: the same loss and parameter bits for 20 steps`, async () => {
      const make = (model: nn.Sequential) => {
        const opt = makeOpt(model.parameters());
        const sched = new StepLR(opt, { stepSize: 5, gamma: 0.5 });
        return { step: plainStep(model, opt), after: () => sched.step() };
      };
      const data = batches(20);
      const info = await expectEagerBits(make, data);
      expect(info.replays).toBeGreaterThanOrEqual(17);
      expect(info.programs).toHaveLength(1);
    });
  }
});

describe('compile on webgpu: GradScaler, guards, stale tensors', () => {
  it('float16 autocast + GradScaler with injected Infs skips exactly the steps eager skips, with the same scales and bits', async () => {
    const poisoned = new Set([4, 5, 11]);
    const scales: number[][] = [[], []];
    let run = 0;
    const make = (model: nn.Sequential) => {
      const opt = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
      const scaler = new GradScaler('webgpu', { initScale: 2 ** 10, growthInterval: 3 });
      const record = scales[run++]!;
      const step: StepFn = async (x, y) => {
        opt.zeroGrad();
        const loss = autocast({ deviceType: 'webgpu', dtype: float16 }, () => F.crossEntropy(model.call(x).float(), y));
        scaler.scale(loss).backward();
        await scaler.step(opt);
        scaler.update();
        return loss;
      };
      return { step, after: () => record.push(scaler.getScale()) };
    };
    const data = batches(16).map(([x, y], i) => [poisoned.has(i) ? x.mul(Infinity) : x, y] as [Tensor, Tensor]);
    const info = await expectEagerBits(make, data);
    expect(scales[1]).toEqual(scales[0]);
    expect(new Set(scales[0]).size).toBeGreaterThan(2); // backoffs and growths happened
    expect(info.replays).toBeGreaterThan(10);
    expect(info.programs[0]!.segments.map((s) => s.name)).toEqual(['step', 'optimizer (runs when no Inf/NaN was found)', 'after the optimizer']);
    expect(info.programs[0]!.segments[0]!.byKernel['kernels.cast']).toBeGreaterThan(0); // autocast's float16 copies of the weights
    expect(info.programs[0]!.replay).toMatch(/^prepared \(webgpu: .*; webgpu: .*; webgpu: /); // one program per segment
  });

  it('an MLP with dropout: each replay draws the next masks of the generator stream, as eager does; the same bits for 10 steps', async () => {
    const make = (model: nn.Sequential) => {
      const net = new nn.Sequential(model, new nn.Dropout(0.3));
      return { step: plainStep(net, new SGD(model.parameters(), { lr: 0.1 })) };
    };
    const data = batches(10);
    const info = await expectEagerBits(make, data); // each run seeds the generator as it builds the model
    expect(info.programs[0]!.segments[0]!.byKernel['kernels.random']).toBe(1);
    expect(info.replays).toBe(8);
  });

  it('a smaller last batch fails the shape guard and traces once more, with eager bits throughout; explain() names the guard', async () => {
    const make = (model: nn.Sequential) => ({ step: plainStep(model, new SGD(model.parameters(), { lr: 0.1 })) });
    const data = [...batches(6), ...batches(6, 8)];
    const info = await expectEagerBits(make, data);
    expect(info.programs).toHaveLength(2);
    expect(info.replays).toBe(8); // calls 3-6 and 9-12
    expect(info.lastRetraceReason).toMatch(/arg 0: Tensor \[16, 32\].*→ arg 0: Tensor \[8, 32\]/);
  });

  it('a tensor made inside the function and kept outside is stale after the next replay: COMPILE_STALE_TENSOR on use', async () => {
    const model = mlp();
    const kept: Tensor[] = [];
    const step = compile((x: Tensor) => {
      const h = model.call(x);
      kept.push(h);
      return h.square().mean();
    });
    const data = batches(3);
    const losses = data.map(([x]) => step(x));
    expect(kept).toHaveLength(2);
    let error: unknown;
    try {
      kept[1]!.add(1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    expect((error as CompileError).code).toBe('COMPILE_STALE_TENSOR');
    expect(await Promise.all(losses.map(bits))).toEqual(await Promise.all(data.map(([x]) => bits(model.call(x).square().mean()))));
  });
});

describe('compile on webgpu: a GPT-like step', () => {
  it('2 blocks with causal attention, LayerNorm, GELU, tied head and AdamW: the same loss and parameter bits for 8 steps', async () => {
    const config = { vocab: 32, context: 8, width: 16, heads: 2, layers: 2 };
    const runOnce = async (compiled: boolean) => {
      manualSeed(3);
      const model = new TinyGpt(config).to('webgpu');
      const opt = new AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.1 });
      manualSeed(4);
      const data = Array.from({ length: 8 }, () => [randint(0, 32, [2, 8], { dtype: int32 }).to('webgpu'), randint(0, 32, [2, 8], { dtype: int32 }).to('webgpu')] as const);
      const raw = (tokens: Tensor, targets: Tensor) => {
        opt.zeroGrad();
        const loss = model.call(tokens, targets);
        loss.backward();
        opt.step();
        return loss;
      };
      const fn = compiled ? compile(raw) : raw;
      const losses: number[][] = [];
      for (const [tokens, targets] of data) losses.push(await bits(fn(tokens, targets)));
      return { losses, params: await Promise.all(model.parameters().map(bits)) };
    };
    const eager = await runOnce(false);
    const comp = await runOnce(true);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
  });
});

describe('Backend.prepare on webgpu: prepared programs', () => {
  const ref = (storage: ReturnType<WebGPUBackend['alloc']>, n = 4) => ({ storage, dtype: 'float32' as const, shape: [n], strides: [1], offset: 0 });
  const read = async (s: ReturnType<WebGPUBackend['alloc']>) => Array.from(new Float32Array(await backend.read(s)));

  it('queues nothing at prepare; each run queues the calls in order in one command buffer (a host write, a fill whose value varies, a multiply in place through a temporary)', async () => {
    const a = backend.alloc(0, 'float32', 4);
    const out = backend.alloc(0, 'float32', 4);
    backend.write(out, new Float32Array([-1, -1, -1, -1]), 0);
    let scale = 2;
    const program = backend.prepare!([
      { run: () => backend.write(a, new Float32Array([1, 2, 3, 4]), 0), varies: false },
      { run: () => backend.kernels.fill(ref(out), scale), varies: true },
      { run: () => backend.kernels.binary('mul', ref(a), ref(out), ref(out)), varies: false },
    ]);
    expect(program.description).toMatch(/^webgpu: 2 dispatches and 2 copies .*1 of 3 calls run again/);
    await backend.synchronize(0);
    const before = backend.stats();
    expect(await read(out)).toEqual([-1, -1, -1, -1]); // prepare ran nothing on the device
    expect(program.run()).toBe(true);
    expect(await read(out)).toEqual([2, 4, 6, 8]);
    scale = 10;
    expect(program.run()).toBe(true);
    scale = 0.5;
    expect(program.run()).toBe(true); // two runs in one batch: the second waits for the first's parameters
    expect(await read(out)).toEqual([0.5, 1, 1.5, 2]);
    const after = backend.stats();
    expect(after.dispatches - before.dispatches).toBe(6);
    // Each of the three reads submits; so does the third run, flushing the second's batch before rewriting its parameters.
    expect(after.submits - before.submits).toBe(4);
    program.release();
    for (const s of [a, out]) backend.free(s);
  });

  it('a varying call that queues another kernel than at prepare: run() returns false and queues nothing', async () => {
    const out = backend.alloc(0, 'float32', 4);
    backend.write(out, new Float32Array([7, 7, 7, 7]), 0);
    let op: 'neg' | 'fill' = 'neg';
    const program = backend.prepare!([
      { run: () => (op === 'neg' ? backend.kernels.unary('neg', ref(out), ref(out)) : backend.kernels.fill(ref(out), 1)), varies: true },
    ]);
    op = 'fill';
    expect(program.run()).toBe(false);
    expect(await read(out)).toEqual([7, 7, 7, 7]);
    program.release();
    backend.free(out);
  });

  it('a storage freed while the program lives: run() throws a WebGPUError saying so and queues nothing', async () => {
    const a = backend.alloc(0, 'float32', 4);
    const out = backend.alloc(0, 'float32', 4);
    backend.write(out, new Float32Array([3, 3, 3, 3]), 0);
    const program = backend.prepare!([{ run: () => backend.kernels.copy(ref(a), ref(out)), varies: false }]);
    backend.free(a);
    expect(() => program.run()).toThrow(WebGPUError);
    expect(() => program.run()).toThrow(/uses a float32 storage of 4 elements that has been freed/);
    expect(await read(out)).toEqual([3, 3, 3, 3]);
    program.release();
    backend.free(out);
  });

  it("a varying call with its last run's arguments runs no kernel and writes no parameters; adamw with a new spec only has its parameters rewritten; eager's bits", async () => {
    const n = 8;
    const store = (values: readonly number[]) => {
      const s = backend.alloc(0, 'float32', n);
      backend.write(s, new Float32Array(values), 0);
      return s;
    };
    const start = Array.from({ length: n }, (_, i) => (i - 3) / 4);
    const grad = Array.from({ length: n }, (_, i) => (i % 3) - 1 + i / 8);
    const zero = new Array<number>(n).fill(0);
    // The same update twice: through the program (a) and eagerly (b).
    const [a, b] = [0, 1].map(() => ({ p: ref(store(start), n), g: ref(store(grad), n), m: ref(store(zero), n), v: ref(store(zero), n), out: ref(backend.alloc(0, 'float32', n), n) }));
    const specAt = (step: number): AdamSpec => ({
      step, lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, decoupled: true, maximize: false,
      stepSize: 0.01 / (1 - 0.9 ** step), biasCorrection2Sqrt: Math.sqrt(1 - 0.999 ** step),
    });
    let spec = specAt(1);
    let scale = 2;
    const program = backend.prepare!([
      { run: () => backend.fused!.adamw!(a!.p, a!.g, a!.m, a!.v, null, spec), varies: true },
      { run: () => backend.kernels.fill(a!.out, scale), varies: true },
    ]) as WebGPUPreparedProgram;
    const queue = backend.device.queue;
    const writeBuffer = queue.writeBuffer;
    const run = async () => {
      await backend.synchronize(0); // the eager calls' batch goes first: the writes counted are the program's
      let writes = 0;
      queue.writeBuffer = function (this: GPUQueue, ...args: Parameters<GPUQueue['writeBuffer']>) {
        writes++;
        return writeBuffer.apply(this, args);
      } as GPUQueue['writeBuffer'];
      try {
        expect(program.run()).toBe(true);
      } finally {
        queue.writeBuffer = writeBuffer;
      }
      backend.fused!.adamw!(b!.p, b!.g, b!.m, b!.v, null, spec);
      backend.kernels.fill(b!.out, scale);
      return { reran: program.reran, refreshed: program.refreshed, writes };
    };
    expect(await run()).toEqual({ reran: 0, refreshed: 0, writes: 0 }); // prepare's arguments: the recorded commands as they are
    spec = specAt(2);
    expect(await run()).toEqual({ reran: 0, refreshed: 1, writes: 1 }); // adamw's parameters only
    scale = 3;
    expect(await run()).toEqual({ reran: 1, refreshed: 0, writes: 1 }); // the fill ran again for its new value
    expect(await run()).toEqual({ reran: 0, refreshed: 0, writes: 0 });
    spec = specAt(3);
    expect(await run()).toEqual({ reran: 0, refreshed: 1, writes: 1 });
    const words = async (r: { storage: ReturnType<WebGPUBackend['alloc']> }) => Array.from(new Uint32Array((await backend.read(r.storage) as Float32Array).buffer));
    for (const k of ['p', 'm', 'v', 'out'] as const) expect(await words(a![k])).toEqual(await words(b![k]));
    expect(await read(a!.out.storage)).toEqual(new Array<number>(n).fill(3));
    program.release();
    for (const set of [a!, b!]) for (const r of Object.values(set)) backend.free(r.storage);
  });
});

describe('compile on webgpu: the replay runs prepared programs', () => {
  it('explain() says a prepared program runs; each replay queues its dispatches in one submit', async () => {
    const model = mlp();
    const opt = new AdamW(model.parameters(), { lr: 0.01 });
    const raw = plainStep(model, opt) as (x: Tensor, y: Tensor) => Tensor;
    const data = batches(12);
    // Eager: dispatches per step, once the optimizer state exists.
    raw(...data[0]!);
    await backend.synchronize(0);
    let start = backend.stats();
    raw(...data[1]!);
    await backend.synchronize(0);
    const eagerDispatches = backend.stats().dispatches - start.dispatches;
    const step = compile(raw);
    for (let i = 2; i < 6; i++) step(...data[i]!); // call 1 eager, call 2 captured and compared, then replays
    await backend.synchronize(0);
    start = backend.stats();
    for (let i = 6; i < 12; i++) step(...data[i]!); // no await between replays
    await backend.synchronize(0);
    const end = backend.stats();
    const info = step.explain();
    expect(info.replays).toBe(8);
    const replay = info.programs[0]!.replay;
    expect(replay).toMatch(/^prepared \(webgpu: \d+ dispatches .*one command buffer per run, \d+ of \d+ calls run again per replay/);
    expect(replay).not.toMatch(/interpreter/);
    expect(info.text).toContain('replay: prepared (webgpu');
    const dispatches = Number(/(\d+) dispatches/.exec(replay)![1]);
    expect((end.dispatches - start.dispatches) / 6).toBe(dispatches);
    // Every fill of this step is a constant (the scalar operands, backward's seed): it ran at capture only.
    expect(info.programs[0]!.segments[0]!.byKernel['kernels.fill']).toBeUndefined();
    expect(dispatches).toBeLessThan(eagerDispatches);
    expect(end.submits - start.submits).toBe(6);
  });

  it('a fill the step writes over afterwards (a zeros accumulator updated in place) runs at every replay; constant scalars do not', async () => {
    const body = (x: Tensor) => {
      const acc = zeros([16, 32], { device: 'webgpu' });
      acc.add_(x);
      acc.add_(x.mul(3));
      return acc.sum();
    };
    const step = compile(body);
    const data = batches(5);
    const losses = data.map(([x]) => step(x));
    expect(await Promise.all(losses.map(bits))).toEqual(await Promise.all(data.map(([x]) => bits(body(x)))));
    const info = step.explain();
    expect(info.replays).toBe(3);
    expect(info.programs[0]!.segments[0]!.byKernel['kernels.fill']).toBe(1); // the zeros; not the 3
  });

  it('a program whose run() refuses, or a prepare that throws, falls back to making the calls one by one, with eager bits; explain() says why', async () => {
    const original = backend.prepare!;
    const make = (model: nn.Sequential) => ({ step: plainStep(model, new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 })) });
    const data = batches(8);
    try {
      // Refuses from its second run on: the replays after that make the calls themselves.
      backend.prepare = (calls) => {
        const program = original(calls);
        let runs = 0;
        return { description: program.description, run: () => ++runs < 2 && program.run(), release: () => program.release() };
      };
      expect((await expectEagerBits(make, data)).programs[0]!.replay).toBe('interpreter (a call whose arguments change queued other work than at prepare)');
      backend.prepare = () => {
        throw new Error('no programs today');
      };
      expect((await expectEagerBits(make, data)).programs[0]!.replay).toBe('interpreter (prepare failed: no programs today)');
    } finally {
      backend.prepare = original;
    }
  });

  it('on the cpu device explain() says the cpu backend\'s bound calls run', () => {
    const step = compile((x: Tensor) => x.mul(2).sum());
    manualSeed(0);
    for (let i = 0; i < 3; i++) step(randn([4]));
    expect(step.explain().programs[0]!.replay).toMatch(/^prepared \(cpu: \d+ calls, \d+ bound to wasm tasks(?: in \d+ runs? \(\d+ fused chains?\))?, \d+ made as calls\)$/);
  });
});
