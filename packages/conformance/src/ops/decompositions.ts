// Table entries for PyTorch's composite ops that core builds from its primitives
// (packages/tensor/src/ops/decompositions.ts, einsum.ts): masking, triangles, splitting,
// reordering, repeating, truth tests, norms, products, interpolation, index-vector ops, diagonals,
// einsum, the new* factories and eye. Each oracle computes the op's definition in float64 from
// the already rounded inputs; where the op rounds intermediate results (lerp, addcmul), it follows
// those roundings, as PyTorch's kernels do. Ops that return several tensors (split, chunk, unbind)
// are checked through the parts joined in reverse order, which shows any wrong, missing or
// misplaced part.
import { cat, einsum, eye, linalg, stack, type DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { dtypeObject, randomArray, randomValue, type Domain, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, ALL_DTYPES, FLOAT_DTYPES, isFloat, roundTo, storeResult, unitRoundoff } from '../oracle/dtype.js';
import { at, broadcastShapes, broadcastTo, generate, map, nd, reshape, select, slice, zipWith, type NdArray } from '../oracle/ndarray.js';
import * as ref from '../oracle/ops.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import type { ToleranceClass } from '../tolerance.js';
import { scalarAs } from './elementwise.js';

type Args = Readonly<Record<string, any>>;
const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;
const NONZERO: Domain = { lo: -3, hi: 3, awayFromZero: 0.3 };

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });
const indexInput = (values: readonly number[], shape: readonly number[] = [values.length]): Input => input(nd(shape, values), 'int32');
const axis = (d: number, rank: number): number => (d < 0 ? d + Math.max(rank, 1) : d);
const isInt = (dtype: DTypeName): boolean => dtype === 'int32';

/** The fields most entries share: report category, dtypes, tolerance class, differentiability. */
function kind(category: OpInfo['category'], dtypes: readonly DTypeName[], tolerance: ToleranceClass, differentiable = true) {
  return { category, dtypes, tolerance, differentiable };
}

/** Random values of a sample's dtype, in a domain (REAL by default). */
type RandomOf = (shape: number[], domain?: Domain) => NdArray;

/** OpInfo.samples from a function of the dtype's random values. */
function sampled(samples: (r: RandomOf, dtype: DTypeName, rng: Rng) => Sample[]): OpInfo['samples'] {
  return (dtype, rng) => samples((shape, domain) => randomArray(rng, dtype, shape, domain), dtype, rng);
}

/** A fill value for each dtype: 0.1 is not representable, so the fill rounds it. */
function fillFor(dtype: DTypeName): number {
  return dtype === 'bool' ? 1 : isInt(dtype) ? -7 : 0.1;
}

/** Random values with about half of them zero (for the truth tests and the 0-norm). */
function sparse(rng: Rng, dtype: DTypeName, shape: number[]): NdArray {
  return nd(shape, () => (rng.next() < 0.5 ? 0 : randomValue(rng, dtype)));
}

/** An exact result in `dtype`, with an accumulation bound k·u·magnitude for floats (u of the accumulator). */
function withBound(value: NdArray, magnitude: NdArray, dtype: DTypeName, terms: number, extra = 0): Expected {
  const rounded = map(value, (v) => roundTo(dtype, v));
  if (!isFloat(dtype)) return { value: rounded, dtype };
  const u = unitRoundoff(accumulatorOf(dtype));
  return { value: rounded, dtype, bound: magnitude.data.map((m) => ((terms + 2) * u + extra * unitRoundoff(dtype)) * Math.abs(m)) };
}

// ---- masking ----

/** A bool mask input of `shape` and how many of its elements are true. */
function maskOf(rng: Rng, shape: number[], layout: Layout = 'contiguous'): { mask: Input; trues: number } {
  const value = randomArray(rng, 'bool', shape);
  return { mask: input(value, 'bool', layout), trues: value.data.filter((v) => v !== 0).length };
}

function maskedFillInfo(name: 'maskedFill' | 'maskedFill_'): OpInfo {
  const inPlace = name === 'maskedFill_';
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    samples: sampled((r, dtype, rng) => {
      const mask = (shape: number[], layout?: Layout) => maskOf(rng, shape, layout).mask;
      const value = fillFor(dtype);
      const samples: Sample[] = [
        { name: 'scalar-3x4', inputs: [input(r([3, 4]), dtype), mask([3, 4])], args: { value } },
        { name: 'mask-broadcast-1x4-transposed', inputs: [input(r([3, 4]), dtype, 'transposed'), mask([1, 4])], args: { value } },
        { name: 'strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided'), mask([2, 5], 'strided')], args: { value } },
        { name: '0-dim-value-tensor', inputs: [input(r([2, 3]), dtype), mask([2, 3]), input(r([]), dtype)] },
      ];
      if (!inPlace) samples.push({ name: 'self-broadcast-3x1-mask-3x4', inputs: [input(r([3, 1]), dtype), mask([3, 4])], args: { value } });
      return samples;
    }),
    call: ([x, mask, value], a) => (inPlace ? x!.clone().maskedFill_(mask!, value ?? a.value) : x!.maskedFill(mask!, value ?? a.value)),
    reference: ([x, mask, value], a, dtype) => {
      const fill = value ? value.data[0]! : roundTo(dtype, a.value);
      return { value: zipWith([mask!, x!], (m, v) => (m !== 0 ? fill : v)), dtype };
    },
  };
}

function maskedScatterInfo(name: 'maskedScatter' | 'maskedScatter_'): OpInfo {
  const inPlace = name === 'maskedScatter_';
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    samples: sampled((r, dtype, rng) => {
      const full = maskOf(rng, [3, 4]);
      const row = maskOf(rng, [1, 4]);
      const strided = maskOf(rng, [2, 5], 'strided');
      // Sources: exactly as long as needed, longer (its tail unread, non-contiguous) or empty.
      const samples: Sample[] = [
        { name: '3x4-exact-source', inputs: [input(r([3, 4]), dtype), full.mask, input(r([full.trues]), dtype)] },
        { name: 'mask-broadcast-1x4-transposed-source-4x3', inputs: [input(r([3, 4]), dtype, 'transposed'), row.mask, input(r([4, 3]), dtype, 'transposed')] },
        { name: 'strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided'), strided.mask, input(r([2, 5]), dtype, 'strided')] },
        { name: 'all-false-empty-source', inputs: [input(r([2, 3]), dtype), input(nd([2, 3]), 'bool'), input(r([0]), dtype)] },
        { name: '0-dim', inputs: [input(r([]), dtype), input(nd([], [1]), 'bool'), input(r([2]), dtype)] },
      ];
      if (!inPlace) samples.push({ name: 'self-broadcast-3x1-mask-3x4', inputs: [input(r([3, 1]), dtype), maskOf(rng, [3, 4]).mask, input(r([12]), dtype)] });
      return samples;
    }),
    call: ([x, mask, source]) => (inPlace ? x!.clone().maskedScatter_(mask!, source!) : x!.maskedScatter(mask!, source!)),
    reference: ([x, mask, source], _a, dtype) => {
      // zipWith visits the broadcast positions in row-major order: the k-th true one takes source's element k.
      let next = 0;
      return { value: zipWith([mask!, x!], (m, v) => (m !== 0 ? source!.data[next++]! : v)), dtype };
    },
  };
}

function triangleInfo(name: 'tril' | 'triu'): OpInfo {
  const keep = (offset: number, k: number) => (name === 'tril' ? offset <= k : offset >= k);
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    samples: sampled((r, dtype) => [
      { name: '3x4', inputs: [input(r([3, 4]), dtype)], args: { diagonal: 0 } },
      { name: 'transposed-4x3-diagonal-1', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { diagonal: -1 } },
      { name: 'batch-permuted-2x3x3-diagonal1', inputs: [input(r([2, 3, 3]), dtype, 'permuted')], args: { diagonal: 1 } },
      { name: 'diagonal5-3x4', inputs: [input(r([3, 4]), dtype)], args: { diagonal: 5 } },
      { name: 'empty-0x3', inputs: [input(r([0, 3]), dtype)], args: { diagonal: 0 } },
    ]),
    call: ([x], a) => x![name](a.diagonal),
    reference: ([x], a, dtype) => {
      const rank = x!.shape.length;
      return { value: generate(x!.shape, (idx) => (keep(idx[rank - 1]! - idx[rank - 2]!, a.diagonal) ? at(x!, idx) : 0)), dtype };
    },
  };
}

// ---- splitting (views) ----

/** The [start, end) ranges split/chunk cut a dim of `size` into. */
function pieces(name: 'split' | 'chunk', size: number, arg: number | readonly number[]): [number, number][] {
  const sizes = typeof arg !== 'number' ? arg
    : name === 'chunk' ? (size === 0 ? new Array<number>(arg).fill(0) : piecesOf(size, Math.ceil(size / arg)))
      : piecesOf(size, arg);
  let start = 0;
  return sizes.map((s) => [start, (start += s)]);
}

function piecesOf(size: number, step: number): number[] {
  if (size === 0) return [0];
  return Array.from({ length: Math.ceil(size / step) }, (_, i) => Math.min(step, size - i * step));
}

function splitInfo(name: 'split' | 'chunk' | 'unbind'): OpInfo {
  const shapes: Record<typeof name, [string, number[], Layout, Args][]> = {
    split: [
      ['size2-dim1-3x5', [3, 5], 'contiguous', { arg: 2, dim: 1 }],
      ['sizes-1,0,2-dim0-transposed-3x4', [3, 4], 'transposed', { arg: [1, 0, 2], dim: 0 }],
      ['size4-dim-1-2x3', [2, 3], 'strided', { arg: 4, dim: -1 }],
      ['empty-0x3-size2', [0, 3], 'contiguous', { arg: 2, dim: 0 }],
    ],
    chunk: [
      ['chunks3-dim1-3x5', [3, 5], 'contiguous', { arg: 3, dim: 1 }],
      ['chunks4-dim0-6x2', [6, 2], 'offset', { arg: 4, dim: 0 }],
      ['chunks2-dim-1-permuted-2x3x5', [2, 3, 5], 'permuted', { arg: 2, dim: -1 }],
      ['empty-0x3-chunks2', [0, 3], 'contiguous', { arg: 2, dim: 0 }],
    ],
    unbind: [
      ['dim0-3x4', [3, 4], 'contiguous', { dim: 0 }],
      ['dim1-permuted-2x3x4', [2, 3, 4], 'permuted', { dim: 1 }],
      ['dim-1-transposed-2x3', [2, 3], 'transposed', { dim: -1 }],
    ],
  };
  return {
    name,
    ...kind('views', ALL_DTYPES, 'exact'),
    needs: 'storage',
    samples: (dtype, rng) => shapes[name].map(([sample, shape, layout, args]) => ({ name: sample, inputs: [input(randomArray(rng, dtype, shape), dtype, layout)], args })),
    call: ([x], a) => {
      if (name === 'unbind') return stack(x!.unbind(a.dim).reverse(), a.dim);
      return cat((name === 'split' ? x!.split(a.arg, a.dim) : x!.chunk(a.arg, a.dim)).reverse(), a.dim);
    },
    reference: ([x], a, dtype) => {
      const d = axis(a.dim, x!.shape.length);
      if (name === 'unbind') return { value: ref.stack(Array.from({ length: x!.shape[d]! }, (_, i) => select(x!, d, i)).reverse(), d), dtype };
      return { value: ref.cat(pieces(name, x!.shape[d]!, a.arg).map(([s, e]) => slice(x!, d, s, e)).reverse(), d), dtype };
    },
  };
}

// ---- reordering ----

const FLIP: OpInfo = {
  name: 'flip',
  ...kind('composites', ALL_DTYPES, 'exact'),
  samples: sampled((r, dtype) => [
    { name: 'dims0,1-3x4', inputs: [input(r([3, 4]), dtype)], args: { dims: [0, 1] } },
    { name: 'dim-1-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { dims: -1 } },
    { name: 'dims0,2-permuted-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { dims: [0, 2] } },
    { name: 'empty-2x0', inputs: [input(r([2, 0]), dtype)], args: { dims: [1] } },
    { name: '0-dim', inputs: [input(r([]), dtype)], args: { dims: [0] } },
  ]),
  call: ([x], a) => x!.flip(a.dims),
  reference: ([x], a, dtype) => {
    const rank = x!.shape.length;
    const dims = (typeof a.dims === 'number' ? [a.dims] : a.dims as number[]).map((d) => axis(d, rank));
    return { value: generate(x!.shape, (idx) => at(x!, idx.map((v, k) => (dims.includes(k) ? x!.shape[k]! - 1 - v : v)))), dtype };
  },
};

function rollRef(x: NdArray, shifts: readonly number[], dims: readonly number[]): NdArray {
  return generate(x.shape, (idx) => {
    const src = idx.slice();
    dims.forEach((dim, k) => {
      const d = axis(dim, x.shape.length);
      const n = x.shape[d]!;
      src[d] = (((src[d]! - shifts[k]!) % n) + n) % n;
    });
    return at(x, src);
  });
}

const ROLL: OpInfo = {
  name: 'roll',
  ...kind('composites', ALL_DTYPES, 'exact'),
  samples: sampled((r, dtype) => [
    { name: 'shift1-dim1-3x4', inputs: [input(r([3, 4]), dtype)], args: { shifts: 1, dims: 1 } },
    { name: 'shifts2,-1-dims0,1-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { shifts: [2, -1], dims: [0, 1] } },
    { name: 'shift5-flattened-3x4', inputs: [input(r([3, 4]), dtype)], args: { shifts: 5 } },
    { name: 'shift-7-dim-1-strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided')], args: { shifts: -7, dims: -1 } },
    { name: 'shift0-dim0-3x2', inputs: [input(r([3, 2]), dtype)], args: { shifts: 0, dims: 0 } },
  ]),
  call: ([x], a) => x!.roll(a.shifts, a.dims),
  reference: ([x], a, dtype) => {
    const shifts = typeof a.shifts === 'number' ? [a.shifts] : a.shifts;
    if (a.dims === undefined) return { value: reshape(rollRef(reshape(x!, [-1]), shifts, [0]), x!.shape), dtype };
    return { value: rollRef(x!, shifts, typeof a.dims === 'number' ? [a.dims] : a.dims), dtype };
  },
};

// ---- repeating ----

function repeatRef(x: NdArray, sizes: readonly number[]): NdArray {
  const shape = [...new Array<number>(sizes.length - x.shape.length).fill(1), ...x.shape];
  const padded = reshape(x, shape);
  return generate(shape.map((s, i) => s * sizes[i]!), (idx) => at(padded, idx.map((v, i) => v % shape[i]!)));
}

function repeatInfo(name: 'repeat' | 'tile'): OpInfo {
  const shapes: Record<typeof name, [string, number[], Layout, number[]][]> = {
    repeat: [
      ['2x3-of-2x2', [2, 2], 'contiguous', [2, 3]],
      ['2x1x2-of-transposed-2x3', [2, 3], 'transposed', [2, 1, 2]],
      ['0x1-of-2x2', [2, 2], 'contiguous', [0, 1]],
      ['3-of-0-dim', [], 'contiguous', [3]],
    ],
    tile: [
      ['2-of-2x3', [2, 3], 'contiguous', [2]],
      ['2x1x2-of-strided-2x3', [2, 3], 'strided', [2, 1, 2]],
    ],
  };
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    needs: 'storage',
    samples: (dtype, rng) => shapes[name].map(([sample, shape, layout, sizes]) => ({ name: sample, inputs: [input(randomArray(rng, dtype, shape), dtype, layout)], args: { sizes } })),
    call: ([x], a) => x![name](a.sizes),
    reference: ([x], a, dtype) => {
      const sizes: number[] = a.sizes;
      const full = sizes.length < x!.shape.length ? [...new Array<number>(x!.shape.length - sizes.length).fill(1), ...sizes] : sizes;
      return { value: repeatRef(x!, full), dtype };
    },
  };
}

const REPEAT_INTERLEAVE: OpInfo = {
  name: 'repeatInterleave',
  ...kind('composites', ALL_DTYPES, 'exact'),
  needs: 'storage',
  samples: sampled((r, dtype) => [
    { name: 'repeats2-dim0-3x2', inputs: [input(r([3, 2]), dtype)], args: { repeats: 2, dim: 0 } },
    { name: 'repeats3-dim-1-transposed-2x3', inputs: [input(r([2, 3]), dtype, 'transposed')], args: { repeats: 3, dim: -1 } },
    { name: 'repeats2-flattened-2x2', inputs: [input(r([2, 2]), dtype)], args: { repeats: 2 } },
    { name: 'repeats0-dim1-2x3', inputs: [input(r([2, 3]), dtype)], args: { repeats: 0, dim: 1 } },
    { name: '0-dim-repeats3', inputs: [input(r([]), dtype)], args: { repeats: 3, dim: 0 } },
  ]),
  call: ([x], a) => x!.repeatInterleave(a.repeats, a.dim),
  reference: ([x], a, dtype) => {
    const src = a.dim === undefined ? reshape(x!, [-1]) : x!.shape.length === 0 ? reshape(x!, [1]) : x!;
    const d = a.dim === undefined ? 0 : axis(a.dim, x!.shape.length);
    const shape = src.shape.map((s, k) => (k === d ? s * a.repeats : s));
    return { value: generate(shape, (idx) => at(src, idx.map((v, k) => (k === d ? Math.floor(v / a.repeats) : v)))), dtype };
  },
};

// ---- truth ----

function truthInfo(name: 'any' | 'all' | 'countNonzero'): OpInfo {
  const out: DTypeName = name === 'countNonzero' ? 'int32' : 'bool';
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact', false),
    outDtype: () => out,
    samples: (dtype, rng) => {
      const s = (shape: number[]) => sparse(rng, dtype, shape);
      const samples: Sample[] = [
        { name: 'all-3x4', inputs: [input(s([3, 4]), dtype)], args: {} },
        { name: 'dim1-3x4', inputs: [input(s([3, 4]), dtype)], args: { dim: 1 } },
        { name: 'dims0,2-2x3x4', inputs: [input(s([2, 3, 4]), dtype, 'permuted')], args: { dim: [0, 2], keepdim: name !== 'countNonzero' } },
        { name: 'transposed-dim0-4x3', inputs: [input(s([4, 3]), dtype, 'transposed')], args: { dim: 0 } },
        { name: 'all-zero-and-all-set-rows', inputs: [input(nd([2, 3], dtype === 'bool' ? [0, 0, 0, 1, 1, 1] : [0, 0, 0, 1, 2, 3]), dtype)], args: { dim: 1 } },
        { name: 'empty-0x3-dim0', inputs: [input(s([0, 3]), dtype)], args: { dim: 0 } },
      ];
      if (isFloat(dtype)) samples.push({ name: 'nonfinite', inputs: [input(nd([2, 2], [NaN, 0, 0, -Infinity]), dtype)], args: { dim: 1 }, numerics: true });
      return samples;
    },
    call: ([x], a) => (name === 'countNonzero' ? x!.countNonzero(a.dim) : x![name](a.dim, a.keepdim)),
    reference: ([x], a) => {
      const axes = a.dim === undefined ? null : typeof a.dim === 'number' ? [a.dim] : a.dim;
      const counts = ref.sum(map(x!, (v) => (v !== 0 ? 1 : 0)), axes, a.keepdim ?? false).value;
      const n = ref.reduceLength(x!.shape, axes);
      const value = name === 'countNonzero' ? counts : map(counts, (c) => (name === 'any' ? c > 0 : c === n) ? 1 : 0);
      return { value, dtype: out };
    },
  };
}

// ---- norms ----

/** The exact vector norm of `x` over `axes`. */
function vectorNormRef(x: NdArray, ord: number, axes: number[] | null, keepdim: boolean): NdArray {
  const abs = map(x, Math.abs);
  if (ord === Infinity || ord === -Infinity) return ref.extreme(abs, axes, keepdim, ord > 0);
  if (ord === 0) return ref.sum(map(x, (v) => (v !== 0 ? 1 : 0)), axes, keepdim).value;
  return map(ref.sum(map(abs, (v) => v ** ord), axes, keepdim).value, (s) => (ord === 2 ? Math.sqrt(s) : s ** (1 / ord)));
}

/** A norm's expected value: a correct computation errs by about (n + 8)·u_acc relative (the terms, their sum, the root). */
function normExpected(x: NdArray, ord: number, dim: number | number[] | undefined, keepdim: boolean, dtype: DTypeName): Expected {
  const axes = dim === undefined ? null : typeof dim === 'number' ? [dim] : dim;
  const value = vectorNormRef(x, ord, axes, keepdim);
  const exact = ord === Infinity || ord === -Infinity || ord === 0;
  return withBound(value, value, dtype, exact ? -2 : ref.reduceLength(x.shape, axes) + 6);
}

function normSamples(r: RandomOf, dtype: DTypeName, rng: Rng): Sample[] {
  return [
    { name: 'default-3x4', inputs: [input(r([3, 4]), dtype)], args: {} },
    { name: 'ord1-dim1-3x4', inputs: [input(r([3, 4]), dtype)], args: { ord: 1, dim: 1 } },
    { name: 'inf-dim0-keepdim-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { ord: Infinity, dim: 0, keepdim: true } },
    { name: '-inf-dim-1-strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided')], args: { ord: -Infinity, dim: -1 } },
    { name: 'ord0-3x4', inputs: [input(sparse(rng, dtype, [3, 4]), dtype)], args: { ord: 0, dim: 1 } },
    { name: 'ord3-dims0,2-permuted-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { ord: 3, dim: [0, 2] } },
    { name: 'ord-1.5-dim1-2x3', inputs: [input(r([2, 3], NONZERO), dtype)], args: { ord: -1.5, dim: 1 } },
    { name: 'zeros-2x3-dim1', inputs: [input(nd([2, 3]), dtype)], args: { dim: 1 } },
    // Squares beyond float16's range: computed in float32, as PyTorch does.
    { name: 'large-values-2x4', inputs: [input(r([2, 4], { lo: 200, hi: 300 }), dtype)], args: { dim: 1 } },
    { name: 'long-1000', inputs: [input(r([1000]), dtype)], args: {} },
    { name: '0-dim', inputs: [input(r([]), dtype)], args: {} },
    { name: 'empty-0x3-dim0', inputs: [input(r([0, 3]), dtype)], args: { dim: 0 } },
  ];
}

function normGradSamples(r: RandomOf, dtype: DTypeName): Sample[] {
  return [
    { name: 'grad-default-3x4', inputs: [input(r([3, 4], NONZERO), dtype)], args: {} },
    { name: 'grad-ord3-dim1-transposed-4x3', inputs: [input(r([4, 3], NONZERO), dtype, 'transposed')], args: { ord: 3, dim: 1 } },
    { name: 'grad-inf-dim1-3x4', inputs: [input(r([3, 4], NONZERO), dtype)], args: { ord: Infinity, dim: 1 } },
  ];
}

function normInfo(name: 'norm' | 'linalg.vectorNorm'): OpInfo {
  return {
    name,
    ...kind('composites', FLOAT_DTYPES, 'accumulated'),
    samples: sampled(normSamples),
    gradSamples: sampled(normGradSamples),
    call: ([x], a) => (name === 'norm' ? x!.norm(a.ord ?? null, a.dim, a.keepdim) : linalg.vectorNorm(x!, a.ord, a.dim, a.keepdim)),
    reference: ([x], a, dtype) => normExpected(x!, a.ord ?? 2, a.dim, a.keepdim ?? false, dtype),
  };
}

const DIST: OpInfo = {
  name: 'dist',
  ...kind('composites', FLOAT_DTYPES, 'accumulated'),
  samples: sampled((r, dtype) => [
    { name: 'p2-3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype)], args: {} },
    { name: 'p1-broadcast-2x3+3', inputs: [input(r([2, 3]), dtype), input(r([3]), dtype)], args: { p: 1 } },
    { name: 'inf-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed'), input(r([4, 3]), dtype)], args: { p: Infinity } },
    { name: 'p3-strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided'), input(r([2, 5]), dtype)], args: { p: 3 } },
  ]),
  call: ([x, y], a) => x!.dist(y!, a.p),
  // The difference is an op of its own, rounded to the dtype before the norm.
  reference: ([x, y], a, dtype) => normExpected(zipWith([x!, y!], (u, v) => storeResult(dtype, u - v)), a.p ?? 2, undefined, false, dtype),
};

// ---- products ----

const OUTER: OpInfo = {
  name: 'outer',
  ...kind('composites', ALL_DTYPES, 'exact'),
  samples: sampled((r, dtype) => [
    { name: '3x4', inputs: [input(r([3]), dtype), input(r([4]), dtype)] },
    { name: 'strided-2x5', inputs: [input(r([2]), dtype, 'strided'), input(r([5]), dtype, 'offset')] },
    { name: 'empty-0x3', inputs: [input(r([0]), dtype), input(r([3]), dtype)] },
  ]),
  call: ([a, b]) => a!.outer(b!),
  reference: ([a, b], _args, dtype) => ({
    value: generate([a!.shape[0]!, b!.shape[0]!], ([i, j]) => storeResult(dtype, isInt(dtype) ? Math.imul(a!.data[i!]!, b!.data[j!]!) : a!.data[i!]! * b!.data[j!]!)),
    dtype,
  }),
};

function addProductInfo(name: 'addmm' | 'baddbmm'): OpInfo {
  const batch = name === 'baddbmm' ? [2] : [];
  return {
    name,
    ...kind('composites', NUMERIC, 'accumulated'),
    samples: sampled((r, dtype) => {
      const scales = isInt(dtype) ? { beta: 2, alpha: -3 } : { beta: 0.5, alpha: 2 };
      const mats = (la: Layout = 'contiguous') => [input(r([...batch, 2, 3]), dtype, la), input(r([...batch, 3, 4]), dtype)];
      const samples: Sample[] = [
        { name: 'input-full', inputs: [input(r([...batch, 2, 4]), dtype), ...mats()], args: {} },
        { name: 'broadcast-input-4-beta-alpha', inputs: [input(r([4]), dtype), ...mats()], args: scales },
        { name: 'transposed-mat1', inputs: [input(r([...batch, 2, 4]), dtype), ...mats('transposed')], args: { alpha: scales.alpha } },
      ];
      if (isFloat(dtype)) {
        samples.push({ name: 'beta0-ignores-nan-input', inputs: [input(nd([...batch, 2, 4], () => NaN), dtype), ...mats()], args: { beta: 0 }, numerics: true });
      }
      return samples;
    }),
    gradSamples: sampled((r, dtype) => [
      { name: 'grad-beta-alpha', inputs: [input(r([2, 4]), dtype), input(r([...batch, 2, 3]), dtype), input(r([...batch, 3, 4]), dtype)], args: { beta: 0.5, alpha: 2 } },
    ]),
    call: ([x, a, b], args) => x![name](a!, b!, { beta: args.beta, alpha: args.alpha }),
    reference: ([x, a, b], args, dtype) => {
      const [beta, alpha] = [args.beta ?? 1, args.alpha ?? 1];
      const product = ref.matmul(a!, b!);
      const base = broadcastTo(x!, product.value.shape);
      const value = zipWith([base, product.value], (i, p) => (beta === 0 ? 0 : beta * i) + alpha * p);
      // The product, its scaling, the input's scaling and the sum are each rounded to the dtype.
      const size = zipWith([base, product.magnitude], (i, m) => (beta === 0 ? 0 : Math.abs(beta * i)) + Math.abs(alpha) * m);
      return withBound(value, size, dtype, product.length, 3);
    },
  };
}

function einsumRef(equation: string, xs: readonly NdArray[]): ref.Accumulated {
  const [lhs, rhs] = equation.replace(/ /g, '').split('->') as [string, string | undefined];
  const terms = lhs.split(',');
  const ellipsis = Math.max(0, ...terms.map((t, k) => (t.includes('...') ? xs[k]!.shape.length - (t.length - 3) : 0)));
  const dots = Array.from({ length: ellipsis }, (_, k) => String(k));
  const labelsOf = (t: string, rank: number) => (t.includes('...') ? t.replace('...', dots.slice(ellipsis - (rank - (t.length - 3))).join('')) : t).split('');
  const inputs = terms.map((t, k) => labelsOf(t, xs[k]!.shape.length));
  const letters = inputs.flat().filter((l) => /[a-zA-Z]/.test(l));
  const output = rhs === undefined
    ? [...dots, ...[...new Set(letters)].filter((l) => letters.indexOf(l) === letters.lastIndexOf(l)).sort()]
    : labelsOf(rhs, rhs.replace('...', '').length + ellipsis);
  const sizes = new Map<string, number>();
  inputs.forEach((ls, k) => ls.forEach((l, i) => {
    const s = xs[k]!.shape[i]!;
    if ((sizes.get(l) ?? 1) === 1) sizes.set(l, s);
  }));
  const summed = [...sizes.keys()].filter((l) => !output.includes(l));
  const outShape = output.map((l) => sizes.get(l)!);
  const summedShape = summed.map((l) => sizes.get(l)!);
  const total = (abs: boolean) => generate(outShape, (o) => {
    let s = 0;
    const value = new Map(output.map((l, i) => [l, o[i]!]));
    for (const idx of generate(summedShape, () => 0).data.keys()) {
      let rest = idx;
      for (let j = summed.length - 1; j >= 0; j--) {
        value.set(summed[j]!, rest % summedShape[j]!);
        rest = Math.floor(rest / summedShape[j]!);
      }
      const term = xs.reduce((p, x, k) => p * at(x, inputs[k]!.map((l, i) => (x.shape[i] === 1 ? 0 : value.get(l)!))), 1);
      s += abs ? Math.abs(term) : term;
    }
    return s;
  });
  return { value: total(false), magnitude: total(true), length: Math.max(1, summedShape.reduce((n, s) => n * s, 1)) };
}

const EINSUM_SAMPLES: [string, string, number[][], Layout[]?][] = [
  ['mm', 'ij,jk->ik', [[3, 4], [4, 5]]],
  ['bmm-transposed', 'bij,bjk->bik', [[2, 3, 4], [2, 4, 2]], ['contiguous', 'transposed']],
  ['diagonal', 'ii->i', [[3, 3]]],
  ['trace-implicit', 'ii', [[4, 4]]],
  ['sum-all', 'ij->', [[3, 4]]],
  ['outer', 'i,j->ij', [[3], [4]]],
  ['ellipsis-broadcast', '...ij,...jk->...ik', [[2, 1, 3, 4], [3, 4, 2]]],
  ['bilinear-3-operands', 'bn,anm,bm->ba', [[2, 3], [4, 3, 5], [2, 5]]],
  ['size-1-broadcast', 'ij,ij->ij', [[1, 4], [3, 4]]],
  ['transpose-implicit-permuted', 'kji', [[2, 3, 4]], ['permuted']],
  ['mm-implicit-strided', 'ij,jk', [[3, 2], [2, 4]], ['strided', 'contiguous']],
];

const EINSUM: OpInfo = {
  name: 'einsum',
  ...kind('composites', NUMERIC, 'accumulated'),
  samples: (dtype, rng) => EINSUM_SAMPLES.map(([name, equation, shapes, layouts]) => ({
    name, inputs: shapes.map((s, k) => input(randomArray(rng, dtype, s), dtype, layouts?.[k])), args: { equation },
  })),
  gradSamples: (dtype, rng) => EINSUM_SAMPLES.filter(([name]) => ['mm', 'diagonal', 'ellipsis-broadcast', 'bilinear-3-operands'].includes(name)).map(([name, equation, shapes]) => ({
    name: `grad-${name}`, inputs: shapes.map((s) => input(randomArray(rng, dtype, s), dtype)), args: { equation },
  })),
  call: (xs, a) => einsum(a.equation, ...xs),
  reference: (xs, a, dtype) => {
    const r = einsumRef(a.equation, xs);
    // Each pairwise product (operands − 1 of them) is rounded to the dtype.
    return withBound(r.value, r.magnitude, dtype, r.length, 2 * xs.length);
  },
};

// ---- pointwise ----

/** Rounding into the dtype ops compute in: float32 below float64 (half types are computed in float32 and rounded once). */
function computeRound(dtype: DTypeName): (v: number) => number {
  return dtype === 'float64' ? (v) => v : Math.fround;
}

const LERP: OpInfo = {
  name: 'lerp',
  ...kind('composites', FLOAT_DTYPES, 'exact'),
  samples: sampled((r, dtype) => {
    const weights = { lo: -0.5, hi: 1.5 };
    return [
      { name: 'scalar-0.3-3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype)], args: { weight: 0.3 } },
      { name: 'scalar-0.75-broadcast-2x3+3', inputs: [input(r([2, 3]), dtype), input(r([3]), dtype)], args: { weight: 0.75 } },
      { name: 'tensor-weight-3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype), input(r([3, 4], weights), dtype)] },
      { name: 'tensor-weight-broadcast-transposed', inputs: [input(r([4, 3]), dtype, 'transposed'), input(r([4, 3]), dtype), input(r([3], weights), dtype)] },
      { name: 'nonfinite', inputs: [input(nd([4], [Infinity, 1, NaN, 0]), dtype), input(nd([4], [1, -Infinity, 2, 1]), dtype)], args: { weight: 0.25 }, numerics: true },
    ];
  }),
  call: ([x, end, w], a) => x!.lerp(end!, w ?? a.weight),
  reference: ([x, end, w], a, dtype) => {
    const c = computeRound(dtype);
    const lerp = (s: number, e: number, weight: number) => {
      const diff = c(e - s);
      return Math.abs(weight) < 0.5 ? c(s + c(diff * weight)) : c(e - c(diff * c(1 - weight)));
    };
    const value = w ? zipWith([x!, end!, w], lerp) : zipWith([x!, end!], (s, e) => lerp(s, e, c(a.weight)));
    return { value: map(value, (v) => roundTo(dtype, v)), dtype };
  },
};

/** addcmul/addcdiv, or their in-place forms (into a copy of the first input). */
function addcInfo(op: 'addcmul' | 'addcdiv', inPlace = false): OpInfo {
  const multiply = op === 'addcmul';
  return {
    name: inPlace ? `${op}_` : op,
    category: 'composites',
    dtypes: multiply ? NUMERIC : FLOAT_DTYPES,
    tolerance: 'exact',
    differentiable: true,
    fused: 'addcmul',
    samples: sampled((r, dtype) => {
      const divisor = multiply ? undefined : NONZERO;
      return [
        { name: 'value-3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype), input(r([3, 4], divisor), dtype)], args: { value: isInt(dtype) ? 3 : 0.5 } },
        { name: `no-value-broadcast-${inPlace ? '2x3' : '1x3'}+2x3+2x1`, inputs: [input(r(inPlace ? [2, 3] : [1, 3]), dtype), input(r([2, 3]), dtype), input(r([2, 1], divisor), dtype)], args: {} },
        { name: 'value-transposed-strided', inputs: [input(r([4, 3]), dtype, 'transposed'), input(r([4, 3]), dtype, 'strided'), input(r([4, 3], divisor), dtype)], args: { value: isInt(dtype) ? -2 : -1.7 } },
        { name: 'long-1000', inputs: [input(r([1000]), dtype), input(r([1000]), dtype), input(r([1000], divisor), dtype)], args: { value: isInt(dtype) ? 5 : 0.1 } },
      ];
    }),
    call: ([x, t1, t2], a) => (inPlace ? x!.clone()[`${op}_`](t1!, t2!, { value: a.value }) : x![op](t1!, t2!, { value: a.value })),
    reference: ([x, t1, t2], a, dtype) => {
      const int = isInt(dtype);
      const c = int ? (v: number) => v | 0 : computeRound(dtype);
      const value = a.value ?? 1;
      const scale = int ? value : scalarAs(dtype, value);
      const out = zipWith([x!, t1!, t2!], (s, b, d) => {
        const p = multiply ? (int ? Math.imul(b, d) : c(b * d)) : c(b / d);
        const scaled = value === 1 ? p : int ? Math.imul(p, scale) : c(p * scale);
        return c(s + scaled);
      });
      return { value: map(out, (v) => roundTo(dtype, v)), dtype };
    },
  };
}

function clampBoundInfo(name: 'clampMin' | 'clampMax'): OpInfo {
  const pick = name === 'clampMin' ? Math.max : Math.min;
  const bound = (dtype: DTypeName) => (isInt(dtype) ? 2 : name === 'clampMin' ? -0.3 : 0.4);
  return {
    name,
    ...kind('composites', NUMERIC, 'exact-any-zero'),
    samples: sampled((r, dtype) => [
      { name: 'scalar-3x4', inputs: [input(r([3, 4]), dtype)], args: { bound: bound(dtype) } },
      { name: 'tensor-bound-broadcast-1x4', inputs: [input(r([3, 4]), dtype), input(r([1, 4]), dtype)] },
      { name: 'transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { bound: bound(dtype) } },
    ]),
    // Values 0.25 or more away from the bound: the gradient jumps there.
    gradSamples: (dtype) => [{ name: 'grad-scalar', inputs: [input(nd([2, 3], [-2, -0.7, 0.1, 0.9, 1.6, -0.05].map((v) => roundTo(dtype, v))), dtype)], args: { bound: 0.35 } }],
    gradInputs: [0],
    call: ([x, b], a) => x![name](b ?? a.bound),
    reference: ([x, b], a, dtype) => {
      const limit = b ?? nd([], [scalarAs(dtype, a.bound)]);
      return { value: zipWith([x!, limit], (v, l) => storeResult(dtype, Number.isNaN(v) ? v : pick(v, l))), dtype };
    },
  };
}

const HYPOT: OpInfo = {
  name: 'hypot',
  ...kind('composites', FLOAT_DTYPES, 'approx'),
  samples: sampled((r, dtype) => {
    const [big, tiny] = dtype === 'float16' ? [3e4, 1e-3] : dtype === 'float64' ? [1e200, 1e-200] : [1e30, 1e-30];
    return [
      { name: '3x4', inputs: [input(r([3, 4]), dtype), input(r([3, 4]), dtype)] },
      { name: 'broadcast-transposed-4x3+3', inputs: [input(r([4, 3]), dtype, 'transposed'), input(r([3]), dtype)] },
      // Squares that overflow or underflow the dtype: the result must not.
      { name: 'large-and-tiny', inputs: [input(nd([3], [big, 3 * tiny, 0].map((v) => roundTo(dtype, v))), dtype), input(nd([3], [big, 4 * tiny, 0].map((v) => roundTo(dtype, v))), dtype)] },
      { name: 'nonfinite', inputs: [input(nd([4], [Infinity, NaN, NaN, -Infinity]), dtype), input(nd([4], [NaN, -Infinity, 1, 2]), dtype)], numerics: true },
    ];
  }),
  gradSamples: sampled((r, dtype) => [{ name: 'grad-3x4', inputs: [input(r([3, 4], NONZERO), dtype), input(r([3, 4], NONZERO), dtype)] }]),
  call: ([x, y]) => x!.hypot(y!),
  reference: ([x, y], _a, dtype) => ({ value: zipWith([x!, y!], (u, v) => storeResult(dtype, Math.hypot(u, v))), dtype }),
};

// ---- indexing ----

const TAKE: OpInfo = {
  name: 'take',
  ...kind('composites', ALL_DTYPES, 'exact'),
  gradInputs: [0],
  samples: sampled((r, dtype) => [
    { name: 'index-2x2-of-3x4', inputs: [input(r([3, 4]), dtype), indexInput([0, -1, 7, -12], [2, 2])] },
    { name: 'transposed-repeats', inputs: [input(r([3, 4]), dtype, 'transposed'), indexInput([5, 5, 2, -3, 11])] },
    { name: '0-dim-index', inputs: [input(r([2, 3]), dtype), indexInput([4], [])] },
    { name: 'empty-index', inputs: [input(r([2, 3]), dtype), indexInput([])] },
    { name: '0-dim-self', inputs: [input(r([]), dtype), indexInput([0, -1])] },
  ]),
  call: ([x, index]) => x!.take(index!),
  reference: ([x, index], _a, dtype) => {
    const n = x!.data.length;
    return { value: map(index!, (i) => x!.data[i < 0 ? i + n : i]!), dtype };
  },
};

const TAKE_ALONG_DIM: OpInfo = {
  name: 'takeAlongDim',
  ...kind('composites', ALL_DTYPES, 'exact'),
  gradInputs: [0],
  samples: sampled((r, dtype, rng) => {
    const positions = (shape: number[], size: number) => input(nd(shape, () => rng.int(0, size)), 'int32');
    return [
      { name: 'dim1-3x4-indices3x2', inputs: [input(r([3, 4]), dtype), positions([3, 2], 4)], args: { dim: 1 } },
      { name: 'broadcast-dim0-3x4-indices2x1', inputs: [input(r([3, 4]), dtype, 'transposed'), positions([2, 1], 3)], args: { dim: 0 } },
      { name: 'broadcast-self-1x4-dim0-indices2x4', inputs: [input(r([1, 4]), dtype), positions([2, 4], 1)], args: { dim: 0 } },
      { name: 'dim-1-permuted-2x3x4-indices1x3x2', inputs: [input(r([2, 3, 4]), dtype, 'permuted'), positions([1, 3, 2], 4)], args: { dim: -1 } },
      { name: 'flattened-3x4', inputs: [input(r([3, 4]), dtype), positions([5], 12)], args: {} },
    ];
  }),
  call: ([x, indices], a) => x!.takeAlongDim(indices!, a.dim),
  reference: ([x, indices], a, dtype) => {
    if (a.dim === undefined) return { value: ref.gather(reshape(x!, [-1]), 0, reshape(indices!, [-1])), dtype };
    const d = axis(a.dim, x!.shape.length);
    const shape = broadcastShapes(x!.shape.map((s, k) => (k === d ? indices!.shape[k]! : s)), indices!.shape);
    const xb = broadcastTo(x!, shape.map((s, k) => (k === d ? x!.shape[k]! : s)));
    return { value: ref.gather(xb, d, broadcastTo(indices!, shape)), dtype };
  },
};

/** The positions along dim d that an index vector names, negatives counted from the end. */
function named(index: NdArray, size: number): number[] {
  return Array.from(index.data, (i) => (i < 0 ? i + size : i));
}

function indexFillInfo(name: 'indexFill' | 'indexFill_'): OpInfo {
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    gradInputs: [0],
    samples: sampled((r, dtype) => [
      { name: 'dim1-3x4', inputs: [input(r([3, 4]), dtype), indexInput([0, -1])], args: { dim: 1, value: fillFor(dtype) } },
      { name: 'dim0-repeats-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed'), indexInput([2, 2, 0])], args: { dim: 0, value: fillFor(dtype) } },
      { name: 'value-tensor-dim-1-2x3', inputs: [input(r([2, 3]), dtype), indexInput([1]), input(r([]), dtype)], args: { dim: -1 } },
      { name: '0-dim-self', inputs: [input(r([]), dtype), indexInput([0])], args: { dim: 0, value: fillFor(dtype) } },
      { name: 'empty-index', inputs: [input(r([2, 3]), dtype), indexInput([])], args: { dim: 0, value: fillFor(dtype) } },
    ]),
    call: ([x, index, value], a) => (name === 'indexFill_' ? x!.clone().indexFill_(a.dim, index!, value ?? a.value) : x!.indexFill(a.dim, index!, value ?? a.value)),
    reference: ([x, index, value], a, dtype) => {
      const rank = x!.shape.length;
      const d = axis(a.dim, rank);
      const hit = named(index!, rank === 0 ? 1 : x!.shape[d]!);
      const fill = value ? value.data[0]! : roundTo(dtype, a.value);
      return { value: generate(x!.shape, (idx) => (hit.includes(rank === 0 ? 0 : idx[d]!) ? fill : at(x!, idx))), dtype };
    },
  };
}

/** x and source as at least 1-D, and index's positions: what indexCopy and indexAdd place. */
function placement(x: NdArray, index: NdArray, source: NdArray, dim: number) {
  const x1 = x.shape.length === 0 ? reshape(x, [1]) : x;
  const s1 = source.shape.length === 0 ? reshape(source, [1]) : source;
  return { x1, s1, d: axis(dim, x.shape.length), positions: Array.from(index.data) };
}

function indexCopyInfo(name: 'indexCopy' | 'indexCopy_'): OpInfo {
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact'),
    gradInputs: [0, 2],
    samples: sampled((r, dtype) => [
      { name: 'dim0-3x4', inputs: [input(r([3, 4]), dtype), indexInput([2, 0]), input(r([2, 4]), dtype)], args: { dim: 0 } },
      { name: 'dim1-transposed-3x4', inputs: [input(r([3, 4]), dtype, 'transposed'), indexInput([3, 1, 0]), input(r([3, 3]), dtype, 'strided')], args: { dim: 1 } },
      { name: '0-dim', inputs: [input(r([]), dtype), indexInput([0]), input(r([]), dtype)], args: { dim: 0 } },
      { name: 'empty-index', inputs: [input(r([3, 4]), dtype), indexInput([]), input(r([0, 4]), dtype)], args: { dim: 0 } },
    ]),
    call: ([x, index, source], a) => (name === 'indexCopy_' ? x!.clone().indexCopy_(a.dim, index!, source!) : x!.indexCopy(a.dim, index!, source!)),
    reference: ([x, index, source], a, dtype) => {
      const { x1, s1, d, positions } = placement(x!, index!, source!, a.dim);
      const out = generate(x1.shape, (idx) => {
        const i = positions.indexOf(idx[d]!);
        return i < 0 ? at(x1, idx) : at(s1, idx.map((v, k) => (k === d ? i : v)));
      });
      return { value: reshape(out, x!.shape), dtype };
    },
  };
}

function indexAddInfo(name: 'indexAdd' | 'indexAdd_'): OpInfo {
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'accumulated'),
    gradInputs: [0, 2],
    samples: sampled((r, dtype) => {
      const alpha = dtype === 'bool' ? undefined : isInt(dtype) ? 2 : 0.5;
      return [
        { name: 'dim0-repeats-alpha-3x4', inputs: [input(r([3, 4]), dtype), indexInput([2, 0, 2]), input(r([3, 4]), dtype)], args: { dim: 0, alpha } },
        { name: 'dim1-transposed-3x4', inputs: [input(r([3, 4]), dtype, 'transposed'), indexInput([1, 3]), input(r([3, 2]), dtype)], args: { dim: 1 } },
        { name: '0-dim', inputs: [input(r([]), dtype), indexInput([0]), input(r([]), dtype)], args: { dim: 0 } },
        { name: 'empty-index', inputs: [input(r([3, 4]), dtype), indexInput([]), input(r([0, 4]), dtype)], args: { dim: 0, alpha } },
      ];
    }),
    call: ([x, index, source], a) => {
      const options = { alpha: a.alpha };
      return name === 'indexAdd_' ? x!.clone().indexAdd_(a.dim, index!, source!, options) : x!.indexAdd(a.dim, index!, source!, options);
    },
    reference: ([x, index, source], a, dtype) => {
      const { x1, s1, d, positions } = placement(x!, index!, source!, a.dim);
      const alpha = a.alpha ?? 1;
      const scaled = alpha === 1 ? s1 : map(s1, (v) => storeResult(dtype, isInt(dtype) ? Math.imul(v, alpha) : v * scalarAs(dtype, alpha)));
      const sum = ref.scatterAdd(x1, d, generate(s1.shape, (idx) => positions[idx[d]!]!), scaled);
      const value = reshape(dtype === 'bool' ? map(sum.value, (v) => (v !== 0 ? 1 : 0)) : sum.value, x!.shape);
      return withBound(value, reshape(sum.magnitude, x!.shape), dtype, sum.length);
    },
  };
}

// ---- like another tensor ----

function likeInfo(name: 'viewAs' | 'reshapeAs'): OpInfo {
  return {
    name,
    ...kind('views', ALL_DTYPES, 'exact'),
    needs: 'storage',
    gradInputs: [0],
    samples: sampled((r, dtype) => {
      const samples: Sample[] = [{ name: '2x6-as-3x4', inputs: [input(r([2, 6]), dtype), input(r([3, 4]), dtype)] }];
      if (name === 'reshapeAs') samples.push({ name: 'transposed-4x3-as-12', inputs: [input(r([4, 3]), dtype, 'transposed'), input(r([12]), dtype)] });
      return samples;
    }),
    call: ([x, other]) => x![name](other!),
    reference: ([x, other], _a, dtype) => ({ value: reshape(x!, other!.shape), dtype }),
  };
}

const TYPE_AS: OpInfo = {
  name: 'typeAs',
  ...kind('composites', ALL_DTYPES, 'exact', false),
  needs: 'storage',
  outDtype: () => 'float32',
  samples: (dtype, rng) => [{ name: 'as-float32-2x3', inputs: [input(randomArray(rng, dtype, [2, 3]), dtype, 'transposed'), input(nd([1], [0]), 'float32')] }],
  call: ([x, other]) => x!.typeAs(other!),
  reference: ([x]) => ({ value: map(x!, (v) => roundTo('float32', v)), dtype: 'float32' }),
};

// ---- factories ----

/** Values of `dtype` for newTensor (integers for int32 and bool). */
function literal(dtype: DTypeName): number[] {
  return dtype === 'bool' ? [0, 1, 1, 0, 1, 0] : isInt(dtype) ? [0, 1, -2, 3, 5, -7] : [0, 1, -2, 0.1, 0.5, -0.25];
}

function newInfo(name: 'newZeros' | 'newOnes' | 'newFull' | 'newEmpty' | 'newTensor'): OpInfo {
  const fill = (dtype: DTypeName) => ({ newZeros: 0, newOnes: 1, newFull: fillFor(dtype), newEmpty: fillFor(dtype), newTensor: NaN })[name];
  return {
    name,
    ...kind('composites', ALL_DTYPES, 'exact', false),
    needs: 'storage',
    samples: (dtype, rng) => [
      { name: 'from-3x4', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)], args: { shape: [2, 3] } },
      { name: 'from-0-dim', inputs: [input(randomArray(rng, dtype, []), dtype)], args: { shape: name === 'newTensor' ? [2, 3] : [0, 2] } },
    ],
    call: ([x], a, ctx) => {
      switch (name) {
        case 'newZeros': return x!.newZeros(a.shape);
        case 'newOnes': return x!.newOnes(a.shape);
        case 'newFull': return x!.newFull(a.shape, fill(ctx.dtype));
        // Uninitialised memory: the fill shows the shape, dtype and device are right.
        case 'newEmpty': return x!.newEmpty(a.shape).fill_(fill(ctx.dtype));
        case 'newTensor': {
          const values = literal(ctx.dtype);
          return x!.newTensor([values.slice(0, 3), values.slice(3)]);
        }
        default: return name satisfies never;
      }
    },
    reference: (_inputs, a, dtype) => ({
      value: name === 'newTensor' ? nd([2, 3], literal(dtype).map((v) => roundTo(dtype, v))) : nd(a.shape, () => roundTo(dtype, fill(dtype))),
      dtype,
    }),
  };
}

const EYE: OpInfo = {
  name: 'eye',
  ...kind('composites', ALL_DTYPES, 'exact', false),
  needs: 'storage',
  samples: () => [
    { name: '3', inputs: [], args: { n: 3 } },
    { name: '2x4', inputs: [], args: { n: 2, m: 4 } },
    { name: '0x2', inputs: [], args: { n: 0, m: 2 } },
  ],
  call: (_inputs, a, ctx) => eye(a.n, a.m, { dtype: dtypeObject(ctx.dtype), device: ctx.device }),
  reference: (_inputs, a, dtype) => ({ value: generate([a.n, a.m ?? a.n], ([i, j]) => (i === j ? 1 : 0)), dtype }),
};

// ---- diagonals ----

/** The diagonal `offset` of dims a and b of x, appended as the last dim. */
function diagonalRef(x: NdArray, offset: number, dim1: number, dim2: number): NdArray {
  const rank = x.shape.length;
  const [a, b] = [axis(dim1, rank), axis(dim2, rank)];
  const length = Math.max(Math.min(x.shape[a]! - Math.max(-offset, 0), x.shape[b]! - Math.max(offset, 0)), 0);
  const rest = x.shape.map((_, k) => k).filter((k) => k !== a && k !== b);
  return generate([...rest.map((k) => x.shape[k]!), length], (idx) => {
    const full = new Array<number>(rank);
    rest.forEach((k, i) => { full[k] = idx[i]!; });
    const t = idx[idx.length - 1]!;
    full[a] = t + Math.max(-offset, 0);
    full[b] = t + Math.max(offset, 0);
    return at(x, full);
  });
}

const DIAGONAL: OpInfo = {
  name: 'diagonal',
  ...kind('views', ALL_DTYPES, 'exact'),
  needs: 'storage',
  samples: sampled((r, dtype) => [
    { name: '3x4', inputs: [input(r([3, 4]), dtype)], args: {} },
    { name: 'offset1-strided-3x4', inputs: [input(r([3, 4]), dtype, 'strided')], args: { offset: 1 } },
    { name: 'offset-1-dims1,2-permuted-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')], args: { offset: -1, dim1: 1, dim2: 2 } },
    { name: 'dims-1,0-offset1-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { offset: 1, dim1: -1, dim2: 0 } },
    { name: 'offset5-empty', inputs: [input(r([3, 4]), dtype)], args: { offset: 5 } },
  ]),
  call: ([x], a) => x!.diagonal(a.offset ?? 0, a.dim1 ?? 0, a.dim2 ?? 1),
  reference: ([x], a, dtype) => ({ value: diagonalRef(x!, a.offset ?? 0, a.dim1 ?? 0, a.dim2 ?? 1), dtype }),
};

const DIAG: OpInfo = {
  name: 'diag',
  ...kind('composites', ALL_DTYPES, 'exact'),
  samples: sampled((r, dtype) => [
    { name: '1d-3', inputs: [input(r([3]), dtype)], args: { diagonal: 0 } },
    { name: '1d-3-diagonal2', inputs: [input(r([3]), dtype)], args: { diagonal: 2 } },
    { name: '1d-strided-2-diagonal-1', inputs: [input(r([2]), dtype, 'strided')], args: { diagonal: -1 } },
    { name: '2d-3x4-diagonal1', inputs: [input(r([3, 4]), dtype)], args: { diagonal: 1 } },
    { name: '2d-transposed-4x3-diagonal-2', inputs: [input(r([4, 3]), dtype, 'transposed')], args: { diagonal: -2 } },
    { name: '1d-empty-diagonal1', inputs: [input(r([0]), dtype)], args: { diagonal: 1 } },
  ]),
  call: ([x], a) => x!.diag(a.diagonal),
  reference: ([x], a, dtype) => {
    const k: number = a.diagonal;
    if (x!.shape.length === 2) return { value: diagonalRef(x!, k, 0, 1), dtype };
    const size = x!.shape[0]! + Math.abs(k);
    return { value: generate([size, size], ([i, j]) => (j! - i! === k ? x!.data[k >= 0 ? i! : j!]! : 0)), dtype };
  },
};

const TRACE: OpInfo = {
  name: 'trace',
  ...kind('composites', ALL_DTYPES, 'accumulated'),
  outDtype: (dtype) => (isFloat(dtype) ? dtype : 'int32'),
  samples: sampled((r, dtype) => [
    { name: '3x3', inputs: [input(r([3, 3]), dtype)] },
    { name: 'transposed-3x5', inputs: [input(r([3, 5]), dtype, 'transposed')] },
    { name: 'empty-0x2', inputs: [input(r([0, 2]), dtype)] },
  ]),
  call: ([x]) => x!.trace(),
  reference: ([x], _a, dtype) => {
    const sum = ref.sum(diagonalRef(x!, 0, 0, 1), null);
    return withBound(sum.value, sum.magnitude, isFloat(dtype) ? dtype : 'int32', sum.length);
  },
};

export const DECOMPOSITION_INFOS: OpInfo[] = [
  maskedFillInfo('maskedFill'), maskedFillInfo('maskedFill_'), maskedScatterInfo('maskedScatter'), maskedScatterInfo('maskedScatter_'), triangleInfo('tril'), triangleInfo('triu'),
  splitInfo('split'), splitInfo('chunk'), splitInfo('unbind'), FLIP, ROLL, repeatInfo('repeat'), repeatInfo('tile'), REPEAT_INTERLEAVE,
  truthInfo('any'), truthInfo('all'), truthInfo('countNonzero'), normInfo('norm'), normInfo('linalg.vectorNorm'), DIST,
  OUTER, addProductInfo('addmm'), addProductInfo('baddbmm'), EINSUM, LERP, addcInfo('addcmul'), addcInfo('addcdiv'), addcInfo('addcmul', true), addcInfo('addcdiv', true),
  clampBoundInfo('clampMin'), clampBoundInfo('clampMax'), HYPOT, TAKE, TAKE_ALONG_DIM,
  indexFillInfo('indexFill'), indexFillInfo('indexFill_'), indexCopyInfo('indexCopy'), indexCopyInfo('indexCopy_'), indexAddInfo('indexAdd'), indexAddInfo('indexAdd_'),
  likeInfo('viewAs'), likeInfo('reshapeAs'), TYPE_AS, newInfo('newZeros'), newInfo('newOnes'), newInfo('newFull'), newInfo('newEmpty'), newInfo('newTensor'),
  EYE, DIAGONAL, DIAG, TRACE,
];
