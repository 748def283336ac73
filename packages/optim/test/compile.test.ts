// compile(fn) on the cpu backend: a replayed training step gives eager's loss bits step for step
// (SGD with momentum; AdamW with a scheduler changing lr between replays), GradScaler skips the same
// steps, guards retrace, host reads break the capture at the user's line, CORE_COMPILE=0 and
// onBreak: 'eager' fall back, and a replay allocates only its returned tensor.
import './helpers.js';
import { FAKE } from './fake-device.js';
import { describe, expect, it, vi } from 'vitest';
import {
  autocast, bfloat16, compile, CompileError, compileGuard, DeviceMismatchError, Generator, getBackend, GradScaler, manualSeed, rand, randn, tensor, type FusedKernels, type Tensor,
} from '@core/tensor';
import {
  Adadelta, Adagrad, Adamax, AdamW, FirstOrderOptimizer, LBFGS, NAdam, RAdam, RMSprop, SGD, StepLR, type ParamGroup, type ParamWithGrad,
} from '../src/index.js';

interface Mlp { params: Tensor[]; forward(x: Tensor): Tensor }

/** A 8→16→4 MLP with ReLU, weights from the seeded default generator. */
function mlp(seed: number): Mlp {
  manualSeed(seed);
  const w1 = randn([16, 8]).mul(0.3).detach().requiresGrad_();
  const b1 = randn([16]).mul(0.1).detach().requiresGrad_();
  const w2 = randn([4, 16]).mul(0.3).detach().requiresGrad_();
  const b2 = randn([4]).mul(0.1).detach().requiresGrad_();
  return { params: [w1, b1, w2, b2], forward: (x) => x.matmul(w1.t()).add(b1).relu().matmul(w2.t()).add(b2) };
}

/** Batches drawn outside the step (same seed → same batches for the eager and the compiled run). */
function batches(n: number, batch = 4): [Tensor, Tensor][] {
  manualSeed(7);
  return Array.from({ length: n }, () => [randn([batch, 8]), randn([batch, 4])] as [Tensor, Tensor]);
}

/** One training step of `m` with `opt`: zero the grads, MSE loss, backward, update. */
function trainStep(m: Mlp, opt: { zeroGrad(): void; step(): unknown }) {
  return (x: Tensor, y: Tensor) => {
    opt.zeroGrad();
    const loss = m.forward(x).sub(y).square().mean();
    loss.backward();
    opt.step();
    return loss;
  };
}

const bits = async (t: Tensor) => Array.from(new Uint32Array(new Float32Array(await t.data()).buffer));

async function run(makeStep: (m: Mlp) => (x: Tensor, y: Tensor) => Tensor | Promise<Tensor>, compiled: boolean, data: [Tensor, Tensor][], after?: () => void) {
  const m = mlp(1);
  const raw = makeStep(m);
  const compiledStep = compiled ? compile(raw) : undefined;
  const step = compiledStep ?? raw;
  const losses: number[][] = [];
  for (const [x, y] of data) {
    losses.push(await bits(await step(x, y)));
    after?.();
  }
  return { losses, params: await Promise.all(m.params.map(bits)), explain: () => compiledStep!.explain() };
}

describe('compile: replayed training steps match eager bit for bit', () => {
  /** 100 steps eager and compiled with `makeOpt`'s optimizer and a StepLR halving lr every 10 steps: same loss and parameter bits. */
  async function scheduledRun<O extends SGD | AdamW>(makeOpt: (params: Tensor[]) => O) {
    let sched: StepLR | undefined;
    let opt: O | undefined;
    const make = (m: Mlp) => {
      opt = makeOpt(m.params);
      sched = new StepLR(opt, { stepSize: 10, gamma: 0.5 });
      return trainStep(m, opt);
    };
    const data = batches(100);
    const eager = await run(make, false, data, () => sched!.step());
    const comp = await run(make, true, data, () => sched!.step());
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    const info = comp.explain();
    expect(info.replays).toBe(97); // call 1 creates the optimizer state, calls 2 and 3 are compared
    return { opt: opt!, info };
  }

  it('MLP + SGD with momentum + StepLR changing lr between replays: the same loss bits for 100 steps', async () => {
    await scheduledRun((params) => new SGD(params, { lr: 0.05, momentum: 0.9 }));
  });

  it('SGD zeroing grads in place (setToNone: false): the same loss bits, the program reads the grads it attached', async () => {
    await scheduledRun((params) => {
      const opt = new SGD(params, { lr: 0.05, momentum: 0.9 });
      return Object.assign(opt, { zeroGrad: () => SGD.prototype.zeroGrad.call(opt, { setToNone: false }) });
    });
  });

  it('MLP + AdamW + StepLR changing lr between replays: the same loss bits for 100 steps, and step counts', async () => {
    const { opt, info } = await scheduledRun((params) => new AdamW(params, { lr: 0.01 }));
    expect([...opt.state.values()].map((st) => st.step)).toEqual([100, 100, 100, 100]); // host effect: step counts
    expect(info.programs[0]!.dynamicScalars).toBe(4); // one AdamSpec per parameter
  });

  it('bf16 autocast + GradScaler with injected Infs skips exactly the steps eager skips', async () => {
    const poisoned = new Set([5, 6, 20, 41]);
    let scaler: GradScaler | undefined;
    const make = (m: Mlp) => {
      const opt = new SGD(m.params, { lr: 0.05, momentum: 0.9 });
      scaler = new GradScaler('cpu', { initScale: 2 ** 8, growthInterval: 3 });
      return async (x: Tensor, y: Tensor) => {
        opt.zeroGrad();
        const loss = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => m.forward(x).float().sub(y).square().mean());
        scaler!.scale(loss).backward();
        await scaler!.step(opt);
        scaler!.update();
        return loss;
      };
    };
    const data = batches(48).map(([x, y], i) => [poisoned.has(i) ? x.mul(Infinity) : x, y] as [Tensor, Tensor]);
    const scales: number[][] = [[], []];
    const eager = await run(make, false, data, () => scales[0]!.push(scaler!.getScale()));
    const comp = await run(make, true, data, () => scales[1]!.push(scaler!.getScale()));
    expect(scales[1]).toEqual(scales[0]); // the host mirror follows the same backoffs and growths
    expect(new Set(scales[0]).size).toBeGreaterThan(3);
    expect(await Promise.all([scaler!.getScaleAsync(), scaler!.getGrowthTrackerAsync()])).toEqual([scales[0]!.at(-1), scaler!.getGrowthTracker()]);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    const info = comp.explain();
    expect(info.replays).toBeGreaterThan(40);
    expect(info.programs[0]!.segments.map((s) => s.name)).toEqual(['step', 'optimizer (runs when no Inf/NaN was found)', 'after the optimizer']);
  });
});

describe('compile: every first-order optimizer replays bit for bit with eager', () => {
  type Stepper = { zeroGrad(): void; step(): unknown; state: Map<Tensor, { step: number; muProduct?: number }> };
  const cases: [string, (params: Tensor[]) => Stepper][] = [
    ['RMSprop', (p) => new RMSprop(p, { lr: 0.01 })],
    ['RMSprop centered, momentum, weight decay', (p) => new RMSprop(p, { lr: 0.01, momentum: 0.9, centered: true, weightDecay: 0.01 })],
    ['Adagrad with lrDecay', (p) => new Adagrad(p, { lr: 0.1, lrDecay: 0.01, initialAccumulatorValue: 0.1 })],
    ['Adadelta (default lr 1: the replayed scalar is -1)', (p) => new Adadelta(p, { weightDecay: 0.01 })],
    ['Adamax', (p) => new Adamax(p, { lr: 0.01 })],
    ['NAdam', (p) => new NAdam(p, { lr: 0.01, weightDecay: 0.01 })],
    ['RAdam (rectified from step 6 on)', (p) => new RAdam(p, { lr: 0.01 })],
  ];

  it.each(cases)('%s + StepLR halving lr every 5 steps: the same loss and parameter bits over 20 steps, and the same state', async (_, makeOpt) => {
    let opt: Stepper | undefined;
    let sched: StepLR | undefined;
    const make = (m: Mlp) => {
      opt = makeOpt(m.params);
      sched = new StepLR(opt as never, { stepSize: 5, gamma: 0.5 });
      return trainStep(m, opt);
    };
    const data = batches(20);
    const eager = await run(make, false, data, () => sched!.step());
    const eagerState = [...opt!.state.values()].map((s) => [s.step, s.muProduct]);
    const comp = await run(make, true, data, () => sched!.step());
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    expect([...opt!.state.values()].map((s) => [s.step, s.muProduct])).toEqual(eagerState); // host effects: step counts, NAdam's μ product
    const info = comp.explain();
    expect(info.replays).toBeGreaterThanOrEqual(12);
    expect(info.programs[0]!.dynamicScalars).toBeGreaterThan(0);
  });

  it.each([
    ['adadelta', (p: Tensor[]) => new Adadelta(p, { weightDecay: 0.01, maximize: true })],
    ['rmsprop', (p: Tensor[]) => new RMSprop(p, { lr: 0.01, momentum: 0.9, centered: true, weightDecay: 0.01 })],
  ] as const)('%s: a replay runs the fused kernel with a spec recomputed from the scheduled lr, bit for bit with eager over 20 steps', async (kernel, makeOpt) => {
    let sched: StepLR | undefined;
    const make = (m: Mlp) => {
      const opt = makeOpt(m.params);
      sched = new StepLR(opt, { stepSize: 5, gamma: 0.5 });
      return trainStep(m, opt);
    };
    const data = batches(20);
    const eager = await run(make, false, data, () => sched!.step());
    const spy = vi.spyOn(getBackend('cpu').fused as Required<FusedKernels<unknown>>, kernel);
    try {
      const comp = await run(make, true, data, () => sched!.step());
      expect(comp.losses).toEqual(eager.losses);
      expect(comp.params).toEqual(eager.params);
      expect(comp.explain().programs[0]!.dynamicScalars).toBe(4); // one spec per parameter
      // Four parameters a step, each step's lr as StepLR set it (halved every 5 steps), replays included;
      // a backend with prepare (the cpu backend's bound calls) makes each call once more when the
      // program is built, after the second step, with that step's arguments.
      const lrs = spy.mock.calls.map((call) => (call.at(-1) as { lr: number }).lr);
      const want = Array.from({ length: 20 }, (_, i) => (kernel === 'adadelta' ? 1 : 0.01) * 0.5 ** Math.floor(i / 5));
      const built = getBackend('cpu').prepare !== undefined ? 1 : -1;
      expect(lrs).toEqual(want.flatMap((lr, i) => Array<number>(i === built ? 8 : 4).fill(lr)));
    } finally {
      spy.mockRestore();
    }
  });

  it('RAdam: the step that turns rectification on fails a guard and traces once more', async () => {
    const m = mlp(1);
    const step = compile(trainStep(m, new RAdam(m.params, { lr: 0.01 })));
    for (const [x, y] of batches(12)) step(x, y);
    const info = step.explain();
    expect(info.lastRetraceReason).toBe('guard failed: RAdam rectified was false, now true');
    expect(info.programs[0]!.guards).toContain('RAdam rectified: true');
  });

  it("a guard that changes between the two calls compared (eval() for two calls, then train()) traces again: no COMPILE_NONDETERMINISTIC", async () => {
    // Adadelta makes its state on call 1, so calls 2 and 3 are the pair compared; the flag flips
    // between them, as a module's training flag does when train() follows two eval() steps.
    let training = false;
    let calls = 0;
    const make = (m: Mlp) => {
      const step = trainStep(m, new Adadelta(m.params));
      return (x: Tensor, y: Tensor) => {
        compileGuard('Net.training', () => training);
        return step(training ? x.mul(0.5) : x, y);
      };
    };
    const flip = () => { if (++calls === 2) training = true; };
    const data = batches(12);
    const eager = await run(make, false, data, flip);
    [training, calls] = [false, 0];
    const comp = await run(make, true, data, flip);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.explain().replays).toBeGreaterThanOrEqual(7);
  });

  it('changing an option other than lr between calls traces again instead of replaying the old value', async () => {
    let opt: RMSprop | undefined;
    let calls = 0;
    const make = (m: Mlp) => trainStep(m, (opt = new RMSprop(m.params, { lr: 0.01, alpha: 0.99 })));
    const changeAlphaAfterStep5 = () => {
      if (++calls % 10 === 5) opt!.paramGroups[0]!.alpha = 0.9;
    };
    const data = batches(10);
    const eager = await run(make, false, data, changeAlphaAfterStep5);
    const comp = await run(make, true, data, changeAlphaAfterStep5);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    expect(comp.explain().lastRetraceReason).toMatch(/^guard failed: RMSprop options was .*"alpha",0\.99.*now .*"alpha",0\.9\]/);
  });
});

describe('compile: guards, breaks and fallbacks', () => {
  const sgdStep = (m: Mlp) => trainStep(m, new SGD(m.params, { lr: 0.05 }));

  it('a new batch shape retraces, and explain() names the guard', async () => {
    const step = compile(sgdStep(mlp(1)));
    for (const [x, y] of batches(3, 4)) step(x, y);
    for (const [x, y] of batches(3, 2)) step(x, y);
    const info = step.explain();
    expect(info.programs).toHaveLength(2);
    expect(info.lastRetraceReason).toContain('arg 0: Tensor [4, 8] float32 cpu');
    expect(info.lastRetraceReason).toContain('Tensor [2, 8]');
    expect(info.text).toContain('guard arg 0: Tensor [2, 8] float32 cpu');
  });

  it('a host read inside the function is a CompileError naming the line of this file', () => {
    const [[x, y]] = batches(1);
    const m = mlp(1);
    const step = compile((a: Tensor) => {
      const out = m.forward(a);
      out.dataSync(); // the host read
      return out;
    });
    let error: unknown;
    try {
      step(x!);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    expect((error as CompileError).code).toBe('COMPILE_HOST_READ');
    expect((error as CompileError).site).toMatch(/compile\.test\.ts:\d+:\d+$/);
    expect((error as CompileError).message).toContain('dataSync()');
    void y;
  });

  it('a data-dependent op (nonzero, a boolean mask) on the cpu is a host read too: the replay could not follow its shape; with onBreak eager it runs eagerly and stays right', async () => {
    const positives = (a: Tensor) => a.index([a.gt(0)]).sum();
    for (const [name, fn] of [['nonzero()', (a: Tensor) => a.nonzero().sum()], ['index()', positives]] as const) {
      let error: unknown;
      try {
        compile(fn)(tensor([1, -2, 3]));
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(CompileError);
      expect((error as CompileError).code).toBe('COMPILE_HOST_READ');
      expect((error as CompileError).message).toContain(name);
    }
    const step = compile(positives, { onBreak: 'eager' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const sums = [[1, -2, 3], [-1, 5, 6], [4, 4, -4], [0, 0, 7]].map((v) => step(tensor(v)));
    warn.mockRestore();
    expect(await Promise.all(sums.map((t) => t.item()))).toEqual([4, 11, 8, 7]);
  });

  it('random numbers inside the step (a dropout mask) follow the generator stream as eager does, manualSeed included', async () => {
    const [[x]] = batches(1);
    const dropout = (a: Tensor) => a.mul(rand([4, 8]).ge(0.5)).mul(2).sum();
    const outputs = async (f: (a: Tensor) => Tensor) => {
      manualSeed(11);
      const out: number[][] = [];
      for (let i = 0; i < 8; i++) {
        if (i === 5) manualSeed(3);
        out.push(await bits(f(x!)));
      }
      return out;
    };
    const step = compile(dropout);
    const compiled = await outputs(step);
    expect(compiled).toEqual(await outputs(dropout));
    expect(new Set(compiled.map(String)).size).toBeGreaterThan(5); // the masks differ from call to call
    expect(step.explain().replays).toBe(6);
  });

  it('a Generator made inside the function is that call\'s own: every replay draws what eager\'s new generator draws, while one made outside runs on', async () => {
    const [[x]] = batches(1);
    const outside = new Generator(7);
    const noisy = (a: Tensor) => {
      const own = new Generator(5);
      return a.mul(rand([4, 8], { generator: own })).add(rand([4, 8], { generator: outside })).sum();
    };
    const run = async (f: (a: Tensor) => Tensor) => {
      outside.manualSeed(7);
      const out: number[][] = [];
      for (let i = 0; i < 6; i++) out.push(await bits(f(x!)));
      return out;
    };
    const step = compile(noisy);
    const compiled = await run(step);
    expect(compiled).toEqual(await run(noisy));
    expect(new Set(compiled.map(String)).size).toBe(6); // the outside generator still moves on
    expect(step.explain().replays).toBe(4);
  });

  it('a tensor used as a JS number inside the function is a CompileError', () => {
    const step = compile((a: Tensor) => (+a > 0 ? a.add(1) : a));
    expect(() => step(tensor([1]))).toThrow(CompileError);
  });

  it("onBreak: 'eager' falls back with the same results", async () => {
    const make = (m: Mlp) => {
      const inner = sgdStep(m);
      return (x: Tensor, y: Tensor) => {
        const loss = inner(x, y);
        loss.dataSync(); // breaks the capture
        return loss;
      };
    };
    const data = batches(5);
    const eager = await run(make, false, data);
    const m = mlp(1);
    const step = compile(make(m), { onBreak: 'eager' });
    const losses = [];
    for (const [x, y] of data) losses.push(await bits(step(x, y)));
    expect(losses).toEqual(eager.losses);
    expect(step.explain().eager[0]).toContain('dataSync()');
  });

  it('an optimizer that cannot tell a replay its per-step values breaks the capture by name, or runs eagerly with onBreak', async () => {
    /** A user's optimizer that registers nothing for compile(): plain gradient descent. */
    class PlainDescent extends FirstOrderOptimizer<{ lr: number }> {
      constructor(params: Tensor[]) {
        super(params, { lr: 0.01 });
      }
      protected checkOptions(): void {}
      protected stateFields() {
        return {};
      }
      protected updateGroup(group: ParamGroup<{ lr: number }>, items: readonly ParamWithGrad[]): void {
        for (const { param, grad } of items) param.copy_(param.add(grad, -group.lr));
      }
    }
    const data = batches(4);
    const m = mlp(1);
    const step = compile(trainStep(m, new PlainDescent(m.params)));
    let error: unknown;
    try {
      step(data[0]![0], data[0]![1]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    expect((error as CompileError).code).toBe('COMPILE_UNSUPPORTED');
    expect((error as CompileError).message).toMatch(/PlainDescent\.step\(\) ran .*call step\(\) outside the compiled function, or have its update register them/);

    const plain = (mm: Mlp) => trainStep(mm, new PlainDescent(mm.params));
    const eager = await run(plain, false, data);
    const m2 = mlp(1);
    const fallback = compile(plain(m2), { onBreak: 'eager' });
    const losses = [];
    for (const [x, y] of data) losses.push(await bits(fallback(x, y)));
    expect(losses).toEqual(eager.losses);
    expect(await Promise.all(m2.params.map(bits))).toEqual(eager.params);
  });

  it('LBFGS reads values on the host within its step: inside the function that breaks the capture (COMPILE_HOST_READ)', () => {
    const m = mlp(1);
    const opt = new LBFGS(m.params, { lr: 0.1 });
    const [[x, y]] = batches(1);
    const step = compile((a: Tensor, b: Tensor) => opt.step(() => {
      opt.zeroGrad();
      const loss = m.forward(a).sub(b).square().mean();
      loss.backward();
      return loss;
    }));
    let error: unknown;
    try {
      step(x!, y!);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    expect((error as CompileError).code).toBe('COMPILE_HOST_READ');
  });

  it('a tensor made inside the function and kept outside it is valid until the next replay, then a COMPILE_STALE_TENSOR error on use', async () => {
    const m = mlp(1);
    const kept: Tensor[] = [];
    const module = { last: null as Tensor | null };
    const step = compile((x: Tensor, y: Tensor) => {
      const h = m.forward(x);
      kept.push(h); // leaked through an outer array
      module.last = h.relu(); // leaked as a module's attribute
      return h.sub(y).square().mean();
    });
    const data = batches(4);
    const losses = data.map(([x, y]) => step(x, y));
    // Calls 1 and 2 ran fn (call 2 captured it); calls 3 and 4 replayed, overwriting call 2's tensors.
    expect(kept).toHaveLength(2);
    expect(await bits(kept[0]!)).toEqual(await bits(m.forward(data[0]![0]))); // call 1 was eager: its tensors are the user's
    const errorOf = (use: () => unknown) => {
      try {
        use();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    for (const use of [() => kept[1]!.dataSync(), () => kept[1]!.add(1), () => module.last!.sum(), () => kept[1]!.view([-1])]) {
      const error = errorOf(use);
      expect(error).toBeInstanceOf(CompileError);
      expect((error as CompileError).code).toBe('COMPILE_STALE_TENSOR');
      expect((error as CompileError).message).toMatch(/made inside a compiled function .*overwritten\. Return the tensor from the compiled function/);
    }
    // The returned tensors are copies: each keeps its own call's value, as eager's would.
    const eager = data.map(([x, y]) => m.forward(x).sub(y).square().mean());
    expect(await Promise.all(losses.map(bits))).toEqual(await Promise.all(eager.map(bits)));
  });

  it("the .grad tensors a capture made stay usable after replays (they hold each replay's gradients)", async () => {
    const m = mlp(1);
    const opt = new SGD(m.params, { lr: 0.05 });
    const step = compile(trainStep(m, opt));
    const data = batches(5);
    for (const [x, y] of data) step(x, y);
    expect(step.explain().replays).toBe(3); // plain SGD keeps no state: calls 1 and 2 match
    const compiledGrads = await Promise.all(m.params.map((p) => bits(p.grad!)));
    // Eager from the same start on the same data: the last step's gradients.
    const e = mlp(1);
    const eagerStep = trainStep(e, new SGD(e.params, { lr: 0.05 }));
    for (const [x, y] of data) eagerStep(x, y);
    expect(compiledGrads).toEqual(await Promise.all(e.params.map((p) => bits(p.grad!))));
  });

  it('a compiled opt.step() after a backward pass outside it reads the .grad each call set, as eager does, and leaves it attached', async () => {
    const data = batches(8);
    const go = async (compiled: boolean) => {
      const m = mlp(1);
      const opt = new SGD(m.params, { lr: 0.1, momentum: 0.9 });
      const update = compiled ? compile(() => opt.step()) : () => opt.step();
      const losses: number[][] = [];
      const attached: boolean[] = [];
      for (const [x, y] of data) {
        opt.zeroGrad(); // .grad becomes null: backward attaches a new tensor in new memory each call
        const loss = m.forward(x).sub(y).square().mean();
        loss.backward();
        const grads = m.params.map((p) => p.grad);
        update();
        attached.push(m.params.every((p, i) => p.grad === grads[i]));
        losses.push(await bits(loss));
      }
      return { losses, attached, params: await Promise.all(m.params.map(bits)), replays: compiled ? (update as ReturnType<typeof compile>).explain().replays : 0 };
    };
    const eager = await go(false);
    const compiled = await go(true);
    expect(compiled.replays).toBe(5); // momentum buffers appear in call 1: calls 2 and 3 trace
    expect(compiled.losses).toEqual(eager.losses);
    expect(compiled.params).toEqual(eager.params);
    expect(compiled.attached).toEqual(Array<boolean>(8).fill(true));
  });

  it('CORE_COMPILE=0 makes compile a pass-through', () => {
    process.env.CORE_COMPILE = '0';
    let calls = 0;
    try {
      const step = compile((a: Tensor) => {
        calls++;
        return a.add(1);
      });
      for (let i = 0; i < 4; i++) step(tensor([i]));
      expect(calls).toBe(4);
      expect(step.explain().mode).toBe('eager (CORE_COMPILE=0)');
    } finally {
      delete process.env.CORE_COMPILE;
    }
  });

  it('the function runs only while tracing: later calls replay without running it', () => {
    let calls = 0;
    const step = compile((a: Tensor) => {
      calls++;
      return a.mul(2);
    });
    const outs = [1, 2, 3, 4].map((v) => step(tensor([v])).dataSync()[0]);
    expect(outs).toEqual([2, 4, 6, 8]);
    expect(calls).toBe(2);
  });

  it('a tensor on another device raises the same device error as eager', () => {
    const m = mlp(1);
    const f = (a: Tensor) => m.forward(a);
    const x = randn([4, 8]);
    const step = compile(f);
    step(x);
    step(x);
    const stray = x.to(FAKE);
    const eagerError = (() => { try { f(stray); } catch (e) { return e as Error; } })();
    expect(eagerError).toBeInstanceOf(DeviceMismatchError);
    expect(() => step(stray)).toThrow(eagerError!.message);
  });

  it('the memory plan: intermediates whose lifetimes do not overlap share storages (a chain of 24 ops keeps a handful, not 24), with the same result bits', async () => {
    const [[x]] = batches(1);
    const chain = (a: Tensor) => {
      let h = a;
      for (let i = 0; i < 12; i++) h = h.mul(1.01).add(0.5);
      return h.sum();
    };
    const step = compile(chain);
    const eager = await bits(chain(x!));
    for (let i = 0; i < 5; i++) expect(await bits(step(x!))).toEqual(eager);
    expect(step.explain().replays).toBe(3);
    // Captured as recorded, the program would hold all 25 (24 intermediates and the sum).
    expect(step.explain().programs[0]!.storages).toBeLessThanOrEqual(5);
  });

  it('a replay allocates only the tensor it returns (an eager step allocates dozens)', () => {
    const m = mlp(1);
    const eager = sgdStep(m);
    const step = compile(sgdStep(m));
    const data = batches(4);
    for (const [x, y] of data.slice(0, 3)) step(x, y);
    const alloc = vi.spyOn(getBackend('cpu'), 'alloc');
    try {
      const loss = step(data[3]![0], data[3]![1]);
      expect(step.explain().replays).toBe(2); // calls 1 and 2 traced
      expect(loss.shape).toEqual([]);
      expect(alloc).toHaveBeenCalledTimes(1);
      alloc.mockClear();
      eager(data[3]![0], data[3]![1]);
      expect(alloc.mock.calls.length).toBeGreaterThan(20);
    } finally {
      alloc.mockRestore();
    }
  });
});
