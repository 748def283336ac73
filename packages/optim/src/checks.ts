// Hyperparameter checks with PyTorch's ValueError messages.
import { ValueError } from '@core/tensor';

/** PyTorch's `not 0.0 <= value` check: NaN and non-numbers fail it too. */
export function nonNegative(value: unknown, message: string): void {
  if (typeof value !== 'number' || !(value >= 0)) throw new ValueError(message);
}

/** `0 ≤ value < 1`, as Adam's betas need. */
export function unitInterval(value: unknown, message: string): void {
  if (typeof value !== 'number' || !(value >= 0 && value < 1)) throw new ValueError(message);
}
