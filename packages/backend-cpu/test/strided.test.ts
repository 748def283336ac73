import { describe, expect, it } from 'vitest';
import { contiguousStrides, isContiguous, normalizeAxes, RowWalker, spanOf } from '../src/kernels/strided.js';

/** Every offset the walker visits, per operand, in order. */
function walk(shape: number[], strides: number[][], offsets: number[]): number[][] {
  const w = new RowWalker(shape, strides, offsets);
  const seen: number[][] = strides.map(() => []);
  for (let r = 0; r < w.rows; r++, w.next()) {
    for (let op = 0; op < strides.length; op++) {
      for (let j = 0; j < w.rowLength; j++) seen[op]!.push(w.pos[op]! + j * w.step[op]!);
    }
  }
  return seen;
}

describe('strided helpers', () => {
  it('computes contiguous strides and recognises contiguity', () => {
    expect(contiguousStrides([2, 3, 4])).toEqual([12, 4, 1]);
    expect(contiguousStrides([])).toEqual([]);
    expect(isContiguous([2, 3], [3, 1])).toBe(true);
    expect(isContiguous([2, 3], [1, 2])).toBe(false);
    expect(isContiguous([2, 1, 3], [3, 99, 1])).toBe(true); // size-1 axes carry any stride
    expect(isContiguous([2, 3], [0, 1])).toBe(false); // broadcast
    expect(isContiguous([], [])).toBe(true);
  });

  it('walks a contiguous view as one row', () => {
    const w = new RowWalker([2, 3, 4], [[12, 4, 1]], [5]);
    expect(w.rows).toBe(1);
    expect(w.rowLength).toBe(24);
    expect(w.pos[0]).toBe(5);
  });

  it('walks transposed, broadcast and offset views in logical order', () => {
    // x: 2×3 transposed view of a 3×2 storage; y: a row of 3 broadcast over 2 rows, offset 1.
    expect(walk([2, 3], [[1, 2], [0, 1]], [0, 1])).toEqual([
      [0, 2, 4, 1, 3, 5],
      [1, 2, 3, 1, 2, 3],
    ]);
  });

  it('merges axes only when every operand allows it', () => {
    const both = new RowWalker([2, 3, 4], [[12, 4, 1], [12, 4, 1]], [0, 0]);
    expect(both.rows).toBe(1);
    const mixed = new RowWalker([2, 3, 4], [[12, 4, 1], [0, 4, 1]], [0, 0]);
    expect(mixed.rows).toBe(2);
    expect(mixed.rowLength).toBe(12);
    expect(walk([2, 3, 4], [[12, 4, 1], [0, 4, 1]], [0, 0])[1]).toEqual([...Array(12).keys(), ...Array(12).keys()]);
  });

  it('handles 0-dim, size-1 and empty shapes', () => {
    expect(walk([], [[]], [7])).toEqual([[7]]);
    expect(walk([1, 1], [[5, 9]], [3])).toEqual([[3]]);
    const empty = new RowWalker([3, 0, 2], [[0, 2, 1]], [0]);
    expect(empty.rows).toBe(0);
    expect(walk([3, 0, 2], [[0, 2, 1]], [0])).toEqual([[]]);
  });

  it('walks a 4-d odometer with negative strides', () => {
    // A view flipped along axis 1 of a 2×3×2×2 contiguous storage.
    const got = walk([2, 3, 2, 2], [[12, -4, 2, 1]], [8])[0]!;
    const expected: number[] = [];
    for (let a = 0; a < 2; a++) for (let b = 0; b < 3; b++) for (let c = 0; c < 2; c++) for (let d = 0; d < 2; d++) expected.push(8 + 12 * a - 4 * b + 2 * c + d);
    expect(got).toEqual(expected);
  });

  it('finds the storage span of a view', () => {
    expect(spanOf([2, 3], [3, 1], 4)).toEqual({ lo: 4, hi: 9 });
    expect(spanOf([3], [-2], 6)).toEqual({ lo: 2, hi: 6 });
  });

  it('normalises axes', () => {
    expect(normalizeAxes([2, -3, 2], 3, 'test')).toEqual([0, 2]);
    expect(() => normalizeAxes([3], 3, 'test')).toThrow(/out of range/);
  });
});
