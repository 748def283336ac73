// The last step before a backend: check the dtype is supported, allocate outputs, pass strided refs.
import type { Backend, Kernels, TensorRef } from '../backend/contract.js';
import { getBackend } from '../backend/registry.js';
import { maybeInstrumented } from '../amp/anomaly.js';
import { compileState } from '../compile/state.js';
import { noteAllocation } from '../autograd/grad-mode.js';
import type { DType } from '../dtype/dtype.js';
import type { Device } from '../device/device.js';
import { DTypeError, TensorError } from '../errors/errors.js';
import { Storage } from '../tensor/storage.js';
import { contiguousStrides, numelOf, type Shape } from '../tensor/shape.js';
import { Tensor } from '../tensor/tensor.js';

export function backendOf(device: Device): Backend<unknown> {
  const backend = maybeInstrumented(getBackend(device.type));
  const recorder = compileState.recorder; // a compiled function's capture records every call
  return recorder === null ? backend : recorder.proxy(backend);
}

/**
 * What a kernel is given for a tensor. It also holds the tensor's Storage, privately: a storage is
 * freed once the collector finds it unreachable (reclaim.ts), and a ref is often all that is left
 * of a temporary, e.g. the copy made for the first operand while the second one is being copied
 * (`kernels.matmul(ref(copyOf(a)), ref(copyOf(b)), …)`), which can trigger a collection.
 */
class KernelRef implements TensorRef<unknown> {
  readonly storage: unknown;
  readonly dtype: TensorRef<unknown>['dtype'];
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  /** Never read: holding it is the point. */
  readonly #owner: Storage;

  constructor(t: Tensor) {
    this.storage = t._storage.handle;
    this.dtype = t.dtype.name;
    this.shape = t.shape;
    this.strides = t._strides;
    this.offset = t._offset;
    this.#owner = t._storage;
  }
}

export function ref(t: Tensor): TensorRef<unknown> {
  t._assertUsable('an op');
  return (t._ref ??= new KernelRef(t));
}

/** Throw a DTypeError unless the device's backend computes in this dtype. */
export function requireCompute(backend: Backend<unknown>, dtype: DType, op: string): void {
  if (backend.capabilities.dtypes[dtype.name]?.compute) return;
  const supported = Object.entries(backend.capabilities.dtypes).filter(([, s]) => s?.compute).map(([n]) => n);
  throw new DTypeError(
    `${op}: the ${backend.name} backend does not compute in ${dtype.name} (it supports ${supported.join(', ')}); ` +
      `convert with .to(${supported.includes('float32') ? 'float32' : supported[0]}) or move the tensor to another device`,
    op,
    dtype.name,
  );
}

/**
 * Throw the DTypeError an op raises when `t`'s backend cannot compute in `t`'s dtype. For ops
 * written outside core that compute a 16-bit result in float32 (so that it is rounded once) and
 * must still refuse a dtype the device does not compute in.
 */
export function checkCompute(op: string, t: Tensor): void {
  requireCompute(backendOf(t.device), t.dtype, op);
}

/** The optional primitives (contract 1.3.0) an op may need. */
type OptionalKernel = 'argsort' | 'cumulative' | 'scatter';

/** The backend's optional primitive `name`, or a TensorError naming the op, the backend and the kernel it lacks. */
export function requireKernel<K extends OptionalKernel>(backend: Backend<unknown>, name: K, op: string): NonNullable<Kernels<unknown>[K]> {
  const kernel = backend.kernels[name];
  if (kernel === undefined) {
    throw new TensorError(
      `${op}: the ${backend.name} backend has no ${name} kernel (it implements contract ${backend.contractVersion}; ${name} came with 1.3.0): ` +
        'run the op on another device, e.g. x.cpu()',
    );
  }
  return kernel.bind(backend.kernels) as NonNullable<Kernels<unknown>[K]>;
}

export function requireStorage(backend: Backend<unknown>, dtype: DType, op: string): void {
  if (backend.capabilities.dtypes[dtype.name]?.storage) return;
  throw new DTypeError(`${op}: the ${backend.name} backend cannot store ${dtype.name} tensors`, op, dtype.name);
}

/** A new contiguous tensor with unspecified contents. */
export function allocate(shape: Shape, dtype: DType, device: Device, pinned = false): Tensor {
  const backend = backendOf(device);
  requireStorage(backend, dtype, `a [${shape.join(', ')}] tensor`);
  const numel = numelOf(shape);
  const bytes = numel * dtype.itemsize;
  if (bytes > backend.capabilities.maxBufferBytes) {
    throw new TensorError(
      `cannot allocate ${bytes} bytes for a [${shape.join(', ')}] ${dtype.name} tensor on ${device}: ` +
        `the ${backend.name} backend's largest buffer is ${backend.capabilities.maxBufferBytes} bytes`,
    );
  }
  const storage = Storage.allocate(backend, device, dtype, numel, pinned);
  noteAllocation(storage); // inside inferenceMode: an inference tensor
  return Tensor._make(storage, shape, stridesFor(shape), 0);
}

// Contiguous strides per shape, frozen and shared: most tensors of a program have a few shapes.
const STRIDES_CACHE_SIZE = 4096;
const stridesByShape = new Map<string, readonly number[]>();

function stridesFor(shape: Shape): readonly number[] {
  if (shape.length <= 1) return shape.length === 0 ? NO_STRIDES : UNIT_STRIDE;
  const key = shape.join(',');
  let strides = stridesByShape.get(key);
  if (strides === undefined) {
    if (stridesByShape.size >= STRIDES_CACHE_SIZE) stridesByShape.clear();
    strides = Object.freeze(contiguousStrides(shape));
    stridesByShape.set(key, strides);
  }
  return strides;
}
const NO_STRIDES: readonly number[] = Object.freeze([]);
const UNIT_STRIDE: readonly number[] = Object.freeze([1]);
