// Errors the data package throws on purpose, with the fields a program can branch on.
import { TensorError } from '@core/tensor';

/** An index outside a dataset (PyTorch raises IndexError). */
export class IndexError extends TensorError {
  constructor(
    message: string,
    /** The index asked for. */
    readonly index: unknown,
    /** The dataset's length. */
    readonly size: number,
  ) {
    super(message);
  }
}

/** Where in building a batch a failure happened. */
export type BatchStage = 'dataset.get' | 'dataset.getBatch' | 'collate' | 'pinMemory';

/**
 * A failure while building one batch, raised in the consumer when that batch is due. The original
 * error is `cause` (PyTorch re-raises the worker's exception type with the worker traceback instead).
 */
export class DataLoaderError extends TensorError {
  constructor(
    message: string,
    /** 0-based number of the batch in its epoch. */
    readonly batch: number,
    /** Which step of building the batch failed. */
    readonly stage: BatchStage,
    /** The original error. */
    override readonly cause: unknown,
  ) {
    super(message);
  }
}
