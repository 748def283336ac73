// Whether ops record the autograd graph. Like PyTorch's grad mode: on by default, scoped off
// by noGrad() (optimizer steps, evaluation) and back on by enableGrad(). Inference mode is noGrad
// that also marks what it allocates: those inference tensors can never enter a recorded graph.
import type { Storage } from '../tensor/storage.js';

let enabled = true;
let inference = false;
/** Storages allocated inside inferenceMode: every tensor over one is an inference tensor. */
const inferenceStorages = new WeakSet<Storage>();

/** Whether ops record the autograd graph now (false inside `noGrad` and `inferenceMode`). */
export function isGradEnabled(): boolean {
  return enabled;
}

/** Whether an op run now records its backward: grad mode on and not inside `inferenceMode` (even under `enableGrad`). */
export function isRecording(): boolean {
  return enabled && !inference;
}

function withModes<T>(grad: boolean, inferenceOn: boolean, fn: () => T): T {
  const saved = [enabled, inference] as const;
  enabled = grad;
  inference = inferenceOn;
  try {
    const result = fn();
    if (result instanceof Promise) {
      throw new TypeError('noGrad()/enableGrad()/inferenceMode() take a synchronous function: await inside it would leak the mode to other tasks');
    }
    return result;
  } finally {
    [enabled, inference] = saved;
  }
}

/** Run `fn` without recording gradients (PyTorch's `with torch.no_grad():`). */
export function noGrad<T>(fn: () => T): T {
  return withModes(false, inference, fn);
}

/** Run `fn` with gradient recording on, even inside noGrad (`torch.enable_grad`); inside `inferenceMode` nothing is recorded still, as in PyTorch. */
export function enableGrad<T>(fn: () => T): T {
  return withModes(true, inference, fn);
}

/**
 * Run `fn` in inference mode (PyTorch's `with torch.inference_mode():`): nothing is recorded, as
 * in `noGrad`, and every tensor allocated inside is an inference tensor (`t.isInference()`), which
 * an op recorded for backward outside may not save. For evaluation code whose results never feed
 * a training step; clone() an inference tensor to get a normal one.
 */
export function inferenceMode<T>(fn: () => T): T {
  return withModes(false, true, fn);
}

/** Whether inference mode is on now (PyTorch's `torch.is_inference_mode_enabled()`). */
export function isInferenceModeEnabled(): boolean {
  return inference;
}

/** @internal Dispatch calls it for every storage it allocates. */
export function noteAllocation(storage: Storage): void {
  if (inference) inferenceStorages.add(storage);
}

/** @internal Whether a tensor over `storage` is an inference tensor. */
export function isInferenceStorage(storage: Storage): boolean {
  return inferenceStorages.has(storage);
}

/** Set grad mode globally; returns the previous value. */
export function setGradEnabled(on: boolean): boolean {
  const saved = enabled;
  enabled = on;
  return saved;
}
