// A counter-based generator (Philox4x32-10, keyed by the seed): numbers depend only on (seed,
// offset), so every backend produces the same stream and no state lives on a device.
import type { RandomSpec } from '../backend/contract.js';
import { ValueError } from '../errors/errors.js';

const DEFAULT_SEED = 67280421310721; // PyTorch's default CPU seed

export class Generator {
  private key: [number, number] = [0, 0];
  private offset = 0;
  private seedValue = 0;

  constructor(seed: number = DEFAULT_SEED) {
    this.manualSeed(seed);
  }

  /** Reset the stream: the same seed gives the same numbers on every backend. */
  manualSeed(seed: number): this {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new ValueError(`manualSeed(): seed must be a non-negative safe integer, got ${seed}`);
    }
    this.seedValue = seed;
    this.key = [seed % 2 ** 32 >>> 0, Math.floor(seed / 2 ** 32) >>> 0];
    this.offset = 0;
    return this;
  }

  initialSeed(): number {
    return this.seedValue;
  }

  /** Reserve counters for `numel` values and return the spec a backend fills from. */
  next(numel: number, distribution: RandomSpec['distribution']): RandomSpec {
    const spec: RandomSpec = { key: this.key, offset: this.offset, distribution };
    this.offset += Math.ceil(numel / 4);
    return spec;
  }

  getState(): { seed: number; offset: number } {
    return { seed: this.seedValue, offset: this.offset };
  }

  setState(state: { seed: number; offset: number }): this {
    this.manualSeed(state.seed);
    this.offset = state.offset;
    return this;
  }
}

export const defaultGenerator = new Generator();

/** Seed the default generator (PyTorch's `torch.manual_seed`). */
export function manualSeed(seed: number): Generator {
  return defaultGenerator.manualSeed(seed);
}
