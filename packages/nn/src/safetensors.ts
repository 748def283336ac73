// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON `{ name: { dtype, shape, data_offsets: [begin, end] },
// "__metadata__": { string: string } }` padded with spaces to a multiple of 8, then the raw
// little-endian data, with offsets relative to the data section, covering it with no holes.
// `serializeSafetensors`/`deserializeSafetensors` work on bytes (browsers too);
// `saveSafetensors`/`loadSafetensors` add Node's fs.
import {
  bfloat16, bfloat16BitsToNumber, bool, float16, float16BitsToNumber, float32, float32ToBFloat16Bits, float32ToFloat16Bits,
  float64, int32, tensor, Tensor, TensorError, type DeviceLike, type DType,
} from '@core/tensor';

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

function assemble(entries: Array<[string, Tensor]>, datas: Uint8Array[], metadata: Record<string, string> | undefined): Uint8Array {
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
export function serializeSafetensors(stateDict: Record<string, Tensor>, metadata?: Record<string, string>): Uint8Array {
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
export async function serializeSafetensorsAsync(stateDict: Record<string, Tensor>, metadata?: Record<string, string>): Promise<Uint8Array> {
  const entries = checkInputs(stateDict, metadata);
  const datas: Uint8Array[] = [];
  for (const [, t] of entries) datas.push(encodeValues(t, await t.data()));
  return assemble(entries, datas, metadata);
}

// ---- reading ----

function fail(source: string, message: string): never {
  throw new SafetensorsError(`${source}: ${message}`);
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
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
 * The keys of the top-level JSON object `text` (already known to parse), in order: JSON.parse keeps
 * only the last of duplicate keys, and the format allows each name once.
 */
function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(text.slice(i, j + 1)) as string);
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
  return keys;
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
  if (!text.startsWith('{')) fail(source, `the header must be a JSON object starting with '{', got ${JSON.stringify(text.slice(0, 20))}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    fail(source, `the header is not valid JSON: ${(e as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) fail(source, 'the header must be a JSON object');
  const seen = new Set<string>();
  for (const key of topLevelKeys(text)) {
    if (seen.has(key)) fail(source, `the header names '${key}' twice (a name may appear once)`);
    seen.add(key);
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
    if (raw === null || typeof raw !== 'object') fail(source, `tensor '${name}': expected { dtype, shape, data_offsets }, got ${JSON.stringify(raw)}`);
    const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
    if (typeof dtype !== 'string' || !(dtype in ITEMSIZE)) {
      fail(source, `tensor '${name}': unknown dtype ${JSON.stringify(dtype)} (the format defines ${Object.keys(ITEMSIZE).join(', ')})`);
    }
    if (!Array.isArray(shape) || !shape.every(isNonNegativeInt)) fail(source, `tensor '${name}': shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeInt) || offsets[0] > offsets[1]) {
      fail(source, `tensor '${name}': data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got ${JSON.stringify(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    const needed = (shape as number[]).reduce((a, b) => a * b, 1) * ITEMSIZE[dtype as FileDType];
    if (end - begin !== needed) {
      fail(source, `tensor '${name}': data_offsets [${begin}, ${end}] span ${end - begin} bytes, but dtype ${dtype} with shape [${shape.join(', ')}] needs ${needed}`);
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

function decodeTensor(name: string, entry: SafetensorsEntry, raw: Uint8Array, device: DeviceLike | undefined, source: string): Tensor {
  const fileDType = entry.dtype as FileDType;
  const dtype = READ_AS[fileDType];
  if (!dtype) fail(source, `tensor '${name}': dtype ${fileDType} is valid safetensors but @core/tensor has no such type (readable: ${Object.keys(READ_AS).join(', ')})`);
  const itemsize = ITEMSIZE[fileDType];
  // A copy at offset 0, so typed views are aligned (and never Node's Buffer.slice, a view into its pool).
  const bytes = littleEndian(new Uint8Array(raw), itemsize);
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
  const flat = tensor(values, { dtype, ...(device !== undefined ? { device } : {}) });
  return flat.reshape([...entry.shape]);
}

/** Options of `loadSafetensors` and `deserializeSafetensors`. */
export interface LoadSafetensorsOptions {
  /** Where to put the tensors (default: the cpu). */
  readonly device?: DeviceLike;
}

/** The tensors of a safetensors file, by name, in file order. */
export function deserializeSafetensors(bytes: Uint8Array | ArrayBuffer, options: LoadSafetensorsOptions & { source?: string } = {}): Record<string, Tensor> {
  const data = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
  const source = options.source ?? 'safetensors';
  const header = parseSafetensorsHeader(data, source);
  const out: Record<string, Tensor> = Object.create(null);
  for (const [name, entry] of Object.entries(header.tensors)) {
    const [begin, end] = entry.dataOffsets;
    out[name] = decodeTensor(name, entry, data.subarray(header.dataStart + begin, header.dataStart + end), options.device ?? 'cpu', source);
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

/**
 * Read a safetensors file into tensors (on the cpu unless `device` is given). Node only. The header
 * is read and checked first, then each tensor's bytes: files over 2 GiB load, and a file that is
 * not a regular file (a device, a pipe) is refused before anything is read.
 */
export async function loadSafetensors(path: string, options: LoadSafetensorsOptions = {}): Promise<Record<string, Tensor>> {
  const { open } = await nodeFs();
  const file = await open(path, 'r');
  try {
    const info = await file.stat();
    if (!info.isFile()) fail(path, 'not a regular file (a safetensors file has a size to check its header against)');
    const readAt = async (position: number, length: number): Promise<Uint8Array> => {
      const bytes = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await file.read(bytes, done, length - done, position + done);
        if (bytesRead === 0) fail(path, `the file ended at byte ${position + done} while reading ${length} bytes at ${position} (it changed while being read?)`);
        done += bytesRead;
      }
      return bytes;
    };
    const n = headerLength(await readAt(0, Math.min(8, info.size)), info.size, path);
    const header = parseHeaderJson(await readAt(8, n), info.size - 8 - n, path);
    const out: Record<string, Tensor> = Object.create(null);
    for (const [name, entry] of Object.entries(header.tensors)) {
      const [begin, end] = entry.dataOffsets;
      out[name] = decodeTensor(name, entry, await readAt(8 + n + begin, end - begin), options.device ?? 'cpu', path);
    }
    return out;
  } finally {
    await file.close();
  }
}
