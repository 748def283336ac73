import { describe, expect, it } from 'vitest';
import { K, output, storageValues, tensor, values, view } from './helpers.js';

const iota = (n: number): number[] => [...Array(n).keys()];
const x234 = (): ReturnType<typeof tensor> => tensor('float32', iota(24), [2, 3, 4]); // x[a][b][d] = 12a + 4b + d

describe('reduce', () => {
  it('sums over one axis, several axes, all axes and none', () => {
    let out = output('float32', [1, 3, 4]);
    K.reduce('sum', x234(), [0], out, 'float32');
    expect(values(out)).toEqual(iota(12).map((i) => 12 + 2 * i));

    out = output('float32', [2, 1, 4]);
    K.reduce('sum', x234(), [1], out, 'float32');
    expect(values(out)).toEqual([0, 1].flatMap((a) => iota(4).map((d) => 36 * a + 12 + 3 * d)));

    out = output('float32', [1, 3, 1]);
    K.reduce('sum', x234(), [2, 0], out, 'float32');
    expect(values(out)).toEqual([60, 92, 124]);

    out = output('float32', [1, 1, 1]);
    K.reduce('sum', x234(), [0, 1, 2], out, 'float32');
    expect(values(out)).toEqual([276]);

    out = output('float32', [2, 3, 4]);
    K.reduce('sum', x234(), [], out, 'float32');
    expect(values(out)).toEqual(iota(24));
  });

  it('reduces a transposed view into a strided output', () => {
    // The 3×2 transpose of [[1, 2, 3], [4, 5, 6]] summed over axis 0: [6, 15].
    const x = view('float64', [1, 2, 3, 4, 5, 6], [3, 2], [1, 3]);
    const out = view('float64', [0, 0, 0, 0], [1, 2], [4, 2], 1);
    K.reduce('sum', x, [0], out, 'float64');
    expect(storageValues(out)).toEqual([0, 6, 0, 15]);
    const p = output('float64', [3, 1]);
    K.reduce('prod', x, [1], p, 'float64');
    expect(values(p)).toEqual([4, 10, 18]);
  });

  it('gives the identity for empty reductions and nothing for empty outputs', () => {
    const x = view('float32', [5], [2, 0], [0, 1]);
    const s = output('float32', [2, 1]);
    K.reduce('sum', x, [1], s, 'float32');
    expect(values(s)).toEqual([0, 0]);
    K.reduce('prod', x, [1], s, 'float32');
    expect(values(s)).toEqual([1, 1]);
    const all = output('int32', [1, 1]);
    K.reduce('sum', view('int32', [5], [2, 0], [0, 1]), [0, 1], all, 'int32');
    expect(values(all)).toEqual([0]);
    expect(() => K.reduce('max', x, [1], s, 'float32')).toThrow(/empty axis/);
    const none = view('float32', [7], [0, 1], [1, 1]);
    K.reduce('max', view('float32', [1], [0, 3], [3, 1]), [1], none, 'float32');
    expect(storageValues(none)).toEqual([7]);
  });

  it('accumulates in the accumulate dtype and rounds once into out', () => {
    const big = tensor('float32', [16777216, 1, 1, 1, 1]);
    const o32 = output('float32', [1]);
    K.reduce('sum', big, [0], o32, 'float32');
    expect(values(o32)).toEqual([16777216]); // every +1 ties back to 2^24 in f32
    K.reduce('sum', big, [0], o32, 'float64');
    expect(values(o32)).toEqual([16777220]);

    const ones = tensor('float16', new Array<number>(4096).fill(1));
    const o16 = output('float16', [1]);
    K.reduce('sum', ones, [0], o16, 'float32');
    expect(values(o16)).toEqual([4096]);
    K.reduce('sum', ones, [0], o16, 'float16');
    expect(values(o16)).toEqual([2048]); // an f16 accumulator stops at 2048
    const ob = output('bfloat16', [1]);
    K.reduce('sum', tensor('bfloat16', [256, 1, 1]), [0], ob, 'float32');
    expect(values(ob)).toEqual([258]); // a bf16 accumulator would give 256 (257 ties to even)
  });

  it('wraps int32 sums and products', () => {
    const out = output('int32', [1]);
    K.reduce('sum', tensor('int32', [2 ** 31 - 1, 1, 1]), [0], out, 'int32');
    expect(values(out)).toEqual([-(2 ** 31) + 1]);
    K.reduce('prod', tensor('int32', [65536, 65536, 3]), [0], out, 'int32');
    expect(values(out)).toEqual([0]);
    K.reduce('prod', tensor('int32', [46341, 46341]), [0], out, 'int32');
    expect(values(out)).toEqual([-2147479015]); // 46341² = 2147488281 − 2^32
    K.reduce('sum', tensor('bool', [1, 0, 1, 1]), [0], out, 'int32');
    expect(values(out)).toEqual([3]);
  });

  it('propagates NaN through max and min, and handles ints and infinities', () => {
    const x = tensor('float32', [1, NaN, 3, -Infinity, 2, 5], [2, 3]);
    const out = output('float32', [2, 1]);
    K.reduce('max', x, [1], out, 'float32');
    expect(values(out)).toEqual([NaN, 5]);
    K.reduce('min', x, [1], out, 'float32');
    expect(values(out)).toEqual([NaN, -Infinity]);
    const cols = output('float32', [1, 3]);
    K.reduce('max', x, [0], cols, 'float32');
    expect(values(cols)).toEqual([1, NaN, 5]);
    const i = output('int32', [1]);
    K.reduce('min', tensor('int32', [4, -(2 ** 31), 7]), [0], i, 'int32');
    expect(values(i)).toEqual([-(2 ** 31)]);
    const one = output('float32', [1], 0);
    K.reduce('sum', tensor('float32', [1, NaN]), [0], one, 'float32');
    expect(values(one)[0]).toBeNaN();
  });

  it('reduces 0-dim tensors and rejects a wrong out shape', () => {
    const out = view('float32', [0], [], []);
    K.reduce('sum', view('float32', [2.5], [], []), [], out, 'float32');
    expect(storageValues(out)).toEqual([2.5]);
    expect(() => K.reduce('sum', x234(), [1], output('float32', [2, 4]), 'float32')).toThrow(/expected \[2, 1, 4\]/);
    expect(() => K.reduce('sum', x234(), [3], output('float32', [2, 3, 4]), 'float32')).toThrow(/out of range/);
  });
});

describe('argReduce', () => {
  it('returns the first index of the max or min', () => {
    const out = output('int32', [1]);
    K.argReduce('argmax', tensor('float32', [1, 3, 3, 2]), 0, out);
    expect(values(out)).toEqual([1]);
    K.argReduce('argmin', tensor('float32', [2, 1, 5, 1]), 0, out);
    expect(values(out)).toEqual([1]);
    K.argReduce('argmax', tensor('float32', [-Infinity, -Infinity]), 0, out);
    expect(values(out)).toEqual([0]);
    K.argReduce('argmin', tensor('int32', [0, -(2 ** 31), -(2 ** 31)]), 0, out);
    expect(values(out)).toEqual([1]);
  });

  it('treats the first NaN as both the max and the min', () => {
    const out = output('int32', [1]);
    K.argReduce('argmax', tensor('float32', [1, 9, NaN, 5, NaN]), 0, out);
    expect(values(out)).toEqual([2]);
    K.argReduce('argmin', tensor('float32', [1, -9, NaN, NaN]), 0, out);
    expect(values(out)).toEqual([2]);
    K.argReduce('argmax', tensor('float16', [NaN, 7]), 0, out);
    expect(values(out)).toEqual([0]);
  });

  it('reduces along any axis of a strided view', () => {
    // x[a][b] over a 2×3: [[3, 1, 4], [1, 5, 9]] stored transposed.
    const x = view('float64', [3, 1, 1, 5, 4, 9], [2, 3], [1, 2]);
    const rows = output('int32', [2, 1]);
    K.argReduce('argmax', x, 1, rows);
    expect(values(rows)).toEqual([2, 2]);
    K.argReduce('argmin', x, -1, rows);
    expect(values(rows)).toEqual([1, 0]);
    const cols = output('int32', [1, 3]);
    K.argReduce('argmax', x, 0, cols);
    expect(values(cols)).toEqual([0, 1, 1]);
  });

  it('handles 0-dim input and rejects a non-int32 out', () => {
    const out = view('int32', [5], [], []);
    K.argReduce('argmax', view('float32', [3], [], []), 0, out);
    expect(storageValues(out)).toEqual([0]);
    expect(() => K.argReduce('argmax', tensor('float32', [1]), 0, output('float32', [1]))).toThrow(/int32/);
  });
});
