// Adadelta (PyTorch's torch.optim.Adadelta): steps scaled by the ratio of two running RMS values,
// of past updates and of past gradients.
import { type AdadeltaSpec, compileDynamicArg, compileScalars, fusedAdadeltaStep, type Tensor, ValueError, zerosLike } from '@core/tensor';
import { flag, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, runningSquareAverage_, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** Adadelta's hyperparameters (PyTorch's, in camelCase). */
export interface AdadeltaOptions {
  /** Scale of each step (default 1.0). */
  lr: number;
  /** Decay rate of the running averages, in [0, 1] (default 0.9). */
  rho: number;
  /** Added inside both square roots for numerical stability (default 1e-6). */
  eps: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** Maximize the objective instead of minimizing it (default false). */
  maximize: boolean;
}

/** Adadelta's per-parameter state, on the parameter's device and in its dtype. */
export type AdadeltaState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running average of squared gradients. */
  squareAvg: Tensor;
  /** The running average of squared updates. */
  accDelta: Tensor;
};

/** Adadelta's defaults, PyTorch's. */
export const ADADELTA_DEFAULTS: Readonly<AdadeltaOptions> = Object.freeze({
  lr: 1.0, rho: 0.9, eps: 1e-6, weightDecay: 0, maximize: false,
});

const ADADELTA_STATE: StateFields = { step: count(), squareAvg: likeParam(), accDelta: likeParam() };

/**
 * Adadelta (PyTorch's `torch.optim.Adadelta`): `v = ρ·v + (1−ρ)·g²`,
 * `Δ = √(u + eps)/√(v + eps)·g`, `u = ρ·u + (1−ρ)·Δ²`, `p −= lr·Δ`.
 */
export class Adadelta extends FirstOrderOptimizer<AdadeltaOptions, AdadeltaState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `Adadelta(params, lr, rho, eps, weight_decay, foreach, *, maximize)`: the
   * hyperparameters up to `weightDecay` by position in that order, or by name in a trailing options object.
   */
  constructor(params: ParamsInput<AdadeltaOptions>, ...args: OptimizerArgs<[lr: number, rho: number, eps: number, weightDecay: number], AdadeltaOptions>) {
    super(params, optionsFromArgs('Adadelta', ADADELTA_DEFAULTS, ['lr', 'rho', 'eps', 'weightDecay'], args));
  }

  protected checkOptions(o: AdadeltaOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    if (typeof o.rho !== 'number' || !(o.rho >= 0 && o.rho <= 1)) throw new ValueError(`Invalid rho value: ${o.rho}`);
    nonNegative(o.eps, `Invalid epsilon value: ${o.eps}`);
    nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
    flag(o.maximize, 'maximize');
  }

  protected stateFields(): StateFields {
    return ADADELTA_STATE;
  }

  protected updateGroup(group: ParamGroup<AdadeltaOptions>, items: readonly ParamWithGrad[]): void {
    // In a compiled step a replay reads lr anew (the fused kernel's spec, or the decomposition's
    // -lr); the other options are guards.
    this.guardCompiledOptions(group);
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, squareAvg: zerosLike(param), accDelta: zerosLike(param) }));
      this.countStep(s);
      const spec = adadeltaSpec(group);
      compileDynamicArg(spec, () => adadeltaSpec(group));
      // The backend's fused kernel when it has one (one pass, no temporaries), else op by op.
      if (fusedAdadeltaStep({ param, grad, squareAvg: s.squareAvg, accDelta: s.accDelta }, spec)) continue;
      compileScalars([{ value: -group.lr, compute: () => -group.lr }], () => decomposedUpdate(group, param, grad, s));
    }
  }
}

/** One step's options, as the fused kernel takes them. */
function adadeltaSpec({ lr, rho, eps, weightDecay, maximize }: ParamGroup<AdadeltaOptions>): AdadeltaSpec {
  return { lr, rho, eps, weightDecay, maximize };
}

/** The update op by op, for backends without the fused adadelta kernel (and half types). */
function decomposedUpdate(group: ParamGroup<AdadeltaOptions>, param: Tensor, grad: Tensor, s: AdadeltaState): void {
  const { lr, rho, eps, weightDecay, maximize } = group;
  const round = (t: Tensor) => roundTo(t, param.dtype);
  const g = gradWithDecay(param, grad, weightDecay, maximize);
  const { squareAvg: v, accDelta: u } = s;
  runningSquareAverage_(v, g, rho);
  const std = round(round(up(v).add(eps)).sqrt());
  const delta = round(round(round(round(up(u).add(eps)).sqrt()).div(std)).mul(g));
  runningSquareAverage_(u, delta, rho);
  param.copy_(up(param).add(delta, -lr));
}
