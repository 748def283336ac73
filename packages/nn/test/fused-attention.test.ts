// F.scaledDotProductAttention through a backend's fused attention kernel (core's
// fusedScaledDotProductAttention), on the 'flash' test device: a CPU backend plus a TypeScript
// reference of the contract's kernel. The fused path must give the decomposition's output and
// q/k/v gradients (the decomposition runs on the same device with setFusedKernelsEnabled(false)),
// with NaN in the same places: outputs to 1e-5 in float32 and 1e-12 in float64 of
// max(1, |expected|), gradients to ten times that of the largest gradient (their sums are longer).
// Half inputs are checked against a float64 run on the same (rounded) values: one rounding of a
// float32 result, so within the dtype's unit roundoff u (2⁻¹¹ float16, 2⁻⁸ bfloat16) of
// max(1, |expected|), plus 1e-5.
import { afterEach, describe, expect, it } from 'vitest';
import {
  bfloat16, bool, checkSameDevice, DeviceMismatchError, float16, float32, float64, gradcheck, gradgradcheck, setFusedKernelsEnabled, ShapeError, tensor, zeros,
  type DType, type Tensor,
} from '@core/tensor';
import { F } from '../src/index.js';
import type { ScaledDotProductAttentionOptions } from '../src/functional/attention.js';
import { uniform, values as cpuValues } from './helpers.js';
import { attentionCalls, FLASH } from './fused-attention-device.js';

afterEach(() => setFusedKernelsEnabled(true));

const values = (t: Tensor) => cpuValues(t.to('cpu'));

/** Seeded tensors of these shapes on the flash device, requiring grad. */
function inputs(shapes: readonly (readonly number[])[], dtype: DType, seed = 1): Tensor[] {
  return shapes.map((shape, i) => uniform(shape, seed + i, -2, 2, dtype).to(FLASH).requiresGrad_());
}

interface Run {
  readonly output: number[];
  readonly grads: number[][];
  /** Kernel runs it took. */
  readonly calls: number;
}

/** The output and the q/k/v gradients of Σ w·sdpa(q, k, v) (w seeded), fused or decomposed. */
function run(xs: readonly Tensor[], options: ScaledDotProductAttentionOptions, fused: boolean): Run {
  const [q, k, v] = xs.map((x) => x.detach().requiresGrad_()) as [Tensor, Tensor, Tensor];
  setFusedKernelsEnabled(fused);
  try {
    const before = attentionCalls();
    const y = F.scaledDotProductAttention(q, k, v, options);
    y.backward(uniform(y.shape, 99, 0.5, 1.5, y.dtype).to(FLASH));
    return { output: values(y), grads: [q, k, v].map((x) => values(x.grad!)), calls: attentionCalls() - before };
  } finally {
    setFusedKernelsEnabled(true);
  }
}

/** `actual` equals `expected` to `tol`·scale (scale: max(1, |e|), or the largest |e| with `relativeToMax`), NaN in the same places. */
function expectNear(actual: number[], expected: number[], tol: number, what: string, relativeToMax = false): void {
  expect(actual.length, what).toBe(expected.length);
  expect(actual.map(Number.isNaN), `${what}: NaN positions`).toEqual(expected.map(Number.isNaN));
  const largest = Math.max(1e-3, ...expected.filter(Number.isFinite).map(Math.abs));
  expected.forEach((e, i) => {
    if (Number.isNaN(e)) return;
    const scale = relativeToMax ? largest : Math.max(1, Math.abs(e));
    expect(Math.abs(actual[i]! - e) / scale, `${what} at ${i}: ${actual[i]} vs ${e}`).toBeLessThanOrEqual(tol);
  });
}

/** The fused path runs the kernel once and matches the decomposition's output and gradients. */
function expectFusedMatchesDecomposition(xs: readonly Tensor[], options: ScaledDotProductAttentionOptions, tol: number): Run {
  const fused = run(xs, options, true);
  const decomposed = run(xs, options, false);
  expect(fused.calls).toBe(1);
  expect(decomposed.calls).toBe(0);
  expectNear(fused.output, decomposed.output, tol, 'output');
  fused.grads.forEach((g, i) => expectNear(g, decomposed.grads[i]!, 10 * tol, `gradient of input ${i}`, true));
  return fused;
}

/** A bool mask [rows, cols] that keeps key `row % cols` in every row and about two thirds of the others. */
const boolMask = (rows: number, cols: number) =>
  tensor(Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => j === i % cols || ((i * cols + j) * 7) % 3 !== 0)), { dtype: bool }).to(FLASH);

describe.each([
  { dtype: float32, tol: 1e-5 },
  { dtype: float64, tol: 1e-12 },
])('fused attention equals the decomposition ($dtype.name, tolerance $tol)', ({ dtype, tol }) => {
  it('plain, with L ≠ S and E ≠ Ev', () => {
    expectFusedMatchesDecomposition(inputs([[2, 3, 4], [2, 5, 4], [2, 5, 6]], dtype), {}, tol);
  });

  it('unbatched [L, E] inputs and a custom negative scale', () => {
    expectFusedMatchesDecomposition(inputs([[4, 3], [6, 3], [6, 2]], dtype), { scale: -0.4 }, tol);
  });

  it('a bool mask broadcast from [L, S]', () => {
    expectFusedMatchesDecomposition(inputs([[2, 3, 4], [2, 5, 4], [2, 5, 3]], dtype), { attnMask: boolMask(3, 5) }, tol);
  });

  it('a float mask broadcast from [2, 1, S] and one whose batch dims cannot be flattened without a copy', () => {
    const xs = inputs([[2, 3, 4], [2, 5, 4], [2, 5, 3]], dtype);
    expectFusedMatchesDecomposition(xs, { attnMask: uniform([2, 1, 5], 7, -1, 1, dtype).to(FLASH) }, tol);
    const ys = inputs([[2, 3, 3, 4], [3, 5, 4], [1, 5, 2]], dtype);
    expectFusedMatchesDecomposition(ys, { attnMask: uniform([2, 1, 1, 5], 8, -1, 1, dtype).to(FLASH) }, tol);
  });

  it('isCausal with L < S and with L > S (top-left aligned)', () => {
    expectFusedMatchesDecomposition(inputs([[2, 3, 4], [2, 5, 4], [2, 5, 2]], dtype), { isCausal: true }, tol);
    expectFusedMatchesDecomposition(inputs([[2, 5, 4], [2, 3, 4], [2, 3, 2]], dtype), { isCausal: true }, tol);
  });

  it('batch dims broadcast between query, key and value, with a transposed query', () => {
    const [q, k, v] = inputs([[2, 3, 4, 3], [3, 5, 4], [1, 5, 2]], dtype);
    expectFusedMatchesDecomposition([q!.transpose(-2, -1), k!, v!], {}, tol);
  });

  it('a NaN in the query propagates to its output row (and the gradients), as in the decomposition', () => {
    const [q, k, v] = inputs([[2, 3, 4], [2, 5, 4], [2, 5, 3]], dtype);
    const withNaN = q!.detach().clone();
    withNaN.narrow(1, 1, 1).narrow(2, 2, 1).fill_(NaN);
    const fused = expectFusedMatchesDecomposition([withNaN, k!, v!], {}, tol);
    expect(fused.output.map(Number.isNaN)).toEqual(Array.from({ length: 18 }, (_, i) => Math.floor(i / 3) % 3 === 1));
  });

  it('a query whose keys are all masked out gives NaN, in its output row and in the gradients, as the decomposition does', () => {
    const m = tensor([[true, false, true, true], [false, false, false, false], [false, true, false, false]], { dtype: bool }).to(FLASH);
    const fused = expectFusedMatchesDecomposition(inputs([[2, 3, 4], [2, 4, 4], [2, 4, 2]], dtype), { attnMask: m }, tol);
    expect(fused.output.map(Number.isNaN)).toEqual(Array.from({ length: 12 }, (_, i) => Math.floor(i / 2) % 3 === 1));
  });
});

describe('fused attention in float16 and bfloat16', () => {
  it.each([
    { dtype: float16, u: 2 ** -11 },
    { dtype: bfloat16, u: 2 ** -8 },
  ])('$dtype.name: output and gradients are one rounding of float32 results (within u·max(1, |e|) + 1e-5 of float64)', ({ dtype, u }) => {
    const xs = inputs([[2, 3, 8], [2, 6, 8], [2, 6, 5]], dtype);
    const options = { attnMask: uniform([3, 6], 9, -1, 1, dtype).to(FLASH) };
    const half = run(xs, options, true);
    expect(half.calls).toBe(1);
    const exact = run(xs.map((x) => x.to(float64)), { attnMask: options.attnMask.to(float64) }, true);
    expectNear(half.output, exact.output, u + 1e-5, 'output');
    half.grads.forEach((g, i) => expectNear(g, exact.grads[i]!, u + 1e-5, `gradient of input ${i}`));
  });
});

describe('gradients through the fused kernel (float64)', () => {
  // gradcheck perturbs cpu inputs; the function moves them to the flash device and back.
  const small = () => [[2, 2, 3], [2, 3, 3], [2, 3, 2]].map((shape, i) => uniform(shape, 11 + i).requiresGrad_());

  it.each([
    { name: 'a float mask', options: () => ({ attnMask: uniform([2, 3], 4).to(FLASH) }) },
    { name: 'a bool mask', options: () => ({ attnMask: tensor([[true, false, true], [false, true, true]], { dtype: bool }).to(FLASH) }) },
    { name: 'isCausal', options: () => ({ isCausal: true }) },
  ])('gradcheck and gradgradcheck with $name', ({ options }) => {
    const before = attentionCalls();
    const fn = (q: Tensor, k: Tensor, v: Tensor) => F.scaledDotProductAttention(q.to(FLASH), k.to(FLASH), v.to(FLASH), options()).to('cpu');
    const first = gradcheck(fn, small());
    expect(first.mismatch ?? 'ok').toBe('ok');
    // The double backward differentiates the backward's own core ops (createGraph).
    const second = gradgradcheck(fn, small());
    expect(second.mismatch ?? 'ok').toBe('ok');
    expect(attentionCalls()).toBeGreaterThan(before);
  });
});

describe('when the fused kernel is not used', () => {
  const xs = () => inputs([[2, 3, 4], [2, 5, 4], [2, 5, 6]], float32);

  it('dropoutP > 0 runs the decomposition', () => {
    const [q, k, v] = xs();
    const before = attentionCalls();
    const y = F.scaledDotProductAttention(q!, k!, v!, { dropoutP: 0.5 });
    expect(y.shape).toEqual([2, 3, 6]);
    expect(attentionCalls()).toBe(before);
  });

  it('a float mask that requires grad runs the decomposition, which gives the mask its gradient', () => {
    const [q, k, v] = xs();
    const m = uniform([3, 5], 5, -1, 1, float32).to(FLASH).requiresGrad_();
    const before = attentionCalls();
    F.scaledDotProductAttention(q!, k!, v!, { attnMask: m }).sum().backward();
    expect(attentionCalls()).toBe(before);
    expect(m.grad?.shape).toEqual([3, 5]);
  });

  it('an empty dim runs the decomposition', () => {
    const before = attentionCalls();
    const y = F.scaledDotProductAttention(zeros([2, 0, 4], { device: FLASH }), zeros([2, 5, 4], { device: FLASH }), zeros([2, 5, 6], { device: FLASH }));
    expect(y.shape).toEqual([2, 0, 6]);
    expect(attentionCalls()).toBe(before);
  });

  it('a device without the kernel (the cpu) runs the decomposition', () => {
    const [q, k, v] = xs().map((x) => x.detach().to('cpu'));
    const before = attentionCalls();
    expect(F.scaledDotProductAttention(q!, k!, v!).shape).toEqual([2, 3, 6]);
    expect(attentionCalls()).toBe(before);
  });
});

describe('fused attention and its inputs', () => {
  it('invalid input is refused before the kernel runs, and the inputs are unchanged', () => {
    const [q, k, v] = inputs([[2, 3, 4], [2, 5, 4], [2, 5, 6]], float32);
    const before = [q, k, v].map((x) => values(x!));
    const calls = attentionCalls();
    expect(() => F.scaledDotProductAttention(q!, k!, v!, { attnMask: zeros([4, 5], { device: FLASH }) })).toThrow(ShapeError);
    expect(() => F.scaledDotProductAttention(q!, k!, v!.narrow(1, 0, 4))).toThrow(ShapeError);
    expect(attentionCalls()).toBe(calls);
    expect([q, k, v].map((x) => values(x!))).toEqual(before);
    expect([q, k, v].map((x) => x!.grad)).toEqual([null, null, null]);
  });

  it('the backward does not read the output, so changing it in place is allowed (as with the decomposition)', () => {
    const [q, k, v] = inputs([[2, 3, 4], [2, 5, 4], [2, 5, 6]], float32);
    const expected = run([q!, k!, v!], {}, true).grads;
    const y = F.scaledDotProductAttention(q!, k!, v!);
    y.mul_(2);
    y.backward(uniform(y.shape, 99, 0.5, 1.5, float32).to(FLASH));
    // Σ w·2y: twice the gradients of Σ w·y, exactly (scaling by 2 rounds nothing).
    expect([q, k, v].map((x) => values(x!.grad!))).toEqual(expected.map((g) => g.map((x) => 2 * x)));
  });

  it('the output inherits the query\'s creation site (named by device-mismatch errors)', () => {
    const q = zeros([2, 3, 4], { device: FLASH });
    const k = zeros([2, 4, 5], { device: FLASH }).transpose(1, 2); // copied to a contiguous key by an op of its own
    const v = zeros([2, 5, 6], { device: FLASH });
    const siteOf = (t: Tensor) => {
      try {
        checkSameDevice('probe', [{ name: 'a', tensor: zeros([1]) }, { name: 't', tensor: t }]);
      } catch (e) {
        return (e as DeviceMismatchError).createdAt;
      }
      throw new Error('expected a device mismatch');
    };
    const calls = attentionCalls();
    const y = F.scaledDotProductAttention(q, k, v);
    expect(attentionCalls()).toBe(calls + 1);
    expect(siteOf(q)).toMatch(/fused-attention\.test\.ts:\d+:\d+$/);
    expect(siteOf(y)).toBe(siteOf(q));
    expect(siteOf(k)).not.toBe(siteOf(q));
    expect(siteOf(v)).not.toBe(siteOf(q));
  });
});
