// snapshotDownload: a whole repo (or the files that match patterns) into the cache, as
// huggingface_hub's snapshot_download does it: one API call for the commit and the file list, then
// each file by hubDownload's path at that commit.
import { mkdir } from 'node:fs/promises';
import { cachedPath, exists, repoFolder, snapshotPath, writeRef } from './cache.js';
import { downloadFile, notCached } from './download.js';
import { HubConnectionError } from './errors.js';
import { repoInfo } from './http.js';
import { requestContext } from './protocol.js';
import type { SnapshotDownloadOptions } from './options.js';
import { resolveSettings, type HubSettings } from './settings.js';
import { checkOptions, SNAPSHOT_CHECKS, validateRepoId, validateRepoPath, validateRevision } from './validate.js';

/** Python's `fnmatch.translate`: `*` any run of characters (`/` included), `?` one, `[seq]` / `[!seq]` a set. */
export function patternToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      const close = pattern.indexOf(']', j);
      if (close < 0) {
        source += '\\[';
        continue;
      }
      const negated = pattern[i + 1] === '!';
      const set = pattern.slice(i + (negated ? 2 : 1), close).replace(/[\\\]^[]/g, '\\$&');
      source += `[${negated ? '^' : ''}${set}]`;
      i = close;
    } else source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** The patterns as a list of matchers; a pattern ending in `/` means everything below that folder (Python adds the `*`). */
function matchers(patterns: string | readonly string[] | undefined): RegExp[] | undefined {
  if (patterns === undefined) return undefined;
  return (typeof patterns === 'string' ? [patterns] : patterns).map((p) => patternToRegExp(p.endsWith('/') ? `${p}*` : p));
}

/** The files that match one of `allow` (all when it is not given) and none of `ignore`. */
export function filterFiles(files: readonly string[], allow?: string | readonly string[], ignore?: string | readonly string[]): string[] {
  const allowed = matchers(allow);
  const ignored = matchers(ignore) ?? [];
  return files.filter((f) => (allowed === undefined || allowed.some((r) => r.test(f))) && !ignored.some((r) => r.test(f)));
}

/** Runs `task` on every item, at most `workers` at a time; after a failure no new item starts, and the first failure is thrown. */
async function eachLimited<T>(items: readonly T[], workers: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        await task(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, items.length) }, worker));
}

/** The cached snapshot folder of the revision, when it exists and holds every file of `files`. */
async function cachedSnapshot(settings: HubSettings, repoId: string, files: readonly string[] | undefined): Promise<string | undefined> {
  const repoDir = repoFolder(settings.cacheDir, settings.repoType, repoId);
  const hit = await cachedPath(repoDir, settings.revision);
  if (hit === undefined) return undefined;
  for (const file of files ?? []) if (!(await exists(snapshotPath(repoDir, hit.commit, file)))) return undefined;
  return hit.path;
}

/**
 * Downloads a repo's files at one commit into the cache and returns the snapshot folder,
 * `{cacheDir}/models--{owner}--{name}/snapshots/{commit}` (Python's
 * `huggingface_hub.snapshot_download`, sharing its cache). Each file takes {@link hubDownload}'s
 * path: cached blobs are not downloaded again, interrupted downloads resume, every file is checked.
 *
 * The file list comes from the Hub's API (`/api/{repoType}s/{repoId}/revision/{revision}`), filtered
 * by `allowPatterns` and `ignorePatterns`; or give `files` to name them and skip the API. Offline
 * (or when the Hub cannot be reached) the cached snapshot of the revision is returned if there is one.
 *
 * @param repoId `name` or `owner/name`.
 * @throws as {@link hubDownload}; TypeError when `files` is given together with patterns.
 */
export async function snapshotDownload(repoId: string, options: SnapshotDownloadOptions = {}): Promise<string> {
  checkOptions('snapshotDownload', options, SNAPSHOT_CHECKS);
  validateRepoId(repoId);
  const { files, allowPatterns, ignorePatterns, maxWorkers = 8 } = options;
  if (files !== undefined && (allowPatterns !== undefined || ignorePatterns !== undefined)) {
    throw new TypeError('snapshotDownload(): give either files or allowPatterns/ignorePatterns, not both');
  }
  for (const file of files ?? []) validateRepoPath(file, 'filename');
  const settings = await resolveSettings(options);
  validateRevision(settings.revision);
  if (settings.offline) {
    const hit = await cachedSnapshot(settings, repoId, files);
    if (hit) return hit;
    throw notCached(settings, repoId, undefined);
  }
  let commit: string;
  let wanted: string[];
  if (files !== undefined) {
    // The first file's HEAD says which commit the revision is at; the others are fetched at that commit.
    const unique = [...new Set(files)];
    commit = (await downloadFile(settings, repoId, unique[0]!)).commit;
    wanted = unique.slice(1);
  } else {
    try {
      ({ commit, files: wanted } = await repoInfo(settings, repoId, requestContext(settings, repoId)));
    } catch (error) {
      const hit = error instanceof HubConnectionError && !settings.forceDownload ? await cachedSnapshot(settings, repoId, undefined) : undefined;
      if (hit) return hit;
      throw error;
    }
    for (const file of wanted) validateRepoPath(file, 'filename');
    wanted = filterFiles(wanted, allowPatterns, ignorePatterns);
  }
  const atCommit: HubSettings = { ...settings, revision: commit };
  await eachLimited(wanted, maxWorkers, (file) => downloadFile(atCommit, repoId, file));
  const repoDir = repoFolder(settings.cacheDir, settings.repoType, repoId);
  await writeRef(repoDir, settings.revision, commit);
  const folder = snapshotPath(repoDir, commit);
  await mkdir(folder, { recursive: true });
  return folder;
}
