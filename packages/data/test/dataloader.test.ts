// DataLoader: batching, seeded shuffling, collate, prefetch overlap and errors.
import '@core/backend-cpu';
import { arange, Generator, manualSeed, ValueError, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { DataLoader, DataLoaderError, TensorDataset, type Dataset } from '../src/index.js';

/** A dataset whose sample i is the number i. */
const numbers = (n: number): Dataset<number> => ({ length: n, get: (i) => i });

async function collect<B>(loader: AsyncIterable<B>): Promise<B[]> {
  const out: B[] = [];
  for await (const b of loader) out.push(b);
  return out;
}

/** The index order of one epoch, read from a TensorDataset over arange(n). */
async function epochOrder(loader: DataLoader<[Tensor], [Tensor]>): Promise<number[]> {
  const order: number[] = [];
  for await (const [ib] of loader) order.push(...((await ib.toArray()) as number[]));
  return order;
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('batching', () => {
  it('batchSize defaults to 1; batches are in order', async () => {
    const batches = await collect(new DataLoader(numbers(3)));
    expect(await Promise.all(batches.map((b) => b.toArray()))).toEqual([[0], [1], [2]]);
  });

  it('keeps the last partial batch, and length counts it', async () => {
    const loader = new DataLoader(numbers(10), { batchSize: 4 });
    expect(loader.length).toBe(3);
    const batches = await collect(loader);
    expect(batches.map((b) => b.shape[0])).toEqual([4, 4, 2]);
    expect(await batches[2]!.toArray()).toEqual([8, 9]);
  });

  it('dropLast drops the partial batch (and gives no batch when n < batchSize)', async () => {
    const loader = new DataLoader(numbers(10), { batchSize: 4, dropLast: true });
    expect(loader.length).toBe(2);
    expect((await collect(loader)).map((b) => b.shape[0])).toEqual([4, 4]);
    const none = new DataLoader(numbers(3), { batchSize: 4, dropLast: true });
    expect(none.length).toBe(0);
    expect(await collect(none)).toEqual([]);
  });

  it('an exact multiple has no partial batch either way', async () => {
    for (const dropLast of [false, true]) {
      const loader = new DataLoader(numbers(8), { batchSize: 4, dropLast });
      expect(loader.length).toBe(2);
      expect((await collect(loader)).map((b) => b.shape[0])).toEqual([4, 4]);
    }
  });

  it('yields [xb, yb] from a TensorDataset as in the API example', async () => {
    const x = arange(20).reshape([10, 2]).float();
    const loader = new DataLoader(new TensorDataset(x, arange(10)), { batchSize: 4 });
    const shapes = [];
    for await (const [xb, yb] of loader) shapes.push([xb.shape, yb.shape]);
    expect(shapes).toEqual([[[4, 2], [4]], [[4, 2], [4]], [[2, 2], [2]]]);
  });

  it('awaits datasets whose get() returns a promise', async () => {
    const ds: Dataset<{ v: number }> = { length: 5, get: async (i) => { await tick(); return { v: i * 10 }; } };
    const batches = await collect(new DataLoader(ds, { batchSize: 2 }));
    expect(await Promise.all(batches.map((b) => b.v.toArray()))).toEqual([[0, 10], [20, 30], [40]]);
  });

  it('passes the list of samples to a custom collate', async () => {
    const seen: number[][] = [];
    const loader = new DataLoader(numbers(5), { batchSize: 2, collate: (s: number[]) => { seen.push(s); return s.join('+'); } });
    expect(await collect(loader)).toEqual(['0+1', '2+3', '4']);
    expect(seen).toEqual([[0, 1], [2, 3], [4]]);
  });

  it('accepts an async custom collate', async () => {
    const loader = new DataLoader(numbers(3), { batchSize: 2, collate: async (s: number[]) => s.length });
    expect(await collect(loader)).toEqual([2, 1]);
  });
});

describe('shuffle', () => {
  const loader = (seed: number | Generator, n = 50) =>
    new DataLoader(new TensorDataset(arange(n)), { batchSize: 8, shuffle: true, generator: seed });

  it('visits every index exactly once per epoch', async () => {
    const l = loader(1);
    for (let epoch = 0; epoch < 3; epoch++) {
      const order = await epochOrder(l);
      expect(order).toHaveLength(50);
      expect([...order].sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
    }
  });

  it('the same seed gives the same orders; a different seed another', async () => {
    const a = loader(42);
    const b = loader(42);
    const c = loader(43);
    const a1 = await epochOrder(a);
    expect(await epochOrder(b)).toEqual(a1);
    expect(await epochOrder(c)).not.toEqual(a1);
    expect(a1).not.toEqual([...Array(50).keys()]);
  });

  it('each epoch draws a new order from the advancing generator, reproducibly', async () => {
    const a = loader(7);
    const b = loader(7);
    const epochsA = [await epochOrder(a), await epochOrder(a), await epochOrder(a)];
    expect(epochsA[1]).not.toEqual(epochsA[0]);
    expect(epochsA[2]).not.toEqual(epochsA[1]);
    expect([await epochOrder(b), await epochOrder(b), await epochOrder(b)]).toEqual(epochsA);
  });

  it('a Generator object is used (and advanced) as given; manualSeed drives the default', async () => {
    const g = new Generator(5);
    const before = g.getState().offset;
    const first = await epochOrder(loader(g));
    expect(g.getState().offset).toBeGreaterThan(before);
    expect(await epochOrder(loader(new Generator(5)))).toEqual(first);

    const withDefault = () => new DataLoader(new TensorDataset(arange(50)), { batchSize: 8, shuffle: true });
    manualSeed(3);
    const d1 = await epochOrder(withDefault());
    manualSeed(3);
    expect(await epochOrder(withDefault())).toEqual(d1);
  });

  it('without shuffle the order is 0..n−1 and the generator is untouched', async () => {
    const g = new Generator(1);
    const order = await epochOrder(new DataLoader(new TensorDataset(arange(10)), { batchSize: 3, generator: g }));
    expect(order).toEqual([...Array(10).keys()]);
    expect(g.getState().offset).toBe(0);
  });
});

describe('prefetch', () => {
  /** Runs one epoch where the consumer awaits between "start k" and "end k", like a GPU read-back. */
  async function trace(prefetch: number): Promise<string[]> {
    const log: string[] = [];
    const ds: Dataset<number> = { length: 6, get: (i) => { log.push(`get ${i}`); return i; } };
    let k = 0;
    for await (const _ of new DataLoader(ds, { batchSize: 2, prefetch })) {
      log.push(`start ${k}`);
      await tick();
      log.push(`end ${k++}`);
    }
    return log;
  }

  it('batch k+1 is requested while the consumer still holds batch k (prefetch = 1, the default)', async () => {
    const log = await trace(1);
    expect(log.indexOf('get 2')).toBeLessThan(log.indexOf('end 0'));
    expect(log.indexOf('get 4')).toBeLessThan(log.indexOf('end 1'));
    // …but no further ahead than one batch.
    expect(log.indexOf('get 4')).toBeGreaterThan(log.indexOf('start 1'));
  });

  it('prefetch = 0 builds each batch only when it is asked for', async () => {
    const log = await trace(0);
    expect(log.indexOf('get 2')).toBeGreaterThan(log.indexOf('end 0'));
  });

  it('prefetch = 2 keeps two batches ahead', async () => {
    const log = await trace(2);
    expect(log.indexOf('get 4')).toBeLessThan(log.indexOf('end 0'));
  });

  it('breaking out early stops scheduling and leaves no unhandled rejection', async () => {
    const log: string[] = [];
    const ds: Dataset<number> = {
      length: 8,
      get: (i) => { log.push(`get ${i}`); if (i >= 2) throw new Error('boom'); return i; },
    };
    for await (const _ of new DataLoader(ds, { batchSize: 2, prefetch: 2 })) break;
    await tick();
    expect(log).not.toContain('get 6');
  });
});

describe('errors', () => {
  it('an empty dataset fails when iteration starts', async () => {
    const loader = new DataLoader(numbers(0));
    expect(loader.length).toBe(0);
    await expect(collect(loader)).rejects.toThrow(/^DataLoader: the dataset is empty/);
    await expect(collect(loader)).rejects.toBeInstanceOf(ValueError);
  });

  it('batchSize and prefetch must be integers in range', () => {
    for (const batchSize of [0, -1, 1.5, Number.NaN]) {
      expect(() => new DataLoader(numbers(3), { batchSize })).toThrow(`DataLoader: batchSize should be a positive integer value, but got batchSize=${batchSize}`);
    }
    expect(() => new DataLoader(numbers(3), { prefetch: -1 })).toThrow(/prefetch should be a non-negative integer/);
  });

  it('a dataset that is not one is rejected at construction', () => {
    expect(() => new DataLoader({} as Dataset<number>)).toThrow(TypeError);
  });

  it('a failing get() surfaces in the consumer at its batch, with the index and the cause', async () => {
    const cause = new RangeError('bad sample');
    const ds: Dataset<number> = { length: 7, get: (i) => { if (i === 5) throw cause; return i; } };
    const got: number[] = [];
    let error: unknown;
    try {
      for await (const b of new DataLoader(ds, { batchSize: 2 })) got.push(b.shape[0]!);
    } catch (e) {
      error = e;
    }
    expect(got).toEqual([2, 2]); // batches 0 and 1 arrive first
    expect(error).toBeInstanceOf(DataLoaderError);
    const e = error as DataLoaderError;
    expect(e.batch).toBe(2);
    expect(e.stage).toBe('dataset.get');
    expect(e.cause).toBe(cause);
    expect(e.message).toBe('DataLoader: batch 2 of 4 (dataset indices 4, 5) failed in dataset.get(5): RangeError: bad sample');
  });

  it('a rejected async get() and a failing collate are reported the same way', async () => {
    const ds: Dataset<number> = { length: 4, get: async (i) => { if (i === 3) throw new Error('io'); return i; } };
    await expect(collect(new DataLoader(ds, { batchSize: 2 }))).rejects.toThrow(/batch 1 of 2 .* failed in dataset.get\(3\): Error: io/);
    const collate = (s: number[]) => { if (s[0] === 2) throw new TypeError('no'); return s; };
    const err = await collect(new DataLoader(numbers(4), { batchSize: 2, collate })).catch((e: unknown) => e);
    expect(err).toMatchObject({ batch: 1, stage: 'collate' });
    expect((err as Error).message).toMatch(/failed in collate: TypeError: no/);
  });

  it('a default-collate mismatch names the batch', async () => {
    const ds: Dataset<unknown> = { length: 2, get: (i) => (i === 0 ? 1 : 'x') };
    await expect(collect(new DataLoader(ds, { batchSize: 2 }))).rejects.toThrow(/batch 0 of 1 .*failed in collate: TypeError: defaultCollate\(\)/);
  });
});
