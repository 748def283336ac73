/**
 * Map-style datasets and an async DataLoader (batching, seeded shuffle, pinned batches, prefetch)
 * for @core/tensor.
 *
 * @module \@core/data
 */
// @core/data: map-style datasets and an async DataLoader for @core/tensor.
export { type Dataset, type BatchedDataset, type TensorRow, TensorDataset, isBatchedDataset } from './dataset.js';
export { DataLoader, type DataLoaderOptions } from './dataloader.js';
export { defaultCollate, type Collated, type CollateFn } from './collate.js';
export { pinBatch, pinnedMemoryAvailable, NO_ACCELERATOR_WARNING } from './pin.js';
export { randperm } from './randperm.js';
export { DataLoaderError, IndexError, type BatchStage } from './errors.js';
