// Table entries for @core/nn's F.conv1d, F.convTranspose1d and F.convTranspose2d, which core's op
// table lists for their autocast class. One float64 oracle from PyTorch's documented definitions:
// input position i, kernel position k and output position o along a spatial dim are related by
// i = o·stride + k·dilation − padding for a convolution, and o = i·stride + k·dilation − padding
// for a transposed one; every such (input, kernel, output) triple adds x·w to the output (a
// transposed convolution's weight is [C, O/groups, ...k], a convolution's [O, C/groups, ...k]).
// The bound is conv2d's: K + 2 roundings in the accumulation dtype for the K terms of an output and
// the bias, plus the last rounding into the dtype.
import { F } from '@core/nn';
import type { DTypeName, Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { nd, numel, ravel, unravel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

type Sizes = number | readonly number[];

interface ConvArgs {
  readonly stride?: Sizes;
  readonly padding?: Sizes | 'same' | 'valid';
  readonly outputPadding?: Sizes;
  readonly dilation?: Sizes;
  readonly groups?: number;
}

const perDim = (v: Sizes | undefined, fallback: number, dims: number): number[] => (v === undefined ? Array(dims).fill(fallback) : typeof v === 'number' ? Array(dims).fill(v) : [...v]);

/** The (transposed) convolution of [N, C, ...] or [C, ...] input x with weight w and bias b, with its error bounds. */
function convReference(x: NdArray, w: NdArray, b: NdArray | undefined, a: ConvArgs, dtype: DTypeName, dims: number, transposed: boolean): Expected {
  const batched = x.shape.length === dims + 2;
  const xShape = batched ? x.shape : [1, ...x.shape];
  const [N, C] = xShape as [number, number];
  const inSize = xShape.slice(2);
  const kernel = w.shape.slice(2);
  const groups = a.groups ?? 1;
  const stride = perDim(a.stride, 1, dims);
  const dilation = perDim(a.dilation, 1, dims);
  const outputPadding = perDim(a.outputPadding, 0, dims);
  // padding before each dim; 'same' puts the odd one at the end
  const before = a.padding === 'same' ? kernel.map((k, d) => Math.floor((dilation[d]! * (k - 1)) / 2)) : perDim(a.padding === 'valid' ? 0 : a.padding, 0, dims);
  const after = a.padding === 'same' ? kernel.map((k, d) => dilation[d]! * (k - 1) - before[d]!) : before;
  const O = transposed ? w.shape[1]! * groups : w.shape[0]!;
  const [inPerGroup, outPerGroup] = [C / groups, O / groups];
  const outSize = inSize.map((s, d) => (transposed
    ? (s - 1) * stride[d]! - 2 * before[d]! + dilation[d]! * (kernel[d]! - 1) + outputPadding[d]! + 1
    : Math.floor((s + before[d]! + after[d]! - dilation[d]! * (kernel[d]! - 1) - 1) / stride[d]!) + 1));
  const outShape = [N, O, ...outSize];
  const sums = new Float64Array(numel(outShape));
  const mags = new Float64Array(numel(outShape));
  const terms = new Float64Array(numel(outShape));
  const [inPositions, kernelPositions] = [numel(inSize), numel(kernel)];
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) {
      const g = Math.floor(c / inPerGroup);
      for (let og = 0; og < outPerGroup; og++) {
        const o = g * outPerGroup + og;
        for (let ip = 0; ip < inPositions; ip++) {
          const i = unravel(ip, inSize);
          const xv = x.data[ravel([n, c, ...i], xShape)]!;
          for (let kp = 0; kp < kernelPositions; kp++) {
            const k = unravel(kp, kernel);
            const pos: number[] = [];
            for (let d = 0; d < dims; d++) {
              const reach = k[d]! * dilation[d]! - before[d]!;
              // convolution: i = o·s + reach; transposed: o = i·s + reach
              const p = transposed ? i[d]! * stride[d]! + reach : (i[d]! - reach) / stride[d]!;
              if (!Number.isInteger(p) || p < 0 || p >= outSize[d]!) break;
              pos.push(p);
            }
            if (pos.length < dims) continue;
            const wv = w.data[ravel(transposed ? [c, og, ...k] : [o, c - g * inPerGroup, ...k], w.shape)]!;
            const at = ravel([n, o, ...pos], outShape);
            sums[at] += xv * wv;
            mags[at] += Math.abs(xv * wv);
            terms[at] += 1;
          }
        }
      }
    }
  }
  const ua = unitRoundoff(accumulatorOf(dtype));
  const ud = unitRoundoff(dtype);
  const values = Array.from(sums, (s, at) => roundTo(dtype, s + (b ? b.data[unravel(at, outShape)[1]!]! : 0)));
  const bounds = Array.from(mags, (m, at) => (terms[at]! + 2) * ua * m + ud * m);
  return { value: nd(batched ? outShape : outShape.slice(1), values), dtype, bound: Float64Array.from(bounds) };
}

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** An OpInfo for a (transposed) convolution: samples as [name, x shape, w shape, bias, args, layouts]. */
function convInfo(
  name: 'conv1d' | 'convTranspose1d' | 'convTranspose2d', dims: number, transposed: boolean, call: (x: Tensor, w: Tensor, b: Tensor | null, a: ConvArgs) => Tensor,
  cases: ReadonlyArray<[string, number[], number[], boolean, ConvArgs, Layout?]>,
  gradCases: ReadonlyArray<[string, number[], number[], boolean, ConvArgs, Layout?]>,
): OpInfo {
  const outChannels = (w: number[], a: ConvArgs) => (transposed ? w[1]! * (a.groups ?? 1) : w[0]!);
  const make = (list: typeof cases) => (dtype: DTypeName, rng: Rng): Sample[] => list.map(([id, xs, ws, bias, args, layout]) => ({
    name: id,
    inputs: [input(randomArray(rng, dtype, xs), dtype, layout), input(randomArray(rng, dtype, ws), dtype), ...(bias ? [input(randomArray(rng, dtype, [outChannels(ws, args)]), dtype)] : [])],
    args: { ...args },
  }));
  return {
    name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    samples: make(cases),
    gradSamples: make(gradCases),
    call: ([x, w, b], a) => call(x!, w!, b ?? null, a as ConvArgs),
    reference: ([x, w, b], a, dtype) => convReference(x!, w!, b, a as ConvArgs, dtype, dims, transposed),
  };
}

const CONV1D = convInfo('conv1d', 1, false, (x, w, b, a) => F.conv1d(x, w, b, a as never), [
  ['2x3x9-k3', [2, 3, 9], [4, 3, 3], true, {}],
  ['stride2-pad1-groups2-2x4x9', [2, 4, 9], [6, 2, 3], true, { stride: 2, padding: 1, groups: 2 }],
  ['same-dilation2-even-kernel-no-bias-1x3x10', [1, 3, 10], [2, 3, 4], false, { padding: 'same', dilation: 2 }],
  ['unbatched-permuted-valid-3x11', [3, 11], [4, 3, 2], true, { stride: 3, padding: 'valid' }, 'permuted'],
  ['deep-1x16x6-k3', [1, 16, 6], [2, 16, 3], true, { padding: 1 }],
], [
  ['grad-stride2-pad1-1x2x7', [1, 2, 7], [3, 2, 3], true, { stride: 2, padding: 1 }],
  ['grad-groups2-dilation2-permuted', [1, 4, 7], [4, 2, 2], false, { groups: 2, dilation: 2 }, 'permuted'],
]);

const CONV_TRANSPOSE1D = convInfo('convTranspose1d', 1, true, (x, w, b, a) => F.convTranspose1d(x, w, b, a as never), [
  ['2x4x5-k3', [2, 4, 5], [4, 3, 3], true, {}],
  ['stride2-pad1-outpad1-2x4x5', [2, 4, 5], [4, 3, 3], true, { stride: 2, padding: 1, outputPadding: 1 }],
  ['groups2-dilation3-pad2-no-bias-1x4x6', [1, 4, 6], [4, 1, 2], false, { padding: 2, groups: 2, dilation: 3 }],
  ['unbatched-permuted-stride3-outpad2-3x4', [3, 4], [3, 2, 5], true, { stride: 3, outputPadding: 2 }, 'permuted'],
], [
  ['grad-stride2-outpad1-1x2x4', [1, 2, 4], [2, 3, 3], true, { stride: 2, outputPadding: 1 }],
  ['grad-groups2-dilation2-permuted', [1, 4, 4], [4, 1, 2], false, { groups: 2, dilation: 2, padding: 1 }, 'permuted'],
]);

const CONV_TRANSPOSE2D = convInfo('convTranspose2d', 2, true, (x, w, b, a) => F.convTranspose2d(x, w, b, a as never), [
  ['1x2x4x4-k3', [1, 2, 4, 4], [2, 3, 3, 3], true, {}],
  ['stride2-pad1-outpad1-2x3x3x4', [2, 3, 3, 4], [3, 2, 3, 3], true, { stride: 2, padding: 1, outputPadding: 1 }],
  ['groups2-stride1x2-dilation2x1-outpad1x0-1x4x3x3', [1, 4, 3, 3], [4, 3, 2, 3], true, { stride: [1, 2], padding: [0, 1], outputPadding: [1, 0], groups: 2, dilation: [2, 1] }],
  ['unbatched-permuted-no-bias-2x2x3', [2, 2, 3], [2, 2, 4, 2], false, { stride: [3, 2], outputPadding: [2, 1] }, 'permuted'],
  ['deep-1x16x3x3-k2', [1, 16, 3, 3], [16, 2, 2, 2], true, { stride: 2 }],
], [
  ['grad-stride2-pad1-outpad1-1x2x3x3', [1, 2, 3, 3], [2, 2, 3, 3], true, { stride: 2, padding: 1, outputPadding: 1 }],
  ['grad-groups2-dilation2-permuted', [1, 4, 3, 3], [4, 1, 2, 2], false, { groups: 2, dilation: 2 }, 'permuted'],
]);

/** The table entries of the convolutions besides conv2d. */
export const CONV_INFOS: readonly OpInfo[] = [CONV1D, CONV_TRANSPOSE1D, CONV_TRANSPOSE2D];
