// Adam (OPT-7, OPT-8) and AdamW (OPT-9): one update, with weight decay either added to the
// gradient (Adam) or applied to the parameter before the moments (AdamW, decoupled).
import {
  type AdamSpec, compileDynamicArg, compileGuard, compileScalars, fusedAdamStep, type Tensor, zerosLike,
} from '@core/tensor';
import { checkAdamFamily, flag } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, lerp, roundTo, runningSquareAverage_, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** Adam's and AdamW's hyperparameters (PyTorch's, in camelCase). */
export interface AdamOptions {
  /** Learning rate (default 1e-3). */
  lr: number;
  /** Decay rates of the first and second moment averages (default [0.9, 0.999]). */
  betas: [number, number];
  /** Added to the denominator for numerical stability (default 1e-8). */
  eps: number;
  /** L2 penalty (Adam: added to the gradient, default 0) or decoupled decay (AdamW: default 1e-2). */
  weightDecay: number;
  /** Use the running maximum of the second moment (AMSGrad; default false). */
  amsgrad: boolean;
  /** Maximise the objective instead of minimising it (default false). */
  maximize: boolean;
}

/** Moments live on the parameter's device in its dtype; `step` is a plain number. */
export type AdamState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running average of gradients (first moment). */
  expAvg: Tensor;
  /** The running average of squared gradients (second moment). */
  expAvgSq: Tensor;
  /** Only with amsgrad. */
  maxExpAvgSq?: Tensor;
};

const ADAM_STATE: StateFields = { step: count(), expAvg: likeParam(), expAvgSq: likeParam(), maxExpAvgSq: likeParam(false) };

/** Adam's defaults, PyTorch's. */
export const ADAM_DEFAULTS: Readonly<AdamOptions> = Object.freeze({
  lr: 1e-3, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0, amsgrad: false, maximize: false,
});

/** Adam's and AdamW's arguments after `params`: PyTorch's positional ones, then keyword-only `maximize`. */
type AdamArgs = OptimizerArgs<[lr: number, betas: [number, number], eps: number, weightDecay: number, amsgrad: boolean], AdamOptions>;
const ADAM_POSITIONAL = ['lr', 'betas', 'eps', 'weightDecay', 'amsgrad'] as const;

/**
 * Adam (PyTorch's `torch.optim.Adam`), with L2 weight decay added to the gradient; moments kept per parameter, on its device and in its dtype.
 */
export class Adam extends FirstOrderOptimizer<AdamOptions, AdamState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `Adam(params, lr, betas, eps, weight_decay, amsgrad, *, maximize)`: the
   * hyperparameters by position in that order, or by name in a trailing options object.
   */
  constructor(params: ParamsInput<AdamOptions>, ...args: AdamArgs) {
    super(params, optionsFromArgs('Adam', ADAM_DEFAULTS, ADAM_POSITIONAL, args));
  }

  /** AdamW: weight decay scales the parameter instead of adding to the gradient. */
  protected get decoupledWeightDecay(): boolean {
    return false;
  }

  protected checkOptions(o: AdamOptions): void {
    checkAdamFamily(o);
    flag(o.amsgrad, 'amsgrad');
    flag(o.maximize, 'maximize');
  }

  protected stateFields(): StateFields {
    return ADAM_STATE;
  }

  protected updateGroup(group: ParamGroup<AdamOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, weightDecay, amsgrad } = group;
    const decoupled = this.decoupledWeightDecay;
    // In a compiled step, a replay recomputes each spec from the group's options and the next step count.
    compileGuard('Adam options', () => [group.amsgrad, group.maximize, group.weightDecay !== 0]);
    for (const { param, grad } of items) {
      const s = this.stateOf(param, amsgrad);
      const spec = adamSpec(group, this.countStep(s), decoupled);
      compileDynamicArg(spec, () => adamSpec(group, s.step + 1, decoupled));
      // The backend's fused kernel when it has one (one pass, no temporaries), else the same update
      // op by op below (its per-step scalars recomputed by a replay too).
      if (fusedAdamStep({ param, grad, expAvg: s.expAvg, expAvgSq: s.expAvgSq, maxExpAvgSq: amsgrad ? s.maxExpAvgSq : undefined }, spec)) continue;
      const next = () => adamSpec(group, s.step + 1, decoupled);
      compileScalars([
        { value: 1 - lr * weightDecay, compute: () => 1 - group.lr * group.weightDecay },
        { value: -spec.stepSize, compute: () => -next().stepSize },
        { value: spec.biasCorrection2Sqrt, compute: () => next().biasCorrection2Sqrt },
      ], () => this.decomposedUpdate(group, param, grad, s, spec));
    }
  }

  /** The update op by op, for backends without the fused adamw kernel. */
  private decomposedUpdate(group: ParamGroup<AdamOptions>, param: Tensor, grad: Tensor, s: AdamState, spec: AdamSpec): void {
    const { lr, betas: [beta1, beta2], eps, weightDecay, amsgrad, maximize } = group;
    const decoupled = this.decoupledWeightDecay;
    if (decoupled && weightDecay !== 0) param.copy_(up(param).mul(1 - lr * weightDecay));
    const g = gradWithDecay(param, grad, decoupled ? 0 : weightDecay, maximize);
    s.expAvg.copy_(lerp(up(s.expAvg), g, 1 - beta1));
    runningSquareAverage_(s.expAvgSq, g, beta2);
    let v = s.expAvgSq;
    if (amsgrad) {
      const vmax = s.maxExpAvgSq!;
      vmax.copy_(up(vmax).maximum(up(v)));
      v = vmax;
    }
    const { stepSize, biasCorrection2Sqrt: bc2Sqrt } = spec;
    // PyTorch: denom = (v.sqrt() / bc2Sqrt).add_(eps), three ops each rounded to v's dtype.
    const root = roundTo(up(v).sqrt(), v.dtype);
    const denom = roundTo(roundTo(root.div(bc2Sqrt), v.dtype).add(eps), v.dtype);
    param.copy_(up(param).add(up(s.expAvg).mul(-stepSize).div(denom)));
  }

  private stateOf(param: Tensor, amsgrad: boolean): AdamState {
    const s = this.stateFor(param, () => ({ step: 0, expAvg: zerosLike(param), expAvgSq: zerosLike(param) }));
    if (amsgrad && s.maxExpAvgSq === undefined) s.maxExpAvgSq = zerosLike(param);
    return s;
  }
}

/** AdamW's defaults: Adam's with weightDecay 1e-2. */
export const ADAMW_DEFAULTS: Readonly<AdamOptions> = Object.freeze({ ...ADAM_DEFAULTS, weightDecay: 1e-2 });

/** Adam with decoupled weight decay, default 1e-2: `p *= 1 − lr·wd` before the moments (OPT-9). */
export class AdamW extends Adam {
  /** PyTorch's `AdamW(params, lr, betas, eps, weight_decay, amsgrad, *, maximize)`, bound as {@link Adam}'s. */
  constructor(params: ParamsInput<AdamOptions>, ...args: AdamArgs) {
    super(params, optionsFromArgs('AdamW', ADAMW_DEFAULTS, ADAM_POSITIONAL, args));
  }

  protected override get decoupledWeightDecay(): boolean {
    return true;
  }
}

/** One step's scalars, from the group's options now and the step count after the update (f64, as PyTorch's host math). */
function adamSpec(group: ParamGroup<AdamOptions>, step: number, decoupled: boolean): AdamSpec {
  const { lr, betas: [beta1, beta2], eps, weightDecay, maximize } = group;
  return {
    step, lr, beta1, beta2, eps, weightDecay, decoupled, maximize,
    stepSize: lr / (1 - beta1 ** step), biasCorrection2Sqrt: Math.sqrt(1 - beta2 ** step),
  };
}
