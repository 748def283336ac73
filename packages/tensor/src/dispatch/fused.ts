// Whether composite ops use a backend's optional fused kernels, and the lookup of one. Kept apart
// from the ops so every op module can ask without importing another op module.
import type { Backend, FusedKernels } from '../backend/contract.js';

let fusedEnabled = true;

/** Use backends' fused kernels for composite ops (default) or always run the decompositions. */
export function setFusedKernelsEnabled(on: boolean): void {
  fusedEnabled = on;
}

/** Whether composite ops use backends' fused kernels (see setFusedKernelsEnabled). */
export function fusedKernelsEnabled(): boolean {
  return fusedEnabled;
}

/** @internal The backend's fused kernel `name`, bound to it, when it has one and fusion is enabled. */
export function fusedKernel<K extends keyof FusedKernels<unknown>>(backend: Backend<unknown>, name: K): FusedKernels<unknown>[K] | undefined {
  const kernel = fusedEnabled ? backend.fused?.[name] : undefined;
  return typeof kernel === 'function' ? (kernel.bind(backend.fused) as FusedKernels<unknown>[K]) : undefined;
}
