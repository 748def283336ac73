// The wasm kernels against the TypeScript reference kernels, on the same wasm-heap storages:
// elementwise results must be bit-identical; matmul, sums and softmax within stated tolerances
// (a different summation order). Layouts cover broadcasting, transposes, offsets, edge tiles,
// several K blocks, batches, empty sizes and NaN/±Inf/±0.
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, type AdamSpec, type TensorRef } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuFused, CpuKernels } from '../src/kernels/index.js';
import { expectMatmulClose, strides } from './helpers.js';
import { RESERVED_BYTES } from '../src/wasm/heap.js';
import { wasmKernels } from '../src/wasm/kernels.js';
import { WasmRuntime } from '../src/wasm/runtime.js';
import { CpuStorage } from '../src/storage.js';

type Ref = TensorRef<CpuStorage>;

// native: false, so matmul runs the wasm GEMM here (test/native.test.ts covers the native one).
const W = createCpuBackend({ threads: 2, native: false });
const K = CpuKernels;

/** Deterministic pseudo-random floats in [-1, 1) (a small LCG: tests must not depend on Math.random). */
function randoms(n: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A float32 storage in W's heap holding `data`, seen through shape/strides/offset. */
function ref(data: readonly number[], shape: readonly number[], viewStrides = strides(shape), offset = 0): Ref {
  const storage = W.alloc(0, 'float32', data.length);
  W.write(storage, Float32Array.from(data), 0);
  return { storage, dtype: 'float32', shape, strides: viewStrides, offset };
}

function out(shape: readonly number[]): Ref {
  return ref(new Array<number>(numel(shape)).fill(NaN), shape);
}

function read(r: Ref): Float32Array {
  return r.storage.data.slice() as Float32Array;
}

/** Bit-identical, NaN matching NaN of any payload. */
function expectSameBits(got: Float32Array, want: Float32Array): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < got.length; i++) {
    const same = Number.isNaN(want[i]) ? Number.isNaN(got[i]) : Object.is(got[i], want[i]);
    if (!same) throw new Error(`element ${i}: got ${got[i]}, want ${want[i]}`);
  }
}

/** Runs `fn` with the TypeScript kernel of `family` replaced by one that throws: proves the wasm kernel took the call. */
function wasmOnly<T>(family: keyof typeof CpuKernels, fn: () => T): T {
  const saved = CpuKernels[family];
  (CpuKernels as unknown as Record<string, unknown>)[family] = () => {
    throw new Error(`the wasm kernels handed ${family} to the TypeScript kernels`);
  };
  try {
    return fn();
  } finally {
    (CpuKernels as unknown as Record<string, unknown>)[family] = saved;
  }
}

describe('wasm kernels run', () => {
  it('starts the module with a shared memory and 2 threads in Node', () => {
    expect(W.wasm?.active).toBe(true);
    expect(W.wasm?.failure).toBeNull();
    expect(W.wasm?.shared).toBe(true);
    expect(W.wasm?.threads).toBe(2);
    const s = W.alloc(0, 'float32', 4);
    expect(s.address).toBeGreaterThan(0);
    W.free(s);
  });

  it("keeps tensors above the module's static data (constant tables clang emits)", () => {
    const runtime = new WasmRuntime({ threads: 1 });
    expect(runtime.active).toBe(true);
    const s = runtime.heap.alloc(64);
    expect(s).toBeGreaterThanOrEqual(RESERVED_BYTES);
    // A GEMM argument that comes from such a table: the packing buffers' sizes.
    expect([0, 1, 2, 3, 4].map((which) => runtime.call('gemm_tile_limits', which))).toEqual([128, 512, 4, 8, 256]);
  });
});

describe('wasm elementwise = TypeScript elementwise, bit for bit', () => {
  const special = [0, -0, 1, -1, 0.5, 3, Infinity, -Infinity, NaN, 1e-45, -3.4e38, 3.4e38, 1e30, -2.5];
  const layouts: [string, number[], (n: number, seed: number) => [Ref, Ref]][] = [
    ['contiguous 1-d, odd length', [1029], (n, seed) => [ref(randoms(n, seed), [n]), ref(randoms(n, seed + 1), [n])]],
    ['row + broadcast column [37,19]', [37, 19], (_, seed) => [ref(randoms(37 * 19, seed), [37, 19]), ref(randoms(19, seed + 1), [37, 19], [0, 1])]],
    ['scalar broadcast on the left [64,33]', [64, 33], (_, seed) => [ref(randoms(1, seed), [64, 33], [0, 0]), ref(randoms(64 * 33, seed + 1), [64, 33])]],
    ['transposed and offset views [23,41]', [23, 41], (_, seed) => [
      ref(randoms(41 * 23 + 5, seed), [23, 41], [1, 23], 5),
      ref(randoms(23 * 82, seed + 1), [23, 41], [82, 2], 0),
    ]],
    ['rank 4 with size-1 dims [3,1,5,7]', [3, 1, 5, 7], (_, seed) => [ref(randoms(105, seed), [3, 1, 5, 7]), ref(randoms(7, seed + 1), [3, 1, 5, 7], [0, 0, 0, 1])]],
    ['large, split over threads', [300, 257], (_, seed) => [ref(randoms(300 * 257, seed), [300, 257]), ref(randoms(257, seed + 1), [300, 257], [0, 1])]],
  ];
  for (const op of ['add', 'sub', 'mul', 'div'] as const) {
    for (const [name, shape, make] of layouts) {
      it(`${op}: ${name}`, () => {
        const [a, b] = make(numel(shape), op.length * 7 + shape.length);
        const got = out(shape);
        const want = out(shape);
        wasmOnly('binary', () => W.kernels.binary(op, a, b, got));
        K.binary(op, a, b, want);
        expectSameBits(read(got), read(want));
      });
    }
    it(`${op}: NaN, ±Inf, ±0, subnormals and extremes, every pair`, () => {
      const n = special.length;
      const a = ref(special, [n, n], [1, 0]);
      const b = ref(special, [n, n], [0, 1]);
      const got = out([n, n]);
      const want = out([n, n]);
      W.kernels.binary(op, a, b, got);
      K.binary(op, a, b, want);
      expectSameBits(read(got), read(want));
    });
  }
  for (const op of ['neg', 'abs', 'relu', 'sqrt'] as const) {
    it(`${op}: specials, a strided view and a large array`, () => {
      for (const x of [
        ref(special, [special.length]),
        ref(randoms(2 * 45 * 7, 3), [45, 7], [14, 2], 1),
        ref(randoms(70001, 4).map((v) => v * 100), [70001]),
      ]) {
        const got = out(x.shape);
        const want = out(x.shape);
        wasmOnly('unary', () => W.kernels.unary(op, x, got));
        K.unary(op, x, want);
        expectSameBits(read(got), read(want));
      }
    });
  }
  for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const) {
    it(`compare ${op}: specials pairwise, broadcast scalar, strided and large inputs`, () => {
      const n = special.length;
      const cases: [Ref, Ref][] = [
        [ref(special, [n, n], [1, 0]), ref(special, [n, n], [0, 1])],
        [ref(randoms(4099, 6), [4099]), ref([0.25], [4099], [0])],
        [ref(randoms(40 * 30, 7), [30, 40], [1, 30]), ref(randoms(40 * 30, 8), [30, 40])],
        [ref(randoms(70000, 9), [70000]), ref(randoms(70000, 10), [70000])],
      ];
      for (const [a, b] of cases) {
        const got = W.alloc(0, 'bool', numel(a.shape));
        const want = W.alloc(0, 'bool', numel(a.shape));
        const view = (storage: CpuStorage): Ref => ({ storage, dtype: 'bool', shape: a.shape, strides: strides(a.shape), offset: 0 });
        W.kernels.compare(op, a, b, view(got));
        K.compare(op, a, b, view(want));
        expect(Array.from(got.data)).toEqual(Array.from(want.data));
      }
    });
  }
  it('compare on int32 (eq, ne, lt, le, gt, ge): extremes, broadcast and large inputs', () => {
    const ints = (data: readonly number[], shape: readonly number[], s = strides(shape)): Ref => {
      const storage = W.alloc(0, 'int32', data.length);
      W.write(storage, Int32Array.from(data), 0);
      return { storage, dtype: 'int32', shape, strides: s, offset: 0 };
    };
    const specials = [0, 1, -1, 2147483647, -2147483648, 7, -7, 100];
    const big = randoms(50001, 71).map((v) => Math.round(v * 20));
    const cases: [Ref, Ref][] = [
      [ints(specials, [8, 8], [1, 0]), ints(specials, [8, 8], [0, 1])],
      [ints(big, [50001]), ints([3], [50001], [0])],
      [ints(big, [50001]), ints(randoms(50001, 72).map((v) => Math.round(v * 20)), [50001])],
    ];
    for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const) {
      for (const [a, b] of cases) {
        const view = (): Ref => ({ storage: W.alloc(0, 'bool', numel(a.shape)), dtype: 'bool', shape: a.shape, strides: strides(a.shape), offset: 0 });
        const got = view();
        const want = view();
        W.kernels.compare(op, a, b, got);
        K.compare(op, a, b, want);
        expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
      }
    }
  });
  it('cast bool → float32 (0/1), contiguous and strided', () => {
    const storage = W.alloc(0, 'bool', 1000);
    W.write(storage, Uint8Array.from(randoms(1000, 73), (v) => (v > 0 ? 1 : 0)), 0);
    for (const [shape, s] of [[[1000], [1]], [[20, 25], [1, 40]]] as const) {
      const x: Ref = { storage, dtype: 'bool', shape, strides: s, offset: 0 };
      const got = out(shape);
      const want = out(shape);
      W.kernels.cast(x, got);
      K.cast(x, want);
      expectSameBits(read(got), read(want));
    }
  });
  it('where: contiguous, broadcast branches, strided and large, NaN payloads kept', () => {
    const n = 70001;
    const condStorage = W.alloc(0, 'bool', n);
    W.write(condStorage, Uint8Array.from(randoms(n, 11), (v) => (v > 0 ? 1 : 0)), 0);
    const cond = (shape: number[], s = strides(shape)): Ref => ({ storage: condStorage, dtype: 'bool', shape, strides: s, offset: 0 });
    const payloadNaN = new Float32Array(new Uint32Array([0x7fc01234]).buffer)[0];
    const cases: [Ref, Ref, Ref][] = [
      [cond([n]), ref(randoms(n, 12), [n]), ref(randoms(n, 13), [n])],
      [cond([256, 128]), ref(randoms(256 * 128, 14), [256, 128]), ref([0], [256, 128], [0, 0])],
      [cond([128, 256]), ref([payloadNaN], [128, 256], [0, 0]), ref(randoms(256 * 128, 15), [128, 256])],
      [cond([37, 41], [1, 37]), ref(randoms(37 * 41, 16), [37, 41], [1, 37]), ref(randoms(41, 17), [37, 41], [0, 1])],
    ];
    for (const [c, a, b] of cases) {
      const got = out(a.shape);
      const want = out(a.shape);
      wasmOnly('where', () => W.kernels.where(c, a, b, got));
      K.where(c, a, b, want);
      expect(new Uint32Array(read(got).buffer)).toEqual(new Uint32Array(read(want).buffer));
    }
  });
  it('copy of 4-byte dtypes: transposes, broadcasts and offsets, bits unchanged', () => {
    const payloadNaN = new Float32Array(new Uint32Array([0x7fa00001]).buffer)[0];
    const data = randoms(300 * 200, 18);
    data[5] = payloadNaN;
    const x = ref(data, [300, 200]);
    const layouts: [Ref, readonly number[]][] = [
      [{ ...x }, [300, 200]],
      [{ ...x, shape: [200, 300], strides: [1, 200] }, [200, 300]],
      [{ ...x, shape: [7, 200], strides: [0, 1], offset: 400 }, [7, 200]],
    ];
    for (const [src, shape] of layouts) {
      const got = out(shape);
      const want = out(shape);
      wasmOnly('copy', () => W.kernels.copy(src, got));
      K.copy(src, want);
      expect(new Uint32Array(read(got).buffer)).toEqual(new Uint32Array(read(want).buffer));
    }
    const ints = W.alloc(0, 'int32', 6);
    W.write(ints, Int32Array.from([1, 2, 3, 4, 5, -6]), 0);
    const dst = W.alloc(0, 'int32', 6);
    W.kernels.copy({ storage: ints, dtype: 'int32', shape: [3, 2], strides: [1, 3], offset: 0 }, { storage: dst, dtype: 'int32', shape: [3, 2], strides: [2, 1], offset: 0 });
    expect(Array.from(dst.data)).toEqual([1, 4, 2, 5, 3, -6]);
  });
  it('copy of 16-bit (half) and 8-bit (bool) dtypes: contiguous, transposed and broadcast, bits unchanged', () => {
    for (const [dtype, bits] of [['bfloat16', 16], ['float16', 16], ['bool', 8]] as const) {
      const n = 300 * 200;
      const src = W.alloc(0, dtype, n);
      const raw = randoms(n, 81).map((v) => Math.floor((v + 1) * 2 ** (bits - 1)) % 2 ** bits);
      W.write(src, bits === 16 ? Uint16Array.from(raw) : Uint8Array.from(raw, (v) => v & 1), 0);
      for (const [shape, s, offset] of [[[300, 200], [200, 1], 0], [[200, 300], [1, 200], 0], [[7, 200], [0, 1], 400]] as const) {
        const x: Ref = { storage: src, dtype, shape, strides: s, offset };
        const view = (): Ref => ({ storage: W.alloc(0, dtype, numel(shape)), dtype, shape, strides: strides(shape), offset: 0 });
        const got = view();
        const want = view();
        W.kernels.copy(x, got);
        K.copy(x, want);
        expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
      }
    }
  });
  it('leaves other ops and dtypes to the TypeScript kernels', () => {
    const a = ref([1, 2, 3], [3]);
    const b = ref([2, 2, 2], [3]);
    const got = out([3]);
    W.kernels.binary('pow', a, b, got);
    expect(Array.from(read(got))).toEqual([1, 4, 9]);
    const i = W.alloc(0, 'int32', 3);
    W.write(i, Int32Array.from([5, -6, 7]), 0);
    const r: Ref = { storage: i, dtype: 'int32', shape: [3], strides: [1], offset: 0 };
    const o = W.alloc(0, 'int32', 3);
    W.kernels.unary('neg', r, { ...r, storage: o });
    expect(Array.from(o.data)).toEqual([-5, 6, -7]);
  });
});

describe('wasm matmul against a float64 reference', () => {
  const cases: [string, number, number, number, number, { at?: 'T' | 'N'; bt?: 'T' | 'N'; abatch?: number; bbatch?: number }][] = [
    ['1×1×1', 1, 1, 1, 1, {}],
    ['edge tiles 5×13×3', 1, 5, 13, 3, {}],
    ['several K blocks 33×45×600', 1, 33, 45, 600, {}],
    ['MLP forward shape (B transposed) 128×256×784', 1, 128, 256, 784, { bt: 'T' }],
    ['MLP weight-grad shape (A transposed) 256×784×128', 1, 256, 784, 128, { at: 'T' }],
    ['both transposed 70×90×130', 1, 70, 90, 130, { at: 'T', bt: 'T' }],
    ['batched 3×17×29×31', 3, 17, 29, 31, {}],
    ['batch-broadcast A 4×9×600×50', 4, 9, 600, 50, { abatch: 1 }],
    ['batch-broadcast B 2×130×7×260', 2, 130, 7, 260, { bbatch: 1 }],
    ['tall-skinny 1000×3×2', 1, 1000, 3, 2, {}],
    ['wide 2×1100×9', 1, 2, 1100, 9, {}],
  ];
  for (const [name, batches, m, n, k, opt] of cases) {
    it(name, () => {
      const ab = opt.abatch ?? batches;
      const bb = opt.bbatch ?? batches;
      // A transposed: stored [B,K,M], viewed [B,M,K]; likewise B.
      const a = opt.at === 'T' ? ref(randoms(ab * m * k, m), [ab, m, k], [m * k, 1, m]) : ref(randoms(ab * m * k, m), [ab, m, k]);
      const b = opt.bt === 'T' ? ref(randoms(bb * k * n, n), [bb, k, n], [k * n, 1, k]) : ref(randoms(bb * k * n, n), [bb, k, n]);
      const c = out([batches, m, n]);
      wasmOnly('matmul', () => W.kernels.matmul(a, b, c, 'float32'));
      expectMatmulClose(a, b, c);
    });
  }
  it('writes zeros for K = 0 and nothing for empty outputs', () => {
    const c = out([1, 3, 5]);
    W.kernels.matmul(ref([], [1, 3, 0]), ref([], [1, 0, 5]), c, 'float32');
    expect(Array.from(read(c))).toEqual(new Array(15).fill(0));
    const e = out([1, 0, 5]);
    expect(() => W.kernels.matmul(ref([], [1, 0, 4]), ref(randoms(20, 1), [1, 4, 5]), e, 'float32')).not.toThrow();
  });
  it('writes through a strided (transposed) output', () => {
    const a = ref(randoms(6 * 10, 1), [1, 6, 10]);
    const b = ref(randoms(10 * 9, 2), [1, 10, 9]);
    const storage = W.alloc(0, 'float32', 54);
    const c: Ref = { storage, dtype: 'float32', shape: [1, 6, 9], strides: [54, 1, 6], offset: 0 };
    const want = out([1, 6, 9]);
    W.kernels.matmul(a, b, c, 'float32');
    K.matmul(a, b, want, 'float32');
    const w = read(want);
    for (let i = 0; i < 6; i++) for (let j = 0; j < 9; j++) expect(storage.data[j * 6 + i]).toBeCloseTo(w[i * 9 + j], 5);
  });
  it('gives the TypeScript kernels the shape errors to word', () => {
    expect(() => W.kernels.matmul(ref(randoms(6, 1), [1, 2, 3]), ref(randoms(8, 1), [1, 4, 2]), out([1, 2, 2]), 'float32')).toThrow(/do not give/);
  });
});

/** A half-typed (f16/bf16) storage in W's heap holding `values` rounded to the type, row-major. */
function halfRef(dtype: 'float16' | 'bfloat16', values: readonly number[], shape: readonly number[], viewStrides = strides(shape)): Ref {
  const storage = W.alloc(0, dtype, values.length);
  const encode = dtype === 'float16' ? float32ToFloat16Bits : float32ToBFloat16Bits;
  W.write(storage, Uint16Array.from(values, (v) => encode(v)), 0);
  return { storage, dtype, shape, strides: viewStrides, offset: 0 };
}

describe('wasm casts between float32 and the half types = TypeScript casts, bit for bit', () => {
  const specials = [0, -0, 1, -1, 65504, 65520, 65519.99, -1e6, 6.1e-5, 6.0e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-40, Infinity, -Infinity, NaN, 3.3895e38, 1.00390625, 1.01171875];
  for (const dtype of ['float16', 'bfloat16'] as const) {
    it(`float32 → ${dtype} → float32: specials, ties, subnormals and a strided large array`, () => {
      for (const x of [ref(specials, [specials.length]), ref(randoms(3 * 50000, 21).map((v, i) => v * 2 ** ((i % 60) - 30)), [50000], [3], 1)]) {
        const n = numel(x.shape);
        const half = (): Ref => ({ storage: W.alloc(0, dtype, n), dtype, shape: x.shape, strides: [1], offset: 0 });
        const got = half();
        const want = half();
        W.kernels.cast(x, got);
        K.cast(x, want);
        expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
        const back = out(x.shape);
        const backWant = out(x.shape);
        W.kernels.cast(got, back);
        K.cast(got, backWant);
        expectSameBits(read(back), read(backWant));
      }
    });
  }
});

describe('wasm elementwise on float16/bfloat16 = TypeScript, bit for bit (NaN as NaN)', () => {
  const specials = [0, -0, 1, -1, 0.5, 3, 65504, -65504, 6.1e-5, 5.96e-8, 1e-40, 3e38, Infinity, -Infinity, NaN, 1.00390625, 2.5];
  const n = specials.length;
  for (const dtype of ['float16', 'bfloat16'] as const) {
    const decode = dtype === 'float16' ? float16BitsToNumber : bfloat16BitsToNumber;
    const sameHalves = (got: Ref, want: Ref): void => {
      const g = Array.from(got.storage.data as Uint16Array);
      const w = Array.from(want.storage.data as Uint16Array);
      for (let i = 0; i < w.length; i++) {
        const same = Number.isNaN(decode(w[i])) ? Number.isNaN(decode(g[i])) : g[i] === w[i];
        if (!same) throw new Error(`${dtype} element ${i}: got 0x${g[i].toString(16)}, want 0x${w[i].toString(16)}`);
      }
    };
    const outHalf = (shape: readonly number[]): Ref => ({ storage: W.alloc(0, dtype, numel(shape)), dtype, shape, strides: strides(shape), offset: 0 });
    it(`${dtype}: add, sub, mul, div over every pair of specials and a large broadcast; neg, abs, relu, sqrt`, () => {
      const pairs: [Ref, Ref][] = [
        [halfRef(dtype, specials, [n, n], [1, 0]), halfRef(dtype, specials, [n, n], [0, 1])],
        [halfRef(dtype, randoms(300 * 257, 91).map((v) => v * 100), [300, 257]), halfRef(dtype, randoms(257, 92), [300, 257], [0, 1])],
      ];
      for (const op of ['add', 'sub', 'mul', 'div'] as const) {
        for (const [a, b] of pairs) {
          const got = outHalf(a.shape);
          const want = outHalf(a.shape);
          wasmOnly('binary', () => W.kernels.binary(op, a, b, got));
          K.binary(op, a, b, want);
          sameHalves(got, want);
        }
      }
      for (const op of ['neg', 'abs', 'relu', 'sqrt'] as const) {
        const x = halfRef(dtype, [...specials, ...randoms(40000, 93).map((v) => v * 50)], [n + 40000]);
        const got = outHalf(x.shape);
        const want = outHalf(x.shape);
        wasmOnly('unary', () => W.kernels.unary(op, x, got));
        K.unary(op, x, want);
        sameHalves(got, want);
      }
    });
    it(`${dtype}: compares and where`, () => {
      const a = halfRef(dtype, specials, [n, n], [1, 0]);
      const b = halfRef(dtype, specials, [n, n], [0, 1]);
      for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const) {
        const view = (): Ref => ({ storage: W.alloc(0, 'bool', n * n), dtype: 'bool', shape: [n, n], strides: [n, 1], offset: 0 });
        const got = view();
        const want = view();
        wasmOnly('compare', () => W.kernels.compare(op, a, b, got));
        K.compare(op, a, b, want);
        expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
      }
      const cond = W.alloc(0, 'bool', n * n);
      W.write(cond, Uint8Array.from(randoms(n * n, 94), (v) => (v > 0 ? 1 : 0)), 0);
      const c: Ref = { storage: cond, dtype: 'bool', shape: [n, n], strides: [n, 1], offset: 0 };
      const got = outHalf([n, n]);
      const want = outHalf([n, n]);
      wasmOnly('where', () => W.kernels.where(c, a, b, got));
      K.where(c, a, b, want);
      expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
    });
  }
});

describe('wasm half matmul: f32 sums, one rounding of the result', () => {
  for (const dtype of ['float16', 'bfloat16'] as const) {
    it(`${dtype}: 37×45×300 with B transposed, against a float64 reference of the rounded inputs`, () => {
      const [m, n, k] = [37, 45, 300];
      const a = halfRef(dtype, randoms(m * k, 31), [1, m, k]);
      const b = halfRef(dtype, randoms(k * n, 32), [1, k, n], [k * n, 1, k]);
      const c: Ref = { storage: W.alloc(0, dtype, m * n), dtype, shape: [1, m, n], strides: [m * n, n, 1], offset: 0 };
      W.kernels.matmul(a, b, c, 'float32');
      const decode = dtype === 'float16' ? float16BitsToNumber : bfloat16BitsToNumber;
      const A = Array.from(a.storage.data, decode);
      const B = Array.from(b.storage.data, decode);
      const got = Array.from(c.storage.data, decode);
      // Half rounding of the result (2^-11 or 2^-8 relative, 2^-24 absolute below f16's normals) plus f32 summation error.
      const unit = dtype === 'float16' ? 2 ** -11 : 2 ** -8;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let exact = 0;
          let scale = 0;
          for (let p = 0; p < k; p++) {
            const x = A[i * k + p] * B[j * k + p];
            exact += x;
            scale += Math.abs(x);
          }
          const bound = unit * Math.abs(exact) + 2 ** -24 + 2 * k * 2 ** -24 * scale;
          const err = Math.abs(got[i * n + j] - exact);
          if (!(err <= bound)) throw new Error(`(${i}, ${j}): got ${got[i * n + j]}, want ${exact} ± ${bound}`);
        }
      }
    });
  }
});

describe('wasm sums and softmax against the TypeScript kernels', () => {
  it('sums over any contiguous run of axes (tolerance 1e-6·Σ|x|)', () => {
    const shape = [6, 7, 300, 5];
    const x = ref(randoms(numel(shape), 9), shape);
    for (const axes of [[0], [1], [2], [3], [1, 2], [0, 1, 2, 3], [2, 3], []]) {
      const outShape = shape.map((d, i) => (axes.includes(i) ? 1 : d));
      const got = out(outShape);
      const want = out(outShape);
      W.kernels.reduce('sum', x, axes, got, 'float32');
      K.reduce('sum', x, axes, want, 'float64');
      const g = read(got);
      const w = read(want);
      const length = axes.reduce((a, d) => a * shape[d], 1);
      for (let i = 0; i < w.length; i++) expect(Math.abs(g[i] - w[i])).toBeLessThanOrEqual(1e-6 * length);
    }
  });
  it('softmax and logSoftmax along the last axis (tolerance 2e-6 relative + 1e-7), with NaN and -Inf rows', () => {
    const rows = 9;
    const cols = 1001;
    const data = randoms(rows * cols, 5).map((v) => v * 30);
    data[cols * 2 + 7] = NaN; // row 2 is all NaN
    for (let j = 0; j < cols; j++) data[cols * 3 + j] = j % 2 ? -Infinity : data[cols * 3 + j]; // row 3: half -Inf
    for (let j = 0; j < cols; j++) data[cols * 4 + j] = 1e4 + j * 1e-3; // row 4: large values
    const x = ref(data, [rows, cols]);
    for (const op of ['softmax', 'logSoftmax'] as const) {
      const got = out([rows, cols]);
      const want = out([rows, cols]);
      W.fused![op]!(x, 1, got);
      CpuFused[op](x, -1, want);
      const g = read(got);
      const w = read(want);
      for (let i = 0; i < w.length; i++) {
        if (Number.isNaN(w[i])) expect(Number.isNaN(g[i]), `${op} element ${i}`).toBe(true);
        else if (!Number.isFinite(w[i])) expect(g[i]).toBe(w[i]);
        else expect(Math.abs(g[i] - w[i]), `${op} element ${i}`).toBeLessThanOrEqual(2e-6 * Math.abs(w[i]) + 1e-7);
      }
    }
  });
});

describe('wasm cross entropy against the TypeScript fused kernel (tolerance 1e-6 relative + 1e-6)', () => {
  for (const [name, spec] of [['plain', { ignoreIndex: -100, labelSmoothing: 0 }], ['label smoothing 0.1, ignoreIndex 3', { ignoreIndex: 3, labelSmoothing: 0.1 }]] as const) {
    it(`${name}: [300, 1001] with large values, -Inf, NaN rows and an out-of-range target`, () => {
      const [rows, classes] = [300, 1001];
      const data = randoms(rows * classes, 61).map((v) => v * 20);
      data[5 * classes + 3] = NaN;
      for (let j = 0; j < classes; j += 2) data[6 * classes + j] = -Infinity;
      for (let j = 0; j < classes; j++) data[7 * classes + j] = 5e3 + j * 1e-2;
      const x = ref(data, [rows, classes]);
      const t = W.alloc(0, 'int32', rows);
      W.write(t, Int32Array.from({ length: rows }, (_, i) => (i === 9 ? classes : i === 10 ? -1 : (i * 37) % classes)), 0);
      const target: Ref = { storage: t, dtype: 'int32', shape: [rows], strides: [1], offset: 0 };
      const got = out([rows]);
      const want = out([rows]);
      W.fused!.crossEntropy!(x, target, spec, got);
      CpuFused.crossEntropy(x, target, spec, want);
      const g = read(got);
      const w = read(want);
      for (let i = 0; i < rows; i++) {
        if (Number.isNaN(w[i])) expect(Number.isNaN(g[i]), `row ${i}`).toBe(true);
        else if (!Number.isFinite(w[i])) expect(g[i], `row ${i}`).toBe(w[i]);
        else expect(Math.abs(g[i] - w[i]), `row ${i}: got ${g[i]}, want ${w[i]}`).toBeLessThanOrEqual(1e-6 * Math.abs(w[i]) + 1e-6);
      }
      expect(Number.isNaN(g[9]) && Number.isNaN(g[10])).toBe(true);
    });
  }
});

describe('wasm Adam/AdamW update = the TypeScript fused kernel, bit for bit', () => {
  const variants: [string, Partial<AdamSpec>][] = [
    ['Adam', { weightDecay: 0, decoupled: false }],
    ['Adam with L2 weight decay, maximize', { weightDecay: 0.01, decoupled: false, maximize: true }],
    ['AdamW, beta1 0.3 (the other lerp branch)', { weightDecay: 0.05, decoupled: true, beta1: 0.3 }],
    ['AdamW with amsgrad', { weightDecay: 0.01, decoupled: true }],
  ];
  for (const [name, overrides] of variants) {
    it(`${name}, 3 steps over 70001 elements`, () => {
      const n = 70001;
      const amsgrad = name.includes('amsgrad');
      // Two identical sets of state: one updated by the wasm kernel, one by the TypeScript kernel.
      const state = (): Ref[] => [randoms(n, 51), randoms(n, 52), randoms(n, 53).map((v) => v * 0.1), randoms(n, 54).map((v) => v * v), randoms(n, 55).map((v) => v * v)]
        .map((data) => ref(data, [n]));
      const [wp, wg, wm, wv, wvmax] = state();
      const [tp, tg, tm, tv, tvmax] = state();
      for (let step = 1; step <= 3; step++) {
        const beta1 = overrides.beta1 ?? 0.9;
        const beta2 = 0.999;
        const lr = 1e-3;
        const spec: AdamSpec = {
          step, lr, beta1, beta2, eps: 1e-8, weightDecay: 0, decoupled: true, maximize: false,
          stepSize: lr / (1 - beta1 ** step), biasCorrection2Sqrt: Math.sqrt(1 - beta2 ** step), ...overrides,
        };
        W.fused!.adamw!(wp, wg, wm, wv, amsgrad ? wvmax : null, spec);
        CpuFused.adamw(tp, tg, tm, tv, amsgrad ? tvmax : null, spec);
      }
      expectSameBits(read(wp), read(tp));
      expectSameBits(read(wm), read(tm));
      expectSameBits(read(wv), read(tv));
      if (amsgrad) expectSameBits(read(wvmax), read(tvmax));
    });
  }
});

describe('wasm addcmul (x + t1·t2, the fused kernel behind add/sub with alpha) = the TypeScript kernel = the decomposition, bit for bit', () => {
  /** The fused TypeScript kernel replaced by one that throws while `fn` runs: proves the wasm kernel took the call. */
  function wasmAddcmulOnly(fn: () => void): void {
    const fused = W.fused as unknown as { addcmul: unknown };
    const saved = CpuFused.addcmul;
    (CpuFused as unknown as Record<string, unknown>).addcmul = () => {
      throw new Error('the wasm kernels handed addcmul to the TypeScript kernel');
    };
    try {
      expect(typeof fused.addcmul).toBe('function');
      fn();
    } finally {
      (CpuFused as unknown as Record<string, unknown>).addcmul = saved;
    }
  }
  const n = 70001;
  const values = randoms(n, 61);
  values[3] = NaN;
  values[5] = Infinity;
  const cases: [string, () => [Ref, Ref, Ref, readonly number[]]][] = [
    ['t2 a stride-0 scalar (p.add(g, -lr))', () => [ref(randoms(n, 62), [n]), ref(values, [n]), ref([-0.05], [n], [0]), [n]]],
    ['t2 a full tensor', () => [ref(randoms(n, 63), [n]), ref(values, [n]), ref(randoms(n, 64), [n]), [n]]],
    ['strided x, transposed t1, broadcast scalar', () => {
      const t1 = ref(randoms(12, 65), [4, 3], [1, 4]);
      return [ref(randoms(24, 66), [4, 3], [6, 2]), t1, ref([1.7], [4, 3], [0, 0]), [4, 3]];
    }],
  ];
  for (const [name, make] of cases) {
    it(name, () => {
      const [x, t1, t2, shape] = make();
      const got = out(shape);
      const want = out(shape);
      const decomposed = out(shape);
      const product = out(shape);
      wasmAddcmulOnly(() => W.fused!.addcmul!(x, t1, t2, got));
      CpuFused.addcmul(x, t1, t2, want);
      K.binary('mul', t1, t2, product);
      K.binary('add', x, product, decomposed);
      expectSameBits(read(got), read(want));
      expectSameBits(read(got), read(decomposed));
    });
  }
});

describe('wasm argmax/argmin, gather and scatter-add along an axis = TypeScript', () => {
  const intRef = (data: readonly number[], shape: readonly number[]): Ref => {
    const storage = W.alloc(0, 'int32', data.length);
    W.write(storage, Int32Array.from(data), 0);
    return { storage, dtype: 'int32', shape, strides: strides(shape), offset: 0 };
  };
  it('argmax and argmin: first index on ties, NaN wins, every axis of a rank-3 block, large', () => {
    const data = randoms(6 * 5 * 7, 101).map((v) => Math.round(v * 3)); // many ties
    data[8] = NaN;
    data[40] = NaN;
    const x = ref(data, [6, 5, 7]);
    for (const op of ['argmax', 'argmin'] as const) {
      for (const axis of [0, 1, 2, -1]) {
        const shape = [6, 5, 7].map((d, i) => (i === (axis + 3) % 3 ? 1 : d));
        const got = intRef(new Array(numel(shape)).fill(-9), shape);
        const want = intRef(new Array(numel(shape)).fill(-9), shape);
        wasmOnly('argReduce', () => W.kernels.argReduce(op, x, axis, got));
        K.argReduce(op, x, axis, want);
        expect(Array.from(got.storage.data), `${op} axis ${axis}`).toEqual(Array.from(want.storage.data));
      }
    }
    const big = ref(randoms(100000 * 4, 102), [100000, 4]);
    const got = intRef(new Array(100000).fill(-9), [100000, 1]);
    const want = intRef(new Array(100000).fill(-9), [100000, 1]);
    W.kernels.argReduce('argmax', big, 1, got);
    K.argReduce('argmax', big, 1, want);
    expect(Array.from(got.storage.data)).toEqual(Array.from(want.storage.data));
  });
  it('gather and scatter-add with repeated indices, along the first, middle and last axis', () => {
    for (const dim of [0, 1, 2]) {
      const xShape = [4, 6, 5];
      const iShape = xShape.map((d, i) => (i === dim ? 9 : d));
      const x = ref(randoms(numel(xShape), 103 + dim), xShape);
      const index = intRef(randoms(numel(iShape), 104 + dim).map((v) => Math.floor((v + 1) / 2 * xShape[dim]) % xShape[dim]), iShape);
      const got = out(iShape);
      const want = out(iShape);
      wasmOnly('gather', () => W.kernels.gather(x, dim, index, got));
      K.gather(x, dim, index, want);
      expectSameBits(read(got), read(want));
      const src = ref(randoms(numel(iShape), 105 + dim), iShape);
      const accW = ref(randoms(numel(xShape), 106), xShape);
      const accT = ref(randoms(numel(xShape), 106), xShape);
      wasmOnly('scatterAdd', () => W.kernels.scatterAdd(accW, dim, index, src));
      K.scatterAdd(accT, dim, index, src);
      expectSameBits(read(accW), read(accT));
    }
  });
  it('sums over axes that are not one run (the bias gradient of a conv: [N, C, H, W] over 0, 2, 3)', () => {
    const shape = [16, 8, 28, 28];
    const x = ref(randoms(numel(shape), 107), shape);
    for (const axes of [[0, 2, 3], [0, 2], [1, 3]]) {
      const outShape = shape.map((d, i) => (axes.includes(i) ? 1 : d));
      const got = out(outShape);
      const want = out(outShape);
      wasmOnly('reduce', () => W.kernels.reduce('sum', x, axes, got, 'float32'));
      K.reduce('sum', x, axes, want, 'float64');
      const length = axes.reduce((a, d) => a * shape[d], 1);
      const g = read(got);
      const w = read(want);
      for (let i = 0; i < w.length; i++) expect(Math.abs(g[i] - w[i])).toBeLessThanOrEqual(1e-6 * length);
    }
  });
});

describe('threads and memory', () => {
  it('worker threads take tasks of large kernels', async () => {
    const n = 256;
    const a = ref(randoms(n * n, 41), [1, n, n]);
    const c = out([1, n, n]);
    // Workers start on the first parallel kernel and join once they have instantiated the module.
    const deadline = Date.now() + 10_000;
    while (W.wasm!.tasksRun()[1] === 0 && Date.now() < deadline) {
      W.kernels.matmul(a, a, c, 'float32');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const [caller, worker] = W.wasm!.tasksRun();
    expect(caller).toBeGreaterThan(0);
    expect(worker).toBeGreaterThan(0);
  });

  it('a parked pool sleeps at once, however long its workers would spin, and its next job still runs on them', async () => {
    // Workers that would spin for ten minutes after a job: only park() sends them to sleep (the
    // native path parks before each addon call, so its threads get the cores).
    const runtime = new WasmRuntime({ threads: 2, spinMs: 600_000 });
    const kernels = wasmKernels(runtime, CpuKernels);
    const n = 256;
    const storage = (): CpuStorage => new CpuStorage('float32', n * n, runtime.heap);
    const a: Ref = { storage: storage(), dtype: 'float32', shape: [1, n, n], strides: [n * n, n, 1], offset: 0 };
    a.storage.data.fill(1);
    const c: Ref = { ...a, storage: storage() };
    // Polls `done`, running `between` before each wait: a multiply (a parallel job) unless told otherwise.
    const until = async (done: () => boolean, what: string, between = () => kernels.matmul(a, a, c, 'float32')): Promise<void> => {
      const deadline = Date.now() + 20_000; // a hang guard only: each wait ends in milliseconds
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        between();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    try {
      await until(() => runtime.tasksRun()[1] > 0, 'the worker to take a task');
      expect(runtime.sleepingWorkers()).toBe(0);
      runtime.park();
      await until(() => runtime.sleepingWorkers() === 1, 'the parked worker to sleep', () => {});
      expect(runtime.sleepingWorkers()).toBe(1);
      const before = runtime.tasksRun()[1];
      await until(() => runtime.tasksRun()[1] > before, 'the parked worker to take a task again');
    } finally {
      runtime.park(); // not left spinning for the rest of the run
    }
    expect(c.storage.data[0]).toBe(n);
  });

  it('one thread and a plain memory give the same bits as two threads', () => {
    const single = createCpuBackend({ threads: 1, sharedMemory: false, native: false });
    expect(single.wasm).toMatchObject({ active: true, threads: 1, shared: false });
    const data = randoms(512 * 300, 8);
    const run = (be: typeof W): Float32Array => {
      const a = be.alloc(0, 'float32', data.length);
      be.write(a, Float32Array.from(data), 0);
      const A: Ref = { storage: a, dtype: 'float32', shape: [1, 512, 300], strides: [0, 300, 1], offset: 0 };
      const B: Ref = { ...A, shape: [1, 300, 512], strides: [0, 1, 300] };
      const c = be.alloc(0, 'float32', 512 * 512);
      be.kernels.matmul(A, B, { storage: c, dtype: 'float32', shape: [1, 512, 512], strides: [0, 512, 1], offset: 0 }, 'float32');
      return c.data.slice() as Float32Array;
    };
    expectSameBits(run(single), run(W));
  });
  it('keeps every tensor intact while a plain memory grows (views follow the new buffer)', () => {
    const be = createCpuBackend({ threads: 1, sharedMemory: false, native: false });
    const first = be.alloc(0, 'float32', 1000);
    be.write(first, Float32Array.from(randoms(1000, 1)), 0);
    const before = first.data.slice();
    const big = be.alloc(0, 'float32', 8 << 20); // 32 MiB: forces growth
    expect(Array.from(first.data)).toEqual(Array.from(before));
    be.free(big);
    be.free(first);
  });
  it('reuses freed blocks and merges free neighbours before growing', () => {
    const be = createCpuBackend({ threads: 1, native: false });
    const heapBytes = (): number => be.memoryStats(0).reservedBytes;
    const a = be.alloc(0, 'float32', 1 << 18);
    const b = be.alloc(0, 'float32', 1 << 18);
    const aAddress = a.address;
    be.free(a);
    const again = be.alloc(0, 'float32', 1 << 18);
    expect(again.address).toBe(aAddress); // same size: the freed block comes back
    be.free(again);
    be.free(b);
    const before = heapBytes();
    const merged = be.alloc(0, 'float32', 1 << 19); // the two freed neighbours, merged
    expect(merged.address).toBe(aAddress);
    expect(heapBytes()).toBe(before);
    be.free(merged);
  });
});
