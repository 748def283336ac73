// Numerical gradient checks in float64 by central differences, for tests of backward rules.
import { float64 } from '../dtype/dtype.js';
import { TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { tensor, zeros } from '../ops/creation.js';
import { cat } from '../ops/join.js';
import { enableGrad, noGrad } from './grad-mode.js';
import { grad } from './grad.js';

/** Finite-difference step and tolerances of `gradcheck` (PyTorch's defaults). */
export interface GradcheckOptions {
  /** The perturbation for central differences (default 1e-6). */
  readonly eps?: number;
  /** Absolute tolerance (default 1e-5). */
  readonly atol?: number;
  /** Relative tolerance (default 1e-3). */
  readonly rtol?: number;
}

/** What `gradcheck` found. */
export interface GradcheckResult {
  /** Every analytic gradient matched the numerical one within the tolerances. */
  readonly ok: boolean;
  /** Largest |analytic − numeric| over every input element. */
  readonly maxError: number;
  /** A description of the first mismatch, when there is one. */
  readonly mismatch?: string;
}

function projection(out: Tensor, weights: Float64Array): number {
  const values = out.to(float64).dataSync();
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]! * weights[i]!;
  return s;
}

/** Fixed pseudo-random weights in [0.25, 1.25], one per element of `like`, as a float64 tensor of its shape. */
function weightsLike(like: Tensor, phase: number): Tensor {
  const w = new Float64Array(like.numel()).map((_, i) => Math.sin(i * 12.9898 + phase) * 0.5 + 0.75);
  return tensor(w, { dtype: float64, device: like.device }).reshape(like.shape);
}

function checkInputs(op: string, inputs: readonly Tensor[]): void {
  for (const [i, x] of inputs.entries()) {
    if (x.dtype !== float64 || x.device.type !== 'cpu') {
      throw new TensorError(`${op}: input ${i} must be a float64 cpu tensor (got ${x.dtype.name} on ${x.device}); numerical differences need double precision`);
    }
  }
}

/**
 * Compare the gradients backward() computes for `fn` at `inputs` with central differences of
 * Σ w·fn(inputs) for fixed pseudo-random weights w. Inputs must be float64 CPU leaves with
 * requiresGrad; they are restored after every perturbation.
 */
export function gradcheck(fn: (...inputs: Tensor[]) => Tensor, inputs: readonly Tensor[], options: GradcheckOptions = {}): GradcheckResult {
  const { eps = 1e-6, atol = 1e-5, rtol = 1e-3 } = options;
  checkInputs('gradcheck', inputs);
  const out = fn(...inputs);
  const w = weightsLike(out, 1);
  const weights = w.dataSync() as Float64Array;
  for (const x of inputs) x.grad = null;
  out.backward(w.to(out.dtype));
  let maxError = 0;
  let mismatch: string | undefined;
  noGrad(() => {
    inputs.forEach((x, i) => {
      if (!x.requiresGrad) return;
      const analytic = x.grad ? x.grad.to(float64).dataSync() : new Float64Array(x.numel());
      const flat = x.reshape([x.numel()]);
      for (let k = 0; k < x.numel(); k++) {
        const original = flat.select(0, k).dataSync()[0]!;
        flat.select(0, k).fill_(original + eps);
        const plus = projection(fn(...inputs), weights);
        flat.select(0, k).fill_(original - eps);
        const minus = projection(fn(...inputs), weights);
        flat.select(0, k).fill_(original);
        const numeric = (plus - minus) / (2 * eps);
        const err = Math.abs(analytic[k]! - numeric);
        maxError = Math.max(maxError, err);
        if (!mismatch && err > atol + rtol * Math.abs(numeric)) {
          mismatch = `input ${i}, element ${k}: analytic ${analytic[k]} vs numeric ${numeric}`;
        }
      }
    });
  });
  return { ok: mismatch === undefined, maxError, ...(mismatch ? { mismatch } : {}) };
}

/**
 * Check second derivatives (PyTorch's gradgradcheck): `gradcheck` of the first-order gradients,
 * (inputs, v) ↦ ∂(Σ v·fn(inputs))/∂inputs computed by `autograd.grad` with `createGraph`, for a
 * fixed pseudo-random v. The analytic side is then a backward through the recorded backward pass
 * (double backward); the numerical side differentiates the first-order gradients. Same inputs and
 * options as `gradcheck`.
 */
export function gradgradcheck(fn: (...inputs: Tensor[]) => Tensor, inputs: readonly Tensor[], options: GradcheckOptions = {}): GradcheckResult {
  checkInputs('gradgradcheck', inputs);
  const v = noGrad(() => weightsLike(fn(...inputs), 2)).requiresGrad_();
  const n = inputs.length;
  const firstOrder = (...args: Tensor[]): Tensor => enableGrad(() => {
    const xs = args.slice(0, n);
    const wrt = xs.filter((x) => x.requiresGrad);
    const grads = grad(fn(...xs), wrt, { gradOutputs: args[n]!, createGraph: true, allowUnused: true });
    // Unused inputs have a zero gradient; every gradient flattened into one vector.
    return cat(grads.map((g, i) => (g ?? zeros(wrt[i]!.shape, { dtype: float64 })).reshape([-1])));
  });
  return gradcheck(firstOrder, [...inputs, v], options);
}
