// Second derivatives through the layers built on views and gathers (PyTorch's gradgradcheck):
// convolutions unfold their input with asStrided, pools slice and gather, fold sums windows back.
// Their backward passes are linear in the incoming gradient and are recorded under createGraph, so
// a gradient penalty (WGAN-GP, ‖∂D/∂x‖²) can be differentiated again. Checked in float64 against
// central differences of the first-order gradients (atol 1e-5, rtol 1e-3: gradcheck's defaults).
import { describe, expect, it } from 'vitest';
import { autograd, gradgradcheck, type Tensor } from '@core/tensor';
import { F } from '../src/index.js';
import { leaf } from './helpers.js';

interface Case {
  readonly id: string;
  readonly inputs: () => Tensor[];
  readonly fn: (...xs: Tensor[]) => Tensor;
}

const CASES: Case[] = [
  { id: 'conv2d (input, weight, bias)', inputs: () => [leaf([1, 1, 4, 4], 1), leaf([2, 1, 3, 3], 2), leaf([2], 3)], fn: (x, w, b) => F.conv2d(x, w, b) },
  { id: 'conv2d stride 2, padding 1', inputs: () => [leaf([1, 1, 5, 4], 4), leaf([2, 1, 2, 2], 5)], fn: (x, w) => F.conv2d(x, w, null, { stride: 2, padding: 1 }) },
  { id: 'conv1d', inputs: () => [leaf([2, 2, 6], 6), leaf([3, 2, 3], 7)], fn: (x, w) => F.conv1d(x, w) },
  { id: 'convTranspose2d stride 2', inputs: () => [leaf([1, 2, 3, 3], 8), leaf([2, 1, 2, 2], 9)], fn: (x, w) => F.convTranspose2d(x, w, null, { stride: 2 }) },
  { id: 'maxPool2d', inputs: () => [leaf([1, 2, 4, 4], 10)], fn: (x) => F.maxPool2d(x, 2) },
  { id: 'maxPool1d stride 1 (overlapping windows)', inputs: () => [leaf([2, 1, 6], 11)], fn: (x) => F.maxPool1d(x, 3, 1) },
  { id: 'avgPool2d padding 1', inputs: () => [leaf([1, 1, 4, 4], 12)], fn: (x) => F.avgPool2d(x, 3, 2, 1) },
  { id: 'adaptiveAvgPool2d', inputs: () => [leaf([1, 1, 5, 3], 13)], fn: (x) => F.adaptiveAvgPool2d(x, [2, 2]) },
  { id: 'unfold then fold', inputs: () => [leaf([1, 2, 4, 4], 14)], fn: (x) => F.fold(F.unfold(x, 2, { stride: 1 }).mul(F.unfold(x, 2, { stride: 1 })), [4, 4], 2) },
  { id: 'narrow and slice', inputs: () => [leaf([4, 5], 15)], fn: (x) => x.narrow(1, 1, 3).mul(x.slice(0, 0, 4, 2).sum(0, true).narrow(1, 0, 3)) },
  { id: 'gather', inputs: () => [leaf([3, 4], 16)], fn: (x) => x.gather(1, x.abs().argsort(1)).mul(x) },
];

describe('double backward through views, gathers and the layers built on them', () => {
  for (const c of CASES) {
    it(`${c.id}: second derivatives match central differences`, () => {
      const result = gradgradcheck(c.fn, c.inputs());
      expect(result.mismatch ?? 'ok').toBe('ok');
    });
  }

  it('a gradient penalty through conv2d and maxPool2d trains: its gradient reaches the weights', () => {
    const [x, w] = [leaf([1, 1, 4, 4], 20), leaf([2, 1, 3, 3], 21)];
    const critic = (input: Tensor) => F.maxPool2d(F.conv2d(input, w, null, { padding: 1 }).tanh(), 2).sum();
    const [gx] = autograd.grad([critic(x!)], [x!], { createGraph: true });
    const penalty = gx!.pow(2).sum().sub(1).pow(2);
    const [gw] = autograd.grad([penalty], [w!]);
    expect(gw!.shape).toEqual([2, 1, 3, 3]);
    expect(gw!.abs().sum().dataSync()[0]).toBeGreaterThan(0);
  });
});
