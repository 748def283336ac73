// Batched matmul. Per batch, each operand panel is copied once into a contiguous array of the
// accumulation type, then an i-k-j loop runs over contiguous rows (unit stride in the inner loop
// for B and C). Accumulation follows `accumulate`:
//   float32: c = fround(c + fround(a·b)), a plain (non-fused) f32 multiply-add, step by step;
//   float64: plain f64; int32: wrapping imul and add.
// The result is rounded once into out's dtype on store.
import type { DTypeName, StridedView } from '@core/tensor';
import { CpuStorage, type CpuArray } from '../storage.js';
import { cast } from './cast.js';
import { checkDType, gatherInto, type Ref, scatterFrom } from './io.js';
import { contiguousStrides, sizeOf } from './strided.js';

function panelArray(accumulate: DTypeName, length: number): Float32Array | Float64Array | Int32Array {
  switch (accumulate) {
    case 'float32': return new Float32Array(length);
    case 'float64': return new Float64Array(length);
    case 'int32': return new Int32Array(length);
    default: throw new TypeError(`cpu matmul: cannot accumulate in ${accumulate}`);
  }
}

/** The 2-d matrix of batch `batch` of a rank-3 view. A batch size of 1 broadcasts. */
function batchView(ref: Ref, batch: number): Ref {
  const b = ref.shape[0] === 1 ? 0 : batch;
  return {
    storage: ref.storage,
    dtype: ref.dtype,
    shape: [ref.shape[1], ref.shape[2]],
    strides: [ref.strides[1], ref.strides[2]],
    offset: ref.offset + b * ref.strides[0],
  };
}

/** True when every batch of `ref` is the same matrix, so its panel is copied once. */
function batchInvariant(ref: Ref): boolean {
  return ref.shape[0] === 1 || ref.strides[0] === 0;
}

/** True when a [B|1, M, K] @ b [B|1, K, N] → out [B, M, N] are rank 3 with matching sizes (what the fast paths take; the TypeScript kernel words the errors). */
export function matmulShapesMatch(a: Ref, b: Ref, out: Ref): boolean {
  return (
    a.shape.length === 3 && b.shape.length === 3 && out.shape.length === 3 &&
    a.shape[1] === out.shape[1] && b.shape[2] === out.shape[2] && a.shape[2] === b.shape[1] &&
    (a.shape[0] === out.shape[0] || a.shape[0] === 1) && (b.shape[0] === out.shape[0] || b.shape[0] === 1)
  );
}

export function matmul(a: Ref, b: Ref, out: Ref, accumulate: DTypeName): void {
  product(a, b, out, accumulate, a.dtype);
}

/** The fused matmulToFloat32: float16 or bfloat16 a and b summed in float32 into a float32 out, unrounded. */
export function matmulToFloat32(a: Ref, b: Ref, out: Ref): void {
  if (a.dtype !== 'float16' && a.dtype !== 'bfloat16') throw new TypeError(`cpu matmulToFloat32: a is ${a.dtype}, expected float16 or bfloat16`);
  product(a, b, out, 'float32', 'float32');
}

/** The fused matmulRounded: matmulToFloat32's sums plus a float32 bias of out's shape (or none), rounded once into out of a's dtype. */
export function matmulRounded(a: Ref, b: Ref, bias: Ref | null, out: Ref): void {
  if (a.dtype !== 'float16' && a.dtype !== 'bfloat16') throw new TypeError(`cpu matmulRounded: a is ${a.dtype}, expected float16 or bfloat16`);
  if (bias !== null) {
    checkDType('matmulRounded', 'bias', bias, 'float32');
    if (bias.shape.length !== 3 || bias.shape.some((d, i) => d !== out.shape[i])) {
      throw new RangeError(`cpu matmulRounded: bias of shape [${bias.shape.join(', ')}] must have out's shape [${out.shape.join(', ')}]`);
    }
  }
  product(a, b, out, 'float32', a.dtype, bias);
}

/** The kernels matmulStridedSum is made of: matmulToFloat32 and stridedSum (the native ones where they run). */
export interface ProductSumParts {
  readonly product: (a: Ref, b: Ref, out: Ref) => void;
  readonly sum: (src: Ref, view: StridedView, out: Ref) => void;
}

/**
 * The fused matmulStridedSum as its three steps: the float32 product into a scratch array, its
 * stridedSum (as `size` in row-major order, by `view`) into out, or into float32 sums rounded once
 * into a 16-bit out.
 */
export function matmulStridedSum(a: Ref, b: Ref, size: readonly number[], view: StridedView, out: Ref, parts: ProductSumParts): void {
  if (a.dtype !== 'float16' && a.dtype !== 'bfloat16') throw new TypeError(`cpu matmulStridedSum: a is ${a.dtype}, expected float16 or bfloat16`);
  if (out.dtype !== 'float32' && out.dtype !== a.dtype) throw new TypeError(`cpu matmulStridedSum: out is ${out.dtype}, expected float32 or ${a.dtype}`);
  const shape = [Math.max(a.shape[0]!, b.shape[0]!), a.shape[1]!, b.shape[2]!];
  const numel = shape[0]! * shape[1]! * shape[2]!;
  if (sizeOf(size) !== numel) throw new RangeError(`cpu matmulStridedSum: size [${size.join(', ')}] does not hold the product's ${numel} elements`);
  const products = new CpuStorage('float32', numel);
  parts.product(a, b, { storage: products, dtype: 'float32', shape, strides: contiguousStrides(shape), offset: 0 });
  const source: Ref = { storage: products, dtype: 'float32', shape: size, strides: contiguousStrides(size), offset: 0 };
  if (out.dtype === 'float32') {
    parts.sum(source, view, out);
    return;
  }
  const sums: Ref = { storage: new CpuStorage('float32', sizeOf(out.shape)), dtype: 'float32', shape: out.shape, strides: contiguousStrides(out.shape), offset: 0 };
  parts.sum(source, view, sums);
  cast(sums, out);
}

/** a @ b (+ bias, float32, out's shape) into out of dtype `outDType`, a and b of one dtype, summed in `accumulate`. */
function product(a: Ref, b: Ref, out: Ref, accumulate: DTypeName, outDType: DTypeName, bias: Ref | null = null): void {
  if (a.shape.length !== 3 || b.shape.length !== 3 || out.shape.length !== 3) {
    throw new RangeError(`cpu matmul: expected rank-3 a, b and out, got [${a.shape.join(', ')}], [${b.shape.join(', ')}], [${out.shape.join(', ')}]`);
  }
  const [batches, m, n] = out.shape;
  const k = a.shape[2];
  const batchOk = (d: number): boolean => d === batches || d === 1;
  if (!batchOk(a.shape[0]) || !batchOk(b.shape[0]) || a.shape[1] !== m || b.shape[1] !== k || b.shape[2] !== n) {
    throw new RangeError(`cpu matmul: shapes [${a.shape.join(', ')}] @ [${b.shape.join(', ')}] do not give [${out.shape.join(', ')}]`);
  }
  checkDType('matmul', 'b', b, a.dtype);
  checkDType('matmul', 'out', out, outDType);
  if (batches * m * n === 0) return;

  const pa = panelArray(accumulate, m * k);
  const pb = panelArray(accumulate, k * n);
  const c = panelArray(accumulate, m * n);
  const biasPanel = bias && new Float32Array(m * n);
  for (let batch = 0; batch < batches; batch++) {
    if (batch === 0 || !batchInvariant(a)) gatherInto(batchView(a, batch), pa);
    if (batch === 0 || !batchInvariant(b)) gatherInto(batchView(b, batch), pb);
    c.fill(0);
    if (c instanceof Float32Array) gemmF32(pa, pb, c, m, k, n);
    else if (c instanceof Float64Array) gemmF64(pa, pb, c, m, k, n);
    else gemmI32(pa, pb, c, m, k, n);
    if (biasPanel) {
      gatherInto(batchView(bias!, batch), biasPanel);
      for (let i = 0; i < c.length; i++) c[i] = c[i]! + biasPanel[i]!; // a float32 add: the Float32Array store rounds it
    }
    scatterFrom(c, batchView(out, batch));
  }
}

function gemmF32(a: CpuArray, b: CpuArray, c: Float32Array, m: number, k: number, n: number): void {
  for (let i = 0; i < m; i++) {
    const crow = i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      const brow = p * n;
      // The Float32Array store rounds the sum: an f32 add of f32 operands.
      for (let j = 0; j < n; j++) c[crow + j] += Math.fround(aip * b[brow + j]);
    }
  }
}

function gemmF64(a: CpuArray, b: CpuArray, c: Float64Array, m: number, k: number, n: number): void {
  for (let i = 0; i < m; i++) {
    const crow = i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      const brow = p * n;
      for (let j = 0; j < n; j++) c[crow + j] += aip * b[brow + j];
    }
  }
}

function gemmI32(a: CpuArray, b: CpuArray, c: Int32Array, m: number, k: number, n: number): void {
  for (let i = 0; i < m; i++) {
    const crow = i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      const brow = p * n;
      // The sum of two int32 values is exact in f64; the Int32Array store wraps it.
      for (let j = 0; j < n; j++) c[crow + j] += Math.imul(aip, b[brow + j]);
    }
  }
}
