// One Adam/AdamW parameter update through a backend's fused kernel. @core/optim calls this for each
// parameter and runs its decomposition when it returns false (no kernel, fusion disabled, or
// tensors the kernel does not take: mixed dtypes or devices, non-contiguous storage).
import type { AdamSpec } from '../backend/contract.js';
import type { Tensor } from '../tensor/tensor.js';
import { fusedUpdate } from './fused-update.js';

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
  return fusedUpdate('adamw', param, grad, [expAvg, expAvgSq, maxExpAvgSq], (kernel, flat) => {
    kernel(flat(param), flat(grad), flat(expAvg), flat(expAvgSq), maxExpAvgSq ? flat(maxExpAvgSq) : null, spec);
  });
}
