// What the pages (MNIST, the GPT, fine-tuning GPT-2) share: the status line, Start/Stop buttons and
// log kept in step with the run's state; the query string's prefill of the controls and reading
// numbers from them; the device choice and the line saying why; the training loop's hooks of the
// language-model pages; and loading the gzipped data files the build packed (assets.ts).
import { availableDevices, bestDevice, cpu, device as parseDevice, getBackend, type Device, type DeviceAvailability } from '@core/tensor';
import type { EvalRecord, TrainHooks } from '../../gpt/src/loop';

/** Where a run is. idle, done, stopped and error leave the controls free; the others lock them. */
export type RunPhase = 'idle' | 'loading' | 'running' | 'sampling' | 'stopping' | 'done' | 'stopped' | 'error';

/** The part of a page's state (mirrored on `window` for tests) that the page frame keeps. */
export interface RunRecord {
  state: RunPhase;
  device: string | null;
  deviceReason: string;
  devices: { type: string; available: boolean; reason?: string }[];
  amp: string;
  ampReason: string;
  notices: string[];
  error: string | null;
}

/** A fresh record: idle, no device yet. */
export function idleRecord(): RunRecord {
  return { state: 'idle', device: null, deviceReason: '', devices: [], amp: '', ampReason: '', notices: [], error: null };
}

/** The element with this id (the pages' HTML has every id the scripts use). */
export const byId = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** `s` with &, < and > escaped, for innerHTML. */
export const escapeHtml = (s: string): string => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);

/** What a numeric control must hold. */
export type NumberKind = 'integer ≥ 1' | 'integer ≥ 0' | 'number > 0';

/** Form controls by the query parameter that prefills them. */
export type Controls = Record<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>;

/**
 * The frame of a training page: `#status`, `#start`, `#stop`, `#log`, `#device` and `#amp-reason`,
 * kept in step with `record`. Query parameters named like `controls`' keys prefill those controls.
 */
export class PageFrame {
  /** The query string: the controls' values and any page-specific switches (autostart=1, seed=…). */
  readonly params = new URLSearchParams(location.search);
  readonly #status = byId('status');
  readonly #start = byId<HTMLButtonElement>('start');
  readonly #stop = byId<HTMLButtonElement>('stop');
  readonly #log = byId('log');
  readonly #device = byId('device');
  readonly #amp = byId('amp-reason');

  constructor(readonly record: RunRecord, readonly controls: Controls) {
    for (const [key, el] of Object.entries(controls)) {
      const v = this.params.get(key);
      if (v !== null) el.value = v;
    }
    // Say which device auto would pick before anything runs.
    void chooseDevice('auto').then(({ dev, reason }) => {
      if (record.device === null) this.#showDevice('device (auto)', dev, reason);
    }, (e: unknown) => { this.#device.textContent = `device: ${String(e)}`; });
  }

  /** Move the run to `state`, with `text` on the status line; locks the controls while it is busy. */
  setState(state: RunPhase, text: string): void {
    this.record.state = state;
    this.#status.dataset.state = state;
    this.#status.textContent = text;
    const busy = !['idle', 'done', 'stopped', 'error'].includes(state);
    this.#start.disabled = busy;
    this.#stop.disabled = state !== 'running';
    for (const el of Object.values(this.controls)) el.disabled = busy;
  }

  /** The number in control `key`, or an error naming the control and what it must hold. */
  number(key: string, kind: NumberKind = 'integer ≥ 1'): number {
    const raw = this.controls[key]!.value.trim();
    const n = raw === '' ? NaN : Number(raw);
    const ok = kind === 'number > 0' ? Number.isFinite(n) && n > 0 : Number.isSafeInteger(n) && n >= (kind === 'integer ≥ 1' ? 1 : 0);
    if (!ok) throw new Error(`${key} must be ${kind === 'number > 0' ? 'a' : 'an'} ${kind}, got '${raw}'`);
    return n;
  }

  /** Replace the status line's text, the state unchanged. */
  status(text: string): void {
    this.#status.textContent = text;
  }

  /** Append a line to the log (and to the record's notices). */
  log(text: string): void {
    this.record.notices.push(text);
    this.#log.textContent += `${text}\n`;
    this.#log.scrollTop = this.#log.scrollHeight;
  }

  /** Pick the device for the device control's value, record it and show why. */
  async useDevice(wanted: string): Promise<Device> {
    const { dev, reason, devices } = await chooseDevice(wanted);
    this.record.devices = devices.map(({ type, available, reason: why }) => ({ type, available, ...(why ? { reason: why } : {}) }));
    this.record.device = dev.type;
    this.record.deviceReason = reason;
    this.#showDevice('device', dev, reason);
    return dev;
  }

  /** Record and show the precision the run trains in and why; `now` names a later switch the stability guard made. */
  showAmp(mode: string, reason: string, now?: string): void {
    this.record.amp = now ?? mode;
    this.record.ampReason = reason;
    this.#amp.textContent = now ? `${reason} → now ${now}` : reason;
  }

  /** Record a failure and show its message. */
  fail(e: unknown): void {
    const message = String((e as Error)?.message ?? e);
    this.record.error = String((e as Error)?.stack ?? e);
    this.log(`error: ${message}`);
    this.setState('error', `error: ${message}`);
  }

  /** Call `handler` on Start; Stop moves the run to 'stopping' and calls `onStop`. */
  onStartStop(handler: () => Promise<void>, onStop: () => void): void {
    this.#start.addEventListener('click', () => void handler());
    this.#stop.addEventListener('click', () => {
      onStop();
      this.setState('stopping', 'stopping after this step…');
    });
  }

  #showDevice(label: string, dev: Device, reason: string): void {
    this.#device.dataset.type = dev.type;
    this.#device.innerHTML = `${label}: <b>${escapeHtml(dev.toString())}</b> — ${escapeHtml(reason)}`;
  }
}

/**
 * The training loop's hooks of a page's run: each step's loss and each validation estimate pushed
 * onto `run`'s lists and `draw`n, notices logged, the status line telling the step; `signal` stops it.
 */
export function trainingHooks(page: PageFrame, run: { losses: number[]; evals: EvalRecord[] }, draw: () => void, signal: AbortSignal): TrainHooks {
  return {
    signal,
    onNotice: (line) => page.log(line),
    onEval: (record) => {
      run.evals.push(record);
      draw();
    },
    onStep: ({ step, steps, loss, lr, stepsPerSecond }) => {
      run.losses.push(loss);
      const val = run.evals.at(-1)!;
      page.status(`step ${step}/${steps} · loss ${loss.toFixed(4)} · validation ${val.valLoss.toFixed(4)} (step ${val.step}) · lr ${lr.toExponential(2)} · ${stepsPerSecond.toFixed(2)} steps/s`);
      draw();
    },
  };
}

/**
 * The device to train on for a device control's value — 'cpu', 'webgpu' (an error saying why when
 * the browser has no adapter) or 'auto' (bestDevice()) — one line saying why, and every backend's
 * availability.
 */
export async function chooseDevice(wanted: string): Promise<{ dev: Device; reason: string; devices: DeviceAvailability[] }> {
  const devices = await availableDevices();
  const gpu = devices.find((d) => d.type === 'webgpu');
  const gpuWhyNot = gpu ? gpu.reason ?? 'unknown' : 'the webgpu backend is not registered';
  const adapter = () => {
    const info = (getBackend('webgpu') as unknown as { adapterInfo?: string; shaderF16?: boolean });
    return `${info.adapterInfo ?? 'adapter'}${info.shaderF16 ? ', shader-f16' : ''}`;
  };
  if (wanted === 'cpu') {
    return { dev: cpu, reason: `cpu requested${gpu?.available ? ' (webgpu is available too)' : ` (webgpu: ${gpuWhyNot})`}`, devices };
  }
  if (wanted === 'webgpu') {
    if (!gpu?.available) throw new Error(`webgpu requested but unavailable: ${gpuWhyNot}`);
    return { dev: parseDevice('webgpu:0'), reason: `webgpu requested: ${adapter()}`, devices };
  }
  const dev = await bestDevice();
  if (dev.type === 'webgpu') return { dev, reason: `bestDevice(): webgpu has an adapter (${adapter()})`, devices };
  return { dev, reason: `bestDevice(): fell back to cpu — webgpu unavailable: ${gpuWhyNot}`, devices };
}

/** A gzipped file the build packed, fetched and inflated (by the browser when the server says the content is gzip-encoded); an error if it cannot be fetched or is not `bytes` long. */
export async function fetchGzipped(url: string, bytes: number, what: string): Promise<Uint8Array> {
  const res = await fetch(url);
  if (!res.ok || !res.body) throw new Error(`could not load ${what} from ${url}: HTTP ${res.status}`);
  // A server may send a .gz file as gzip-encoded content (vite preview does): the browser has inflated it already.
  const encoded = /\bgzip\b/i.test(res.headers.get('content-encoding') ?? '');
  const body = encoded ? res.body : res.body.pipeThrough(new DecompressionStream('gzip'));
  const inflated = new Uint8Array(await new Response(body).arrayBuffer());
  if (inflated.length !== bytes) throw new Error(`${what}: the file has ${inflated.length} bytes, expected ${bytes}`);
  return inflated;
}
