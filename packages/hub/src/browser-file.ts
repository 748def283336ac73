// hubFile in browsers: the bytes of one file, verified, kept in the Cache API. A page cannot read
// the headers of a redirect (fetch follows it, or hands back an opaque one), so the HEAD request
// Node uses would lose the commit and the sha256 of every LFS file, which the Hub puts on its
// redirect to the storage host. The revision's commit and the files' sizes and sha256 come from
// the Hub's API instead (`/api/{type}s/{repo}/revision/{revision}?blobs=true`, as Python's
// `model_info(files_metadata=True)` asks), and the bytes from `resolve/{commit}/{file}`.
//
// Cache entries (cache 'core-hub'):
//   {endpoint}/{prefix}{repo}/resolve/{commit}/{file}   the verified bytes (a commit never changes)
//   {endpoint}/api/{type}s/{repo}/revision/{revision}   the commit a branch or tag pointed at last
import { HubConnectionError, HubError, LocalEntryNotFoundError } from './errors.js';
import type { HubFileOptions } from './options.js';
import {
  integrityError, networkError, networkSettings, parseRevisionInfo, readBody, repoInfoUrl, requestContext, resolveUrl, statusError,
  type NetworkSettings, type RepoFile,
} from './protocol.js';
import { checkOptions, COMMIT_HASH, DOWNLOAD_CHECKS, validateRepoId, validateRepoPath, validateRevision } from './validate.js';

/** The name of the Cache API cache that holds the files: `caches.delete('core-hub')` clears them. */
export const CACHE_NAME = 'core-hub';

/** hubFile's options in a browser: hubDownload's but `cacheDir`. */
const { cacheDir: _cacheDir, ...FILE_CHECKS } = DOWNLOAD_CHECKS;

async function openCache(): Promise<Cache> {
  if (typeof caches === 'undefined') {
    throw new HubError('hubFile() needs the Cache API (globalThis.caches), which browsers offer only to secure contexts: serve the page over https or from localhost.');
  }
  return caches.open(CACHE_NAME);
}

/** A GET of `url` (redirects followed by the browser), the token only to the endpoint's origin; an error status is a typed error. */
async function get(url: string, settings: NetworkSettings, context: ReturnType<typeof requestContext>): Promise<Response> {
  const headers: Record<string, string> = {};
  if (settings.token !== undefined && new URL(url).origin === new URL(settings.endpoint).origin) headers.authorization = `Bearer ${settings.token}`;
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: settings.signal, cache: 'no-store' });
  } catch (error) {
    throw networkError(error, url, settings.signal, 'Could not reach the Hub: GET');
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw statusError(response, response.url || url, context);
  }
  return response;
}

/** The revision's commit and the files' sizes and sha256, from the Hub's API. */
async function revisionInfo(settings: NetworkSettings, repoId: string): Promise<{ commit: string; files: RepoFile[] }> {
  const url = `${repoInfoUrl(settings, repoId)}?blobs=true`;
  const response = await get(url, settings, requestContext(settings, repoId));
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw networkError(error, url, settings.signal, 'Reading the answer of');
  }
  return parseRevisionInfo(text, url, settings.endpoint);
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Downloads `file` at `commit`, checks it against what the API announced, and puts it in the cache under `key`. */
async function download(cache: Cache, key: string, meta: RepoFile | undefined, settings: NetworkSettings, repoId: string, file: string): Promise<void> {
  const context = requestContext(settings, repoId, file);
  const response = await get(key, settings, context);
  const announced = Number(response.headers.get('content-length') ?? NaN);
  const total = meta?.size ?? (Number.isSafeInteger(announced) ? announced : undefined);
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const loaded = await readBody(response, 0, total, settings, file, (chunk) => chunks.push(chunk),
    'a download in a browser cannot be continued: the next call starts it again');
  const blob = new Blob(chunks);
  const sha256 = meta?.sha256 === undefined ? undefined : hex(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
  const error = integrityError(file, context, { size: total, sha256: meta?.sha256 }, { size: loaded, sha256 });
  if (error) throw error;
  await cache.put(key, new Response(blob, { headers: { 'content-type': 'application/octet-stream' } }));
}

/** One file as a Blob under checked settings: from the cache when it may be, else downloaded into it. */
async function fileBlob(cache: Cache, settings: NetworkSettings, repoId: string, file: string): Promise<Blob> {
  const fileKey = (commit: string) => resolveUrl({ ...settings, revision: commit }, repoId, file);
  const refKey = repoInfoUrl(settings, repoId);
  const pinned = COMMIT_HASH.test(settings.revision);
  const cachedAt = async (commit: string | undefined) => (commit === undefined ? undefined : (await cache.match(fileKey(commit)))?.blob());
  const fromCache = async () => cachedAt(pinned ? settings.revision : await (await cache.match(refKey))?.text());
  if (settings.offline) {
    const hit = await fromCache();
    if (hit) return hit;
    throw new LocalEntryNotFoundError(
      `File '${file}' of repo '${repoId}' at revision '${settings.revision}' is not in this browser's Cache API storage ('${CACHE_NAME}'), ` +
      `and offline mode is on ({ offline: true }). Call hubFile('${repoId}', '${file}') once with network access.`,
      repoId, file, settings.revision,
    );
  }
  if (pinned && !settings.forceDownload) {
    const hit = await fromCache();
    if (hit) return hit;
  }
  let info;
  try {
    info = await revisionInfo(settings, repoId);
  } catch (error) {
    const hit = error instanceof HubConnectionError && !settings.forceDownload ? await fromCache() : undefined;
    if (hit) return hit;
    throw error;
  }
  if (!pinned) await cache.put(refKey, new Response(info.commit));
  const key = fileKey(info.commit);
  if (settings.forceDownload || !(await cache.match(key))) await download(cache, key, info.files.find((f) => f.path === file), settings, repoId, file);
  const stored = await cachedAt(info.commit);
  if (stored === undefined) throw new HubError(`The browser did not keep '${file}' of repo '${repoId}' in the Cache API (storage full or cleared meanwhile?): free some space and call hubFile() again.`);
  return stored;
}

/**
 * One file of a Hub repo as a `Blob`, kept in the browser's Cache API (cache `'core-hub'`), so a
 * page loads a model once and later visits, or `{ offline: true }`, read it from there.
 *
 * The Hub's API tells the revision's commit and the file's size and (for LFS files) sha256; the
 * bytes come from `resolve/{commit}/{file}` with `onProgress` reports as they arrive, are checked
 * against that size and sha256 (`crypto.subtle`), and only then stored, under that URL: a commit
 * never changes, so a later call for the same commit, or a commit hash as `revision`, reads the
 * cache with no request. The commit a branch or tag pointed at is noted too, for `offline: true`.
 * When the Hub cannot be reached, the cached copy of the revision is used if there is one.
 *
 * What Node does and a browser cannot: a Cache API entry cannot be appended to, so an interrupted
 * download starts again from the first byte (Node continues it); the bytes sit in the browser's
 * storage for this origin, not in Python's cache folder, so there is no `cacheDir`; clear them
 * with `caches.delete('core-hub')` (or the site's data in the browser's settings). The file is
 * held in memory once while it is checked; the Blob returned reads from the browser's storage.
 * There are no environment variables: `endpoint`, `token` and `offline` come from the options
 * only. The token goes to the endpoint only; browsers drop it when the Hub redirects to its
 * storage host.
 *
 * @param repoId `name` or `owner/name`, e.g. `'openai-community/gpt2'`.
 * @param filename The file's path in the repo, e.g. `'model.safetensors'`.
 * @throws {@link HFValidationError} and TypeError for bad arguments and options, as in Node;
 * {@link RepositoryNotFoundError} / {@link GatedRepoError} (401/403), {@link RevisionNotFoundError},
 * {@link EntryNotFoundError} (404); {@link LocalEntryNotFoundError} offline when the file is not
 * cached; {@link HubConnectionError} when the Hub cannot be reached; {@link HubIntegrityError} for
 * bytes that do not match (nothing is cached); a {@link HubError} where there is no Cache API
 * (pages served over plain http from another host than localhost).
 */
export async function hubFile(repoId: string, filename: string, options: HubFileOptions = {}): Promise<Blob> {
  checkOptions('hubFile', options, FILE_CHECKS);
  validateRepoId(repoId);
  validateRepoPath(filename, 'filename');
  const subfolder = options.subfolder ? validateRepoPath(options.subfolder, 'subfolder') : undefined;
  const settings = networkSettings(options, {}, options.token || undefined);
  validateRevision(settings.revision);
  return fileBlob(await openCache(), settings, repoId, subfolder ? `${subfolder}/${filename}` : filename);
}
