// The native GEMMs on every operand layout the core passes them: row-major, a and/or b transposed
// (depth contiguous: packed by register transposes of 16×16 or 8×8 tiles), a batch-broadcast operand,
// offsets, over sizes that end micro-panels, transpose tiles, bf16 pairs and depth blocks part way
// (1, 7, 17, 33, 65, 300). The fp32 GEMM (each micro-kernel this CPU runs, on 2 threads, so split
// rectangles start packing mid-operand) and the bfloat16/float16 GEMM (vdpbf16ps and the widening
// kernels, results in float32) against a float64 reference: |got − exact| ≤ 2·k·2^-24·Σ|a·b|, the
// bound of summing exact products in float32 in any order (products of 16-bit values are exact).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { type CpuHalfGemmPath, defaultAddonPath, loadNative } from '../src/native.js';
import { expectMatmulClose, type Ref } from './helpers.js';

/** This platform's addon, as the package build writes it: build/<platform>-<arch>/Release/core_cpu.node. */
const ADDON = defaultAddonPath()!;
type HalfGemm = (a: Uint16Array, b: Uint16Array, out: Float32Array, params: Float64Array, type: 'bf16' | 'f16', kind: CpuHalfGemmPath) => string;

const SIZES = [1, 7, 17, 33, 65, 300];
/** Every m × n × k of SIZES up to `most` multiply-adds (the reference runs in JavaScript). */
function shapes(most: number): [number, number, number][] {
  return SIZES.flatMap((m) => SIZES.flatMap((n) => SIZES.filter((k) => m * n * k <= most).map((k): [number, number, number] => [m, n, k])));
}

type Layout = { at: boolean; bt: boolean; abatch?: number; bbatch?: number };
const LAYOUTS: [string, Layout][] = [
  ['row-major', { at: false, bt: false }],
  ['a transposed', { at: true, bt: false }],
  ['b transposed', { at: false, bt: true }],
  ['a and b transposed', { at: true, bt: true }],
];
/** Batched problems whose a or b is one matrix broadcast over the batch (batch stride 0), transposed or not. */
const BROADCASTS: [string, Layout][] = [
  ['a broadcast', { at: false, bt: true, abatch: 1 }],
  ['a broadcast and transposed', { at: true, bt: false, abatch: 1 }],
  ['b broadcast and transposed', { at: false, bt: true, bbatch: 1 }],
  ['b broadcast, a transposed', { at: true, bt: false, bbatch: 1 }],
];
const BATCHED: [number, number, number, number][] = [
  [3, 7, 33, 65],
  [4, 33, 17, 300],
  [3, 65, 9, 300], // few columns: runs transposed
  [2, 300, 7, 17],
];
const OFFSET = 5;

let seed = 1;
/** Deterministic 32-bit patterns. */
function randomBits(n: number): Uint32Array {
  let s = seed++ * 2654435761;
  return Uint32Array.from({ length: n }, () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0));
}

/** A float32 view [batches, rows, cols] of `data` from OFFSET on: row-major, or stored [batches, cols, rows] and transposed. */
function view(data: Float32Array, batches: number, rows: number, cols: number, transposed: boolean): Ref {
  const storage = { data, numel: data.length } as never;
  const strides = transposed ? [rows * cols, 1, rows] : [rows * cols, cols, 1];
  return { storage, dtype: 'float32', shape: [batches, rows, cols], strides, offset: OFFSET };
}

/** Yields to the event loop between the cases of a long test. */
const breathe = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('native fp32 GEMM: every layout and awkward size against a float64 reference', () => {
  const kernels = (['avx512', 'avx2', 'portable'] as const).filter((gemm) => 'info' in loadNative({ native: true, gemm }));

  it('runs the x86 micro-kernels this CPU has', () => {
    const features = createCpuBackend({ native: true }).native;
    if (!features.loaded) throw new Error(`the addon did not load: ${features.reason}`);
    if (features.features.includes('avx512f')) expect(kernels).toContain('avx512');
    if (features.features.includes('avx2')) expect(kernels).toContain('avx2');
  });

  /** Runs a [ab, m, k] @ b [bb, k, n] → [batches, m, n] with `gemm` into exact-size arrays (an overread past them may fault). */
  function check(gemm: (typeof kernels)[number], batches: number, m: number, n: number, k: number, layout: Layout): void {
    const native = loadNative({ native: true, gemm });
    if (!('info' in native)) throw new Error(native.reason);
    const ab = layout.abatch ?? batches;
    const bb = layout.bbatch ?? batches;
    const operand = (count: number): Float32Array => {
      const storage = new Float32Array(OFFSET + count);
      storage.set(Float32Array.from(randomBits(count), (u) => u / 2 ** 31 - 1), OFFSET);
      return storage;
    };
    const a = view(operand(ab * m * k), ab, m, k, layout.at);
    const b = view(operand(bb * k * n), bb, k, n, layout.bt);
    const out = view(new Float32Array(OFFSET + batches * m * n).fill(Number.NaN), batches, m, n, false);
    expect(native.matmul(a, b, out, 'float32', 2)).toBe(true);
    try {
      expectMatmulClose(a, b, out);
    } catch (error) {
      throw new Error(`${gemm} ${batches}×${m}×${n}×${k} ${JSON.stringify(layout)}: ${(error as Error).message}`);
    }
  }

  for (const gemm of ['avx512', 'avx2', 'portable'] as const) {
    for (const [name, layout] of LAYOUTS) {
      it.runIf(kernels.includes(gemm))(`${gemm}: ${name}, m, n, k in {${SIZES}}`, async () => {
        for (const [m, n, k] of shapes(1e6)) {
          check(gemm, 1, m, n, k, layout);
          await breathe();
        }
      });
    }
    it.runIf(kernels.includes(gemm))(`${gemm}: batched with a broadcast operand, transposed or not`, async () => {
      for (const [, layout] of BROADCASTS) {
        for (const [batches, m, n, k] of BATCHED) {
          check(gemm, batches, m, n, k, layout);
          await breathe();
        }
      }
    });
  }
});

describe('native bfloat16/float16 GEMM: every layout and awkward size against a float64 reference', () => {
  const addon = createRequire(import.meta.url)(ADDON) as { halfGemm: HalfGemm };
  const automatic = loadNative({ native: true });
  const widening = (['avx512', 'avx2', 'portable'] as const).filter((gemm) => 'info' in loadNative({ native: true, gemm }));
  const kinds: CpuHalfGemmPath[] = [...('info' in automatic && automatic.info.halfGemm === 'avx512_bf16' ? ['avx512_bf16' as const] : []), ...widening];

  /**
   * Random 16-bit operands of `dtype`, magnitudes in [2^-8, 2^2) with random signs and mantissas
   * (no subnormals, which vdpbf16ps reads as zero), and their float32 values.
   */
  function operand(dtype: 'bf16' | 'f16', count: number): { bits: Uint16Array; values: Float32Array } {
    const bits = new Uint16Array(OFFSET + count);
    bits.set(
      Array.from(randomBits(count), (u) => (dtype === 'bf16' ? (u & 0x807f) | ((119 + ((u >>> 8) % 10)) << 7) : (u & 0x83ff) | ((7 + ((u >>> 10) % 10)) << 10))),
      OFFSET,
    );
    const values = new Float32Array(bits.length);
    CpuKernels.cast(
      { storage: { data: bits } as never, dtype: dtype === 'bf16' ? 'bfloat16' : 'float16', shape: [bits.length], strides: [1], offset: 0 },
      { storage: { data: values } as never, dtype: 'float32', shape: [bits.length], strides: [1], offset: 0 },
    );
    return { bits, values };
  }

  function check(kind: CpuHalfGemmPath, dtype: 'bf16' | 'f16', batches: number, m: number, n: number, k: number, layout: Layout): void {
    const ab = layout.abatch ?? batches;
    const bb = layout.bbatch ?? batches;
    const a = operand(dtype, ab * m * k);
    const b = operand(dtype, bb * k * n);
    const out = new Float32Array(OFFSET + batches * m * n).fill(Number.NaN);
    const [av, bv, ov] = [view(a.values, ab, m, k, layout.at), view(b.values, bb, k, n, layout.bt), view(out, batches, m, n, false)];
    const strides = (x: Ref): number[] => [x.offset, x.shape[0] === 1 ? 0 : x.strides[0]!, x.strides[1]!, x.strides[2]!];
    const params = Float64Array.from([batches, m, n, k, ...strides(av), ...strides(bv), ...strides(ov), 2]);
    expect(addon.halfGemm(a.bits, b.bits, out, params, dtype, kind)).toBe(kind === 'avx512_bf16' && dtype === 'f16' ? 'avx512' : kind);
    try {
      expectMatmulClose(av, bv, ov);
    } catch (error) {
      throw new Error(`${kind} ${dtype} ${batches}×${m}×${n}×${k} ${JSON.stringify(layout)}: ${(error as Error).message}`);
    }
  }

  for (const kind of ['avx512_bf16', 'avx512', 'avx2', 'portable'] as const) {
    for (const dtype of ['bf16', 'f16'] as const) {
      for (const [name, layout] of LAYOUTS) {
        it.runIf(kinds.includes(kind))(`${kind}, ${dtype}: ${name}, m, n, k in {${SIZES}}`, async () => {
          for (const [m, n, k] of shapes(2e5)) {
            check(kind, dtype, 1, m, n, k, layout);
            await breathe();
          }
          // Several depth blocks (512 bfloat16 deep, 256 widened), an odd depth ending the last pair.
          check(kind, dtype, 1, 17, 33, 1101, layout);
        });
      }
      it.runIf(kinds.includes(kind))(`${kind}, ${dtype}: batched with a broadcast operand, transposed or not`, async () => {
        for (const [, layout] of BROADCASTS) {
          for (const [batches, m, n, k] of BATCHED) {
            check(kind, dtype, batches, m, n, k, layout);
            await breathe();
          }
        }
      });
    }
  }
});
