// Learning-rate schedulers: set each group's `lr` once per epoch, as torch.optim.lr_scheduler does.
// `step()` uses each scheduler's chainable form, which scales the lr the group has now (so two
// schedulers on one optimizer compose); `step(epoch)` uses the closed form in the epoch where
// PyTorch has one, which SequentialLR relies on at its milestones.
import { bindArguments, ValueError } from '@core/tensor';
import type { OptimizerArgs } from './param-groups.js';
import {
  checkFields, epochIndex, finite, list, lrFactor, nonNegativeInt, positive, positiveInt, prefixErrors, unitClosed,
} from './scheduler-checks.js';
import { describeValue } from './state-fields.js';

/** The parameter-group fields a scheduler reads and writes. */
export interface SchedulableGroup {
  /** The group's current learning rate, which the scheduler overwrites. */
  lr: number;
  /** The lr the schedule started from, recorded by the first scheduler. */
  initialLr?: number;
  /** SGD-style momentum, which CyclicLR and OneCycleLR cycle. */
  momentum?: number;
  /** Adam-style betas, whose beta1 OneCycleLR cycles. */
  betas?: readonly [number, number];
  /** OneCycleLR: the peak lr. */
  maxLr?: number;
  /** OneCycleLR: the final lr. */
  minLr?: number;
  /** OneCycleLR: the momentum at the start and end of the cycle. */
  maxMomentum?: number;
  /** OneCycleLR: the momentum at the peak lr. */
  baseMomentum?: number;
}

/** What a scheduler needs from an optimizer: groups with an lr it may change. */
export interface SchedulableOptimizer {
  /** The parameter groups whose `lr` the scheduler sets. */
  readonly paramGroups: SchedulableGroup[];
  /** The optimizer's default options: CyclicLR and OneCycleLR look for `momentum` or `betas` here. */
  readonly defaults?: object;
}

/** A hyperparameter or progress value a scheduler saves in its state dict. */
export type SchedulerValue = number | string | boolean | null | readonly number[];

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

/** The non-empty leading runs of `R` shorter than `R` itself. */
type ShorterRuns<R extends readonly unknown[]> = R extends readonly [...infer Init, unknown]
  ? Init extends readonly [] ? never : Init | ShorterRuns<Init>
  : never;

/**
 * A scheduler's arguments after the optimizer, bound as Python binds PyTorch's: its required
 * parameters `R` by position, then any leading run of its optional ones `P` in PyTorch's order
 * (undefined skips one) and optionally an options object naming the rest
 * (`new StepLR(optimizer, 30, 0.1)`, `new StepLR(optimizer, 30, { gamma: 0.1 })`); or the options
 * object alone, naming the required ones too (`new StepLR(optimizer, { stepSize: 30 })`), or
 * after the first required ones.
 */
export type SchedulerArgs<R extends readonly unknown[], P extends readonly unknown[], O extends object> =
  | [...R, ...OptimizerArgs<P, O>]
  | [options: O]
  | (ShorterRuns<R> extends infer Run extends readonly unknown[] ? [...Run, Partial<O>] : never);

/**
 * A scheduler's options from its constructor arguments (see {@link SchedulerArgs}): `required`
 * then `optional` are PyTorch's parameters in its order. A name given both ways, one the
 * scheduler does not have, more positional values than parameters, or a required one missing is
 * a TypeError naming it and `owner`.
 */
export function schedulerOptions<O extends object>(
  owner: string, args: readonly unknown[], required: readonly (keyof O & string)[], optional: readonly (keyof O & string)[],
): O {
  const given = bindArguments(owner, args, [...required, ...optional]);
  for (const name of required) if (given[name] === undefined) throw new TypeError(`${owner}() missing required argument '${name}'`);
  return given as O;
}

/** Options every scheduler takes. */
export interface SchedulerOptions {
  /** The index of the last epoch when resuming; -1 (default) starts a new schedule. */
  lastEpoch?: number;
}

/**
 * The base of learning-rate schedulers (PyTorch's `LRScheduler`): call `step()` once per epoch
 * after the optimizer's steps.
 */
export abstract class LRScheduler<H extends { [K in keyof H]: SchedulerValue }> {
  /** The optimizer whose groups' lr it sets. */
  readonly optimizer: SchedulableOptimizer;
  /** Each group's `initialLr`: where the schedule starts. */
  baseLrs: number[];
  /** The epoch index of the last `step()` (0 after construction). */
  lastEpoch: number;
  /** How many times `step()` ran, the constructor's initial step included (PyTorch's `_step_count`). */
  stepCount = 0;
  /** The schedule's hyperparameters (and, for some schedules, progress beyond `lastEpoch`). */
  protected hp: H;
  private lastLr: number[] = [];

  /**
   * Checks the hyperparameters and records `initialLr` on each group (kept if already there).
   * Every concrete scheduler's constructor ends with {@link LRScheduler.initialStep}, once its own
   * fields are set.
   */
  protected constructor(optimizer: SchedulableOptimizer, hyperparameters: H, lastEpoch = -1) {
    this.optimizer = optimizer;
    this.checkHyperparameters(hyperparameters);
    checkFields(this.constructor.name, { lastEpoch: epochIndex }, { lastEpoch });
    optimizer.paramGroups.forEach((group, i) => {
      if (lastEpoch === -1) group.initialLr ??= group.lr;
      else if (group.initialLr === undefined) {
        throw new ValueError(`param 'initialLr' is not specified in paramGroups[${i}] when resuming an optimizer`);
      }
    });
    this.hp = hyperparameters;
    this.baseLrs = optimizer.paramGroups.map((g) => g.initialLr!);
    this.lastEpoch = lastEpoch;
  }

  /** The constructor's step: epoch lastEpoch + 1 (0 for a new schedule), counted as the first step (PyTorch's `_initial_step`). */
  protected initialStep(): void {
    this.stepCount = 0;
    this.step();
  }

  /** Throw a typed error naming the field (TypeError: wrong type; ValueError: out of range) for hyperparameters the schedule can't run with. */
  protected abstract checkHyperparameters(hp: H): void;

  /** The lr of each group for `this.lastEpoch`, from the lr each group has now (PyTorch's chainable `get_lr`). */
  protected abstract computeLr(): number[];

  /** The lr of each group for `this.lastEpoch` from the base lrs alone (PyTorch's `_get_closed_form_lr`), where the schedule has one. */
  protected closedFormLr?(): number[];

  /**
   * Advance one epoch and write the new lr into every group. `step(epoch)` jumps to `epoch` and
   * uses the closed form where the schedule has one (deprecated in PyTorch, kept for SequentialLR
   * and for resuming by hand). If computing the lr fails, nothing changes.
   */
  step(epoch?: number): void {
    if (epoch !== undefined) checkFields(`${this.constructor.name}.step`, { epoch: finite }, { epoch });
    const before = { lastEpoch: this.lastEpoch, stepCount: this.stepCount };
    this.stepCount += 1;
    this.lastEpoch = epoch ?? this.lastEpoch + 1;
    let lrs: number[];
    try {
      lrs = epoch !== undefined && this.closedFormLr ? this.closedFormLr() : this.computeLr();
    } catch (e) {
      Object.assign(this, before);
      throw e;
    }
    this.setLrs(lrs);
  }

  /** The lr each group got at the last `step()`. */
  getLastLr(): number[] {
    return this.lastLr.slice();
  }

  /** The hyperparameters and progress, to restore with `loadStateDict` when resuming. */
  stateDict(): SchedulerStateDict<H> {
    return {
      ...copyValues(this.hp),
      baseLrs: this.baseLrs.slice(),
      lastEpoch: this.lastEpoch,
      stepCount: this.stepCount,
      lastLr: this.lastLr.slice(),
    };
  }

  /**
   * Restore progress and hyperparameters; the groups' lr comes with the optimizer's own state
   * dict. Every field is checked (type, range, one lr per group) before anything changes.
   */
  loadStateDict(sd: SchedulerStateDict<H>): void {
    this.prepareLoad(sd)();
  }

  /** Check a state dict completely and return what applies it, so that a bad field changes nothing. */
  protected prepareLoad(sd: SchedulerStateDict<H>): () => void {
    const name = this.constructor.name;
    if (sd === null || typeof sd !== 'object') throw new TypeError(`${name}.loadStateDict(): expected a state dict as returned by stateDict(), got ${describeValue(sd)}`);
    prefixErrors('loadStateDict(): ', () => checkFields(name, {
      baseLrs: list(finite), lastEpoch: epochIndex, stepCount: nonNegativeInt, lastLr: list(finite),
    }, sd));
    const groups = this.optimizer.paramGroups.length;
    for (const field of ['baseLrs', 'lastLr'] as const) {
      if (sd[field].length !== groups) {
        throw new ValueError(`loaded scheduler state has ${sd[field].length} ${field === 'baseLrs' ? 'base lrs' : 'last lrs'}, but the optimizer has ${groups} parameter groups`);
      }
    }
    const hp: Record<string, unknown> = {};
    for (const key of Object.keys(this.hp)) {
      if (!(key in sd)) throw new TypeError(`${name}.loadStateDict(): the state dict has no '${key}'`);
      hp[key] = (sd as Record<string, unknown>)[key];
    }
    prefixErrors('loadStateDict(): ', () => this.checkHyperparameters(hp as H));
    return () => {
      this.hp = copyValues(hp) as H;
      this.baseLrs = sd.baseLrs.slice();
      this.lastEpoch = sd.lastEpoch;
      this.stepCount = sd.stepCount;
      this.lastLr = sd.lastLr.slice();
    };
  }

  /** Each group's lr now. */
  protected currentLrs(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Write `lrs` into the groups and remember them for `getLastLr()`. */
  protected setLrs(lrs: readonly number[]): void {
    this.optimizer.paramGroups.forEach((group, i) => { group.lr = lrs[i]!; });
    this.lastLr = this.currentLrs();
  }
}

/** A copy of a record whose arrays are copied too. */
function copyValues<T extends object>(values: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) out[k] = Array.isArray(v) ? v.slice() : v;
  return out as T;
}

/** Each group's lr times `factor`. */
function scaled(lrs: readonly number[], factor: number): number[] {
  return lrs.map((lr) => lr * factor);
}

/** StepLR's options. */
export interface StepLROptions extends SchedulerOptions {
  /** Epochs between two decays. */
  stepSize: number;
  /** The factor of each decay (default 0.1). */
  gamma?: number;
}

/** Multiply every group's lr by `gamma` each `stepSize` epochs. */
export class StepLR extends LRScheduler<{
  /** Epochs between two decays. */
  stepSize: number;
  /** The factor of each decay. */
  gamma: number;
}> {
  /** PyTorch's `StepLR(optimizer, step_size, gamma, last_epoch)`: by position in that order, or by name. */
  constructor(optimizer: SchedulableOptimizer, ...args: SchedulerArgs<[stepSize: number], [gamma: number, lastEpoch: number], StepLROptions>) {
    const { stepSize, gamma = 0.1, lastEpoch = -1 } = schedulerOptions<StepLROptions>('StepLR', args, ['stepSize'], ['gamma', 'lastEpoch']);
    super(optimizer, { stepSize, gamma }, lastEpoch);
    this.initialStep();
  }

  /** Epochs between two decays. */
  get stepSize(): number { return this.hp.stepSize; }
  /** The factor of each decay. */
  get gamma(): number { return this.hp.gamma; }

  protected checkHyperparameters(hp: { stepSize: number; gamma: number }): void {
    checkFields('StepLR', { stepSize: positiveInt, gamma: finite }, hp);
  }

  protected computeLr(): number[] {
    const lrs = this.currentLrs();
    if (this.lastEpoch === 0 || this.lastEpoch % this.hp.stepSize !== 0) return lrs;
    return scaled(lrs, this.hp.gamma);
  }

  protected override closedFormLr(): number[] {
    return scaled(this.baseLrs, this.hp.gamma ** Math.floor(this.lastEpoch / this.hp.stepSize));
  }
}

/** MultiStepLR's options. */
export interface MultiStepLROptions extends SchedulerOptions {
  /** The epochs at which the lr decays; an epoch listed twice decays twice. */
  milestones: readonly number[];
  /** The factor of each decay (default 0.1). */
  gamma?: number;
}

const MILESTONES = list(nonNegativeInt);

/** Multiply every group's lr by `gamma` at each milestone epoch (`gamma^k` at a milestone listed k times). */
export class MultiStepLR extends LRScheduler<{
  /** The milestones, sorted (PyTorch keeps a Counter). */
  milestones: readonly number[];
  /** The factor of each decay. */
  gamma: number;
}> {
  /** PyTorch's `MultiStepLR(optimizer, milestones, gamma, last_epoch)`: by position in that order, or by name. */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<[milestones: readonly number[]], [gamma: number, lastEpoch: number], MultiStepLROptions>
  ) {
    const { milestones, gamma = 0.1, lastEpoch = -1 } = schedulerOptions<MultiStepLROptions>('MultiStepLR', args, ['milestones'], ['gamma', 'lastEpoch']);
    checkFields('MultiStepLR', { milestones: MILESTONES }, { milestones });
    super(optimizer, { milestones: [...milestones].sort((a, b) => a - b), gamma }, lastEpoch);
    this.initialStep();
  }

  protected checkHyperparameters(hp: { milestones: readonly number[]; gamma: number }): void {
    checkFields('MultiStepLR', { milestones: MILESTONES, gamma: finite }, hp);
  }

  protected computeLr(): number[] {
    const times = this.hp.milestones.filter((m) => m === this.lastEpoch).length;
    const lrs = this.currentLrs();
    return times === 0 ? lrs : scaled(lrs, this.hp.gamma ** times);
  }

  protected override closedFormLr(): number[] {
    const passed = this.hp.milestones.filter((m) => m <= this.lastEpoch).length;
    return scaled(this.baseLrs, this.hp.gamma ** passed);
  }
}

/** ExponentialLR's options. */
export interface ExponentialLROptions extends SchedulerOptions {
  /** The factor of each epoch's decay. */
  gamma: number;
}

/** Multiply every group's lr by `gamma` every epoch. */
export class ExponentialLR extends LRScheduler<{
  /** The factor of each epoch's decay. */
  gamma: number;
}> {
  /** PyTorch's `ExponentialLR(optimizer, gamma, last_epoch)`: by position in that order, or by name. */
  constructor(optimizer: SchedulableOptimizer, ...args: SchedulerArgs<[gamma: number], [lastEpoch: number], ExponentialLROptions>) {
    const { gamma, lastEpoch = -1 } = schedulerOptions<ExponentialLROptions>('ExponentialLR', args, ['gamma'], ['lastEpoch']);
    super(optimizer, { gamma }, lastEpoch);
    this.initialStep();
  }

  protected checkHyperparameters(hp: { gamma: number }): void {
    checkFields('ExponentialLR', { gamma: finite }, hp);
  }

  protected computeLr(): number[] {
    return this.lastEpoch === 0 ? this.currentLrs() : scaled(this.currentLrs(), this.hp.gamma);
  }

  protected override closedFormLr(): number[] {
    return scaled(this.baseLrs, this.hp.gamma ** this.lastEpoch);
  }
}

/** ConstantLR's options. */
export interface ConstantLROptions extends SchedulerOptions {
  /** The factor the lr is scaled by until `totalIters` (default 1/3). */
  factor?: number;
  /** The epoch at which the lr returns to its base value (default 5). */
  totalIters?: number;
}

/** Scale every group's lr by `factor` for the first `totalIters` epochs, then restore it. */
export class ConstantLR extends LRScheduler<{
  /** The factor the lr is scaled by until `totalIters`. */
  factor: number;
  /** The epoch at which the lr returns to its base value. */
  totalIters: number;
}> {
  /** PyTorch's `ConstantLR(optimizer, factor, total_iters, last_epoch)`: by position in that order, or by name. */
  constructor(optimizer: SchedulableOptimizer, ...args: SchedulerArgs<[], [factor: number, totalIters: number, lastEpoch: number], ConstantLROptions>) {
    const { factor = 1 / 3, totalIters = 5, lastEpoch = -1 } = schedulerOptions<ConstantLROptions>('ConstantLR', args, [], ['factor', 'totalIters', 'lastEpoch']);
    super(optimizer, { factor, totalIters }, lastEpoch);
    this.initialStep();
  }

  protected checkHyperparameters(hp: { factor: number; totalIters: number }): void {
    checkFields('ConstantLR', { factor: lrFactor, totalIters: nonNegativeInt }, hp);
  }

  protected computeLr(): number[] {
    const { factor, totalIters } = this.hp;
    if (this.lastEpoch === 0) return scaled(this.currentLrs(), factor);
    if (this.lastEpoch !== totalIters) return this.currentLrs();
    return scaled(this.currentLrs(), 1 / factor);
  }

  protected override closedFormLr(): number[] {
    const { factor, totalIters } = this.hp;
    return scaled(this.baseLrs, factor + (this.lastEpoch >= totalIters ? 1 : 0) * (1 - factor));
  }
}

/** LinearLR's options. */
export interface LinearLROptions extends SchedulerOptions {
  /** The factor of the first epoch's lr (default 1/3). */
  startFactor?: number;
  /** The factor reached at `totalIters` and kept after (default 1). */
  endFactor?: number;
  /** Epochs from startFactor to endFactor (default 5). */
  totalIters?: number;
}

/** Scale every group's lr by a factor that moves linearly from `startFactor` to `endFactor` over `totalIters` epochs. */
export class LinearLR extends LRScheduler<{
  /** The factor of the first epoch's lr. */
  startFactor: number;
  /** The factor reached at `totalIters`. */
  endFactor: number;
  /** Epochs from startFactor to endFactor. */
  totalIters: number;
}> {
  /** PyTorch's `LinearLR(optimizer, start_factor, end_factor, total_iters, last_epoch)`: by position in that order, or by name. */
  constructor(
    optimizer: SchedulableOptimizer,
    ...args: SchedulerArgs<[], [startFactor: number, endFactor: number, totalIters: number, lastEpoch: number], LinearLROptions>
  ) {
    const { startFactor = 1 / 3, endFactor = 1, totalIters = 5, lastEpoch = -1 } = schedulerOptions<LinearLROptions>(
      'LinearLR', args, [], ['startFactor', 'endFactor', 'totalIters', 'lastEpoch'],
    );
    super(optimizer, { startFactor, endFactor, totalIters }, lastEpoch);
    this.initialStep();
  }

  protected checkHyperparameters(hp: { startFactor: number; endFactor: number; totalIters: number }): void {
    checkFields('LinearLR', { startFactor: lrFactor, endFactor: unitClosed, totalIters: positiveInt }, hp);
  }

  protected computeLr(): number[] {
    const { startFactor: s, endFactor: e, totalIters: n } = this.hp;
    if (this.lastEpoch === 0) return scaled(this.currentLrs(), s);
    if (this.lastEpoch > n) return this.currentLrs();
    return scaled(this.currentLrs(), 1 + (e - s) / (n * s + (this.lastEpoch - 1) * (e - s)));
  }

  protected override closedFormLr(): number[] {
    const { startFactor: s, endFactor: e, totalIters: n } = this.hp;
    return scaled(this.baseLrs, s + ((e - s) * Math.min(n, this.lastEpoch)) / n);
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
 * 2·tMax), in PyTorch's chainable form: each step scales the distance of the group's current lr
 * from etaMin by `(1 + cos(π·t/tMax)) / (1 + cos(π·(t−1)/tMax))`, which is
 * `etaMin + (base − etaMin)(1 + cos(π·t/tMax))/2` up to rounding when it runs alone.
 */
export class CosineAnnealingLR extends LRScheduler<{
  /** Epochs from the base lr down to etaMin (half the period). */
  tMax: number;
  /** The lowest lr. */
  etaMin: number;
}> {
  /** PyTorch's `CosineAnnealingLR(optimizer, T_max, eta_min, last_epoch)`: by position in that order, or by name. */
  constructor(optimizer: SchedulableOptimizer, ...args: SchedulerArgs<[tMax: number], [etaMin: number, lastEpoch: number], CosineAnnealingLROptions>) {
    const { tMax, etaMin = 0, lastEpoch = -1 } = schedulerOptions<CosineAnnealingLROptions>('CosineAnnealingLR', args, ['tMax'], ['etaMin', 'lastEpoch']);
    super(optimizer, { tMax, etaMin }, lastEpoch);
    this.initialStep();
  }

  /** Epochs from the base lr down to etaMin. */
  get tMax(): number { return this.hp.tMax; }
  /** The lowest lr. */
  get etaMin(): number { return this.hp.etaMin; }

  protected checkHyperparameters(hp: { tMax: number; etaMin: number }): void {
    checkFields('CosineAnnealingLR', { tMax: positive, etaMin: finite }, hp);
  }

  protected computeLr(): number[] {
    const { tMax, etaMin } = this.hp;
    const e = this.lastEpoch;
    if (e === 0) return this.currentLrs();
    // Resuming (the constructor's step with lastEpoch > 0): no current lr to chain from.
    if (this.stepCount === 1) return this.closedFormLr();
    // The first epoch of each rise: the recursive ratio would be 0/0 there.
    if ((e - 1 - tMax) % (2 * tMax) === 0) {
      return this.optimizer.paramGroups.map((g, i) => g.lr + ((this.baseLrs[i]! - etaMin) * (1 - Math.cos(Math.PI / tMax))) / 2);
    }
    const ratio = (1 + Math.cos((Math.PI * e) / tMax)) / (1 + Math.cos((Math.PI * (e - 1)) / tMax));
    return this.currentLrs().map((lr) => ratio * (lr - etaMin) + etaMin);
  }

  protected override closedFormLr(): number[] {
    const { tMax, etaMin } = this.hp;
    const cosine = (1 + Math.cos((Math.PI * this.lastEpoch) / tMax)) / 2;
    return this.baseLrs.map((base) => etaMin + (base - etaMin) * cosine);
  }
}

/** A learning-rate lambda: the epoch index in, a number out. */
export type LrLambda = (epoch: number) => number;

/** LambdaLR's and MultiplicativeLR's options. */
export interface LambdaLROptions extends SchedulerOptions {
  /** One function for every group, or one per group. */
  lrLambda: LrLambda | readonly LrLambda[];
}

/** LambdaLR's and MultiplicativeLR's state dict: what each lambda carries, since functions themselves can't be saved. */
export type LambdaSchedulerStateDict = SchedulerStateDict<Record<never, never>> & {
  /** Per lambda: a copy of its own enumerable properties, or null when it has none. */
  lrLambdas: Array<Record<string, unknown> | null>;
};

/** One lambda per group, as PyTorch spreads a single one. */
function lambdasFor(owner: string, optimizer: SchedulableOptimizer, lrLambda: LrLambda | readonly LrLambda[]): LrLambda[] {
  const groups = optimizer.paramGroups.length;
  const lambdas = Array.isArray(lrLambda) ? [...(lrLambda as readonly LrLambda[])] : Array<LrLambda>(groups).fill(lrLambda as LrLambda);
  if (lambdas.length !== groups) throw new ValueError(`Expected ${groups} lr_lambdas, but got ${lambdas.length}`);
  lambdas.forEach((f, i) => {
    if (typeof f !== 'function') throw new TypeError(`${owner}: lrLambda${Array.isArray(lrLambda) ? `[${i}]` : ''} must be a function, got ${describeValue(f)}`);
  });
  return lambdas;
}

/**
 * What a lambda's state dict entry holds. PyTorch saves a callable object's `__dict__` and
 * nothing for a plain function; the JavaScript counterpart of a callable object is a function
 * carrying properties (`Object.assign((e) => …, { factor })`), so those properties are saved and
 * a function without any is saved as null.
 */
function saveLambda(f: LrLambda): Record<string, unknown> | null {
  return Object.keys(f).length === 0 ? null : { ...f };
}

/** Check saved lambda entries for `lambdas`; the returned function copies them back onto the lambdas. */
function prepareLambdaLoad(owner: string, lambdas: readonly LrLambda[], saved: unknown): () => void {
  if (!Array.isArray(saved) || saved.length !== lambdas.length) {
    throw new ValueError(`loadStateDict(): ${owner}: lrLambdas must be an array of ${lambdas.length} entries (null or an object), got ${describeValue(saved)}`);
  }
  saved.forEach((entry, i) => {
    if (entry !== null && (typeof entry !== 'object' || Array.isArray(entry))) {
      throw new TypeError(`loadStateDict(): ${owner}: lrLambdas[${i}] must be null or an object, got ${describeValue(entry)}`);
    }
  });
  return () => saved.forEach((entry, i) => { if (entry !== null) Object.assign(lambdas[i]!, entry); });
}

/**
 * Set each group's lr to its base lr times `lrLambda(epoch)` (PyTorch's `LambdaLR`). The lambdas
 * can't be saved: see {@link LambdaSchedulerStateDict} for what the state dict keeps of them.
 */
export class LambdaLR extends LRScheduler<Record<never, never>> {
  /** One lambda per group. */
  readonly lrLambdas: readonly LrLambda[];

  /** PyTorch's `LambdaLR(optimizer, lr_lambda, last_epoch)` (and MultiplicativeLR's): by position in that order, or by name. */
  constructor(optimizer: SchedulableOptimizer, ...args: SchedulerArgs<[lrLambda: LambdaLROptions['lrLambda']], [lastEpoch: number], LambdaLROptions>) {
    const { lrLambda, lastEpoch = -1 } = schedulerOptions<LambdaLROptions>(new.target.name, args, ['lrLambda'], ['lastEpoch']);
    const lrLambdas = lambdasFor(new.target.name, optimizer, lrLambda);
    super(optimizer, {}, lastEpoch);
    this.lrLambdas = lrLambdas;
    this.initialStep();
  }

  protected checkHyperparameters(): void {
    // No hyperparameters besides the lambdas, checked when they are given.
  }

  protected computeLr(): number[] {
    return this.baseLrs.map((base, i) => base * this.lrLambdas[i]!(this.lastEpoch));
  }

  /** The state dict, with {@link LambdaSchedulerStateDict}'s `lrLambdas`. */
  override stateDict(): LambdaSchedulerStateDict {
    return { ...super.stateDict(), lrLambdas: this.lrLambdas.map(saveLambda) };
  }

  /** Restore a state dict, copying each lambda's saved properties back onto it. */
  override loadStateDict(sd: LambdaSchedulerStateDict): void {
    super.loadStateDict(sd);
  }

  protected override prepareLoad(sd: LambdaSchedulerStateDict): () => void {
    const applyBase = super.prepareLoad(sd);
    const applyLambdas = prepareLambdaLoad(this.constructor.name, this.lrLambdas, sd.lrLambdas);
    return () => { applyBase(); applyLambdas(); };
  }
}

/**
 * Multiply each group's lr by `lrLambda(epoch)` every epoch after the first (PyTorch's
 * `MultiplicativeLR`): LambdaLR's lambdas and state dict, applied to the current lr instead of
 * the base lr.
 */
export class MultiplicativeLR extends LambdaLR {
  protected override computeLr(): number[] {
    const lrs = this.currentLrs();
    return this.lastEpoch > 0 ? lrs.map((lr, i) => lr * this.lrLambdas[i]!(this.lastEpoch)) : lrs;
  }
}
