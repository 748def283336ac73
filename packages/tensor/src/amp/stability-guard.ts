// A guard for mixed-precision training loops: it notices a non-finite loss or a run of skipped
// steps, names the first op that produced a non-finite value (anomaly mode), and falls back
// fp16 → bf16 → fp32, saying so each time.
import { device as parseDevice, type DeviceLike } from '../device/device.js';
import { bfloat16 } from '../dtype/dtype.js';
import { ValueError } from '../errors/errors.js';
import { noGrad } from '../autograd/grad-mode.js';
import { ampSupports, type AmpConfig } from './amp-config.js';
import { AnomalyError, detectAnomaly, type AnomalyReport } from './anomaly.js';
import { autocast, type AutocastOptions } from './autocast.js';

/** How eager StabilityGuard is to act, and where it reports. */
export interface StabilityGuardOptions {
  /** This many consecutive skipped steps (the GradScaler found Inf/NaN gradients) count as unstable. */
  readonly maxSkippedSteps?: number;
  /** Fall back to a more stable precision when unstable (default), or only report. */
  readonly fallback?: boolean;
  /** Where the guard's one-line reports go (default console.warn). */
  readonly log?: (message: string) => void;
}

/** One unstable step the guard saw, and what it did about it. */
export interface GuardEvent {
  /** The step number (counting `observe` calls from 1). */
  readonly step: number;
  /** What made the step unstable. */
  readonly cause: 'non-finite loss' | 'skipped steps';
  /** A one-line explanation, as logged. */
  readonly detail: string;
  /** The first op that produced a non-finite value, when the step could be re-run to find it. */
  readonly anomaly: AnomalyReport | null;
  /** The precision in use when it happened. */
  readonly from: AmpConfig;
  /** The precision used from now on; null when it did not change. */
  readonly to: AmpConfig | null;
}

/** What `StabilityGuard.observe` may be told beside the loss. */
export interface ObserveOptions {
  /** Whether the GradScaler skipped this step. */
  readonly skipped?: boolean;
  /** Re-runs this step's forward pass (loss computation), to find the op that went non-finite. */
  readonly rerun?: () => unknown;
}

/**
 * Watches a mixed-precision training loop: on a non-finite loss, or too many skipped steps in a row, it names the first op that went non-finite (given a way to re-run the step) and falls back fp16 → bf16 → fp32, logging each change.
 */
export class StabilityGuard {
  private current: AmpConfig;
  private readonly deviceType: string;
  private readonly maxSkipped: number;
  private readonly fallback: boolean;
  private readonly log: (message: string) => void;
  private steps = 0;
  private skippedRun = 0;
  /** Every unstable step seen so far, oldest first. */
  readonly events: GuardEvent[] = [];

  constructor(device: DeviceLike, initial: AmpConfig, options: StabilityGuardOptions = {}) {
    const { maxSkippedSteps = 10, fallback = true, log = (m: string) => console.warn(m) } = options;
    if (!Number.isInteger(maxSkippedSteps) || maxSkippedSteps < 1) {
      throw new ValueError(`StabilityGuard: maxSkippedSteps must be a positive integer, got ${maxSkippedSteps}`);
    }
    this.deviceType = parseDevice(device).type;
    this.current = initial;
    this.maxSkipped = maxSkippedSteps;
    this.fallback = fallback;
    this.log = log;
  }

  /** The precision in use now. */
  get config(): AmpConfig {
    return this.current;
  }

  /** Options for `autocast(guard.autocastOptions, …)` matching the current precision. */
  get autocastOptions(): AutocastOptions {
    return { deviceType: this.deviceType, enabled: this.current.enabled, ...(this.current.dtype ? { dtype: this.current.dtype } : {}) };
  }

  /** Report each step's loss; returns what the guard did when the step was unstable. */
  observe(loss: number, { skipped = false, rerun }: ObserveOptions = {}): GuardEvent | null {
    this.steps++;
    let cause: GuardEvent['cause'] | null = null;
    let detail = '';
    if (!Number.isFinite(loss)) {
      cause = 'non-finite loss';
      detail = `loss is ${loss}`;
    } else if (skipped) {
      this.skippedRun++;
      if (this.skippedRun >= this.maxSkipped) {
        cause = 'skipped steps';
        detail = `${this.skippedRun} steps in a row were skipped for Inf/NaN gradients`;
      }
    } else {
      this.skippedRun = 0;
    }
    if (!cause) return null;
    this.skippedRun = 0;
    const anomaly = rerun ? this.diagnose(rerun) : null;
    const from = this.current;
    const to = this.fallback ? this.nextConfig(from) : null;
    if (to) this.current = to;
    const event: GuardEvent = { step: this.steps, cause, detail, anomaly, from, to };
    this.events.push(event);
    const where = anomaly ? `; first non-finite value: ${anomaly.op} produced ${anomaly.value}${anomaly.site ? ` at ${anomaly.site}` : ''}` : '';
    const change = to ? `; falling back ${from.mode} → ${to.mode === 'off' ? 'fp32' : to.mode}` : from.mode === 'off' ? '; already in fp32: check the learning rate and the data' : '';
    this.log(`amp guard: step ${this.steps}: ${detail}${where}${change}`);
    return event;
  }

  /** Re-run a forward pass with every op checked; the first op to go non-finite, or null. */
  diagnose(rerun: () => unknown): AnomalyReport | null {
    try {
      noGrad(() => detectAnomaly(() => autocast(this.autocastOptions, rerun)));
      return null;
    } catch (e) {
      if (e instanceof AnomalyError) return { op: e.op, value: e.value, site: e.site, shape: e.shape, dtype: e.dtype };
      throw e;
    }
  }

  private nextConfig(from: AmpConfig): AmpConfig | null {
    if (from.mode === 'fp16' && ampSupports(this.deviceType, bfloat16)) {
      return { mode: 'bf16', enabled: true, dtype: bfloat16, useScaler: false, reason: 'fallback from fp16: bfloat16 has float32\'s range' };
    }
    if (from.mode !== 'off') return { mode: 'off', enabled: false, dtype: null, useScaler: false, reason: `fallback from ${from.mode}: float32` };
    return null;
  }
}
