// PyTorch's composite ops made of core's primitives (ops/decompositions.ts, einsum.ts, the diagonal
// view and eye): what each returns (views or copies), PyTorch's argument binding (positional order,
// then a keyword object), the function forms, the in-place forms' machinery, the autocast classes
// of PyTorch's lists, and the errors for bad input. Values are checked against hand-computed
// references; every op's values on every dtype are also checked by the conformance suite.
import '@core/backend-cpu';
import { describe, expect, it, vi } from 'vitest';
import {
  addcmul, any, arange, autocast, autocastPolicy, bfloat16, bool, chunk, DTypeError, einsum, eye, float16, float32, float64,
  getBackend, int32, linalg, maskedFill, norm, ones, setFusedKernelsEnabled, ShapeError, split, take, tensor,
  TensorError, ValueError, zeros, type FusedKernels, type Tensor,
} from '@core/tensor';
import { registerFakeBackend } from './helpers/fake-backend.js';
import { expectClose, expectError } from './helpers/assert.js';

registerFakeBackend();

const vals = (t: Tensor): number[] => Array.from(t.dataSync());
const idx = (values: number[], device?: string) => tensor(values, { dtype: int32, ...(device ? { device } : {}) });
/** [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] */
const grid = () => arange(12).float().reshape([3, 4]);

describe('views and copies', () => {
  it('split, chunk and unbind return views: a write through a part shows in the base', () => {
    const x = grid();
    const [a, b] = x.split([1, 2]);
    expect(a!.shape).toEqual([1, 4]);
    expect(b!.shape).toEqual([2, 4]);
    b!.fill_(-1);
    expect(vals(x)).toEqual([0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1]);
    x.chunk(2, 1)[1]!.zero_();
    expect(vals(x)).toEqual([0, 1, 0, 0, -1, -1, 0, 0, -1, -1, 0, 0]);
    x.unbind(1)[0]!.fill_(7);
    expect(vals(x)).toEqual([7, 1, 0, 0, 7, -1, 0, 0, 7, -1, 0, 0]);
  });

  it('split by size leaves a smaller last piece; chunk gives ceil(size / chunks) per piece, fewer pieces when they run out', () => {
    const x = arange(5);
    expect(x.split(2).map(vals)).toEqual([[0, 1], [2, 3], [4]]);
    expect(x.chunk(3).map(vals)).toEqual([[0, 1], [2, 3], [4]]);
    expect(arange(6).chunk(4).map((p) => p.shape[0])).toEqual([2, 2, 2]); // PyTorch: 3 pieces, not 4
    expect(zeros([0, 2]).chunk(3).map((p) => p.shape)).toEqual([[0, 2], [0, 2], [0, 2]]);
  });

  it('diagonal is a view of any strided tensor (a transposed one too), with the diagonal as the last dim', () => {
    const x = grid();
    const d = x.t().diagonal(-1); // x.t()[i + 1][i] = x[i][i + 1]
    expect(vals(d)).toEqual([1, 6, 11]);
    d.fill_(0);
    expect(vals(x)).toEqual([0, 0, 2, 3, 4, 5, 0, 7, 8, 9, 10, 0]);
    const batch = arange(24).reshape([2, 3, 4]);
    expect(batch.diagonal(1, 1, 2).shape).toEqual([2, 3]);
    expect(vals(batch.diagonal(1, 1, 2))).toEqual([1, 6, 11, 13, 18, 23]);
    expect(batch.diagonal({ dim1: 0, dim2: 2 }).shape).toEqual([3, 2]);
    expect(x.diagonal(4).shape).toEqual([0]);
  });

  it('flip, roll, repeat, tile and repeatInterleave copy, also where nothing moves', () => {
    const x = grid();
    for (const y of [x.flip([]), x.roll(0, 0), x.repeat([1, 1]), x.tile([1]), x.repeatInterleave(1, 0)]) {
      y.fill_(-5);
      expect(vals(x)[0]).toBe(0);
    }
  });

  it('values: flip, roll (with and without dims), repeat, tile, repeatInterleave', () => {
    const x = grid();
    expect(vals(x.flip(1))).toEqual([3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8]);
    expect(vals(x.roll([1, -1], [0, 1]))).toEqual([9, 10, 11, 8, 1, 2, 3, 0, 5, 6, 7, 4]);
    expect(vals(x.roll(13))).toEqual([11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(x.roll(13).shape).toEqual([3, 4]);
    const y = tensor([[1, 2]]);
    expect(y.repeat([2, 1, 2]).shape).toEqual([2, 1, 4]);
    expect(vals(y.repeat([2, 1, 2]))).toEqual([1, 2, 1, 2, 1, 2, 1, 2]);
    expect(vals(y.tile([3]))).toEqual([1, 2, 1, 2, 1, 2]);
    expect(vals(y.repeatInterleave(2, 1))).toEqual([1, 1, 2, 2]);
    expect(vals(tensor([[1, 2], [3, 4]]).repeatInterleave(2))).toEqual([1, 1, 2, 2, 3, 3, 4, 4]);
  });

  it('viewAs, reshapeAs and typeAs follow the other tensor', () => {
    const x = grid();
    expect(x.viewAs(zeros([2, 6])).shape).toEqual([2, 6]);
    expectError(() => x.t().viewAs(zeros([12])), ShapeError, 'Use .reshape(...) instead');
    expect(x.t().reshapeAs(zeros([12])).shape).toEqual([12]);
    const cast = x.typeAs(zeros([1], { dtype: float64, device: 'fake:1' }));
    expect(cast.dtype).toBe(float64);
    expect(cast.device.toString()).toBe('fake:1');
  });
});

describe("PyTorch's argument binding: positional order, then a keyword object", () => {
  it('optional positionals may come by name in a trailing object', () => {
    const x = tensor([[0, 1, 0], [0, 0, 0]]);
    expect(vals(x.any({ dim: 1, keepdim: true }))).toEqual([1, 0]);
    expect(x.any(1, { keepdim: true }).shape).toEqual([2, 1]);
    expect(vals(grid().tril({ diagonal: -1 }))).toEqual([0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0]);
    expect(grid().split(2, { dim: 1 }).length).toBe(2);
    expect(vals(grid().norm(1, { dim: 0 }))).toEqual([12, 15, 18, 21]);
  });

  it('a name PyTorch does not have, a parameter given twice, or too many positionals is a TypeError naming it', () => {
    const x = grid();
    expectError(() => x.any({ axis: 1 } as never), TypeError, "any() got an unexpected keyword argument 'axis'");
    expectError(() => x.norm(2, { p: 1 } as never), TypeError, "norm() got multiple values for argument 'p'");
    expectError(() => (x.tril as (...a: unknown[]) => Tensor)(0, 1), TypeError, 'tril() takes at most 1 positional argument');
    expectError(() => x.addcmul(x, x, 2 as never), TypeError, 'addcmul() takes at most 2 positional arguments');
  });

  it('the function forms: torch.X(input, …) as X(input, …)', () => {
    const x = grid();
    expect(split(x, 2, 1).map((p) => p.shape)).toEqual([[3, 2], [3, 2]]);
    expect(chunk(x, 3, { dim: 0 }).length).toBe(3);
    expect(vals(any(x.lt(1), { dim: 1 }))).toEqual([1, 0, 0]);
    expect(vals(norm(tensor([3, 4])))).toEqual([5]);
    expect(vals(maskedFill(x, x.gt(9), -1)).slice(-3)).toEqual([9, -1, -1]);
    expect(vals(take(x, idx([-1, 0])))).toEqual([11, 0]);
    expect(vals(addcmul(tensor([1]), tensor([2]), tensor([3]), { value: 2 }))).toEqual([13]);
  });
});

describe('masking, triangles, truth tests', () => {
  it('maskedFill broadcasts mask and tensor; the value may be a 0-dim tensor, which gets the gradient of the filled elements', () => {
    const x = tensor([[1], [2]]);
    expect(x.maskedFill(tensor([true, false, true]), 0).shape).toEqual([2, 3]);
    expect(vals(x.maskedFill(tensor([true, false, true]), 0))).toEqual([0, 1, 0, 0, 2, 0]);
    const value = tensor(5).requiresGrad_();
    grid().maskedFill(grid().lt(3), value).sum().backward();
    expect(vals(value.grad!)).toEqual([3]);
    expect(grid().maskedFill(grid().gt(5), 1.5).dtype).toBe(float32);
    expect(vals(idx([1, 2, 3]).maskedFill(tensor([true, false, false]), 9.7))).toEqual([9, 2, 3]); // the value is cast to the tensor's dtype
  });

  it("maskedFill needs a bool mask and a 0-dim value tensor (PyTorch's messages)", () => {
    const x = grid();
    expectError(() => x.maskedFill(x, 1), DTypeError, 'maskedFill only supports boolean masks, but got mask with dtype float32');
    expectError(() => x.maskedFill_(idx([1, 0, 1, 0]), 1), DTypeError, 'maskedFill_ only supports boolean masks, but got mask with dtype int32');
    expectError(() => x.maskedFill(x.gt(1), tensor([1, 2])), ShapeError, 'only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).');
  });

  it('tril/triu keep their diagonal band of the last two dims and need at least 2 dims', () => {
    const x = grid();
    expect(vals(x.triu(1))).toEqual([0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11]);
    expect(vals(ones([2, 2, 2]).tril())).toEqual([1, 0, 1, 1, 1, 0, 1, 1]);
    expect(ones([2, 2], { dtype: bool }).triu().dtype).toBe(bool);
    expectError(() => arange(3).tril(), ShapeError, 'tril: input tensor must have at least 2 dimensions');
    expectError(() => x.tril(0.5), TypeError, "argument 'diagonal' must be an integer");
  });

  it('any/all/countNonzero: NaN counts as non-zero; empty reductions give false/true/0', () => {
    const x = tensor([[0, NaN, 0], [1, 2, -3]]);
    expect(vals(x.any(1))).toEqual([1, 1]);
    expect(vals(x.all(1))).toEqual([0, 1]);
    expect(vals(x.countNonzero())).toEqual([4]);
    expect(x.countNonzero(0).dtype).toBe(int32);
    expect(x.all().dtype).toBe(bool);
    expect(vals(zeros([0, 2]).any(0))).toEqual([0, 0]);
    expect(vals(zeros([0, 2]).all(0))).toEqual([1, 1]);
  });
});

describe('split, chunk, unbind, flip, roll, repeat: errors with PyTorch messages', () => {
  const x = grid();
  it.each([
    ['split sizes that do not add up', () => x.split([1, 1]), ShapeError, 'split expects splitSizes to sum exactly to 3 (input tensor\'s size at dimension 0), but got splitSizes=[1, 1]'],
    ['a negative split size', () => x.split(-1), ValueError, 'split expects splitSize be non-negative, but got splitSize=-1'],
    ['split size 0 of a non-empty dim', () => x.split(0), ValueError, 'splitSize can only be 0 if dimension size is 0'],
    ['split of a 0-dim tensor', () => tensor(1).split(1), ShapeError, 'split expects at least a 1-dimensional tensor'],
    ['chunk into 0 pieces', () => x.chunk(0), ValueError, 'chunk expects `chunks` to be greater than 0, got: 0'],
    ['unbind of a 0-dim tensor', () => tensor(1).unbind(), ShapeError, 'Dimension specified as 0 but tensor has no dimensions'],
    ['flip with a repeated dim', () => x.flip([0, -2]), ShapeError, 'flip: dim 0 appears multiple times in the list of dims'],
    ['roll with shifts and dims of different lengths', () => x.roll([1, 2], 0), ShapeError, 'roll: shifts and dimensions must align. shifts: 2, dims: 1'],
    ['repeat with fewer sizes than dims', () => x.repeat([2]), ShapeError, 'Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor'],
    ['repeatInterleave with negative repeats', () => x.repeatInterleave(-1), ValueError, 'repeats can not be negative'],
    ['repeatInterleave with a tensor of repeats', () => x.repeatInterleave(idx([1, 2, 3]) as never, 0), TypeError, 'depends on the data'],
    ['repeatInterleave with a wrong outputSize', () => x.repeatInterleave(2, 0, { outputSize: 5 }), ValueError, 'allocated size does not match required size'],
  ] as const)('%s', (_name, fn, cls, message) => {
    expectError(fn, cls, message);
  });
});

describe('norms and distances', () => {
  it("norm: 'fro' (the default) and p = 2 are the 2-norm; 1, Infinity, -Infinity, 0 and other p over dims", () => {
    const x = tensor([[3, -4, 0], [1, -1, 2]]);
    expect(vals(x.norm(1, 1))).toEqual([7, 4]);
    expect(vals(x.norm(Infinity, 1))).toEqual([4, 2]);
    expect(vals(x.norm(-Infinity, 0))).toEqual([1, 1, 0]);
    expect(vals(x.norm(0, 1))).toEqual([2, 3]);
    expectClose(vals(x.norm()), [Math.sqrt(31)], { rtol: 1e-6 });
    expectClose(vals(x.norm('fro', [0, 1], true)), [Math.sqrt(31)], { rtol: 1e-6 });
    expectClose(vals(x.norm(3, 1)), [91 ** (1 / 3), 10 ** (1 / 3)], { rtol: 1e-6 });
    expect(x.norm(2, 1, true).shape).toEqual([2, 1]);
    expect(x.norm({ dtype: float64 }).dtype).toBe(float64);
  });

  it('linalg.vectorNorm is torch.linalg.vector_norm: ord 2 by default, every parameter by name too', () => {
    const x = tensor([[3, 4], [6, 8]]);
    expect(vals(linalg.vectorNorm(x, 2, 1))).toEqual([5, 10]);
    expect(vals(linalg.vectorNorm(x, { dim: 0, keepdim: true }))).toEqual([Math.fround(Math.sqrt(45)), Math.fround(Math.sqrt(80))]);
    expect(vals(linalg.vectorNorm(x, Infinity))).toEqual([8]);
    expectError(() => linalg.vectorNorm(x, { foo: 1 } as never), TypeError, "linalg.vectorNorm() got an unexpected keyword argument 'foo'");
  });

  it('half types are computed in float32: squares beyond float16 range do not overflow', () => {
    expect(vals(tensor([300, 400], { dtype: float16 }).norm())).toEqual([500]);
    expect(tensor([300, 400], { dtype: float16 }).norm().dtype).toBe(float16);
  });

  it('the gradient of a norm is zero (not NaN) where the norm is zero, as PyTorch masks it', () => {
    for (const p of [2, 3, 1.5]) {
      const x = zeros([3], { dtype: float64, requiresGrad: true });
      x.norm(p).backward();
      expect(vals(x.grad!), `p = ${p}`).toEqual([0, 0, 0]);
    }
  });

  it('norms need floating tensors; inf and negative norms of an empty reduction have no identity', () => {
    expectError(() => idx([1, 2]).norm(), DTypeError, 'norm: Expected a floating point tensor as input. Got int32');
    expectError(() => linalg.vectorNorm(zeros([0, 2]), Infinity, 0), ShapeError, 'cannot compute the Infinity norm on an empty tensor because the operation does not have an identity');
    expect(vals(linalg.vectorNorm(zeros([0, 2]), 2, 0))).toEqual([0, 0]);
    expectError(() => grid().norm('nuc'), ValueError, 'singular value decomposition');
  });

  it('dist is the p-norm of the (broadcast) difference', () => {
    expect(vals(tensor([[1, 1], [0, 0]]).dist(tensor([4, 5])))).toEqual([Math.fround(Math.sqrt(9 + 16 + 16 + 25))]);
    expect(vals(tensor([1, 1]).dist(tensor([4, 5]), 1))).toEqual([7]);
  });
});

describe('products', () => {
  it('outer of two vectors; other ranks are an error', () => {
    expect(vals(tensor([1, 2]).outer(tensor([3, 4, 5])))).toEqual([3, 4, 5, 6, 8, 10]);
    expectError(() => tensor([1]).outer(zeros([2, 2])), ShapeError, 'outer: Expected 1-D argument vec2, but got 2-D');
    expectError(() => zeros([2, 2]).outer(tensor([1])), ShapeError, 'outer: Expected 1-D argument self, but got 2-D');
  });

  it('addmm/baddbmm: beta·input + alpha·product, the input broadcast; beta 0 ignores it, NaN included', () => {
    const m1 = tensor([[1, 2], [3, 4]]);
    const m2 = eye(2);
    expect(vals(tensor([1, 10]).addmm(m1, m2, { beta: 2, alpha: 3 }))).toEqual([5, 26, 11, 32]);
    expect(vals(tensor([NaN, NaN]).addmm(m1, m2, { beta: 0 }))).toEqual([1, 2, 3, 4]);
    const b = m1.unsqueeze(0).expand([2, 2, 2]);
    expect(vals(tensor(1).baddbmm(b, m2.unsqueeze(0).expand([2, 2, 2]), { alpha: -1 }))).toEqual([0, -1, -2, -3, 0, -1, -2, -3]);
    expectError(() => zeros([2, 2], { dtype: float64 }).addmm(m1, m2), DTypeError, 'addmm: expected self and mat1 to have the same dtype, but got: float64 != float32');
    expectError(() => idx([1]).addmm(idx([1]).reshape([1, 1]), idx([1]).reshape([1, 1]), { alpha: 0.5 }), ValueError, 'argument alpha must not be a floating point number');
  });

  it('einsum: explicit and implicit outputs, repeated subscripts (diagonal, trace), ellipsis broadcasting, three operands, operands as a list', () => {
    const x = grid();
    expect(vals(einsum('ij,jk->ik', x, x.t()))).toEqual(vals(x.matmul(x.t())));
    expect(vals(einsum('ij,jk', x, x.t()))).toEqual(vals(x.matmul(x.t())));
    expect(vals(einsum('ji', x))).toEqual(vals(x.t().contiguous())); // implicit output: i then j
    expect(vals(einsum('ii->i', eye(3).mul(2)))).toEqual([2, 2, 2]);
    expect(vals(einsum('ii', eye(3)))).toEqual([3]);
    expect(vals(einsum('ij->', x))).toEqual([66]);
    expect(vals(einsum('i,j->ij', [tensor([1, 2]), tensor([3, 4])]))).toEqual([3, 4, 6, 8]);
    const batch = einsum('...ij,...jk->...ik', ones([2, 1, 3, 4]), ones([5, 4, 2]));
    expect(batch.shape).toEqual([2, 5, 3, 2]);
    expect(vals(batch).every((v) => v === 4)).toBe(true);
    // y[b, a] = Σ_{n,m} l[b, n]·W[a, n, m]·r[b, m] (a bilinear layer)
    const y = einsum('bn,anm,bm->ba', tensor([[1, 2]]), arange(8).float().reshape([2, 2, 2]), tensor([[1, 1]]));
    expect(vals(y)).toEqual([0 + 1 + 2 * (2 + 3), 4 + 5 + 2 * (6 + 7)]);
  });

  it("einsum's errors, with PyTorch's messages", () => {
    const x = grid();
    expectError(() => einsum('ij,jk', x), ShapeError, 'einsum(): fewer operands were provided than specified in the equation');
    expectError(() => einsum('ij', x, x), ShapeError, 'einsum(): more operands were provided than specified in the equation');
    expectError(() => einsum('i', x), ShapeError, 'einsum(): the number of subscripts in the equation (1) does not match the number of dimensions (2) for operand 0 and no ellipsis was given');
    expectError(() => einsum('i1', x), ShapeError, 'einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]');
    expectError(() => einsum('ij->ii', x), ShapeError, 'einsum(): output subscript i appears more than once in the output');
    expectError(() => einsum('ij->k', x), ShapeError, 'einsum(): output subscript k does not appear in the equation for any input operand');
    expectError(() => einsum('ii', x), ShapeError, "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 4");
    expectError(() => einsum('ij,ij', x, zeros([3, 5])), ShapeError, 'einsum(): operands do not broadcast');
    expectError(() => einsum('..i', x), ShapeError, "einsum(): found '.' for operand 0 that is not part of any ellipsis");
    expectError(() => einsum('ij'), ShapeError, 'einsum(): must provide at least one operand');
  });
});

describe('lerp, addcmul, addcdiv, clampMin, clampMax, hypot', () => {
  it("lerp: a scalar or tensor weight, computed from `end` where |weight| ≥ 0.5 (PyTorch's formula)", () => {
    expect(vals(tensor([0, 10]).lerp(tensor([10, 20]), 0.25))).toEqual([2.5, 12.5]);
    // 1 − 0.75 = 0.25: end − 0.25·(end − start)
    expect(vals(tensor([0, 10]).lerp(tensor([10, 20]), tensor([0.75, -1])))).toEqual([7.5, 0]);
    expectError(() => tensor([1]).lerp(tensor([1], { dtype: float64 }), 0.5), DTypeError, 'lerp: expected dtype float32 for `end` but got dtype float64');
    expectError(() => idx([1]).lerp(idx([2]), 0.5), DTypeError, 'lerp: expected a floating point tensor, got int32');
  });

  it('addcmul/addcdiv: x + value·t1∘t2, broadcasting; integer division is refused as PyTorch refuses it', () => {
    expect(vals(tensor([1, 1]).addcmul(tensor([2, 3]), tensor([4]), { value: 0.5 }))).toEqual([5, 7]);
    expect(vals(tensor([1, 1]).addcdiv(tensor([2, 3]), tensor([4, 6]), { value: -2 }))).toEqual([0, 0]);
    expectError(() => idx([1]).addcdiv(idx([1]), idx([2])), DTypeError, 'Integer division with addcdiv is no longer supported');
  });

  it('addcmul runs the fused addcmul kernel outside autograd (the bits of its decomposition), and the decomposition under autograd', () => {
    const fused = vi.spyOn(getBackend('cpu').fused as FusedKernels<unknown>, 'addcmul');
    try {
      const [x, a, b] = [arange(100).float().mul(0.37), arange(100).float().mul(-0.11), arange(100).float().add(0.5)];
      const y = x.addcmul(a, b, { value: 0.3 });
      expect(fused).toHaveBeenCalledTimes(1);
      setFusedKernelsEnabled(false);
      const decomposed = x.addcmul(a, b, { value: 0.3 });
      setFusedKernelsEnabled(true);
      expect(vals(y)).toEqual(vals(decomposed));
      fused.mockClear();
      const leaf = x.clone().requiresGrad_();
      leaf.addcmul(a, b, { value: 0.3 }).sum().backward();
      expect(fused).not.toHaveBeenCalled();
      expect(vals(leaf.grad!).every((v) => v === 1)).toBe(true);
    } finally {
      setFusedKernelsEnabled(true);
      fused.mockRestore();
    }
  });

  it('clampMin/clampMax are clamp with one bound', () => {
    expect(vals(tensor([-1, 0.5, 2]).clampMin(0))).toEqual([0, 0.5, 2]);
    expect(vals(tensor([-1, 0.5, 2]).clampMax(tensor([0, 0, 3])))).toEqual([-1, 0, 2]);
  });

  it('hypot neither overflows nor underflows in the squares; an infinite side wins over NaN', () => {
    expect(vals(tensor([300, 3000], { dtype: float16 }).hypot(tensor([400, 4000], { dtype: float16 })))).toEqual([500, 5000]);
    expectClose(vals(tensor([3e30, 3e-30, 0]).hypot(tensor([4e30, 4e-30, 0]))), [5e30, 5e-30, 0], { rtol: 1e-6 });
    expect(vals(tensor([Infinity, NaN]).hypot(tensor([NaN, 1])))).toEqual([Infinity, NaN]);
    expectError(() => idx([3]).hypot(idx([4])), DTypeError, 'hypot: expected floating point tensors');
  });
});

describe('index ops: take, takeAlongDim, indexFill, indexCopy, indexAdd', () => {
  it('take reads the tensor as 1-D (negative indices from the end); takeAlongDim broadcasts', () => {
    const x = grid();
    expect(vals(x.t().take(idx([0, 1, -1])))).toEqual([0, 4, 11]);
    expect(x.take(idx([1, 2, 3, 4]).reshape([2, 2])).shape).toEqual([2, 2]);
    expect(vals(x.takeAlongDim(idx([3, 0, 1]).reshape([3, 1]), 1))).toEqual([3, 4, 9]);
    expect(vals(x.takeAlongDim(idx([2, 0]).reshape([2, 1]), 0))).toEqual([8, 9, 10, 11, 0, 1, 2, 3]);
    expect(vals(x.takeAlongDim(idx([11, 0])))).toEqual([11, 0]);
  });

  it('indexFill (negatives from the end), indexCopy and indexAdd (alpha, repeated indices accumulate)', () => {
    const x = grid();
    expect(vals(x.indexFill(1, idx([0, -1]), -1))).toEqual([-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1]);
    expect(vals(x.indexCopy(0, idx([2, 0]), tensor([[-1, -2, -3, -4], [-5, -6, -7, -8]])))).toEqual([-5, -6, -7, -8, 4, 5, 6, 7, -1, -2, -3, -4]);
    expect(vals(x.indexAdd(0, idx([2, 2]), ones([2, 4]), { alpha: 10 })).slice(8)).toEqual([28, 29, 30, 31]);
    expect(vals(tensor([false, false, true]).indexAdd(0, idx([0]), tensor([true])))).toEqual([1, 0, 1]);
    expect(vals(tensor([-0]).indexCopy(0, idx([0]), tensor([-0]))).map((v) => Object.is(v, -0))).toEqual([true]);
  });

  it.each([
    ['take', (x: Tensor) => x.take(idx([12])), 'take(): index 12 is out of bounds for dimension 0 with size 12'],
    ['take (negative)', (x: Tensor) => x.take(idx([-13])), 'take(): index -13 is out of bounds for dimension 0 with size 12'],
    ['takeAlongDim', (x: Tensor) => x.takeAlongDim(idx([4, 0, 0]).reshape([3, 1]), 1), 'takeAlongDim(): index 4 is out of bounds for dimension 1 with size 4'],
    ['indexFill', (x: Tensor) => x.indexFill(1, idx([4]), 0), 'indexFill(): index 4 is out of bounds for dimension 1 with size 4'],
    ['indexCopy', (x: Tensor) => x.indexCopy(0, idx([3]), ones([1, 4])), 'indexCopy(): index 3 is out of bounds for dimension 0 with size 3'],
    ['indexAdd', (x: Tensor) => x.indexAdd(0, idx([-1]), ones([1, 4])), 'indexAdd(): index -1 is out of bounds for dimension 0 with size 3'],
    ['indexAdd_', (x: Tensor) => x.indexAdd_(1, idx([0, 9]), ones([3, 2])), 'indexAdd_(): index 9 is out of bounds for dimension 1 with size 4'],
  ] as const)('%s: an out-of-range index is a ShapeError naming it, and nothing is written', (_name, fn, message) => {
    const x = grid();
    expectError(() => fn(x), ShapeError, message);
    expect(vals(x)).toEqual(vals(grid()));
  });

  it("index ops' other errors: index dtype and rank, source shape and dtype (PyTorch's messages)", () => {
    const x = grid();
    expectError(() => x.take(tensor([1])), DTypeError, 'take(): Expected dtype int32 for index, got float32; convert with index.int()');
    expectError(() => x.indexFill(0, idx([0, 1]).reshape([1, 2]), 0), ShapeError, 'indexFill(): Index is supposed to be a vector');
    expectError(() => x.indexAdd(0, idx([0]), ones([2, 4])), ShapeError, 'indexAdd(): Number of indices (1) should be equal to source.size(dim) (2)');
    expectError(() => x.indexCopy(0, idx([0]), ones([1, 5])), ShapeError, 'source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [3, 4] source.shape = [1, 5]');
    expectError(() => x.indexAdd(0, idx([0]), ones([1, 4], { dtype: float64 })), DTypeError, 'indexAdd(): self (float32) and source (float64) must have the same scalar type');
    expectError(() => x.takeAlongDim(idx([0]), 0), ShapeError, 'takeAlongDim: input and indices should have the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices');
  });
});

describe('in-place forms', () => {
  it('write into the tensor, bump its version, and keep the gradient flowing (on a non-leaf)', () => {
    const w = grid().requiresGrad_();
    const y = w.mul(1);
    const version = (y as unknown as { _storage: { version: number } })._storage.version;
    expect(y.indexAdd_(0, idx([0, 0]), ones([2, 4]), { alpha: 2 })).toBe(y);
    expect((y as unknown as { _storage: { version: number } })._storage.version).toBeGreaterThan(version);
    y.maskedFill_(y.gt(10), 0).addcmul_(y, ones([4]), { value: 1 });
    y.sum().backward();
    // y = 2·w (+ 8 on row 0), and 0 where it was filled (only w = 11 exceeded 10).
    expect(vals(w.grad!)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0]);
  });

  it('refuse a destination where elements share memory, a leaf that requires grad, and a result that does not fit', () => {
    expectError(() => zeros([1, 3]).expand([2, 3]).indexFill_(0, idx([0]), 1), TensorError, 'more than one element of the written-to tensor refers to a single memory location');
    expectError(() => ones([2], { requiresGrad: true }).addcmul_(ones([2]), ones([2])), TensorError, 'a leaf Variable that requires grad is being used in an in-place operation');
    const x = ones([1, 3]);
    expectError(() => x.maskedFill_(tensor([[true], [false]]), 0), TensorError, "output with shape [1, 3] doesn't match the broadcast shape [2, 3]");
    expect(vals(x)).toEqual([1, 1, 1]);
    expectError(() => idx([1]).addcmul_(tensor([0.5]), tensor([1])), DTypeError, "result type float32 can't be cast to the desired output type int32");
  });
});

describe('diag, trace, eye and the new* factories', () => {
  it('diag builds a matrix from a vector (any diagonal) and takes a copy of a matrix diagonal', () => {
    expect(vals(tensor([1, 2]).diag(1))).toEqual([0, 1, 0, 0, 0, 2, 0, 0, 0]);
    expect(vals(tensor([1, 2]).diag(-1))).toEqual([0, 0, 0, 1, 0, 0, 0, 2, 0]);
    const x = grid();
    const d = x.diag(1);
    d.fill_(0);
    expect(vals(x)[1]).toBe(1); // a copy, unlike diagonal()
    expectError(() => zeros([2, 2, 2]).diag(), ShapeError, 'diag(): Supports 1D or 2D tensors. Got 3D');
  });

  it('trace sums the main diagonal of a matrix (integers to int32)', () => {
    expect(vals(grid().trace())).toEqual([15]);
    expect(idx([1, 2, 3, 4]).reshape([2, 2]).trace().dtype).toBe(int32);
    expectError(() => arange(3).trace(), ShapeError, 'trace: expected a matrix, but got tensor with dim 1');
  });

  it('eye(n, m?, options)', () => {
    expect(vals(eye(2, 3))).toEqual([1, 0, 0, 0, 1, 0]);
    expect(eye(2, { dtype: bool }).dtype).toBe(bool);
    expect(eye(0, 2).shape).toEqual([0, 2]);
    expect(eye(2, { requiresGrad: true }).isLeaf).toBe(true);
    expectError(() => eye(-1), ValueError, 'eye(): n must be a non-negative integer');
  });

  it("DEV-5: newZeros/newOnes/newFull/newEmpty/newTensor default to the tensor's dtype and device; options override them", () => {
    const x = zeros([1], { dtype: float16, device: 'fake:1' });
    for (const y of [x.newZeros([2]), x.newOnes([2]), x.newFull([2], 3), x.newEmpty([2]), x.newTensor([1, 2])]) {
      expect(y.dtype).toBe(float16);
      expect(y.device.toString()).toBe('fake:1');
      expect(y.requiresGrad).toBe(false);
    }
    const z = x.newZeros([2], { dtype: int32 });
    expect([z.dtype, z.device.toString()]).toEqual([int32, 'fake:1']);
    expect(x.newOnes([1], { device: 'cpu' }).device.toString()).toBe('cpu');
    expect(x.newFull([1], 1, { dtype: float32, requiresGrad: true }).requiresGrad).toBe(true);
    expectError(() => x.newZeros([1], { layout: 'strided' } as never), TypeError, "newZeros() got an unexpected keyword argument 'layout'");
  });
});

describe('autocast classes of the new ops (PyTorch 1.13 lists)', () => {
  it('AC-8..AC-12: the policies list them as PyTorch does', () => {
    const cuda = autocastPolicy('cuda')!;
    const cpuPolicy = autocastPolicy('cpu')!;
    expect(cuda.lowerPrecision).toEqual(expect.arrayContaining(['addmm', 'baddbmm', 'einsum']));
    expect(cpuPolicy.lowerPrecision).toEqual(expect.arrayContaining(['addmm', 'baddbmm']));
    expect(cpuPolicy.lowerPrecision).not.toContain('einsum');
    expect(cuda.fp32).toEqual(expect.arrayContaining(['norm', 'dist']));
    expect(cuda.fp32FirstArg).toContain('linalg.vectorNorm');
    expect(cuda.promote).toEqual(expect.arrayContaining(['addcmul', 'addcdiv']));
    expect(cpuPolicy.fp32).toContain('trace');
    expect(cpuPolicy.promote).toContain('indexCopy');
    for (const unlisted of ['maskedFill', 'lerp', 'hypot', 'take', 'outer', 'flip']) {
      expect([...cuda.lowerPrecision, ...cuda.fp32, ...cuda.fp32FirstArg, ...cuda.promote], unlisted).not.toContain(unlisted);
    }
  });

  it('AC-8/AC-9 on the cpu: addmm runs in bfloat16, trace in float32, an unlisted op (lerp) in its inputs\' dtype', () => {
    const m = ones([2, 2]);
    autocast({ deviceType: 'cpu' }, () => {
      expect(m.addmm(m, m).dtype).toBe(bfloat16);
      expect(m.to(bfloat16).trace().dtype).toBe(float32);
      expect(m.lerp(m, 0.5).dtype).toBe(float32);
    });
  });
});
