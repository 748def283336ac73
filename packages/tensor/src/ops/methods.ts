// The one module that gives `Tensor` its methods. Elementwise primitives and composites come from
// the op table as they are; ops with their own implementation are bound here by name, and the
// compiler checks that every table entry with a method signature has one. Importing this module
// (the package's index does) is what makes `x.add(y)` work, so tensor.ts needs no op.
import { bfloat16, bool, float16, float32, float64, int32, type DType } from '../dtype/dtype.js';
import type { DeviceLike } from '../device/device.js';
import { TensorError } from '../errors/errors.js';
import { Tensor, type TensorOrScalar, type ToOptions } from '../tensor/tensor.js';
import * as xfer from '../tensor/transfer.js';
import { sameShape } from '../tensor/shape.js';
import { withSite } from '../tensor/site.js';
import type { TensorOps } from '../generated/tensor-methods.js';
import { backendOf, requireCompute } from '../dispatch/run.js';
import { runBackward, type BackwardOptions } from '../autograd/engine.js';
import { isGradEnabled, isInferenceStorage } from '../autograd/grad-mode.js';
import { registerHook, type RemovableHandle } from '../autograd/hooks.js';
import type { GradHookFn } from '../autograd/node.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { bindArguments, intArgument } from './arguments.js';
import * as creation from './creation.js';
import * as cum from './cumulative.js';
import * as dec from './decompositions.js';
import * as ew from './elementwise.js';
import * as adv from './advanced-indexing.js';
import * as dd from './data-dependent.js';
import * as idx from './indexing.js';
import * as linalg from './linalg.js';
import * as red from './reduce.js';
import * as sampling from './sampling.js';
import * as scat from './scatter.js';
import * as sm from './softmax.js';
import * as sorting from './sorting.js';
import * as views from './views.js';
import { BINARY, COMPARE, COMPOSITE, IMPLEMENTED, UNARY, type BinaryOp, type CompareOp, type CompositeOp, type UnaryOp } from './table.js';

/** Conversions, reads and backward: the Tensor methods that are not ops of the table. */
export interface TensorApi {
  /**
   * Move and/or cast: to a device, a dtype, another tensor's device and dtype, or per `ToOptions`. Returns `this` when nothing changes (unless `copy`), so `x.to(dev)` is cheap when `x` is already there.
   */
  to(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Tensor;
  /** Async form of `.to()`, needed to bring a tensor from a device without synchronous reads. */
  toAsync(target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Promise<Tensor>;
  /** This tensor on the cpu (itself when already there). */
  cpu(): Tensor;
  /** Cast to float32. */
  float(): Tensor;
  /** Cast to float16. */
  half(): Tensor;
  /** Cast to bfloat16. */
  bfloat16(): Tensor;
  /** Cast to float64 (where the backend supports it). */
  double(): Tensor;
  /** Cast to int32 (toward zero). */
  int(): Tensor;
  /** Cast to bool (non-zero is true). */
  bool(): Tensor;
  /** Cast to `dtype`, like `to(dtype)`. */
  type(dtype: DType): Tensor;
  /**
   * A copy of this CPU tensor in pinned (page-locked) memory, so that `to(gpu, { nonBlocking: true })` can overlap the copy with compute. Throws when no accelerator backend supports pinned memory.
   */
  pinMemory(): Tensor;
  /** The value of a one-element tensor, once the device has computed it (booleans read as 0/1). */
  item(): Promise<number>;
  /** The values as nested JavaScript arrays in the tensor's shape (a number for a 0-dim tensor), once computed. */
  toArray(): Promise<xfer.NestedArray>;
  /** Values as a flat typed array (half types decoded to Float32Array). */
  data(): Promise<xfer.DataArray>;
  /** Synchronous `data()`, for CPU tensors only. */
  dataSync(): xfer.DataArray;
  /**
   * Compute gradients of this tensor with respect to every leaf that requires grad, accumulating
   * them into `.grad`. `gradient` defaults to 1 for a one-element tensor.
   */
  backward(gradient?: Tensor, options?: BackwardOptions): void;
  /**
   * Call `hook` with this tensor's gradient during every backward (PyTorch's `register_hook`); a
   * tensor it returns replaces the gradient (same shape, dtype and device). On a leaf it runs before
   * the gradient is added to `.grad`; on a non-leaf, on the whole gradient that reached it, before
   * it flows further. Hooks run in registration order; `remove()` on the handle unregisters it.
   */
  registerHook(hook: GradHookFn): RemovableHandle;
  /** Whether this tensor was allocated inside `inferenceMode` (its views are too). */
  isInference(): boolean;
  /** A view with all dims reversed (the transpose of a matrix). */
  readonly T: Tensor;
}

type Implemented = keyof typeof IMPLEMENTED;
/** The implemented ops that have a Tensor method (the others are functions of this or another package). */
type ImplementedMethod = { [K in Implemented]: (typeof IMPLEMENTED)[K] extends { readonly signature: unknown } ? K : never }[Implemented];
type Bound<F> = F extends (...args: infer P) => infer R ? (this: Tensor, ...args: P) => R : never;

/**
 * An in-place arithmetic op: the destination is checked for internal overlap before anything is
 * computed, then `compute` runs on the value to read and its result is written back. When autograd
 * records the op, the value read is a copy: its backward may need the old value, which the write
 * is about to overwrite.
 */
function inPlace(x: Tensor, op: string, compute: (source: Tensor) => Tensor): void {
  xfer.checkInternalOverlap(x, op);
  const source = x._gradFn !== null && isGradEnabled() ? views.contiguousCopy(x) : x;
  xfer.assign(x, compute(source), op);
}

/** The in-place form of an op computed out of place by `compute` (with the call's arguments), through `inPlace`. */
function inPlaceOf(op: string, compute: (x: Tensor, args: readonly unknown[]) => Tensor) {
  return function (this: Tensor, ...args: unknown[]): Tensor {
    inPlace(this, op, (x) => compute(x, args));
    return this;
  };
}

/** The factory options of `newZeros` and the like: this tensor's dtype and device unless given (DEV-5). */
function newOptions(t: Tensor, op: string, options: creation.FactoryOptions | undefined): creation.FactoryOptions {
  const a = bindArguments(op, options === undefined ? [] : [options], [], ['dtype', 'device', 'requiresGrad', 'pinMemory']);
  return { ...(a as creation.FactoryOptions), dtype: (a.dtype as DType | undefined) ?? t.dtype, device: (a.device as DeviceLike | undefined) ?? t.device };
}

const IMPLEMENTATIONS: { readonly [K in ImplementedMethod]: Bound<TensorOps[K]> } = {
  reshape(shape) { return views.reshape(this, shape); },
  view(shape) { return views.view(this, shape); },
  permute(dims) { return views.permute(this, dims); },
  transpose(dim0, dim1) { return views.transpose(this, dim0, dim1); },
  t() { return views.t(this); },
  expand(shape) { return views.expand(this, shape); },
  slice(dim, start, end, step) { return views.slice(this, dim, start, end, step); },
  narrow(dim, start, length) { return views.narrow(this, dim, start, length); },
  select(dim, index) { return views.select(this, dim, index); },
  squeeze(dim) { return views.squeeze(this, dim); },
  unsqueeze(dim) { return views.unsqueeze(this, dim); },
  flatten(startDim = 0, endDim = -1) { return views.flatten(this, startDim, endDim); },
  asStrided(size, stride, storageOffset = 0) { return views.asStrided(this, size, stride, storageOffset); },
  clone() { return views.contiguousCopy(this); },
  detach() { return views.detach(this); },
  isinf() { return ew.isinf(this); },
  isfinite() { return ew.isfinite(this); },
  clamp(min, max) { return ew.clamp(this, min, max); },
  where(condition, other) { return ew.where(condition, this, other); },
  copy_(src) { xfer.copyInto(this, src); return this; },
  fill_(value) { xfer.fill(this, value); return this; },
  zero_() { xfer.fill(this, 0); return this; },
  add_(other, alpha) { inPlace(this, 'add_', (x) => ew.add(x, other, alpha)); return this; },
  sub_(other, alpha) { inPlace(this, 'sub_', (x) => ew.sub(x, other, alpha)); return this; },
  mul_(other) { inPlace(this, 'mul_', (x) => ew.binary('mul', x, other)); return this; },
  div_(other) { inPlace(this, 'div_', (x) => ew.binary('div', x, other)); return this; },
  clamp_(min, max) { inPlace(this, 'clamp_', (x) => ew.clamp(x, min, max)); return this; },
  sum(dim, keepdim = false, options) { return red.sum(this, dim, keepdim, options?.dtype); },
  mean(dim, keepdim = false, options) { return red.mean(this, dim, keepdim, options?.dtype); },
  prod(dim, keepdim = false, options) { return red.prod(this, dim, keepdim, options?.dtype); },
  max: function (this: Tensor, dim?: number, keepdim = false) { return red.extreme('max', this, dim, keepdim); } as Bound<TensorOps['max']>,
  min: function (this: Tensor, dim?: number, keepdim = false) { return red.extreme('min', this, dim, keepdim); } as Bound<TensorOps['min']>,
  amax(dim, keepdim = false) { return red.amax('max', this, dim, keepdim); },
  amin(dim, keepdim = false) { return red.amax('min', this, dim, keepdim); },
  argmax(dim, keepdim = false) { return red.argReduce('argmax', this, dim, keepdim); },
  argmin(dim, keepdim = false) { return red.argReduce('argmin', this, dim, keepdim); },
  var(dim, keepdim = false, options) { return red.variance(this, dim, keepdim, options?.correction ?? 1); },
  matmul(other) { return linalg.matmul(this, other); },
  mm(mat2) { return linalg.mm(this, mat2); },
  bmm(mat2) { return linalg.bmm(this, mat2); },
  gather(dim, index) { return idx.gather(this, dim, index); },
  scatterAdd(dim, index, src) { return idx.scatterAdd(this, dim, index, src); },
  indexSelect(dim, index) { return idx.indexSelect(this, dim, index); },
  // Subscripts, data-dependent ops (sync and async forms) and sampling; arguments bound in their modules.
  index(indices) { return adv.index(this, indices); },
  indexAsync(indices) { return adv.indexAsync(this, indices); },
  indexPut: function (this: Tensor, ...args: unknown[]) { return adv.indexPut(this, args); } as Bound<TensorOps['indexPut']>,
  indexPut_: inPlaceOf('indexPut_', (x, args) => adv.indexPut(x, args, 'indexPut_')) as Bound<TensorOps['indexPut_']>,
  maskedSelect(mask) { return adv.maskedSelect(this, mask); },
  maskedSelectAsync(mask) { return adv.maskedSelectAsync(this, mask); },
  nonzero: function (this: Tensor, ...args: unknown[]) { return dd.nonzero(this, args); } as Bound<TensorOps['nonzero']>,
  nonzeroAsync: function (this: Tensor, ...args: unknown[]) { return dd.nonzeroAsync(this, args); } as Bound<TensorOps['nonzeroAsync']>,
  unique: function (this: Tensor, ...args: unknown[]) { return dd.unique(this, args); } as Bound<TensorOps['unique']>,
  uniqueAsync: function (this: Tensor, ...args: unknown[]) { return dd.uniqueAsync(this, args); } as Bound<TensorOps['uniqueAsync']>,
  multinomial: function (this: Tensor, ...args: unknown[]) { return sampling.multinomial(this, args); } as Bound<TensorOps['multinomial']>,
  multinomialAsync: function (this: Tensor, ...args: unknown[]) { return sampling.multinomialAsync(this, args); } as Bound<TensorOps['multinomialAsync']>,
  bernoulli: function (this: Tensor, ...args: unknown[]) { return sampling.bernoulli(this, args); } as Bound<TensorOps['bernoulli']>,
  bernoulli_: inPlaceOf('bernoulli_', (x, args) => sampling.bernoulliValues(x, args)) as Bound<TensorOps['bernoulli_']>,
  // PyTorch's argument binding (positional and trailing keyword object) happens in the op modules.
  sort: function (this: Tensor, ...args: unknown[]) { return sorting.sort(this, args); } as Bound<TensorOps['sort']>,
  argsort: function (this: Tensor, ...args: unknown[]) { return sorting.argsort(this, args); } as Bound<TensorOps['argsort']>,
  msort() { return sorting.msort(this); },
  topk: function (this: Tensor, ...args: unknown[]) { return sorting.topk(this, args); } as Bound<TensorOps['topk']>,
  cumsum: function (this: Tensor, ...args: unknown[]) { return cum.cumulative('cumsum', this, args); } as Bound<TensorOps['cumsum']>,
  cumprod: function (this: Tensor, ...args: unknown[]) { return cum.cumulative('cumprod', this, args); } as Bound<TensorOps['cumprod']>,
  scatter: function (this: Tensor, ...args: unknown[]) { return scat.scatter(this, args); } as Bound<TensorOps['scatter']>,
  scatter_: function (this: Tensor, ...args: unknown[]) {
    inPlace(this, 'scatter_', (x) => scat.scatter(x, args, 'scatter_'));
    return this;
  } as Bound<TensorOps['scatter_']>,
  scatterReduce: function (this: Tensor, ...args: unknown[]) { return scat.scatterReduce(this, args); } as Bound<TensorOps['scatterReduce']>,
  softmax(dim, options) { return sm.softmax(this, dim, options?.dtype); },
  logSoftmax(dim, options) { return sm.logSoftmax(this, dim, options?.dtype); },
  diagonal: function (this: Tensor, ...args: unknown[]) {
    const a = bindArguments('diagonal', args, ['offset', 'dim1', 'dim2']);
    return views.diagonal(this, intArgument('diagonal', 'offset', a.offset, 0), intArgument('diagonal', 'dim1', a.dim1, 0), intArgument('diagonal', 'dim2', a.dim2, 1));
  } as Bound<TensorOps['diagonal']>,
  maskedFill_: inPlaceOf('maskedFill_', (x, args) => dec.maskedFill(x, args, 'maskedFill_')) as Bound<TensorOps['maskedFill_']>,
  maskedScatter_: inPlaceOf('maskedScatter_', (x, args) => dec.maskedScatter(x, args, 'maskedScatter_')) as Bound<TensorOps['maskedScatter_']>,
  addcmul_: inPlaceOf('addcmul_', (x, args) => dec.addcOp('addcmul', checkedCompute('addcmul_', x, args), args, 'addcmul_')) as Bound<TensorOps['addcmul_']>,
  addcdiv_: inPlaceOf('addcdiv_', (x, args) => dec.addcOp('addcdiv', checkedCompute('addcdiv_', x, args), args, 'addcdiv_')) as Bound<TensorOps['addcdiv_']>,
  indexFill_: inPlaceOf('indexFill_', (x, args) => dec.indexFill(x, args, 'indexFill_')) as Bound<TensorOps['indexFill_']>,
  indexCopy_: inPlaceOf('indexCopy_', (x, args) => dec.indexCopy(x, args, 'indexCopy_')) as Bound<TensorOps['indexCopy_']>,
  indexAdd_: inPlaceOf('indexAdd_', (x, args) => dec.indexAdd(x, args, 'indexAdd_')) as Bound<TensorOps['indexAdd_']>,
  newZeros(size, options) { return creation.zeros(size, newOptions(this, 'newZeros', options)); },
  newOnes(size, options) { return creation.ones(size, newOptions(this, 'newOnes', options)); },
  newFull(size, fillValue, options) { return creation.full(size, fillValue, newOptions(this, 'newFull', options)); },
  newEmpty(size, options) { return creation.empty(size, newOptions(this, 'newEmpty', options)); },
  newTensor(data, options) { return creation.tensor(data, newOptions(this, 'newTensor', options)); },
};

const API: { readonly [K in Exclude<keyof TensorApi, 'T'>]: Bound<TensorApi[K]> } = {
  to(target, options) { return xfer.to(this, target, options); },
  toAsync(target, options) { return xfer.toAsync(this, target, options); },
  cpu() { return this.to('cpu'); },
  float() { return this.to(float32); },
  half() { return this.to(float16); },
  bfloat16() { return this.to(bfloat16); },
  double() { return this.to(float64); },
  int() { return this.to(int32); },
  bool() { return this.to(bool); },
  type(dtype) { return this.to(dtype); },
  pinMemory() { return xfer.pinMemory(this); },
  item() { return xfer.item(this); },
  toArray() { return xfer.toArray(this); },
  data() { return xfer.data(this); },
  dataSync() { return xfer.dataSync(this); },
  backward(gradient, options) { backward(this, gradient, options); },
  registerHook(hook) { return registerHook(this, hook); },
  isInference() { return isInferenceStorage(this._storage); },
};

/** `x.backward(gradient, options)` (Tensor.backward). */
function backward(x: Tensor, gradient: Tensor | undefined, options: BackwardOptions | undefined): void {
  if (gradient !== undefined && !(gradient instanceof Tensor)) {
    throw new TypeError('backward(gradient?, options?): gradient must be a Tensor; for options alone write backward(undefined, { retainGraph: true })');
  }
  if (!x.requiresGrad) {
    throw new TensorError('element 0 of tensors does not require grad and does not have a gradFn: call requiresGrad_() on the inputs (leaves) before the forward pass');
  }
  let g = gradient;
  if (g === undefined) {
    if (x.numel() !== 1) {
      throw new TensorError(`grad can be implicitly created only for scalar outputs, and this tensor has shape [${x.shape.join(', ')}]: pass backward(gradient)`);
    }
    g = withSite(x._site, () => xfer.onesOf(x)); // the seed is a gradient too: the root's site
  } else if (!sameShape(g.shape, x.shape)) {
    throw new TensorError(`backward(): gradient has shape [${g.shape.join(', ')}] but the tensor has shape [${x.shape.join(', ')}]`);
  }
  runBackward(x, g, options);
}

/** x, once every tensor among x and args is of a dtype its backend computes (an opmath op's check). */
function checkedCompute(op: string, x: Tensor, args: readonly unknown[]): Tensor {
  for (const t of [x, ...args]) if (t instanceof Tensor) requireCompute(backendOf(t.device), t.dtype, op);
  return x;
}

/** A composite's method: its decomposition, behind the autocast layer when the table gives it a class. */
function compositeMethod(name: CompositeOp): (this: Tensor, ...args: unknown[]) => Tensor | Tensor[] {
  const entry = COMPOSITE[name];
  const run = entry.decomposition as (self: Tensor, ...args: unknown[]) => Tensor | Tensor[];
  const decompose = 'opmath' in entry ? (self: Tensor, ...args: unknown[]) => run(checkedCompute(name, self, args), ...args) : run;
  if (!('autocast' in entry)) return function (...args) { return decompose(this, ...args); };
  return function (...args) {
    if (autocastIdle()) return decompose(this, ...args);
    return autocastOp(name, [this, ...args], (self, ...rest) => decompose(self as Tensor, ...rest));
  };
}

function elementwiseMethod(name: UnaryOp | BinaryOp | CompareOp): (this: Tensor, ...args: any[]) => Tensor {
  if (name in UNARY) return function () { return ew.unary(name as UnaryOp, this); };
  if (name === 'add') return function (other: TensorOrScalar, alpha?: number) { return ew.add(this, other, alpha); };
  if (name === 'sub') return function (other: TensorOrScalar, alpha?: number) { return ew.sub(this, other, alpha); };
  if (name in BINARY) return function (other: TensorOrScalar) { return ew.binary(name as BinaryOp, this, other); };
  return function (other: TensorOrScalar) { return ew.compare(name as CompareOp, this, other); };
}

/** Every method, by name, as the prototype will hold it. */
export const METHODS: Readonly<Record<string, (this: Tensor, ...args: any[]) => unknown>> = {
  ...Object.fromEntries([...Object.keys(UNARY), ...Object.keys(BINARY), ...Object.keys(COMPARE)].map((name) => [name, elementwiseMethod(name as UnaryOp)])),
  ...Object.fromEntries(Object.keys(COMPOSITE).map((name) => [name, compositeMethod(name as CompositeOp)])),
  ...IMPLEMENTATIONS,
  ...API,
};

// Non-enumerable, like methods written in a class body.
for (const [name, value] of Object.entries(METHODS)) {
  Object.defineProperty(Tensor.prototype, name, { value, writable: true, configurable: true, enumerable: false });
}
Object.defineProperty(Tensor.prototype, 'T', {
  get(this: Tensor) { return views.permute(this, this.shape.map((_, i) => this.ndim - 1 - i)); },
  configurable: true,
  enumerable: false,
});
