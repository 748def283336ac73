// Python subscripts (`x.index(spec)` is `x[spec]`, `x.indexPut_(spec, v)` is `x[spec] = v`) and the
// data-dependent ops (nonzero, unique, maskedSelect) on the cpu backend: values against PyTorch
// 1.13's for the same subscripts (the Python expression beside each), views vs copies, PyTorch's
// errors by type and message, gradients by gradcheck in float64, the sync/async rule on the 'fake'
// backend (a device without synchronous reads), and indexPut's autocast class (AC-12) on an
// emulated cuda device.
import '@core/backend-cpu';
import {
  arange, autocast, DTypeError, float16, float32, float64, gradcheck, IndexError, indexPut, int32, maskedSelect, maskedSelectAsync, nonzero,
  nonzeroAsync, registerBackend, ShapeError, tensor, TensorError, unique, uniqueAsync, ValueError, type Tensor, type UniqueResult,
} from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { expectError, expectRejection, flat } from './helpers/assert.js';
import { createFakeBackend, registerFakeBackend } from './helpers/fake-backend.js';

registerFakeBackend();
registerBackend({ name: 'cuda', priority: 10, create: () => createFakeBackend({ name: 'cuda' }) });

const vals = (t: Tensor): number[] => Array.from(t.dataSync());
const ints = (values: number[]) => tensor(values, { dtype: int32 });
const x = arange(24, { dtype: int32 }).reshape([2, 3, 4]);
const y = () => arange(6, { dtype: float32 }).reshape([2, 3]);

function expectGradcheck(fn: (...xs: Tensor[]) => Tensor, inputs: Tensor[]): void {
  const r = gradcheck(fn, inputs);
  expect(r.ok, r.mismatch).toBe(true);
}

describe('index: the subscripts of x = torch.arange(24).reshape(2, 3, 4)', () => {
  // [PyTorch expression, our call, torch's shape, torch's values (flattened)]
  const cases: [string, () => Tensor, number[], number[]][] = [
    ['x[1]', () => x.index([1]), [3, 4], [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]],
    ['x[-1, 2]', () => x.index([-1, 2]), [4], [20, 21, 22, 23]],
    ['x[:, [-1], :]', () => x.index([':', [-1], ':']), [2, 1, 4], [8, 9, 10, 11, 20, 21, 22, 23]],
    ['x[..., 1:3]', () => x.index(['...', '1:3']), [2, 3, 2], [1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22]],
    ['x[:, ::2, -3:]', () => x.index([':', '::2', '-3:']), [2, 2, 3], [1, 2, 3, 9, 10, 11, 13, 14, 15, 21, 22, 23]],
    ['x[None, 0, ..., None]', () => x.index([null, 0, '...', null]), [1, 3, 4, 1], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
    ['x[1:, :, 10:]', () => x.index(['1:', ':', '10:']), [1, 3, 0], []],
    ['x[[1, 0]]', () => x.index([[1, 0]]), [2, 3, 4], [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
    ['x[[0, 1], [2, 0]]', () => x.index([[0, 1], [2, 0]]), [2, 4], [8, 9, 10, 11, 12, 13, 14, 15]],
    ['x[tensor([[0], [1]]), :, [0, 3]]', () => x.index([[[0], [1]], ':', [0, 3]]), [2, 2, 3], [0, 4, 8, 3, 7, 11, 12, 16, 20, 15, 19, 23]],
    ['x[:, [0, 2], tensor([[1], [3]])]', () => x.index([':', [0, 2], [[1], [3]]]), [2, 2, 2], [1, 9, 3, 11, 13, 21, 15, 23]],
    ['x[0, :, [1, 2]]', () => x.index([0, ':', [1, 2]]), [3, 2], [1, 2, 5, 6, 9, 10]],
    ['x[[0, 1], :, 0]', () => x.index([[0, 1], ':', 0]), [2, 3], [0, 4, 8, 12, 16, 20]],
    ['x[[1], ..., [0, 3]]', () => x.index([[1], '...', [0, 3]]), [2, 3], [12, 16, 20, 15, 19, 23]],
    ['x[:, 1, [True, False, False, True]]', () => x.index([':', 1, [true, false, false, true]]), [2, 2], [4, 7, 16, 19]],
    ['x[tensor([[True, False, True], [False, True, False]])]', () => x.index([[[true, false, true], [false, true, false]]]), [3, 4], [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]],
    ['x[[True, False], [0, 2]]', () => x.index([[true, false], [0, 2]]), [2, 4], [0, 1, 2, 3, 8, 9, 10, 11]],
    ['x[True]', () => x.index(true), [1, 2, 3, 4], [...Array(24).keys()]],
    ['x[False, 1]', () => x.index([false, 1]), [0, 3, 4], []],
    ['x[[]]', () => x.index([[]]), [0, 3, 4], []],
    ['x[()]', () => x.index([]), [2, 3, 4], [...Array(24).keys()]],
    ['x[tensor(1)]', () => x.index(tensor(1, { dtype: int32 })), [3, 4], [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]],
    ['x[:, tensor([[2, -1]])]', () => x.index([':', ints([2, -1]).reshape([1, 2])]), [2, 1, 2, 4], [8, 9, 10, 11, 8, 9, 10, 11, 20, 21, 22, 23, 20, 21, 22, 23]],
    ['x[x > 20]', () => x.index(x.gt(20)), [3], [21, 22, 23]],
    ['x[:, x[0] % 5 == 0]', () => x.index([':', x.index(0).remainder(5).eq(0)]), [2, 3], [0, 5, 10, 12, 17, 22]],
  ];
  for (const [python, call, shape, values] of cases) {
    it(python, () => {
      const r = call();
      expect(r.shape).toEqual(shape);
      expect(r.dtype).toBe(int32);
      expect(vals(r)).toEqual(values);
    });
  }

  it('advanced indices separated by a slice go first; adjacent ones stay in place; integers select before the rule applies', () => {
    const z = arange(5 * 6 * 7 * 8, { dtype: int32 }).reshape([5, 6, 7, 8]);
    // torch.zeros(5, 6, 7, 8)[[0, 1], :, [0, 1]].shape, …[:, [0, 1], [0, 1]].shape, …[0, :, [0, 1]].shape
    expect(z.index([[0, 1], ':', [0, 1]]).shape).toEqual([2, 6, 8]);
    expect(z.index([':', [0, 1], [0, 1]]).shape).toEqual([5, 2, 8]);
    expect(z.index([0, ':', [0, 1]]).shape).toEqual([6, 2, 8]);
    expect(z.index([':', [[0], [1]], '...', [0, 1, 2]]).shape).toEqual([2, 3, 5, 7]);
    expect(vals(z.index([':', [[0], [1]], '...', [0, 1, 2]]).index([1, 2, 3, 4]))).toEqual([z.index([3, 1, 4, 2]).dataSync()[0]]);
  });

  it('a single item may be given alone; basic indexing is a view, advanced indexing a copy', () => {
    const base = arange(6, { dtype: float32 }).reshape([2, 3]);
    const view = base.index(['...', '1:']);
    const copy = base.index([':', [1, 2]]);
    base.fill_(7);
    expect(vals(view)).toEqual([7, 7, 7, 7]);
    expect(vals(copy)).toEqual([1, 2, 4, 5]);
    expect(vals(base.index(1))).toEqual([7, 7, 7]);
  });

  it('reads an index tensor on the cpu for a tensor on another device, and works on devices without synchronous reads', async () => {
    const fx = x.to('fake');
    const r = fx.index([':', ints([2, 0])]);
    expect(r.device.type).toBe('fake');
    expect(flat(await r.toArray())).toEqual([8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15]);
    expect(flat(await fx.index([1, '::2', -1]).toArray())).toEqual([15, 23]);
  });
});

describe('index: errors as PyTorch raises them', () => {
  it('an index out of bounds is an IndexError naming the dim, the index and the size (never a read outside)', () => {
    const e = expectError(() => x.index([':', 3]), IndexError, 'index 3 is out of bounds for dimension 1 with size 3');
    expect([e.dim, e.index, e.size]).toEqual([1, 3, 3]);
    expectError(() => x.index([-3]), IndexError, 'index -3 is out of bounds for dimension 0 with size 2');
    expectError(() => x.index(['...', [0, 4]]), IndexError, 'index 4 is out of bounds for dimension 2 with size 4');
    const t = expectError(() => x.index([0, ':', ints([1, -5])]), IndexError, 'index -5 is out of bounds for dimension 2 with size 4');
    expect([t.dim, t.index, t.size]).toEqual([2, -5, 4]);
  });

  it('too many indices, a 0-dim tensor, two ellipses', () => {
    expectError(() => x.index([0, 0, 0, 0]), IndexError, 'too many indices for tensor of dimension 3');
    expectError(() => x.index([[[true]], 0, 0]), IndexError, 'too many indices for tensor of dimension 3');
    expectError(() => tensor(1).index(0), IndexError, 'invalid index of a 0-dim tensor');
    expectError(() => x.index(['...', 0, '...']), IndexError, "an index can only have a single ellipsis ('...')");
  });

  it('a mask whose shape does not match, index tensors that do not broadcast, an index of another dtype', () => {
    expectError(() => x.index(tensor([true, false, true])), IndexError, 'The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at index 0');
    expectError(() => x.index([':', [true, false]]), IndexError, 'The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at index 1');
    expectError(() => x.index([[0, 1], [0, 1, 2]]), IndexError, 'shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]');
    expectError(() => x.index(tensor([1])), IndexError, 'tensors used as indices must be int32 or bool tensors, got float32');
  });

  it('slice strings: malformed ones are TypeErrors, a zero or negative step a ValueError', () => {
    expectError(() => x.index('1:2:3:4'), TypeError, "'1:2:3:4' is not a slice");
    expectError(() => x.index('a:'), TypeError, 'is not a slice');
    expectError(() => x.index('::0'), ValueError, 'slice step cannot be zero');
    expectError(() => x.index('::-1'), ValueError, 'step must be greater than zero');
    expectError(() => x.index(1.5), TypeError, 'an integer index must be an integer, got 1.5');
    expectError(() => x.index([[0, true]]), TypeError, 'not both');
    expectError(() => x.index([[[0, 1], [2]]]), ValueError, 'rectangular');
    expectError(() => x.index({} as never), TypeError, 'a subscript item is');
  });
});

describe('index: gradients', () => {
  const leaf = () => arange(12, { dtype: float64 }).reshape([3, 4]).mul(0.37).add(0.1).requiresGrad_();

  it('through basic indexing (views), advanced indexing with repeated indices, and masks', () => {
    expectGradcheck((a) => a.index([1, '::2']), [leaf()]);
    expectGradcheck((a) => a.index([[0, 2, 0], [-1, 1, -1]]), [leaf()]);
    expectGradcheck((a) => a.index([[[true, false, true, false], [false, true, true, false], [true, true, false, false]]]), [leaf()]);
    expectGradcheck((a) => a.index([[2, 0], null, '1:']), [leaf()]);
  });

  it('repeated indices add their gradients up (x[[0, 0]].sum() gives 2 at row 0)', () => {
    const a = leaf();
    a.index([[0, 0, 2]]).sum().backward();
    expect(vals(a.grad!)).toEqual([2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1]);
  });
});

describe('indexPut_ / indexPut: Python\'s x[spec] = values on y = torch.arange(6.).reshape(2, 3)', () => {
  // [PyTorch statement, our call, torch's y afterwards]
  const cases: [string, (t: Tensor) => unknown, number[]][] = [
    ['y[1] = tensor([7., 8., 9.])', (t) => t.indexPut_([1], tensor([7, 8, 9])), [0, 1, 2, 7, 8, 9]],
    ['y[:, 1] = -1.', (t) => t.indexPut_([':', 1], -1), [0, -1, 2, 3, -1, 5]],
    ['y.index_put_((tensor([0, 0]), tensor([1, 1])), tensor([5., 7.]), accumulate=True)', (t) => t.indexPut_([[0, 0], [1, 1]], tensor([5, 7]), true), [0, 13, 2, 3, 4, 5]],
    ['y.index_put_((tensor([0, 1, 0]),), ones-ish rows, accumulate=True)', (t) => t.indexPut_([[0, 1, 0]], tensor([[1, 1, 1], [2, 2, 2], [3, 3, 3]]), { accumulate: true }), [4, 5, 6, 5, 6, 7]],
    ['y[:, tensor([True, False, True])] = tensor([[10.], [20.]])', (t) => t.indexPut_([':', [true, false, true]], tensor([[10], [20]])), [10, 1, 10, 20, 4, 20]],
    ['y[mask] = tensor([10., 20., 30.])', (t) => t.indexPut_(tensor([[true, false, true], [false, true, false]]), tensor([10, 20, 30])), [10, 1, 20, 3, 30, 5]],
    ['y.index_put_((mask,), tensor(100.), accumulate=True)', (t) => t.indexPut_([tensor([[true, false, true], [false, true, false]])], tensor(100), true), [100, 1, 102, 3, 104, 5]],
    ['y[[1, -1], ::2] = tensor([-5., -6.])', (t) => t.indexPut_([[1, -1], '::2'], tensor([-5, -6])), [0, 1, 2, -5, 4, -6]],
    ['y[[0, 0], [1, 1]] = tensor([5., 7.]) (repeated: the last wins)', (t) => t.indexPut_([[0, 0], [1, 1]], tensor([5, 7])), [0, 7, 2, 3, 4, 5]],
  ];
  for (const [python, call, after] of cases) {
    it(python, () => {
      const t = y();
      expect(call(t)).toBe(t);
      expect(vals(t)).toEqual(after);
    });
  }

  it('indexPut leaves its input alone; the function form too', () => {
    const t = y();
    expect(vals(t.indexPut([0], 9))).toEqual([9, 9, 9, 3, 4, 5]);
    expect(vals(indexPut(t, [':', -1], tensor([1, 2]), { accumulate: true }))).toEqual([0, 1, 3, 3, 4, 7]);
    expect(vals(t)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('bool and int32 tensors, scalars cast to the tensor\'s dtype, a 0-dim tensor', () => {
    const b = tensor([true, false, true]);
    expect(vals(b.indexPut([[1]], true, true))).toEqual([1, 1, 1]);
    expect(vals(b.indexPut(['1:'], 0))).toEqual([1, 0, 0]);
    expect(vals(ints([1, 2, 3]).indexPut_([[0, 2]], 7))).toEqual([7, 2, 7]);
    expect(vals(tensor(5).indexPut_([], 2))).toEqual([2]);
    expect(vals(tensor(5).indexPut_(true, 3))).toEqual([3]);
  });

  it('errors: values that do not broadcast, a dtype that differs with advanced indices, indices out of bounds; the tensor is unchanged', () => {
    const t = y();
    expectError(() => t.indexPut_([[0, 1]], tensor([[1, 1, 1], [1, 1, 1], [1, 1, 1]])), ShapeError,
      'shape mismatch: value tensor of shape [3, 3] cannot be broadcast to indexing result of shape [2, 3]');
    expectError(() => t.indexPut_([[0]], tensor([1, 2, 3], { dtype: float64 })), DTypeError,
      'Index put requires the source and destination dtypes match, got float32 for the destination and float64 for the source.');
    expectError(() => t.indexPut_([':', [3]], 1), IndexError, 'index 3 is out of bounds for dimension 1 with size 3');
    expectError(() => t.indexPut_([0], 'a' as never), TypeError, "argument 'values' must be a Tensor, a number or a boolean");
    expect(vals(t)).toEqual([0, 1, 2, 3, 4, 5]);
    // Basic indexing casts, as copy_ does (PyTorch's setitem of a slice).
    expect(vals(t.indexPut_([0], tensor([1.5, 2.5, 3.5], { dtype: float64 })))).toEqual([1.5, 2.5, 3.5, 3, 4, 5]);
  });

  it('AC-12: indexPut is a promote op in a cuda autocast region (float16 and float32 give float32); indexPut_ is not autocast', async () => {
    const h = tensor([1, 2, 3], { dtype: float16 }).to('cuda');
    const v = tensor([0.5], { dtype: float32 }).to('cuda');
    const out = autocast({ deviceType: 'cuda' }, () => h.indexPut([[0, 2]], v));
    expect(out.dtype).toBe(float32);
    expect(flat(await out.toArray())).toEqual([0.5, 2, 0.5]);
    expect(autocast({ deviceType: 'cuda' }, () => h.indexPut([[1]], v.half())).dtype).toBe(float16);
    autocast({ deviceType: 'cuda' }, () => expectError(() => h.clone().indexPut_([[1]], v), DTypeError, 'Index put requires the source and destination dtypes match'));
  });

  it('gradients of the tensor and of the values (gradcheck), with repeated indices', () => {
    const a = () => arange(12, { dtype: float64 }).reshape([3, 4]).mul(0.41).sub(1).requiresGrad_();
    const v = (shape: number[]) => arange(shape.reduce((p, s) => p * s, 1), { dtype: float64 }).reshape(shape).mul(0.3).add(0.2).requiresGrad_();
    expectGradcheck((p, q) => p.indexPut([[0, 2, 0], [1, 1, 1]], q, true), [a(), v([3])]);
    expectGradcheck((p, q) => p.indexPut([':', [3, 0]], q), [a(), v([3, 1])]);
    expectGradcheck((p, q) => p.indexPut([[[true, false, true, false], [false, false, true, true], [true, false, false, false]]], q), [a(), v([5])]);
    expectGradcheck((p, q) => p.indexPut(['1:', '::3'], q), [a(), v([2])]);
    expectGradcheck((p, q) => p.mul(1).indexPut_([tensor([true, false, true])], q, true), [a(), v([4])]);
  });
});

describe('the sync/async rule on a device without synchronous reads', () => {
  const fx = () => arange(6, { dtype: float32 }).reshape([2, 3]).to('fake');

  it('index with a mask: the sync form throws naming indexAsync; indexAsync reads the mask and checks bounds', async () => {
    const t = fx();
    expectError(() => t.index(t.gt(2)), TensorError, 'index(): needs the values of a tensor on fake:0, which has no synchronous reads: use `await x.indexAsync(indices)`');
    expect(flat(await (await t.indexAsync([':', t.index(0).lt(2)])).toArray())).toEqual([0, 1, 3, 4]);
    expect(flat(await (await t.indexAsync([[1, 0], [true, false, true]])).toArray())).toEqual([3, 2]);
    await expectRejection(async () => t.indexAsync([ints([0, 2]).to('fake')]), IndexError, 'index 2 is out of bounds for dimension 0 with size 2');
  });

  it('writes through a mask need no read when the values do not depend on how many it selects; otherwise the error says what to do', async () => {
    const t = fx();
    t.indexPut_(t.gt(3), 0);
    expect(flat(await t.toArray())).toEqual([0, 1, 2, 3, 0, 0]);
    t.indexPut_([':', tensor([false, true, true]).to('fake')], tensor([[10], [20]]).to('fake'), true);
    expect(flat(await t.toArray())).toEqual([0, 11, 12, 3, 20, 20]);
    expectError(() => t.indexPut_(t.gt(11), tensor([1, 2, 3]).to('fake')), TensorError,
      "indexPut_(): needs the values of a tensor on fake:0, which has no synchronous reads: find the mask's indices first with `await mask.nonzeroAsync({ asTuple: true })`");
    expect(flat(await t.toArray())).toEqual([0, 11, 12, 3, 20, 20]);
    const [r, c] = await t.gt(11).nonzeroAsync({ asTuple: true });
    t.indexPut_([r!, c!], tensor([1, 2, 3]).to('fake'));
    expect(flat(await t.toArray())).toEqual([0, 11, 1, 3, 2, 3]);
  });

  it('nonzero, unique and maskedSelect: sync forms throw naming their async forms, which give the cpu results', async () => {
    const t = tensor([[0, 2, 0], [NaN, 0, -1]]).to('fake');
    expectError(() => t.nonzero(), TensorError, 'use `await x.nonzeroAsync()`');
    expectError(() => t.unique(), TensorError, 'use `await x.uniqueAsync(...)`');
    expectError(() => t.maskedSelect(t.ne(0)), TensorError, 'use `await x.maskedSelectAsync(mask)`');
    expect(flat(await ((await t.nonzeroAsync()) as Tensor).toArray())).toEqual([0, 1, 1, 0, 1, 2]);
    expect(flat(await ((await nonzeroAsync(t)) as Tensor).toArray())).toEqual([0, 1, 1, 0, 1, 2]);
    const u = (await uniqueAsync(t, { returnCounts: true })) as UniqueResult;
    expect(flat(await u.output.toArray())).toEqual([-1, 0, 2, NaN]);
    expect(flat(await u.counts.toArray())).toEqual([1, 3, 1, 1]);
    expect(flat(await (await maskedSelectAsync(t, t.gt(0))).toArray())).toEqual([2]);
    expect((await t.maskedSelectAsync(t.ne(0))).device.type).toBe('fake');
  });
});

describe('nonzero', () => {
  it('the indices of the non-zero elements, NaN included, row-major; asTuple gives one tensor per dim', () => {
    // x = torch.tensor([[0., 2, 0], [nan, 0, -1]]); x.nonzero(), x.nonzero(as_tuple=True)
    const t = tensor([[0, 2, 0], [NaN, 0, -1]]);
    const n = t.nonzero();
    expect(n.shape).toEqual([3, 2]);
    expect(n.dtype).toBe(int32);
    expect(vals(n)).toEqual([0, 1, 1, 0, 1, 2]);
    expect(t.nonzero({ asTuple: true }).map(vals)).toEqual([[0, 1, 1], [1, 0, 2]]);
    expect(vals(nonzero(tensor([false, true, true])))).toEqual([1, 2]);
  });

  it('0-dim and empty tensors: [1, 0] / [0, 0] and [0, 2], as PyTorch', () => {
    expect(tensor(3).nonzero().shape).toEqual([1, 0]);
    expect(tensor(0).nonzero().shape).toEqual([0, 0]);
    expect(tensor(3).nonzero({ asTuple: true }).map(vals)).toEqual([[0]]);
    expect(arange(0).reshape([2, 0]).nonzero().shape).toEqual([0, 2]);
    expectError(() => tensor([1]).nonzero({ as_tuple: true } as never), TypeError, "unexpected keyword argument 'as_tuple'");
  });
});

describe('unique', () => {
  it('sorted unique elements, inverse indices and counts (torch.unique(tensor([2, 1, 2, 5, 1]), return_inverse=True, return_counts=True))', () => {
    const r = ints([2, 1, 2, 5, 1]).unique({ returnInverse: true, returnCounts: true });
    expect(vals(r.output)).toEqual([1, 2, 5]);
    expect(vals(r.inverseIndices)).toEqual([1, 0, 1, 2, 0]);
    expect(vals(r.counts)).toEqual([2, 2, 1]);
    const [output, inverse, counts] = r;
    expect([output, inverse, counts]).toEqual([r.output, r.inverseIndices, r.counts]);
    expect(r.length).toBe(3);
    expect(r.output.dtype).toBe(int32);
  });

  it('a plain tensor unless asked for more; the tuple holds only what was asked for, in PyTorch\'s order', () => {
    const t = tensor([3, 1, 3]);
    expect(vals(t.unique() as Tensor)).toEqual([1, 3]);
    const withCounts = t.unique({ returnCounts: true });
    expect(withCounts.length).toBe(2);
    expect(withCounts[1]).toBe(withCounts.counts);
    const positional = unique(t, true, true);
    expect(positional.length).toBe(2);
    expect(vals(positional[1]!)).toEqual([1, 0, 1]);
  });

  it('NaN: each is its own value, after every number; of equal values (−0 and 0) the first is kept; inverse has the input\'s shape', () => {
    const r = tensor([[3, NaN, 1], [NaN, 3, -0]]).unique({ returnInverse: true, returnCounts: true });
    expect(vals(r.output)).toEqual([-0, 1, 3, NaN, NaN]);
    expect(Object.is(vals(r.output)[0], -0)).toBe(true);
    expect(vals(r.counts)).toEqual([1, 1, 2, 1, 1]);
    expect(r.inverseIndices.shape).toEqual([2, 3]);
    expect(vals(r.inverseIndices)).toEqual([2, 3, 1, 4, 2, 0]);
    const z = tensor(5).unique({ returnInverse: true });
    expect([z.output.shape, z.inverseIndices.shape]).toEqual([[1], []]);
  });

  it('unique slices along a dim (torch.unique(..., dim=0 / dim=1))', () => {
    // torch.unique(tensor([[2., 1], [2, 1], [0, 9]]), dim=0, return_inverse=True, return_counts=True)
    const r = tensor([[2, 1], [2, 1], [0, 9]]).unique({ dim: 0, returnInverse: true, returnCounts: true });
    expect(r.output.shape).toEqual([2, 2]);
    expect(vals(r.output)).toEqual([0, 9, 2, 1]);
    expect(vals(r.inverseIndices)).toEqual([1, 1, 0]);
    expect(vals(r.counts)).toEqual([1, 2]);
    // torch.unique(tensor([[2, 1, 2], [0, 3, 0]]), dim=1, return_inverse=True)
    const c = ints([2, 1, 2, 0, 3, 0]).reshape([2, 3]).unique({ dim: 1, returnInverse: true });
    expect(vals(c.output)).toEqual([1, 2, 3, 0]);
    expect(vals(c.inverseIndices)).toEqual([1, 0, 1]);
    expect(unique(arange(0).reshape([0, 3]), { dim: 0 }).shape).toEqual([0, 3]);
  });

  it('errors: a dim of a 0-dim tensor, zero-sized dims not selected, bad arguments', () => {
    expectError(() => tensor(1).unique({ dim: 0 }), IndexError, 'Dimension specified as 0 but tensor has no dimensions');
    expectError(() => arange(0).reshape([2, 0]).unique({ dim: 0 }), ShapeError, "There are 0 sized dimensions, and they aren't selected");
    expectError(() => tensor([1]).unique({ dim: 1 }), ShapeError, 'Dimension out of range');
    expectError(() => tensor([1]).unique({ returnCounts: 1 } as never), TypeError, "argument 'returnCounts' must be a boolean");
  });

  it('has no gradient', () => {
    const a = tensor([1, 2, 1], { requiresGrad: true });
    expect((a.unique() as Tensor).requiresGrad).toBe(false);
  });
});

describe('maskedSelect', () => {
  it('the elements where the mask (broadcast) is true, as 1-D (torch.masked_select)', () => {
    // torch.masked_select(tensor([[1., 2, 3], [4, 5, 6]]), tensor([True, False, True]))
    expect(vals(tensor([[1, 2, 3], [4, 5, 6]]).maskedSelect(tensor([true, false, true])))).toEqual([1, 3, 4, 6]);
    // torch.masked_select(tensor(5.), tensor(True)).shape, torch.masked_select(tensor([1., 2]), tensor([[True], [False]]))
    expect(maskedSelect(tensor(5), tensor(true)).shape).toEqual([1]);
    expect(vals(maskedSelect(tensor([1, 2]), tensor([[true], [false]])))).toEqual([1, 2]);
  });

  it('errors: a mask that is not bool, not a tensor, or does not broadcast', () => {
    expectError(() => tensor([1, 2]).maskedSelect(tensor([1, 0])), DTypeError, 'expected a bool tensor for mask, got float32');
    expectError(() => tensor([1, 2]).maskedSelect([true, false] as never), TypeError, "argument 'mask' must be a Tensor");
    expectError(() => tensor([1, 2]).maskedSelect(tensor([true, false, true])), ShapeError, 'must match');
  });

  it('gradient: 1 where selected (broadcast masks add up), by gradcheck', () => {
    const a = tensor([[0.5, -1, 2], [3, 0.25, -2]], { dtype: float64, requiresGrad: true });
    expectGradcheck((p) => p.maskedSelect(tensor([true, false, true])), [a]);
    expectGradcheck((p) => p.index(0).maskedSelect(tensor([[true, false, false], [true, true, false]])), [a]);
    expect(tensor([1]).maskedSelect(tensor([true])).dtype).toBe(float32);
  });
});
