// Node's side of the loader: a local folder as ModelFiles, and a Hub repo id through the Hub cache
// Python shares (snapshotDownload fetches the files a model needs at once). The browser build
// replaces this module with platform-browser.ts (tsup.config.ts), which has no Node import.
import { snapshotDownload, type HubOptions } from '@core/hub';
import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { missingFile, type ModelFiles } from './model-files.js';

const isKind = async (path: string, kind: 'isFile' | 'isDirectory') => (await stat(path).catch(() => undefined))?.[kind]() ?? false;

/**
 * The files of a local model folder (Node only; in a browser it throws a {@link PretrainedError}
 * with reason `'needs-node'`). A file is read from disk as it is read (`fs.openAsBlob`), so a
 * loader holds only the slices it reads; it must not change while it is read.
 */
export function folderFiles(dir: string): ModelFiles {
  if (typeof dir !== 'string') throw new TypeError(`folderFiles(): expected a folder (a string), got ${dir === null ? 'null' : typeof dir}`);
  const files: ModelFiles = {
    where: (name) => join(dir, name),
    has: (name) => isKind(join(dir, name), 'isFile'),
    blob: async (name) => {
      const path = join(dir, name);
      if (isAbsolute(name) || name.split(/[\\/]/).includes('..')) throw missingFile(files, name, ` (the name leads outside ${dir})`);
      if (!(await isKind(path, 'isFile'))) throw missingFile(files, name, ` (${dir} has no such file)`);
      return openAsBlob(path);
    },
  };
  return files;
}

/** `idOrDir` itself when it is a local folder, else the Hub snapshot folder of the repo holding the files that match `patterns`. */
export async function platformFiles(idOrDir: string, hub: HubOptions, patterns: readonly string[]): Promise<{ dir: string; files: ModelFiles }> {
  const dir = (await isKind(idOrDir, 'isDirectory')) ? idOrDir : await snapshotDownload(idOrDir, { ...hub, allowPatterns: patterns });
  return { dir, files: folderFiles(dir) };
}
