// One Adam/AdamW parameter update through a backend's fused kernel. @core/optim calls this for each
// parameter and runs its decomposition when it returns false (no kernel, fusion disabled, or
// tensors the kernel does not take: mixed dtypes or devices, non-contiguous storage).
import type { AdamSpec } from '../backend/contract.js';
import { backendOf, ref } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { fusedKernel } from '../dispatch/fused.js';

/** The state tensors of one parameter, as @core/optim's Adam keeps them. */
export interface FusedAdamTensors {
  /** The parameter, updated in place. */
  readonly param: Tensor;
  /** Its gradient (read only). */
  readonly grad: Tensor;
  /** The first moment, updated in place. */
  readonly expAvg: Tensor;
  /** The second moment, updated in place. */
  readonly expAvgSq: Tensor;
  /** The running maximum of the second moment (amsgrad only), updated in place. */
  readonly maxExpAvgSq?: Tensor | undefined;
}

/**
 * Run one Adam/AdamW update (the contract's `FusedKernels.adamw`) on the parameter's backend, in
 * place. Returns false, touching nothing, when the fused kernel does not apply; the caller then
 * runs its decomposition. The caller has already advanced the step count (`spec.step`).
 * @internal Called by \@core/optim.
 */
export function fusedAdamStep(tensors: FusedAdamTensors, spec: AdamSpec): boolean {
  const { param, grad, expAvg, expAvgSq, maxExpAvgSq } = tensors;
  const all = maxExpAvgSq ? [param, grad, expAvg, expAvgSq, maxExpAvgSq] : [param, grad, expAvg, expAvgSq];
  if (!param.dtype.isFloatingPoint || param.numel() === 0) return false;
  for (const t of all) {
    if (t.dtype !== param.dtype || !t.device.equals(param.device) || t.numel() !== param.numel() || !t.isContiguous()) return false;
  }
  const backend = backendOf(param.device);
  if (!backend.capabilities.dtypes[param.dtype.name]?.compute) return false;
  const kernel = fusedKernel(backend, 'adamw');
  if (!kernel) return false;
  const flat = (t: Tensor) => ({ ...ref(t), shape: [t.numel()], strides: [1] });
  kernel(flat(param), flat(grad), flat(expAvg), flat(expAvgSq), maxExpAvgSq ? flat(maxExpAvgSq) : null, spec);
  for (const t of [param, expAvg, expAvgSq, ...(maxExpAvgSq ? [maxExpAvgSq] : [])]) t._storage.bumpVersion();
  return true;
}
