// Map-style datasets: `length` plus `get(i)`, and TensorDataset over tensors that share dim 0.
import { int32, ShapeError, Tensor, tensor, ValueError } from '@core/tensor';
import { IndexError } from './errors.js';

/** PyTorch's map-style Dataset: `get(i)` for 0 ≤ i < length; it may return a promise (I/O). */
export interface Dataset<T> {
  /** The number of samples. */
  readonly length: number;
  /** Sample `index` (0 ≤ index < length), or a promise of it. */
  get(index: number): T | Promise<T>;
}

/**
 * A dataset that can build a whole batch at once. The DataLoader calls `getBatch` instead of
 * `get` + the default collate (never with a custom collate), so it must return exactly what
 * `defaultCollate(indices.map(get))` would.
 */
export interface BatchedDataset<T, B> extends Dataset<T> {
  /** The collated batch of the samples at `indices`, built in one go. */
  getBatch(indices: readonly number[]): B | Promise<B>;
}

/** Whether a dataset can build whole batches (has `getBatch`), so the DataLoader skips per-sample `get` + collate. */
export function isBatchedDataset<T>(d: Dataset<T>): d is BatchedDataset<T, unknown> {
  return typeof (d as { getBatch?: unknown }).getBatch === 'function';
}

/** One tensor per input tensor, in the same positions. */
export type TensorRow<T extends readonly Tensor[]> = { -readonly [K in keyof T]: Tensor };

/** PyTorch's TensorDataset: sample i is the tuple of row views `t.select(0, i)`. */
export class TensorDataset<T extends readonly Tensor[] = Tensor[]> implements BatchedDataset<TensorRow<T>, TensorRow<T>> {
  /** The tensors the rows are cut from, as given. */
  readonly tensors: T;
  /** The number of rows (the tensors' common first size). */
  readonly length: number;

  constructor(...tensors: T) {
    if (tensors.length === 0) throw new ValueError('TensorDataset: expected at least one tensor');
    tensors.forEach((t, i) => {
      if (!(t instanceof Tensor)) throw new TypeError(`TensorDataset: argument ${i} is not a Tensor`);
      if (t.ndim === 0) throw new ShapeError(`TensorDataset: tensor ${i} is 0-dimensional; every tensor needs a first dimension to index samples by`, 'TensorDataset');
    });
    const sizes = tensors.map((t) => t.shape[0]!);
    if (sizes.some((s) => s !== sizes[0])) {
      const shapes = tensors.map((t, i) => `tensor ${i}: [${t.shape.join(', ')}]`).join(', ');
      throw new ShapeError(`TensorDataset: size mismatch between tensors: dim 0 sizes are [${sizes.join(', ')}] (${shapes}); all must be equal`, 'TensorDataset');
    }
    this.tensors = tensors;
    this.length = sizes[0]!;
  }

  /** Row `index` of every tensor (views, no copy); negative indices count from the end. */
  get(index: number): TensorRow<T> {
    const i = this.checkIndex(index, 'get');
    return this.tensors.map((t) => t.select(0, i)) as TensorRow<T>;
  }

  /** The rows at `indices` as one gather per tensor (int32 index, built once per device). */
  getBatch(indices: readonly number[]): TensorRow<T> {
    const host = Int32Array.from(indices, (index) => this.checkIndex(index, 'getBatch'));
    const byDevice = new Map<string, Tensor>();
    return this.tensors.map((t) => {
      const key = t.device.toString();
      let idx = byDevice.get(key);
      if (!idx) byDevice.set(key, (idx = tensor(host, { dtype: int32, device: t.device })));
      return t.indexSelect(0, idx);
    }) as TensorRow<T>;
  }

  /** Python-style index: −length ≤ index < length; negative counts from the end. */
  private checkIndex(index: number, method: string): number {
    const n = this.length;
    if (!Number.isInteger(index) || index < -n || index >= n) {
      throw new IndexError(`TensorDataset.${method}(): index ${index} is out of range for a dataset of size ${n} (expected an integer in [${-n}, ${n}))`, index, n);
    }
    return index < 0 ? index + n : index;
  }
}
