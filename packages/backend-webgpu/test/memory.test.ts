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
  it('a training loop whose only await is loss.item(): after each step\'s await, allocated bytes stay within 1 MiB of those after step 10', async () => {
    // gc() before the await makes every dropped tensor collectable, so the bytes counted after the
    // read are exactly what is live: the finalizers ran during the read's turn of the event loop.
    const gc = (globalThis as { gc?: () => void }).gc;
    expect(gc, 'the tests run with --expose-gc').toBeTypeOf('function');
    manualSeed(0);
    const images = randn([512, 64]).to('webgpu');
    const labels = randint(0, 10, [512]).to('webgpu');
    const model = new nn.Sequential(new nn.Linear(64, 128), new nn.ReLU(), new nn.Linear(128, 10)).to('webgpu');
    const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    const samples: number[] = [];
    for (let step = 0; step < 300; step++) {
      const at = (step * 32) % 512;
      const loss = F.crossEntropy(model.forward(images.narrow(0, at, 32)), labels.narrow(0, at, 32));
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      gc!();
      expect(Number.isFinite(await loss.item())).toBe(true);
      samples.push(memoryStats('webgpu').allocatedBytes);
    }
    // The same tensors live after every step (parameters, momentum, data, the loss). A step drops
    // ~100 KiB of buffers, so 300 unfreed steps would add ~30 MiB; 1 MiB of slack allows for a
    // finalizer that runs a turn later than the read.
    expect(max(samples.slice(-100))).toBeLessThanOrEqual(samples[10]! + MiB);
  });

  // 2,400 adds: several times the bound, and short enough that this deliberately synchronous
  // body cannot starve vitest's messages to the worker on a busy machine.
  it('a loop that never yields: 2,400 adds of 256×256 (600 MiB of results) peak within the reclaim bound (64 MiB, or twice the JavaScript heap if larger)', () => {
    const big = randn([256, 256]).to('webgpu');
    const base = memoryStats('webgpu').allocatedBytes;
    let peak = 0;
    for (let i = 0; i < 2400; i++) {
      big.add(big);
      peak = Math.max(peak, memoryStats('webgpu').allocatedBytes - base);
    }
    const bound = Math.max(64 * MiB, 2 * process.memoryUsage().heapUsed) + 16 * MiB;
    expect(bound).toBeLessThan(600 * MiB); // else the check could not fail
    expect(peak).toBeLessThan(bound);
  });
});
