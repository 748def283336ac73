import { describe, expect, it } from 'vitest';
import { K, output, type Ref, seeded, storageValues, strides, tensor, values, view } from './helpers.js';

/** Naive reference: c[b][i][j] = Σ_k a(b, i, k)·b(b, k, j) with the given accumulation. */
function reference(
  at: (b: number, i: number, k: number) => number,
  bt: (b: number, k: number, j: number) => number,
  [batches, m, k, n]: [number, number, number, number],
  accumulate: (acc: number, x: number, y: number) => number,
): number[] {
  const out: number[] = [];
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let p = 0; p < k; p++) acc = accumulate(acc, at(b, i, p), bt(b, p, j));
        out.push(acc);
      }
    }
  }
  return out;
}

const f32Step = (acc: number, x: number, y: number): number => Math.fround(acc + Math.fround(x * y));
const f64Step = (acc: number, x: number, y: number): number => acc + x * y;

function randomValues(n: number, seed: number): number[] {
  const r = seeded(seed);
  return Array.from({ length: n }, () => Math.fround(r(-2, 2)));
}

describe('matmul', () => {
  it('matches a naive float32 reference exactly and an f64 one within 1e-6·Σ|ab|', () => {
    const [B, M, Kd, N] = [2, 3, 17, 5];
    const av = randomValues(B * M * Kd, 1);
    const bv = randomValues(B * Kd * N, 2);
    const out = output('float32', [B, M, N]);
    K.matmul(tensor('float32', av, [B, M, Kd]), tensor('float32', bv, [B, Kd, N]), out, 'float32');
    const at = (b: number, i: number, k: number): number => av[(b * M + i) * Kd + k]!;
    const bt = (b: number, k: number, j: number): number => bv[(b * Kd + k) * N + j]!;
    const got = values(out);
    expect(got).toEqual(reference(at, bt, [B, M, Kd, N], f32Step));
    const exact = reference(at, bt, [B, M, Kd, N], f64Step);
    const scale = reference(at, bt, [B, M, Kd, N], (acc, x, y) => acc + Math.abs(x * y));
    got.forEach((g, i) => expect(Math.abs(g - exact[i]!)).toBeLessThanOrEqual(1e-6 * scale[i]!));
  });

  it('broadcasts the batch (stride 0) and reads a transposed b', () => {
    const [B, M, Kd, N] = [3, 2, 4, 3];
    const av = randomValues(M * Kd, 3);
    const bStore = randomValues(B * N * Kd, 4); // stored as [B, N, K]: b[b][k][j] at (b·N + j)·K + k
    const a = view('float64', av, [B, M, Kd], [0, Kd, 1]);
    const b = view('float64', bStore, [B, Kd, N], [N * Kd, 1, Kd]);
    const out = output('float64', [B, M, N]);
    K.matmul(a, b, out, 'float64');
    const expected = reference(
      (_b, i, k) => av[i * Kd + k]!,
      (bb, k, j) => bStore[(bb * N + j) * Kd + k]!,
      [B, M, Kd, N],
      f64Step,
    );
    expect(values(out)).toEqual(expected);

    // The same product with a batch of size 1 instead of stride 0.
    const a1 = view('float64', av, [1, M, Kd], [M * Kd, Kd, 1]);
    const out1 = output('float64', [B, M, N]);
    K.matmul(a1, b, out1, 'float64');
    expect(values(out1)).toEqual(expected);
  });

  it('writes a transposed output at an offset', () => {
    const a = tensor('float32', [1, 2, 3, 4], [1, 2, 2]); // [[1, 2], [3, 4]]
    const b = tensor('float32', [5, 6, 7, 8], [1, 2, 2]); // [[5, 6], [7, 8]]
    const out = view('float32', [0, 0, 0, 0, 0], [1, 2, 2], [4, 1, 2], 1); // column-major
    K.matmul(a, b, out, 'float32');
    // [[19, 22], [43, 50]] stored column by column after one unused element.
    expect(storageValues(out)).toEqual([0, 19, 43, 22, 50]);
  });

  it('accumulates half inputs in f32 and rounds once', () => {
    const a = tensor('float16', [1, 1, 1], [1, 1, 3]);
    const b = tensor('float16', [2048, 1, 1], [1, 3, 1]);
    const out = output('float16', [1, 1, 1]);
    K.matmul(a, b, out, 'float32');
    expect(values(out)).toEqual([2050]); // f16 steps would give 2048 + 1 → 2048 twice
    const ab = tensor('bfloat16', [1, 1, 1], [1, 1, 3]);
    const bb = tensor('bfloat16', [256, 1, 1], [1, 3, 1]);
    const outb = output('bfloat16', [1, 1, 1]);
    K.matmul(ab, bb, outb, 'float32');
    expect(values(outb)).toEqual([258]);
  });

  it('wraps int32 products and sums', () => {
    const out = output('int32', [1, 1, 2]);
    K.matmul(tensor('int32', [65536, 3], [1, 1, 2]), tensor('int32', [65536, 2 ** 31 - 1, 1, 1], [1, 2, 2]), out, 'int32');
    // [65536·65536 + 3·1, 65536·(2^31 − 1) + 3·1] mod 2^32
    expect(values(out)).toEqual([3, -65533]);
  });

  it('gives zeros for K = 0 and does nothing for empty outputs', () => {
    const a = view('float32', [1], [2, 2, 0], [0, 0, 1]);
    const b = view('float32', [1], [2, 0, 3], [0, 3, 1]);
    const out = output('float32', [2, 2, 3]);
    K.matmul(a, b, out, 'float32');
    expect(values(out)).toEqual(new Array<number>(12).fill(0));
    const none = view('float32', [7], [1, 0, 3], [3, 3, 1]);
    K.matmul(view('float32', [1], [1, 0, 2], [2, 2, 1]), tensor('float32', [1, 2, 3, 4, 5, 6], [1, 2, 3]), none, 'float32');
    expect(storageValues(none)).toEqual([7]);
  });

  it('propagates NaN and Inf', () => {
    const out = output('float32', [1, 1, 2]);
    K.matmul(tensor('float32', [0, 1], [1, 1, 2]), tensor('float32', [NaN, Infinity, 1, 1], [1, 2, 2]), out, 'float32');
    expect(values(out)).toEqual([NaN, NaN]); // 0·NaN and 0·Inf are NaN
  });

  it('rejects shapes that do not line up', () => {
    const a: Ref = tensor('float32', new Array<number>(6).fill(1), [1, 2, 3]);
    const b: Ref = tensor('float32', new Array<number>(8).fill(1), [1, 4, 2]);
    expect(() => K.matmul(a, b, output('float32', [1, 2, 2]), 'float32')).toThrow(/do not give/);
    expect(() => K.matmul(a, { ...a, shape: [3, 2], strides: strides([3, 2]) }, output('float32', [1, 2, 2]), 'float32')).toThrow(/rank-3/);
  });
});
