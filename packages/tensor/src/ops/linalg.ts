// matmul family. Like PyTorch, these never promote dtypes (TP-5) and check devices in schema order (SD-5).
import type { TensorRef } from '../backend/contract.js';
import { bfloat16, bool, float16, float32, float64, int32, type DType } from '../dtype/dtype.js';
import { DTypeError, ShapeError } from '../errors/errors.js';
import { schemaDevice } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute } from '../dispatch/run.js';
import { Tensor } from '../tensor/tensor.js';
import { broadcastShapes, broadcastStrides, numelOf, sameShape, viewStrides } from '../tensor/shape.js';
import { asStrided, asStridedGradient, contiguousCopy, reshape, transpose, unsqueeze } from './views.js';
import { record } from '../autograd/engine.js';
import { isRecording, noGrad } from '../autograd/grad-mode.js';
import { anomalyModeActive } from '../amp/anomaly.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { fusedKernel } from '../dispatch/fused.js';
import { freeingTemporaries, releaseWithGraph } from '../tensor/temporaries.js';
import { add, cast } from './elementwise.js';

function checkPair(op: string, a: Tensor, b: Tensor, names: [string, string]): void {
  if (!(a instanceof Tensor) || !(b instanceof Tensor)) throw new TypeError(`${op}(): both arguments must be Tensors`);
  schemaDevice(op, [{ name: names[0], tensor: a }, { name: names[1], tensor: b }]);
  if (a.dtype !== b.dtype) {
    throw new DTypeError(
      `${op}: expected ${names[0]} and ${names[1]} to have the same dtype, but got: ${a.dtype.name} != ${b.dtype.name}` +
        ` (matrix products never promote: convert one with .to(${a.dtype.name}))`,
      op,
      b.dtype.name,
    );
  }
  if (a.dtype === bool) throw new DTypeError(`${op}: not implemented for bool tensors; convert with .float()`, op, 'bool');
}

function shapeText(t: { readonly shape: readonly number[] }): string {
  return t.shape.join('x');
}

/** View `t` ([...batch, r, c] broadcast to `batch`, or to [...batch, ...matrix]) as [B, r, c], copying only when strides cannot merge. */
function asBatched(t: Tensor, batch: readonly number[], matrix = t.shape.slice(-2)): Tensor {
  const [r, c] = matrix as [number, number];
  const full = [...batch, r, c];
  const strides = broadcastStrides(t.shape, t._strides, full);
  const B = numelOf(batch);
  const merged = viewStrides(batch, strides.slice(0, batch.length), [B]);
  if (merged) return Tensor._internal(t._storage, [B, r, c], [merged[0]!, strides[full.length - 2]!, strides[full.length - 1]!], t._offset);
  const copy = contiguousCopy(Tensor._internal(t._storage, full, strides, t._offset));
  const batched = reshape(copy, [B, r, c]);
  copy.dispose(); // the view holds the copy's memory alone
  return batched;
}

/** `use` the operands as [B, r, c] batches (asBatched); a copy made for the kernel is freed when it returns. */
function batchedOperands(operands: readonly [Tensor, Tensor], batch: readonly number[], use: (a: Tensor, b: Tensor) => void): void {
  const [a, b] = operands.map((t) => asBatched(t, batch)) as [Tensor, Tensor];
  use(a, b);
  a.dispose(); // an internal view holds nothing: disposing it frees only a copy
  b.dispose();
}

/** A matrix as the kernel's [1, rows, cols] batch. */
function batchOfOne(t: Tensor): TensorRef<unknown> {
  const { storage, dtype, shape, strides, offset } = ref(t);
  // The batch stride is never stepped (one batch); rows × cols is what a contiguous batch would have.
  return { storage, dtype, shape: [1, shape[0]!, shape[1]!], strides: [shape[0]! * shape[1]!, strides[0]!, strides[1]!], offset };
}

/**
 * A new contiguous [...batch, M, N] product as the kernel's [B, M, N]. The product is returned as
 * allocated, not as a view of a [B, M, N] tensor, so a caller that disposes it frees its memory.
 */
function batchesOf(t: Tensor): TensorRef<unknown> {
  const { storage, dtype, shape, offset } = ref(t);
  const [M, N] = shape.slice(-2) as [number, number];
  return { storage, dtype, shape: [numelOf(shape.slice(0, -2)), M, N], strides: [M * N, N, 1], offset };
}

/** The batched product of a [..., M, K] and b [..., K, N]. */
function batchedProduct(op: string, a: Tensor, b: Tensor): Tensor {
  const [M, K] = a.shape.slice(-2) as [number, number];
  const [K2, N] = b.shape.slice(-2) as [number, number];
  if (K !== K2) {
    throw new ShapeError(`${op}: mat1 and mat2 shapes cannot be multiplied (${shapeText(a)} and ${shapeText(b)})`, op);
  }
  const backend = backendOf(a.device);
  requireCompute(backend, a.dtype, op);
  const acc = a.dtype === float64 ? 'float64' : a.dtype === int32 ? 'int32' : 'float32';
  let y: Tensor;
  if (a.ndim === 2 && b.ndim === 2) {
    // Two matrices: the kernel sees them as batches of one, with no views or copies made.
    y = allocate([M, N], a.dtype, a.device);
    if (y.numel() > 0) {
      if (K === 0) backend.kernels.fill(ref(y), 0);
      else backend.kernels.matmul(batchOfOne(a), batchOfOne(b), batchOfOne(y), acc);
    }
  } else {
    const batch = broadcastShapes([a.shape.slice(0, -2), b.shape.slice(0, -2)], op);
    y = allocate([...batch, M, N], a.dtype, a.device);
    if (y.numel() > 0) {
      if (K === 0) backend.kernels.fill(ref(y), 0);
      else batchedOperands([a, b], batch, (ab, bb) => backend.kernels.matmul(ref(ab), ref(bb), batchesOf(y), acc));
    }
  }
  // dA = dY·Bᵀ, dB = Aᵀ·dY; the engine sums over broadcast batch dims.
  return record(`${op}Backward`, y, [a, b], (g) => [
    a.requiresGrad ? gradientProduct(op, g, transpose(b, -1, -2), a) : null,
    b.requiresGrad ? gradientProduct(op, transpose(a, -1, -2), g, b) : null,
  ], [...(a.requiresGrad ? [b] : []), ...(b.requiresGrad ? [a] : [])]);
}

/**
 * `x @ y` as the gradient of `operand`. A matrix stored transposed (nn.Linear's weight.t()) gets it
 * as (yᵀxᵀ)ᵀ, a product in its storage's layout, as PyTorch's mm backward does: the weight's
 * gradient then arrives contiguous, and accumulating it into .grad (or casting it to a float32
 * parameter) needs no transposing copy.
 */
function gradientProduct(op: string, x: Tensor, y: Tensor, operand: Tensor): Tensor {
  if (x.ndim === 2 && y.ndim === 2 && operand.ndim === 2 && storedTransposed(operand)) {
    return transpose(batchedProduct(op, transpose(y, 0, 1), transpose(x, 0, 1)), 0, 1);
  }
  return batchedProduct(op, x, y);
}

/**
 * `a @ b` (matmul's broadcasting, both at least 2-D) of `dtype` values (float16 or bfloat16), as
 * float32: for ops outside core that compute a 16-bit result whose sums stay in float32 until they
 * round once (the 16-bit convolutions and linears of @core/nn add their bias there). Each operand
 * is of `dtype` (its gradient is rounded once, from float32 sums) or float32 holding `dtype` values,
 * as `x.float()` gives (its gradient stays in float32, e.g. for a convolution's col2im to sum).
 * Where the backend has the `matmulToFloat32` fused kernel, the product and its gradients run as
 * `dtype` GEMMs summed in float32, the incoming gradient rounded to `dtype` first (exact when the
 * result is rounded to `dtype` before it is used, as those layers do); elsewhere it is `matmul` of
 * the operands widened to float32.
 *
 * `options.otherShape` multiplies `b.reshape(otherShape)` without that reshape's copy when `b` is a
 * strided view (a convolution's windows over its input): the 16-bit operand is cast straight from
 * the view, and `b`'s gradient comes back in `b`'s shape. `b` is then not broadcast over `a`'s batch.
 *
 * `options.otherView` multiplies `b.asStrided(size, stride, offset).reshape(otherShape)`: `b` is
 * the contiguous tensor a convolution's windows are a view of, given as such so that its gradient,
 * the columns' gradient summed back into place (col2im), is made in one step where the backend has
 * the `matmulStridedSum` fused kernel, with no float32 columns in memory. The sums are float32 and
 * rounded once into `b`'s dtype, as for a float32 `b` widened from `dtype` values.
 *
 * `options.bias` is added to the float32 sums (broadcast against the product), and `options.round`
 * rounds the result once to `dtype`, as PyTorch's half addmm and convolutions do. Rounded here, the
 * result's gradient arrives in `dtype` and goes to the 16-bit GEMMs as it is: no float32 copy of it
 * is made to be rounded back.
 */
export function matmulInFloat32(a: Tensor, b: Tensor, dtype: DType, options: MatmulInFloat32Options = {}): Tensor {
  if (!(a instanceof Tensor) || !(b instanceof Tensor)) throw new TypeError('matmulInFloat32(): both operands must be Tensors');
  schemaDevice('matmulInFloat32', [{ name: 'input', tensor: a }, { name: 'other', tensor: b }]);
  if (dtype !== float16 && dtype !== bfloat16) {
    throw new DTypeError(`matmulInFloat32: dtype must be float16 or bfloat16, got ${dtype.name}`, 'matmulInFloat32', dtype.name);
  }
  for (const t of [a, b]) {
    if (t.dtype !== dtype && t.dtype !== float32) {
      throw new DTypeError(`matmulInFloat32: operands must be ${dtype.name} or float32 holding ${dtype.name} values, got ${t.dtype.name}`, 'matmulInFloat32', t.dtype.name);
    }
  }
  const bias = options.bias ?? null;
  if (bias !== null) {
    if (!(bias instanceof Tensor)) throw new TypeError('matmulInFloat32(): options.bias must be a Tensor');
    schemaDevice('matmulInFloat32', [{ name: 'input', tensor: a }, { name: 'bias', tensor: bias }]);
    if (bias.dtype !== dtype && bias.dtype !== float32) {
      throw new DTypeError(`matmulInFloat32: bias must be ${dtype.name} or float32, got ${bias.dtype.name}`, 'matmulInFloat32', bias.dtype.name);
    }
  }
  const view = options.otherView;
  if (view !== undefined) checkOtherView(b, view, options.otherShape);
  const bShape = options.otherShape ?? b.shape;
  if (options.otherShape !== undefined) checkOtherShape(a, view?.size ?? b.shape, bShape);
  if (a.ndim < 2 || bShape.length < 2) throw new ShapeError(`matmulInFloat32: both operands must be at least 2-D, got ${a.ndim}-D and ${bShape.length}-D`, 'matmulInFloat32');
  if (a.shape[a.ndim - 1] !== bShape[bShape.length - 2]) {
    throw new ShapeError(`matmulInFloat32: mat1 and mat2 shapes cannot be multiplied (${shapeText(a)} and ${shapeText({ shape: bShape })})`, 'matmulInFloat32');
  }
  const productShape = [...broadcastShapes([a.shape.slice(0, -2), bShape.slice(0, -2)], 'matmulInFloat32'), a.shape[a.ndim - 2]!, bShape[bShape.length - 1]!];
  if (bias !== null && !sameShape(broadcastShapes([productShape, bias.shape], 'matmulInFloat32'), productShape)) {
    throw new ShapeError(`matmulInFloat32: bias of shape ${shapeText(bias)} does not broadcast to the product's shape [${productShape.join(', ')}]`, 'matmulInFloat32');
  }
  /**
   * The float32 sums plus the bias, rounded to dtype when asked. Differentiable (the tail where no
   * fused kernel takes the product); each step's input is read by nothing after it (neither the
   * add's nor the cast's gradient needs it), so it is freed at once.
   */
  const finish = (sums: Tensor): Tensor => {
    let y = sums;
    for (const step of [bias && ((t: Tensor) => add(t, cast(bias, float32))), options.round && ((t: Tensor) => cast(t, dtype))]) {
      if (!step) continue;
      const next = step(y);
      y.dispose();
      y = next;
    }
    return y;
  };
  const viewOffset = view?.offset ?? 0;
  /** Whether b is the operand as it is: no windows, no other shape. */
  const plain = view === undefined && bShape === b.shape;
  /** b's elements as the operand reads them: its windows with otherView, else b itself (differentiable). */
  const bElements = (t: Tensor): Tensor => (view ? asStrided(t, view.size, view.stride, viewOffset) : t);
  /** b as the matrix operand: a differentiable reshape (a copy for a strided view). */
  const bMatrix = (): Tensor => (plain ? b : reshape(bElements(b), bShape));
  const backend = backendOf(a.device);
  requireCompute(backend, dtype, 'matmulInFloat32');
  const kernel = fusedKernel(backend, 'matmulToFloat32');
  // Rounded with the bias in the GEMM's store, where the backend can: no float32 product at all.
  // Not under detectAnomaly, which checks the kernels' outputs: there the rounding stays a cast,
  // the op it names when a 16-bit result overflows.
  const rounding = options.round && a.shape[a.ndim - 1]! > 0 && !anomalyModeActive() ? fusedKernel(backend, 'matmulRounded') : undefined;
  if (!kernel) return finish(batchedProduct('matmul', cast(a, float32), plain ? cast(b, float32) : reshape(bElements(cast(b, float32)), bShape)));
  // A reshaped view is cast whole into a new contiguous tensor, which then reshapes as a view.
  // The casts' own tensors behind the views kept are let go at once.
  let operands: readonly [Tensor, Tensor] = [a, b];
  freeingTemporaries(
    () => (operands = noGrad(() => {
      if (plain) return [castKeepingLayout(a, dtype), castKeepingLayout(b, dtype)] as const;
      const elements = bElements(b);
      return [castKeepingLayout(a, dtype), reshape(elements.dtype === dtype ? elements : castOnce(elements, dtype), bShape)] as const;
    })),
    (t) => operands.includes(t),
  );
  const [ah, bh] = operands;
  /**
   * x @ y summed in float32 (matmulToFloat32), or with `rounded`, plus the bias and rounded to
   * dtype by the backend's matmulRounded (K > 0 there), the bias as float32 viewed as the
   * product's [B, M, N].
   */
  const product = (x: Tensor, y: Tensor, rounded = false): Tensor => {
    const [M, K] = x.shape.slice(-2) as [number, number];
    const N = y.shape[y.ndim - 1]!;
    const batch = broadcastShapes([x.shape.slice(0, -2), y.shape.slice(0, -2)], 'matmulInFloat32');
    const out = allocate([...batch, M, N], rounded ? dtype : float32, x.device);
    if (out.numel() === 0) return out;
    if (K === 0) {
      backend.kernels.fill(ref(out), 0);
      return out;
    }
    const wide = rounded && bias ? cast(bias, float32) : null;
    batchedOperands([x, y], batch, (xb, yb) => {
      if (!rounded) return kernel(ref(xb), ref(yb), batchesOf(out));
      const biasBatches = wide && asBatched(wide, batch, [M, N]);
      rounding!(ref(xb), ref(yb), biasBatches && ref(biasBatches), batchesOf(out));
      biasBatches?.dispose();
    });
    if (wide !== bias) wide?.dispose();
    return out;
  };
  // The gradient of a 16-bit operand that was not broadcast is the 16-bit GEMM's output, rounded
  // once; the engine sums those of broadcast operands over their batch dims in float32 and then
  // rounds them once. A backward pass that is itself recorded (createGraph) multiplies the operands
  // again through this op, so the gradients can be differentiated.
  const gradient = (x: Tensor, y: Tensor, operand: Tensor, shape: readonly number[]): Tensor => {
    if (isRecording()) return matmulInFloat32(x, y, dtype);
    const batch = broadcastShapes([x.shape.slice(0, -2), y.shape.slice(0, -2)], 'matmulInFloat32');
    return operand.dtype === dtype && sameShape([...batch, x.shape[x.ndim - 2]!, y.shape[y.ndim - 1]!], shape) ? gradientProduct('matmul', x, y, operand) : product(x, y);
  };
  /**
   * b's gradient with otherView, from the product's gradient x @ y ([..., K, N] of b's operand):
   * those float32 sums summed into b's places (col2im) and rounded once into b's dtype, by the
   * backend's matmulStridedSum where it has one; recorded (createGraph) through asStrided's
   * differentiable gradient.
   */
  const windowsGradient = (x: Tensor, y: Tensor): Tensor => {
    const size = view!.size;
    if (isRecording()) return asStridedGradient(reshape(matmulInFloat32(x, y, dtype), size), b.shape, size, view!.stride, viewOffset);
    const batch = broadcastShapes([x.shape.slice(0, -2), y.shape.slice(0, -2)], 'matmulInFloat32');
    const fused = x.shape[x.ndim - 1]! > 0 && numelOf(size) > 0 && !anomalyModeActive() ? fusedKernel(backend, 'matmulStridedSum') : undefined;
    if (fused) {
      const out = allocate(b.shape, b.dtype, b.device);
      batchedOperands([x, y], batch, (xb, yb) => fused(ref(xb), ref(yb), size, { strides: view!.stride, offset: viewOffset }, ref(out)));
      return out;
    }
    const sums = product(x, y);
    const summed = asStridedGradient(reshape(sums, size), b.shape, size, view!.stride, viewOffset);
    sums.dispose();
    if (summed.dtype === b.dtype) return summed;
    const rounded = cast(summed, b.dtype);
    summed.dispose();
    return rounded;
  };
  // The sums, biased and rounded in place of the tail's ops: the node below differentiates all of it.
  const value = noGrad(() => (rounding ? product(ah, bh, true) : finish(product(ah, bh))));
  // A rounded result's gradient is already dtype (the engine brings it to the result's dtype): the
  // cast is then a no-op. The bias's gradient is g, which the engine sums over its broadcast dims.
  const y = record('matmulInFloat32Backward', value, bias === null ? [a, b] : [a, b, bias], (g) => {
    const gh = cast(g, dtype);
    const [left, right] = isRecording() ? [a, bMatrix()] : [ah, bh];
    let gb: Tensor | null = null;
    if (b.requiresGrad && view) gb = windowsGradient(transpose(left, -1, -2), gh);
    else if (b.requiresGrad) gb = gradient(transpose(left, -1, -2), gh, b, bShape);
    return [a.requiresGrad ? gradient(gh, transpose(right, -1, -2), a, a.shape) : null, gb && !view && bShape !== b.shape ? reshape(gb, b.shape) : gb, ...(bias === null ? [] : [g])];
  }, [ah, bh]);
  // The 16-bit operands made here (a convolution's columns: tens of MB) go with the graph.
  if (ah !== a) releaseWithGraph(ah);
  if (bh !== b) releaseWithGraph(bh);
  return y;
}

/** matmulInFloat32's options. */
export interface MatmulInFloat32Options {
  /** Multiply `b.reshape(otherShape)`, casting a strided `b` straight into its 16-bit operand (see matmulInFloat32). */
  readonly otherShape?: readonly number[];
  /**
   * Multiply `b.asStrided(size, stride, offset).reshape(otherShape)` (otherShape required): `b` is
   * the contiguous tensor whose windows are the operand, and its gradient is summed into place in
   * one step where the backend can (see matmulInFloat32).
   */
  readonly otherView?: {
    /** The windows' shape (asStrided's `size`). */
    readonly size: readonly number[];
    /** Their strides over b's elements. */
    readonly stride: readonly number[];
    /** Where the first window starts in b (default 0). */
    readonly offset?: number;
  };
  /** Added to the float32 sums before any rounding (`dtype` or float32; broadcast against the product). */
  readonly bias?: Tensor | null;
  /** Round the result once to `dtype` (default: keep the float32 sums). */
  readonly round?: boolean;
}

/** otherShape holds the operand's elements (b's, or its view's) and keeps the product's batch, so b's gradient reshapes back. */
function checkOtherShape(a: Tensor, operandShape: readonly number[], shape: readonly number[]): void {
  if (!shape.every((d) => Number.isInteger(d) && d >= 0) || numelOf(shape) !== numelOf(operandShape)) {
    throw new ShapeError(`matmulInFloat32: otherShape [${shape.join(', ')}] is invalid for an operand of ${numelOf(operandShape)} elements (shape ${shapeText({ shape: operandShape })})`, 'matmulInFloat32');
  }
  const batch = shape.slice(0, -2);
  if (shape.length >= 2 && !sameShape(broadcastShapes([a.shape.slice(0, -2), batch], 'matmulInFloat32'), batch)) {
    throw new ShapeError(`matmulInFloat32: with otherShape, the other operand is not broadcast: its batch [${batch.join(', ')}] must hold input's (shape ${shapeText(a)})`, 'matmulInFloat32');
  }
}

/** otherView is a view asStrided takes of b (contiguous, in bounds), and comes with otherShape. */
function checkOtherView(b: Tensor, view: NonNullable<MatmulInFloat32Options['otherView']>, otherShape: readonly number[] | undefined): void {
  if (otherShape === undefined) throw new ShapeError('matmulInFloat32: otherView needs otherShape, the shape its windows are multiplied as', 'matmulInFloat32');
  if (!b.isContiguous()) throw new ShapeError(`matmulInFloat32: with otherView, the other operand must be contiguous (the tensor its windows view), got strides [${b._strides.join(', ')}]; call .contiguous() first`, 'matmulInFloat32');
  if (!Array.isArray(view.size) || !Array.isArray(view.stride)) throw new TypeError('matmulInFloat32(): otherView must be { size, stride, offset? } with arrays of integers');
  // asStrided's own checks (integers, bounds) run on the first use, before any kernel.
  noGrad(() => asStrided(b, view.size, view.stride, view.offset ?? 0));
}

/** `t` cast to `dtype`; a transposed matrix (a linear's `weight.t()`) stays transposed rather than being copied across. */
function castKeepingLayout(t: Tensor, dtype: DType): Tensor {
  if (t.dtype === dtype) return t;
  return t.ndim === 2 && storedTransposed(t) ? transpose(cast(transpose(t, 0, 1), dtype), 0, 1) : cast(t, dtype);
}

/**
 * `cast(t, dtype)` for a view that reads elements more than once (a convolution's windows read each
 * pixel at every kernel position): the storage span it reads is cast once and viewed the same way,
 * so each element is converted once, not once per window. Rounding is per element: the same bits.
 */
function castOnce(t: Tensor, dtype: DType): Tensor {
  let span = 1;
  for (let d = 0; d < t.ndim; d++) {
    if (t._strides[d]! < 0) return cast(t, dtype);
    span += (t.shape[d]! - 1) * t._strides[d]!;
  }
  if (t.numel() === 0 || span >= t.numel()) return cast(t, dtype);
  const region = cast(Tensor._internal(t._storage, [span], [1], t._offset), dtype);
  return asStrided(region, t.shape, t._strides);
}

/** A matrix whose columns are contiguous: the transpose of a row-major one. */
function storedTransposed(t: Tensor): boolean {
  const [rows, cols] = t.shape as [number, number];
  return rows > 1 && cols > 1 && t._strides[0] === 1 && t._strides[1] === rows;
}

/** PyTorch's matmul: dot, mv, mm, or broadcast batched mm, by rank. Autocast: lower precision (AC-8). */
export function matmul(a: Tensor, b: Tensor): Tensor {
  if (autocastIdle()) return matmulImpl(a, b);
  return autocastOp('matmul', [a, b] as const, matmulImpl);
}

/** PyTorch's matmul: dot, mv, mm, or broadcast batched mm, by rank. */
function matmulImpl(a: Tensor, b: Tensor): Tensor {
  checkPair('matmul', a, b, ['input', 'other']);
  if (a.ndim === 0 || b.ndim === 0) {
    throw new ShapeError(`matmul: both arguments to matmul need to be at least 1D, but they are ${a.ndim}D and ${b.ndim}D`, 'matmul');
  }
  const a2 = a.ndim === 1 ? unsqueeze(a, 0) : a;
  const b2 = b.ndim === 1 ? unsqueeze(b, 1) : b;
  if (a.ndim === 1 && b.ndim === 1 && a.shape[0] !== b.shape[0]) {
    throw new ShapeError(`matmul: inconsistent tensor size, expected tensor [${a.shape[0]}] and src [${b.shape[0]}] to have the same number of elements`, 'matmul');
  }
  let out = batchedProduct('matmul', a2, b2);
  if (a.ndim === 1) out = reshape(out, [...out.shape.slice(0, -2), out.shape[out.ndim - 1]!]);
  if (b.ndim === 1) out = reshape(out, out.shape.slice(0, -1));
  return out;
}

export function mm(a: Tensor, b: Tensor): Tensor {
  if (autocastIdle()) return mmImpl(a, b);
  return autocastOp('mm', [a, b] as const, mmImpl);
}

function mmImpl(a: Tensor, b: Tensor): Tensor {
  checkPair('mm', a, b, ['self', 'mat2']);
  if (a.ndim !== 2) throw new ShapeError(`mm: self must be a matrix (2-D), got ${a.ndim}-D`, 'mm');
  if (b.ndim !== 2) throw new ShapeError(`mm: mat2 must be a matrix (2-D), got ${b.ndim}-D`, 'mm');
  return batchedProduct('mm', a, b);
}

export function bmm(a: Tensor, b: Tensor): Tensor {
  if (autocastIdle()) return bmmImpl(a, b);
  return autocastOp('bmm', [a, b] as const, bmmImpl);
}

function bmmImpl(a: Tensor, b: Tensor): Tensor {
  checkPair('bmm', a, b, ['self', 'mat2']);
  if (a.ndim !== 3) throw new ShapeError(`bmm: batch1 must be a 3D tensor, got ${a.ndim}-D`, 'bmm');
  if (b.ndim !== 3) throw new ShapeError(`bmm: batch2 must be a 3D tensor, got ${b.ndim}-D`, 'bmm');
  if (a.shape[0] !== b.shape[0]) {
    throw new ShapeError(`bmm: batch1 and batch2 must have same number of batches, got ${a.shape[0]} and ${b.shape[0]}`, 'bmm');
  }
  return batchedProduct('bmm', a, b);
}
