#!/usr/bin/env node
// The README's training loop — an MLP trained with F.crossEntropy and AdamW, under autocast where
// the device's dtypes allow it, stepped through a GradScaler — on one device, in a process of its
// own. isolated.test.ts runs it on jsref in a process that never imports @core/backend-cpu (with
// --sync-reads: jsref with a synchronous read, see sync-jsref.mjs), and on the cpu for the
// reference losses. Prints one JSON line: { backends, syncRead, amp, losses }.
//
//   node test/readme-loop.mjs <device> [--sync-reads] [--amp auto|bf16|fp16|off] [--steps n]
//
// Two things differ from the README, both because no cpu backend is registered here: the data is
// made on the device (there are no cpu tensors to move), and the model is built there with
// `{ device }` (PyTorch's factory keyword) instead of being built on the cpu and moved with `.to()`.
// The GradScaler is enabled even when autocast is off: it scales by powers of two, which is exact in
// float32, so its device-side unscale and inf check run without changing the losses.
import { parseArgs } from 'node:util';
import {
  ampConfig, autocast, device as parseDevice, getBackend, GradScaler, listBackends, manualSeed, randint, randn, registerBackend,
} from '@core/tensor';
import { AdamW } from '@core/optim';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { amp: { type: 'string', default: 'auto' }, steps: { type: 'string', default: '20' }, 'sync-reads': { type: 'boolean', default: false } },
});
const spec = positionals[0] ?? 'jsref:0';
if (spec === 'cpu') {
  await import('@core/backend-cpu');
} else {
  await import('../dist/index.js'); // registers 'jsref' and nothing else
  if (values['sync-reads']) {
    const { createSyncJsRef } = await import('./sync-jsref.mjs');
    registerBackend({ name: 'jsref', priority: 10, create: createSyncJsRef }); // replaces the asynchronous one
  }
  if (listBackends().includes('cpu')) throw new Error(`readme-loop: the cpu backend is registered (${listBackends().join(', ')}): this run is not isolated`);
}
const dev = parseDevice(spec);
// @core/nn is not a dependency of this example, whose backend is written against @core/tensor
// alone: the workspace's build of it is loaded (built before these tests: @core/conformance needs it).
const { nn, F } = await import(new URL('../../../packages/nn/dist/index.js', import.meta.url).href);

manualSeed(0); // counter-based random numbers: the same data and weights on every backend
const classes = 4;
const labels = randint(0, classes, [128], { device: dev });
const centers = randn([classes, 64], { device: dev }).mul(0.3);
const images = centers.indexSelect(0, labels).add(randn([128, 64], { device: dev })).reshape([128, 1, 8, 8]);

const model = new nn.Sequential(new nn.Flatten(), new nn.Linear(64, 32, { device: dev }), new nn.ReLU(), new nn.Linear(32, classes, { device: dev }));
const optimizer = new AdamW(model.parameters(), { lr: 1e-2 });
const amp = ampConfig(dev, values.amp);
const scaler = new GradScaler(dev.type, { initScale: 2 ** 10 });

const losses = [];
for (let step = 0; step < Number(values.steps); step++) {
  const at = (step * 32) % 128;
  const x = images.narrow(0, at, 32);
  const y = labels.narrow(0, at, 32);
  const forward = () => F.crossEntropy(model.forward(x), y);
  // A device type without an autocast table (jsref has none) refuses even a disabled region, as in PyTorch.
  const loss = amp.enabled ? autocast({ deviceType: dev.type, dtype: amp.dtype }, forward) : forward();
  optimizer.zeroGrad();
  scaler.scale(loss).backward();
  await scaler.step(optimizer);
  scaler.update();
  losses.push(await loss.item());
}
console.log(JSON.stringify({ backends: listBackends(), syncRead: getBackend(dev.type).capabilities.syncRead, amp: amp.mode, losses }));
