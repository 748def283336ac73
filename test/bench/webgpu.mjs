// WebGPU benchmark: matmul at several sizes and one MLP training step through the public API
// (model, loss, backward, optimizer step), on webgpu and on the cpu backend in the same run,
// printed as a table with webgpu/cpu ratios and written to docs/benchmarks/webgpu.md and
// webgpu.json (the format of lib/report.mjs), from which docs/guides/benchmarks.md is regenerated.
// On this project's machines webgpu is a software Vulkan driver (lavapipe/SwiftShader), so the
// figures are only relative; on a machine with a GPU the same command measures the real thing.
//   npx -y pnpm@12.4.2 bench:webgpu
import '@core/backend-cpu';
import '@core/backend-webgpu';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { availableDevices, getBackend, manualSeed, randint, randn } from '@core/tensor';
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
{
  const result = {};
  for (const dev of ['cpu', 'webgpu']) {
    manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10)).to(dev);
    const optimizer = new SGD(model.parameters(), { lr: 0.01 });
    const x = randn([128, 784]).to(dev);
    const y = randint(0, 10, [128]).to(dev);
    const { ms, reps } = await median(async () => {
      const loss = F.crossEntropy(model.forward(x), y);
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      await loss.item();
    });
    result[dev] = { value: 1000 / ms, ms, reps };
  }
  rows.push({ id: 'mlp', workload: 'MLP 784→256→10 step, batch 128, SGD', unit: 'steps/s', tolerance: null, results: result });
}

const report = {
  ...reportHeader('webgpu', 'WebGPU benchmark'),
  method: [
    'fp32; the median of several runs after warm-up, each ending with `await t.item()` on one element of the result (the loss in the MLP step), so the time includes the work, not just queueing it.',
    'Where the adapter is a software Vulkan driver (lavapipe, SwiftShader), webgpu itself runs on the CPU: compare the ratio column, not the absolute figures, with a real GPU.',
  ],
  libraries: [
    { id: 'cpu', label: 'cpu backend', package: '@core/backend-cpu', version: installedVersion('@core/backend-cpu'), threads: null, completion: null, notes: [] },
    { id: 'webgpu', label: 'webgpu', package: '@core/backend-webgpu', version: installedVersion('@core/backend-webgpu'), threads: null, completion: null, notes: [`adapter: ${adapter}`] },
  ],
  ratios: [{ numerator: 'webgpu', denominator: 'cpu' }],
  rows,
};
console.log(`\n${resultsTable(report)}\n`);
for (const f of writeReport(report)) console.log(`wrote ${f}`);
console.log(`wrote ${writeGuide()}`);
process.exit(0);
