// Optimizer updates through a backend's fused kernel: the checks every such kernel needs (one
// floating dtype, device and numel, contiguous storage), the call on flattened refs, and the
// version bumps of the tensors it wrote. Adam's, Adadelta's and RMSprop's steps all go through it.
import type { AdadeltaSpec, FusedKernels, RMSpropSpec, TensorRef } from '../backend/contract.js';
import type { DTypeName } from '../dtype/dtype.js';
import { backendOf, ref } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { fusedKernel } from '../dispatch/fused.js';

type UpdateKernel = 'adamw' | 'adadelta' | 'rmsprop';

/**
 * Run the fused update `name` on `param`'s backend: `call` receives the kernel and a flattening of
 * the tensors to pass. `state` are the tensors it updates besides `param` (null for an absent
 * optional one); `grad` is only read. Returns false, touching nothing, when the kernel does not
 * apply: no such kernel or fusion disabled, a dtype outside `dtypes` (any floating dtype the
 * backend computes in when omitted), or tensors of mixed dtypes, devices or sizes, or not contiguous.
 */
export function fusedUpdate<K extends UpdateKernel>(
  name: K,
  param: Tensor,
  grad: Tensor,
  state: readonly (Tensor | null | undefined)[],
  call: (kernel: FusedKernels<unknown>[K], flat: (t: Tensor) => TensorRef<unknown>) => void,
  dtypes?: readonly DTypeName[],
): boolean {
  const written = [param, ...state.filter((t): t is Tensor => t != null)];
  if (!param.dtype.isFloatingPoint || param.numel() === 0 || (dtypes && !dtypes.includes(param.dtype.name))) return false;
  for (const t of [grad, ...written]) {
    if (t.dtype !== param.dtype || !t.device.equals(param.device) || t.numel() !== param.numel() || !t.isContiguous()) return false;
  }
  const backend = backendOf(param.device);
  if (!backend.capabilities.dtypes[param.dtype.name]?.compute) return false;
  const kernel = fusedKernel(backend, name);
  if (!kernel) return false;
  call(kernel, (t) => ({ ...ref(t), shape: [t.numel()], strides: [1] }));
  for (const t of written) t._storage.bumpVersion();
  return true;
}

/** The dtypes the Adadelta and RMSprop kernels take (the contract's): the others decompose. */
const SINGLE_OR_DOUBLE: readonly DTypeName[] = ['float32', 'float64'];

/** The state tensors of one parameter, as @core/optim's Adadelta keeps them. */
export interface FusedAdadeltaTensors {
  /** The parameter, updated in place. */
  readonly param: Tensor;
  /** Its gradient (read only). */
  readonly grad: Tensor;
  /** The running average of squared gradients, updated in place. */
  readonly squareAvg: Tensor;
  /** The running average of squared updates, updated in place. */
  readonly accDelta: Tensor;
}

/**
 * Run one Adadelta update (the contract's `FusedKernels.adadelta`) on the parameter's backend, in
 * place. Returns false, touching nothing, when the fused kernel does not apply (no kernel, fusion
 * disabled, a dtype other than float32/float64, mixed dtypes or devices, non-contiguous storage);
 * the caller then runs its decomposition.
 * @internal Called by \@core/optim.
 */
export function fusedAdadeltaStep(tensors: FusedAdadeltaTensors, spec: AdadeltaSpec): boolean {
  const { param, grad, squareAvg, accDelta } = tensors;
  return fusedUpdate('adadelta', param, grad, [squareAvg, accDelta], (kernel, flat) => {
    kernel(flat(param), flat(grad), flat(squareAvg), flat(accDelta), spec);
  }, SINGLE_OR_DOUBLE);
}

/** The state tensors of one parameter, as @core/optim's RMSprop keeps them. */
export interface FusedRMSpropTensors {
  /** The parameter, updated in place. */
  readonly param: Tensor;
  /** Its gradient (read only). */
  readonly grad: Tensor;
  /** The running average of squared gradients, updated in place. */
  readonly squareAvg: Tensor;
  /** The momentum buffer, exactly when the spec's momentum is above 0; updated in place. */
  readonly momentumBuffer?: Tensor | undefined;
  /** The running average of gradients, exactly when the spec is centered; updated in place. */
  readonly gradAvg?: Tensor | undefined;
}

/**
 * Run one RMSprop update (the contract's `FusedKernels.rmsprop`) on the parameter's backend, in
 * place. Returns false, touching nothing, when the fused kernel does not apply (as
 * {@link fusedAdadeltaStep}); the caller then runs its decomposition. Throws a TypeError when the
 * optional buffers do not match the spec (a momentum buffer exactly when momentum > 0, a gradient
 * average exactly when centered).
 * @internal Called by \@core/optim.
 */
export function fusedRMSpropStep(tensors: FusedRMSpropTensors, spec: RMSpropSpec): boolean {
  const { param, grad, squareAvg, momentumBuffer, gradAvg } = tensors;
  if ((momentumBuffer !== undefined) !== spec.momentum > 0 || (gradAvg !== undefined) !== spec.centered) {
    throw new TypeError('fusedRMSpropStep: pass momentumBuffer exactly when spec.momentum > 0 and gradAvg exactly when spec.centered');
  }
  return fusedUpdate('rmsprop', param, grad, [squareAvg, momentumBuffer, gradAvg], (kernel, flat) => {
    kernel(flat(param), flat(grad), flat(squareAvg), momentumBuffer ? flat(momentumBuffer) : null, gradAvg ? flat(gradAvg) : null, spec);
  }, SINGLE_OR_DOUBLE);
}
