// Table entries for small composite ops (core decomposes them into primitives) and the fill primitive.
import { full, type DTypeName } from '@core/tensor';
import { dtypeObject, edges, randomArray, type Input, type Layout } from '../inputs.js';
import { ALL_DTYPES, FLOAT_DTYPES, roundTo, storeResult } from '../oracle/dtype.js';
import { map, nd, zipWith, type NdArray } from '../oracle/ndarray.js';
import { BINARY } from '../oracle/scalar.js';
import type { OpInfo, Sample } from '../opinfo.js';
import { scalarAs } from './elementwise.js';

const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;
const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

const isInt = (d: DTypeName) => d === 'int32';

const CLAMP: OpInfo = {
  name: 'clamp',
  category: 'composites',
  dtypes: NUMERIC,
  tolerance: 'exact-any-zero',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const lo = isInt(dtype) ? -10 : -1.1;
    const hi = isInt(dtype) ? 15 : 1.3;
    return [
      { name: 'min-max-scalars', inputs: [input(r([3, 4]), dtype)], args: { min: lo, max: hi } },
      { name: 'min-only-strided', inputs: [input(r([2, 5]), dtype, 'strided')], args: { min: isInt(dtype) ? 0 : 0.1 } },
      { name: 'max-only-transposed', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { max: isInt(dtype) ? 3 : 0.7 } },
      { name: 'tensor-bounds-broadcast', inputs: [input(r([3, 4]), dtype), input(map(r([1, 4]), (v) => roundTo(dtype, v - 1)), dtype), input(map(r([3, 1]), (v) => roundTo(dtype, v + 1)), dtype)], args: {} },
    ];
  },
  gradSamples: (dtype, rng) => [
    // Values 0.25 away from the bounds: clamp's gradient jumps there.
    { name: 'grad-min-max', inputs: [input(nd([2, 3], (i) => roundTo(dtype, [-2, -0.5, 0.25, 0.75, 2, -1.75][i]! + rng.uniform(-0.1, 0.1))), dtype)], args: { min: -1, max: 1 } },
  ],
  gradInputs: [0],
  call: ([x, lo, hi], a) => x!.clamp(lo ?? a.min, hi ?? a.max),
  reference: ([x, lo, hi], a, dtype) => {
    let v = x!;
    const low = lo ?? (a.min === undefined ? undefined : nd([], [scalarAs(dtype, a.min)]));
    const high = hi ?? (a.max === undefined ? undefined : nd([], [scalarAs(dtype, a.max)]));
    if (low) v = map(zipWith([v, low], BINARY.maximum), (t) => storeResult(dtype, t));
    if (high) v = map(zipWith([v, high], BINARY.minimum), (t) => storeResult(dtype, t));
    return { value: v, dtype };
  },
};

/**
 * `a.add(b, alpha)` and `a.sub(b, alpha)`: `a ± alpha·b`, with the product rounded to the result
 * dtype first, as the decomposition (a mul, then an add) rounds it; backends with the fused
 * addcmul kernel run it in one kernel (float32 and float64 outside autograd).
 */
function alphaInfo(name: 'add' | 'sub'): OpInfo {
  const sign = name === 'add' ? 1 : -1;
  return {
    name: `${name}Alpha`,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'exact',
    differentiable: true,
    fused: 'addcmul',
    samples: (dtype, rng) => {
      const r = (shape: number[]) => randomArray(rng, dtype, shape);
      return [
        { name: 'same-shape-3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype)], args: { alpha: -0.05 } },
        { name: 'broadcast-2x3+3', inputs: [input(r([2, 3]), dtype), input(r([3]), dtype)], args: { alpha: 0.3 } },
        { name: 'strided-transposed', inputs: [input(r([2, 5]), dtype, 'strided'), input(r([2, 5]), dtype, 'transposed')], args: { alpha: 1.7 } },
        { name: 'long-1000', inputs: [input(r([1000]), dtype), input(r([1000]), dtype)], args: { alpha: -1e-3 } },
        { name: 'nonfinite', inputs: [input(nd([4], [Infinity, 1, NaN, 0]), dtype), input(nd([4], [1, -Infinity, 2, NaN]), dtype)], args: { alpha: 2 }, numerics: true },
      ];
    },
    call: ([a, b], args) => (name === 'add' ? a!.add(b!, args.alpha) : a!.sub(b!, args.alpha)),
    reference: ([a, b], args, dtype) => {
      // b·alpha first, as its own op (the scalar in f32 for half types), rounded to the dtype; then the sum.
      const wide = (p: number) => (dtype === 'float16' || dtype === 'bfloat16' ? Math.fround(p) : p); // half ops with a scalar compute in f32
      const scaled = map(b!, (v) => storeResult(dtype, wide(v * scalarAs(dtype, args.alpha))));
      return { value: map(zipWith([a!, scaled], (x, y) => x + sign * y), (v) => storeResult(dtype, v)), dtype };
    },
  };
}

function predicateInfo(name: 'isnan' | 'isinf' | 'isfinite', f: (x: number) => boolean): OpInfo {
  return {
    name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    outDtype: () => 'bool',
    tolerance: 'exact',
    differentiable: false,
    samples: (dtype, rng) => [
      { name: 'rand-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)] },
      { name: 'edge', inputs: [input(nd([edges(dtype).length], edges(dtype)), dtype)] },
      { name: 'nonfinite-strided', inputs: [input(nd([2, 3], [NaN, 1, Infinity, -Infinity, 0, NaN]), dtype, 'strided')], numerics: true },
    ],
    call: ([x]) => x![name](),
    reference: ([x]) => ({ value: map(x!, (v) => (f(v) ? 1 : 0)), dtype: 'bool' }),
  };
}

const SQUARE: OpInfo = {
  name: 'square',
  category: 'composites',
  dtypes: NUMERIC,
  tolerance: 'exact',
  differentiable: true,
  samples: (dtype, rng) => [
    { name: 'rand-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)] },
    { name: 'transposed-4x3', inputs: [input(randomArray(rng, dtype, [4, 3]), dtype, 'transposed')] },
  ],
  call: ([x]) => x!.square(),
  reference: ([x], _a, dtype) => ({ value: map(x!, (v) => storeResult(dtype, dtype === 'int32' ? Math.imul(v, v) : v * v)), dtype }),
};

/** `a.add(b, alpha)` / `a.sub(b, alpha)`: b is scaled first (a scalar op, widened for half types), then added. */
function scaledInfo(name: 'add' | 'sub'): OpInfo {
  const sign = name === 'add' ? 1 : -1;
  return {
    name: `${name}(alpha)`,
    category: 'composites',
    dtypes: NUMERIC,
    tolerance: 'exact',
    differentiable: true,
    samples: (dtype, rng) => {
      const alpha = isInt(dtype) ? 3 : 0.7;
      return [
        { name: 'rand-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype), input(randomArray(rng, dtype, [3, 4]), dtype)], args: { alpha } },
        { name: 'broadcast-2x3+3', inputs: [input(randomArray(rng, dtype, [2, 3]), dtype), input(randomArray(rng, dtype, [3]), dtype, 'strided')], args: { alpha } },
      ];
    },
    call: ([a, b], args) => (name === 'add' ? a!.add(b!, args.alpha) : a!.sub(b!, args.alpha)),
    reference: ([a, b], args, dtype) => {
      const scaled = map(b!, (v) => storeResult(dtype, isInt(dtype) ? Math.imul(v, args.alpha) : v * scalarAs(dtype, args.alpha)));
      return { value: map(zipWith([a!, scaled], (x, y) => x + sign * y), (v) => storeResult(dtype, v)), dtype };
    },
  };
}

/** The fill primitive, through `full`: the value is rounded (or truncated) into the dtype by the backend. */
const FULL: OpInfo = {
  name: 'full',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: false,
  samples: (dtype) => {
    const values: Record<DTypeName, number[]> = {
      float32: [0.1, -0, 1e-40, 3.4e38],
      float64: [0.1, -0, 5e-324, 1.7e308],
      float16: [0.1, -0, 65519.99, 1e-7, 1 + 2 ** -11],
      bfloat16: [0.1, -0, 1 + 2 ** -8, 1e-40],
      int32: [7, -0, 2147483647, -2147483648],
      bool: [1, 0],
    };
    return values[dtype].map((v): Sample => ({ name: `value-${Object.is(v, -0) ? '-0' : v}`, inputs: [], args: { value: v, shape: [2, 3] } }));
  },
  call: (_inputs, a, ctx) => full(a.shape, a.value, { dtype: dtypeObject(ctx.dtype), device: ctx.device }),
  reference: (_inputs, a, dtype) => ({ value: nd(a.shape, () => roundTo(dtype, a.value)), dtype }),
};

export const COMPOSITE_INFOS: OpInfo[] = [
  FULL, CLAMP, alphaInfo('add'), alphaInfo('sub'), predicateInfo('isnan', Number.isNaN), predicateInfo('isinf', (v) => v === Infinity || v === -Infinity),
  predicateInfo('isfinite', Number.isFinite), SQUARE, scaledInfo('add'), scaledInfo('sub'),
];

