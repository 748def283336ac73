// @core/hub: models from the Hugging Face Hub into the cache Python's huggingface_hub uses (Node).
export { hubDownload } from './download.js';
export { snapshotDownload } from './snapshot.js';
export { progressBar, type ProgressBarOptions, type ProgressStream } from './progress.js';
export type { DownloadProgress, HubDownloadOptions, HubOptions, RepoType, SnapshotDownloadOptions } from './options.js';
export * from './errors.js';
