// The contract 1.3.0 kernels in TypeScript: argsort, cumulative and scatter on strided views, with
// the details core never shows (0-dim views, strided outputs, rounding per step, range checks).
import { describe, expect, it } from 'vitest';
import { K, output, storageValues, tensor, values, view } from './helpers.js';

describe('argsort', () => {
  it('writes the stable order of each fibre into a strided out: NaN largest, −0 equal to +0', () => {
    // x = [[2, NaN, −0, 0, 2], [1, 1, −1, NaN, NaN]] stored transposed.
    const x = view('float32', [2, 1, NaN, 1, -0, -1, 0, NaN, 2, NaN], [2, 5], [1, 2]);
    const out = view('int32', new Array<number>(20).fill(-9), [2, 5], [10, 2], 1);
    K.argsort!(x, 1, false, out);
    expect(values(out)).toEqual([2, 3, 0, 4, 1, 2, 0, 1, 3, 4]);
    K.argsort!(x, -1, true, out);
    expect(values(out)).toEqual([1, 0, 4, 2, 3, 3, 4, 0, 1, 2]);
    expect(storageValues(out).filter((v) => v === -9)).toHaveLength(10); // the skipped elements are untouched
  });

  it('sorts a 0-dim view as one element, and int32 and bool by value', () => {
    const zero = output('int32', [], 5);
    K.argsort!(tensor('float32', [3], []), 0, true, zero);
    expect(values(zero)).toEqual([0]);
    const ints = output('int32', [4]);
    K.argsort!(tensor('int32', [7, -2147483648, 2147483647, 7]), 0, false, ints);
    expect(values(ints)).toEqual([1, 0, 3, 2]);
    const bools = output('int32', [3]);
    K.argsort!(tensor('bool', [1, 0, 1]), 0, true, bools);
    expect(values(bools)).toEqual([0, 2, 1]);
  });
});

describe('cumulative', () => {
  it('runs along a dim of a transposed view; float32 rounds at each step, float64 not', () => {
    const big = 2 ** 24;
    const x32 = view('float32', [big, 1, 1, 1, 1, 1], [3, 2], [1, 3]); // [[2^24, 1], [1, 1], [1, 1]]
    const out32 = output('float32', [3, 2]);
    K.cumulative!('cumsum', x32, 0, out32, 'float32');
    expect(values(out32)).toEqual([big, 1, big, 2, big, 3]); // 2^24 + 1 rounds back to 2^24 in f32
    const x64 = view('float64', [big, 1, 1, 1, 1, 1], [3, 2], [1, 3]);
    const out64 = output('float64', [3, 2]);
    K.cumulative!('cumsum', x64, 0, out64, 'float64');
    expect(values(out64)).toEqual([big, 1, big + 1, 2, big + 2, 3]);
  });

  it('int32 products wrap; half types keep an f32 running value and round each output once', () => {
    const p = output('int32', [3]);
    K.cumulative!('cumprod', tensor('int32', [65536, 65536, 5]), 0, p, 'int32');
    expect(values(p)).toEqual([65536, 0, 0]);
    // 2048 + 1 + 1 in half steps would stay 2048; an f32 running value reaches 2050 (a half value).
    const h = output('float16', [3]);
    K.cumulative!('cumsum', tensor('float16', [2048, 1, 1]), 0, h, 'float32');
    expect(values(h)).toEqual([2048, 2048, 2050]);
    expect(() => K.cumulative!('cumsum', tensor('float16', [1, 2, 3]), 0, h, 'float16')).toThrow('cpu cumsum: cannot accumulate in float16');
  });
});

describe('scatter', () => {
  it('applies contributions in index order: assign keeps the last, prod rounds per step', () => {
    const out = tensor('float32', [0, 0, 0, 0]);
    K.scatter!(out, 0, tensor('int32', [1, 3, 1]), tensor('float32', [5, 6, 7]), 'assign');
    expect(values(out)).toEqual([0, 7, 0, 6]);
    // bfloat16: (1 + 2^-7)^3 rounded at every step.
    const b = tensor('bfloat16', [1]);
    K.scatter!(b, 0, tensor('int32', [0, 0, 0]), tensor('bfloat16', [1.0078125, 1.0078125, 1.0078125]), 'prod');
    let step = 1;
    for (let k = 0; k < 3; k++) step = values(tensor('bfloat16', [step * 1.0078125]))[0]!;
    expect(values(b)).toEqual([step]);
  });

  it('amax and amin propagate NaN; bool prod, amax and amin are AND, OR and AND', () => {
    const f = tensor('float32', [1, 5]);
    K.scatter!(f, 0, tensor('int32', [0, 1]), tensor('float32', [NaN, 2]), 'amax');
    expect(values(f)).toEqual([NaN, 5]);
    for (const [mode, expected] of [['prod', [0, 1]], ['amax', [1, 1]], ['amin', [0, 1]]] as const) {
      const t = tensor('bool', [1, 1]);
      K.scatter!(t, 0, tensor('int32', [0, 0]), tensor('bool', [0, 1]), mode);
      expect(values(t)).toEqual(expected);
    }
  });

  it('an index out of range throws before anything past it is written', () => {
    const out = view('float32', [1, 2, 3, 4], [2], [1], 0);
    expect(() => K.scatter!(out, 0, tensor('int32', [1, 2]), tensor('float32', [8, 9]), 'assign')).toThrow('cpu scatter: index 2 is out of bounds for dimension 0 with size 2');
    expect(storageValues(out)).toEqual([1, 8, 3, 4]);
  });
});
