// The "browser" build of @core/hub: the same names, without Node built-ins. `hubFile` works here,
// on the Cache API; hubDownload and snapshotDownload return paths in a file-system cache, which
// pages do not have, so they fail with a HubError pointing to hubFile instead of a bundler's error
// about node:fs.
import { HubError } from './errors.js';
import type { DownloadProgress, HubDownloadOptions, SnapshotDownloadOptions } from './options.js';
import type { ProgressBarOptions } from './progress.js';

export { hubFile } from './browser-file.js';

const NODE_ONLY = 'needs Node.js: it returns a path in the file-system cache Python shares, which a page does not have.';
const USE_HUB_FILE = "In a page, use hubFile(repoId, filename), which returns the file as a Blob kept in the browser's Cache API.";

/** In a browser: always rejects with a {@link HubError} pointing to `hubFile`, which works in browsers. */
export async function hubDownload(_repoId: string, _filename: string, _options?: HubDownloadOptions): Promise<string> {
  throw new HubError(`hubDownload() ${NODE_ONLY} ${USE_HUB_FILE}`);
}

/** In a browser: always rejects with a {@link HubError} pointing to `hubFile`, file by file. */
export async function snapshotDownload(_repoId: string, _options?: SnapshotDownloadOptions): Promise<string> {
  throw new HubError(`snapshotDownload() ${NODE_ONLY} ${USE_HUB_FILE}`);
}

/** In a browser: always throws a {@link HubError} (the bar is drawn on a terminal); pass your own `onProgress` to `hubFile`. */
export function progressBar(_options?: ProgressBarOptions): (progress: DownloadProgress) => void {
  throw new HubError("progressBar() needs Node.js: it draws on a terminal. In a page, pass hubFile an onProgress of your own ({ file, loaded, total }).");
}

export type { ProgressBarOptions, ProgressStream } from './progress.js';
export type { DownloadProgress, HubDownloadOptions, HubFileOptions, HubOptions, RepoType, SnapshotDownloadOptions } from './options.js';
export * from './errors.js';
