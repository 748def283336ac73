// The browser build's platform.ts (tsup.config.ts swaps it in): no file system, so a model comes
// from the Hub through hubFile (the Cache API), or from ModelFiles / Blobs the page has.
import type { HubOptions } from '@core/hub';
import { hubFiles, PretrainedError, type ModelFiles } from './model-files.js';

const NO_FOLDERS = 'a page has no file system: give a Hub repo id (fromPretrained downloads it through hubFile into the Cache API), ' +
  'or the files themselves (blobFiles({ "config.json": file, … }), or a ModelFiles of your own, e.g. one that fetches from a URL)';

/** In a browser: throws a {@link PretrainedError} with reason `'needs-node'` (folders are Node's). */
export function folderFiles(dir: string): ModelFiles {
  throw new PretrainedError(`folderFiles('${dir}'): ${NO_FOLDERS}`, 'needs-node', String(dir));
}

/** A path-looking string (`/x`, `./x`, `../x`, `C:\x`, `~/x`) is a folder, which a page cannot read. */
const looksLikePath = (s: string) => /^(\.{0,2}\/|~|[A-Za-z]:[\\/]|\\)/.test(s) || s.includes('\\');

/** The Hub repo `id`'s files through hubFile; its own name as `dir`. A local folder path is a {@link PretrainedError} ('needs-node'). */
export async function platformFiles(id: string, hub: HubOptions): Promise<{ dir: string; files: ModelFiles }> {
  if (looksLikePath(id)) throw new PretrainedError(`'${id}' is a local folder: ${NO_FOLDERS}`, 'needs-node', id);
  return { dir: id, files: hubFiles(id, hub) };
}
