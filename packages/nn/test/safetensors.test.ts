// safetensors: round trips, a file written byte by byte here from the format's spec (an
// independent writer) that loadSafetensors must read, our output parsed by an independent reader
// written here, and the validation errors.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { bfloat16, bool, float16, float32, float64, int32, tensor, zeros, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { FAKE, uniform, values } from './helpers.js';
import { bfloat16ToNumber, halfToNumber } from './safetensors-reference.js';

const dir = mkdtempSync(join(tmpdir(), 'core-nn-safetensors-'));

// ---- an independent writer: the spec, by hand ----

interface RawTensor { dtype: string; shape: number[]; bytes: Uint8Array }

function le(itemsize: number, count: number, put: (view: DataView, i: number) => void): Uint8Array {
  const bytes = new Uint8Array(itemsize * count);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < count; i++) put(view, i);
  return bytes;
}

/** Lay tensors out in the given order, header keys in another, metadata last. */
function writeByHand(tensors: Record<string, RawTensor>, layoutOrder: string[], metadata?: Record<string, string>): Uint8Array {
  const offsets: Record<string, [number, number]> = {};
  let at = 0;
  for (const name of layoutOrder) {
    offsets[name] = [at, at + tensors[name]!.bytes.length];
    at += tensors[name]!.bytes.length;
  }
  const parts = Object.keys(tensors).reverse().map((name) => {
    const t = tensors[name]!;
    return `${JSON.stringify(name)}:{"dtype":"${t.dtype}","shape":[${t.shape.join(',')}],"data_offsets":[${offsets[name]![0]},${offsets[name]![1]}]}`;
  });
  if (metadata) parts.push(`"__metadata__":${JSON.stringify(metadata)}`);
  let header = `{${parts.join(',')}}`;
  while (header.length % 8 !== 0) header += ' ';
  const headerBytes = new TextEncoder().encode(header);
  const file = new Uint8Array(8 + headerBytes.length + at);
  new DataView(file.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  file.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
  for (const name of layoutOrder) {
    file.set(tensors[name]!.bytes, pos);
    pos += tensors[name]!.bytes.length;
  }
  return file;
}

// ---- an independent reader ----

function readByHand(file: Uint8Array): { header: Record<string, any>; headerLength: number; decoded: Record<string, { dtype: string; shape: number[]; values: number[] }> } {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const text = new TextDecoder().decode(file.subarray(8, 8 + n));
  const header = JSON.parse(text);
  const start = 8 + n;
  const decoded: Record<string, { dtype: string; shape: number[]; values: number[] }> = {};
  for (const [name, e] of Object.entries<any>(header)) {
    if (name === '__metadata__') continue;
    const [b, end] = e.data_offsets as [number, number];
    const size = { F64: 8, F32: 4, F16: 2, BF16: 2, I32: 4, BOOL: 1 }[e.dtype as string]!;
    const vals: number[] = [];
    for (let p = start + b; p < start + end; p += size) {
      switch (e.dtype) {
        case 'F64': vals.push(view.getFloat64(p, true)); break;
        case 'F32': vals.push(view.getFloat32(p, true)); break;
        case 'I32': vals.push(view.getInt32(p, true)); break;
        case 'BOOL': vals.push(view.getUint8(p)); break;
        case 'F16': vals.push(halfToNumber(view.getUint16(p, true))); break;
        case 'BF16': vals.push(bfloat16ToNumber(view.getUint16(p, true))); break;
      }
    }
    decoded[name] = { dtype: e.dtype, shape: e.shape, values: vals };
  }
  return { header, headerLength: n, decoded };
}

describe('reading a file written byte by byte from the spec', () => {
  const tensors: Record<string, RawTensor> = {
    'conv.weight': { dtype: 'F32', shape: [2, 3], bytes: le(4, 6, (v, i) => v.setFloat32(i * 4, [0.5, -1.25, 3, 1e-8, -0, 7.75][i]!, true)) },
    'fc.bias': { dtype: 'F64', shape: [3], bytes: le(8, 3, (v, i) => v.setFloat64(i * 8, [Math.PI, -2.5, 1e300][i]!, true)) },
    half: { dtype: 'F16', shape: [2, 2], bytes: le(2, 4, (v, i) => v.setUint16(i * 2, [0x3c00, 0xc000, 0x3800, 0x7bff][i]!, true)) }, // 1, −2, 0.5, 65504
    brain: { dtype: 'BF16', shape: [3], bytes: le(2, 3, (v, i) => v.setUint16(i * 2, [0x3f80, 0xc000, 0x4049][i]!, true)) }, // 1, −2, 3.140625
    'bn.num_batches_tracked': { dtype: 'I64', shape: [], bytes: le(8, 1, (v) => v.setBigInt64(0, 1234n, true)) },
    labels: { dtype: 'I32', shape: [4], bytes: le(4, 4, (v, i) => v.setInt32(i * 4, [-7, 0, 9, 2147483647][i]!, true)) },
    mask: { dtype: 'BOOL', shape: [3], bytes: new Uint8Array([1, 0, 1]) },
    bytes: { dtype: 'U8', shape: [2], bytes: new Uint8Array([255, 3]) },
    empty: { dtype: 'F32', shape: [0, 4], bytes: new Uint8Array(0) },
  };
  const file = writeByHand(tensors, ['brain', 'mask', 'fc.bias', 'bytes', 'labels', 'empty', 'half', 'bn.num_batches_tracked', 'conv.weight'], { format: 'pt', note: 'hand-written' });

  it('loadSafetensors reads every tensor with its dtype, shape and values', async () => {
    const path = join(dir, 'by-hand.safetensors');
    writeFileSync(path, file);
    const sd = await nn.loadSafetensors(path);
    expect(Object.keys(sd).sort()).toEqual(Object.keys(tensors).sort());
    const check = (name: string, dtype: unknown, shape: number[], vals: number[]) => {
      expect(sd[name]!.dtype, name).toBe(dtype);
      expect(sd[name]!.shape, name).toEqual(shape);
      expect(values(sd[name]!), name).toEqual(vals);
      expect(sd[name]!.device.type).toBe('cpu');
    };
    check('conv.weight', float32, [2, 3], [0.5, -1.25, 3, Math.fround(1e-8), -0, 7.75]);
    check('fc.bias', float64, [3], [Math.PI, -2.5, 1e300]);
    check('half', float16, [2, 2], [1, -2, 0.5, 65504]);
    check('brain', bfloat16, [3], [1, -2, 3.140625]);
    check('bn.num_batches_tracked', int32, [], [1234]);
    check('labels', int32, [4], [-7, 0, 9, 2147483647]);
    check('mask', bool, [3], [1, 0, 1]);
    check('bytes', int32, [2], [255, 3]);
    check('empty', float32, [0, 4], []);
  });

  it('the header parser returns the metadata; { device } places the tensors', () => {
    expect(nn.parseSafetensorsHeader(file).metadata).toEqual({ format: 'pt', note: 'hand-written' });
    const sd = nn.deserializeSafetensors(file, { device: FAKE });
    expect(sd['labels']!.device.type).toBe(FAKE);
    expect(nn.deserializeSafetensors(file.buffer as ArrayBuffer)['half']!.dtype).toBe(float16);
  });
});

describe('bytes written by saveSafetensors, read by an independent reader', () => {
  it('header, padding, layout and values follow the spec', async () => {
    const sd: Record<string, Tensor> = {
      'w': tensor([[1.5, -2], [3.25, 4]]),
      'b': tensor([0.1, 0.2], { dtype: float64 }),
      'h': tensor([1, -0.5, 65504], { dtype: float16 }),
      'g': tensor([1, 2.5], { dtype: bfloat16 }),
      'i': tensor([3, -4], { dtype: int32 }),
      'm': tensor([true, false]),
      's': tensor(2.5),
      't': tensor([[1, 2, 3], [4, 5, 6]]).t(), // a non-contiguous view: saved in logical order
    };
    const path = join(dir, 'ours.safetensors');
    await nn.saveSafetensors(path, sd, { framework: '@core/nn' });
    const file = new Uint8Array(readFileSync(path));
    const { header, headerLength, decoded } = readByHand(file);
    expect(headerLength % 8).toBe(0);
    expect(new TextDecoder().decode(file.subarray(8, 8 + headerLength)).trimEnd().endsWith('}')).toBe(true);
    expect(header.__metadata__).toEqual({ framework: '@core/nn' });
    // Offsets: relative to the data section, contiguous from 0, covering it exactly.
    const spans = Object.entries<any>(header).filter(([k]) => k !== '__metadata__').map(([, e]) => e.data_offsets as [number, number]).sort((a, b) => a[0] - b[0]);
    let at = 0;
    for (const [b, e] of spans) { expect(b).toBe(at); at = e; }
    expect(8 + headerLength + at).toBe(file.length);
    // Bigger items first: every tensor's data is aligned to its item size.
    expect(header.b.data_offsets[0] % 8).toBe(0);
    expect(header.w.data_offsets[0] % 4).toBe(0);
    expect(decoded).toEqual({
      b: { dtype: 'F64', shape: [2], values: [0.1, 0.2] },
      i: { dtype: 'I32', shape: [2], values: [3, -4] },
      s: { dtype: 'F32', shape: [], values: [2.5] },
      t: { dtype: 'F32', shape: [3, 2], values: [1, 4, 2, 5, 3, 6] },
      w: { dtype: 'F32', shape: [2, 2], values: [1.5, -2, 3.25, 4] },
      g: { dtype: 'BF16', shape: [2], values: [1, 2.5] },
      h: { dtype: 'F16', shape: [3], values: [1, -0.5, 65504] },
      m: { dtype: 'BOOL', shape: [2], values: [1, 0] },
    });
  });
});

describe('round trips', () => {
  it('a model: save its stateDict, load into a fresh model, same outputs', async () => {
    const make = () => new nn.Sequential(new nn.Conv2d(1, 2, 3), new nn.BatchNorm2d(2), new nn.Flatten(), new nn.Linear(8, 3));
    const a = make();
    a.forward(uniform([4, 1, 4, 4], 1, -1, 1, float32)); // moves the running stats
    const path = join(dir, 'model.safetensors');
    await nn.saveSafetensors(path, a.stateDict());
    const b = make();
    b.loadStateDict(await nn.loadSafetensors(path));
    a.eval();
    b.eval();
    const x = uniform([2, 1, 4, 4], 2, -1, 1, float32);
    expect(values(b.forward(x))).toEqual(values(a.forward(x)));
    expect(values(b.stateDict()['1.num_batches_tracked']!)).toEqual([1]);
  });

  it('every dtype, bit for bit, from any device; serialize/deserialize work on bytes', async () => {
    const sd: Record<string, Tensor> = {
      f32: uniform([3, 4], 3, -5, 5, float32),
      f64: uniform([5], 4),
      f16: uniform([7], 5, -100, 100, float16),
      bf16: uniform([2, 3], 6, -1e5, 1e5, bfloat16),
      i32: tensor([0, -1, 2 ** 31 - 1, -(2 ** 31)], { dtype: int32 }),
      b: tensor([[true, false, true]]),
      onDevice: uniform([2, 2], 7, -1, 1, float32).to(FAKE),
      empty: zeros([0]),
    };
    const bytes = await nn.serializeSafetensorsAsync(sd);
    const back = nn.deserializeSafetensors(bytes);
    for (const [k, t] of Object.entries(sd)) {
      expect(back[k]!.dtype, k).toBe(t.dtype);
      expect(back[k]!.shape, k).toEqual(t.shape);
      expect(values(back[k]!), k).toEqual(values(t.to('cpu')));
    }
    expect(() => nn.serializeSafetensors(sd)).toThrow("'onDevice' is on fake:0; use serializeSafetensorsAsync()");
    delete sd['onDevice'];
    expect(nn.serializeSafetensors(sd)).toEqual(await nn.serializeSafetensorsAsync(sd));
  });

  it('rejects non-tensors, a tensor named __metadata__ and non-string metadata', () => {
    expect(() => nn.serializeSafetensors({ a: 3 as unknown as Tensor })).toThrow("the value of 'a' is not a Tensor (number)");
    expect(() => nn.serializeSafetensors({ __metadata__: zeros([1]) })).toThrow("'__metadata__' is reserved");
    expect(() => nn.serializeSafetensors({}, { n: 3 as unknown as string })).toThrow("metadata values must be strings, but 'n' is number");
  });
});

describe('validation on load', () => {
  const f32 = (n: number) => ({ dtype: 'F32', shape: [n], bytes: new Uint8Array(4 * n) });
  const good = writeByHand({ a: f32(2), b: f32(1) }, ['a', 'b']);
  const withHeader = (header: string, dataBytes = 0) => {
    const h = new TextEncoder().encode(header);
    const file = new Uint8Array(8 + h.length + dataBytes);
    new DataView(file.buffer).setBigUint64(0, BigInt(h.length), true);
    file.set(h, 8);
    return file;
  };
  const cases: Array<[string, Uint8Array, string]> = [
    ['a file shorter than 8 bytes', new Uint8Array(5), 'file too short (5 bytes)'],
    ['a header length past the end', good.subarray(0, 20), 'runs past the end of the file (20 bytes)'],
    ['a huge header length', (() => { const f = good.slice(); new DataView(f.buffer).setBigUint64(0, 2n ** 40n, true); return f; })(), 'exceeds the format\'s limit'],
    ['invalid JSON', withHeader('{"a": {"dtype": "F32",'), 'the header is not valid JSON'],
    ['a header that is not an object', withHeader('[1, 2]  '), "must be a JSON object starting with '{'"],
    ['invalid UTF-8', (() => { const f = withHeader('{"a":1} '); f[10] = 0xff; return f; })(), 'not valid UTF-8'],
    ['an unknown dtype', withHeader('{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}', 16), 'tensor \'a\': unknown dtype "F128"'],
    ['a dtype the format has but tensors here lack', withHeader('{"a":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}}', 4), "dtype U16 is valid safetensors but @core/tensor has no such type"],
    ['a bad shape', withHeader('{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', 4), 'shape must be an array of non-negative integers'],
    ['offsets out of range', withHeader('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', 4), "data_offsets [0, 8] are out of range: the data section has 4 bytes"],
    ['offsets that do not match the shape', withHeader('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', 8), 'span 8 bytes, but dtype F32 with shape [3] needs 12'],
    ['reversed offsets', withHeader('{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}', 8), 'data_offsets must be [begin, end] with 0 ≤ begin ≤ end'],
    ['overlapping tensors', withHeader('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', 12), "tensors 'a' and 'b' overlap"],
    ['a hole in the data', withHeader('{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8), "bytes 0..4 of the data section belong to no tensor (a hole before 'a')"],
    ['trailing bytes', withHeader('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 8), 'the data section has 8 bytes but the tensors cover only 4'],
    ['non-string metadata', withHeader('{"__metadata__":{"a":1}}'), '__metadata__ must be an object of string values'],
    ['an I64 value beyond int32', withHeader('{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}', 8).map((v, i, arr) => (i === arr.length - 4 ? 1 : v)), "tensor 'a' (I64) holds 4294967296 at flat index 0, which does not fit in int32"],
  ];
  for (const [id, bytes, message] of cases) {
    it(id, () => {
      expect(() => nn.deserializeSafetensors(bytes)).toThrow(nn.SafetensorsError);
      expect(() => nn.deserializeSafetensors(bytes)).toThrow(message);
    });
  }

  it('the valid file loads, and file errors name the path', async () => {
    expect(Object.keys(nn.deserializeSafetensors(good))).toEqual(['b', 'a']);
    const path = join(dir, 'broken.safetensors');
    writeFileSync(path, good.subarray(0, 20));
    await expect(nn.loadSafetensors(path)).rejects.toThrow(`${path}: header length`);
  });
});

describe('untrusted and unusual files', () => {
  const header = (json: string): Uint8Array => {
    const text = new TextEncoder().encode(json);
    const bytes = new Uint8Array(8 + text.length + 8);
    new DataView(bytes.buffer).setUint32(0, text.length, true);
    bytes.set(text, 8);
    return bytes;
  };

  it("reads a Node Buffer cut from Node's shared pool (a nonzero byteOffset into a larger ArrayBuffer)", async () => {
    const path = join(dir, 'pooled.safetensors');
    await nn.saveSafetensors(path, { w: tensor([1.5, -2, 3.25]), n: tensor([7, 8], { dtype: int32 }) });
    const pooled = Buffer.from(readFileSync(path)); // small Buffers are views into one shared pool
    expect(pooled.byteOffset !== 0 || pooled.buffer.byteLength !== pooled.byteLength).toBe(true);
    const loaded = nn.deserializeSafetensors(pooled);
    expect(values(loaded.w!)).toEqual([1.5, -2, 3.25]);
    expect(values(loaded.n!)).toEqual([7, 8]);
  });

  it("keeps a tensor named '__proto__' or 'constructor', written and read", async () => {
    const sd: Record<string, Tensor> = Object.create(null);
    sd['__proto__'] = tensor([1, 2]);
    sd['constructor'] = tensor([3]);
    const path = join(dir, 'proto.safetensors');
    await nn.saveSafetensors(path, sd);
    for (const loaded of [nn.deserializeSafetensors(readFileSync(path)), await nn.loadSafetensors(path)]) {
      expect(Object.keys(loaded).sort()).toEqual(['__proto__', 'constructor']);
      expect(values(loaded['__proto__']!)).toEqual([1, 2]);
      expect(values(loaded['constructor']!)).toEqual([3]);
    }
  });

  it('refuses a header that names a tensor twice (JSON.parse would keep the last silently)', () => {
    const e1 = '{"dtype":"F32","shape":[2],"data_offsets":[0,8]}';
    const bytes = header(`{"a":${e1},"a":${e1}}`);
    expect(() => nn.deserializeSafetensors(bytes)).toThrow(/the header names 'a' twice/);
    // A name that only looks alike (an escape) is another name; keys inside entries don't count.
    expect(() => nn.deserializeSafetensors(header(`{"a":${e1},"b\\u0061":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}}`))).not.toThrow();
  });

  it('refuses a path that is not a regular file (/dev/zero) before reading it', async () => {
    await expect(nn.loadSafetensors('/dev/zero')).rejects.toThrow(/\/dev\/zero: not a regular file/);
  });

  it('loadSafetensors checks the header before reading the data: a truncated file names itself', async () => {
    const path = join(dir, 'truncated.safetensors');
    await nn.saveSafetensors(path, { w: tensor([1, 2, 3, 4]) });
    const full = readFileSync(path);
    writeFileSync(path, full.subarray(0, full.length - 4));
    await expect(nn.loadSafetensors(path)).rejects.toThrow(nn.SafetensorsError);
    await expect(nn.loadSafetensors(path)).rejects.toThrow(path);
  });
});

describe('safeOpen: one tensor at a time', () => {
  const sd = () => ({ w: tensor([[1.5, -2], [3.25, 4]]), b: tensor([0.5, 0.25], { dtype: float64 }), n: tensor([7, -8, 9], { dtype: int32 }) });

  it('lists the keys and metadata, reads each tensor, and closes (also through await using)', async () => {
    const path = join(dir, 'open.safetensors');
    await nn.saveSafetensors(path, sd(), { format: 'pt' });
    const f = await nn.safeOpen(path);
    expect(f.path).toBe(path);
    expect(f.keys().sort()).toEqual(['b', 'n', 'w']);
    expect(f.metadata()).toEqual({ format: 'pt' });
    f.metadata().format = 'changed'; // a copy each time
    expect(f.metadata()).toEqual({ format: 'pt' });
    const [n, w] = await Promise.all([f.getTensor('n'), f.getTensor('w')]);
    expect(n.dtype).toBe(int32);
    expect(values(n)).toEqual([7, -8, 9]);
    expect(w.shape).toEqual([2, 2]);
    expect(values(w)).toEqual([1.5, -2, 3.25, 4]);
    await f.close();
    await f.close();
    await expect(f.getTensor('b')).rejects.toThrow(`${path}: getTensor('b'): the file is closed`);
    expect(f.keys().length).toBe(3); // the header stays readable

    let disposed: nn.SafetensorsFile | undefined;
    {
      await using g = await nn.safeOpen(path, { device: FAKE });
      disposed = g;
      const b = await g.getTensor('b');
      expect(b.device.type).toBe(FAKE);
      expect(values(b.to('cpu'))).toEqual([0.5, 0.25]);
    }
    await expect(disposed.getTensor('b')).rejects.toThrow(nn.SafetensorsError);
  });

  it('reads the header, then only the bytes of the tensor asked for', async () => {
    const path = join(dir, 'positional.safetensors');
    await nn.saveSafetensors(path, sd());
    const header = nn.parseSafetensorsHeader(readFileSync(path));
    const probe = await open(path, 'r'); // FileHandle's class is not exported: spy on its prototype
    const spy = vi.spyOn(Object.getPrototypeOf(probe) as FileHandle, 'read');
    await probe.close();
    try {
      const f = await nn.safeOpen(path);
      const readsOf = () => spy.mock.calls.map((c) => ({ length: (c as unknown[])[2], position: (c as unknown[])[3] }));
      expect(readsOf()).toEqual([{ length: 8, position: 0 }, { length: header.dataStart - 8, position: 8 }]);
      spy.mockClear();
      const n = await f.getTensor('n');
      expect(values(n)).toEqual([7, -8, 9]);
      const [begin, end] = header.tensors['n']!.dataOffsets;
      expect(readsOf()).toEqual([{ length: end - begin, position: header.dataStart + begin }]);
      await f.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a name the file lacks, and a file that is not safetensors (closing it)', async () => {
    const path = join(dir, 'names.safetensors');
    await nn.saveSafetensors(path, sd());
    await using f = await nn.safeOpen(path);
    await expect(f.getTensor('missing')).rejects.toThrow(`${path}: no tensor named 'missing' (keys() lists the file's 3 tensors)`);
    await expect(f.getTensor('__proto__')).rejects.toThrow(nn.SafetensorsError);
    await expect(f.getTensor(3 as unknown as string)).rejects.toThrow(TypeError);
    const bad = join(dir, 'not-safetensors.txt');
    writeFileSync(bad, 'hello, this is not a safetensors file');
    await expect(nn.safeOpen(bad)).rejects.toThrow(`${bad}: header length`);
    await expect(nn.safeOpen('/dev/zero')).rejects.toThrow(/not a regular file/);
  });
});

describe('headers that ask for much work or hold odd values', () => {
  /** What `fn` throws (undefined if nothing), for checking its type and whole message from one call. */
  const thrown = (fn: () => unknown): unknown => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it('refuses a header listing more than 100000 entries, naming the count and the limit, before parsing it', async () => {
    // The entries are counted before the JSON is parsed or any entry checked, so these need no valid entries.
    const names: string[] = [];
    for (let i = 0; i <= 100_000; i++) names.push(`"t${i}":0`);
    const header = (text: string): Uint8Array => {
      const bytes = new TextEncoder().encode(`--------${text}`);
      new DataView(bytes.buffer).setBigUint64(0, BigInt(bytes.length - 8), true);
      return bytes;
    };
    const over = header(`{${names.join(',')}}`);
    const error = thrown(() => nn.deserializeSafetensors(over));
    expect(error).toBeInstanceOf(nn.SafetensorsError);
    expect((error as Error).message).toBe('safetensors: the header lists 100001 entries, more than the limit of 100000 (split the tensors over several files, as sharded checkpoints do)');
    await new Promise((r) => setImmediate(r));
    // __metadata__ is an entry too.
    expect(() => nn.parseSafetensorsHeader(header(`{${names.slice(0, 100_000).join(',')},"__metadata__":{}}`))).toThrow('lists 100001 entries');
    await new Promise((r) => setImmediate(r));
    // 100000 pass the count (and the JSON parser then stops at the 'x').
    expect(() => nn.parseSafetensorsHeader(header(`{x,${names.slice(0, 100_000).join(',')}}`))).toThrow('the header is not valid JSON');
    const path = join(dir, 'many.safetensors');
    writeFileSync(path, over);
    await expect(nn.safeOpen(path)).rejects.toThrow(`${path}: the header lists 100001 entries`);
  });

  it('reads a Uint8Array at an odd offset into a larger buffer, without keeping it', () => {
    const file = nn.serializeSafetensors({ w: tensor([1.5, -2, 3.25]), d: tensor([0.125], { dtype: float64 }) });
    const larger = new Uint8Array(file.length + 13);
    larger.set(file, 5); // the F64 and F32 data are misaligned in `larger`
    const loaded = nn.deserializeSafetensors(larger.subarray(5, 5 + file.length));
    larger.fill(0);
    expect(values(loaded['w']!)).toEqual([1.5, -2, 3.25]);
    expect(values(loaded['d']!)).toEqual([0.125]);
  });

  it('names an inherited property as an unknown dtype and keeps messages short for nested values', () => {
    const one = (entry: string) => {
      const text = new TextEncoder().encode(`{"a":${entry}}`);
      const bytes = new Uint8Array(8 + text.length + 4);
      new DataView(bytes.buffer).setUint32(0, text.length, true);
      bytes.set(text, 8);
      return bytes;
    };
    for (const dtype of ['constructor', '__proto__', 'toString']) {
      expect(() => nn.deserializeSafetensors(one(`{"dtype":"${dtype}","shape":[1],"data_offsets":[0,4]}`))).toThrow(`tensor 'a': unknown dtype "${dtype}"`);
    }
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const error = thrown(() => nn.deserializeSafetensors(one(`{"dtype":"F32","shape":${deep},"data_offsets":[0,4]}`)));
    expect(error).toBeInstanceOf(nn.SafetensorsError);
    expect((error as Error).message).toBe('safetensors: tensor \'a\': shape must be an array of non-negative integers, got [[…]]');
  });
});
