// Optimizer and scheduler constructors bound as Python binds PyTorch's: hyperparameters by
// position in PyTorch's order, by name in a trailing options object, or both; keyword-only ones by
// name only.
import { describe, expect, it } from 'vitest';
import { float64, tensor, type Tensor, ValueError } from '@core/tensor';
import {
  Adadelta, Adagrad, Adam, Adamax, AdamW, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR, LambdaLR,
  LBFGS, LinearLR, MultiplicativeLR, MultiStepLR, NAdam, OneCycleLR, RAdam, ReduceLROnPlateau, RMSprop, SequentialLR, SGD, StepLR,
  type Optimizer,
} from '../src/index.js';
import { expectClose, expectThrowsExactly, param, values } from './helpers.js';

type Make = (params: Tensor[]) => Optimizer<object, object>;

interface Case {
  /** The PyTorch 1.13 call the positional form ports. */
  readonly call: string;
  /**
   * That call's `param_groups[0]` in PyTorch 1.13, names in camelCase, without `params` and the
   * `foreach`/`capturable`/`differentiable`/`fused` flags this library does not take.
   */
  readonly group: Readonly<Record<string, unknown>>;
  readonly positional: Make;
  readonly keyword: Make;
  /** The first hyperparameters by position, the rest by name. */
  readonly mixed: Make;
}

const CASES: readonly Case[] = [
  {
    call: 'OPT-4: SGD(params, 0.05, 0.8, 0.3, 0.01, False)',
    group: { lr: 0.05, momentum: 0.8, dampening: 0.3, weightDecay: 0.01, nesterov: false, maximize: false },
    positional: (ps) => new SGD(ps, 0.05, 0.8, 0.3, 0.01, false),
    keyword: (ps) => new SGD(ps, { lr: 0.05, momentum: 0.8, dampening: 0.3, weightDecay: 0.01 }),
    mixed: (ps) => new SGD(ps, 0.05, 0.8, { dampening: 0.3, weightDecay: 0.01 }),
  },
  {
    call: 'OPT-4: SGD(params, 0.05, 0.9, 0, 0.01, True, maximize=True)',
    group: { lr: 0.05, momentum: 0.9, dampening: 0, weightDecay: 0.01, nesterov: true, maximize: true },
    positional: (ps) => new SGD(ps, 0.05, 0.9, 0, 0.01, true, { maximize: true }),
    keyword: (ps) => new SGD(ps, { lr: 0.05, momentum: 0.9, weightDecay: 0.01, nesterov: true, maximize: true }),
    mixed: (ps) => new SGD(ps, 0.05, { momentum: 0.9, nesterov: true, weightDecay: 0.01, maximize: true }),
  },
  {
    call: 'OPT-7: Adam(params, 0.01, (0.8, 0.95), 1e-6, 0.1, True)',
    group: { lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, amsgrad: true, maximize: false },
    positional: (ps) => new Adam(ps, 0.01, [0.8, 0.95], 1e-6, 0.1, true),
    keyword: (ps) => new Adam(ps, { lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, amsgrad: true }),
    mixed: (ps) => new Adam(ps, 0.01, [0.8, 0.95], { amsgrad: true, eps: 1e-6, weightDecay: 0.1 }),
  },
  {
    call: 'AdamW(params, 0.01, (0.8, 0.95), 1e-6, 0.2, True)',
    group: { lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.2, amsgrad: true, maximize: false },
    positional: (ps) => new AdamW(ps, 0.01, [0.8, 0.95], 1e-6, 0.2, true),
    keyword: (ps) => new AdamW(ps, { lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.2, amsgrad: true }),
    mixed: (ps) => new AdamW(ps, 0.01, { betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.2, amsgrad: true }),
  },
  {
    call: 'OPT-9: AdamW(params, 0.01) keeps its own weight_decay default',
    group: { lr: 0.01, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, amsgrad: false, maximize: false },
    positional: (ps) => new AdamW(ps, 0.01),
    keyword: (ps) => new AdamW(ps, { lr: 0.01 }),
    mixed: (ps) => new AdamW(ps, 0.01, {}),
  },
  {
    call: 'RMSprop(params, 0.01, 0.9, 1e-6, 0.1, 0.5, True)',
    group: { lr: 0.01, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, momentum: 0.5, centered: true, maximize: false },
    positional: (ps) => new RMSprop(ps, 0.01, 0.9, 1e-6, 0.1, 0.5, true),
    keyword: (ps) => new RMSprop(ps, { lr: 0.01, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, momentum: 0.5, centered: true }),
    mixed: (ps) => new RMSprop(ps, 0.01, 0.9, 1e-6, { centered: true, momentum: 0.5, weightDecay: 0.1 }),
  },
  {
    call: 'Adagrad(params, 0.1, 0.01, 0.05, 0.2, 1e-8)',
    group: { lr: 0.1, lrDecay: 0.01, weightDecay: 0.05, initialAccumulatorValue: 0.2, eps: 1e-8, maximize: false },
    positional: (ps) => new Adagrad(ps, 0.1, 0.01, 0.05, 0.2, 1e-8),
    keyword: (ps) => new Adagrad(ps, { lr: 0.1, lrDecay: 0.01, weightDecay: 0.05, initialAccumulatorValue: 0.2, eps: 1e-8 }),
    mixed: (ps) => new Adagrad(ps, 0.1, 0.01, { eps: 1e-8, initialAccumulatorValue: 0.2, weightDecay: 0.05 }),
  },
  {
    call: 'Adadelta(params, 0.5, 0.8, 1e-5, 0.1)',
    group: { lr: 0.5, rho: 0.8, eps: 1e-5, weightDecay: 0.1, maximize: false },
    positional: (ps) => new Adadelta(ps, 0.5, 0.8, 1e-5, 0.1),
    keyword: (ps) => new Adadelta(ps, { lr: 0.5, rho: 0.8, eps: 1e-5, weightDecay: 0.1 }),
    mixed: (ps) => new Adadelta(ps, 0.5, 0.8, { weightDecay: 0.1, eps: 1e-5 }),
  },
  {
    call: 'Adamax(params, 0.02, (0.8, 0.95), 1e-6, 0.1)',
    group: { lr: 0.02, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, maximize: false },
    positional: (ps) => new Adamax(ps, 0.02, [0.8, 0.95], 1e-6, 0.1),
    keyword: (ps) => new Adamax(ps, { lr: 0.02, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1 }),
    mixed: (ps) => new Adamax(ps, 0.02, { weightDecay: 0.1, betas: [0.8, 0.95], eps: 1e-6 }),
  },
  {
    call: 'NAdam(params, 0.02, (0.8, 0.95), 1e-6, 0.1, 0.01)',
    group: { lr: 0.02, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, momentumDecay: 0.01 },
    positional: (ps) => new NAdam(ps, 0.02, [0.8, 0.95], 1e-6, 0.1, 0.01),
    keyword: (ps) => new NAdam(ps, { lr: 0.02, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, momentumDecay: 0.01 }),
    mixed: (ps) => new NAdam(ps, 0.02, [0.8, 0.95], 1e-6, { momentumDecay: 0.01, weightDecay: 0.1 }),
  },
  {
    call: 'RAdam(params, 0.02, (0.8, 0.9), 1e-6, 0.1)',
    group: { lr: 0.02, betas: [0.8, 0.9], eps: 1e-6, weightDecay: 0.1 },
    positional: (ps) => new RAdam(ps, 0.02, [0.8, 0.9], 1e-6, 0.1),
    keyword: (ps) => new RAdam(ps, { lr: 0.02, betas: [0.8, 0.9], eps: 1e-6, weightDecay: 0.1 }),
    mixed: (ps) => new RAdam(ps, 0.02, [0.8, 0.9], { weightDecay: 0.1, eps: 1e-6 }),
  },
  {
    call: "LBFGS(params, 0.5, 7, 9, 1e-5, 1e-8, 4, 'strong_wolfe')",
    group: { lr: 0.5, maxIter: 7, maxEval: 9, toleranceGrad: 1e-5, toleranceChange: 1e-8, historySize: 4, lineSearchFn: 'strong_wolfe' },
    positional: (ps) => new LBFGS(ps, 0.5, 7, 9, 1e-5, 1e-8, 4, 'strong_wolfe'),
    keyword: (ps) => new LBFGS(ps, { lr: 0.5, maxIter: 7, maxEval: 9, toleranceGrad: 1e-5, toleranceChange: 1e-8, historySize: 4, lineSearchFn: 'strong_wolfe' }),
    mixed: (ps) => new LBFGS(ps, 0.5, 7, { lineSearchFn: 'strong_wolfe', historySize: 4, maxEval: 9, toleranceGrad: 1e-5, toleranceChange: 1e-8 }),
  },
  {
    call: 'LBFGS(params, 1, 8): max_eval defaults to max_iter * 5 // 4 of the positional max_iter',
    group: { lr: 1, maxIter: 8, maxEval: 10, toleranceGrad: 1e-7, toleranceChange: 1e-9, historySize: 100, lineSearchFn: null },
    positional: (ps) => new LBFGS(ps, 1, 8),
    keyword: (ps) => new LBFGS(ps, { lr: 1, maxIter: 8 }),
    mixed: (ps) => new LBFGS(ps, 1, { maxIter: 8 }),
  },
];

/** A group's hyperparameters: everything but its tensors. */
function hyperparameters(opt: Optimizer<object, object>): Record<string, unknown> {
  const { params: _params, ...rest } = opt.paramGroups[0]!;
  return rest;
}

/** The parameters after two steps on a float64 quadratic, each step through a closure (LBFGS needs one). */
function twoSteps(make: Make): number[] {
  const p = param([1, -2, 0.5], float64);
  const target = tensor([0.3, 0.4, -1], { dtype: float64 });
  const weights = tensor([1, 3, 0.5], { dtype: float64 });
  const opt = make([p]);
  const closure = () => {
    opt.zeroGrad();
    const loss = p.sub(target).square().mul(weights).sum();
    loss.backward();
    return loss;
  };
  for (let i = 0; i < 2; i++) opt.step(closure);
  return values(p);
}

describe('hyperparameters by position, in PyTorch 1.13’s order', () => {
  for (const { call, group, positional, keyword, mixed } of CASES) {
    it(`${call}: the same group as PyTorch's and as the keyword and mixed forms`, () => {
      for (const make of [positional, keyword, mixed]) {
        const opt = make([param([1, 2])]);
        expect(hyperparameters(opt)).toEqual(group);
        expect(opt.defaults).toEqual(group);
      }
    });

    it(`${call}: two steps give the same parameters as the keyword and mixed forms`, () => {
      const byPosition = twoSteps(positional);
      expect(byPosition).not.toEqual([1, -2, 0.5]);
      expect(twoSteps(keyword)).toEqual(byPosition);
      expect(twoSteps(mixed)).toEqual(byPosition);
    });
  }

  it('undefined skips a positional argument (its default applies), also before a name for it', () => {
    const p = param([1]);
    expect(hyperparameters(new SGD([p], undefined, 0.9))).toMatchObject({ lr: 1e-3, momentum: 0.9 });
    expect(hyperparameters(new SGD([p], undefined, 0.9, { lr: 0.2 }))).toMatchObject({ lr: 0.2, momentum: 0.9 });
    expect(hyperparameters(new Adam([p], 0.01, undefined, 1e-6))).toMatchObject({ lr: 0.01, betas: [0.9, 0.999], eps: 1e-6 });
    expect(hyperparameters(new SGD([p], 0.1, undefined))).toEqual(hyperparameters(new SGD([p], { lr: 0.1 })));
  });

  it('positional hyperparameters are the defaults of every group; a group’s own options override them', () => {
    const [a, b] = [param([1]), param([2])];
    const opt = new SGD([{ params: [a] }, { params: [b], lr: 0.5 }], 0.1, 0.9);
    expect(opt.paramGroups.map((g) => [g.lr, g.momentum])).toEqual([[0.1, 0.9], [0.5, 0.9]]);
    opt.addParamGroup({ params: [param([3])] });
    expect(opt.paramGroups[2]).toMatchObject({ lr: 0.1, momentum: 0.9 });
  });

  it('a positional value gets the same checks as a named one', () => {
    const p = param([1]);
    expectThrowsExactly(() => new SGD([p], -0.1), ValueError, 'Invalid learning rate: -0.1');
    expectThrowsExactly(() => new RMSprop([p], 0.01, 0.9, 1e-8, 0, 0, 1 as never), ValueError, 'Invalid centered value: 1 (expected true or false)');
    expectThrowsExactly(() => new SGD([p], 0.1, 0, 0, 0, true), ValueError, 'Nesterov momentum requires a momentum and zero dampening');
    // @ts-expect-error: betas is a pair
    expectThrowsExactly(() => new Adam([p], 0.01, 0.9), TypeError, 'betas must be a pair [beta1, beta2], got 0.9');
  });
});

describe('binding errors are TypeErrors naming the argument', () => {
  const p = param([1]);

  it('more positional values than PyTorch’s positional parameters', () => {
    // @ts-expect-error: SGD takes five positional hyperparameters
    expectThrowsExactly(() => new SGD([p], 0.1, 0.9, 0, 0, false, true), TypeError,
      'SGD() takes at most 5 positional arguments (lr, momentum, dampening, weightDecay, nesterov) but 6 were given');
    // @ts-expect-error: RAdam takes four
    expectThrowsExactly(() => new RAdam([p], 0.01, [0.9, 0.999], 1e-8, 0, 0.1), TypeError,
      'RAdam() takes at most 4 positional arguments (lr, betas, eps, weightDecay) but 5 were given');
  });

  it('a keyword-only hyperparameter given by position (maximize is keyword-only, or comes after foreach)', () => {
    // @ts-expect-error: maximize is keyword-only
    expectThrowsExactly(() => new Adam([p], 0.01, [0.9, 0.999], 1e-8, 0, false, true), TypeError,
      'Adam() takes at most 5 positional arguments (lr, betas, eps, weightDecay, amsgrad) but 6 were given');
    // @ts-expect-error: PyTorch's seventh is foreach, which this library does not take
    expectThrowsExactly(() => new RMSprop([p], 0.01, 0.99, 1e-8, 0, 0, false, true), TypeError,
      'RMSprop() takes at most 6 positional arguments (lr, alpha, eps, weightDecay, momentum, centered) but 7 were given');
    // @ts-expect-error: maximize is keyword-only
    expectThrowsExactly(() => new Adagrad([p], 0.1, 0, 0, 0, 1e-10, true), TypeError,
      'Adagrad() takes at most 5 positional arguments (lr, lrDecay, weightDecay, initialAccumulatorValue, eps) but 6 were given');
    expect(new Adagrad([p], 0.1, 0, 0, 0, 1e-10, { maximize: true }).defaults.maximize).toBe(true);
  });

  it('a hyperparameter given by position and by name', () => {
    // The type allows it (the options object may name any option); Python's binding refuses it.
    expectThrowsExactly(() => new Adam([p], 0.1, { lr: 0.2 }), TypeError,
      "Adam() got multiple values for argument 'lr' (given by position and by name)");
    expectThrowsExactly(() => new LBFGS([p], 1, 20, 25, { maxEval: 30 }), TypeError,
      "LBFGS() got multiple values for argument 'maxEval' (given by position and by name)");
  });

  it('a name the optimizer does not have, also after positional values', () => {
    expectThrowsExactly(() => new SGD([p], 0.1, { weight_decay: 0.1 } as never), TypeError,
      "SGD() got an unexpected keyword argument 'weight_decay' (it takes lr, momentum, dampening, weightDecay, nesterov, maximize)");
    expectThrowsExactly(() => new AdamW([p], 0.1, [0.9, 0.999], { momentum: 0.9 } as never), TypeError,
      "AdamW() got an unexpected keyword argument 'momentum' (it takes lr, betas, eps, weightDecay, amsgrad, maximize)");
  });
});

interface Scheduled {
  step(metric?: number): void;
  stateDict(): object;
}
type MakeScheduler = (optimizer: SGD) => Scheduled;

interface SchedulerCase {
  /** The PyTorch 1.13 call the positional form ports, on `SGD(params, 0.1, 0.9)`. */
  readonly call: string;
  /** PyTorch's lr (and, where it cycles, momentum) after construction and after each `step()`, or after each `step(metric)` of `metrics`. */
  readonly lrs: readonly number[];
  readonly momentum?: readonly number[];
  readonly metrics?: readonly number[];
  readonly positional: MakeScheduler;
  readonly keyword: MakeScheduler;
  /** The first arguments by position, the rest by name. */
  readonly mixed: MakeScheduler;
}

// Reference values: torch 1.13, `o = torch.optim.SGD([torch.zeros(1, requires_grad=True)], 0.1, 0.9)`,
// `s = <call>`, then `o.param_groups[0]['lr']` (and `['momentum']`) after construction and after each
// of six `o.step(); s.step()` (ReduceLROnPlateau: after each `s.step(metric)`).
const SCHEDULER_CASES: readonly SchedulerCase[] = [
  {
    call: 'StepLR(o, 2, 0.5)',
    lrs: [0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125],
    positional: (o) => new StepLR(o, 2, 0.5),
    keyword: (o) => new StepLR(o, { stepSize: 2, gamma: 0.5 }),
    mixed: (o) => new StepLR(o, 2, { gamma: 0.5 }),
  },
  {
    call: 'MultiStepLR(o, [1, 3], 0.5)',
    lrs: [0.1, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025],
    positional: (o) => new MultiStepLR(o, [1, 3], 0.5),
    keyword: (o) => new MultiStepLR(o, { milestones: [1, 3], gamma: 0.5 }),
    mixed: (o) => new MultiStepLR(o, [1, 3], { gamma: 0.5 }),
  },
  {
    call: 'ExponentialLR(o, 0.9)',
    lrs: [0.1, 0.09000000000000001, 0.08100000000000002, 0.07290000000000002, 0.06561000000000002, 0.05904900000000002, 0.05314410000000002],
    positional: (o) => new ExponentialLR(o, 0.9),
    keyword: (o) => new ExponentialLR(o, { gamma: 0.9 }),
    mixed: (o) => new ExponentialLR(o, 0.9, {}),
  },
  {
    call: 'ConstantLR(o, 0.5, 3)',
    lrs: [0.05, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1],
    positional: (o) => new ConstantLR(o, 0.5, 3),
    keyword: (o) => new ConstantLR(o, { factor: 0.5, totalIters: 3 }),
    mixed: (o) => new ConstantLR(o, 0.5, { totalIters: 3 }),
  },
  {
    call: 'LinearLR(o, 0.25, 0.75, 4)',
    lrs: [0.025, 0.037500000000000006, 0.05, 0.0625, 0.075, 0.075, 0.075],
    positional: (o) => new LinearLR(o, 0.25, 0.75, 4),
    keyword: (o) => new LinearLR(o, { startFactor: 0.25, endFactor: 0.75, totalIters: 4 }),
    mixed: (o) => new LinearLR(o, 0.25, { totalIters: 4, endFactor: 0.75 }),
  },
  {
    call: 'CosineAnnealingLR(o, 4, 0.01)',
    lrs: [0.1, 0.08681980515339464, 0.05500000000000001, 0.023180194846605363, 0.01, 0.023180194846605363, 0.05500000000000002],
    positional: (o) => new CosineAnnealingLR(o, 4, 0.01),
    keyword: (o) => new CosineAnnealingLR(o, { tMax: 4, etaMin: 0.01 }),
    mixed: (o) => new CosineAnnealingLR(o, 4, { etaMin: 0.01 }),
  },
  {
    call: 'LambdaLR(o, lambda e: 0.9 ** e)',
    lrs: [0.1, 0.09000000000000001, 0.08100000000000002, 0.0729, 0.06561, 0.05904900000000001, 0.05314410000000001],
    positional: (o) => new LambdaLR(o, (e) => 0.9 ** e),
    keyword: (o) => new LambdaLR(o, { lrLambda: (e) => 0.9 ** e }),
    mixed: (o) => new LambdaLR(o, (e) => 0.9 ** e, { lastEpoch: -1 }),
  },
  {
    call: 'MultiplicativeLR(o, lambda e: 0.8)',
    lrs: [0.1, 0.08000000000000002, 0.06400000000000002, 0.051200000000000016, 0.04096000000000002, 0.03276800000000001, 0.026214400000000013],
    positional: (o) => new MultiplicativeLR(o, () => 0.8),
    keyword: (o) => new MultiplicativeLR(o, { lrLambda: () => 0.8 }),
    mixed: (o) => new MultiplicativeLR(o, () => 0.8, {}),
  },
  {
    call: "CyclicLR(o, 0.01, 0.1, 2, 3, 'exp_range', 0.9, None, 'cycle', True, 0.7, 0.95)",
    lrs: [0.01, 0.0505, 0.0829, 0.05374, 0.029683, 0.01, 0.03391484500000003],
    momentum: [0.95, 0.8375, 0.7475, 0.8285, 0.8953249999999999, 0.95, 0.8835698749999998],
    positional: (o) => new CyclicLR(o, 0.01, 0.1, 2, 3, 'exp_range', 0.9, null, 'cycle', true, 0.7, 0.95),
    keyword: (o) => new CyclicLR(o, { baseLr: 0.01, maxLr: 0.1, stepSizeUp: 2, stepSizeDown: 3, mode: 'exp_range', gamma: 0.9, baseMomentum: 0.7, maxMomentum: 0.95 }),
    mixed: (o) => new CyclicLR(o, 0.01, { maxLr: 0.1, stepSizeDown: 3, stepSizeUp: 2, gamma: 0.9, mode: 'exp_range', maxMomentum: 0.95, baseMomentum: 0.7 }),
  },
  {
    call: "OneCycleLR(o, 0.5, 10, None, None, 0.4, 'linear', True, 0.8, 0.9, 10.0, 100.0, True)",
    lrs: [0.05, 0.2, 0.35, 0.5, 0.35, 0.2, 0.04999999999999999],
    momentum: [0.9, 0.8666666666666667, 0.8333333333333334, 0.8, 0.8333333333333334, 0.8666666666666667, 0.9],
    positional: (o) => new OneCycleLR(o, 0.5, 10, null, null, 0.4, 'linear', true, 0.8, 0.9, 10, 100, true),
    keyword: (o) => new OneCycleLR(o, {
      maxLr: 0.5, totalSteps: 10, pctStart: 0.4, annealStrategy: 'linear', baseMomentum: 0.8, maxMomentum: 0.9, divFactor: 10, finalDivFactor: 100, threePhase: true,
    }),
    mixed: (o) => new OneCycleLR(o, 0.5, 10, undefined, undefined, 0.4, { threePhase: true, annealStrategy: 'linear', divFactor: 10, finalDivFactor: 100, baseMomentum: 0.8, maxMomentum: 0.9 }),
  },
  {
    call: 'CosineAnnealingWarmRestarts(o, 2, 2, 0.01)',
    lrs: [0.1, 0.05500000000000001, 0.1, 0.08681980515339464, 0.05500000000000001, 0.023180194846605363, 0.1],
    positional: (o) => new CosineAnnealingWarmRestarts(o, 2, 2, 0.01),
    keyword: (o) => new CosineAnnealingWarmRestarts(o, { t0: 2, tMult: 2, etaMin: 0.01 }),
    mixed: (o) => new CosineAnnealingWarmRestarts(o, 2, { etaMin: 0.01, tMult: 2 }),
  },
  {
    call: 'SequentialLR(o, [ConstantLR(o, 0.5, 2), ExponentialLR(o, 0.9)], [2])',
    lrs: [0.05, 0.05, 0.1, 0.09000000000000001, 0.08100000000000002, 0.07290000000000002, 0.06561000000000002],
    positional: (o) => new SequentialLR(o, [new ConstantLR(o, 0.5, 2), new ExponentialLR(o, 0.9)], [2]),
    keyword: (o) => new SequentialLR(o, { schedulers: [new ConstantLR(o, { factor: 0.5, totalIters: 2 }), new ExponentialLR(o, { gamma: 0.9 })], milestones: [2] }),
    mixed: (o) => new SequentialLR(o, [new ConstantLR(o, 0.5, { totalIters: 2 }), new ExponentialLR(o, { gamma: 0.9 })], { milestones: [2] }),
  },
  {
    call: "ReduceLROnPlateau(o, 'max', 0.5, 1, 0.01, 'abs', 1, 0.001, 1e-9), stepped with 1.0, 1.005, 1.02, then 1.0 five times",
    metrics: [1.0, 1.005, 1.02, 1.0, 1.0, 1.0, 1.0, 1.0],
    lrs: [0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025],
    positional: (o) => new ReduceLROnPlateau(o, 'max', 0.5, 1, 0.01, 'abs', 1, 0.001, 1e-9),
    keyword: (o) => new ReduceLROnPlateau(o, { mode: 'max', factor: 0.5, patience: 1, threshold: 0.01, thresholdMode: 'abs', cooldown: 1, minLr: 0.001, eps: 1e-9 }),
    mixed: (o) => new ReduceLROnPlateau(o, 'max', 0.5, { patience: 1, threshold: 0.01, thresholdMode: 'abs', cooldown: 1, minLr: 0.001, eps: 1e-9 }),
  },
];

/** Run a schedule on `SGD(params, 0.1, 0.9)` as the reference did: the lrs and momenta it set, and its state dict. */
function schedule(make: MakeScheduler, metrics: readonly number[] | undefined): { lrs: number[]; momentum: number[]; state: object } {
  const opt = new SGD([param([0])], 0.1, 0.9);
  const scheduler = make(opt);
  const group = opt.paramGroups[0]!;
  const lrs = metrics ? [] : [group.lr];
  const momentum = metrics ? [] : [group.momentum];
  for (const metric of metrics ?? Array<undefined>(6).fill(undefined)) {
    scheduler.step(metric);
    lrs.push(group.lr);
    momentum.push(group.momentum);
  }
  return { lrs, momentum, state: scheduler.stateDict() };
}

describe('schedulers: arguments by position, in PyTorch 1.13’s order', () => {
  for (const { call, lrs, momentum, metrics, positional, keyword, mixed } of SCHEDULER_CASES) {
    it(`${call}: PyTorch's lrs (to 1e-12), the same as the keyword and mixed forms`, () => {
      const byPosition = schedule(positional, metrics);
      expectClose(byPosition.lrs, [...lrs], 1e-12);
      if (momentum) expectClose(byPosition.momentum, [...momentum], 1e-12);
      for (const make of [keyword, mixed]) expect(schedule(make, metrics)).toEqual(byPosition);
    });
  }

  it('resuming by position: lastEpoch is the last positional argument', () => {
    const opt = new SGD([param([0])], 0.1);
    opt.paramGroups[0]!.initialLr = 0.1;
    const scheduler = new StepLR(opt, 2, 0.5, 3);
    // torch 1.13: with initial_lr set, StepLR(o, 2, 0.5, 3) steps to epoch 4 and halves the lr: 0.05.
    expect(scheduler.lastEpoch).toBe(4);
    expect(opt.paramGroups[0]!.lr).toBeCloseTo(0.05, 15);
  });
});

describe('scheduler binding errors are TypeErrors naming the argument', () => {
  const opt = new SGD([param([0])], 0.1, 0.9);

  it('a required argument given neither way', () => {
    // @ts-expect-error: stepSize is required
    expectThrowsExactly(() => new StepLR(opt), TypeError, "StepLR() missing required argument 'stepSize'");
    expectThrowsExactly(() => new StepLR(opt, { gamma: 0.5 } as never), TypeError, "StepLR() missing required argument 'stepSize'");
    // @ts-expect-error: maxLr is required too
    expectThrowsExactly(() => new CyclicLR(opt, 0.01), TypeError, "CyclicLR() missing required argument 'maxLr'");
    expect(opt.paramGroups[0]).toMatchObject({ lr: 0.1, momentum: 0.9 });
  });

  it('more positional values than parameters (PyTorch’s verbose is not taken)', () => {
    // @ts-expect-error: PyTorch's fourth is verbose
    expectThrowsExactly(() => new ExponentialLR(opt, 0.9, -1, false), TypeError,
      'ExponentialLR() takes at most 2 positional arguments (gamma, lastEpoch) but 3 were given');
  });

  it('an argument given by position and by name, or a name the scheduler does not have', () => {
    expectThrowsExactly(() => new StepLR(opt, 2, { stepSize: 3 }), TypeError,
      "StepLR() got multiple values for argument 'stepSize' (given by position and by name)");
    expectThrowsExactly(() => new ReduceLROnPlateau(opt, 'min', { verbose: true } as never), TypeError,
      "ReduceLROnPlateau() got an unexpected keyword argument 'verbose' (it takes mode, factor, patience, threshold, thresholdMode, cooldown, minLr, eps)");
    expect(opt.paramGroups[0]).toMatchObject({ lr: 0.1, momentum: 0.9 });
  });
});
