// WebGPU benchmark: matmul at several sizes and two training steps through the public API (model,
// loss, backward, optimizer step: an MLP and a small GPT), on webgpu (eager and compiled) and on the
// cpu backend in the same run, printed as a table with webgpu/cpu and compiled/eager ratios and written to docs/benchmarks/webgpu.md and
// webgpu.json (the format of lib/report.mjs), from which docs/guides/benchmarks.md is regenerated.
// On this project's machines webgpu is a software Vulkan driver (lavapipe/SwiftShader), so the
// figures are only relative; on a machine with a GPU the same command measures the real thing.
//   npx -y pnpm@12.4.2 bench:webgpu
import '@core/backend-cpu';
import '@core/backend-webgpu';
import { F, nn } from '@core/nn';
import { AdamW, SGD } from '@core/optim';
import { availableDevices, compile, getBackend, int32, manualSeed, randint, randn, setDefaultDevice } from '@core/tensor';
import { GPT, trainingStep } from './lib/programs.mjs';
import { writeGuide } from './guide.mjs';
import { reportHeader, resultsTable, writeReport } from './lib/report.mjs';
import { installedVersion } from './lib/version.mjs';

const devices = await availableDevices();
const gpu = devices.find((d) => d.type === 'webgpu');
if (!gpu?.available) {
  console.error(`webgpu is unavailable: ${gpu?.reason ?? 'not registered'} (install a Vulkan driver: scripts/install-webgpu-deps.sh)`);
  process.exit(1);
}
const adapter = getBackend('webgpu').adapterInfo ?? 'unknown adapter';

async function median(run, warmup = 2, reps = 5) {
  for (let i = 0; i < warmup; i++) await run();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return { ms: times.sort((a, b) => a - b)[Math.floor(reps / 2)], reps };
}

const rows = [];
for (const n of [128, 256, 512, 1024]) {
  const result = {};
  for (const dev of ['cpu', 'webgpu']) {
    manualSeed(0);
    const a = randn([n, n]).to(dev);
    const b = randn([n, n]).to(dev);
    // Reading one element waits for the product: the time includes the work, not just queueing.
    const { ms, reps } = await median(() => a.matmul(b).select(0, 0).select(0, 0).item(), 1, n >= 1024 ? 3 : 5);
    result[dev] = { value: (2 * n ** 3) / (ms * 1e6), ms, reps };
  }
  rows.push({ id: `matmul-${n}`, workload: `matmul ${n}×${n} fp32`, unit: 'GFLOPS', tolerance: null, results: result });
}
/**
 * A training step's row: eager on cpu and webgpu, and on webgpu through `compile()` (its first two
 * calls trace; the replays after them are timed), with webgpu's dispatches per step.
 */
async function trainingRow(id, workload, make) {
  const result = {};
  const dispatches = {};
  for (const [column, dev, wrap] of [['cpu', 'cpu', null], ['webgpu', 'webgpu', null], ['webgpu-compiled', 'webgpu', compile]]) {
    manualSeed(0);
    // The GPT makes its positions with arange(): on the default device, as a PyTorch user's model would be written for one.
    setDefaultDevice(dev);
    const { step, inputs } = make(dev);
    const run = wrap ? wrap(step) : step;
    const stats = () => getBackend(dev).stats?.() ?? null;
    const { ms, reps } = await median(async () => { await run(...inputs).item(); }, 3);
    const before = stats();
    await run(...inputs).item();
    const after = stats();
    if (dev === 'webgpu' && before && after) dispatches[column] = after.dispatches - before.dispatches;
    result[column] = { value: 1000 / ms, ms, reps };
  }
  setDefaultDevice('cpu');
  rows.push({ id, workload, unit: 'steps/s', tolerance: null, results: result });
  if (Object.keys(dispatches).length > 0) dispatchNotes.push(`${workload}: ${dispatches.webgpu} dispatches per step eager, ${dispatches['webgpu-compiled']} compiled`);
}

const dispatchNotes = [];
await trainingRow('mlp', 'MLP 784→256→10 step, batch 128, SGD', (dev) => {
  const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10)).to(dev);
  const step = trainingStep(new SGD(model.parameters(), { lr: 0.01 }), (x, y) => F.crossEntropy(model.call(x), y));
  return { step, inputs: [randn([128, 784]).to(dev), randint(0, 10, [128]).to(dev)] };
});
await trainingRow('gpt', 'GPT train step (nanoGPT, 2 layers, 64 wide, 4 heads, block 32, 65 tokens), batch 8, AdamW', (dev) => {
  const model = new GPT({ vocabSize: 65, blockSize: 32, nLayer: 2, nHead: 4, nEmbd: 64 }).to(dev);
  const step = trainingStep(new AdamW(model.parameters(), { lr: 1e-3 }), (idx, targets) => model.call(idx, targets));
  return { step, inputs: [randint(0, 65, [8, 32], { dtype: int32 }).to(dev), randint(0, 65, [8, 32], { dtype: int32 }).to(dev)] };
});

const report = {
  ...reportHeader('webgpu', 'WebGPU benchmark'),
  method: [
    'fp32; the median of several runs after warm-up, each ending with `await t.item()` on one element of the result (the loss in the MLP step), so the time includes the work, not just queueing it.',
    'Where the adapter is a software Vulkan driver (lavapipe, SwiftShader), webgpu itself runs on the CPU: compare the ratio column, not the absolute figures, with a real GPU.',
    '"webgpu, compiled" runs each training step through `compile()`: its first two calls trace (warm-up), the replays are timed; "compiled / eager" is its figure over webgpu\'s.',
  ],
  libraries: [
    { id: 'cpu', label: 'cpu backend', package: '@core/backend-cpu', version: installedVersion('@core/backend-cpu'), threads: null, completion: null, notes: [] },
    { id: 'webgpu', label: 'webgpu', package: '@core/backend-webgpu', version: installedVersion('@core/backend-webgpu'), threads: null, completion: null, notes: [`adapter: ${adapter}`] },
    { id: 'webgpu-compiled', label: 'webgpu, compiled', package: '@core/backend-webgpu', version: installedVersion('@core/backend-webgpu'), threads: null, completion: null, notes: ['the training steps through `compile()` (prepared programs, elementwise fusion); matmuls are not run', ...dispatchNotes] },
  ],
  ratios: [{ numerator: 'webgpu', denominator: 'cpu' }, { numerator: 'webgpu-compiled', denominator: 'webgpu', label: 'compiled / eager' }],
  rows,
};
console.log(`\n${resultsTable(report)}\n`);
for (const f of writeReport(report)) console.log(`wrote ${f}`);
console.log(`wrote ${writeGuide()}`);
process.exit(0);
