// @core/hub: models from the Hugging Face Hub into the cache Python's huggingface_hub uses (Node);
// browser.ts is the browser build, with hubFile on the Cache API.
export { hubDownload, hubFile } from './download.js';
export { snapshotDownload } from './snapshot.js';
export { progressBar, type ProgressBarOptions, type ProgressStream } from './progress.js';
export type { DownloadProgress, HubDownloadOptions, HubFileOptions, HubOptions, RepoType, SnapshotDownloadOptions } from './options.js';
export * from './errors.js';
