// The page: pick the device (webgpu when the browser has an adapter, else cpu, and say why), load
// the packed digits, and run the README's training loop — DataLoader, batches moved with nonBlocking,
// AdamW, the AMP switch (ampConfig + autocast + GradScaler + StabilityGuard) — drawing the chart
// after every step. Query parameters prefill the controls: ?steps=20&model=mlp&amp=off&device=cpu
// &batch=64&lr=0.002&seed=0&eval=10 (&autostart=1 starts at once). The run's state is mirrored on
// `window.__demo` for tests.
import '@core/backend-cpu';
import '@core/backend-webgpu';
import { DataLoader, TensorDataset } from '@core/data';
import { F } from '@core/nn';
import { AdamW } from '@core/optim';
import {
  ampConfig, autocast, availableDevices, bestDevice, cpu, device as parseDevice, Generator, getBackend, GradScaler, manualSeed,
  noGrad, StabilityGuard, type AmpMode, type AutocastOptions, type Device, type Tensor,
} from '@core/tensor';
import { renderChart } from './chart';
import { loadMnist, type MnistSplit } from './data';
// The same two models as the Node demo (same layers, same seed → same weights).
import { buildModel, type ModelKind } from '../../train-mnist/src/models';

type State = 'idle' | 'loading' | 'running' | 'stopping' | 'done' | 'stopped' | 'error';

interface DemoState {
  state: State;
  device: string | null;
  deviceReason: string;
  devices: { type: string; available: boolean; reason?: string }[];
  amp: string;
  ampReason: string;
  config: Record<string, unknown> | null;
  losses: number[];
  accuracy: { step: number; value: number }[];
  notices: string[];
  error: string | null;
  seconds: number;
}

const demo: DemoState = {
  state: 'idle', device: null, deviceReason: '', devices: [], amp: '', ampReason: '', config: null,
  losses: [], accuracy: [], notices: [], error: null, seconds: 0,
};
(window as unknown as { __demo: DemoState }).__demo = demo;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const controls = {
  device: $<HTMLSelectElement>('device-select'), model: $<HTMLSelectElement>('model'), amp: $<HTMLSelectElement>('amp'),
  steps: $<HTMLInputElement>('steps'), batch: $<HTMLInputElement>('batch'), lr: $<HTMLInputElement>('lr'),
};
const startButton = $<HTMLButtonElement>('start');
const stopButton = $<HTMLButtonElement>('stop');
const statusLine = $('status');
const deviceLine = $('device');
const ampLine = $('amp-reason');
const chartHost = $('chart');
const logBox = $('log');

const params = new URLSearchParams(location.search);
for (const [key, el] of Object.entries({ ...controls, device: controls.device })) {
  const v = params.get(key);
  if (v !== null) el.value = v;
}
const seed = Number(params.get('seed') ?? 0);

function setState(state: State, text: string): void {
  demo.state = state;
  statusLine.dataset.state = state;
  statusLine.textContent = text;
  const busy = state === 'loading' || state === 'running' || state === 'stopping';
  startButton.disabled = busy;
  stopButton.disabled = state !== 'running';
  for (const el of Object.values(controls)) el.disabled = busy;
}

function log(text: string): void {
  demo.notices.push(text);
  logBox.textContent += `${text}\n`;
  logBox.scrollTop = logBox.scrollHeight;
}

const escape = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);

/** A macrotask turn (MessageChannel: not clamped like setTimeout), so clicks and paints get in. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });
}

/** The device to train on, and one line saying why. */
async function chooseDevice(wanted: string): Promise<{ dev: Device; reason: string }> {
  const devices = await availableDevices();
  demo.devices = devices.map(({ type, available, reason }) => ({ type, available, ...(reason ? { reason } : {}) }));
  const gpu = devices.find((d) => d.type === 'webgpu');
  const gpuWhyNot = gpu ? gpu.reason ?? 'unknown' : 'the webgpu backend is not registered';
  const adapter = () => {
    const info = (getBackend('webgpu') as unknown as { adapterInfo?: string; shaderF16?: boolean });
    return `${info.adapterInfo ?? 'adapter'}${info.shaderF16 ? ', shader-f16' : ''}`;
  };
  if (wanted === 'cpu') {
    return { dev: cpu, reason: `cpu requested${gpu?.available ? ' (webgpu is available too)' : ` (webgpu: ${gpuWhyNot})`}` };
  }
  if (wanted === 'webgpu') {
    if (!gpu?.available) throw new Error(`webgpu requested but unavailable: ${gpuWhyNot}`);
    return { dev: parseDevice('webgpu:0'), reason: `webgpu requested: ${adapter()}` };
  }
  const dev = await bestDevice();
  if (dev.type === 'webgpu') return { dev, reason: `bestDevice(): webgpu has an adapter (${adapter()})` };
  return { dev, reason: `bestDevice(): fell back to cpu — webgpu unavailable: ${gpuWhyNot}` };
}

async function evaluate(model: ReturnType<typeof buildModel>, data: MnistSplit, dev: Device, precision: AutocastOptions): Promise<number> {
  model.eval();
  let correct = 0;
  const n = data.testImages.shape[0]!;
  for (let start = 0; start < n; start += 500) {
    const end = Math.min(start + 500, n);
    const hits = noGrad(() => {
      const x = data.testImages.slice(0, start, end).to(dev);
      const y = data.testLabels.slice(0, start, end).to(dev);
      return autocast(precision, () => model.forward(x) as Tensor).argmax(1).eq(y).sum();
    });
    correct += await hits.item();
  }
  model.train();
  return correct / n;
}

let dataPromise: Promise<MnistSplit & { total: number }> | null = null;
let stopRequested = false;

async function run(): Promise<void> {
  stopRequested = false;
  demo.losses = [];
  demo.accuracy = [];
  demo.error = null;
  const config = {
    device: controls.device.value, model: controls.model.value as ModelKind, amp: controls.amp.value as AmpMode,
    steps: Math.max(1, Number(controls.steps.value) | 0), batchSize: Math.max(1, Number(controls.batch.value) | 0),
    lr: Number(controls.lr.value), seed, evalEvery: Number(params.get('eval') ?? 0) | 0,
  };
  const evalEvery = config.evalEvery > 0 ? config.evalEvery : Math.max(10, Math.round(config.steps / 10));
  demo.config = { ...config, evalEvery };
  const draw = () => renderChart(chartHost, { losses: demo.losses, accuracy: demo.accuracy, totalSteps: config.steps });
  draw();
  try {
    setState('loading', 'choosing the device…');
    const { dev, reason } = await chooseDevice(config.device);
    demo.device = dev.type;
    demo.deviceReason = reason;
    deviceLine.dataset.type = dev.type;
    deviceLine.innerHTML = `device: <b>${escape(dev.toString())}</b> — ${escape(reason)}`;

    setState('loading', 'loading digits…');
    dataPromise ??= loadMnist();
    const data = await dataPromise;
    log(`${data.total} digits: ${data.trainImages.shape[0]} train, ${data.testImages.shape[0]} test`);

    manualSeed(config.seed);
    const model = buildModel(config.model).to(dev);
    const optimizer = new AdamW(model.parameters(), { lr: config.lr });
    const loader = new DataLoader(new TensorDataset(data.trainImages, data.trainLabels), {
      batchSize: config.batchSize, shuffle: true, generator: new Generator(config.seed), pinMemory: dev.type !== 'cpu',
    });
    const amp = ampConfig(dev, config.amp);
    demo.amp = amp.mode;
    demo.ampReason = amp.reason;
    ampLine.textContent = amp.reason;
    const guard = new StabilityGuard(dev, amp, { log });
    let scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });

    setState('running', `training ${config.model} on ${dev}…`);
    const started = performance.now();
    let step = 0;
    training: while (step < config.steps) {
      for await (const [xb, yb] of loader) {
        const x = xb.to(dev, { nonBlocking: true });
        const y = yb.to(dev, { nonBlocking: true });
        const forward = () => F.crossEntropy(model.forward(x) as Tensor, y);
        const loss = autocast(guard.autocastOptions, forward);
        optimizer.zeroGrad();
        scaler.scale(loss).backward();
        const scaleBefore = scaler.getScale();
        await scaler.step(optimizer);
        scaler.update();
        const skipped = scaler.isEnabled() && scaler.getScale() < scaleBefore;
        const value = await loss.item();
        if (guard.observe(value, { skipped, rerun: forward })?.to) {
          scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });
          demo.amp = guard.config.mode;
          ampLine.textContent = `${amp.reason} → now ${guard.config.mode}`;
        }
        demo.losses.push(value);
        step++;
        const last = step === config.steps || stopRequested;
        if (step % evalEvery === 0 || last) {
          demo.accuracy.push({ step, value: await evaluate(model, data, dev, guard.autocastOptions) });
        }
        demo.seconds = (performance.now() - started) / 1000;
        const acc = demo.accuracy.at(-1);
        statusLine.textContent = `step ${step}/${config.steps} · loss ${value.toFixed(4)}${acc ? ` · test ${(acc.value * 100).toFixed(1)}%` : ''} · ${(step / demo.seconds).toFixed(1)} steps/s`;
        draw();
        await nextTask(); // let Stop clicks and repaints in
        if (last) break training;
      }
    }
    const acc = demo.accuracy.at(-1);
    const summary = `${step} steps in ${demo.seconds.toFixed(1)} s on ${dev} (amp ${guard.config.mode}) · final loss ${demo.losses.at(-1)?.toFixed(4)} · test accuracy ${acc ? (acc.value * 100).toFixed(2) : '?'}%`;
    log(summary);
    setState(stopRequested ? 'stopped' : 'done', `${stopRequested ? 'stopped' : 'done'}: ${summary}`);
  } catch (e) {
    demo.error = String((e as Error)?.stack ?? e);
    log(`error: ${String((e as Error)?.message ?? e)}`);
    setState('error', `error: ${String((e as Error)?.message ?? e)}`);
  }
}

startButton.addEventListener('click', () => void run());
stopButton.addEventListener('click', () => {
  stopRequested = true;
  setState('stopping', 'stopping after this step…');
});

// Say which device auto would pick before anything runs.
void chooseDevice('auto').then(({ dev, reason }) => {
  if (demo.device === null) {
    deviceLine.dataset.type = dev.type;
    deviceLine.innerHTML = `device (auto): <b>${escape(dev.toString())}</b> — ${escape(reason)}`;
  }
}, (e) => { deviceLine.textContent = `device: ${String(e)}`; });
renderChart(chartHost, { losses: [], accuracy: [], totalSteps: Number(controls.steps.value) || 1 });
if (params.get('autostart') === '1') void run();
