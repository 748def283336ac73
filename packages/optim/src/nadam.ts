// NAdam (PyTorch's torch.optim.NAdam): Adam with Nesterov momentum and a momentum schedule
// μ_t = β1·(1 − ½·0.96^(t·ψ)).
import { type Tensor, zerosLike } from '@core/tensor';
import { checkAdamFamily, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, runningAverage_, runningSquareAverage_, up } from './opmath.js';
import { count, likeParam, numberField, type StateFields } from './state-fields.js';

/** NAdam's hyperparameters (PyTorch 1.13's, in camelCase: no maximize). */
export interface NAdamOptions {
  /** Learning rate (default 2e-3). */
  lr: number;
  /** Decay rates of the first and second moment averages (default [0.9, 0.999]). */
  betas: [number, number];
  /** Added to the denominator for numerical stability (default 1e-8). */
  eps: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** ψ in the momentum schedule (default 4e-3). */
  momentumDecay: number;
}

/** NAdam's per-parameter state. */
export type NAdamState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The product μ_1·…·μ_t of the momentum schedule so far (a float64 number). */
  muProduct: number;
  /** The running average of gradients (first moment), on the parameter's device and in its dtype. */
  expAvg: Tensor;
  /** The running average of squared gradients (second moment). */
  expAvgSq: Tensor;
};

/** NAdam's defaults, PyTorch's. */
export const NADAM_DEFAULTS: Readonly<NAdamOptions> = Object.freeze({
  lr: 2e-3, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0, momentumDecay: 4e-3,
});

const NADAM_STATE: StateFields = {
  step: count(),
  muProduct: numberField(true, (v) => v > 0 && v <= 1, 'in (0, 1]'),
  expAvg: likeParam(),
  expAvgSq: likeParam(),
};

/**
 * NAdam (PyTorch's `torch.optim.NAdam`): with `μ_t = β1·(1 − ½·0.96^(t·ψ))`, Adam's moments and
 * `v̂ = v/(1 − β2^t)`, `p −= lr·(1 − μ_t)/(1 − Πμ_{1..t})·g/(√v̂ + eps)
 * + lr·μ_{t+1}/(1 − Πμ_{1..t+1})·m/(√v̂ + eps)`. This is the documented formula, which PyTorch
 * 1.13's foreach path computes; its single-tensor path multiplies μ_t into the second product
 * twice, a slip fixed in PyTorch 2.0.
 */
export class NAdam extends FirstOrderOptimizer<NAdamOptions, NAdamState> {
  /**
   * PyTorch's `NAdam(params, lr, betas, eps, weight_decay, momentum_decay, foreach)`: the
   * hyperparameters up to `momentumDecay` by position in that order, or by name in a trailing options object.
   */
  constructor(
    params: ParamsInput<NAdamOptions>,
    ...args: OptimizerArgs<[lr: number, betas: [number, number], eps: number, weightDecay: number, momentumDecay: number], NAdamOptions>
  ) {
    super(params, optionsFromArgs('NAdam', NADAM_DEFAULTS, ['lr', 'betas', 'eps', 'weightDecay', 'momentumDecay'], args));
  }

  protected checkOptions(o: NAdamOptions): void {
    checkAdamFamily(o);
    nonNegative(o.momentumDecay, `Invalid momentum_decay value: ${o.momentumDecay}`);
  }

  protected stateFields(): StateFields {
    return NADAM_STATE;
  }

  protected updateGroup(group: ParamGroup<NAdamOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, betas: [beta1, beta2], eps, weightDecay, momentumDecay } = group;
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, muProduct: 1, expAvg: zerosLike(param), expAvgSq: zerosLike(param) }));
      s.step += 1;
      const t = s.step;
      const mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentumDecay));
      const muNext = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentumDecay));
      s.muProduct *= mu;
      const muProductNext = s.muProduct * muNext;
      const g = gradWithDecay(param, grad, weightDecay, false);
      const { expAvg: m, expAvgSq: v } = s;
      runningAverage_(m, g, beta1);
      runningSquareAverage_(v, g, beta2);
      const round = (x: Tensor) => roundTo(x, param.dtype);
      const denom = round(round(round(up(v).div(1 - beta2 ** t)).sqrt()).add(eps));
      param.copy_(up(param).add(g.mul((-lr * (1 - mu)) / (1 - s.muProduct)).div(denom)));
      param.copy_(up(param).add(up(m).mul((-lr * muNext) / (1 - muProductNext)).div(denom)));
    }
  }
}
