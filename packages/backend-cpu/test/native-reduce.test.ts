// The native path's reductions: float32 sums (accumulated in double, rounded once) against a float64
// reference and the TypeScript kernel's float32 running sum within its error bound, max and min
// against the TypeScript kernel bit for bit, over reduced axes inner, outer and mixed, strided,
// transposed, broadcast and offset views, outputs strided in a larger storage, and sizes that split
// between threads; the same of bfloat16 and float16 inputs, summed in float32 and rounded once;
// and what it leaves to the wasm and TypeScript kernels.
import { float32ToBFloat16Bits, float32ToFloat16Bits, type ReduceOp } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { loadNative, type NativePath } from '../src/native.js';
import { backend, bf16, f16, type Ref, seeded, strides, values } from './helpers.js';

const loaded = loadNative({ native: true, threads: 2 });
if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
const native: NativePath = loaded;

const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** A float32 view over a fresh storage of `length` seeded values in [-1, 1), with ±0 and a few large ones. */
function input(shape: readonly number[], viewStrides: readonly number[], length: number, offset = 0, seed = 1): Ref {
  const next = seeded(seed);
  const storage = backend.alloc(0, 'float32', length);
  const data = storage.data as Float32Array;
  for (let i = 0; i < length; i++) data[i] = i % 97 === 0 ? 0 : i % 89 === 0 ? -0 : i % 83 === 0 ? next(-1000, 1000) : next();
  return { storage, dtype: 'float32', shape, strides: viewStrides, offset };
}

/** The reduced shape of x over `axes`, laid out with `gap` elements between neighbours from element 1 of a NaN-filled storage. */
function output(x: Ref, axes: readonly number[], gap = 1): Ref {
  const shape = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const storage = backend.alloc(0, 'float32', 1 + numel(shape) * gap);
  storage.data.fill(NaN);
  return { storage, dtype: 'float32', shape, strides: strides(shape).map((s) => s * gap), offset: 1 };
}

/** Out's values in index order. */
function read(out: Ref): number[] {
  const values: number[] = [];
  const walk = (d: number, at: number): void => {
    if (d === out.shape.length) values.push(out.storage.data[at]!);
    else for (let i = 0; i < out.shape[d]!; i++) walk(d + 1, at + i * out.strides[d]!);
  };
  walk(0, out.offset);
  return values;
}

/** Σx in float64 and Σ|x| for every output, walking x in index order. */
function reference(x: Ref, axes: readonly number[]): { sum: number[]; abs: number[] } {
  const outShape = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const outStrides = strides(outShape);
  const sum = new Array<number>(numel(outShape)).fill(0);
  const abs = new Array<number>(numel(outShape)).fill(0);
  const index = new Array<number>(x.shape.length).fill(0);
  for (let k = 0; k < numel(x.shape); k++) {
    let at = x.offset;
    let o = 0;
    index.forEach((i, d) => {
      at += i * x.strides[d]!;
      if (!axes.includes(d)) o += i * outStrides[d]!;
    });
    const v = x.storage.data[at]!;
    sum[o] += v;
    abs[o] += Math.abs(v);
    for (let d = index.length - 1; d >= 0 && ++index[d]! === x.shape[d]; d--) index[d] = 0;
  }
  return { sum, abs };
}

/** One float32 ulp of |v|'s binade (at least the smallest normal's). */
const ulp = (v: number): number => 2 ** (Math.max(Math.floor(Math.log2(Math.abs(v) || 1)), -126) - 23);

interface Case {
  readonly name: string;
  readonly x: () => Ref;
  readonly axes: readonly number[];
  /** Its sums are running sums in index order, the TypeScript kernel's bits. */
  readonly sameBits?: boolean;
}

const CASES: Case[] = [
  // The conv bias gradients of the mnist Net: batch and pixels summed, channels kept.
  { name: 'NCHW over 0, 2, 3 (on 2 threads)', x: () => input([16, 32, 24, 24], strides([16, 32, 24, 24]), 16 * 32 * 576), axes: [0, 2, 3] },
  { name: 'a batch of weight gradients over 0 (a contiguous kept dim, on 2 threads)', x: () => input([16, 1, 64, 288], strides([16, 1, 64, 288]), 16 * 64 * 288), axes: [0], sameBits: true },
  { name: 'rows over the last dim', x: () => input([300, 257], strides([300, 257]), 300 * 257), axes: [1] },
  { name: 'everything to one element', x: () => input([70, 130], strides([70, 130]), 70 * 130), axes: [0, 1] },
  { name: 'a transposed view over its first dim', x: () => input([257, 300], [1, 257], 300 * 257), axes: [0] },
  { name: 'mixed axes 1 and 3 of an offset view', x: () => input([5, 6, 7, 40], strides([5, 6, 7, 40]), 5 * 6 * 7 * 40 + 9, 9), axes: [1, 3] },
  { name: 'a broadcast (stride-0) dim reduced', x: () => input([128, 96], [0, 1], 96), axes: [0] },
  { name: 'every other column of a wider storage', x: () => input([64, 100], [400, 2], 64 * 400), axes: [0] },
  { name: 'no reduced axis of extent > 1 (a copy)', x: () => input([1, 4096], strides([1, 4096]), 4096), axes: [0] },
];

describe('native reduce', () => {
  for (const c of CASES) {
    it(`sums ${c.name}: in float64 within an ulp of the exact sum, in float32 within the TypeScript running sum's bound`, () => {
      const x = c.x();
      const ref = reference(x, c.axes);
      const n = numel(x.shape) / ref.sum.length;
      for (const accumulate of ['float32', 'float64'] as const) {
        const got = output(x, c.axes, 2);
        expect(native.reduce('sum', x, c.axes, got, accumulate)).toBe(true);
        const want = output(x, c.axes);
        CpuKernels.reduce('sum', x, c.axes, want, accumulate);
        const g = read(got);
        const w = read(want);
        g.forEach((v, o) => {
          const exact = ref.sum[o]!;
          // float64: one rounding of a double sum; float32: partial float32 sums, each with the
          // running sum's error, so within n·2^-24·Σ|x| of the exact sum as the TypeScript kernel is.
          const bound = accumulate === 'float64' ? ulp(exact) : n * 2 ** -24 * ref.abs[o]! + ulp(exact);
          expect(Math.abs(v - exact), `${accumulate} output ${o}`).toBeLessThanOrEqual(bound);
          expect(Math.abs(w[o]! - exact), `${accumulate} output ${o} of the TypeScript kernel`).toBeLessThanOrEqual(bound);
        });
        // Outputs side by side along a contiguous kept dim keep the TypeScript kernel's running sums.
        if (c.sameBits) expect(g.findIndex((v, o) => !Object.is(v, w[o])), accumulate).toBe(-1);
      }
    });

    it(`takes max and min of ${c.name} bit for bit as the TypeScript kernel`, () => {
      const x = c.x();
      const data = x.storage.data as Float32Array;
      data[Math.floor(data.length / 3)] = NaN; // NaN wins where it is reached
      for (const op of ['max', 'min'] as const) {
        const got = output(x, c.axes);
        expect(native.reduce(op, x, c.axes, got, 'float32')).toBe(true);
        const want = output(x, c.axes);
        CpuKernels.reduce(op, x, c.axes, want, 'float32');
        const g = Float32Array.from(read(got));
        const w = Float32Array.from(read(want));
        const same = (i: number): boolean => Object.is(g[i], w[i]) || (Number.isNaN(g[i]) && Number.isNaN(w[i]));
        expect(g.findIndex((_, i) => !same(i)), op).toBe(-1);
      }
    });
  }

  for (const dtype of ['bfloat16', 'float16'] as const) {
    const [round, encode, bits] = dtype === 'bfloat16' ? [bf16, float32ToBFloat16Bits, 8] : [f16, float32ToFloat16Bits, 11];
    /** The case's float32 input rounded to dtype in place, and the same elements as dtype bit patterns. */
    const halfOf = (x: Ref): [Ref, Ref] => {
      const data = x.storage.data as Float32Array;
      data.forEach((v, i) => (data[i] = round(v)));
      const storage = backend.alloc(0, dtype, data.length);
      (storage.data as Uint16Array).set(Array.from(data, encode));
      return [x, { ...x, storage, dtype }];
    };
    const halfOutput = (x: Ref, axes: readonly number[], gap = 1): Ref => {
      const out = output(x, axes, gap);
      const storage = backend.alloc(0, dtype, out.storage.numel);
      (storage.data as Uint16Array).fill(0x7fc0); // NaN in both types' top bits
      return { ...out, storage, dtype };
    };
    /** One ulp of dtype at |v| (float16's subnormals: 2^-24). */
    const halfUlp = (v: number): number => 2 ** Math.max(Math.floor(Math.log2(Math.abs(v) || 1)) - (bits - 1), dtype === 'float16' ? -24 : -133);

    for (const c of CASES) {
      it(`sums ${dtype} ${c.name} in float32, rounded once: within the float32 sum's bound and a ${dtype} ulp of the exact sum`, () => {
        const [wide, x] = halfOf(c.x());
        const ref = reference(wide, c.axes);
        const n = numel(x.shape) / ref.sum.length;
        const got = halfOutput(x, c.axes, 2);
        expect(native.reduce('sum', x, c.axes, got, 'float32')).toBe(true);
        const want = halfOutput(x, c.axes);
        CpuKernels.reduce('sum', x, c.axes, want, 'float32');
        const [g, w] = [values(got), values(want)];
        g.forEach((v, o) => {
          const exact = ref.sum[o]!;
          const bound = n * 2 ** -24 * ref.abs[o]! + halfUlp(exact);
          expect(Math.abs(v - exact), `output ${o}`).toBeLessThanOrEqual(bound);
          expect(Math.abs(w[o]! - exact), `output ${o} of the TypeScript kernel`).toBeLessThanOrEqual(bound);
        });
        if (c.sameBits) expect(g.findIndex((v, o) => !Object.is(v, w[o]))).toBe(-1);
      });

      it(`takes max and min of ${dtype} ${c.name} bit for bit as the TypeScript kernel`, () => {
        const [, x] = halfOf(c.x());
        (x.storage.data as Uint16Array)[Math.floor(x.storage.numel / 3)] = dtype === 'bfloat16' ? 0x7fc0 : 0x7e00; // a NaN
        for (const op of ['max', 'min'] as const) {
          const got = halfOutput(x, c.axes);
          expect(native.reduce(op, x, c.axes, got, 'float32')).toBe(true);
          const want = halfOutput(x, c.axes);
          CpuKernels.reduce(op, x, c.axes, want, 'float32');
          expect(values(got), op).toEqual(values(want));
          expect(Array.from(got.storage.data), `${op}: the bits`).toEqual(Array.from(want.storage.data));
        }
      });
    }
  }

  it('takes 16-bit reductions from 64 elements (a linear\'s bias gradient), float32 ones from 4096', () => {
    const small = input([8, 10], strides([8, 10]), 80);
    const [, x] = [small, { ...small, storage: backend.alloc(0, 'bfloat16', 80), dtype: 'bfloat16' as const }];
    const out = { ...output(small, [0]), storage: backend.alloc(0, 'bfloat16', 11), dtype: 'bfloat16' as const };
    expect(native.reduce('sum', x, [0], out, 'float32')).toBe(true);
    expect(native.reduce('sum', small, [0], output(small, [0]), 'float32')).toBe(false);
    const tiny = input([4, 10], strides([4, 10]), 40);
    expect(native.reduce('sum', { ...tiny, storage: backend.alloc(0, 'bfloat16', 40), dtype: 'bfloat16' }, [0], out, 'float32')).toBe(false);
  });

  it('keeps the first of equal zeros as the TypeScript kernel does', () => {
    const storage = backend.alloc(0, 'float32', 8192);
    // Columns alternate which zero comes first; a column-wise and a row-wise reduction of each.
    const data = storage.data as Float32Array;
    for (let i = 0; i < 8192; i++) data[i] = (i + Math.floor(i / 64)) % 2 === 0 ? 0 : -0;
    const x: Ref = { storage, dtype: 'float32', shape: [128, 64], strides: [64, 1], offset: 0 };
    for (const axes of [[0], [1]]) {
      for (const op of ['max', 'min'] as ReduceOp[]) {
        const got = output(x, axes);
        const want = output(x, axes);
        expect(native.reduce(op, x, axes, got, 'float32')).toBe(true);
        CpuKernels.reduce(op, x, axes, want, 'float32');
        expect(read(got).map((v) => Object.is(v, -0)), `${op} over ${axes}`).toEqual(read(want).map((v) => Object.is(v, -0)));
      }
    }
  });

  it('reduces through the backend with native on as with it off, within the same bound', () => {
    const on = createCpuBackend({ native: true });
    const off = createCpuBackend({ native: false });
    const shape = [32, 16, 20, 20];
    const next = seeded(5);
    const data = Float32Array.from({ length: numel(shape) }, () => next());
    const [a, b] = [on, off].map((be) => {
      const x = be.alloc(0, 'float32', data.length);
      be.write(x, data, 0);
      const out = be.alloc(0, 'float32', 16);
      // A channels-last view, so the wasm sum (contiguous inputs only) would not take it either way.
      be.kernels.reduce('sum', { storage: x, dtype: 'float32', shape, strides: [6400, 1, 320, 16], offset: 0 }, [0, 2, 3], { storage: out, dtype: 'float32', shape: [1, 16, 1, 1], strides: [16, 1, 1, 1], offset: 0 }, 'float32');
      return be.readSync!(out) as Float32Array;
    });
    expect(on.native.loaded).toBe(true);
    a.forEach((v, i) => expect(Math.abs(v - b[i]!)).toBeLessThanOrEqual(800 * 2 ** -24 * 800));
  });

  it('leaves other dtypes, prod, small and overlapping reductions and bad axes to the other kernels', () => {
    const x = input([64, 128], strides([64, 128]), 64 * 128);
    expect(native.reduce('prod', x, [0], output(x, [0]), 'float32')).toBe(false);
    expect(native.reduce('sum', x, [0], output(x, [0]), 'int32')).toBe(false);
    expect(native.reduce('sum', input([8, 8], [8, 1], 64), [0], output(x, [0]), 'float32')).toBe(false);
    expect(native.reduce('sum', x, [2], output(x, [0]), 'float32')).toBe(false);
    expect(native.reduce('sum', x, [0], { ...output(x, [0]), storage: x.storage }, 'float32')).toBe(false);
    expect(native.reduce('sum', x, [0], output(x, [1]), 'float32')).toBe(false); // out of the wrong shape
    expect(native.reduce('sum', x, [0], { ...output(x, [0]), strides: [128, 0] }, 'float32')).toBe(false); // outputs sharing an element
    const f64 = backend.alloc(0, 'float64', 8192);
    expect(native.reduce('sum', { ...x, storage: f64, dtype: 'float64' }, [0], output(x, [0]), 'float32')).toBe(false);
    // A 16-bit input with an output of another dtype.
    expect(native.reduce('sum', { ...x, storage: backend.alloc(0, 'bfloat16', 8192), dtype: 'bfloat16' }, [0], output(x, [0]), 'float32')).toBe(false);
    expect(() => createCpuBackend({ native: true, wasm: false }).kernels.reduce('sum', x, [2], output(x, [0]), 'float32')).toThrow(/axis 2 is out of range/);
  });
});
