// Moving tensors between devices and dtypes (DEV-7, XFER-*, PIN-*), and reading values out.
import { getBackend, listBackends, isAvailable } from '../backend/registry.js';
import type { WriteHint } from '../backend/contract.js';
import type { HostArray } from '../dtype/dtype.js';
import { bool, type DType } from '../dtype/dtype.js';
import { canCast } from '../dtype/promotion.js';
import { cpu, Device, device as parseDevice, type DeviceLike } from '../device/device.js';
import { BackendUnavailableError, DTypeError, TensorError } from '../errors/errors.js';
import { allocate, backendOf, ref, requireStorage } from '../dispatch/run.js';
import { iteratorDevice } from '../dispatch/device-rule.js';
import { Tensor, type ToOptions } from './tensor.js';
import { broadcastShapes, broadcastStrides } from './shape.js';
import { cast } from '../ops/elementwise.js';
import { contiguousCopy } from '../ops/views.js';
import { isGradEnabled } from '../autograd/grad-mode.js';
import { Node } from '../autograd/node.js';
import { record } from '../autograd/engine.js';
import { captureSite, inheritSite, withCreationSite, withSite } from './site.js';
import { nextTurn } from './reclaim.js';
import { coversStorage, decode, hostNow, valuesNow } from './host-data.js';
import { noteHostRead } from '../compile/state.js';

/** What `toArray()` returns: nested arrays in the tensor's shape, or a number for a 0-dim tensor. */
export type NestedArray = number | NestedArray[];
/** What `data()` returns: a flat typed array of the values (Float32Array for float32 and the half types). */
export type DataArray = Float32Array | Float64Array | Int32Array | Uint8Array;

/** A device as tensors carry it: non-CPU devices always have an index (DEV-3). */
export function resolveDevice(d: DeviceLike): Device {
  const dev = parseDevice(d);
  if (dev.type === 'cpu') return cpu;
  const backend = getBackend(dev.type);
  const index = dev.index ?? 0;
  if (index >= backend.deviceCount) {
    throw new BackendUnavailableError(
      `${dev}: invalid device index ${index}; the ${dev.type} backend has ${backend.deviceCount} device(s)`,
      dev.type,
      'no such device',
    );
  }
  return dev.index === null ? Device.of(dev.type, index) : dev;
}

function isDType(x: unknown): x is DType {
  return typeof x === 'object' && x !== null && 'itemsize' in x && 'category' in x;
}

function parseTarget(x: Tensor, target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Required<Omit<ToOptions, 'device' | 'dtype'>> & { device: Device; dtype: DType } {
  let dev: DeviceLike | undefined;
  let dtype: DType | undefined;
  if (target instanceof Tensor) { dev = target.device; dtype = target.dtype; }
  else if (isDType(target)) dtype = target;
  else if (typeof target === 'string' || target instanceof Device) dev = target;
  else if (typeof target === 'object' && target !== null) { dev = target.device; dtype = target.dtype; options = { ...target, ...options }; }
  else throw new TypeError(`to(): expected a device, a dtype, a Tensor or { device, dtype }, got ${String(target)}`);
  return {
    device: dev === undefined ? x.device : resolveDevice(dev),
    dtype: options?.dtype ?? dtype ?? x.dtype,
    nonBlocking: options?.nonBlocking ?? false,
    copy: options?.copy ?? false,
  };
}

async function hostContiguousAsync(x: Tensor): Promise<HostArray> {
  if (coversStorage(x)) return backendOf(x.device).read(x._storage.handle);
  const c = contiguousCopy(x);
  try {
    return await backendOf(x.device).read(c._storage.handle);
  } finally {
    c.dispose();
  }
}

function upload(host: HostArray, like: Tensor, device: Device, pinned: boolean, hint: WriteHint): Tensor {
  const out = allocate(like.shape, like.dtype, device, pinned);
  if (host.length > 0) backendOf(device).write(out._storage.handle, host, 0, hint);
  return out;
}

function moved(x: Tensor, device: Device, dtype: DType, pinned: boolean, host: HostArray, nonBlocking: boolean): Tensor {
  // Cast after arriving, into memory that is pinned when the copy asked for it (XFER-3). A
  // non-blocking copy from pinned memory may be queued by the device (XFER-2).
  const arrived = upload(host, x, device, pinned, { nonBlocking, pinned: x.isPinned() });
  let out = arrived;
  if (arrived.dtype !== dtype) {
    out = allocate(arrived.shape, dtype, device, pinned);
    if (out.numel() > 0) backendOf(device).kernels.cast(ref(arrived), ref(out));
    arrived.dispose();
  }
  // The gradient goes back to x's device and dtype (the engine moves and casts it).
  return record('ToCopyBackward', out, [x], (g) => [g]);
}

/** `.to()`: the same object when nothing changes (DEV-7), otherwise a new tensor. */
export function to(x: Tensor, target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Tensor {
  x._assertUsable('to');
  const t = parseTarget(x, target, options);
  const sameDevice = t.device.equals(x.device);
  if (sameDevice && t.dtype === x.dtype) return t.copy ? contiguousCopy(x) : x;
  if (sameDevice) return cast(x, t.dtype);
  requireStorage(backendOf(t.device), t.dtype, 'to');
  const host = hostNow(x);
  if (!host) {
    throw new TensorError(
      `to(${t.device}): reading a ${x.device} tensor needs an async read; use \`await t.toAsync('${t.device}')\` or \`await t.toArray()\``,
    );
  }
  // XFER-3: a non-blocking device→host copy lands in pinned memory. The copy is created here, on its new device.
  return withCreationSite(() => moved(x, t.device, t.dtype, t.nonBlocking && t.device.type === 'cpu' && x.device.type !== 'cpu', host, t.nonBlocking));
}

export async function toAsync(x: Tensor, target: DeviceLike | DType | Tensor | ToOptions, options?: Omit<ToOptions, 'device'>): Promise<Tensor> {
  x._assertUsable('toAsync');
  const t = parseTarget(x, target, options);
  if (t.device.equals(x.device) || backendOf(x.device).readSync) return to(x, target, options);
  requireStorage(backendOf(t.device), t.dtype, 'to');
  const site = captureSite();
  const host = await hostContiguousAsync(x);
  return withSite(site, () => moved(x, t.device, t.dtype, t.nonBlocking && t.device.type === 'cpu', host, t.nonBlocking));
}

/** PIN-1: a pinned copy of a CPU tensor (itself when already pinned). */
export function pinMemory(x: Tensor): Tensor {
  if (x.device.type !== 'cpu') {
    throw new TensorError(`cannot pin '${x.toString()}' only dense CPU tensors can be pinned`);
  }
  if (x.isPinned()) return x;
  const accelerator = listBackends().find((n) => n !== 'cpu' && isAvailable(n) && getBackend(n).capabilities.pinnedMemory);
  if (!accelerator) {
    throw new BackendUnavailableError(
      'pinMemory(): no accelerator backend with pinned-memory support is available; pinned memory only speeds up copies to a GPU, so leave it off on CPU-only machines',
      'cpu',
      'no accelerator',
    );
  }
  inheritSite(x._site);
  const out = allocate(x.shape, x.dtype, cpu, true);
  if (x.numel() > 0) backendOf(cpu).kernels.copy(ref(x), ref(out));
  return out;
}

function nest(flat: DataArray, shape: readonly number[]): NestedArray {
  if (shape.length === 0) return flat[0]!;
  let pos = 0;
  const build = (d: number): NestedArray[] => {
    const n = shape[d]!;
    const out: NestedArray[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = d === shape.length - 1 ? flat[pos++]! : build(d + 1);
    return out;
  };
  return build(0);
}

export function dataSync(x: Tensor): DataArray {
  x._assertUsable('dataSync');
  noteHostRead('dataSync()');
  const values = x.device.type === 'cpu' ? valuesNow(x) : null;
  if (!values) {
    throw new TensorError(`dataSync() reads CPU tensors only, and this one is on ${x.device}: use \`await t.data()\` or \`await t.toArray()\``);
  }
  return values;
}

export async function data(x: Tensor): Promise<DataArray> {
  x._assertUsable('data');
  noteHostRead('data()');
  const values = decode(await hostContiguousAsync(x), x.dtype).slice(0, x.numel()) as DataArray;
  // Resolve after a turn of the event loop, so the finalizers of tensors the loop dropped run: a
  // training loop whose only await is `loss.item()` stays flat (docs/guides/memory.md).
  await nextTurn();
  return values;
}

export async function toArray(x: Tensor): Promise<NestedArray> {
  return nest(await data(x), x.shape);
}

export async function item(x: Tensor): Promise<number> {
  if (x.numel() !== 1) {
    throw new TensorError(`a Tensor with ${x.numel()} elements cannot be converted to Scalar; use toArray() or index it first`);
  }
  return (await data(x))[0]!;
}

/** Write `value` (any device, broadcast to dst, cast under TP-4 rules) into `dst` in place. */
function writeInto(dst: Tensor, value: Tensor, op: string): void {
  dst._assertUsable(op);
  const shape = broadcastShapes([dst.shape, value.shape], op);
  if (shape.length !== dst.ndim || shape.some((s, i) => s !== dst.shape[i])) {
    throw new TensorError(`${op}: output with shape [${dst.shape.join(', ')}] doesn't match the broadcast shape [${shape.join(', ')}]`);
  }
  const local = value.device.equals(dst.device) ? value : to(value, dst.device);
  const src = cast(local, dst.dtype);
  if (dst.numel() > 0) {
    const view = Tensor._internal(src._storage, dst.shape, broadcastStrides(src.shape, src._strides, dst.shape), src._offset);
    backendOf(dst.device).kernels.copy(ref(view), ref(dst));
    dst._storage.bumpVersion();
  }
  // The moved and cast copies only fed the write (the graph links dst to value itself).
  if (src !== local) src.dispose();
  if (local !== value) local.dispose();
}

/** In-place writes may not target a leaf that requires grad while grad mode is on (PyTorch's rule). */
function checkInPlace(dst: Tensor, op: string): void {
  if (isGradEnabled() && dst.isLeaf && dst.requiresGrad) {
    throw new TensorError(`${op}: a leaf Variable that requires grad is being used in an in-place operation; wrap parameter updates in noGrad(() => …)`);
  }
}

/**
 * PyTorch's internal-overlap rule for in-place ops and `copy_`: a destination where several
 * elements share one memory location (an expanded or broadcast view: a stride of 0 over a dim of
 * size > 1) can't be written elementwise, since the result would depend on the order of the writes.
 * Checked before anything is computed or written. (`fill_` and `zero_` are allowed, as in PyTorch:
 * every write stores the same value.)
 */
export function checkInternalOverlap(dst: Tensor, op: string): void {
  if (dst.shape.some((size, d) => size > 1 && dst._strides[d] === 0)) {
    throw new TensorError(
      `${op}: unsupported operation: more than one element of the written-to tensor refers to a single memory location ` +
        `(shape [${dst.shape.join(', ')}], strides [${dst._strides.join(', ')}], e.g. a view made by expand()). Please clone() the tensor before performing the operation.`,
    );
  }
}

/**
 * After an in-place write, `dst` stands for `value` in the graph: its gradient flows to `value`
 * (cast back to value's dtype and device by the engine).
 */
function rebaseHistory(dst: Tensor, value: Tensor, op: string): void {
  if (!isGradEnabled()) return;
  if (!value.requiresGrad) { dst._setGradFn(null); return; }
  const edge = { node: value._gradFn, leaf: value._gradFn ? null : value, shape: value.shape, dtype: value.dtype, device: value.device };
  dst._setGradFn(new Node(`${op}Backward`, [edge], (g) => [g], []));
}

/** `dst.copy_(src)`: any source device (SD-8). */
export function copyInto(dst: Tensor, src: Tensor): void {
  if (!(src instanceof Tensor)) throw new TypeError('copy_(): src must be a Tensor');
  checkInternalOverlap(dst, 'copy_');
  checkInPlace(dst, 'copy_');
  writeInto(dst, src, 'copy_');
  rebaseHistory(dst, src, 'Copy');
}

/** Store an in-place op's result into its target: TP-4's canCast rule, SD-4's device rule. */
export function assign(dst: Tensor, result: Tensor, op: string): void {
  try {
    iteratorDevice(op, [{ name: 'self', tensor: dst, isOutput: true }, { name: 'result', tensor: result }]);
    if (!canCast(result.dtype, dst.dtype)) {
      throw new DTypeError(`${op}: result type ${result.dtype.name} can't be cast to the desired output type ${dst.dtype.name}`, op, result.dtype.name);
    }
    checkInPlace(dst, op);
    writeInto(dst, result, op);
    rebaseHistory(dst, result, op);
  } finally {
    // The out-of-place result was computed only to be written into dst. Outside autograd nothing
    // else can reach it (an optimizer's `p.add_(g)`), so it is freed now.
    if (result._gradFn === null) result.dispose();
  }
}

export function fill(dst: Tensor, value: number): void {
  dst._assertUsable('fill_');
  if (typeof value !== 'number' && typeof value !== 'boolean') throw new TypeError('fill_(): value must be a number');
  checkInPlace(dst, 'fill_');
  if (dst.dtype === bool) value = value ? 1 : 0;
  if (dst.numel() > 0) backendOf(dst.device).kernels.fill(ref(dst), Number(value));
  dst._storage.bumpVersion();
  if (isGradEnabled()) dst._setGradFn(null); // a constant now: no gradient flows to the old value
}

/** A tensor of ones shaped like `x` (backward's default gradient). */
export function onesOf(x: Tensor): Tensor {
  const t = allocate(x.shape, x.dtype, x.device);
  if (t.numel() > 0) backendOf(x.device).kernels.fill(ref(t), 1);
  return t;
}

