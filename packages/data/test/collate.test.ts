// defaultCollate: PyTorch's default_collate structure rules.
import '@core/backend-cpu';
import { bool, float32, int32, tensor, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { defaultCollate } from '../src/index.js';

describe('defaultCollate', () => {
  it('stacks tensors along a new first dim', async () => {
    const b = defaultCollate([tensor([1, 2]), tensor([3, 4]), tensor([5, 6])]);
    expect(b.shape).toEqual([3, 2]);
    expect(await b.toArray()).toEqual([[1, 2], [3, 4], [5, 6]]);
  });

  it('turns numbers into a float32 tensor and booleans into a bool tensor', async () => {
    const n = defaultCollate([1, 2.5, 3]);
    expect(n.dtype).toBe(float32);
    expect(await n.toArray()).toEqual([1, 2.5, 3]);
    expect(defaultCollate([true, false]).dtype).toBe(bool);
  });

  it('keeps strings as a list and stacks typed arrays', async () => {
    expect(defaultCollate(['a', 'b'])).toEqual(['a', 'b']);
    const t = defaultCollate([Int32Array.of(1, 2), Int32Array.of(3, 4)]);
    expect(t.dtype).toBe(int32);
    expect(await t.toArray()).toEqual([[1, 2], [3, 4]]);
  });

  it('transposes tuples: [x, label][] → [X, labels]', async () => {
    const samples: [Tensor, number][] = [[tensor([1, 1]), 0], [tensor([2, 2]), 1]];
    const [x, y] = defaultCollate(samples);
    expect(x.shape).toEqual([2, 2]);
    expect(await y.toArray()).toEqual([0, 1]);
  });

  it('recurses into plain objects, nested arrays and Maps', async () => {
    const samples = [
      { image: tensor([1]), meta: { id: 7, name: 'a' }, pair: [1, tensor(2)] as [number, Tensor], m: new Map([['k', 1]]) },
      { image: tensor([2]), meta: { id: 8, name: 'b' }, pair: [3, tensor(4)] as [number, Tensor], m: new Map([['k', 2]]) },
    ];
    const b = defaultCollate(samples);
    expect(await b.image.toArray()).toEqual([[1], [2]]);
    expect(await b.meta.id.toArray()).toEqual([7, 8]);
    expect(b.meta.name).toEqual(['a', 'b']);
    expect(await b.pair[0].toArray()).toEqual([1, 3]);
    expect(await b.pair[1].toArray()).toEqual([2, 4]);
    expect(await b.m.get('k')!.toArray()).toEqual([1, 2]);
  });

  it('reports mismatched samples with the path into the batch', () => {
    expect(() => defaultCollate([[1, 2], [1]])).toThrow(/each element in list of batch should be of equal size/);
    expect(() => defaultCollate([{ a: 1 }, { b: 1 }] as { a?: number; b?: number }[])).toThrow(/sample 1 has no key 'a'/);
    expect(() => defaultCollate([{ a: 1 }, { a: 'x' }] as { a: unknown }[])).toThrow(/batch\.a: sample 0 is a number but sample 1 is string/);
    expect(() => defaultCollate([null])).toThrow(/found null/);
    expect(() => defaultCollate([tensor([1]), tensor([1, 2])])).toThrow(/stack expects each tensor to be equal size/);
    expect(() => defaultCollate([])).toThrow(/at least one sample/);
  });
});
