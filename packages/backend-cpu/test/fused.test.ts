import { describe, expect, it } from 'vitest';
import { CpuFused } from '../src/kernels/index.js';
import { f16, output, seeded, storageValues, tensor, values, view } from './helpers.js';

/** The plain formula along rows of length n (no max subtraction), in f64. */
function plainSoftmax(xs: number[], n: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < xs.length; r += n) {
    const row = xs.slice(r, r + n);
    const sum = row.reduce((s, v) => s + Math.exp(v), 0);
    out.push(...row.map((v) => Math.exp(v) / sum));
  }
  return out;
}

function expectClose(got: number[], want: number[], rtol: number, atol = 0): void {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i]!), `#${i}: ${g} vs ${want[i]}`).toBeLessThanOrEqual(atol + rtol * Math.abs(want[i]!)));
}

describe('fused softmax and logSoftmax', () => {
  it('matches the plain formula along the last dim and rows sum to 1', () => {
    const r = seeded(7);
    const xs = Array.from({ length: 4 * 9 }, () => Math.fround(r(-5, 5)));
    const out = output('float32', [4, 9]);
    CpuFused.softmax(tensor('float32', xs, [4, 9]), 1, out);
    const got = values(out);
    expectClose(got, plainSoftmax(xs, 9), 2 ** -23);
    for (let row = 0; row < 4; row++) {
      const sum = got.slice(row * 9, row * 9 + 9).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - 1)).toBeLessThan(1e-6);
    }
    const logOut = output('float32', [4, 9]);
    CpuFused.logSoftmax(tensor('float32', xs, [4, 9]), -1, logOut);
    expectClose(values(logOut), plainSoftmax(xs, 9).map(Math.log), 2 ** -22, 1e-7);
  });

  it('works along dim 0 of a transposed view and the middle dim of a 3-d tensor', () => {
    // x = [[1, 2], [3, 4], [5, 6]] stored transposed; softmax over dim 0 is over the columns [1, 3, 5] and [2, 4, 6].
    const x = view('float64', [1, 3, 5, 2, 4, 6], [3, 2], [1, 3]);
    const out = output('float64', [3, 2]);
    CpuFused.softmax(x, 0, out);
    const col = plainSoftmax([1, 3, 5], 3);
    expectClose(values(out), [col[0]!, col[0]!, col[1]!, col[1]!, col[2]!, col[2]!], 1e-15);

    const xs = [...Array(12).keys()].map((i) => (i * 7) % 5);
    const out3 = output('float64', [2, 3, 2]);
    CpuFused.softmax(tensor('float64', xs, [2, 3, 2]), 1, out3);
    const got = values(out3);
    for (let a = 0; a < 2; a++) {
      for (let c = 0; c < 2; c++) {
        const idx = [0, 1, 2].map((b) => a * 6 + b * 2 + c);
        expectClose(idx.map((i) => got[i]!), plainSoftmax(idx.map((i) => xs[i]!), 3), 1e-15);
      }
    }
  });

  it('is stable for large inputs and handles −Inf, NaN and all −Inf rows', () => {
    const out = output('float32', [4, 3]);
    const x = tensor('float32', [1000, 1001, 1002, 0, -Infinity, 0, 1, NaN, 2, -Infinity, -Infinity, -Infinity], [4, 3]);
    CpuFused.softmax(x, 1, out);
    const got = values(out);
    expectClose(got.slice(0, 3), plainSoftmax([0, 1, 2], 3).map(Math.fround), 2 ** -23);
    expect(got.slice(3, 6)).toEqual([0.5, 0, 0.5]);
    expect(got.slice(6, 9)).toEqual([NaN, NaN, NaN]);
    expect(got.slice(9)).toEqual([NaN, NaN, NaN]);
    const logOut = output('float32', [4, 3]);
    CpuFused.logSoftmax(x, 1, logOut);
    const lg = values(logOut);
    expectClose(lg.slice(0, 3), plainSoftmax([0, 1, 2], 3).map(Math.log), 2 ** -22);
    expect(lg.slice(3, 6)).toEqual([Math.fround(-Math.LN2), -Infinity, Math.fround(-Math.LN2)]);
  });

  it('rounds half outputs once from the f32 result', () => {
    const xs = [0.5, -1, 2, 0.25];
    const out = output('float16', [4]);
    CpuFused.softmax(tensor('float16', xs), 0, out);
    expect(values(out)).toEqual(plainSoftmax(xs, 4).map((v) => f16(Math.fround(v))));
    const lb = output('bfloat16', [4]);
    CpuFused.logSoftmax(tensor('bfloat16', xs), 0, lb);
    const ref = plainSoftmax(xs, 4).map(Math.log);
    values(lb).forEach((v, i) => expect(Math.abs(v - ref[i]!)).toBeLessThanOrEqual(2 ** -8 * Math.abs(ref[i]!)));
  });

  it('handles 0-dim and empty inputs, writes strided outputs', () => {
    const s = view('float32', [9, 9], [], [], 1);
    CpuFused.softmax(view('float32', [3], [], [], 0), 0, s);
    expect(storageValues(s)).toEqual([9, 1]);
    CpuFused.logSoftmax(view('float32', [3], [], [], 0), -1, s);
    expect(storageValues(s)).toEqual([9, 0]);
    const empty = view('float32', [4], [0, 3], [3, 1]);
    CpuFused.softmax(view('float32', [1], [0, 3], [3, 1]), 1, empty);
    expect(storageValues(empty)).toEqual([4]);
    const strided = view('float64', [0, 0, 0, 0], [2], [2], 1);
    CpuFused.softmax(tensor('float64', [0, 0]), 0, strided);
    expect(storageValues(strided)).toEqual([0, 0.5, 0, 0.5]);
  });
});
