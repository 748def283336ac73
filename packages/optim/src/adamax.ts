// Adamax (PyTorch's torch.optim.Adamax): Adam with the infinity norm in place of the second moment.
import { compileScalars, type Tensor, zerosLike } from '@core/tensor';
import { checkAdamFamily, flag } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, runningAverage_, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** Adamax's hyperparameters (PyTorch's, in camelCase). */
export interface AdamaxOptions {
  /** Learning rate (default 2e-3). */
  lr: number;
  /** Decay rates of the first moment and of the infinity norm (default [0.9, 0.999]). */
  betas: [number, number];
  /** Added to |g| before the maximum, for numerical stability (default 1e-8). */
  eps: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** Maximize the objective instead of minimizing it (default false). */
  maximize: boolean;
}

/** Adamax's per-parameter state, on the parameter's device and in its dtype. */
export type AdamaxState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running average of gradients (first moment). */
  expAvg: Tensor;
  /** The exponentially weighted infinity norm. */
  expInf: Tensor;
};

/** Adamax's defaults, PyTorch's. */
export const ADAMAX_DEFAULTS: Readonly<AdamaxOptions> = Object.freeze({
  lr: 2e-3, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0, maximize: false,
});

const ADAMAX_STATE: StateFields = { step: count(), expAvg: likeParam(), expInf: likeParam() };

/**
 * Adamax (PyTorch's `torch.optim.Adamax`): `m = β1·m + (1−β1)·g`, `u = max(β2·u, |g| + eps)`,
 * `p −= lr/(1 − β1^t)·m/u`.
 */
export class Adamax extends FirstOrderOptimizer<AdamaxOptions, AdamaxState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `Adamax(params, lr, betas, eps, weight_decay, foreach, *, maximize)`: the
   * hyperparameters up to `weightDecay` by position in that order, or by name in a trailing options object.
   */
  constructor(params: ParamsInput<AdamaxOptions>, ...args: OptimizerArgs<[lr: number, betas: [number, number], eps: number, weightDecay: number], AdamaxOptions>) {
    super(params, optionsFromArgs('Adamax', ADAMAX_DEFAULTS, ['lr', 'betas', 'eps', 'weightDecay'], args));
  }

  protected checkOptions(o: AdamaxOptions): void {
    checkAdamFamily(o);
    flag(o.maximize, 'maximize');
  }

  protected stateFields(): StateFields {
    return ADAMAX_STATE;
  }

  protected updateGroup(group: ParamGroup<AdamaxOptions>, items: readonly ParamWithGrad[]): void {
    const { betas: [beta1, beta2], eps, weightDecay, maximize } = group;
    // In a compiled step a replay recomputes the bias-corrected lr from lr and the next step count; the other options are guards.
    this.guardCompiledOptions(group);
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, expAvg: zerosLike(param), expInf: zerosLike(param) }));
      const clr = correctedLr(group, this.countStep(s));
      compileScalars([{ value: -clr, compute: () => -correctedLr(group, s.step + 1) }], () => {
        const g = gradWithDecay(param, grad, weightDecay, maximize);
        const { expAvg: m, expInf: u } = s;
        runningAverage_(m, g, beta1);
        u.copy_(up(u).mul(beta2));
        u.copy_(up(u).maximum(roundTo(g.abs().add(eps), grad.dtype)));
        param.copy_(up(param).add(up(m).mul(-clr).div(up(u))));
      });
    }
  }
}

/** Step t's learning rate over the first moment's bias correction: `lr / (1 − β1^t)`. */
function correctedLr(group: AdamaxOptions, step: number): number {
  return group.lr / (1 - group.betas[0] ** step);
}
