// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (OPT-4, OPT-5).
import { compileGuard, compileScalars, type Tensor, ValueError } from '@core/tensor';
import { flag, nonNegative } from './checks.js';
import { FirstOrderOptimizer, type ParamWithGrad } from './optimizer.js';
import { type OptimizerArgs, optionsFromArgs, type ParamGroup, type ParamsInput } from './param-groups.js';
import { gradWithDecay, roundTo, up } from './opmath.js';
import { likeParam, type StateFields } from './state-fields.js';

/** SGD's hyperparameters (PyTorch's, in camelCase). */
export interface SGDOptions {
  /** Learning rate (default 1e-3). */
  lr: number;
  /** Momentum factor (default 0: plain SGD). */
  momentum: number;
  /** Dampening for momentum (default 0). */
  dampening: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: number;
  /** Nesterov momentum (needs momentum > 0 and dampening 0; default false). */
  nesterov: boolean;
  /** Maximise the objective instead of minimising it (default false). */
  maximize: boolean;
}

/** Present only when momentum ≠ 0, from the first step on. */
export type SGDState = {
  /** The running momentum of the update. */
  momentumBuffer?: Tensor;
};

const SGD_STATE: StateFields = { momentumBuffer: likeParam(false) };

/** SGD's defaults, PyTorch's. */
export const SGD_DEFAULTS: Readonly<SGDOptions> = Object.freeze({
  lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false,
});

/**
 * Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight decay (PyTorch's `torch.optim.SGD`).
 */
export class SGD extends FirstOrderOptimizer<SGDOptions, SGDState> {
  protected override readonly replaysCompiled = true;
  /**
   * PyTorch's `SGD(params, lr, momentum, dampening, weight_decay, nesterov, *, maximize)`: the
   * hyperparameters by position in that order, or by name in a trailing options object.
   */
  constructor(
    params: ParamsInput<SGDOptions>,
    ...args: OptimizerArgs<[lr: number, momentum: number, dampening: number, weightDecay: number, nesterov: boolean], SGDOptions>
  ) {
    super(params, optionsFromArgs('SGD', SGD_DEFAULTS, ['lr', 'momentum', 'dampening', 'weightDecay', 'nesterov'], args));
  }

  protected checkOptions(o: SGDOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    nonNegative(o.momentum, `Invalid momentum value: ${o.momentum}`);
    nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
    flag(o.nesterov, 'nesterov');
    flag(o.maximize, 'maximize');
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0)) {
      throw new ValueError('Nesterov momentum requires a momentum and zero dampening');
    }
  }

  protected stateFields(): StateFields {
    return SGD_STATE;
  }

  protected updateGroup(group: ParamGroup<SGDOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, momentum, dampening, weightDecay, nesterov, maximize } = group;
    // In a compiled step the options are baked into the recorded kernels, all but lr, which a replay reads anew.
    compileGuard('SGD options', () => [group.momentum, group.dampening, group.weightDecay, group.nesterov, group.maximize]);
    compileScalars([{ value: -lr, compute: () => -group.lr }], () => this.updateParams(group, items));
  }

  private updateParams(group: ParamGroup<SGDOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, momentum, dampening, weightDecay, nesterov, maximize } = group;
    for (const { param, grad } of items) {
      let g = gradWithDecay(param, grad, weightDecay, maximize);
      if (momentum !== 0) {
        let buf = this.state.get(param)?.momentumBuffer;
        if (buf === undefined) {
          // The first step takes the gradient as it is: no dampening (OPT-5).
          buf = g.to({ dtype: param.dtype, copy: true });
          this.state.set(param, { momentumBuffer: buf });
        } else {
          buf.copy_(up(buf).mul(momentum));
          buf.copy_(up(buf).add(g, 1 - dampening));
        }
        g = nesterov ? roundTo(g.add(up(buf), momentum), grad.dtype) : up(buf);
      }
      param.copy_(up(param).add(g, -lr));
    }
  }
}

