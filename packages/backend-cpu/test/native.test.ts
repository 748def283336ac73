// The native kernel path: the loader (loaded here, turned off, a missing or broken addon falling
// back with a one-line reason), the routing of float32 matmuls to it, and its GEMM against a float64
// reference for every micro-kernel this CPU runs, on 1 and 2 threads, over awkward shapes and layouts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CpuBackend, createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { type CpuGemmPath, defaultAddonPath, loadNative, nativeKernels } from '../src/native.js';
import { expectMatmulClose, type Ref, strides } from './helpers.js';

/** This platform's addon, as the package build writes it: build/<platform>-<arch>/Release/core_cpu.node. */
const ADDON = defaultAddonPath()!;

/** Deterministic floats in [-1, 1). */
function randoms(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

/** A float32 tensor of `be` holding `data` from element `offset` on, seen through shape/strides. */
function ref(be: CpuBackend, data: Float32Array, shape: readonly number[], viewStrides = strides(shape), offset = 0): Ref {
  const storage = be.alloc(0, 'float32', offset + data.length);
  be.write(storage, data, offset);
  return { storage, dtype: 'float32', shape, strides: viewStrides, offset };
}

describe('native loader', () => {
  const saved = process.env.CORE_CPU_NATIVE;
  afterEach(() => {
    if (saved === undefined) delete process.env.CORE_CPU_NATIVE;
    else process.env.CORE_CPU_NATIVE = saved;
  });

  it('loads the built addon and reports the GEMM, the CPU features and the threads', () => {
    const be = createCpuBackend({ threads: 2, native: true });
    expect(be.native).toMatchObject({ loaded: true, threads: 2 });
    if (!be.native.loaded) return;
    expect(['avx512', 'avx2', 'portable', 'openblas']).toContain(be.native.gemm);
    if (process.arch === 'x64') expect(be.native.features).toContain('sse2');
    // The default: the AVX-512 micro-kernel where the CPU has it, else OpenBLAS when installed.
    if (be.native.features.includes('avx512f')) expect(be.native.gemm).toBe('avx512');
  });

  it('is off with CORE_CPU_NATIVE=0 and with the option native: false, saying so', () => {
    process.env.CORE_CPU_NATIVE = '0';
    expect(createCpuBackend().native).toEqual({ loaded: false, reason: 'turned off by CORE_CPU_NATIVE=0' });
    expect(createCpuBackend({ native: true }).native.loaded).toBe(true); // the option wins over the variable
    delete process.env.CORE_CPU_NATIVE;
    expect(createCpuBackend({ native: false }).native).toEqual({ loaded: false, reason: 'turned off by the backend option native: false' });
  });

  it('falls back with a one-line reason when the addon is missing or broken, and matmul still works', () => {
    const dir = mkdtempSync(join(tmpdir(), 'core-cpu-native-'));
    const broken = join(dir, 'core_cpu.node');
    writeFileSync(broken, 'not a shared object\n');
    const missing = createCpuBackend({ native: true, nativeAddon: join(dir, 'absent.node') });
    const bad = createCpuBackend({ native: true, nativeAddon: broken });
    expect(missing.native.loaded).toBe(false);
    expect(bad.native.loaded).toBe(false);
    if (missing.native.loaded || bad.native.loaded) return;
    expect(missing.native.reason).toMatch(new RegExp(`native addon for ${process.platform}-${process.arch} was not built .*absent\\.node is missing`));
    // In an installed package the file comes from the tarball: no build command to suggest.
    const installed = createCpuBackend({ native: true, nativeAddon: join(dir, 'node_modules', '@core', 'backend-cpu', 'core_cpu.node') });
    expect(installed.native.loaded).toBe(false);
    if (!installed.native.loaded) expect(installed.native.reason).toMatch(/native addon for linux-(x64|arm64) is not in this installed package \(.*is missing\); the wasm kernels run$/);
    expect(bad.native.reason).toMatch(/native addon .*core_cpu\.node failed to load: /);
    for (const reason of [missing.native.reason, bad.native.reason]) expect(reason).not.toMatch(/\n/);
    const a = ref(bad, randoms(6, 1), [1, 2, 3]);
    const b = ref(bad, randoms(12, 2), [1, 3, 4]);
    const out = ref(bad, new Float32Array(8).fill(NaN), [1, 2, 4]);
    bad.kernels.matmul(a, b, out, 'float32');
    expectMatmulClose(a, b, out);
  });

  it("names the platform an addon was built for when it is not this one's, and does not load it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'core-cpu-native-'));
    const other = process.arch === 'arm64' ? { arch: 'x64', machine: 0x3e } : { arch: 'arm64', machine: 0xb7 };
    // A 64-bit little-endian ELF shared object's header, e_machine the other architecture.
    const header = new Uint8Array(64);
    header.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
    header[16] = 3;
    header[18] = other.machine;
    const foreign = join(dir, 'core_cpu.node');
    writeFileSync(foreign, header);
    const be = createCpuBackend({ native: true, nativeAddon: foreign });
    expect(be.native).toEqual({ loaded: false, reason: `the native addon ${foreign} is built for linux-${other.arch}, and this is ${process.platform}-${process.arch}; the wasm kernels run` });
  });

  it('names a bad gemm option, and reports a GEMM this machine lacks as the reason it is off', () => {
    expect(() => createCpuBackend({ gemm: 'avx9000' as CpuGemmPath })).toThrow(/option gemm must be one of 'avx512', 'avx2', 'portable', 'openblas', got "avx9000"/);
    const probe = createCpuBackend({ native: true });
    if (!probe.native.loaded) throw new Error(`the addon did not load: ${probe.native.reason}`);
    const openblas = createCpuBackend({ native: true, gemm: 'openblas' });
    if (openblas.native.loaded) expect(openblas.native.gemm).toBe('openblas');
    else expect(openblas.native.reason).toMatch(/the backend option gemm asks for the 'openblas' GEMM, but OpenBLAS is not available/);
    const avx512 = createCpuBackend({ native: true, gemm: 'avx512' });
    expect(avx512.native.loaded).toBe(probe.native.features.includes('avx512f'));
  });

  it('takes the variable CORE_CPU_GEMM when the option is absent', () => {
    const saved = process.env.CORE_CPU_GEMM;
    process.env.CORE_CPU_GEMM = 'portable';
    try {
      expect(createCpuBackend({ native: true }).native).toMatchObject({ loaded: true, gemm: 'portable' });
      process.env.CORE_CPU_GEMM = 'fast';
      expect(createCpuBackend({ native: true }).native).toMatchObject({ loaded: false, reason: expect.stringMatching(/CORE_CPU_GEMM asks for the 'fast' GEMM, but this machine runs only /) });
    } finally {
      if (saved === undefined) delete process.env.CORE_CPU_GEMM;
      else process.env.CORE_CPU_GEMM = saved;
    }
  });

  it('rejects out-of-range operands in the addon itself with a RangeError, touching nothing', () => {
    const addon = createRequire(import.meta.url)(ADDON) as { gemm: (...args: unknown[]) => string };
    const a = new Float32Array(6);
    const out = new Float32Array(4).fill(7);
    // 2×3 @ 3×2 with b's offset one past what its 6 elements allow.
    const params = Float64Array.from([1, 2, 2, 3, 0, 0, 3, 1, 1, 0, 2, 1, 0, 0, 2, 1, 1]);
    expect(() => addon.gemm(a, new Float32Array(6), out, params, 'portable')).toThrow(RangeError);
    expect(() => addon.gemm(a, new Float32Array(6), out, params, 'portable')).toThrow(/b reaches elements \[1, 6\] of an array of 6/);
    expect(Array.from(out)).toEqual([7, 7, 7, 7]);
    expect(() => addon.gemm(a, a, out, new Float64Array(3), 'portable')).toThrow(/params holds 17 numbers, got 3/);
    expect(() => addon.gemm(a, a, new Float64Array(4), params, 'portable')).toThrow(TypeError);
  });
});

describe('native matmul routing', () => {
  it('takes float32 matmuls and hands float64, mixed accumulation, aliased outputs and small products to the base kernels', () => {
    const be = createCpuBackend({ wasm: false, native: false });
    const native = loadNative({ native: true });
    if (!('info' in native)) throw new Error(`the addon did not load: ${native.reason}`);
    const calls: string[] = [];
    const kernels = nativeKernels(native, {
      ...CpuKernels,
      matmul(a, b, out, accumulate) {
        calls.push(`${a.dtype}/${accumulate}`);
        CpuKernels.matmul(a, b, out, accumulate);
      },
    });
    // 2·32·32·32 flops: the smallest product the native path takes.
    const a = ref(be, randoms(32 * 32, 3), [1, 32, 32]);
    const b = ref(be, randoms(32 * 32, 4), [1, 32, 32]);
    const out = ref(be, new Float32Array(32 * 32), [1, 32, 32]);
    kernels.matmul(a, b, out, 'float32');
    expect(calls).toEqual([]);
    expectMatmulClose(a, b, out);
    const a64: Ref = { ...a, dtype: 'float64', storage: be.alloc(0, 'float64', 32 * 32) };
    const b64: Ref = { ...b, dtype: 'float64', storage: be.alloc(0, 'float64', 32 * 32) };
    kernels.matmul(a64, b64, { ...out, dtype: 'float64', storage: be.alloc(0, 'float64', 32 * 32) }, 'float64');
    kernels.matmul(a, b, out, 'float64');
    kernels.matmul(a, b, a, 'float32'); // out aliases a
    const small = ref(be, randoms(31 * 32, 5), [1, 31, 32]);
    kernels.matmul(small, b, ref(be, new Float32Array(31 * 32), [1, 31, 32]), 'float32'); // below the size the addon is worth it
    expect(calls).toEqual(['float64/float64', 'float32/float64', 'float32/float32', 'float32/float32']);
  });
});

describe('native calls and the wasm pool', () => {
  it('runs beforeCall ahead of every call into the addon (where the wasm pool parks its spinning workers)', () => {
    const be = createCpuBackend({ wasm: false, native: false });
    let announced = 0;
    const native = loadNative({ native: true }, () => announced++);
    if (!('info' in native)) throw new Error(`the addon did not load: ${native.reason}`);
    // The addon's own calls, counted on its module (the loaded path looks each entry point up there).
    const module = createRequire(import.meta.url)(ADDON) as Record<string, unknown>;
    announced = 0; // loading called info()
    const saved = Object.entries(module).filter((entry): entry is [string, (...args: unknown[]) => unknown] => typeof entry[1] === 'function');
    const order: string[] = [];
    for (const [name, fn] of saved) {
      module[name] = (...args: unknown[]) => {
        order.push(`${name} after ${announced} announced`);
        return fn(...args);
      };
    }
    try {
      const kernels = nativeKernels(native, CpuKernels);
      const a = ref(be, randoms(64 * 64, 3), [1, 64, 64]);
      const out = ref(be, new Float32Array(64 * 64), [1, 64, 64]);
      kernels.matmul(a, a, out, 'float32');
      expectMatmulClose(a, a, out);
      expect(order.some((call) => call.startsWith('gemm '))).toBe(true);
      // Each call into the addon came right after its own announcement.
      expect(order).toEqual(order.map((call, i) => call.replace(/\d+ announced$/, `${i + 1} announced`)));
      expect(announced).toBe(order.length);
    } finally {
      for (const [name, fn] of saved) module[name] = fn;
    }
  });
});

type Layout = { at?: boolean; bt?: boolean; ot?: boolean; abatch?: number; bbatch?: number; offset?: number };

const CASES: [string, number, number, number, number, Layout][] = [
  ['1×1×1', 1, 1, 1, 1, {}],
  ['primes 67×131×29', 1, 67, 131, 29, {}],
  ['primes with offsets 67×131×29', 1, 67, 131, 29, { offset: 5 }],
  ['A transposed 53×40×97', 1, 53, 40, 97, { at: true }],
  ['B transposed 40×53×97', 1, 40, 53, 97, { bt: true }],
  ['both transposed, out transposed 31×37×41', 1, 31, 37, 41, { at: true, bt: true, ot: true }],
  ['batched 3×17×29×31', 3, 17, 29, 31, {}],
  ['batch-broadcast A 4×9×60×50', 4, 9, 60, 50, { abatch: 1 }],
  ['batch-broadcast B 2×130×7×26', 2, 130, 7, 26, { bbatch: 1 }],
  ['large K 5×7×3001', 1, 5, 7, 3001, {}],
  ['several K and N blocks 40×2100×260', 1, 40, 2100, 260, {}],
  ['tall-skinny 1000×3×2', 1, 1000, 3, 2, {}],
];

/** a [ab, m, k] @ b [bb, k, n] → out [batches, m, n] in `be`, in the layout asked for. */
function operands(be: CpuBackend, batches: number, m: number, n: number, k: number, opt: Layout): [Ref, Ref, Ref] {
  const ab = opt.abatch ?? batches;
  const bb = opt.bbatch ?? batches;
  const offset = opt.offset ?? 0;
  // Transposed: stored [B, cols, rows], viewed [B, rows, cols].
  const view = (data: Float32Array, b: number, rows: number, cols: number, t?: boolean): Ref =>
    ref(be, data, [b, rows, cols], t ? [rows * cols, 1, rows] : strides([b, rows, cols]), offset);
  const a = view(randoms(ab * m * k, m + k), ab, m, k, opt.at);
  const b = view(randoms(bb * k * n, n + 7), bb, k, n, opt.bt);
  const out = view(new Float32Array(batches * m * n).fill(NaN), batches, m, n, opt.ot);
  return [a, b, out];
}

describe('native GEMM against a float64 reference', () => {
  const kernels = loadNative({ native: true });
  const runnable = (['avx512', 'avx2', 'portable', 'openblas'] as const).filter((gemm) => 'info' in loadNative({ native: true, gemm }));

  it('runs both x86 micro-kernels where the CPU has AVX-512 (as here)', () => {
    if (!('info' in kernels)) throw new Error(`the addon did not load: ${kernels.reason}`);
    expect(runnable).toContain('portable');
    if (kernels.info.features.includes('avx2') && kernels.info.features.includes('fma')) expect(runnable).toContain('avx2');
    if (kernels.info.features.includes('avx512f')) expect(runnable).toContain('avx512');
  });

  // OpenBLAS runs where libopenblas.so.0 is installed (layouts cblas cannot take go to the micro-kernels).
  for (const gemm of ['avx512', 'avx2', 'portable', 'openblas'] as const) {
    for (const threads of [1, 2]) {
      describe(`${gemm}, ${threads} thread${threads > 1 ? 's' : ''}`, () => {
        // Wasm-heap storages (shared memory) for the main cases; plain arrays are checked below.
        const be = createCpuBackend({ native: false });
        const native = loadNative({ native: true, gemm });
        for (const [name, batches, m, n, k, opt] of CASES) {
          it.runIf(runnable.includes(gemm))(name, () => {
            if (!('info' in native)) throw new Error(native.reason);
            expect(native.info.gemm).toBe(gemm);
            const [a, b, out] = operands(be, batches, m, n, k, opt);
            expect(native.matmul(a, b, out, 'float32', threads)).toBe(true);
            expectMatmulClose(a, b, out);
          });
        }
      });
    }
  }

  it('gives the same bits on 1 and 2 threads and on plain arrays as in the wasm heap (each micro-kernel)', () => {
    const heap = createCpuBackend({ native: false });
    const plain = createCpuBackend({ native: false, wasm: false });
    for (const gemm of runnable.filter((g) => g !== 'openblas')) {
      const native = loadNative({ native: true, gemm });
      if (!('info' in native)) throw new Error(native.reason);
      const results = ([[heap, 1], [heap, 2], [plain, 2]] as const).map(([be, threads]) => {
        const [a, b, out] = operands(be, 2, 150, 190, 530, { bt: true });
        expect(native.matmul(a, b, out, 'float32', threads)).toBe(true);
        return out.storage.data.slice();
      });
      expect(results[1]).toEqual(results[0]);
      expect(results[2]).toEqual(results[0]);
    }
  });

  it('runs through the backend: a model-sized float32 matmul of createCpuBackend() takes the native path', () => {
    const be = createCpuBackend({ native: true, threads: 2 });
    expect(be.native.loaded).toBe(true);
    const [a, b, out] = operands(be, 1, 128, 256, 784, { bt: true });
    be.kernels.matmul(a, b, out, 'float32');
    expectMatmulClose(a, b, out);
  });
});
