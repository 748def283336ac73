// Activation modules: thin wrappers over F.*; PReLU's slopes are its only parameters.
import { empty, ValueError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import * as F from '../functional/activation.js';
import { constant_ } from '../init.js';
import { bindArgs, factoryOf, type Args, type FactoryOptions } from '../internal/args.js';

/** max(0, x) as a module (`F.relu`). */
export class ReLU extends Module {
  forward(input: Tensor): Tensor {
    return F.relu(input);
  }
}

/** The Gaussian error linear unit x·Φ(x) as a module, exact or with the tanh approximation (`F.gelu`). */
export class GELU extends Module {
  /** 'none' (exact, with erf) or 'tanh'. */
  readonly approximate: F.GeluApproximate;

  /** `new nn.GELU('tanh')` or `new nn.GELU({ approximate: 'tanh' })`. */
  constructor(...args: Args<[approximate: F.GeluApproximate], { approximate?: F.GeluApproximate }>) {
    super();
    this.approximate = bindArgs<{ approximate: F.GeluApproximate }>('GELU', ['approximate'], args).approximate ?? 'none';
  }

  forward(input: Tensor): Tensor {
    return F.gelu(input, this.approximate);
  }

  override extraRepr(): string {
    return `approximate='${this.approximate}'`;
  }
}

/** Hyperbolic tangent as a module. */
export class Tanh extends Module {
  forward(input: Tensor): Tensor {
    return F.tanh(input);
  }
}

/** The logistic function as a module. */
export class Sigmoid extends Module {
  forward(input: Tensor): Tensor {
    return F.sigmoid(input);
  }
}

/** max(0, x) + negativeSlope·min(0, x) as a module. */
export class LeakyReLU extends Module {
  constructor(
    /** The slope for negative inputs (default 0.01). */
    readonly negativeSlope = 0.01,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.leakyRelu(input, this.negativeSlope);
  }

  override extraRepr(): string {
    return `negativeSlope=${this.negativeSlope}`;
  }
}

/** x·σ(x) (swish) as a module. */
export class SiLU extends Module {
  forward(input: Tensor): Tensor {
    return F.silu(input);
  }
}

/** Softmax over `dim` as a module. */
export class Softmax extends Module {
  constructor(
    /** The dim the probabilities sum to 1 over. */
    readonly dim: number,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.softmax(input, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

/** Log-softmax over `dim` as a module. */
export class LogSoftmax extends Module {
  constructor(
    /** The dim the log-probabilities are normalised over. */
    readonly dim: number,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.logSoftmax(input, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

/** x for x > 0, alpha·(e^x − 1) otherwise, as a module (`F.elu`). */
export class ELU extends Module {
  /** The value the output approaches for large negative inputs is −alpha. */
  readonly alpha: number;

  /** `new nn.ELU(0.5)` or `new nn.ELU({ alpha: 0.5 })`. */
  constructor(...args: Args<[alpha: number], { alpha?: number }>) {
    super();
    this.alpha = bindArgs<{ alpha: number }>('ELU', ['alpha'], args).alpha ?? 1;
  }

  forward(input: Tensor): Tensor {
    return F.elu(input, this.alpha);
  }

  override extraRepr(): string {
    return `alpha=${this.alpha}`;
  }
}

/** The self-normalising scale·elu(x, α) as a module (`F.selu`). */
export class SELU extends Module {
  forward(input: Tensor): Tensor {
    return F.selu(input);
  }
}

/** log(1 + e^(β·x))/β (x itself above the threshold) as a module (`F.softplus`). */
export class Softplus extends Module {
  /** The sharpness β. */
  readonly beta: number;
  /** Above this value of β·x the output is x. */
  readonly threshold: number;

  /** `new nn.Softplus(2, 10)` or `new nn.Softplus({ beta: 2 })`. */
  constructor(...args: Args<[beta: number, threshold: number], F.SoftplusOptions>) {
    super();
    const { beta = 1, threshold = 20 } = bindArgs<F.SoftplusOptions>('Softplus', ['beta', 'threshold'], args);
    this.beta = beta;
    this.threshold = threshold;
  }

  forward(input: Tensor): Tensor {
    return F.softplus(input, this.beta, this.threshold);
  }

  override extraRepr(): string {
    return `beta=${this.beta}, threshold=${this.threshold}`;
  }
}

/** x·tanh(softplus(x)) as a module (`F.mish`). */
export class Mish extends Module {
  forward(input: Tensor): Tensor {
    return F.mish(input);
  }
}

/** x·relu6(x + 3)/6 as a module (`F.hardswish`). */
export class Hardswish extends Module {
  forward(input: Tensor): Tensor {
    return F.hardswish(input);
  }
}

/** relu6(x + 3)/6 as a module (`F.hardsigmoid`). */
export class Hardsigmoid extends Module {
  forward(input: Tensor): Tensor {
    return F.hardsigmoid(input);
  }
}

/** PReLU's parameters by name, plus where its weight goes. */
export interface PReLUOptions extends FactoryOptions {
  /** Learned slopes: 1 (shared) or the number of input channels (default 1). */
  readonly numParameters?: number;
  /** The slopes' initial value (default 0.25). */
  readonly init?: number;
}

/** max(0, x) + a·min(0, x) with learned slopes a, one shared or one per channel (dim 1) (`F.prelu`). */
export class PReLU extends Module {
  /** How many slopes are learned. */
  readonly numParameters: number;
  /** The slopes' initial value. */
  readonly init: number;
  /** The slopes [numParameters]. */
  weight: Parameter;

  /** `new nn.PReLU(64)` learns one slope per channel of a 64-channel input; `new nn.PReLU()` one for all. */
  constructor(...args: Args<[numParameters: number, init: number], PReLUOptions>) {
    super();
    const options = bindArgs<PReLUOptions>('PReLU', ['numParameters', 'init'], args, ['device', 'dtype']);
    const { numParameters = 1, init = 0.25 } = options;
    if (!Number.isInteger(numParameters) || numParameters < 1) throw new ValueError(`PReLU: numParameters must be a positive integer, got ${numParameters}`);
    this.numParameters = numParameters;
    this.init = init;
    this.weight = Parameter(empty([numParameters], factoryOf(options)));
    this.resetParameters();
  }

  /** Every slope back to `init`. */
  resetParameters(): void {
    constant_(this.weight, this.init);
  }

  forward(input: Tensor): Tensor {
    return F.prelu(input, this.weight);
  }

  override extraRepr(): string {
    return `numParameters=${this.numParameters}`;
  }
}

/** a·σ(b) of the two halves of the input along `dim` as a module (`F.glu`). */
export class GLU extends Module {
  /** The dim split in half. */
  readonly dim: number;

  /** `new nn.GLU(1)` or `new nn.GLU({ dim: 1 })`; default -1. */
  constructor(...args: Args<[dim: number], { dim?: number }>) {
    super();
    this.dim = bindArgs<{ dim: number }>('GLU', ['dim'], args).dim ?? -1;
  }

  forward(input: Tensor): Tensor {
    return F.glu(input, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

/** x / (1 + |x|) as a module (`F.softsign`). */
export class Softsign extends Module {
  forward(input: Tensor): Tensor {
    return F.softsign(input);
  }
}
