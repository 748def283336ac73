// Activation modules: thin wrappers over F.* with no parameters.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import * as F from '../functional/activation.js';

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

  constructor({ approximate = 'none' }: { approximate?: F.GeluApproximate } = {}) {
    super();
    this.approximate = approximate;
  }

  forward(input: Tensor): Tensor {
    return F.gelu(input, { approximate: this.approximate });
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
