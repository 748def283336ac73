// Long reductions (a workgroup per output element) and short ones (a thread per output element)
// against the cpu backend, in every dtype and op, over strided views.
import { createCpuBackend, type CpuStorage } from '@core/backend-cpu';
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, type DTypeName, type HostArray, type ReduceOp, type TensorRef } from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend, WebGPUStorage } from '../src/index.js';
import { startBackend } from './helpers.js';

let gpu: WebGPUBackend;
const cpu = createCpuBackend();
beforeAll(async () => {
  gpu = await startBackend();
});
afterAll(() => gpu?.destroy());

function host(dtype: DTypeName, values: number[]): HostArray {
  switch (dtype) {
    case 'float32': return Float32Array.from(values);
    case 'float16': return Uint16Array.from(values, float32ToFloat16Bits);
    case 'bfloat16': return Uint16Array.from(values, float32ToBFloat16Bits);
    case 'int32': return Int32Array.from(values, (v) => Math.round(v * 3));
    default: throw new Error(dtype);
  }
}

function decode(dtype: DTypeName, a: HostArray): number[] {
  if (dtype === 'float16') return Array.from(a, float16BitsToNumber);
  if (dtype === 'bfloat16') return Array.from(a, bfloat16BitsToNumber);
  return Array.from(a);
}

describe('reduce', () => {
  for (const dtype of ['float32', 'float16', 'bfloat16', 'int32'] as const) {
    for (const op of ['sum', 'prod', 'max', 'min'] as ReduceOp[]) {
      it(`${op} ${dtype}: long and short, strided, against the cpu backend`, async () => {
        // [rows, cols] stored transposed: reducing axis 1 walks a stride-`rows` view.
        for (const [rows, cols] of [[3, 5000], [70, 9]] as const) {
          const n = rows * cols;
          const values = Array.from({ length: n }, (_, i) => (op === 'prod' ? 1 + ((i * 7919) % 13) / 1000 : Math.sin(i * 12.9898) * 2));
          if (op === 'max' && dtype !== 'int32' && rows === 3) values[4321] = NaN; // NaN propagates
          const data = host(dtype, values);
          const gs = gpu.alloc(0, dtype, n);
          gpu.write(gs, data, 0);
          const cs = cpu.alloc(0, dtype, n);
          cpu.write(cs, data, 0);
          const view = <S>(s: S): TensorRef<S> => ({ storage: s, dtype, shape: [rows, cols], strides: [1, rows], offset: 0 });
          const acc = dtype === 'int32' ? 'int32' : 'float32';
          const go = gpu.alloc(0, dtype, rows);
          const co = cpu.alloc(0, dtype, rows) as CpuStorage;
          const outRef = <S>(s: S): TensorRef<S> => ({ storage: s, dtype, shape: [rows, 1], strides: [1, 1], offset: 0 });
          gpu.kernels.reduce(op, view(gs as WebGPUStorage), [1], outRef(go), acc);
          cpu.kernels.reduce(op, view(cs), [1], outRef(co), acc);
          const got = decode(dtype, await gpu.read(go));
          const want = decode(dtype, cpu.readSync!(co));
          for (let r = 0; r < rows; r++) {
            if (Number.isNaN(want[r]!)) expect(got[r]).toBeNaN();
            else if (op === 'max' || op === 'min' || dtype === 'int32' || !Number.isFinite(want[r]!)) expect(got[r]).toBe(want[r]);
            else {
              const tol = dtype === 'float32' ? 1e-4 : dtype === 'float16' ? 2e-3 : 2e-2;
              expect(Math.abs(got[r]! - want[r]!)).toBeLessThanOrEqual(tol * (1 + Math.abs(want[r]!)));
            }
          }
          gpu.free(gs);
          gpu.free(go);
        }
      });
    }
  }
});
