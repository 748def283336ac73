// The README's training loop as users write it (no dispose calls): memory must stay bounded, and a batch on the
// wrong device must fail at the first op with the place it was created.
import '@core/backend-cpu';
import { DataLoader, TensorDataset } from '@core/data';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { DeviceMismatchError, manualSeed, memoryStats, randint, randn, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { registerFakeBackend } from '../helpers/fake-backend.js';
import { here } from '../helpers/assert.js';

/** Collect garbage and let finalizers run, so live bytes count only what is still reachable. */
async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 0));
  }
}

describe("the README's training loop", () => {
  it('keeps memory bounded over 2,000 steps without dispose calls', async () => {
    manualSeed(0);
    const images = randn([256, 64]);
    const labels = randint(0, 10, [256]);
    const model = new nn.Sequential(new nn.Linear(64, 32), new nn.ReLU(), new nn.Linear(32, 10));
    const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    const loader = new DataLoader(new TensorDataset(images, labels), { batchSize: 16, shuffle: true, generator: 1 });
    let step = 0;
    let after100 = 0;
    while (step < 2000) {
      for await (const [xb, yb] of loader) {
        const x = xb.to('cpu', { nonBlocking: true });
        const y = yb.to('cpu', { nonBlocking: true });
        const loss = F.crossEntropy(model.forward(x), y);
        optimizer.zeroGrad();
        loss.backward();
        optimizer.step();
        await loss.item();
        step++;
        if (step === 100) {
          await settle();
          after100 = memoryStats('cpu').allocatedBytes;
        }
        if (step === 2000) break;
      }
    }
    await settle();
    const end = memoryStats('cpu').allocatedBytes;
    expect(after100).toBeGreaterThan(0);
    expect(end).toBeLessThanOrEqual(after100 * 1.5);
  });

  it('keeps memory bounded over 2,000 steps without its DataLoader: batches sliced by hand, the only await is loss.item()', async () => {
    manualSeed(0);
    const images = randn([256, 64]);
    const labels = randint(0, 10, [256]);
    const model = new nn.Sequential(new nn.Linear(64, 32), new nn.ReLU(), new nn.Linear(32, 10));
    const optimizer = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    let after100 = 0;
    for (let step = 1; step <= 2000; step++) {
      const at = (step * 16) % 256;
      const loss = F.crossEntropy(model.forward(images.narrow(0, at, 16)), labels.narrow(0, at, 16));
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      await loss.item();
      if (step === 100) {
        await settle();
        after100 = memoryStats('cpu').allocatedBytes;
      }
    }
    await settle();
    expect(after100).toBeGreaterThan(0);
    expect(memoryStats('cpu').allocatedBytes).toBeLessThanOrEqual(after100 * 1.5);
  });

  it('fails at the first op when the model and the batch are on different devices, naming where the batch was created', () => {
    registerFakeBackend();
    const model = new nn.Sequential(new nn.Linear(4, 3)).to('fake');
    const [batch, site]: [Tensor, { file: string; line: number }] = [randn([2, 4]), here()];
    let error: unknown;
    try {
      model.forward(batch);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DeviceMismatchError);
    const e = error as DeviceMismatchError;
    expect(e.message).toContain('found at least two devices, fake:0 and cpu!');
    expect(e.createdAt).toContain(`${site.file}:${site.line}:`);
    expect(e.message).toContain(`the cpu tensor was created at ${site.file}:${site.line}:`);
  });
});
