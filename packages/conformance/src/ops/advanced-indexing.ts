// Table entries for Python's subscripts and the data-dependent ops: index (basic, advanced, masks),
// indexAsync, indexPut / indexPut_, maskedSelect, nonzero, unique and their async forms. The
// oracle here is NumPy's indexing written element by element: every output element's input
// position, with PyTorch's order (integers select first; adjacent advanced indices keep their
// place, separated ones go in front). Ops that read values run their sync form on backends that
// read synchronously; elsewhere the sync form must refuse, naming the async form, which is run.
import { getBackend, stack, TensorError, type Device, type DTypeName, type IndexSpec, type Tensor, type UniqueResult } from '@core/tensor';
import { expectThrows, type Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { ALL_DTYPES, FLOAT_DTYPES, isFloat, roundTo } from '../oracle/dtype.js';
import { at, broadcastShapes, nd, numel, unravel, type NdArray } from '../oracle/ndarray.js';
import type { EagerOnly } from '../cases/compiled.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

type Args = Readonly<Record<string, any>>;
/** A subscript item: an integer, a slice string, '...', null, a 1-D list, or 'index:k' / 'mask:k' for input k. */
type SpecItem = number | string | null | readonly number[];
const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;
const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

// ---- the oracle ----

/** Python's slice of a dim of `size`: start, step and length. */
function pythonSlice(text: string, size: number): { start: number; step: number; length: number } {
  const [a, b, c] = text.split(':').map((s) => (s.trim() === '' ? undefined : Number(s)));
  const clamp = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const step = c ?? 1;
  const start = clamp(a ?? 0);
  const stop = clamp(b ?? size);
  return { start, step, length: Math.max(0, Math.ceil((stop - start) / step)) };
}

/** The row-major coordinates of the true elements of a mask, one list per dim. */
function maskCoordinates(mask: NdArray): number[][] {
  const coords: number[][] = mask.shape.map(() => []);
  for (let i = 0; i < mask.data.length; i++) {
    if (mask.data[i] !== 0) unravel(i, mask.shape).forEach((c, d) => coords[d]!.push(c));
  }
  return coords;
}

/**
 * `x[spec]`: the result and, per output element, the row-major position in x it comes from.
 * Advanced indices are 1-D here (lists, int tensors, masks' coordinates), broadcast to one length.
 */
function subscript(x: NdArray, spec: readonly SpecItem[], inputs: readonly NdArray[]): { value: NdArray; from: number[] } {
  const rank = x.shape.length;
  const tensorOf = (it: SpecItem) => (typeof it === 'string' && /^(index|mask):/.test(it) ? inputs[Number(it.split(':')[1])]! : null);
  const consumed = spec.reduce<number>((n, it) => {
    if (it === null || it === '...') return n;
    return n + (typeof it === 'string' && it.startsWith('mask:') ? tensorOf(it)!.shape.length : 1);
  }, 0);
  type Axis = { dim: number | null; start: number; step: number; length: number };
  const fixed = new Map<number, number>();
  const axes: (Axis | 'advanced')[] = [];
  const advanced: { dim: number; list: number[] }[] = [];
  let d = 0;
  const full = () => ({ dim: d, start: 0, step: 1, length: x.shape[d++]! });
  for (const it of spec) {
    if (typeof it === 'number') {
      fixed.set(d, it < 0 ? it + x.shape[d]! : it);
      d++;
    } else if (it === null) axes.push({ dim: null, start: 0, step: 0, length: 1 });
    else if (it === '...') for (let k = consumed; k < rank; k++) axes.push(full());
    else if (typeof it === 'string' && it.startsWith('mask:')) {
      maskCoordinates(tensorOf(it)!).forEach((list) => advanced.push({ dim: d++, list }));
      axes.push('advanced');
    } else if (typeof it === 'string' && !it.startsWith('index:')) axes.push({ dim: d, ...pythonSlice(it, x.shape[d++]!) });
    else {
      const values = typeof it === 'string' ? Array.from(tensorOf(it)!.data) : [...(it as readonly number[])];
      const size = x.shape[d]!;
      advanced.push({ dim: d++, list: values.map((v) => (v < 0 ? v + size : v)) });
      axes.push('advanced');
    }
  }
  while (d < rank) axes.push(full());
  const marks = axes.flatMap((a, i) => (a === 'advanced' ? [i] : []));
  const adjacent = marks.every((m, j) => m === marks[0]! + j);
  const basic = axes.filter((a): a is Axis => a !== 'advanced');
  const length = advanced.map((a) => a.list.length).find((l) => l !== 1) ?? 1;
  const place = advanced.length === 0 ? -1 : adjacent ? axes.slice(0, marks[0]).length : 0;
  const shape = basic.map((a) => a.length);
  if (place >= 0) shape.splice(place, 0, length);
  const from: number[] = [];
  const value = nd(shape, (flat) => {
    const idx = unravel(flat, shape);
    const b = place >= 0 ? idx.splice(place, 1)[0]! : 0;
    const coord = new Array<number>(rank).fill(0);
    fixed.forEach((v, dim) => { coord[dim] = v; });
    basic.forEach((a, k) => { if (a.dim !== null) coord[a.dim] = a.start + idx[k]! * a.step; });
    for (const a of advanced) coord[a.dim] = a.list.length === 1 ? a.list[0]! : a.list[b]!;
    from.push(coord.reduce((p, c, k) => p * x.shape[k]! + c, 0));
    return at(x, coord);
  });
  return { value, from };
}

/** x with values (broadcast to the result of `x[spec]`) written at its positions, or added with accumulate. */
function indexPutOracle(x: NdArray, values: NdArray, spec: readonly SpecItem[], inputs: readonly NdArray[], accumulate: boolean, dtype: DTypeName): Expected {
  const { value, from } = subscript(x, spec, inputs);
  const out = nd(x.shape, x.data);
  const lead = value.shape.length - values.shape.length;
  from.forEach((p, i) => {
    const idx = unravel(i, value.shape);
    const v = at(values, values.shape.map((s, k) => (s === 1 ? 0 : idx[lead + k]!)));
    out.data[p] = accumulate ? out.data[p]! + v : v;
  });
  return { value: nd(x.shape, (i) => roundTo(dtype, out.data[i]!)), dtype };
}

/** Ascending with NaN last (NaNs tie), −0 equal to 0. */
function ascending(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 0;
  return Number.isNaN(a) ? 1 : -1;
}

/** torch.unique of the elements (dim null) or of the slices along `dim`: output, inverse and counts. */
function uniqueOracle(x: NdArray, dim: number | null): { output: NdArray; inverse: NdArray; counts: NdArray } {
  const shape = dim === null ? [numel(x.shape)] : x.shape;
  const d = dim ?? 0;
  const n = shape[d]!;
  const slices = Array.from({ length: n }, (_, i) => Array.from(x.data).filter((_, p) => unravel(p, shape)[d] === i));
  const order = [...Array(n).keys()].sort((i, j) => slices[i]!.reduce((c, v, e) => c || ascending(v, slices[j]![e]!), 0) || i - j);
  const firsts: number[] = [];
  const counts: number[] = [];
  const inverse = new Array<number>(n);
  order.forEach((i, k) => {
    const prev = order[k - 1];
    if (prev === undefined || !slices[i]!.every((v, e) => v === slices[prev]![e])) {
      firsts.push(i);
      counts.push(0);
    }
    inverse[i] = firsts.length - 1;
    counts[counts.length - 1]!++;
  });
  const outShape = shape.map((s, k) => (k === d ? firsts.length : s));
  const output = nd(outShape, (flat) => {
    const idx = unravel(flat, outShape);
    idx[d] = firsts[idx[d]!]!;
    return x.data[idx.reduce((p, c, k) => p * shape[k]! + c, 0)]!;
  });
  return { output, inverse: nd(dim === null ? x.shape : [n], inverse), counts: nd([counts.length], counts) };
}

// ---- calls ----

/** A spec with 'index:k' / 'mask:k' replaced by the input tensors. */
function specOf(spec: readonly SpecItem[], tensors: readonly Tensor[]): IndexSpec {
  return spec.map((it) => (typeof it === 'string' && /^(index|mask):/.test(it) ? tensors[Number(it.split(':')[1])]! : it)) as IndexSpec;
}

/**
 * The sync form where the device reads synchronously; elsewhere the sync form must refuse with a
 * TensorError naming the async form, which then gives the result.
 */
export async function syncOrAsync(device: Device, sync: () => Tensor, later: () => Promise<Tensor>, asyncForm: string): Promise<Tensor> {
  if (getBackend(device.type).capabilities.syncRead) return sync();
  expectThrows(`the sync form on ${device}`, sync, TensorError, asyncForm);
  return later();
}

// ---- samples ----

function basicSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const x = (layout: Layout = 'contiguous') => input(randomArray(rng, dtype, [3, 4, 5]), dtype, layout);
  return [
    { name: 'int-slice-step', inputs: [x()], args: { spec: [1, ':', '::2'] } },
    { name: 'ellipsis-negative', inputs: [x('transposed')], args: { spec: ['...', -1] } },
    { name: 'none-slice-int-none', inputs: [x('permuted')], args: { spec: [null, '1:', 2, null] } },
    { name: 'negative-bounds', inputs: [x('strided')], args: { spec: [':', '-3:-1', '...'] } },
    { name: 'clamped-and-empty', inputs: [x()], args: { spec: ['1:10', '4:', '3:3'] } },
    { name: 'empty-spec', inputs: [x('transposed')], args: { spec: [] } },
  ];
}

function advancedSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const x = (layout: Layout = 'contiguous') => input(randomArray(rng, dtype, [3, 4, 5]), dtype, layout);
  return [
    { name: 'one-list-repeats', inputs: [x()], args: { spec: [':', [2, 0, 2, -1]] } },
    { name: 'separated-go-first', inputs: [x('transposed')], args: { spec: [[1, -1], ':', [0, 4]] } },
    { name: 'adjacent-stay', inputs: [x()], args: { spec: [':', [0, 2], [1, 3]] } },
    { name: 'int-selects-first', inputs: [x('permuted')], args: { spec: [0, ':', [1, -2]] } },
    { name: 'broadcast-1-and-3', inputs: [x()], args: { spec: [[2], '...', [0, 1, 4]] } },
    { name: 'int32-tensor', inputs: [x('strided'), input(nd([4], [2, 0, 1, 0]), 'int32')], args: { spec: ['index:1', '1:'] } },
    { name: 'empty-list', inputs: [x()], args: { spec: [':', [], 1] } },
  ];
}

function maskSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const x = (layout: Layout = 'contiguous') => input(randomArray(rng, dtype, [3, 4, 5]), dtype, layout);
  const mask = (shape: number[]) => input(randomArray(rng, 'bool', shape), 'bool');
  return [
    { name: 'mask-dim1', inputs: [x(), mask([4])], args: { spec: [':', 'mask:1'] } },
    { name: 'mask-two-dims', inputs: [x('transposed'), mask([3, 4])], args: { spec: ['mask:1'] } },
    { name: 'mask-and-list', inputs: [x(), input(nd([3], [1, 0, 1]), 'bool')], args: { spec: ['mask:1', [0, 3]] } },
    { name: 'mask-all-dims', inputs: [x('permuted'), mask([3, 4, 5])], args: { spec: ['mask:1'] } },
  ];
}

/** A value of every dtype's own kind, with many zeros. */
function sparse(rng: Rng, dtype: DTypeName, shape: number[]): NdArray {
  const values = randomArray(rng, dtype, shape);
  return nd(shape, (i) => (rng.next() < 0.5 ? 0 : values.data[i]!));
}

/** Values from a pool of a few, so that unique finds repeats. */
function repeats(rng: Rng, dtype: DTypeName, shape: number[]): NdArray {
  const pool = randomArray(rng, dtype, [3]).data;
  return nd(shape, () => pool[rng.int(0, 3)]!);
}

const maskedSelectSamples = (dtype: DTypeName, rng: Rng): Sample[] => [
  { name: 'same-shape', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype, 'transposed'), input(randomArray(rng, 'bool', [3, 4]), 'bool')], args: {} },
  { name: 'mask-broadcast', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype), input(randomArray(rng, 'bool', [4]), 'bool')], args: {} },
  { name: 'self-broadcast', inputs: [input(randomArray(rng, dtype, [3, 1]), dtype), input(randomArray(rng, 'bool', [3, 4]), 'bool')], args: {} },
];

const selectMasked = (x: NdArray, mask: NdArray, dtype: DTypeName): Expected => {
  const shape = broadcastShapes(x.shape, mask.shape);
  const full = (a: NdArray, i: number) => {
    const idx = unravel(i, shape);
    return at(a, a.shape.map((s, k) => (s === 1 ? 0 : idx[shape.length - a.shape.length + k]!)));
  };
  const picked = [...Array(numel(shape)).keys()].filter((i) => full(mask, i) !== 0).map((i) => full(x, i));
  return { value: nd([picked.length], picked), dtype };
};

function nonzeroSamples(dtype: DTypeName, rng: Rng): Sample[] {
  return [
    { name: 'sparse-3x4', inputs: [input(sparse(rng, dtype, [3, 4]), dtype, 'transposed')], args: {} },
    { name: 'sparse-2x3x2', inputs: [input(sparse(rng, dtype, [2, 3, 2]), dtype, 'permuted')], args: {} },
    { name: '0-dim', inputs: [input(nd([], [1]), dtype)], args: {} },
    { name: 'all-zero', inputs: [input(nd([2, 2]), dtype)], args: {} },
    ...(isFloat(dtype) ? [{ name: 'nan-is-nonzero', inputs: [input(nd([4], [0, NaN, -0, 1]), dtype)], args: {}, numerics: true }] : []),
  ];
}

const nonzeroOracle = (x: NdArray): NdArray => {
  const coords = maskCoordinates(x.shape.length === 0 ? nd([1], x.data) : x);
  const n = coords[0]!.length;
  const rank = x.shape.length;
  return nd([n, rank], (i) => coords[i % rank]![Math.floor(i / rank)]!);
};

function uniqueSamples(dtype: DTypeName, rng: Rng): Sample[] {
  return [
    { name: 'repeats-3x4', inputs: [input(repeats(rng, dtype, [3, 4]), dtype, 'transposed')], args: {} },
    { name: 'random-7', inputs: [input(randomArray(rng, dtype, [7]), dtype)], args: {} },
    { name: '0-dim', inputs: [input(randomArray(rng, dtype, []), dtype)], args: {} },
    ...(isFloat(dtype) ? [{ name: 'nan-each-its-own', inputs: [input(nd([5], [NaN, 1, NaN, -0, 0]), dtype)], args: {}, numerics: true }] : []),
  ];
}

// ---- entries ----

const INDEX_BASIC: OpInfo = {
  name: 'index(basic)',
  category: 'views',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: true,
  samples: basicSamples,
  call: ([x], a) => x!.index(a.spec),
  reference: ([x], a, dtype) => ({ value: subscript(x!, a.spec, []).value, dtype }),
};

const INDEX_ADVANCED: OpInfo = {
  name: 'index(advanced)',
  category: 'composites',
  dtypes: ALL_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  gradInputs: [0],
  samples: advancedSamples,
  call: (xs, a) => xs[0]!.index(specOf(a.spec, xs)),
  reference: (xs, a, dtype) => ({ value: subscript(xs[0]!, a.spec, xs).value, dtype }),
};

/** What compile() must refuse in the data-dependent ops: the result's shape is read on the host. */
const DATA_DEPENDENT: EagerOnly = {
  code: 'COMPILE_HOST_READ',
  reason: "the result's shape depends on the input's values, which are read on the host",
};

function maskIndexInfo(form: 'index' | 'indexAsync'): OpInfo {
  return {
    name: `${form}(mask)`,
    eagerOnly: DATA_DEPENDENT,
    category: 'composites',
    dtypes: ALL_DTYPES,
    tolerance: 'exact',
    differentiable: true,
    gradInputs: [0],
    samples: maskSamples,
    call: (xs, a) => xs[0]!.index(specOf(a.spec, xs)),
    callAsync: (xs, a, ctx) => (form === 'indexAsync'
      ? xs[0]!.indexAsync(specOf(a.spec, xs))
      : syncOrAsync(ctx.device, () => xs[0]!.index(specOf(a.spec, xs)), () => xs[0]!.indexAsync(specOf(a.spec, xs)), 'indexAsync')),
    reference: (xs, a, dtype) => ({ value: subscript(xs[0]!, a.spec, xs).value, dtype }),
  };
}

function indexPutSamples(dtype: DTypeName, rng: Rng): Sample[] {
  const x = (layout: Layout = 'contiguous') => input(randomArray(rng, dtype, [3, 4]), dtype, layout);
  const v = (shape: number[]) => input(randomArray(rng, dtype, shape), dtype);
  return [
    { name: 'basic-row', inputs: [x('transposed'), v([4])], args: { spec: [1] } },
    { name: 'basic-broadcast', inputs: [x(), v([1])], args: { spec: [':', '::2'] } },
    { name: 'repeats-last-wins', inputs: [x(), v([3])], args: { spec: [[0, 2, 0], [1, 1, 1]] } },
    { name: 'repeats-accumulate', inputs: [x('strided'), v([3])], args: { spec: [[0, 2, 0], [1, 1, 1]], accumulate: true } },
    { name: 'separated-accumulate', inputs: [x(), v([2, 1])], args: { spec: [[2, -1], '1:3'], accumulate: true } },
    { name: 'mask-one-value', inputs: [x(), v([1]), input(randomArray(rng, 'bool', [3, 4]), 'bool')], args: { spec: ['mask:2'] } },
    { name: 'mask-rows-accumulate', inputs: [x('transposed'), v([1, 4]), input(nd([3], [1, 0, 1]), 'bool')], args: { spec: ['mask:2'], accumulate: true } },
  ];
}

function indexPutInfo(name: 'indexPut' | 'indexPut_'): OpInfo {
  return {
    name,
    category: 'composites',
    dtypes: NUMERIC,
    // Accumulated repeats are summed exactly by the oracle and rounded once; a backend may round per addition.
    tolerance: 'accumulated',
    differentiable: true,
    gradInputs: [0, 1],
    samples: indexPutSamples,
    call: (xs, a) => {
      const spec = specOf(a.spec, xs);
      const accumulate = a.accumulate ?? false;
      return name === 'indexPut' ? xs[0]!.indexPut(spec, xs[1]!, accumulate) : xs[0]!.clone().indexPut_(spec, xs[1]!, accumulate);
    },
    reference: (xs, a, dtype) => indexPutOracle(xs[0]!, xs[1]!, a.spec, xs, a.accumulate ?? false, dtype),
  };
}

function maskedSelectInfo(form: 'maskedSelect' | 'maskedSelectAsync'): OpInfo {
  return {
    name: form,
    eagerOnly: DATA_DEPENDENT,
    category: 'composites',
    dtypes: ALL_DTYPES,
    tolerance: 'exact',
    differentiable: true,
    gradInputs: [0],
    samples: maskedSelectSamples,
    call: ([x, m]) => x!.maskedSelect(m!),
    callAsync: ([x, m], _a, ctx) => (form === 'maskedSelectAsync' ? x!.maskedSelectAsync(m!) : syncOrAsync(ctx.device, () => x!.maskedSelect(m!), () => x!.maskedSelectAsync(m!), 'maskedSelectAsync')),
    reference: ([x, m], _a, dtype) => selectMasked(x!, m!, dtype),
  };
}

function nonzeroInfo(form: 'nonzero' | 'nonzeroAsync', asTuple: boolean): OpInfo {
  const sync = (x: Tensor) => (asTuple ? stack(x.nonzero({ asTuple: true }), 0) : x.nonzero());
  const later = async (x: Tensor) => (asTuple ? stack(await x.nonzeroAsync({ asTuple: true }), 0) : x.nonzeroAsync());
  return {
    name: `${form}${asTuple ? '(asTuple)' : ''}`,
    eagerOnly: DATA_DEPENDENT,
    category: 'composites',
    dtypes: ALL_DTYPES,
    outDtype: () => 'int32',
    tolerance: 'exact',
    differentiable: false,
    samples: nonzeroSamples,
    call: ([x]) => sync(x!),
    callAsync: ([x], _a, ctx) => (form === 'nonzeroAsync' ? later(x!) : syncOrAsync(ctx.device, () => sync(x!), () => later(x!), 'nonzeroAsync')),
    reference: ([x]) => {
      const rows = nonzeroOracle(x!);
      const rank = Math.max(x!.shape.length, 1);
      const n = rows.shape[0]!;
      return { value: asTuple ? nd([rank, n], (i) => (x!.shape.length === 0 ? 0 : rows.data[(i % n) * rank + Math.floor(i / n)]!)) : rows, dtype: 'int32' };
    },
  };
}

function uniqueInfo(form: 'unique' | 'uniqueAsync', part: 'output' | 'inverseIndices' | 'counts', dim: number | null): OpInfo {
  const options = { returnInverse: part === 'inverseIndices', returnCounts: part === 'counts', dim };
  const pick = (r: Tensor | UniqueResult) => ('output' in r ? r[part] : r);
  return {
    name: `${form}${part === 'output' ? '' : `(${part})`}${dim === null ? '' : `(dim=${dim})`}`,
    eagerOnly: DATA_DEPENDENT,
    category: 'composites',
    dtypes: ALL_DTYPES,
    ...(part === 'output' ? {} : { outDtype: () => 'int32' as const }),
    tolerance: 'exact',
    differentiable: false,
    samples: (dtype, rng) => (dim === null ? uniqueSamples(dtype, rng) : [
      { name: 'repeated-columns-2x5', inputs: [input(nd([2, 5], [1, 2, 1, 0, 2, 3, 0, 3, 1, 0].map((v) => roundTo(dtype, v))), dtype, 'transposed')], args: {} },
      { name: 'random-3x4', inputs: [input(repeats(rng, dtype, [3, 4]), dtype)], args: {} },
    ]),
    call: ([x]) => pick(x!.unique(options)),
    callAsync: async ([x], _a, ctx) => pick(form === 'uniqueAsync'
      ? await x!.uniqueAsync(options)
      : await syncOrAsync(ctx.device, () => pick(x!.unique(options)), async () => pick(await x!.uniqueAsync(options)), 'uniqueAsync')),
    reference: ([x], _a, dtype) => {
      const r = uniqueOracle(x!, dim);
      return part === 'output' ? { value: r.output, dtype } : { value: part === 'counts' ? r.counts : r.inverse, dtype: 'int32' };
    },
  };
}

export const ADVANCED_INDEXING_INFOS: OpInfo[] = [
  INDEX_BASIC, INDEX_ADVANCED, maskIndexInfo('index'), maskIndexInfo('indexAsync'), indexPutInfo('indexPut'), indexPutInfo('indexPut_'),
  maskedSelectInfo('maskedSelect'), maskedSelectInfo('maskedSelectAsync'),
  nonzeroInfo('nonzero', false), nonzeroInfo('nonzero', true), nonzeroInfo('nonzeroAsync', false),
  uniqueInfo('unique', 'output', null), uniqueInfo('unique', 'inverseIndices', null), uniqueInfo('unique', 'counts', null), uniqueInfo('unique', 'output', 1),
  uniqueInfo('unique', 'inverseIndices', 1), uniqueInfo('uniqueAsync', 'output', null),
];
