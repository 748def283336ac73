// compile(fn) on webgpu fuses runs of elementwise calls into one generated kernel each: replays
// give eager's bits (each op computed with the op table's WGSL expression, each result rounded to
// its dtype as eager stores it) for chains with broadcasts, casts, scalars, compares and where, and
// for training steps; an intermediate someone reads after the run keeps being stored; dispatches
// per replay fall. Backend.prepare's `deadAfter` lets outputs stay in registers, and only those.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { AdamW, SGD, StepLR } from '@core/optim';
import { autocast, bfloat16, compile, float32, int32, manualSeed, randint, randn, tensor, type Tensor } from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend } from '../src/index.js';
import { float32Bits as bits, registeredBackend } from './helpers.js';
import { TinyGpt } from './tiny-gpt.js';

let backend: WebGPUBackend;
beforeAll(async () => {
  backend = await registeredBackend();
});

/** Dispatches queued by `f`. */
function dispatchesOf(f: () => unknown): number {
  const before = backend.stats().dispatches;
  f();
  return backend.stats().dispatches - before;
}

/**
 * Calls `fn` eagerly and compiled `calls` times on `inputs(i)`; expects the same bits each time and
 * returns the compiled function and the dispatches of its last call and of an eager call.
 */
async function expectEagerBits(fn: (...xs: Tensor[]) => Tensor, inputs: (i: number) => Tensor[], calls = 4) {
  const step = compile(fn);
  let compiled = 0;
  let eager = 0;
  for (let i = 0; i < calls; i++) {
    const xs = inputs(i);
    let want!: Tensor;
    let got!: Tensor;
    eager = dispatchesOf(() => (want = fn(...xs)));
    compiled = dispatchesOf(() => (got = step(...xs)));
    expect(await bits(got), `call ${i + 1}`).toEqual(await bits(want));
  }
  return { step, compiled, eager, replay: step.explain().programs[0]!.replay };
}

describe('compile on webgpu: fused elementwise chains give eager bits', () => {
  it('a chain with a broadcast row, scalars, a cast to bfloat16 and back, compare and where: one dispatch per run of one shape', async () => {
    manualSeed(11);
    const data = Array.from({ length: 4 }, () => [randn([33, 17]).to('webgpu'), randn([1, 17]).to('webgpu')]);
    const fn = (x: Tensor, b: Tensor) => {
      const h = x.mul(1.7).add(b).exp().sub(0.25);
      const g = h.to(bfloat16).to(float32).div(b.abs().add(1e-3));
      return g.where(g.gt(0.5), h.neg().tanh());
    };
    const { compiled, eager, replay } = await expectEagerBits(fn, (i) => data[i]!);
    // Three runs: the [33, 17] chain, the [1, 17] divisor's, the [33, 17] chain to the end.
    expect(replay).toMatch(/3 dispatches .*3 of them fused elementwise kernels in place of 13 calls/);
    expect(eager).toBe(13);
    expect(compiled).toBe(3); // the returned tensor is copied out without a dispatch
  });

  it('addcmul, int32 arithmetic and a column broadcast fuse too, with eager bits', async () => {
    manualSeed(12);
    const data = Array.from({ length: 4 }, () => [randn([9, 40]).to('webgpu'), randn([9, 1]).to('webgpu'), randint(-50, 50, [9, 40], { dtype: int32 }).to('webgpu')]);
    const fn = (x: Tensor, c: Tensor, k: Tensor) => {
      const m = k.mul(3).sub(k.abs()).to(float32);
      return x.addcmul(c, m, { value: 0.5 }).sigmoid().mul(c);
    };
    const { compiled, eager } = await expectEagerBits(fn, (i) => data[i]!);
    expect(eager).toBeGreaterThanOrEqual(8);
    expect(compiled).toBeLessThanOrEqual(2);
  });

  it('an intermediate that is returned, or reduced after the run, is still stored: the same bits for every output', async () => {
    manualSeed(13);
    const data = Array.from({ length: 4 }, () => [randn([8, 24]).to('webgpu')]);
    const step = compile((x: Tensor) => {
      const h = x.mul(3).add(1); // returned: must reach memory
      const s = x.sub(2).square(); // read by the sum after the run
      return [h.exp().mul(h), h, s.sum(1, true).add(s)] as const;
    });
    for (const [x] of data) {
      const h = x!.mul(3).add(1);
      const s = x!.sub(2).square();
      const want = [h.exp().mul(h), h, s.sum(1, true).add(s)];
      const got = step(x!);
      for (let j = 0; j < 3; j++) expect(await bits(got[j]!)).toEqual(await bits(want[j]!));
    }
    expect(step.explain().programs[0]!.replay).toMatch(/fused elementwise kernels/);
  });

  it('a member reading one value twice (x − x of isfinite, h − h of a register) keeps NaN and ±Inf as eager does', async () => {
    // The shader compiler may fold x − x to 0 when it sees one value twice; eager's kernel reads two bindings.
    const row = [NaN, 1, Infinity, -Infinity, 0, NaN, 100, -0];
    const x = tensor([row, row.map((v) => -v)]).to('webgpu');
    const finite = [0, 1, 0, 0, 1, 0, 1, 1];
    const cases: [string, (x: Tensor) => Tensor, number[]][] = [
      ['isfinite', (t) => t.isfinite(), [...finite, ...finite]],
      ['isfinite of a strided view', (t) => t.slice(-1, 1, undefined, 2).isfinite(), [1, 0, 0, 1, 1, 0, 0, 1]],
      ['h − h of a register', (t) => {
        const h = t.exp(); // exp(100) overflows to Inf
        return h.sub(h);
      }, [NaN, 0, NaN, 0, 0, NaN, NaN, 0, NaN, 0, 0, NaN, 0, NaN, 0, 0]],
    ];
    for (const [what, fn, want] of cases) {
      const { replay } = await expectEagerBits(fn, () => [x]);
      expect(replay, what).toMatch(/fused elementwise kernels/);
      expect(Array.from(await fn(x).data()), what).toEqual(want);
    }
  });

  it('a seeded fuzz of random elementwise chains (broadcasts, scalars, casts, compare/where): eager bits at every replay', async () => {
    let seed = 2024;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const unary = ['exp', 'neg', 'abs', 'tanh', 'sigmoid', 'relu', 'sin', 'square', 'floor'] as const;
    const binary = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const;
    for (let program = 0; program < 12; program++) {
      // Each program: a list of ops over earlier values; operands are [6, 10], [1, 10] or [6, 1].
      const ops: ((vals: Tensor[]) => Tensor)[] = [];
      const length = 3 + Math.floor(rand() * 6);
      for (let j = 0; j < length; j++) {
        const kind = rand();
        const a = Math.floor(rand() * 100);
        const b = Math.floor(rand() * 100);
        const s = Math.round(rand() * 40 - 20) / 8;
        const u = pick(unary);
        const o = pick(binary);
        if (kind < 0.3) ops.push((v) => v[a % v.length]![u]());
        else if (kind < 0.6) ops.push((v) => v[a % v.length]![o](v[b % v.length]!));
        else if (kind < 0.75) ops.push((v) => v[a % v.length]![o](s));
        else if (kind < 0.85) ops.push((v) => v[a % v.length]!.to(bfloat16).to(float32));
        else ops.push((v) => v[b % v.length]!.where(v[a % v.length]!.lt(s), v[a % v.length]!.mul(0.5)));
      }
      const fn = (x: Tensor, r: Tensor, c: Tensor) => {
        const vals = [x, r, c];
        for (const op of ops) vals.push(op(vals));
        return vals[vals.length - 1]!.add(vals[3]!);
      };
      manualSeed(100 + program);
      const data = Array.from({ length: 4 }, () => [randn([6, 10]).to('webgpu'), randn([1, 10]).to('webgpu'), randn([6, 1]).to('webgpu')]);
      const { compiled, eager } = await expectEagerBits(fn, (i) => data[i]!);
      expect(compiled, `program ${program}`).toBeLessThanOrEqual(eager);
      await new Promise((r) => setImmediate(r));
    }
  });
});

describe('compile on webgpu: what core tells prepare', () => {
  it('deadAfter names, at their last call, the intermediates nothing reads later, and never a returned one', async () => {
    const seen: (readonly (readonly unknown[])[] | undefined)[] = [];
    const prepare = backend.prepare!;
    backend.prepare = (calls, options) => {
      seen.push(options?.deadAfter);
      return prepare.call(backend, calls, options);
    };
    try {
      const step = compile((x: Tensor) => {
        const a = x.mul(2);
        const b = a.exp();
        return [b.add(a), b] as const;
      });
      manualSeed(5);
      const x = randn([4, 8]).to('webgpu');
      for (let i = 0; i < 3; i++) step(x);
      // mul, exp, add: a dies at the add; b is returned, the sum too.
      expect(seen.map((d) => d?.map((s) => s.length))).toEqual([[0, 0, 1]]);
      const [sum, b] = step(x);
      const a = x.mul(2);
      expect(await bits(sum)).toEqual(await bits(a.exp().add(a)));
      expect(await bits(b)).toEqual(await bits(a.exp()));
    } finally {
      backend.prepare = prepare;
    }
  });
});

/** A model's parameters, a step over it, what runs after each step (a scheduler) and the steps' inputs. */
interface Training {
  readonly params: Tensor[];
  readonly step: (...xs: Tensor[]) => Tensor;
  readonly after?: () => void;
  readonly data: readonly Tensor[][];
}

/**
 * Trains what `setup` makes (from its own seeds) eagerly and compiled; expects the same loss bits
 * per step and parameter bits. Returns the dispatches of the last step and the compiled replay.
 */
async function trainBoth(setup: () => Training) {
  const run = async (compiled: boolean) => {
    const { params, step: raw, after, data } = setup();
    const step = compile(raw);
    const fn = compiled ? step : raw;
    const losses: number[][] = [];
    let dispatches = 0;
    for (const xs of data) {
      let loss!: Tensor;
      dispatches = dispatchesOf(() => (loss = fn(...xs)));
      after?.();
      losses.push(await bits(loss));
    }
    return { losses, params: await Promise.all(params.map(bits)), dispatches, replay: step.explain().programs[0]?.replay };
  };
  const eager = await run(false);
  const comp = await run(true);
  expect(comp.losses).toEqual(eager.losses);
  expect(comp.params).toEqual(eager.params);
  return { eager, comp };
}

describe('compile on webgpu: training steps with fusion', () => {
  it('an MLP with SGD and a StepLR changing the fused learning-rate fill: the same loss and parameter bits for 8 steps, fewer dispatches', async () => {
    const { eager, comp } = await trainBoth(() => {
      manualSeed(1);
      const model = new nn.Sequential(new nn.Linear(32, 64), new nn.GELU(), new nn.Linear(64, 10)).to('webgpu');
      const opt = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 1e-3 });
      const sched = new StepLR(opt, { stepSize: 2, gamma: 0.5 });
      manualSeed(7);
      const data = Array.from({ length: 8 }, () => [randn([16, 32]).to('webgpu'), randint(0, 10, [16]).to('webgpu')]);
      const step = (x: Tensor, y: Tensor) => {
        opt.zeroGrad();
        const loss = F.crossEntropy(model.call(x), y);
        loss.backward();
        opt.step();
        return loss;
      };
      return { params: model.parameters(), step, after: () => sched.step(), data };
    });
    expect(comp.dispatches).toBeLessThan(eager.dispatches);
    expect(comp.replay).toMatch(/fused elementwise kernels in place of/);
  });

  it('a 2-block GPT-like step under bfloat16 autocast with AdamW: the same loss and parameter bits for 6 steps', async () => {
    const { comp } = await trainBoth(() => {
      manualSeed(3);
      const model = new TinyGpt({ vocab: 32, context: 8, width: 16, heads: 2, layers: 2 }).to('webgpu');
      const opt = new AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.1 });
      manualSeed(4);
      const tokens = () => randint(0, 32, [2, 8], { dtype: int32 }).to('webgpu');
      const data = Array.from({ length: 6 }, () => [tokens(), tokens()]);
      const step = (x: Tensor, y: Tensor) => {
        opt.zeroGrad();
        const loss = autocast({ deviceType: 'webgpu', dtype: bfloat16 }, () => model.call(x, y));
        loss.backward();
        opt.step();
        return loss;
      };
      return { params: model.parameters(), step, data };
    });
    expect(comp.replay).toMatch(/fused elementwise kernels in place of/);
  });
});

describe('Backend.prepare on webgpu: elementwise fusion and deadAfter', () => {
  const ref = (storage: ReturnType<WebGPUBackend['alloc']>, n = 4) => ({ storage, dtype: 'float32' as const, shape: [n], strides: [1], offset: 0 });
  const read = async (s: ReturnType<WebGPUBackend['alloc']>) => Array.from(new Float32Array(await backend.read(s)));

  it('an output named in deadAfter stays in registers (its storage keeps its old contents); one not named is stored', async () => {
    const x = backend.alloc(0, 'float32', 4);
    const t = backend.alloc(0, 'float32', 4);
    const y = backend.alloc(0, 'float32', 4);
    backend.write(x, Float32Array.of(1, 2, 3, 4), 0);
    const calls = [
      { run: () => backend.kernels.binary('add', ref(x), ref(x), ref(t)), varies: false },
      { run: () => backend.kernels.binary('mul', ref(t), ref(x), ref(y)), varies: false },
    ];
    for (const [deadAfter, tAfter] of [[[[], [t]], [-1, -1, -1, -1]], [undefined, [2, 4, 6, 8]]] as const) {
      backend.write(t, Float32Array.of(-1, -1, -1, -1), 0);
      backend.write(y, Float32Array.of(0, 0, 0, 0), 0);
      const program = backend.prepare!(calls, deadAfter === undefined ? undefined : { deadAfter: deadAfter as never });
      expect(program.description).toMatch(/^webgpu: 1 dispatches .*1 of them fused elementwise kernels in place of 2 calls/);
      expect(dispatchesOf(() => expect(program.run()).toBe(true))).toBe(1);
      expect(await read(y)).toEqual([2, 8, 18, 32]);
      expect(await read(t)).toEqual(tAfter);
      program.release();
    }
    for (const s of [x, t, y]) backend.free(s);
  });

  it('a varying member is rebound to its new input; a binding it shares with a member that stays is refused (run() is false)', async () => {
    const x = backend.alloc(0, 'float32', 4);
    const z = backend.alloc(0, 'float32', 4);
    const t = backend.alloc(0, 'float32', 4);
    const y = backend.alloc(0, 'float32', 4);
    backend.write(x, Float32Array.of(1, 2, 3, 4), 0);
    backend.write(z, Float32Array.of(10, 20, 30, 40), 0);
    let src = x;
    const make = (shared: boolean) => backend.prepare!([
      { run: () => backend.kernels.unary('neg', ref(src), ref(t)), varies: true },
      { run: () => backend.kernels.binary('add', ref(t), ref(shared ? x : t), ref(y)), varies: false },
    ], { deadAfter: [[], [t]] });
    const alone = make(false);
    expect(alone.description).toMatch(/1 of them fused elementwise kernels in place of 2 calls/);
    expect(alone.run()).toBe(true);
    expect(await read(y)).toEqual([-2, -4, -6, -8]);
    src = z;
    expect(alone.run()).toBe(true);
    expect(await read(y)).toEqual([-20, -40, -60, -80]);
    alone.release();
    src = x;
    const shared = make(true);
    expect(shared.run()).toBe(true);
    expect(await read(y)).toEqual([0, 0, 0, 0]);
    src = z;
    expect(shared.run()).toBe(false); // the add still reads x through the binding the neg would move
    shared.release();
    for (const s of [x, z, t, y]) backend.free(s);
  });

  it('a call reading an intermediate at another view ends the run: no fusion across it, the right values', async () => {
    const x = backend.alloc(0, 'float32', 4);
    const t = backend.alloc(0, 'float32', 4);
    const y = backend.alloc(0, 'float32', 4);
    backend.write(x, Float32Array.of(1, 2, 3, 4), 0);
    const reversed = { ...ref(t), strides: [-1], offset: 3 };
    const program = backend.prepare!([
      { run: () => backend.kernels.unary('neg', ref(x), ref(t)), varies: false },
      { run: () => backend.kernels.binary('add', reversed, ref(x), ref(y)), varies: false },
    ], { deadAfter: [[], [t]] });
    expect(program.description).not.toMatch(/fused/);
    expect(program.run()).toBe(true);
    expect(await read(y)).toEqual([-3, -1, 1, 3]);
    program.release();
    for (const s of [x, t, y]) backend.free(s);
  });
});
