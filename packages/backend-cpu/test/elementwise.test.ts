import { describe, expect, it } from 'vitest';
import { erf } from '../src/kernels/math.js';
import { f16, K, output, storageBits, storageValues, tensor, values, view } from './helpers.js';

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

describe('unary', () => {
  it('computes float32 ops with exact values where they are exact', () => {
    const x = tensor('float32', [-2.5, -0.5, 0, 0.5, 4]);
    const run = (op: Parameters<typeof K.unary>[0]): number[] => {
      const out = output('float32', [5]);
      K.unary(op, x, out);
      return values(out);
    };
    expect(run('neg')).toEqual([2.5, 0.5, -0, -0.5, -4]);
    expect(run('abs')).toEqual([2.5, 0.5, 0, 0.5, 4]);
    expect(run('sign')).toEqual([-1, -1, 0, 1, 1]);
    expect(run('relu')).toEqual([0, 0, 0, 0.5, 4]);
    expect(run('floor')).toEqual([-3, -1, 0, 0, 4]);
    expect(run('ceil')).toEqual([-2, -0, 0, 1, 4]);
    expect(run('trunc')).toEqual([-2, -0, 0, 0, 4]);
    expect(run('round')).toEqual([-2, -0, 0, 0, 4]);
    expect(run('reciprocal')).toEqual([-0.4, -2, Infinity, 2, 0.25].map(Math.fround));
    expect(run('sqrt').slice(2)).toEqual([0, Math.fround(Math.SQRT1_2), 2]);
    expect(run('sqrt').slice(0, 2)).toEqual([NaN, NaN]);
    expect(run('rsqrt').slice(2)).toEqual([Infinity, Math.fround(Math.SQRT2), 0.5]);
    expect(run('logicalNot')).toEqual([0, 0, 1, 0, 0]);
  });

  it('computes transcendental float32 ops to f32 precision', () => {
    const xs = [-3, -0.75, -1e-3, 0, 1e-3, 0.3, 1.7, 6];
    const x = tensor('float32', xs);
    const refs: [Parameters<typeof K.unary>[0], (v: number) => number][] = [
      ['exp', Math.exp], ['expm1', Math.expm1], ['sin', Math.sin], ['cos', Math.cos], ['tan', Math.tan],
      ['tanh', Math.tanh], ['sigmoid', (v) => 1 / (1 + Math.exp(-v))],
    ];
    for (const [op, ref] of refs) {
      const out = output('float32', [xs.length]);
      K.unary(op, x, out);
      values(out).forEach((got, i) => expect(got, `${op}(${xs[i]})`).toBe(Math.fround(ref(Math.fround(xs[i]!)))));
    }
    const pos = tensor('float32', [1e-3, 0.5, 1, 10]);
    const out = output('float32', [4]);
    K.unary('log', pos, out);
    expect(values(out)).toEqual([1e-3, 0.5, 1, 10].map((v) => Math.fround(Math.log(Math.fround(v)))));
    K.unary('log1p', pos, out);
    expect(values(out)).toEqual([1e-3, 0.5, 1, 10].map((v) => Math.fround(Math.log1p(Math.fround(v)))));
  });

  it('rounds half to even and keeps the sign of zero', () => {
    const x = tensor('float64', [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 2.6, -2.6, -0.2, 2 ** 52 + 1, Infinity, NaN]);
    const out = output('float64', [13]);
    K.unary('round', x, out);
    const got = values(out);
    expect(got).toEqual([0, 2, 2, -0, -2, -2, 0, 3, -3, -0, 2 ** 52 + 1, Infinity, NaN]);
    expect(Object.is(got[3], -0)).toBe(true);
    expect(Object.is(got[0], 0)).toBe(true);
  });

  it('propagates NaN through sign, relu and abs; relu(−0) and sign(−0) are +0', () => {
    const x = tensor('float32', [NaN, -0]);
    const out = output('float32', [2], 7);
    for (const op of ['sign', 'relu', 'abs'] as const) {
      K.unary(op, x, out);
      const [a, b] = values(out);
      expect(a, op).toBeNaN();
      expect(Object.is(b, 0), op).toBe(true);
    }
  });

  it('erf matches reference values to ~1e-15 relative', () => {
    // Reference values from CPython's math.erf.
    const cases: [number, number][] = [
      [1e-10, 1.1283791670955126e-10], [1e-3, 0.0011283787909692363], [0.1, 0.1124629160182849],
      [0.5, 0.5204998778130465], [1, 0.8427007929497149], [1.5, 0.9661051464753108], [2, 0.9953222650189527],
      [2.5, 0.999593047982555], [3, 0.9999779095030014], [4, 0.9999999845827421], [5.5, 0.9999999999999927],
    ];
    for (const [x, e] of cases) {
      expect(Math.abs(erf(x) - e) / e, `erf(${x})`).toBeLessThan(2e-15);
      expect(erf(-x)).toBe(-erf(x));
    }
    expect(erf(0)).toBe(0);
    expect(erf(7)).toBe(1);
    expect(erf(-Infinity)).toBe(-1);
    expect(erf(NaN)).toBeNaN();
    const out = output('float16', [2]);
    K.unary('erf', tensor('float16', [0.5, -1]), out);
    expect(values(out)).toEqual([f16(0.5204998778130465), f16(-0.8427007929497149)]);
  });

  it('wraps int32 neg and abs at INT_MIN and keeps ints for rounding ops', () => {
    const x = tensor('int32', [INT_MIN, -5, 0, 7, INT_MAX]);
    const out = output('int32', [5]);
    K.unary('neg', x, out);
    expect(values(out)).toEqual([INT_MIN, 5, 0, -7, -INT_MAX]);
    K.unary('abs', x, out);
    expect(values(out)).toEqual([INT_MIN, 5, 0, 7, INT_MAX]);
    K.unary('sign', x, out);
    expect(values(out)).toEqual([-1, -1, 0, 1, 1]);
    K.unary('round', x, out);
    expect(values(out)).toEqual([INT_MIN, -5, 0, 7, INT_MAX]);
  });

  it('rejects float ops on int inputs and mismatched dtypes', () => {
    expect(() => K.unary('exp', tensor('int32', [1]), output('int32', [1]))).toThrow(/'exp' does not take int32/);
    expect(() => K.unary('neg', tensor('float32', [1]), output('float16', [1]))).toThrow(/out is float16, expected float32/);
    expect(() => K.unary('neg', tensor('float32', [1, 2]), output('float32', [3]))).toThrow(/shape/);
  });

  it('gives 0/1 bool outputs for logicalNot on any dtype', () => {
    const out = output('bool', [4], 0);
    K.unary('logicalNot', tensor('float32', [0, -0, NaN, 2]), out);
    expect(values(out)).toEqual([1, 1, 0, 0]);
    K.unary('logicalNot', tensor('bool', [1, 0, 0, 1]), out);
    expect(values(out)).toEqual([0, 1, 1, 0]);
    K.unary('floor', tensor('bool', [1, 0, 0, 1]), out); // rounding ops leave bools as they are
    expect(values(out)).toEqual([1, 0, 0, 1]);
    expect(() => K.unary('neg', tensor('bool', [1]), output('bool', [1]))).toThrow(/'neg' does not take bool/);
  });

  it('handles empty and 0-dim tensors', () => {
    const emptyOut = view('float32', [9, 9], [2, 0]);
    K.unary('neg', view('float32', [5, 5], [2, 0]), emptyOut);
    expect(storageValues(emptyOut)).toEqual([9, 9]);
    const scalarOut = view('float32', [0, 0, 0], [], [], 2);
    K.unary('exp', view('float32', [3, 0], [], [], 1), scalarOut);
    expect(storageValues(scalarOut)).toEqual([0, 0, 1]);
  });
});

describe('binary', () => {
  it('rounds float16 once: 2048 + 1 ties to even (2048), 2048 + 3 to 2052', () => {
    const out = output('float16', [3]);
    K.binary('add', tensor('float16', [2048, 2048, 1]), tensor('float16', [1, 3, 2 ** -11]), out);
    expect(values(out)).toEqual([2048, 2052, 1]);
    expect(storageBits(out)).toEqual([0x6800, 0x6802, 0x3c00]);
    K.binary('sub', tensor('float16', [1, 65504, -65504]), tensor('float16', [2 ** -11, -32, 32]), out);
    expect(values(out)).toEqual([1 - 2 ** -11, Infinity, -Infinity]); // 65536 rounds to Inf in f16
  });

  it('rounds bfloat16 to nearest even, compared as bit patterns', () => {
    const out = output('bfloat16', [4]);
    K.binary('add', tensor('bfloat16', [1, 1, 1, 256]), tensor('bfloat16', [2 ** -8, 3 * 2 ** -8, 2 ** -7, 1]), out);
    expect(storageBits(out)).toEqual([0x3f80, 0x3f82, 0x3f81, 0x4380]);
    const prod = output('bfloat16', [3]);
    K.binary('mul', tensor('bfloat16', [3, 1e38, -0]), tensor('bfloat16', [1 / 3, 10, 5]), prod);
    // 3 · bf16(1/3) = 3 · 0.333984375 = 1.001953125 → 1.0; 1e38·10 overflows; −0·5 = −0.
    expect(storageBits(prod)).toEqual([0x3f80, 0x7f80, 0x8000]);
  });

  it('computes float32 arithmetic exactly as f32', () => {
    const a = [0.1, 1e30, 16777216, 1 / 3];
    const b = [0.2, 1e-30, 1, 3];
    const out = output('float32', [4]);
    for (const [op, f] of [['add', (x: number, y: number) => x + y], ['sub', (x: number, y: number) => x - y],
      ['mul', (x: number, y: number) => x * y], ['div', (x: number, y: number) => x / y]] as const) {
      K.binary(op, tensor('float32', a), tensor('float32', b), out);
      expect(values(out), op).toEqual(a.map((x, i) => Math.fround(f(Math.fround(x), Math.fround(b[i]!)))));
    }
    const one = output('float32', [1]);
    K.binary('add', tensor('float32', [16777216]), tensor('float32', [1]), one);
    expect(values(one)).toEqual([16777216]); // 2^24 + 1 is not an f32
  });

  it('propagates NaN through maximum and minimum from either side', () => {
    const a = tensor('float32', [NaN, 1, 3, -Infinity]);
    const b = tensor('float32', [1, NaN, 2, 5]);
    const out = output('float32', [4]);
    K.binary('maximum', a, b, out);
    expect(values(out)).toEqual([NaN, NaN, 3, 5]);
    K.binary('minimum', a, b, out);
    expect(values(out)).toEqual([NaN, NaN, 2, -Infinity]);
    K.binary('add', a, b, out);
    expect(values(out).slice(0, 2)).toEqual([NaN, NaN]);
  });

  it('wraps int32 add, sub and mul like C', () => {
    const out = output('int32', [4]);
    K.binary('add', tensor('int32', [INT_MAX, INT_MIN, -1, 5]), tensor('int32', [1, -1, INT_MIN, -7]), out);
    expect(values(out)).toEqual([INT_MIN, INT_MAX, INT_MAX, -2]);
    K.binary('sub', tensor('int32', [INT_MIN, INT_MAX, 0, 3]), tensor('int32', [1, -1, INT_MIN, 10]), out);
    expect(values(out)).toEqual([INT_MAX, INT_MIN, INT_MIN, -7]);
    K.binary('mul', tensor('int32', [65536, INT_MAX, 123456789, -3]), tensor('int32', [65536, 2, 987654321, 7]), out);
    expect(values(out)).toEqual([0, -2, Math.imul(123456789, 987654321), -21]);
    expect(values(out)[2]).toBe(-67153019);
  });

  it('follows Python sign rules for remainder', () => {
    const out = output('int32', [5]);
    K.binary('remainder', tensor('int32', [7, -7, 7, -7, INT_MIN]), tensor('int32', [3, 3, -3, -3, -1]), out);
    expect(values(out)).toEqual([1, 2, -2, -1, 0]);
    expect(() => K.binary('remainder', tensor('int32', [1]), tensor('int32', [0]), output('int32', [1]))).toThrow(/division by zero/);
    const fout = output('float32', [5]);
    K.binary('remainder', tensor('float32', [5.5, -5.5, 5.5, -5.5, 1]), tensor('float32', [2, 2, -2, -2, 0]), fout);
    expect(values(fout)).toEqual([1.5, 0.5, -0.5, -1.5, NaN]);
  });

  it('computes integer powers with wraparound and PyTorch rules for negative exponents', () => {
    const out = output('int32', [8]);
    K.binary('pow', tensor('int32', [3, 2, -2, 2, 1, -1, 0, 7]), tensor('int32', [4, 31, 3, -1, -5, -3, 0, 12]), out);
    // 7^12 = 13841287201 = 3·2^32 + 956385313.
    expect(values(out)).toEqual([81, INT_MIN, -8, 0, 1, -1, 1, 956385313]);
  });

  it("uses C's pow for floats: 1^NaN = 1, (−1)^Inf = 1", () => {
    const out = output('float64', [4]);
    K.binary('pow', tensor('float64', [1, -1, 2, NaN]), tensor('float64', [NaN, Infinity, 0.5, 0]), out);
    expect(values(out)).toEqual([1, 1, Math.SQRT2, 1]);
  });

  it('computes atan2 and logical ops (0/1 into a bool out)', () => {
    const out = output('float32', [2]);
    K.binary('atan2', tensor('float32', [1, -1]), tensor('float32', [-1, 0]), out);
    expect(values(out)).toEqual([Math.fround((3 * Math.PI) / 4), Math.fround(-Math.PI / 2)]);
    const b = output('bool', [4], 0);
    K.binary('logicalAnd', tensor('float32', [0, NaN, 2, -0]), tensor('float32', [1, 1, 3, 0]), b);
    expect(values(b)).toEqual([0, 1, 1, 0]);
    K.binary('logicalOr', tensor('float32', [0, NaN, 0, -0]), tensor('float32', [0, 0, 3, 0]), b);
    expect(values(b)).toEqual([0, 1, 1, 0]);
    K.binary('add', tensor('bool', [1, 1, 0, 0]), tensor('bool', [1, 0, 1, 0]), b);
    expect(values(b)).toEqual([1, 1, 1, 0]);
  });

  it('reads transposed, broadcast and offset inputs and writes a strided output', () => {
    // a: the 2×3 transpose of the 3×2 storage [[1, 2], [3, 4], [5, 6]] → [[1, 3, 5], [2, 4, 6]].
    const a = view('float32', [1, 2, 3, 4, 5, 6], [2, 3], [1, 2]);
    // b: the row [10, 20, 30] at offset 1, broadcast over 2 rows (stride 0).
    const b = view('float32', [-1, 10, 20, 30], [2, 3], [0, 1], 1);
    // out: every other element of a 14-element storage, starting at 1, rows 7 apart.
    const out = view('float32', new Array<number>(14).fill(-9), [2, 3], [7, 2], 1);
    K.binary('add', a, b, out);
    expect(values(out)).toEqual([11, 23, 35, 12, 24, 36]);
    expect(storageValues(out)).toEqual([-9, 11, -9, 23, -9, 35, -9, -9, 12, -9, 24, -9, 36, -9]);
  });

  it('writes half outputs through strided views', () => {
    const a = view('float16', [1, 2, 3, 4], [2, 2], [1, 2]); // [[1, 3], [2, 4]]
    const out = view('float16', [0, 0, 0, 0, 0], [2, 2], [-2, 1], 3); // rows written bottom-up
    K.binary('mul', a, tensor('float16', [0.1, 0.1, 0.1, 0.1], [2, 2]), out);
    const tenth = f16(0.1);
    expect(storageValues(out)).toEqual([0, f16(2 * tenth), f16(4 * tenth), tenth, f16(3 * tenth)]);
  });

  it('handles 0-dim operands and rejects dtype mismatches', () => {
    const out = view('float64', [0], [], []);
    K.binary('div', view('float64', [1], [], []), view('float64', [4], [], []), out);
    expect(storageValues(out)).toEqual([0.25]);
    expect(() => K.binary('add', tensor('float32', [1]), tensor('float16', [1]), output('float32', [1]))).toThrow(/b is float16/);
    expect(() => K.binary('div', tensor('int32', [1]), tensor('int32', [1]), output('int32', [1]))).toThrow(/'div' does not take int32/);
  });
});

describe('compare', () => {
  it('treats NaN as unequal to everything and -0 as equal to 0', () => {
    const a = tensor('float32', [NaN, NaN, 1, -0, 2]);
    const b = tensor('float32', [NaN, 1, 1, 0, 3]);
    const out = output('bool', [5], 0);
    const run = (op: Parameters<typeof K.compare>[0]): number[] => {
      K.compare(op, a, b, out);
      return values(out);
    };
    expect(run('eq')).toEqual([0, 0, 1, 1, 0]);
    expect(run('ne')).toEqual([1, 1, 0, 0, 1]);
    expect(run('lt')).toEqual([0, 0, 0, 0, 1]);
    expect(run('le')).toEqual([0, 0, 1, 1, 1]);
    expect(run('gt')).toEqual([0, 0, 0, 0, 0]);
    expect(run('ge')).toEqual([0, 0, 1, 1, 0]);
  });

  it('compares broadcast int32 and bfloat16 inputs', () => {
    const out = output('bool', [2, 2], 0);
    K.compare('gt', tensor('int32', [1, 5, -3, 9], [2, 2]), view('int32', [2, 0], [2, 2], [0, 1]), out);
    expect(values(out)).toEqual([0, 1, 0, 1]);
    const bout = output('bool', [2], 0);
    K.compare('eq', tensor('bfloat16', [1 + 2 ** -7, 3]), tensor('bfloat16', [1, 3]), bout);
    expect(values(bout)).toEqual([0, 1]);
  });
});

describe('where', () => {
  it('selects with a broadcast condition and keeps half bit patterns', () => {
    const cond = view('bool', [1, 0], [2, 2], [0, 1]); // [[1, 0], [1, 0]]
    const a = view('float16', [0], [2, 2], [0, 0]);
    const b = view('float16', [0], [2, 2], [0, 0]);
    a.storage.data[0] = 0x7e01; // a NaN with a payload
    b.storage.data[0] = 0x8000; // −0
    const out = output('float16', [2, 2]);
    K.where(cond, a, b, out);
    expect(storageBits(out)).toEqual([0x7e01, 0x8000, 0x7e01, 0x8000]);
  });

  it('writes a strided output', () => {
    const out = view('int32', [0, 0, 0, 0, 0, 0], [3], [2], 1);
    K.where(tensor('bool', [0, 1, 1]), tensor('int32', [1, 2, 3]), tensor('int32', [-1, -2, -3]), out);
    expect(storageValues(out)).toEqual([0, -1, 0, 2, 0, 3]);
  });
});
