// Small argument helpers shared by layers and functional ops: PyTorch's `_pair`, shape text,
// reductions and tensor checks. Pure functions, no state.
import { bindArguments, DTYPES, DTypeError, ShapeError, Tensor, ValueError, type DType, type DeviceLike } from '@core/tensor';

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

/** PyTorch's call forms, typed: the positional parameters `P` (each may be skipped with undefined). */
type Skippable<P extends readonly unknown[]> = { [I in keyof P]: P[I] | undefined };
type Prefixes<P extends readonly unknown[]> = P extends readonly [...infer Init, unknown] ? P | Prefixes<Init> : P;

/**
 * The arguments after a function's required ones, as Python binds them: any leading run of the
 * positional-or-keyword parameters `P` (in PyTorch's order), optionally followed by one keyword
 * object `K` that names parameters instead (`F.conv2d(x, w, b, 2, 1)` or `F.conv2d(x, w, b, { stride: 2, padding: 1 })`).
 */
export type Args<P extends readonly unknown[], K> = Prefixes<Skippable<P>> extends infer X extends readonly unknown[] ? X | [...X, K] : never;

/**
 * Bind `args` (see `Args`) to parameter names the way Python does: positionals fill `names` in
 * order, a trailing keyword object may name any of `names` or `keywordOnly`. Returns the values by
 * name (undefined: not given, so the default applies). A parameter given both ways, a keyword the
 * function does not have, or more positionals than `names` is a TypeError naming it.
 */
export function bindArgs<K extends object>(op: string, names: readonly (keyof K & string)[], args: readonly unknown[], keywordOnly: readonly (keyof K & string)[] = []): Partial<K> {
  return bindArguments(op, args, names, keywordOnly) as Partial<K>;
}

/** Where new parameters and buffers go: `{ device, dtype }` without the absent ones. */
export function factoryOf({ device, dtype }: FactoryOptions): FactoryOptions {
  return { ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) };
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

/** `dim` as a non-negative index into `ndim` dims (negative counts from the end), or PyTorch's IndexError text as a ShapeError. */
export function dimIndex(dim: number, ndim: number, op: string): number {
  const lo = -Math.max(ndim, 1);
  const hi = Math.max(ndim, 1) - 1;
  if (!Number.isInteger(dim) || dim < lo || dim > hi) {
    throw new ShapeError(`${op}(): Dimension out of range (expected to be in range of [${lo}, ${hi}], but got ${dim})`, op);
  }
  return dim < 0 ? dim + Math.max(ndim, 1) : dim;
}

/** The shape `a` and `b` broadcast to, or PyTorch's error naming the first dim that does not fit. */
export function broadcastShape(a: readonly number[], b: readonly number[], op: string): number[] {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, i) => {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new ShapeError(`${op}(): The size of tensor a (${x}) must match the size of tensor b (${y}) at non-singleton dimension ${i}`, op);
    }
    return x === 1 ? y : x;
  });
}
