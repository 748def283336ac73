// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (OPT-4, OPT-5).
import { type Tensor, ValueError } from '@core/tensor';
import { nonNegative } from './checks.js';
import { Optimizer, type ParamWithGrad } from './optimizer.js';
import { type ParamGroup, type ParamsInput, withDefaults } from './param-groups.js';
import { roundTo, up } from './opmath.js';

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

/** SGD's defaults, PyTorch's. */
export const SGD_DEFAULTS: Readonly<SGDOptions> = Object.freeze({
  lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false,
});

/**
 * Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight decay (PyTorch's `torch.optim.SGD`).
 */
export class SGD extends Optimizer<SGDOptions, SGDState> {
  constructor(params: ParamsInput<SGDOptions>, options: Partial<SGDOptions> = {}) {
    super(params, withDefaults(SGD_DEFAULTS, options));
  }

  protected checkOptions(o: SGDOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    nonNegative(o.momentum, `Invalid momentum value: ${o.momentum}`);
    nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0)) {
      throw new ValueError('Nesterov momentum requires a momentum and zero dampening');
    }
  }

  protected updateGroup(group: ParamGroup<SGDOptions>, items: readonly ParamWithGrad[]): void {
    const { lr, momentum, dampening, weightDecay, nesterov, maximize } = group;
    for (const { param, grad } of items) {
      let g = up(grad);
      if (maximize) g = g.neg();
      if (weightDecay !== 0) g = roundTo(g.add(up(param), weightDecay), grad.dtype);
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

