// Activation modules: thin wrappers over F.* with no parameters.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import * as F from '../functional/activation.js';

export class ReLU extends Module {
  forward(input: Tensor): Tensor {
    return F.relu(input);
  }
}

export class GELU extends Module {
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

export class Tanh extends Module {
  forward(input: Tensor): Tensor {
    return F.tanh(input);
  }
}

export class Sigmoid extends Module {
  forward(input: Tensor): Tensor {
    return F.sigmoid(input);
  }
}

export class LeakyReLU extends Module {
  constructor(readonly negativeSlope = 0.01) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.leakyRelu(input, this.negativeSlope);
  }

  override extraRepr(): string {
    return `negativeSlope=${this.negativeSlope}`;
  }
}

export class SiLU extends Module {
  forward(input: Tensor): Tensor {
    return F.silu(input);
  }
}

export class Softmax extends Module {
  constructor(readonly dim: number) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.softmax(input, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}

export class LogSoftmax extends Module {
  constructor(readonly dim: number) {
    super();
  }

  forward(input: Tensor): Tensor {
    return F.logSoftmax(input, this.dim);
  }

  override extraRepr(): string {
    return `dim=${this.dim}`;
  }
}
