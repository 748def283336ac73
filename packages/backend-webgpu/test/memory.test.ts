// Device memory stays flat on webgpu without dispose() in loops that never yield to the event loop,
// or that yield only through `await loss.item()` (docs/guides/memory.md): the GPU buffers of
// dropped tensors come back even though the JavaScript heap hardly notices those tensors.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { manualSeed, memoryStats, randint, randn, registerBackend } from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from './helpers.js';

beforeAll(async () => {
  const backend = await startBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
});

const MiB = 2 ** 20;
const max = (xs: readonly number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

describe('webgpu memory without dispose()', () => {
  it('a training loop whose only await is loss.item(): allocated bytes over the last 100 of 600 steps ≤ 2× those of the first 200', async () => {
    manualSeed(0);
    const images = randn([512, 64]).to('webgpu');
    const labels = randint(0, 10, [512]).to('webgpu');
    const model = new nn.Sequential(new nn.Linear(64, 128), new nn.ReLU(), new nn.Linear(128, 10)).to('webgpu');
    const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    const samples: number[] = [];
    for (let step = 0; step < 600; step++) {
      const at = (step * 32) % 512;
      const loss = F.crossEntropy(model.forward(images.narrow(0, at, 32)), labels.narrow(0, at, 32));
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      expect(Number.isFinite(await loss.item())).toBe(true);
      samples.push(memoryStats('webgpu').allocatedBytes);
    }
    expect(max(samples.slice(-100))).toBeLessThanOrEqual(2 * max(samples.slice(0, 200)));
  });

  it('a loop that never yields: 1,500 adds of 256×256 (375 MiB of results) peak under 160 MiB of buffers', () => {
    const big = randn([256, 256]).to('webgpu');
    let peak = 0;
    for (let i = 0; i < 1500; i++) {
      big.add(big);
      peak = Math.max(peak, memoryStats('webgpu').allocatedBytes);
    }
    expect(peak).toBeLessThan(160 * MiB);
  });
});
