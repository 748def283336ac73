// The argsort, cumulative and scatter kernels (contract 1.3.0) on long, strided inputs against the
// cpu backend, bit for bit: their results are fully specified (a stable order, running values in
// index order, contributions in index order with a rounding per step), so every backend agrees.
import { createCpuBackend } from '@core/backend-cpu';
import {
  bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, type DTypeName, type HostArray, type TensorRef,
} from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend } from '../src/index.js';
import { startBackend } from './helpers.js';

let gpu: WebGPUBackend;
const cpu = createCpuBackend({ wasm: false });
beforeAll(async () => {
  gpu = await startBackend();
});
afterAll(() => gpu?.destroy());

function host(dtype: DTypeName, values: number[]): HostArray {
  switch (dtype) {
    case 'float32': return Float32Array.from(values);
    case 'float16': return Uint16Array.from(values, float32ToFloat16Bits);
    case 'bfloat16': return Uint16Array.from(values, float32ToBFloat16Bits);
    case 'int32': return Int32Array.from(values, (v) => Math.round(v));
    case 'bool': return Uint8Array.from(values, (v) => (v > 0 ? 1 : 0));
    default: throw new Error(dtype);
  }
}

/** One operand on both backends: its storage holding `data`, viewed as `view` describes. */
interface Pair {
  readonly gpu: TensorRef<unknown>;
  readonly cpu: TensorRef<unknown>;
}

type View = Omit<TensorRef<unknown>, 'storage'>;

function both(dtype: DTypeName, numel: number, view: View, data?: HostArray): Pair {
  const g = gpu.alloc(0, dtype, numel);
  const c = cpu.alloc(0, dtype, numel);
  const init = data ?? host(dtype, new Array<number>(numel).fill(0));
  gpu.write(g, init, 0);
  cpu.write(c, init, 0);
  return { gpu: { ...view, storage: g }, cpu: { ...view, storage: c } };
}

/** The values of a storage (halves decoded: NaN payloads may differ, the values may not). */
function decode(dtype: DTypeName, a: HostArray): number[] {
  if (dtype === 'float16') return Array.from(a, float16BitsToNumber);
  if (dtype === 'bfloat16') return Array.from(a, bfloat16BitsToNumber);
  return Array.from(a);
}

/** The storages of `out` on both backends, which must hold the same values (the sign of zero included). */
async function expectSame(out: Pair): Promise<void> {
  const got = decode(out.gpu.dtype, await gpu.read(out.gpu.storage as never));
  const want = decode(out.cpu.dtype, cpu.readSync!(out.cpu.storage as never));
  expect(got).toEqual(want);
}

/** Values with many repeats, a NaN now and then (floats), and both zeros. */
function values(n: number, seed: number, dtype: DTypeName): number[] {
  return Array.from({ length: n }, (_, i) => {
    const r = Math.abs(Math.sin((i + 1) * 12.9898 + seed) * 43758.5453) % 1;
    if (dtype !== 'int32' && dtype !== 'bool' && r < 0.02) return NaN;
    if (r < 0.05) return i % 2 === 0 ? 0 : -0;
    return Math.round((r - 0.5) * 40) / 4;
  });
}

describe('argsort against the cpu backend', () => {
  for (const dtype of ['float32', 'float16', 'bfloat16', 'int32', 'bool'] as const) {
    it(`${dtype}: rows of 5000 (not a power of two) read through a transposed view, both directions`, async () => {
      const [rows, cols] = [3, 5000];
      const data = host(dtype, values(rows * cols, 1, dtype));
      // Stored [cols, rows]: sorting axis 1 of the [rows, cols] view walks stride `rows`.
      const x = both(dtype, rows * cols, { dtype, shape: [rows, cols], strides: [1, rows], offset: 0 }, data);
      for (const descending of [false, true]) {
        const out = both('int32', rows * cols, { dtype: 'int32', shape: [rows, cols], strides: [cols, 1], offset: 0 });
        gpu.kernels.argsort!(x.gpu as never, 1, descending, out.gpu as never);
        cpu.kernels.argsort!(x.cpu as never, 1, descending, out.cpu as never);
        await expectSame(out);
      }
    });
  }

  it('many short fibres along dim 0 into a strided out, and single-element fibres', async () => {
    const x = both('float32', 7 * 33, { dtype: 'float32', shape: [7, 33], strides: [33, 1], offset: 0 }, host('float32', values(7 * 33, 2, 'float32')));
    const out = both('int32', 7 * 66, { dtype: 'int32', shape: [7, 33], strides: [66, 2], offset: 1 });
    gpu.kernels.argsort!(x.gpu as never, 0, false, out.gpu as never);
    cpu.kernels.argsort!(x.cpu as never, 0, false, out.cpu as never);
    await expectSame(out);
    const column = both('float32', 4, { dtype: 'float32', shape: [4, 1], strides: [1, 1], offset: 0 }, Float32Array.from([3, NaN, 1, 2]));
    const one = both('int32', 4, { dtype: 'int32', shape: [4, 1], strides: [1, 1], offset: 0 }, Int32Array.from([9, 9, 9, 9]));
    gpu.kernels.argsort!(column.gpu as never, 1, true, one.gpu as never);
    expect(Array.from(await gpu.read(one.gpu.storage as never) as Int32Array)).toEqual([0, 0, 0, 0]);
  });
});

describe('cumulative against the cpu backend', () => {
  for (const dtype of ['float32', 'float16', 'bfloat16', 'int32'] as const) {
    for (const op of ['cumsum', 'cumprod'] as const) {
      it(`${op} ${dtype}: fibres of 3000 along dim 0 of a transposed view, accumulated the same way`, async () => {
        const [rows, cols] = [3000, 4];
        const raw = Array.from({ length: rows * cols }, (_, i) => (op === 'cumprod' ? 1 + (((i * 7919) % 13) - 6) / 1000 : Math.sin(i * 1.7) * 3));
        const x = both(dtype, rows * cols, { dtype, shape: [rows, cols], strides: [1, rows], offset: 0 }, host(dtype, dtype === 'int32' ? raw.map((v) => (op === 'cumprod' ? (v > 1 ? 3 : -1) : v * 10)) : raw));
        const out = both(dtype, rows * cols, { dtype, shape: [rows, cols], strides: [cols, 1], offset: 0 });
        const acc = dtype === 'int32' ? 'int32' : 'float32';
        gpu.kernels.cumulative!(op, x.gpu as never, 0, out.gpu as never, acc);
        cpu.kernels.cumulative!(op, x.cpu as never, 0, out.cpu as never, acc);
        await expectSame(out);
      });
    }
  }
});

describe('scatter against the cpu backend', () => {
  for (const dtype of ['float32', 'float16', 'bfloat16', 'int32', 'bool'] as const) {
    for (const mode of ['assign', 'prod', 'amax', 'amin'] as const) {
      it(`${mode} ${dtype}: 2000 contributions per row onto 37 elements, repeated indices applied in order`, async () => {
        const [rows, n, size] = [3, 2000, 37];
        const index = both('int32', rows * n, { dtype: 'int32', shape: [rows, n], strides: [n, 1], offset: 0 },
          Int32Array.from({ length: rows * n }, (_, i) => (i * 7919 + (i >> 3)) % size));
        const src = both(dtype, rows * n, { dtype, shape: [rows, n], strides: [n, 1], offset: 0 },
          host(dtype, Array.from({ length: rows * n }, (_, i) => (mode === 'prod' ? 1 + (((i * 31) % 17) - 8) / 200 : values(1, i, dtype)[0]!))));
        const out = both(dtype, size * rows, { dtype, shape: [rows, size], strides: [1, rows], offset: 0 }, host(dtype, values(size * rows, 3, dtype).map((v) => (mode === 'prod' ? 1 : v))));
        gpu.kernels.scatter!(out.gpu as never, 1, index.gpu as never, src.gpu as never, mode);
        cpu.kernels.scatter!(out.cpu as never, 1, index.cpu as never, src.cpu as never, mode);
        await expectSame(out);
      });
    }
  }

  it('skips an index out of range instead of writing past the tensor', async () => {
    const index = both('int32', 3, { dtype: 'int32', shape: [3], strides: [1], offset: 0 }, Int32Array.from([1, 9, -1]));
    const src = both('float32', 3, { dtype: 'float32', shape: [3], strides: [1], offset: 0 }, Float32Array.from([5, 6, 7]));
    // out is the first 2 elements of a 4-element storage: the rest must stay untouched.
    const out = both('float32', 4, { dtype: 'float32', shape: [2], strides: [1], offset: 0 }, Float32Array.from([1, 2, 3, 4]));
    gpu.kernels.scatter!(out.gpu as never, 0, index.gpu as never, src.gpu as never, 'assign');
    expect(Array.from(await gpu.read(out.gpu.storage as never) as Float32Array)).toEqual([1, 5, 3, 4]);
  });
});
