// The native path's fused max-pooling (float32, and float16 and bfloat16 as their f32 values) against the TypeScript kernels, bit for bit: values
// and indices over ties, ±0, NaN and −∞ with padding, dilation, strides other than the kernel,
// ceilMode's overhang and strided inputs, on one thread and on several; the backward's sums where
// windows overlap; the refused index; and what the addon leaves to the TypeScript kernels.
import { float32ToBFloat16Bits, float32ToFloat16Bits, type MaxPool2dGeometry } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { maxPool2d, maxPool2dBackward } from '../src/kernels/max-pool.js';
import { loadNative, type NativePath } from '../src/native.js';
import { backend, type Ref, seeded, strides } from './helpers.js';

/** The native path on `threads` threads (a large pooling splits its planes among them). */
function nativeOn(threads: number): NativePath {
  const loaded = loadNative({ native: true, threads });
  if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
  return loaded;
}
const native = nativeOn(2);
const paths = [nativeOn(1), native];

const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

type Dtype = 'float32' | 'float16' | 'bfloat16' | 'int32';
const ENCODE: Partial<Record<Dtype, (v: number) => number>> = { float16: float32ToFloat16Bits, bfloat16: float32ToBFloat16Bits };

/** A view of `shape` with `viewStrides` from `offset` over a fresh storage of `size` elements holding `fill(i)` (rounded to a half type's bits). */
function view(dtype: Dtype, size: number, fill: (i: number) => number, shape: readonly number[], viewStrides = strides(shape), offset = 0): Ref {
  const storage = backend.alloc(0, dtype, size);
  const encode = ENCODE[dtype] ?? ((v: number) => v);
  for (let i = 0; i < size; i++) storage.data[i] = encode(fill(i));
  return { storage, dtype, shape, strides: viewStrides, offset };
}

/** A contiguous output of `shape`, pre-filled with garbage that every kernel must overwrite. */
const output = (dtype: Dtype, shape: readonly number[]) => view(dtype, numel(shape), () => (dtype === 'int32' ? -7 : NaN), shape);

/** Values mostly from a few (ties), with ±0, NaN and −∞ among them. */
function tricky(seed: number): (i: number) => number {
  const next = seeded(seed);
  const pool = [0, -0, 1, -1, 2, 0.5, 3];
  return () => {
    const u = next(0, 1);
    return u < 0.04 ? NaN : u < 0.08 ? -Infinity : pool[Math.floor(next(0, 1) * pool.length)]!;
  };
}

/** The first element where two contiguous refs differ (−0 told from +0, every NaN alike), or -1 when none. */
function firstDifference(a: Ref, b: Ref): number {
  const [x, y] = [a, b].map((r) => r.storage.data.subarray(r.offset, r.offset + numel(r.shape)));
  return x!.findIndex((v, i) => !Object.is(v, y![i]));
}

/** PyTorch's output size along one dim (pooling_output_shape). */
function pooled(size: number, k: number, s: number, p: number, d: number, ceil: boolean): number {
  let out = Math.floor((size + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (out - 1) * s >= size + p) out--;
  return out;
}

function geometry(H: number, W: number, k: [number, number], s: [number, number], p: [number, number], d: [number, number], ceil = false): MaxPool2dGeometry {
  return { kernel: k, stride: s, padding: p, dilation: d, out: [pooled(H, k[0], s[0], p[0], d[0], ceil), pooled(W, k[1], s[1], p[1], d[1], ceil)] };
}

interface Setup {
  readonly name: string;
  readonly shape: [number, number, number, number];
  readonly g: MaxPool2dGeometry;
  /** 'transposed': H and W swapped in storage; 'sliced': every other column of a wider storage, from an offset; 'wide rows': rows 3 elements apart, from an offset. */
  readonly layout: 'contiguous' | 'transposed' | 'sliced' | 'wide rows';
}

const SETUPS: Setup[] = [
  { name: 'MaxPool2d(2) of [8, 64, 24, 24]', shape: [8, 64, 24, 24], g: geometry(24, 24, [2, 2], [2, 2], [0, 0], [1, 1]), layout: 'contiguous' },
  { name: 'kernel 3, stride 2, padding 1', shape: [3, 7, 17, 15], g: geometry(17, 15, [3, 3], [2, 2], [1, 1], [1, 1]), layout: 'contiguous' },
  { name: 'kernel [2, 3], stride [3, 1], padding [1, 1], dilation [2, 1], transposed', shape: [2, 6, 19, 21], g: geometry(19, 21, [2, 3], [3, 1], [1, 1], [2, 1]), layout: 'transposed' },
  { name: 'kernel 3, stride 2, ceilMode, sliced', shape: [2, 8, 20, 16], g: geometry(20, 16, [3, 3], [2, 2], [0, 0], [1, 1], true), layout: 'sliced' },
  { name: 'kernel 2, stride 1, padding 1, dilation 2, ceilMode', shape: [1, 8, 23, 25], g: geometry(23, 25, [2, 2], [1, 1], [1, 1], [2, 2], true), layout: 'contiguous' },
  // MaxPool2d(2) has a path of its own (whole 2×2 blocks): odd sizes drop the last row and column.
  { name: 'MaxPool2d(2) of odd [4, 8, 15, 13], rows apart in a wider storage', shape: [4, 8, 15, 13], g: geometry(15, 13, [2, 2], [2, 2], [0, 0], [1, 1]), layout: 'wide rows' },
];

/** The setup's input x of `dtype`, filled from `seed`. */
function input(setup: Setup, seed: number, dtype: Dtype): Ref {
  const [N, C, H, W] = setup.shape;
  const fill = tricky(seed);
  if (setup.layout === 'transposed') return view(dtype, N * C * H * W, fill, setup.shape, [C * H * W, H * W, 1, H]);
  if (setup.layout === 'sliced') return view(dtype, 3 + 2 * N * C * H * W, fill, setup.shape, [2 * C * H * W, 2 * H * W, 2 * W, 2], 3);
  if (setup.layout === 'wide rows') return view(dtype, 1 + N * C * H * (W + 3), fill, setup.shape, [C * H * (W + 3), H * (W + 3), W + 3, 1], 1);
  return view(dtype, N * C * H * W, fill, setup.shape);
}

describe('native maxPool2d: the TypeScript kernel\'s bits', () => {
  // float32 on every geometry; the half types (compared and summed as f32, rounded once) on three.
  const cases = [
    ...SETUPS.map((setup) => [setup, 'float32'] as const),
    ...SETUPS.filter((_, i) => i !== 1 && i !== 4).flatMap((setup) => (['bfloat16', 'float16'] as const).map((dtype) => [setup, dtype] as const)),
  ];
  for (const [setup, dtype] of cases) {
    it(`${setup.name}, ${dtype}: values, indices and the backward`, () => {
      const [N, C, H, W] = setup.shape;
      const outShape = [N, C, ...setup.g.out];
      const x = input(setup, N * 1000 + H, dtype);
      const runs = paths.map((path) => {
        const out = output(dtype, outShape);
        const indices = output('int32', outShape);
        expect(path.maxPool2d(x, out, indices, setup.g)).toBe(true);
        return { out, indices };
      });
      const out = output(dtype, outShape);
      const indices = output('int32', outShape);
      maxPool2d(x, out, indices, setup.g);
      for (const r of runs) {
        expect(firstDifference(r.out, out)).toBe(-1);
        expect(firstDifference(r.indices, indices)).toBe(-1);
      }
      // The backward: small integer gradients (exact sums), then arbitrary ones, which overlapping windows sum in row-major order.
      for (const scale of [1, 0.1]) {
        const next = seeded(H * W);
        const grad = view(dtype, numel(outShape), () => Math.round(next(-3, 3)) * scale, outShape);
        const want = output(dtype, setup.shape);
        maxPool2dBackward(grad, indices, want);
        for (const path of paths) {
          const got = output(dtype, setup.shape);
          expect(path.maxPool2dBackward(grad, indices, got)).toBe(true);
          expect(firstDifference(got, want)).toBe(-1);
        }
      }
    });
  }

  it('refuses an index outside the input plane with a RangeError, as the TypeScript kernel does', () => {
    const shape = [1, 64, 8, 8] as const;
    const grad = view('float32', 64 * 16, () => 1, [1, 64, 4, 4]);
    const indices = view('int32', 64 * 16, (i) => (i === 100 ? 64 : i % 64), [1, 64, 4, 4]);
    expect(() => native.maxPool2dBackward(grad, indices, output('float32', shape))).toThrow(RangeError);
    expect(() => maxPool2dBackward(grad, indices, output('float32', shape))).toThrow(/index 64 is outside the input plane of 8x8/);
  });

  it('leaves float64, mixed dtypes, small tensors and non-contiguous outputs to the TypeScript kernel', () => {
    const g = geometry(8, 8, [2, 2], [2, 2], [0, 0], [1, 1]);
    const big = view('float32', 64 * 64, tricky(1), [1, 64, 8, 8]);
    const small = view('float32', 64, tricky(2), [1, 1, 8, 8]);
    const indices = output('int32', [1, 64, 4, 4]);
    expect(native.maxPool2d(small, output('float32', [1, 1, 4, 4]), output('int32', [1, 1, 4, 4]), g)).toBe(false);
    const f64: Ref = { ...big, dtype: 'float64', storage: backend.alloc(0, 'float64', 64 * 64) };
    expect(native.maxPool2d(f64, { ...output('float32', [1, 64, 4, 4]), dtype: 'float64' }, indices, g)).toBe(false);
    const strided = view('float32', 2 * 64 * 16, () => 0, [1, 64, 4, 4], [2048, 32, 8, 2]);
    expect(native.maxPool2d(big, strided, indices, g)).toBe(false);
    expect(native.maxPool2d(view('bfloat16', 64 * 64, tricky(3), [1, 64, 8, 8]), output('float32', [1, 64, 4, 4]), indices, g)).toBe(false);
  });
});
