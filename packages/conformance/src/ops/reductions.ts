// Table entries for reductions: the primitives (sum, prod, amax, amin, argmax, argmin) and the
// composites built on them (mean, var, std, max/min along a dim with indices).
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Domain, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, ALL_DTYPES, FLOAT_DTYPES, isFloat, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { map, nd, reshape, type NdArray } from '../oracle/ndarray.js';
import * as ref from '../oracle/ops.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

type Args = Readonly<Record<string, any>>;
const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** The axes a `dim` argument names (all when absent), as the oracle takes them. */
function axesOf(args: Args): number[] | null {
  if (args.dim === undefined || args.dim === null) return null;
  return typeof args.dim === 'number' ? [args.dim] : [...args.dim];
}

interface ReductionSampling {
  /** Lists of dims (sum, mean, amax…) rather than a single dim (prod, argmax, max(dim)). */
  readonly multiDim: boolean;
  /** Reducing over an axis of size 0 is defined (sum → 0, prod → 1). */
  readonly emptyAxis: boolean;
  readonly domain?: Domain;
  /** Domain of the long sample (prod needs values near 1). */
  readonly longDomain?: Domain;
  /** Without a dim (max() over everything) is allowed. */
  readonly noDim?: boolean;
}

/** Long products stay finite: floats near 1, integers ±1. */
function longDomain(dtype: DTypeName, o: ReductionSampling): Domain | undefined {
  if (!o.longDomain) return o.domain;
  return isFloat(dtype) ? o.longDomain : { lo: -0.1, hi: 0.1, awayFromZero: 0.05 };
}

function reductionSamples(o: ReductionSampling) {
  return (dtype: DTypeName, rng: Rng): Sample[] => {
    const r = (shape: number[], domain = o.domain) => randomArray(rng, dtype, shape, domain);
    const samples: Sample[] = [];
    if (o.noDim !== false) samples.push({ name: 'all-3x4', inputs: [input(r([3, 4]), dtype)], args: {} });
    samples.push(
      { name: 'dim0-3x4', inputs: [input(r([3, 4]), dtype)], args: { dim: 0 } },
      { name: 'dim-1-keepdim-2x3x4', inputs: [input(r([2, 3, 4]), dtype)], args: { dim: -1, keepdim: true } },
      { name: 'transposed-dim1-4x5', inputs: [input(r([4, 5]), dtype, 'transposed')], args: { dim: 1 } },
      { name: 'strided-dim0-3x5', inputs: [input(r([3, 5]), dtype, 'strided')], args: { dim: 0 } },
      { name: 'permuted-dim1-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { dim: 1 } },
      { name: '0-dim', inputs: [input(r([]), dtype)], args: o.noDim === false ? { dim: 0 } : {} },
      { name: 'empty-0x3-dim1', inputs: [input(r([0, 3]), dtype)], args: { dim: 1 } },
      { name: 'long-3001', inputs: [input(r([3001], longDomain(dtype, o)), dtype)], args: o.noDim === false ? { dim: 0 } : {} },
    );
    if (o.multiDim) samples.push({ name: 'dims0,2-2x3x4', inputs: [input(r([2, 3, 4]), dtype)], args: { dim: [0, 2] } });
    if (o.emptyAxis) samples.push({ name: 'empty-axis-3x0-dim1', inputs: [input(r([3, 0]), dtype)], args: { dim: 1 } });
    return samples;
  };
}

function gradSamples(domain?: Domain) {
  return (dtype: DTypeName, rng: Rng): Sample[] => [
    { name: 'grad-dim1-3x4', inputs: [input(randomArray(rng, dtype, [3, 4], domain), dtype)], args: { dim: 1 } },
    { name: 'grad-transposed-dim0-4x3', inputs: [input(randomArray(rng, dtype, [4, 3], domain), dtype, 'transposed')], args: { dim: 0 } },
  ];
}

/** Distinct values (shuffled, spaced ≥ 0.25 apart) so max/argmax have no ties in gradient samples. */
function distinct(rng: Rng, dtype: DTypeName, shape: number[]): NdArray {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = rng.shuffle([...Array(n).keys()].map((i) => roundTo(dtype, (i - n / 2) * 0.25 + 0.0625)));
  return nd(shape, values);
}

/** An accumulated result: rounded into `out`, with bound = k·n·u·magnitude. */
function accumulated(acc: ref.Accumulated, out: DTypeName, inDType: DTypeName, k = 2, scale = 1): Expected {
  const float = isFloat(out);
  const u = unitRoundoff(accumulatorOf(inDType));
  const bound = float ? acc.magnitude.data.map((m) => (acc.length + k) * u * m * scale) : undefined;
  return { value: map(acc.value, (v) => roundTo(out, v)), dtype: out, ...(bound ? { bound } : {}) };
}

const sumOut = (dtype: DTypeName): DTypeName => (isFloat(dtype) ? dtype : 'int32');

const SUM: OpInfo = {
  name: 'sum',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  outDtype: sumOut,
  tolerance: 'accumulated',
  differentiable: true,
  samples: reductionSamples({ multiDim: true, emptyAxis: true }),
  gradSamples: gradSamples(),
  call: ([x], a) => x!.sum(a.dim, a.keepdim ?? false),
  reference: ([x], a, dtype) => accumulated(ref.sum(x!, axesOf(a), a.keepdim ?? false), sumOut(dtype), dtype),
};

const PROD: OpInfo = {
  name: 'prod',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  outDtype: sumOut,
  tolerance: 'accumulated',
  differentiable: true,
  samples: reductionSamples({ multiDim: false, emptyAxis: true, domain: { lo: -1.5, hi: 1.5, awayFromZero: 0.5 }, longDomain: { lo: 0.995, hi: 1.005 } }),
  gradSamples: gradSamples({ lo: -1.5, hi: 1.5, awayFromZero: 0.5 }),
  call: ([x], a) => x!.prod(a.dim ?? null, a.keepdim ?? false),
  reference: ([x], a, dtype) => accumulated(ref.prod(x!, axesOf(a), a.keepdim ?? false), sumOut(dtype), dtype),
};

function extremeInfo(name: 'amax' | 'amin'): OpInfo {
  const isMax = name === 'amax';
  return {
    name,
    category: 'primitives',
    dtypes: ALL_DTYPES,
    // max(−0, +0) may be either zero.
    tolerance: 'exact-any-zero',
    differentiable: true,
    samples: reductionSamples({ multiDim: true, emptyAxis: false }),
    gradSamples: (dtype, rng) => [
      { name: 'grad-dim1-3x4', inputs: [input(distinct(rng, dtype, [3, 4]), dtype)], args: { dim: 1 } },
      { name: 'grad-all-2x3', inputs: [input(distinct(rng, dtype, [2, 3]), dtype)], args: {} },
    ],
    call: ([x], a) => (isMax ? x!.amax(a.dim, a.keepdim ?? false) : x!.amin(a.dim, a.keepdim ?? false)),
    reference: ([x], a, dtype) => ({ value: ref.extreme(x!, axesOf(a), a.keepdim ?? false, isMax), dtype }),
  };
}

function argInfo(name: 'argmax' | 'argmin'): OpInfo {
  const isMax = name === 'argmax';
  return {
    name,
    category: 'primitives',
    dtypes: NUMERIC,
    outDtype: () => 'int32',
    tolerance: 'exact',
    differentiable: false,
    samples: reductionSamples({ multiDim: false, emptyAxis: false }),
    call: ([x], a) => (isMax ? x!.argmax(a.dim ?? null, a.keepdim ?? false) : x!.argmin(a.dim ?? null, a.keepdim ?? false)),
    reference: ([x], a) => {
      const keepdim = a.keepdim ?? false;
      if (a.dim === undefined) {
        const flat = reshape(x!, [-1]);
        const r = ref.argExtreme(flat, 0, false, isMax);
        return { value: keepdim ? reshape(r, x!.shape.map(() => 1)) : r, dtype: 'int32' };
      }
      const r = ref.argExtreme(x!, a.dim, keepdim, isMax);
      return { value: x!.shape.length === 0 ? reshape(r, []) : r, dtype: 'int32' };
    },
  };
}

const MEAN: OpInfo = {
  name: 'mean',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => reductionSamples({ multiDim: true, emptyAxis: false })(dtype, rng),
  gradSamples: gradSamples(),
  call: ([x], a) => x!.mean(a.dim, a.keepdim ?? false),
  reference: ([x], a, dtype) => {
    const s = ref.sum(x!, axesOf(a), a.keepdim ?? false);
    const n = s.length;
    return accumulated({ value: map(s.value, (v) => v / n), magnitude: map(s.magnitude, (m) => m / n), length: n }, dtype, dtype, 3);
  },
};

function varianceInfo(name: 'var' | 'std'): OpInfo {
  const std = name === 'std';
  return {
    name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    // var is computed in f32 for half types (cast in, cast out): no primitive sees the column dtype.
    // std is var().sqrt(), and the sqrt runs in the column dtype.
    needs: std ? 'compute' : 'storage',
    tolerance: 'accumulated',
    differentiable: true,
    samples: (dtype, rng) => [
      ...reductionSamples({ multiDim: true, emptyAxis: false })(dtype, rng).filter((s) => s.name !== '0-dim' && !s.name.startsWith('empty')),
      { name: 'correction0-dim1-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)], args: { dim: 1, correction: 0 } },
    ],
    gradSamples: gradSamples(),
    call: ([x], a) => (std ? x!.std(a.dim, a.keepdim ?? false, { correction: a.correction ?? 1 }) : x!.var(a.dim, a.keepdim ?? false, { correction: a.correction ?? 1 })),
    reference: ([x], a, dtype) => {
      const v = ref.variance(x!, axesOf(a), a.keepdim ?? false, a.correction ?? 1);
      const u = unitRoundoff(accumulatorOf(dtype));
      const varBound = v.magnitude.data.map((m) => (2 * v.length + 8) * u * m);
      if (!std) return { value: map(v.value, (x) => roundTo(dtype, x)), dtype, bound: varBound };
      // |√a − √b| ≤ √|a − b|, plus the rounding of the square root itself.
      return {
        value: map(v.value, (x) => roundTo(dtype, Math.sqrt(x))),
        dtype,
        bound: varBound.map((b, i) => Math.sqrt(b) + u * Math.sqrt(v.value.data[i]!)),
      };
    },
  };
}

function extremeDimInfo(name: 'max' | 'min', part: 'values' | 'indices'): OpInfo {
  const isMax = name === 'max';
  return {
    name: `${name}(dim).${part}`,
    category: 'composites',
    dtypes: NUMERIC,
    ...(part === 'indices' ? { outDtype: () => 'int32' as const } : {}),
    tolerance: part === 'values' ? 'exact-any-zero' : 'exact',
    differentiable: part === 'values',
    samples: (dtype, rng) => reductionSamples({ multiDim: false, emptyAxis: false, noDim: false })(dtype, rng),
    gradSamples: (dtype, rng) => [
      { name: 'grad-dim1-3x4', inputs: [input(distinct(rng, dtype, [3, 4]), dtype)], args: { dim: 1 } },
      { name: 'grad-dim0-keepdim-3x4', inputs: [input(distinct(rng, dtype, [3, 4]), dtype)], args: { dim: 0, keepdim: true } },
    ],
    call: ([x], a) => {
      const r = isMax ? x!.max(a.dim, a.keepdim ?? false) : x!.min(a.dim, a.keepdim ?? false);
      return r[part];
    },
    reference: ([x], a, dtype) => {
      const keepdim = a.keepdim ?? false;
      if (part === 'values') {
        const v = ref.extreme(x!, x!.shape.length === 0 ? null : [a.dim], keepdim, isMax);
        return { value: v, dtype };
      }
      const r = ref.argExtreme(x!, a.dim, keepdim, isMax);
      return { value: x!.shape.length === 0 ? reshape(r, []) : r, dtype: 'int32' };
    },
  };
}

export const REDUCTION_INFOS: OpInfo[] = [
  SUM, PROD, extremeInfo('amax'), extremeInfo('amin'), argInfo('argmax'), argInfo('argmin'),
  MEAN, varianceInfo('var'), varianceInfo('std'),
  extremeDimInfo('max', 'values'), extremeDimInfo('max', 'indices'), extremeDimInfo('min', 'values'), extremeDimInfo('min', 'indices'),
];
