// isNonOverlapping: the check a backend makes before writing a view one thread per element (the
// elementwise fusion of webgpu and cuda): no two indices may land on one memory location.
import { describe, expect, it } from 'vitest';
import { isNonOverlapping } from '../../src/index.js';

describe('isNonOverlapping', () => {
  it('contiguous, transposed, strided-with-gaps and negative-stride views give each element its own place', () => {
    expect(isNonOverlapping([2, 3], [3, 1])).toBe(true);
    expect(isNonOverlapping([2, 3], [1, 2])).toBe(true); // the transpose of [3, 2]
    expect(isNonOverlapping([2, 3], [8, 2])).toBe(true); // every other element of rows of 8
    expect(isNonOverlapping([4], [-1])).toBe(true);
    expect(isNonOverlapping([1, 5], [0, 1])).toBe(true); // a size-1 dim's stride never matters
  });

  it('an expanded view (stride 0) and overlapping windows (as_strided) do not', () => {
    expect(isNonOverlapping([3, 4], [0, 1])).toBe(false);
    expect(isNonOverlapping([3, 3], [1, 1])).toBe(false); // sliding windows of 3 over 5 elements
    expect(isNonOverlapping([2, 3], [2, 1])).toBe(false); // rows of 3 that start 2 apart
  });
});
