// The "browser" build of @core/hub: the same names, without Node built-ins. Downloads write to a
// file-system cache, which pages do not have; caching in the Cache API or OPFS is not built yet,
// so each function fails with a HubError that says so instead of a bundler's error about node:fs.
import { HubError } from './errors.js';
import type { DownloadProgress, HubDownloadOptions, SnapshotDownloadOptions } from './options.js';
import type { ProgressBarOptions } from './progress.js';

const NODE_ONLY =
  'needs Node.js: @core/hub downloads into a file-system cache, and caching in browsers (Cache API / OPFS) is not implemented yet. ' +
  'In a page, fetch the file from {endpoint}/{repoId}/resolve/{revision}/{filename} instead.';

/** In a browser: always rejects with a {@link HubError} (downloads need Node for now). */
export async function hubDownload(_repoId: string, _filename: string, _options?: HubDownloadOptions): Promise<string> {
  throw new HubError(`hubDownload() ${NODE_ONLY}`);
}

/** In a browser: always rejects with a {@link HubError} (downloads need Node for now). */
export async function snapshotDownload(_repoId: string, _options?: SnapshotDownloadOptions): Promise<string> {
  throw new HubError(`snapshotDownload() ${NODE_ONLY}`);
}

/** In a browser: always throws a {@link HubError} (there is no download to show). */
export function progressBar(_options?: ProgressBarOptions): (progress: DownloadProgress) => void {
  throw new HubError(`progressBar() ${NODE_ONLY}`);
}

export type { ProgressBarOptions, ProgressStream } from './progress.js';
export type { DownloadProgress, HubDownloadOptions, HubOptions, RepoType, SnapshotDownloadOptions } from './options.js';
export * from './errors.js';
