// conv2d and maxPool2d against naive loop references written here, their error messages, the
// argmax routing of the pooling gradient, F.pad's modes, and a speed measurement.
import { describe, expect, it } from 'vitest';
import { float32, randn, tensor, ones, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, uniform, values } from './helpers.js';

interface Geometry { stride: [number, number]; padding: [number, number]; dilation: [number, number]; groups: number }

/** The textbook 7-loop convolution (cross-correlation) over zero-padded input. */
function naiveConv2d(x: Tensor, w: Tensor, b: Tensor | null, g: Geometry): { out: number[]; shape: number[] } {
  const [N, C, H, W] = x.shape as number[] as [number, number, number, number];
  const [O, Cg, KH, KW] = w.shape as number[] as [number, number, number, number];
  const xv = values(x);
  const wv = values(w);
  const bv = b ? values(b) : null;
  const [sh, sw] = g.stride;
  const [ph, pw] = g.padding;
  const [dh, dw] = g.dilation;
  const OH = Math.floor((H + 2 * ph - dh * (KH - 1) - 1) / sh) + 1;
  const OW = Math.floor((W + 2 * pw - dw * (KW - 1) - 1) / sw) + 1;
  const out = new Array<number>(N * O * OH * OW).fill(0);
  const perGroup = O / g.groups;
  for (let n = 0; n < N; n++)
    for (let o = 0; o < O; o++)
      for (let i = 0; i < OH; i++)
        for (let j = 0; j < OW; j++) {
          let s = bv ? bv[o]! : 0;
          const group = Math.floor(o / perGroup);
          for (let c = 0; c < Cg; c++)
            for (let ki = 0; ki < KH; ki++)
              for (let kj = 0; kj < KW; kj++) {
                const r = i * sh - ph + ki * dh;
                const q = j * sw - pw + kj * dw;
                if (r < 0 || r >= H || q < 0 || q >= W) continue;
                const ci = group * Cg + c;
                s += xv[((n * C + ci) * H + r) * W + q]! * wv[((o * Cg + c) * KH + ki) * KW + kj]!;
              }
          out[((n * O + o) * OH + i) * OW + j] = s;
        }
  return { out, shape: [N, O, OH, OW] };
}

/** Naive max pooling with −∞ padding; also returns the flat input index of each window's first max. */
function naiveMaxPool(x: Tensor, k: [number, number], s: [number, number], p: [number, number], d: [number, number], OH: number, OW: number) {
  const [N, C, H, W] = x.shape as number[] as [number, number, number, number];
  const xv = values(x);
  const out: number[] = [];
  const argmax: number[] = [];
  for (let n = 0; n < N; n++)
    for (let c = 0; c < C; c++)
      for (let i = 0; i < OH; i++)
        for (let j = 0; j < OW; j++) {
          let best = -Infinity;
          let at = -1;
          for (let ki = 0; ki < k[0]; ki++)
            for (let kj = 0; kj < k[1]; kj++) {
              const r = i * s[0] - p[0] + ki * d[0];
              const q = j * s[1] - p[1] + kj * d[1];
              if (r < 0 || r >= H || q < 0 || q >= W) continue;
              const idx = ((n * C + c) * H + r) * W + q;
              if (xv[idx]! > best) { best = xv[idx]!; at = idx; }
            }
          out.push(best);
          argmax.push(at);
        }
  return { out, argmax };
}

describe('F.conv2d against a naive 7-loop reference', () => {
  const cases: Array<[string, number[], number[], Partial<Geometry>, boolean]> = [
    ['3×3, no padding', [2, 3, 7, 6], [4, 3, 3, 3], {}, true],
    ['padding 1 (the MNIST CNN layer)', [3, 1, 8, 8], [8, 1, 3, 3], { padding: [1, 1] }, true],
    ['stride 2, padding [2, 1]', [2, 2, 9, 7], [3, 2, 3, 2], { stride: [2, 2], padding: [2, 1] }, true],
    ['dilation [2, 3], stride [1, 2]', [1, 2, 10, 11], [2, 2, 3, 3], { dilation: [2, 3], stride: [1, 2] }, false],
    ['groups 3 (depthwise-like)', [2, 6, 5, 5], [9, 2, 3, 3], { groups: 3, padding: [1, 1] }, true],
    ['stride = kernel (tiling path)', [2, 2, 6, 7], [3, 2, 2, 2], { stride: [2, 2] }, true],
    ['1×1 kernel', [2, 4, 3, 3], [5, 4, 1, 1], {}, true],
  ];
  for (const [id, xShape, wShape, geometry, withBias] of cases) {
    it(id, () => {
      const g: Geometry = { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1, ...geometry };
      const x = uniform(xShape, 1);
      const w = uniform(wShape, 2);
      const b = withBias ? uniform([wShape[0]!], 3) : null;
      const ref = naiveConv2d(x, w, b, g);
      const y = F.conv2d(x, w, b, g);
      expect(y.shape).toEqual(ref.shape);
      expectClose(y, ref.out, 1e-12);
      // float32 too, within float32 rounding
      expectClose(F.conv2d(x.float(), w.float(), b?.float(), g), ref.out, 1e-5);
    });
  }

  it("padding 'same' keeps the spatial size (odd padding at the end, like PyTorch)", () => {
    const x = uniform([1, 2, 5, 6], 4);
    const w = uniform([3, 2, 2, 4], 5);
    const y = F.conv2d(x, w, null, { padding: 'same' });
    expect(y.shape).toEqual([1, 3, 5, 6]);
    // total padding 1 (rows: 0 before, 1 after) and 3 (cols: 1 before, 2 after)
    const ref = naiveConv2d(F.pad(x, [1, 2, 0, 1]), w, null, { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 });
    expectClose(y, ref.out, 1e-12);
  });

  it('nn.Conv2d forwards with its own weight, bias and options', () => {
    const conv = new nn.Conv2d(2, 3, [3, 2], { stride: [2, 1], padding: 1, dilation: [1, 2] }).double();
    const x = uniform([2, 2, 6, 6], 6);
    const ref = naiveConv2d(x, conv.weight, conv.bias, { stride: [2, 1], padding: [1, 1], dilation: [1, 2], groups: 1 });
    expectClose(conv.forward(x), ref.out, 1e-12);
  });

  it('reports wrong channels, ranks, dtypes and too-small inputs clearly', () => {
    const w = zeros([8, 1, 3, 3]);
    expect(() => F.conv2d(zeros([64, 3, 28, 28]), w)).toThrow(
      'Given groups=1, weight of size [8, 1, 3, 3], expected input[64, 3, 28, 28] to have 1 channels, but got 3 channels instead',
    );
    expect(() => F.conv2d(zeros([28, 28]), w)).toThrow('expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of shape [28, 28] (2-D)');
    expect(() => F.conv2d(zeros([1, 1, 5, 5]).double(), w)).toThrow('input is float64 but weight is float32');
    expect(() => F.conv2d(zeros([1, 1, 2, 2]), w)).toThrow('Calculated output size: (8x0x0). Output size is too small');
    expect(() => F.conv2d(zeros([1, 1, 5, 5]), w, null, { padding: 'same', stride: 2 })).toThrow("padding='same' is not supported for strided convolutions");
  });
});

describe('F.maxPool2d against a naive reference', () => {
  const cases: Array<[string, number[], [number, number], { stride?: [number, number]; padding?: [number, number]; dilation?: [number, number]; ceilMode?: boolean }]> = [
    ['2×2 (tiling path)', [2, 3, 6, 8], [2, 2], {}],
    ['2×2 on odd sizes (floor)', [1, 2, 7, 5], [2, 2], {}],
    ['3×3 stride 2 padding 1', [2, 2, 7, 8], [3, 3], { stride: [2, 2], padding: [1, 1] }],
    ['2×3 dilation [2, 1] stride 1', [1, 2, 7, 6], [2, 3], { stride: [1, 1], dilation: [2, 1] }],
    ['ceilMode 3×3 stride 2', [1, 2, 6, 6], [3, 3], { stride: [2, 2], ceilMode: true }],
    ['ceilMode 2×2 with padding 1', [1, 1, 5, 6], [2, 2], { padding: [1, 1], ceilMode: true }],
  ];
  for (const [id, shape, k, opts] of cases) {
    it(id, () => {
      const x = uniform(shape, 11);
      const y = F.maxPool2d(x, k, opts);
      const [, , OH, OW] = y.shape as number[] as [number, number, number, number];
      const ref = naiveMaxPool(x, k, opts.stride ?? k, opts.padding ?? [0, 0], opts.dilation ?? [1, 1], OH, OW);
      expectClose(y, ref.out, 0);
      // The gradient goes to each window's argmax (summed where windows share it), nowhere else.
      const leafX = x.detach().requiresGrad_();
      const g = uniform(y.shape, 12);
      F.maxPool2d(leafX, k, opts).backward(g);
      const expected = new Array<number>(x.numel()).fill(0);
      const gv = values(g);
      ref.argmax.forEach((at, i) => { expected[at] += gv[i]!; });
      expectClose(leafX.grad!, expected, 1e-12);
    });
  }

  it('output sizes follow PyTorch (ceil mode drops a window that starts in the padding)', () => {
    expect(F.maxPool2d(zeros([1, 1, 28, 28]), 2).shape).toEqual([1, 1, 14, 14]);
    expect(F.maxPool2d(zeros([1, 1, 5, 5]), 2, { ceilMode: true }).shape).toEqual([1, 1, 3, 3]);
    expect(F.maxPool2d(zeros([1, 1, 5, 5]), 2, { padding: 1, ceilMode: true }).shape).toEqual([1, 1, 3, 3]);
    expect(F.maxPool2d(zeros([1, 1, 6, 6]), 3, { stride: 2, ceilMode: true }).shape).toEqual([1, 1, 3, 3]);
  });

  it('ties send the whole gradient to the first maximum of the window', () => {
    const x = ones([1, 1, 2, 2]).requiresGrad_();
    F.maxPool2d(x, 2).sum().backward();
    expect(values(x.grad!)).toEqual([1, 0, 0, 0]);
  });

  it('rejects padding above half the kernel and integer input', () => {
    expect(() => F.maxPool2d(zeros([1, 1, 6, 6]), 2, { padding: 2 })).toThrow('pad should be smaller than or equal to half of kernel size');
    expect(() => F.maxPool2d(tensor([[[[1, 2], [3, 4]]]], { dtype: (zeros([1]).int()).dtype }), 2)).toThrow('expected a floating point input');
  });

  it('nn.MaxPool2d defaults the stride to the kernel size', () => {
    const pool = new nn.MaxPool2d(3);
    expect(pool.stride).toEqual([3, 3]);
    expect(pool.forward(zeros([2, 4, 9, 10])).shape).toEqual([2, 4, 3, 3]);
  });
});

describe('F.pad modes', () => {
  const x = tensor([[1, 2, 3], [4, 5, 6]]);
  it('constant, reflect, replicate, circular', async () => {
    expect(await F.pad(x, [1, 1], 'constant', 9).toArray()).toEqual([[9, 1, 2, 3, 9], [9, 4, 5, 6, 9]]);
    expect(await F.pad(x, [2, 1], 'reflect').toArray()).toEqual([[3, 2, 1, 2, 3, 2], [6, 5, 4, 5, 6, 5]]);
    expect(await F.pad(x, [1, 2], 'replicate').toArray()).toEqual([[1, 1, 2, 3, 3, 3], [4, 4, 5, 6, 6, 6]]);
    expect(await F.pad(x, [1, 1, 1, 0], 'circular').toArray()).toEqual([[6, 4, 5, 6, 4], [3, 1, 2, 3, 1], [6, 4, 5, 6, 4]]);
  });
  it('rejects reflect padding as large as the dim', () => {
    expect(() => F.pad(x, [3, 0], 'reflect')).toThrow('reflect padding (3, 0) must be at most 2 for dim 1 of size 3');
  });
});

describe('speed on the CPU backend', () => {
  it('F.conv2d forward + backward: batch 64, 1×28×28 → 8 channels, 3×3, padding 1', () => {
    const x = randn([64, 1, 28, 28]);
    const w = randn([8, 1, 3, 3]).mul(0.3).requiresGrad_();
    const b = zeros([8]).requiresGrad_();
    const time = (inputGrad: boolean) => {
      const input = inputGrad ? x.detach().requiresGrad_() : x;
      const t0 = performance.now();
      F.conv2d(input, w, b, { padding: 1 }).sum().backward();
      return performance.now() - t0;
    };
    time(false); time(true); // warm-up
    const median = (xs: number[]) => xs.sort((a, c) => a - c)[Math.floor(xs.length / 2)]!;
    const weightsOnly = median(Array.from({ length: 7 }, () => time(false)));
    const withInput = median(Array.from({ length: 7 }, () => time(true)));
    console.log(`F.conv2d fwd+bwd, [64,1,28,28] → 8×3×3: ${weightsOnly.toFixed(1)} ms (weight/bias grads), ${withInput.toFixed(1)} ms (with input grad)`);
    expect(w.grad!.dtype).toBe(float32);
    expect(withInput).toBeLessThan(2000); // a loose bound: per-pixel JS loops would take seconds
  });
});

describe("PyTorch's positional arguments (conv and pooling), beside the keyword object", () => {
  const x = uniform([2, 3, 7, 6], 70);
  const w = uniform([4, 3, 3, 3], 71);
  const b = uniform([4], 72);

  it('F.conv2d(x, w, b, stride, padding, dilation, groups) equals the keyword form', () => {
    expect(values(F.conv2d(x, w, b, 2, 1))).toEqual(values(F.conv2d(x, w, b, { stride: 2, padding: 1 })));
    expect(values(F.conv2d(x, w, null, [1, 2], 0, 2))).toEqual(values(F.conv2d(x, w, null, { stride: [1, 2], dilation: 2 })));
    expect(values(F.conv2d(x, w, { bias: b, padding: 'same' }))).toEqual(values(F.conv2d(x, w, b, 1, 'same')));
    expect(values(F.conv2d(x, w, b, 1, 1, { dilation: 2 }))).toEqual(values(F.conv2d(x, w, b, { padding: 1, dilation: 2 })));
  });

  it('new nn.Conv2d(inChannels, outChannels, kernelSize, stride, padding, dilation, groups, bias)', () => {
    const conv = new nn.Conv2d(1, 32, 3, 1);
    expect([conv.stride, conv.padding]).toEqual([[1, 1], [0, 0]]);
    const full = new nn.Conv2d(4, 8, 3, 2, 1, 1, 2, false);
    expect([full.stride, full.padding, full.dilation, full.groups, full.bias]).toEqual([[2, 2], [1, 1], [1, 1], 2, null]);
    expect(full.weight.shape).toEqual([8, 2, 3, 3]);
    const mixed = new nn.Conv2d(3, 4, 3, 2, { padding: 1, dtype: float32 });
    expect([mixed.stride, mixed.padding]).toEqual([[2, 2], [1, 1]]);
  });

  it('F.maxPool2d(x, kernelSize, stride, padding, dilation, ceilMode) and new nn.MaxPool2d(kernelSize, stride, padding, dilation, returnIndices, ceilMode)', () => {
    expect(values(F.maxPool2d(x, 3, 2, 1))).toEqual(values(F.maxPool2d(x, 3, { stride: 2, padding: 1 })));
    expect(values(F.maxPool2d(x, 2, null, 0, 1, true))).toEqual(values(F.maxPool2d(x, 2, { ceilMode: true })));
    const pool = new nn.MaxPool2d(2, 2);
    expect(pool.stride).toEqual([2, 2]);
    const ceil = new nn.MaxPool2d(2, 1, 0, 1, false, true);
    expect(ceil.ceilMode).toBe(true);
    expect(values(new nn.MaxPool2d(3, 2, 1).forward(x))).toEqual(values(F.maxPool2d(x, 3, 2, 1)));
  });

  it('a value given both ways, an unknown keyword, too many positionals, or returnIndices are errors naming it', () => {
    expect(() => F.conv2d(x, w, b, 2, { stride: 2 })).toThrow(TypeError);
    expect(() => F.conv2d(x, w, b, 2, { stride: 2 })).toThrow("conv2d() got multiple values for argument 'stride' (given by position and by name)");
    expect(() => F.conv2d(x, w, b, { strides: 2 } as never)).toThrow("conv2d() got an unexpected keyword argument 'strides' (it takes bias, stride, padding, dilation, groups)");
    expect(() => new nn.Conv2d(1, 2, 3, { kernel: 3 } as never)).toThrow("Conv2d() got an unexpected keyword argument 'kernel'");
    expect(() => new nn.MaxPool2d(2, 2, 0, 1, false, false, 7 as never)).toThrow('MaxPool2d() takes at most 5 positional arguments');
    expect(() => F.maxPool2d(x, 2, { returnIndices: true })).toThrow('returnIndices is not supported');
    expect(() => new nn.Linear(2, 3, true, { bias: false })).toThrow("Linear() got multiple values for argument 'bias'");
    expect(new nn.Linear(2, 3, false).bias).toBeNull();
  });
});
