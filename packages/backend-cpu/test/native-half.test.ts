// The native path for bfloat16 and float16: the half GEMM (vdpbf16ps on AVX512-BF16, else operands
// widened into the fp32 micro-kernels) against the TypeScript matmul within the conformance
// tolerance for bfloat16, long k included; casts between float32 and the 16-bit dtypes bit for bit
// the TypeScript casts over special values and every 16-bit pattern; strided 16-bit copies,
// bfloat16/float16 add/sub/mul/div and the max-pool kernels (argmax, gather, scatter-add along an axis)
// bit for bit the TypeScript kernels; the routing through the backend; and capabilities.autocastSpeed.
import { createRequire } from 'node:module';
import type { DTypeName } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { type CpuBackend, createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { matmulRounded, matmulStridedSum, matmulToFloat32 } from '../src/kernels/matmul.js';
import { stridedSum } from '../src/kernels/strided-sum.js';
import { type CpuHalfGemmPath, defaultAddonPath, loadNative, nativeFused, nativeKernels, type NativePath } from '../src/native.js';
import { type Ref, strides } from './helpers.js';

/** This platform's addon, as the package build writes it: build/<platform>-<arch>/Release/core_cpu.node. */
const ADDON = defaultAddonPath()!;
/** The conformance suite's tolerance for bfloat16 results (packages/conformance/src/tolerance.ts, APPROX). */
const BF16_TOL = { atol: 1e-5, rtol: 2e-2 };

function loaded(options: Parameters<typeof loadNative>[0] = {}): NativePath {
  const native = loadNative({ native: true, ...options });
  if (!('info' in native)) throw new Error(`the addon did not load: ${native.reason}`);
  return native;
}

/** Deterministic 32-bit patterns. */
function randomBits(n: number, seed: number): Uint32Array {
  let s = seed >>> 0;
  return Uint32Array.from({ length: n }, () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0));
}

/** Deterministic floats in [lo, hi). */
function randoms(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  return Float32Array.from(randomBits(n, seed), (u) => lo + (u / 2 ** 32) * (hi - lo));
}

/** A tensor of `be` holding the raw elements `data` from element `offset` on, seen through shape/strides. */
function ref(be: CpuBackend, dtype: DTypeName, data: Float32Array | Uint16Array, shape: readonly number[], viewStrides = strides(shape), offset = 0): Ref {
  const storage = be.alloc(0, dtype, offset + data.length);
  be.write(storage, data, offset);
  return { storage, dtype, shape, strides: viewStrides, offset };
}

/** `values` in `dtype` as the TypeScript cast stores them (raw 16-bit patterns for the half types). */
function encoded(dtype: DTypeName, values: Float32Array): Float32Array | Uint16Array {
  if (dtype === 'float32') return values;
  const out = new Uint16Array(values.length);
  CpuKernels.cast(
    { storage: { data: values } as never, dtype: 'float32', shape: [values.length], strides: [1], offset: 0 },
    { storage: { data: out } as never, dtype, shape: [out.length], strides: [1], offset: 0 },
  );
  return out;
}

/** The storage's raw elements as integers (float32 as its bit patterns), so NaN payloads compare. */
function bits(x: Ref): number[] {
  const data = x.storage.data;
  return Array.from(data instanceof Float32Array ? new Uint32Array(data.buffer, data.byteOffset, data.length) : data);
}

const plain = createCpuBackend({ wasm: false, native: false });
const heap = createCpuBackend({ native: false });

describe('native half GEMM', () => {
  const automatic = loaded();
  const runnable = (['avx512', 'avx2', 'portable'] as const).filter((gemm) => 'info' in loadNative({ native: true, gemm }));
  const paths: CpuHalfGemmPath[] = [...(automatic.info.halfGemm === 'avx512_bf16' ? ['avx512_bf16' as const] : []), ...runnable];

  it('reports vdpbf16ps where the CPU has AVX512-BF16, and the asked-for micro-kernel otherwise', () => {
    expect(automatic.info.halfGemm).toBe(automatic.info.features.includes('avx512_bf16') ? 'avx512_bf16' : automatic.info.gemm);
    for (const gemm of runnable) expect(loaded({ gemm }).info.halfGemm).toBe(gemm);
    // OpenBLAS (where libopenblas.so.0 is installed) has no 16-bit GEMM: the AVX-512 kernel runs those.
    const openblas = loadNative({ native: true, gemm: 'openblas' });
    if (runnable.includes('avx512') && 'info' in openblas) expect(openblas.info.halfGemm).toBe('avx512');
    expect(createCpuBackend({ native: true }).native).toMatchObject({ halfGemm: automatic.info.halfGemm });
  });

  type Case = [name: string, batches: number, m: number, n: number, k: number, layout: { at?: boolean; bt?: boolean; ot?: boolean; bbatch?: number }];
  const CASES: Case[] = [
    ['1×1×1', 1, 1, 1, 1, {}],
    ['odd k 67×131×29', 1, 67, 131, 29, {}],
    ['transposed a, b and out 31×37×41', 1, 31, 37, 41, { at: true, bt: true, ot: true }],
    ['batched, b broadcast 3×17×45×33', 3, 17, 45, 33, { bbatch: 1 }],
    ['few columns (runs transposed) 300×10×128', 1, 300, 10, 128, { bt: true }],
    ['several depth blocks 20×70×1300', 1, 20, 70, 1300, {}],
    // The MNIST Net's fc1: vdpbf16ps adds each pair of products to the f32 sum; 9216 terms of one sign stay in tolerance.
    ['long k, positive terms (fc1) 2×64×9216', 1, 2, 64, 9216, { bt: true }],
  ];

  for (const dtype of ['bfloat16', 'float16'] as const) {
    for (const path of paths) {
      for (const [name, batches, m, n, k, layout] of CASES) {
        it(`${dtype}, ${path}: ${name} matches the TypeScript matmul within bfloat16's conformance tolerance`, () => {
          const native = path === 'avx512_bf16' ? automatic : loaded({ gemm: path });
          const positive = k > 5000;
          const view = (data: Float32Array, b: number, rows: number, cols: number, t?: boolean): Ref =>
            ref(heap, dtype, encoded(dtype, data), [b, rows, cols], t ? [rows * cols, 1, rows] : strides([b, rows, cols]), 3);
          const a = view(randoms(batches * m * k, m + k, positive ? 0 : -1), batches, m, k, layout.at);
          const bb = layout.bbatch ?? batches;
          const b = view(randoms(bb * k * n, n + 7, positive ? 0 : -1), bb, k, n, layout.bt);
          const out = view(new Float32Array(batches * m * n).fill(NaN), batches, m, n, layout.ot);
          const want = view(new Float32Array(batches * m * n), batches, m, n, layout.ot);
          expect(native.halfMatmul(a, b, out, 'float32', 2)).toBe(true);
          CpuKernels.matmul(a, b, want, 'float32');
          const decode = (x: Ref): Float32Array => {
            const f = new Float32Array(x.storage.numel);
            CpuKernels.cast({ ...x, shape: [f.length], strides: [1], offset: 0 }, { storage: { data: f } as never, dtype: 'float32', shape: [f.length], strides: [1], offset: 0 });
            return f;
          };
          const [got, ref32] = [decode(out), decode(want)];
          let bad = 0;
          for (let i = 3; i < got.length; i++) if (!(Math.abs(got[i] - ref32[i]) <= BF16_TOL.atol + BF16_TOL.rtol * Math.abs(ref32[i]))) bad++;
          expect(bad).toBe(0);
        });
      }
    }
  }

  it('rounds the float32 sum once to nearest even and keeps NaN and ±Inf, bit for bit the TypeScript matmul', () => {
    for (const path of paths) {
      const native = path === 'avx512_bf16' ? automatic : loaded({ gemm: path });
      // Rows of a (k = 3) times b's column 0 (all ones): exact sums 1 + 2⁻⁸ (a tie: down to 1), 1 + 3·2⁻⁸ (a tie: up
      // to 1 + 2⁻⁶), 1 + 2⁻⁸ + 2⁻¹⁶ (above the tie: up), ∞, −∞, ∞ − ∞ = NaN, NaN.
      const rows = [[1, 2 ** -8, 0], [1, 3 * 2 ** -8, 0], [1, 2 ** -8, 2 ** -16], [Infinity, 1, 0], [-Infinity, 0, 0], [Infinity, -Infinity, 0], [NaN, 0, 0]];
      const a3 = ref(plain, 'bfloat16', encoded('bfloat16', Float32Array.from(rows.flat())), [1, rows.length, 3]);
      const b = ref(plain, 'bfloat16', encoded('bfloat16', Float32Array.from([1, 1, 1, 1, 0, 0, 1, 0, 1])), [1, 3, 3]);
      const out = ref(plain, 'bfloat16', new Uint16Array(rows.length * 3), [1, rows.length, 3]);
      const want = ref(plain, 'bfloat16', new Uint16Array(rows.length * 3), [1, rows.length, 3]);
      expect(native.halfMatmul(a3, b, out, 'float32', 1)).toBe(true);
      CpuKernels.matmul(a3, b, want, 'float32');
      expect(bits(out)).toEqual(bits(want));
      // Column 0 sums every term: 1 + 2⁻⁸ → 0x3f80, 1 + 3·2⁻⁸ → 0x3f82, 1 + 2⁻⁸ + 2⁻¹⁶ → 0x3f81, +Inf, −Inf, NaN → 0x7fc0 twice.
      expect(bits(out).filter((_, i) => i % 3 === 0)).toEqual([0x3f80, 0x3f82, 0x3f81, 0x7f80, 0xff80, 0x7fc0, 0x7fc0]);
    }
  });

  it('runs the fused matmulToFloat32: 16-bit operands (strided, broadcast) summed into float32 unrounded, bit for bit the TypeScript kernel on exact sums', () => {
    const fused = nativeFused(automatic, {});
    for (const dtype of ['bfloat16', 'float16'] as const) {
      // Integers in [-16, 16] and k = 40: every sum is exact, so any order gives the same bits.
      const ints = (n: number, seed: number) => Float32Array.from(randomBits(n, seed), (u) => (u % 33) - 16);
      const a = ref(heap, dtype, encoded(dtype, ints(3 * 40 * 17, 1)), [3, 17, 40], [17 * 40, 1, 17]);
      const b = ref(heap, dtype, encoded(dtype, ints(40 * 70, 2)), [3, 40, 70], [0, 70, 1]);
      const out = ref(heap, 'float32', new Float32Array(3 * 17 * 70).fill(NaN), [3, 17, 70]);
      const want = ref(plain, 'float32', new Float32Array(3 * 17 * 70), [3, 17, 70]);
      fused.matmulToFloat32!(a, b, out);
      matmulToFloat32(a, b, want);
      expect(bits(out)).toEqual(bits(want));
      // 256 + 1 is 257 in float32 (a bfloat16 out would round it to 256).
      const one = ref(heap, dtype, encoded(dtype, Float32Array.of(256, 1)), [1, 1, 2]);
      const ones = ref(heap, dtype, encoded(dtype, Float32Array.of(1, 1)), [1, 2, 1]);
      const sum = ref(heap, 'float32', new Float32Array(1), [1, 1, 1]);
      fused.matmulToFloat32!(one, ones, sum);
      expect(Array.from(sum.storage.data as Float32Array)).toEqual([257]);
    }
    expect(() => matmulToFloat32(ref(plain, 'float32', new Float32Array(1), [1, 1, 1]), ref(plain, 'float32', new Float32Array(1), [1, 1, 1]), ref(plain, 'float32', new Float32Array(1), [1, 1, 1])))
      .toThrow(/cpu matmulToFloat32: a is float32, expected float16 or bfloat16/);
  });

  it('runs the fused matmulRounded: the sums plus a broadcast float32 bias, rounded once, bit for bit the TypeScript kernel', () => {
    const fused = nativeFused(automatic, {});
    const ints = (n: number, seed: number) => Float32Array.from(randomBits(n, seed), (u) => (u % 33) - 16);
    for (const path of paths) {
      const native = path === 'avx512_bf16' ? automatic : loaded({ gemm: path });
      for (const dtype of ['bfloat16', 'float16'] as const) {
        // Integer operands (exact sums in any order) and biases of short fractions: the one rounding decides the bits.
        const a = ref(heap, dtype, encoded(dtype, ints(3 * 40 * 17, 1)), [3, 17, 40], [17 * 40, 1, 17]);
        const b = ref(heap, dtype, encoded(dtype, ints(40 * 70, 2)), [3, 40, 70], [0, 70, 1]);
        const fractions = (n: number, seed: number) => Float32Array.from(randomBits(n, seed), (u) => ((u % 1025) - 512) / 64);
        // A convolution's bias (one per row, broadcast over batches and columns), a linear's (one per column), a full one, none.
        const biases: (Ref | null)[] = [
          ref(heap, 'float32', fractions(17, 3), [3, 17, 70], [0, 1, 0]),
          ref(heap, 'float32', fractions(70, 4), [3, 17, 70], [0, 0, 1], 5),
          ref(heap, 'float32', fractions(3 * 17 * 70, 5), [3, 17, 70]),
          null,
        ];
        for (const bias of biases) {
          const out = ref(heap, dtype, new Uint16Array(3 * 17 * 70).fill(0x7fc0), [3, 17, 70]);
          const want = ref(plain, dtype, new Uint16Array(3 * 17 * 70), [3, 17, 70]);
          expect(native.halfMatmul(a, b, out, 'float32', 2, bias)).toBe(true);
          matmulRounded(a, b, bias, want);
          expect(bits(out), `${path} ${dtype} bias ${bias?.strides.join(',') ?? 'none'}`).toEqual(bits(want));
        }
      }
    }
    // 256 + 1 + 1: summed and biased in float32 (258), then rounded once; the fused kernel takes it through the addon.
    const one = ref(heap, 'bfloat16', encoded('bfloat16', Float32Array.of(256, 1)), [1, 1, 2]);
    const ones = ref(heap, 'bfloat16', encoded('bfloat16', Float32Array.of(1, 1)), [1, 2, 1]);
    const sum = ref(heap, 'bfloat16', new Uint16Array(1), [1, 1, 1]);
    fused.matmulRounded!(one, ones, ref(heap, 'float32', Float32Array.of(1), [1, 1, 1]), sum);
    expect(bits(sum)).toEqual([0x4381]); // 258
    // A bias of another dtype or shape is the TypeScript kernel's to refuse.
    const bf16Bias = ref(heap, 'bfloat16', new Uint16Array(1), [1, 1, 1]);
    expect(automatic.halfMatmul(one, ones, sum, 'float32', 1, bf16Bias)).toBe(false);
    expect(() => fused.matmulRounded!(one, ones, bf16Bias, sum)).toThrow(/cpu matmulRounded: bias is bfloat16, expected float32/);
    const wide = ref(heap, 'float32', new Float32Array(2), [1, 1, 2]);
    expect(automatic.halfMatmul(one, ones, sum, 'float32', 1, wide)).toBe(false);
    expect(() => fused.matmulRounded!(one, ones, wide, sum)).toThrow(/bias of shape \[1, 1, 2\] must have out's shape \[1, 1, 1\]/);
    // So is a float32 out (matmulToFloat32's), which the addon's GEMM would take.
    expect(() => fused.matmulRounded!(one, ones, null, ref(heap, 'float32', new Float32Array(1), [1, 1, 1]))).toThrow(/cpu matmul: out is float32, expected bfloat16/);
  });

  it('runs the fused matmulStridedSum: each batch\'s float32 product summed into place (col2im) as it is made, bit for bit its product, stridedSum and cast', () => {
    const fused = nativeFused(automatic, {});
    // Fractions: sums that round, so the bits show the order of every addition and the one rounding.
    const fractions = (n: number, seed: number) => Float32Array.from(randomBits(n, seed), (u) => ((u % 2049) - 1024) / 512);
    // [N, C, H, W] images, a kh×kw kernel (stride, dilation) and O output channels: the weight's transpose [K, O] broadcast over the batch, the gradient [N, O, L].
    const geometries = [
      { name: '3x3 windows, out from element 3', image: [4, 3, 7, 9], kernel: [3, 3], stride: [1, 1], dilation: [1, 1], channels: 5, offset: 3 },
      { name: 'a 2x2 kernel, stride 2, dilation 2 in width', image: [3, 2, 8, 9], kernel: [2, 2], stride: [2, 1], dilation: [1, 2], channels: 4, offset: 0 },
      // m = 40 rows and n = 3 columns: the GEMM runs transposed, so the block holds the product's columns as rows.
      { name: 'a transposed GEMM (40 rows, 3 columns)', image: [2, 10, 2, 4], kernel: [2, 2], stride: [1, 1], dilation: [1, 1], channels: 6, offset: 0 },
    ];
    for (const path of paths) {
      const native = path === 'avx512_bf16' ? automatic : loaded({ gemm: path });
      for (const dtype of ['bfloat16', 'float16'] as const) {
        for (const g of geometries) {
          const [N, C, H, W] = g.image as [number, number, number, number];
          const [kh, kw] = g.kernel as [number, number];
          const oh = Math.floor((H - g.dilation[0]! * (kh - 1) - 1) / g.stride[0]!) + 1, ow = Math.floor((W - g.dilation[1]! * (kw - 1) - 1) / g.stride[1]!) + 1;
          const [K, L, O] = [C * kh * kw, oh * ow, g.channels];
          const size = [N, C, kh, kw, oh, ow];
          const view = { strides: [C * H * W, H * W, g.dilation[0]! * W, g.dilation[1]!, g.stride[0]! * W, g.stride[1]!], offset: g.offset };
          const a = ref(heap, dtype, encoded(dtype, fractions(O * K, 1)), [N, K, O], [0, 1, K]);
          const b = ref(heap, dtype, encoded(dtype, fractions(N * O * L, 2)), [N, O, L]);
          const outNumel = g.offset + N * C * H * W + 2;
          for (const outDType of [dtype, 'float32'] as const) {
            const filled = () => (outDType === 'float32' ? new Float32Array(outNumel).fill(NaN) : new Uint16Array(outNumel).fill(0x7fc0));
            const out = ref(heap, outDType, filled(), [outNumel]);
            expect(native.halfMatmulStridedSum(a, b, size, view, out), `${path} ${dtype} ${g.name}`).toBe(true);
            // The three steps with the addon's own GEMM and the TypeScript stridedSum (the same order of additions).
            const want = ref(plain, outDType, filled(), [outNumel]);
            matmulStridedSum(a, b, size, view, want, {
              product: (x, y, p) => expect(native.halfMatmul(x, y, p, 'float32', 2)).toBe(true),
              sum: (src, v, o) => stridedSum(src, v, o),
            });
            expect(bits(out), `${path} ${dtype} ${g.name} into ${outDType}`).toEqual(bits(want));
          }
        }
      }
    }
    // What the addon does not take runs as the three steps: one batch (fewer than the threads).
    const one = ref(heap, 'bfloat16', encoded('bfloat16', fractions(8, 3)), [1, 4, 2]);
    const grad = ref(heap, 'bfloat16', encoded('bfloat16', fractions(6, 4)), [1, 2, 3]);
    const windows = { strides: [24, 6, 1, 1], offset: 0 };
    const out = ref(heap, 'bfloat16', new Uint16Array(24), [24]);
    expect(loaded({ threads: 2 }).halfMatmulStridedSum(one, grad, [1, 4, 1, 3], windows, out)).toBe(false);
    fused.matmulStridedSum!(one, grad, [1, 4, 1, 3], windows, out);
    const want = ref(plain, 'bfloat16', new Uint16Array(24), [24]);
    matmulStridedSum(one, grad, [1, 4, 1, 3], windows, want, { product: matmulToFloat32, sum: stridedSum });
    expect(bits(out)).toEqual(bits(want));
    // Declined: a leading dim that is not the batch, batches that overlap in out, dims that do not split into rows and columns.
    const two = ref(heap, 'bfloat16', new Uint16Array(16), [2, 4, 2]);
    const grads = ref(heap, 'bfloat16', new Uint16Array(12), [2, 2, 3]);
    const single = loaded({ threads: 1 });
    expect(single.halfMatmulStridedSum(two, grads, [2, 4, 1, 3], { strides: [24, 6, 1, 1], offset: 0 }, ref(heap, 'float32', new Float32Array(48), [48]))).toBe(true);
    expect(single.halfMatmulStridedSum(two, grads, [1, 8, 1, 3], { strides: [48, 6, 1, 1], offset: 0 }, ref(heap, 'float32', new Float32Array(48), [48]))).toBe(false);
    expect(single.halfMatmulStridedSum(two, grads, [2, 4, 1, 3], { strides: [6, 6, 1, 1], offset: 0 }, ref(heap, 'float32', new Float32Array(48), [48]))).toBe(false);
    expect(single.halfMatmulStridedSum(two, grads, [2, 2, 6], { strides: [24, 6, 1], offset: 0 }, ref(heap, 'float32', new Float32Array(48), [48]))).toBe(false);
    // The addon itself refuses a view reaching past out, touching nothing.
    const addon = createRequire(import.meta.url)(ADDON) as { halfGemmStridedSum: (...args: unknown[]) => string };
    const target = new Float32Array(10).fill(7);
    const params = Float64Array.from([1, 2, 3, 2, 0, 4, 2, 1, 0, 6, 3, 1, 0, 0, 0, 0, 1]);
    expect(() => addon.halfGemmStridedSum(new Uint16Array(4), new Uint16Array(6), target, params, 'bf16', 'portable', Float64Array.from([3, 2, 0, 10, 7, 1, 2, 3, 0, 2, 1])))
      .toThrow(/halfGemmStridedSum: the view reaches element 11 of an out of 10/);
    expect(Array.from(target)).toEqual(new Array(10).fill(7));
  });

  it('gives float32 outputs from the addon directly, and rejects out-of-range operands touching nothing', () => {
    const addon = createRequire(import.meta.url)(ADDON) as { halfGemm: (...args: unknown[]) => string };
    const a = Uint16Array.from([0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0]); // [[1, 2, 3], [4, 5, 6]]
    const out = new Float32Array(4).fill(7);
    // 2×3 @ 3×2 (b = aᵀ through strides): [[14, 32], [32, 77]].
    const params = Float64Array.from([1, 2, 2, 3, 0, 0, 3, 1, 0, 0, 1, 3, 0, 0, 2, 1, 1]);
    for (const kind of automatic.info.halfGemm === 'avx512_bf16' ? ['avx512_bf16', 'portable'] : ['portable']) {
      out.fill(7);
      expect(addon.halfGemm(a, a, out, params, 'bf16', kind)).toBe(kind);
      expect(Array.from(out)).toEqual([14, 32, 32, 77]);
    }
    out.fill(7);
    const beyond = Float64Array.from([1, 2, 2, 3, 0, 0, 3, 1, 1, 0, 1, 3, 0, 0, 2, 1, 1]);
    expect(() => addon.halfGemm(a, a, out, beyond, 'bf16', 'portable')).toThrow(/halfGemm.*b reaches elements \[1, 6\] of an array of 6|b reaches elements \[1, 6\] of an array of 6/);
    expect(Array.from(out)).toEqual([7, 7, 7, 7]);
    expect(() => addon.halfGemm(a, a, out, params, 'fp8', 'portable')).toThrow(TypeError);
    expect(() => addon.halfGemm(a, a, out, params, 'bf16', 'avx9000')).toThrow(/halfGemm: the 'avx9000' kernel cannot run these operands on this CPU/);
    expect(Array.from(out)).toEqual([7, 7, 7, 7]);
  });
});

/** Float32 values that exercise every rounding rule of the 16-bit casts. */
function specials(): Float32Array {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const fromBits = (x: number): number => ((u[0] = x), f[0]);
  const patterns = [
    0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
    0x7f800001, 0xffc12345, 0x7fbfffff, 0x7fc00000, 0xffffffff, // NaNs: signalling, quiet, with payloads
    0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, 0x7f7f8000, 0x7f7f7fff, 0x00008000, 0x00018000, // bfloat16 ties and near-ties
  ];
  const values = [
    65504, 65519.99, 65520, -65520, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 1.5 * 2 ** -24, 2 ** -14, 2 ** -14 - 2 ** -25, 1 + 2 ** -11, 1 + 3 * 2 ** -11, // float16 edges and ties
  ];
  return Float32Array.from([...patterns.map(fromBits), ...values, ...Array.from(randomBits(40000, 11), fromBits)]);
}

/** Every 16-bit pattern once. */
const ALL16 = Uint16Array.from({ length: 65536 }, (_, i) => i);

describe('native 16-bit casts, copies and arithmetic', () => {
  const native = loaded();

  const castCases: [DTypeName, DTypeName][] = [
    ['float32', 'bfloat16'], ['float32', 'float16'], ['bfloat16', 'float32'], ['float16', 'float32'], ['bfloat16', 'float16'], ['float16', 'bfloat16'],
  ];
  for (const [from, to] of castCases) {
    it(`casts ${from} → ${to} bit for bit the wasm cast and, but for NaN payloads, the TypeScript one (±0, subnormals, NaNs, ±Inf, ties)`, () => {
      const data = from === 'float32' ? specials() : ALL16;
      const n = data.length;
      const alloc = (shape: number[], os: number[]): Ref => ref(heap, to, to === 'float32' ? new Float32Array(n) : new Uint16Array(n), shape, os);
      const wasm = alloc([n], [1]);
      heap.kernels.cast(ref(heap, from, data, [n]), wasm);
      for (const [shape, xs, os] of [[[n], [1], [1]], [[2, n / 2], [1, 2], [n / 2, 1]]] as [number[], number[], number[]][]) {
        const x = ref(heap, from, data, shape, xs);
        const out = alloc(shape, os);
        const ts = alloc(shape, os);
        expect(native.halfElementwise('copy', x, x, out, 2)).toBe(true);
        CpuKernels.cast(x, ts);
        if (xs.length === 1) expect(bits(out)).toEqual(bits(wasm));
        // Widening, the TypeScript cast keeps a NaN's payload; the wasm kernels and the addon give the quiet NaN 0x7fc00000.
        const nan = (i: number): boolean => to === 'float32' && Number.isNaN(out.storage.data[i]);
        expect(bits(out).filter((_, i) => !nan(i))).toEqual(bits(ts).filter((_, i) => !nan(i)));
        expect(bits(out).filter((_, i) => nan(i)).every((u) => u === 0x7fc00000)).toBe(true);
      }
    });
  }

  it('copies 16-bit views bit for bit (NaN payloads kept): an im2col-like overlapping window view', () => {
    for (const dtype of ['bfloat16', 'float16'] as const) {
      const x = ref(plain, dtype, ALL16.subarray(0, 4096), [60, 60, 3, 3], [64, 1, 64, 1]);
      const out = ref(plain, dtype, new Uint16Array(60 * 60 * 9), [60, 60, 3, 3]);
      const want = ref(plain, dtype, new Uint16Array(60 * 60 * 9), [60, 60, 3, 3]);
      expect(native.halfElementwise('copy', x, x, out, 2)).toBe(true);
      CpuKernels.copy(x, want);
      expect(bits(out)).toEqual(bits(want));
    }
  });

  for (const op of ['add', 'sub', 'mul', 'div'] as const) {
    it(`${op} of bfloat16 and float16 views: one float32 operation rounded once, bit for bit the TypeScript kernel`, () => {
      for (const dtype of ['bfloat16', 'float16'] as const) {
        const n = 65536;
        const a = ref(plain, dtype, ALL16, [256, 256], [1, 256]); // transposed
        const b = ref(plain, dtype, Uint16Array.from(randomBits(n, 5), (u) => u >>> 16), [256, 256]);
        const bias = ref(plain, dtype, Uint16Array.of(0x3c01, 0x3f81), [256, 256], [0, 0], 1); // a broadcast scalar
        for (const right of [b, bias]) {
          const out = ref(plain, dtype, new Uint16Array(n), [256, 256]);
          const want = ref(plain, dtype, new Uint16Array(n), [256, 256]);
          expect(native.halfElementwise(op, a, right, out, 2)).toBe(true);
          CpuKernels.binary(op, a, right, want);
          expect(bits(out)).toEqual(bits(want));
        }
        // In place: out is a itself.
        const inPlace = ref(plain, dtype, ALL16, [256, 256]);
        const want = ref(plain, dtype, new Uint16Array(n), [256, 256]);
        CpuKernels.binary(op, inPlace, b, want);
        expect(native.halfElementwise(op, inPlace, b, inPlace, 1)).toBe(true);
        expect(bits(inPlace)).toEqual(bits(want));
      }
    });
  }

  it('declines float32-only work, mismatched shapes and overlapping outputs, doing nothing', () => {
    const f = ref(plain, 'float32', new Float32Array(16), [16]);
    const h = ref(plain, 'bfloat16', new Uint16Array(16).fill(0x3f80), [16]);
    expect(native.halfElementwise('copy', f, f, ref(plain, 'float32', new Float32Array(16), [16]))).toBe(false);
    expect(native.halfElementwise('add', h, h, ref(plain, 'bfloat16', new Uint16Array(8), [8]))).toBe(false);
    expect(native.halfElementwise('add', h, { ...h, offset: 1, shape: [15], strides: [1] }, { ...h, shape: [15] })).toBe(false);
    expect(native.halfMatmul(f, f, f, 'float32')).toBe(false);
    expect(bits(h)).toEqual(new Array(16).fill(0x3f80));
  });
});

describe('native 16-bit max-pool kernels: argReduce, gather and scatterAdd along an axis', () => {
  const native = loaded();
  // A max-pool's window view: [4, 3, 5, 6] values viewed as [4, 3, 5, 3, 2] windows of 2 along the last dim,
  // read transposed so no dim is contiguous; values with NaNs, ±0 and ties from every 16-bit pattern.
  const x = (dtype: DTypeName): Ref => ref(plain, dtype, ALL16.subarray(31000, 31000 + 360), [3, 4, 5, 3, 2], [6, 90, 18, 2, 1]);

  it('argmax and argmin of float16 and bfloat16 fibres give the TypeScript indices (first NaN, first of ties)', () => {
    for (const dtype of ['bfloat16', 'float16'] as const) {
      for (const op of ['argmax', 'argmin'] as const) {
        for (const axis of [4, 1, -2]) {
          const shape = x(dtype).shape.map((n, d) => (d === (axis + 5) % 5 ? 1 : n));
          const out = ref(plain, 'int32', new Int32Array(shape.reduce((a, b) => a * b)) as never, shape);
          const want = ref(plain, 'int32', new Int32Array(shape.reduce((a, b) => a * b)) as never, shape);
          expect(native.halfArgReduce(op, x(dtype), axis, out, 2)).toBe(true);
          CpuKernels.argReduce(op, x(dtype), (axis + 5) % 5, want);
          expect(bits(out)).toEqual(bits(want));
        }
      }
    }
  });

  it('gathers the winners bit for bit and scatter-adds gradients into them as the TypeScript kernels do (repeats summed in float32, rounded once)', () => {
    for (const dtype of ['bfloat16', 'float16'] as const) {
      const index = ref(plain, 'int32', Int32Array.from({ length: 180 }, (_, i) => (i * 7) % 2) as never, [3, 4, 5, 3, 1]);
      const out = ref(plain, dtype, new Uint16Array(180), [3, 4, 5, 3, 1]);
      const want = ref(plain, dtype, new Uint16Array(180), [3, 4, 5, 3, 1]);
      expect(native.halfGather(x(dtype), 4, index, out)).toBe(true);
      CpuKernels.gather(x(dtype), 4, index, want);
      expect(bits(out)).toEqual(bits(want));
      // Every index along dim 1 (size 4) hit several times from a [3, 6, 5, 3, 2] index: sums of up to 6 terms.
      const many = ref(plain, 'int32', Int32Array.from({ length: 540 }, (_, i) => (i * 5) % 4) as never, [3, 6, 5, 3, 2]);
      const src = ref(plain, dtype, ALL16.subarray(15000, 15540), [3, 6, 5, 3, 2]);
      const grad = ref(plain, dtype, ALL16.subarray(15360, 15720), [3, 4, 5, 3, 2]);
      const gradWant = ref(plain, dtype, ALL16.subarray(15360, 15720), [3, 4, 5, 3, 2]);
      expect(native.halfScatterAdd(grad, 1, many, src)).toBe(true);
      CpuKernels.scatterAdd(gradWant, 1, many, src);
      expect(bits(grad)).toEqual(bits(gradWant));
    }
  });

  it('rejects an index out of range with a RangeError, leaving out unchanged', () => {
    const index = ref(plain, 'int32', Int32Array.of(0, 2, 1) as never, [3, 1]);
    const out = ref(plain, 'bfloat16', Uint16Array.of(1, 2, 3, 4, 5, 6), [3, 2]);
    const src = ref(plain, 'bfloat16', Uint16Array.of(0x3f80, 0x3f80, 0x3f80), [3, 1]);
    expect(() => native.halfScatterAdd(out, 1, index, src)).toThrow(/halfScatterAdd: index 2 is out of range for size 2 along dim 1/);
    expect(bits(out)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(() => native.halfGather(out, 1, index, ref(plain, 'bfloat16', new Uint16Array(3), [3, 1]))).toThrow(RangeError);
  });
});

describe('native exp, erf and relu (16-bit; exp and erf of float32 too)', () => {
  const native = loaded();
  for (const op of ['exp', 'erf', 'relu'] as const) {
    it(`${op} of every bfloat16 and float16 value is bit for bit the TypeScript kernel's, in place too`, () => {
      for (const dtype of ['bfloat16', 'float16'] as const) {
        const x = ref(plain, dtype, ALL16, [256, 256]);
        const out = ref(plain, dtype, new Uint16Array(65536), [256, 256]);
        const want = ref(plain, dtype, new Uint16Array(65536), [256, 256]);
        expect(native.halfUnary(op, x, out, 2)).toBe(true);
        CpuKernels.unary(op, x, want);
        expect(bits(out)).toEqual(bits(want));
        const inPlace = ref(plain, dtype, ALL16, [256, 256]);
        expect(native.halfUnary(op, inPlace, inPlace, 1)).toBe(true);
        expect(bits(inPlace)).toEqual(bits(want));
      }
    });
  }

  for (const op of ['exp', 'erf'] as const) {
    it(`${op} of float32 (a GPT's GELU in float32) is bit for bit the TypeScript kernel's, over [-8, 8], tiny, huge and special values`, () => {
      // Every 2^-7 step of the series/continued-fraction switch at 2 and the saturation at 6 lands in [-8, 8].
      const values = Float32Array.from([...randoms(60000, 7, -8, 8), ...randoms(2000, 8, -1e-6, 1e-6), ...randoms(500, 9, -100, 100),
        0, -0, 2, -2, 6, -6, 1.9999999, 2.0000002, 88.72, -103.9, Infinity, -Infinity, NaN, 3e-39, -1e-45, 3.4e38]);
      const n = values.length;
      const out = ref(plain, 'float32', new Float32Array(n), [n]);
      const want = ref(plain, 'float32', new Float32Array(n), [n]);
      expect(native.halfUnary(op, ref(plain, 'float32', values, [n]), out, 2)).toBe(true);
      CpuKernels.unary(op, ref(plain, 'float32', values, [n]), want);
      expect(bits(out)).toEqual(bits(want));
      const inPlace = ref(plain, 'float32', values.slice(), [n]);
      expect(native.halfUnary(op, inPlace, inPlace, 1)).toBe(true);
      expect(bits(inPlace)).toEqual(bits(want));
    });
  }

  it('declines other ops, float32 relu and strided views', () => {
    const x = ref(plain, 'bfloat16', ALL16.subarray(0, 64), [8, 8]);
    expect(native.halfUnary('tanh', x, ref(plain, 'bfloat16', new Uint16Array(64), [8, 8]))).toBe(false);
    expect(native.halfUnary('exp', { ...x, strides: [1, 8] }, ref(plain, 'bfloat16', new Uint16Array(64), [8, 8]))).toBe(false);
    const f = ref(plain, 'float32', new Float32Array(64), [64]);
    expect(native.halfUnary('relu', f, f)).toBe(false);
    expect(native.halfUnary('tanh', f, f)).toBe(false);
  });
});

describe('native compares and where (float32 and 16-bit)', () => {
  const native = loaded();
  const boolOut = (n: number, shape: number[]) => ref(plain, 'bool', new Uint8Array(n) as never, shape);

  it('compares every bfloat16 and float16 value with broadcast specials and with other values, bit for bit the TypeScript kernel', () => {
    for (const dtype of ['bfloat16', 'float16'] as const) {
      const x = ref(plain, dtype, ALL16, [256, 256]);
      const reversed = ref(plain, dtype, ALL16.slice().reverse(), [256, 256]);
      // 0, −0, 1, −∞ and a NaN of this dtype, each one element broadcast by zero strides.
      const specials = dtype === 'bfloat16' ? [0x0000, 0x8000, 0x3f80, 0xff80, 0x7fc1] : [0x0000, 0x8000, 0x3c00, 0xfc00, 0x7e01];
      const ys = [reversed, ...specials.map((h) => ref(plain, dtype, Uint16Array.of(h), [256, 256], [0, 0]))];
      for (const op of ['gt', 'lt', 'ge', 'le', 'eq', 'ne'] as const) {
        for (const y of ys) {
          const out = boolOut(65536, [256, 256]);
          const want = boolOut(65536, [256, 256]);
          expect(native.compare(op, x, y, out, 2)).toBe(true);
          CpuKernels.compare(op, x, y, want);
          expect(bits(out)).toEqual(bits(want));
        }
      }
    }
  });

  it('compares float32 values, specials included, with broadcast specials and with other values, bit for bit the TypeScript kernel', () => {
    const values = Float32Array.from([0, -0, 1, -1, 0.5, Infinity, -Infinity, NaN, 1e-45, -3.4e38, ...randoms(70000, 9, -2, 2)]);
    const n = values.length;
    const x = ref(plain, 'float32', values, [n]);
    const ys = [ref(plain, 'float32', values.slice().reverse(), [n]), ...[0, -0, 1, -Infinity, NaN].map((v) => ref(plain, 'float32', Float32Array.of(v), [n], [0]))];
    for (const op of ['gt', 'lt', 'ge', 'le', 'eq', 'ne'] as const) {
      for (const y of ys) {
        const out = boolOut(n, [n]);
        const want = boolOut(n, [n]);
        expect(native.compare(op, x, y, out, 2)).toBe(true);
        CpuKernels.compare(op, x, y, want);
        expect(bits(out)).toEqual(bits(want));
      }
    }
  });

  it('selects with where, broadcast scalars and contiguous operands, bit for bit the TypeScript kernel', () => {
    const n = 70000;
    const cond = ref(plain, 'bool', Uint8Array.from(randomBits(n, 5), (u) => u & 1) as never, [n]);
    // Quiet NaNs only: the TypeScript kernel reads elements as JS numbers, which quiets a signaling
    // NaN. In plain arrays and in a wasm heap (a SharedArrayBuffer where threads run).
    const values = Float32Array.from([NaN, -0, Infinity, -Infinity, 1e-45, ...randoms(n - 5, 8, -1e30, 1e30)]);
    for (const be of [plain, heap]) {
      const mask = ref(be, 'bool', Uint8Array.from(randomBits(n, 5), (u) => u & 1) as never, [n]);
      const a32 = ref(be, 'float32', values, [n]);
      for (const b of [ref(be, 'float32', Float32Array.of(-0), [n], [0]), ref(be, 'float32', randoms(n, 10), [n])]) {
        const out = ref(be, 'float32', new Float32Array(n), [n]);
        const want = ref(plain, 'float32', new Float32Array(n), [n]);
        expect(native.where(mask, a32, b, out, 2)).toBe(true);
        CpuKernels.where(mask, a32, b, want);
        expect(bits(out)).toEqual(bits(want));
      }
    }
    for (const dtype of ['bfloat16', 'float16'] as const) {
      const a = ref(plain, dtype, Uint16Array.from(randomBits(n, 6), (u) => u & 0xffff), [n]);
      for (const b of [ref(plain, dtype, Uint16Array.of(0x8000), [n], [0]), ref(plain, dtype, Uint16Array.from(randomBits(n, 7), (u) => u >>> 16), [n])]) {
        const out = ref(plain, dtype, new Uint16Array(n), [n]);
        const want = ref(plain, dtype, new Uint16Array(n), [n]);
        expect(native.where(cond, a, b, out, 2)).toBe(true);
        CpuKernels.where(cond, a, b, want);
        expect(bits(out)).toEqual(bits(want));
      }
    }
  });

  it('declines int32, strided operands and outputs that share a storage with an input', () => {
    const x = ref(plain, 'bfloat16', ALL16.subarray(0, 64), [8, 8]);
    expect(native.compare('gt', { ...x, strides: [1, 8] }, x, boolOut(64, [8, 8]))).toBe(false);
    const i = ref(plain, 'int32', new Int32Array(64) as never, [8, 8]);
    expect(native.compare('gt', i, i, boolOut(64, [8, 8]))).toBe(false);
    expect(native.where(boolOut(64, [8, 8]), i, i, ref(plain, 'int32', new Int32Array(64) as never, [8, 8]))).toBe(false);
    const cond = boolOut(64, [8, 8]);
    expect(native.where(cond, x, x, x)).toBe(false);
    expect(native.where(cond, { ...x, strides: [1, 8] }, x, ref(plain, 'bfloat16', new Uint16Array(64), [8, 8]))).toBe(false);
  });
});

describe('native 16-bit routing', () => {
  it('sends bfloat16 matmuls, casts, strided copies and adds, and max-pool kernels to the addon, and small ones to the base kernels', () => {
    const calls: string[] = [];
    const record = <T extends (...args: never[]) => void>(name: string, fn: T): T => ((...args: never[]) => (calls.push(name), fn(...args))) as T;
    const kernels = nativeKernels(loaded(), {
      ...CpuKernels,
      matmul: record('matmul', CpuKernels.matmul),
      cast: record('cast', CpuKernels.cast),
      copy: record('copy', CpuKernels.copy),
      binary: record('binary', CpuKernels.binary),
      argReduce: record('argReduce', CpuKernels.argReduce),
      gather: record('gather', CpuKernels.gather),
      scatterAdd: record('scatterAdd', CpuKernels.scatterAdd),
    });
    const m32 = (rows: number): Ref => ref(heap, 'bfloat16', encoded('bfloat16', randoms(rows * 32, rows)), [1, rows, 32]);
    kernels.matmul(m32(32), m32(32), ref(heap, 'bfloat16', new Uint16Array(1024), [1, 32, 32]), 'float32');
    const big = 1 << 15;
    const x = ref(heap, 'float32', randoms(big, 3), [128, 256]);
    const half = ref(heap, 'bfloat16', new Uint16Array(big), [128, 256]);
    kernels.cast(x, half);
    const t = { ...half, shape: [256, 128], strides: [1, 256] };
    kernels.copy(t, ref(heap, 'bfloat16', new Uint16Array(big), [256, 128]));
    kernels.binary('add', t, t, ref(heap, 'bfloat16', new Uint16Array(big), [256, 128]));
    // Windows of 2 (a max-pool's): as many winners as the smallest strided op the addon takes.
    const windows = ref(heap, 'bfloat16', Uint16Array.from(randomBits(2 * big, 9), (u) => u >>> 17), [big, 2]);
    const winners = ref(heap, 'int32', new Int32Array(big) as never, [big, 1]);
    kernels.argReduce('argmax', windows, 1, winners);
    kernels.gather(windows, 1, winners, ref(heap, 'bfloat16', new Uint16Array(big), [big, 1]));
    kernels.scatterAdd(ref(heap, 'bfloat16', new Uint16Array(2 * big), [big, 2]), 1, winners, ref(heap, 'bfloat16', new Uint16Array(big), [big, 1]));
    expect(calls).toEqual([]);
    kernels.matmul(m32(31), m32(32), ref(heap, 'bfloat16', new Uint16Array(992), [1, 31, 32]), 'float32');
    kernels.cast(ref(heap, 'float32', randoms(64, 4), [64]), ref(heap, 'bfloat16', new Uint16Array(64), [64]));
    kernels.binary('add', x, x, ref(heap, 'float32', new Float32Array(big), [128, 256])); // contiguous float32: the wasm kernels stream it
    kernels.binary('mul', half, half, ref(heap, 'bfloat16', new Uint16Array(big), [128, 256])); // contiguous bfloat16: native
    const small = { ...half, shape: [64], strides: [1] };
    kernels.binary('mul', small, small, ref(heap, 'bfloat16', new Uint16Array(64), [64])); // small
    expect(calls).toEqual(['matmul', 'cast', 'binary', 'binary']);
  });
});

describe('capabilities.autocastSpeed', () => {
  it('calls bfloat16 autocast faster only with the vdpbf16ps GEMM, and says why not elsewhere', () => {
    const off = createCpuBackend({ native: false }).capabilities.autocastSpeed;
    expect(off?.bfloat16).toEqual({ faster: false, reason: 'no native bfloat16 kernels (turned off by the backend option native: false)' });
    expect(off?.float16).toMatchObject({ faster: false, reason: expect.stringMatching(/no native float16 arithmetic/) });
    const widened = createCpuBackend({ native: true, gemm: 'portable' });
    const why = widened.native.loaded && widened.native.features.includes('avx512_bf16') ? 'the gemm option or CORE_CPU_GEMM asks for it' : 'no AVX512-BF16 on this CPU';
    expect(widened.capabilities.autocastSpeed?.bfloat16).toEqual({ faster: false, reason: `bfloat16 matmuls widen to float32 for the portable kernel (${why})` });
    const auto = createCpuBackend({ native: true });
    if (auto.native.loaded && auto.native.halfGemm === 'avx512_bf16') {
      expect(auto.capabilities.autocastSpeed?.bfloat16).toEqual({ faster: true, reason: expect.stringMatching(/run vdpbf16ps \(AVX512-BF16\), measured faster than float32/) });
    }
  });
});
