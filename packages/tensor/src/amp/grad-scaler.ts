// GradScaler (GS-1..GS-14): dynamic loss scaling with PyTorch's semantics. The scale and growth
// tracker live on the device; unscale and update are device ops, so the only host read per
// iteration is the found-inf read inside `step`. The host keeps an exact mirror of the scale and
// tracker (updated from what step read) so `getScale()` needs no read either.
import { getBackend, isAvailable } from '../backend/registry.js';
import type { Device } from '../device/device.js';
import { bfloat16, float16, float32, float64, int32, type DType } from '../dtype/dtype.js';
import { BackendUnavailableError, ValueError } from '../errors/errors.js';
import { noGrad } from '../autograd/grad-mode.js';
import { full, zeros } from '../ops/creation.js';
import { Tensor } from '../tensor/tensor.js';
import { compileAllowedRead, compileBranch, compileBranchEnd, compileGuard, compileHostEffect } from '../compile/participants.js';
import {
  AmpError, ampForeachNonFiniteCheckAndUnscale_, ampUpdateScale_, computesFloat64, hostUpdateScale, reciprocalF32,
} from './unscale.js';

export { AmpError, ampForeachNonFiniteCheckAndUnscale_, ampUpdateScale_ } from './unscale.js';

/** GradScaler's settings, PyTorch's defaults. */
export interface GradScalerOptions {
  /** The starting scale (default 2^16). */
  readonly initScale?: number;
  /** Multiplies the scale after `growthInterval` clean updates in a row; must be > 1 (default 2). */
  readonly growthFactor?: number;
  /** Multiplies the scale after an update that saw Inf/NaN; must be < 1 (default 0.5). */
  readonly backoffFactor?: number;
  /** Clean updates in a row before the scale grows (default 2000). */
  readonly growthInterval?: number;
  /** false makes every method a pass-through, so one training loop runs with and without AMP. */
  readonly enabled?: boolean;
}

/** PyTorch's `GradScaler.state_dict()` in camelCase; `{}` from a disabled scaler. */
export interface GradScalerStateDict {
  /** The current loss scale. */
  scale: number;
  /** See GradScalerOptions.growthFactor. */
  growthFactor: number;
  /** See GradScalerOptions.backoffFactor. */
  backoffFactor: number;
  /** See GradScalerOptions.growthInterval. */
  growthInterval: number;
  /** Clean updates in a row so far (PyTorch's key name, so checkpoints carry over). */
  _growthTracker: number;
}

/** What the scaler needs from an optimizer (those of @core/optim fit): its params and a step. */
export interface ScalableOptimizer {
  /** The parameters, in groups, whose gradients the scaler unscales and checks. */
  readonly paramGroups: readonly {
    /** The group's parameters. */
    readonly params: readonly Tensor[];
  }[];
  /** Apply one update from the (unscaled) gradients. */
  step(...args: unknown[]): unknown;
}

type Stage = 'ready' | 'unscaled' | 'stepped';

/** GS-4: per optimizer, from one update() to the next. */
interface OptimizerState {
  stage: Stage;
  /** One f32 0-dim flag per device that had grads, keyed by the device string. */
  foundInfPerDevice: Map<string, Tensor>;
  /** The flags' values, once step() has read them (empty until then). */
  hostFoundInf: Map<string, number>;
  /** A step() is awaiting its read: a second step or an unscale now is a misuse. */
  stepping: boolean;
}

function freshState(): OptimizerState {
  return { stage: 'ready', foundInfPerDevice: new Map(), hostFoundInf: new Map(), stepping: false };
}

/** Device types already warned about (PyTorch's warning shows once per process too). */
const warnedUnavailable = new Set<string>();

/** True when the backend is up, or still starting (an async factory): it will be usable by the first scale(). */
function backendUsable(type: string): boolean {
  if (isAvailable(type)) return true;
  try {
    getBackend(type);
    return true;
  } catch (e) {
    return e instanceof BackendUnavailableError && e.reason === 'starting';
  }
}

function isIterable(x: unknown): x is Iterable<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
}

function* lazyMap<T, U>(items: Iterable<T>, fn: (item: T) => U): Generator<U, void, undefined> {
  for (const item of items) yield fn(item);
}

/**
 * `x * scale`. Half tensors with dims multiply in f32 and round once (PyTorch treats the 0-dim scale
 * as an opmath scalar); core would round the scale itself to the half type first, and 65536 is
 * Inf in float16. 0-dim halves promote to f32 with the 0-dim f32 scale, as in PyTorch.
 */
function scaleTensor(x: Tensor, scale: Tensor): Tensor {
  if ((x.dtype === float16 || x.dtype === bfloat16) && x.ndim > 0) return x.to(float32).mul(scale).to(x.dtype);
  return x.mul(scale);
}

/**
 * A 0-dim f32 tensor's copy on `device`: itself when already there; else made from `hostValue`
 * when the host knows it exactly (no device read, which a device without sync reads couldn't do
 * here); else an ordinary `to()`.
 */
function replicate(t: Tensor, device: Device, hostValue: number | undefined): Tensor {
  if (t.device.equals(device)) return t;
  if (hostValue !== undefined) return full([], hostValue, { dtype: t.dtype, device });
  return t.to(device);
}

const INT32_MAX = 2 ** 31 - 1;
const isCount = (v: number, min: number) => Number.isInteger(v) && v >= min && v <= INT32_MAX;

/** What loadStateDict accepts for each field: the test and its wording for the error. */
const STATE_RULES: ReadonlyArray<readonly [keyof GradScalerStateDict, (v: number) => boolean, string]> = [
  ['scale', (v) => Number.isFinite(Math.fround(v)) && Math.fround(v) > 0, 'finite and > 0 as a float32'],
  ['growthFactor', (v) => Number.isFinite(v) && v > 1, 'a finite number > 1'],
  ['backoffFactor', (v) => v > 0 && v < 1, 'in (0, 1)'],
  ['growthInterval', (v) => isCount(v, 1), `an integer in [1, ${INT32_MAX}]`],
  ['_growthTracker', (v) => isCount(v, 0), `an integer in [0, ${INT32_MAX}]`],
];

/** A value in an error message: its type, and what it is when that is short. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing (the key is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return `${typeof value} ${JSON.stringify(String(value))}`;
}

const FIX = 'This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.';

/**
 * Dynamic loss scaling for mixed-precision training, as `torch.amp.GradScaler`:
 *
 * ```ts
 * scaler.scale(loss).backward();
 * scaler.unscale(optimizer);      // optional, e.g. before clipping
 * await scaler.step(optimizer);   // skipped when a grad holds Inf/NaN
 * scaler.update();
 * ```
 */
export class GradScaler {
  /** The device type given to the constructor ('cuda' by default, as in PyTorch). */
  readonly deviceType: string;
  private enabled: boolean;
  private initScale: number;
  private growthFactor: number;
  private backoffFactor: number;
  private growthInterval: number;
  private initGrowthTracker = 0;
  private scaleT: Tensor | null = null;
  private trackerT: Tensor | null = null;
  private states = new Map<object, OptimizerState>();
  /** Exact host copies of the device scale and tracker; undefined when the host can't know them. */
  private hostScale: number | undefined;
  private hostTracker: number | undefined;
  /** Bumped whenever the device scale changes: a read started before must not overwrite the mirror. */
  private epoch = 0;

  constructor(deviceType = 'cuda', options: GradScalerOptions = {}) {
    if (typeof deviceType !== 'string') throw new TypeError(`GradScaler(deviceType): expected a device type string such as 'cuda' or 'cpu', got ${typeof deviceType}`);
    const { initScale = 65536, growthFactor = 2, backoffFactor = 0.5, growthInterval = 2000, enabled = true } = options;
    this.deviceType = deviceType;
    this.enabled = enabled;
    if (this.enabled && !backendUsable(deviceType)) {
      if (!warnedUnavailable.has(deviceType)) {
        warnedUnavailable.add(deviceType);
        console.warn(`GradScaler is enabled, but ${deviceType} is not available.  Disabling.`);
      }
      this.enabled = false;
    }
    if (this.enabled) {
      if (!(growthFactor > 1)) throw new AmpError('The growth factor must be > 1.0.');
      if (!(backoffFactor < 1)) throw new AmpError('The backoff factor must be < 1.0.');
    }
    this.initScale = initScale;
    this.growthFactor = growthFactor;
    this.backoffFactor = backoffFactor;
    this.growthInterval = growthInterval;
  }

  /** @internal The device scale (f32, 0-dim), null until the first `scale()` (PyTorch's `_scale`). */
  get _scale(): Tensor | null {
    return this.scaleT;
  }

  /** @internal The device growth tracker (int32, 0-dim), null until the first `scale()`. */
  get _growthTracker(): Tensor | null {
    return this.trackerT;
  }

  /** GS-2: create the scale and tracker on the device of the first tensor scaled. */
  private lazyInit(device: Device): void {
    if (this.scaleT !== null) return;
    const tracker = Math.trunc(this.initGrowthTracker);
    this.scaleT = full([], Math.fround(this.initScale), { dtype: float32, device });
    this.trackerT = full([], tracker, { dtype: int32, device });
    this.hostScale = Math.fround(this.initScale);
    this.hostTracker = tracker;
  }

  private checkScale(funcname: string): [Tensor, Tensor] {
    if (this.scaleT === null) throw new AmpError(`Attempted ${funcname} but _scale is None.  ${FIX}`);
    if (this.trackerT === null) throw new AmpError(`Attempted ${funcname} but _growth_tracker is None.  ${FIX}`);
    return [this.scaleT, this.trackerT];
  }

  private stateOf(optimizer: object): OptimizerState {
    let s = this.states.get(optimizer);
    if (s === undefined) {
      s = freshState();
      this.states.set(optimizer, s);
    }
    return s;
  }

  /**
   * GS-3: multiply by the scale. A tensor gives `outputs * scale` (the scale copied to its device);
   * arrays, nested too, keep their structure; other iterables become a lazy generator. Disabled:
   * returns `outputs` itself.
   */
  scale(outputs: Tensor): Tensor;
  scale<T extends readonly unknown[]>(outputs: T): T;
  scale<T>(outputs: Iterable<T>): Generator<T, void, undefined>;
  scale(outputs: unknown): unknown;
  scale(outputs: unknown): unknown {
    if (!this.enabled) return outputs;
    if (outputs instanceof Tensor) {
      this.lazyInit(outputs.device);
      return scaleTensor(outputs, replicate(this.scaleT!, outputs.device, this.hostScale));
    }
    const perDevice = new Map<string, Tensor>();
    const apply = (val: unknown): unknown => {
      if (val instanceof Tensor) {
        this.lazyInit(val.device);
        const key = val.device.toString();
        let s = perDevice.get(key);
        if (s === undefined) {
          s = replicate(this.scaleT!, val.device, this.hostScale);
          perDevice.set(key, s);
        }
        return scaleTensor(val, s);
      }
      if (Array.isArray(val)) return val.map(apply);
      if (isIterable(val)) return lazyMap(val, apply);
      throw new ValueError('outputs must be a Tensor or an iterable of Tensors');
    };
    return apply(outputs);
  }

  /**
   * GS-5: divide the optimizer's grads by the scale in place, on their devices, recording per device
   * whether any was Inf/NaN. No host read. Call it before clipping grads; `step` calls it otherwise.
   */
  unscale(optimizer: ScalableOptimizer): void {
    if (!this.enabled) return;
    const [scale] = this.checkScale('unscale_');
    const state = this.stateOf(optimizer);
    if (state.stage === 'unscaled') throw new AmpError('unscale_() has already been called on this optimizer since the last update().');
    if (state.stage === 'stepped' || state.stepping) throw new AmpError('unscale_() is being called after step().');
    // Group every grad first: an f16 grad raises before any grad changes.
    const groups = new Map<string, { device: Device; byDType: Map<DType, Tensor[]> }>();
    for (const group of optimizer.paramGroups) {
      for (const param of group.params) {
        const grad = param.grad;
        if (grad === null || grad === undefined) continue;
        if (grad.dtype === float16) throw new ValueError('Attempting to unscale FP16 gradients.');
        const key = grad.device.toString();
        let perDevice = groups.get(key);
        if (perDevice === undefined) {
          perDevice = { device: grad.device, byDType: new Map() };
          groups.set(key, perDevice);
        }
        const list = perDevice.byDType.get(grad.dtype);
        if (list === undefined) perDevice.byDType.set(grad.dtype, [grad]);
        else list.push(grad);
      }
    }
    const invScale = reciprocalF32(scale);
    const foundInfPerDevice = new Map<string, Tensor>();
    for (const [key, { device, byDType }] of groups) {
      const foundInf = zeros([], { dtype: float32, device });
      const host = this.hostScale === undefined ? undefined : Math.fround(1 / this.hostScale);
      const inv = replicate(invScale, device, host);
      for (const grads of byDType.values()) ampForeachNonFiniteCheckAndUnscale_(grads, foundInf, inv);
      foundInfPerDevice.set(key, foundInf);
    }
    state.foundInfPerDevice = foundInfPerDevice;
    state.hostFoundInf = new Map();
    state.stage = 'unscaled';
  }

  /** PyTorch's name for `unscale`. */
  unscale_(optimizer: ScalableOptimizer): void {
    this.unscale(optimizer);
  }

  /**
   * GS-7: unscale (if not done yet), read the found-inf flags (the one host sync), and run
   * `optimizer.step(...args)` only if all are zero; returns its result, or undefined when skipped.
   */
  async step(optimizer: ScalableOptimizer, ...args: unknown[]): Promise<unknown> {
    if (!this.enabled) return optimizer.step(...args);
    if (args.some((a) => typeof a === 'function')) throw new AmpError('Closure use is not currently supported if GradScaler is enabled.');
    this.checkScale('step');
    const state = this.stateOf(optimizer);
    if (state.stage === 'stepped' || state.stepping) throw new AmpError('step() has already been called since the last update().');
    if (state.stage === 'ready') this.unscale(optimizer);
    if (state.foundInfPerDevice.size === 0) throw new AmpError('No inf checks were recorded for this optimizer.');
    state.stepping = true;
    compileGuard('GradScaler host mirror known', () => this.hostScale !== undefined && this.hostTracker !== undefined);
    try {
      // The one host read a compiled step keeps: its replay reads the same flags here.
      state.hostFoundInf = await compileAllowedRead(() => this.readFoundInf(state));
    } finally {
      state.stepping = false;
    }
    const found = [...state.hostFoundInf.values()].some((v) => v !== 0); // NaN counts as found
    compileBranch([...state.foundInfPerDevice.values()], found);
    const retval = found ? undefined : await optimizer.step(...args);
    compileBranchEnd();
    state.stage = 'stepped';
    return retval;
  }

  /**
   * Read every device's flag (one read per device, all awaited together). When the host mirror is
   * stale, the read on the scale's device also carries the scale and tracker, at no extra sync.
   */
  private async readFoundInf(state: OptimizerState): Promise<Map<string, number>> {
    const scale = this.scaleT!;
    const tracker = this.trackerT!;
    const epoch = this.epoch;
    const resync = this.hostScale === undefined || this.hostTracker === undefined;
    const reads = [...state.foundInfPerDevice].map(async ([key, flag]): Promise<[string, number]> => {
      if (!resync || !flag.device.equals(scale.device)) return [key, (await flag.data())[0]!];
      const wide = computesFloat64(scale.device);
      const packed = noGrad(() => {
        const p = zeros([3], { dtype: wide ? float64 : float32, device: scale.device });
        p.select(0, 0).copy_(flag);
        p.select(0, 1).copy_(scale);
        p.select(0, 2).copy_(tracker);
        return p;
      });
      const [f, s, t] = await packed.data();
      packed.dispose();
      if (this.epoch === epoch) {
        this.hostScale = Math.fround(s!);
        if (wide || Math.abs(t!) < 2 ** 24) this.hostTracker = t!; // exact in f32 below 2^24
      }
      return [key, f!];
    });
    return new Map(await Promise.all(reads));
  }

  /**
   * GS-8/9: a number or a 1-element tensor replaces the scale; otherwise the found-inf flags of every
   * optimizer are summed on the device and the scale is backed off or grown there. Then every
   * optimizer's state is reset for the next iteration.
   */
  update(newScale?: number | Tensor | null): void {
    if (!this.enabled) return;
    const [scale, tracker] = this.checkScale('update');
    if (newScale !== undefined && newScale !== null) {
      if (typeof newScale === 'number') {
        const value = Math.fround(newScale);
        noGrad(() => scale.fill_(value));
        this.hostScale = value;
      } else {
        const reason = 'new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False.';
        if (!(newScale instanceof Tensor)) throw new AmpError(reason);
        if (newScale.device.type !== this.deviceType) throw new AmpError(reason);
        if (newScale.numel() !== 1) throw new AmpError(reason);
        if (newScale.requiresGrad !== false) throw new AmpError(reason);
        noGrad(() => scale.copy_(newScale.reshape([])));
        this.hostScale = undefined; // on the device only; the next step() or getScale() reads it
      }
    } else {
      const states = [...this.states.values()];
      // A flag on another device comes over from the host when step() read it (no device read).
      const foundInfs = states.flatMap((s) => [...s.foundInfPerDevice].map(([key, f]) => replicate(f, scale.device, s.hostFoundInf.get(key))));
      if (foundInfs.length === 0) throw new AmpError('No inf checks were recorded prior to update.');
      const combined = noGrad(() => foundInfs.reduce((a, b) => a.add(b)));
      ampUpdateScale_(scale, tracker, combined, this.growthFactor, this.backoffFactor, this.growthInterval);
      const wide = computesFloat64(scale.device);
      this.advanceMirror(states, wide);
      // A compiled step's replay knows only whether its read found an Inf/NaN: advance the mirror from that.
      compileHostEffect((found) => {
        const next = hostUpdateScale(this.hostScale!, this.hostTracker!, found, this.growthFactor, this.backoffFactor, this.growthInterval, wide);
        this.hostScale = next.scale;
        this.hostTracker = next.tracker;
        this.epoch++;
      });
    }
    this.states = new Map();
    this.epoch++;
  }

  /** Apply GS-9 to the host mirror when step() told the host whether any flag was set. */
  private advanceMirror(states: readonly OptimizerState[], wide: boolean): void {
    const checked = states.filter((s) => s.foundInfPerDevice.size > 0);
    const known = (s: OptimizerState) => s.hostFoundInf.size === s.foundInfPerDevice.size;
    const anySet = (s: OptimizerState) => [...s.hostFoundInf.values()].some((v) => v !== 0);
    const found = checked.some((s) => known(s) && anySet(s)) ? true : checked.every(known) ? false : undefined;
    if (found === undefined || (!found && this.hostTracker === undefined)) {
      // Unknown: without the flags, or (clean) without the tracker, the host can't tell what happened.
      this.hostScale = undefined;
      this.hostTracker = undefined;
      return;
    }
    const next = hostUpdateScale(this.hostScale ?? 1, this.hostTracker ?? 0, found, this.growthFactor, this.backoffFactor, this.growthInterval, wide);
    if (this.hostScale !== undefined) this.hostScale = next.scale;
    this.hostTracker = next.tracker;
  }

  /** Read a 1-element device tensor now, if its backend can; undefined otherwise. */
  private static readNow(t: Tensor): number | undefined {
    const backend = getBackend(t.device.type);
    if (!backend.readSync) return undefined;
    return Number(backend.readSync(t._storage.handle)[t._offset]);
  }

  private staleError(what: string, asyncName: string): AmpError {
    return new AmpError(
      `${what}: the ${what === 'getScale()' ? 'scale' : 'growth tracker'} on ${this.scaleT!.device} changed on the device since the host last saw it ` +
        `(update() with a Tensor, or update() after unscale() without step()), and the ${this.scaleT!.device.type} backend cannot read ` +
        `synchronously: use \`await scaler.${asyncName}()\`. The next step() brings the host copy up to date.`,
    );
  }

  /** GS-12: the current scale (1 when disabled, initScale before the first `scale()`), with no device read in the usual loop. */
  getScale(): number {
    if (!this.enabled) return 1.0;
    if (this.scaleT === null) return this.initScale;
    if (this.hostScale === undefined) {
      const v = GradScaler.readNow(this.scaleT);
      if (v === undefined) throw this.staleError('getScale()', 'getScaleAsync');
      this.hostScale = v;
    }
    return this.hostScale;
  }

  /** The scale read from the device (works on every backend). */
  async getScaleAsync(): Promise<number> {
    if (!this.enabled) return 1.0;
    if (this.scaleT === null) return this.initScale;
    const epoch = this.epoch;
    const v = await this.scaleT.item();
    if (this.epoch === epoch && this.hostScale === undefined) this.hostScale = v;
    return v;
  }

  /** GS-12: clean updates since the last growth or backoff (0 when disabled). */
  getGrowthTracker(): number {
    if (!this.enabled) return 0;
    if (this.trackerT === null) return this.initGrowthTracker;
    if (this.hostTracker === undefined) {
      const v = GradScaler.readNow(this.trackerT);
      if (v === undefined) throw this.staleError('getGrowthTracker()', 'getGrowthTrackerAsync');
      this.hostTracker = v;
    }
    return this.hostTracker;
  }

  /** The growth tracker read from the device. */
  async getGrowthTrackerAsync(): Promise<number> {
    if (!this.enabled) return 0;
    if (this.trackerT === null) return this.initGrowthTracker;
    const epoch = this.epoch;
    const v = await this.trackerT.item();
    if (this.epoch === epoch && this.hostTracker === undefined) this.hostTracker = v;
    return v;
  }

  /** False when built with `enabled: false`: every method is then a pass-through. */
  isEnabled(): boolean {
    return this.enabled;
  }

  /** The factor the scale grows by after `growthInterval` clean updates. */
  getGrowthFactor(): number {
    return this.growthFactor;
  }

  /** Change the growth factor from now on. */
  setGrowthFactor(newFactor: number): void {
    this.growthFactor = newFactor;
  }

  /** The factor the scale shrinks by after an update that saw Inf/NaN. */
  getBackoffFactor(): number {
    return this.backoffFactor;
  }

  /** Change the backoff factor from now on. */
  setBackoffFactor(newFactor: number): void {
    this.backoffFactor = newFactor;
  }

  /** Clean updates in a row before the scale grows. */
  getGrowthInterval(): number {
    return this.growthInterval;
  }

  /** Change the growth interval from now on. */
  setGrowthInterval(newInterval: number): void {
    this.growthInterval = newInterval;
  }

  /** GS-13: `{}` when disabled. Uses `getScale()`; see `stateDictAsync()` for devices without sync reads. */
  stateDict(): GradScalerStateDict | Record<string, never> {
    if (!this.enabled) return {};
    return this.stateWith(this.getScale(), this.getGrowthTracker());
  }

  /** `stateDict()` for devices without synchronous reads: awaits the scale and the growth tracker. */
  async stateDictAsync(): Promise<GradScalerStateDict | Record<string, never>> {
    if (!this.enabled) return {};
    return this.stateWith(await this.getScaleAsync(), await this.getGrowthTrackerAsync());
  }

  private stateWith(scale: number, growthTracker: number): GradScalerStateDict {
    return {
      scale,
      growthFactor: this.growthFactor,
      backoffFactor: this.backoffFactor,
      growthInterval: this.growthInterval,
      _growthTracker: growthTracker,
    };
  }

  /**
   * GS-13: restore all five values (a no-op when disabled). Each is checked before anything changes:
   * a non-number is a TypeError, a number out of range (scale finite and > 0 in float32, growthFactor
   * > 1, backoffFactor in (0, 1), growthInterval a positive integer, _growthTracker a non-negative
   * integer, both within int32 as the device tracker is) a ValueError naming the field and the value.
   */
  loadStateDict(stateDict: GradScalerStateDict | Record<string, never>): void {
    if (!this.enabled) return;
    if (stateDict === null || typeof stateDict !== 'object') throw new TypeError('loadStateDict(): expected the object stateDict() returned');
    if (Object.keys(stateDict).length === 0) {
      throw new AmpError('The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.');
    }
    const sd = stateDict as Partial<GradScalerStateDict>;
    for (const [key, inRange, rule] of STATE_RULES) {
      const value: unknown = sd[key];
      if (typeof value !== 'number') throw new TypeError(`loadStateDict(): '${key}' must be a number, got ${describe(value)}`);
      if (!inRange(value)) throw new ValueError(`loadStateDict(): '${key}' must be ${rule}, got ${value}; the state dict is damaged or was not made by GradScaler.stateDict()`);
    }
    const { scale, growthFactor, backoffFactor, growthInterval, _growthTracker } = sd as GradScalerStateDict;
    this.initScale = scale;
    if (this.scaleT !== null) {
      const s = this.scaleT;
      noGrad(() => s.fill_(Math.fround(scale)));
      this.hostScale = Math.fround(scale);
    }
    this.growthFactor = growthFactor;
    this.backoffFactor = backoffFactor;
    this.growthInterval = growthInterval;
    this.initGrowthTracker = _growthTracker;
    if (this.trackerT !== null) {
      const t = this.trackerT;
      noGrad(() => t.fill_(_growthTracker));
      this.hostTracker = _growthTracker;
    }
    this.epoch++;
  }
}
