// NAdam (PyTorch's torch.optim.NAdam): Adam with Nesterov momentum and a momentum schedule
// μ_t = β1·(1 − ½·0.96^(t·ψ)).
import { compileHostEffect, compileScalars, type Tensor, zerosLike } from '@core/tensor';
import { checkAdamFamily, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { roundTo, up, updateMoments_ } from './opmath.js';
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
  protected override readonly replaysCompiled = true;
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
    const { eps, weightDecay } = group;
    // In a compiled step a replay recomputes the step's scalars from lr, the next step count and
    // the momentum product, which it advances as eager does; the other options are guards.
    this.guardCompiledOptions(group);
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, muProduct: 1, expAvg: zerosLike(param), expAvgSq: zerosLike(param) }));
      const k = nadamScalars(group, this.countStep(s), s.muProduct);
      s.muProduct = k.muProduct;
      compileHostEffect(() => {
        s.muProduct = nadamScalars(group, s.step, s.muProduct).muProduct; // after the step count's effect
      });
      const next = () => nadamScalars(group, s.step + 1, s.muProduct);
      compileScalars([
        { value: k.biasCorrection2, compute: () => next().biasCorrection2 },
        { value: k.gradStep, compute: () => next().gradStep },
        { value: k.momentumStep, compute: () => next().momentumStep },
      ], () => {
        const { expAvg: m, expAvgSq: v } = s;
        const g = updateMoments_(param, grad, m, v, group.betas, weightDecay);
        const round = (x: Tensor) => roundTo(x, param.dtype);
        const denom = round(round(round(up(v).div(k.biasCorrection2)).sqrt()).add(eps));
        param.copy_(up(param).add(g.mul(k.gradStep).div(denom)));
        param.copy_(up(param).add(up(m).mul(k.momentumStep).div(denom)));
      });
    }
  }
}

/**
 * Step t's host scalars (f64, as PyTorch's): the momentum coefficients μ_t and μ_{t+1}, the product
 * of μ up to t (from `muProduct`, the product up to t − 1), and the coefficients of the gradient
 * and momentum terms.
 */
function nadamScalars(group: NAdamOptions, t: number, muProduct: number) {
  const { lr, betas: [beta1, beta2], momentumDecay } = group;
  const mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentumDecay));
  const muNext = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentumDecay));
  const product = muProduct * mu;
  return {
    muProduct: product,
    biasCorrection2: 1 - beta2 ** t,
    gradStep: (-lr * (1 - mu)) / (1 - product),
    momentumStep: (-lr * muNext) / (1 - product * muNext),
  };
}
