// Table entries for matmul, indexing (gather, scatterAdd, indexSelect), joining (cat, stack, pad)
// softmax/logSoftmax (composites with optional fused kernels) and logsumexp.
import { autograd, cat, matmulInFloat32, pad, stack, type DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, ALL_DTYPES, FLOAT_DTYPES, isFloat, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { broadcastTo, map, nd, zipWith, type NdArray } from '../oracle/ndarray.js';
import * as ref from '../oracle/ops.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;
const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

function accumulated(acc: ref.Accumulated, dtype: DTypeName, k = 2): Expected {
  const u = unitRoundoff(accumulatorOf(dtype));
  const value = map(acc.value, (v) => roundTo(dtype, v));
  if (!isFloat(dtype)) return { value, dtype };
  return { value, dtype, bound: acc.magnitude.data.map((m) => (acc.length + k) * u * m) };
}

// ---- matmul ----

function matmulSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const r = (shape: number[]) => randomArray(rng, dtype, shape);
  const pair = (name: string, a: number[], b: number[], la: Layout = 'contiguous', lb: Layout = 'contiguous'): Sample =>
    ({ name, inputs: [input(r(a), dtype, la), input(r(b), dtype, lb)] });
  return [
    pair('2d-3x4@4x5', [3, 4], [4, 5]),
    pair('vec@mat-4@4x5', [4], [4, 5]),
    pair('mat@vec-3x4@4', [3, 4], [4]),
    pair('dot-7@7', [7], [7]),
    pair('batched-2x3x4@2x4x5', [2, 3, 4], [2, 4, 5]),
    pair('broadcast-2x1x3x4@3x4x2', [2, 1, 3, 4], [3, 4, 2]),
    pair('transposed-a-3x4@4x5', [3, 4], [4, 5], 'transposed'),
    pair('transposed-b-3x4@4x5', [3, 4], [4, 5], 'contiguous', 'transposed'),
    pair('strided-a-3x4@4x5', [3, 4], [4, 5], 'strided', 'offset'),
    pair('permuted-2x3x4@4x3', [2, 3, 4], [4, 3], 'permuted'),
    pair('K0-3x0@0x4', [3, 0], [0, 4]),
    pair('M0-0x4@4x5', [0, 4], [4, 5]),
    pair('long-K-2x300@300x3', [2, 300], [300, 3]),
  ];
}

const MATMUL: OpInfo = {
  name: 'matmul',
  category: 'primitives',
  dtypes: NUMERIC,
  tolerance: 'accumulated',
  differentiable: true,
  samples: matmulSamples,
  gradSamples: (dtype, rng) => matmulSamples(dtype, rng).filter((s) => ['2d-3x4@4x5', 'mat@vec-3x4@4', 'broadcast-2x1x3x4@3x4x2', 'transposed-a-3x4@4x5'].includes(s.name))
    .map((s) => ({ ...s, name: `grad-${s.name}` })),
  call: ([a, b]) => a!.matmul(b!),
  reference: ([a, b], _args, dtype) => accumulated(ref.matmul(a!, b!), dtype),
};

const MM: OpInfo = {
  name: 'mm',
  category: 'composites',
  dtypes: NUMERIC,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => matmulSamples(dtype, rng).filter((s) => /^(2d|transposed|strided|K0|M0|long)/.test(s.name)),
  call: ([a, b]) => a!.mm(b!),
  reference: ([a, b], _args, dtype) => accumulated(ref.matmul(a!, b!), dtype),
};

const BMM: OpInfo = {
  name: 'bmm',
  category: 'composites',
  dtypes: NUMERIC,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => [
    ...matmulSamples(dtype, rng).filter((s) => s.name.startsWith('batched')),
    { name: 'permuted-2x3x4@2x4x2', inputs: [input(randomArray(rng, dtype, [2, 3, 4]), dtype, 'permuted'), input(randomArray(rng, dtype, [2, 4, 2]), dtype, 'transposed')] },
  ],
  call: ([a, b]) => a!.bmm(b!),
  reference: ([a, b], _args, dtype) => accumulated(ref.matmul(a!, b!), dtype),
};

/**
 * Core's matmulInFloat32 (the product nn's 16-bit convolutions and linears keep in float32): its
 * 16-bit operands' products summed in float32 and returned unrounded, by the backend's fused
 * matmulToFloat32 kernel and by the widened float32 matmul it falls back to.
 */
const MATMUL_IN_FLOAT32: OpInfo = {
  name: 'matmulInFloat32',
  category: 'composites',
  dtypes: ['float16', 'bfloat16'],
  outDtype: () => 'float32',
  tolerance: 'accumulated',
  differentiable: false,
  fused: 'matmulToFloat32',
  samples: (dtype, rng) => matmulSamples(dtype, rng).filter((s) => /^(2d|batched|broadcast|transposed|strided|permuted|K0|M0|long)/.test(s.name)),
  call: ([a, b]) => matmulInFloat32(a!, b!, a!.dtype),
  reference: ([a, b]) => accumulated(ref.matmul(a!, b!), 'float32'),
};

/**
 * matmulInFloat32 with a bias and `round` (the 16-bit linears' and convolutions' output): the
 * float32 sums plus the bias, rounded once to the operands' dtype, by the backend's fused
 * matmulRounded kernel and by the float32 add and cast it falls back to. The bias is a linear's
 * (one per column) or a convolution's (one per row, broadcast over the batch and the pixels).
 */
const MATMUL_IN_FLOAT32_ROUNDED: OpInfo = {
  name: 'matmulInFloat32Rounded',
  category: 'composites',
  dtypes: ['float16', 'bfloat16'],
  tolerance: 'accumulated',
  differentiable: false,
  fused: 'matmulRounded',
  samples: (dtype, rng) => matmulSamples(dtype, rng)
    .filter((s) => /^(2d|batched|broadcast|transposed|strided|permuted|K0|M0|long)/.test(s.name))
    .flatMap((s) => {
      const [a, b] = s.inputs.map((i) => i.value) as [NdArray, NdArray];
      const rows = a.shape[a.shape.length - 2]!;
      const cols = b.shape[b.shape.length - 1]!;
      return [
        { name: `${s.name}+columns-bias`, inputs: [...s.inputs, input(randomArray(rng, dtype, [cols]), dtype)] },
        { name: `${s.name}+rows-bias`, inputs: [...s.inputs, input(randomArray(rng, dtype, [rows, 1]), dtype, 'strided')] },
      ];
    }),
  call: ([a, b, bias]) => matmulInFloat32(a!, b!, a!.dtype, { bias: bias!, round: true }),
  reference: ([a, b, bias], _args, dtype) => {
    const product = ref.matmul(a!, b!);
    const biasFull = broadcastTo(bias!, product.value.shape);
    return accumulated({
      value: zipWith([product.value, biasFull], (p, q) => p + q),
      magnitude: zipWith([product.magnitude, biasFull], (p, q) => p + Math.abs(q)),
      length: product.length + 1,
    }, dtype);
  },
};

/** A convolution's windows over an image batch [N, C, H, W]: kernel, stride and dilation per spatial dim. */
interface WindowGeometry {
  readonly name: string;
  readonly image: readonly [number, number, number, number];
  readonly kernel: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly dilation: readonly [number, number];
  /** Output channels: the product's rows are O, its depth C·kh·kw. */
  readonly channels: number;
}

const WINDOW_GEOMETRIES: readonly WindowGeometry[] = [
  { name: '3x3-overlapping-2x3x6x7', image: [2, 3, 6, 7], kernel: [3, 3], stride: [1, 1], dilation: [1, 1], channels: 4 },
  { name: '3x2-stride2-dilated-3x2x9x8', image: [3, 2, 9, 8], kernel: [3, 2], stride: [2, 1], dilation: [1, 2], channels: 3 },
  { name: '2x2-batch1-1x4x5x5', image: [1, 4, 5, 5], kernel: [2, 2], stride: [1, 1], dilation: [1, 1], channels: 2 },
];

/** The windows [N, C, kh, kw, oh, ow] of a geometry as asStrided's size and stride over the contiguous image, and the columns' shape. */
function windowsOf(g: WindowGeometry): { size: number[]; stride: number[]; columns: number[]; out: [number, number] } {
  const [N, C, H, W] = g.image;
  const [kh, kw] = g.kernel;
  const oh = Math.floor((H - g.dilation[0] * (kh - 1) - 1) / g.stride[0]) + 1;
  const ow = Math.floor((W - g.dilation[1] * (kw - 1) - 1) / g.stride[1]) + 1;
  return {
    size: [N, C, kh, kw, oh, ow],
    stride: [C * H * W, H * W, g.dilation[0] * W, g.dilation[1], g.stride[0] * W, g.stride[1]],
    columns: [N, 1, C * kh * kw, oh * ow],
    out: [oh, ow],
  };
}

/**
 * The gradient of matmulInFloat32's windowed operand (otherView: a 16-bit convolution's input): the
 * float32 sums of wᵀ·g summed into the image's places (col2im) and rounded once, by the backend's
 * fused matmulStridedSum and by the product, stridedSum and cast it falls back to. Inputs: the
 * weight [1, O, C·kh·kw], the image and the product's gradient [N, 1, O, oh·ow] (float32 holding
 * values of the dtype: matmulInFloat32 rounds an incoming gradient to it first).
 */
const MATMUL_IN_FLOAT32_WINDOWS: OpInfo = {
  name: 'matmulInFloat32Windows',
  category: 'composites',
  dtypes: ['float16', 'bfloat16'],
  tolerance: 'accumulated',
  differentiable: false,
  fused: 'matmulStridedSum',
  samples: (dtype, rng) => WINDOW_GEOMETRIES.map((g) => {
    const { columns } = windowsOf(g);
    const [, , K, L] = columns as [number, number, number, number];
    return {
      name: g.name,
      inputs: [input(randomArray(rng, dtype, [1, g.channels, K]), dtype), input(randomArray(rng, dtype, [...g.image]), dtype), input(randomArray(rng, dtype, [g.image[0], 1, g.channels, L]), 'float32')],
      args: { geometry: g },
    };
  }),
  call: ([w, x, grad], args) => {
    const { size, stride, columns } = windowsOf(args.geometry as WindowGeometry);
    const image = x!.detach().requiresGrad_();
    const y = matmulInFloat32(w!, image, x!.dtype, { otherShape: columns, otherView: { size, stride } });
    return autograd.grad([y], [image], [grad!])[0]!;
  },
  reference: ([w, x, grad], args, dtype) => {
    const g = args.geometry as WindowGeometry;
    const [N, C, H, W] = g.image;
    const [kh, kw] = g.kernel;
    const { out: [oh, ow] } = windowsOf(g);
    const O = g.channels;
    const K = C * kh * kw, L = oh * ow;
    const value = nd(x!.shape), magnitude = nd(x!.shape);
    let terms = 0;
    const count = new Float64Array(N * C * H * W);
    for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let i = 0; i < kh; i++) for (let j = 0; j < kw; j++) for (let y = 0; y < oh; y++) for (let z = 0; z < ow; z++) {
      const at = ((n * C + c) * H + y * g.stride[0] + i * g.dilation[0]) * W + z * g.stride[1] + j * g.dilation[1];
      const k = (c * kh + i) * kw + j, l = y * ow + z;
      for (let o = 0; o < O; o++) {
        const term = w!.data[o * K + k]! * grad!.data[(n * O + o) * L + l]!;
        value.data[at] = value.data[at]! + term;
        magnitude.data[at] = magnitude.data[at]! + Math.abs(term);
      }
      count[at] = count[at]! + O;
      terms = Math.max(terms, count[at]!);
    }
    return accumulated({ value, magnitude, length: terms }, dtype);
  },
};

// ---- indexing ----

function indexArray(rng: Rng, shape: number[], size: number): NdArray {
  return nd(shape, () => rng.int(0, size));
}

const GATHER: OpInfo = {
  name: 'gather',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0],
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const idx = (shape: number[], size: number, layout: Layout = 'contiguous') => input(indexArray(rng, shape, size), 'int32', layout);
    return [
      { name: 'dim0-3x4-index2x4', inputs: [input(r([3, 4]), dtype), idx([2, 4], 3)], args: { dim: 0 } },
      { name: 'dim1-dups-3x4-index3x6', inputs: [input(r([3, 4]), dtype), idx([3, 6], 4)], args: { dim: 1 } },
      { name: 'dim-1-2x3x4-index2x3x2', inputs: [input(r([2, 3, 4]), dtype), idx([2, 3, 2], 4)], args: { dim: -1 } },
      { name: 'smaller-index-2x2-dim1', inputs: [input(r([3, 4]), dtype), idx([2, 2], 4)], args: { dim: 1 } },
      { name: 'strided-x-dim1', inputs: [input(r([3, 5]), dtype, 'strided'), idx([3, 4], 5)], args: { dim: 1 } },
      { name: 'transposed-index-dim0', inputs: [input(r([4, 3]), dtype, 'transposed'), idx([3, 3], 4, 'transposed')], args: { dim: 0 } },
      { name: '0-dim', inputs: [input(r([]), dtype), idx([], 1)], args: { dim: 0 } },
      { name: 'empty-index-3x0', inputs: [input(r([3, 4]), dtype), idx([3, 0], 4)], args: { dim: 1 } },
    ];
  },
  call: ([x, index], a) => x!.gather(a.dim, index!),
  reference: ([x, index], a, dtype) => ({ value: ref.gather(x!, a.dim, index!), dtype }),
};

const SCATTER_ADD: OpInfo = {
  name: 'scatterAdd',
  category: 'primitives',
  dtypes: NUMERIC,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0, 2],
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const idx = (shape: number[], size: number) => input(indexArray(rng, shape, size), 'int32');
    return [
      { name: 'dim0-dups-3x4-index5x4', inputs: [input(r([3, 4]), dtype), idx([5, 4], 3), input(r([5, 4]), dtype)], args: { dim: 0 } },
      { name: 'dim1-3x4-index3x3', inputs: [input(r([3, 4]), dtype), idx([3, 3], 4), input(r([3, 5]), dtype)], args: { dim: 1 } },
      { name: 'dim-1-2x3x4', inputs: [input(r([2, 3, 4]), dtype), idx([2, 3, 6], 4), input(r([2, 3, 6]), dtype)], args: { dim: -1 } },
      { name: 'strided-src-dim1', inputs: [input(r([3, 4]), dtype, 'transposed'), idx([3, 4], 4), input(r([3, 4]), dtype, 'strided')], args: { dim: 1 } },
      { name: 'empty-index', inputs: [input(r([3, 4]), dtype), idx([0, 4], 3), input(r([2, 4]), dtype)], args: { dim: 0 } },
    ];
  },
  call: ([x, index, src], a) => x!.scatterAdd(a.dim, index!, src!),
  reference: ([x, index, src], a, dtype) => accumulated(ref.scatterAdd(x!, a.dim, index!, src!), dtype),
};

const INDEX_SELECT: OpInfo = {
  name: 'indexSelect',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0],
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const idx = (n: number, size: number) => input(indexArray(rng, [n], size), 'int32');
    return [
      { name: 'dim0-4x3', inputs: [input(r([4, 3]), dtype), idx(3, 4)], args: { dim: 0 } },
      { name: 'dim1-dups-3x4', inputs: [input(r([3, 4]), dtype), idx(6, 4)], args: { dim: 1 } },
      { name: 'transposed-dim-1', inputs: [input(r([3, 4]), dtype, 'transposed'), idx(2, 4)], args: { dim: -1 } },
      { name: '0-dim', inputs: [input(r([]), dtype), idx(2, 1)], args: { dim: 0 } },
      { name: 'empty-index', inputs: [input(r([3, 4]), dtype), idx(0, 3)], args: { dim: 0 } },
    ];
  },
  call: ([x, index], a) => x!.indexSelect(a.dim, index!),
  reference: ([x, index], a, dtype) => ({ value: ref.indexSelect(x!, a.dim, index!), dtype }),
};

// ---- joining ----

const CAT: OpInfo = {
  name: 'cat',
  category: 'composites',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    return [
      { name: 'dim0-2x3+1x3', inputs: [r([2, 3]), r([1, 3])], args: { dim: 0 } },
      { name: 'dim1-2x1+2x3+2x2', inputs: [r([2, 1]), r([2, 3]), r([2, 2])], args: { dim: 1 } },
      { name: 'skips-empty-1d', inputs: [r([2, 3]), r([0]), r([2, 2])], args: { dim: -1 } },
      { name: 'views-dim0', inputs: [r([3, 4], 'transposed'), r([2, 4], 'strided')], args: { dim: 0 } },
      { name: '3d-dim1', inputs: [r([2, 1, 3]), r([2, 2, 3], 'permuted')], args: { dim: 1 } },
      { name: 'same-tensor-twice', inputs: [r([2, 2])], args: { dim: 0, twice: true } },
      { name: 'empty-parts-0x3', inputs: [r([0, 3]), r([2, 3])], args: { dim: 0 } },
    ];
  },
  call: (xs, a) => cat(a.twice ? [xs[0]!, xs[0]!] : xs, a.dim),
  reference: (xs, a, dtype) => ({ value: ref.cat(a.twice ? [xs[0]!, xs[0]!] : xs, a.dim), dtype }),
};

const STACK: OpInfo = {
  name: 'stack',
  category: 'composites',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    return [
      { name: 'dim0-3x(2x3)', inputs: [r([2, 3]), r([2, 3], 'strided'), r([2, 3], 'offset')], args: { dim: 0 } },
      { name: 'dim-1-2x(3)', inputs: [r([3]), r([3])], args: { dim: -1 } },
      { name: 'dim1-2x(4x3)', inputs: [r([4, 3], 'transposed'), r([4, 3])], args: { dim: 1 } },
      { name: '0-dim-parts', inputs: [r([]), r([]), r([])], args: { dim: 0 } },
    ];
  },
  call: (xs, a) => stack(xs, a.dim),
  reference: (xs, a, dtype) => ({ value: ref.stack(xs, a.dim), dtype }),
};

function padValue(dtype: DTypeName): number {
  return dtype === 'bool' ? 1 : dtype === 'int32' ? 7 : 0.1; // 0.1 is not representable: the fill rounds it
}

const PAD: OpInfo = {
  name: 'pad',
  category: 'composites',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    return [
      { name: 'last-1,2', inputs: [r([2, 3])], args: { padding: [1, 2], value: 0 } },
      { name: 'two-dims-1,0,2,1-value', inputs: [r([2, 3])], args: { padding: [1, 0, 2, 1], value: padValue(dtype) } },
      { name: 'crop--1,2', inputs: [r([2, 4])], args: { padding: [-1, 2], value: padValue(dtype) } },
      { name: 'transposed-input', inputs: [r([3, 2], 'transposed')], args: { padding: [0, 1, 1, 0], value: 0 } },
      { name: '3d-last-only', inputs: [r([2, 2, 2], 'permuted')], args: { padding: [2, 0], value: padValue(dtype) } },
    ];
  },
  call: ([x], a) => pad(x!, a.padding, a.value),
  reference: ([x], a, dtype) => ({ value: ref.pad(x!, a.padding, roundTo(dtype, a.value)), dtype }),
};

// ---- softmax ----

/**
 * Rows along the last dim where exp(x) overflows every float type (only a shifted computation is
 * finite), a long row, and rows of ±Inf and NaN: for the ops that sum exps (softmax, logsumexp).
 */
function overflowSamples(dtype: DTypeName, r: (shape: number[], lo?: number, hi?: number) => NdArray): Sample[] {
  return [
    { name: 'large-values', inputs: [input(r([2, 6], dtype === 'float16' ? 9000 : 900, dtype === 'float16' ? 9990 : 1000), dtype)], args: { dim: -1 } },
    { name: 'long-1000', inputs: [input(r([2, 1000]), dtype)], args: { dim: -1 } },
    {
      name: 'nonfinite',
      inputs: [input(nd([4, 3], [-Infinity, 0, 1, -Infinity, -Infinity, -Infinity, Infinity, 0, 1, NaN, 0, 1]), dtype)],
      args: { dim: -1 },
      numerics: true,
    },
  ];
}

function softmaxInfo(name: 'softmax' | 'logSoftmax'): OpInfo {
  const log = name === 'logSoftmax';
  return {
    name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    fused: name,
    samples: (dtype, rng) => {
      const r = (shape: number[], lo = -4, hi = 4) => randomArray(rng, dtype, shape, { lo, hi });
      return [
        { name: 'dim-1-3x5', inputs: [input(r([3, 5]), dtype)], args: { dim: -1 } },
        { name: 'dim0-4x3', inputs: [input(r([4, 3]), dtype)], args: { dim: 0 } },
        { name: 'dim1-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { dim: 1 } },
        { name: 'transposed-dim-1', inputs: [input(r([5, 3]), dtype, 'transposed')], args: { dim: -1 } },
        { name: 'strided-dim-1', inputs: [input(r([2, 6]), dtype, 'strided')], args: { dim: -1 } },
        { name: '0-dim', inputs: [input(r([]), dtype)], args: { dim: 0 } },
        { name: 'empty-0x3', inputs: [input(r([0, 3]), dtype)], args: { dim: -1 } },
        ...overflowSamples(dtype, r),
      ];
    },
    gradSamples: (dtype, rng) => [
      { name: 'grad-dim-1-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)], args: { dim: -1 } },
      { name: 'grad-dim0-transposed-4x3', inputs: [input(randomArray(rng, dtype, [4, 3]), dtype, 'transposed')], args: { dim: 0 } },
    ],
    call: ([x], a) => (log ? x!.logSoftmax(a.dim) : x!.softmax(a.dim)),
    reference: ([x], a, dtype) => {
      const value = ref.softmax(x!, a.dim, log);
      // Computed in f32 for half types (TP-6): each output errs by about (n + 4)·u relative
      // (softmax) or u·(|x − max| + n + 4) absolute (logSoftmax).
      const u = unitRoundoff(accumulatorOf(dtype));
      const rank = x!.shape.length;
      const n = rank === 0 ? 1 : x!.shape[(a.dim + rank) % rank]!;
      const big = Math.max(0, ...Array.from(x!.data).filter(Number.isFinite).map(Math.abs)); // bounds |x − max|/2
      const bound = value.data.map((v) => (log ? u * (2 * big + n + 4) : (n + 4) * u * Math.abs(v)));
      return { value: map(value, (v) => roundTo(dtype, v)), dtype, bound };
    },
  };
}

// ---- logsumexp ----

const LOGSUMEXP: OpInfo = {
  name: 'logsumexp',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], lo = -4, hi = 4) => randomArray(rng, dtype, shape, { lo, hi });
    return [
      { name: 'dim-1-3x5', inputs: [input(r([3, 5]), dtype)], args: { dim: -1 } },
      { name: 'dim0-keepdim-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { dim: 0, keepdim: true } },
      { name: 'dims01-permuted-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { dim: [0, 1] } },
      { name: 'strided-dim-1', inputs: [input(r([2, 6]), dtype, 'strided')], args: { dim: -1 } },
      { name: '0-dim', inputs: [input(r([]), dtype)], args: { dim: 0 } },
      { name: 'empty-fibres-0x3', inputs: [input(r([0, 3]), dtype)], args: { dim: 0 } },
      ...overflowSamples(dtype, r),
    ];
  },
  gradSamples: (dtype, rng) => [
    { name: 'grad-dim-1-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)], args: { dim: -1 } },
    { name: 'grad-dims01-keepdim-2x3x2', inputs: [input(randomArray(rng, dtype, [2, 3, 2]), dtype, 'permuted')], args: { dim: [0, 1], keepdim: true } },
  ],
  call: ([x], a) => x!.logsumexp(a.dim, a.keepdim),
  reference: ([x], a, dtype) => {
    const dims: number[] = typeof a.dim === 'number' ? [a.dim] : a.dim;
    const value = x!.shape.length === 0 ? x! : ref.logsumexp(x!, dims, a.keepdim ?? false);
    // Computed as the decomposition PyTorch uses, each step rounded to the dtype (u): x − max errs
    // by u·2·max|x|, exp and the f32 sum (n terms) by u + n·u_acc relative, then log and + max by
    // u·|result| each, so the error is within u·(3·max|x| + 2·|result| + 4) + n·u_acc.
    const u = unitRoundoff(dtype);
    const n = x!.shape.length === 0 ? 1 : ref.reduceLength(x!.shape, dims);
    const nAcc = n * unitRoundoff(accumulatorOf(dtype));
    const big = Math.max(0, ...Array.from(x!.data).filter(Number.isFinite).map(Math.abs));
    const bound = value.data.map((v) => u * (3 * big + 2 * (Number.isFinite(v) ? Math.abs(v) : 0) + 4) + nAcc);
    return { value: map(value, (v) => roundTo(dtype, v)), dtype, bound };
  },
};

export const STRUCTURAL_INFOS: OpInfo[] = [
  MATMUL, MM, BMM, MATMUL_IN_FLOAT32, MATMUL_IN_FLOAT32_ROUNDED, MATMUL_IN_FLOAT32_WINDOWS, GATHER, SCATTER_ADD, INDEX_SELECT, CAT, STACK, PAD, softmaxInfo('softmax'), softmaxInfo('logSoftmax'), LOGSUMEXP,
];

