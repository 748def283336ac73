// Seeded random mutations of valid safetensors files, through deserializeSafetensors and through
// the file path (loadSafetensors/safeOpen on temporary files). Every case either loads tensors that
// agree with an independent reading of its header and data, or throws a SafetensorsError; it never
// throws another error, and never allocates an array larger than 4× the file before the sizes are
// checked (reading 1-byte integers into int32 is the widest conversion there is: 4×).
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { bfloat16, bool, float16, float32, float64, int32, type DType, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { values } from './helpers.js';
import { bfloat16ToNumber, halfToNumber } from './safetensors-reference.js';

const dir = mkdtempSync(join(tmpdir(), 'core-nn-safetensors-fuzz-'));

// ---- a small seeded generator (mulberry32) ----

function generator(seed: number): { int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}
type Random = ReturnType<typeof generator>;

// ---- headers as editable pairs, written as JSON text by hand ----

/** JSON text written as is: numbers JavaScript cannot hold (1e400, 2^64), deep nesting. */
class Raw {
  constructor(readonly text: string) {}
}
type Value = Raw | string | number | boolean | null | Value[] | { [key: string]: Value };

function json(v: Value): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(json).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${json(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/** A header: [key as JSON text, value] pairs, so keys may repeat or be spelled with escapes. */
type Pairs = Array<[string, Value]>;

function file(pairs: Pairs, data: Uint8Array, pad = true): Uint8Array {
  let text = `{${pairs.map(([k, v]) => `${k}:${json(v)}`).join(',')}}`;
  while (pad && text.length % 8 !== 0) text += ' ';
  const header = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + header.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  out.set(data, 8 + header.length);
  return out;
}

// ---- the seeds: valid files of every readable dtype ----

const SIZE: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

interface Seed { pairs: Pairs; data: Uint8Array }

function seed(tensors: Array<[name: string, dtype: string, shape: number[]]>, rng: Random, metadata?: Record<string, string>): Seed {
  const pairs: Pairs = [];
  let at = 0;
  for (const [name, dtype, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * SIZE[dtype]!;
    pairs.push([JSON.stringify(name), { dtype, shape, data_offsets: [at, at + bytes] }]);
    at += bytes;
  }
  const data = new Uint8Array(at);
  const view = new DataView(data.buffer);
  // Values the reader accepts: small integers for I64, anything for the others.
  for (let i = 0; i < at; i++) data[i] = rng.int(256);
  for (const [, entry] of pairs) {
    const { dtype, data_offsets: [b, e] } = entry as { dtype: string; data_offsets: [number, number] };
    if (dtype === 'I64') for (let p = b; p < e; p += 8) view.setBigInt64(p, BigInt(rng.int(2001) - 1000), true);
  }
  if (metadata) pairs.splice(rng.int(pairs.length + 1), 0, ['"__metadata__"', metadata]);
  return { pairs, data };
}

// ---- an independent reader of a file the loader accepted ----

const DTYPE: Record<string, DType> = { F64: float64, F32: float32, F16: float16, BF16: bfloat16, I64: int32, I32: int32, I16: int32, I8: int32, U8: int32, BOOL: bool };

function expected(bytes: Uint8Array): Map<string, { dtype: DType; shape: number[]; values: number[] }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const out = new Map<string, { dtype: DType; shape: number[]; values: number[] }>();
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const vals: number[] = [];
    const size = SIZE[e.dtype]!;
    for (let p = 8 + n + e.data_offsets[0]; p < 8 + n + e.data_offsets[1]; p += size) {
      switch (e.dtype) {
        case 'F64': vals.push(view.getFloat64(p, true)); break;
        case 'F32': vals.push(view.getFloat32(p, true)); break;
        case 'F16': vals.push(halfToNumber(view.getUint16(p, true))); break;
        case 'BF16': vals.push(bfloat16ToNumber(view.getUint16(p, true))); break;
        case 'I64': vals.push(Number(view.getBigInt64(p, true))); break;
        case 'I32': vals.push(view.getInt32(p, true)); break;
        case 'I16': vals.push(view.getInt16(p, true)); break;
        case 'I8': vals.push(view.getInt8(p)); break;
        case 'U8': vals.push(view.getUint8(p)); break;
        case 'BOOL': vals.push(view.getUint8(p) === 0 ? 0 : 1); break;
      }
    }
    out.set(name, { dtype: DTYPE[e.dtype]!, shape: e.shape, values: vals });
  }
  return out;
}

function sameValues(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

/** Why `loaded` disagrees with the independent reading of `bytes`, or null. */
function disagreement(bytes: Uint8Array, loaded: Record<string, Tensor>): string | null {
  const want = expected(bytes);
  if (Object.keys(loaded).length !== want.size) return `${Object.keys(loaded).length} tensors, the header lists ${want.size}`;
  for (const [name, w] of want) {
    const t = loaded[name];
    if (!t) return `'${name}' missing`;
    if (t.dtype !== w.dtype) return `'${name}': dtype ${t.dtype.name}, expected ${w.dtype.name}`;
    if (t.shape.length !== w.shape.length || t.shape.some((d, i) => d !== w.shape[i])) return `'${name}': shape [${t.shape}], expected [${w.shape}]`;
    if (!sameValues(values(t), w.values)) return `'${name}': values differ`;
  }
  return null;
}

// ---- the largest array allocated while a synchronous call runs ----

const ARRAYS = ['ArrayBuffer', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array'] as const;
const globals = globalThis as unknown as Record<string, new (...args: unknown[]) => object>;
const originals = ARRAYS.map((name) => [name, globals[name]!] as const);
const OriginalArrayBuffer = ArrayBuffer;

/** Run `fn`, failing (with a plain Error, which the test reports) when it asks for an array over `limit` bytes. */
function withAllocationLimit<T>(limit: number, fn: () => T): T {
  for (const [name, ctor] of originals) {
    const itemsize = name === 'ArrayBuffer' ? 1 : (ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    globals[name] = new Proxy(ctor, {
      construct(target, args, newTarget) {
        const [first] = args as [unknown];
        const elements = typeof first === 'number' ? first
          : first instanceof OriginalArrayBuffer || typeof SharedArrayBuffer !== 'undefined' && first instanceof SharedArrayBuffer ? 0 // a view of existing memory
            : first !== null && typeof first === 'object' && 'length' in first ? Number((first as { length: unknown }).length) : 0;
        if (elements * itemsize > limit) throw new Error(`allocation of ${elements * itemsize} bytes (new ${name}) for a ${limit / 4}-byte file`);
        return Reflect.construct(target, args, newTarget === globals[name] ? target : newTarget);
      },
    });
  }
  try {
    return fn();
  } finally {
    for (const [name, ctor] of originals) globals[name] = ctor;
  }
}

// ---- the mutations ----

const DTYPES: Value[] = ['F32', 'F64', 'F16', 'BF16', 'I32', 'I64', 'I16', 'I8', 'U8', 'BOOL', 'U16', 'U32', 'U64', 'F8_E5M2', 'F8_E4M3', 'f32', 'F128', '', 'constructor', '__proto__', 'toString', 3, null, ['F32'], {}];
const HUGE: Value[] = [2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, new Raw('9007199254740993'), new Raw('18446744073709551615'), new Raw('1e400'), new Raw('-1e400'), 1e300, Number.MAX_SAFE_INTEGER * 4];
const ODD: Value[] = [-1, 1.5, new Raw('-0'), new Raw('1e2'), '2', null, true, [2], {}, new Raw(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)];
const small = (rng: Random): Value => rng.pick([0, 1, 2, 3, 4, 8]);
const numberLike = (rng: Random): Value => (rng.chance(0.4) ? rng.pick(HUGE) : rng.chance(0.5) ? rng.pick(ODD) : small(rng));

function entryOf(pairs: Pairs, rng: Random): Record<string, Value> | undefined {
  const tensors = pairs.filter(([k, v]) => k !== '"__metadata__"' && v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw));
  return tensors.length ? (rng.pick(tensors)[1] as Record<string, Value>) : undefined;
}

const clonePairs = (pairs: Pairs): Pairs => JSON.parse(JSON.stringify(pairs)) as Pairs;

/** Each family turns a valid file into a mutated one. */
const FAMILIES: Record<string, (s: Seed, rng: Random) => Uint8Array> = {
  'bit flips': (s, rng) => {
    const bytes = file(s.pairs, s.data);
    const start = rng.chance(0.5) ? 0 : bytes.length - s.data.length; // anywhere, or in the data only
    for (let k = 1 + rng.int(4); k > 0 && start < bytes.length; k--) bytes[start + rng.int(bytes.length - start)]! ^= 1 << rng.int(8);
    return bytes;
  },
  'truncation and extension': (s, rng) => {
    const bytes = file(s.pairs, s.data);
    if (rng.chance(0.6)) return bytes.slice(0, rng.int(bytes.length));
    const out = new Uint8Array(bytes.length + 1 + rng.int(16));
    out.set(bytes);
    return out;
  },
  'length prefix': (s, rng) => {
    const bytes = file(s.pairs, s.data);
    const view = new DataView(bytes.buffer);
    const n = Number(view.getBigUint64(0, true));
    const choices = [n + rng.int(33) - 16, 0, rng.int(2 ** 32), 2 ** 32 + n, 2 ** 53, 100_000_001, bytes.length - 8];
    view.setBigUint64(0, rng.chance(0.1) ? 2n ** 64n - 1n : BigInt(Math.max(0, rng.pick(choices))), true);
    return bytes;
  },
  dtype: (s, rng) => {
    const pairs = clonePairs(s.pairs);
    const entry = entryOf(pairs, rng);
    if (entry) entry['dtype'] = rng.pick(DTYPES);
    return file(pairs, s.data);
  },
  shape: (s, rng) => {
    const pairs = clonePairs(s.pairs);
    const entry = entryOf(pairs, rng);
    if (!entry) return file(pairs, s.data);
    const shape = Array.isArray(entry['shape']) ? entry['shape'] : [];
    switch (rng.int(5)) {
      case 0: shape.splice(rng.int(shape.length + 1), 0, rng.chance(0.7) ? small(rng) : numberLike(rng)); break;
      case 1: shape.splice(rng.int(shape.length), 1); break;
      case 2: shape[rng.int(shape.length + 1)] = numberLike(rng); break;
      case 3: entry['shape'] = rng.pick<Value>([null, 4, '[2]', {}, new Raw('[0,9007199254740991]'), new Raw('[9007199254740991,0,9007199254740991]')]); return file(pairs, s.data);
      default: shape.push(0, ...Array.from({ length: rng.int(3) }, () => rng.pick(HUGE))); break;
    }
    entry['shape'] = shape;
    return file(pairs, s.data);
  },
  'data offsets': (s, rng) => {
    const pairs = clonePairs(s.pairs);
    const entry = entryOf(pairs, rng);
    if (!entry) return file(pairs, s.data);
    const offsets = Array.isArray(entry['data_offsets']) ? entry['data_offsets'] : [];
    switch (rng.int(5)) {
      case 0: offsets[rng.int(2)] = Number(offsets[rng.int(2)] ?? 0) + rng.int(17) - 8; break;
      case 1: offsets.reverse(); break;
      case 2: offsets[rng.int(2)] = numberLike(rng); break;
      case 3: offsets.push(rng.chance(0.5) ? 0 : small(rng)); break;
      default: entry['data_offsets'] = rng.pick<Value>([null, [], [0], '0,4', { begin: 0, end: 4 }, 7]); return file(pairs, s.data);
    }
    entry['data_offsets'] = offsets;
    return file(pairs, s.data);
  },
  'keys and entries': (s, rng) => {
    const pairs = clonePairs(s.pairs);
    const i = rng.int(pairs.length);
    switch (rng.int(7)) {
      case 0: pairs.splice(rng.int(pairs.length + 1), 0, [pairs[i]![0], rng.chance(0.5) ? pairs[i]![1] : pairs[rng.int(pairs.length)]![1]]); break; // the same name twice
      case 1: { // the same name spelled with an escape
        const name = JSON.parse(pairs[i]![0]) as string;
        if (name.length > 0) pairs.push([`"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name).slice(2)}`, pairs[i]![1]]);
        break;
      }
      case 2: pairs[i]![0] = JSON.stringify(rng.pick(['__proto__', 'constructor', '', '__metadata__', 'π', 'a"b', 'hasOwnProperty'])); break;
      case 3: pairs.splice(i, 1); break;
      case 4: pairs[i]![1] = rng.pick<Value>([null, 1, 'x', [], [1, 2], true]); break;
      case 5: pairs.push([JSON.stringify(`empty${rng.int(3)}`), { dtype: rng.pick(['F32', 'BOOL', 'I64']), shape: rng.pick([[0], [3, 0], [0, 2 ** 40]]), data_offsets: [rng.int(s.data.length + 1), rng.int(s.data.length + 1)] }]); break;
      default: pairs.push(['"__metadata__"', rng.pick<Value>([{ a: 'b' }, { a: 1 }, ['x'], null, 'meta', { nested: { x: 'y' } }, {}])]); break;
    }
    return file(pairs, s.data, rng.chance(0.7));
  },
  'header text': (s, rng) => {
    const text = file(s.pairs, s.data);
    const n = Number(new DataView(text.buffer).getBigUint64(0, true));
    let header = new TextDecoder().decode(text.subarray(8, 8 + n));
    for (let k = 1 + rng.int(3); k > 0; k--) {
      const at = rng.int(header.length + 1);
      header = rng.chance(0.5)
        ? header.slice(0, at) + rng.pick(['{', '}', '[', ']', '"', ',', ':', '0', '-', 'e', '.', '\\', '\u0000', 'é', '\ud800', ' ', '1e999']) + header.slice(at)
        : header.slice(0, at) + header.slice(at + 1 + rng.int(4));
    }
    const headerBytes = new TextEncoder().encode(header);
    const out = new Uint8Array(8 + headerBytes.length + s.data.length);
    new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
    out.set(headerBytes, 8);
    out.set(s.data, 8 + headerBytes.length);
    return out;
  },
};

type Outcome = { ok: true; tensors: Record<string, Tensor> } | { ok: false; message: string };

function outcome(error: unknown, where: string): Outcome {
  if (error instanceof nn.SafetensorsError) return { ok: false, message: error.message };
  throw new Error(`${where}: threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}, not a SafetensorsError`);
}

it('mutated files load consistently with their header or throw a SafetensorsError, in memory and from disk', async () => {
  const rng = generator(20240611);
  const seeds = [
    seed([['w', 'F32', [2, 3]], ['b', 'F64', [2]], ['h', 'F16', [3]], ['g', 'BF16', [2]], ['i', 'I32', [2]], ['m', 'BOOL', [3]], ['s', 'F32', []]], rng, { format: 'pt' }),
    seed([['q', 'I64', [2]], ['r', 'I16', [3]], ['u', 'U8', [4]], ['k', 'I8', [2, 1]], ['e', 'F32', [0]]], rng),
    seed([['x', 'F32', [4]]], rng, {}),
  ];
  // The seeds load, and the cpu backend (which allocates its own pools when first used) is up.
  for (const s of seeds) expect(disagreement(file(s.pairs, s.data), nn.deserializeSafetensors(file(s.pairs, s.data)))).toBeNull();
  const CASES_PER_FAMILY = 300;
  const FILE_EVERY = 4; // every 4th case goes through the file path too
  const counts: Record<string, { tried: number; good: number; bad: number; files: number }> = {};
  let index = 0;
  for (const [family, mutate] of Object.entries(FAMILIES)) {
    const c = (counts[family] = { tried: 0, good: 0, bad: 0, files: 0 });
    for (let k = 0; k < CASES_PER_FAMILY; k++, index++) {
      const bytes = mutate(rng.pick(seeds), rng);
      const where = `${family} #${k}`;
      let inMemory: Outcome;
      try {
        inMemory = { ok: true, tensors: withAllocationLimit(4 * bytes.length, () => nn.deserializeSafetensors(bytes, { source: 'case' })) };
      } catch (error) {
        inMemory = outcome(error, where);
      }
      c.tried++;
      if (inMemory.ok) {
        c.good++;
        expect(disagreement(bytes, inMemory.tensors), where).toBeNull();
      } else {
        c.bad++;
      }
      if (index % FILE_EVERY === 0) {
        c.files++;
        const path = join(dir, 'case');
        await writeFile(path, bytes);
        let fromFile: Outcome;
        try {
          fromFile = { ok: true, tensors: await nn.loadSafetensors(path) };
        } catch (error) {
          fromFile = outcome(error, `${where} (file)`);
        }
        // The same verdict, and the same message but for the source it names.
        expect(fromFile.ok, where).toBe(inMemory.ok);
        if (!fromFile.ok && !inMemory.ok) expect(fromFile.message.replace(path, 'case'), where).toBe(inMemory.message);
        if (fromFile.ok) {
          expect(disagreement(bytes, fromFile.tensors), where).toBeNull();
          // safeOpen alone: any one tensor, read by itself.
          await using f = await nn.safeOpen(path);
          const names = f.keys();
          if (names.length > 0) {
            const name = rng.pick(names);
            expect(values(await f.getTensor(name)), where).toEqual(values(fromFile.tensors[name]!));
          }
        }
      }
      if (index % 8 === 0) await new Promise((r) => setImmediate(r));
    }
  }
  console.log(`safetensors fuzz (tried / loaded / refused, of which through files):\n${Object.entries(counts).map(([f, c]) => `  ${f.padEnd(26)} ${c.tried} / ${c.good} / ${c.bad}, ${c.files} files`).join('\n')}`);
  const total = Object.values(counts).reduce((a, c) => a + c.tried, 0);
  expect(total).toBeGreaterThanOrEqual(2000);
  // Both outcomes happen in every family, except that a file whose length changed never loads (the
  // tensors must cover the data section exactly).
  for (const [family, c] of Object.entries(counts)) {
    if (family !== 'truncation and extension' && family !== 'length prefix') expect(c.good, family).toBeGreaterThan(0);
    expect(c.bad, family).toBeGreaterThan(0);
  }
});
