/**
 * Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS) and
 * learning-rate schedulers with PyTorch's formulas.
 *
 * @module \@core/optim
 */
// @core/optim: torch.optim's optimizers and torch.optim.lr_scheduler's schedulers, with PyTorch's formulas.
export {
  Optimizer, FirstOrderOptimizer, type OptimizerStateDict, type ParamState, type ParamWithGrad, type StateValue,
} from './optimizer.js';
export type { StateField, StateFields } from './state-fields.js';
export type { OptimizerArgs, ParamGroup, ParamGroupInput, ParamsInput, SchedulerGroupFields } from './param-groups.js';
export { SGD, SGD_DEFAULTS, type SGDOptions, type SGDState } from './sgd.js';
export { Adam, AdamW, ADAM_DEFAULTS, ADAMW_DEFAULTS, type AdamOptions, type AdamState } from './adam.js';
export { RMSprop, RMSPROP_DEFAULTS, type RMSpropOptions, type RMSpropState } from './rmsprop.js';
export { Adagrad, ADAGRAD_DEFAULTS, type AdagradOptions, type AdagradState } from './adagrad.js';
export { Adadelta, ADADELTA_DEFAULTS, type AdadeltaOptions, type AdadeltaState } from './adadelta.js';
export { Adamax, ADAMAX_DEFAULTS, type AdamaxOptions, type AdamaxState } from './adamax.js';
export { NAdam, NADAM_DEFAULTS, type NAdamOptions, type NAdamState } from './nadam.js';
export { RAdam, RADAM_DEFAULTS, type RAdamOptions, type RAdamState } from './radam.js';
export { LBFGS, LBFGS_DEFAULTS, type LBFGSOptions, type LBFGSState } from './lbfgs.js';
export {
  LRScheduler, StepLR, MultiStepLR, ExponentialLR, ConstantLR, LinearLR, CosineAnnealingLR, LambdaLR, MultiplicativeLR,
  type SchedulableGroup, type SchedulableOptimizer, type SchedulerArgs, type SchedulerOptions, type SchedulerStateDict, type SchedulerValue,
  type StepLROptions, type MultiStepLROptions, type ExponentialLROptions, type ConstantLROptions, type LinearLROptions,
  type CosineAnnealingLROptions, type LambdaLROptions, type LambdaSchedulerStateDict, type LrLambda,
} from './lr-scheduler.js';
export {
  CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts, type CyclicLROptions, type OneCycleLROptions,
  type CosineAnnealingWarmRestartsOptions, type ScaleFn, type CyclicLRHyperparameters, type OneCycleLRHyperparameters,
  type CosineAnnealingWarmRestartsHyperparameters,
} from './lr-scheduler-cyclic.js';
export {
  SequentialLR, ChainedScheduler, type ChainableScheduler, type CombinedSchedulerStateDict, type SequentialLROptions,
  type SequentialLRStateDict,
} from './lr-scheduler-combined.js';
export { ReduceLROnPlateau, type ReduceLROnPlateauOptions, type ReduceLROnPlateauStateDict } from './reduce-lr-on-plateau.js';
