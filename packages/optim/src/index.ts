/**
 * Optimizers (SGD, Adam, AdamW) and learning-rate schedulers (StepLR, CosineAnnealingLR) with
 * PyTorch's formulas.
 *
 * @module \@core/optim
 */
// @core/optim: optimizers (SGD, Adam, AdamW) and learning-rate schedulers with PyTorch's formulas.
export {
  Optimizer, type OptimizerStateDict, type ParamState, type ParamWithGrad, type StateValue,
} from './optimizer.js';
export type { ParamGroup, ParamGroupInput, ParamsInput } from './param-groups.js';
export { SGD, SGD_DEFAULTS, type SGDOptions, type SGDState } from './sgd.js';
export { Adam, AdamW, ADAM_DEFAULTS, ADAMW_DEFAULTS, type AdamOptions, type AdamState } from './adam.js';
export {
  LRScheduler, StepLR, CosineAnnealingLR, type SchedulableOptimizer, type SchedulerOptions, type SchedulerStateDict,
  type StepLROptions, type CosineAnnealingLROptions,
} from './lr-scheduler.js';
