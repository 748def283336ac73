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
  ampConfig, autocast, Generator, GradScaler, manualSeed, noGrad, StabilityGuard,
  type AmpMode, type AutocastOptions, type Device, type Tensor,
} from '@core/tensor';
import { renderChart } from './chart';
import { loadMnist, type MnistSplit } from './data';
import { byId, idleRecord, PageFrame, type RunRecord } from './page';
// The same two models as the Node demo (same layers, same seed → same weights).
import { buildModel, type ModelKind } from '../../train-mnist/src/models';

interface DemoState extends RunRecord {
  config: Record<string, unknown> | null;
  losses: number[];
  accuracy: { step: number; value: number }[];
  seconds: number;
}

const demo: DemoState = { ...idleRecord(), config: null, losses: [], accuracy: [], seconds: 0 };
(window as unknown as { __demo: DemoState }).__demo = demo;

const controls = {
  device: byId<HTMLSelectElement>('device-select'), model: byId<HTMLSelectElement>('model'), amp: byId<HTMLSelectElement>('amp'),
  steps: byId<HTMLInputElement>('steps'), batch: byId<HTMLInputElement>('batch'), lr: byId<HTMLInputElement>('lr'),
};
const page = new PageFrame(demo, controls);
const chartHost = byId('chart');
const seed = Number(page.params.get('seed') ?? 0);

/** A macrotask turn (MessageChannel: not clamped like setTimeout), so clicks and paints get in. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });
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
    lr: Number(controls.lr.value), seed, evalEvery: Number(page.params.get('eval') ?? 0) | 0,
  };
  const evalEvery = config.evalEvery > 0 ? config.evalEvery : Math.max(10, Math.round(config.steps / 10));
  demo.config = { ...config, evalEvery };
  const draw = () => renderChart(chartHost, { losses: demo.losses, accuracy: demo.accuracy, totalSteps: config.steps });
  draw();
  try {
    page.setState('loading', 'choosing the device…');
    const dev = await page.useDevice(config.device);

    page.setState('loading', 'loading digits…');
    dataPromise ??= loadMnist();
    const data = await dataPromise;
    page.log(`${data.total} digits: ${data.trainImages.shape[0]} train, ${data.testImages.shape[0]} test`);

    manualSeed(config.seed);
    const model = buildModel(config.model).to(dev);
    const optimizer = new AdamW(model.parameters(), { lr: config.lr });
    const loader = new DataLoader(new TensorDataset(data.trainImages, data.trainLabels), {
      batchSize: config.batchSize, shuffle: true, generator: new Generator(config.seed), pinMemory: dev.type !== 'cpu',
    });
    const amp = ampConfig(dev, config.amp);
    page.showAmp(amp.mode, amp.reason);
    const guard = new StabilityGuard(dev, amp, { log: (line) => page.log(line) });
    let scaler = new GradScaler(dev.type, { enabled: guard.config.useScaler });

    page.setState('running', `training ${config.model} on ${dev}…`);
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
          page.showAmp(amp.mode, amp.reason, guard.config.mode);
        }
        demo.losses.push(value);
        step++;
        const last = step === config.steps || stopRequested;
        if (step % evalEvery === 0 || last) {
          demo.accuracy.push({ step, value: await evaluate(model, data, dev, guard.autocastOptions) });
        }
        demo.seconds = (performance.now() - started) / 1000;
        const acc = demo.accuracy.at(-1);
        page.status(`step ${step}/${config.steps} · loss ${value.toFixed(4)}${acc ? ` · test ${(acc.value * 100).toFixed(1)}%` : ''} · ${(step / demo.seconds).toFixed(1)} steps/s`);
        draw();
        await nextTask(); // let Stop clicks and repaints in
        if (last) break training;
      }
    }
    const acc = demo.accuracy.at(-1);
    const summary = `${step} steps in ${demo.seconds.toFixed(1)} s on ${dev} (amp ${guard.config.mode}) · final loss ${demo.losses.at(-1)?.toFixed(4)} · test accuracy ${acc ? (acc.value * 100).toFixed(2) : '?'}%`;
    page.log(summary);
    page.setState(stopRequested ? 'stopped' : 'done', `${stopRequested ? 'stopped' : 'done'}: ${summary}`);
  } catch (e) {
    page.fail(e);
  }
}

page.onStartStop(run, () => { stopRequested = true; });
renderChart(chartHost, { losses: [], accuracy: [], totalSteps: Number(controls.steps.value) || 1 });
if (page.params.get('autostart') === '1') void run();
