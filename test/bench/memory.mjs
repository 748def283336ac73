// Memory of the loops PyTorch users write, without dispose() and without yielding to the event
// loop except through `await loss.item()` (docs/guides/memory.md). Each loop runs in its own Node
// process so that what one leaves behind does not count against the next.
//   npx -y pnpm@12.4.2 bench:memory            every loop, cpu and (when an adapter is found) webgpu
//   node test/bench/memory.mjs mlp cpu          one loop in this process (what the children run)
// Prints one line per loop; writes nothing.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MiB = 2 ** 20;
const [loop, device = 'cpu'] = process.argv.slice(2);

/** 3,000 steps of an MLP (784→256→10, batch 64, SGD with momentum), RSS at step 100 and at the end. */
async function mlp(dev) {
  await import('@core/backend-cpu');
  if (dev === 'webgpu') await import('@core/backend-webgpu');
  const { F, nn } = await import('@core/nn');
  const { SGD } = await import('@core/optim');
  const { availableDevices, manualSeed, randint, randn } = await import('@core/tensor');
  const devices = await availableDevices();
  if (!devices.some((d) => d.type === dev && d.available)) return `${dev}: unavailable`;
  manualSeed(0);
  const images = randn([1024, 784]).to(dev);
  const labels = randint(0, 10, [1024]).to(dev);
  const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10)).to(dev);
  const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
  const rss = () => process.memoryUsage().rss / MiB;
  let at100 = 0;
  const t0 = performance.now();
  for (let step = 1; step <= 3000; step++) {
    const at = (step * 64) % 1024;
    const loss = F.crossEntropy(model.forward(images.narrow(0, at, 64)), labels.narrow(0, at, 64));
    optimizer.zeroGrad();
    loss.backward();
    optimizer.step();
    await loss.item(); // the loop's only await
    if (step === 100) at100 = rss();
  }
  const seconds = (performance.now() - t0) / 1000;
  return `MLP loop on ${dev}, 3,000 steps, only \`await loss.item()\`: RSS ${at100.toFixed(0)} MiB at step 100, ` +
    `${rss().toFixed(0)} MiB at step 3,000 (×${(rss() / at100).toFixed(2)}), ${(3000 / seconds).toFixed(0)} steps/s`;
}

/** 200,000 iterations of `randn([16]).mul(2).add(1)` in a synchronous loop: the JS heap's peak. */
async function randnLoop() {
  await import('@core/backend-cpu');
  const { randn } = await import('@core/tensor');
  let peak = 0;
  for (let i = 0; i < 200_000; i++) {
    randn([16]).mul(2).add(1);
    if (i % 5000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  return `200,000 × randn([16]).mul(2).add(1), never yielding: JS heap peak ${(peak / MiB).toFixed(0)} MiB`;
}

/** 4,000 adds of 256×256 in a synchronous loop: the device memory's peak (1000 MiB of results in all). */
async function addLoop(dev) {
  await import('@core/backend-cpu');
  if (dev === 'webgpu') await import('@core/backend-webgpu');
  const { availableDevices, memoryStats, randn } = await import('@core/tensor');
  const devices = await availableDevices();
  if (!devices.some((d) => d.type === dev && d.available)) return `${dev}: unavailable`;
  const big = randn([256, 256]).to(dev);
  let peak = 0;
  for (let i = 0; i < 4000; i++) {
    big.add(big);
    peak = Math.max(peak, memoryStats(dev).allocatedBytes);
  }
  return `4,000 × big.add(big) (256×256) on ${dev}, never yielding: ${(peak / MiB).toFixed(0)} MiB allocated at the peak, of 1000 MiB made`;
}

const LOOPS = { mlp, randn: randnLoop, add: addLoop };

if (loop !== undefined) {
  console.log(await LOOPS[loop](device));
} else {
  const self = fileURLToPath(import.meta.url);
  const env = { ...process.env, NODEVICE_SELECT: '1', VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/share/vulkan/icd.d/lvp_icd.json' };
  for (const [name, dev] of [['mlp', 'cpu'], ['mlp', 'webgpu'], ['randn', 'cpu'], ['add', 'cpu'], ['add', 'webgpu']]) {
    const out = execFileSync(process.execPath, [self, name, dev], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    console.log(out.trim().split('\n').at(-1));
  }
}
