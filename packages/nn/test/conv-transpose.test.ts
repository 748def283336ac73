// F.conv1d, F.convTranspose1d, F.convTranspose2d and their layers: values and gradients against
// PyTorch 1.13 (conv-references.ts), gradcheck in float64, the transposed convolution as conv2d's
// adjoint, half types rounding once, autocast (AC-8), PyTorch's errors, and the layers' arguments.
import { describe, expect, it } from 'vitest';
import {
  autocast, bfloat16, DTypeError, float16, float32, float64, OP_TABLE, ShapeError, ValueError, zeros, type Tensor,
} from '@core/tensor';
import { F, nn } from '../src/index.js';
import { CONV_REF, expectMatchesTorch } from './conv-references.js';
import { expectClose, expectGradcheck, leaf, uniform, values } from './helpers.js';

/** Σ a·b over all elements. */
const dot = (a: Tensor, b: Tensor): number => values(a.mul(b).sum())[0]!;

/** PyTorch's default init: weight and bias within ±1/√fanIn, and reaching past half of it (hundreds of draws). */
function expectDefaultInit(layer: { weight: Tensor; bias: Tensor | null }, fanIn: number): void {
  const bound = 1 / Math.sqrt(fanIn);
  for (const p of [layer.weight, layer.bias!]) {
    const m = Math.max(...values(p).map(Math.abs));
    expect(m).toBeLessThanOrEqual(bound);
    expect(m).toBeGreaterThan(0.5 * bound);
  }
}

describe('F.conv1d against PyTorch 1.13 (float64 to 1e-9, float32 to 1e-5)', () => {
  it('stride 2, padding 1, groups 2, with bias', () => {
    expectMatchesTorch(CONV_REF.conv1dGroups, (x, w, b) => F.conv1d(x!, w!, b!, 2, 1, 1, 2));
  });
  it("padding 'same' with dilation 2 and an even kernel (the odd zero at the end)", () => {
    expectMatchesTorch(CONV_REF.conv1dSameDilated, (x, w) => F.conv1d(x!, w!, null, { padding: 'same', dilation: 2 }));
  });
  it("unbatched [C, L] input, stride 3, padding 'valid'", () => {
    expectMatchesTorch(CONV_REF.conv1dUnbatched, (x, w, b) => F.conv1d(x!, w!, { bias: b!, stride: 3, padding: 'valid' }));
  });
  it('equals conv2d over a height of 1', () => {
    const x = uniform([2, 4, 9], 1);
    const w = uniform([6, 2, 3], 2);
    const y2 = F.conv2d(x.unsqueeze(2), w.unsqueeze(2), null, { stride: [1, 2], padding: [0, 2], dilation: [1, 3], groups: 2 }).squeeze(2);
    expect(values(F.conv1d(x, w, null, 2, 2, 3, 2))).toEqual(values(y2));
  });
});

describe('F.convTranspose1d and F.convTranspose2d against PyTorch 1.13 (float64 to 1e-9, float32 to 1e-5)', () => {
  it('1-D: stride 2, padding 1, outputPadding 1, with bias', () => {
    expectMatchesTorch(CONV_REF.convT1dStride, (x, w, b) => F.convTranspose1d(x!, w!, b!, 2, 1, 1));
  });
  it('1-D: groups 2, dilation 3, padding 2', () => {
    expectMatchesTorch(CONV_REF.convT1dGroupsDilated, (x, w) => F.convTranspose1d(x!, w!, null, { padding: 2, groups: 2, dilation: 3 }));
  });
  it('1-D: unbatched [C, L], stride 3, outputPadding 2', () => {
    expectMatchesTorch(CONV_REF.convT1dUnbatched, (x, w, b) => F.convTranspose1d(x!, w!, b!, { stride: 3, outputPadding: 2 }));
  });
  it('2-D: stride 2, padding 1, outputPadding 1, with bias', () => {
    expectMatchesTorch(CONV_REF.convT2dStride, (x, w, b) => F.convTranspose2d(x!, w!, b!, 2, 1, 1));
  });
  it('2-D: groups 2, stride [1, 2], padding [0, 1], outputPadding [1, 0] (below the dilation), dilation [2, 1]', () => {
    expectMatchesTorch(CONV_REF.convT2dGroups, (x, w, b) => F.convTranspose2d(x!, w!, b!, [1, 2], [0, 1], [1, 0], 2, [2, 1]));
  });
  it('2-D: unbatched [C, H, W], stride [3, 2], outputPadding [2, 1]', () => {
    expectMatchesTorch(CONV_REF.convT2dUnbatched, (x, w, b) => F.convTranspose2d(x!, w!, b!, { stride: [3, 2], outputPadding: [2, 1] }));
  });
  it('2-D: padding that crops all but the centre pixel', () => {
    expectMatchesTorch(CONV_REF.convT2dCropped, (x, w) => F.convTranspose2d(x!, w!, null, { padding: 2 }));
  });
});

describe('the transposed convolution is the adjoint of the convolution', () => {
  const cases: Array<[string, number[], number[], { stride?: [number, number]; padding?: [number, number]; dilation?: [number, number]; groups?: number }]> = [
    ['3×3, stride 2, padding 1', [2, 3, 7, 8], [4, 3, 3, 3], { stride: [2, 2], padding: [1, 1] }],
    ['groups 2, dilation [2, 1], stride [1, 3]', [1, 4, 9, 10], [6, 2, 2, 3], { groups: 2, dilation: [2, 1], stride: [1, 3] }],
    ['stride = kernel', [1, 2, 6, 6], [3, 2, 2, 2], { stride: [2, 2] }],
  ];
  for (const [id, xShape, wShape, geometry] of cases) {
    it(`${id}: <conv2d(x, w), y> = <x, convTranspose2d(y, w)>, and conv2d's input gradient is convTranspose2d`, () => {
      const x = uniform(xShape, 3).requiresGrad_();
      const w = uniform(wShape, 4);
      const conv = F.conv2d(x, w, null, geometry);
      const y = uniform(conv.shape, 5);
      // the rows and columns the convolution never reads come back through outputPadding
      const [H, W] = xShape.slice(2) as [number, number];
      const [s, p, d] = [geometry.stride ?? [1, 1], geometry.padding ?? [0, 0], geometry.dilation ?? [1, 1]];
      const outputPadding = [0, 1].map((i) => [H, W][i]! - ((conv.shape[i + 2]! - 1) * s[i]! - 2 * p[i]! + d[i]! * (wShape[i + 2]! - 1) + 1)) as [number, number];
      const back = F.convTranspose2d(y, w, null, { ...geometry, outputPadding });
      expect(back.shape).toEqual(xShape);
      expect(dot(conv, y)).toBeCloseTo(dot(x, back), 10);
      conv.backward(y);
      expectClose(x.grad!, back, 1e-12);
    });
  }
});

describe('gradcheck in float64', () => {
  it('convTranspose2d: input, weight and bias (stride 2, padding 1, outputPadding 1, groups 2, dilation [1, 2])', () => {
    expectGradcheck((x, w, b) => F.convTranspose2d(x!, w!, b!, 2, 1, 1, 2, [1, 2]), [leaf([1, 4, 3, 2], 10), leaf([4, 1, 2, 2], 11), leaf([2], 12)]);
  });
  it('convTranspose1d: input, weight and bias (stride 3, outputPadding 2)', () => {
    expectGradcheck((x, w, b) => F.convTranspose1d(x!, w!, b!, { stride: 3, outputPadding: 2 }), [leaf([2, 2, 3], 13), leaf([2, 3, 2], 14), leaf([3], 15)]);
  });
  it("conv1d: input, weight and bias (padding 'same', dilation 2, groups 2)", () => {
    expectGradcheck((x, w, b) => F.conv1d(x!, w!, b!, { padding: 'same', dilation: 2, groups: 2 }), [leaf([1, 4, 6], 16), leaf([2, 2, 3], 17), leaf([2], 18)]);
  });
});

describe('half types', () => {
  it('convTranspose2d of float16 accumulates in float32 (bias included) and rounds once', () => {
    const [x, w, b] = [uniform([1, 3, 4, 4], 20), uniform([3, 2, 3, 3], 21), uniform([2], 22)].map((t) => t.to(float16));
    const y = F.convTranspose2d(x!, w!, b!, 2, 1, 1);
    expect(y.dtype).toBe(float16);
    expect(values(y)).toEqual(values(F.convTranspose2d(x!.float(), w!.float(), b!.float(), 2, 1, 1).to(float16)));
  });
});

describe('autocast (AC-8): lower precision, like conv2d', () => {
  it('the op table lists conv1d, convTranspose1d and convTranspose2d as lowerPrecision on cuda and cpu', () => {
    for (const op of ['conv1d', 'convTranspose1d', 'convTranspose2d'] as const) {
      expect(OP_TABLE[op].autocast).toEqual({ cuda: 'lowerPrecision', cpu: 'lowerPrecision' });
    }
  });
  it('float32 inputs give bfloat16 in a cpu bfloat16 region, float32 outside it', () => {
    const x1 = uniform([1, 2, 6], 30, -1, 1, float32);
    const x2 = uniform([1, 2, 3, 3], 31, -1, 1, float32);
    const calls: Array<() => Tensor> = [
      () => F.conv1d(x1, uniform([3, 2, 3], 32, -1, 1, float32), uniform([3], 33, -1, 1, float32)),
      () => F.convTranspose1d(x1, uniform([2, 3, 3], 34, -1, 1, float32), uniform([3], 35, -1, 1, float32), 2),
      () => F.convTranspose2d(x2, uniform([2, 3, 2, 2], 36, -1, 1, float32), uniform([3], 37, -1, 1, float32), 2),
    ];
    for (const call of calls) {
      const inRegion = autocast({ deviceType: 'cpu', dtype: bfloat16 }, call);
      expect(inRegion.dtype).toBe(bfloat16);
      expectClose(inRegion, call(), 5e-2);
      expect(call().dtype).toBe(float32);
    }
  });
});

describe("PyTorch's errors, as typed errors", () => {
  it('conv1d: channels, ranks, bias, groups, dtypes and sizes', () => {
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 2, 3]))).toThrow(
      new ShapeError('conv1d(): Given groups=1, weight of size [4, 2, 3], expected input[2, 3, 5] to have 2 channels, but got 3 channels instead', 'conv1d'),
    );
    expect(() => F.conv1d(zeros([2, 3, 5, 5]), zeros([4, 3, 3]))).toThrow('expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of shape [2, 3, 5, 5] (4-D)');
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 3, 1]))).toThrow('conv1d(): weight must be 3-D [outChannels, inChannels/groups, kW], got [4, 3, 3, 1]');
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 3]), zeros([3]))).toThrow(
      'Given weight of size [4, 3, 3], expected bias to be 1-dimensional with 4 elements, but got bias of size [3] instead',
    );
    expect(() => F.conv1d(zeros([2, 4, 5]), zeros([3, 2, 3]), null, { groups: 2 })).toThrow(
      'Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3] instead',
    );
    expect(() => F.conv1d(zeros([2, 3, 5]).double(), zeros([4, 3, 3]))).toThrow(DTypeError);
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 7]))).toThrow('Output size is too small');
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 3]), null, { stride: 2, padding: 'same' })).toThrow(
      new ValueError("conv1d(): padding='same' is not supported for strided convolutions"),
    );
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 3]), null, { padding: 'full' as never })).toThrow('conv1d(): invalid padding string "full"');
    expect(() => F.conv1d(zeros([2, 3, 5]), zeros([4, 3, 3]), null, [1, 1] as never)).toThrow('conv1d: stride must be an integer ≥ 1 or a list of one, got [1,1]');
  });

  it('convTranspose: channels, bias, output padding, output size, ranks and arguments', () => {
    const x = zeros([2, 3, 5, 5]);
    expect(() => F.convTranspose2d(x, zeros([4, 2, 3, 3]))).toThrow(
      new ShapeError('convTranspose2d(): Given transposed=1, weight of size [4, 2, 3, 3], expected input[2, 3, 5, 5] to have 4 channels, but got 3 channels instead', 'convTranspose2d'),
    );
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { groups: 2 })).toThrow(
      'Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3] instead',
    );
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), zeros([3]))).toThrow(
      'Given transposed=1, weight of size [3, 2, 3, 3], expected bias to be 1-dimensional with 2 elements, but got bias of size [3] instead',
    );
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, 2, 0, 2)).toThrow(
      new ValueError('convTranspose2d(): output padding must be smaller than either stride or dilation, but got outputPadding=[2,2], stride=[2,2], dilation=[1,1]'),
    );
    expect(F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { dilation: 3, outputPadding: 2 }).shape).toEqual([2, 2, 13, 13]);
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { padding: 5 })).toThrow(
      'convTranspose2d(): Given input size per channel: (5 x 5). Calculated output size per channel: (-3 x -3). Output size is too small',
    );
    expect(() => F.convTranspose2d(zeros([5, 5]), zeros([3, 2, 3, 3]))).toThrow('expected 3D (unbatched) or 4D (batched) input to convTranspose2d');
    expect(() => F.convTranspose1d(zeros([2, 3, 5]), zeros([3, 2, 3, 1]))).toThrow('convTranspose1d(): weight must be 3-D [inChannels, outChannels/groups, kW], got [3, 2, 3, 1]');
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { padding: -1 })).toThrow('convTranspose2d: padding must be an integer ≥ 0 or a pair of them, got -1');
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { padding: 'same' as never })).toThrow(ValueError);
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { stride: 0 })).toThrow('stride must be an integer ≥ 1');
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, 1, 0, 0, 1, 1, 9 as never)).toThrow(TypeError);
    expect(() => F.convTranspose2d(x, zeros([3, 2, 3, 3]), null, { outputSize: [7, 7] } as never)).toThrow("convTranspose2d() got an unexpected keyword argument 'outputSize'");
  });
});

describe('nn.Conv1d', () => {
  it("PyTorch's order: new nn.Conv1d(in, out, kernelSize, stride, padding, dilation, groups, bias, paddingMode), or by name", () => {
    const conv = new nn.Conv1d(4, 6, 3, 2, 1, 1, 2, false).double();
    expect([conv.kernelSize, conv.stride, conv.padding, conv.dilation, conv.groups, conv.bias]).toEqual([[3], [2], [1], [1], 2, null]);
    expect(conv.weight.shape).toEqual([6, 2, 3]);
    expect(Object.keys(conv.stateDict())).toEqual(['weight']);
    const x = uniform([2, 4, 9], 40);
    expect(values(conv.forward(x))).toEqual(values(F.conv1d(x, conv.weight, null, 2, 1, 1, 2)));
    const named = new nn.Conv1d(4, 6, [3], { stride: 2, dtype: float64 });
    expect([named.stride, named.bias!.shape, named.weight.dtype]).toEqual([[2], [6], float64]);
    expect(named.toString()).toBe('Conv1d(4, 6, kernelSize=[3], stride=[2])');
  });

  it('default init: U(±1/√fan_in), fan_in = inChannels/groups·kW', () => {
    expectDefaultInit(new nn.Conv1d(8, 16, 5, { groups: 2 }), 4 * 5);
  });

  it("paddingMode 'reflect', 'replicate' and 'circular' pad with F.pad, then convolve without padding", () => {
    const x = uniform([2, 3, 7], 41);
    for (const mode of ['reflect', 'replicate', 'circular'] as const) {
      const conv = new nn.Conv1d(3, 2, 3, { padding: 2, dilation: 2, paddingMode: mode }).double();
      expect(values(conv.forward(x))).toEqual(values(F.conv1d(F.pad(x, [2, 2], mode), conv.weight, conv.bias, { dilation: 2 })));
      expect(conv.toString()).toContain(`paddingMode='${mode}'`);
    }
    const same = new nn.Conv1d(3, 2, 4, { padding: 'same', paddingMode: 'circular' }).double();
    expect(same.forward(x).shape).toEqual([2, 2, 7]);
    // total padding 3: 1 before, 2 after, as zero 'same' padding
    expect(values(same.forward(x))).toEqual(values(F.conv1d(F.pad(x, [1, 2], 'circular'), same.weight, same.bias)));
  });

  it('rejects bad groups, channel counts, padding and padding modes', () => {
    expect(() => new nn.Conv1d(3, 4, 3, { groups: 2 })).toThrow(new ValueError('Conv1d: inChannels (3) must be a positive integer divisible by groups (2)'));
    expect(() => new nn.Conv1d(4, 3, 3, { groups: 2 })).toThrow('Conv1d: outChannels (3) must be a positive integer divisible by groups (2)');
    expect(() => new nn.Conv1d(3, 4, 3, { groups: 0 })).toThrow('Conv1d: groups must be a positive integer, got 0');
    expect(() => new nn.Conv1d(3, 4, 3, 2, 'same')).toThrow("padding='same' is not supported for strided convolutions");
    expect(() => new nn.Conv1d(3, 4, 3, 1, 'full' as never)).toThrow('invalid padding string "full"');
    expect(() => new nn.Conv1d(3, 4, 3, { paddingMode: 'mirror' as never })).toThrow(
      "Conv1d: paddingMode must be one of 'zeros', 'reflect', 'replicate' or 'circular', got 'mirror'",
    );
  });
});

describe('nn.Conv2d paddingMode', () => {
  it("'reflect' with padding [1, 2] pads the width by 2 and the height by 1", () => {
    const conv = new nn.Conv2d(2, 3, 3, { padding: [1, 2], paddingMode: 'reflect' }).double();
    const x = uniform([1, 2, 5, 6], 42);
    expect(values(conv.forward(x))).toEqual(values(F.conv2d(F.pad(x, [2, 2, 1, 1], 'reflect'), conv.weight, conv.bias)));
  });
});

describe('nn.ConvTranspose1d and nn.ConvTranspose2d', () => {
  it("PyTorch's order: (in, out, kernelSize, stride, padding, outputPadding, groups, bias, dilation, paddingMode), weight [in, out/groups, ...k]", () => {
    const layer = new nn.ConvTranspose2d(4, 6, [3, 2], 2, 1, [1, 0], 2, true, 2).double();
    expect([layer.stride, layer.padding, layer.outputPadding, layer.groups, layer.dilation, layer.transposed]).toEqual([[2, 2], [1, 1], [1, 0], 2, [2, 2], true]);
    expect(layer.weight.shape).toEqual([4, 3, 3, 2]);
    expect(layer.bias!.shape).toEqual([6]);
    const x = uniform([2, 4, 3, 4], 50);
    expect(values(layer.forward(x))).toEqual(values(F.convTranspose2d(x, layer.weight, layer.bias, 2, 1, [1, 0], 2, 2)));
    expect(layer.toString()).toBe('ConvTranspose2d(4, 6, kernelSize=[3,2], stride=[2,2], padding=[1,1], dilation=[2,2], outputPadding=[1,0], groups=2)');
    const oneD = new nn.ConvTranspose1d(3, 2, 4, { stride: 3, bias: false });
    expect([oneD.weight.shape, oneD.bias, oneD.forward(zeros([1, 3, 5])).shape]).toEqual([[3, 2, 4], null, [1, 2, 16]]);
  });

  it('default init: U(±1/√fan_in) with fan_in = weight.shape[1]·∏kernelSize = outChannels/groups·kH·kW', () => {
    expectDefaultInit(new nn.ConvTranspose2d(4, 6, 3, { groups: 2 }), 3 * 9);
  });

  it('forward(input, outputSize) picks the output padding: spatial sizes, or with the batch and channel dims', () => {
    const layer = new nn.ConvTranspose2d(3, 4, 3, 2).double();
    const x = uniform([2, 3, 5, 5], 51);
    expect(layer.forward(x).shape).toEqual([2, 4, 11, 11]);
    const sized = layer.forward(x, [12, 11]);
    expect(sized.shape).toEqual([2, 4, 12, 11]);
    expect(values(sized)).toEqual(values(F.convTranspose2d(x, layer.weight, layer.bias, 2, 0, [1, 0])));
    expect(layer.forward(x, [2, 4, 12, 12]).shape).toEqual([2, 4, 12, 12]);
    expect(layer.call(x.select(0, 0), [4, 11, 12]).shape).toEqual([4, 11, 12]);
    expect(() => layer.forward(x, [4, 12, 11])).toThrow(new ValueError('ConvTranspose2d: for 4D input, outputSize must have 2 or 4 elements (got 3)'));
    const oneD = new nn.ConvTranspose1d(3, 4, 3, 3);
    expect(() => oneD.forward(zeros([2, 3, 5]), [14])).toThrow('ConvTranspose1d: requested an output size of [14], but valid sizes range from [15] to [17] (for an input of [5])');
    expect(oneD.forward(zeros([2, 3, 5]), [17]).shape).toEqual([2, 4, 17]);
  });

  it('only zero padding, and no padding strings', () => {
    expect(() => new nn.ConvTranspose2d(3, 4, 3, { paddingMode: 'reflect' as never })).toThrow(
      new ValueError(`ConvTranspose2d: Only "zeros" padding mode is supported for ConvTranspose2d, got 'reflect'`),
    );
    expect(() => new nn.ConvTranspose1d(3, 4, 3, 1, 'same' as never)).toThrow('ConvTranspose1d: padding must be an integer ≥ 0 or a list of one, got "same"');
    expect(() => new nn.ConvTranspose1d(3, 4, 3, { kernel: 3 } as never)).toThrow("ConvTranspose1d() got an unexpected keyword argument 'kernel'");
  });
});
