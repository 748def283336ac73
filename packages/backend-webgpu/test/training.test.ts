// The README's training loop on webgpu, written as users write it (no dispose calls): device memory
// stays bounded, and the losses follow the cpu backend's run of the same seed and data.
import '@core/backend-cpu';
import { DataLoader, TensorDataset } from '@core/data';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { manualSeed, memoryStats, randint, randn, registerBackend } from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from './helpers.js';

beforeAll(async () => {
  const backend = await startBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
});

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** Train the README's MLP for `steps` steps on `device`; returns the losses and the live bytes after step 50 and at the end. */
async function train(device: 'cpu' | 'webgpu', steps: number): Promise<{ losses: number[]; early: number; end: number }> {
  manualSeed(0);
  const images = randn([256, 64]);
  const labels = randint(0, 10, [256]);
  const model = new nn.Sequential(new nn.Linear(64, 32), new nn.ReLU(), new nn.Linear(32, 10)).to(device);
  const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
  const loader = new DataLoader(new TensorDataset(images, labels), { batchSize: 16, shuffle: true, generator: 1 });
  const losses: number[] = [];
  let early = 0;
  while (losses.length < steps) {
    for await (const [xb, yb] of loader) {
      const x = xb.to(device);
      const y = yb.to(device);
      const loss = F.crossEntropy(model.forward(x), y);
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      losses.push(Number(await loss.item()));
      if (losses.length === 50) {
        await settle();
        early = memoryStats(device).allocatedBytes;
      }
      if (losses.length === steps) break;
    }
  }
  await settle();
  return { losses, early, end: memoryStats(device).allocatedBytes };
}

describe("the README's training loop on webgpu", () => {
  it('keeps device memory bounded over 400 steps without dispose calls, with the cpu run\'s losses', async () => {
    const gpu = await train('webgpu', 400);
    expect(gpu.early).toBeGreaterThan(0);
    expect(gpu.end).toBeLessThanOrEqual(gpu.early * 1.5);
    const cpu = await train('cpu', 400);
    // Same seed, data and order: the runs agree closely (f32 sums in another order drift slowly).
    for (let i = 0; i < 50; i++) expect(Math.abs(gpu.losses[i]! - cpu.losses[i]!)).toBeLessThan(1e-4 * (1 + i));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(gpu.losses.slice(-50))).toBeLessThan(mean(gpu.losses.slice(0, 50)));
    expect(Math.abs(mean(gpu.losses.slice(-50)) - mean(cpu.losses.slice(-50)))).toBeLessThan(0.05);
  });
});
