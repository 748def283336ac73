// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON `{ name: { dtype, shape, data_offsets: [begin, end] },
// "__metadata__": { string: string } }` padded with spaces to a multiple of 8, then the raw
// little-endian data, with offsets relative to the data section, covering it with no holes.
// `serializeSafetensors`/`deserializeSafetensors` work on bytes (browsers too);
// `safeOpen`/`loadSafetensors` read a Blob lazily (browsers too) or a path (Node's fs);
// `saveSafetensors` writes a path.
import {
  bfloat16, bfloat16BitsToNumber, bool, float16, float16BitsToNumber, float32, float32ToBFloat16Bits, float32ToFloat16Bits,
  float64, int32, tensor, Tensor, TensorError, type DeviceLike, type DType,
} from '@core/tensor';
import type { FileHandle } from 'node:fs/promises';

/** Something wrong with a safetensors file or with what was asked to be written. */
export class SafetensorsError extends TensorError {}

/** Bytes per element of every dtype the format defines. */
const ITEMSIZE = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, I16: 2, U16: 2, F16: 2, BF16: 2, I32: 4, U32: 4, F32: 4, F64: 8, I64: 8, U64: 8,
} as const;
type FileDType = keyof typeof ITEMSIZE;

/** What a file dtype becomes here; 8-, 16- and 64-bit integers are read into int32 (range-checked). */
const READ_AS: Partial<Record<FileDType, DType>> = {
  F64: float64, F32: float32, F16: float16, BF16: bfloat16, I32: int32, BOOL: bool, I64: int32, I16: int32, I8: int32, U8: int32,
};

const WRITE_AS: Record<DType['name'], FileDType> = {
  float64: 'F64', float32: 'F32', float16: 'F16', bfloat16: 'BF16', int32: 'I32', bool: 'BOOL',
};

/** One tensor's entry in the header. */
export interface SafetensorsEntry {
  /** The file's dtype code, e.g. 'F32', 'BF16'. */
  readonly dtype: string;
  /** The tensor's shape. */
  readonly shape: readonly number[];
  /** Begin and end of its bytes in the data section. */
  readonly dataOffsets: readonly [number, number];
}

/** A parsed safetensors header: each tensor's entry, the metadata, and where the data start. */
export interface SafetensorsHeader {
  /** Entries by tensor name, in file order. */
  readonly tensors: Record<string, SafetensorsEntry>;
  /** The `__metadata__` strings ({} when absent). */
  readonly metadata: Record<string, string>;
  /** Where the data section starts in the file (8 + N). */
  readonly dataStart: number;
}

const MAX_HEADER = 100_000_000; // the reference implementation's limit
const littleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Host bytes of a typed array as little-endian bytes (a copy on big-endian hosts). */
function littleEndian(bytes: Uint8Array, itemsize: number): Uint8Array {
  if (littleEndianHost || itemsize === 1) return bytes;
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += itemsize) for (let k = 0; k < itemsize; k++) out[i + k] = bytes[i + itemsize - 1 - k]!;
  return out;
}

// ---- writing ----

type Values = Float32Array | Float64Array | Int32Array | Uint8Array;

/** A tensor's values in the file's byte layout. `values` are as `dataSync()`/`data()` give them. */
function encodeValues(t: Tensor, values: Values): Uint8Array {
  let typed: ArrayBufferView;
  if (t.dtype === float16 || t.dtype === bfloat16) {
    // data() decodes half types to float32 exactly; re-encoding restores the same bits.
    const encode = t.dtype === float16 ? float32ToFloat16Bits : float32ToBFloat16Bits;
    const bits = new Uint16Array(values.length);
    for (let i = 0; i < values.length; i++) bits[i] = encode(values[i]!);
    typed = bits;
  } else if (t.dtype === bool) {
    typed = Uint8Array.from(values, (v) => (v ? 1 : 0));
  } else {
    typed = values;
  }
  const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  return littleEndian(bytes, t.dtype.itemsize);
}

function checkInputs(stateDict: Record<string, Tensor>, metadata: Record<string, string> | undefined): Array<[string, Tensor]> {
  if (stateDict === null || typeof stateDict !== 'object') throw new TypeError('serializeSafetensors(): expected a Record<string, Tensor>');
  const entries = Object.entries(stateDict);
  for (const [name, t] of entries) {
    if (!(t instanceof Tensor)) throw new TypeError(`serializeSafetensors(): the value of '${name}' is not a Tensor (${t === null ? 'null' : typeof t})`);
    if (name === '__metadata__') throw new SafetensorsError("serializeSafetensors(): '__metadata__' is reserved and cannot name a tensor");
  }
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (typeof v !== 'string') throw new TypeError(`serializeSafetensors(): metadata values must be strings, but '${k}' is ${typeof v}`);
  }
  // Like the reference writer: larger dtypes first, then by name, so every tensor's data is
  // aligned to its item size in the file.
  return entries.sort(([a, ta], [b, tb]) => tb.dtype.itemsize - ta.dtype.itemsize || (a < b ? -1 : a > b ? 1 : 0));
}

function assemble(entries: Array<[string, Tensor]>, datas: Uint8Array[], metadata: Record<string, string> | undefined): Uint8Array<ArrayBuffer> {
  const header: Record<string, unknown> = Object.create(null); // a tensor may be called '__proto__'
  if (metadata && Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  entries.forEach(([name, t], i) => {
    const end = offset + datas[i]!.length;
    header[name] = { dtype: WRITE_AS[t.dtype.name], shape: [...t.shape], data_offsets: [offset, end] };
    offset = end;
  });
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerLength % 2 ** 32, true);
  view.setUint32(4, Math.floor(headerLength / 2 ** 32), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength); // space padding
  let at = 8 + headerLength;
  for (const d of datas) {
    out.set(d, at);
    at += d.length;
  }
  return out;
}

/** The bytes of a safetensors file holding `stateDict` (CPU tensors, or any synchronously readable device). */
export function serializeSafetensors(stateDict: Record<string, Tensor>, metadata?: Record<string, string>): Uint8Array<ArrayBuffer> {
  const entries = checkInputs(stateDict, metadata);
  const datas = entries.map(([name, t]) => {
    if (t.device.type !== 'cpu') {
      throw new SafetensorsError(`serializeSafetensors(): '${name}' is on ${t.device}; use serializeSafetensorsAsync() (or move it to the cpu first)`);
    }
    return encodeValues(t, t.dataSync());
  });
  return assemble(entries, datas, metadata);
}

/** `serializeSafetensors` for tensors on any device (reads them asynchronously). */
export async function serializeSafetensorsAsync(stateDict: Record<string, Tensor>, metadata?: Record<string, string>): Promise<Uint8Array<ArrayBuffer>> {
  const entries = checkInputs(stateDict, metadata);
  const datas: Uint8Array[] = [];
  for (const [, t] of entries) datas.push(encodeValues(t, await t.data()));
  return assemble(entries, datas, metadata);
}

// ---- reading ----

/**
 * The most entries (tensors, and `__metadata__`) a header may list. Each costs time to check and a
 * tensor to create even when it holds no data, so without a bound a small file of empty tensors
 * could keep a reader busy for minutes; the largest single-file checkpoints list tens of thousands.
 */
const MAX_ENTRIES = 100_000;

function fail(source: string, message: string): never {
  throw new SafetensorsError(`${source}: ${message}`);
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** A short rendering of a header value for messages (a header may hold huge or deeply nested values). */
function preview(value: unknown): string {
  if (Array.isArray(value)) {
    const items = value.slice(0, 8).map((v) => (v !== null && typeof v === 'object' ? (Array.isArray(v) ? '[…]' : '{…}') : preview(v)));
    return `[${items.join(', ')}${value.length > 8 ? `, … (${value.length} items)` : ''}]`;
  }
  if (value !== null && typeof value === 'object') return '{…}';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** The header length that the first 8 bytes give, checked against the format's limit and the file's size. */
function headerLength(prefix: Uint8Array, fileLength: number, source: string): number {
  if (fileLength < 8 || prefix.length < 8) fail(source, `file too short (${fileLength} bytes): a safetensors file starts with an 8-byte header length`);
  const view = new DataView(prefix.buffer, prefix.byteOffset, 8);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > MAX_HEADER) fail(source, `header length ${n} exceeds the format's limit of ${MAX_HEADER} bytes (is this a safetensors file?)`);
  if (8 + n > fileLength) fail(source, `header length ${n} runs past the end of the file (${fileLength} bytes): the file is truncated or not safetensors`);
  return n;
}

/**
 * The keys of the top-level JSON object `text`, as written (quoted, escapes undecoded), in order,
 * and how many there are; only the first MAX_ENTRIES + 1 are kept. Exact for valid
 * JSON, and it ends on any text, so it runs before JSON.parse to bound the work a header can ask for.
 * (JSON.parse keeps only the last of duplicate keys, and the format allows each name once.)
 */
function topLevelKeys(text: string): { raw: string[]; count: number } {
  const raw: string[] = [];
  let count = 0;
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey && count++ <= MAX_ENTRIES) raw.push(text.slice(i, j + 1));
      expectKey = false;
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = c === '{' && depth === 1;
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return { raw, count };
}

/** Parse and validate the header of a safetensors file (without reading the data). */
export function parseSafetensorsHeader(bytes: Uint8Array, source = 'safetensors'): SafetensorsHeader {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('parseSafetensorsHeader(): expected a Uint8Array');
  const n = headerLength(bytes, bytes.length, source);
  return parseHeaderJson(bytes.subarray(8, 8 + n), bytes.length - 8 - n, source);
}

/** The header's JSON (`n` bytes after the length), validated against a data section of `dataLength` bytes. */
function parseHeaderJson(headerBytes: Uint8Array, dataLength: number, source: string): SafetensorsHeader {
  const n = headerBytes.length;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    fail(source, 'the header is not valid UTF-8');
  }
  if (!text.startsWith('{')) fail(source, `the header must be a JSON object starting with '{', got ${preview(text.slice(0, 20))}`);
  const keys = topLevelKeys(text);
  if (keys.count > MAX_ENTRIES) {
    fail(source, `the header lists ${keys.count} entries, more than the limit of ${MAX_ENTRIES} (split the tensors over several files, as sharded checkpoints do)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    fail(source, `the header is not valid JSON: ${(e as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) fail(source, 'the header must be a JSON object');
  if (Object.keys(json).length !== keys.count) {
    // Fewer keys than written: a name appears twice (or spelled two ways, "a" and "\u0061").
    const seen = new Set<string>();
    for (const key of keys.raw.map((k) => JSON.parse(k) as string)) {
      if (seen.has(key)) fail(source, `the header names '${key}' twice (a name may appear once)`);
      seen.add(key);
    }
  }
  // Null-prototype records: a tensor may be called '__proto__' or 'constructor'.
  const tensors: Record<string, SafetensorsEntry> = Object.create(null);
  let metadata: Record<string, string> = Object.create(null);
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || Object.values(raw).some((v) => typeof v !== 'string')) {
        fail(source, '__metadata__ must be an object of string values');
      }
      metadata = Object.assign(Object.create(null), raw as Record<string, string>);
      continue;
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(source, `tensor '${name}': expected { dtype, shape, data_offsets }, got ${preview(raw)}`);
    const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
    if (typeof dtype !== 'string' || !Object.hasOwn(ITEMSIZE, dtype)) {
      fail(source, `tensor '${name}': unknown dtype ${preview(dtype)} (the format defines ${Object.keys(ITEMSIZE).join(', ')})`);
    }
    if (!Array.isArray(shape) || !shape.every(isNonNegativeInt)) fail(source, `tensor '${name}': shape must be an array of non-negative integers, got ${preview(shape)}`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeInt) || offsets[0] > offsets[1]) {
      fail(source, `tensor '${name}': data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got ${preview(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    const needed = (shape as number[]).reduce((a, b) => a * b, 1) * ITEMSIZE[dtype as FileDType];
    if (end - begin !== needed) {
      fail(source, `tensor '${name}': data_offsets [${begin}, ${end}] span ${end - begin} bytes, but dtype ${dtype} with shape ${preview(shape)} needs ${needed}`);
    }
    if (end > dataLength) fail(source, `tensor '${name}': data_offsets [${begin}, ${end}] are out of range: the data section has ${dataLength} bytes`);
    tensors[name] = { dtype, shape: shape as number[], dataOffsets: [begin, end] };
  }
  // The data section must be covered exactly: no overlaps, no holes (the spec forbids both).
  const spans = Object.entries(tensors).sort(([, a], [, b]) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1]);
  let covered = 0;
  let previous = '';
  for (const [name, { dataOffsets: [begin, end] }] of spans) {
    if (begin < covered) fail(source, `tensors '${previous}' and '${name}' overlap (data_offsets of '${name}' begin at ${begin}, before ${covered})`);
    if (begin > covered) fail(source, `bytes ${covered}..${begin} of the data section belong to no tensor (a hole before '${name}')`);
    covered = end;
    previous = name;
  }
  if (covered !== dataLength) fail(source, `the data section has ${dataLength} bytes but the tensors cover only ${covered}`);
  return { tensors, metadata, dataStart: 8 + n };
}

/**
 * A tensor from its entry and its `raw` bytes. `owned`: `raw` is a fresh array of its own, which
 * the tensor may take; otherwise (a view into the caller's bytes) it is copied first, to offset 0,
 * so typed views are aligned and never into Node's Buffer pool.
 */
function decodeTensor(name: string, entry: SafetensorsEntry, raw: Uint8Array, owned: boolean, device: DeviceLike, source: string): Tensor {
  const fileDType = entry.dtype as FileDType;
  const dtype = READ_AS[fileDType];
  if (!dtype) fail(source, `tensor '${name}': dtype ${fileDType} is valid safetensors but @core/tensor has no such type (readable: ${Object.keys(READ_AS).join(', ')})`);
  const itemsize = ITEMSIZE[fileDType];
  const bytes = littleEndian(owned && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw), itemsize);
  const buffer = bytes.buffer;
  let values: Float32Array | Float64Array | Int32Array | Uint8Array;
  switch (fileDType) {
    case 'F64': values = new Float64Array(buffer); break;
    case 'F32': values = new Float32Array(buffer); break;
    case 'F16': values = Float32Array.from(new Uint16Array(buffer), float16BitsToNumber); break;
    case 'BF16': values = Float32Array.from(new Uint16Array(buffer), bfloat16BitsToNumber); break;
    case 'I32': values = new Int32Array(buffer); break;
    case 'I16': values = Int32Array.from(new Int16Array(buffer)); break;
    case 'I8': values = Int32Array.from(new Int8Array(buffer)); break;
    case 'U8': values = Int32Array.from(bytes); break;
    case 'BOOL': values = bytes; break;
    case 'I64': {
      const wide = new BigInt64Array(buffer);
      values = new Int32Array(wide.length);
      for (let i = 0; i < wide.length; i++) {
        const v = wide[i]!;
        if (v < -(2n ** 31n) || v >= 2n ** 31n) fail(source, `tensor '${name}' (I64) holds ${v} at flat index ${i}, which does not fit in int32`);
        values[i] = Number(v);
      }
      break;
    }
    default: fail(source, `tensor '${name}': cannot read dtype ${fileDType}`);
  }
  return tensor(values, { dtype, device }).reshape([...entry.shape]);
}

/** Options of `safeOpen`, `loadSafetensors` and `deserializeSafetensors`. */
export interface LoadSafetensorsOptions {
  /** Where to put the tensors (default: the cpu). */
  readonly device?: DeviceLike;
}

/**
 * The tensors of a safetensors file, by name, in file order. `bytes` may be any Uint8Array (a
 * Node Buffer, a view at any offset into a larger buffer) or an ArrayBuffer; they are not kept.
 */
export function deserializeSafetensors(bytes: Uint8Array | ArrayBuffer, options: LoadSafetensorsOptions & { source?: string } = {}): Record<string, Tensor> {
  const data = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
  const source = options.source ?? 'safetensors';
  const header = parseSafetensorsHeader(data, source);
  const out: Record<string, Tensor> = Object.create(null);
  for (const [name, entry] of Object.entries(header.tensors)) {
    const [begin, end] = entry.dataOffsets;
    out[name] = decodeTensor(name, entry, data.subarray(header.dataStart + begin, header.dataStart + end), false, options.device ?? 'cpu', source);
  }
  return out;
}

// Node's file API, imported at run time through a specifier that bundlers do not follow, so that a
// browser bundle of @core/nn builds (esbuild and webpack fail on a literal 'node:fs/promises').
const NODE_FS = 'node:fs/promises';
function nodeFs(): Promise<typeof import('node:fs/promises')> {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
}

/** Write `stateDict` (tensors on any device) to `path` as safetensors, with optional string metadata. Node only. */
export async function saveSafetensors(path: string, stateDict: Record<string, Tensor>, metadata?: Record<string, string>): Promise<void> {
  const bytes = await serializeSafetensorsAsync(stateDict, metadata);
  const { writeFile } = await nodeFs();
  await writeFile(path, bytes);
}

/** `length` bytes at `position` of an open file, in a new array of their own. */
async function readAt(file: FileHandle, path: string, position: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(bytes, done, length - done, position + done);
    if (bytesRead === 0) fail(path, `the file ended at byte ${position + done} while reading ${length} bytes at ${position} (it changed while being read?)`);
    done += bytesRead;
  }
  return bytes;
}

/** Where an opened file's bytes come from: its size, reads at a position, and the end of its use. */
interface ByteSource {
  readonly size: number;
  /** `length` bytes at `position`, in a new array of their own. */
  read(position: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** A file opened with Node's fs: a regular file, read with positioned reads. */
async function fileSource(path: string): Promise<ByteSource> {
  const { open } = await nodeFs();
  const file = await open(path, 'r');
  try {
    const info = await file.stat();
    if (!info.isFile()) fail(path, 'not a regular file (a safetensors file has a size to check its header against)');
    return { size: info.size, read: (position, length) => readAt(file, path, position, length), close: () => file.close() };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** A Blob read by slices: `blob.slice(begin, end).arrayBuffer()` reads just those bytes (a File or a disk-backed Blob reads them from disk). */
function blobSource(blob: Blob, name: string): ByteSource {
  return {
    size: blob.size,
    read: async (position, length) => {
      const bytes = new Uint8Array(await blob.slice(position, position + length).arrayBuffer());
      if (bytes.length !== length) fail(name, `the Blob gave ${bytes.length} bytes at ${position} where ${length} were asked for (it changed while being read?)`);
      return bytes;
    },
    close: async () => undefined,
  };
}

/**
 * A safetensors file opened by `safeOpen`: its header is read and checked, and each tensor is read
 * from the file (or Blob) when asked for. Close it (`close()`, or `await using f = await nn.safeOpen(path)`).
 */
export interface SafetensorsFile {
  /** The path it was opened from, or for a Blob its name (a File's `name`, else `'Blob'`); error messages name it. */
  readonly path: string;
  /** The tensor names, in file order. */
  keys(): string[];
  /** The `__metadata__` strings ({} when the file has none). */
  metadata(): Record<string, string>;
  /**
   * Read one tensor (on the device given to `safeOpen`): only its bytes are read from the file.
   * Rejects with a SafetensorsError for a name the file lacks, or once the file is closed.
   */
  getTensor(name: string): Promise<Tensor>;
  /** Close the file once the reads in progress have finished; later `getTensor` calls reject. A second call does nothing more. */
  close(): Promise<void>;
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

class OpenSafetensorsFile implements SafetensorsFile {
  private closing: Promise<void> | undefined;
  private readonly reading = new Set<Promise<Uint8Array>>();

  constructor(
    readonly path: string,
    private readonly source: ByteSource,
    private readonly header: SafetensorsHeader,
    private readonly device: DeviceLike,
  ) {}

  keys(): string[] {
    return Object.keys(this.header.tensors);
  }

  metadata(): Record<string, string> {
    return Object.assign(Object.create(null), this.header.metadata);
  }

  async getTensor(name: string): Promise<Tensor> {
    if (typeof name !== 'string') throw new TypeError(`getTensor(): expected a tensor name (a string), got ${typeof name}`);
    if (this.closing) fail(this.path, `getTensor('${name}'): the file is closed`);
    if (!Object.hasOwn(this.header.tensors, name)) fail(this.path, `no tensor named '${name}' (keys() lists the file's ${this.keys().length} tensors)`);
    const entry = this.header.tensors[name]!;
    const [begin, end] = entry.dataOffsets;
    const read = this.source.read(this.header.dataStart + begin, end - begin);
    this.reading.add(read);
    try {
      return decodeTensor(name, entry, await read, true, this.device, this.path);
    } finally {
      this.reading.delete(read);
    }
  }

  close(): Promise<void> {
    this.closing ??= Promise.allSettled(this.reading).then(() => this.source.close());
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Open a safetensors file for reading tensors one at a time, like Python's `safetensors.safe_open`
 * (the device is an option here; there is no `framework` argument). The file is a path (Node) or a
 * `Blob` (browsers and Node: a `File` from an `<input>`, `@core/hub`'s `hubFile`, a `fetch`
 * response's `blob()`). The header is read and checked at once: a path that is not a regular file
 * (a device, a pipe), a truncated file or a header that does not describe the data is refused
 * before any tensor is read. `getTensor` then reads just that tensor's bytes (for a Blob,
 * `blob.slice(begin, end).arrayBuffer()`), so reading one costs about its own size in memory,
 * whatever the size of the file (files over 2 GiB work).
 *
 * ```ts
 * await using f = await nn.safeOpen('model.safetensors'); // or nn.safeOpen(await hubFile(repo, 'model.safetensors'))
 * f.keys(); f.metadata();
 * const embedding = await f.getTensor('embed.weight');
 * ```
 */
export async function safeOpen(file: string | Blob, options: LoadSafetensorsOptions = {}): Promise<SafetensorsFile> {
  let name: string;
  let source: ByteSource;
  if (typeof file === 'string') {
    name = file;
    source = await fileSource(file);
  } else if (typeof Blob !== 'undefined' && file instanceof Blob) {
    const fileName = (file as { name?: unknown }).name;
    name = typeof fileName === 'string' && fileName !== '' ? fileName : 'Blob';
    source = blobSource(file, name);
  } else {
    throw new TypeError(`safeOpen(): expected a path (a string) or a Blob, got ${file === null ? 'null' : typeof file}`);
  }
  try {
    const n = headerLength(await source.read(0, Math.min(8, source.size)), source.size, name);
    const header = parseHeaderJson(await source.read(8, n), source.size - 8 - n, name);
    return new OpenSafetensorsFile(name, source, header, options.device ?? 'cpu');
  } catch (error) {
    await source.close();
    throw error;
  }
}

/**
 * Read a safetensors file (a path in Node, or a Blob anywhere) into tensors (on the cpu unless
 * `device` is given). Through `safeOpen`: the header is checked first, then each tensor's bytes are read.
 */
export async function loadSafetensors(path: string | Blob, options: LoadSafetensorsOptions = {}): Promise<Record<string, Tensor>> {
  const file = await safeOpen(path, options);
  try {
    const out: Record<string, Tensor> = Object.create(null);
    for (const name of file.keys()) out[name] = await file.getTensor(name);
    return out;
  } finally {
    await file.close();
  }
}
