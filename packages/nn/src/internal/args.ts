// Small argument helpers shared by layers and functional ops: PyTorch's `_pair`, shape text,
// reductions and tensor checks. Pure functions, no state.
import { DTYPES, DTypeError, ShapeError, Tensor, ValueError, type DType, type DeviceLike } from '@core/tensor';

/** A size given as one number for both spatial dims, or as [height, width]. */
export type Pair = number | readonly [number, number];

/** Where new parameters and buffers go (PyTorch's factory kwargs). */
export interface FactoryOptions {
  /** The device (default: `getDefaultDevice()`). */
  readonly device?: DeviceLike;
  /** The dtype (default float32). */
  readonly dtype?: DType;
}

/** `[2, 3]` style shape text, as every error message writes shapes. */
export function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** PyTorch's `_pair`: a number for both dims, or exactly two numbers; integers ≥ `min`. */
export function pair(value: Pair, name: string, op: string, min = 0): [number, number] {
  const both = typeof value === 'number' ? [value, value] : Array.isArray(value) && value.length === 2 ? [value[0], value[1]] : null;
  if (!both || both.some((v) => !Number.isInteger(v) || v < min)) {
    throw new ValueError(`${op}: ${name} must be an integer ≥ ${min} or a pair of them, got ${JSON.stringify(value)}`);
  }
  return both as [number, number];
}

export function checkTensor(value: unknown, name: string, op: string): asserts value is Tensor {
  if (!(value instanceof Tensor)) {
    throw new TypeError(`${op}(): argument '${name}' must be a Tensor, not ${value === null ? 'null' : typeof value}`);
  }
}

export function checkFloating(t: Tensor, name: string, op: string): void {
  if (!t.dtype.isFloatingPoint) {
    throw new DTypeError(`${op}(): expected a floating point ${name}, got ${t.dtype.name}; convert with ${name}.float()`, op, t.dtype.name);
  }
}

export function isDType(value: unknown): value is DType {
  return Object.values(DTYPES).includes(value as DType);
}

/** How a loss reduces over elements: their mean, their sum, or none (one loss each). */
export type Reduction = 'mean' | 'sum' | 'none';

export function checkReduction(reduction: unknown, op: string): Reduction {
  if (reduction !== 'mean' && reduction !== 'sum' && reduction !== 'none') {
    throw new ValueError(`${op}(): ${JSON.stringify(reduction)} is not a valid value for reduction; use 'mean', 'sum' or 'none'`);
  }
  return reduction;
}

/** Apply a loss reduction to per-element losses. */
export function reduce(losses: Tensor, reduction: Reduction): Tensor {
  switch (reduction) {
    case 'none': return losses;
    case 'sum': return losses.sum();
    case 'mean': return losses.mean();
    default: return reduction satisfies never;
  }
}

export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

/** Throw a ShapeError unless `t` has `ndim` among `allowed`. */
export function checkRank(t: Tensor, allowed: readonly number[], what: string, op: string): void {
  if (!allowed.includes(t.ndim)) {
    throw new ShapeError(`${op}(): expected ${what}, but got input of shape ${shapeText(t.shape)} (${t.ndim}-D)`, op);
  }
}

/** Half types compute statistics in float32 and round once (PyTorch's opmath type). */
export function opmathDType(dtype: DType): DType {
  return dtype === DTYPES.float16 || dtype === DTYPES.bfloat16 ? DTYPES.float32 : dtype;
}
