// The oracle checked on its own: known values from outside this codebase (Random123's Philox
// known-answer vectors, erf tables, PyTorch's worked values) and independent re-derivations.
import { describe, expect, it } from 'vitest';
import { float32ToFloat16Bits, float16BitsToNumber } from '@core/tensor';
import { oracle } from '../src/index.js';

describe('Philox4x32-10', () => {
  it('matches the Random123 known-answer vectors', () => {
    const hex = (ws: number[]) => ws.map((w) => w.toString(16).padStart(8, '0'));
    expect(hex(oracle.philoxBlock([0, 0, 0, 0], [0, 0]))).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
    expect(hex(oracle.philoxBlock([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff]))).toEqual(['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd']);
    expect(hex(oracle.philoxBlock([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]))).toEqual(['d16cfe09', '94fdcceb', '5001e420', '24126ea1']);
  });
  it('lays elements out four to a block, with a carry into the second counter word', () => {
    const words = oracle.philoxWords([1, 2], 2 ** 32 - 1, 8);
    expect(words.slice(0, 4)).toEqual(oracle.philoxBlock([0xffffffff, 0, 0, 0], [1, 2]));
    expect(words.slice(4)).toEqual(oracle.philoxBlock([0, 1, 0, 0], [1, 2]));
  });
  it('maps words to uniform and randint values exactly', () => {
    expect(oracle.uniformFromWord(0xffffffff)).toBe(1 - 2 ** -24);
    expect(oracle.uniformFromWord(0xff)).toBe(0);
    expect(oracle.randintFromWord(0xffffffff, -(2 ** 31), 2 ** 31)).toBe(2 ** 31 - 1);
    expect(oracle.randintFromWord(0x80000000, 0, 10)).toBe(5);
  });
});

describe('scalar definitions', () => {
  it('erf matches tabulated values', () => {
    const table: Array<[number, number]> = [[0.5, 0.5204998778130465], [1, 0.8427007929497149], [2, 0.9953222650189527], [3, 0.9999779095030014], [4.5, 0.9999999998033839]];
    for (const [x, v] of table) {
      expect(Math.abs(oracle.erf(x) - v)).toBeLessThan(2e-16 * 8);
      expect(oracle.erf(-x)).toBe(-oracle.erf(x));
    }
    expect(Object.is(oracle.erf(-0), -0)).toBe(true);
  });
  it('rounds half to even and keeps the sign of zero', () => {
    expect([0.5, 1.5, 2.5, -0.5, -2.5, 2.4999999999999996].map(oracle.roundHalfEven)).toEqual([0, 2, 2, -0, -2, 2]);
    expect(Object.is(oracle.roundHalfEven(-0.4), -0)).toBe(true);
  });
  it("uses C's pow and Python's modulo", () => {
    expect(oracle.cPow(1, NaN)).toBe(1);
    expect(oracle.cPow(-1, Infinity)).toBe(1);
    expect(oracle.cPow(NaN, 0)).toBe(1);
    expect(oracle.pyRemainder(-7, 3)).toBe(2);
    expect(oracle.pyRemainder(7, -3)).toBe(-2);
  });
});

describe('rounding', () => {
  it("agrees with an arithmetic round-to-nearest-even for every f16 midpoint and its neighbours", () => {
    // Independent of the library's bit manipulation: scale into the integer grid and round there.
    const grid = (v: number) => {
      const e = Math.max(Math.floor(Math.log2(Math.abs(v))), -14);
      const ulp = 2 ** (e - 10);
      const q = v / ulp;
      const f = Math.floor(q);
      const r = q - f < 0.5 ? f : q - f > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
      return r * ulp;
    };
    for (let h = 1; h < 0x7bff; h += 7) {
      const a = float16BitsToNumber(h);
      const b = float16BitsToNumber(h + 1);
      for (const v of [a, (a + b) / 2, a + (b - a) / 4, a + (3 * (b - a)) / 4]) {
        expect(oracle.roundTo('float16', v)).toBe(grid(v));
        expect(float16BitsToNumber(float32ToFloat16Bits(v))).toBe(grid(v));
      }
    }
  });
  it('rounds f64 through f32 (RND-7) and stores half results via f32 (TP-6)', () => {
    expect(oracle.roundTo('float16', 1 + 2 ** -11 + 2 ** -40)).toBe(1);
    expect(oracle.storeResult('float16', 2049)).toBe(2048);
    expect(oracle.roundTo('int32', -0.7)).toBe(0);
    expect(oracle.roundTo('bool', NaN)).toBe(1);
  });
  it("promotes like PyTorch's promoteTypes (TP-1)", () => {
    expect(oracle.promote('float16', 'bfloat16')).toBe('float32');
    expect(oracle.promote('int32', 'float16')).toBe('float16');
    expect(oracle.promote('bool', 'int32')).toBe('int32');
    expect(oracle.promote('bfloat16', 'float64')).toBe('float64');
  });
});

describe('array ops', () => {
  const { nd } = oracle;
  it('matmul by rank, with broadcast batches', () => {
    const a = nd([2, 3], [1, 2, 3, 4, 5, 6]);
    const b = nd([3, 2], [1, 0, 0, 1, 1, 1]);
    expect(Array.from(oracle.ops.matmul(a, b).value.data)).toEqual([4, 5, 10, 11]);
    expect(oracle.ops.matmul(nd([3], [1, 2, 3]), nd([3], [1, 1, 1])).value.shape).toEqual([]);
    expect(oracle.ops.matmul(nd([4, 1, 2, 3]), nd([5, 3, 2])).value.shape).toEqual([4, 5, 2, 2]);
  });
  it('softmax rows sum to one and handle masked entries', () => {
    const y = oracle.ops.softmax(nd([2, 3], [1, 2, 3, -Infinity, 0, 0]), 1, false);
    expect(y.data[0]! + y.data[1]! + y.data[2]!).toBeCloseTo(1, 15);
    expect(Array.from(y.data.slice(3))).toEqual([0, 0.5, 0.5]);
  });
  it('scatterAdd counts contributions for the tolerance', () => {
    const r = oracle.ops.scatterAdd(nd([3], [0, 0, 0]), 0, nd([4], [1, 1, 1, 2]), nd([4], [1, 2, 3, 4]));
    expect(Array.from(r.value.data)).toEqual([0, 6, 4]);
    expect(r.length).toBe(4);
  });
});

describe('numeric gradients', () => {
  it('match analytic gradients of smooth functions to ~1e-10', () => {
    const x = oracle.nd([3], [0.3, -1.2, 2]);
    const w = oracle.nd([3], [1, -0.5, 2]);
    const [g] = oracle.numericGradients(([t]) => oracle.map(t!, (v) => Math.sin(v) * v), [x], w, [true]);
    x.data.forEach((v, i) => expect(Math.abs(g!.data[i]! - w.data[i]! * (Math.cos(v) * v + Math.sin(v)))).toBeLessThan(1e-10));
  });
});

describe('optimizer worked values (OPT-6, OPT-9)', () => {
  const run = (step: (p: Float64Array, g: Float64Array) => void, steps: number) => {
    const p = new Float64Array([1]);
    const out: number[] = [];
    for (let i = 0; i < steps; i++) { step(p, new Float64Array([0.5])); out.push(p[0]!); }
    return out;
  };
  it('SGD', () => {
    const s = {};
    const a = run((p, g) => oracle.sgdStep(p, g, { lr: 0.1, momentum: 0.9, weightDecay: 0.1 }, s), 2);
    expect(a[0]).toBeCloseTo(0.94, 12);
    expect(a[1]).toBeCloseTo(0.8266, 12);
  });
  it('Adam and AdamW', () => {
    const st = oracle.newAdamState(1);
    const a = run((p, g) => oracle.adamStep(p, g, { lr: 0.1 }, st), 2);
    expect(a[0]).toBeCloseTo(0.900000002, 9);
    expect(a[1]).toBeCloseTo(0.800000004, 9);
    const w = run((p, g) => oracle.adamStep(p, g, { lr: 0.1, weightDecay: 1e-2, decoupled: true }, oracle.newAdamState(1)), 1);
    expect(w[0]).toBeCloseTo(0.899000002, 9);
  });
});
