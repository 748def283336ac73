import { describe, expect, it } from 'vitest';
import { float64, ValueError } from '@core/tensor';
import { SGD, type SGDOptions } from '../src/index.js';
import { expectClose, expectThrowsExactly, param, setGrad, values } from './helpers.js';

/** Run `steps` SGD steps on p = 1 with grad 0.5 each step; returns the param after each step. */
function trajectory(options: Partial<SGDOptions>, steps: number): { ps: number[]; opt: SGD; p: ReturnType<typeof param> } {
  const p = param([1], float64);
  const opt = new SGD([p], options);
  const ps: number[] = [];
  for (let i = 0; i < steps; i++) {
    setGrad(p, [0.5]);
    opt.step();
    ps.push(values(p)[0]!);
  }
  return { ps, opt, p };
}

describe('SGD options (OPT-4)', () => {
  it('OPT-4: defaults are lr=1e-3, momentum=0, dampening=0, weightDecay=0, nesterov=false, maximize=false', () => {
    const opt = new SGD([param([1])]);
    expect(opt.defaults).toEqual({ lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false });
    const { params, ...options } = opt.paramGroups[0]!;
    expect(params.length).toBe(1);
    expect(options).toEqual(opt.defaults);
  });

  it('OPT-4: plain SGD with the default lr moves p by 1e-3·grad', () => {
    const p = param([1, 2], float64);
    setGrad(p, [1, -1]);
    new SGD([p]).step();
    expectClose(values(p), [0.999, 2.001], 1e-15);
  });

  it('OPT-4: ValueError messages for lr, momentum, weight_decay and nesterov', () => {
    const p = param([1]);
    expectThrowsExactly(() => new SGD([p], { lr: -0.1 }), ValueError, 'Invalid learning rate: -0.1');
    expectThrowsExactly(() => new SGD([p], { momentum: -0.5 }), ValueError, 'Invalid momentum value: -0.5');
    expectThrowsExactly(() => new SGD([p], { weightDecay: -1 }), ValueError, 'Invalid weight_decay value: -1');
    expectThrowsExactly(() => new SGD([p], { nesterov: true }), ValueError, 'Nesterov momentum requires a momentum and zero dampening');
    expectThrowsExactly(
      () => new SGD([p], { nesterov: true, momentum: 0.9, dampening: 0.1 }),
      ValueError,
      'Nesterov momentum requires a momentum and zero dampening',
    );
  });

  it('OPT-4: the checks run before the parameter list is looked at', () => {
    expectThrowsExactly(() => new SGD([], { lr: -1 }), ValueError, 'Invalid learning rate: -1');
  });

  it('OPT-4: group overrides are checked too, and NaN is rejected (stricter than PyTorch)', () => {
    const p = param([1]);
    expectThrowsExactly(() => new SGD([{ params: [p], lr: -2 }]), ValueError, 'Invalid learning rate: -2');
    expectThrowsExactly(() => new SGD([p], { lr: Number.NaN }), ValueError, 'Invalid learning rate: NaN');
    const opt = new SGD([p]);
    expectThrowsExactly(() => opt.addParamGroup({ params: [param([2])], momentum: -1 }), ValueError, 'Invalid momentum value: -1');
    expect(opt.paramGroups.length).toBe(1);
  });
});

describe('SGD update (OPT-5, OPT-6)', () => {
  it('OPT-5: no momentum: p -= lr·grad', () => {
    expectClose(trajectory({ lr: 0.1 }, 2).ps, [0.95, 0.9], 1e-15);
  });

  it('OPT-5: no momentum keeps no state', () => {
    const { opt, p } = trajectory({ lr: 0.1 }, 1);
    expect(opt.state.has(p)).toBe(false);
  });

  it('OPT-5: weight decay adds wd·p to the gradient', () => {
    expectClose(trajectory({ lr: 0.1, weightDecay: 0.1 }, 1).ps, [0.94], 1e-15);
  });

  it('OPT-5: maximize negates the gradient before weight decay', () => {
    expectClose(trajectory({ lr: 0.1, maximize: true }, 1).ps, [1.05], 1e-15);
    // g = −0.5 + 0.1·1 = −0.4
    expectClose(trajectory({ lr: 0.1, maximize: true, weightDecay: 0.1 }, 1).ps, [1.04], 1e-15);
  });

  it('OPT-6: μ=0.9, wd=0.1 gives 0.94 then 0.8266 with buf 1.134', () => {
    const { ps, opt, p } = trajectory({ lr: 0.1, momentum: 0.9, weightDecay: 0.1 }, 2);
    expectClose(ps, [0.94, 0.8266], 1e-6);
    expectClose(values(opt.state.get(p)!.momentumBuffer!), [1.134], 1e-6);
  });

  it('OPT-6: the same in float32 to 1e-6', () => {
    const p = param([1]);
    const opt = new SGD([p], { lr: 0.1, momentum: 0.9, weightDecay: 0.1 });
    const ps: number[] = [];
    for (let i = 0; i < 2; i++) {
      setGrad(p, [0.5]);
      opt.step();
      ps.push(values(p)[0]!);
    }
    expectClose(ps, [0.94, 0.8266], 1e-6);
  });

  it('OPT-6: nesterov μ=0.9, wd=0.1 gives 0.886 (then 0.725566 by hand)', () => {
    // step 2: g = 0.5 + 0.0886 = 0.5886, buf = 0.9·0.6 + 0.5886 = 1.1286, g += 0.9·buf → 1.60434
    expectClose(trajectory({ lr: 0.1, momentum: 0.9, weightDecay: 0.1, nesterov: true }, 2).ps, [0.886, 0.725566], 1e-6);
  });

  it('OPT-6: μ=0.9, dampening 0.5 gives 0.95 then 0.88', () => {
    expectClose(trajectory({ lr: 0.1, momentum: 0.9, dampening: 0.5 }, 2).ps, [0.95, 0.88], 1e-6);
  });

  it('OPT-5: the first momentum step copies the gradient without dampening', () => {
    const { opt, p } = trajectory({ lr: 0.1, momentum: 0.9, dampening: 0.5 }, 1);
    const buf = opt.state.get(p)!.momentumBuffer!;
    expect(values(buf)).toEqual([0.5]); // not (1 − 0.5)·0.5
    expect(buf).not.toBe(p.grad); // a copy, not the grad itself
    setGrad(p, [0.5]);
    opt.step();
    expectClose(values(buf), [0.7], 1e-15); // 0.9·0.5 + 0.5·0.5, updated in place
  });

  it('OPT-5: momentum with maximize accumulates the negated gradient', () => {
    // buf = −0.5, p = 1.05; then buf = −0.45 − 0.5 = −0.95, p = 1.145
    expectClose(trajectory({ lr: 0.1, momentum: 0.9, maximize: true }, 2).ps, [1.05, 1.145], 1e-12);
  });

  it('updates parameters in place: the same tensor object, and never a different grad', () => {
    const p = param([1, 2]);
    const g = setGrad(p, [0.5, 0.5]);
    new SGD([p], { lr: 0.1, momentum: 0.9 }).step();
    expect(p.grad).toBe(g);
    expect(values(g)).toEqual([0.5, 0.5]);
    expectClose(values(p), [0.95, 1.95], 1e-6);
  });
});

describe('SGD parameter groups', () => {
  it('each group uses its own lr; the others inherit the defaults', () => {
    const a = param([1], float64);
    const b = param([1], float64);
    const opt = new SGD([{ params: [a] }, { params: [b], lr: 0.01 }], { lr: 0.1, momentum: 0.9 });
    expect(opt.paramGroups[1]!.momentum).toBe(0.9);
    expect(opt.paramGroups.map((g) => g.lr)).toEqual([0.1, 0.01]);
    setGrad(a, [0.5]);
    setGrad(b, [0.5]);
    opt.step();
    expectClose(values(a), [0.95], 1e-15);
    expectClose(values(b), [0.995], 1e-15);
  });

  it('changing paramGroups[i].lr takes effect on the next step', () => {
    const p = param([1], float64);
    const opt = new SGD([p], { lr: 0.1 });
    setGrad(p, [0.5]);
    opt.step();
    opt.paramGroups[0]!.lr = 0.2;
    opt.step();
    expectClose(values(p), [0.85], 1e-15);
  });

  it('addParamGroup adds a group that steps with its own options', () => {
    const a = param([1], float64);
    const b = param([1], float64);
    const opt = new SGD([a], { lr: 0.1 });
    opt.addParamGroup({ params: [b], weightDecay: 0.1 });
    expect(opt.paramGroups[1]).toMatchObject({ lr: 0.1, weightDecay: 0.1, momentum: 0 });
    setGrad(a, [0.5]);
    setGrad(b, [0.5]);
    opt.step();
    expectClose(values(a), [0.95], 1e-15);
    expectClose(values(b), [0.94], 1e-15);
  });
});
