// Adagrad (PyTorch's torch.optim.Adagrad): divide the gradient by the root of the running sum of
// squared gradients, with a learning rate that decays by step.
import { compileScalars, fullLike, type Tensor } from '@core/tensor';
import { flag, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamGroupInput, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, up } from './opmath.js';
import { count, likeParam, type StateFields } from './state-fields.js';

/** Adagrad's hyperparameters (PyTorch's, in camelCase). */
export interface AdagradOptions {
  /** Learning rate (default 1e-2). */
  lr: number;
  /** Learning-rate decay: step t uses `lr / (1 + (t − 1)·lrDecay)` (default 0). */
  lrDecay: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** The value the sum of squared gradients starts from (default 0). */
  initialAccumulatorValue: number;
  /** Added to the denominator for numerical stability (default 1e-10). */
  eps: number;
  /** Maximize the objective instead of minimizing it (default false). */
  maximize: boolean;
}

/** Adagrad's per-parameter state, made for every parameter when its group is added, as PyTorch does. */
export type AdagradState = {
  /** Updates applied to this parameter so far. */
  step: number;
  /** The running sum of squared gradients, on the parameter's device and in its dtype. */
  sum: Tensor;
};

/** Adagrad's defaults, PyTorch's. */
export const ADAGRAD_DEFAULTS: Readonly<AdagradOptions> = Object.freeze({
  lr: 1e-2, lrDecay: 0, weightDecay: 0, initialAccumulatorValue: 0, eps: 1e-10, maximize: false,
});

const ADAGRAD_STATE: StateFields = { step: count(), sum: likeParam() };

/**
 * Adagrad (PyTorch's `torch.optim.Adagrad`): `sum += g²`, then `p −= clr·g/(√sum + eps)` with
 * `clr = lr / (1 + (t − 1)·lrDecay)` at step t. Unlike the other optimizers, the state of every
 * parameter exists from the start (`sum` filled with `initialAccumulatorValue`).
 */
export class Adagrad extends FirstOrderOptimizer<AdagradOptions, AdagradState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `Adagrad(params, lr, lr_decay, weight_decay, initial_accumulator_value, eps, foreach, *, maximize)`:
   * the hyperparameters up to `eps` by position in that order, or by name in a trailing options object.
   */
  constructor(
    params: ParamsInput<AdagradOptions>,
    ...args: OptimizerArgs<[lr: number, lrDecay: number, weightDecay: number, initialAccumulatorValue: number, eps: number], AdagradOptions>
  ) {
    super(params, optionsFromArgs('Adagrad', ADAGRAD_DEFAULTS, ['lr', 'lrDecay', 'weightDecay', 'initialAccumulatorValue', 'eps'], args));
  }

  /** Adds the group and makes its parameters' state: step 0, sum filled with the group's initialAccumulatorValue. */
  override addParamGroup(group: ParamGroupInput<AdagradOptions>): void {
    super.addParamGroup(group);
    const added = this.paramGroups[this.paramGroups.length - 1]!;
    for (const p of added.params) this.stateFor(p, () => this.initialState(p, added));
  }

  protected checkOptions(o: AdagradOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    nonNegative(o.lrDecay, `Invalid lr_decay value: ${o.lrDecay}`);
    nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
    nonNegative(o.initialAccumulatorValue, `Invalid initial_accumulator_value value: ${o.initialAccumulatorValue}`);
    nonNegative(o.eps, `Invalid epsilon value: ${o.eps}`);
    flag(o.maximize, 'maximize');
  }

  protected stateFields(): StateFields {
    return ADAGRAD_STATE;
  }

  protected updateGroup(group: ParamGroup<AdagradOptions>, items: readonly ParamWithGrad[]): void {
    const { weightDecay, eps, maximize } = group;
    // In a compiled step a replay recomputes the decayed lr from lr and the next step count; the other options are guards.
    this.guardCompiledOptions(group);
    for (const { param, grad } of items) {
      // A state dict saved without this parameter's state leaves none: start it as the constructor does.
      const s = this.stateFor(param, () => this.initialState(param, group));
      const clr = decayedLr(group, this.countStep(s));
      compileScalars([{ value: -clr, compute: () => -decayedLr(group, s.step + 1) }], () => {
        const g = gradWithDecay(param, grad, weightDecay, maximize);
        s.sum.copy_(up(s.sum).add(g.mul(g)));
        const std = roundTo(roundTo(up(s.sum).sqrt(), param.dtype).add(eps), param.dtype);
        param.copy_(up(param).add(g.mul(-clr).div(std)));
      });
    }
  }

  private initialState(param: Tensor, group: AdagradOptions): AdagradState {
    return { step: 0, sum: fullLike(param, group.initialAccumulatorValue) };
  }
}

/** Step t's learning rate: `lr / (1 + (t − 1)·lrDecay)`. */
function decayedLr(group: AdagradOptions, step: number): number {
  return group.lr / (1 + (step - 1) * group.lrDecay);
}
