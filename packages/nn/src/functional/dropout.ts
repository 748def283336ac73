// F.dropout: zero each element with probability p and scale the rest by 1/(1−p) (inverted
// dropout), so eval mode is the identity. The mask comes from the seeded generator.
import { rand, ValueError, type Generator, type Tensor } from '@core/tensor';
import { checkTensor } from '../internal/args.js';

/** dropout's options. */
export interface DropoutOptions {
  /** Defaults to the global generator (`manualSeed`). */
  readonly generator?: Generator;
}

/**
 * Zero each element with probability `p` and scale the rest by 1/(1 − p) (inverted dropout); the identity when `training` is false.
 */
export function dropout(input: Tensor, p = 0.5, training = true, options: DropoutOptions = {}): Tensor {
  checkTensor(input, 'input', 'dropout');
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new ValueError(`dropout probability has to be between 0 and 1, but got ${p}`);
  if (!training || p === 0) return input;
  if (p === 1) return input.mul(0);
  const keep = rand(input.shape, { device: input.device, ...(options.generator ? { generator: options.generator } : {}) }).lt(1 - p);
  return input.mul(keep.to(input.dtype).mul(1 / (1 - p)));
}
