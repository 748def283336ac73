// Schedules that rise and fall within a cycle: CyclicLR, OneCycleLR (both can cycle momentum the
// other way) and CosineAnnealingWarmRestarts. Each computes the lr from the epoch in closed form.
import { ValueError } from '@core/tensor';
import {
  LRScheduler, type SchedulableGroup, type SchedulableOptimizer, type SchedulerArgs, schedulerOptions, type SchedulerOptions,
} from './lr-scheduler.js';
import {
  bool, checkFields, epochIndex, finite, list, lrFactor, nonNegative, nullable, num, oneOf, positive, positiveInt, unitClosed, type Check,
} from './scheduler-checks.js';
import { describeValue } from './state-fields.js';

/** One value per group; a list must have one per group (PyTorch's ValueError). */
function perGroup(optimizer: SchedulableOptimizer, name: string, value: number | readonly number[]): number[] {
  const groups = optimizer.paramGroups.length;
  if (!Array.isArray(value)) return Array<number>(groups).fill(value as number);
  if (value.length !== groups) throw new ValueError(`expected ${groups} values for ${name}, got ${value.length}`);
  return [...(value as readonly number[])];
}

/** A per-group option: a number, or an array of them. */
function perGroupCheck(item: Check): Check {
  const items = list(item);
  return { want: `${item.want}, or an array of them (one per group)`, problem: (v) => (Array.isArray(v) ? items.problem(v) : item.problem(v)) };
}

/** Whether the optimizer's options have `key` (CyclicLR and OneCycleLR cycle momentum or beta1). */
function hasOption(optimizer: SchedulableOptimizer, key: string): boolean {
  return typeof optimizer.defaults === 'object' && optimizer.defaults !== null && key in optimizer.defaults;
}

const NO_MOMENTUM = 'optimizer must support momentum with `cycle_momentum` option enabled';

/** A custom scale function of CyclicLR: the cycle number or the iteration in, a factor out. */
export type ScaleFn = (x: number) => number;

/** CyclicLR's options. */
export interface CyclicLROptions extends SchedulerOptions {
  /** The lower lr of the cycle, one for all groups or one per group; set on the groups when the schedule starts. */
  baseLr: number | readonly number[];
  /** The upper lr of the cycle (not reached when the scale function shrinks the amplitude). */
  maxLr: number | readonly number[];
  /** Iterations from baseLr up to maxLr (default 2000). */
  stepSizeUp?: number;
  /** Iterations back down (default: stepSizeUp). */
  stepSizeDown?: number | null;
  /** How the amplitude changes from cycle to cycle: constant, halved each cycle, or `gamma^iteration` (default 'triangular'). */
  mode?: 'triangular' | 'triangular2' | 'exp_range';
  /** The base of 'exp_range' (default 1). */
  gamma?: number;
  /** A custom amplitude scale in place of `mode`'s (not saved in the state dict). */
  scaleFn?: ScaleFn | null;
  /** What a custom scaleFn takes: the cycle number or the iteration (default 'cycle'). */
  scaleMode?: 'cycle' | 'iterations';
  /** Cycle the momentum inversely to the lr (default true; needs an optimizer with `momentum`). */
  cycleMomentum?: boolean;
  /** The momentum at the lr's peak (default 0.8). */
  baseMomentum?: number | readonly number[];
  /** The momentum at the lr's trough (default 0.9). */
  maxMomentum?: number | readonly number[];
}

/** CyclicLR's saved hyperparameters (its state dict holds them besides LRScheduler's fields). */
export interface CyclicLRHyperparameters {
  /** The upper lr of each group. */
  maxLrs: readonly number[];
  /** Iterations in a cycle: stepSizeUp + stepSizeDown. */
  totalSize: number;
  /** The fraction of a cycle spent going up. */
  stepRatio: number;
  /** The amplitude mode. */
  mode: string;
  /** The base of 'exp_range'. */
  gamma: number;
  /** What the scale function takes: 'cycle' or 'iterations'. */
  scaleMode: string;
  /** Whether momentum cycles. */
  cycleMomentum: boolean;
  /** Each group's momentum at the lr's peak. */
  baseMomentums: readonly number[];
  /** Each group's momentum at the lr's trough. */
  maxMomentums: readonly number[];
}

/**
 * Cyclical learning rates (PyTorch's `CyclicLR`): each iteration (call `step()` after every
 * batch) the lr moves between baseLr and maxLr along a triangle of stepSizeUp + stepSizeDown
 * iterations, its amplitude scaled by `mode` or `scaleFn`; with cycleMomentum the momentum moves
 * the other way. A custom scaleFn is a function and can't be saved: the state dict keeps `mode`
 * and `scaleMode`, and a loading scheduler keeps its own scaleFn.
 */
export class CyclicLR extends LRScheduler<CyclicLRHyperparameters> {
  private readonly scaleFn: ScaleFn | null;

  /**
   * PyTorch's `CyclicLR(optimizer, base_lr, max_lr, step_size_up, step_size_down, mode, gamma, scale_fn, scale_mode,
   * cycle_momentum, base_momentum, max_momentum, last_epoch)`: by position in that order, or by name.
   */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<
      [baseLr: CyclicLROptions['baseLr'], maxLr: CyclicLROptions['maxLr']],
      [
        stepSizeUp: number, stepSizeDown: number | null, mode: NonNullable<CyclicLROptions['mode']>, gamma: number, scaleFn: ScaleFn | null,
        scaleMode: NonNullable<CyclicLROptions['scaleMode']>, cycleMomentum: boolean, baseMomentum: number | readonly number[],
        maxMomentum: number | readonly number[], lastEpoch: number,
      ],
      CyclicLROptions
    >
  ) {
    const {
      baseLr, maxLr, stepSizeUp = 2000, stepSizeDown = null, mode = 'triangular', gamma = 1, scaleFn = null, scaleMode = 'cycle',
      cycleMomentum = true, baseMomentum = 0.8, maxMomentum = 0.9, lastEpoch = -1,
    } = schedulerOptions<CyclicLROptions>('CyclicLR', args, ['baseLr', 'maxLr'], [
      'stepSizeUp', 'stepSizeDown', 'mode', 'gamma', 'scaleFn', 'scaleMode', 'cycleMomentum', 'baseMomentum', 'maxMomentum', 'lastEpoch',
    ]);
    // Everything is checked before the groups change.
    checkFields('CyclicLR', {
      baseLr: perGroupCheck(nonNegative), maxLr: perGroupCheck(nonNegative), stepSizeUp: positive, stepSizeDown: nullable(nonNegative),
      scaleFn: { want: 'a function or null', problem: (v) => (v === null || typeof v === 'function' ? undefined : 'type') },
      mode: scaleFn === null ? oneOf('triangular', 'triangular2', 'exp_range') : { want: 'a string', problem: (v) => (typeof v === 'string' ? undefined : 'type') },
      gamma: finite, scaleMode: oneOf('cycle', 'iterations'), cycleMomentum: bool,
      baseMomentum: perGroupCheck(finite), maxMomentum: perGroupCheck(finite), lastEpoch: epochIndex,
    }, { baseLr, maxLr, stepSizeUp, stepSizeDown, mode, gamma, scaleFn, scaleMode, cycleMomentum, baseMomentum, maxMomentum, lastEpoch });
    if (cycleMomentum && !hasOption(optimizer, 'momentum')) throw new ValueError(NO_MOMENTUM);
    const baseLrs = perGroup(optimizer, 'base_lr', baseLr);
    const maxLrs = perGroup(optimizer, 'max_lr', maxLr);
    const baseMomentums = perGroup(optimizer, 'base_momentum', baseMomentum);
    const maxMomentums = perGroup(optimizer, 'max_momentum', maxMomentum);
    const totalSize = stepSizeUp + (stepSizeDown ?? stepSizeUp);
    if (lastEpoch === -1) {
      optimizer.paramGroups.forEach((g, i) => {
        g.lr = baseLrs[i]!;
        if (cycleMomentum) g.momentum = baseMomentums[i]!;
      });
    }
    super(optimizer, {
      maxLrs, totalSize, stepRatio: stepSizeUp / totalSize, mode, gamma,
      scaleMode: scaleFn !== null ? scaleMode : mode === 'exp_range' ? 'iterations' : 'cycle',
      cycleMomentum,
      // Resuming, the cycle's low momentum is what the groups have now, as in PyTorch.
      baseMomentums: cycleMomentum ? optimizer.paramGroups.map((g) => g.momentum!) : baseMomentums,
      maxMomentums,
    }, lastEpoch);
    this.scaleFn = scaleFn;
    // PyTorch takes the initial step from the groups' initialLr and only then sets the base lrs.
    this.initialStep();
    this.baseLrs = baseLrs;
  }

  protected checkHyperparameters(hp: CyclicLRHyperparameters): void {
    const n = this.optimizer.paramGroups.length;
    checkFields('CyclicLR', {
      maxLrs: list(nonNegative, n), totalSize: positive, stepRatio: lrFactor, mode: oneOf('triangular', 'triangular2', 'exp_range'), gamma: finite,
      scaleMode: oneOf('cycle', 'iterations'), cycleMomentum: bool, baseMomentums: list(finite, n), maxMomentums: list(finite, n),
    }, hp);
  }

  /** The amplitude scale at `x` (the cycle number or the iteration). */
  private scale(x: number): number {
    if (this.scaleFn !== null) return this.scaleFn(x);
    const { mode, gamma } = this.hp;
    return mode === 'triangular' ? 1 : mode === 'triangular2' ? 1 / 2 ** (x - 1) : gamma ** x;
  }

  protected computeLr(): number[] {
    const { totalSize, stepRatio, scaleMode, maxLrs, cycleMomentum, baseMomentums, maxMomentums } = this.hp;
    const cycle = Math.floor(1 + this.lastEpoch / totalSize);
    const x = 1 + this.lastEpoch / totalSize - cycle;
    const scaleFactor = x <= stepRatio ? x / stepRatio : (x - 1) / (stepRatio - 1);
    const scale = this.scale(scaleMode === 'cycle' ? cycle : this.lastEpoch);
    if (cycleMomentum) {
      this.optimizer.paramGroups.forEach((g, i) => {
        g.momentum = maxMomentums[i]! - (maxMomentums[i]! - baseMomentums[i]!) * scaleFactor * scale;
      });
    }
    return this.baseLrs.map((base, i) => base + (maxLrs[i]! - base) * scaleFactor * scale);
  }
}

/** OneCycleLR's options. */
export interface OneCycleLROptions extends SchedulerOptions {
  /** The peak lr, one for all groups or one per group. */
  maxLr: number | readonly number[];
  /** Steps in the cycle; or give epochs and stepsPerEpoch. */
  totalSteps?: number | null;
  /** With stepsPerEpoch, the cycle's length when totalSteps is not given. */
  epochs?: number | null;
  /** With epochs, the cycle's length when totalSteps is not given. */
  stepsPerEpoch?: number | null;
  /** The fraction of the cycle spent raising the lr (default 0.3). */
  pctStart?: number;
  /** 'cos' or 'linear' annealing (default 'cos'). */
  annealStrategy?: 'cos' | 'linear';
  /** Cycle momentum (or Adam's beta1) inversely to the lr (default true). */
  cycleMomentum?: boolean;
  /** The momentum at the lr's peak (default 0.85). */
  baseMomentum?: number | readonly number[];
  /** The momentum at the start and the end (default 0.95). */
  maxMomentum?: number | readonly number[];
  /** The starting lr is maxLr / divFactor (default 25). */
  divFactor?: number;
  /** The final lr is the starting lr / finalDivFactor (default 1e4). */
  finalDivFactor?: number;
  /** Three phases (up, back down to the start, then to the minimum) instead of two (default false). */
  threePhase?: boolean;
}

/** OneCycleLR's saved hyperparameters; the per-group lrs and momenta live in the groups. */
export interface OneCycleLRHyperparameters {
  /** Steps in the cycle. */
  totalSteps: number;
  /** The fraction of the cycle spent raising the lr. */
  pctStart: number;
  /** 'cos' or 'linear'. */
  annealStrategy: string;
  /** Whether momentum (or beta1) cycles. */
  cycleMomentum: boolean;
  /** Whether the optimizer's beta1 (rather than its momentum) cycles. */
  useBeta1: boolean;
  /** Three phases instead of two. */
  threePhase: boolean;
}

type GroupKey = 'initialLr' | 'maxLr' | 'minLr' | 'maxMomentum' | 'baseMomentum';

/** One phase of the cycle: it ends at step `end` and anneals from one group field to another. */
interface Phase {
  readonly end: number;
  readonly lr: readonly [GroupKey, GroupKey];
  readonly momentum: readonly [GroupKey, GroupKey];
}

function phasesOf({ totalSteps: n, pctStart: p, threePhase }: OneCycleLRHyperparameters): Phase[] {
  return threePhase
    ? [
      { end: p * n - 1, lr: ['initialLr', 'maxLr'], momentum: ['maxMomentum', 'baseMomentum'] },
      { end: 2 * p * n - 2, lr: ['maxLr', 'initialLr'], momentum: ['baseMomentum', 'maxMomentum'] },
      { end: n - 1, lr: ['initialLr', 'minLr'], momentum: ['maxMomentum', 'maxMomentum'] },
    ]
    : [
      { end: p * n - 1, lr: ['initialLr', 'maxLr'], momentum: ['maxMomentum', 'baseMomentum'] },
      { end: n - 1, lr: ['maxLr', 'minLr'], momentum: ['baseMomentum', 'maxMomentum'] },
    ];
}

/**
 * The phase of `step` and how far into it the step is (0 to 1). A step that falls into a phase of
 * no length is a ValueError (PyTorch divides by zero there).
 */
function phaseAt(hp: OneCycleLRHyperparameters, step: number): { phase: Phase; pct: number } {
  const phases = phasesOf(hp);
  let start = 0;
  for (let k = 0; k < phases.length; k++) {
    const phase = phases[k]!;
    if (step <= phase.end || k === phases.length - 1) {
      if (phase.end === start) {
        throw new ValueError(`OneCycleLR: step ${step} falls in a phase with no steps (pctStart ${hp.pctStart}, totalSteps ${hp.totalSteps}); choose another pctStart`);
      }
      return { phase, pct: (step - start) / (phase.end - start) };
    }
    start = phase.end;
  }
  throw new Error('unreachable: the last phase takes every step');
}

/**
 * The 1cycle policy (PyTorch's `OneCycleLR`): call `step()` after every batch. The lr anneals
 * from maxLr/divFactor up to maxLr over pctStart of totalSteps, then down to
 * maxLr/(divFactor·finalDivFactor) (three phases: back to the start first); momentum, or Adam's
 * beta1, moves the other way. The start, peak and final values are kept in each parameter group
 * (`initialLr`, `maxLr`, `minLr`, `maxMomentum`, `baseMomentum`), as in PyTorch, so they are saved
 * with the optimizer's state dict. Stepping past totalSteps is a ValueError.
 */
export class OneCycleLR extends LRScheduler<OneCycleLRHyperparameters> {
  /**
   * PyTorch's `OneCycleLR(optimizer, max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, cycle_momentum,
   * base_momentum, max_momentum, div_factor, final_div_factor, three_phase, last_epoch)`: by position in that order, or by name.
   */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<
      [maxLr: OneCycleLROptions['maxLr']],
      [
        totalSteps: number | null, epochs: number | null, stepsPerEpoch: number | null, pctStart: number,
        annealStrategy: NonNullable<OneCycleLROptions['annealStrategy']>, cycleMomentum: boolean, baseMomentum: number | readonly number[],
        maxMomentum: number | readonly number[], divFactor: number, finalDivFactor: number, threePhase: boolean, lastEpoch: number,
      ],
      OneCycleLROptions
    >
  ) {
    const {
      maxLr, totalSteps = null, epochs = null, stepsPerEpoch = null, pctStart = 0.3, annealStrategy = 'cos', cycleMomentum = true,
      baseMomentum = 0.85, maxMomentum = 0.95, divFactor = 25, finalDivFactor = 1e4, threePhase = false, lastEpoch = -1,
    } = schedulerOptions<OneCycleLROptions>('OneCycleLR', args, ['maxLr'], [
      'totalSteps', 'epochs', 'stepsPerEpoch', 'pctStart', 'annealStrategy', 'cycleMomentum', 'baseMomentum', 'maxMomentum',
      'divFactor', 'finalDivFactor', 'threePhase', 'lastEpoch',
    ]);
    if (totalSteps === null && (epochs === null || stepsPerEpoch === null)) {
      throw new ValueError('You must define either total_steps OR (epochs AND steps_per_epoch)');
    }
    if (totalSteps !== null) checkFields('OneCycleLR', { totalSteps: positiveInt }, { totalSteps });
    else checkFields('OneCycleLR', { epochs: positiveInt, stepsPerEpoch: positiveInt }, { epochs, stepsPerEpoch });
    const hp: OneCycleLRHyperparameters = {
      totalSteps: totalSteps ?? epochs! * stepsPerEpoch!, pctStart, annealStrategy, cycleMomentum,
      useBeta1: hasOption(optimizer, 'betas'), threePhase,
    };
    checkFields('OneCycleLR', {
      maxLr: perGroupCheck(positive), baseMomentum: perGroupCheck(finite), maxMomentum: perGroupCheck(finite),
      divFactor: positive, finalDivFactor: positive, lastEpoch: epochIndex,
    }, { maxLr, baseMomentum, maxMomentum, divFactor, finalDivFactor, lastEpoch });
    OneCycleLR.checkHp(hp);
    if (cycleMomentum && !hasOption(optimizer, 'momentum') && !hp.useBeta1) throw new ValueError(NO_MOMENTUM);
    const maxLrs = perGroup(optimizer, 'max_lr', maxLr);
    const maxMomentums = perGroup(optimizer, 'max_momentum', maxMomentum);
    const baseMomentums = perGroup(optimizer, 'base_momentum', baseMomentum);
    phaseAt(hp, lastEpoch + 1);
    if (lastEpoch === -1) {
      optimizer.paramGroups.forEach((g, i) => {
        g.initialLr = maxLrs[i]! / divFactor;
        g.maxLr = maxLrs[i]!;
        g.minLr = g.initialLr / finalDivFactor;
        if (cycleMomentum) {
          OneCycleLR.setMomentum(g, hp.useBeta1, maxMomentums[i]!);
          g.maxMomentum = maxMomentums[i]!;
          g.baseMomentum = baseMomentums[i]!;
        }
      });
    } else {
      const needed: GroupKey[] = cycleMomentum ? ['maxLr', 'minLr', 'maxMomentum', 'baseMomentum'] : ['maxLr', 'minLr'];
      optimizer.paramGroups.forEach((g, i) => {
        for (const key of needed) {
          if (typeof g[key] !== 'number') throw new ValueError(`param '${key}' is not specified in paramGroups[${i}] when resuming an optimizer`);
        }
      });
    }
    super(optimizer, hp, lastEpoch);
    this.initialStep();
  }

  private static checkHp(hp: OneCycleLRHyperparameters): void {
    checkFields('OneCycleLR', {
      totalSteps: positiveInt, pctStart: unitClosed, annealStrategy: oneOf('cos', 'linear'), cycleMomentum: bool, useBeta1: bool, threePhase: bool,
    }, hp);
  }

  private static setMomentum(g: SchedulableGroup, useBeta1: boolean, momentum: number): void {
    if (useBeta1) g.betas = [momentum, g.betas![1]];
    else g.momentum = momentum;
  }

  protected checkHyperparameters(hp: OneCycleLRHyperparameters): void {
    OneCycleLR.checkHp(hp);
  }

  protected computeLr(): number[] {
    const { totalSteps, annealStrategy, cycleMomentum, useBeta1 } = this.hp;
    const step = this.lastEpoch;
    if (step > totalSteps) throw new ValueError(`Tried to step ${step + 1} times. The specified number of total steps is ${totalSteps}`);
    const { phase, pct } = phaseAt(this.hp, step);
    const anneal = annealStrategy === 'cos'
      ? (start: number, end: number) => end + ((start - end) / 2) * (Math.cos(Math.PI * pct) + 1)
      : (start: number, end: number) => (end - start) * pct + start;
    return this.optimizer.paramGroups.map((g) => {
      if (cycleMomentum) OneCycleLR.setMomentum(g, useBeta1, anneal(g[phase.momentum[0]]!, g[phase.momentum[1]]!));
      return anneal(g[phase.lr[0]]!, g[phase.lr[1]]!);
    });
  }
}

/** CosineAnnealingWarmRestarts' options. */
export interface CosineAnnealingWarmRestartsOptions extends SchedulerOptions {
  /** Epochs until the first restart (PyTorch's `T_0`). */
  t0: number;
  /** Each period is tMult times the one before (PyTorch's `T_mult`, default 1). */
  tMult?: number;
  /** The lowest lr (default 0). */
  etaMin?: number;
}

/** CosineAnnealingWarmRestarts' hyperparameters and progress within the period. */
export interface CosineAnnealingWarmRestartsHyperparameters {
  /** The first period. */
  t0: number;
  /** The current period. */
  tI: number;
  /** The growth factor of the period at each restart. */
  tMult: number;
  /** The lowest lr. */
  etaMin: number;
  /** Epochs since the last restart (fractional with step(epoch)). */
  tCur: number;
}

/**
 * Cosine annealing with warm restarts (SGDR; PyTorch's `CosineAnnealingWarmRestarts`): the lr
 * is `etaMin + (base − etaMin)(1 + cos(π·tCur/tI))/2`, where tCur counts epochs since the last
 * restart and the period tI starts at t0 and grows by tMult at each restart. `step(epoch)` takes
 * fractional epochs (e.g. `epoch + i / iters` within an epoch).
 */
export class CosineAnnealingWarmRestarts extends LRScheduler<CosineAnnealingWarmRestartsHyperparameters> {
  /** PyTorch's `CosineAnnealingWarmRestarts(optimizer, T_0, T_mult, eta_min, last_epoch)`: by position in that order, or by name. */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<[t0: number], [tMult: number, etaMin: number, lastEpoch: number], CosineAnnealingWarmRestartsOptions>
  ) {
    const { t0, tMult = 1, etaMin = 0, lastEpoch = -1 } = schedulerOptions<CosineAnnealingWarmRestartsOptions>(
      'CosineAnnealingWarmRestarts', args, ['t0'], ['tMult', 'etaMin', 'lastEpoch'],
    );
    super(optimizer, { t0, tI: t0, tMult, etaMin, tCur: lastEpoch }, lastEpoch);
    this.initialStep();
  }

  /** Epochs since the last restart. */
  get tCur(): number { return this.hp.tCur; }
  /** The current period. */
  get tI(): number { return this.hp.tI; }

  protected checkHyperparameters(hp: CosineAnnealingWarmRestartsHyperparameters): void {
    checkFields('CosineAnnealingWarmRestarts', {
      t0: positiveInt, tI: positive, tMult: positiveInt, etaMin: finite, tCur: num('a finite number ≥ -1', (v) => v >= -1 && Number.isFinite(v)),
    }, hp);
  }

  protected computeLr(): number[] {
    const { etaMin, tCur, tI } = this.hp;
    return this.baseLrs.map((base) => etaMin + ((base - etaMin) * (1 + Math.cos((Math.PI * tCur) / tI))) / 2);
  }

  /** Advance one epoch (restarting at the end of a period), or jump to `epoch`, which may be fractional. */
  override step(epoch?: number): void {
    if (epoch !== undefined && (typeof epoch !== 'number' || !(epoch >= 0) || !Number.isFinite(epoch))) {
      throw new ValueError(`Expected non-negative epoch, but got ${describeValue(epoch)}`);
    }
    const { t0, tMult } = this.hp;
    let { tCur, tI } = this.hp;
    const at = epoch ?? (this.lastEpoch < 0 ? 0 : undefined);
    if (at === undefined) {
      tCur += 1;
      if (tCur >= tI) {
        tCur -= tI;
        tI *= tMult;
      }
    } else if (at < t0) {
      tI = t0;
      tCur = at;
    } else if (tMult === 1) {
      tCur = at % t0;
    } else {
      const n = Math.trunc(Math.log((at / t0) * (tMult - 1) + 1) / Math.log(tMult));
      tCur = at - (t0 * (tMult ** n - 1)) / (tMult - 1);
      tI = t0 * tMult ** n;
    }
    this.lastEpoch = Math.floor(at ?? this.lastEpoch + 1);
    this.hp = { ...this.hp, tCur, tI };
    this.setLrs(this.computeLr());
  }
}
