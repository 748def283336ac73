import type { DType } from '../dtype/dtype.js';
import { bfloat16, bool, float16, float32, float64, int32 } from '../dtype/dtype.js';
import type { Device, DeviceLike } from '../device/device.js';
import { currentSite, type CreationSite } from './site.js';
import { noteCreated } from './temporaries.js';
import { isContiguous, normalizeDim, numelOf } from './shape.js';
import type { Storage } from './storage.js';
import * as views from '../ops/views.js';
import * as ew from '../ops/elementwise.js';
import * as red from '../ops/reduce.js';
import * as linalg from '../ops/linalg.js';
import * as idx from '../ops/indexing.js';
import * as sm from '../ops/softmax.js';
import * as xfer from './transfer.js';
import type { Node } from '../autograd/node.js';
import type { TensorRef } from '../backend/contract.js';
import { runBackward, type BackwardOptions } from '../autograd/engine.js';
import { isGradEnabled } from '../autograd/grad-mode.js';
import { DTypeError, TensorError } from '../errors/errors.js';

/**
 * A JavaScript number or boolean where an op also takes a tensor; it acts as a 0-dim tensor that does not promote the dtype (PyTorch's Python scalars).
 */
export type Scalar = number | boolean;
/** The operand type of elementwise ops: a tensor, or a scalar that broadcasts. */
export type TensorOrScalar = Tensor | Scalar;

/** What `Tensor.to()` converts to: a device, a dtype, or both. */
export interface ToOptions {
  /** Target device (a Device or a string such as 'cpu' or 'cuda:1'); default: stay where it is. */
  readonly device?: DeviceLike;
  /** Target dtype; default: keep the dtype. */
  readonly dtype?: DType;
  /** Host↔device copies may return before the data arrive (XFER-2/3); results are the same. */
  readonly nonBlocking?: boolean;
  /** Always return a new tensor, even when nothing changes (DEV-7). */
  readonly copy?: boolean;
}

/**
 * An n-dimensional array on a device: a strided view (shape, strides, offset) of a storage.
 * Ops return new tensors at once; GPU backends queue the work, and only `await t.item()` /
 * `await t.toArray()` wait for it.
 */
export class Tensor {
  /** @internal Mutable only through `set_()`. */ _storage: Storage;
  /** @internal Strides in elements. */ _strides: readonly number[];
  /** @internal Offset into the storage, in elements. */ _offset: number;
  /** @internal Where the tensor was created, for device-mismatch errors. */ readonly _site: CreationSite;
  /** @internal The autograd node that produced this tensor (null for leaves). */ _gradFn: Node | null = null;
  /** @internal What kernels are given for this tensor, made once (set_() drops it). */ _ref: TensorRef<unknown> | null = null;
  private _disposed = false;
  /** Counts as a user of its storage (false for kernel-only views, which never free it). */
  private _holds: boolean;
  private _leafRequiresGrad = false;
  private _shape: readonly number[];

  /** The gradient accumulated by `backward()` (leaves, and tensors that called `retainGrad()`). */
  grad: Tensor | null = null;

  private constructor(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number, site: CreationSite, counted: boolean) {
    this._storage = storage;
    // Frozen arrays are shared as they are (an op's result takes its input's shape).
    this._shape = Object.isFrozen(shape) ? shape : Object.freeze(shape.slice());
    this._strides = Object.isFrozen(strides) ? strides : Object.freeze(strides.slice());
    this._offset = offset;
    this._site = site;
    this._holds = counted;
    if (counted) {
      storage.retain();
      noteCreated(this);
    }
  }

  /** @internal Core's way to make a tensor the user will see: it records where it was created. */
  static _make(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    return new Tensor(storage, shape, strides, offset, currentSite(), true);
  }

  /**
   * @internal A view the user will see (reshape, permute, …): it shares the base's memory and its
   * creation site, so a stray view is reported where its data was made.
   */
  static _viewOf(base: Tensor, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    base._assertUsable('a view');
    return new Tensor(base._storage, shape, strides, offset, base._site, true);
  }

  /**
   * @internal A view that only feeds a kernel inside one op (never returned): no creation site,
   * and it does not keep the storage alive, so disposing the real tensors still frees it.
   */
  static _internal(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    return new Tensor(storage, shape, strides, offset, undefined, false);
  }

  /** The size of each dim, outermost first (frozen). */
  get shape(): readonly number[] { return this._shape; }
  /** The element type, e.g. float32. */
  get dtype(): DType { return this._storage.dtype; }
  /** The device that holds the data; every op's tensor arguments must share it. */
  get device(): Device { return this._storage.device; }
  /** The number of dims (0 for a scalar tensor). */
  get ndim(): number { return this.shape.length; }
  /** The number of dims, like `ndim` (PyTorch's `Tensor.dim()`). */
  dim(): number { return this.shape.length; }
  /** The number of elements (the product of the shape; 1 for a 0-dim tensor). */
  numel(): number { return numelOf(this.shape); }
  /** The size of one dim, or the whole shape. */
  size(): readonly number[];
  size(dim: number): number;
  size(dim?: number): number | readonly number[] {
    return dim === undefined ? this.shape : this.shape[normalizeDim(dim, this.ndim, 'size')]!;
  }
  /** The step in elements between neighbours along one dim, or along every dim. */
  stride(): readonly number[];
  stride(dim: number): number;
  stride(dim?: number): number | readonly number[] {
    return dim === undefined ? this._strides : this._strides[normalizeDim(dim, this.ndim, 'stride')]!;
  }
  /** Where this view starts in its storage, in elements. */
  storageOffset(): number { return this._offset; }
  /** True when the elements are laid out row-major with no gaps, so kernels can read them linearly. */
  isContiguous(): boolean { return isContiguous(this.shape, this._strides); }
  /** True after `dispose()`: this tensor object no longer holds its memory and cannot be used. */
  get isDisposed(): boolean { return this._disposed; }

  /** @internal Throws the use-after-dispose error: for this object once disposed, and for every tensor over freed memory. */
  _assertUsable(op: string): void {
    if (this._disposed || this._storage.isFreed) {
      throw new TensorError(
        `${op}: this tensor was disposed, so it cannot be used any more. dispose() is PyTorch's \`del\`: other tensors that share its memory ` +
          '(views, the tensor it was viewed from) stay usable, and the memory is freed when the last of them is disposed or collected.',
      );
    }
  }

  /** A one-line summary with shape, dtype and device (no values: reading them may need to wait). */
  toString(): string {
    return `Tensor(shape=[${this.shape.join(', ')}], dtype=${this.dtype.name}, device=${this.device})`;
  }

  /**
   * Drop this tensor now instead of waiting for the garbage collector, like PyTorch's `del t`: this
   * object can't be used afterwards, and its memory is freed at once unless another tensor shares
   * it (a view, or the tensor it is a view of), which stays usable. A second call does nothing.
   */
  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    if (this._holds) this._storage.release();
  }

  /** Lets `using t = …` dispose the tensor at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- autograd ----
  /** True for leaves marked to require grad and for results of ops over such tensors. */
  get requiresGrad(): boolean {
    return this._gradFn !== null || this._leafRequiresGrad;
  }
  /** Setting it is `requiresGrad_(on)`: leaves only. */
  set requiresGrad(on: boolean) {
    this.requiresGrad_(on);
  }
  /** Mark a leaf tensor as needing gradients (PyTorch's `requires_grad_`). */
  requiresGrad_(on = true): this {
    if (this._gradFn !== null) {
      if (on) return this;
      throw new TensorError("you can only change requiresGrad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use varNoGrad = var.detach().");
    }
    if (on && !this.dtype.isFloatingPoint) {
      throw new DTypeError(`only Tensors of floating point dtype can require gradients, got ${this.dtype.name}`, 'requiresGrad_', this.dtype.name);
    }
    this._leafRequiresGrad = on;
    return this;
  }
  /** A tensor that no op produced (or that does not require grad). */
  get isLeaf(): boolean { return this._gradFn === null; }
  /** The name of the backward rule that produced this tensor, e.g. 'MulBackward', or null. */
  get gradFn(): string | null { return this._gradFn?.name ?? null; }
  /** @internal */
  _setGradFn(node: Node | null): void { this._gradFn = node; }
  /** Keep this non-leaf tensor's gradient in `.grad` during backward. */
  retainGrad(): this {
    if (this._gradFn) this._gradFn.retained = this;
    return this;
  }
  /**
   * Compute gradients of this tensor with respect to every leaf that requires grad, accumulating
   * them into `.grad`. `gradient` defaults to 1 for a one-element tensor.
   */
  backward(gradient?: Tensor, options?: BackwardOptions): void {
    if (gradient !== undefined && !(gradient instanceof Tensor)) {
      throw new TypeError('backward(gradient?, options?): gradient must be a Tensor; for options alone write backward(undefined, { retainGraph: true })');
    }
    if (!this.requiresGrad) {
      throw new TensorError('element 0 of tensors does not require grad and does not have a gradFn: call requiresGrad_() on the inputs (leaves) before the forward pass');
    }
    let g = gradient;
    if (g === undefined) {
      if (this.numel() !== 1) {
        throw new TensorError(`grad can be implicitly created only for scalar outputs, and this tensor has shape [${this.shape.join(', ')}]: pass backward(gradient)`);
      }
      g = xfer.onesOf(this);
    } else if (g.shape.length !== this.shape.length || g.shape.some((d, i) => d !== this.shape[i])) {
      throw new TensorError(`backward(): gradient has shape [${g.shape.join(', ')}] but the tensor has shape [${this.shape.join(', ')}]`);
    }
    runBackward(this, g, options);
  }
  /**
   * Make this tensor a view of `source` (same storage, shape, strides), keeping the object: how
   * `Module.to()` moves parameters in place (DEV-8). PyTorch's `Tensor.set_`.
   */
  set_(source: Tensor): this {
    if (!(source instanceof Tensor)) throw new TypeError('set_(): source must be a Tensor');
    source._assertUsable('set_');
    source._storage.retain();
    if (this._holds && !this._disposed) this._storage.release();
    this._holds = true;
    this._disposed = false;
    this._storage = source._storage;
    this._ref = null;
    this._shape = source._shape;
    this._strides = source._strides;
    this._offset = source._offset;
    return this;
  }

  // ---- moving and converting (DEV-7, XFER-*, PIN-*) ----
  /**
   * Move and/or cast: to a device, a dtype, another tensor's device and dtype, or per `ToOptions`. Returns `this` when nothing changes (unless `copy`), so `x.to(dev)` is cheap when `x` is already there.
   */
  to(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Tensor {
    return xfer.to(this, target, options);
  }
  /** Async form of `.to()`, needed to bring a tensor from a device without synchronous reads. */
  toAsync(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Promise<Tensor> {
    return xfer.toAsync(this, target, options);
  }
  /** This tensor on the cpu (itself when already there). */
  cpu(): Tensor { return this.to('cpu'); }
  /** Cast to float32. */
  float(): Tensor { return this.to(float32); }
  /** Cast to float16. */
  half(): Tensor { return this.to(float16); }
  /** Cast to bfloat16. */
  bfloat16(): Tensor { return this.to(bfloat16); }
  /** Cast to float64 (where the backend supports it). */
  double(): Tensor { return this.to(float64); }
  /** Cast to int32 (toward zero). */
  int(): Tensor { return this.to(int32); }
  /** Cast to bool (non-zero is true). */
  bool(): Tensor { return this.to(bool); }
  /** Cast to `dtype`, like `to(dtype)`. */
  type(dtype: DType): Tensor { return this.to(dtype); }
  /**
   * A copy of this CPU tensor in pinned (page-locked) memory, so that `to(gpu, { nonBlocking: true })` can overlap the copy with compute. Throws when no accelerator backend supports pinned memory.
   */
  pinMemory(): Tensor { return xfer.pinMemory(this); }
  /** True when the data sit in pinned host memory (see `pinMemory()`). */
  isPinned(): boolean { return this._storage.pinned; }
  /** A contiguous copy with its own memory; gradients flow back to this tensor. */
  clone(): Tensor { return views.contiguousCopy(this); }
  /** A tensor over the same memory, cut from autograd. */
  detach(): Tensor { return views.detach(this); }
  /** The value of a one-element tensor, once the device has computed it (booleans read as 0/1). */
  item(): Promise<number> { return xfer.item(this); }
  /** The values as nested JavaScript arrays in the tensor's shape (a number for a 0-dim tensor), once computed. */
  toArray(): Promise<xfer.NestedArray> { return xfer.toArray(this); }
  /** Values as a flat typed array (half types decoded to Float32Array). */
  data(): Promise<xfer.DataArray> { return xfer.data(this); }
  /** Synchronous `data()`, for CPU tensors only. */
  dataSync(): xfer.DataArray { return xfer.dataSync(this); }
  /** Overwrite this tensor's values with `src` (any device, broadcast, cast as needed): SD-8. */
  copy_(src: Tensor): this { xfer.copyInto(this, src); return this; }

  // ---- views ----
  /** The same elements in a new shape (one size may be -1): a view when the strides allow it, else a copy. */
  reshape(shape: readonly number[]): Tensor { return views.reshape(this, shape); }
  /** The same elements in a new shape, always a view; throws when the strides do not allow one (use `reshape`). */
  view(shape: readonly number[]): Tensor { return views.view(this, shape); }
  /** A view with the dims reordered: dim i of the result is dim `dims[i]` of this tensor. */
  permute(dims: readonly number[]): Tensor { return views.permute(this, dims); }
  /** A view with two dims swapped. */
  transpose(dim0: number, dim1: number): Tensor { return views.transpose(this, dim0, dim1); }
  /** Transpose of a ≤2-D tensor. */
  t(): Tensor { return views.t(this); }
  /** A view with all dims reversed (the transpose of a matrix). */
  get T(): Tensor { return views.permute(this, this.shape.map((_, i) => this.ndim - 1 - i)); }
  /** A view that repeats size-1 dims to `shape` without copying (-1 keeps a size); the repeats share memory. */
  expand(shape: readonly number[]): Tensor { return views.expand(this, shape); }
  /** `expand` to `other`'s shape. */
  expandAs(other: Tensor): Tensor { return views.expand(this, other.shape); }
  /**
   * A view of the elements `start` to `end` (exclusive, negatives count from the end) along `dim`, every `step`-th: Python's `x[..., start:end:step]`.
   */
  slice(dim: number, start?: number, end?: number, step?: number): Tensor { return views.slice(this, dim, start, end, step); }
  /** A view of `length` elements along `dim` from `start`. */
  narrow(dim: number, start: number, length: number): Tensor { return views.narrow(this, dim, start, length); }
  /** A view at one index of `dim`, with that dim removed. */
  select(dim: number, index: number): Tensor { return views.select(this, dim, index); }
  /** A view without size-1 dims (all of them, or only those given). */
  squeeze(dim?: number | readonly number[]): Tensor { return views.squeeze(this, dim); }
  /** A view with a new size-1 dim inserted at `dim`. */
  unsqueeze(dim: number): Tensor { return views.unsqueeze(this, dim); }
  /** The dims `startDim`..`endDim` merged into one (a view when possible). */
  flatten(startDim = 0, endDim = -1): Tensor { return views.flatten(this, startDim, endDim); }
  /** A view with explicit sizes and strides over this (contiguous) tensor's elements; windows may overlap. */
  asStrided(size: readonly number[], stride: readonly number[], storageOffset = 0): Tensor { return views.asStrided(this, size, stride, storageOffset); }
  /** This tensor when already contiguous, else a row-major copy. */
  contiguous(): Tensor { return this.isContiguous() ? this : views.contiguousCopy(this); }

  // ---- elementwise ----
  /** `this + alpha * other`, broadcasting, with PyTorch's type promotion. */
  add(other: TensorOrScalar, alpha?: number): Tensor { return ew.add(this, other, alpha); }
  /** `this - alpha * other`, broadcasting. */
  sub(other: TensorOrScalar, alpha?: number): Tensor { return ew.sub(this, other, alpha); }
  /** Elementwise product, broadcasting. */
  mul(other: TensorOrScalar): Tensor { return ew.binary('mul', this, other); }
  /** True division (integers give float32), broadcasting. */
  div(other: TensorOrScalar): Tensor { return ew.binary('div', this, other); }
  /** `this` raised to `exponent`, elementwise. */
  pow(exponent: TensorOrScalar): Tensor { return ew.binary('pow', this, exponent); }
  /** Elementwise maximum of two tensors (NaN if either is NaN). */
  maximum(other: TensorOrScalar): Tensor { return ew.binary('maximum', this, other); }
  /** Elementwise minimum of two tensors (NaN if either is NaN). */
  minimum(other: TensorOrScalar): Tensor { return ew.binary('minimum', this, other); }
  /** Python-style modulus: the result has the sign of the divisor. */
  remainder(other: TensorOrScalar): Tensor { return ew.binary('remainder', this, other); }
  /** The angle of the point (other, this), elementwise, in radians. */
  atan2(other: TensorOrScalar): Tensor { return ew.binary('atan2', this, other); }
  /** Elementwise AND of truth values, as a bool tensor. */
  logicalAnd(other: TensorOrScalar): Tensor { return ew.binary('logicalAnd', this, other); }
  /** Elementwise OR of truth values, as a bool tensor. */
  logicalOr(other: TensorOrScalar): Tensor { return ew.binary('logicalOr', this, other); }
  /** `-this`. */
  neg(): Tensor { return ew.unary('neg', this); }
  /** Absolute value. */
  abs(): Tensor { return ew.unary('abs', this); }
  /** -1, 0 or 1 by the sign of each element. */
  sign(): Tensor { return ew.unary('sign', this); }
  /** e to the power of each element. */
  exp(): Tensor { return ew.unary('exp', this); }
  /** `exp(x) - 1`, accurate for small x. */
  expm1(): Tensor { return ew.unary('expm1', this); }
  /** Natural logarithm. */
  log(): Tensor { return ew.unary('log', this); }
  /** `log(1 + x)`, accurate for small x. */
  log1p(): Tensor { return ew.unary('log1p', this); }
  /** Square root. */
  sqrt(): Tensor { return ew.unary('sqrt', this); }
  /** `1 / sqrt(x)`. */
  rsqrt(): Tensor { return ew.unary('rsqrt', this); }
  /** `1 / x`. */
  reciprocal(): Tensor { return ew.unary('reciprocal', this); }
  /** Sine (radians). */
  sin(): Tensor { return ew.unary('sin', this); }
  /** Cosine (radians). */
  cos(): Tensor { return ew.unary('cos', this); }
  /** Tangent (radians). */
  tan(): Tensor { return ew.unary('tan', this); }
  /** Hyperbolic tangent. */
  tanh(): Tensor { return ew.unary('tanh', this); }
  /** The logistic function `1 / (1 + exp(-x))`. */
  sigmoid(): Tensor { return ew.unary('sigmoid', this); }
  /** The Gauss error function. */
  erf(): Tensor { return ew.unary('erf', this); }
  /** `max(x, 0)`. */
  relu(): Tensor { return ew.unary('relu', this); }
  /** Round down to an integer value (same dtype). */
  floor(): Tensor { return ew.unary('floor', this); }
  /** Round up to an integer value (same dtype). */
  ceil(): Tensor { return ew.unary('ceil', this); }
  /** Round to the nearest integer value, halves to even (same dtype). */
  round(): Tensor { return ew.unary('round', this); }
  /** Round toward zero (same dtype). */
  trunc(): Tensor { return ew.unary('trunc', this); }
  /** Elementwise NOT of truth values, as a bool tensor. */
  logicalNot(): Tensor { return ew.unary('logicalNot', this); }
  /** `x * x`. */
  square(): Tensor { return ew.binary('mul', this, this); }
  /** Elementwise `==`, as a bool tensor. */
  eq(other: TensorOrScalar): Tensor { return ew.compare('eq', this, other); }
  /** Elementwise `!=`, as a bool tensor. */
  ne(other: TensorOrScalar): Tensor { return ew.compare('ne', this, other); }
  /** Elementwise `<`, as a bool tensor. */
  lt(other: TensorOrScalar): Tensor { return ew.compare('lt', this, other); }
  /** Elementwise `<=`, as a bool tensor. */
  le(other: TensorOrScalar): Tensor { return ew.compare('le', this, other); }
  /** Elementwise `>`, as a bool tensor. */
  gt(other: TensorOrScalar): Tensor { return ew.compare('gt', this, other); }
  /** Elementwise `>=`, as a bool tensor. */
  ge(other: TensorOrScalar): Tensor { return ew.compare('ge', this, other); }
  /** True where an element is NaN. */
  isnan(): Tensor { return ew.compare('ne', this, this); }
  /** True where an element is +Inf or -Inf. */
  isinf(): Tensor { return ew.isinf(this); }
  /** True where an element is neither NaN nor infinite. */
  isfinite(): Tensor { return ew.isfinite(this); }
  /** Each element limited to [min, max]; either bound may be omitted (null), and may be a tensor. */
  clamp(min?: number | Tensor | null, max?: number | Tensor | null): Tensor { return ew.clamp(this, min, max); }
  /** `cond ? this : other`, PyTorch's `Tensor.where(condition, other)`. */
  where(condition: Tensor, other: TensorOrScalar): Tensor { return ew.where(condition, this, other); }

  // ---- in place (TP-4: the result must be castable to this dtype) ----
  /** In-place `add`: writes `this + alpha * other` into this tensor. */
  add_(other: TensorOrScalar, alpha?: number): this { xfer.assign(this, ew.add(this.inPlaceSource(), other, alpha), 'add_'); return this; }
  /** In-place `sub`. */
  sub_(other: TensorOrScalar, alpha?: number): this { xfer.assign(this, ew.sub(this.inPlaceSource(), other, alpha), 'sub_'); return this; }
  /** In-place `mul`. */
  mul_(other: TensorOrScalar): this { xfer.assign(this, ew.binary('mul', this.inPlaceSource(), other), 'mul_'); return this; }
  /** In-place `div` (throws on an integer tensor, whose result would be float). */
  div_(other: TensorOrScalar): this { xfer.assign(this, ew.binary('div', this.inPlaceSource(), other), 'div_'); return this; }
  /** In-place `clamp`. */
  clamp_(min?: number | Tensor | null, max?: number | Tensor | null): this { xfer.assign(this, ew.clamp(this.inPlaceSource(), min, max), 'clamp_'); return this; }
  /**
   * The value an in-place op reads. When autograd records it, that is a copy: the op's backward
   * may need the old value, which the in-place write is about to overwrite.
   */
  private inPlaceSource(): Tensor {
    return this._gradFn !== null && isGradEnabled() ? views.contiguousCopy(this) : this;
  }
  /** Set every element to `value`, in place. */
  fill_(value: number): this { xfer.fill(this, value); return this; }
  /** Set every element to 0, in place. */
  zero_(): this { xfer.fill(this, 0); return this; }

  // ---- reductions ----
  /**
   * Sum over `dim` (all dims when omitted); `keepdim` keeps reduced dims as size 1. Integers and bools sum to int32; `dtype` picks the accumulation and result type.
   */
  sum(dim?: number | readonly number[] | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.sum(this, dim, keepdim, options?.dtype); }
  /** Mean over `dim` (all dims when omitted), for floating-point tensors (or with a floating `dtype`). */
  mean(dim?: number | readonly number[] | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.mean(this, dim, keepdim, options?.dtype); }
  /** Product over one dim, or over all elements. */
  prod(dim?: number | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.prod(this, dim, keepdim, options?.dtype); }
  /** Without a dim: the max element. With a dim: `{ values, indices }` like PyTorch. */
  max(): Tensor;
  max(dim: number, keepdim?: boolean): red.ValuesIndices;
  max(dim?: number, keepdim = false): Tensor | red.ValuesIndices { return red.extreme('max', this, dim, keepdim); }
  /** Without a dim: the min element. With a dim: `{ values, indices }` like PyTorch. */
  min(): Tensor;
  min(dim: number, keepdim?: boolean): red.ValuesIndices;
  min(dim?: number, keepdim = false): Tensor | red.ValuesIndices { return red.extreme('min', this, dim, keepdim); }
  /** The max over one or more dims (values only; the gradient is shared evenly among ties). */
  amax(dim?: number | readonly number[] | null, keepdim = false): Tensor { return red.amax('max', this, dim, keepdim); }
  /** The min over one or more dims (values only; the gradient is shared evenly among ties). */
  amin(dim?: number | readonly number[] | null, keepdim = false): Tensor { return red.amax('min', this, dim, keepdim); }
  /** The int32 index of the max along `dim` (of the flattened tensor when omitted); the first on ties. */
  argmax(dim?: number | null, keepdim = false): Tensor { return red.argReduce('argmax', this, dim, keepdim); }
  /** The int32 index of the min along `dim` (of the flattened tensor when omitted); the first on ties. */
  argmin(dim?: number | null, keepdim = false): Tensor { return red.argReduce('argmin', this, dim, keepdim); }
  /** Variance over `dim`, dividing by N - `correction` (default 1, Bessel's correction). */
  var(dim?: number | readonly number[] | null, keepdim = false, options?: { correction?: number }): Tensor { return red.variance(this, dim, keepdim, options?.correction ?? 1); }
  /** Standard deviation: the square root of `var`. */
  std(dim?: number | readonly number[] | null, keepdim = false, options?: { correction?: number }): Tensor { return red.variance(this, dim, keepdim, options?.correction ?? 1).sqrt(); }

  // ---- linear algebra, indexing, composites ----
  /** Matrix product with PyTorch's rules: vectors, matrices, and batches that broadcast. */
  matmul(other: Tensor): Tensor { return linalg.matmul(this, other); }
  /** The product of two 2-D matrices. */
  mm(mat2: Tensor): Tensor { return linalg.mm(this, mat2); }
  /** Batched matrix product of [b, n, m] and [b, m, p] tensors. */
  bmm(mat2: Tensor): Tensor { return linalg.bmm(this, mat2); }
  /** Values picked along `dim` by an int32 `index` tensor: `out[i][j] = this[index[i][j]][j]` for dim 0. */
  gather(dim: number, index: Tensor): Tensor { return idx.gather(this, dim, index); }
  /**
   * A copy of this tensor with `src`'s values added at the positions `index` gives along `dim` (the inverse of `gather`).
   */
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor { return idx.scatterAdd(this, dim, index, src); }
  /** The slices along `dim` at the positions in a 1-D int32 `index` tensor. */
  indexSelect(dim: number, index: Tensor): Tensor { return idx.indexSelect(this, dim, index); }
  /** `exp(x) / sum(exp(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  softmax(dim: number, options?: { dtype?: DType }): Tensor { return sm.softmax(this, dim, options?.dtype); }
  /** `log(softmax(x))` along `dim`, computed stably; `dtype` casts the input first (and bypasses autocast). */
  logSoftmax(dim: number, options?: { dtype?: DType }): Tensor { return sm.logSoftmax(this, dim, options?.dtype); }
}
