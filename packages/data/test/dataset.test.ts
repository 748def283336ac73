// TensorDataset: shape checks, row views, bounds, and the one-gather-per-tensor batch path.
import '@core/backend-cpu';
import { arange, int32, ShapeError, stack, tensor, Tensor, ValueError } from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataLoader, IndexError, isBatchedDataset, TensorDataset } from '../src/index.js';

const xs = () => arange(12).reshape([6, 2]).float();
const ys = () => arange(6);

describe('TensorDataset', () => {
  it('has the shared first-dim size as length and returns row views', async () => {
    const x = xs();
    const ds = new TensorDataset(x, ys());
    expect(ds.length).toBe(6);
    const [xi, yi] = ds.get(2);
    expect(xi.shape).toEqual([2]);
    expect(await xi.toArray()).toEqual([4, 5]);
    expect(yi.shape).toEqual([]);
    expect(await yi.item()).toBe(2);
    expect(xi._storage).toBe(x._storage); // a view, not a copy
  });

  it('accepts negative indices like Python (−1 is the last row)', async () => {
    const [, y] = new TensorDataset(xs(), ys()).get(-1);
    expect(await y.item()).toBe(5);
  });

  it('names the sizes when the first dims differ', () => {
    expect(() => new TensorDataset(xs(), arange(5))).toThrow(ShapeError);
    expect(() => new TensorDataset(xs(), arange(5))).toThrow(/dim 0 sizes are \[6, 5\].*tensor 0: \[6, 2\], tensor 1: \[5\]/);
  });

  it('rejects no tensors, 0-dim tensors and non-tensors', () => {
    expect(() => new TensorDataset()).toThrow(ValueError);
    expect(() => new TensorDataset(tensor(1))).toThrow(/0-dimensional/);
    expect(() => new TensorDataset(xs(), [1, 2] as unknown as Tensor)).toThrow(/argument 1 is not a Tensor/);
  });

  it('bounds-checks get() and getBatch() with an IndexError naming index and size', () => {
    const ds = new TensorDataset(xs(), ys());
    for (const bad of [6, -7, 1.5, Number.NaN]) {
      expect(() => ds.get(bad)).toThrow(IndexError);
    }
    expect(() => ds.get(6)).toThrow('TensorDataset.get(): index 6 is out of range for a dataset of size 6');
    expect(() => ds.getBatch([0, 9])).toThrow(/getBatch\(\): index 9 is out of range/);
  });

  it('getBatch(indices) equals stacking the rows, with dtypes kept', async () => {
    const ds = new TensorDataset(xs(), ys());
    const [xb, yb] = ds.getBatch([4, 0, 4, -1]);
    const rows = [4, 0, 4, 5].map((i) => ds.get(i));
    expect(await xb.toArray()).toEqual(await stack(rows.map((r) => r[0])).toArray());
    expect(await yb.toArray()).toEqual([4, 0, 4, 5]);
    expect(yb.dtype).toBe(int32);
    expect(isBatchedDataset(ds)).toBe(true);
  });
});

describe('DataLoader over a TensorDataset', () => {
  afterEach(() => vi.restoreAllMocks());

  it('builds a batch with one indexSelect per tensor, not per-row selects + stack', async () => {
    const ds = new TensorDataset(xs(), ys());
    const gather = vi.spyOn(Tensor.prototype, 'indexSelect');
    const select = vi.spyOn(Tensor.prototype, 'select');
    const batches = [];
    for await (const b of new DataLoader(ds, { batchSize: 4 })) batches.push(b);
    expect(batches).toHaveLength(2);
    expect(gather).toHaveBeenCalledTimes(4); // 2 batches × 2 tensors
    expect(select).not.toHaveBeenCalled();
  });

  it('falls back to get() per sample when a custom collate is given', async () => {
    const ds = new TensorDataset(xs(), ys());
    const gather = vi.spyOn(Tensor.prototype, 'indexSelect');
    const collate = vi.fn((samples: Tensor[][]) => samples.length);
    const sizes = [];
    for await (const n of new DataLoader(ds, { batchSize: 4, collate })) sizes.push(n);
    expect(sizes).toEqual([4, 2]);
    expect(gather).not.toHaveBeenCalled();
  });
});
