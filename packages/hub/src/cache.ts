// The cache layout of Python's huggingface_hub, so that both read and fill the same cache:
//   {cacheDir}/models--{owner}--{name}/blobs/{etag}                 the bytes, one file per content
//                                     /snapshots/{commit}/{file}     a relative symlink to the blob
//                                     /refs/{revision}               the commit a branch or tag points at
import { copyFile, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { RepoType } from './options.js';
import { COMMIT_HASH, isSafeSegment } from './validate.js';

/** The cache folder of one repo: `{cacheDir}/{repoType}s--{owner}--{name}`. */
export function repoFolder(cacheDir: string, repoType: RepoType, repoId: string): string {
  return join(cacheDir, [`${repoType}s`, ...repoId.split('/')].join('--'));
}

/** Whether a path exists, following symlinks: a link whose blob is gone does not count. */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}

/** A unique sibling name for writing `path` atomically (written there, then renamed over it). */
function temporaryName(path: string): string {
  return `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
}

/** The commit a revision names: itself when it is a commit hash, else what `refs/{revision}` holds. */
export async function cachedCommit(repoDir: string, revision: string): Promise<string | undefined> {
  if (COMMIT_HASH.test(revision)) return revision;
  try {
    const commit = (await readFile(join(repoDir, 'refs', revision), 'utf8')).trim();
    return isSafeSegment(commit) ? commit : undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw error;
  }
}

/** Records that `revision` points at `commit` (nothing to record when the revision is that commit). */
export async function writeRef(repoDir: string, revision: string, commit: string): Promise<void> {
  if (revision === commit || (await cachedCommit(repoDir, revision)) === commit) return;
  const ref = join(repoDir, 'refs', revision);
  await mkdir(dirname(ref), { recursive: true });
  const temporary = temporaryName(ref);
  await writeFile(temporary, commit);
  await rename(temporary, ref);
}

/**
 * The cached copy of a file (or with `file` undefined, the snapshot folder) at a revision, with no
 * network access; undefined when the cache does not have it.
 */
export async function cachedPath(repoDir: string, revision: string, file?: string): Promise<{ path: string; commit: string } | undefined> {
  const commit = await cachedCommit(repoDir, revision);
  if (commit === undefined) return undefined;
  const path = snapshotPath(repoDir, commit, file);
  return (await exists(path)) ? { path, commit } : undefined;
}

/** `snapshots/{commit}/{file}` of a repo's cache folder; the snapshot folder itself when `file` is undefined. */
export function snapshotPath(repoDir: string, commit: string, file?: string): string {
  return join(repoDir, 'snapshots', commit, ...(file === undefined ? [] : file.split('/')));
}

/**
 * Makes `pointer` a relative symlink to `blob`, replacing what was there atomically; where the file
 * system refuses symlinks (Windows without developer mode, some network drives), a copy instead.
 */
export async function linkPointer(blob: string, pointer: string): Promise<void> {
  await mkdir(dirname(pointer), { recursive: true });
  const temporary = temporaryName(pointer);
  try {
    await symlink(relative(dirname(pointer), blob), temporary);
  } catch {
    await copyFile(blob, temporary);
  }
  try {
    await rename(temporary, pointer);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
