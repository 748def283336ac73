// Reading a tensor's values now, through its own backend's synchronous read: what dataSync(), `.to()`
// from a device that reads synchronously and core's host-side checks (index ranges, the host plans
// of data-dependent ops, anomaly mode) use. Only the tensor's own backend is involved, so a check of
// a tensor on a third-party device never needs the cpu backend. This module reaches the rest of
// core only through Tensor methods, so any op module can import it (the op table's too).
import { bfloat16, float16, type DType, type HostArray } from '../dtype/dtype.js';
import { bfloat16BitsToNumber, float16BitsToNumber } from '../dtype/half.js';
import type { Tensor } from './tensor.js';
import type { DataArray } from './transfer.js';

/** Whether `x` is its whole storage, in row-major order: a read of the storage is a read of `x`. */
export function coversStorage(x: Tensor): boolean {
  return x.isContiguous() && x._offset === 0 && x.numel() === x._storage.numel;
}

/**
 * `x`'s elements in row-major order as the backend stores them (half types as bits), read now by
 * its own backend; null when that backend has no `readSync`. A view is copied first (on its
 * device) into a temporary that is freed before returning.
 */
export function hostNow(x: Tensor): HostArray | null {
  const backend = x._storage.backend;
  if (!backend.readSync) return null;
  if (coversStorage(x)) return backend.readSync(x._storage.handle);
  const detached = x.detach(); // a view over x's storage: disposed at once, so it holds nothing after the read
  const c = detached.clone();
  detached.dispose();
  try {
    return backend.readSync(c._storage.handle);
  } finally {
    c.dispose(); // a read must not leave a temporary behind until GC
  }
}

/** Host data as `data()` returns it: half types widened to float32, other dtypes as they are. */
export function decode(host: HostArray, dtype: DType): DataArray {
  if (dtype === float16 || dtype === bfloat16) {
    const f = dtype === float16 ? float16BitsToNumber : bfloat16BitsToNumber;
    const out = new Float32Array(host.length);
    for (let i = 0; i < host.length; i++) out[i] = f(host[i]!);
    return out;
  }
  return host as DataArray;
}

/**
 * `x`'s values (a copy the caller owns) read now by its own backend, or null when that backend has no
 * `readSync` (GPUs: read with `await x.data()` instead). For host-side checks in ops outside core
 * (index ranges, class counts): it never needs the cpu backend.
 */
export function valuesNow(x: Tensor): DataArray | null {
  const host = hostNow(x);
  return host && (decode(host, x.dtype).slice(0, x.numel()) as DataArray);
}
