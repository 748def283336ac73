// RAdam (PyTorch's torch.optim.RAdam): Adam whose adaptive step is switched on, and scaled by a
// rectification term, once the variance of the adaptive learning rate is tractable (ρ_t > 5).
import { type Tensor, zerosLike } from '@core/tensor';
import { checkAdamFamily } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, runningAverage_, runningSquareAverage_, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** RAdam's hyperparameters (PyTorch 1.13's, in camelCase: no maximize). */
export interface RAdamOptions {
  /** Learning rate (default 1e-3). */
  lr: number;
  /** Decay rates of the first and second moment averages (default [0.9, 0.999]). */
  betas: [number, number];
  /** Added to the denominator for numerical stability (default 1e-8). */
  eps: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
}

/** RAdam's per-parameter state, on the parameter's device and in its dtype. */
export type RAdamState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running average of gradients (first moment). */
  expAvg: Tensor;
  /** The running average of squared gradients (second moment). */
  expAvgSq: Tensor;
};

/** RAdam's defaults, PyTorch's. */
export const RADAM_DEFAULTS: Readonly<RAdamOptions> = Object.freeze({
  lr: 1e-3, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0,
});

const RADAM_STATE: StateFields = { step: count(), expAvg: likeParam(), expAvgSq: likeParam() };

/**
 * RAdam (PyTorch's `torch.optim.RAdam`): Adam's moments, `m̂ = m/(1 − β1^t)`,
 * `ρ∞ = 2/(1 − β2) − 1`, `ρ_t = ρ∞ − 2t·β2^t/(1 − β2^t)`; if ρ_t > 5,
 * `p −= lr·m̂·r_t·√(1 − β2^t)/(√v + eps)` with `r_t = √((ρ_t − 4)(ρ_t − 2)ρ∞/((ρ∞ − 4)(ρ∞ − 2)ρ_t))`,
 * else `p −= lr·m̂`.
 */
export class RAdam extends FirstOrderOptimizer<RAdamOptions, RAdamState> {
  /**
   * PyTorch's `RAdam(params, lr, betas, eps, weight_decay, foreach)`: the hyperparameters up to
   * `weightDecay` by position in that order, or by name in a trailing options object.
   */
  constructor(params: ParamsInput<RAdamOptions>, ...args: OptimizerArgs<[lr: number, betas: [number, number], eps: number, weightDecay: number], RAdamOptions>) {
    super(params, optionsFromArgs('RAdam', RADAM_DEFAULTS, ['lr', 'betas', 'eps', 'weightDecay'], args));
  }

  protected checkOptions(o: RAdamOptions): void {
    checkAdamFamily(o);
  }

  protected stateFields(): StateFields {
    return RADAM_STATE;
  }

  protected updateGroup(group: ParamGroup<RAdamOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, betas: [beta1, beta2], eps, weightDecay } = group;
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, expAvg: zerosLike(param), expAvgSq: zerosLike(param) }));
      s.step += 1;
      const t = s.step;
      const bc1 = 1 - beta1 ** t;
      const bc2 = 1 - beta2 ** t;
      const g = gradWithDecay(param, grad, weightDecay, false);
      const { expAvg: m, expAvgSq: v } = s;
      runningAverage_(m, g, beta1);
      runningSquareAverage_(v, g, beta2);
      const round = (x: Tensor) => roundTo(x, param.dtype);
      const step = round(round(up(m).div(bc1)).mul(lr));
      const rhoInf = 2 / (1 - beta2) - 1;
      const rhoT = rhoInf - (2 * t * beta2 ** t) / bc2;
      if (rhoT > 5) {
        const rect = Math.sqrt(((rhoT - 4) * (rhoT - 2) * rhoInf) / ((rhoInf - 4) * (rhoInf - 2) * rhoT));
        // PyTorch: sqrt(bc2) / (v.sqrt() + eps), a scalar over a tensor: reciprocal, then times the scalar.
        const adaptiveLr = round(round(round(round(up(v).sqrt()).add(eps)).reciprocal()).mul(Math.sqrt(bc2)));
        param.copy_(up(param).sub(round(round(step.mul(adaptiveLr)).mul(rect))));
      } else {
        param.copy_(up(param).sub(step));
      }
    }
  }
}
