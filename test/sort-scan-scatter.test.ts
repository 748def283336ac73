// sort / argsort / msort / topk, cumsum / cumprod and scatter / scatter_ / scatterReduce on the cpu
// backend: values against references written out here (PyTorch's results for the same inputs),
// gradients by gradcheck in float64, PyTorch's argument binding and error texts, the autocast class
// (AC-10) on an emulated cuda device, and the error on a backend without the 1.3.0 kernels.
import '@core/backend-cpu';
import { createCpuBackend, CpuKernels } from '@core/backend-cpu';
import {
  autocast, bfloat16, bool, cumprod, cumsum, DTypeError, float16, float32, float64, gradcheck, int32, msort, randn, registerBackend,
  roundToFloat16, scatter, scatterReduce, ShapeError, sort, tensor, TensorError, topk, ValueError, type Tensor,
} from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFakeBackend } from './helpers/fake-backend.js';
import { expectClose, expectError } from './helpers/assert.js';
import { prng } from './helpers/random.js';

const vals = (t: Tensor): number[] => Array.from(t.dataSync());
const idx = (values: number[], shape = [values.length]) => tensor(values, { dtype: int32 }).reshape(shape);
const f64 = (values: number[], shape = [values.length]) => tensor(values, { dtype: float64 }).reshape(shape).requiresGrad_();

/** gradcheck in float64 (central differences), failing with the mismatch it found. */
function expectGradcheck(fn: (...xs: Tensor[]) => Tensor, inputs: Tensor[]): void {
  const r = gradcheck(fn, inputs);
  expect(r.ok, r.mismatch).toBe(true);
}

beforeAll(() => {
  registerBackend({ name: 'cuda', priority: 10, create: () => createFakeBackend({ name: 'cuda' }) });
});

describe('sort, argsort, msort', () => {
  const x = () => tensor([[3, NaN, 1, 2, 1], [0, -0, 5, -1, 5]]);

  it('sorts the last dim ascending by default: NaN is the largest, ties keep their order', () => {
    // torch.tensor([[3, nan, 1, 2, 1], [0, -0., 5, -1, 5]]).sort(stable=True)
    const { values, indices } = x().sort();
    expect(vals(values)).toEqual([1, 1, 2, 3, NaN, -1, 0, -0, 5, 5]);
    expect(Object.is(vals(values)[7], -0)).toBe(true);
    expect(vals(indices)).toEqual([2, 4, 3, 0, 1, 3, 0, 1, 2, 4]);
    expect(indices.dtype).toBe(int32);
  });

  it('descending puts NaN first and still keeps equal elements in their order (stable)', () => {
    // .sort(dim=1, descending=True, stable=True)
    const [values, indices] = x().sort(1, true);
    expect(vals(values)).toEqual([NaN, 3, 2, 1, 1, 5, 5, 0, -0, -1]);
    expect(vals(indices)).toEqual([1, 0, 3, 2, 4, 2, 4, 0, 1, 3]);
  });

  it('returns a named tuple: by name, by position, by index', () => {
    const r = tensor([2, 1]).sort();
    const [v, i] = r;
    expect(r.length).toBe(2);
    expect(r[0]).toBe(r.values);
    expect(r[1]).toBe(r.indices);
    expect(v).toBe(r.values);
    expect(i).toBe(r.indices);
    expect(Object.isFrozen(r)).toBe(true);
  });

  it('sorts along any dim of a non-contiguous view, leaving the input unchanged', () => {
    const base = tensor([[4, 1, 3], [2, 5, 0]]);
    const t = base.t(); // [[4, 2], [1, 5], [3, 0]]
    expect(vals(t.sort(0).values)).toEqual([1, 0, 3, 2, 4, 5]);
    expect(vals(t.sort(0).indices)).toEqual([1, 2, 2, 0, 0, 1]);
    expect(vals(base)).toEqual([4, 1, 3, 2, 5, 0]);
  });

  it('sorts int32, bool and float16 (compared as their values)', () => {
    expect(vals(tensor([3, -7, 2147483647, -2147483648], { dtype: int32 }).sort().values)).toEqual([-2147483648, -7, 3, 2147483647]);
    expect(vals(tensor([true, false, true, false]).sort().indices)).toEqual([1, 3, 0, 2]);
    const h = tensor([0.1, -65504, 65504, 0.2], { dtype: float16 }).sort(0, true);
    expect(h.values.dtype).toBe(float16);
    expect(vals(h.values)).toEqual([65504, roundToFloat16(0.2), roundToFloat16(0.1), -65504]);
  });

  it('0-dim and empty tensors', () => {
    const s = tensor(7).sort();
    expect(s.values.shape).toEqual([]);
    expect(vals(s.values)).toEqual([7]);
    expect(vals(s.indices)).toEqual([0]);
    expect(tensor([]).reshape([0, 3]).sort(0).values.shape).toEqual([0, 3]);
  });

  it('argsort and msort are the indices and the dim-0 values; the function forms match the methods', () => {
    const t = tensor([[2, 9], [1, 8], [3, 7]]);
    expect(vals(t.argsort(0))).toEqual([1, 2, 0, 1, 2, 0]);
    expect(vals(t.argsort({ dim: 0, descending: true }))).toEqual([2, 0, 0, 1, 1, 2]);
    expect(vals(t.msort())).toEqual([1, 7, 2, 8, 3, 9]);
    expect(vals(msort(t))).toEqual(vals(t.msort()));
    expect(vals(sort(t, 0, true).values)).toEqual(vals(t.sort(0, true).values));
  });

  it('binds arguments as Python does and names a bad one', () => {
    const t = tensor([[1, 3], [2, 0]]);
    expect(vals(t.sort({ descending: true }).values)).toEqual([3, 1, 2, 0]);
    expect(vals(t.sort(0, { descending: true, stable: true }).values)).toEqual([2, 3, 1, 0]);
    expectError(() => t.sort(0, { dim: 1 } as never), TypeError, "sort() got multiple values for argument 'dim'");
    expectError(() => t.sort({ reverse: true } as never), TypeError, "sort() got an unexpected keyword argument 'reverse'");
    expectError(() => t.sort(0, 'yes' as never), TypeError, "sort(): argument 'descending' must be a boolean");
    expectError(() => t.sort(0, true, 1 as never), TypeError, 'sort() takes at most 2 positional arguments (dim, descending) but 3 were given');
    expectError(() => t.sort(2), ShapeError, 'Dimension out of range');
  });

  it('values carry the gradient back through the indices (gradcheck)', () => {
    // Distinct values: sort is linear around them.
    expectGradcheck((a) => a.sort(1, true).values, [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4], [2, 3])]);
    expectGradcheck((a) => a.sort(0).values.mul(a.sort(0).values), [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4], [3, 2])]);
    const a = tensor([1, 3, 2], { requiresGrad: true });
    a.sort(0, true).values.mul(tensor([1, 10, 100])).sum().backward();
    expect(vals(a.grad!)).toEqual([100, 1, 10]);
  });
});

describe('topk', () => {
  it('takes the k largest along the last dim, sorted, with their indices; ties keep the lower index first', () => {
    // torch.tensor([[1, 5, 3, 5], [2, 2, 9, 0]]).topk(2)
    const [values, indices] = tensor([[1, 5, 3, 5], [2, 2, 9, 0]]).topk(2);
    expect(vals(values)).toEqual([5, 5, 9, 2]);
    expect(vals(indices)).toEqual([1, 3, 2, 0]);
  });

  it('largest: false gives the smallest; dim and k = 0 or the full size work', () => {
    const t = tensor([[4, 1], [2, 3], [0, 5]]);
    expect(vals(t.topk(2, 0, false).values)).toEqual([0, 1, 2, 3]);
    expect(vals(t.topk(2, { dim: 0, largest: false }).indices)).toEqual([2, 0, 1, 1]);
    expect(t.topk(0).values.shape).toEqual([3, 0]);
    expect(vals(t.topk(3, 0).values)).toEqual([4, 5, 2, 3, 0, 1]);
    expect(vals(topk(t, 1, 0).values)).toEqual([4, 5]);
  });

  it('NaN counts as the largest value', () => {
    expect(vals(tensor([1, NaN, 3]).topk(2).values)).toEqual([NaN, 3]);
    expect(vals(tensor([1, NaN, 3]).topk(2, -1, false).values)).toEqual([1, 3]);
  });

  it('k above the size is "selected index k out of range" (a ValueError); k is required', () => {
    const t = tensor([[1, 2, 3]]);
    expectError(() => t.topk(4), ValueError, 'selected index k out of range');
    expectError(() => t.topk(-1), ValueError, 'selected index k out of range');
    expectError(() => t.topk(2, 0), ValueError, 'selected index k out of range');
    expectError(() => (t.topk as (...a: unknown[]) => unknown)(), TypeError, "topk() missing required argument 'k'");
    expectError(() => t.topk(1.5), TypeError, "topk(): argument 'k' must be an integer");
  });

  it('values carry the gradient back to the picked elements (gradcheck)', () => {
    expectGradcheck((a) => a.topk(2, 1).values, [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4, 1.1, 0.2], [2, 4])]);
  });
});

describe('cumsum, cumprod', () => {
  it('running sums and products along a dim, of a non-contiguous view', () => {
    const t = tensor([[1, 2, 3], [4, 5, 6]]);
    expect(vals(t.cumsum(1))).toEqual([1, 3, 6, 4, 9, 15]);
    expect(vals(t.cumsum(0))).toEqual([1, 2, 3, 5, 7, 9]);
    expect(vals(t.t().cumprod(1))).toEqual([1, 4, 2, 10, 3, 18]);
    expect(vals(cumsum(t, -1))).toEqual(vals(t.cumsum(1)));
    expect(vals(cumprod(t, 0))).toEqual([1, 2, 3, 4, 10, 18]);
  });

  it('integers and bools give int32 (PyTorch: int64); int32 products wrap', () => {
    const b = tensor([true, false, true, true]).cumsum(0);
    expect(b.dtype).toBe(int32);
    expect(vals(b)).toEqual([1, 1, 2, 3]);
    const p = tensor([65536, 65536, 3], { dtype: int32 }).cumprod(0);
    expect(vals(p)).toEqual([65536, 0, 0]);
  });

  it('dtype casts the input first; 0-dim and empty inputs', () => {
    const s = tensor([1, 2, 3], { dtype: int32 }).cumsum(0, { dtype: float64 });
    expect(s.dtype).toBe(float64);
    expect(vals(s)).toEqual([1, 3, 6]);
    expect(vals(tensor(5).cumsum(0))).toEqual([5]);
    expect(tensor(5).cumprod(-1).shape).toEqual([]);
    expect(tensor([]).cumsum(0).shape).toEqual([0]);
    expectError(() => tensor([1]).cumsum(0, { dtype: 'float64' as never }), TypeError, "cumsum(): argument 'dtype' must be a DType");
    expectError(() => (tensor([1]).cumsum as (...a: unknown[]) => unknown)(), TypeError, "cumsum() missing required argument 'dim'");
  });

  it('float16 accumulates in float32 and rounds each output once', () => {
    // 4096 halves of 1 + 2^-10: a half accumulator would stop growing at 2048; f32 keeps every step.
    const step = 1 + 2 ** -10;
    const out = vals(tensor(new Array(4096).fill(step), { dtype: float16 }).cumsum(0));
    let acc = 0;
    const expected = Array.from({ length: 4096 }, () => roundToFloat16((acc = Math.fround(acc + step))));
    expect(out).toEqual(expected);
  });

  it('gradients: cumsum (gradcheck), cumprod without zeros and with one or more zeros (exact, gradcheck)', () => {
    expectGradcheck((a) => a.cumsum(1), [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4], [2, 3])]);
    expectGradcheck((a) => a.t().cumsum(0).mul(a.t()), [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4], [3, 2])]);
    expectGradcheck((a) => a.cumprod(1), [f64([0.3, -1.2, 2.5, 0.7, 1.9, -0.4], [2, 3])]);
    expectGradcheck((a) => a.cumprod(0), [f64([1.5, 0, -0.7, 2, 0, 3, 0.5], [7])]);
    expectGradcheck((a) => a.cumprod(1), [f64([0, 1.1, 2, 0.4, 0, 0, 3, 0.5], [2, 4])]);
    // [2, 0, 3, 0, 5].cumprod(0).sum().backward(): the first zero gets 2 + 2·3, every later element 0.
    const h = tensor([2, 0, 3, 0, 5], { requiresGrad: true });
    h.cumprod(0).sum().backward();
    expect(vals(h.grad!)).toEqual([1, 8, 0, 0, 0]);
  });

  it('AC-10: in a cuda autocast region cumsum and cumprod run in float32 unless a dtype is given; cpu regions leave them alone', async () => {
    const h = randn([2, 3], { dtype: float16 }).to('cuda');
    autocast({ deviceType: 'cuda' }, () => {
      expect(h.cumsum(1).dtype).toBe(float32);
      expect(h.cumprod(0).dtype).toBe(float32);
      expect(h.cumsum(1, { dtype: float16 }).dtype).toBe(float16);
    });
    const b = randn([3], { dtype: bfloat16 });
    expect(autocast({ deviceType: 'cpu' }, () => b.cumsum(0)).dtype).toBe(bfloat16);
    const inRegion = autocast({ deviceType: 'cuda' }, () => h.cumsum(1));
    expect(await inRegion.toArray()).toEqual(await h.float().cumsum(1).toArray());
  });
});

describe('scatter, scatter_', () => {
  const zeros23 = () => tensor([[0, 0, 0], [0, 0, 0]]);

  it('writes src at index along dim; a repeated index keeps the last value', () => {
    // Deterministic here: PyTorch leaves the winner among repeated indices unspecified.
    const out = zeros23().scatter(1, idx([0, 0, 2, 1, 1, 1], [2, 3]), tensor([[1, 2, 3], [4, 5, 6]]));
    expect(vals(out)).toEqual([2, 0, 3, 0, 6, 0]);
    expect(vals(tensor([[1, 2], [3, 4]]).scatter(0, idx([1, 0], [1, 2]), tensor([[9, 8]])))).toEqual([1, 8, 9, 4]);
  });

  it('a value instead of src, positional or by name; reduce adds or multiplies', () => {
    const i = idx([0, 0, 2, 1, 1, 1], [2, 3]);
    expect(vals(zeros23().scatter(1, i, 7))).toEqual([7, 0, 7, 0, 7, 0]);
    expect(vals(zeros23().scatter(1, i, { value: 7 }))).toEqual([7, 0, 7, 0, 7, 0]);
    expect(vals(zeros23().scatter(1, i, 7, { reduce: 'add' }))).toEqual([14, 0, 7, 0, 21, 0]);
    expect(vals(tensor([[1, 2, 3], [1, 2, 3]]).scatter(1, i, tensor([[2, 3, 4], [5, 6, 7]]), { reduce: 'multiply' }))).toEqual([6, 2, 12, 1, 420, 3]);
    expect(vals(scatter(zeros23(), 1, i, { src: tensor([[1, 2, 3], [4, 5, 6]]) }))).toEqual([2, 0, 3, 0, 6, 0]);
  });

  it('an index out of range is an error and nothing is written; dtype and shape rules as PyTorch', () => {
    const x = tensor([[1, 2], [3, 4]]);
    expectError(() => x.scatter(1, idx([0, 2], [1, 2]), tensor([[5, 6]])), ShapeError, 'index 2 is out of bounds for dimension 1 with size 2');
    expectError(() => x.scatter_(0, idx([-1, 0], [1, 2]), 9), ShapeError, 'index -1 is out of bounds');
    expect(vals(x)).toEqual([1, 2, 3, 4]);
    expectError(() => x.scatter(0, idx([0, 1], [1, 2]), tensor([[1, 2]], { dtype: int32 })), DTypeError, 'Expected self.dtype to be equal to src.dtype');
    expectError(() => x.scatter(0, tensor([[0, 1]]), 1), DTypeError, 'Expected dtype int32 for index');
    expectError(() => x.scatter(0, idx([0, 1]), 1), ShapeError, 'Index tensor must have the same number of dimensions');
    expectError(() => x.scatter(0, idx([0, 1], [1, 2]), 1, { reduce: 'max' as never }), ValueError, 'reduce argument must be either add or multiply');
    expectError(() => x.scatter(0, idx([0, 1], [1, 2]), { src: tensor([[1, 2]]), value: 3 }), TypeError, "got both 'src' and 'value'");
    expectError(() => x.scatter(0, idx([0, 1], [1, 2]), {}), TypeError, "missing required argument 'src'");
  });

  it('scatter_ writes in place and returns this; a bool tensor takes a value as true/false', () => {
    const x = tensor([[1, 2], [3, 4]]);
    expect(x.scatter_(1, idx([1, 0], [2, 1]), 0)).toBe(x);
    expect(vals(x)).toEqual([1, 0, 0, 4]);
    expect(vals(tensor([false, false, false]).scatter(0, idx([2]), 5))).toEqual([0, 0, 1]);
    expect(tensor([false, false]).scatter(0, idx([1]), 1).dtype).toBe(bool);
  });

  it('gradients: self gets g where nothing was written, src gets g at the positions it was written to (gradcheck, repeated indices too)', () => {
    const i = idx([0, 0, 2, 1, 1, 1], [2, 3]);
    expectGradcheck((a, s) => a.scatter(1, i, s), [f64([1, 2, 3, 4, 5, 6], [2, 3]), f64([0.5, 0.6, 0.7, 0.8, 0.9, 1.1], [2, 3])]);
    expectGradcheck((a) => a.scatter(1, i, 2.5), [f64([1, 2, 3, 4, 5, 6], [2, 3])]);
    expectGradcheck((a, s) => a.scatter(1, i, s, { reduce: 'multiply' }), [f64([1, 2, 3, 4, 5, 6], [2, 3]), f64([0.5, 0.6, 0.7, 0.8, 0.9, 1.1], [2, 3])]);
    expectGradcheck((a, s) => a.mul(1).scatter_(1, i, s, { reduce: 'add' }), [f64([1, 2, 3, 4, 5, 6], [2, 3]), f64([0.5, 0.6, 0.7, 0.8, 0.9, 1.1], [2, 3])]);
  });
});

describe('scatterReduce', () => {
  const x = () => tensor([1, 2, 3, 4]);
  const i = idx([0, 0, 1, 1, 3]);
  const s = () => tensor([5, 6, 7, 8, 9]);

  it('every reduction with includeSelf true and false (PyTorch 1.13 values)', () => {
    // torch.tensor([1., 2, 3, 4]).scatter_reduce(0, torch.tensor([0, 0, 1, 1, 3]), torch.tensor([5., 6, 7, 8, 9]), r, include_self=…)
    const cases: [string, boolean, number[]][] = [
      ['sum', true, [12, 17, 3, 13]], ['sum', false, [11, 15, 3, 9]],
      ['prod', true, [30, 112, 3, 36]], ['prod', false, [30, 56, 3, 9]],
      ['mean', true, [4, 17 / 3, 3, 6.5]], ['mean', false, [5.5, 7.5, 3, 9]],
      ['amax', true, [6, 8, 3, 9]], ['amax', false, [6, 8, 3, 9]],
      ['amin', true, [1, 2, 3, 4]], ['amin', false, [5, 7, 3, 9]],
    ];
    for (const [reduce, includeSelf, expected] of cases) {
      const out = x().scatterReduce(0, i, s(), reduce as 'sum', { includeSelf });
      expectClose(vals(out), expected, { rtol: 1e-6 });
    }
  });

  it('integer mean rounds toward −∞; amax propagates NaN; the function form matches', () => {
    const m = tensor([0, 0], { dtype: int32 }).scatterReduce(0, idx([0, 0, 1, 1]), tensor([-3, -4, 3, 4], { dtype: int32 }), 'mean', { includeSelf: false });
    expect(vals(m)).toEqual([-4, 3]);
    expect(vals(tensor([1, 2]).scatterReduce(0, idx([0, 0]), tensor([NaN, 5]), 'amax'))).toEqual([NaN, 2]);
    expect(vals(scatterReduce(x(), 0, i, s(), 'sum'))).toEqual([12, 17, 3, 13]);
  });

  it('names a bad reduction or argument', () => {
    expectError(() => x().scatterReduce(0, i, s(), 'max' as never), ValueError, 'reduce argument must be either sum, prod, mean, amax or amin');
    expectError(() => x().scatterReduce(0, i, s(), 'sum', { includeSelf: 1 as never }), TypeError, "argument 'includeSelf' must be a boolean");
    expectError(() => x().scatterReduce(0, i, s(), 'sum', { include_self: false } as never), TypeError, "unexpected keyword argument 'include_self'");
  });

  it('gradients of every reduction, with and without self (gradcheck; ties and zeros handled as PyTorch)', () => {
    const i2 = idx([0, 0, 2, 1, 1, 1], [2, 3]);
    const self = () => f64([1.5, -2, 3, 0.4, 5, -0.6], [2, 3]);
    const src = () => f64([0.5, -0.65, 0.7, 0.8, -0.9, 1.1], [2, 3]);
    for (const reduce of ['sum', 'prod', 'mean', 'amax', 'amin'] as const) {
      for (const includeSelf of [true, false]) {
        const r = gradcheck((a, b) => a.scatterReduce(1, i2, b, reduce, { includeSelf }), [self(), src()]);
        expect(r.ok, `${reduce} includeSelf=${includeSelf}: ${r.mismatch}`).toBe(true);
      }
    }
    // prod with zeros in self and in src (one zero per target, then two).
    expectGradcheck((a, b) => a.scatterReduce(1, i2, b, 'prod'), [f64([0, 2, 3, 0.4, 5, 0.6], [2, 3]), f64([0.5, 0.6, 0, 0.8, 0, 1.1], [2, 3])]);
    expectGradcheck((a, b) => a.scatterReduce(1, i2, b, 'prod'), [f64([1, 2, 3, 0.4, 5, 0.6], [2, 3]), f64([0, 0, 1, 0.8, 0, 1.1], [2, 3])]);
    // amax with a tie between self and src: the gradient is shared evenly, as in PyTorch.
    const a = tensor([2, 1], { requiresGrad: true });
    const b = tensor([2, 0.5], { requiresGrad: true });
    a.scatterReduce(0, idx([0, 1]), b, 'amax').sum().backward();
    expect(vals(a.grad!)).toEqual([0.5, 1]);
    expect(vals(b.grad!)).toEqual([0.5, 0]);
  });
});

describe('a backend without the 1.3.0 kernels', () => {
  it('refuses sort, cumsum and scatter with an error naming the missing kernel', () => {
    const { argsort: _a, cumulative: _c, scatter: _s, ...kernels } = CpuKernels;
    registerBackend({ name: 'old12', priority: 1, create: () => ({ ...createCpuBackend({ kernels }), name: 'old12', contractVersion: '1.2.0' }) });
    const t = tensor([3, 1, 2]).to('old12');
    expectError(() => t.sort(), TensorError, 'sort: the old12 backend has no argsort kernel (it implements contract 1.2.0');
    expectError(() => t.topk(1), TensorError, 'no argsort kernel');
    expectError(() => t.cumsum(0), TensorError, 'cumsum: the old12 backend has no cumulative kernel');
    expectError(() => t.scatter(0, idx([0]).to('old12'), 1), TensorError, 'scatter: the old12 backend has no scatter kernel');
    // Sums run on scatterAdd, which every backend has.
    expect(t.scatterReduce(0, idx([0, 0]).to('old12'), tensor([1, 1]).to('old12'), 'sum').shape).toEqual([3]);
  });
});

describe('larger random inputs against a plain reference', () => {
  it('sort matches a stable JavaScript sort of each row (with duplicates and NaN)', () => {
    const r = prng(11);
    const rows = 7;
    const n = 300;
    const data = Array.from({ length: rows * n }, () => (r() < 0.05 ? NaN : Math.round(r() * 40) / 4));
    const { values, indices } = tensor(data).reshape([rows, n]).sort(1, true);
    const key = (v: number) => (Number.isNaN(v) ? Infinity : v);
    for (let row = 0; row < rows; row++) {
      const order = [...Array(n).keys()].sort((p, q) => {
        const a = data[row * n + p]!;
        const b = data[row * n + q]!;
        const nanFirst = Number(Number.isNaN(b)) - Number(Number.isNaN(a));
        return nanFirst || key(b) - key(a) || p - q;
      });
      expect(vals(indices).slice(row * n, (row + 1) * n)).toEqual(order);
      expect(vals(values).slice(row * n, (row + 1) * n)).toEqual(order.map((k) => data[row * n + k]!));
    }
  });
});
