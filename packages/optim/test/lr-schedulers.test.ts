// The learning-rate schedulers against torch.optim.lr_scheduler 1.13: each group's lr (and
// momentum where cycled) over 30 steps, the closed forms, state-dict round trips and typed errors.
import { describe, expect, it } from 'vitest';
import { float64, ValueError } from '@core/tensor';
import {
  Adagrad, Adam, ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR, LambdaLR,
  LinearLR, MultiplicativeLR, MultiStepLR, OneCycleLR, ReduceLROnPlateau, SequentialLR, SGD, StepLR, type SchedulableOptimizer,
} from '../src/index.js';
import { TORCH_SCHEDULES } from './fixtures/torch-lr-schedulers.js';
import { expectClose, expectThrowsExactly, param } from './helpers.js';

/** The fixture's optimizer: two groups, lr 0.1 and 0.05; SGD with momentum 0.9, or Adam. */
function optimizer(kind: 'sgd' | 'adam' = 'sgd'): SGD | Adam {
  const groups = [{ params: [param([0], float64)] }, { params: [param([0], float64)], lr: 0.05 }];
  return kind === 'sgd' ? new SGD(groups, { lr: 0.1, momentum: 0.9 }) : new Adam(groups, { lr: 0.1 });
}

interface Stepped {
  step(): void;
  getLastLr(): number[];
}

/** Each group's momentum (or Adam's beta1). */
const momenta = (o: SGD | Adam) => o.paramGroups.map((g) => ('momentum' in g ? g.momentum : g.betas[0]));

/** The lr (and momentum) after construction and after each of `n` steps. */
function schedule(make: (o: SGD | Adam) => Stepped, kind: 'sgd' | 'adam' = 'sgd', n = 30): { lr: number[][]; momentum: number[][] } {
  const o = optimizer(kind);
  const s = make(o);
  const lr = [s.getLastLr()];
  const momentum = [momenta(o)];
  for (let i = 0; i < n; i++) {
    s.step();
    lr.push(s.getLastLr());
    momentum.push(momenta(o));
  }
  return { lr, momentum };
}

const expectRows = (got: number[][], expected: readonly (readonly number[])[]) => {
  expect(got.length).toBe(expected.length);
  expected.forEach((row, i) => expectClose(got[i]!, [...row], 1e-12));
};

type Make = (o: SGD | Adam) => Stepped;
/** The fixture's schedules, built with the same arguments. */
const LR_ONLY: Array<[keyof typeof TORCH_SCHEDULES, Make]> = [
  ['lambda', (o) => new LambdaLR(o, { lrLambda: (e) => 0.95 ** e })],
  ['lambda_per_group', (o) => new LambdaLR(o, { lrLambda: [(e) => 1 / (e + 1), (e) => (e % 3 === 0 ? 0.5 : 1.0)] })],
  ['multiplicative', (o) => new MultiplicativeLR(o, { lrLambda: () => 0.9 })],
  ['multistep', (o) => new MultiStepLR(o, { milestones: [20, 5, 12, 12], gamma: 0.5 })],
  ['exponential', (o) => new ExponentialLR(o, { gamma: 0.9 })],
  ['linear', (o) => new LinearLR(o, { startFactor: 0.25, endFactor: 1.0, totalIters: 8 })],
  ['linear_down', (o) => new LinearLR(o, { startFactor: 1.0, endFactor: 0.1, totalIters: 10 })],
  ['constant', (o) => new ConstantLR(o, { factor: 0.5, totalIters: 6 })],
  ['step', (o) => new StepLR(o, { stepSize: 4, gamma: 0.7 })],
  ['cosine', (o) => new CosineAnnealingLR(o, { tMax: 7, etaMin: 0.001 })],
  ['sequential', (o) => new SequentialLR(o, {
    schedulers: [new LinearLR(o, { startFactor: 0.1, totalIters: 5 }), new ExponentialLR(o, { gamma: 0.9 })], milestones: [5],
  })],
  ['sequential3', (o) => new SequentialLR(o, {
    schedulers: [new ConstantLR(o, { factor: 0.3, totalIters: 10 }), new CosineAnnealingLR(o, { tMax: 10 }), new StepLR(o, { stepSize: 3, gamma: 0.5 })],
    milestones: [4, 14],
  })],
  ['chained', (o) => new ChainedScheduler([new ConstantLR(o, { factor: 0.5, totalIters: 4 }), new ExponentialLR(o, { gamma: 0.9 })])],
  ['chained_cosine', (o) => new ChainedScheduler([new CosineAnnealingLR(o, { tMax: 7 }), new LinearLR(o, { startFactor: 0.5, totalIters: 10 })])],
  ['cyclic_exp_range', (o) => new CyclicLR(o, { baseLr: 0.01, maxLr: 0.1, stepSizeUp: 5, mode: 'exp_range', gamma: 0.95, cycleMomentum: false })],
  ['warm_restarts', (o) => new CosineAnnealingWarmRestarts(o, { t0: 5, tMult: 2, etaMin: 0.001 })],
  ['warm_restarts_1', (o) => new CosineAnnealingWarmRestarts(o, { t0: 4 })],
];
const WITH_MOMENTUM: Array<[keyof typeof TORCH_SCHEDULES, Make, 'sgd' | 'adam']> = [
  ['onecycle', (o) => new OneCycleLR(o, { maxLr: [0.5, 0.2], totalSteps: 30 }), 'sgd'],
  ['onecycle_3phase_linear_adam', (o) => new OneCycleLR(o, {
    maxLr: 0.3, epochs: 6, stepsPerEpoch: 5, pctStart: 0.25, annealStrategy: 'linear', threePhase: true, divFactor: 10, finalDivFactor: 100,
  }), 'adam'],
  ['cyclic_triangular2', (o) => new CyclicLR(o, { baseLr: 0.01, maxLr: [0.1, 0.2], stepSizeUp: 4, stepSizeDown: 6, mode: 'triangular2' }), 'sgd'],
  ['cyclic_custom', (o) => new CyclicLR(o, {
    baseLr: 0.02, maxLr: 0.1, stepSizeUp: 3, scaleFn: (x) => 1 / (1 + 0.1 * x), scaleMode: 'iterations', baseMomentum: 0.7, maxMomentum: 0.95,
  }), 'sgd'],
];

describe('lr over 30 steps against torch.optim.lr_scheduler 1.13 (to 1e-12)', () => {
  for (const [name, make] of LR_ONLY) {
    it(name, () => expectRows(schedule(make).lr, TORCH_SCHEDULES[name] as unknown as readonly number[][]));
  }
  for (const [name, make, kind] of WITH_MOMENTUM) {
    it(`${name}: lr and momentum`, () => {
      const expected = TORCH_SCHEDULES[name] as unknown as { lr: readonly number[][]; momentum: readonly number[][] };
      const got = schedule(make, kind);
      expectRows(got.lr, expected.lr);
      expectRows(got.momentum, expected.momentum);
    });
  }

  it('CosineAnnealingWarmRestarts with fractional epochs: lr, tCur, tI and lastEpoch', () => {
    const o = optimizer();
    const s = new CosineAnnealingWarmRestarts(o, { t0: 3, tMult: 2, etaMin: 0.01 });
    const got: number[][] = [];
    for (let epoch = 0; epoch < 8; epoch++) {
      for (let i = 0; i < 4; i++) {
        s.step(epoch + i / 4);
        got.push([s.getLastLr()[0]!, s.tCur, s.tI, s.lastEpoch]);
      }
    }
    expectRows(got, TORCH_SCHEDULES.warm_restarts_fractional);
  });

  it('step(epoch) uses the closed form', () => {
    const closed: Array<[keyof typeof TORCH_SCHEDULES.closed, Make]> = [
      ['step', (o) => new StepLR(o, { stepSize: 4, gamma: 0.7 })],
      ['multistep', (o) => new MultiStepLR(o, { milestones: [3, 7, 7], gamma: 0.5 })],
      ['exponential', (o) => new ExponentialLR(o, { gamma: 0.9 })],
      ['linear', (o) => new LinearLR(o, { startFactor: 0.25, totalIters: 8 })],
      ['constant', (o) => new ConstantLR(o, { factor: 0.5, totalIters: 6 })],
      ['cosine', (o) => new CosineAnnealingLR(o, { tMax: 7, etaMin: 0.001 })],
    ];
    for (const [name, make] of closed) {
      const s = make(optimizer()) as StepLR;
      expectRows([3, 9, 5, 12].map((e) => { s.step(e); return s.getLastLr(); }), TORCH_SCHEDULES.closed[name]);
      expect(s.lastEpoch).toBe(12);
    }
  });

  it('ReduceLROnPlateau: lr, best, bad epochs and cooldown after each metric', () => {
    const M = [1.0, 0.9, 0.95, 0.91, 0.92, 0.899, 0.9, 0.9, 0.9, 0.5, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8, 0.8];
    const run = (metrics: number[], options: ConstructorParameters<typeof ReduceLROnPlateau>[1]) => {
      const o = optimizer();
      const s = new ReduceLROnPlateau(o, options);
      return metrics.map((m) => { s.step(m); return [s.getLastLr(), s.best, s.numBadEpochs, s.cooldownCounter] as const; });
    };
    const check = (got: ReturnType<typeof run>, expected: readonly (readonly [readonly number[], number, number, number])[]) => {
      expect(got.length).toBe(expected.length);
      got.forEach(([lr, ...rest], i) => {
        expectClose(lr, [...expected[i]![0]], 1e-15);
        expect(rest).toEqual(expected[i]!.slice(1));
      });
    };
    check(run(M, { patience: 2, cooldown: 1, factor: 0.5, minLr: [0.02, 0.01] }), TORCH_SCHEDULES.plateau_min);
    check(run(M.map((m) => -m), { mode: 'max', patience: 1, threshold: 0.02, thresholdMode: 'abs', factor: 0.3 }), TORCH_SCHEDULES.plateau_max_abs);
  });
});

describe('scheduler state dicts: saved mid-run, loaded with the optimizer\'s into fresh ones, the schedule continues exactly', () => {
  const all: Array<[string, Make, 'sgd' | 'adam']> = [
    ...LR_ONLY.map(([n, m]) => [n, m, 'sgd'] as [string, Make, 'sgd']),
    ...WITH_MOMENTUM,
  ];
  for (const [name, make, kind] of all) {
    it(name, () => {
      const straight = schedule(make, kind);
      const o = optimizer(kind);
      const s = make(o) as Stepped & { stateDict(): object };
      for (let i = 0; i < 10; i++) s.step();
      const saved = { optimizer: o.stateDict(), scheduler: structuredClone(s.stateDict()) };
      const o2 = optimizer(kind);
      const s2 = make(o2) as Stepped & { loadStateDict(sd: object): void; stateDict(): object };
      o2.loadStateDict(saved.optimizer as never);
      expect(s2.stateDict()).not.toEqual(saved.scheduler);
      s2.loadStateDict(saved.scheduler);
      expect(s2.stateDict()).toEqual(saved.scheduler);
      const lr = [s2.getLastLr()];
      const momentum = [momenta(o2)];
      for (let i = 0; i < 20; i++) {
        s2.step();
        lr.push(s2.getLastLr());
        momentum.push(momenta(o2));
      }
      expect(lr).toEqual(straight.lr.slice(10));
      expect(momentum).toEqual(straight.momentum.slice(10));
    });
  }

  it('ReduceLROnPlateau', () => {
    const metrics = [1, 0.9, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.6, 0.6];
    const o = optimizer() as SGD;
    const s = new ReduceLROnPlateau(o, { patience: 1 });
    metrics.slice(0, 4).forEach((m) => s.step(m));
    const saved = s.stateDict();
    const o2 = optimizer() as SGD;
    o2.loadStateDict(o.stateDict());
    const s2 = new ReduceLROnPlateau(o2, { patience: 7, mode: 'max' });
    s2.loadStateDict(saved);
    for (const m of metrics.slice(4)) {
      s.step(m);
      s2.step(m);
      expect(s2.stateDict()).toEqual(s.stateDict());
    }
    expect(s.getLastLr()[0]).toBeLessThan(0.01); // it did reduce, twice, after the load
  });

  it('a state dict is a snapshot: a later step does not show in it', () => {
    const s = new MultiStepLR(optimizer(), { milestones: [2, 4] });
    const sd = s.stateDict();
    s.step();
    s.step();
    expect(sd).toEqual({ milestones: [2, 4], gamma: 0.1, baseLrs: [0.1, 0.05], lastEpoch: 0, stepCount: 1, lastLr: [0.1, 0.05] });
  });
});

describe('LambdaLR and MultiplicativeLR state dicts: what PyTorch keeps of the lambdas', () => {
  it('a plain function is saved as null; a function carrying properties (a callable object\'s __dict__) saves and restores them', () => {
    const decay = Object.assign((e: number) => decay.base ** e, { base: 0.9 });
    const o = optimizer();
    const s = new LambdaLR(o, { lrLambda: [decay, (e) => 1 / (e + 1)] });
    s.step();
    decay.base = 0.5;
    const sd = s.stateDict();
    expect(sd.lrLambdas).toEqual([{ base: 0.5 }, null]);
    const other = Object.assign((e: number) => other.base ** e, { base: 0.9 });
    const s2 = new LambdaLR(optimizer(), { lrLambda: [other, (e) => 1 / (e + 1)] });
    s2.loadStateDict(sd);
    expect(other.base).toBe(0.5);
    s.step();
    s2.step();
    expect(s2.getLastLr()).toEqual(s.getLastLr());
    const m = new MultiplicativeLR(optimizer(), { lrLambda: () => 0.9 });
    expect(m.stateDict().lrLambdas).toEqual([null, null]);
  });

  it('lrLambdas of the wrong length or kind is refused and nothing changes', () => {
    const s = new LambdaLR(optimizer(), { lrLambda: (e) => 1 / (e + 1) });
    const sd = s.stateDict();
    expect(() => s.loadStateDict({ ...sd, lastEpoch: 7, lrLambdas: [null] })).toThrow(
      new ValueError('loadStateDict(): LambdaLR: lrLambdas must be an array of 2 entries (null or an object), got [null]'));
    expect(() => s.loadStateDict({ ...sd, lastEpoch: 7, lrLambdas: [null, 3 as never] })).toThrow(
      new TypeError('loadStateDict(): LambdaLR: lrLambdas[1] must be null or an object, got 3'));
    expect(s.lastEpoch).toBe(0);
  });
});

describe('bad scheduler options are typed errors naming the field', () => {
  const o = optimizer();
  it('simple schedules', () => {
    expectThrowsExactly(() => new MultiStepLR(o, { milestones: [3, -1] }), ValueError,
      'MultiStepLR: milestones must be an array of any number of items, each a non-negative integer, got [3,-1]');
    expectThrowsExactly(() => new ExponentialLR(o, { gamma: '0.9' as never }), TypeError, 'ExponentialLR: gamma must be a finite number, got "0.9"');
    expectThrowsExactly(() => new LinearLR(o, { startFactor: 0 }), ValueError, 'LinearLR: startFactor must be a number in (0, 1], got 0');
    expectThrowsExactly(() => new LinearLR(o, { endFactor: 1.5 }), ValueError, 'LinearLR: endFactor must be a number in [0, 1], got 1.5');
    expectThrowsExactly(() => new LinearLR(o, { totalIters: 0 }), ValueError, 'LinearLR: totalIters must be a positive integer, got 0');
    expectThrowsExactly(() => new ConstantLR(o, { factor: 1.5 }), ValueError, 'ConstantLR: factor must be a number in (0, 1], got 1.5');
    expectThrowsExactly(() => new StepLR(o, { stepSize: 2, lastEpoch: 1.5 }), ValueError, 'StepLR: lastEpoch must be an integer ≥ -1, got 1.5');
    expectThrowsExactly(() => new StepLR(o, { stepSize: 2, gama: 0.5 } as never), TypeError,
      "StepLR() got an unexpected keyword argument 'gama' (it takes stepSize, gamma, lastEpoch)");
    expectThrowsExactly(() => new CosineAnnealingWarmRestarts(o, { t0: 0 }), ValueError, 'CosineAnnealingWarmRestarts: t0 must be a positive integer, got 0');
    expectThrowsExactly(() => new CosineAnnealingWarmRestarts(o, { t0: 2, tMult: 1.5 }), ValueError, 'CosineAnnealingWarmRestarts: tMult must be a positive integer, got 1.5');
    expectThrowsExactly(() => new CosineAnnealingWarmRestarts(o, { t0: 2 }).step(-1), ValueError, 'Expected non-negative epoch, but got -1');
  });

  it('LambdaLR and MultiplicativeLR', () => {
    expectThrowsExactly(() => new LambdaLR(o, { lrLambda: [() => 1] }), ValueError, 'Expected 2 lr_lambdas, but got 1');
    expectThrowsExactly(() => new MultiplicativeLR(o, { lrLambda: 0.9 as never }), TypeError, 'MultiplicativeLR: lrLambda must be a function, got 0.9');
  });

  it('SequentialLR and ChainedScheduler (PyTorch\'s messages)', () => {
    const other = optimizer();
    const mine = new ExponentialLR(o, { gamma: 0.9 });
    expectThrowsExactly(() => new SequentialLR(o, { schedulers: [mine, new ExponentialLR(other, { gamma: 0.9 })], milestones: [3] }), ValueError,
      'Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at index 1 to be different than the optimizer passed in.');
    expectThrowsExactly(() => new SequentialLR(o, { schedulers: [mine, mine], milestones: [] }), ValueError,
      'Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers 2 and the number of milestones to be equal to 0');
    expectThrowsExactly(() => new SequentialLR(o, { schedulers: [mine, mine, mine], milestones: [5, 3] }), ValueError,
      'SequentialLR: milestones must be ascending, got [5, 3]');
    expectThrowsExactly(() => new SequentialLR(o, { schedulers: [{} as never], milestones: [] }), TypeError, 'SequentialLR: schedulers[0] must be an LRScheduler, got {}');
    expectThrowsExactly(() => new ChainedScheduler([mine, new ExponentialLR(other, { gamma: 0.9 })]), ValueError,
      'ChainedScheduler expects all schedulers to belong to the same optimizer, but got schedulers at index 0 and 1 to be different');
    expectThrowsExactly(() => new ChainedScheduler([]), TypeError, 'ChainedScheduler: schedulers must be a non-empty array of a scheduler, got []');
  });

  it('OneCycleLR', () => {
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: 0.1 }), ValueError, 'You must define either total_steps OR (epochs AND steps_per_epoch)');
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: 0.1, epochs: 2, stepsPerEpoch: 0 }), ValueError, 'OneCycleLR: stepsPerEpoch must be a positive integer, got 0');
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: 0.1, totalSteps: 10, pctStart: 1.5 }), ValueError, 'OneCycleLR: pctStart must be a number in [0, 1], got 1.5');
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: 0.1, totalSteps: 10, annealStrategy: 'exp' as never }), ValueError,
      "OneCycleLR: annealStrategy must be 'cos' or 'linear', got \"exp\"");
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: [0.1, 0.2, 0.3], totalSteps: 10 }), ValueError, 'expected 2 values for max_lr, got 3');
    expectThrowsExactly(() => new OneCycleLR(new Adagrad([param([1])]), { maxLr: 0.1, totalSteps: 10 }), ValueError,
      'optimizer must support momentum with `cycle_momentum` option enabled');
  });

  it('OneCycleLR: a phase without steps is refused before the groups change', () => {
    const fresh = optimizer();
    // pctStart·totalSteps = 1: the warm-up phase ends at step 0, where PyTorch divides by zero.
    expectThrowsExactly(() => new OneCycleLR(fresh, { maxLr: 0.1, totalSteps: 10, pctStart: 0.1 }), ValueError,
      'OneCycleLR: step 0 falls in a phase with no steps (pctStart 0.1, totalSteps 10); choose another pctStart');
    expect(fresh.paramGroups[0]).toMatchObject({ lr: 0.1, momentum: 0.9 });
    expect(fresh.paramGroups[0]!.initialLr).toBeUndefined();
  });

  it('OneCycleLR: stepping past totalSteps is a ValueError that changes nothing', () => {
    const fresh = optimizer();
    const s = new OneCycleLR(fresh, { maxLr: 0.1, totalSteps: 3 });
    for (let i = 0; i < 3; i++) s.step();
    const lrs = s.getLastLr();
    expectThrowsExactly(() => s.step(), ValueError, 'Tried to step 5 times. The specified number of total steps is 3');
    expect([s.lastEpoch, s.stepCount, s.getLastLr()]).toEqual([3, 4, lrs]);
  });

  it('CyclicLR (PyTorch 1.13 cycles SGD-style momentum only)', () => {
    expectThrowsExactly(() => new CyclicLR(optimizer('adam'), { baseLr: 0.01, maxLr: 0.1 }), ValueError,
      'optimizer must support momentum with `cycle_momentum` option enabled');
    expect(() => new CyclicLR(optimizer('adam'), { baseLr: 0.01, maxLr: 0.1, cycleMomentum: false })).not.toThrow();
    expectThrowsExactly(() => new CyclicLR(o, { baseLr: 0.01, maxLr: 0.1, mode: 'square' as never }), ValueError,
      "CyclicLR: mode must be 'triangular' or 'triangular2' or 'exp_range', got \"square\"");
    expectThrowsExactly(() => new CyclicLR(o, { baseLr: 0.01, maxLr: 0.1, stepSizeUp: 0 }), ValueError, 'CyclicLR: stepSizeUp must be a positive finite number, got 0');
  });

  it('ReduceLROnPlateau', () => {
    expectThrowsExactly(() => new ReduceLROnPlateau(o, { factor: 1 }), ValueError, 'ReduceLROnPlateau: factor must be a number in [0, 1), got 1');
    expectThrowsExactly(() => new ReduceLROnPlateau(o, { mode: 'avg' as never }), ValueError, "ReduceLROnPlateau: mode must be 'min' or 'max', got \"avg\"");
    expectThrowsExactly(() => new ReduceLROnPlateau(o, { minLr: [0] }), ValueError, 'expected 2 min_lrs, got 1');
    expectThrowsExactly(() => new ReduceLROnPlateau(o).step('0.5' as never), TypeError,
      'ReduceLROnPlateau.step(): the metric must be a number (read a tensor with `await t.item()`), got "0.5"');
  });
});

describe('loadStateDict checks every field before changing anything', () => {
  it('a bad type or range is a typed error naming the field', () => {
    const o = optimizer();
    const s = new StepLR(o, { stepSize: 2 });
    s.step();
    const sd = s.stateDict();
    const before = JSON.stringify(s.stateDict());
    const refused = (bad: object, cls: new (...a: never[]) => Error, message: string) => {
      expectThrowsExactly(() => s.loadStateDict({ ...sd, ...bad } as never), cls, message);
      expect(JSON.stringify(s.stateDict())).toBe(before);
    };
    refused({ stepSize: 'two' }, TypeError, 'loadStateDict(): StepLR: stepSize must be a positive integer, got "two"');
    refused({ gamma: Infinity }, ValueError, 'loadStateDict(): StepLR: gamma must be a finite number, got null');
    refused({ lastEpoch: -2 }, ValueError, 'loadStateDict(): StepLR: lastEpoch must be an integer ≥ -1, got -2');
    refused({ stepCount: 1.5 }, ValueError, 'loadStateDict(): StepLR: stepCount must be a non-negative integer, got 1.5');
    refused({ lastLr: [0.1] }, ValueError, 'loaded scheduler state has 1 last lrs, but the optimizer has 2 parameter groups');
    refused({ baseLrs: 'x' }, TypeError, 'loadStateDict(): StepLR: baseLrs must be an array of any number of items, each a finite number, got "x"');
    const { gamma: _gamma, ...noGamma } = sd;
    expectThrowsExactly(() => s.loadStateDict(noGamma as never), TypeError, "StepLR.loadStateDict(): the state dict has no 'gamma'");
    expectThrowsExactly(() => s.loadStateDict(null as never), TypeError, 'StepLR.loadStateDict(): expected a state dict as returned by stateDict(), got null');
  });

  it('OneCycleLR, CyclicLR, CosineAnnealingWarmRestarts and ReduceLROnPlateau check their own fields', () => {
    const one = new OneCycleLR(optimizer(), { maxLr: 0.1, totalSteps: 10 });
    expectThrowsExactly(() => one.loadStateDict({ ...one.stateDict(), annealStrategy: 'exp' }), ValueError,
      "loadStateDict(): OneCycleLR: annealStrategy must be 'cos' or 'linear', got \"exp\"");
    const cyc = new CyclicLR(optimizer(), { baseLr: 0.01, maxLr: 0.1 });
    expectThrowsExactly(() => cyc.loadStateDict({ ...cyc.stateDict(), maxLrs: [0.1] }), ValueError,
      'loadStateDict(): CyclicLR: maxLrs must be an array of 2 items, each a finite number ≥ 0, got [0.1]');
    const warm = new CosineAnnealingWarmRestarts(optimizer(), { t0: 3 });
    expectThrowsExactly(() => warm.loadStateDict({ ...warm.stateDict(), tI: 0 }), ValueError,
      'loadStateDict(): CosineAnnealingWarmRestarts: tI must be a positive finite number, got 0');
    const plateau = new ReduceLROnPlateau(optimizer());
    expectThrowsExactly(() => plateau.loadStateDict({ ...plateau.stateDict(), numBadEpochs: -1 }), ValueError,
      'loadStateDict(): ReduceLROnPlateau: numBadEpochs must be a non-negative integer, got -1');
    expect(plateau.numBadEpochs).toBe(0);
  });

  it('SequentialLR and ChainedScheduler: a bad child state leaves every child as it was', () => {
    const o = optimizer();
    const first = new ConstantLR(o, { factor: 0.5, totalIters: 3 });
    const second = new ExponentialLR(o, { gamma: 0.9 });
    const seq = new SequentialLR(o, { schedulers: [first, second], milestones: [3] });
    for (let i = 0; i < 5; i++) seq.step();
    const sd = seq.stateDict();
    const children = JSON.stringify([first.stateDict(), second.stateDict()]);
    const bad = { ...sd, lastEpoch: 9, schedulers: [{ ...(sd.schedulers[0] as object), lastEpoch: 9 }, { ...(sd.schedulers[1] as object), gamma: 'x' }] };
    expectThrowsExactly(() => seq.loadStateDict(bad), TypeError, 'loadStateDict(): ExponentialLR: gamma must be a finite number, got "x"');
    expect(JSON.stringify([first.stateDict(), second.stateDict()])).toBe(children);
    expect(seq.lastEpoch).toBe(5);
    expectThrowsExactly(() => seq.loadStateDict({ ...sd, milestones: [1, 2] }), ValueError,
      'loadStateDict(): Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers 2 and the number of milestones to be equal to 2');
    const chain = new ChainedScheduler([first, second]);
    expectThrowsExactly(() => chain.loadStateDict({ lastLr: [0.1, 0.05], schedulers: [] }), ValueError,
      'loadStateDict(): ChainedScheduler: schedulers must hold 2 state dicts, got []');
  });
});

describe('schedules drive the optimizer', () => {
  it('OneCycleLR records maxLr and minLr on the groups and cycles Adam\'s beta1 (beta2 kept)', () => {
    const o = optimizer('adam') as Adam;
    new OneCycleLR(o, { maxLr: 0.4, totalSteps: 10 });
    expect(o.paramGroups[0]).toMatchObject({ initialLr: 0.016, maxLr: 0.4, minLr: 0.016 / 1e4, maxMomentum: 0.95, baseMomentum: 0.85, betas: [0.95, 0.999] });
    // The group fields travel with the optimizer's state dict, as in PyTorch.
    expect(o.stateDict().paramGroups[0]).toMatchObject({ maxLr: 0.4, minLr: 0.016 / 1e4 });
  });

  it('resuming OneCycleLR needs its group fields', () => {
    const o = optimizer();
    o.paramGroups.forEach((g) => { g.initialLr = 0.01; });
    expectThrowsExactly(() => new OneCycleLR(o, { maxLr: 0.1, totalSteps: 10, lastEpoch: 3 }), ValueError,
      "param 'maxLr' is not specified in paramGroups[0] when resuming an optimizer");
  });

  it('getLastLr returns a copy', () => {
    const s = new ExponentialLR(optimizer(), { gamma: 0.5 });
    s.getLastLr()[0] = 7;
    expect(s.getLastLr()).toEqual([0.1, 0.05]);
  });

  it('a scheduler works with any object that has paramGroups with an lr', () => {
    const bare: SchedulableOptimizer = { paramGroups: [{ lr: 1 }] };
    const s = new LinearLR(bare, { startFactor: 0.5, totalIters: 2 });
    s.step();
    s.step();
    expect(bare.paramGroups[0]!.lr).toBe(1);
    expect(() => new CyclicLR(bare, { baseLr: 0.1, maxLr: 1 })).toThrow(new ValueError('optimizer must support momentum with `cycle_momentum` option enabled'));
  });
});

