import { describe, expect, it } from 'vitest';
import { float32, float64, ValueError, type DType } from '@core/tensor';
import { Adam, AdamW, type AdamOptions } from '../src/index.js';
import { expectClose, expectThrowsExactly, param, setGrad, values } from './helpers.js';

/** p = 1 with the given grads (one per step); returns p after each step. */
function run(Opt: typeof Adam, options: Partial<AdamOptions>, grads: number[], dtype: DType = float64) {
  const p = param([1], dtype);
  const opt = new Opt([p], options);
  const ps = grads.map((g) => {
    setGrad(p, [g]);
    opt.step();
    return values(p)[0]!;
  });
  return { ps, opt, p };
}

describe('Adam options (OPT-7)', () => {
  it('OPT-7: defaults are lr=1e-3, betas=[0.9, 0.999], eps=1e-8, weightDecay=0, amsgrad=false, maximize=false', () => {
    expect(new Adam([param([1])]).defaults).toEqual({
      lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: false, maximize: false,
    });
  });

  it('OPT-7: ValueError messages for lr, eps, each beta and weight_decay', () => {
    const p = param([1]);
    expectThrowsExactly(() => new Adam([p], { lr: -0.001 }), ValueError, 'Invalid learning rate: -0.001');
    expectThrowsExactly(() => new Adam([p], { eps: -1e-8 }), ValueError, 'Invalid epsilon value: -1e-8');
    expectThrowsExactly(() => new Adam([p], { betas: [1, 0.999] }), ValueError, 'Invalid beta parameter at index 0: 1');
    expectThrowsExactly(() => new Adam([p], { betas: [-0.1, 0.999] }), ValueError, 'Invalid beta parameter at index 0: -0.1');
    expectThrowsExactly(() => new Adam([p], { betas: [0.9, 1.5] }), ValueError, 'Invalid beta parameter at index 1: 1.5');
    expectThrowsExactly(() => new Adam([p], { weightDecay: -0.01 }), ValueError, 'Invalid weight_decay value: -0.01');
    expectThrowsExactly(() => new AdamW([p], { lr: -1 }), ValueError, 'Invalid learning rate: -1');
  });

  it('OPT-7: checks run in PyTorch order (lr, eps, betas, weight_decay)', () => {
    const p = param([1]);
    expectThrowsExactly(() => new Adam([p], { lr: -1, eps: -1 }), ValueError, 'Invalid learning rate: -1');
    expectThrowsExactly(() => new Adam([p], { eps: -1, betas: [2, 2] }), ValueError, 'Invalid epsilon value: -1');
    expectThrowsExactly(() => new Adam([p], { betas: [2, 2], weightDecay: -1 }), ValueError, 'Invalid beta parameter at index 0: 2');
  });

  it('OPT-7: 0 ≤ beta < 1 accepts 0', () => {
    expect(() => new Adam([param([1])], { betas: [0, 0] })).not.toThrow();
  });
});

describe('Adam update (OPT-8, OPT-9)', () => {
  it('OPT-9: Adam lr=0.1, p=1, g=0.5 gives 0.900000002 then 0.800000004 (float64)', () => {
    expectClose(run(Adam, { lr: 0.1 }, [0.5, 0.5]).ps, [0.900000002, 0.800000004], 1e-10);
  });

  it('OPT-9: the same in float32 to 1e-6', () => {
    expectClose(run(Adam, { lr: 0.1 }, [0.5, 0.5], float32).ps, [0.900000002, 0.800000004], 1e-6);
  });

  it('OPT-8: the first step moves p by lr·g/(|g|+eps)', () => {
    expectClose(run(Adam, { lr: 0.01 }, [-3]).ps, [1 + (0.01 * 3) / (3 + 1e-8)], 1e-15);
  });

  it('OPT-9: Adam wd=0.1 (L2, added to the gradient) gives 0.9000000017', () => {
    expectClose(run(Adam, { lr: 0.1, weightDecay: 0.1 }, [0.5]).ps, [0.9000000017], 1e-10);
    expectClose(run(Adam, { lr: 0.1, weightDecay: 0.1 }, [0.5], float32).ps, [0.9000000017], 1e-6);
  });

  it('OPT-9: AdamW (default wd 1e-2, decoupled) gives 0.899000002, then 0.798101004 by hand', () => {
    // step 2: p = 0.899000002·(1 − 0.001) − (0.1/0.19)·0.095/(0.5 + 1e-8)
    expectClose(run(AdamW, { lr: 0.1 }, [0.5, 0.5]).ps, [0.899000002, 0.798101004], 1e-9);
    expectClose(run(AdamW, { lr: 0.1 }, [0.5, 0.5], float32).ps, [0.899000002, 0.798101004], 1e-6);
  });

  it('OPT-9: AdamW is an Adam with weightDecay defaulting to 1e-2; with wd=0 it is Adam', () => {
    const opt = new AdamW([param([1])]);
    expect(opt).toBeInstanceOf(Adam);
    expect(opt.defaults.weightDecay).toBe(1e-2);
    expect(run(AdamW, { lr: 0.1, weightDecay: 0 }, [0.5, 0.5]).ps).toEqual(run(Adam, { lr: 0.1 }, [0.5, 0.5]).ps);
  });

  it('OPT-8: maximize negates the gradient', () => {
    expectClose(run(Adam, { lr: 0.1, maximize: true }, [0.5]).ps, [1.099999998], 1e-10);
    // AdamW: decay first, then ascend: 0.999 + 0.1·(1 − 2e-8)
    expectClose(run(AdamW, { lr: 0.1, maximize: true }, [0.5]).ps, [1.098999998], 1e-10);
  });

  it('OPT-8: amsgrad uses max(vmax, v) (hand-computed: grads 1 then 0)', () => {
    const eps = 1e-8;
    const p1 = 1 - (0.1 / 0.1) * 0.1 / (Math.sqrt(0.001) / Math.sqrt(0.001) + eps);
    // step 2: m = 0.09, v = 0.999·0.001 = 0.000999 < vmax = 0.001
    const bc2 = Math.sqrt(1 - 0.999 ** 2);
    const amsP2 = p1 - (0.1 / (1 - 0.9 ** 2)) * 0.09 / (Math.sqrt(0.001) / bc2 + eps);
    const plainP2 = p1 - (0.1 / (1 - 0.9 ** 2)) * 0.09 / (Math.sqrt(0.000999) / bc2 + eps);
    expectClose([amsP2, plainP2], [0.8330276878, 0.8329941765], 1e-10);

    const ams = run(Adam, { lr: 0.1, amsgrad: true }, [1, 0]);
    expectClose(ams.ps, [p1, amsP2], 1e-12);
    const s = ams.opt.state.get(ams.p)!;
    expectClose(values(s.maxExpAvgSq!), [0.001], 1e-15);
    expectClose(values(s.expAvgSq), [0.000999], 1e-15);
    expectClose(run(Adam, { lr: 0.1 }, [1, 0]).ps, [p1, plainP2], 1e-12);
  });

  it('OPT-8: state is { step, expAvg, expAvgSq } (+ maxExpAvgSq with amsgrad), on the param device and dtype', () => {
    const { opt, p } = run(Adam, { lr: 0.1 }, [0.5, 0.5], float32);
    const s = opt.state.get(p)!;
    expect(Object.keys(s).sort()).toEqual(['expAvg', 'expAvgSq', 'step']);
    expect(s.step).toBe(2);
    for (const t of [s.expAvg, s.expAvgSq]) {
      expect(t.dtype).toBe(p.dtype);
      expect(t.device.equals(p.device)).toBe(true);
      expect(t.shape).toEqual(p.shape);
    }
    expectClose(values(s.expAvg), [0.095], 1e-7);
    expectClose(values(s.expAvgSq), [0.00049975], 1e-9);
    const ams = run(Adam, { amsgrad: true }, [0.5]);
    expect(Object.keys(ams.opt.state.get(ams.p)!).sort()).toEqual(['expAvg', 'expAvgSq', 'maxExpAvgSq', 'step']);
  });

  it('OPT-8: lerp takes the b − (b − a)·(1 − w) branch when 1 − β1 ≥ 0.5', () => {
    // β1 = 0.25, w = 0.75: m1 = 0.5 − (0.5 − 0)·0.25 = 0.375, m2 = 0.5 − (0.5 − 0.375)·0.25 = 0.46875 (exact)
    const first = run(Adam, { lr: 0.1, betas: [0.25, 0.999] }, [0.5]);
    expect(values(first.opt.state.get(first.p)!.expAvg)).toEqual([0.375]);
    expectClose(first.ps, [0.900000002], 1e-10); // bias correction still gives lr·g/(|g|+eps)
    const second = run(Adam, { lr: 0.1, betas: [0.25, 0.999] }, [0.5, 0.5]);
    expect(values(second.opt.state.get(second.p)!.expAvg)).toEqual([0.46875]);
  });

  it('per-group options: betas and lr overrides, the rest from the defaults', () => {
    const a = param([1], float64);
    const b = param([1], float64);
    const opt = new Adam([{ params: [a] }, { params: [b], lr: 0.01, betas: [0.5, 0.9] }], { lr: 0.1 });
    expect(opt.paramGroups[1]).toMatchObject({ lr: 0.01, betas: [0.5, 0.9], eps: 1e-8 });
    setGrad(a, [0.5]);
    setGrad(b, [0.5]);
    opt.step();
    expectClose(values(a), [0.900000002], 1e-10);
    expectClose(values(b), [0.9900000002], 1e-12); // 1 − 0.01·0.5/(0.5 + 1e-8)
  });

  it('a group override of betas is a copy: mutating the input array changes nothing', () => {
    const betas: [number, number] = [0.9, 0.999];
    const opt = new Adam([param([1])], { betas });
    betas[0] = 0.5;
    expect(opt.paramGroups[0]!.betas).toEqual([0.9, 0.999]);
  });
});
