/**
 * Tensors with PyTorch's semantics: devices and the same-device rule, dtypes and type promotion,
 * strided views, factories, ops, autograd, autocast and GradScaler, and the backend contract that
 * compute backends implement.
 *
 * @module \@core/tensor
 */
// @core/tensor: devices, dtypes, tensors, dispatch and the backend contract.
// First: gives Tensor its methods (ops/methods.ts), before anything can make a tensor.
import './ops/methods.js';
export { Device, device, cpu, type DeviceLike } from './device/device.js';
export { getDefaultDevice, setDefaultDevice, bestDevice } from './device/default-device.js';
export {
  type DType, type DTypeName, type DTypeCategory, type HostArray, type HostArrayByDType, type FInfo,
  float32, float16, bfloat16, int32, bool, float64, DTYPES, finfo, hostArrayFor,
} from './dtype/dtype.js';
export { resultType, promoteTypes, canCast } from './dtype/promotion.js';
export {
  float32ToFloat16Bits, float16BitsToNumber, float32ToBFloat16Bits, bfloat16BitsToNumber,
  roundToFloat16, roundToBFloat16,
} from './dtype/half.js';
export {
  TensorError, DeviceMismatchError, DTypeError, ShapeError, BackendUnavailableError, DeviceStringError, ValueError, IndexError,
  type DeviceMismatchDetails,
} from './errors/errors.js';
export * from './backend/contract.js';
export { isNonOverlapping } from './tensor/shape.js';
export {
  registerBackend, listBackends, getBackend, isAvailable, availableDevices, loadedCoreCopies, type DeviceAvailability,
} from './backend/registry.js';
export { Tensor, type Scalar, type TensorOrScalar, type ToOptions } from './tensor/tensor.js';
export type { NestedArray, DataArray } from './tensor/transfer.js';
export { setCreationSiteTracking, withCreationSite } from './tensor/site.js';
export { checkSameDevice } from './dispatch/device-rule.js';
export { checkCompute } from './dispatch/run.js';
export { valuesNow } from './tensor/host-data.js';
export { bindArguments } from './ops/arguments.js';
export {
  tensor, zeros, ones, full, empty, eye, arange, linspace, rand, randn, randint,
  zerosLike, onesLike, fullLike, emptyLike, randLike, randnLike, randintLike,
  type FactoryOptions, type RandomOptions, type TensorData,
} from './ops/creation.js';
export { Generator, manualSeed, defaultGenerator } from './random/generator.js';
export { normal, randperm, type NormalOptions } from './ops/sampling.js';
export type { IndexSpec, IndexItem, IndexList } from './ops/advanced-indexing.js';
export type { UniqueResult, UniqueOptions } from './ops/data-dependent.js';
export { cat, stack, pad } from './ops/join.js';
export { where } from './ops/elementwise.js';
export { einsum } from './ops/einsum.js';
export { linalg, type VectorNormOptions } from './ops/linalg-namespace.js';
// The function forms of composite ops (`logsumexp(x, dim)`) and the TensorOps interface, generated from the op table.
export * from './generated/tensor-methods.js';
export type { TensorApi } from './ops/methods.js';
export {
  OP_TABLE, type OpName, type OpEntry, type EntryBase, type UnaryEntry, type BinaryEntry, type CompareEntry, type CompositeEntry,
  type ImplementedEntry, type KernelFamily, type PartialGrad, type BinaryGrad, type AutocastClass, type AutocastRule, type DTypeRule, type CompositeOp,
} from './ops/table.js';
export { setFusedKernelsEnabled, fusedKernelsEnabled } from './dispatch/fused.js';
export { fusedCrossEntropy, type FusedCrossEntropyOptions } from './ops/cross-entropy.js';
export { fusedScaledDotProductAttention } from './ops/attention.js';
export { fusedAdamStep, type FusedAdamTensors } from './ops/adam.js';
export { fusedMaxPool2d, type MaxPool2dResult } from './ops/max-pool.js';
export { matmulInFloat32, type MatmulInFloat32Options } from './ops/linalg.js';
export { fusedAdadeltaStep, fusedRMSpropStep, type FusedAdadeltaTensors, type FusedRMSpropTensors } from './ops/fused-update.js';
export type { ValuesIndices } from './ops/reduce.js';
export { memoryStats } from './tensor/memory.js';
export { freeingTemporaries, releaseWithGraph } from './tensor/temporaries.js';
export { reclaimsSynchronously } from './tensor/reclaim.js';
export { noGrad, enableGrad, isGradEnabled, setGradEnabled, inferenceMode, isInferenceModeEnabled } from './autograd/grad-mode.js';
export { gradcheck, gradgradcheck, type GradcheckOptions, type GradcheckResult } from './autograd/gradcheck.js';
export type { BackwardOptions } from './autograd/engine.js';
export type { GradHookFn } from './autograd/node.js';
export type { RemovableHandle } from './autograd/hooks.js';
/**
 * PyTorch's `torch.autograd`: `autograd.grad` (gradients returned instead of accumulated, with
 * `createGraph` for higher-order derivatives), `autograd.Function` (custom differentiable ops),
 * `gradcheck` and `gradgradcheck`.
 */
export * as autograd from './autograd/autograd.js';
export {
  autocast, autocastOp, AutocastRegion, isAutocastEnabled, getAutocastDtype, isAutocastCacheEnabled,
  setAutocastCacheEnabled, clearAutocastCache, registerAutocastPolicy, autocastPolicy, type AutocastOptions,
} from './amp/autocast.js';
export type { AutocastPolicyTable } from './amp/policies.js';
export { ampConfig, ampSupports, type AmpConfig, type AmpMode } from './amp/amp-config.js';
export { detectAnomaly, AnomalyError, type AnomalyReport } from './amp/anomaly.js';
export { StabilityGuard, type StabilityGuardOptions, type GuardEvent, type ObserveOptions } from './amp/stability-guard.js';
export { compile, type CompileOptions, type CompiledFunction, type CompileExplanation, type CompiledProgramInfo } from './compile/compile.js';
export { CompileError, type CompileErrorCode } from './compile/state.js';
export {
  isCompiling, compileScalars, compileDynamicArg, compileHostEffect, compileGuard, compileAllowedRead, compileBranch, compileBranchEnd, compileUnsupported,
} from './compile/participants.js';
export { GradScaler, AmpError, ampForeachNonFiniteCheckAndUnscale_, ampUpdateScale_, type GradScalerOptions, type GradScalerStateDict, type ScalableOptimizer } from './amp/grad-scaler.js';
