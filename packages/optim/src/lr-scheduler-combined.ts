// Schedulers made of schedulers: SequentialLR (one after another, switching at milestones) and
// ChainedScheduler (all at once, their chainable forms composing).
import { ValueError } from '@core/tensor';
import { LRScheduler, type SchedulableOptimizer, type SchedulerArgs, schedulerOptions, type SchedulerValue } from './lr-scheduler.js';
import { checkFields, epochIndex, finite, list, nonNegativeInt, prefixErrors } from './scheduler-checks.js';
import { describeValue } from './state-fields.js';

/** What ChainedScheduler chains: a scheduler stepped once per epoch without arguments. */
export interface ChainableScheduler {
  /** The optimizer whose groups' lr it sets. */
  readonly optimizer: SchedulableOptimizer;
  /** Advance one epoch. */
  step(): void;
  /** The lr each group got at the last step. */
  getLastLr(): number[];
  /** Its progress, to restore with loadStateDict. */
  stateDict(): object;
  /** Restore progress saved by stateDict. */
  loadStateDict(sd: object): void;
}

/** Any LRScheduler, whatever its hyperparameters. */
type AnyLRScheduler = LRScheduler<Record<string, SchedulerValue>>;

/** The state dict of SequentialLR and ChainedScheduler: their own progress and each child's state dict. */
export interface CombinedSchedulerStateDict {
  /** The lr each group got at the last step. */
  lastLr: number[];
  /** Each scheduler's state dict, in order. */
  schedulers: object[];
}

/** SequentialLR's state dict. */
export interface SequentialLRStateDict extends CombinedSchedulerStateDict {
  /** The epochs at which the next scheduler takes over. */
  milestones: number[];
  /** The epoch index of the last step. */
  lastEpoch: number;
}

/** Every scheduler is one of `optimizer` (PyTorch's check, with its message). */
function checkSameOptimizer(owner: string, schedulers: readonly ChainableScheduler[], optimizer: SchedulableOptimizer): void {
  schedulers.forEach((s, i) => {
    if (s.optimizer !== optimizer) {
      throw new ValueError(`${owner} expects all schedulers to belong to the same optimizer, but got schedulers at index ${i} to be different than the optimizer passed in.`);
    }
  });
}

function checkSchedulerList(owner: string, schedulers: unknown, item: (s: unknown) => boolean, what: string): void {
  if (!Array.isArray(schedulers) || schedulers.length === 0) throw new TypeError(`${owner}: schedulers must be a non-empty array of ${what}, got ${describeValue(schedulers)}`);
  schedulers.forEach((s, i) => {
    if (!item(s)) throw new TypeError(`${owner}: schedulers[${i}] must be ${what}, got ${describeValue(s)}`);
  });
}

/** Check the combined part of a state dict (`lastLr` per group, one child state per scheduler). */
function checkCombined(owner: string, sd: CombinedSchedulerStateDict, groups: number, children: number): void {
  if (sd === null || typeof sd !== 'object') throw new TypeError(`${owner}.loadStateDict(): expected a state dict as returned by stateDict(), got ${describeValue(sd)}`);
  prefixErrors('loadStateDict(): ', () => checkFields(owner, { lastLr: list(finite, groups) }, sd));
  if (!Array.isArray(sd.schedulers) || sd.schedulers.length !== children) {
    throw new ValueError(`loadStateDict(): ${owner}: schedulers must hold ${children} state dicts, got ${describeValue(sd.schedulers)}`);
  }
}

/** Load each child's state; if one fails, the ones already loaded get their old state back. */
function loadChildren(children: readonly ChainableScheduler[], states: readonly object[]): void {
  const before = children.map((c) => c.stateDict());
  try {
    children.forEach((c, i) => c.loadStateDict(states[i]!));
  } catch (e) {
    children.forEach((c, i) => c.loadStateDict(before[i]!));
    throw e;
  }
}

/** SequentialLR's options. */
export interface SequentialLROptions {
  /** The schedulers, in the order they run, all of the same optimizer. */
  schedulers: readonly AnyLRScheduler[];
  /** The epochs at which the next scheduler takes over: one fewer than the schedulers, ascending. */
  milestones: readonly number[];
  /** The index of the last epoch when resuming (default -1). */
  lastEpoch?: number;
}

/**
 * Run schedulers one after another (PyTorch's `SequentialLR`): the first until milestones[0],
 * then the next, and so on. At its milestone a scheduler starts over with `step(0)`, its closed
 * form at epoch 0. Construction resets the groups' lr to their initialLr and redoes the first
 * scheduler's initial step, undoing what the schedulers' constructors did.
 */
export class SequentialLR {
  /** The optimizer whose groups' lr the schedulers set. */
  readonly optimizer: SchedulableOptimizer;
  /** The epoch index of the last step (0 after construction). */
  lastEpoch: number;
  private readonly schedulers: readonly AnyLRScheduler[];
  private milestones: number[];
  private lastLr: number[];

  /** PyTorch's `SequentialLR(optimizer, schedulers, milestones, last_epoch)`: by position in that order, or by name. */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<[schedulers: readonly AnyLRScheduler[], milestones: readonly number[]], [lastEpoch: number], SequentialLROptions>
  ) {
    const { schedulers, milestones, lastEpoch = -1 } = schedulerOptions<SequentialLROptions>('SequentialLR', args, ['schedulers', 'milestones'], ['lastEpoch']);
    checkSchedulerList('SequentialLR', schedulers, (s) => s instanceof LRScheduler, 'an LRScheduler');
    checkSameOptimizer('Sequential Schedulers', schedulers, optimizer);
    SequentialLR.checkMilestones(milestones, schedulers.length);
    checkFields('SequentialLR', { lastEpoch: epochIndex }, { lastEpoch });
    optimizer.paramGroups.forEach((g, i) => {
      if (g.initialLr === undefined) throw new ValueError(`param 'initialLr' is not specified in paramGroups[${i}]`);
    });
    this.optimizer = optimizer;
    this.schedulers = [...schedulers];
    this.milestones = [...milestones];
    this.lastEpoch = lastEpoch + 1;
    for (const g of optimizer.paramGroups) g.lr = g.initialLr!;
    for (const s of schedulers) s.lastEpoch -= 1;
    const first = schedulers[0]!;
    first.stepCount = 0;
    first.step();
    this.lastLr = first.getLastLr();
  }

  private static checkMilestones(milestones: unknown, schedulers: number): void {
    checkFields('SequentialLR', { milestones: list(nonNegativeInt) }, { milestones });
    const m = milestones as readonly number[];
    if (m.length !== schedulers - 1) {
      throw new ValueError(
        'Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, ' +
          `but got number of schedulers ${schedulers} and the number of milestones to be equal to ${m.length}`,
      );
    }
    if (m.some((v, i) => i > 0 && v < m[i - 1]!)) throw new ValueError(`SequentialLR: milestones must be ascending, got [${m.join(', ')}]`);
  }

  /** Advance one epoch with the scheduler whose turn it is (starting it over at its milestone). */
  step(): void {
    this.lastEpoch += 1;
    const idx = this.milestones.filter((m) => m <= this.lastEpoch).length;
    const scheduler = this.schedulers[idx]!;
    if (idx > 0 && this.milestones[idx - 1] === this.lastEpoch) scheduler.step(0);
    else scheduler.step();
    this.lastLr = scheduler.getLastLr();
  }

  /** The lr each group got at the last step. */
  getLastLr(): number[] {
    return this.lastLr.slice();
  }

  /** Milestones, progress and every scheduler's state dict. */
  stateDict(): SequentialLRStateDict {
    return {
      milestones: this.milestones.slice(), lastEpoch: this.lastEpoch, lastLr: this.lastLr.slice(), schedulers: this.schedulers.map((s) => s.stateDict()),
    };
  }

  /** Restore a state dict; everything is checked first (a scheduler's bad state leaves every scheduler as it was). */
  loadStateDict(sd: SequentialLRStateDict): void {
    checkCombined('SequentialLR', sd, this.optimizer.paramGroups.length, this.schedulers.length);
    prefixErrors('loadStateDict(): ', () => {
      SequentialLR.checkMilestones(sd.milestones, this.schedulers.length);
      checkFields('SequentialLR', { lastEpoch: nonNegativeInt }, sd);
    });
    loadChildren(this.schedulers, sd.schedulers);
    this.milestones = sd.milestones.slice();
    this.lastEpoch = sd.lastEpoch;
    this.lastLr = sd.lastLr.slice();
  }
}

/**
 * Step several schedulers of one optimizer together each epoch (PyTorch's `ChainedScheduler`):
 * their chainable forms compose, e.g. a warm-up factor times a decay.
 */
export class ChainedScheduler {
  /** The optimizer whose groups' lr the schedulers set. */
  readonly optimizer: SchedulableOptimizer;
  private readonly schedulers: readonly ChainableScheduler[];
  private lastLr: number[];

  constructor(schedulers: readonly ChainableScheduler[]) {
    checkSchedulerList('ChainedScheduler', schedulers, (s) => typeof (s as ChainableScheduler | null)?.step === 'function', 'a scheduler');
    schedulers.forEach((s, i) => {
      if (s.optimizer !== schedulers[0]!.optimizer) {
        throw new ValueError(`ChainedScheduler expects all schedulers to belong to the same optimizer, but got schedulers at index 0 and ${i} to be different`);
      }
    });
    this.schedulers = [...schedulers];
    this.optimizer = schedulers[0]!.optimizer;
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Step every scheduler, in order. */
  step(): void {
    for (const s of this.schedulers) s.step();
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The lr each group got at the last step. */
  getLastLr(): number[] {
    return this.lastLr.slice();
  }

  /** Progress and every scheduler's state dict. */
  stateDict(): CombinedSchedulerStateDict {
    return { lastLr: this.lastLr.slice(), schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  /** Restore a state dict; a scheduler's bad state leaves every scheduler as it was. */
  loadStateDict(sd: CombinedSchedulerStateDict): void {
    checkCombined('ChainedScheduler', sd, this.optimizer.paramGroups.length, this.schedulers.length);
    loadChildren(this.schedulers, sd.schedulers);
    this.lastLr = sd.lastLr.slice();
  }
}
