import { describe, expect, it } from 'vitest';
import { bf16, f16, K, output, storageBits, storageValues, tensor, values, view } from './helpers.js';

describe('cast', () => {
  it('truncates floats toward zero into int32', () => {
    const out = output('int32', [6]);
    K.cast(tensor('float32', [2.9, -2.9, 0.5, -0.5, 1e9, -7]), out);
    expect(values(out)).toEqual([2, -2, 0, 0, 1e9, -7]);
    K.cast(tensor('float16', [2.5, -3.75, 65504, 0, -0, 1]), out);
    expect(values(out)).toEqual([2, -3, 65504, 0, 0, 1]);
  });

  it('casts to bool as x != 0, NaN true, −0 false', () => {
    const out = output('bool', [5], 0);
    K.cast(tensor('float32', [0, -0, NaN, 1e-45, -3]), out);
    expect(values(out)).toEqual([0, 0, 1, 1, 1]);
    K.cast(tensor('bfloat16', [NaN, 0, 2, -0, -Infinity]), out);
    expect(values(out)).toEqual([1, 0, 1, 0, 1]);
    K.cast(tensor('int32', [0, 1, -1, 2 ** 31 - 1, 0]), out);
    expect(values(out)).toEqual([0, 1, 1, 1, 0]);
  });

  it('casts bool to 0/1 numbers', () => {
    const b = tensor('bool', [1, 0, 1]);
    for (const dtype of ['float32', 'float16', 'bfloat16', 'float64', 'int32'] as const) {
      const out = output(dtype, [3]);
      K.cast(b, out);
      expect(values(out), dtype).toEqual([1, 0, 1]);
    }
  });

  it('rounds float32 to float16 to nearest even, with overflow, subnormals and NaN', () => {
    const out = output('float16', [8]);
    // 1 + 2^-11 ties to 1 (even); 1 + 3·2^-11 ties up to 1 + 2^-9; 65520 overflows; 2^-25 ties to 0; 3·2^-25 rounds up to 2^-23.
    K.cast(tensor('float32', [1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519, 65520, 2 ** -25, 3 * 2 ** -25, NaN, -0]), out);
    expect(storageBits(out)).toEqual([0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0000, 0x0002, 0x7e00, 0x8000]);
  });

  it('rounds float64 to float32 and to bfloat16', () => {
    const out = output('float32', [2]);
    K.cast(tensor('float64', [0.1, 1 + 2 ** -30]), out);
    expect(values(out)).toEqual([Math.fround(0.1), 1]);
    const b = output('bfloat16', [3]);
    K.cast(tensor('float64', [1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38]), b);
    expect(storageBits(b)).toEqual([0x3f80, 0x3f82, 0x7f80]);
  });

  it('converts between the half formats through their values', () => {
    const out = output('bfloat16', [3]);
    K.cast(tensor('float16', [f16(0.1), 65504, 2 ** -24]), out);
    expect(values(out)).toEqual([bf16(f16(0.1)), bf16(65504), 2 ** -24]);
  });

  it('casts int32 to float32 with rounding and writes strided outputs', () => {
    const out = view('float32', [7, 7, 7, 7], [2], [-2], 3);
    K.cast(tensor('int32', [16777217, -3]), out);
    expect(storageValues(out)).toEqual([7, -3, 7, 16777216]);
  });

  it('is a bitwise copy for the same dtype', () => {
    const x = tensor('float16', [0, 0]);
    x.storage.data[0] = 0x7d55; // signalling-style NaN payload
    const out = output('float16', [2]);
    K.cast(x, out);
    expect(storageBits(out)).toEqual([0x7d55, 0]);
  });
});

describe('copy and fill', () => {
  it('materialises a transposed, offset view', () => {
    const x = view('int32', [99, 1, 2, 3, 4, 5, 6], [3, 2], [1, 3], 1); // transpose of [[1, 2, 3], [4, 5, 6]]
    const out = output('int32', [3, 2]);
    K.copy(x, out);
    expect(storageValues(out)).toEqual([1, 4, 2, 5, 3, 6]);
  });

  it('writes into a strided view and leaves the rest alone', () => {
    const out = view('float64', [0, 0, 0, 0, 0, 0], [2, 2], [3, 2], 0);
    K.copy(tensor('float64', [1, 2, 3, 4], [2, 2]), out);
    expect(storageValues(out)).toEqual([1, 0, 2, 3, 0, 4]);
  });

  it('expands a broadcast view and copies contiguous ranges at offsets', () => {
    const out = output('bfloat16', [2, 3]);
    K.copy(view('bfloat16', [5, 1.5, 2.5], [2, 3], [0, 0], 1), out);
    expect(values(out)).toEqual([1.5, 1.5, 1.5, 1.5, 1.5, 1.5]);
    const dst = view('float32', [0, 0, 0, 0, 0], [3], [1], 2);
    K.copy(view('float32', [9, 8, 7, 6], [3], [1], 1), dst);
    expect(storageValues(dst)).toEqual([0, 0, 8, 7, 6]);
  });

  it('copies empty and 0-dim views', () => {
    const out = view('float32', [1, 2], [0, 4], [4, 1], 0);
    K.copy(view('float32', [3], [0, 4], [4, 1], 0), out);
    expect(storageValues(out)).toEqual([1, 2]);
    const s = view('float32', [0, 0], [], [], 1);
    K.copy(view('float32', [5, 6], [], [], 1), s);
    expect(storageValues(s)).toEqual([0, 6]);
  });

  it('fills every dtype, rounding halves once', () => {
    const h = view('float16', [0, 0, 0, 0], [2], [2], 1);
    K.fill(h, 0.1);
    expect(storageValues(h)).toEqual([0, f16(0.1), 0, f16(0.1)]);
    const b = output('bfloat16', [2]);
    K.fill(b, 1 + 2 ** -8);
    expect(storageBits(b)).toEqual([0x3f80, 0x3f80]);
    const i = output('int32', [3]);
    K.fill(i, -7);
    expect(values(i)).toEqual([-7, -7, -7]);
    const bool = output('bool', [2, 2], 0);
    K.fill(bool, NaN);
    expect(values(bool)).toEqual([1, 1, 1, 1]);
    const f = output('float32', [3]);
    K.fill(f, 0.1);
    expect(values(f)).toEqual([Math.fround(0.1), Math.fround(0.1), Math.fround(0.1)]);
    const empty = output('float32', [0]);
    K.fill(empty, 1);
    expect(storageValues(empty)).toEqual([]);
  });

  it('rejects a dtype change', () => {
    expect(() => K.copy(tensor('float32', [1]), output('float64', [1]))).toThrow(/out is float64, expected float32/);
  });
});
