// Max pooling through the backend's fused kernels (core's fusedMaxPool2d: the cpu's maxPool2d and
// maxPool2dBackward) against the decomposition (a −∞-padded window view's max), fusion switched
// off: the same bits for values and gradients on inputs full of ties, ±0, NaN and −∞, with
// padding, dilation, strides other than the kernel, ceilMode and strided inputs, in every dtype;
// the second derivative; and the gradient of an all −∞ window next to padding, which goes to its
// first position inside the input, as PyTorch's does.
import { afterEach, describe, expect, it } from 'vitest';
import { autograd, bfloat16, float16, float32, float64, setFusedKernelsEnabled, tensor, type DType, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { values } from './helpers.js';

afterEach(() => setFusedKernelsEnabled(true));

/** Every element's value as text, telling −0 from +0 (and every NaN the same). */
function bits(t: Tensor): string[] {
  return values(t).map((v) => (Object.is(v, -0) ? '-0' : String(v)));
}

/** Seeded values drawn mostly from a few (ties), with ±0, NaN and −∞ among them. */
function tricky(shape: number[], seed: number, dtype: DType): Tensor {
  const pool = [0, -0, 1, -1, 2, 0.5, -Infinity, NaN, 3, -2.5];
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const n = shape.reduce((a, b) => a * b, 1);
  // NaN and −∞ about one in twenty each, so most windows have a finite maximum.
  const data = Array.from({ length: n }, () => {
    const u = next();
    return u < 0.05 ? NaN : u < 0.1 ? -Infinity : pool[Math.floor(next() * 6) + (next() < 0.3 ? 4 : 0)]!;
  });
  return tensor(data, { dtype }).reshape(shape);
}

/** Small integers: gradients that sum exactly in any order, so overlapping windows compare bit for bit. */
function weights(shape: readonly number[], seed: number, dtype: DType): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 5) - 2), { dtype }).reshape([...shape]);
}

/** The pooled values, the input's gradient for upstream `weights` and the autograd node, fused or decomposed. */
function run(fused: boolean, make: () => Tensor, pool: (x: Tensor) => Tensor, seed: number): { y: string[]; grad: string[]; node: string | null } {
  setFusedKernelsEnabled(fused);
  const base = make().requiresGrad_();
  const y = pool(base);
  y.backward(weights(y.shape, seed, y.dtype));
  return { y: bits(y), grad: bits(base.grad!), node: y.gradFn };
}

type Pool = (x: Tensor) => Tensor;
const GEOMETRIES: [string, number[], Pool][] = [
  ['kernel 2 (MaxPool2d(2))', [2, 3, 8, 8], (x) => F.maxPool2d(x, 2)],
  ['kernel 3, stride 2, padding 1 (overlapping windows)', [2, 2, 7, 9], (x) => F.maxPool2d(x, 3, 2, 1)],
  ['kernel [2, 3], stride [3, 1], padding [1, 1], dilation [2, 1]', [1, 3, 9, 7], (x) => F.maxPool2d(x, [2, 3], [3, 1], [1, 1], [2, 1])],
  ['kernel 3, stride 2, ceilMode (overhanging windows)', [2, 2, 8, 6], (x) => F.maxPool2d(x, 3, { stride: 2, ceilMode: true })],
  ['kernel 2, stride 1, padding 1, dilation 2, ceilMode', [1, 2, 6, 7], (x) => F.maxPool2d(x, 2, 1, 1, 2, true)],
  ['kernel 4, stride 3, padding 2, ceilMode', [1, 2, 10, 11], (x) => F.maxPool2d(x, 4, 3, 2, 1, true)],
  // Large enough (≥ 4096 elements) for the cpu's native float32 kernels.
  ['kernel 3, stride 2, padding 1, 4x8x18x16', [4, 8, 18, 16], (x) => F.maxPool2d(x, 3, 2, 1)],
];

/** The input as given, as a transposed view (H and W swapped back) and as a slice with an offset. */
const LAYOUTS: [string, (x: Tensor) => Tensor][] = [
  ['contiguous', (x) => x],
  ['transposed', (x) => x.transpose(2, 3).contiguous().transpose(2, 3)],
  ['sliced', (x) => x.repeat([1, 1, 1, 2]).narrow(3, 1, x.shape[3]!)],
];

describe('maxPool2d: the fused kernels give the decomposition\'s bits', () => {
  for (const dtype of [float32, float64, bfloat16, float16]) {
    for (const [name, shape, pool] of GEOMETRIES) {
      for (const [layout, view] of LAYOUTS) {
        it(`${dtype.name}, ${name}, ${layout} input: values and gradients`, () => {
          const seed = shape.reduce((a, b) => a * 31 + b, 7);
          const source = tricky(shape, seed, dtype);
          const make = () => view(source.clone());
          const fused = run(true, make, pool, seed);
          const decomposed = run(false, make, pool, seed);
          expect(fused.node).toBe('MaxPool2dWithIndicesBackward');
          expect(decomposed.node).not.toBe('MaxPool2dWithIndicesBackward');
          expect(fused.y).toEqual(decomposed.y);
          expect(fused.grad).toEqual(decomposed.grad);
        });
      }
    }
  }

  it('maxPool1d, MaxPool2d and MaxPool1d (batched and not) take the fused path with the same bits', () => {
    const x = tricky([3, 4, 13], 5, float32);
    const x2 = tricky([3, 6, 5], 6, float32);
    const pools: [Tensor, Pool][] = [
      [x, (t) => F.maxPool1d(t, 3, 2, 1, 1, true)],
      [x, (t) => new nn.MaxPool1d(2, { dilation: 3 }).forward(t)],
      [x.select(0, 0), (t) => F.maxPool1d(t, 2)],
      [x2, (t) => new nn.MaxPool2d([2, 3], { stride: 1, padding: 1 }).forward(t)],
    ];
    pools.forEach(([input, pool], k) => {
      const fused = run(true, () => input.clone(), pool, k);
      const decomposed = run(false, () => input.clone(), pool, k);
      expect(fused.node).toMatch(/MaxPool2dWithIndicesBackward|SqueezeBackward|ViewBackward/);
      expect(fused.y).toEqual(decomposed.y);
      expect(fused.grad).toEqual(decomposed.grad);
    });
  });

  it("sends an all −∞ window's gradient to its first position inside the input, not to the padding (PyTorch's rule), on both paths", () => {
    // PyTorch 1.13: x = torch.tensor([[[[-inf, 1.], [-inf, -inf]]]], requires_grad=True);
    // F.max_pool2d(x, 2, 1, 1).backward(torch.arange(9.).reshape(1, 1, 3, 3)); x.grad = [[[[3, 12], [13, 8]]]]
    for (const fused of [true, false]) {
      setFusedKernelsEnabled(fused);
      const x = tensor([[[[-Infinity, 1], [-Infinity, -Infinity]]]], { dtype: float32 }).requiresGrad_();
      const y = F.maxPool2d(x, 2, 1, 1);
      expect(values(y)).toEqual([-Infinity, 1, 1, -Infinity, 1, 1, -Infinity, -Infinity, -Infinity]);
      y.backward(tensor([0, 1, 2, 3, 4, 5, 6, 7, 8], { dtype: float32 }).reshape([1, 1, 3, 3]));
      expect(values(x.grad!)).toEqual([3, 12, 13, 8]);
    }
  });

  it('runs the decomposition for a geometry with a window wholly outside the input (−∞, no gradient), as the kernels never see one', () => {
    // Rows: H = 3, kernel 2, dilation 4, padding 1: the one window reads rows −1 and 3, both outside.
    const x = tensor(Array.from({ length: 12 }, (_, i) => i), { dtype: float32 }).reshape([1, 1, 3, 4]).requiresGrad_();
    const y = F.maxPool2d(x, [2, 1], 1, [1, 0], [4, 1]);
    expect(y.gradFn).not.toBe('MaxPool2dWithIndicesBackward');
    expect(values(y)).toEqual([-Infinity, -Infinity, -Infinity, -Infinity]);
    y.sum().backward();
    expect(values(x.grad!)).toEqual(new Array(12).fill(0));
  });

  it('a backward run with fusion turned off after a fused forward gives the same gradient (a scatter-add)', () => {
    const source = tricky([2, 3, 9, 8], 21, float32);
    const grads = [true, false].map((fusedBackward) => {
      setFusedKernelsEnabled(true);
      const x = source.clone().requiresGrad_();
      const y = F.maxPool2d(x, 3, 2, 1, 1, true);
      expect(y.gradFn).toBe('MaxPool2dWithIndicesBackward');
      setFusedKernelsEnabled(fusedBackward);
      y.backward(weights(y.shape, 4, float32));
      return bits(x.grad!);
    });
    expect(grads[1]).toEqual(grads[0]);
  });

  it('is differentiable twice (createGraph): the gradient of the backward is a gather at the indices', () => {
    // Finite values with ties (each repeats every 23 elements).
    const x = tensor(Array.from({ length: 144 }, (_, i) => ((i * 37) % 23) - 11.5), { dtype: float64 }).reshape([2, 2, 6, 6]);
    const w = weights([2, 2, 3, 3], 3, float64);
    const results = [true, false].map((fused) => {
      setFusedKernelsEnabled(fused);
      const xi = x.clone().requiresGrad_();
      const v = weights([2, 2, 6, 6], 5, float64).requiresGrad_();
      const y = F.maxPool2d(xi, 3, 2, 1);
      const [gx] = autograd.grad([y.mul(w).sum()], [xi], { createGraph: true });
      // d/dw of Σ gx·v: gx is linear in the upstream gradient w, so this is v gathered at the argmaxes.
      const wLeaf = w.clone().requiresGrad_();
      const [gx2] = autograd.grad([F.maxPool2d(xi, 3, 2, 1).mul(wLeaf).sum()], [xi], { createGraph: true });
      gx2!.mul(v).sum().backward();
      return { gx: bits(gx!), gw: bits(wLeaf.grad!), gv: bits(v.grad!) };
    });
    expect(results[0]).toEqual(results[1]);
    // v's gradient is gx itself; w's is v at each window's maximum.
    expect(results[0]!.gv).toEqual(results[0]!.gx);
    expect(results[0]!.gw.some((s) => s !== '0')).toBe(true);
  });
});
