// safeOpen on a Blob: the same tensors, metadata and errors as on a path, read by slices of the
// Blob, so that a page (or hubFile's Blob in Node) reads one tensor at a time.
import { openAsBlob } from 'node:fs';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bfloat16, bool, float16, float64, int32, tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { values } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'core-nn-safetensors-blob-'));

/** A Blob that records the byte ranges of its slices. */
class RecordingBlob extends Blob {
  readonly slices: [number | undefined, number | undefined][] = [];
  override slice(start?: number, end?: number, contentType?: string): Blob {
    this.slices.push([start, end]);
    return super.slice(start, end, contentType);
  }
}

/** A file with tensors of several dtypes and metadata, written by saveSafetensors. */
async function sample(name: string): Promise<string> {
  const path = join(dir, name);
  await nn.saveSafetensors(path, {
    w: tensor([[1.5, -2], [3.25, 4]]),
    d: tensor([0.1, -1e-300], { dtype: float64 }),
    h: tensor([0.5, -65504, 3], { dtype: float16 }),
    bf: tensor([1, -2.5], { dtype: bfloat16 }),
    n: tensor([7, -8, 9], { dtype: int32 }),
    m: tensor([true, false], { dtype: bool }),
    empty: tensor([], { dtype: int32 }).reshape([0, 3]),
  }, { format: 'pt' });
  return path;
}

/** Every tensor of an opened file: dtype, shape and values. */
async function contents(f: nn.SafetensorsFile) {
  const out: Record<string, { dtype: string; shape: number[]; values: number[] }> = {};
  for (const key of f.keys()) {
    const t = await f.getTensor(key);
    out[key] = { dtype: t.dtype.name, shape: [...t.shape], values: values(t) };
  }
  return out;
}

describe('safeOpen(blob)', () => {
  it('reads the same keys, metadata and tensors as safeOpen(path) on the same file (an in-memory Blob and a file-backed one)', async () => {
    const path = await sample('same.safetensors');
    await using fromPath = await nn.safeOpen(path);
    const expected = await contents(fromPath);
    expect(Object.keys(expected)).toHaveLength(7);
    for (const blob of [new Blob([readFileSync(path)]), await openAsBlob(path)]) {
      await using fromBlob = await nn.safeOpen(blob);
      expect(fromBlob.path).toBe('Blob');
      expect(fromBlob.keys()).toEqual(fromPath.keys());
      expect(fromBlob.metadata()).toEqual({ format: 'pt' });
      expect(await contents(fromBlob)).toEqual(expected);
    }
    expect(Object.keys(await nn.loadSafetensors(new Blob([readFileSync(path)])))).toEqual(fromPath.keys());
  });

  it('reads the header, then only the bytes of the tensor asked for', async () => {
    const path = await sample('slices.safetensors');
    const header = nn.parseSafetensorsHeader(readFileSync(path));
    const blob = new RecordingBlob([readFileSync(path)]);
    const f = await nn.safeOpen(blob);
    expect(blob.slices).toEqual([[0, 8], [8, header.dataStart]]);
    blob.slices.length = 0;
    expect(values(await f.getTensor('n'))).toEqual([7, -8, 9]);
    const [begin, end] = header.tensors['n']!.dataOffsets;
    expect(blob.slices).toEqual([[header.dataStart + begin, header.dataStart + end]]);
    await f.close();
    await expect(f.getTensor('w')).rejects.toThrow("Blob: getTensor('w'): the file is closed");
  });

  it('refuses a corrupt header with the same SafetensorsError as for a path, naming a File by its name', async () => {
    const full = new Uint8Array(readFileSync(await sample('corrupt.safetensors')));
    const cases: Uint8Array<ArrayBuffer>[] = [
      new TextEncoder().encode('hello, this is not a safetensors file'), // header length past the end
      full.subarray(0, 5), // shorter than the length prefix
      full.subarray(0, full.length - 4), // data cut short
      (() => { const b = Uint8Array.from(full); b[8] = 0x5b; return b; })(), // '[' instead of '{'
    ];
    const refusal = (file: string | Blob) => nn.safeOpen(file).then(() => new Error('opened'), (e: unknown) => e as Error);
    for (const [i, bytes] of cases.entries()) {
      const path = join(dir, `corrupt-${i}.safetensors`);
      writeFileSync(path, bytes);
      const fromPath = await refusal(path);
      const fromBlob = await refusal(new Blob([bytes]));
      const fromFile = await refusal(new File([bytes], 'weights.safetensors'));
      expect(fromPath).toBeInstanceOf(nn.SafetensorsError);
      expect(fromBlob).toBeInstanceOf(nn.SafetensorsError);
      expect(fromBlob.message).toBe(fromPath.message.replace(path, 'Blob'));
      expect(fromFile.message).toBe(fromPath.message.replace(path, 'weights.safetensors'));
    }
  });

  it('is a TypeError for something that is neither a path nor a Blob', async () => {
    await expect(nn.safeOpen(new Uint8Array(8) as unknown as Blob)).rejects.toThrow(/safeOpen\(\): expected a path \(a string\) or a Blob, got object/);
  });
});
