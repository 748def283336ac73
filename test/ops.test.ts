// Ops: elementwise math and broadcasting, type promotion (TP-*), half-precision rounding (TP-6,
// RND-*), comparisons, where, clamp, reductions, matmul, indexing, joins, softmax, in-place ops,
// reads, memory. References are computed here in float64 from the same (already rounded) inputs.
import '@core/backend-cpu';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  arange, bfloat16, bool, cat, DTypeError, float16, float32, float32ToBFloat16Bits, float32ToFloat16Bits, float64,
  full, fusedKernelsEnabled, getBackend, int32, logsumexp, memoryStats, ones, pad, roundToBFloat16, roundToFloat16,
  randn, setFusedKernelsEnabled, ShapeError, stack, tensor, TensorError, ValueError, where, zeros, type DType, type FusedKernels, type Tensor,
} from '@core/tensor';
import { registerFakeBackend } from './helpers/fake-backend.js';
import { expectClose, expectError } from './helpers/assert.js';
import { prng } from './helpers/random.js';

registerFakeBackend();

// ---- helpers ----

function vals(t: Tensor): number[] {
  return Array.from(t.dataSync());
}


/** n float32 values uniform in [lo, hi). */
function randomF32(n: number, seed: number, lo = -2, hi = 2): number[] {
  const r = prng(seed);
  return Array.from({ length: n }, () => Math.fround(lo + (hi - lo) * r()));
}

function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Reference reduction in float64: groups the row-major `data` of `shape` over `axes`. */
function reduceRef(data: readonly number[], shape: readonly number[], dims: readonly number[], fn: (xs: number[]) => number, keepdim: boolean): { shape: number[]; values: number[] } {
  const axes = dims.map((d) => (d < 0 ? d + shape.length : d));
  const keptShape = shape.map((s, i) => (axes.includes(i) ? 1 : s));
  const groups: number[][] = Array.from({ length: numel(keptShape) }, () => []);
  const idx = new Array<number>(shape.length).fill(0);
  for (let k = 0; k < data.length; k++) {
    let o = 0;
    for (let d = 0; d < shape.length; d++) o = o * keptShape[d]! + (axes.includes(d) ? 0 : idx[d]!);
    groups[o]!.push(data[k]!);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return { shape: keepdim ? keptShape : shape.filter((_, i) => !axes.includes(i)), values: groups.map(fn) };
}

const fsum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const fmean = (xs: number[]) => fsum(xs) / xs.length;
const fprod = (xs: number[]) => xs.reduce((a, b) => a * b, 1);
const fmax = (xs: number[]) => xs.reduce((a, b) => (b > a ? b : a), -Infinity);
const fmin = (xs: number[]) => xs.reduce((a, b) => (b < a ? b : a), Infinity);
const fargmax = (xs: number[]) => xs.indexOf(fmax(xs));
const fargmin = (xs: number[]) => xs.indexOf(fmin(xs));
const fvar = (c: number) => (xs: number[]) => { const m = fmean(xs); return xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - c); };

/** Naive float64 batched matmul of row-major a [B, M, K] and b [B, K, N]; also Σ|a·b| per element as the error scale. */
function matmulRef(a: number[], b: number[], B: number, M: number, K: number, N: number): { values: number[]; scale: number[] } {
  const values: number[] = [];
  const scale: number[] = [];
  for (let p = 0; p < B; p++) {
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0;
        let abs = 0;
        for (let k = 0; k < K; k++) {
          const prod = a[p * M * K + i * K + k]! * b[p * K * N + k * N + j]!;
          s += prod;
          abs += Math.abs(prod);
        }
        values.push(s);
        scale.push(abs);
      }
    }
  }
  return { values, scale };
}

/** |got − ref| ≤ rtol · scale (scale = Σ|a·b|, the natural bound for a dot product). */
function expectMatmulClose(got: readonly number[], ref: { values: number[]; scale: number[] }, rtol = 1e-5): void {
  expect(got.length).toBe(ref.values.length);
  ref.values.forEach((e, i) => {
    if (!(Math.abs(got[i]! - e) <= rtol * Math.max(ref.scale[i]!, 1e-30))) expect.fail(`index ${i}: expected ${e} (scale ${ref.scale[i]}), got ${got[i]}`);
  });
}

// ---- elementwise ----

describe('elementwise math and broadcasting', () => {
  it('add/sub/mul/div broadcast [2,3] with [3], [3,1] with [1,4], and a 0-dim tensor', () => {
    const a = tensor([[1, 2, 3], [4, 5, 6]]);
    const b = tensor([10, 20, 30]);
    expect(a.add(b).shape).toEqual([2, 3]);
    expect(vals(a.add(b))).toEqual([11, 22, 33, 14, 25, 36]);
    expect(vals(b.sub(a))).toEqual([9, 18, 27, 6, 15, 24]);
    const col = tensor([[1], [2], [3]]);
    const row = tensor([[1, 10, 100, 1000]]);
    const p = col.mul(row);
    expect(p.shape).toEqual([3, 4]);
    expect(vals(p)).toEqual([1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000]);
    expect(vals(a.div(tensor(2)))).toEqual([0.5, 1, 1.5, 2, 2.5, 3]);
    expect(tensor(3).add(tensor(4)).shape).toEqual([]);
    // alpha
    expect(vals(a.add(b, 2))).toEqual([21, 42, 63, 24, 45, 66]);
    expect(vals(a.sub(1, 3))).toEqual([-2, -1, 0, 1, 2, 3]);
  });

  it('JS numbers on either side', () => {
    const a = tensor([1, 2, 4]);
    expect(vals(a.add(1))).toEqual([2, 3, 5]);
    expect(vals(a.mul(0.5))).toEqual([0.5, 1, 2]);
    expect(vals(a.pow(2))).toEqual([1, 4, 16]);
    expect(vals(tensor([8]).div(a))).toEqual([8, 4, 2]);
  });

  it('broadcast errors are ShapeErrors naming both shapes and the output dimension', () => {
    const e = expectError(() => tensor([[1, 2, 3], [4, 5, 6]]).add(tensor([1, 2, 3, 4])), ShapeError,
      'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1', '[2, 3]', '[4]');
    expect(e.op).toBe('add');
    expectError(() => zeros([2, 3]).mul(zeros([3, 2])), ShapeError, 'must match the size of tensor b', '[2, 3] and [3, 2]');
    expectError(() => zeros([5, 1, 3]).add(zeros([4, 2])), ShapeError, 'non-singleton dimension 2', '[5, 1, 3] and [4, 2]');
  });

  it('unary float ops match float64 Math within 1 float32 ulp (rtol 1.2e-7)', () => {
    const xs = randomF32(200, 1, -3, 3);
    const pos = xs.map((x) => Math.fround(Math.abs(x) + 0.01));
    const t = tensor(xs);
    const tp = tensor(pos);
    const cases: Array<[string, Tensor, number[]]> = [
      ['exp', t.exp(), xs.map(Math.exp)],
      ['expm1', t.expm1(), xs.map(Math.expm1)],
      ['log', tp.log(), pos.map(Math.log)],
      ['log1p', tp.log1p(), pos.map(Math.log1p)],
      ['sqrt', tp.sqrt(), pos.map(Math.sqrt)],
      ['rsqrt', tp.rsqrt(), pos.map((x) => 1 / Math.sqrt(x))],
      ['reciprocal', tp.reciprocal(), pos.map((x) => 1 / x)],
      ['sin', t.sin(), xs.map(Math.sin)],
      ['cos', t.cos(), xs.map(Math.cos)],
      ['tan', t.tan(), xs.map(Math.tan)],
      ['tanh', t.tanh(), xs.map(Math.tanh)],
      ['sigmoid', t.sigmoid(), xs.map((x) => 1 / (1 + Math.exp(-x)))],
      ['abs', t.abs(), xs.map(Math.abs)],
      ['neg', t.neg(), xs.map((x) => -x)],
      ['relu', t.relu(), xs.map((x) => Math.max(x, 0))],
      ['square', t.square(), xs.map((x) => x * x)],
    ];
    for (const [name, got, ref] of cases) {
      expect(got.dtype, name).toBe(float32);
      expectClose(vals(got), ref, { rtol: 1.2e-7, atol: 1e-45 });
    }
  });

  it('erf, sign, floor/ceil/trunc and round-half-to-even', () => {
    // erf reference values (float64, from the Abramowitz–Stegun tables / mpmath)
    expectClose(vals(tensor([0, 0.5, 1, -2, 3]).erf()), [0, 0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 0.9999779095030014], { rtol: 1.2e-7 });
    expect(vals(tensor([-2.5, -0.5, 0, 0.5, 1.5, 2.5, 3.7]).round())).toEqual([-2, -0, 0, 0, 2, 2, 4]);
    expect(vals(tensor([-1.5, 1.5]).floor())).toEqual([-2, 1]);
    expect(vals(tensor([-1.5, 1.5]).ceil())).toEqual([-1, 2]);
    expect(vals(tensor([-1.7, 1.7]).trunc())).toEqual([-1, 1]);
    const s = vals(tensor([-3, 0, 2, NaN]).sign());
    expect(s.slice(0, 3)).toEqual([-1, 0, 1]);
    expect(Number.isNaN(s[3])).toBe(true);
  });

  it('pow, remainder (sign of the divisor), atan2, maximum/minimum (NaN propagates)', () => {
    expect(vals(tensor([2, 3]).pow(tensor([3, 0.5])))).toEqual([8, Math.fround(Math.sqrt(3))]);
    expect(vals(tensor([-3, 3, -3, 3.5]).remainder(tensor([2, -2, -2, 2])))).toEqual([1, -1, -1, 1.5]);
    expect(vals(tensor([-7, 7], { dtype: int32 }).remainder(3))).toEqual([2, 1]);
    expectClose(vals(tensor([1, -1]).atan2(tensor([-1, -1]))), [Math.atan2(1, -1), Math.atan2(-1, -1)], { rtol: 1.2e-7 });
    const mx = vals(tensor([1, NaN, 3]).maximum(tensor([2, 0, NaN])));
    expect(mx[0]).toBe(2);
    expect(Number.isNaN(mx[1])).toBe(true);
    expect(Number.isNaN(mx[2])).toBe(true);
    expect(vals(tensor([1, 5]).minimum(3))).toEqual([1, 3]);
  });
});

describe('type promotion (TP-1..TP-3)', () => {
  const t = (dtype: DType, n = true) => (n ? tensor([1, 2], { dtype }) : tensor(1, { dtype }));

  it('TP-3: the table of result dtypes', () => {
    const cases: Array<[string, Tensor, DType]> = [
      ['f16[n]+f32[n] → f32', t(float16).add(t(float32)), float32],
      ['f16[n]+f32 0-dim → f16', t(float16).add(t(float32, false)), float16],
      ['bf16[n]+f64 0-dim → bf16', t(bfloat16).add(t(float64, false)), bfloat16],
      ['int32[n]+f16 0-dim → f16', t(int32).add(t(float16, false)), float16],
      ['int32[n]+1.5 → f32', t(int32).add(1.5), float32],
      ['int32[n]+1 → int32', t(int32).add(1), int32],
      ['bool[n]+1 → int32 (PyTorch: int64)', tensor([true, false]).add(1), int32],
      ['f16 0-dim+f32 0-dim → f32', t(float16, false).add(t(float32, false)), float32],
      ['f16 0-dim+1.5 → f16', t(float16, false).add(1.5), float16],
      ['f16[n]*2.0 → f16', t(float16).mul(2.0), float16],
      ['f16[n]+bf16[n] → f32 (TP-1)', t(float16).add(t(bfloat16)), float32],
      ['bf16[n]+int32[n] → bf16', t(bfloat16).add(t(int32)), bfloat16],
      ['f32[n]+f64[n] → f64', t(float32).add(t(float64)), float64],
      ['int32[n]+f64 0-dim → f64 (a higher category in the lower tier)', t(int32).add(t(float64, false)), float64],
    ];
    for (const [name, r, dtype] of cases) expect(r.dtype.name, name).toBe(dtype.name);
  });

  it('integer division gives float32 (true division)', () => {
    const r = tensor([1, 2, 3], { dtype: int32 }).div(tensor([2, 2, 2], { dtype: int32 }));
    expect(r.dtype).toBe(float32);
    expect(vals(r)).toEqual([0.5, 1, 1.5]);
    expect(tensor([7], { dtype: int32 }).div(2).dtype).toBe(float32);
    expect(tensor([1], { dtype: int32 }).sqrt().dtype).toBe(float32);
    expect(tensor([true]).exp().dtype).toBe(float32);
  });

  it('int32 arithmetic stays int32 and exact', () => {
    const a = tensor([100000, -3], { dtype: int32 });
    expect(a.mul(a).dtype).toBe(int32);
    expect(vals(a.mul(tensor([3, 3], { dtype: int32 })))).toEqual([300000, -9]);
    expect(vals(a.sub(1))).toEqual([99999, -4]);
  });

  it('bool add → logical or, mul → logical and; bool sub and neg are DTypeErrors', () => {
    const a = tensor([true, true, false, false]);
    const b = tensor([true, false, true, false]);
    const s = a.add(b);
    expect(s.dtype).toBe(bool);
    expect(vals(s)).toEqual([1, 1, 1, 0]);
    expect(vals(a.mul(b))).toEqual([1, 0, 0, 0]);
    expect(vals(a.maximum(b))).toEqual([1, 1, 1, 0]);
    expect(vals(a.logicalAnd(b))).toEqual([1, 0, 0, 0]);
    expect(vals(a.logicalNot())).toEqual([0, 0, 1, 1]);
    expectError(() => a.sub(b), DTypeError, 'Subtraction, the `-` operator, with two bool tensors is not supported');
    expectError(() => a.sub(1), DTypeError, 'Subtraction, the `-` operator, with a bool tensor is not supported', 'logicalNot()');
    expectError(() => tensor([1, 2]).sub(a.slice(0, 0, 2)), DTypeError, 'with a bool tensor is not supported');
    expectError(() => tensor([1, 2]).sub(true), DTypeError, 'with a bool tensor is not supported');
    expectError(() => a.neg(), DTypeError, 'Negation, the `-` operator, on a bool tensor is not supported', 'logicalNot()');
  });
});

describe('half precision: computed in f32, rounded once (TP-6, RND-*)', () => {
  it('f16: 2048+1 = 2048 (2049 is not representable, tie to even), 2048+3 = 2052, 1+2^-11 = 1, 1+3·2^-11 = 1.001953125', () => {
    const x = tensor([2048, 2048, 1, 1], { dtype: float16 });
    const r = x.add(tensor([1, 3, 2 ** -11, 3 * 2 ** -11], { dtype: float16 }));
    expect(r.dtype).toBe(float16);
    expect(vals(r)).toEqual([2048, 2052, 1, 1.001953125]);
    expect(float32ToFloat16Bits(vals(r)[3]!)).toBe(0x3c02);
  });

  it('f16 overflow: 65504+16 → inf (|x| ≥ 65520), 65504+15 → 65504; products too', () => {
    expect(vals(tensor([65504, 65504], { dtype: float16 }).add(tensor([16, 8], { dtype: float16 })))).toEqual([Infinity, 65504]);
    expect(vals(tensor([300], { dtype: float16 }).mul(tensor([300], { dtype: float16 })))).toEqual([Infinity]);
    expect(vals(tensor([-300], { dtype: float16 }).mul(300))).toEqual([-Infinity]);
  });

  it('bf16 results bit-checked: 1+2^-8 → 0x3F80, 1+3·2^-8 → 0x3F82 (1.015625)', () => {
    const r = tensor([1, 1], { dtype: bfloat16 }).add(tensor([2 ** -8, 3 * 2 ** -8], { dtype: bfloat16 }));
    expect(r.dtype).toBe(bfloat16);
    expect(vals(r).map(float32ToBFloat16Bits)).toEqual([0x3f80, 0x3f82]);
  });

  it('random f16 and bf16 pairs: +, −, ×, ÷ equal the correctly rounded result, bit for bit', () => {
    for (const [dtype, round] of [[float16, roundToFloat16], [bfloat16, roundToBFloat16]] as const) {
      const a = randomF32(300, 11, -100, 100).map(round);
      const b = randomF32(300, 12, -100, 100).map(round).map((v) => (v === 0 ? 1 : v));
      const ta = tensor(a, { dtype });
      const tb = tensor(b, { dtype });
      expect(vals(ta)).toEqual(a); // inputs are exact
      const ops: Array<[string, Tensor, (x: number, y: number) => number]> = [
        ['add', ta.add(tb), (x, y) => x + y], ['sub', ta.sub(tb), (x, y) => x - y],
        ['mul', ta.mul(tb), (x, y) => x * y], ['div', ta.div(tb), (x, y) => x / y],
      ];
      for (const [name, got, f] of ops) {
        // f64 result of two half values: exact for + − ×; rounding f64 → f32 → half is correct (TP-6)
        expect(vals(got), `${dtype.name} ${name}`).toEqual(a.map((x, i) => round(Math.fround(f(x, b[i]!)))));
      }
    }
  });

  it('f16 sum accumulates in f32: 4096 ones sum to 4096 (an f16 accumulator sticks at 2048)', async () => {
    const s = ones([4096], { dtype: float16 }).sum();
    expect(s.dtype).toBe(float16);
    expect(await s.item()).toBe(4096);
    expect(await ones([4096], { dtype: bfloat16 }).sum().item()).toBe(4096);
    expect(await full([4096], 0.1, { dtype: float16 }).mean().item()).toBe(roundToFloat16(0.0999755859375));
  });

});

describe('comparisons, where, clamp, isnan/isinf/isfinite', () => {
  it('comparisons give bool, broadcast, and NaN compares unequal to everything', () => {
    const a = tensor([1, 2, NaN, 4]);
    const b = tensor([1, 3, NaN, 0]);
    expect(a.eq(b).dtype).toBe(bool);
    expect(vals(a.eq(b))).toEqual([1, 0, 0, 0]);
    expect(vals(a.ne(b))).toEqual([0, 1, 1, 1]);
    expect(vals(a.lt(b))).toEqual([0, 1, 0, 0]);
    expect(vals(a.le(b))).toEqual([1, 1, 0, 0]);
    expect(vals(a.gt(b))).toEqual([0, 0, 0, 1]);
    expect(vals(a.ge(b))).toEqual([1, 0, 0, 1]);
    expect(vals(a.ge(2))).toEqual([0, 1, 0, 1]);
    expect(vals(tensor([[1], [2]]).lt(tensor([1, 2, 3])))).toEqual([0, 1, 1, 0, 0, 1]);
    expect(vals(tensor([1, 2], { dtype: int32 }).eq(tensor([1.5, 2])))).toEqual([0, 1]);
    expect(vals(tensor([true, false]).eq(1))).toEqual([1, 0]);
  });

  it('where(cond, a, b): broadcasting, JS numbers, promotion; a non-bool condition is a DTypeError', () => {
    const cond = tensor([[true], [false]]);
    const r = where(cond, tensor([1, 2, 3]), tensor([10, 20, 30]));
    expect(r.shape).toEqual([2, 3]);
    expect(vals(r)).toEqual([1, 2, 3, 10, 20, 30]);
    const s = where(tensor([true, false]), tensor([1, 2], { dtype: int32 }), 0.5);
    expect(s.dtype).toBe(float32);
    expect(vals(s)).toEqual([1, 0.5]);
    const m = tensor([1, -2, 3]);
    expect(vals(m.where(m.gt(0), 0))).toEqual([1, 0, 3]);
    expectError(() => where(tensor([1, 0]), tensor([1, 2]), tensor([3, 4])), DTypeError, 'where expected condition to be a boolean tensor, but got a tensor with dtype float32');
  });

  it('clamp(min, max), one-sided, tensor bounds, NaN stays NaN; no bound at all is a ValueError', () => {
    const x = tensor([-5, -1, 0, 1, 5, NaN]);
    const c = vals(x.clamp(-2, 2));
    expect(c.slice(0, 5)).toEqual([-2, -1, 0, 1, 2]);
    expect(Number.isNaN(c[5])).toBe(true);
    expect(vals(x.clamp(0)).slice(0, 5)).toEqual([0, 0, 0, 1, 5]);
    expect(vals(x.clamp(null, 0)).slice(0, 5)).toEqual([-5, -1, 0, 0, 0]);
    expect(vals(x.clamp(undefined, 0)).slice(0, 5)).toEqual([-5, -1, 0, 0, 0]);
    expect(vals(tensor([1, 5, 9]).clamp(tensor([2, 2, 2]), tensor([3, 4, 8])))).toEqual([2, 4, 8]);
    expect(vals(tensor([1, 5]).clamp(4, 2))).toEqual([2, 2]); // min > max: everything is max, as in PyTorch
    expectError(() => x.clamp(), ValueError, "At least one of 'min' or 'max' must not be None");
    expectError(() => x.clamp(null, null), ValueError, "At least one of 'min' or 'max' must not be None");
  });

  it('isnan / isinf / isfinite on float32, float16 and int32', () => {
    const x = tensor([1, NaN, Infinity, -Infinity, 0, -0]);
    expect(vals(x.isnan())).toEqual([0, 1, 0, 0, 0, 0]);
    expect(vals(x.isinf())).toEqual([0, 0, 1, 1, 0, 0]);
    expect(vals(x.isfinite())).toEqual([1, 0, 0, 0, 1, 1]);
    expect(x.isnan().dtype).toBe(bool);
    const h = tensor([70000, 1, NaN], { dtype: float16 });
    expect(vals(h.isinf())).toEqual([1, 0, 0]);
    expect(vals(h.isfinite())).toEqual([0, 1, 0]);
    const i = tensor([1, 2], { dtype: int32 });
    expect(vals(i.isnan())).toEqual([0, 0]);
    expect(vals(i.isinf())).toEqual([0, 0]);
    expect(vals(i.isfinite())).toEqual([1, 1]);
  });
});

// ---- reductions ----

describe('reductions', () => {
  const shape = [3, 4, 5];
  const data = randomF32(60, 21, -3, 3);
  const x = () => tensor(data).reshape(shape);
  const dimCases: Array<[number[] | number | undefined, boolean]> = [
    [undefined, false], [0, false], [1, true], [-1, false], [[0, 2], false], [[-1, -3], true], [[2, 0, 1], true],
  ];
  const asList = (d: number[] | number | undefined) => (d === undefined ? [0, 1, 2] : typeof d === 'number' ? [d] : d);

  it('sum / mean / amax / amin / var / std over dims, keepdim, negative dims vs float64 (rtol 1e-5·n)', () => {
    for (const [dim, keepdim] of dimCases) {
      const axes = asList(dim);
      const n = axes.reduce((p, a) => p * shape[(a + 3) % 3]!, 1);
      const label = `dim=${JSON.stringify(dim)} keepdim=${keepdim}`;
      const checks: Array<[string, Tensor, (xs: number[]) => number, number]> = [
        ['sum', x().sum(dim, keepdim), fsum, 1e-6 * n],
        ['mean', x().mean(dim, keepdim), fmean, 1e-6 * n],
        ['amax', x().amax(dim, keepdim), fmax, 0],
        ['amin', x().amin(dim, keepdim), fmin, 0],
        ['var', x().var(dim, keepdim), fvar(1), 1e-5 * n],
        ['var c=0', x().var(dim, keepdim, { correction: 0 }), fvar(0), 1e-5 * n],
        ['std', x().std(dim, keepdim), (xs) => Math.sqrt(fvar(1)(xs)), 1e-5 * n],
      ];
      for (const [name, got, fn, tol] of checks) {
        const ref = reduceRef(data, shape, dim === undefined ? [] : axes, fn, keepdim);
        const refAll = dim === undefined ? { shape: keepdim ? [1, 1, 1] : [], values: [fn(data)] } : ref;
        expect(got.shape, `${name} ${label}`).toEqual(refAll.shape);
        expect(got.dtype, `${name} ${label}`).toBe(float32);
        expectClose(vals(got), refAll.values, { rtol: tol, atol: tol * 1e-3 });
      }
    }
  });

  it('reductions and arg-reductions of a non-contiguous (permuted, sliced) view', () => {
    const v = x().permute([2, 0, 1]).slice(1, 1, 3); // [5, 2, 4], non-contiguous
    expect(v.isContiguous()).toBe(false);
    const vdata = vals(v.contiguous());
    // the contiguous copy itself against an index computation on the original data
    const expected: number[] = [];
    for (let k = 0; k < 5; k++) for (let i = 1; i < 3; i++) for (let j = 0; j < 4; j++) expected.push(data[i * 20 + j * 5 + k]!);
    expect(vdata).toEqual(expected);
    const vshape = [5, 2, 4];
    expectClose(vals(v.sum([0, 2])), reduceRef(vdata, vshape, [0, 2], fsum, false).values, { rtol: 1e-5, atol: 1e-6 });
    expect(vals(v.amax(-1, true))).toEqual(reduceRef(vdata, vshape, [2], fmax, true).values);
    expect(vals(v.argmin(0))).toEqual(reduceRef(vdata, vshape, [0], fargmin, false).values);
    expectClose(vals(v.var(1)), reduceRef(vdata, vshape, [1], fvar(1), false).values, { rtol: 1e-5, atol: 1e-6 });
  });

  it('prod over a dim, of ints (int32) and of floats', () => {
    const p = tensor([[1, 2, 3], [4, 5, 6]]).prod(1);
    expect(vals(p)).toEqual([6, 120]);
    const pi = tensor([[1, 2], [3, 4]], { dtype: int32 }).prod(0, true);
    expect(pi.dtype).toBe(int32);
    expect(pi.shape).toEqual([1, 2]);
    expect(vals(pi)).toEqual([3, 8]);
    expect(vals(tensor([1.5, 2, -1]).prod())).toEqual([-3]);
    expect(vals(tensor([]).prod())).toEqual([1]);
    expect(vals(tensor([]).sum())).toEqual([0]);
  });

  it('sum of bool counts (int32), sum of int32 is int32, sum({ dtype }) converts first', () => {
    const s = tensor([true, false, true, true]).sum();
    expect(s.dtype).toBe(int32);
    expect(vals(s)).toEqual([3]);
    const i = tensor([[1, 2], [3, 4]], { dtype: int32 }).sum(-1);
    expect(i.dtype).toBe(int32);
    expect(vals(i)).toEqual([3, 7]);
    const f = tensor([1, 2], { dtype: int32 }).sum(undefined, false, { dtype: float64 });
    expect(f.dtype).toBe(float64);
    expect(vals(tensor([1, 2], { dtype: int32 }).mean(undefined, false, { dtype: float32 }))).toEqual([1.5]);
  });

  it('max()/min() without dim give the element; with a dim give { values, indices } (first index on ties)', () => {
    const t = tensor([[1, 7, 7], [9, 0, 9], [-1, -1, -5]]);
    expect(vals(t.max())).toEqual([9]);
    expect(t.max().shape).toEqual([]);
    expect(vals(t.min())).toEqual([-5]);
    const { values, indices } = t.max(1);
    expect(values.shape).toEqual([3]);
    expect(vals(values)).toEqual([7, 9, -1]);
    expect(indices.dtype).toBe(int32);
    expect(vals(indices)).toEqual([1, 0, 0]);
    const m = t.min(0, true);
    expect(m.values.shape).toEqual([1, 3]);
    expect(vals(m.values)).toEqual([-1, -1, -5]);
    expect(vals(m.indices)).toEqual([2, 2, 2]);
    const neg = t.max(-2);
    expect(vals(neg.values)).toEqual([9, 7, 9]);
    expect(vals(neg.indices)).toEqual([1, 0, 1]);
  });

  it('argmax / argmin: flat index without dim, per-dim with keepdim, vs float64 reference', () => {
    const t = x();
    expect(t.argmax().shape).toEqual([]);
    expect(vals(t.argmax())).toEqual([fargmax(data)]);
    expect(vals(t.argmin())).toEqual([fargmin(data)]);
    for (const [dim, keepdim] of [[0, false], [1, true], [-1, false], [2, true]] as const) {
      const refMax = reduceRef(data, shape, [dim], fargmax, keepdim);
      const got = t.argmax(dim, keepdim);
      expect(got.shape).toEqual(refMax.shape);
      expect(vals(got)).toEqual(refMax.values);
      expect(vals(t.argmin(dim, keepdim))).toEqual(reduceRef(data, shape, [dim], fargmin, keepdim).values);
    }
  });

  it('NaN propagates through max/amax and argmax points at it', () => {
    const t = tensor([[1, NaN, 3], [4, 5, 6]]);
    const m = vals(t.amax(1));
    expect(Number.isNaN(m[0])).toBe(true);
    expect(m[1]).toBe(6);
    expect(vals(t.argmax(1))).toEqual([1, 2]);
    expect(Number.isNaN(vals(t.max())[0])).toBe(true);
  });

  it('mean/var of an integer tensor is a DTypeError; max of an empty tensor is a ShapeError', () => {
    expectError(() => tensor([1, 2], { dtype: int32 }).mean(), DTypeError, 'mean(): could not infer output dtype', 'int32');
    expectError(() => tensor([true]).mean(), DTypeError, 'could not infer output dtype');
    expectError(() => tensor([1, 2], { dtype: int32 }).var(), DTypeError, 'floating point');
    expectError(() => tensor([]).max(), ShapeError, 'Expected reduction dim to be specified for input.numel() == 0');
    expectError(() => zeros([0, 3]).amax(0), ShapeError, 'numel() == 0', 'dim 0 has size 0');
    expectError(() => zeros([0, 3]).argmax(0), ShapeError, 'numel() == 0');
    expect(zeros([0, 3]).amax(1).shape).toEqual([0]); // reducing a non-empty dim of an empty tensor is fine
  });

  it('repeated or out-of-range dims are ShapeErrors', () => {
    expectError(() => x().sum([1, -2]), ShapeError, 'appears multiple times');
    expectError(() => x().sum(3), ShapeError, 'Dimension out of range (expected to be in range of [-3, 2], but got 3)');
    expectError(() => x().argmax(-4), ShapeError, 'Dimension out of range');
    expectError(() => x().max(5), ShapeError, 'Dimension out of range');
  });
});

// ---- matmul ----

describe('matmul family vs a naive float64 reference (|err| ≤ 1e-5 · Σ|a·b|)', () => {
  it('1-D · 1-D → 0-dim dot product', async () => {
    const a = randomF32(37, 1);
    const b = randomF32(37, 2);
    const r = tensor(a).matmul(tensor(b));
    expect(r.shape).toEqual([]);
    expectMatmulClose([await r.item()], matmulRef(a, b, 1, 1, 37, 1));
  });

  it('mv (2-D · 1-D), vm (1-D · 2-D), mm', () => {
    const A = randomF32(5 * 7, 3);
    const v = randomF32(7, 4);
    const mv = tensor(A).reshape([5, 7]).matmul(tensor(v));
    expect(mv.shape).toEqual([5]);
    expectMatmulClose(vals(mv), matmulRef(A, v, 1, 5, 7, 1));
    const w = randomF32(5, 5);
    const vm = tensor(w).matmul(tensor(A).reshape([5, 7]));
    expect(vm.shape).toEqual([7]);
    expectMatmulClose(vals(vm), matmulRef(w, A, 1, 1, 5, 7));
    const B = randomF32(7 * 3, 6);
    const mm = tensor(A).reshape([5, 7]).mm(tensor(B).reshape([7, 3]));
    expect(mm.shape).toEqual([5, 3]);
    expectMatmulClose(vals(mm), matmulRef(A, B, 1, 5, 7, 3));
  });

  it('transposed (non-contiguous) inputs', () => {
    const A = randomF32(6 * 4, 7); // stored as [6, 4], used as its transpose [4, 6]
    const B = randomF32(3 * 6, 8); // stored as [3, 6], used as [6, 3]
    const r = tensor(A).reshape([6, 4]).t().matmul(tensor(B).reshape([3, 6]).t());
    expect(r.shape).toEqual([4, 3]);
    const At: number[] = [];
    for (let i = 0; i < 4; i++) for (let k = 0; k < 6; k++) At.push(A[k * 4 + i]!);
    const Bt: number[] = [];
    for (let k = 0; k < 6; k++) for (let j = 0; j < 3; j++) Bt.push(B[j * 6 + k]!);
    expectMatmulClose(vals(r), matmulRef(At, Bt, 1, 4, 6, 3));
  });

  it('batched with broadcasting: [2,1,3,4] @ [5,4,2] → [2,5,3,2]; bmm', () => {
    const A = randomF32(2 * 3 * 4, 9);
    const B = randomF32(5 * 4 * 2, 10);
    const r = tensor(A).reshape([2, 1, 3, 4]).matmul(tensor(B).reshape([5, 4, 2]));
    expect(r.shape).toEqual([2, 5, 3, 2]);
    // expand both to [10, 3, 4] and [10, 4, 2] for the reference
    const Aexp: number[] = [];
    const Bexp: number[] = [];
    for (let p = 0; p < 2; p++) for (let q = 0; q < 5; q++) { Aexp.push(...A.slice(p * 12, p * 12 + 12)); Bexp.push(...B.slice(q * 8, q * 8 + 8)); }
    expectMatmulClose(vals(r), matmulRef(Aexp, Bexp, 10, 3, 4, 2));
    const b1 = tensor(A).reshape([2, 3, 4]).bmm(tensor(B.slice(0, 16)).reshape([2, 4, 2]));
    expect(b1.shape).toEqual([2, 3, 2]);
    expectMatmulClose(vals(b1), matmulRef(A, B.slice(0, 16), 2, 3, 4, 2));
    // a 1-D operand against a batch
    const v = randomF32(4, 11);
    const bv = tensor(A).reshape([2, 3, 4]).matmul(tensor(v));
    expect(bv.shape).toEqual([2, 3]);
    expectMatmulClose(vals(bv), matmulRef(A, v, 1, 6, 4, 1));
  });

  it('int32 matmul is exact; f16 matmul accumulates in f32 (4096 ones · ones = 4096); K = 0 gives zeros', async () => {
    const a = tensor([[1, 2], [3, 4]], { dtype: int32 });
    const r = a.matmul(a);
    expect(r.dtype).toBe(int32);
    expect(vals(r)).toEqual([7, 10, 15, 22]);
    const h = ones([1, 4096], { dtype: float16 }).matmul(ones([4096, 1], { dtype: float16 }));
    expect(h.dtype).toBe(float16);
    expect(await h.item()).toBe(4096);
    expect(vals(zeros([2, 0]).matmul(zeros([0, 3])))).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('TP-5: no promotion — a dtype mix is a DTypeError "expected … to have the same dtype"', () => {
    expectError(() => ones([2, 2]).matmul(ones([2, 2], { dtype: float16 })), DTypeError, 'expected input and other to have the same dtype, but got: float32 != float16');
    expectError(() => ones([2, 2]).mm(ones([2, 2], { dtype: bfloat16 })), DTypeError, 'expected self and mat2 to have the same dtype, but got: float32 != bfloat16');
    expectError(() => ones([2], { dtype: int32 }).matmul(ones([2])), DTypeError, 'same dtype');
    expectError(() => ones([2, 2], { dtype: bool }).matmul(ones([2, 2], { dtype: bool })), DTypeError, 'bool');
  });

  it('shape mismatches are ShapeErrors: "cannot be multiplied (AxB and CxD)", 0-dim, 1-D sizes, mm/bmm ranks', () => {
    expectError(() => ones([2, 3]).matmul(ones([4, 5])), ShapeError, 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)');
    expectError(() => ones([2, 3]).mm(ones([2, 3])), ShapeError, 'cannot be multiplied (2x3 and 2x3)');
    expectError(() => ones([3]).matmul(tensor(2)), ShapeError, 'both arguments to matmul need to be at least 1D');
    expectError(() => ones([3]).matmul(ones([4])), ShapeError, 'inconsistent tensor size');
    expectError(() => ones([3]).mm(ones([3, 1])), ShapeError, 'self must be a matrix');
    expectError(() => ones([2, 2, 2]).bmm(ones([3, 2, 2])), ShapeError, 'batch1 and batch2 must have same number of batches, got 2 and 3');
    expectError(() => ones([2, 1, 3]).matmul(ones([3, 3, 2])), ShapeError, 'must match');
  });
});

// ---- indexing ----

describe('gather, scatterAdd, indexSelect', () => {
  const x = () => tensor([[1, 2, 3], [4, 5, 6]]);
  const idx = (data: number[][] | number[]) => tensor(data, { dtype: int32 });

  it('gather along dim 1 and dim 0 (out[i][j] = x[i][index[i][j]])', () => {
    expect(vals(x().gather(1, idx([[2, 0], [1, 1]])))).toEqual([3, 1, 5, 5]);
    expect(vals(x().gather(0, idx([[1, 0, 1]])))).toEqual([4, 2, 6]);
    expect(vals(x().gather(-1, idx([[0], [2]])))).toEqual([1, 6]);
    expect(x().gather(1, idx([[2, 0], [1, 1]])).shape).toEqual([2, 2]);
  });

  it('gather and indexSelect read non-contiguous inputs', () => {
    const xt = x().t(); // [[1, 4], [2, 5], [3, 6]]
    expect(vals(xt.gather(1, idx([[1], [0], [1]])))).toEqual([4, 2, 6]);
    expect(vals(xt.indexSelect(0, idx([2, 0])))).toEqual([3, 6, 1, 4]);
    expect(vals(xt.gather(0, idx([[2, 1]])))).toEqual([3, 5]);
  });

  it('scatterAdd accumulates duplicates into a copy; the input is unchanged', () => {
    const base = zeros([2, 4]);
    const r = base.scatterAdd(1, idx([[0, 0, 3], [2, 2, 2]]), tensor([[1, 2, 3], [10, 20, 30]]));
    expect(vals(r)).toEqual([3, 0, 0, 3, 0, 0, 60, 0]);
    expect(vals(base)).toEqual(new Array(8).fill(0));
    const r0 = ones([3, 2], { dtype: int32 }).scatterAdd(0, idx([[2, 0]]), tensor([[5, 7]], { dtype: int32 }));
    expect(vals(r0)).toEqual([1, 8, 1, 1, 6, 1]);
    const h = zeros([1], { dtype: float16 }).scatterAdd(0, idx(new Array(4096).fill(0)), ones([4096], { dtype: float16 }));
    expect(vals(h)).toEqual([4096]); // half types accumulate duplicates in f32
  });

  it('indexSelect picks rows or columns with a 1-D index', () => {
    expect(vals(x().indexSelect(0, idx([1, 0, 1])))).toEqual([4, 5, 6, 1, 2, 3, 4, 5, 6]);
    const c = x().indexSelect(-1, idx([2, 0]));
    expect(c.shape).toEqual([2, 2]);
    expect(vals(c)).toEqual([3, 1, 6, 4]);
    expect(x().indexSelect(1, idx([])).shape).toEqual([2, 0]);
  });

  it('out-of-range indices → ShapeError; float indices → DTypeError; shape rules', () => {
    expectError(() => x().gather(1, idx([[3], [0]])), ShapeError, 'index 3 is out of bounds for dimension 1 with size 3');
    expectError(() => x().gather(1, idx([[-1], [0]])), ShapeError, 'index -1 is out of bounds');
    expectError(() => x().indexSelect(0, idx([2])), ShapeError, 'index 2 is out of bounds for dimension 0 with size 2');
    expectError(() => zeros([2, 2]).scatterAdd(0, idx([[5, 0]]), ones([1, 2])), ShapeError, 'index 5 is out of bounds');
    expectError(() => x().gather(1, tensor([[0], [1]])), DTypeError, 'Expected dtype int32 for index, got float32');
    expectError(() => x().indexSelect(0, tensor([0.0])), DTypeError, 'Expected dtype int32 for index');
    expectError(() => zeros([2]).scatterAdd(0, tensor([0]), ones([1])), DTypeError, 'int32');
    expectError(() => x().gather(1, idx([0, 1])), ShapeError, 'Index tensor must have the same number of dimensions as input tensor');
    expectError(() => x().indexSelect(0, idx([[0]])), ShapeError, 'Index is supposed to be a vector');
    expectError(() => x().gather(2, idx([[0]])), ShapeError, 'Dimension out of range');
    expectError(() => zeros([2]).scatterAdd(0, idx([0]), ones([1], { dtype: float16 })), DTypeError, 'Expected self.dtype to be equal to src.dtype');
  });

  it('indices checked once: max(dim) (an argmax) and the backward of gather and scatterAdd read no index values on the host', () => {
    const backend = getBackend('cpu');
    const reads = vi.spyOn(backend as { readSync: NonNullable<typeof backend.readSync> }, 'readSync');
    try {
      const a = tensor([[1, 5, 2], [7, 0, 3]], { requiresGrad: true });
      const m = a.max(1);
      m.values.sum().backward();
      const g = tensor([[1, 2, 3], [4, 5, 6]], { requiresGrad: true });
      const index = idx([[2, 0], [1, 1]]);
      g.gather(1, index).mul(tensor([[1, 2], [3, 4]])).sum().backward(); // the forward's check reads the index once
      const src = tensor([[1, 2]], { requiresGrad: true });
      zeros([2, 3]).scatterAdd(1, idx([[2, 2]]), src).mul(tensor([[1, 10, 100], [0, 0, 0]])).sum().backward(); // once more
      expect(reads).toHaveBeenCalledTimes(2);
      expect(vals(m.values)).toEqual([5, 7]);
      expect(vals(a.grad!)).toEqual([0, 1, 0, 1, 0, 0]);
      expect(vals(g.grad!)).toEqual([2, 0, 1, 0, 7, 0]);
      expect(vals(src.grad!)).toEqual([100, 100]);
    } finally {
      reads.mockRestore();
    }
  });
});

// ---- joins ----

describe('cat, stack, pad', () => {
  it('cat along dims 0, 1, -1; promotes dtypes; skips legacy empty 1-D tensors', () => {
    const a = tensor([[1, 2], [3, 4]]);
    const b = tensor([[5, 6]]);
    expect(vals(cat([a, b]))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(cat([a, b]).shape).toEqual([3, 2]);
    const c = cat([a, tensor([[7], [8]])], 1);
    expect(c.shape).toEqual([2, 3]);
    expect(vals(c)).toEqual([1, 2, 7, 3, 4, 8]);
    expect(vals(cat([a, a.t()], -1))).toEqual([1, 2, 1, 3, 3, 4, 2, 4]);
    const m = cat([tensor([1], { dtype: float16 }), tensor([2])]);
    expect(m.dtype).toBe(float32);
    expect(cat([tensor([1], { dtype: int32 }), tensor([0.5])]).dtype).toBe(float32);
    expect(vals(cat([tensor([1, 2]), tensor([])]))).toEqual([1, 2]);
    expect(vals(cat([a, tensor([])]))).toEqual([1, 2, 3, 4]);
  });

  it('cat errors: empty list, 0-dim, rank and size mismatches', () => {
    expectError(() => cat([]), ValueError, 'expected a non-empty list of Tensors');
    expectError(() => cat([tensor(1), tensor(2)]), ShapeError, 'zero-dimensional tensor (at position 0) cannot be concatenated');
    expectError(() => cat([zeros([2, 2]), zeros([2])]), ShapeError, 'Tensors must have same number of dimensions: got 2 and 1');
    expectError(() => cat([zeros([2, 2]), zeros([3, 3])], 1), ShapeError, 'Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in the list.');
    expectError(() => cat([zeros([2, 2])], 2), ShapeError, 'Dimension out of range');
    expect(() => cat([zeros([1]), [1] as never])).toThrow(TypeError);
  });

  it('stack inserts a new dim (0, 1, -1); unequal shapes are a ShapeError', () => {
    const a = tensor([1, 2, 3]);
    const b = tensor([4, 5, 6]);
    expect(stack([a, b]).shape).toEqual([2, 3]);
    expect(vals(stack([a, b]))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stack([a, b], 1).shape).toEqual([3, 2]);
    expect(vals(stack([a, b], -1))).toEqual([1, 4, 2, 5, 3, 6]);
    expect(stack([tensor(1), tensor(2)]).shape).toEqual([2]);
    expectError(() => stack([a, tensor([1, 2])]), ShapeError, 'stack expects each tensor to be equal size, but got [3] at entry 0 and [2] at entry 1');
    expectError(() => stack([a, b], 2), ShapeError, 'Dimension out of range');
  });

  it('pad: constant padding of the last dims, a fill value, and negative pads that crop', () => {
    const x = tensor([[1, 2, 3], [4, 5, 6]]);
    const p = pad(x, [1, 2]);
    expect(p.shape).toEqual([2, 6]);
    expect(vals(p)).toEqual([0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0]);
    const q = pad(x, [0, 1, 1, 0], -1);
    expect(q.shape).toEqual([3, 4]);
    expect(vals(q)).toEqual([-1, -1, -1, -1, 1, 2, 3, -1, 4, 5, 6, -1]);
    const crop = pad(x, [-1, 1]);
    expect(crop.shape).toEqual([2, 3]);
    expect(vals(crop)).toEqual([2, 3, 0, 5, 6, 0]);
    expect(vals(pad(x, [-1, -1, 0, -1]))).toEqual([2]);
    expect(pad(tensor([1], { dtype: float16 }), [1, 0], 2049).dtype).toBe(float16);
    expect(vals(pad(tensor([1], { dtype: float16 }), [1, 0], 2049))).toEqual([2048, 1]);
  });

  it('pad errors: odd length, too many pairs, a negative result size', () => {
    const x = zeros([2, 3]);
    expectError(() => pad(x, [1]), ShapeError, 'padding length must be even');
    expectError(() => pad(x, [1, 1, 1, 1, 1, 1]), ShapeError, 'at most 2 × 2');
    expectError(() => pad(x, [-2, -2]), ShapeError, 'resulting size of dimension 1 would be -1');
    expectError(() => pad(x, [0.5, 1]), ShapeError, 'padding must be integers');
  });
});

// ---- softmax ----

describe('softmax / logSoftmax, fused kernels on and off', () => {
  afterEach(() => setFusedKernelsEnabled(true));

  function softmaxRef(data: number[], rows: number, cols: number): { sm: number[]; lsm: number[] } {
    const sm: number[] = [];
    const lsm: number[] = [];
    for (let r = 0; r < rows; r++) {
      const row = data.slice(r * cols, r * cols + cols);
      const m = fmax(row);
      const s = fsum(row.map((v) => Math.exp(v - m)));
      for (const v of row) { sm.push(Math.exp(v - m) / s); lsm.push(v - m - Math.log(s)); }
    }
    return { sm, lsm };
  }

  it('the fused kernel is used when enabled and not when disabled', () => {
    const fused = getBackend('cpu').fused as FusedKernels<unknown>;
    const spy = vi.spyOn(fused, 'softmax');
    try {
      expect(fusedKernelsEnabled()).toBe(true);
      tensor([[1, 2]]).softmax(1);
      expect(spy).toHaveBeenCalledTimes(1);
      setFusedKernelsEnabled(false);
      expect(fusedKernelsEnabled()).toBe(false);
      tensor([[1, 2]]).softmax(1);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('float32: both paths agree within 1e-6, match float64 within 1e-6, and rows sum to 1', () => {
    const data = randomF32(6 * 9, 42, -8, 8);
    const ref = softmaxRef(data, 6, 9);
    const results: Record<string, { sm: number[]; lsm: number[] }> = {};
    for (const on of [true, false]) {
      setFusedKernelsEnabled(on);
      const x = tensor(data).reshape([6, 9]);
      const sm = x.softmax(-1);
      const lsm = x.logSoftmax(1);
      expect(sm.dtype).toBe(float32);
      results[String(on)] = { sm: vals(sm), lsm: vals(lsm) };
      expectClose(vals(sm), ref.sm, { atol: 1e-6, rtol: 1e-6 });
      expectClose(vals(lsm), ref.lsm, { atol: 1e-6, rtol: 1e-6 });
      expectClose(vals(sm.sum(1)), new Array(6).fill(1), { atol: 1e-6 });
      // a transposed (non-contiguous) input
      const xt = tensor(data).reshape([9, 6]).t();
      expectClose(vals(xt.softmax(1)), softmaxRef(vals(xt.contiguous()), 6, 9).sm, { atol: 1e-6, rtol: 1e-6 });
      // along dim 0 = softmax of the transpose
      const t0 = vals(x.softmax(0).t().contiguous());
      const ref0 = softmaxRef(vals(x.t().contiguous()), 9, 6).sm;
      expectClose(t0, ref0, { atol: 1e-6, rtol: 1e-6 });
    }
    expectClose(results.true!.sm, results.false!.sm, { atol: 1e-6 });
    expectClose(results.true!.lsm, results.false!.lsm, { atol: 1e-6 });
  });

  it('float16: both paths agree within 1e-6 (the same f16 values), rows sum to ≈1, dtype kept', () => {
    const data = randomF32(4 * 16, 43, -4, 4).map(roundToFloat16);
    const got: number[][] = [];
    for (const on of [true, false]) {
      setFusedKernelsEnabled(on);
      const sm = tensor(data, { dtype: float16 }).reshape([4, 16]).softmax(1);
      expect(sm.dtype).toBe(float16);
      got.push(vals(sm));
      expectClose(vals(sm.float().sum(1)), new Array(4).fill(1), { atol: 4e-3 });
      expectClose(vals(sm), softmaxRef(data, 4, 16).sm, { atol: 1e-4, rtol: 2 ** -10 });
      const lsm = tensor(data, { dtype: float16 }).reshape([4, 16]).logSoftmax(1);
      got.push(vals(lsm));
    }
    expectClose(got[0]!, got[2]!, { atol: 1e-6 });
    expectClose(got[1]!, got[3]!, { atol: 1e-6 });
  });

  it('large and -inf inputs are stable on both paths; int input is a DTypeError', () => {
    for (const on of [true, false]) {
      setFusedKernelsEnabled(on);
      expectClose(vals(tensor([1000, 1001, -Infinity]).softmax(0)), [1 / (1 + Math.E), Math.E / (1 + Math.E), 0], { atol: 1e-7, rtol: 1e-6 });
      const l = vals(tensor([1000, 1000]).logSoftmax(0));
      expectClose(l, [-Math.LN2, -Math.LN2], { rtol: 1e-6 });
      expect(vals(tensor(3).softmax(0))).toEqual([1]);
    }
    expectError(() => tensor([1, 2], { dtype: int32 }).softmax(0), DTypeError, 'softmax(): expected a floating point tensor, got int32');
    expectError(() => tensor([1, 2]).softmax(1), ShapeError, 'Dimension out of range');
  });
});

// ---- in-place ops ----

describe('logsumexp, a composite of the op table', () => {
  // torch.logsumexp(torch.tensor([[1., 2., 3.], [1000., 1001., -inf]]), 1) in float64: 3.40760596444438, 1001.31326168751822
  it('matches PyTorch, stably for large values, as a method and as a function, keeping or dropping dims', () => {
    const x = tensor([[1, 2, 3], [1000, 1001, -Infinity]], { dtype: float64 });
    expectClose(Array.from(x.logsumexp(1).dataSync()), [3.40760596444438, 1001.31326168751822], { rtol: 1e-12 });
    expect(logsumexp(x, [0, 1], true).shape).toEqual([1, 1]);
    expect(Array.from(logsumexp(x, -1).dataSync())).toEqual(Array.from(x.logsumexp(-1).dataSync()));
    // Empty fibres sum no exps: −Inf, as PyTorch's.
    expect(Array.from(zeros([0, 3]).logsumexp(0).dataSync())).toEqual([-Infinity, -Infinity, -Infinity]);
  });

  it('has the softmax as its gradient', () => {
    const w = tensor([1, 2, 3], { requiresGrad: true });
    w.logsumexp(0).backward();
    const e = [1, 2, 3].map((v) => Math.exp(v));
    expectClose(Array.from(w.grad!.dataSync()), e.map((v) => v / (e[0]! + e[1]! + e[2]!)), { rtol: 1e-6 });
  });

  it('names itself in errors: a dim out of range, or no dim at all', () => {
    const x = tensor([[1, 2], [3, 4]]);
    expectError(() => x.logsumexp(2), ShapeError, 'logsumexp: Dimension out of range (expected to be in range of [-2, 1], but got 2)');
    expectError(() => (x.logsumexp as () => unknown)(), TypeError, "logsumexp(): missing the required argument 'dim'");
    expect(Array.from(x.dataSync())).toEqual([1, 2, 3, 4]);
  });
});

describe('in-place ops and TP-4', () => {
  it("refuses in-place writes into a destination whose elements share memory (an expanded view), before writing, as PyTorch's internal-overlap check", () => {
    const base = zeros([1]);
    const wide = base.expand([4]);
    const src = tensor([1, 2, 3, 4]);
    const message = 'more than one element of the written-to tensor refers to a single memory location';
    expectError(() => wide.add_(src), TensorError, 'add_: unsupported operation', message, 'Please clone()');
    expectError(() => wide.sub_(src), TensorError, 'sub_:', message);
    expectError(() => wide.mul_(src), TensorError, 'mul_:', message);
    expectError(() => wide.div_(src), TensorError, 'div_:', message);
    expectError(() => wide.clamp_(0, 1), TensorError, 'clamp_:', message);
    expectError(() => wide.copy_(src), TensorError, 'copy_:', message);
    expect(Array.from(base.dataSync())).toEqual([0]); // nothing was written
    // Every write of fill_ and zero_ stores the same value: allowed, as in PyTorch.
    wide.fill_(3);
    expect(Array.from(base.dataSync())).toEqual([3]);
    // Size-1 dims with stride 0 hold one element each: no overlap.
    const one = zeros([1, 3]).expand([1, 3]);
    one.add_(tensor([[1, 2, 3]]));
    expect(Array.from(one.dataSync())).toEqual([1, 2, 3]);
    // A clone owns its elements.
    expect(Array.from(wide.clone().add_(src).dataSync())).toEqual([4, 5, 6, 7]);
  });

  it('select() on a 0-dim tensor is a ShapeError, as PyTorch raises', () => {
    expectError(() => tensor(1).select(0, 0), ShapeError, 'select() cannot be applied to a 0-dim tensor.');
  });

  it('add_/sub_/mul_/div_/clamp_/fill_/zero_ change the tensor and return it', () => {
    const x = tensor([[1, 2], [3, 4]]);
    expect(x.add_(tensor([10, 20]))).toBe(x);
    expect(vals(x)).toEqual([11, 22, 13, 24]);
    expect(x.sub_(1, 2)).toBe(x);
    expect(vals(x)).toEqual([9, 20, 11, 22]);
    expect(x.mul_(tensor([[2], [0.5]]))).toBe(x);
    expect(vals(x)).toEqual([18, 40, 5.5, 11]);
    expect(x.div_(2)).toBe(x);
    expect(vals(x)).toEqual([9, 20, 2.75, 5.5]);
    expect(x.clamp_(3, 10)).toBe(x);
    expect(vals(x)).toEqual([9, 10, 3, 5.5]);
    expect(x.fill_(7)).toBe(x);
    expect(vals(x)).toEqual([7, 7, 7, 7]);
    expect(x.zero_()).toBe(x);
    expect(vals(x)).toEqual([0, 0, 0, 0]);
    expect(x.add_(1, 3)).toBe(x);
    expect(vals(x)).toEqual([3, 3, 3, 3]);
  });

  it('TP-4: int32.add_(1.5) → DTypeError "… can\'t be cast to the desired output type …", tensor unchanged', () => {
    const i = tensor([1, 2], { dtype: int32 });
    expectError(() => i.add_(1.5), DTypeError, "result type float32 can't be cast to the desired output type int32");
    expect(vals(i)).toEqual([1, 2]);
    expectError(() => i.div_(2), DTypeError, "can't be cast"); // true division gives float
    expectError(() => i.mul_(tensor([0.5, 1])), DTypeError, "can't be cast");
    expectError(() => i.clamp_(0.5), DTypeError, "can't be cast");
    expect(vals(i)).toEqual([1, 2]);
    const b = tensor([true, false]);
    expectError(() => b.add_(1), DTypeError, "result type int32 can't be cast to the desired output type bool");
    expect(i.add_(3)).toBe(i);
    expect(vals(i)).toEqual([4, 5]);
  });

  it('TP-4: f16.add_(f32) is allowed and stores the rounded value; f32.add_(f64) too', () => {
    const h = tensor([2048, 1], { dtype: float16 });
    h.add_(tensor([1, 3 * 2 ** -11]));
    expect(h.dtype).toBe(float16);
    expect(vals(h)).toEqual([2048, 1.001953125]);
    const f = tensor([1]);
    f.add_(tensor([2 ** -30], { dtype: float64 }));
    expect(f.dtype).toBe(float32);
    expect(vals(f)).toEqual([1]);
  });

  it('failed ops leave their inputs unchanged (broadcast to a bigger shape, shape mismatch)', () => {
    const x = tensor([1, 2, 3]);
    expectError(() => x.add_(ones([2, 3])), TensorError, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    expectError(() => x.mul_(ones([2])), ShapeError, '[3] and [2]');
    expectError(() => x.add(ones([4])), ShapeError);
    expect(vals(x)).toEqual([1, 2, 3]);
  });
});

// ---- reads ----

describe('dataSync / data / toArray / item', () => {
  it('toArray nests by shape (a number for 0-dim), also for non-contiguous views', async () => {
    const x = arange(6).reshape([2, 3]);
    expect(await x.toArray()).toEqual([[0, 1, 2], [3, 4, 5]]);
    expect(await x.t().toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
    expect(await tensor(2.5).toArray()).toBe(2.5);
    expect(await zeros([2, 0]).toArray()).toEqual([[], []]);
    expect(await tensor([1.5, 2049], { dtype: float16, device: 'fake' }).toArray()).toEqual([1.5, 2048]);
  });

  it('dataSync returns the dtype\'s array type (halves decoded to Float32Array) in logical order', () => {
    expect(tensor([1, 2]).dataSync()).toBeInstanceOf(Float32Array);
    expect(tensor([1, 2], { dtype: float64 }).dataSync()).toBeInstanceOf(Float64Array);
    expect(tensor([1, 2], { dtype: int32 }).dataSync()).toBeInstanceOf(Int32Array);
    expect(tensor([true]).dataSync()).toBeInstanceOf(Uint8Array);
    const h = tensor([0.1, 2049], { dtype: float16 }).dataSync();
    expect(h).toBeInstanceOf(Float32Array);
    expect(Array.from(h)).toEqual([roundToFloat16(0.1), 2048]);
    expect(Array.from(arange(6).reshape([2, 3]).t().dataSync())).toEqual([0, 3, 1, 4, 2, 5]);
    expect(Array.from(arange(6).slice(0, 2, 5).dataSync())).toEqual([2, 3, 4]);
    const d = tensor([1, 2]);
    const copy = d.dataSync();
    copy[0] = 100; // a copy: the tensor does not change
    expect(Array.from(d.dataSync())).toEqual([1, 2]);
  });

  it('item() of one element works (any shape); of several elements it throws', async () => {
    expect(await tensor([[4]]).item()).toBe(4);
    expect(await tensor(7, { device: 'fake' }).item()).toBe(7);
    expect(await tensor([1, 2, 3]).sum().item()).toBe(6);
    const e = await tensor([[1, 2, 3], [4, 5, 6]]).item().then(() => null, (err: Error) => err);
    expect(e).toBeInstanceOf(TensorError);
    expect(e!.message).toContain('a Tensor with 6 elements cannot be converted to Scalar');
  });
});

// ---- memory ----

describe('dispose and memoryStats', () => {
  // Free what earlier tests dropped before each count: collect, then allocate once, since core
  // frees collected tensors at the next allocation (which would otherwise land inside a pair).
  beforeEach(() => {
    (globalThis as { gc?: () => void }).gc?.();
    zeros([1]).dispose();
  });

  it('allocations go up by exactly one per new tensor and back down after dispose', () => {
    const before = memoryStats('cpu');
    const t = zeros([100]);
    const mid = memoryStats();
    expect(mid.allocations).toBe(before.allocations + 1);
    expect(mid.allocatedBytes).toBe(before.allocatedBytes + 400);
    const h = zeros([10], { dtype: float16 });
    expect(memoryStats().allocatedBytes).toBe(before.allocatedBytes + 420);
    t.dispose();
    h.dispose();
    expect(t.isDisposed).toBe(true);
    const after = memoryStats('cpu');
    expect(after.allocations).toBe(before.allocations);
    expect(after.allocatedBytes).toBe(before.allocatedBytes);
    t.dispose(); // idempotent
    expect(memoryStats().allocations).toBe(before.allocations);
  });

  it('a tensor-tensor op of one dtype allocates exactly its output', () => {
    const a = ones([8]);
    const b = ones([8]);
    const before = memoryStats();
    const c = a.add(b);
    expect(memoryStats().allocations).toBe(before.allocations + 1);
    c.dispose();
    expect(memoryStats().allocations).toBe(before.allocations);
  });

  it('views keep the storage alive until the last one is disposed; a disposed tensor cannot be used', () => {
    const before = memoryStats();
    const base = zeros([4, 4]);
    const view = base.t();
    base.dispose();
    expect(memoryStats().allocations).toBe(before.allocations + 1);
    expect(Array.from(view.dataSync())).toEqual(new Array(16).fill(0));
    view.dispose();
    expect(memoryStats().allocations).toBe(before.allocations);
    expectError(() => view.add(1), TensorError, 'this tensor was disposed');
    expectError(() => base.dataSync(), TensorError, 'disposed');
  });

  it('dispose() is PyTorch\'s del: the disposed object throws while the memory lives on for the views that share it', () => {
    const before = memoryStats();
    const base = ones([2, 3]);
    const view = base.reshape([6]);
    base.dispose();
    expect(base.isDisposed).toBe(true);
    expect(memoryStats().allocations).toBe(before.allocations + 1);
    for (const use of [() => base.add(1), () => base.dataSync(), () => base.reshape([6]), () => base.t(), () => base.to(float16)]) {
      expectError(use, TensorError, 'this tensor was disposed');
    }
    const sum = view.add(1);
    expect(Array.from(sum.dataSync())).toEqual([2, 2, 2, 2, 2, 2]);
    sum.dispose();
    view.dispose();
    expect(memoryStats().allocations).toBe(before.allocations);
  });

  it('dispose() of a view leaves its base usable, and the memory stays until the base goes too', () => {
    const before = memoryStats();
    const base = ones([4]);
    const view = base.narrow(0, 1, 2);
    view.dispose();
    expectError(() => view.mul(2), TensorError, 'this tensor was disposed');
    expect(Array.from(base.dataSync())).toEqual([1, 1, 1, 1]);
    expect(memoryStats().allocations).toBe(before.allocations + 1);
    base.dispose();
    expect(memoryStats().allocations).toBe(before.allocations);
  });

  it('p.add(g, alpha) and p.sub(g, alpha) run one fused addcmul kernel outside autograd, bit for bit the mul-then-add decomposition', () => {
    const backend = getBackend('cpu');
    const p = randn([1000]);
    const g = randn([1000]);
    const fused = vi.spyOn(backend.fused as FusedKernels<unknown>, 'addcmul');
    const binaryKernel = vi.spyOn(backend.kernels, 'binary');
    try {
      const added = p.add(g, -0.05);
      const subtracted = p.sub(g, 0.3);
      expect(fused).toHaveBeenCalledTimes(2);
      expect(binaryKernel).not.toHaveBeenCalled();
      setFusedKernelsEnabled(false);
      const [addedRef, subtractedRef] = [p.add(g, -0.05), p.sub(g, 0.3)];
      setFusedKernelsEnabled(true);
      expect(binaryKernel).toHaveBeenCalledTimes(4); // the decomposition: a mul and an add (or sub) each
      expect(Array.from(added.dataSync())).toEqual(Array.from(addedRef.dataSync()));
      expect(Array.from(subtracted.dataSync())).toEqual(Array.from(subtractedRef.dataSync()));
      // With autograd recording, the decomposition runs (its backward is the rule for add and mul).
      const w = randn([1000], { requiresGrad: true });
      fused.mockClear();
      w.add(g, 2).sum().backward();
      expect(fused).not.toHaveBeenCalled();
      expect(Array.from(w.grad!.dataSync()).every((v) => v === 1)).toBe(true);
    } finally {
      setFusedKernelsEnabled(true);
      fused.mockRestore();
      binaryKernel.mockRestore();
    }
  });

  it('an in-place update outside autograd leaves nothing allocated behind (p.add_(g, alpha), p.mul_(s))', () => {
    const p = ones([64]);
    const g = ones([64]);
    p.add_(g, -0.5); // warms the cache of scalar operands
    p.mul_(0.9);
    const before = memoryStats();
    p.add_(g, -0.5);
    p.mul_(0.9);
    p.sub_(g);
    expect(memoryStats().allocations).toBe(before.allocations);
    expect(memoryStats().allocatedBytes).toBe(before.allocatedBytes);
  });

  it('memoryStats per device: fake:0 and fake:1 are counted apart', () => {
    const b0 = memoryStats('fake:0');
    const b1 = memoryStats('fake:1');
    const t = zeros([25], { device: 'fake:1' });
    expect(memoryStats('fake:1').allocatedBytes).toBe(b1.allocatedBytes + 100);
    expect(memoryStats('fake:0').allocatedBytes).toBe(b0.allocatedBytes);
    t.dispose();
    expect(memoryStats('fake:1').allocatedBytes).toBe(b1.allocatedBytes);
  });
});

describe('Dimension out of range across ops', () => {
  it('ShapeError "Dimension out of range" from reductions, views, softmax, indexing and joins', () => {
    const x = zeros([2, 3]);
    const fns: Array<() => unknown> = [
      () => x.sum(2), () => x.mean(-3), () => x.argmax(2), () => x.softmax(-3), () => x.transpose(0, 2),
      () => x.unsqueeze(4), () => x.squeeze(2), () => x.select(2, 0), () => x.narrow(-3, 0, 1),
      () => x.flatten(0, 2), () => cat([x, x], 2), () => x.indexSelect(2, tensor([0], { dtype: int32 })),
      () => x.stride(2), () => x.var(5),
    ];
    for (const fn of fns) expectError(fn, ShapeError, 'Dimension out of range');
  });
});
