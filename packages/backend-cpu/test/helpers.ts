// Test helpers: build TensorRefs over fresh CPU storages and read them back as numbers.
import type { DTypeName, HostArray, TensorRef } from '@core/tensor';
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits } from '@core/tensor';
import { createCpuBackend } from '../src/backend.js';
import type { CpuStorage } from '../src/storage.js';

export type Ref = TensorRef<CpuStorage>;

// These unit tests pin down the TypeScript reference kernels; test/wasm-*.test.ts checks the wasm ones against them.
export const backend = createCpuBackend({ wasm: false, native: false });
export const K = backend.kernels;

/** Row-major strides for `shape`. */
export function strides(shape: readonly number[]): number[] {
  const s: number[] = [];
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = acc;
    acc *= shape[d]!;
  }
  return s;
}

function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Host array for `dtype` holding `values` (halves encoded to their bit patterns, bool as x != 0). */
export function hostArray(dtype: DTypeName, values: readonly number[]): HostArray {
  switch (dtype) {
    case 'float32': return Float32Array.from(values);
    case 'float64': return Float64Array.from(values);
    case 'int32': return Int32Array.from(values);
    case 'bool': return Uint8Array.from(values, (v) => (v !== 0 ? 1 : 0));
    case 'float16': return Uint16Array.from(values, (v) => float32ToFloat16Bits(v));
    case 'bfloat16': return Uint16Array.from(values, (v) => float32ToBFloat16Bits(v));
  }
}

/** A storage holding `data` exactly as given, seen through the view shape/strides/offset. */
export function view(dtype: DTypeName, data: readonly number[], shape: readonly number[], viewStrides?: readonly number[], offset = 0): Ref {
  const storage = backend.alloc(0, dtype, data.length);
  backend.write(storage, hostArray(dtype, data), 0);
  return { storage, dtype, shape, strides: viewStrides ?? strides(shape), offset };
}

/** A contiguous tensor with the given logical values. */
export function tensor(dtype: DTypeName, values: readonly number[], shape: readonly number[] = [values.length]): Ref {
  if (numel(shape) !== values.length) throw new Error(`test helper: ${values.length} values for shape [${shape.join(', ')}]`);
  return view(dtype, values, shape);
}

/** A contiguous output filled with `init` (NaN by default, so unwritten elements show). */
export function output(dtype: DTypeName, shape: readonly number[], init = NaN): Ref {
  return view(dtype, new Array<number>(numel(shape)).fill(init), shape);
}

function decode(dtype: DTypeName, raw: number): number {
  if (dtype === 'float16') return float16BitsToNumber(raw);
  if (dtype === 'bfloat16') return bfloat16BitsToNumber(raw);
  return raw;
}

/** The whole storage, decoded to numbers. */
export function storageValues(ref: Ref): number[] {
  return Array.from(backend.readSync!(ref.storage), (v) => decode(ref.dtype, v));
}

/** The raw storage elements (half bit patterns undecoded). */
export function storageBits(ref: Ref): number[] {
  return Array.from(backend.readSync!(ref.storage));
}

/** The view's elements in logical order, decoded. */
export function values(ref: Ref): number[] {
  const raw = backend.readSync!(ref.storage);
  const out: number[] = [];
  const index = new Array<number>(ref.shape.length).fill(0);
  const n = numel(ref.shape);
  for (let i = 0; i < n; i++) {
    let offset = ref.offset;
    for (let d = 0; d < index.length; d++) offset += index[d]! * ref.strides[d]!;
    out.push(decode(ref.dtype, raw[offset]!));
    for (let d = index.length - 1; d >= 0; d--) {
      if (++index[d]! < ref.shape[d]!) break;
      index[d] = 0;
    }
  }
  return out;
}

export const f16 = (x: number): number => float16BitsToNumber(float32ToFloat16Bits(x));
export const bf16 = (x: number): number => bfloat16BitsToNumber(float32ToBFloat16Bits(x));

/** Deterministic pseudo-random numbers in [lo, hi) for building test inputs. */
export function seeded(seed: number): (lo?: number, hi?: number) => number {
  let s = seed >>> 0;
  return (lo = -1, hi = 1) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo);
  };
}

/** float64 reference of one batch of a strided matmul, with Σ|a·b| per element for the tolerance. */
function matmulReference(a: Ref, b: Ref, batch: number, m: number, n: number, k: number): { value: Float64Array; scale: Float64Array } {
  const A = a.storage.data;
  const B = b.storage.data;
  const value = new Float64Array(m * n);
  const scale = new Float64Array(m * n);
  const ab = a.shape[0] === 1 ? 0 : batch;
  const bb = b.shape[0] === 1 ? 0 : batch;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      let t = 0;
      for (let p = 0; p < k; p++) {
        const x = A[a.offset + ab * a.strides[0] + i * a.strides[1] + p * a.strides[2]]! * B[b.offset + bb * b.strides[0] + p * b.strides[1] + j * b.strides[2]]!;
        s += x;
        t += Math.abs(x);
      }
      value[i * n + j] = s;
      scale[i * n + j] = t;
    }
  }
  return { value, scale };
}

/**
 * Checks the float32 matmul out = a @ b (any strides) against a float64 reference:
 * |got − exact| ≤ 2·k·2^-24·Σ|a·b| + 1e-30 (f32 accumulation in any summation order, with or without FMA).
 */
export function expectMatmulClose(a: Ref, b: Ref, out: Ref): void {
  const [batches, m, n] = out.shape as [number, number, number];
  const k = a.shape[2]!;
  const got = out.storage.data;
  for (let batch = 0; batch < batches; batch++) {
    const { value, scale } = matmulReference(a, b, batch, m, n, k);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        const g = got[out.offset + batch * out.strides[0]! + i * out.strides[1]! + j * out.strides[2]!]!;
        const err = Math.abs(g - value[i * n + j]!);
        if (!(err <= 2 * k * 2 ** -24 * scale[i * n + j]! + 1e-30)) {
          throw new Error(`batch ${batch} element (${i}, ${j}): got ${g}, want ${value[i * n + j]} (error ${err})`);
        }
      }
    }
  }
}
