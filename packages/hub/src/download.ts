// hubDownload: one file of a repo into the cache, as huggingface_hub's hf_hub_download does it;
// hubFile: the same, as a Blob backed by the cached file.
import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { cachedPath, exists, linkPointer, repoFolder, snapshotPath, writeRef } from './cache.js';
import { HubConnectionError, LocalEntryNotFoundError } from './errors.js';
import { fileMetadata } from './http.js';
import type { HubDownloadOptions, HubFileOptions } from './options.js';
import { requestContext, resolveUrl } from './protocol.js';
import { resolveSettings, type HubSettings } from './settings.js';
import { fetchBlob } from './transfer.js';
import { checkOptions, COMMIT_HASH, DOWNLOAD_CHECKS, validateRepoId, validateRepoPath, validateRevision } from './validate.js';

/** The error for a file (or, `file` undefined, a snapshot) that offline mode needs from the cache and does not find. */
export function notCached(settings: HubSettings, repoId: string, file: string | undefined): LocalEntryNotFoundError {
  const what = file === undefined ? `The snapshot of repo '${repoId}'` : `File '${file}' of repo '${repoId}'`;
  const call = file === undefined ? `snapshotDownload('${repoId}')` : `hubDownload('${repoId}', '${file}')`;
  return new LocalEntryNotFoundError(
    `${what} at revision '${settings.revision}' is not in the cache ${settings.cacheDir}, and offline mode is on (HF_HUB_OFFLINE or { offline: true }). ` +
    `Download it once with network access: ${call}, or Python's hf download, which shares the cache.`,
    repoId, file, settings.revision,
  );
}

/**
 * One file into the cache under already checked settings; returns its snapshot path and the commit.
 * Offline, or for a commit already cached, no network is used; when the Hub cannot be reached the
 * cached copy of the revision is used if there is one.
 */
export async function downloadFile(settings: HubSettings, repoId: string, file: string): Promise<{ path: string; commit: string }> {
  const repoDir = repoFolder(settings.cacheDir, settings.repoType, repoId);
  const fromCache = () => cachedPath(repoDir, settings.revision, file);
  if (settings.offline) {
    const hit = await fromCache();
    if (hit) return hit;
    throw notCached(settings, repoId, file);
  }
  if (!settings.forceDownload && COMMIT_HASH.test(settings.revision)) {
    const hit = await fromCache();
    if (hit) return hit;
  }
  const context = requestContext(settings, repoId, file);
  let meta;
  try {
    meta = await fileMetadata(resolveUrl(settings, repoId, file), settings, context);
  } catch (error) {
    const hit = error instanceof HubConnectionError && !settings.forceDownload ? await fromCache() : undefined;
    if (hit) return hit;
    throw error;
  }
  await writeRef(repoDir, settings.revision, meta.commit);
  const pointer = snapshotPath(repoDir, meta.commit, file);
  if (settings.forceDownload || !(await exists(pointer))) {
    const blob = join(repoDir, 'blobs', meta.etag);
    await fetchBlob(meta, blob, file, settings, context);
    await linkPointer(blob, pointer);
  }
  return { path: pointer, commit: meta.commit };
}

/**
 * Downloads one file of a Hub repo into the cache and returns the absolute path of the cached copy,
 * `{cacheDir}/models--{owner}--{name}/snapshots/{commit}/{filename}` (Python's
 * `huggingface_hub.hf_hub_download`, with the same cache, which the two share).
 *
 * A HEAD request learns the revision's commit and the file's ETag; the bytes are downloaded only
 * when that blob is not cached yet, into `blobs/{etag}.incomplete`, checked against the announced
 * size (and sha256 for LFS files), then renamed into place. An interrupted download (abort, network
 * error, killed process) continues from its last byte on the next call. With `offline` (or
 * `HF_HUB_OFFLINE=1`) nothing goes over the network.
 *
 * @param repoId `name` or `owner/name`, e.g. `'openai-community/gpt2'`.
 * @param filename The file's path in the repo, e.g. `'config.json'` or `'onnx/model.onnx'`.
 * @throws {@link HFValidationError} for an impossible repo id, file name or revision (checked before
 * any network access); TypeError for an unknown option or a value of the wrong type;
 * {@link RepositoryNotFoundError} / {@link GatedRepoError} (401/403: set `HF_TOKEN`, accept the
 * terms), {@link RevisionNotFoundError}, {@link EntryNotFoundError} (404);
 * {@link LocalEntryNotFoundError} offline when the file is not cached; {@link HubConnectionError}
 * for network failures; {@link HubIntegrityError} for a download that does not match; the signal's
 * reason when aborted.
 */
export async function hubDownload(repoId: string, filename: string, options: HubDownloadOptions = {}): Promise<string> {
  return cachedFile('hubDownload', repoId, filename, options);
}

/** hubDownload's work, its argument errors naming the function `fn`. */
async function cachedFile(fn: string, repoId: string, filename: string, options: HubDownloadOptions): Promise<string> {
  checkOptions(fn, options, DOWNLOAD_CHECKS);
  validateRepoId(repoId);
  validateRepoPath(filename, 'filename');
  const subfolder = options.subfolder ? validateRepoPath(options.subfolder, 'subfolder') : undefined;
  const settings = await resolveSettings(options);
  validateRevision(settings.revision);
  return (await downloadFile(settings, repoId, subfolder ? `${subfolder}/${filename}` : filename)).path;
}

/**
 * One file of a Hub repo as a `Blob`, in Node and in browsers alike. In Node it is
 * {@link hubDownload} (same cache, options and errors) and then `fs.openAsBlob` on the cached
 * file: the Blob reads from disk when it is read, so `await blob.slice(a, b).arrayBuffer()` costs
 * only those bytes of memory (`nn.safeOpen(blob)` reads one tensor at a time this way). The file
 * must stay as it is while the Blob is in use (a changed file makes reads fail).
 *
 * In a browser the bytes live in the Cache API instead (see the browser build's `hubFile`).
 *
 * @param repoId `name` or `owner/name`, e.g. `'openai-community/gpt2'`.
 * @param filename The file's path in the repo, e.g. `'model.safetensors'`.
 * @throws The errors of {@link hubDownload}.
 */
export async function hubFile(repoId: string, filename: string, options: HubFileOptions = {}): Promise<Blob> {
  return openAsBlob(await cachedFile('hubFile', repoId, filename, options));
}
