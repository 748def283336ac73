// The tiny training run's reference: a one-hidden-layer MLP with ReLU and a mean cross-entropy
// loss, forward and backward written out by hand in float64, trained with the reference optimizers.
import { adamStep, newAdamState, sgdStep, type AdamOptions, type AdamState, type SgdOptions } from './optim.js';

export interface MlpParams {
  /** [inputs, hidden] row-major, and so on. */
  w1: Float64Array; b1: Float64Array; w2: Float64Array; b2: Float64Array;
}

export interface MlpProblem {
  readonly batch: number; readonly inputs: number; readonly hidden: number; readonly classes: number;
  /** [batch, inputs] */ readonly x: Float64Array;
  /** class per row */ readonly y: Int32Array;
}

/** Loss and gradients: h = relu(x·W1 + b1), z = h·W2 + b2, loss = mean(−log softmax(z)[y]). */
export function mlpLossAndGrads(p: MlpParams, prob: MlpProblem): {
  /** The mean cross-entropy loss. */
  loss: number;
  /** Its gradient with respect to each parameter. */
  grads: MlpParams;
} {
  const { batch: B, inputs: I, hidden: H, classes: C, x, y } = prob;
  const pre = new Float64Array(B * H);
  const h = new Float64Array(B * H);
  const z = new Float64Array(B * C);
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < H; j++) {
      let s = p.b1[j]!;
      for (let i = 0; i < I; i++) s += x[b * I + i]! * p.w1[i * H + j]!;
      pre[b * H + j] = s;
      h[b * H + j] = Math.max(s, 0);
    }
    for (let c = 0; c < C; c++) {
      let s = p.b2[c]!;
      for (let j = 0; j < H; j++) s += h[b * H + j]! * p.w2[j * C + c]!;
      z[b * C + c] = s;
    }
  }
  // dL/dz = (softmax(z) − onehot(y)) / B
  let loss = 0;
  const dz = new Float64Array(B * C);
  for (let b = 0; b < B; b++) {
    const row = z.subarray(b * C, b * C + C);
    const max = Math.max(...row);
    const total = row.reduce((s, v) => s + Math.exp(v - max), 0);
    const logZ = max + Math.log(total);
    loss += logZ - row[y[b]!]!;
    for (let c = 0; c < C; c++) dz[b * C + c] = (Math.exp(row[c]! - logZ) - (c === y[b] ? 1 : 0)) / B;
  }
  loss /= B;
  const grads: MlpParams = { w1: new Float64Array(I * H), b1: new Float64Array(H), w2: new Float64Array(H * C), b2: new Float64Array(C) };
  const dh = new Float64Array(B * H);
  for (let b = 0; b < B; b++) {
    for (let c = 0; c < C; c++) {
      const g = dz[b * C + c]!;
      grads.b2[c] += g;
      for (let j = 0; j < H; j++) {
        grads.w2[j * C + c] += h[b * H + j]! * g;
        dh[b * H + j] += p.w2[j * C + c]! * g;
      }
    }
    for (let j = 0; j < H; j++) {
      const g = pre[b * H + j]! > 0 ? dh[b * H + j]! : 0;
      grads.b1[j] += g;
      for (let i = 0; i < I; i++) grads.w1[i * H + j] += x[b * I + i]! * g;
    }
  }
  return { loss, grads };
}

export type TrainOptimizer = { kind: 'sgd'; options: SgdOptions } | { kind: 'adam'; options: AdamOptions };

/** Losses before each of `steps` optimizer steps. */
export function trainReference(initial: MlpParams, prob: MlpProblem, opt: TrainOptimizer, steps: number): number[] {
  const p: MlpParams = { w1: initial.w1.slice(), b1: initial.b1.slice(), w2: initial.w2.slice(), b2: initial.b2.slice() };
  const names = ['w1', 'b1', 'w2', 'b2'] as const;
  const sgd = names.map(() => ({}) as { buf?: Float64Array });
  const adam: AdamState[] = names.map((n) => newAdamState(p[n].length));
  const losses: number[] = [];
  for (let s = 0; s < steps; s++) {
    const { loss, grads } = mlpLossAndGrads(p, prob);
    losses.push(loss);
    names.forEach((n, k) => {
      if (opt.kind === 'sgd') sgdStep(p[n], grads[n], opt.options, sgd[k]!);
      else adamStep(p[n], grads[n], opt.options, adam[k]!);
    });
  }
  return losses;
}
