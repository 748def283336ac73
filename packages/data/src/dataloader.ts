// DataLoader: batches of a map-style dataset as an async iterable, with seeded shuffling,
// optional pinning (PIN-3/PIN-4) and batches prepared ahead of the consumer (prefetch).
import { defaultGenerator, Generator, ValueError } from '@core/tensor';
import { defaultCollate, type Collated, type CollateFn } from './collate.js';
import { isBatchedDataset, type Dataset } from './dataset.js';
import { DataLoaderError, type BatchStage } from './errors.js';
import { pinBatch, pinnedMemoryAvailable, warnNoAccelerator } from './pin.js';
import { randperm } from './randperm.js';

/** How a DataLoader batches: PyTorch's options in camelCase, without worker processes. */
export interface DataLoaderOptions<T, B> {
  /** Samples per batch (default 1). */
  readonly batchSize?: number;
  /** A new order every epoch, drawn from `generator` (default false). */
  readonly shuffle?: boolean;
  /** Drop the last batch when it is smaller than batchSize (default false). */
  readonly dropLast?: boolean;
  /** Turns the list of samples into a batch (default: defaultCollate). */
  readonly collate?: CollateFn<T, B>;
  /** Pin each batch before yielding it (PIN-3); without an accelerator: warn once, yield unpinned. */
  readonly pinMemory?: boolean;
  /** A Generator, or a seed for a new one. Default: the global generator (`manualSeed`). */
  readonly generator?: Generator | number;
  /** Batches prepared ahead of the one the consumer holds (default 1; 0 = build on demand). */
  readonly prefetch?: number;
}

/** Runs `f` on a later macrotask, so a prefetched batch is built while the consumer awaits. */
const defer: (f: () => void) => void =
  typeof setImmediate === 'function' ? (f) => void setImmediate(f) : (f) => void setTimeout(f, 0);

function checkCount(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    const what = min === 0 ? 'a non-negative integer' : 'a positive integer';
    throw new ValueError(`DataLoader: ${name} should be ${what} value, but got ${name}=${String(value)}`);
  }
  return value;
}

function listIndices(indices: readonly number[]): string {
  const shown = indices.slice(0, 8).join(', ');
  return indices.length > 8 ? `${shown}, … (${indices.length} in all)` : shown;
}

/** PyTorch's DataLoader in the main process: `for await (const [xb, yb] of loader)`, one epoch per loop. */
export class DataLoader<T, B = Collated<T>> implements AsyncIterable<B> {
  /** The dataset batches are drawn from. */
  readonly dataset: Dataset<T>;
  /** Samples per batch. */
  readonly batchSize: number;
  /** Whether each epoch draws a new order. */
  readonly shuffle: boolean;
  /** Whether an incomplete last batch is dropped. */
  readonly dropLast: boolean;
  /** Whether batches are pinned (when an accelerator supports it). */
  readonly pinMemory: boolean;
  /** Batches built ahead of the consumer. */
  readonly prefetch: number;
  /** The generator shuffles are drawn from. */
  readonly generator: Generator;
  private readonly collate: CollateFn<T, B> | undefined;

  constructor(dataset: Dataset<T>, options: DataLoaderOptions<T, B> = {}) {
    if (typeof dataset?.get !== 'function' || typeof dataset.length !== 'number') {
      throw new TypeError('DataLoader: dataset must have a numeric `length` and a `get(index)` method');
    }
    this.dataset = dataset;
    this.batchSize = checkCount('batchSize', options.batchSize ?? 1, 1);
    this.prefetch = checkCount('prefetch', options.prefetch ?? 1, 0);
    this.shuffle = options.shuffle ?? false;
    this.dropLast = options.dropLast ?? false;
    this.pinMemory = options.pinMemory ?? false;
    this.collate = options.collate;
    const g = options.generator;
    this.generator = typeof g === 'number' ? new Generator(g) : g ?? defaultGenerator;
  }

  /** The number of batches in an epoch. */
  get length(): number {
    const n = this.dataset.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }

  /**
   * One epoch: yields every batch in order (a new shuffle each time iteration starts). A failure building a batch is thrown as a DataLoaderError when that batch is due.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<B, void, undefined> {
    const batches = await this.plan();
    // PIN-3: decided once per epoch, like PyTorch's iterator.
    const pin = this.pinMemory && pinnedMemoryAvailable();
    if (this.pinMemory && !pin) warnNoAccelerator();
    const started: (Promise<B> | undefined)[] = [];
    let stopped = false;
    const start = (k: number): Promise<B> => {
      const p = new Promise<void>((resolve) => defer(resolve)).then(() => {
        if (stopped) throw new Error('DataLoader: iteration stopped');
        return this.build(k, batches[k]!, pin);
      });
      p.catch(() => {}); // a prefetched batch that fails is reported when it is due, not as unhandled
      return p;
    };
    try {
      for (let k = 0; k < batches.length; k++) {
        // Batches k … k + prefetch are scheduled before batch k is yielded.
        while (started.length < Math.min(batches.length, k + 1 + this.prefetch)) started.push(start(started.length));
        const batch = await started[k]!;
        started[k] = undefined;
        yield batch;
      }
    } finally {
      stopped = true; // a consumer's `break`: prefetched batches not yet begun are skipped
    }
  }

  /** The epoch's batches of dataset indices. */
  private async plan(): Promise<number[][]> {
    const n = this.dataset.length;
    if (!Number.isInteger(n) || n < 0) throw new ValueError(`DataLoader: dataset.length must be a non-negative integer, got ${String(n)}`);
    if (n === 0) throw new ValueError('DataLoader: the dataset is empty (length 0), so there is nothing to batch; check how the dataset was built');
    const order = this.shuffle ? await randperm(n, this.generator) : null;
    const count = this.length;
    const batches: number[][] = [];
    for (let k = 0; k < count; k++) {
      const from = k * this.batchSize;
      const to = Math.min(from + this.batchSize, n);
      const batch = new Array<number>(to - from);
      for (let i = from; i < to; i++) batch[i - from] = order ? order[i]! : i;
      batches.push(batch);
    }
    return batches;
  }

  private async build(k: number, indices: number[], pin: boolean): Promise<B> {
    const dataset = this.dataset;
    let batch: B;
    if (!this.collate && isBatchedDataset(dataset)) {
      // The default collate of rows is one gather per tensor: skip the per-sample path.
      batch = (await this.stage(k, indices, 'dataset.getBatch', 'dataset.getBatch', () => dataset.getBatch(indices))) as B;
    } else {
      const samples = await Promise.all(
        indices.map((i) => this.stage(k, indices, 'dataset.get', `dataset.get(${i})`, () => dataset.get(i))),
      );
      const collate = this.collate ?? (defaultCollate as unknown as CollateFn<T, B>);
      batch = await this.stage(k, indices, 'collate', 'collate', () => collate(samples));
    }
    return pin ? this.stage(k, indices, 'pinMemory', 'pinMemory', () => pinBatch(batch)) : batch;
  }

  /** Runs one step of building batch k; a failure becomes a DataLoaderError that says where. */
  private async stage<R>(k: number, indices: readonly number[], stage: BatchStage, where: string, f: () => R | Promise<R>): Promise<R> {
    try {
      return await f();
    } catch (e) {
      const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      throw new DataLoaderError(
        `DataLoader: batch ${k} of ${this.length} (dataset indices ${listIndices(indices)}) failed in ${where}: ${message}`,
        k,
        stage,
        e,
      );
    }
  }
}
