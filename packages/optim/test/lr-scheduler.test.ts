import { describe, expect, it } from 'vitest';
import { float64, ValueError } from '@core/tensor';
import { AdamW, CosineAnnealingLR, SGD, StepLR } from '../src/index.js';
import { expectClose, expectThrowsExactly, param, setGrad, values } from './helpers.js';

function sgd(...lrs: number[]): SGD {
  return new SGD(lrs.map((lr) => ({ params: [param([1])], lr })));
}

/** PyTorch's recursive CosineAnnealingLR.get_lr, written out as the reference for one group. */
function torchCosine(base: number, tMax: number, etaMin: number, epochs: number): number[] {
  const out = [base];
  let lr = base;
  for (let e = 1; e <= epochs; e++) {
    if ((e - 1 - tMax) % (2 * tMax) === 0) lr = lr + ((base - etaMin) * (1 - Math.cos(Math.PI / tMax))) / 2;
    else lr = ((1 + Math.cos((Math.PI * e) / tMax)) / (1 + Math.cos((Math.PI * (e - 1)) / tMax))) * (lr - etaMin) + etaMin;
    out.push(lr);
  }
  return out;
}

describe('StepLR', () => {
  it('multiplies lr by gamma every stepSize epochs, with PyTorch\'s recursive rounding', () => {
    const opt = sgd(0.05, 1);
    const sched = new StepLR(opt, { stepSize: 3 });
    const seen = [sched.getLastLr()];
    for (let e = 1; e <= 9; e++) {
      sched.step();
      seen.push(sched.getLastLr());
    }
    const a = 0.05 * 0.1;
    const b = a * 0.1;
    const c = b * 0.1;
    expect(a).toBe(0.005000000000000001); // what PyTorch prints, not 0.005
    expect(seen.map((lrs) => lrs[0])).toEqual([0.05, 0.05, 0.05, a, a, a, b, b, b, c]);
    expect(seen.map((lrs) => lrs[1])).toEqual([1, 1, 1, 0.1, 0.1, 0.1, 0.1 * 0.1, 0.1 * 0.1, 0.1 * 0.1, 0.1 * 0.1 * 0.1]);
    expect(opt.paramGroups.map((g) => g.lr)).toEqual(seen[9]);
    expect(sched.lastEpoch).toBe(9);
  });

  it('records initialLr on each group and takes baseLrs from it', () => {
    const opt = sgd(0.1, 0.2);
    const sched = new StepLR(opt, { stepSize: 1, gamma: 0.5 });
    sched.step();
    expect(opt.paramGroups.map((g) => g.initialLr)).toEqual([0.1, 0.2]);
    expect(sched.baseLrs).toEqual([0.1, 0.2]);
    // A second scheduler keeps the recorded initialLr (PyTorch's setdefault).
    expect(new StepLR(opt, { stepSize: 2 }).baseLrs).toEqual([0.1, 0.2]);
  });

  it('drives the optimizer: each step uses the scheduled lr', () => {
    const p = param([1], float64);
    const opt = new SGD([p], { lr: 0.1 });
    const sched = new StepLR(opt, { stepSize: 1, gamma: 0.5 });
    const ps: number[] = [];
    for (let e = 0; e < 3; e++) {
      setGrad(p, [1]);
      opt.step();
      sched.step();
      ps.push(values(p)[0]!);
    }
    expectClose(ps, [0.9, 0.85, 0.825], 1e-15);
  });

  it('rejects a stepSize that is not a positive integer', () => {
    expectThrowsExactly(() => new StepLR(sgd(0.1), { stepSize: 0 }), ValueError, 'StepLR: stepSize must be a positive integer, got 0');
    expect(() => new StepLR(sgd(0.1), { stepSize: 1.5 })).toThrow(ValueError);
  });

  it('resuming (lastEpoch ≥ 0) needs initialLr on every group', () => {
    expectThrowsExactly(
      () => new StepLR(sgd(0.1), { stepSize: 2, lastEpoch: 3 }),
      ValueError,
      "param 'initialLr' is not specified in paramGroups[0] when resuming an optimizer",
    );
    const opt = sgd(0.1);
    opt.paramGroups[0]!.initialLr = 0.1;
    const sched = new StepLR(opt, { stepSize: 2, lastEpoch: 3 });
    expect(sched.lastEpoch).toBe(4);
    expect(sched.getLastLr()[0]).toBeCloseTo(0.01, 15);
  });
});

describe('CosineAnnealingLR', () => {
  it('matches known values: base 0.1, tMax 10 → 0.0975528…, 0.05 at 5, 0 at 10, back to 0.1 at 20', () => {
    const opt = sgd(0.1);
    const sched = new CosineAnnealingLR(opt, { tMax: 10 });
    const lrs = [sched.getLastLr()[0]!];
    for (let e = 1; e <= 20; e++) {
      sched.step();
      lrs.push(sched.getLastLr()[0]!);
    }
    expect(lrs[0]).toBe(0.1);
    expect(lrs[1]).toBeCloseTo(0.09755282581475769, 15);
    expect(lrs[5]).toBeCloseTo(0.05, 15);
    expect(lrs[10]).toBe(0);
    expect(lrs[15]).toBeCloseTo(0.05, 15);
    expect(lrs[20]).toBeCloseTo(0.1, 15);
    expect(opt.paramGroups[0]!.lr).toBe(lrs[20]);
  });

  it('matches PyTorch\'s recursive form for the first 2·tMax epochs (and beyond), with etaMin', () => {
    for (const [base, tMax, etaMin] of [[0.1, 10, 0.001], [1, 7, 0], [3e-4, 4, 1e-5]] as const) {
      const opt = sgd(base);
      const sched = new CosineAnnealingLR(opt, { tMax, etaMin });
      const ours = [sched.getLastLr()[0]!];
      for (let e = 1; e <= 3 * tMax; e++) {
        sched.step();
        ours.push(sched.getLastLr()[0]!);
      }
      expectClose(ours, torchCosine(base, tMax, etaMin, 3 * tMax), 1e-12 * base);
    }
  });

  it('anneals every group from its own base lr', () => {
    const opt = sgd(0.1, 0.01);
    const sched = new CosineAnnealingLR(opt, { tMax: 4, etaMin: 0.001 });
    for (let e = 0; e < 2; e++) sched.step();
    expectClose(sched.getLastLr(), [0.001 + 0.099 / 2, 0.001 + 0.009 / 2], 1e-15);
  });

  it('rejects tMax ≤ 0', () => {
    expectThrowsExactly(() => new CosineAnnealingLR(sgd(0.1), { tMax: 0 }), ValueError, 'CosineAnnealingLR: tMax must be a positive finite number, got 0');
  });
});

describe('scheduler state dicts', () => {
  it('StepLR: a loaded scheduler continues the same schedule', () => {
    const optA = sgd(0.1);
    const a = new StepLR(optA, { stepSize: 2, gamma: 0.5 });
    for (let e = 0; e < 3; e++) a.step();
    const sd = a.stateDict();
    expect(sd).toEqual({ stepSize: 2, gamma: 0.5, baseLrs: [0.1], lastEpoch: 3, stepCount: 4, lastLr: [0.05] });

    const optB = sgd(0.1);
    optB.loadStateDict(optA.stateDict());
    expect(optB.paramGroups[0]).toMatchObject({ lr: 0.05, initialLr: 0.1 });
    const b = new StepLR(optB, { stepSize: 99 });
    b.loadStateDict(sd);
    expect(b.stepSize).toBe(2);
    expect(b.getLastLr()).toEqual([0.05]);
    for (let e = 0; e < 4; e++) {
      a.step();
      b.step();
      expect(b.getLastLr()).toEqual(a.getLastLr());
    }
  });

  it('CosineAnnealingLR: the state dict carries tMax, etaMin and progress; it is a copy', () => {
    const opt = new AdamW([param([1])], { lr: 0.1 });
    const a = new CosineAnnealingLR(opt, { tMax: 5, etaMin: 0.01 });
    a.step();
    const sd = a.stateDict();
    const optSd = opt.stateDict();
    expect(sd).toMatchObject({ tMax: 5, etaMin: 0.01, lastEpoch: 1, baseLrs: [0.1] });
    a.step();
    expect(sd.lastEpoch).toBe(1);
    // The chainable form continues from the group's lr, which comes with the optimizer's state dict.
    const optB = new AdamW([param([1])], { lr: 0.1 });
    const b = new CosineAnnealingLR(optB, { tMax: 1 });
    optB.loadStateDict(optSd);
    b.loadStateDict(sd);
    expect([b.tMax, b.etaMin, b.lastEpoch]).toEqual([5, 0.01, 1]);
    b.step();
    expect(b.getLastLr()).toEqual(a.getLastLr());
  });

  it('a state dict for another number of groups is a ValueError', () => {
    const sd = new StepLR(sgd(0.1, 0.2), { stepSize: 1 }).stateDict();
    expectThrowsExactly(
      () => new StepLR(sgd(0.1), { stepSize: 1 }).loadStateDict(sd),
      ValueError,
      'loaded scheduler state has 2 base lrs, but the optimizer has 1 parameter groups',
    );
  });
});
