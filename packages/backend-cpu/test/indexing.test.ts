import { describe, expect, it } from 'vitest';
import { K, output, storageBits, storageValues, tensor, values, view } from './helpers.js';

const iota = (n: number): number[] => [...Array(n).keys()];

describe('gather', () => {
  it('gathers along each dim of a 3-d tensor', () => {
    const x = tensor('float32', iota(24), [2, 3, 4]); // x[a][b][d] = 12a + 4b + d
    // dim 1: index [2, 2, 4]
    const i1 = [2, 0, 1, 2, 1, 1, 0, 0, /* a=1 */ 0, 2, 2, 1, 1, 0, 2, 2];
    const out1 = output('float32', [2, 2, 4]);
    K.gather(x, 1, tensor('int32', i1, [2, 2, 4]), out1);
    expect(values(out1)).toEqual(i1.map((idx, n) => 12 * Math.floor(n / 8) + 4 * idx + (n % 4)));
    // dim 0: index [1, 3, 2]
    const i0 = [1, 0, 1, 1, 0, 0];
    const out0 = output('float32', [1, 3, 2]);
    K.gather(x, 0, tensor('int32', i0, [1, 3, 2]), out0);
    expect(values(out0)).toEqual(i0.map((idx, n) => 12 * idx + 4 * Math.floor(n / 2) + (n % 2)));
    // dim 2 (as −1): index [2, 3, 1]
    const i2 = [3, 0, 2, 1, 1, 3];
    const out2 = output('float32', [2, 3, 1]);
    K.gather(x, -1, tensor('int32', i2, [2, 3, 1]), out2);
    expect(values(out2)).toEqual(i2.map((idx, n) => 4 * n + idx));
  });

  it('reads a transposed x, a broadcast index and writes a strided out', () => {
    // x is the 3×2 transpose of [[10, 20, 30], [40, 50, 60]]: x = [[10, 40], [20, 50], [30, 60]].
    const x = view('int32', [10, 20, 30, 40, 50, 60], [3, 2], [1, 3]);
    const index = view('int32', [1, 0, 1], [3, 2], [0, 1], 1); // every row is [0, 1]
    const out = view('int32', new Array<number>(12).fill(-1), [3, 2], [4, 2], 0);
    K.gather(x, 1, index, out);
    expect(values(out)).toEqual([10, 40, 20, 50, 30, 60]);
    expect(storageValues(out)).toEqual([10, -1, 40, -1, 20, -1, 50, -1, 30, -1, 60, -1]);
  });

  it('accepts an index smaller than x outside dim and keeps half bits', () => {
    const x = tensor('float16', [0, 0, 0, 0, 0, 0], [2, 3]);
    x.storage.data[4] = 0x7d55; // x[1][1] is a NaN with a payload
    x.storage.data[2] = 0x3c00; // x[0][2] = 1
    const out = output('float16', [1, 2]);
    K.gather(x, 0, tensor('int32', [0, 1], [1, 2]), out);
    expect(storageBits(out)).toEqual([0, 0x7d55]);
    const out2 = output('float16', [1, 1]);
    K.gather(x, 1, tensor('int32', [2], [1, 1]), out2);
    expect(storageBits(out2)).toEqual([0x3c00]);
  });

  it('handles 0-dim and empty indices', () => {
    const out = view('float64', [0], [], []);
    K.gather(view('float64', [4.5], [], []), 0, view('int32', [0], [], []), out);
    expect(storageValues(out)).toEqual([4.5]);
    // Core sends a 0-dim x as shape [1] next to a 0-dim index and out.
    const fromVector = view('float64', [0], [], []);
    K.gather(tensor('float64', [7.5]), 0, view('int32', [0], [], []), fromVector);
    expect(storageValues(fromVector)).toEqual([7.5]);
    const acc = view('float32', [1], [], []);
    K.scatterAdd(acc, 0, view('int32', [0], [], []), view('float32', [2], [], []));
    expect(storageValues(acc)).toEqual([3]);
    const none = view('float64', [9], [0, 2], [2, 1]);
    K.gather(tensor('float64', [1, 2], [1, 2]), 0, view('int32', [0], [0, 2], [2, 1]), none);
    expect(storageValues(none)).toEqual([9]);
  });

  it('rejects a non-int32 index and mismatched shapes', () => {
    const x = tensor('float32', [1, 2, 3]);
    expect(() => K.gather(x, 0, tensor('float32', [0]), output('float32', [1]))).toThrow(/index is float32, expected int32/);
    expect(() => K.gather(x, 0, tensor('int32', [0, 1]), output('float32', [1]))).toThrow(/out has shape/);
  });
});

describe('scatterAdd', () => {
  it('accumulates duplicate indices in 1-d and along each dim of 2-d', () => {
    const out = output('float32', [5], 0);
    K.scatterAdd(out, 0, tensor('int32', [0, 2, 2, 4, 2]), tensor('float32', [1, 2, 3, 4, 5]));
    expect(values(out)).toEqual([1, 0, 10, 0, 4]);

    const rows = output('float32', [2, 3], 0);
    K.scatterAdd(rows, 1, tensor('int32', [0, 0, 2, 1, 1, 1], [2, 3]), tensor('float32', [1, 2, 3, 4, 5, 6], [2, 3]));
    expect(values(rows)).toEqual([3, 0, 3, 0, 15, 0]);

    const cols = output('float32', [2, 3], 100);
    K.scatterAdd(cols, 0, tensor('int32', [1, 1, 0, 1, 0, 0], [2, 3]), tensor('float32', [1, 2, 3, 4, 5, 6], [2, 3]));
    expect(values(cols)).toEqual([100, 105, 109, 105, 102, 100]);
  });

  it('uses a src larger than the index and writes through a strided out', () => {
    // src is 2×3 but only its first 2 columns are scattered; out is every other element from 1.
    const out = view('float64', new Array<number>(8).fill(0), [2, 2], [4, 2], 1);
    K.scatterAdd(out, 1, tensor('int32', [1, 1, 0, 1], [2, 2]), tensor('float64', [1, 2, 3, 4, 5, 6], [2, 3]));
    expect(values(out)).toEqual([0, 3, 4, 5]);
    expect(storageValues(out)).toEqual([0, 0, 0, 3, 0, 4, 0, 5]);
  });

  it('adds float32 with an f32 rounding at each add', () => {
    const out = output('float32', [1], 16777216);
    K.scatterAdd(out, 0, tensor('int32', [0, 0]), tensor('float32', [1, 1]));
    expect(values(out)).toEqual([16777216]);
  });

  it('accumulates duplicates of half types in f32, rounds once, and keeps untouched bits', () => {
    const out = tensor('float16', [2048, 0, 0]);
    out.storage.data[2] = 0x7d55;
    K.scatterAdd(out, 0, tensor('int32', [0, 0, 1]), tensor('float16', [1, 1, 0.1]));
    expect(storageValues(out).slice(0, 2)).toEqual([2050, 0.0999755859375]); // per-add f16 rounding would leave 2048
    expect(storageBits(out)[2]).toBe(0x7d55);

    const b = view('bfloat16', [5, 256, 5], [1], [1], 1);
    K.scatterAdd(b, 0, tensor('int32', [0, 0]), tensor('bfloat16', [1, 1]));
    expect(storageValues(b)).toEqual([5, 258, 5]);
  });

  it('wraps int32 and ors bool', () => {
    const out = output('int32', [2], 0);
    K.scatterAdd(out, 0, tensor('int32', [0, 0, 1]), tensor('int32', [2 ** 31 - 1, 1, -5]));
    expect(values(out)).toEqual([-(2 ** 31), -5]);
    const b = tensor('bool', [0, 1, 0]);
    K.scatterAdd(b, 0, tensor('int32', [0, 0, 1]), tensor('bool', [1, 1, 1]));
    expect(values(b)).toEqual([1, 1, 0]);
  });
});
