// PyTorch's default_collate: a list of samples becomes one batch of the same structure.
import { bool, stack, Tensor, tensor } from '@core/tensor';

/** The batch type the default collate makes from samples of type T. */
export type Collated<T> = T extends Tensor
  ? Tensor
  : T extends number | boolean | ArrayBufferView
    ? Tensor
    : T extends string
      ? T[]
      : T extends readonly unknown[]
        ? { -readonly [K in keyof T]: Collated<T[K]> }
        : T extends ReadonlyMap<infer K, infer V>
          ? Map<K, Collated<V>>
          : T extends object
            ? { -readonly [K in keyof T]: Collated<T[K]> }
            : never;

/** Turns a list of samples into one batch (may be async). */
export type CollateFn<T, B> = (samples: T[]) => B | Promise<B>;

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (typeof x !== 'object') return typeof x;
  return (x as object).constructor?.name ?? 'object';
}

/**
 * - Tensors → `stack(samples, 0)`.
 * - numbers → a float32 tensor (core's default for JS numbers; PyTorch gives int64 / float64);
 *   booleans → bool. Typed arrays → a tensor each, then stacked. Strings → the list unchanged.
 * - Arrays/tuples → an array of the collated positions (equal lengths required).
 * - Plain objects and Maps → the same keys, each collated (equal keys required).
 */
export function defaultCollate<T>(samples: readonly T[]): Collated<T> {
  return collateAny(samples, 'batch') as Collated<T>;
}

function collateAny(samples: readonly unknown[], path: string): unknown {
  if (samples.length === 0) throw new TypeError('defaultCollate(): expected at least one sample');
  const first = samples[0];
  const sameKind = (ok: (x: unknown) => boolean, kind: string) => {
    samples.forEach((s, i) => {
      if (!ok(s)) throw new TypeError(`defaultCollate(): ${path}: sample 0 is ${kind} but sample ${i} is ${describe(s)}`);
    });
  };
  if (first instanceof Tensor) {
    sameKind((s) => s instanceof Tensor, 'a Tensor');
    return stack(samples as Tensor[], 0);
  }
  if (typeof first === 'number') {
    sameKind((s) => typeof s === 'number', 'a number');
    return tensor(samples as number[]);
  }
  if (typeof first === 'boolean') {
    sameKind((s) => typeof s === 'boolean', 'a boolean');
    return tensor(samples as boolean[], { dtype: bool });
  }
  if (typeof first === 'string') {
    sameKind((s) => typeof s === 'string', 'a string');
    return samples.slice();
  }
  if (ArrayBuffer.isView(first) && !(first instanceof DataView)) {
    sameKind((s) => ArrayBuffer.isView(s) && !(s instanceof DataView), 'a typed array');
    return stack(samples.map((s) => tensor(s as Float32Array)), 0);
  }
  if (Array.isArray(first)) {
    sameKind(Array.isArray, 'an array');
    const n = first.length;
    samples.forEach((s, i) => {
      if ((s as unknown[]).length !== n) {
        throw new TypeError(`defaultCollate(): ${path}: each element in list of batch should be of equal size (sample 0 has ${n}, sample ${i} has ${(s as unknown[]).length})`);
      }
    });
    return first.map((_, k) => collateAny(samples.map((s) => (s as unknown[])[k]), `${path}[${k}]`));
  }
  if (first instanceof Map) {
    sameKind((s) => s instanceof Map, 'a Map');
    const keys = [...first.keys()];
    return new Map(keys.map((k) => [k, collateAny(samples.map((s, i) => mapValue(s as Map<unknown, unknown>, k, i, path)), `${path}.get(${String(k)})`)]));
  }
  if (isPlainObject(first)) {
    sameKind(isPlainObject, 'a plain object');
    const keys = Object.keys(first);
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      out[k] = collateAny(samples.map((s, i) => {
        if (!Object.hasOwn(s as object, k)) throw new TypeError(`defaultCollate(): ${path}: sample ${i} has no key '${k}' (sample 0 has ${keys.join(', ')})`);
        return (s as Record<string, unknown>)[k];
      }), `${path}.${k}`);
    }
    return out;
  }
  throw new TypeError(`defaultCollate(): ${path}: samples must contain tensors, numbers, booleans, strings, typed arrays, arrays, plain objects or Maps; found ${describe(first)}`);
}

function mapValue(m: Map<unknown, unknown>, k: unknown, i: number, path: string): unknown {
  if (!m.has(k)) throw new TypeError(`defaultCollate(): ${path}: sample ${i} has no key ${String(k)}`);
  return m.get(k);
}
