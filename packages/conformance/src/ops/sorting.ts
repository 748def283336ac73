// Table entries for the argsort, cumulative and scatter primitives and the ops on them: sort (values
// and indices), argsort, msort, topk, cumsum, cumprod, scatter (src, value, reduce), scatter_ and
// scatterReduce. The oracles here are plain float64 loops over fibres: a stable sort with NaN as the
// largest value, running sums and products with their error bounds, and scatters that apply
// contributions in index order (the last of repeated indices wins).
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Domain, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, ALL_DTYPES, FLOAT_DTYPES, isFloat, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { map, nd, numel, stridesOf, unravel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

type Args = Readonly<Record<string, any>>;
const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;
const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });
const intOut = (dtype: DTypeName): DTypeName => (isFloat(dtype) ? dtype : 'int32');

// ---- oracles ----

/** The flat positions of every fibre of `shape` along `dim` (a 0-dim array is one fibre of one). */
function fibres(shape: readonly number[], dim: number): number[][] {
  if (shape.length === 0) return [[0]];
  const d = dim < 0 ? dim + shape.length : dim;
  const strides = stridesOf(shape);
  const out: number[][] = [];
  for (let flat = 0; flat < numel(shape); flat++) {
    if (unravel(flat, shape)[d] !== 0) continue;
    out.push(Array.from({ length: shape[d]! }, (_, j) => flat + j * strides[d]!));
  }
  return out;
}

/** Ascending with NaN the largest, NaNs equal, −0 equal to +0. */
function ascending(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 0;
  return Number.isNaN(a) ? 1 : -1;
}

/** The stable sort of every fibre: the sorted values and their positions along `dim`. */
function sorted(x: NdArray, dim: number, descending: boolean): { values: NdArray; indices: NdArray } {
  const values = nd(x.shape);
  const indices = nd(x.shape);
  for (const fibre of fibres(x.shape, dim)) {
    const order = fibre.map((_, j) => j).sort((i, j) => (descending ? ascending(x.data[fibre[j]!]!, x.data[fibre[i]!]!) : ascending(x.data[fibre[i]!]!, x.data[fibre[j]!]!)) || i - j);
    order.forEach((from, j) => {
      values.data[fibre[j]!] = x.data[fibre[from]!]!;
      indices.data[fibre[j]!] = from;
    });
  }
  return { values, indices };
}

/** The first k along `dim` of an array. */
function firstK(a: NdArray, dim: number, k: number): NdArray {
  if (a.shape.length === 0) return a;
  const d = dim < 0 ? dim + a.shape.length : dim;
  const shape = a.shape.map((s, i) => (i === d ? k : s));
  const strides = stridesOf(a.shape);
  return nd(shape, (flat) => {
    const idx = unravel(flat, shape);
    return a.data[idx.reduce((p, c, i) => p + c * strides[i]!, 0)]!;
  });
}

/**
 * Running sums or products along `dim`, exact in float64 (int32 wraps at every step), rounded into
 * `out`; the bound of element i is (i + 3)·u·Σ|x| (sums) or (i + 3)·u·Π|x| (products), u the
 * accumulator's unit roundoff.
 */
function running(x: NdArray, dim: number, product: boolean, inDtype: DTypeName, out: DTypeName): Expected {
  const value = nd(x.shape);
  const magnitude = nd(x.shape);
  const int = !isFloat(out);
  for (const fibre of fibres(x.shape, dim)) {
    let acc = product ? 1 : 0;
    let mag = product ? 1 : 0;
    fibre.forEach((p, i) => {
      const v = x.data[p]!;
      acc = int ? (product ? Math.imul(acc, v) : (acc + v) | 0) : product ? acc * v : acc + v;
      mag = product ? mag * Math.abs(v) : mag + Math.abs(v);
      value.data[p] = acc;
      magnitude.data[p] = (i + 3) * mag;
    });
  }
  const u = unitRoundoff(accumulatorOf(inDtype));
  return { value: map(value, (v) => roundTo(out, v)), dtype: out, ...(int ? {} : { bound: magnitude.data.map((m) => m * u) }) };
}

type Reduction = 'assign' | 'sum' | 'prod' | 'mean' | 'amax' | 'amin';

/**
 * PyTorch's scatter along `dim` into a copy of x: the contributions to each element, in index
 * order, combined exactly (assign: the last one), with self first when included. Bounds: sums
 * (count + 2)·u_acc·Σ|t| (means divided by the count, plus two roundings of the result); products
 * are rounded at every step, (count + 2)·u·Π|t|.
 */
function scattered(x: NdArray, dim: number, index: NdArray, src: NdArray, reduce: Reduction, includeSelf: boolean, dtype: DTypeName): Expected {
  const rank = x.shape.length;
  const d = rank === 0 ? 0 : dim < 0 ? dim + rank : dim;
  const xStrides = stridesOf(x.shape);
  const srcStrides = stridesOf(src.shape);
  const terms = Array.from({ length: numel(x.shape) }, (_, p) => (includeSelf || reduce === 'assign' ? [x.data[p]!] : []));
  const touched = new Set<number>();
  for (let flat = 0; flat < numel(index.shape); flat++) {
    const idx = unravel(flat, index.shape);
    const s = src.data[idx.reduce((p, c, i) => p + c * srcStrides[i]!, 0)]!;
    const to = idx.slice();
    if (rank > 0) to[d] = index.data[flat]!;
    const t = to.reduce((p, c, i) => p + c * xStrides[i]!, 0);
    if (reduce === 'assign') terms[t] = [s];
    else terms[t]!.push(s);
    touched.add(t);
  }
  const int = !isFloat(dtype);
  const value = nd(x.shape, (p) => {
    const ts = terms[p]!;
    if (!touched.has(p)) return x.data[p]!;
    switch (reduce) {
      case 'assign': return ts[0]!;
      case 'sum': return int ? ts.reduce((a, b) => (a + b) | 0, 0) : ts.reduce((a, b) => a + b, 0);
      case 'prod': return int ? ts.reduce((a, b) => Math.imul(a, b), 1) : ts.reduce((a, b) => a * b, 1);
      case 'mean': {
        const m = ts.reduce((a, b) => a + b, 0) / ts.length;
        return int ? Math.floor(m) : m;
      }
      case 'amax': return ts.some(Number.isNaN) ? NaN : Math.max(...ts);
      case 'amin': return ts.some(Number.isNaN) ? NaN : Math.min(...ts);
      default: return reduce satisfies never;
    }
  });
  const result = { value: map(value, (v) => roundTo(dtype, v)), dtype };
  if (int || reduce === 'assign' || reduce === 'amax' || reduce === 'amin') return result;
  const bound = new Float64Array(numel(x.shape)).map((_, p) => {
    const ts = terms[p]!;
    if (!touched.has(p)) return 0;
    const n = ts.length;
    const absSum = ts.reduce((a, b) => a + Math.abs(b), 0);
    if (reduce === 'prod') return (n + 2) * unitRoundoff(dtype) * ts.reduce((a, b) => a * Math.abs(b), 1);
    const sumBound = (n + 2) * unitRoundoff(accumulatorOf(dtype)) * absSum;
    return reduce === 'sum' ? sumBound : sumBound / n + 2 * unitRoundoff(dtype) * Math.abs(value.data[p]!);
  });
  return { ...result, bound };
}

// ---- samples ----

function indexArray(rng: Rng, shape: number[], size: number): NdArray {
  return nd(shape, () => rng.int(0, size));
}

/** Values with repeats (ties for the sort's stability): each drawn from a pool of `distinct` values. */
function withTies(rng: Rng, dtype: DTypeName, shape: number[], distinct: number): NdArray {
  const pool = randomArray(rng, dtype, [distinct]).data;
  return nd(shape, () => pool[rng.int(0, distinct)]!);
}

/** Distinct values 0.25 apart in shuffled order (smooth gradients for sort, topk, amax, amin). */
function spread(rng: Rng, dtype: DTypeName, shape: number[], offset = 0): NdArray {
  const n = numel(shape);
  const values = rng.shuffle([...Array(n).keys()].map((i) => roundTo(dtype, (i - n / 2) * 0.25 + 0.0625 + offset)));
  return nd(shape, values);
}

function sortSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
  return [
    { name: 'ties-dim-1-3x8', inputs: [input(withTies(rng, dtype, [3, 8], 3), dtype)], args: { dim: -1 } },
    { name: 'ties-descending-dim0-8x3', inputs: [input(withTies(rng, dtype, [8, 3], 3), dtype)], args: { dim: 0, descending: true } },
    { name: 'transposed-dim1-4x5', inputs: [r([4, 5], 'transposed')], args: { dim: 1 } },
    { name: 'strided-descending-dim-1-3x5', inputs: [r([3, 5], 'strided')], args: { dim: -1, descending: true } },
    { name: 'permuted-dim1-2x3x4', inputs: [r([2, 3, 4], 'permuted')], args: { dim: 1 } },
    { name: '0-dim', inputs: [r([])], args: { dim: 0 } },
    { name: 'empty-0x3', inputs: [r([0, 3])], args: { dim: 1 } },
    { name: 'long-2x1000', inputs: [input(withTies(rng, dtype, [2, 1000], 200), dtype)], args: { dim: -1, descending: true } },
    ...(isFloat(dtype)
      ? [{
        name: 'nan-inf-zeros',
        inputs: [input(nd([2, 6], [NaN, 1, -Infinity, 0, Infinity, -0, -0, NaN, 2, 0, -Infinity, NaN].map((v) => roundTo(dtype, v))), dtype)],
        args: { dim: -1 },
        numerics: true,
      }]
      : []),
  ];
}

const sortGradSamples = (dtype: DTypeName, rng: Rng): Sample[] => [
  { name: 'grad-dim-1-3x4', inputs: [input(spread(rng, dtype, [3, 4]), dtype)], args: { dim: -1 } },
  { name: 'grad-descending-transposed-dim0-4x3', inputs: [input(spread(rng, dtype, [4, 3]), dtype, 'transposed')], args: { dim: 0, descending: true } },
];

function sortInfo(part: 'values' | 'indices'): OpInfo {
  return {
    name: `sort(dim).${part}`,
    category: 'primitives',
    dtypes: ALL_DTYPES,
    ...(part === 'indices' ? { outDtype: () => 'int32' as const } : {}),
    tolerance: 'exact',
    differentiable: part === 'values',
    samples: sortSamples,
    gradSamples: sortGradSamples,
    call: ([x], a) => x!.sort(a.dim, a.descending ?? false)[part],
    reference: ([x], a, dtype) => {
      const s = sorted(x!, a.dim, a.descending ?? false);
      return part === 'values' ? { value: s.values, dtype } : { value: s.indices, dtype: 'int32' };
    },
  };
}

const ARGSORT: OpInfo = {
  name: 'argsort',
  category: 'composites',
  dtypes: ALL_DTYPES,
  outDtype: () => 'int32',
  tolerance: 'exact',
  differentiable: false,
  samples: (dtype, rng) => sortSamples(dtype, rng).filter((s) => /^(ties|permuted|0-dim|nan)/.test(s.name)),
  call: ([x], a) => x!.argsort({ dim: a.dim, descending: a.descending ?? false }),
  reference: ([x], a) => ({ value: sorted(x!, a.dim, a.descending ?? false).indices, dtype: 'int32' }),
};

const MSORT: OpInfo = {
  name: 'msort',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  samples: (dtype, rng) => sortSamples(dtype, rng).filter((s) => s.args?.dim === 0),
  gradSamples: (dtype, rng) => [{ name: 'grad-4x3', inputs: [input(spread(rng, dtype, [4, 3]), dtype)], args: {} }],
  call: ([x]) => x!.msort(),
  reference: ([x], _a, dtype) => ({ value: sorted(x!, 0, false).values, dtype }),
};

function topkSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
  return [
    { name: 'k2-ties-dim-1-3x6', inputs: [input(withTies(rng, dtype, [3, 6], 3), dtype)], args: { k: 2, dim: -1 } },
    { name: 'k3-smallest-dim0-5x2', inputs: [r([5, 2])], args: { k: 3, dim: 0, largest: false } },
    { name: 'k1-transposed-dim1-4x5', inputs: [r([4, 5], 'transposed')], args: { k: 1, dim: 1 } },
    { name: 'k0-3x4', inputs: [r([3, 4])], args: { k: 0, dim: -1 } },
    { name: 'kfull-strided-3x5', inputs: [r([3, 5], 'strided')], args: { k: 5, dim: -1 } },
    { name: 'k5-long-2x1000', inputs: [input(withTies(rng, dtype, [2, 1000], 300), dtype)], args: { k: 5, dim: -1 } },
  ];
}

function topkInfo(part: 'values' | 'indices'): OpInfo {
  return {
    name: `topk(k).${part}`,
    category: 'composites',
    dtypes: NUMERIC,
    ...(part === 'indices' ? { outDtype: () => 'int32' as const } : {}),
    tolerance: 'exact',
    differentiable: part === 'values',
    samples: topkSamples,
    gradSamples: (dtype, rng) => [
      { name: 'grad-k2-3x4', inputs: [input(spread(rng, dtype, [3, 4]), dtype)], args: { k: 2, dim: -1 } },
      { name: 'grad-k2-smallest-dim0-4x3', inputs: [input(spread(rng, dtype, [4, 3]), dtype)], args: { k: 2, dim: 0, largest: false } },
    ],
    call: ([x], a) => x!.topk(a.k, a.dim, a.largest ?? true)[part],
    reference: ([x], a, dtype) => {
      const s = sorted(x!, a.dim, a.largest ?? true);
      return part === 'values' ? { value: firstK(s.values, a.dim, a.k), dtype } : { value: firstK(s.indices, a.dim, a.k), dtype: 'int32' };
    },
  };
}

function cumulativeInfo(name: 'cumsum' | 'cumprod'): OpInfo {
  const product = name === 'cumprod';
  const domain: Domain | undefined = product ? { lo: -1.5, hi: 1.5, awayFromZero: 0.5 } : undefined;
  return {
    name,
    category: 'primitives',
    dtypes: ALL_DTYPES,
    outDtype: intOut,
    tolerance: 'accumulated',
    differentiable: true,
    samples: (dtype, rng) => {
      const r = (shape: number[], layout: Layout = 'contiguous', d = domain) => input(randomArray(rng, dtype, shape, d), dtype, layout);
      // Long products stay finite: floats near 1, integers ±1 (as for prod).
      const long = product ? (isFloat(dtype) ? { lo: 0.995, hi: 1.005 } : { lo: -0.1, hi: 0.1, awayFromZero: 0.05 }) : undefined;
      return [
        { name: 'dim1-3x4', inputs: [r([3, 4])], args: { dim: 1 } },
        { name: 'dim0-transposed-4x3', inputs: [r([4, 3], 'transposed')], args: { dim: 0 } },
        { name: 'strided-dim-1-2x5', inputs: [r([2, 5], 'strided')], args: { dim: -1 } },
        { name: 'permuted-dim2-2x3x4', inputs: [r([2, 3, 4], 'permuted')], args: { dim: 2 } },
        { name: 'with-zero-dim0-5', inputs: [input(map(randomArray(rng, dtype, [5], domain), (v, i) => (i === 2 ? 0 : v)), dtype)], args: { dim: 0 } },
        { name: '0-dim', inputs: [r([])], args: { dim: 0 } },
        { name: 'empty-3x0', inputs: [r([3, 0])], args: { dim: 1 } },
        { name: 'long-2x1000', inputs: [r([2, 1000], 'contiguous', long)], args: { dim: -1 } },
        ...(isFloat(dtype)
          ? [{ name: 'nonfinite', inputs: [input(nd([2, 4], [1, Infinity, -Infinity, 2, NaN, 1, 0, 3]), dtype)], args: { dim: -1 }, numerics: true }]
          : []),
      ];
    },
    gradSamples: (dtype, rng) => [
      { name: 'grad-dim1-3x4', inputs: [input(randomArray(rng, dtype, [3, 4], domain), dtype)], args: { dim: 1 } },
      { name: 'grad-transposed-dim0-4x3', inputs: [input(randomArray(rng, dtype, [4, 3], domain), dtype, 'transposed')], args: { dim: 0 } },
      // cumprod's gradient at zeros (the first zero of a fibre, and a later one) is exact.
      { name: 'grad-zeros-dim-1-2x4', inputs: [input(nd([2, 4], [0.5, 0, 1.5, 0, 0, 2, -1.25, 0.75].map((v) => roundTo(dtype, v))), dtype)], args: { dim: -1 } },
    ],
    call: ([x], a) => (product ? x!.cumprod(a.dim) : x!.cumsum(a.dim)),
    reference: ([x], a, dtype) => running(x!, a.dim, product, dtype === 'bool' ? 'int32' : dtype, intOut(dtype)),
  };
}

function scatterSamples(dtype: DTypeName, rng: Rng, domain?: Domain): Sample[] {
  const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, domain), dtype, layout);
  const idx = (shape: number[], size: number, layout: Layout = 'contiguous') => input(indexArray(rng, shape, size), 'int32', layout);
  return [
    { name: 'dim0-dups-3x4-index5x4', inputs: [r([3, 4]), idx([5, 4], 3), r([5, 4])], args: { dim: 0 } },
    { name: 'dim1-3x4-index3x3-src3x5', inputs: [r([3, 4]), idx([3, 3], 4), r([3, 5])], args: { dim: 1 } },
    { name: 'dim-1-dups-2x3x4', inputs: [r([2, 3, 4]), idx([2, 3, 6], 4), r([2, 3, 6])], args: { dim: -1 } },
    { name: 'strided-src-transposed-self-and-index', inputs: [r([3, 4], 'transposed'), idx([3, 4], 4, 'transposed'), r([3, 4], 'strided')], args: { dim: 1 } },
    { name: '0-dim', inputs: [r([]), idx([], 1), r([])], args: { dim: 0 } },
    { name: 'empty-index', inputs: [r([3, 4]), idx([0, 4], 3), r([2, 4])], args: { dim: 0 } },
    { name: 'long-dups-1x20-index1x600', inputs: [r([1, 20]), idx([1, 600], 20), r([1, 600])], args: { dim: 1 } },
  ];
}

const scatterGradSamples = (dtype: DTypeName, rng: Rng): Sample[] => {
  const idx = (shape: number[], size: number) => input(indexArray(rng, shape, size), 'int32');
  return [
    { name: 'grad-dups-dim0-3x4', inputs: [input(spread(rng, dtype, [3, 4]), dtype), idx([4, 4], 3), input(spread(rng, dtype, [4, 4], 0.03), dtype)], args: { dim: 0 } },
    { name: 'grad-dim1-src-larger-3x4', inputs: [input(spread(rng, dtype, [3, 4]), dtype), idx([3, 3], 4), input(spread(rng, dtype, [3, 5], 0.03), dtype)], args: { dim: 1 } },
  ];
};

const SCATTER_SRC: OpInfo = {
  name: 'scatter(src)',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0, 2],
  samples: (dtype, rng) => scatterSamples(dtype, rng),
  gradSamples: scatterGradSamples,
  call: ([x, index, src], a) => x!.scatter(a.dim, index!, src!),
  reference: ([x, index, src], a, dtype) => scattered(x!, a.dim, index!, src!, 'assign', true, dtype),
};

/** A fill value for `scatter(value)`: 0.1 rounds in every float type, ints and bools take their own. */
const scatterValue = (dtype: DTypeName): number => (dtype === 'bool' ? 1 : dtype === 'int32' ? -7 : 0.1);

const SCATTER_VALUE: OpInfo = {
  name: 'scatter(value)',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0],
  samples: (dtype, rng) => scatterSamples(dtype, rng).map((s) => ({ ...s, inputs: s.inputs.slice(0, 2), args: { ...s.args, value: scatterValue(dtype) } })),
  gradSamples: (dtype, rng) => scatterGradSamples(dtype, rng).map((s) => ({ ...s, inputs: s.inputs.slice(0, 2), args: { ...s.args, value: 0.5 } })),
  call: ([x, index], a) => x!.scatter(a.dim, index!, a.value),
  reference: ([x, index], a, dtype) => scattered(x!, a.dim, index!, nd(index!.shape, () => roundTo(dtype, a.value)), 'assign', true, dtype),
};

const SCATTER_REDUCE_ARG: OpInfo = {
  name: 'scatter(reduce)',
  category: 'composites',
  dtypes: NUMERIC,
  tolerance: 'accumulated',
  differentiable: true,
  gradInputs: [0, 2],
  samples: (dtype, rng) => scatterSamples(dtype, rng, { lo: -1.5, hi: 1.5, awayFromZero: 0.5 }).flatMap((s) => [
    { ...s, name: `add-${s.name}`, args: { ...s.args, reduce: 'add' } },
    { ...s, name: `multiply-${s.name}`, args: { ...s.args, reduce: 'multiply' } },
  ]),
  gradSamples: (dtype, rng) => scatterGradSamples(dtype, rng).map((s, i) => ({ ...s, args: { ...s.args, reduce: i === 0 ? 'multiply' : 'add' } })),
  call: ([x, index, src], a) => x!.scatter(a.dim, index!, src!, { reduce: a.reduce }),
  reference: ([x, index, src], a, dtype) => scattered(x!, a.dim, index!, src!, a.reduce === 'add' ? 'sum' : 'prod', true, dtype),
};

const SCATTER_INPLACE: OpInfo = {
  name: 'scatter_',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0, 2],
  samples: (dtype, rng) => scatterSamples(dtype, rng).filter((s) => /^(dim0|strided|0-dim)/.test(s.name)),
  gradSamples: (dtype, rng) => scatterGradSamples(dtype, rng).slice(0, 1),
  call: ([x, index, src], a) => x!.clone().scatter_(a.dim, index!, src!),
  reference: ([x, index, src], a, dtype) => scattered(x!, a.dim, index!, src!, 'assign', true, dtype),
};

function scatterReduceInfo(reduce: 'sum' | 'prod' | 'mean' | 'amax' | 'amin'): OpInfo {
  const extreme = reduce === 'amax' || reduce === 'amin';
  const domain: Domain | undefined = reduce === 'prod' ? { lo: -1.5, hi: 1.5, awayFromZero: 0.5 } : undefined;
  return {
    name: `scatterReduce(${reduce})`,
    category: reduce === 'sum' || reduce === 'mean' ? 'composites' : 'primitives',
    dtypes: NUMERIC,
    tolerance: extreme ? 'exact-any-zero' : 'accumulated',
    differentiable: true,
    gradInputs: [0, 2],
    samples: (dtype, rng) => [
      ...scatterSamples(dtype, rng, domain).flatMap((s) => [s, { ...s, name: `exclude-self-${s.name}`, args: { ...s.args, includeSelf: false } }]),
      ...(extreme && isFloat(dtype)
        ? [{
          name: 'nan-propagates',
          inputs: [input(nd([2, 2], [1, NaN, 3, 4]), dtype), input(nd([2, 2], [0, 0, 1, 1]), 'int32'), input(nd([2, 2], [NaN, 2, 5, -Infinity]), dtype)],
          args: { dim: 1 },
          numerics: true,
        }]
        : []),
    ],
    gradSamples: (dtype, rng) => scatterGradSamples(dtype, rng).flatMap((s) => [s, { ...s, name: `${s.name}-exclude-self`, args: { ...s.args, includeSelf: false } }]),
    call: ([x, index, src], a) => x!.scatterReduce(a.dim, index!, src!, reduce, { includeSelf: a.includeSelf ?? true }),
    reference: ([x, index, src], a, dtype) => scattered(x!, a.dim, index!, src!, reduce, a.includeSelf ?? true, dtype),
  };
}

export const SORTING_INFOS: OpInfo[] = [
  sortInfo('values'), sortInfo('indices'), ARGSORT, MSORT, topkInfo('values'), topkInfo('indices'),
  cumulativeInfo('cumsum'), cumulativeInfo('cumprod'),
  SCATTER_SRC, SCATTER_VALUE, SCATTER_REDUCE_ARG, SCATTER_INPLACE,
  scatterReduceInfo('sum'), scatterReduceInfo('prod'), scatterReduceInfo('mean'), scatterReduceInfo('amax'), scatterReduceInfo('amin'),
];
