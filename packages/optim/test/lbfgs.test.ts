// LBFGS against torch.optim.LBFGS 1.13 (float64), its synchronous and asynchronous drivers, its
// options and its state dict.
import { describe, expect, it } from 'vitest';
import { float64, noGrad, ShapeError, tensor, type Tensor, TensorError, ValueError } from '@core/tensor';
import { LBFGS, type LBFGSOptions } from '../src/index.js';
import { TORCH_LBFGS } from './fixtures/torch-lbfgs.js';
import { NO_SYNC } from './fake-device.js';
import { expectClose, expectThrowsExactly, param, values } from './helpers.js';

/** The fixture's problems: a coupled quadratic over two parameters ([2] and [2, 1]), and Rosenbrock's function. */
function problem(name: 'quad' | 'rosen', device = 'cpu'): { params: Tensor[]; loss: () => Tensor } {
  const t = (data: number[] | number[][]) => tensor(data, { dtype: float64, device });
  if (name === 'quad') {
    const [a, b] = [t([0, 0]), t([[0], [0]])].map((p) => p.requiresGrad_());
    const loss = () => a!.sub(t([1, -1])).square().mul(t([1, 10])).sum()
      .add(b!.sub(t([[2], [0.5]])).square().mul(t([[3], [0.5]])).sum())
      .add(a!.sum().mul(b!.sum()).mul(0.1));
    return { params: [a!, b!], loss };
  }
  const p = t([-1.5, 2]).requiresGrad_();
  const loss = () => {
    const [x, y] = [p.select(0, 0), p.select(0, 1)];
    return x.neg().add(1).square().add(y.sub(x.square()).square().mul(100));
  };
  return { params: [p], loss };
}

/** The closure PyTorch users write: zero the grads, compute the loss, backward, return it. */
function closureFor(opt: LBFGS, loss: () => Tensor, counter: { evals: number }): () => Tensor {
  return () => {
    opt.zeroGrad();
    const l = loss();
    l.backward();
    counter.evals += 1;
    return l;
  };
}

const flat = (params: Tensor[]) => params.flatMap((p) => values(p.cpu()));

/**
 * Name, problem, options, tolerance (the fixture has one entry per step). Our dot products sum in another order than PyTorch's;
 * 40 iterations of line search on Rosenbrock's valley amplify that to ~1e-11.
 */
const CASES: Array<[keyof typeof TORCH_LBFGS, 'quad' | 'rosen', Partial<LBFGSOptions>, number]> = [
  ['quad', 'quad', { lr: 1, maxIter: 4, historySize: 3 }, 1e-12],
  ['quad_wolfe', 'quad', { maxIter: 5, lineSearchFn: 'strong_wolfe' }, 1e-12],
  ['rosen_wolfe', 'rosen', { historySize: 10, lineSearchFn: 'strong_wolfe' }, 1e-10],
  ['rosen', 'rosen', { lr: 0.05, maxIter: 10, historySize: 4 }, 1e-12],
];

describe('LBFGS against torch.optim.LBFGS 1.13 (float64)', () => {
  for (const [name, prob, options, tol] of CASES) {
    it(`${name}: loss, parameters and step length (to ${tol}) and counters after each step`, () => {
      const { params, loss } = problem(prob);
      const opt = new LBFGS(params, options);
      const counter = { evals: 0 };
      const closure = closureFor(opt, loss, counter);
      TORCH_LBFGS[name].forEach((expected) => {
        const first = opt.step(closure);
        const s = opt.state.get(params[0]!)!;
        expectClose([values(first)[0]!], [expected.loss], tol);
        expectClose(flat(params), [...expected.params], tol);
        expect([counter.evals, s.funcEvals, s.nIter, s.oldDirs!.length]).toEqual([expected.evals, expected.funcEvals, expected.nIter, expected.history]);
        expectClose([s.t!], [expected.t], tol);
      });
    });
  }

  it('returns the first evaluation unchanged (a tensor, or a number), and stops at once when the gradient is already small', () => {
    const p = param([3], float64);
    const opt = new LBFGS([p], { toleranceGrad: 1e-3 });
    let calls = 0;
    const loss = opt.step(() => {
      calls += 1;
      opt.zeroGrad();
      p.grad = tensor([1e-4], { dtype: float64 });
      return 42;
    });
    expect(loss).toBe(42);
    expect(calls).toBe(1);
    expect(values(p)).toEqual([3]);
    expect(opt.state.get(p)).toEqual({ funcEvals: 1, nIter: 0 });
  });

  it('the closure runs with grad enabled, also when step is called under noGrad', () => {
    const { params, loss } = problem('quad');
    const opt = new LBFGS(params, { maxIter: 2 });
    const counter = { evals: 0 };
    const l = noGrad(() => opt.step(closureFor(opt, loss, counter)));
    expect(values(l)[0]).toBe(23.125);
    expect(counter.evals).toBe(2);
  });
});

describe('stepAsync', () => {
  it('runs the same algorithm: bit-identical to step, with a sync or an async closure', async () => {
    const run = async (drive: 'sync' | 'async' | 'async closure') => {
      const { params, loss } = problem('rosen');
      const opt = new LBFGS(params, { historySize: 10, lineSearchFn: 'strong_wolfe' });
      const closure = closureFor(opt, loss, { evals: 0 });
      for (let i = 0; i < 2; i++) {
        if (drive === 'sync') opt.step(closure);
        else if (drive === 'async') await opt.stepAsync(closure);
        else await opt.stepAsync(async () => { await new Promise((r) => setImmediate(r)); return closure(); });
      }
      return flat(params);
    };
    const sync = await run('sync');
    expect(await run('async')).toEqual(sync);
    expect(await run('async closure')).toEqual(sync);
    expectClose(sync, [...TORCH_LBFGS.rosen_wolfe[1]!.params], 1e-10);
  });

  it('on a backend without synchronous reads, step throws (naming stepAsync) before changing anything; stepAsync works', async () => {
    const { params, loss } = problem('quad', NO_SYNC);
    const opt = new LBFGS(params, { lr: 1, maxIter: 4, historySize: 3 });
    const counter = { evals: 0 };
    const closure = closureFor(opt, loss, counter);
    expectThrowsExactly(() => opt.step(closure), TensorError,
      'LBFGS.step(closure) reads the loss and a few scalars on each iteration, and the nosync backend cannot read synchronously: use `await optimizer.stepAsync(closure)`');
    expect(counter.evals).toBe(0);
    expect(opt.state.size).toBe(0);
    const first = await opt.stepAsync(closure);
    expect(await first.item()).toBe(23.125);
    const got = (await Promise.all(params.map((p) => p.data()))).flatMap((d) => Array.from(d));
    expectClose(got, [...TORCH_LBFGS.quad[0]!.params], 1e-10);
    expect(String(opt.state.get(params[0]!)!.d!.device)).toBe('nosync:0');
  });
});

describe('LBFGS options', () => {
  it('has PyTorch\'s defaults; maxEval defaults to ⌊maxIter·5/4⌋', () => {
    expect(new LBFGS([param([1])]).defaults).toEqual({
      lr: 1, maxIter: 20, maxEval: 25, toleranceGrad: 1e-7, toleranceChange: 1e-9, historySize: 100, lineSearchFn: null,
    });
    expect(new LBFGS([param([1])], { maxIter: 7 }).defaults.maxEval).toBe(8);
    expect(new LBFGS([param([1])], { maxIter: 7, maxEval: 3 }).defaults.maxEval).toBe(3);
  });

  it('bad options are ValueErrors naming the option and value; an unknown one is a TypeError', () => {
    const p = param([1]);
    expectThrowsExactly(() => new LBFGS([p], { lr: -1 }), ValueError, 'Invalid learning rate: -1');
    expectThrowsExactly(() => new LBFGS([p], { maxIter: 0 }), ValueError, 'Invalid max_iter value: 0');
    expectThrowsExactly(() => new LBFGS([p], { maxEval: 2.5 }), ValueError, 'Invalid max_eval value: 2.5');
    expectThrowsExactly(() => new LBFGS([p], { toleranceGrad: -1 }), ValueError, 'Invalid tolerance_grad value: -1');
    expectThrowsExactly(() => new LBFGS([p], { toleranceChange: NaN }), ValueError, 'Invalid tolerance_change value: NaN');
    expectThrowsExactly(() => new LBFGS([p], { historySize: 0 }), ValueError, 'Invalid history_size value: 0');
    expectThrowsExactly(() => new LBFGS([p], { lineSearchFn: 'armijo' as never }), ValueError,
      `Invalid line_search_fn value: "armijo" (only 'strong_wolfe' or null is supported)`);
    expect(() => new LBFGS([p], { momentum: 0.9 } as never)).toThrow(/LBFGS\(\) got an unexpected keyword argument 'momentum'/);
  });

  it('takes one parameter group only, as PyTorch', () => {
    const message = "LBFGS doesn't support per-parameter options (parameter groups)";
    expectThrowsExactly(() => new LBFGS([{ params: [param([1])] }, { params: [param([2])] }]), ValueError, message);
    const opt = new LBFGS([param([1])]);
    expectThrowsExactly(() => opt.addParamGroup({ params: [param([2])] }), ValueError, message);
    expect(opt.paramGroups.length).toBe(1);
  });

  it('needs a closure that returns a number or a one-element tensor', async () => {
    const p = param([1, 2], float64);
    const opt = new LBFGS([p]);
    expectThrowsExactly(() => (opt.step as (c?: unknown) => unknown)(), TypeError,
      'LBFGS.step() needs a closure that re-evaluates the model and returns the loss, got undefined');
    expectThrowsExactly(() => opt.step(() => p.mul(2)), TypeError,
      'LBFGS: the closure must return the loss as a number or a one-element tensor, got a tensor of shape [2]');
    await expect(opt.stepAsync(async () => 'low')).rejects.toThrow(
      new TypeError('LBFGS: the closure must return the loss as a number or a one-element tensor, got "low"'));
  });
});

describe('LBFGS state dicts', () => {
  const options: Partial<LBFGSOptions> = { lr: 1, maxIter: 4, historySize: 3 };

  it('a fresh optimizer loaded mid-run continues bit-identically', () => {
    const straight = problem('quad');
    const a = new LBFGS(straight.params, options);
    const closureA = closureFor(a, straight.loss, { evals: 0 });
    for (let i = 0; i < 3; i++) a.step(closureA);

    const first = problem('quad');
    const b = new LBFGS(first.params, options);
    const closureB = closureFor(b, first.loss, { evals: 0 });
    b.step(closureB);
    const sd = b.stateDict();
    expect(Object.keys(sd.state)).toEqual(['0']);
    expect(Object.keys(sd.state[0]!).sort()).toEqual(['d', 'funcEvals', 'hDiag', 'nIter', 'oldDirs', 'oldStps', 'prevFlatGrad', 'prevLoss', 'ro', 't']);
    const afterOne = first.params.map((p) => p.detach().clone());
    b.step(closureB);
    expect(sd.state[0]!.nIter).toBe(4); // a snapshot: b's later step doesn't show

    const fromAfterOne = () => {
      const q = problem('quad');
      q.params.forEach((p, i) => noGrad(() => p.copy_(afterOne[i]!)));
      return q;
    };
    // The state dict restores the group options too: the saved maxIter 4, not 1.
    const resumed = fromAfterOne();
    const c = new LBFGS(resumed.params, { maxIter: 1 });
    c.loadStateDict(sd);
    expect(c.paramGroups[0]!.maxIter).toBe(4);
    const closureC = closureFor(c, resumed.loss, { evals: 0 });
    c.step(closureC);
    c.step(closureC);
    expect(flat(resumed.params)).toEqual(flat(straight.params));

    // Without the loaded state the run differs: the check above is not vacuous.
    const cold = fromAfterOne();
    const d = new LBFGS(cold.params, options);
    const closureD = closureFor(d, cold.loss, { evals: 0 });
    d.step(closureD);
    d.step(closureD);
    expect(flat(cold.params)).not.toEqual(flat(straight.params));
  });

  it('refuses a bad state, naming the entry, and changes nothing', () => {
    const { params, loss } = problem('quad');
    const opt = new LBFGS(params, options);
    opt.step(closureFor(opt, loss, { evals: 0 }));
    const good = opt.stateDict();
    const target = new LBFGS(problem('quad').params, options);
    const refused = (edit: (s: Record<string, unknown>) => void, cls: new (...a: never[]) => Error, message: string) => {
      const sd = { ...good, state: { 0: { ...good.state[0]! } } } as typeof good;
      edit(sd.state[0] as Record<string, unknown>);
      expect(() => target.loadStateDict(sd)).toThrow(cls);
      expect(() => target.loadStateDict(sd)).toThrow(message);
      expect(target.state.size).toBe(0);
    };
    refused((s) => { s.d = tensor([1, 2, 3], { dtype: float64 }); }, ShapeError,
      "loadStateDict(): parameter 0: 'd' has shape [3], but LBFGS keeps flat vectors of all 4 parameter elements");
    refused((s) => { s.oldDirs = [tensor([[1, 2], [3, 4]], { dtype: float64 })]; }, ShapeError, "parameter 0: 'oldDirs'[0] has shape [2, 2]");
    refused((s) => { s.ro = [1]; }, ValueError, "'oldDirs', 'oldStps' and 'ro' must be as long as each other, got 3, 3, 1");
    refused((s) => { s.ro = [1, -2, 3]; }, ValueError, "parameter 0: 'ro'[1] must be a positive finite number, got -2");
    refused((s) => { s.d = undefined; }, ValueError, "parameter 0: the state has no 'd', which LBFGS keeps after its first iteration");
    refused((s) => { s.nIter = 1.5; }, ValueError, "parameter 0: 'nIter' must be a non-negative integer, got 1.5");
    refused((s) => { s.t = 'one'; }, TypeError, "parameter 0: 't' must be a number, got \"one\"");
    refused((s) => { s.al = []; }, ValueError, "parameter 0: unknown state key 'al' (LBFGS keeps funcEvals, nIter, d, t, oldDirs, oldStps, ro, hDiag, prevFlatGrad, prevLoss)");
    const small = new LBFGS(problem('quad').params, { historySize: 2 });
    expect(() => small.loadStateDict({ ...good, paramGroups: [{ ...good.paramGroups[0]!, historySize: 2 }] }))
      .toThrow(new ValueError('loadStateDict(): parameter 0: the history holds 3 updates, more than historySize 2'));
    const moved = { ...good, state: { 1: good.state[0]! } };
    expect(() => target.loadStateDict(moved)).toThrow(/parameter 1: .*'d' has shape \[4\], but LBFGS|parameter 1: LBFGS keeps its state under its first parameter/);
    target.loadStateDict(good);
    expect(target.state.size).toBe(1);
  });
});
