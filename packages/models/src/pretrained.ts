// Pretrained checkpoints: a Hub repo or a local folder in Hugging Face's layout (config.json,
// model.safetensors or a sharded model.safetensors.index.json, tokenizer files), and its weights
// copied into a model straight on the target device. Files are read through ModelFiles
// (model-files.ts) as Blobs, so the same code loads from a folder (Node), the Hub or Blobs, in Node
// and in browsers; platform.ts (Node) or platform-browser.ts (the browser build) turns an id or
// folder into ModelFiles.
//
// Loading is checked first and copied after: every header is read and compared with the model
// (names, shapes, dtypes) before any value is written, so a checkpoint that does not fit leaves the
// model untouched. The values are then read in slices of at most CHUNK_BYTES (`blob.slice(a, b).arrayBuffer()`), each converted and
// written into its place in the parameter on the device and dropped before the next is read, so
// the host memory a load needs beyond the model is a few slices, whatever the size of the files.
// (`nn.safeOpen` checks each file; its `getTensor` is not used for the values, as it holds a whole
// tensor about three times over while decoding it, which a checkpoint of large tensors cannot afford.)
import type { DownloadProgress, HubOptions } from '@core/hub';
import { nn } from '@core/nn';
import { bindArguments, noGrad, Tensor, zeros, type DeviceLike, type DType } from '@core/tensor';
import { blobFiles, isModelFiles, missingFile, PretrainedError, readJson, type ModelFiles } from './model-files.js';
import { folderFiles, platformFiles } from './platform.js';

export { PretrainedError, type PretrainedErrorReason } from './model-files.js';

/** Where and how to get a pretrained model: the target device and dtype, and the Hub options passed through to `@core/hub`. */
export interface PretrainedOptions {
  /** The device the weights go to (default: the device the model was built on, usually the cpu). */
  device?: DeviceLike;
  /** The floating dtype of the floating parameters and buffers (default: the model's own); int buffers keep theirs. */
  dtype?: DType;
  /** A branch, tag or commit of the Hub repo (default `'main'`). */
  revision?: string;
  /** The Hub cache folder (default: Python's huggingface_hub cache, shared with it). */
  cacheDir?: string;
  /** A Hub access token, or `false` to send none (default: `HF_TOKEN` or the saved login). */
  token?: string | false;
  /** Use the Hub cache only, with no network access (Python's `local_files_only`). */
  offline?: boolean;
  /** The Hub's address (default `HF_ENDPOINT`, else https://huggingface.co). */
  endpoint?: string;
  /** Called as bytes of each downloaded file arrive. */
  onProgress?: (progress: DownloadProgress) => void;
}

/** Options of {@link loadPretrainedWeights}. */
export interface LoadWeightsOptions {
  /** The device the whole model ends on (default: where it is). */
  device?: DeviceLike;
  /** The floating dtype of the floating parameters and buffers (default: theirs); int buffers keep theirs, as with `model.to(dtype)`. */
  dtype?: DType;
  /** The model key of a file key; `undefined` skips that tensor of the file. Default: the same key. */
  renameKey?: (fileKey: string) => string | undefined;
  /**
   * Changes a tensor read from the file before it is copied into the model key (e.g. transposes a
   * Conv1D weight for a Linear). It is also called once, before anything is read, on a stand-in with
   * the file's shape (zeros expanded to that shape, so shape-only changes cost nothing) to check
   * the shape it gives against the model's. A key with a transform is read whole, not in slices.
   */
  transform?: (modelKey: string, tensor: Tensor) => Tensor;
  /**
   * Model keys that share storage with another model key (GPT-2's `{ 'lm_head.weight':
   * 'transformer.wte.weight' }`). Such a key may be absent from the files; when present, its
   * values must equal those of the key it is tied to.
   */
  tiedKeys?: Record<string, string>;
}

/** The files of a repo a model needs: configs, weights in safetensors, tokenizer. */
const PRETRAINED_FILES = [
  'config.json', 'generation_config.json', '*.safetensors', 'model.safetensors.index.json',
  'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json',
];
const HUB_KEYS = ['revision', 'cacheDir', 'token', 'offline', 'endpoint', 'onProgress'] as const;
const PRETRAINED_KEYS = ['device', 'dtype', ...HUB_KEYS] as const;
const LOAD_KEYS = ['device', 'dtype', 'renameKey', 'transform', 'tiedKeys'] as const;

/** A model given as a Hub repo id or a local folder (Node), as {@link ModelFiles}, or as Blobs by file name. */
export type PretrainedSource = string | ModelFiles | Readonly<Record<string, Blob>>;

/**
 * The files of a pretrained model: `source`'s own when it is ModelFiles or Blobs; for a string, a
 * local folder as it is (Node), else the Hub repo of that id — in Node its snapshot of the files
 * that match `patterns` (default: those a model needs), in a browser each file through hubFile.
 * `dir` is the folder (Node), the repo id (browser), or undefined for files given.
 * @internal (the Tokenizer uses it too)
 */
export async function pretrainedFiles(
  op: string, source: PretrainedSource, options: PretrainedOptions = {}, patterns: readonly string[] = PRETRAINED_FILES,
): Promise<{ dir: string | undefined; files: ModelFiles }> {
  const bound = bindArguments(op, [options], [], PRETRAINED_KEYS);
  if (typeof source === 'string') {
    const hub: HubOptions = {};
    for (const key of HUB_KEYS) if (bound[key] !== undefined) (hub as Record<string, unknown>)[key] = bound[key];
    return platformFiles(source, hub, patterns);
  }
  if (source === null || typeof source !== 'object') {
    throw new TypeError(`${op}(): expected a Hub repo id or a folder (a string), ModelFiles, or an object of file name → Blob, got ${source === null ? 'null' : typeof source}`);
  }
  return { dir: undefined, files: isModelFiles(source) ? source : blobFiles(source) };
}

/** What {@link resolvePretrained} gives: where the model's files are, and its configuration. */
export interface PretrainedFolder {
  /** The folder holding config.json, the weights and the tokenizer files (a Hub snapshot folder, or the local folder given); in a browser, the repo id. */
  dir: string;
  /** The model's files, to pass to {@link loadPretrainedWeights} (in a browser `dir` is no folder; these are its Hub files). */
  files: ModelFiles;
  /** The parsed config.json, with Hugging Face's keys. */
  config: Record<string, unknown>;
}

/**
 * The folder of a pretrained model and its parsed `config.json`. A local folder is used as it is;
 * anything else is a Hub repo id, downloaded (only config.json, generation_config.json,
 * *.safetensors, model.safetensors.index.json and the tokenizer files) into the Hub cache with
 * `@core/hub`'s `snapshotDownload`, which passes `revision`, `cacheDir`, `token`, `offline`,
 * `endpoint` and `onProgress` on. In a browser (the package's "browser" build) the id is always a
 * Hub repo, whose files `files` downloads through `hubFile` into the Cache API as they are read;
 * a local folder path is a {@link PretrainedError} with reason `'needs-node'`. A missing or
 * malformed config.json is a {@link PretrainedError}.
 */
export async function resolvePretrained(idOrDir: string, options: PretrainedOptions = {}): Promise<PretrainedFolder> {
  if (typeof idOrDir !== 'string') throw new TypeError(`resolvePretrained(): expected a Hub repo id or a folder (a string), got ${idOrDir === null ? 'null' : typeof idOrDir}`);
  const { dir, files } = await pretrainedFiles('resolvePretrained', idOrDir, options);
  return { dir: dir!, files, config: await readJson(files, 'config.json') };
}

// ---- weights ----

/** A tensor's entry in a safetensors header. */
interface Entry {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data_offsets: readonly [number, number];
}

/** One safetensors file of the checkpoint, its header read. */
interface Shard {
  /** The file's name in messages (its path, or its place on the Hub). */
  readonly path: string;
  readonly blob: Blob;
  readonly dataStart: number;
  readonly entries: Record<string, Entry>;
}

/** A tensor to read: where it is, and the model key it goes to. */
interface Planned {
  readonly shard: Shard;
  readonly fileKey: string;
  readonly modelKey: string;
}

const CHUNK_BYTES = 16 * 2 ** 20;
/** File dtypes @core/nn reads, by whether they are floating. */
const FLOAT_FILE_DTYPES = new Set(['F64', 'F32', 'F16', 'BF16']);
const OTHER_FILE_DTYPES = new Set(['I64', 'I32', 'I16', 'I8', 'U8', 'BOOL']);
const ITEMSIZE: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

const shapeText = (shape: readonly number[]) => `[${shape.join(', ')}]`;
const numelOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
const listed = (keys: readonly string[]) => (keys.length > 12 ? `${keys.slice(0, 12).join(', ')}, … (${keys.length} in all)` : keys.join(', '));

/** `length` bytes at `position` of the shard's Blob (only those are read, from disk for a file-backed Blob). */
async function readBytes(shard: Pick<Shard, 'path' | 'blob'>, position: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(await shard.blob.slice(position, position + length).arrayBuffer());
  if (bytes.length !== length) throw new PretrainedError(`${shard.path}: the file ended early (it changed while being read?)`, 'bad-file', shard.path);
  return bytes;
}

const INDEX = 'model.safetensors.index.json';

/**
 * The safetensors files of the checkpoint: `model.safetensors`, or the shards that
 * `model.safetensors.index.json` lists, and the index's `weight_map` (empty without an index).
 */
async function checkpointFiles(files: ModelFiles): Promise<{ names: string[]; weightMap: Record<string, string> }> {
  if (await files.has('model.safetensors')) return { names: ['model.safetensors'], weightMap: {} };
  const indexPath = files.where(INDEX);
  if (!(await files.has(INDEX))) throw missingFile(files, 'model.safetensors', ` and no ${INDEX}: no weights to load`);
  const map = (await readJson(files, INDEX)).weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map) || Object.values(map).some((f) => typeof f !== 'string')) {
    throw new PretrainedError(`${indexPath}: weight_map must be an object of tensor name → shard file name`, 'bad-file', indexPath);
  }
  const weightMap = map as Record<string, string>;
  const names = [...new Set(Object.values(weightMap))];
  for (const name of names) {
    if (name.startsWith('/') || name.split(/[\\/]/).includes('..')) {
      throw new PretrainedError(`${indexPath}: shard '${name}' is outside the checkpoint folder`, 'bad-file', indexPath);
    }
    if (!(await files.has(name))) {
      throw new PretrainedError(`${indexPath} lists shard '${name}', which is missing: ${files.where(name)} not found`, 'missing-file', files.where(name));
    }
  }
  return { names, weightMap };
}

/** A safetensors file, its header checked by `nn.safeOpen` (against the file's size, so reads stay inside it) and parsed. */
async function openShard(files: ModelFiles, name: string): Promise<Shard> {
  const path = files.where(name);
  const blob = await files.blob(name);
  try {
    await (await nn.safeOpen(blob)).close();
  } catch (error) {
    throw new PretrainedError(`${path}: ${(error as Error).message}`, 'bad-file', path);
  }
  const n = Number(new DataView((await readBytes({ path, blob }, 0, 8)).buffer).getBigUint64(0, true));
  const entries: Record<string, Entry> = Object.assign(Object.create(null), JSON.parse(new TextDecoder().decode(await readBytes({ path, blob }, 8, n))));
  delete entries.__metadata__;
  return { path, blob, dataStart: 8 + n, entries };
}

/** The checkpoint's files, their headers read; every key of the index must be in the shard it names. */
async function openShards(files: ModelFiles): Promise<Shard[]> {
  const { names, weightMap } = await checkpointFiles(files);
  const shards: Shard[] = [];
  for (const name of names) shards.push(await openShard(files, name));
  for (const [key, name] of Object.entries(weightMap)) {
    const shard = shards[names.indexOf(name)]!;
    if (!Object.hasOwn(shard.entries, key)) {
      throw new PretrainedError(`${files.where(INDEX)} puts '${key}' in ${shard.path}, which has no such tensor`, 'missing-keys', shard.path, [key]);
    }
  }
  return shards;
}

/** Elements `[start, start + count)` of a tensor of `shard`, as a 1-D cpu tensor of the file's dtype, decoded by `@core/nn`. */
async function readElements(shard: Shard, entry: Entry, start: number, count: number): Promise<Tensor> {
  // A one-tensor safetensors file in memory around the slice's bytes, so @core/nn decodes it (every dtype, byte order).
  const itemsize = ITEMSIZE[entry.dtype]!;
  const header = new TextEncoder().encode(JSON.stringify({ t: { dtype: entry.dtype, shape: [count], data_offsets: [0, count * itemsize] } }));
  const data = await readBytes(shard, shard.dataStart + entry.data_offsets[0] + start * itemsize, count * itemsize);
  const bytes = new Uint8Array(8 + header.length + data.length);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 8);
  bytes.set(data, 8 + header.length);
  return nn.deserializeSafetensors(bytes, { source: shard.path }).t!;
}

/** The file tensor's elements in slices of at most CHUNK_BYTES, as [first element, 1-D cpu tensor]; each is disposed when the next is asked for. */
async function* slices(item: Planned, entry: Entry): AsyncGenerator<[number, Tensor]> {
  const numel = numelOf(entry.shape);
  const step = Math.max(1, Math.floor(CHUNK_BYTES / ITEMSIZE[entry.dtype]!));
  for (let start = 0; start < numel; start += step) {
    const slice = await readElements(item.shard, entry, start, Math.min(step, numel - start));
    try {
      yield [start, slice];
    } finally {
      slice.dispose();
    }
  }
}

/** Copies the file's tensor into `own` (in place, any device and dtype), slice by slice. */
async function copyInto(item: Planned, entry: Entry, own: Tensor, transform: LoadWeightsOptions['transform']): Promise<void> {
  if (transform !== undefined || !own.isContiguous()) {
    const whole = (await readElements(item.shard, entry, 0, numelOf(entry.shape))).reshape([...entry.shape]);
    const value = transform ? transform(item.modelKey, whole) : whole;
    noGrad(() => own.copy_(value));
    whole.dispose();
    value.dispose();
    return;
  }
  const flat = own.view([own.numel()]);
  for await (const [start, slice] of slices(item, entry)) noGrad(() => flat.narrow(0, start, slice.numel()).copy_(slice));
}

/** Whether the file's tensor equals `own` (once converted to its dtype), slice by slice. */
async function equalsLoaded(item: Planned, entry: Entry, own: Tensor): Promise<boolean> {
  const flat = own.reshape([own.numel()]);
  for await (const [start, slice] of slices(item, entry)) {
    const converted = slice.to({ device: own.device, dtype: own.dtype });
    const same = converted.eq(flat.narrow(0, start, slice.numel())).all();
    const equal = Boolean(await same.item());
    same.dispose();
    converted.dispose();
    if (!equal) return false;
  }
  return true;
}

/**
 * Loads a checkpoint's safetensors weights into `model`: `model.safetensors`, or the shards of
 * `model.safetensors.index.json` (its `weight_map` gives each key's shard file), from a local
 * folder (Node) or from {@link ModelFiles} (`hubFiles(repoId)`, `blobFiles({...})`, the `files`
 * of {@link resolvePretrained}; in a browser a folder is a {@link PretrainedError} 'needs-node').
 *
 * Every header is checked against `model.stateDict()` first (keys after `renameKey`, shapes after
 * `transform`, float vs int dtypes): a missing key, an unexpected key, a shape or dtype that does not
 * fit, a shard the index lists but the folder lacks, is a {@link PretrainedError} naming the keys
 * and files, and the model is left unchanged. Then the model moves to `device`/`dtype` (as
 * `model.to()` does: same tensor objects, parameters stay leaves that require grad, int buffers
 * keep their dtype), and each tensor is read from its file in slices that are converted to the
 * parameter's dtype (rounding to nearest even, as PyTorch) and written straight into it on its
 * device (each slice read as `blob.slice(a, b).arrayBuffer()`). Host memory beyond the model is a
 * few 16 MiB slices, whatever the size of the checkpoint.
 */
export async function loadPretrainedWeights(model: nn.AnyModule, dirOrFiles: string | ModelFiles, options: LoadWeightsOptions = {}): Promise<void> {
  if (!(model instanceof nn.Module)) throw new TypeError(`loadPretrainedWeights(): expected an nn.Module, got ${model === null ? 'null' : typeof model}`);
  const bound = bindArguments('loadPretrainedWeights', [options], [], LOAD_KEYS);
  const { device, dtype, renameKey, transform } = bound as LoadWeightsOptions;
  const tiedKeys = (bound.tiedKeys ?? {}) as Record<string, string>;
  if (dtype !== undefined && !dtype.isFloatingPoint) {
    throw new TypeError(`loadPretrainedWeights(): dtype must be a floating dtype (int buffers keep theirs), got ${dtype.name}`);
  }
  const target = model.stateDict({ keepVars: true });
  for (const [key, tiedTo] of Object.entries(tiedKeys)) {
    if (!Object.hasOwn(target, tiedTo)) throw new TypeError(`loadPretrainedWeights(): tiedKeys ties '${key}' to '${tiedTo}', which the model does not have`);
  }
  if (typeof dirOrFiles !== 'string' && !isModelFiles(dirOrFiles)) {
    throw new TypeError(`loadPretrainedWeights(): expected a folder (a string) or ModelFiles, got ${dirOrFiles === null ? 'null' : typeof dirOrFiles}`);
  }
  const shards = await openShards(typeof dirOrFiles === 'string' ? folderFiles(dirOrFiles) : dirOrFiles);
  const files = shards.map((s) => s.path).join(', ');
  const plan = planLoad(shards, target, tiedKeys, renameKey, files);
  checkShapes(plan, target, transform);
  if (device !== undefined || dtype !== undefined) model.to({ ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) });
  const [tied, loaded] = [plan.filter((p) => Object.hasOwn(tiedKeys, p.modelKey)), plan.filter((p) => !Object.hasOwn(tiedKeys, p.modelKey))];
  for (const item of loaded) await copyInto(item, item.shard.entries[item.fileKey]!, target[item.modelKey]!, transform);
  for (const item of tied) {
    if (!(await equalsLoaded(item, item.shard.entries[item.fileKey]!, target[tiedKeys[item.modelKey]!]!))) {
      throw new PretrainedError(
        `'${item.fileKey}' in ${item.shard.path} differs from '${tiedKeys[item.modelKey]}', which the model ties '${item.modelKey}' to: the checkpoint's weights are not tied`,
        'tied-mismatch', item.shard.path, [item.modelKey],
      );
    }
  }
}

/** Which file tensor goes to which model key; unexpected, duplicate and missing keys are errors. */
function planLoad(
  shards: readonly Shard[], target: Record<string, Tensor>, tiedKeys: Record<string, string>,
  renameKey: LoadWeightsOptions['renameKey'], files: string,
): Planned[] {
  const plan: Planned[] = [];
  const unexpected: string[] = [];
  const unexpectedWhere: string[] = [];
  const seen = new Map<string, Planned>();
  for (const shard of shards) {
    for (const fileKey of Object.keys(shard.entries)) {
      const modelKey = renameKey ? renameKey(fileKey) : fileKey;
      if (modelKey === undefined) continue;
      if (!Object.hasOwn(target, modelKey)) {
        unexpected.push(modelKey);
        unexpectedWhere.push(modelKey === fileKey ? `${fileKey} (in ${shard.path})` : `${modelKey} (from '${fileKey}' in ${shard.path})`);
        continue;
      }
      const earlier = seen.get(modelKey);
      if (earlier !== undefined) {
        throw new PretrainedError(
          `'${earlier.fileKey}' in ${earlier.shard.path} and '${fileKey}' in ${shard.path} both load into model key '${modelKey}'`,
          'unexpected-keys', shard.path, [modelKey],
        );
      }
      const item = { shard, fileKey, modelKey };
      seen.set(modelKey, item);
      plan.push(item);
    }
  }
  if (unexpected.length > 0) {
    throw new PretrainedError(`Unexpected key(s) in the checkpoint, which the model does not have: ${listed(unexpectedWhere)}`, 'unexpected-keys', files, unexpected);
  }
  const missing = Object.keys(target).filter((k) => !seen.has(k) && !Object.hasOwn(tiedKeys, k));
  if (missing.length > 0) {
    throw new PretrainedError(`Missing key(s) in the checkpoint: ${listed(missing)} (read: ${files})`, 'missing-keys', files, missing);
  }
  return plan;
}

/** Each file tensor's shape (after `transform`) and kind of dtype against its model tensor's. */
function checkShapes(plan: readonly Planned[], target: Record<string, Tensor>, transform: LoadWeightsOptions['transform']): void {
  const mismatches: string[] = [];
  const keys: string[] = [];
  for (const item of plan) {
    const entry = item.shard.entries[item.fileKey]!;
    const own = target[item.modelKey]!;
    const where = `'${item.modelKey}'${item.fileKey === item.modelKey ? '' : ` (file key '${item.fileKey}')`} in ${item.shard.path}`;
    const readable = own.dtype.isFloatingPoint ? FLOAT_FILE_DTYPES : OTHER_FILE_DTYPES;
    if (!readable.has(entry.dtype)) {
      throw new PretrainedError(
        `${where} is ${entry.dtype}, which cannot be loaded into the model's ${own.dtype.name} tensor (it takes ${[...readable].join(', ')})`,
        'dtype-mismatch', item.shard.path, [item.modelKey],
      );
    }
    let shape = entry.shape;
    if (transform !== undefined) {
      const standIn = zeros([]).expand([...entry.shape]);
      shape = noGrad(() => transform(item.modelKey, standIn)).shape;
    }
    if (shape.length !== own.shape.length || shape.some((s, i) => s !== own.shape[i])) {
      const found = shape === entry.shape ? shapeText(shape) : `${shapeText(shape)} (after transform; ${shapeText(entry.shape)} in the file)`;
      mismatches.push(`${where}: the model expects shape ${shapeText(own.shape)}, the checkpoint has ${found}`);
      keys.push(item.modelKey);
    }
  }
  if (mismatches.length > 0) {
    throw new PretrainedError(`Size mismatch:\n\t${mismatches.join('\n\t')}`, 'shape-mismatch', [...new Set(plan.filter((p) => keys.includes(p.modelKey)).map((p) => p.shard.path))].join(', '), keys);
  }
}
