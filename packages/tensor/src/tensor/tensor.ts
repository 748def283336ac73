import type { DType } from '../dtype/dtype.js';
import { bfloat16, bool, float16, float32, float64, int32 } from '../dtype/dtype.js';
import type { Device, DeviceLike } from '../device/device.js';
import { captureSite, type CreationSite } from './site.js';
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
import { runBackward, type BackwardOptions } from '../autograd/engine.js';
import { isGradEnabled } from '../autograd/grad-mode.js';
import { DTypeError, TensorError } from '../errors/errors.js';

export type Scalar = number | boolean;
export type TensorOrScalar = Tensor | Scalar;

export interface ToOptions {
  readonly device?: DeviceLike;
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
  private _disposed = false;
  private _leafRequiresGrad = false;
  private _shape: readonly number[];

  /** The gradient accumulated by `backward()` (leaves, and tensors that called `retainGrad()`). */
  grad: Tensor | null = null;

  private constructor(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number, site: CreationSite, counted: boolean) {
    this._storage = storage;
    this._shape = Object.freeze(shape.slice());
    this._strides = Object.freeze(strides.slice());
    this._offset = offset;
    this._site = site;
    if (counted) storage.retain();
    else this._disposed = true; // never holds the storage: dispose() is a no-op
  }

  /** @internal Core's way to make a tensor the user will see: it records where it was created. */
  static _make(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    return new Tensor(storage, shape, strides, offset, captureSite(), true);
  }

  /**
   * @internal A view the user will see (reshape, permute, …): it shares the base's memory and its
   * creation site, so a stray view is reported where its data was made.
   */
  static _viewOf(base: Tensor, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    return new Tensor(base._storage, shape, strides, offset, base._site, true);
  }

  /**
   * @internal A view that only feeds a kernel inside one op (never returned): no creation site,
   * and it does not keep the storage alive, so disposing the real tensors still frees it.
   */
  static _internal(storage: Storage, shape: readonly number[], strides: readonly number[], offset: number): Tensor {
    return new Tensor(storage, shape, strides, offset, undefined, false);
  }

  get shape(): readonly number[] { return this._shape; }
  get dtype(): DType { return this._storage.dtype; }
  get device(): Device { return this._storage.device; }
  get ndim(): number { return this.shape.length; }
  dim(): number { return this.shape.length; }
  numel(): number { return numelOf(this.shape); }
  /** The size of one dim, or the whole shape. */
  size(): readonly number[];
  size(dim: number): number;
  size(dim?: number): number | readonly number[] {
    return dim === undefined ? this.shape : this.shape[normalizeDim(dim, this.ndim, 'size')]!;
  }
  stride(): readonly number[];
  stride(dim: number): number;
  stride(dim?: number): number | readonly number[] {
    return dim === undefined ? this._strides : this._strides[normalizeDim(dim, this.ndim, 'stride')]!;
  }
  storageOffset(): number { return this._offset; }
  isContiguous(): boolean { return isContiguous(this.shape, this._strides); }
  get isDisposed(): boolean { return this._disposed; }

  toString(): string {
    return `Tensor(shape=[${this.shape.join(', ')}], dtype=${this.dtype.name}, device=${this.device})`;
  }

  /** Release this tensor's hold on its memory now, instead of waiting for the garbage collector. */
  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    this._storage.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- autograd ----
  /** True for leaves marked to require grad and for results of ops over such tensors. */
  get requiresGrad(): boolean {
    return this._gradFn !== null || this._leafRequiresGrad;
  }
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
    source._storage.retain();
    if (!this._disposed) this._storage.release();
    this._disposed = false;
    this._storage = source._storage;
    this._shape = source._shape;
    this._strides = source._strides;
    this._offset = source._offset;
    return this;
  }

  // ---- moving and converting (DEV-7, XFER-*, PIN-*) ----
  to(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Tensor {
    return xfer.to(this, target, options);
  }
  /** Async form of `.to()`, needed to bring a tensor from a device without synchronous reads. */
  toAsync(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Promise<Tensor> {
    return xfer.toAsync(this, target, options);
  }
  cpu(): Tensor { return this.to('cpu'); }
  float(): Tensor { return this.to(float32); }
  half(): Tensor { return this.to(float16); }
  bfloat16(): Tensor { return this.to(bfloat16); }
  double(): Tensor { return this.to(float64); }
  int(): Tensor { return this.to(int32); }
  bool(): Tensor { return this.to(bool); }
  type(dtype: DType): Tensor { return this.to(dtype); }
  pinMemory(): Tensor { return xfer.pinMemory(this); }
  isPinned(): boolean { return this._storage.pinned; }
  clone(): Tensor { return views.contiguousCopy(this); }
  /** A tensor over the same memory, cut from autograd. */
  detach(): Tensor { return views.detach(this); }
  item(): Promise<number> { return xfer.item(this); }
  toArray(): Promise<xfer.NestedArray> { return xfer.toArray(this); }
  /** Values as a flat typed array (half types decoded to Float32Array). */
  data(): Promise<xfer.DataArray> { return xfer.data(this); }
  /** Synchronous `data()`, for CPU tensors only. */
  dataSync(): xfer.DataArray { return xfer.dataSync(this); }
  /** Overwrite this tensor's values with `src` (any device, broadcast, cast as needed): SD-8. */
  copy_(src: Tensor): this { xfer.copyInto(this, src); return this; }

  // ---- views ----
  reshape(shape: readonly number[]): Tensor { return views.reshape(this, shape); }
  view(shape: readonly number[]): Tensor { return views.view(this, shape); }
  permute(dims: readonly number[]): Tensor { return views.permute(this, dims); }
  transpose(dim0: number, dim1: number): Tensor { return views.transpose(this, dim0, dim1); }
  /** Transpose of a ≤2-D tensor. */
  t(): Tensor { return views.t(this); }
  get T(): Tensor { return views.permute(this, this.shape.map((_, i) => this.ndim - 1 - i)); }
  expand(shape: readonly number[]): Tensor { return views.expand(this, shape); }
  expandAs(other: Tensor): Tensor { return views.expand(this, other.shape); }
  slice(dim: number, start?: number, end?: number, step?: number): Tensor { return views.slice(this, dim, start, end, step); }
  narrow(dim: number, start: number, length: number): Tensor { return views.narrow(this, dim, start, length); }
  select(dim: number, index: number): Tensor { return views.select(this, dim, index); }
  squeeze(dim?: number | readonly number[]): Tensor { return views.squeeze(this, dim); }
  unsqueeze(dim: number): Tensor { return views.unsqueeze(this, dim); }
  flatten(startDim = 0, endDim = -1): Tensor { return views.flatten(this, startDim, endDim); }
  /** A view with explicit sizes and strides over this (contiguous) tensor's elements; windows may overlap. */
  asStrided(size: readonly number[], stride: readonly number[], storageOffset = 0): Tensor { return views.asStrided(this, size, stride, storageOffset); }
  contiguous(): Tensor { return this.isContiguous() ? this : views.contiguousCopy(this); }

  // ---- elementwise ----
  add(other: TensorOrScalar, alpha?: number): Tensor { return ew.add(this, other, alpha); }
  sub(other: TensorOrScalar, alpha?: number): Tensor { return ew.sub(this, other, alpha); }
  mul(other: TensorOrScalar): Tensor { return ew.binary('mul', this, other); }
  div(other: TensorOrScalar): Tensor { return ew.binary('div', this, other); }
  pow(exponent: TensorOrScalar): Tensor { return ew.binary('pow', this, exponent); }
  maximum(other: TensorOrScalar): Tensor { return ew.binary('maximum', this, other); }
  minimum(other: TensorOrScalar): Tensor { return ew.binary('minimum', this, other); }
  remainder(other: TensorOrScalar): Tensor { return ew.binary('remainder', this, other); }
  atan2(other: TensorOrScalar): Tensor { return ew.binary('atan2', this, other); }
  logicalAnd(other: TensorOrScalar): Tensor { return ew.binary('logicalAnd', this, other); }
  logicalOr(other: TensorOrScalar): Tensor { return ew.binary('logicalOr', this, other); }
  neg(): Tensor { return ew.unary('neg', this); }
  abs(): Tensor { return ew.unary('abs', this); }
  sign(): Tensor { return ew.unary('sign', this); }
  exp(): Tensor { return ew.unary('exp', this); }
  expm1(): Tensor { return ew.unary('expm1', this); }
  log(): Tensor { return ew.unary('log', this); }
  log1p(): Tensor { return ew.unary('log1p', this); }
  sqrt(): Tensor { return ew.unary('sqrt', this); }
  rsqrt(): Tensor { return ew.unary('rsqrt', this); }
  reciprocal(): Tensor { return ew.unary('reciprocal', this); }
  sin(): Tensor { return ew.unary('sin', this); }
  cos(): Tensor { return ew.unary('cos', this); }
  tan(): Tensor { return ew.unary('tan', this); }
  tanh(): Tensor { return ew.unary('tanh', this); }
  sigmoid(): Tensor { return ew.unary('sigmoid', this); }
  erf(): Tensor { return ew.unary('erf', this); }
  relu(): Tensor { return ew.unary('relu', this); }
  floor(): Tensor { return ew.unary('floor', this); }
  ceil(): Tensor { return ew.unary('ceil', this); }
  round(): Tensor { return ew.unary('round', this); }
  trunc(): Tensor { return ew.unary('trunc', this); }
  logicalNot(): Tensor { return ew.unary('logicalNot', this); }
  square(): Tensor { return ew.binary('mul', this, this); }
  eq(other: TensorOrScalar): Tensor { return ew.compare('eq', this, other); }
  ne(other: TensorOrScalar): Tensor { return ew.compare('ne', this, other); }
  lt(other: TensorOrScalar): Tensor { return ew.compare('lt', this, other); }
  le(other: TensorOrScalar): Tensor { return ew.compare('le', this, other); }
  gt(other: TensorOrScalar): Tensor { return ew.compare('gt', this, other); }
  ge(other: TensorOrScalar): Tensor { return ew.compare('ge', this, other); }
  isnan(): Tensor { return ew.compare('ne', this, this); }
  isinf(): Tensor { return ew.isinf(this); }
  isfinite(): Tensor { return ew.isfinite(this); }
  clamp(min?: number | Tensor | null, max?: number | Tensor | null): Tensor { return ew.clamp(this, min, max); }
  /** `cond ? this : other`, PyTorch's `Tensor.where(condition, other)`. */
  where(condition: Tensor, other: TensorOrScalar): Tensor { return ew.where(condition, this, other); }

  // ---- in place (TP-4: the result must be castable to this dtype) ----
  add_(other: TensorOrScalar, alpha?: number): this { xfer.assign(this, ew.add(this.inPlaceSource(), other, alpha), 'add_'); return this; }
  sub_(other: TensorOrScalar, alpha?: number): this { xfer.assign(this, ew.sub(this.inPlaceSource(), other, alpha), 'sub_'); return this; }
  mul_(other: TensorOrScalar): this { xfer.assign(this, ew.binary('mul', this.inPlaceSource(), other), 'mul_'); return this; }
  div_(other: TensorOrScalar): this { xfer.assign(this, ew.binary('div', this.inPlaceSource(), other), 'div_'); return this; }
  clamp_(min?: number | Tensor | null, max?: number | Tensor | null): this { xfer.assign(this, ew.clamp(this.inPlaceSource(), min, max), 'clamp_'); return this; }
  /**
   * The value an in-place op reads. When autograd records it, that is a copy: the op's backward
   * may need the old value, which the in-place write is about to overwrite.
   */
  private inPlaceSource(): Tensor {
    return this._gradFn !== null && isGradEnabled() ? views.contiguousCopy(this) : this;
  }
  fill_(value: number): this { xfer.fill(this, value); return this; }
  zero_(): this { xfer.fill(this, 0); return this; }

  // ---- reductions ----
  sum(dim?: number | readonly number[] | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.sum(this, dim, keepdim, options?.dtype); }
  mean(dim?: number | readonly number[] | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.mean(this, dim, keepdim, options?.dtype); }
  prod(dim?: number | null, keepdim = false, options?: { dtype?: DType }): Tensor { return red.prod(this, dim, keepdim, options?.dtype); }
  /** Without a dim: the max element. With a dim: `{ values, indices }` like PyTorch. */
  max(): Tensor;
  max(dim: number, keepdim?: boolean): red.ValuesIndices;
  max(dim?: number, keepdim = false): Tensor | red.ValuesIndices { return red.extreme('max', this, dim, keepdim); }
  min(): Tensor;
  min(dim: number, keepdim?: boolean): red.ValuesIndices;
  min(dim?: number, keepdim = false): Tensor | red.ValuesIndices { return red.extreme('min', this, dim, keepdim); }
  amax(dim?: number | readonly number[] | null, keepdim = false): Tensor { return red.amax('max', this, dim, keepdim); }
  amin(dim?: number | readonly number[] | null, keepdim = false): Tensor { return red.amax('min', this, dim, keepdim); }
  argmax(dim?: number | null, keepdim = false): Tensor { return red.argReduce('argmax', this, dim, keepdim); }
  argmin(dim?: number | null, keepdim = false): Tensor { return red.argReduce('argmin', this, dim, keepdim); }
  var(dim?: number | readonly number[] | null, keepdim = false, options?: { correction?: number }): Tensor { return red.variance(this, dim, keepdim, options?.correction ?? 1); }
  std(dim?: number | readonly number[] | null, keepdim = false, options?: { correction?: number }): Tensor { return red.variance(this, dim, keepdim, options?.correction ?? 1).sqrt(); }

  // ---- linear algebra, indexing, composites ----
  matmul(other: Tensor): Tensor { return linalg.matmul(this, other); }
  mm(mat2: Tensor): Tensor { return linalg.mm(this, mat2); }
  bmm(mat2: Tensor): Tensor { return linalg.bmm(this, mat2); }
  gather(dim: number, index: Tensor): Tensor { return idx.gather(this, dim, index); }
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor { return idx.scatterAdd(this, dim, index, src); }
  indexSelect(dim: number, index: Tensor): Tensor { return idx.indexSelect(this, dim, index); }
  softmax(dim: number, options?: { dtype?: DType }): Tensor { return sm.softmax(this, dim, options?.dtype); }
  logSoftmax(dim: number, options?: { dtype?: DType }): Tensor { return sm.logSoftmax(this, dim, options?.dtype); }
}
