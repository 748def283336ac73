// maskedScatter / maskedScatter_ (PyTorch's masked_scatter): values and gradients against PyTorch
// 1.13's (the Python expression beside each; m = torch.tensor([[True, False, True], [False, True,
// True]]), x = -torch.arange(6.).reshape(2, 3), s = torch.arange(10., 18.).reshape(2, 4)), gradcheck
// in float64, the errors for bad input (and that a failed call leaves its inputs as they were), the
// in-place form, and the rule on a device without synchronous reads (the 'fake' backend): the
// source's size goes unchecked there, but nothing outside the source is read.
import '@core/backend-cpu';
import {
  arange, autocast, bool, DTypeError, float32, float64, gradcheck, int32, maskedScatter, ShapeError, tensor, TensorError, zeros, type Tensor,
} from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { expectError } from './helpers/assert.js';
import { FAKE, registerFakeBackend } from './helpers/fake-backend.js';

registerFakeBackend();

const vals = (t: Tensor): number[] => Array.from(t.dataSync(), Number);
const mask = (device?: string) => tensor([[true, false, true], [false, true, true]], device === undefined ? {} : { device });
const x = (dtype = float32) => arange(6, { dtype }).reshape([2, 3]).neg();
const source = (dtype = float32) => arange(10, 18, { dtype }).reshape([2, 4]);

describe('maskedScatter: values (PyTorch 1.13)', () => {
  it('copies source, read in row-major order, into the true positions; a longer source leaves its tail unread', () => {
    // x.masked_scatter(m, s)
    const y = x().maskedScatter(mask(), source());
    expect(y.shape).toEqual([2, 3]);
    expect(y.dtype).toBe(float32);
    expect(vals(y)).toEqual([10, -1, 11, -3, 12, 13]);
    expect(vals(maskedScatter(x(), mask(), source()))).toEqual([10, -1, 11, -3, 12, 13]); // torch.masked_scatter(x, m, s)
  });

  it('broadcasts the mask over the tensor, and the tensor over the mask', () => {
    // x.masked_scatter(torch.tensor([False, True, True]), s)
    expect(vals(x().maskedScatter(tensor([false, true, true]), source()))).toEqual([-0, 10, 11, -3, 12, 13]);
    // x.masked_scatter(torch.tensor(True), s)
    expect(vals(x().maskedScatter(tensor(true), source()))).toEqual([10, 11, 12, 13, 14, 15]);
    // torch.tensor([1., 2., 3.]).masked_scatter(m, s): shape [2, 3]
    const y = tensor([1, 2, 3]).maskedScatter(mask(), source());
    expect(y.shape).toEqual([2, 3]);
    expect(vals(y)).toEqual([10, 2, 11, 1, 12, 13]);
  });

  it('0-dim tensors, an all-false mask with an empty source, and an empty tensor', () => {
    // torch.tensor(5.).masked_scatter(torch.tensor(True), torch.tensor([7., 8.]))
    const one = tensor(5).maskedScatter(tensor(true), tensor([7, 8]));
    expect(one.shape).toEqual([]);
    expect(vals(one)).toEqual([7]);
    // torch.tensor(5.).masked_scatter(torch.tensor(False), torch.tensor([]))
    expect(vals(tensor(5).maskedScatter(tensor(false), tensor([])))).toEqual([5]);
    // x.masked_scatter(torch.zeros(2, 3, dtype=torch.bool), torch.tensor([]))
    expect(vals(x().maskedScatter(zeros([2, 3], { dtype: bool }), tensor([])))).toEqual([-0, -1, -2, -3, -4, -5]);
    // torch.zeros(0, 3).masked_scatter(torch.ones(3, dtype=torch.bool), torch.tensor([1.])): shape [0, 3]
    expect(zeros([0, 3]).maskedScatter(tensor([true, true, true]), tensor([1])).shape).toEqual([0, 3]);
  });

  it('int32 and bool tensors are copied exactly', () => {
    // torch.arange(6, dtype=torch.int32).reshape(2, 3).masked_scatter(m, torch.tensor([[-1, -2], [-3, -4]], dtype=torch.int32))
    const ints = arange(6, { dtype: int32 }).reshape([2, 3]).maskedScatter(mask(), tensor([[-1, -2], [-3, -4]], { dtype: int32 }));
    expect(ints.dtype).toBe(int32);
    expect(vals(ints)).toEqual([-1, 1, -2, 3, -3, -4]);
    // torch.zeros(2, 3, dtype=torch.bool).masked_scatter(m, torch.tensor([True, False, True, True]))
    const flags = zeros([2, 3], { dtype: bool }).maskedScatter(mask(), tensor([true, false, true, true]));
    expect(flags.dtype).toBe(bool);
    expect(vals(flags)).toEqual([1, 0, 0, 0, 1, 1]);
  });

  it('leaves its inputs as they were', () => {
    const [a, m, s] = [x(), mask(), source()];
    a.maskedScatter(m, s);
    expect(vals(a)).toEqual([-0, -1, -2, -3, -4, -5]);
    expect(vals(m)).toEqual([1, 0, 1, 0, 1, 1]);
    expect(vals(s)).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
  });

  it('AC-7: not on PyTorch\'s autocast lists, so it runs in its inputs\' dtype in a region', () => {
    autocast({ deviceType: 'cpu' }, () => {
      expect(x().maskedScatter(mask(), source()).dtype).toBe(float32);
    });
  });
});

describe('maskedScatter: gradients (PyTorch 1.13)', () => {
  const g = () => tensor([[1, 2, 3], [4, 5, 6]], { dtype: float64 });

  it('the tensor gets the gradient with zeros where the mask is true; the source gets the true positions\' gradient, in order, zeros after', () => {
    const [a, s] = [x(float64).requiresGrad_(), source(float64).requiresGrad_()];
    a.maskedScatter(mask(), s).backward(g());
    // x.masked_scatter(m, s).backward(g) in float64: x.grad, s.grad
    expect(vals(a.grad!)).toEqual([0, 2, 0, 4, 0, 0]);
    expect(s.grad!.shape).toEqual([2, 4]);
    expect(vals(s.grad!)).toEqual([1, 3, 5, 6, 0, 0, 0, 0]);
  });

  it('a tensor broadcast over the mask gets its gradient summed', () => {
    const a = tensor([1, 2, 3], { dtype: float64 }).requiresGrad_();
    const s = source(float64).requiresGrad_();
    a.maskedScatter(tensor([[true, false, true], [false, true, false]]), s).backward(g());
    // torch.tensor([1., 2., 3.], dtype=torch.float64).masked_scatter(torch.tensor([[True, False, True], [False, True, False]]), s).backward(g)
    expect(vals(a.grad!)).toEqual([4, 2, 6]);
    expect(vals(s.grad!)).toEqual([1, 3, 5, 0, 0, 0, 0, 0]);
  });

  it('gradcheck in float64, with a broadcast mask and a source longer than needed', () => {
    const m = tensor([[true], [false], [true]]);
    const r = gradcheck((a, s) => a.maskedScatter(m, s), [
      tensor([[0.3, -1.2], [2.5, 0.7], [-0.4, 1.1]], { dtype: float64, requiresGrad: true }),
      tensor([0.9, -0.6, 1.7, 0.2, -2.1], { dtype: float64, requiresGrad: true }),
    ]);
    expect(r.ok, r.mismatch).toBe(true);
  });
});

describe('maskedScatter_', () => {
  it('writes into this tensor and returns it', () => {
    const a = x();
    expect(a.maskedScatter_(mask(), source())).toBe(a);
    expect(vals(a)).toEqual([10, -1, 11, -3, 12, 13]); // x.masked_scatter_(m, s)
    const b = x();
    b.maskedScatter_(tensor([false, true, true]), source()); // the mask broadcasts to this tensor's shape
    expect(vals(b)).toEqual([-0, 10, 11, -3, 12, 13]);
  });

  it('gradients flow through an in-place write on a non-leaf', () => {
    const [a, s] = [x(float64).requiresGrad_(), source(float64).requiresGrad_()];
    const y = a.mul(2);
    y.maskedScatter_(mask(), s);
    y.mul(y).sum().backward();
    // y = x.mul(2); y.masked_scatter_(m, s); y.mul(y).sum().backward() in float64
    expect(vals(y)).toEqual([10, -2, 11, -6, 12, 13]);
    expect(vals(a.grad!)).toEqual([0, -8, 0, -24, 0, 0]);
    expect(vals(s.grad!)).toEqual([20, 22, 24, 26, 0, 0, 0, 0]);
  });

  it('refuses a mask that would broadcast this tensor to a larger shape, leaving it unchanged', () => {
    const a = zeros([1, 3]);
    expectError(() => a.maskedScatter_(zeros([2, 3], { dtype: bool }).logicalNot(), arange(6).float()), TensorError, "output with shape [1, 3] doesn't match the broadcast shape [2, 3]");
    expect(vals(a)).toEqual([0, 0, 0]);
  });
});

describe('maskedScatter: bad input', () => {
  it('needs a bool mask (PyTorch 1.13 also took deprecated uint8 masks)', () => {
    expectError(() => x().maskedScatter(tensor([[1, 0, 1], [0, 1, 1]], { dtype: int32 }), source()), DTypeError, 'maskedScatter only supports boolean masks, but got mask with dtype int32');
    expectError(() => x().maskedScatter_(x(), source()), DTypeError, 'maskedScatter_ only supports boolean masks, but got mask with dtype float32');
  });

  it('needs a source of this tensor\'s dtype', () => {
    // PyTorch: "masked_scatter: expected self and source to have same dtypes but gotFloat and Double"
    expectError(() => x().maskedScatter(mask(), source(float64)), DTypeError, 'maskedScatter: expected self and source to have same dtypes but got float32 and float64');
    expectError(() => x().maskedScatter(mask(), 3 as unknown as Tensor), TypeError, "maskedScatter(): argument 'source' must be a Tensor, not number 3");
  });

  it('needs at least as many source elements as the mask has trues (counted after broadcasting)', () => {
    // PyTorch: "Number of elements of source < number of ones in mask"
    expectError(() => x().maskedScatter(mask(), tensor([1, 2, 3])), ShapeError, 'maskedScatter: Number of elements of source (3) < number of ones in mask (4): source needs at least 4 elements');
    expectError(() => x().maskedScatter(tensor([true, false, false]), tensor([1])), ShapeError, 'Number of elements of source (1) < number of ones in mask (2)');
    expectError(() => x().maskedScatter(mask(), tensor([])), ShapeError, 'Number of elements of source (0) < number of ones in mask (4)');
  });

  it('a failed in-place call leaves this tensor and the source unchanged', () => {
    const [a, s] = [x(), tensor([7, 8])];
    expectError(() => a.maskedScatter_(mask(), s), ShapeError, 'maskedScatter_: Number of elements of source (2) < number of ones in mask (4)');
    expectError(() => a.maskedScatter_(mask(), s.double()), DTypeError, 'maskedScatter_: expected self and source to have same dtypes');
    expect(vals(a)).toEqual([-0, -1, -2, -3, -4, -5]);
    expect(vals(s)).toEqual([7, 8]);
  });

  it('a mask that does not broadcast with this tensor is a ShapeError', () => {
    expect(() => x().maskedScatter(tensor([true, false]), source())).toThrow(ShapeError);
  });
});

describe('maskedScatter on a device without synchronous reads', () => {
  const onFake = (t: Tensor) => t.to(FAKE);

  it('gives the cpu\'s values', async () => {
    const y = onFake(x()).maskedScatter(mask(FAKE), onFake(source()));
    expect(y.device.type).toBe(FAKE);
    expect(Array.from(await y.data())).toEqual([10, -1, 11, -3, 12, 13]);
  });

  it('leaves the source size unchecked, reads nothing outside the source: positions past its end keep this tensor\'s elements', async () => {
    const short = onFake(x()).maskedScatter(mask(FAKE), onFake(tensor([7, 8])));
    expect(Array.from(await short.data())).toEqual([7, -1, 8, -3, -4, -5]);
    const empty = onFake(x()).maskedScatter(mask(FAKE), onFake(tensor([])));
    expect(Array.from(await empty.data())).toEqual([-0, -1, -2, -3, -4, -5]);
  });
});
