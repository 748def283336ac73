// Where a pretrained model's files come from, as one small interface the loader reads through, so
// the same loading code runs in Node and in browsers: a local folder (Node's build, platform.ts),
// a Hub repo through @core/hub's hubFile (the Hub cache in Node, the Cache API in a page), or
// Blobs the caller already has (files picked in a page, fetched responses).
import { EntryNotFoundError, hubFile, type HubFileOptions } from '@core/hub';
import { TensorError } from '@core/tensor';

/**
 * The files of a pretrained model (config.json, the safetensors weights, the tokenizer files) by
 * their names in Hugging Face's layout (`'config.json'`, `'model-00001-of-00002.safetensors'`).
 * `folderFiles(dir)` (Node), `hubFiles(repoId)` and `blobFiles(record)` make one; any object of
 * this shape works, e.g. one that fetches from a URL.
 */
export interface ModelFiles {
  /** The file's full name in messages: its path, its Hub address, or its name among the Blobs. */
  where(name: string): string;
  /** Whether the model has the file. */
  has(name: string): Promise<boolean>;
  /** The file's bytes as a Blob (read lazily where the source can); a missing file is a {@link PretrainedError} with reason `'missing-file'`. */
  blob(name: string): Promise<Blob>;
}

/** What went wrong with a pretrained checkpoint. */
export type PretrainedErrorReason =
  | 'missing-file' | 'bad-file' | 'missing-keys' | 'unexpected-keys' | 'shape-mismatch' | 'dtype-mismatch' | 'tied-mismatch' | 'needs-node';

/**
 * A checkpoint that cannot be loaded into the model, or a checkpoint folder missing a file. The
 * message names the keys and the files; the fields give them to code.
 */
export class PretrainedError extends TensorError {
  constructor(
    message: string,
    /** Which check failed (`'needs-node'`: a local folder asked for in a browser). */
    readonly reason: PretrainedErrorReason,
    /** The file at fault (for key errors: the files read, joined with ', '). */
    readonly file: string,
    /** The keys at fault (model keys; unexpected keys as the model would name them), empty for a file error. */
    readonly keys: readonly string[] = [],
  ) {
    super(message);
  }
}

/** The error of a file the source lacks. */
export function missingFile(files: ModelFiles, name: string, detail = ''): PretrainedError {
  const where = files.where(name);
  return new PretrainedError(`${where}: the model has no ${name}${detail}; a pretrained model has one`, 'missing-file', where);
}

/** The JSON object in the file `name`; a missing file or one that is not a JSON object is a {@link PretrainedError} naming it. */
export async function readJson(files: ModelFiles, name: string): Promise<Record<string, unknown>> {
  const text = await (await files.blob(name)).text();
  const where = files.where(name);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PretrainedError(`${where}: ${name} is not valid JSON (${(error as Error).message})`, 'bad-file', where);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new PretrainedError(`${where}: ${name} must hold a JSON object`, 'bad-file', where);
  }
  return json as Record<string, unknown>;
}

/** Whether `value` is a {@link ModelFiles} (has `where`, `has` and `blob` methods). */
export function isModelFiles(value: unknown): value is ModelFiles {
  const v = value as Partial<ModelFiles> | null;
  return typeof v === 'object' && v !== null && typeof v.where === 'function' && typeof v.has === 'function' && typeof v.blob === 'function';
}

/**
 * ModelFiles from two functions: `where(name)` names a file in messages, and `read(name)` gives
 * its Blob, or `undefined` when there is no such file. Each name is read once and kept (a failed
 * read too), so `has` then `blob` costs one read. `hubFiles` and `blobFiles` are made this way; a
 * page can read a model from its own site with `modelFiles((n) => url + n, (n) => fetch(url + n)…)`.
 */
export function modelFiles(where: (name: string) => string, read: (name: string) => Promise<Blob | undefined>): ModelFiles {
  const asked = new Map<string, Promise<Blob | undefined>>();
  const get = (name: string) => {
    if (!asked.has(name)) asked.set(name, read(name));
    return asked.get(name)!;
  };
  const files: ModelFiles = {
    where,
    has: async (name) => (await get(name)) !== undefined,
    blob: async (name) => {
      const blob = await get(name);
      if (blob === undefined) throw missingFile(files, name);
      return blob;
    },
  };
  return files;
}

/**
 * The files of a Hub repo, each downloaded by `@core/hub`'s `hubFile` when first asked for (in
 * Node into the Hub cache Python shares, read from disk as it is read; in a page into the Cache
 * API, where later visits find it). `has` downloads the file to know: ask for the files you need.
 * The options are `hubFile`'s (revision, endpoint, token, offline, onProgress, signal…).
 */
export function hubFiles(repoId: string, options: HubFileOptions = {}): ModelFiles {
  const revision = options.revision === undefined ? '' : `, revision ${options.revision}`;
  return modelFiles(
    (name) => `${repoId}/${name} (Hub${revision})`,
    (name) => hubFile(repoId, name, options).catch((error: unknown) => {
      if (error instanceof EntryNotFoundError) return undefined;
      throw error;
    }),
  );
}

/**
 * The files of a model given as Blobs by name (`{ 'config.json': blob, 'model.safetensors': file,
 * … }`), e.g. the `File`s a page's `<input type="file" multiple>` picked, keyed by their `name`.
 */
export function blobFiles(record: Readonly<Record<string, Blob>>): ModelFiles {
  if (record === null || typeof record !== 'object') throw new TypeError(`blobFiles(): expected an object of file name → Blob, got ${record === null ? 'null' : typeof record}`);
  for (const [name, blob] of Object.entries(record)) {
    if (!(blob instanceof Blob)) throw new TypeError(`blobFiles(): '${name}' must be a Blob (or File), got ${blob === null ? 'null' : typeof blob}`);
  }
  return modelFiles((name) => name, async (name) => (Object.hasOwn(record, name) ? record[name] : undefined));
}
