// Learning-rate schedulers: set each group's `lr` once per epoch, as torch.optim.lr_scheduler does.
import { ValueError } from '@core/tensor';

/** What a scheduler needs from an optimizer: groups with an lr it may change. */
export interface SchedulableOptimizer {
  /** The parameter groups whose `lr` the scheduler sets. */
  readonly paramGroups: Array<{
    /** The group's current learning rate, which the scheduler overwrites. */
    lr: number;
    /** The lr the schedule started from, recorded by the first scheduler. */
    initialLr?: number;
  }>;
}

/** A scheduler's hyperparameters plus its progress, like PyTorch's `__dict__` minus the optimizer. */
export type SchedulerStateDict<H extends object> = H & {
  /** Each group's starting lr. */
  baseLrs: number[];
  /** The epoch index of the last `step()`. */
  lastEpoch: number;
  /** How many times `step()` ran. */
  stepCount: number;
  /** The lr each group got at the last `step()`. */
  lastLr: number[];
};

/** Options every scheduler takes. */
export interface SchedulerOptions {
  /** The index of the last epoch when resuming; -1 (default) starts a new schedule. */
  lastEpoch?: number;
}

/**
 * The base of learning-rate schedulers (PyTorch's `LRScheduler`): call `step()` once per epoch after the optimizer's steps.
 */
export abstract class LRScheduler<H extends Record<string, number>> {
  /** The optimizer whose groups' lr it sets. */
  readonly optimizer: SchedulableOptimizer;
  /** Each group's `initialLr`: where the schedule starts. */
  baseLrs: number[];
  /** The epoch index of the last `step()` (0 after construction). */
  lastEpoch: number;
  /** How many times `step()` ran (the constructor's initial step included). */
  protected stepCount = 0;
  /** The schedule's hyperparameters. */
  protected hp: H;
  private lastLr: number[] = [];

  /** Records `initialLr` on each group (kept if already there) and takes the initial step. */
  protected constructor(optimizer: SchedulableOptimizer, hyperparameters: H, lastEpoch = -1) {
    if (!Number.isInteger(lastEpoch) || lastEpoch < -1) throw new ValueError(`lastEpoch must be an integer ≥ -1, got ${lastEpoch}`);
    optimizer.paramGroups.forEach((group, i) => {
      if (lastEpoch === -1) group.initialLr ??= group.lr;
      else if (group.initialLr === undefined) {
        throw new ValueError(`param 'initialLr' is not specified in paramGroups[${i}] when resuming an optimizer`);
      }
    });
    this.optimizer = optimizer;
    this.hp = hyperparameters;
    this.baseLrs = optimizer.paramGroups.map((g) => g.initialLr!);
    this.lastEpoch = lastEpoch;
    this.step();
  }

  /** The lr of each group for `this.lastEpoch` (PyTorch's `get_lr`). */
  protected abstract computeLr(): number[];

  /** Advance one epoch and write the new lr into every group. */
  step(): void {
    this.stepCount += 1;
    this.lastEpoch += 1;
    const lrs = this.computeLr();
    this.optimizer.paramGroups.forEach((group, i) => { group.lr = lrs[i]!; });
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The lr each group got at the last `step()`. */
  getLastLr(): number[] {
    return this.lastLr.slice();
  }

  /** The hyperparameters and progress, to restore with `loadStateDict` when resuming. */
  stateDict(): SchedulerStateDict<H> {
    return {
      ...this.hp,
      baseLrs: this.baseLrs.slice(),
      lastEpoch: this.lastEpoch,
      stepCount: this.stepCount,
      lastLr: this.lastLr.slice(),
    };
  }

  /** Restore progress and hyperparameters; the groups' lr comes with the optimizer's own state dict. */
  loadStateDict(sd: SchedulerStateDict<H>): void {
    const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number');
    if (sd === null || typeof sd !== 'object' || typeof sd.lastEpoch !== 'number' || typeof sd.stepCount !== 'number' || !numbers(sd.baseLrs) || !numbers(sd.lastLr)) {
      throw new TypeError('loadStateDict(): expected { baseLrs, lastEpoch, stepCount, lastLr, ... } as returned by stateDict()');
    }
    if (sd.baseLrs.length !== this.optimizer.paramGroups.length) {
      throw new ValueError(`loaded scheduler state has ${sd.baseLrs.length} base lrs, but the optimizer has ${this.optimizer.paramGroups.length} parameter groups`);
    }
    const hp: Record<string, number> = {};
    for (const key of Object.keys(this.hp)) {
      const value = (sd as Record<string, unknown>)[key];
      if (typeof value !== 'number') throw new TypeError(`loadStateDict(): the scheduler state has no number '${key}'`);
      hp[key] = value;
    }
    this.hp = hp as H;
    this.baseLrs = sd.baseLrs.slice();
    this.lastEpoch = sd.lastEpoch;
    this.stepCount = sd.stepCount;
    this.lastLr = sd.lastLr.slice();
  }

  /** Each group's lr now. */
  protected currentLrs(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }
}

/** StepLR's options. */
export interface StepLROptions extends SchedulerOptions {
  /** Epochs between two decays. */
  stepSize: number;
  /** The factor of each decay (default 0.1). */
  gamma?: number;
}

/** Multiply every group's lr by `gamma` each `stepSize` epochs (PyTorch's recursive form). */
export class StepLR extends LRScheduler<{
  /** Epochs between two decays. */
  stepSize: number;
  /** The factor of each decay. */
  gamma: number;
}> {
  constructor(optimizer: SchedulableOptimizer, { stepSize, gamma = 0.1, lastEpoch = -1 }: StepLROptions) {
    if (!Number.isInteger(stepSize) || stepSize <= 0) throw new ValueError(`StepLR: stepSize must be a positive integer, got ${stepSize}`);
    if (typeof gamma !== 'number' || Number.isNaN(gamma)) throw new ValueError(`StepLR: gamma must be a number, got ${gamma}`);
    super(optimizer, { stepSize, gamma }, lastEpoch);
  }

  /** Epochs between two decays. */
  get stepSize(): number { return this.hp.stepSize; }
  /** The factor of each decay. */
  get gamma(): number { return this.hp.gamma; }

  protected computeLr(): number[] {
    const lrs = this.currentLrs();
    if (this.lastEpoch === 0 || this.lastEpoch % this.hp.stepSize !== 0) return lrs;
    return lrs.map((lr) => lr * this.hp.gamma);
  }
}

/** CosineAnnealingLR's options. */
export interface CosineAnnealingLROptions extends SchedulerOptions {
  /** Epochs from the base lr down to etaMin (half the period). */
  tMax: number;
  /** The lowest lr (default 0). */
  etaMin?: number;
}

/**
 * Cosine annealing from each base lr down to `etaMin` over `tMax` epochs, then back up (period
 * 2·tMax). Computed in closed form, `etaMin + (base − etaMin)(1 + cos(π·t/tMax))/2`, which is
 * what PyTorch's recursive form computes up to rounding.
 */
export class CosineAnnealingLR extends LRScheduler<{
  /** Epochs from the base lr down to etaMin (half the period). */
  tMax: number;
  /** The lowest lr. */
  etaMin: number;
}> {
  constructor(optimizer: SchedulableOptimizer, { tMax, etaMin = 0, lastEpoch = -1 }: CosineAnnealingLROptions) {
    if (typeof tMax !== 'number' || !(tMax > 0) || !Number.isFinite(tMax)) throw new ValueError(`CosineAnnealingLR: tMax must be a positive number, got ${tMax}`);
    if (typeof etaMin !== 'number' || !Number.isFinite(etaMin)) throw new ValueError(`CosineAnnealingLR: etaMin must be a finite number, got ${etaMin}`);
    super(optimizer, { tMax, etaMin }, lastEpoch);
  }

  /** Epochs from the base lr down to etaMin. */
  get tMax(): number { return this.hp.tMax; }
  /** The lowest lr. */
  get etaMin(): number { return this.hp.etaMin; }

  protected computeLr(): number[] {
    if (this.lastEpoch === 0) return this.currentLrs();
    const { tMax, etaMin } = this.hp;
    const cosine = (1 + Math.cos((Math.PI * this.lastEpoch) / tMax)) / 2;
    return this.baseLrs.map((base) => etaMin + (base - etaMin) * cosine);
  }
}
