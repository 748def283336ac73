// Hyperparameter checks with PyTorch's ValueError messages.
import { ValueError } from '@core/tensor';
import { describeValue } from './state-fields.js';

/** PyTorch's `not 0.0 <= value` check: NaN and non-numbers fail it too. */
export function nonNegative(value: unknown, message: string): void {
  if (typeof value !== 'number' || !(value >= 0)) throw new ValueError(message);
}

/** `0 ≤ value < 1`, as Adam's betas need. */
export function unitInterval(value: unknown, message: string): void {
  if (typeof value !== 'number' || !(value >= 0 && value < 1)) throw new ValueError(message);
}

/** An integer ≥ 1 (LBFGS's iteration and history counts). */
export function positiveInteger(value: unknown, message: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new ValueError(message);
}

/** A boolean option, named as PyTorch names it. */
export function flag(value: unknown, name: string): void {
  if (typeof value !== 'boolean') throw new ValueError(`Invalid ${name} value: ${String(value)} (expected true or false)`);
}

/** The options Adam, AdamW, Adamax, NAdam and RAdam share. */
export interface AdamFamilyOptions {
  /** Learning rate. */
  lr: number;
  /** Decay rates of the first and second moment averages. */
  betas: [number, number];
  /** Added to the denominator for numerical stability. */
  eps: number;
  /** L2 penalty (or decoupled decay for AdamW). */
  weightDecay: number;
}

/** PyTorch's checks of the Adam family, in its order: lr, eps, each beta, weight_decay. */
export function checkAdamFamily(o: AdamFamilyOptions): void {
  nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
  nonNegative(o.eps, `Invalid epsilon value: ${o.eps}`);
  if (!Array.isArray(o.betas) || o.betas.length !== 2) {
    throw new TypeError(`betas must be a pair [beta1, beta2], got ${JSON.stringify(o.betas)}`);
  }
  unitInterval(o.betas[0], `Invalid beta parameter at index 0: ${o.betas[0]}`);
  unitInterval(o.betas[1], `Invalid beta parameter at index 1: ${o.betas[1]}`);
  nonNegative(o.weightDecay, `Invalid weight_decay value: ${o.weightDecay}`);
}

/**
 * `options` is an options object whose every key is one of `names`: anything else is a TypeError
 * naming `owner` (Python's "unexpected keyword argument").
 */
export function checkOptionNames(owner: string, options: unknown, names: readonly string[]): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${owner}: expected an options object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!names.includes(key)) throw new TypeError(`${owner}: unexpected option '${key}' (the options are ${names.join(', ')})`);
  }
}
