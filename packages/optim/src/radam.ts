// RAdam (PyTorch's torch.optim.RAdam): Adam whose adaptive step is switched on, and scaled by a
// rectification term, once the variance of the adaptive learning rate is tractable (ρ_t > 5).
import { compileGuard, compileScalars, type Tensor, zerosLike } from '@core/tensor';
import { checkAdamFamily } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { roundTo, up, updateMoments_ } from './opmath.js';
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
  protected override readonly replaysCompiled = true;
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
    const { eps, weightDecay } = group;
    // In a compiled step a replay recomputes the step's scalars from lr and the next step count;
    // whether the step is rectified is a guard (it changes the kernels: one retrace when it turns
    // on), as are the other options.
    this.guardCompiledOptions(group);
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, expAvg: zerosLike(param), expAvgSq: zerosLike(param) }));
      compileGuard('RAdam rectified', () => radamScalars(group, s.step + 1).rect !== undefined);
      const k = radamScalars(group, this.countStep(s));
      const next = () => radamScalars(group, s.step + 1);
      compileScalars([
        { value: k.biasCorrection1, compute: () => next().biasCorrection1 },
        { value: k.lr, compute: () => next().lr },
        { value: k.biasCorrection2Sqrt, compute: () => next().biasCorrection2Sqrt },
        ...(k.rect === undefined ? [] : [{ value: k.rect, compute: () => next().rect! }]),
      ], () => {
        const { expAvg: m, expAvgSq: v } = s;
        updateMoments_(param, grad, m, v, group.betas, weightDecay);
        const round = (x: Tensor) => roundTo(x, param.dtype);
        const step = round(round(up(m).div(k.biasCorrection1)).mul(k.lr));
        if (k.rect !== undefined) {
          // PyTorch: sqrt(bc2) / (v.sqrt() + eps), a scalar over a tensor: reciprocal, then times the scalar.
          const adaptiveLr = round(round(round(round(up(v).sqrt()).add(eps)).reciprocal()).mul(k.biasCorrection2Sqrt));
          param.copy_(up(param).sub(round(round(step.mul(adaptiveLr)).mul(k.rect))));
        } else {
          param.copy_(up(param).sub(step));
        }
      });
    }
  }
}

/**
 * Step t's host scalars (f64, as PyTorch's): the bias corrections, lr, and the variance
 * rectification term, undefined while the variance estimate is not yet tractable (ρ_t ≤ 5).
 */
function radamScalars(group: RAdamOptions, t: number) {
  const { lr, betas: [beta1, beta2] } = group;
  const bc2 = 1 - beta2 ** t;
  const rhoInf = 2 / (1 - beta2) - 1;
  const rhoT = rhoInf - (2 * t * beta2 ** t) / bc2;
  return {
    lr,
    biasCorrection1: 1 - beta1 ** t,
    biasCorrection2Sqrt: Math.sqrt(bc2),
    rect: rhoT > 5 ? Math.sqrt(((rhoT - 4) * (rhoT - 2) * rhoInf) / ((rhoInf - 4) * (rhoInf - 2) * rhoT)) : undefined,
  };
}
