// RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam (and Adam/AdamW/SGD's flags) against
// torch.optim 1.13: float64 trajectories to 1e-12, PyTorch's defaults, option checks and state.
import { describe, expect, it } from 'vitest';
import { float32, float64, type Tensor, ValueError } from '@core/tensor';
import {
  Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop, SGD, type FirstOrderOptimizer,
} from '../src/index.js';
import { TORCH_TRAJECTORIES } from './fixtures/torch-optimizers.js';
import { expectClose, expectThrowsExactly, param, setGrad, values } from './helpers.js';

/** The start and the gradient sequence of the fixture's script. */
const P0 = [1.0, -2.0, 0.5];
const G = [[0.5, -1.2, 0.3], [0.4, -0.9, -0.2], [0.1, -0.5, 0.25], [-0.3, 0.2, -0.1], [0.6, 0.05, 0.0],
  [-0.2, 0.7, 0.4], [0.3, -0.4, -0.6], [0.0, 0.9, 0.1], [-0.5, -0.3, 0.2], [0.25, 0.1, -0.35]];

type Make = (params: Tensor[]) => FirstOrderOptimizer<object, object>;

/** p after each step, from P0 with the gradients G. */
function trajectory(make: Make, dtype = float64): number[][] {
  const p = param(P0, dtype);
  const opt = make([p]);
  return G.map((g) => {
    setGrad(p, g);
    opt.step();
    return values(p);
  });
}

/** The fixture's cases, built with the same options (PyTorch's names in camelCase). */
const CASES: Array<[keyof typeof TORCH_TRAJECTORIES, Make]> = [
  ['rmsprop', (ps) => new RMSprop(ps, { lr: 0.01 })],
  ['rmsprop_full', (ps) => new RMSprop(ps, { lr: 0.01, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, momentum: 0.9, centered: true })],
  ['rmsprop_max', (ps) => new RMSprop(ps, { lr: 0.01, momentum: 0.5, maximize: true })],
  ['adagrad', (ps) => new Adagrad(ps, { lr: 0.1 })],
  ['adagrad_full', (ps) => new Adagrad(ps, { lr: 0.1, lrDecay: 0.01, weightDecay: 0.05, initialAccumulatorValue: 0.2, eps: 1e-8, maximize: true })],
  ['adadelta', (ps) => new Adadelta(ps)],
  ['adadelta_full', (ps) => new Adadelta(ps, { lr: 0.5, rho: 0.8, eps: 1e-5, weightDecay: 0.1, maximize: true })],
  ['adamax', (ps) => new Adamax(ps, { lr: 0.01 })],
  ['adamax_full', (ps) => new Adamax(ps, { lr: 0.02, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1, maximize: true })],
  // PyTorch 1.13's foreach NAdam: its single-tensor path multiplies μ_t into Πμ_{1..t+1} twice
  // (fixed in 2.0); the documented formula is the foreach one.
  ['nadam', (ps) => new NAdam(ps, { lr: 0.01 })],
  ['nadam_full', (ps) => new NAdam(ps, { lr: 0.02, betas: [0.8, 0.95], weightDecay: 0.1, momentumDecay: 0.01 })],
  // Steps 1–5 take the unrectified branch (ρ_t ≤ 5), the rest the rectified one.
  ['radam', (ps) => new RAdam(ps, { lr: 0.01 })],
  ['radam_full', (ps) => new RAdam(ps, { lr: 0.02, betas: [0.8, 0.9], eps: 1e-6, weightDecay: 0.1 })],
  ['adam_amsgrad_max', (ps) => new Adam(ps, { lr: 0.01, amsgrad: true, maximize: true, weightDecay: 0.1 })],
  ['adamw_amsgrad', (ps) => new AdamW(ps, { lr: 0.01, amsgrad: true })],
  ['sgd_nesterov', (ps) => new SGD(ps, { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 })],
  ['sgd_dampening_max', (ps) => new SGD(ps, { lr: 0.05, momentum: 0.8, dampening: 0.3, maximize: true })],
];

describe('trajectories against torch.optim 1.13 (float64, 10 steps, to 1e-12)', () => {
  for (const [name, make] of CASES) {
    it(`${name}`, () => {
      const ours = trajectory(make);
      TORCH_TRAJECTORIES[name].forEach((expected, step) => expectClose(ours[step]!, [...expected], 1e-12));
    });
  }

  it('float32 parameters follow the float64 reference to float32 precision', () => {
    for (const [name, make] of CASES) {
      const ours = trajectory(make, float32);
      TORCH_TRAJECTORIES[name].forEach((expected, step) => expectClose(ours[step]!, [...expected], 1e-5));
    }
  });

  it('RAdam: the first steps are SGD with momentum on the bias-corrected average (ρ_t ≤ 5)', () => {
    // step 1: m̂ = g, so p = P0 − lr·g exactly
    expect(trajectory((ps) => new RAdam(ps, { lr: 0.01 }))[0]).toEqual(P0.map((p, i) => p - 0.01 * G[0]![i]!));
  });
});

describe("each optimizer's defaults are PyTorch 1.13's", () => {
  const p = () => [param([1])];
  it('RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam', () => {
    expect(new RMSprop(p()).defaults).toEqual({ lr: 1e-2, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false });
    expect(new Adagrad(p()).defaults).toEqual({ lr: 1e-2, lrDecay: 0, weightDecay: 0, initialAccumulatorValue: 0, eps: 1e-10, maximize: false });
    expect(new Adadelta(p()).defaults).toEqual({ lr: 1.0, rho: 0.9, eps: 1e-6, weightDecay: 0, maximize: false });
    expect(new Adamax(p()).defaults).toEqual({ lr: 2e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, maximize: false });
    expect(new NAdam(p()).defaults).toEqual({ lr: 2e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, momentumDecay: 4e-3 });
    expect(new RAdam(p()).defaults).toEqual({ lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0 });
  });
});

describe('bad options are typed errors naming the option and the value', () => {
  const p = param([1]);
  it('PyTorch\'s ValueErrors, in its order', () => {
    expectThrowsExactly(() => new RMSprop([p], { lr: -1 }), ValueError, 'Invalid learning rate: -1');
    expectThrowsExactly(() => new RMSprop([p], { eps: -1, momentum: -1 }), ValueError, 'Invalid epsilon value: -1');
    expectThrowsExactly(() => new RMSprop([p], { momentum: -0.5 }), ValueError, 'Invalid momentum value: -0.5');
    expectThrowsExactly(() => new RMSprop([p], { weightDecay: -0.1 }), ValueError, 'Invalid weight_decay value: -0.1');
    expectThrowsExactly(() => new RMSprop([p], { alpha: -0.9 }), ValueError, 'Invalid alpha value: -0.9');
    expectThrowsExactly(() => new Adagrad([p], { lrDecay: -1 }), ValueError, 'Invalid lr_decay value: -1');
    expectThrowsExactly(() => new Adagrad([p], { initialAccumulatorValue: -1 }), ValueError, 'Invalid initial_accumulator_value value: -1');
    expectThrowsExactly(() => new Adagrad([p], { eps: NaN }), ValueError, 'Invalid epsilon value: NaN');
    expectThrowsExactly(() => new Adadelta([p], { rho: 1.5 }), ValueError, 'Invalid rho value: 1.5');
    expectThrowsExactly(() => new Adamax([p], { betas: [0.9, 1] }), ValueError, 'Invalid beta parameter at index 1: 1');
    expectThrowsExactly(() => new NAdam([p], { momentumDecay: -4e-3 }), ValueError, 'Invalid momentum_decay value: -0.004');
    expectThrowsExactly(() => new RAdam([p], { betas: [-0.1, 0.9] }), ValueError, 'Invalid beta parameter at index 0: -0.1');
    expect(() => new Adadelta([p], { rho: 1 })).not.toThrow(); // 0 ≤ rho ≤ 1
  });

  it('a flag that is not a boolean is a ValueError naming it', () => {
    expectThrowsExactly(() => new RMSprop([p], { centered: 1 as never }), ValueError, 'Invalid centered value: 1 (expected true or false)');
    expectThrowsExactly(() => new Adam([p], { amsgrad: 'yes' as never }), ValueError, 'Invalid amsgrad value: yes (expected true or false)');
    expectThrowsExactly(() => new SGD([p], { maximize: null as never }), ValueError, 'Invalid maximize value: null (expected true or false)');
  });

  it('an option PyTorch does not have is a TypeError naming it (NAdam and RAdam have no maximize in 1.13)', () => {
    expectThrowsExactly(() => new NAdam([p], { maximize: true } as never), TypeError,
      "NAdam() got an unexpected keyword argument 'maximize' (it takes lr, betas, eps, weightDecay, momentumDecay)");
    expect(() => new RAdam([p], { maximize: true } as never)).toThrow(/RAdam\(\) got an unexpected keyword argument 'maximize'/);
    expect(() => new SGD([p], { weight_decay: 0.1 } as never)).toThrow(/SGD\(\) got an unexpected keyword argument 'weight_decay'/);
    expect(() => new SGD([p]).addParamGroup({ params: [param([2])], lrr: 0.1 } as never)).toThrow(/SGD.addParamGroup: unexpected option 'lrr'/);
  });

  it('a bad option in an added group is refused and the group is not added', () => {
    const opt = new RMSprop([p]);
    expectThrowsExactly(() => opt.addParamGroup({ params: [param([2])], alpha: -1 }), ValueError, 'Invalid alpha value: -1');
    expect(opt.paramGroups.length).toBe(1);
  });
});

describe('state', () => {
  const stepped = (make: Make) => {
    const p = param([1, 2], float32);
    const opt = make([p]);
    setGrad(p, [0.5, -0.5]);
    opt.step();
    return { s: opt.state.get(p) as Record<string, unknown>, p, opt };
  };

  it('each optimizer keeps PyTorch\'s state (camelCase), tensors on the param\'s device and in its dtype', () => {
    const keys: Array<[Make, string[]]> = [
      [(ps) => new RMSprop(ps), ['squareAvg', 'step']],
      [(ps) => new RMSprop(ps, { momentum: 0.9, centered: true }), ['gradAvg', 'momentumBuffer', 'squareAvg', 'step']],
      [(ps) => new Adagrad(ps), ['step', 'sum']],
      [(ps) => new Adadelta(ps), ['accDelta', 'squareAvg', 'step']],
      [(ps) => new Adamax(ps), ['expAvg', 'expInf', 'step']],
      [(ps) => new NAdam(ps), ['expAvg', 'expAvgSq', 'muProduct', 'step']],
      [(ps) => new RAdam(ps), ['expAvg', 'expAvgSq', 'step']],
    ];
    for (const [make, expected] of keys) {
      const { s, p } = stepped(make);
      expect(Object.keys(s).sort()).toEqual(expected);
      expect(s.step).toBe(1);
      for (const v of Object.values(s)) {
        if (typeof v === 'number') continue;
        expect((v as Tensor).dtype).toBe(p.dtype);
        expect((v as Tensor).shape).toEqual(p.shape);
      }
    }
  });

  it('NAdam keeps μ_1·…·μ_t as a float64 number', () => {
    const { s } = stepped((ps) => new NAdam(ps));
    expect(s.muProduct).toBe(0.9 * (1 - 0.5 * 0.96 ** 0.004));
  });

  it('Adagrad makes every parameter\'s state at construction: step 0, sum = initialAccumulatorValue (also for added groups)', () => {
    const a = param([1, 2]);
    const b = param([3]);
    const opt = new Adagrad([a], { initialAccumulatorValue: 0.5 });
    opt.addParamGroup({ params: [b], initialAccumulatorValue: 0.25 });
    expect(opt.state.get(a)!.step).toBe(0);
    expect(values(opt.state.get(a)!.sum)).toEqual([0.5, 0.5]);
    expect(values(opt.state.get(b)!.sum)).toEqual([0.25]);
    expect(Object.keys(opt.stateDict().state)).toEqual(['0', '1']);
  });

  it('OPT-3: a parameter without a grad is skipped: no state, no decay', () => {
    for (const make of [(ps: Tensor[]) => new RMSprop(ps, { weightDecay: 0.1 }), (ps: Tensor[]) => new RAdam(ps, { weightDecay: 0.1 })]) {
      const none = param([1], float64);
      const opt = make([none]);
      opt.step();
      expect(values(none)).toEqual([1]);
      expect(opt.state.has(none)).toBe(false);
    }
  });

  it('RMSprop makes the momentum buffer and the gradient average when a group turns them on later', () => {
    const p = param([1], float64);
    const opt = new RMSprop([p], { lr: 0.01 });
    setGrad(p, [0.5]);
    opt.step();
    opt.paramGroups[0]!.momentum = 0.9;
    opt.paramGroups[0]!.centered = true;
    opt.step();
    const s = opt.state.get(p)!;
    expect(s.momentumBuffer).toBeDefined();
    expect(s.gradAvg).toBeDefined();
    expectClose(values(s.gradAvg!), [0.005], 1e-15); // 0.99·0 + (1 − 0.99)·0.5
  });
});
