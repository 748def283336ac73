import type { DType } from '../dtype/dtype.js';
import type { Device, DeviceLike } from '../device/device.js';
import { currentSite, type CreationSite } from './site.js';
import { noteCreated } from './temporaries.js';
import { isContiguous, normalizeDim, numelOf } from './shape.js';
import type { Storage } from './storage.js';
import type { Node } from '../autograd/node.js';
import type { TensorRef } from '../backend/contract.js';
import type { TensorOps } from '../generated/tensor-methods.js';
import type { TensorApi } from '../ops/methods.js';
import { DTypeError, TensorError } from '../errors/errors.js';
import { compileBreak, compileState, throwIfStale } from '../compile/state.js';

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
  /** @internal How many autograd nodes hold this tensor saved for their backward (Node counts them). */
  _savers = 0;
  /** @internal Set by releaseWithGraph: disposed when the last node that saved it lets it go. */
  _releasesWithGraph = false;
  /** Counts as a user of its storage (false for kernel-only views, which never free it). */
  private _holds: boolean;
  private _leafRequiresGrad = false;
  private _shape: readonly number[];

  private _grad: Tensor | null = null;

  /** The gradient accumulated by `backward()` (leaves, and tensors that called `retainGrad()`). */
  get grad(): Tensor | null {
    // A compiled step that only reads .grad (an opt.step() after a backward outside) binds the one set now at each replay.
    if (this._grad !== null) compileState.recorder?.gradSet(this, this._grad);
    return this._grad;
  }

  /** Set or clear the gradient (`null`), as `backward()` and `zeroGrad()` do. */
  set grad(g: Tensor | null) {
    compileState.recorder?.gradSet(this, this._grad); // a compiled step re-attaches grads it changes
    this._grad = g;
  }

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
      throwIfStale(this, op); // a compiled function's replay overwrote it: say so instead
      throw new TensorError(
        `${op}: this tensor was disposed, so it cannot be used any more. dispose() is PyTorch's \`del\`: other tensors that share its memory ` +
          '(views, the tensor it was viewed from) stay usable, and the memory is freed when the last of them is disposed or collected.',
      );
    }
  }

  /**
   * A tensor used as a JS value (`if (loss > 2)`, `Number(t)`, a template string): its description
   * as a string, NaN as a number. Inside a compiled function's capture, using a tensor as a number
   * is a CompileError: the replay could not follow the JS branch it decides.
   */
  [Symbol.toPrimitive](hint: 'number' | 'string' | 'default'): string | number {
    if (hint !== 'string' && compileState.recorder !== null) {
      compileState.recorder.fail(compileBreak('COMPILE_TENSOR_AS_NUMBER', 'a tensor was used as a JS number', 'use where()/clamp() on tensors, or read the value outside the compiled function'));
    }
    return hint === 'number' ? NaN : this.toString();
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

  /** True when the data sit in pinned host memory (see `pinMemory()`). */
  isPinned(): boolean { return this._storage.pinned; }
}

// The op methods (add, reshape, sum…) and the conversions and reads (to, item, backward…) are
// attached to the prototype by ops/methods.ts, built from the op table: this module holds a
// tensor's state and lifetime only, so it imports no op and no op imports close a cycle through it.
export interface Tensor extends TensorOps, TensorApi {}
