// A counter-based generator (Philox4x32-10, keyed by the seed): numbers depend only on (seed,
// offset), so every backend produces the same stream and no state lives on a device.
import type { RandomSpec } from '../backend/contract.js';
import { ValueError } from '../errors/errors.js';
import { compileDynamicArg } from '../compile/participants.js';
import { compileState } from '../compile/state.js';

const DEFAULT_SEED = 67280421310721; // PyTorch's default CPU seed

/**
 * A seeded random stream (counter-based Philox4x32-10): the numbers depend only on the seed and how many were drawn, so every backend produces the same ones. PyTorch's `torch.Generator`.
 */
export class Generator {
  private key: [number, number] = [0, 0];
  private offset = 0;
  private seedValue = 0;
  /**
   * The compiled function's capture this generator was made in, if any: it is that call's own, so
   * a replay draws what the capture drew, as eager's new generator on every call does.
   */
  private readonly madeIn = compileState.recorder && new WeakRef(compileState.recorder);

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

  /** The seed the stream was last reset with. */
  initialSeed(): number {
    return this.seedValue;
  }

  /** Reserve counters for `numel` values and return the spec a backend fills from. */
  next(numel: number, distribution: RandomSpec['distribution']): RandomSpec {
    const spec: RandomSpec = { key: this.key, offset: this.offset, distribution };
    const blocks = Math.ceil(numel / 4);
    this.offset += blocks;
    if (compileState.recorder !== null) {
      // A compiled step's replay draws the next numbers of this stream, as eager would (after a
      // manualSeed too); a generator made in this very call draws the same numbers every call.
      const own = this.madeIn?.deref() === compileState.recorder;
      compileDynamicArg(spec, own ? () => spec : (): RandomSpec => {
        const now: RandomSpec = { key: this.key, offset: this.offset, distribution };
        this.offset += blocks;
        return now;
      });
    }
    return spec;
  }

  /** The position in the stream, to save and later restore with `setState`. */
  getState(): {
    /** The seed of the stream. */
    seed: number;
    /** Philox blocks (4 values each) drawn since the seed was set. */
    offset: number;
  } {
    return { seed: this.seedValue, offset: this.offset };
  }

  /** Go back to a position `getState` returned. */
  setState(state: { seed: number; offset: number }): this {
    this.manualSeed(state.seed);
    this.offset = state.offset;
    return this;
  }
}

/** The global generator: what random factories use by default, seeded by `manualSeed`. */
export const defaultGenerator = new Generator();

/** Seed the default generator (PyTorch's `torch.manual_seed`). */
export function manualSeed(seed: number): Generator {
  return defaultGenerator.manualSeed(seed);
}
