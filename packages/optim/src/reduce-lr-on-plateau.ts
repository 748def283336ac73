// ReduceLROnPlateau: lower the lr when a metric stops improving. Unlike the other schedulers it is
// driven by a measured value, not by the epoch count.
import { ValueError } from '@core/tensor';
import { type SchedulableOptimizer, type SchedulerArgs, schedulerOptions } from './lr-scheduler.js';
import {
  checkFields, finite, list, nonNegative, nonNegativeInt, num, oneOf, prefixErrors, type Check,
} from './scheduler-checks.js';
import { describeValue } from './state-fields.js';

/** ReduceLROnPlateau's options (PyTorch's, in camelCase). */
export interface ReduceLROnPlateauOptions {
  /** 'min': the metric should fall (a loss); 'max': it should rise (an accuracy) (default 'min'). */
  mode?: 'min' | 'max';
  /** The lr is multiplied by this on a plateau, in [0, 1) (default 0.1). */
  factor?: number;
  /** Epochs without improvement tolerated before the lr drops (default 10). */
  patience?: number;
  /** How much better counts as better (default 1e-4). */
  threshold?: number;
  /** 'rel': better than best·(1 ∓ threshold); 'abs': better than best ∓ threshold (default 'rel'). */
  thresholdMode?: 'rel' | 'abs';
  /** Epochs after a drop during which bad epochs are not counted (default 0). */
  cooldown?: number;
  /** The lowest lr, for all groups or one per group (default 0). */
  minLr?: number | readonly number[];
  /** A drop smaller than this is skipped (default 1e-8). */
  eps?: number;
}

/** ReduceLROnPlateau's state dict: its options and progress. */
export interface ReduceLROnPlateauStateDict {
  /** See {@link ReduceLROnPlateauOptions.mode}. */
  mode: 'min' | 'max';
  /** See {@link ReduceLROnPlateauOptions.factor}. */
  factor: number;
  /** See {@link ReduceLROnPlateauOptions.patience}. */
  patience: number;
  /** See {@link ReduceLROnPlateauOptions.threshold}. */
  threshold: number;
  /** See {@link ReduceLROnPlateauOptions.thresholdMode}. */
  thresholdMode: 'rel' | 'abs';
  /** See {@link ReduceLROnPlateauOptions.cooldown}. */
  cooldown: number;
  /** The lowest lr of each group. */
  minLrs: number[];
  /** See {@link ReduceLROnPlateauOptions.eps}. */
  eps: number;
  /** Cooldown epochs left. */
  cooldownCounter: number;
  /** Steps taken. */
  lastEpoch: number;
  /** The best metric so far (±Infinity before the first step). */
  best: number;
  /** Epochs since the metric last improved. */
  numBadEpochs: number;
  /** Each group's lr after the last step. */
  lastLr: number[];
}

const factorCheck: Check = num('a number in [0, 1)', (v) => v >= 0 && v < 1);

/**
 * Reduce each group's lr by `factor` once the metric passed to `step(metric)` has not improved
 * for `patience` epochs (PyTorch's `ReduceLROnPlateau`). The metric is a number: read a tensor's
 * value with `await loss.item()` first.
 */
export class ReduceLROnPlateau {
  /** The optimizer whose groups' lr it lowers. */
  readonly optimizer: SchedulableOptimizer;
  private s: ReduceLROnPlateauStateDict;

  /**
   * PyTorch's `ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps)`: by
   * position in that order, or by name.
   */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<
      [],
      [
        mode: 'min' | 'max', factor: number, patience: number, threshold: number, thresholdMode: 'rel' | 'abs', cooldown: number,
        minLr: number | readonly number[], eps: number,
      ],
      ReduceLROnPlateauOptions
    >
  ) {
    const { mode = 'min', factor = 0.1, patience = 10, threshold = 1e-4, thresholdMode = 'rel', cooldown = 0, minLr = 0, eps = 1e-8 } =
      schedulerOptions<ReduceLROnPlateauOptions>('ReduceLROnPlateau', args, [], [
        'mode', 'factor', 'patience', 'threshold', 'thresholdMode', 'cooldown', 'minLr', 'eps',
      ]);
    const groups = optimizer.paramGroups.length;
    if (Array.isArray(minLr) && minLr.length !== groups) throw new ValueError(`expected ${groups} min_lrs, got ${minLr.length}`);
    const minLrs = Array.isArray(minLr) ? [...(minLr as readonly number[])] : Array<number>(groups).fill(minLr as number);
    this.optimizer = optimizer;
    this.s = {
      mode, factor, patience, threshold, thresholdMode, cooldown, minLrs, eps,
      cooldownCounter: 0, lastEpoch: 0, best: mode === 'min' ? Infinity : -Infinity, numBadEpochs: 0,
      lastLr: optimizer.paramGroups.map((g) => g.lr),
    };
    this.check(this.s);
  }

  /** The best metric so far. */
  get best(): number { return this.s.best; }
  /** Epochs since the metric last improved. */
  get numBadEpochs(): number { return this.s.numBadEpochs; }
  /** Cooldown epochs left. */
  get cooldownCounter(): number { return this.s.cooldownCounter; }
  /** Steps taken. */
  get lastEpoch(): number { return this.s.lastEpoch; }

  private check(s: ReduceLROnPlateauStateDict): void {
    const groups = this.optimizer.paramGroups.length;
    checkFields('ReduceLROnPlateau', {
      mode: oneOf('min', 'max'), factor: factorCheck, patience: nonNegativeInt, threshold: nonNegative, thresholdMode: oneOf('rel', 'abs'),
      cooldown: nonNegativeInt, minLrs: list(nonNegative, groups), eps: nonNegative, cooldownCounter: nonNegativeInt, lastEpoch: nonNegativeInt,
      best: num('a number', (v) => !Number.isNaN(v)), numBadEpochs: nonNegativeInt, lastLr: list(finite, groups),
    }, s);
  }

  /** Whether `metric` beats `best` by the threshold. */
  private isBetter(metric: number, best: number): boolean {
    const { mode, threshold, thresholdMode } = this.s;
    if (mode === 'min') return thresholdMode === 'rel' ? metric < best * (1 - threshold) : metric < best - threshold;
    return thresholdMode === 'rel' ? metric > best * (threshold + 1) : metric > best + threshold;
  }

  /** Record this epoch's metric, and lower the lr if it has not improved for more than `patience` epochs. */
  step(metric: number): void {
    if (typeof metric !== 'number') {
      throw new TypeError(`ReduceLROnPlateau.step(): the metric must be a number (read a tensor with \`await t.item()\`), got ${describeValue(metric)}`);
    }
    const s = this.s;
    s.lastEpoch += 1;
    if (this.isBetter(metric, s.best)) {
      s.best = metric;
      s.numBadEpochs = 0;
    } else {
      s.numBadEpochs += 1;
    }
    if (s.cooldownCounter > 0) {
      s.cooldownCounter -= 1;
      s.numBadEpochs = 0; // bad epochs during cooldown don't count
    }
    if (s.numBadEpochs > s.patience) {
      this.optimizer.paramGroups.forEach((g, i) => {
        const lr = Math.max(g.lr * s.factor, s.minLrs[i]!);
        if (g.lr - lr > s.eps) g.lr = lr;
      });
      s.cooldownCounter = s.cooldown;
      s.numBadEpochs = 0;
    }
    s.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Each group's lr after the last step (its lr at construction before any). */
  getLastLr(): number[] {
    return this.s.lastLr.slice();
  }

  /** Options and progress, to restore with loadStateDict. */
  stateDict(): ReduceLROnPlateauStateDict {
    return { ...this.s, minLrs: this.s.minLrs.slice(), lastLr: this.s.lastLr.slice() };
  }

  /** Restore a state dict; every field is checked (type, range, one value per group) before anything changes. */
  loadStateDict(sd: ReduceLROnPlateauStateDict): void {
    if (sd === null || typeof sd !== 'object') throw new TypeError(`ReduceLROnPlateau.loadStateDict(): expected a state dict as returned by stateDict(), got ${describeValue(sd)}`);
    const next = { ...this.s };
    for (const key of Object.keys(next) as Array<keyof ReduceLROnPlateauStateDict>) {
      if (!(key in sd)) throw new TypeError(`ReduceLROnPlateau.loadStateDict(): the state dict has no '${key}'`);
      (next as Record<string, unknown>)[key] = Array.isArray(sd[key]) ? (sd[key] as number[]).slice() : sd[key];
    }
    prefixErrors('loadStateDict(): ', () => this.check(next));
    this.s = next;
  }
}
