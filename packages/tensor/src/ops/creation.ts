// Factories. New tensors go to the default device (cpu) unless `device` is given (DEV-4);
// `*Like` factories copy dtype and device from their argument (DEV-5). A factory is where a tensor
// is created: each runs in withCreationSite, one stack capture for all it allocates.
import { bfloat16, bool, DTYPES, float16, float32, float64, hostArrayFor, int32, type DType, type HostArray } from '../dtype/dtype.js';
import { float32ToBFloat16Bits, float32ToFloat16Bits } from '../dtype/half.js';
import type { DeviceLike } from '../device/device.js';
import { getDefaultDevice } from '../device/default-device.js';
import { DTypeError, ShapeError, TensorError, ValueError } from '../errors/errors.js';
import { allocate, backendOf, ref, requireCompute } from '../dispatch/run.js';
import { defaultGenerator, type Generator } from '../random/generator.js';
import { Tensor } from '../tensor/tensor.js';
import { checkFiniteNumber, checkShape } from '../tensor/shape.js';
import { resolveDevice, pinMemory } from '../tensor/transfer.js';
import { binary, cast, unary } from './elementwise.js';
import { withCreationSite } from '../tensor/site.js';

/** Where and how factories create a tensor. */
export interface FactoryOptions {
  /** The element type (default float32, or bool for boolean data/fill values). */
  readonly dtype?: DType;
  /** The device (default: `getDefaultDevice()`, the cpu unless changed). */
  readonly device?: DeviceLike;
  /** Make the new tensor a leaf that records gradients (floating dtypes only). */
  readonly requiresGrad?: boolean;
  /** Allocate in pinned host memory (CPU only; PIN-1). */
  readonly pinMemory?: boolean;
}

/** FactoryOptions plus the generator random factories draw from. */
export interface RandomOptions extends FactoryOptions {
  /** The generator to draw from (default: the global one that `manualSeed` seeds). */
  readonly generator?: Generator;
}

function checkDType(dtype: unknown, op: string): DType {
  if (dtype === undefined) return float32;
  if (!Object.values(DTYPES).includes(dtype as DType)) {
    throw new DTypeError(`${op}: unknown dtype ${String(dtype)}; use one of ${Object.keys(DTYPES).join(', ')} exported by @core/tensor`, op);
  }
  return dtype as DType;
}

function finish(t: Tensor, options: FactoryOptions | undefined, op: string): Tensor {
  let out = t;
  if (options?.pinMemory) {
    if (out.device.type !== 'cpu') throw new TensorError('Only dense CPU tensors can be pinned');
    out = pinMemory(out);
  }
  if (options?.requiresGrad) {
    if (!out.dtype.isFloatingPoint) throw new DTypeError(`${op}: only floating point tensors can require gradients, got ${out.dtype.name}`, op, out.dtype.name);
    out.requiresGrad = true;
  }
  return out;
}

function deviceOf(options: FactoryOptions | undefined) {
  return resolveDevice(options?.device ?? getDefaultDevice());
}

/**
 * A tensor of `shape` with every element `fillValue` (bool dtype for a boolean value, else float32 unless `dtype` says otherwise).
 */
export function full(shape: readonly number[], fillValue: number | boolean, options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    const dims = checkShape(shape, 'full');
    if (typeof fillValue !== 'number' && typeof fillValue !== 'boolean') throw new TypeError(`full(): fillValue must be a number or boolean, got ${typeof fillValue}`);
    const dtype = options?.dtype ? checkDType(options.dtype, 'full') : typeof fillValue === 'boolean' ? bool : float32;
    const t = allocate(dims, dtype, deviceOf(options));
    if (t.numel() > 0) backendOf(t.device).kernels.fill(ref(t), Number(fillValue));
    return finish(t, options, 'full');
  });
}

/** A tensor of `shape` filled with 0 (float32 unless `dtype` says otherwise). */
export function zeros(shape: readonly number[], options?: FactoryOptions): Tensor {
  return full(shape, 0, { ...options, dtype: checkDType(options?.dtype, 'zeros') });
}

/** A tensor of `shape` filled with 1 (float32 unless `dtype` says otherwise). */
export function ones(shape: readonly number[], options?: FactoryOptions): Tensor {
  return full(shape, 1, { ...options, dtype: checkDType(options?.dtype, 'ones') });
}

/** Uninitialised memory: contents are whatever the backend's allocator gives. */
export function empty(shape: readonly number[], options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    const t = allocate(checkShape(shape, 'empty'), checkDType(options?.dtype, 'empty'), deviceOf(options));
    return finish(t, options, 'empty');
  });
}

type Nested = number | boolean | readonly Nested[];
/** What `tensor()` accepts: a number, a boolean, nested arrays of them, or a typed array. */
export type TensorData = Nested | Float32Array | Float64Array | Int32Array | Uint8Array | Uint16Array;

function inferShapeOf(data: Nested, op: string): number[] {
  const shape: number[] = [];
  let level: Nested = data;
  while (Array.isArray(level)) {
    shape.push(level.length);
    level = level[0] as Nested;
  }
  const check = (v: Nested, d: number) => {
    if (d === shape.length) {
      if (typeof v !== 'number' && typeof v !== 'boolean') {
        throw new ShapeError(`${op}(): expected a number or boolean at depth ${d}, got ${Array.isArray(v) ? 'an array' : typeof v}`, op);
      }
      return;
    }
    if (!Array.isArray(v)) throw new ShapeError(`${op}(): expected a sequence of length ${shape[d]} at dim ${d} (got a scalar)`, op);
    if (v.length !== shape[d]) throw new ShapeError(`${op}(): expected sequence of length ${shape[d]} at dim ${d} (got ${v.length})`, op);
    for (const x of v) check(x, d + 1);
  };
  check(data, 0);
  return shape;
}

function encode(values: ArrayLike<number | boolean>, dtype: DType): HostArray {
  const out = hostArrayFor(dtype, values.length);
  const n = values.length;
  if (dtype === float16) for (let i = 0; i < n; i++) out[i] = float32ToFloat16Bits(Number(values[i]));
  else if (dtype === bfloat16) for (let i = 0; i < n; i++) out[i] = float32ToBFloat16Bits(Number(values[i]));
  else if (dtype === bool) for (let i = 0; i < n; i++) out[i] = Number(values[i]) !== 0 ? 1 : 0; // NaN → true, like cast
  else for (let i = 0; i < n; i++) out[i] = Number(values[i]);
  return out;
}

/**
 * A tensor from nested arrays, a typed array (1-D) or a number (0-dim). Numbers default to float32
 * (JS cannot tell `1.0` from `1`: pass `{ dtype: int32 }` or an Int32Array for integers); booleans
 * give bool; typed arrays keep their type (Uint8Array → bool? no: uint8 data is read as int32).
 */
export function tensor(data: TensorData, options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    let shape: number[];
    let flat: ArrayLike<number | boolean>;
    let inferred: DType = float32;
    if (ArrayBuffer.isView(data)) {
      if (data instanceof Uint16Array) throw new DTypeError('tensor(): a Uint16Array is ambiguous (float16 or bfloat16 bits?); convert to numbers first', 'tensor');
      shape = [data.length];
      flat = data as ArrayLike<number>;
      inferred = data instanceof Float64Array ? float64 : data instanceof Int32Array ? int32 : data instanceof Uint8Array ? int32 : float32;
    } else {
      shape = inferShapeOf(data as Nested, 'tensor');
      flat = (Array.isArray(data) ? (data as unknown[]).flat(Infinity) : [data]) as (number | boolean)[];
      if (flat.length > 0 && (flat as (number | boolean)[]).every((v) => typeof v === 'boolean')) inferred = bool;
    }
    const dtype = options?.dtype ? checkDType(options.dtype, 'tensor') : inferred;
    if (dtype === int32) {
      for (let i = 0; i < flat.length; i++) {
        const v = Number(flat[i]);
        if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw new ValueError(`tensor(): value ${v} at flat index ${i} is not an int32`);
      }
    }
    const t = allocate(shape, dtype, deviceOf(options));
    if (flat.length > 0) backendOf(t.device).write(t._storage.handle, encode(flat, dtype), 0);
    return finish(t, options, 'tensor');
  });
}

/** `arange(end)` or `arange(start, end, step?)`: int32 when all arguments are integers, else float32. */
export function arange(end: number, options?: FactoryOptions): Tensor;
export function arange(start: number, end: number, options?: FactoryOptions): Tensor;
export function arange(start: number, end: number, step: number, options?: FactoryOptions): Tensor;
export function arange(start: number, end?: number | FactoryOptions, step?: number | FactoryOptions, options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    // `arange(end, { dtype })` like PyTorch's `arange(5, dtype=…)`: options may follow any count of numbers.
    if (typeof end === 'object' && end !== null) { options = end; end = undefined; }
    if (typeof step === 'object' && step !== null) { options = step; step = undefined; }
    let lo = start;
    let hi = end;
    if (hi === undefined) { hi = start; lo = 0; }
    const st = step ?? 1;
    for (const [name, v] of [['start', lo], ['end', hi], ['step', st]] as const) checkFiniteNumber(v, name, 'arange');
    if (st === 0) throw new ValueError('arange(): step must be nonzero');
    if ((hi - lo) / st < 0) throw new ValueError(`arange(): upper bound and larger bound inconsistent with step sign (start ${lo}, end ${hi}, step ${st})`);
    const n = Math.ceil((hi - lo) / st);
    const allInt = Number.isInteger(lo) && Number.isInteger(hi) && Number.isInteger(st);
    const dtype = options?.dtype ? checkDType(options.dtype, 'arange') : allInt ? int32 : float32;
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = lo + i * st;
    if (dtype === int32) for (let i = 0; i < n; i++) values[i] = Math.trunc(values[i]!); // computed in float, cast like PyTorch
    return tensor(values, { ...options, dtype });
  });
}

/** An n × m matrix (m defaults to n) with ones on the main diagonal and zeros elsewhere (float32 unless `dtype` says otherwise). */
export function eye(n: number, m?: number | FactoryOptions, options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    if (typeof m === 'object' && m !== null) { options = m; m = undefined; }
    const cols = m ?? n;
    for (const [name, v] of [['n', n], ['m', cols]] as const) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ValueError(`eye(): ${name} must be a non-negative integer, got ${String(v)}`);
    }
    const values = new Uint8Array(n * cols);
    for (let i = 0; i < Math.min(n, cols); i++) values[i * cols + i] = 1;
    const flat = tensor(values, { dtype: checkDType(options?.dtype, 'eye'), device: deviceOf(options) });
    return finish(flat.reshape([n, cols]), options, 'eye');
  });
}

/** `steps` evenly spaced values from start to end inclusive (PyTorch's symmetric formula). */
export function linspace(start: number, end: number, steps: number, options?: FactoryOptions): Tensor {
  return withCreationSite(() => {
    checkFiniteNumber(start, 'start', 'linspace');
    checkFiniteNumber(end, 'end', 'linspace');
    if (!Number.isInteger(steps) || steps < 0) throw new ValueError(`linspace(): number of steps must be a non-negative integer, got ${steps}`);
    const values = new Float64Array(steps);
    const step = steps > 1 ? (end - start) / (steps - 1) : 0;
    const half = Math.floor(steps / 2);
    for (let i = 0; i < steps; i++) values[i] = i < half ? start + step * i : end - step * (steps - 1 - i);
    if (steps === 1) values[0] = start; // PyTorch: a single step is `start`, not `end`
    const dtype = checkDType(options?.dtype, 'linspace');
    if (dtype === int32) for (let i = 0; i < steps; i++) values[i] = Math.trunc(values[i]!); // e.g. [0, 3, 6, 10], as PyTorch casts
    return tensor(values, { ...options, dtype });
  });
}

function randomTensor(shape: readonly number[], options: RandomOptions | undefined, op: string, fillFn: (t: Tensor, g: Generator) => void, dtype: DType): Tensor {
  const dims = checkShape(shape, op);
  const t = allocate(dims, dtype, deviceOf(options));
  requireCompute(backendOf(t.device), dtype, op);
  fillFn(t, options?.generator ?? defaultGenerator);
  return t;
}

function uniform01(shape: readonly number[], options: RandomOptions | undefined, op: string): Tensor {
  return randomTensor(shape, options, op, (t, g) => {
    if (t.numel() > 0) backendOf(t.device).kernels.random(ref(t), g.next(t.numel(), { kind: 'uniform' }));
  }, float32);
}

/** Keep only the significand bits the target float type has, so rounding can never reach 1. */
function truncateToPrecision(u: Tensor, dtype: DType): Tensor {
  const bits = dtype === float16 ? 11 : dtype === bfloat16 ? 8 : 0;
  if (bits === 0) return cast(u, dtype);
  return cast(binary('mul', unary('floor', binary('mul', u, 2 ** bits)), 2 ** -bits), dtype);
}

function floatDType(options: FactoryOptions | undefined, op: string): DType {
  const dtype = checkDType(options?.dtype, op);
  if (!dtype.isFloatingPoint) throw new DTypeError(`${op}(): expected a floating point dtype, got ${dtype.name}`, op, dtype.name);
  return dtype;
}

/** Uniform on [0, 1), from the counter-based generator: the same numbers on every backend. */
export function rand(shape: readonly number[], options?: RandomOptions): Tensor {
  return withCreationSite(() => {
    const dtype = floatDType(options, 'rand');
    return finish(truncateToPrecision(uniform01(shape, options, 'rand'), dtype), options, 'rand');
  });
}

/** Standard normal by Box–Muller over two uniform draws, computed in float32. */
export function randn(shape: readonly number[], options?: RandomOptions): Tensor {
  return withCreationSite(() => {
    const dtype = floatDType(options, 'randn');
    const u1 = uniform01(shape, options, 'randn');
    const u2 = uniform01(shape, options, 'randn');
    const radius = unary('sqrt', binary('mul', unary('log', binary('sub', 1, u1)), -2)); // 1 − u1 ∈ (0, 1]
    const z = binary('mul', radius, unary('cos', binary('mul', u2, 2 * Math.PI)));
    return finish(cast(z, dtype), options, 'randn');
  });
}

/** Integers uniform on [low, high); `randint(high, shape)` means low = 0. int32 by default. */
export function randint(low: number, high: number | readonly number[], shape?: readonly number[] | RandomOptions, options?: RandomOptions): Tensor {
  return withCreationSite(() => {
    if (Array.isArray(high)) { options = shape as RandomOptions | undefined; shape = high; high = low; low = 0; }
    const lo = low;
    const hi = high as number;
    if (!Number.isInteger(lo) || !Number.isInteger(hi)) throw new ValueError(`randint(): low and high must be integers, got ${lo} and ${hi}`);
    if (hi <= lo) throw new ValueError(`randint(): random_ expects 'from' to be less than 'to', but got from=${lo} >= to=${hi}`);
    if (lo < -(2 ** 31) || hi > 2 ** 31 || hi - lo > 2 ** 32) throw new ValueError(`randint(): [${lo}, ${hi}) must fit in int32`);
    const dtype = options?.dtype ? checkDType(options.dtype, 'randint') : int32;
    const ints = randomTensor(shape as readonly number[], options, 'randint', (t, g) => {
      if (t.numel() > 0) backendOf(t.device).kernels.random(ref(t), g.next(t.numel(), { kind: 'randint', low: lo, high: hi }));
    }, int32);
    return finish(cast(ints, dtype), options, 'randint');
  });
}

type LikeOptions = FactoryOptions;

function like(t: Tensor, options: LikeOptions | undefined): FactoryOptions {
  if (!(t instanceof Tensor)) throw new TypeError('*Like(): the first argument must be a Tensor');
  return { dtype: t.dtype, device: t.device, ...options };
}

/** Zeros with `t`'s shape, dtype and device (options override them). */
export const zerosLike = (t: Tensor, options?: LikeOptions) => zeros(t.shape, like(t, options));
/** Ones with `t`'s shape, dtype and device (options override them). */
export const onesLike = (t: Tensor, options?: LikeOptions) => ones(t.shape, like(t, options));
/** Uninitialised memory with `t`'s shape, dtype and device (options override them). */
export const emptyLike = (t: Tensor, options?: LikeOptions) => empty(t.shape, like(t, options));
/** `fillValue` everywhere, with `t`'s shape, dtype and device (options override them). */
export const fullLike = (t: Tensor, fillValue: number | boolean, options?: LikeOptions) => full(t.shape, fillValue, like(t, options));
/** Uniform [0, 1) values with `t`'s shape, dtype and device (options override them). */
export const randLike = (t: Tensor, options?: RandomOptions) => rand(t.shape, like(t, options));
/** Standard normal values with `t`'s shape, dtype and device (options override them). */
export const randnLike = (t: Tensor, options?: RandomOptions) => randn(t.shape, like(t, options));
/** Integers in [low, high) with `t`'s shape, dtype and device (options override them). */
export const randintLike = (t: Tensor, low: number, high: number, options?: RandomOptions) =>
  randint(low, high, t.shape, { device: t.device, dtype: t.dtype, ...options });
