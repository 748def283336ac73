// View ops: shapes, strides, storage offsets, shared storage, and their errors; plus a randomized
// property test of the internal `viewStrides` against brute force.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { arange, bfloat16, flatten, float16, float32, int32, ShapeError, tensor, zeros, type Tensor } from '@core/tensor';
import { viewStrides } from '../packages/tensor/src/tensor/shape.js';
import { expectError } from './helpers/assert.js';
import { prng } from './helpers/random.js';

/** 0..n-1 as float32, reshaped. */
function iota(shape: number[]): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return arange(n, { dtype: float32 }).reshape(shape);
}

function vals(t: Tensor): number[] {
  return Array.from(t.dataSync());
}

function sharesStorage(a: Tensor, b: Tensor): boolean {
  return a._storage === b._storage;
}

describe('reshape and view', () => {
  it('view of a contiguous tensor shares storage, with contiguous strides; -1 is inferred', () => {
    const x = iota([2, 6]);
    const v = x.view([3, -1]);
    expect(v.shape).toEqual([3, 4]);
    expect(v.stride()).toEqual([4, 1]);
    expect(v.storageOffset()).toBe(0);
    expect(sharesStorage(v, x)).toBe(true);
    expect(x.view([-1]).shape).toEqual([12]);
    expect(x.view([2, 2, -1]).shape).toEqual([2, 2, 3]);
    expect(x.reshape([-1, 2]).shape).toEqual([6, 2]);
    expect(sharesStorage(x.reshape([4, 3]), x)).toBe(true);
  });

  it('reshape to 0-dim and back, and empty tensors', async () => {
    const s = tensor([5]).reshape([]);
    expect(s.shape).toEqual([]);
    expect(await s.item()).toBe(5);
    expect(s.view([1, 1, 1]).shape).toEqual([1, 1, 1]);
    const e = zeros([0, 3]);
    expect(e.reshape([3, 0]).shape).toEqual([3, 0]);
    expect(e.reshape([-1, 3]).shape).toEqual([0, 3]);
    expect(e.view([0]).shape).toEqual([0]);
  });

  it('bad shapes throw ShapeError with PyTorch\'s messages', () => {
    const x = iota([3, 4]);
    expectError(() => x.view([5, 2]), ShapeError, "shape '[5, 2]' is invalid for input of size 12");
    expectError(() => x.reshape([-1, 5]), ShapeError, "shape '[-1, 5]' is invalid for input of size 12");
    expectError(() => x.view([-1, -1]), ShapeError, 'only one dimension can be inferred');
    expectError(() => x.reshape([-2, -6]), ShapeError, 'invalid shape dimension -2');
    expectError(() => x.reshape([2.5, 4]), ShapeError, 'invalid shape dimension 2.5');
    expectError(() => x.view(12 as unknown as number[]), ShapeError, 'expected an array of sizes');
  });

  it('view of a transposed tensor throws ShapeError "… Use .reshape(...) instead."; reshape copies', () => {
    const x = iota([2, 3]);
    const xt = x.t();
    expectError(() => xt.view([6]), ShapeError, 'view size is not compatible with input tensor\'s size and stride', 'Use .reshape');
    const r = xt.reshape([6]);
    expect(vals(r)).toEqual([0, 3, 1, 4, 2, 5]);
    expect(sharesStorage(r, x)).toBe(false);
    r.fill_(-1); // a copy: the base is untouched
    expect(vals(x)).toEqual([0, 1, 2, 3, 4, 5]);
    // but splitting or merging dims that stay contiguous is a view even on a transpose
    const v = xt.view([3, 2, 1]);
    expect(sharesStorage(v, x)).toBe(true);
    expect(v.stride().slice(0, 2)).toEqual([1, 3]);
  });

  it('reshape of a column slice merges only compatible dims', () => {
    const x = iota([4, 6]);
    const s = x.slice(1, 0, 4); // [4, 4] with row stride 6
    expect(s.stride()).toEqual([6, 1]);
    const v = s.view([4, 2, 2]);
    expect(sharesStorage(v, x)).toBe(true);
    expect(v.stride()).toEqual([6, 2, 1]);
    expectError(() => s.view([16]), ShapeError, 'Use .reshape');
    expect(vals(s.reshape([16]))).toEqual([0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15, 18, 19, 20, 21]);
  });
});

describe('permute, transpose, t, T', () => {
  it('permute reorders shape and strides without copying', () => {
    const x = iota([2, 3, 4]);
    const p = x.permute([2, 0, 1]);
    expect(p.shape).toEqual([4, 2, 3]);
    expect(p.stride()).toEqual([1, 12, 4]);
    expect(sharesStorage(p, x)).toBe(true);
    expect(p.isContiguous()).toBe(false);
    // p[i][j][k] = x[j][k][i] = 12j + 4k + i
    const c = p.contiguous();
    const expected: number[] = [];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 2; j++) for (let k = 0; k < 3; k++) expected.push(12 * j + 4 * k + i);
    expect(vals(c)).toEqual(expected);
    expect(x.permute([-1, -3, -2]).shape).toEqual([4, 2, 3]);
  });

  it('permute errors: wrong number of dims, repeated dim, out of range', () => {
    const x = iota([2, 3]);
    expectError(() => x.permute([0]), ShapeError, "number of dims don't match in permute");
    expectError(() => x.permute([1, 1]), ShapeError, 'repeated dim');
    expectError(() => x.permute([0, 2]), ShapeError, 'Dimension out of range (expected to be in range of [-2, 1], but got 2)');
  });

  it('transpose with negative dims, t() of 2-D/1-D/0-D, T reverses all dims', () => {
    const x = iota([2, 3, 4]);
    const tr = x.transpose(-1, 0);
    expect(tr.shape).toEqual([4, 3, 2]);
    expect(tr.stride()).toEqual([1, 4, 12]);
    const m = iota([2, 3]);
    expect(m.t().shape).toEqual([3, 2]);
    expect(m.t().stride()).toEqual([1, 3]);
    expect(vals(m.t().contiguous())).toEqual([0, 3, 1, 4, 2, 5]);
    const v = iota([3]);
    expect(v.t().shape).toEqual([3]);
    expect(sharesStorage(v.t(), v)).toBe(true);
    expect(tensor(1).t().shape).toEqual([]);
    expectError(() => x.t(), ShapeError, 't() expects a tensor with <= 2 dimensions, but self is 3D');
    expect(x.T.shape).toEqual([4, 3, 2]);
    expect(x.T.stride()).toEqual([1, 4, 12]);
    expect(m.T.stride()).toEqual([1, 3]);
    expectError(() => m.transpose(0, 2), ShapeError, 'Dimension out of range');
  });
});

describe('expand', () => {
  it('expand gives stride 0 on expanded and new leading dims, -1 keeps a size', () => {
    const x = tensor([[1], [2], [3]]);
    const e = x.expand([2, 3, 4]);
    expect(e.shape).toEqual([2, 3, 4]);
    expect(e.stride()).toEqual([0, 1, 0]);
    expect(sharesStorage(e, x)).toBe(true);
    expect(vals(e.contiguous())).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(x.expand([-1, 2]).shape).toEqual([3, 2]);
    expect(x.expandAs(zeros([5, 3, 2])).shape).toEqual([5, 3, 2]);
    expect(tensor(7).expand([2, 2]).stride()).toEqual([0, 0]);
  });

  it('expand errors name the sizes', () => {
    const x = tensor([[1, 2, 3]]);
    expectError(() => x.expand([2, 4]), ShapeError, 'the expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1', 'Target sizes: [2, 4]', 'Tensor sizes: [1, 3]');
    expectError(() => x.expand([3]), ShapeError, 'the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)');
    expectError(() => x.expand([-1, 1, 3]), ShapeError, '-1 is not allowed in a leading, non-existing dimension');
    expectError(() => x.expand([-2, 3]), ShapeError);
  });

  it('an expanded view reads through to its base', () => {
    const x = tensor([1, 2]);
    const e = x.expand([3, 2]);
    x.add_(10);
    expect(vals(e)).toEqual([11, 12, 11, 12, 11, 12]);
  });
});

describe('slice, narrow, select', () => {
  it('slice with negative bounds, steps and clamping (Python slice semantics)', () => {
    const x = iota([10]);
    expect(vals(x.slice(0, 2, 5))).toEqual([2, 3, 4]);
    expect(vals(x.slice(0, -3))).toEqual([7, 8, 9]);
    expect(vals(x.slice(0, 1, -1, 3))).toEqual([1, 4, 7]);
    expect(vals(x.slice(0, 0, undefined, 4))).toEqual([0, 4, 8]);
    expect(vals(x.slice(0, -100, 100))).toEqual(vals(x));
    expect(x.slice(0, 5, 2).shape).toEqual([0]);
    expect(x.slice(0, 20).shape).toEqual([0]);
    const s = x.slice(0, 3, 9, 2);
    expect(s.shape).toEqual([3]);
    expect(s.stride()).toEqual([2]);
    expect(s.storageOffset()).toBe(3);
    expect(sharesStorage(s, x)).toBe(true);
  });

  it('slice on an inner dim, and of a slice (offsets add up)', () => {
    const x = iota([3, 8]);
    const s = x.slice(1, 2, 8, 3); // columns 2, 5
    expect(s.shape).toEqual([3, 2]);
    expect(s.stride()).toEqual([8, 3]);
    expect(s.storageOffset()).toBe(2);
    expect(vals(s)).toEqual([2, 5, 10, 13, 18, 21]);
    const ss = s.slice(0, 1).slice(1, 1);
    expect(ss.storageOffset()).toBe(2 + 8 + 3);
    expect(vals(ss)).toEqual([13, 21]);
  });

  it('slice errors: step must be a positive integer; dim out of range', () => {
    const x = iota([4]);
    expectError(() => x.slice(0, 0, 4, 0), ShapeError, 'step must be a positive integer');
    expectError(() => x.slice(0, 0, 4, -1), ShapeError, 'step must be a positive integer');
    expectError(() => x.slice(1), ShapeError, 'Dimension out of range (expected to be in range of [-1, 0], but got 1)');
  });

  it('narrow(dim, start, length) with a negative start; errors when it runs past the end', () => {
    const x = iota([3, 5]);
    const n = x.narrow(1, 1, 3);
    expect(n.shape).toEqual([3, 3]);
    expect(n.storageOffset()).toBe(1);
    expect(vals(n)).toEqual([1, 2, 3, 6, 7, 8, 11, 12, 13]);
    expect(vals(x.narrow(0, -1, 1))).toEqual([10, 11, 12, 13, 14]);
    expectError(() => x.narrow(1, 3, 3), ShapeError, 'start (3) + length (3) exceeds dimension size (5)');
    expectError(() => x.narrow(0, 0, -1), ShapeError, 'exceeds dimension size');
  });

  it('select removes the dim; negative indices; out-of-range index errors', () => {
    const x = iota([2, 3, 4]);
    const s = x.select(1, -1);
    expect(s.shape).toEqual([2, 4]);
    expect(s.stride()).toEqual([12, 1]);
    expect(s.storageOffset()).toBe(8);
    expect(vals(s)).toEqual([8, 9, 10, 11, 20, 21, 22, 23]);
    expect(x.select(0, 1).select(0, 2).select(0, 3).shape).toEqual([]);
    expect(vals(x.select(0, 1).select(0, 2).select(0, 3))).toEqual([23]);
    expectError(() => x.select(1, 3), ShapeError, 'index 3 out of range');
    expectError(() => x.select(1, -4), ShapeError, 'index -4 out of range');
    expectError(() => x.select(3, 0), ShapeError, 'Dimension out of range');
  });
});

describe('squeeze, unsqueeze, flatten, contiguous', () => {
  it('squeeze all size-1 dims, one dim, a list; non-1 dims are kept', () => {
    const x = zeros([1, 3, 1, 2]);
    expect(x.squeeze().shape).toEqual([3, 2]);
    expect(x.squeeze(0).shape).toEqual([3, 1, 2]);
    expect(x.squeeze(-2).shape).toEqual([1, 3, 2]);
    expect(x.squeeze(1).shape).toEqual([1, 3, 1, 2]);
    expect(x.squeeze([0, 2]).shape).toEqual([3, 2]);
    expect(tensor(3).squeeze().shape).toEqual([]);
    expectError(() => x.squeeze(4), ShapeError, 'Dimension out of range');
  });

  it('unsqueeze inserts a size-1 dim (negative dims count from the new rank)', () => {
    const x = iota([2, 3]);
    expect(x.unsqueeze(0).shape).toEqual([1, 2, 3]);
    expect(x.unsqueeze(2).shape).toEqual([2, 3, 1]);
    expect(x.unsqueeze(-1).shape).toEqual([2, 3, 1]);
    expect(x.unsqueeze(-3).shape).toEqual([1, 2, 3]);
    expect(x.unsqueeze(1).stride()).toEqual([3, 3, 1]);
    expect(sharesStorage(x.unsqueeze(1), x)).toBe(true);
    expect(vals(x.t().unsqueeze(1).contiguous())).toEqual([0, 3, 1, 4, 2, 5]);
    expect(tensor(1).unsqueeze(0).shape).toEqual([1]);
    expectError(() => x.unsqueeze(3), ShapeError, 'Dimension out of range (expected to be in range of [-3, 2], but got 3)');
  });

  it('flatten with start/end dims, of a 0-dim, of a transpose (copy), errors', () => {
    const x = iota([2, 3, 4]);
    expect(x.flatten().shape).toEqual([24]);
    expect(x.flatten(1).shape).toEqual([2, 12]);
    expect(x.flatten(0, 1).shape).toEqual([6, 4]);
    expect(x.flatten(-2, -1).shape).toEqual([2, 12]);
    expect(sharesStorage(x.flatten(), x)).toBe(true);
    expect(tensor(5).flatten().shape).toEqual([1]);
    const t = x.transpose(0, 2).flatten();
    expect(sharesStorage(t, x)).toBe(false);
    expect(vals(t).slice(0, 4)).toEqual([0, 12, 4, 16]);
    expectError(() => x.flatten(2, 1), ShapeError, 'start_dim cannot come after end_dim');
  });

  it('flatten(x, startDim, endDim), torch.flatten: the method as a function, its defaults, view and errors included', () => {
    const x = iota([2, 3, 4]);
    expect(flatten(x).shape).toEqual([24]);
    expect(flatten(x, 1).shape).toEqual([2, 12]);
    expect(flatten(x, 0, 1).shape).toEqual([6, 4]);
    expect(flatten(x, -2, -1).shape).toEqual([2, 12]);
    expect(sharesStorage(flatten(x, 1), x)).toBe(true);
    expect(vals(flatten(x.transpose(0, 2), 1))).toEqual(vals(x.transpose(0, 2).flatten(1)));
    expect(flatten(tensor(5)).shape).toEqual([1]);
    expectError(() => flatten(x, 2, 1), ShapeError, 'start_dim cannot come after end_dim');
  });

  it('contiguous() returns itself when contiguous, else a contiguous copy', () => {
    const x = iota([2, 3]);
    expect(x.contiguous()).toBe(x);
    expect(x.isContiguous()).toBe(true);
    const xt = x.t();
    const c = xt.contiguous();
    expect(c).not.toBe(xt);
    expect(c.isContiguous()).toBe(true);
    expect(c.stride()).toEqual([2, 1]);
    expect(sharesStorage(c, x)).toBe(false);
    // size-1 dims do not break contiguity
    expect(x.unsqueeze(0).isContiguous()).toBe(true);
    expect(x.slice(0, 1, 2).isContiguous()).toBe(true);
    expect(x.slice(1, 0, 2).isContiguous()).toBe(false);
  });

  it('size(), stride(), ndim, dim(), numel() report the view', () => {
    const x = iota([2, 3, 4]).permute([1, 2, 0]);
    expect(x.size()).toEqual([3, 4, 2]);
    expect(x.size(-1)).toBe(2);
    expect(x.stride(0)).toBe(4);
    expect(x.ndim).toBe(3);
    expect(x.dim()).toBe(3);
    expect(x.numel()).toBe(24);
    expectError(() => x.size(3), ShapeError, 'Dimension out of range');
  });
});

describe('views share storage with their base', () => {
  it('add_ on a view writes through to the base', () => {
    const base = iota([2, 3]);
    base.view([3, 2]).add_(10);
    expect(vals(base)).toEqual([10, 11, 12, 13, 14, 15]);
  });

  it('copy_ into a selected row, a strided slice and a transpose writes through', () => {
    const base = zeros([3, 4], { dtype: int32 });
    base.select(0, 1).copy_(tensor([1, 2, 3, 4], { dtype: int32 }));
    expect(vals(base)).toEqual([0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0]);
    base.slice(1, 0, 4, 2).fill_(9);
    expect(vals(base)).toEqual([9, 0, 9, 0, 9, 2, 9, 4, 9, 0, 9, 0]);
    base.t().select(0, 3).mul_(10); // column 3
    expect(vals(base)).toEqual([9, 0, 9, 0, 9, 2, 9, 40, 9, 0, 9, 0]);
    base.t().narrow(0, 1, 1).zero_();
    expect(vals(base)).toEqual([9, 0, 9, 0, 9, 0, 9, 40, 9, 0, 9, 0]);
  });

  it('detach() shares storage, clone() does not', () => {
    const x = tensor([1, 2, 3]);
    const d = x.detach();
    const c = x.clone();
    d.mul_(2);
    expect(vals(x)).toEqual([2, 4, 6]);
    expect(vals(c)).toEqual([1, 2, 3]);
    c.fill_(0);
    expect(vals(x)).toEqual([2, 4, 6]);
  });

  it('in-place ops on a view of a view land at the right storage offsets', () => {
    const base = iota([4, 4]);
    const inner = base.slice(0, 1, 3).slice(1, 1, 3); // the central 2x2
    expect(inner.storageOffset()).toBe(5);
    inner.sub_(100);
    expect(vals(base)).toEqual([0, 1, 2, 3, 4, -95, -94, 7, 8, -91, -90, 11, 12, 13, 14, 15]);
  });
});

// ---- randomized property test of viewStrides ----


/** Storage offsets of every element of (shape, strides) in row-major logical order. */
function offsets(shape: readonly number[], strides: readonly number[]): number[] {
  const out: number[] = [];
  const idx = new Array<number>(shape.length).fill(0);
  const n = shape.reduce((a, b) => a * b, 1);
  for (let k = 0; k < n; k++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) off += idx[d]! * strides[d]!;
    out.push(off);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

interface Case { shape: number[]; strides: number[]; target: number[] }

function randomCase(rnd: () => number): Case {
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const rank = int(1, 4);
  let shape = Array.from({ length: rank }, () => int(1, 5));
  let strides: number[] = [];
  for (let i = rank - 1, s = 1; i >= 0; i--) { strides[i] = s; s *= shape[i]!; }
  // slices with steps
  for (let d = 0; d < rank; d++) {
    if (rnd() < 0.3 && shape[d]! > 1) {
      const start = int(0, shape[d]! - 1);
      const step = int(1, 2);
      shape[d] = Math.ceil((shape[d]! - start) / step);
      strides[d] = strides[d]! * step;
    }
  }
  // a permutation
  if (rnd() < 0.6) {
    const perm = shape.map((_, i) => i).sort(() => rnd() - 0.5);
    shape = perm.map((p) => shape[p]!);
    strides = perm.map((p) => strides[p]!);
  }
  // inserted size-1 dims with arbitrary strides, and expanded (stride-0) dims
  if (rnd() < 0.3) {
    const at = int(0, shape.length);
    shape.splice(at, 0, 1);
    strides.splice(at, 0, int(0, 7));
  }
  if (rnd() < 0.25) {
    const at = int(0, shape.length);
    shape.splice(at, 0, int(2, 3));
    strides.splice(at, 0, 0);
  }
  // a random factorisation of numel as the target, with some size-1 dims
  const numel = shape.reduce((a, b) => a * b, 1);
  const factors: number[] = [];
  for (let n = numel, p = 2; n > 1;) {
    if (n % p === 0) { factors.push(p); n /= p; } else p++;
  }
  const bins = int(1, 4);
  const target = new Array<number>(bins).fill(1);
  for (const f of factors) target[int(0, bins - 1)]! *= f;
  if (rnd() < 0.3) target.splice(int(0, target.length), 0, 1);
  return { shape, strides, target };
}

/**
 * If target strides exist at all, they are forced: for a dim k of size > 1, stepping index k once
 * from the origin moves from flat element 0 to flat element Π target[k+1..], so its stride must
 * be the difference of those source offsets. Returns them, or null if they do not reproduce the
 * source's offsets.
 */
function forcedStrides(srcOffsets: readonly number[], target: readonly number[]): number[] | null {
  const strides: number[] = [];
  let step = 1;
  for (let k = target.length - 1; k >= 0; k--) {
    strides[k] = target[k]! > 1 ? srcOffsets[step]! - srcOffsets[0]! : 0;
    step *= target[k]!;
  }
  return sameList(offsets(target, strides), srcOffsets) ? strides : null;
}

/** Literal search over all non-negative strides up to the largest source offset (small cases only). */
function bruteForceExists(srcOffsets: readonly number[], target: readonly number[]): boolean | undefined {
  const maxOff = Math.max(...srcOffsets);
  const free = target.map((s, i) => (s > 1 ? i : -1)).filter((i) => i >= 0);
  if ((maxOff + 1) ** free.length > 20000) return undefined;
  const strides = new Array<number>(target.length).fill(0);
  const rec = (j: number): boolean => {
    if (j === free.length) return sameList(offsets(target, strides), srcOffsets);
    for (let s = 0; s <= maxOff; s++) {
      strides[free[j]!] = s;
      if (rec(j + 1)) return true;
    }
    return false;
  };
  return rec(0);
}

describe('viewStrides (internal) vs brute force', () => {
  it('known cases', () => {
    expect(viewStrides([2, 3], [3, 1], [3, 2])).toEqual([2, 1]);
    expect(viewStrides([3, 2], [1, 3], [6])).toBeNull(); // transpose
    expect(viewStrides([4, 4], [6, 1], [4, 2, 2])).toEqual([6, 2, 1]);
    expect(viewStrides([4, 4], [6, 1], [16])).toBeNull();
    expect(viewStrides([2, 3], [0, 1], [6])).toBeNull(); // expanded
    expect(viewStrides([2, 3], [0, 0], [6])).toEqual([0]);
  });

  it('randomized: returned strides enumerate exactly the source offsets; null only when no strides exist', () => {
    const rnd = prng(20240607);
    let viewable = 0;
    let notViewable = 0;
    let bruteForced = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const c = randomCase(rnd);
      const label = JSON.stringify(c);
      const src = offsets(c.shape, c.strides);
      const got = viewStrides(c.shape, c.strides, c.target);
      const forced = forcedStrides(src, c.target);
      if (got) {
        viewable++;
        expect(got.length, label).toBe(c.target.length);
        expect(offsets(c.target, got), label).toEqual(src);
      } else {
        notViewable++;
        expect(forced, `${label}: viewStrides returned null but strides ${JSON.stringify(forced)} work`).toBeNull();
        const brute = bruteForceExists(src, c.target);
        if (brute !== undefined) {
          bruteForced++;
          expect(brute, label).toBe(false);
        }
      }
      // forced strides exist exactly when a view exists
      expect(forced !== null, label).toBe(got !== null);
    }
    // both branches must be exercised for the test to mean something
    expect(viewable).toBeGreaterThan(500);
    expect(notViewable).toBeGreaterThan(300);
    expect(bruteForced).toBeGreaterThan(100);
  });
});

describe("asStrided's backward (col2im) in half precision", () => {
  // Three windows read element 0; their gradients 2048, 1 and 1 sum to 2050, which float16 holds.
  // Accumulated in float16, 2048 + 1 rounds back to 2048 twice (its ulp there is 2) and gives 2048.
  it('accumulates overlapping windows in float32 and rounds once, as PyTorch does', () => {
    for (const dtype of [float16, bfloat16]) {
      const x = zeros([4], { dtype, requiresGrad: true });
      const windows = x.asStrided([3], [0]);
      windows.backward(tensor([2048, 1, 1], { dtype }));
      const exact = dtype === float16 ? 2050 : 2048; // bfloat16 has 8 bits: 2050 rounds to 2048
      expect(Array.from(x.grad!.dataSync()), dtype.name).toEqual([exact, 0, 0, 0]);
      expect(x.grad!.dtype).toBe(dtype);
    }
    // Four windows: 2048 + 1 + 1 + 2 = 2052 exactly in float32; a float16 accumulator gives 2050.
    const y = zeros([2], { dtype: float16, requiresGrad: true });
    y.asStrided([4], [0]).backward(tensor([2048, 1, 1, 2], { dtype: float16 }));
    expect(Array.from(y.grad!.dataSync())).toEqual([2052, 0]);
  });
});
