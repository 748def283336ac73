// The native path's share of a float32 convolution. Core composes conv2d and its gradients from
// primitives: pad (a copy into a window of zeros), im2col (a copy of an overlapping window view), one
// GEMM per pass (forward W·cols, weight gradient dY·colsᵀ, data gradient Wᵀ·dY), col2im (adds of
// shifted window views) and a broadcast bias add. Here the addon's strided copies and adds are held
// to the TypeScript kernels bit for bit (each is one float32 operation per element) on geometries
// that reach every case (stride 2, padding, dilation, 1×1, Cin = 1, batch 1 and 64, a channels-last
// input), and its GEMM on the three conv-shaped products to a float64 reference. col2im also runs as
// one native stridedSum (asStrided's gradient), held to the TypeScript kernel and the adds bit for bit.
import { describe, expect, it } from 'vitest';
import { type CpuBackend, createCpuBackend } from '../src/backend.js';
import type { StridedView } from '@core/tensor';
import { CpuKernels } from '../src/kernels/index.js';
import { stridedSum } from '../src/kernels/strided-sum.js';
import { defaultAddonPath, loadNative, type NativeElementOp, type NativePath, nativeKernels } from '../src/native.js';
import { expectMatmulClose, type Ref, seeded, strides } from './helpers.js';

const loaded = loadNative({ native: true });
if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
const native: NativePath = loaded;

/** Wasm-heap storages, as the backend gives them, and plain arrays for the TypeScript reference. */
const heap = createCpuBackend({ native: false });
const plain = createCpuBackend({ native: false, wasm: false });

/** A float32 view of `be` over a fresh storage holding `data`. */
function f32(be: CpuBackend, data: Float32Array, shape: readonly number[], viewStrides: readonly number[] = strides(shape), offset = 0): Ref {
  const storage = be.alloc(0, 'float32', data.length);
  be.write(storage, data, 0);
  return { storage, dtype: 'float32', shape, strides: viewStrides, offset };
}

/** `n` seeded floats in [-1, 1), with exact zeros of both signs sprinkled in. */
function floats(n: number, seed: number): Float32Array {
  const next = seeded(seed);
  return Float32Array.from({ length: n }, (_, i) => (i % 37 === 0 ? 0 : i % 41 === 0 ? -0 : next(-1, 1)));
}

/** Where `got` first differs from `want` (bit for bit, any NaN matching any NaN), or '' when it does not. */
function difference(got: Float32Array, want: Float32Array): string {
  if (got.length !== want.length) return `${got.length} elements, want ${want.length}`;
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== w[i] && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) return `element ${i}: got ${got[i]}, want ${want[i]}`;
  }
  return '';
}

const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

interface Geometry {
  readonly name: string;
  readonly n: number;
  readonly c: number;
  readonly h: number;
  readonly w: number;
  readonly kernel: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly padding: readonly [number, number];
  readonly dilation: readonly [number, number];
  /** The input stored channels-last and viewed NCHW (a non-contiguous input). */
  readonly channelsLast?: boolean;
}

const GEOMETRIES: Geometry[] = [
  { name: 'Cin = 1, 3×3, batch 64 (the mnist Net\'s first conv)', n: 64, c: 1, h: 28, w: 28, kernel: [3, 3], stride: [1, 1], padding: [0, 0], dilation: [1, 1] },
  { name: 'stride 2, padding 1', n: 6, c: 3, h: 17, w: 19, kernel: [3, 3], stride: [2, 2], padding: [1, 1], dilation: [1, 1] },
  { name: 'dilation (2, 3), padding (2, 1), a 3×2 kernel', n: 5, c: 4, h: 16, w: 14, kernel: [3, 2], stride: [1, 1], padding: [2, 1], dilation: [2, 3] },
  { name: '1×1 kernel', n: 8, c: 16, h: 9, w: 9, kernel: [1, 1], stride: [1, 1], padding: [0, 0], dilation: [1, 1] },
  { name: 'batch 1', n: 1, c: 8, h: 30, w: 27, kernel: [3, 3], stride: [1, 2], padding: [1, 1], dilation: [1, 1] },
  { name: 'channels-last input', n: 4, c: 6, h: 20, w: 18, kernel: [3, 3], stride: [1, 1], padding: [1, 1], dilation: [1, 1], channelsLast: true },
];

/**
 * The primitives of one conv2d training step's data movement, run by `kernels` (or natively when
 * `run` is given) on buffers of `be`; returns the padded image, the columns, the col2im sum and the
 * biased output, read back.
 */
function convSteps(g: Geometry, be: CpuBackend, elementwise: (op: NativeElementOp, a: Ref, b: Ref, out: Ref) => void): Float32Array[] {
  const [kh, kw] = g.kernel;
  const [hp, wp] = [g.h + 2 * g.padding[0], g.w + 2 * g.padding[1]];
  const oh = Math.floor((hp - g.dilation[0] * (kh - 1) - 1) / g.stride[0]) + 1;
  const ow = Math.floor((wp - g.dilation[1] * (kw - 1) - 1) / g.stride[1]) + 1;
  const { n, c } = g;
  const image = [n, c, g.h, g.w];
  const x = g.channelsLast
    ? f32(be, floats(numel(image), 1), image, [g.h * g.w * c, 1, g.w * c, c])
    : f32(be, floats(numel(image), 1), image);
  // pad: x into the interior of zeros [N, C, Hp, Wp].
  const padded = f32(be, new Float32Array(n * c * hp * wp), [n, c, hp, wp]);
  elementwise('copy', x, x, { ...padded, shape: image, offset: g.padding[0] * wp + g.padding[1] });
  // im2col: the window view [N, C, kh, kw, oh, ow] of the padded image into contiguous columns.
  const colShape = [n, c, kh, kw, oh, ow];
  const windows: Ref = { ...padded, shape: colShape, strides: [c * hp * wp, hp * wp, g.dilation[0] * wp, g.dilation[1], g.stride[0] * wp, g.stride[1]] };
  const cols = f32(be, new Float32Array(numel(colShape)).fill(NaN), colShape);
  elementwise('copy', windows, windows, cols);
  // col2im: each kernel position's columns added onto its shifted window of an image (through a temporary, as core does).
  const image2 = f32(be, floats(n * c * hp * wp, 2), [n, c, hp, wp]);
  const plane = [n, c, oh, ow];
  const tmp = f32(be, new Float32Array(numel(plane)), plane);
  for (let i = 0; i < kh; i++) {
    for (let j = 0; j < kw; j++) {
      const window: Ref = { ...image2, shape: plane, strides: [c * hp * wp, hp * wp, g.stride[0] * wp, g.stride[1]], offset: i * g.dilation[0] * wp + j * g.dilation[1] };
      const slice: Ref = { ...cols, shape: plane, strides: [c * kh * kw * oh * ow, kh * kw * oh * ow, ow, 1], offset: (i * kw + j) * oh * ow };
      elementwise('add', window, slice, tmp);
      elementwise('copy', tmp, tmp, window);
    }
  }
  // The bias, broadcast over batch and pixels, added to the columns viewed as the output.
  const bias = f32(be, floats(c, 3), [c]);
  const biased = f32(be, new Float32Array(numel(plane)), plane);
  elementwise('add', { ...cols, shape: plane, strides: [c * kh * kw * oh * ow, kh * kw * oh * ow, ow, 1] }, { ...bias, shape: plane, strides: [0, 1, 0, 0] }, biased);
  return [padded, cols, image2, biased].map((r) => (r.storage.data as Float32Array).slice());
}

function typescript(op: NativeElementOp, a: Ref, b: Ref, out: Ref): void {
  if (op === 'copy') CpuKernels.copy(a, out);
  else CpuKernels.binary(op, a, b, out);
}

describe('native strided copies and adds of a convolution, bit for bit the TypeScript kernels', () => {
  for (const g of GEOMETRIES) {
    for (const threads of [1, 2]) {
      it(`${g.name}, ${threads} thread${threads > 1 ? 's' : ''}`, () => {
        const want = convSteps(g, plain, typescript);
        const got = convSteps(g, heap, (op, a, b, out) => expect(native.elementwise(op, a, b, out, threads)).toBe(true));
        const names = ['padded image', 'columns', 'col2im sum', 'biased output'];
        got.forEach((values, i) => expect(difference(values, want[i]!), names[i]).toBe(''));
      });
    }
  }

  it('computes sub, mul and div (zeros of both signs, so ±Inf and NaN) like the TypeScript kernels', () => {
    const shape = [3, 50, 70];
    const a = floats(numel(shape), 4);
    const b = floats(numel(shape), 5);
    for (const op of ['sub', 'mul', 'div'] as const) {
      // a read transposed, b broadcast along the middle dim.
      const run = (be: CpuBackend, fn: (x: Ref, y: Ref, out: Ref) => void): Float32Array => {
        const x = f32(be, a, shape, [3500, 1, 50]);
        const y = f32(be, b, shape, [70, 0, 1]);
        const out = f32(be, new Float32Array(numel(shape)).fill(NaN), shape);
        fn(x, y, out);
        return (out.storage.data as Float32Array).slice();
      };
      const want = run(plain, (x, y, out) => CpuKernels.binary(op, x, y, out));
      const got = run(heap, (x, y, out) => expect(native.elementwise(op, x, y, out, 2)).toBe(true));
      expect(difference(got, want), op).toBe('');
      if (op === 'div') expect(got.some((v) => !Number.isFinite(v))).toBe(true);
    }
  });

  it('computes in place when out is the very input view, and declines other overlaps, other dtypes and ranks above 8', () => {
    const shape = [40, 30];
    const data = floats(2400, 6);
    const x = f32(heap, data, shape, [1, 40]);
    const y = f32(heap, floats(2400, 7), shape);
    const want = f32(plain, new Float32Array(2400), shape);
    CpuKernels.binary('add', f32(plain, data, shape, [1, 40]), f32(plain, floats(2400, 7), shape), want);
    expect(native.elementwise('add', x, y, x, 1)).toBe(true);
    const inPlace = new Float32Array(2400);
    for (let i = 0; i < 40; i++) for (let j = 0; j < 30; j++) inPlace[i * 30 + j] = (x.storage.data as Float32Array)[i + j * 40]!;
    expect(difference(inPlace, want.storage.data as Float32Array)).toBe('');

    const before = (x.storage.data as Float32Array).slice();
    // The same storage seen shifted by one element, or transposed: reads would see earlier writes.
    expect(native.elementwise('add', { ...x, offset: 1, shape: [39, 30] }, { ...y, shape: [39, 30] }, { ...x, shape: [39, 30] })).toBe(false);
    expect(native.elementwise('copy', { ...x, strides: [30, 1] }, x, x)).toBe(false);
    expect(native.elementwise('add', { ...x, strides: [30, 1] }, y, x)).toBe(false);
    expect(x.storage.data).toEqual(before);
    const f64: Ref = { storage: heap.alloc(0, 'float64', 2400), dtype: 'float64', shape, strides: [30, 1], offset: 0 };
    expect(native.elementwise('add', f64, f64, { ...f64, storage: heap.alloc(0, 'float64', 2400) })).toBe(false);
    const deep = Array<number>(9).fill(1);
    expect(native.elementwise('copy', { ...y, shape: deep, strides: deep }, y, { ...x, shape: deep, strides: deep })).toBe(false);
  });
});

describe('native strided op routing', () => {
  it('takes large strided float32 copies and add/sub/mul/div; small, contiguous, float64 and other ops stay with the base kernels', () => {
    const calls: string[] = [];
    const kernels = nativeKernels(native, {
      ...CpuKernels,
      copy(x, out) {
        calls.push(`copy ${x.dtype} [${x.shape}]`);
        CpuKernels.copy(x, out);
      },
      binary(op, a, b, out) {
        calls.push(`${op} ${a.dtype} [${a.shape}]`);
        CpuKernels.binary(op, a, b, out);
      },
    });
    // 2^15 elements: the smallest strided op the native path takes.
    const shape = [128, 256];
    const transposed = f32(plain, floats(1 << 15, 8), shape, [1, 128]);
    const other = f32(plain, floats(1 << 15, 9), shape);
    const out = f32(plain, new Float32Array(1 << 15), shape);
    kernels.copy(transposed, out);
    for (const op of ['add', 'sub', 'mul', 'div'] as const) kernels.binary(op, transposed, other, out);
    expect(calls).toEqual([]);
    kernels.binary('maximum', transposed, other, out);
    kernels.copy(other, out); // contiguous: the base kernels stream it as fast
    kernels.binary('add', other, other, out);
    const small = [127, 256];
    kernels.copy({ ...transposed, shape: small }, { ...out, shape: small });
    const f64 = (ref: Ref): Ref => ({ ...ref, dtype: 'float64', storage: plain.alloc(0, 'float64', 1 << 15) });
    kernels.binary('add', f64(transposed), f64(other), f64(out));
    expect(calls).toEqual(['maximum float32 [128,256]', 'copy float32 [128,256]', 'add float32 [128,256]', 'copy float32 [127,256]', 'add float64 [128,256]']);
  });

  it('runs through the backend: a model-sized im2col copy of createCpuBackend() takes the native path', () => {
    const be = createCpuBackend({ native: true, threads: 2 });
    expect(be.native.loaded).toBe(true);
    const g = GEOMETRIES[0]!;
    const got = convSteps(g, be, (op, a, b, out) => (op === 'copy' ? be.kernels.copy(a, out) : be.kernels.binary(op, a, b, out)));
    const want = convSteps(g, plain, typescript);
    got.forEach((values, i) => expect(difference(values, want[i]!)).toBe(''));
  });

  it('is rejected by the addon itself when an operand reaches outside its array, touching nothing', async () => {
    const { createRequire } = await import('node:module');
    const addon = createRequire(import.meta.url)(defaultAddonPath()!) as {
      elementwise: (...args: unknown[]) => void;
    };
    const out = new Float32Array(6).fill(7);
    const a = new Float32Array(6);
    // [2, 3] with a's rows 4 apart: its last element would be a[9].
    const params = Float64Array.from([2, 1, 2, 3, 0, 3, 1, 0, 4, 1, 0, 3, 1]);
    expect(() => addon.elementwise('add', out, a, a, params)).toThrow(/elementwise: a reaches elements \[0, 6\] of an array of 6/);
    expect(() => addon.elementwise('pow', out, a, a, Float64Array.from([2, 1, 2, 3, 0, 3, 1, 0, 3, 1, 0, 3, 1]))).toThrow(/op must be copy, add, sub, mul or div, got 'pow'/);
    expect(() => addon.elementwise('add', out, a, a, new Float64Array(4))).toThrow(RangeError);
    expect(Array.from(out)).toEqual([7, 7, 7, 7, 7, 7]);
  });
});

/**
 * col2im the way the contract's stridedSum does it: the columns `src` ([N, C, kh, kw, oh, ow], any
 * layout) summed into a zero [N, C, Hp, Wp] image at their windows' places, by `run`; returns the image.
 */
function col2im(g: Geometry, be: CpuBackend, layout: 'contiguous' | 'permuted', run: (src: Ref, view: StridedView, out: Ref) => void): Float32Array {
  const [kh, kw] = g.kernel;
  const [hp, wp] = [g.h + 2 * g.padding[0], g.w + 2 * g.padding[1]];
  const oh = Math.floor((hp - g.dilation[0] * (kh - 1) - 1) / g.stride[0]) + 1;
  const ow = Math.floor((wp - g.dilation[1] * (kw - 1) - 1) / g.stride[1]) + 1;
  const { n, c } = g;
  const shape = [n, c, kh, kw, oh, ow];
  // 'permuted': the columns stored [kh, kw, N, C, oh, ow] and viewed in the window order.
  const srcStrides = layout === 'contiguous' ? strides(shape) : [c * oh * ow, oh * ow, kw * n * c * oh * ow, n * c * oh * ow, ow, 1];
  const src = f32(be, floats(numel(shape), 13), shape, srcStrides);
  const out = f32(be, new Float32Array(n * c * hp * wp).fill(NaN), [n, c, hp, wp]);
  run(src, { strides: [c * hp * wp, hp * wp, g.dilation[0] * wp, g.dilation[1], g.stride[0] * wp, g.stride[1]], offset: 0 }, out);
  return (out.storage.data as Float32Array).slice();
}

/** The decomposition core runs without the fused kernel: zeros, then one strided add per kernel position (kh, kw in order). */
function col2imByAdds(src: Ref, view: StridedView, out: Ref): void {
  const [, , kh, kw] = src.shape as number[];
  const rest = (r: readonly number[]) => [r[0]!, r[1]!, r[4]!, r[5]!];
  CpuKernels.fill(out, 0);
  const sum = f32(plain, new Float32Array(numel(rest(src.shape))), rest(src.shape));
  for (let i = 0; i < kh!; i++) {
    for (let j = 0; j < kw!; j++) {
      const part: Ref = { ...src, shape: rest(src.shape), strides: rest(src.strides), offset: src.offset + i * src.strides[2]! + j * src.strides[3]! };
      const target: Ref = { ...out, shape: rest(src.shape), strides: rest(view.strides), offset: view.offset + i * view.strides[2]! + j * view.strides[3]! };
      CpuKernels.binary('add', target, part, sum);
      CpuKernels.copy(sum, target);
    }
  }
}

describe('native stridedSum (col2im in one pass), bit for bit the TypeScript kernel and the strided adds it replaces', () => {
  for (const g of GEOMETRIES) {
    for (const layout of ['contiguous', 'permuted'] as const) {
      it(`${g.name}, ${layout} columns`, () => {
        const reference = col2im(g, plain, layout, stridedSum);
        expect(difference(col2im(g, plain, layout, col2imByAdds), reference), 'the strided adds').toBe('');
        for (const threads of [1, 2]) {
          const native2 = loadNative({ native: true, threads });
          if (!('info' in native2)) throw new Error(native2.reason);
          const got = col2im(g, heap, layout, (src, view, out) => expect(native2.stridedSum(src, view, out)).toBe(true));
          expect(difference(got, reference), `${threads} thread(s)`).toBe('');
        }
      });
    }
  }

  it('sums overlapping pooling windows (kernel-last, kernel 3, stride 2), a broadcast dim and a view offset as the TypeScript kernel, close to a float64 sum', () => {
    // src [N, C, oh, ow, kh, kw] over out [N, C, 15, 15] from element 3 on, plus a stride-0 dim of 4 copies.
    const [n, c, oh, ow, k] = [4, 8, 7, 7, 3];
    const shape = [n, c, 4, oh, ow, k, k];
    const view: StridedView = { strides: [c * 225, 225, 0, 2 * 15, 2, 15, 1], offset: 3 };
    const data = floats(numel(shape), 14);
    const run = (be: CpuBackend, fn: (src: Ref, out: Ref) => void): Float32Array => {
      const src = f32(be, data, shape);
      const out = f32(be, new Float32Array(n * c * 225 + 3).fill(NaN), [n * c * 225 + 3]);
      fn(src, out);
      return (out.storage.data as Float32Array).slice();
    };
    const want = run(plain, (src, out) => stridedSum(src, view, out));
    for (const threads of [1, 2]) {
      const path = loadNative({ native: true, threads });
      if (!('info' in path)) throw new Error(path.reason);
      expect(difference(run(heap, (src, out) => expect(path.stridedSum(src, view, out)).toBe(true)), want)).toBe('');
    }
    // Against the exact sum: at most 36 terms of |x| ≤ 1 per element, each add within half an ulp.
    const exact = new Float64Array(want.length);
    const index = new Array<number>(shape.length).fill(0);
    for (let i = 0; i < data.length; i++) {
      exact[view.offset + index.reduce((o, v, d) => o + v * view.strides[d]!, 0)]! += data[i]!;
      for (let d = shape.length - 1; d >= 0 && ++index[d]! === shape[d]; d--) index[d] = 0;
    }
    expect(want.slice(0, 3)).toEqual(new Float32Array(3));
    expect(Math.max(...want.map((v, i) => Math.abs(v - exact[i]!)))).toBeLessThan(36 * 36 * 2 ** -24);
  });

  it('declines float64, ranks above 8 and an out in the source\'s storage, and the addon rejects a view reaching past out, touching nothing', () => {
    const shape = [64, 64];
    const src = f32(heap, floats(4096, 15), shape);
    const out = f32(heap, new Float32Array(4096).fill(7), [4096]);
    expect(native.stridedSum({ ...src, dtype: 'float64' }, { strides: [64, 1], offset: 0 }, out)).toBe(false);
    const deep = Array<number>(9).fill(1);
    expect(native.stridedSum({ ...src, shape: deep, strides: deep }, { strides: deep, offset: 0 }, out)).toBe(false);
    expect(native.stridedSum(src, { strides: [64, 1], offset: 0 }, { ...src, shape: [4096], strides: [1] })).toBe(false);
    expect(() => native.stridedSum(src, { strides: [64, 1], offset: 1 }, out)).toThrow(/stridedSum: the view reaches element 4096 of an out of 4096/);
    expect(Array.from(new Set(out.storage.data as Float32Array))).toEqual([7]);
  });

  it('is the cpu backend\'s fused stridedSum with the addon, and absent without it (core then runs the strided adds)', () => {
    expect(typeof createCpuBackend({ native: true }).fused?.stridedSum).toBe('function');
    expect(createCpuBackend({ native: false }).fused?.stridedSum).toBeUndefined();
  });
});

/** One conv's three GEMMs, as core hands them to the matmul kernel: [batch, rows, cols] views. */
function convGemms(be: CpuBackend, n: number, o: number, k: number, l: number): [string, Ref, Ref, Ref][] {
  const weight = floats(o * k, 10);
  const dy = floats(n * o * l, 11);
  const cols = floats(n * k * l, 12);
  const out = (rows: number, colsN: number): Ref => f32(be, new Float32Array(n * rows * colsN).fill(NaN), [n, rows, colsN]);
  return [
    // y = W · cols, W broadcast over the batch.
    ['forward W·cols', f32(be, weight, [n, o, k], [0, k, 1]), f32(be, cols, [n, k, l]), out(o, l)],
    // dW (before the sum over the batch) = dY · colsᵀ.
    ['weight gradient dY·colsᵀ', f32(be, dy, [n, o, l]), f32(be, cols, [n, l, k], [k * l, 1, l]), out(o, k)],
    // dcols = Wᵀ · dY, then col2im.
    ['data gradient Wᵀ·dY', f32(be, weight, [n, k, o], [0, 1, k]), f32(be, dy, [n, o, l]), out(k, l)],
  ];
}

describe('native GEMM on the products of a convolution, against a float64 reference', () => {
  const runnable = (['avx512', 'avx2', 'portable'] as const).filter((gemm) => 'info' in loadNative({ native: true, gemm }));
  // [name, batch, out channels, C·kh·kw, output pixels]
  const CONVS: [string, number, number, number, number][] = [
    ['Cin = 1, 3×3: 1→32 ch, 26×26 out', 4, 32, 9, 676],
    ['32→64 ch, 3×3, 12×12 out', 2, 64, 288, 144],
    ['1×1 kernel, 3→16 ch', 3, 16, 3, 49],
    ['few output channels: 128→10 ch, 3×3, 9×9 out', 2, 10, 1152, 81],
  ];
  for (const gemm of runnable) {
    for (const threads of [1, 2]) {
      for (const [name, n, o, k, l] of CONVS) {
        it(`${gemm}, ${threads} thread${threads > 1 ? 's' : ''}: ${name}`, () => {
          const path = loadNative({ native: true, gemm });
          if (!('info' in path)) throw new Error(path.reason);
          for (const [, a, b, out] of convGemms(heap, n, o, k, l)) {
            expect(path.matmul(a, b, out, 'float32', threads)).toBe(true);
            expectMatmulClose(a, b, out);
          }
        });
      }
    }
  }
});
