// RMSprop (PyTorch's torch.optim.RMSprop): divide the gradient by a running RMS of past gradients,
// optionally centered (minus the squared running mean) and with momentum.
import { compileDynamicArg, compileScalars, fusedRMSpropStep, type FusedRMSpropTensors, type RMSpropSpec, type Tensor, zerosLike } from '@core/tensor';
import { flag, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, runningAverage_, runningSquareAverage_, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** RMSprop's hyperparameters (PyTorch's, in camelCase). */
export interface RMSpropOptions {
  /** Learning rate (default 1e-2). */
  lr: number;
  /** Smoothing constant of the running averages (default 0.99). */
  alpha: number;
  /** Added to the denominator for numerical stability (default 1e-8). */
  eps: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** Momentum factor (default 0). */
  momentum: number;
  /** Normalize by an estimate of the gradient's variance instead of its second moment (default false). */
  centered: boolean;
  /** Maximize the objective instead of minimizing it (default false). */
  maximize: boolean;
}

/** RMSprop's per-parameter state, on the parameter's device and in its dtype. */
export type RMSpropState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running average of squared gradients. */
  squareAvg: Tensor;
  /** Only with momentum > 0: the running update. */
  momentumBuffer?: Tensor;
  /** Only when centered: the running average of gradients. */
  gradAvg?: Tensor;
};

/** RMSprop's defaults, PyTorch's. */
export const RMSPROP_DEFAULTS: Readonly<RMSpropOptions> = Object.freeze({
  lr: 1e-2, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false,
});

const RMSPROP_STATE: StateFields = { step: count(), squareAvg: likeParam(), momentumBuffer: likeParam(false), gradAvg: likeParam(false) };

/**
 * RMSprop (PyTorch's `torch.optim.RMSprop`): `v = α·v + (1−α)·g²`, then `p −= lr·g/(√ṽ + eps)`
 * where ṽ is v, or `v − ḡ²` when centered (ḡ the running mean of g); with momentum the step goes
 * through a buffer `b = μ·b + g/(√ṽ + eps)` and `p −= lr·b`.
 */
export class RMSprop extends FirstOrderOptimizer<RMSpropOptions, RMSpropState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `RMSprop(params, lr, alpha, eps, weight_decay, momentum, centered, foreach, maximize)`:
   * the hyperparameters up to `centered` by position in that order, or by name in a trailing
   * options object. `maximize` comes after `foreach` there, which this library does not take, so
   * it is given by name.
   */
  constructor(
    params: ParamsInput<RMSpropOptions>,
    ...args: OptimizerArgs<[lr: number, alpha: number, eps: number, weightDecay: number, momentum: number, centered: boolean], RMSpropOptions>
  ) {
    super(params, optionsFromArgs('RMSprop', RMSPROP_DEFAULTS, ['lr', 'alpha', 'eps', 'weightDecay', 'momentum', 'centered'], args));
  }

  protected checkOptions(o: RMSpropOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    nonNegative(o.eps, `Invalid epsilon value: ${o.eps}`);
    nonNegative(o.momentum, `Invalid momentum value: ${o.momentum}`);
    nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
    nonNegative(o.alpha, `Invalid alpha value: ${o.alpha}`);
    flag(o.centered, 'centered');
    flag(o.maximize, 'maximize');
  }

  protected stateFields(): StateFields {
    return RMSPROP_STATE;
  }

  protected updateGroup(group: ParamGroup<RMSpropOptions>, items: readonly ParamWithGrad[]): void {
    // In a compiled step a replay reads lr anew (the fused kernel's spec, or the decomposition's
    // -lr); the other options are guards.
    this.guardCompiledOptions(group);
    const { momentum, centered } = group;
    for (const { param, grad } of items) {
      const s = this.stateFor(param, () => ({ step: 0, squareAvg: zerosLike(param) }));
      this.countStep(s);
      if (momentum > 0) s.momentumBuffer ??= zerosLike(param);
      if (centered) s.gradAvg ??= zerosLike(param);
      const spec = rmspropSpec(group);
      compileDynamicArg(spec, () => rmspropSpec(group));
      const tensors = { param, grad, squareAvg: s.squareAvg, momentumBuffer: momentum > 0 ? s.momentumBuffer : undefined, gradAvg: centered ? s.gradAvg : undefined };
      // The backend's fused kernel when it has one (one pass, no temporaries), else op by op.
      if (fusedRMSpropStep(tensors, spec)) continue;
      compileScalars([{ value: -group.lr, compute: () => -group.lr }], () => decomposedUpdate(group, tensors));
    }
  }
}

/** One step's options, as the fused kernel takes them. */
function rmspropSpec({ lr, alpha, eps, weightDecay, momentum, centered, maximize }: ParamGroup<RMSpropOptions>): RMSpropSpec {
  return { lr, alpha, eps, weightDecay, momentum, centered, maximize };
}

/** The update op by op, for backends without the fused rmsprop kernel (and half types). */
function decomposedUpdate(group: ParamGroup<RMSpropOptions>, t: FusedRMSpropTensors): void {
  const { lr, alpha, eps, weightDecay, maximize } = group;
  const { param, grad, squareAvg: sq, momentumBuffer: buf, gradAvg: mean } = t;
  const dtype = param.dtype;
  const g = gradWithDecay(param, grad, weightDecay, maximize);
  runningSquareAverage_(sq, g, alpha);
  let variance = up(sq);
  if (mean) {
    runningAverage_(mean, g, alpha);
    variance = roundTo(variance.sub(up(mean).mul(up(mean))), dtype);
  }
  const avg = roundTo(roundTo(variance.sqrt(), dtype).add(eps), dtype);
  if (buf) {
    buf.copy_(up(buf).mul(group.momentum));
    buf.copy_(up(buf).add(g.div(avg)));
    param.copy_(up(param).add(up(buf), -lr));
  } else {
    param.copy_(up(param).add(g.mul(-lr).div(avg)));
  }
}
