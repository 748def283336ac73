// End to end with autograd: backward() fills .grad, the optimizer reads it, zeroGrad clears it.
import { describe, expect, it } from 'vitest';
import { tensor, type Tensor } from '@core/tensor';
import { Adam, AdamW, CosineAnnealingLR, SGD } from '../src/index.js';
import { expectClose, values } from './helpers.js';

const loss = (p: Tensor) => p.sub(tensor([3, -1])).square().sum();

describe('training a tiny quadratic with backward()', () => {
  it('SGD with momentum, zeroGrad each step, converges to the minimum', () => {
    const p = tensor([0, 0], { requiresGrad: true });
    const opt = new SGD([p], { lr: 0.05, momentum: 0.9 });
    for (let i = 0; i < 200; i++) {
      opt.zeroGrad();
      loss(p).backward();
      opt.step();
    }
    expectClose(values(p), [3, -1], 1e-3);
  });

  it('Adam via step(closure) with a cosine schedule, zeroing in place', () => {
    const p = tensor([0, 0], { requiresGrad: true });
    const opt = new Adam([p], { lr: 0.2 });
    const sched = new CosineAnnealingLR(opt, { tMax: 300 });
    let last: Tensor | undefined;
    for (let i = 0; i < 300; i++) {
      last = opt.step(() => {
        opt.zeroGrad({ setToNone: false });
        const l = loss(p);
        l.backward();
        return l;
      });
      sched.step();
    }
    expectClose(values(p), [3, -1], 1e-2);
    expect(values(last!)[0]).toBeLessThan(1e-3);
  });

  it('without zeroGrad, backward accumulates (OPT-2) and the optimizer sees the sum', () => {
    const p = tensor([1], { requiresGrad: true });
    const opt = new AdamW([p], { lr: 0.1, weightDecay: 0 });
    p.mul(2).sum().backward();
    p.mul(3).sum().backward();
    expect(values(p.grad!)).toEqual([5]);
    opt.step();
    expectClose(values(p), [0.9], 1e-6);
  });
});
