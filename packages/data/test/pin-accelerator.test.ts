// PIN-3/PIN-4 with an accelerator: a fake GPU backend (the CPU backend with pinnedMemory) is registered.
import { createCpuBackend } from '@core/backend-cpu';
import { arange, registerBackend, tensor, type Tensor } from '@core/tensor';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DataLoader, DataLoaderError, pinBatch, pinnedMemoryAvailable, TensorDataset, type Dataset } from '../src/index.js';

beforeAll(() => {
  registerBackend({
    name: 'fakegpu',
    priority: 1,
    create: () => ({ ...createCpuBackend(), name: 'fakegpu', capabilities: { ...createCpuBackend().capabilities, pinnedMemory: true } }),
  });
});

describe('PIN-3/PIN-4 with an accelerator', () => {
  afterEach(() => vi.restoreAllMocks());

  it('PIN-3: every batch is pinned before it is yielded, and no warning is given', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(pinnedMemoryAvailable()).toBe(true);
    const x = arange(12).reshape([6, 2]).float();
    const loader = new DataLoader(new TensorDataset(x, arange(6)), { batchSize: 4, shuffle: true, generator: 0, pinMemory: true });
    const values: number[] = [];
    for await (const [xb, yb] of loader) {
      expect(xb.isPinned()).toBe(true);
      expect(yb.isPinned()).toBe(true);
      values.push(...((await yb.toArray()) as number[]));
    }
    expect(values.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]); // pinned copies hold the same data
    expect(x.isPinned()).toBe(false); // PIN-2: the dataset's own tensors are untouched
    expect(warn).not.toHaveBeenCalled();
  });

  it('PIN-4: pinning recurses through arrays, plain objects and Maps; other values pass through', async () => {
    const ds: Dataset<{ x: Tensor; tags: [string, number]; m: Map<string, Tensor> }> = {
      length: 3,
      get: (i) => ({ x: tensor([i, i]), tags: ['s', i], m: new Map([['t', tensor(i)]]) }),
    };
    for await (const b of new DataLoader(ds, { batchSize: 2, pinMemory: true })) {
      expect(b.x.isPinned()).toBe(true);
      expect(b.tags[0]).toEqual(Array(b.x.shape[0]).fill('s')); // strings unchanged
      expect(b.tags[1].isPinned()).toBe(true);
      expect(b.m.get('t')!.isPinned()).toBe(true);
    }
  });

  it('PIN-4: an object with a pinMemory() method is pinned by that method; custom collates are pinned too', async () => {
    class Batch {
      pinned = false;
      pinMemory(): this { this.pinned = true; return this; }
    }
    const loader = new DataLoader({ length: 2, get: (i: number) => i }, { batchSize: 2, pinMemory: true, collate: () => new Batch() });
    for await (const b of loader) expect(b.pinned).toBe(true);
    expect(pinBatch(['str', 3, null])).toEqual(['str', 3, null]);
  });

  it('PIN-1: an already pinned tensor is kept as itself', () => {
    const p = tensor([1, 2]).pinMemory();
    const [q] = pinBatch([p]);
    expect(q).toBe(p);
  });

  it('PIN-4: a pinning failure surfaces in the consumer tagged with its batch', async () => {
    const onGpu = tensor([1, 2], { device: 'fakegpu' });
    const loader = new DataLoader({ length: 1, get: () => onGpu }, { pinMemory: true });
    const err = await (async () => { for await (const _ of loader); })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataLoaderError);
    expect(err).toMatchObject({ batch: 0, stage: 'pinMemory' });
    expect((err as Error).message).toMatch(/failed in pinMemory: .*only dense CPU tensors can be pinned/);
  });
});
