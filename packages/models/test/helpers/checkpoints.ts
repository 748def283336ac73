// Checkpoint folders for the loader's tests: safetensors files written from tensors, sharded ones
// with their index, and large sparse ones whose data is holes that read as zeros.
import { nn } from '@core/nn';
import type { Tensor } from '@core/tensor';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

const folders: string[] = [];
afterEach(async () => {
  for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'core-models-test-'));
  folders.push(dir);
  return dir;
}

/** Writes `shards` (file name → tensors) into `dir`, with a `model.safetensors.index.json` when there are several. */
export async function writeCheckpoint(dir: string, shards: Record<string, Record<string, Tensor>>): Promise<void> {
  const weightMap: Record<string, string> = {};
  for (const [file, tensors] of Object.entries(shards)) {
    await nn.saveSafetensors(join(dir, file), tensors);
    for (const key of Object.keys(tensors)) weightMap[key] = file;
  }
  if (Object.keys(shards).length > 1) await writeIndex(dir, weightMap);
}

/** A `model.safetensors.index.json` with this `weight_map`. */
export async function writeIndex(dir: string, weightMap: Record<string, string>): Promise<void> {
  await writeFile(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
}

/** One tensor of a sparse file: its F32 data are zeros except `marks` (flat index → value). */
export interface SparseTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly marks?: Readonly<Record<number, number>>;
}

/**
 * A safetensors file of F32 tensors whose data section is a hole (the file is extended with
 * `truncate`), so it takes no disk space and reads as zeros, apart from the marked values.
 */
export async function writeSparseSafetensors(path: string, tensors: readonly SparseTensor[]): Promise<void> {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * 4;
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const text = JSON.stringify(header);
  const json = new TextEncoder().encode(text.padEnd(Math.ceil(text.length / 8) * 8, ' '));
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true);
  const file = await open(path, 'w');
  try {
    await file.write(prefix, 0, 8, 0);
    await file.write(json, 0, json.length, 8);
    await file.truncate(8 + json.length + offset);
    const dataStart = 8 + json.length;
    for (const t of tensors) {
      const begin = (header[t.name] as { data_offsets: [number, number] }).data_offsets[0];
      for (const [index, value] of Object.entries(t.marks ?? {})) {
        await file.write(new Uint8Array(new Float32Array([value]).buffer), 0, 4, dataStart + begin + Number(index) * 4);
      }
    }
  } finally {
    await file.close();
  }
}
