// Pinning batches (PIN-3, PIN-4): recurse through the batch and pin every tensor.
import { getBackend, isAvailable, listBackends, Tensor } from '@core/tensor';

/** The warning (PyTorch's text) printed once when `pinMemory` is asked for without an accelerator that supports it. */
export const NO_ACCELERATOR_WARNING =
  "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used.";

/** Whether `Tensor.pinMemory()` can work: some available non-CPU backend supports pinned memory. */
export function pinnedMemoryAvailable(): boolean {
  return listBackends().some((n) => n !== 'cpu' && isAvailable(n) && getBackend(n).capabilities.pinnedMemory);
}

let warned = false;

/** PIN-3: warn once per process (Python's default warning filter shows a call site's warning once). */
export function warnNoAccelerator(): void {
  if (warned) return;
  warned = true;
  console.warn(NO_ACCELERATOR_WARNING);
}

function hasPinMethod(x: object): x is { pinMemory(): unknown } {
  return typeof (x as { pinMemory?: unknown }).pinMemory === 'function';
}

/**
 * PIN-4: Tensor → `.pinMemory()`; an object with a `pinMemory()` method → that method; arrays →
 * arrays; plain objects and Maps → the same keys; strings, numbers and anything else unchanged.
 */
export function pinBatch<B>(batch: B): B {
  return pinAny(batch) as B;
}

function pinAny(x: unknown): unknown {
  if (x instanceof Tensor) return x.pinMemory();
  if (typeof x !== 'object' || x === null) return x;
  if (hasPinMethod(x)) return x.pinMemory();
  if (Array.isArray(x)) return x.map(pinAny);
  if (x instanceof Map) return new Map([...x].map(([k, v]) => [k, pinAny(v)]));
  const proto = Object.getPrototypeOf(x) as unknown;
  if (proto === Object.prototype || proto === null) {
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, pinAny(v)]));
  }
  return x;
}
