import { describe, expect, it } from 'vitest';
import {
  DeviceMismatchError, float16, float32, float64, isGradEnabled, memoryStats, noGrad, randn, setFusedKernelsEnabled, ShapeError, tensor, ValueError, zeros,
  type MemoryStats, type Tensor,
} from '@core/tensor';
import {
  Adadelta, Adagrad, Adam, Adamax, AdamW, FirstOrderOptimizer, NAdam, RAdam, RMSprop, SGD, type ParamGroup, type ParamWithGrad, type StateFields,
} from '../src/index.js';
import { FAKE } from './fake-device.js';
import { expectClose, expectThrowsExactly, param, setGrad, values } from './helpers.js';

describe('constructing an optimizer', () => {
  it('an empty parameter list is a ValueError', () => {
    expectThrowsExactly(() => new SGD([]), ValueError, 'optimizer got an empty parameter list');
    expectThrowsExactly(() => new Adam([]), ValueError, 'optimizer got an empty parameter list');
  });

  it('a single tensor instead of a list is a TypeError, as in PyTorch', () => {
    const p = param([1]);
    expect(() => new SGD(p as unknown as Tensor[])).toThrow(
      /^params argument given to the optimizer should be an iterable of Tensors or dicts, but got Tensor\(shape=\[1\]/,
    );
  });

  it('a non-tensor among the params is a TypeError', () => {
    expectThrowsExactly(
      () => new SGD([param([1]), 3 as unknown as Tensor]),
      TypeError,
      'optimizer can only optimize Tensors, but one of the params is number',
    );
  });

  it('a parameter listed twice is an error, within a group or across groups', () => {
    const p = param([1]);
    const q = param([2]);
    expectThrowsExactly(() => new SGD([p, q, p]), ValueError, 'optimizer contains a parameter group with duplicate parameters');
    expectThrowsExactly(
      () => new SGD([{ params: [p] }, { params: [q, p] }]),
      ValueError,
      'some parameters appear in more than one parameter group',
    );
    const opt = new SGD([p]);
    expectThrowsExactly(() => opt.addParamGroup({ params: [p] }), ValueError, 'some parameters appear in more than one parameter group');
    expect(opt.paramGroups.length).toBe(1);
  });

  it('a non-leaf tensor is a ValueError', () => {
    const leaf = param([1, 2]);
    expectThrowsExactly(() => new SGD([leaf.mul(2)]), ValueError, "can't optimize a non-leaf Tensor");
  });

  it('takes any iterable of tensors, and a single tensor as a group\'s params', () => {
    const ps = [param([1]), param([2])];
    function* gen() { yield* ps; }
    expect(new SGD(gen()).paramGroups[0]!.params).toEqual(ps);
    const opt = new SGD([{ params: ps[0]! }, { params: new Set([ps[1]!]) }]);
    expect(opt.paramGroups.map((g) => g.params)).toEqual([[ps[0]], [ps[1]]]);
  });

  it('an explicit undefined option keeps the default', () => {
    expect(new SGD([param([1])], { lr: undefined, momentum: 0.5 }).paramGroups[0]).toMatchObject({ lr: 1e-3, momentum: 0.5 });
  });
});

describe('zeroGrad (OPT-1)', () => {
  it('OPT-1: by default sets every grad to null', () => {
    const [a, b, c] = [param([1]), param([2]), param([3])];
    setGrad(a, [1]);
    setGrad(b, [2]);
    const opt = new SGD([{ params: [a] }, { params: [b, c] }]);
    opt.zeroGrad();
    expect([a.grad, b.grad, c.grad]).toEqual([null, null, null]);
  });

  it('OPT-1: setToNone: false zeroes each grad in place and keeps the same object', () => {
    const p = param([1, 2, 3]);
    const q = param([4]);
    const g = setGrad(p, [1, -2, 3]);
    g.requiresGrad = true;
    const opt = new SGD([p, q]);
    opt.zeroGrad({ setToNone: false });
    expect(p.grad).toBe(g);
    expect(values(g)).toEqual([0, 0, 0]);
    expect(g.requiresGrad).toBe(false);
    expect(q.grad).toBeNull(); // a missing grad is not created
  });

  it('OPT-1: setToNone: false detaches a grad that has a history, still the same object, also under noGrad', () => {
    for (const wrap of [(f: () => void) => f(), (f: () => void) => noGrad(f)]) {
      const p = param([1, 2]);
      const g = param([3, 4]).mul(2); // a grad with a gradFn, as backward(createGraph) makes
      expect(g.gradFn).not.toBeNull();
      p.grad = g;
      wrap(() => new SGD([p]).zeroGrad({ setToNone: false }));
      expect(p.grad).toBe(g);
      expect(g.gradFn).toBeNull();
      expect(g.requiresGrad).toBe(false);
      expect(values(g)).toEqual([0, 0]);
    }
  });
});

describe('step() and missing grads (OPT-3)', () => {
  it('OPT-3: SGD skips a null grad (no state, no decay) but decays a zero grad', () => {
    const none = param([1], float64);
    const zero = param([1], float64);
    setGrad(zero, [0]);
    const opt = new SGD([none, zero], { lr: 0.1, momentum: 0.9, weightDecay: 0.1 });
    opt.step();
    expect(values(none)).toEqual([1]);
    expect(opt.state.has(none)).toBe(false);
    expectClose(values(zero), [0.99], 1e-15);
    expectClose(values(opt.state.get(zero)!.momentumBuffer!), [0.1], 1e-15);
  });

  it('OPT-3: Adam skips a null grad; a zero grad still gets weight decay and moments', () => {
    const none = param([1], float64);
    const zero = param([1], float64);
    setGrad(zero, [0]);
    const opt = new Adam([none, zero], { lr: 0.1, weightDecay: 0.1 });
    opt.step();
    expect(values(none)).toEqual([1]);
    expect(opt.state.has(none)).toBe(false);
    const s = opt.state.get(zero)!;
    expect(s.step).toBe(1);
    expectClose(values(s.expAvg), [0.01], 1e-15); // g = wd·p = 0.1
    expectClose(values(zero), [1 - 0.1 * 0.1 / (0.1 + 1e-8)], 1e-12);
  });

  it('OPT-3: AdamW decays a zero-grad param (p·(1 − lr·wd)) and leaves a null-grad one alone', () => {
    const none = param([2], float64);
    const zero = param([2], float64);
    setGrad(zero, [0]);
    const opt = new AdamW([none, zero], { lr: 0.1 });
    opt.step();
    expect(values(none)).toEqual([2]);
    expect(opt.state.has(none)).toBe(false);
    expectClose(values(zero), [2 * (1 - 0.1 * 0.01)], 1e-15);
    expect(opt.state.get(zero)!.step).toBe(1);
  });

  it('step() returns undefined; step(closure) calls it with grad enabled and returns its loss', () => {
    const p = param([1], float64);
    const opt = new SGD([p], { lr: 0.1 });
    expect(opt.step()).toBeUndefined();
    const seen: boolean[] = [];
    const loss = noGrad(() => opt.step(() => {
      seen.push(isGradEnabled());
      setGrad(p, [0.5]);
      return 42;
    }));
    expect(loss).toBe(42);
    expect(seen).toEqual([true]);
    expectClose(values(p), [0.95], 1e-15); // the grad the closure set was used
  });

  it('updates run under noGrad, and grad mode is restored afterwards', () => {
    const modes: boolean[] = [];
    class Probe extends FirstOrderOptimizer<{ lr: number }> {
      constructor(params: Tensor[]) { super(params, { lr: 1 }); }
      protected checkOptions(): void {}
      protected stateFields(): StateFields { return {}; }
      protected updateGroup(_group: ParamGroup<{ lr: number }>, items: readonly ParamWithGrad[]): void {
        modes.push(isGradEnabled());
        for (const { param: p, grad } of items) p.sub_(grad);
      }
    }
    const p = param([1]);
    setGrad(p, [0.25]);
    new Probe([p]).step();
    expect(modes).toEqual([false]);
    expect(isGradEnabled()).toBe(true);
    expect(values(p)).toEqual([0.75]);
  });
});

describe('devices', () => {
  it('a grad on another device than its param is a DeviceMismatchError, and nothing is updated', () => {
    const ok = param([1]);
    const bad = param([1]);
    setGrad(ok, [0.5]);
    bad.grad = tensor([0.5], { device: FAKE });
    const opt = new SGD([{ params: [ok] }, { params: [bad] }], { lr: 0.1, momentum: 0.9 });
    expectThrowsExactly(
      () => opt.step(),
      DeviceMismatchError,
      "SGD.step(): the grad of paramGroups[1].params[0] is on fake:0, but the parameter is on cpu; a gradient must live on its parameter's device",
    );
    expect(values(ok)).toEqual([1]);
    expect(opt.state.size).toBe(0);
  });

  it('a grad of another shape than its param is a ShapeError', () => {
    const p = param([1, 2]);
    p.grad = tensor([1, 2, 3]);
    expectThrowsExactly(
      () => new Adam([p]).step(),
      ShapeError,
      'Adam.step(): the grad of paramGroups[0].params[0] has shape [3], but the parameter has shape [2]',
    );
  });

  it('params on another device: the update and the state stay there', () => {
    const p = tensor([1, 2], { device: FAKE, requiresGrad: true });
    p.grad = tensor([0.5, 0.5], { device: FAKE });
    const adam = new Adam([p], { lr: 0.1 });
    adam.step();
    const s = adam.state.get(p)!;
    expect([s.expAvg.device, s.expAvgSq.device].map(String)).toEqual(['fake:0', 'fake:0']);
    expect(String(p.device)).toBe('fake:0');
    expectClose(values(p.cpu()), [0.9, 1.9], 1e-6);

    const q = tensor([1], { device: FAKE, requiresGrad: true });
    q.grad = tensor([0.5], { device: FAKE });
    const sgd = new SGD([q], { lr: 0.1, momentum: 0.9 });
    sgd.step();
    expect(String(sgd.state.get(q)!.momentumBuffer!.device)).toBe('fake:0');
  });
});

describe('a step frees its temporaries at once (no garbage collection needed)', () => {
  for (const [name, make] of [
    ['SGD with momentum, weight decay and Nesterov', (ps: Tensor[]) => new SGD(ps, { lr: 0.1, momentum: 0.9, weightDecay: 0.01, nesterov: true })],
    ['Adam (decomposition: fused kernels off)', (ps: Tensor[]) => new Adam(ps, { lr: 0.01 })],
    ['AdamW with amsgrad', (ps: Tensor[]) => new AdamW(ps, { lr: 0.01, amsgrad: true })],
    ['SGD on float16 parameters (upcast temporaries)', (ps: Tensor[]) => new SGD(ps, { lr: 0.1, momentum: 0.9 })],
    ['RMSprop centered with momentum', (ps: Tensor[]) => new RMSprop(ps, { momentum: 0.9, centered: true, weightDecay: 0.01 })],
    ['Adagrad', (ps: Tensor[]) => new Adagrad(ps)],
    ['Adadelta', (ps: Tensor[]) => new Adadelta(ps, { maximize: true })],
    ['Adamax', (ps: Tensor[]) => new Adamax(ps)],
    ['NAdam', (ps: Tensor[]) => new NAdam(ps, { weightDecay: 0.01 })],
    ['RAdam on float16 parameters', (ps: Tensor[]) => new RAdam(ps)],
  ] as const) {
    it(`${name}: after the first step made the state, each step leaves the allocation count and bytes unchanged`, async () => {
      const dtype = name.includes('float16') ? float16 : float32;
      const ps = [randn([8, 4]).to(dtype).requiresGrad_(), randn([4]).to(dtype).requiresGrad_()];
      const grads = ps.map((p) => randn(p.shape).to(dtype));
      const optimizer = make(ps);
      const step = () => {
        ps.forEach((p, i) => { p.grad = grads[i]!; });
        optimizer.step();
      };
      let before: MemoryStats;
      let after: MemoryStats;
      if (name.includes('decomposition')) setFusedKernelsEnabled(false);
      try {
        step(); // creates the state
        // Free what earlier code dropped before counting: collect, then allocate once, since core
        // frees collected tensors at the next allocation (which would otherwise fall inside a step).
        (globalThis as { gc?: () => void }).gc?.();
        zeros([1]).dispose();
        before = memoryStats('cpu');
        step();
        step();
        after = memoryStats('cpu');
      } finally {
        setFusedKernelsEnabled(true);
      }
      expect(after.allocations).toBe(before.allocations);
      expect(after.allocatedBytes).toBe(before.allocatedBytes);
    });
  }
});
