// Fuzzing the checkpoint loader: thousands of seeded mutations of a valid checkpoint (bit flips,
// truncations, inserted bytes, broken header bytes, and changed training state or tensors written
// with a valid digest). Each load either succeeds or throws a clean, named error; the read never
// allocates more tensor memory than the file holds; and a failed load leaves model, optimizer,
// GradScaler and loader generator bit for bit as they were. The cases go to parseCheckpoint, the
// loader after its file read (which checkpoint.test.ts covers), so that disk speed does not set
// the test's time.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nn } from '@core/nn';
import { bfloat16, float64, getBackend, int32, type Tensor } from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckpointError, parseCheckpoint } from '../src/checkpoint.js';
import { loadMnist } from '../src/mnist.js';
import { train, type TrainConfig } from '../src/train.js';
import { decodeCheckpoint, freshObjects, rewrite, seeded, snapshot, type Decoded } from './helpers.js';

const config: TrainConfig = { device: 'cpu', model: 'cnn', epochs: 1, batchSize: 32, lr: 2e-3, seed: 11, amp: 'fp16' };
const CASES_PER_FAMILY = 350;
const ITEMSIZE: Record<string, number> = { float64: 8, float32: 4, int32: 4, float16: 2, bfloat16: 2, bool: 1 };

let dir: string;
let valid: Uint8Array;
let decoded: Decoded;
let dataStart: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'train-mnist-fuzz-'));
  await train({ ...config, checkpoint: join(dir, 'valid') }, {}, loadMnist({ limit: 64 }));
  // The run's timings and memory peak made fixed, so the file, and so each seeded case, is the same on every run.
  valid = await rewrite(new Uint8Array(await readFile(join(dir, 'valid.safetensors'))), ({ state }) => {
    for (const e of (state.history as { epochs: Array<Record<string, number>> }).epochs) {
      Object.assign(e, { seconds: 1, imagesPerSecond: 64, stepsPerSecond: 2, peakBytes: 1_000_000 });
    }
  });
  dataStart = nn.parseSafetensorsHeader(valid).dataStart;
  decoded = decodeCheckpoint(valid);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Random = () => number;
const below = (random: Random, n: number) => Math.floor(random() * n);
const pick = <T>(random: Random, items: readonly T[]): T => items[below(random, items.length)]!;
/** A byte position: half the time in the 8-byte length and header, else anywhere. */
const position = (random: Random, length: number) => below(random, random() < 0.5 ? Math.min(dataStart, length) : length);

/** Values a damaged or hostile state may hold in place of a field's own. */
const ODD_VALUES: unknown[] = [null, true, false, 0, -1, 1, 0.5, -0.5, 1e308, -1e308, 2 ** 53, 2 ** 31, 'x', '', '1', [], {}, [1, 2], { step: 1 }];

/** Change one field of the parsed training state: delete it, replace it, nudge a number, grow or shrink an array, add a key. */
function mutateState(state: Record<string, unknown>, random: Random): void {
  let parent: Record<string, unknown> | unknown[] = state;
  let key: string | number = pick(random, Object.keys(state));
  for (;;) {
    const value: unknown = (parent as Record<string | number, unknown>)[key];
    const children = value !== null && typeof value === 'object' ? Object.keys(value) : [];
    if (children.length === 0 || random() < 0.3) break;
    parent = value as Record<string, unknown>;
    key = Array.isArray(value) ? below(random, value.length) : pick(random, children);
  }
  const target = parent as Record<string | number, unknown>;
  const value = target[key];
  const op = below(random, 5);
  if (op === 0) {
    if (Array.isArray(target)) target.splice(Number(key), 1);
    else delete target[key];
  } else if (op === 1) target[key] = structuredClone(pick(random, ODD_VALUES));
  else if (op === 2 && typeof value === 'number') target[key] = pick(random, [value + 1, value * 2, -value, value + 1e-9, Math.trunc(value / 2)]);
  else if (op === 3 && Array.isArray(value)) value.push(structuredClone(pick(random, [...ODD_VALUES, value[0]])));
  else if (Array.isArray(target)) target.push(structuredClone(pick(random, ODD_VALUES)));
  else target[`${String(key)}Extra`] = 1;
}

/** Change the tensors: drop, rename, reshape, cast, add, swap two of one shape. */
function mutateTensors(tensors: Record<string, Tensor>, random: Random): void {
  const names = Object.keys(tensors);
  const name = pick(random, names);
  const t = tensors[name]!;
  switch (below(random, 6)) {
    case 0: delete tensors[name]; break;
    case 1: tensors[pick(random, [`${name}x`, 'model.5.weight', 'optimizer.99.expAvg', 'optimizer.0.maxExpAvgSq', 'extra'])] = t; delete tensors[name]; break;
    case 2: tensors[name] = random() < 0.5 ? t.flatten() : t.unsqueeze(0); break;
    case 3: tensors[name] = t.to(pick(random, [float64, bfloat16, int32])); break;
    case 4: tensors[pick(random, ['optimizer.0.maxExpAvgSq', 'model.99.weight', `${name}.copy`])] = t; break;
    default: {
      const same = names.filter((n) => n !== name && tensors[n]!.shape.join() === t.shape.join());
      if (same.length === 0) break;
      const other = pick(random, same);
      [tensors[name], tensors[other]] = [tensors[other]!, t];
    }
  }
}

/** Each family: how to damage the valid file, and whether the damage keeps the digest valid. */
const FAMILIES: Record<string, { resigned: boolean; mutate: (bytes: Uint8Array, random: Random) => Uint8Array | Promise<Uint8Array> }> = {
  'bit flips': {
    resigned: false,
    mutate: (bytes, random) => {
      const out = bytes.slice();
      for (let n = 1 + below(random, 4); n > 0; n--) out[position(random, out.length)]! ^= 1 << below(random, 8);
      return out;
    },
  },
  truncation: { resigned: false, mutate: (bytes, random) => bytes.slice(0, position(random, bytes.length)) },
  'byte insertion': {
    resigned: false,
    mutate: (bytes, random) => {
      const at = position(random, bytes.length);
      const inserted = Uint8Array.from({ length: 1 + below(random, 16) }, () => below(random, 256));
      const out = new Uint8Array(bytes.length + inserted.length);
      out.set(bytes.subarray(0, at));
      out.set(inserted, at);
      out.set(bytes.subarray(at), at + inserted.length);
      return out;
    },
  },
  'header JSON bytes': {
    resigned: false,
    mutate: (bytes, random) => {
      const out = bytes.slice();
      const specials = [...'{}[]":,.-+e0129 \\\n'].map((c) => c.charCodeAt(0)).concat([0, 0xff, 0xc3]);
      for (let n = 1 + below(random, 3); n > 0; n--) out[8 + below(random, dataStart - 8)] = pick(random, specials);
      return out;
    },
  },
  'training state fields (digest rewritten)': {
    resigned: true,
    mutate: (_, random) => rewrite(decoded, ({ state }) => {
      for (let n = 1 + below(random, 2); n > 0; n--) mutateState(state, random);
    }),
  },
  'tensors (digest rewritten)': { resigned: true, mutate: (_, random) => rewrite(decoded, ({ tensors }) => mutateTensors(tensors, random)) },
};

describe('fuzzing the checkpoint loader', () => {
  it(`${CASES_PER_FAMILY} seeded mutations per family: a clean error or a load, bounded reads, no partial change`, async () => {
    const objects = freshObjects(config);
    const file = join(dir, 'case.safetensors');
    const load = async (bytes: Uint8Array) => (await parseCheckpoint(bytes, file, objects)).restore(objects.scaler);
    await load(valid);
    const baseline = snapshot(objects);
    const alloc = vi.spyOn(getBackend('cpu'), 'alloc');
    const allocatedBytes = () => alloc.mock.calls.reduce((sum, [, dtype, numel]) => sum + numel * ITEMSIZE[dtype]!, 0);
    const counts: Record<string, { tried: number; good: number; bad: number }> = {};
    const random = seeded(20_251_201);
    try {
      for (const [family, { resigned, mutate }] of Object.entries(FAMILIES)) {
        const count = (counts[family] = { tried: 0, good: 0, bad: 0 });
        for (let i = 0; i < CASES_PER_FAMILY; i++) {
          const bytes = await mutate(valid, random);
          const what = `${family} #${i}`;
          count.tried++;
          alloc.mockClear();
          let error: unknown = null;
          const pending = await parseCheckpoint(bytes, file, objects).catch((e: unknown) => { error = e; });
          // Reading decodes only tensors the header lays out inside the file, after checking them
          // against the model: never more tensor memory than the file's size (with the file's own
          // bytes, under twice its size).
          const read = allocatedBytes();
          expect(read, what).toBeLessThanOrEqual(bytes.length);
          if (pending) expect(read, `${what}: the allocation spy sees the decoded tensors`).toBeGreaterThan(0);
          alloc.mockClear();
          try {
            pending?.restore(objects.scaler);
          } catch (e) {
            error = e;
          }
          if (error === null) {
            count.good++;
            if (resigned) await load(valid); // a hostile but well-formed change loads; put the baseline back
          } else {
            count.bad++;
            expect(error instanceof CheckpointError || error instanceof nn.SafetensorsError, `${what}: ${String(error)}`).toBe(true);
            expect((error as Error).message, what).toContain(file);
          }
          // Unchanged after a failure; after a byte-level change that loaded, the digest guarantees the same contents.
          expect(snapshot(objects), what).toEqual(baseline);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      alloc.mockRestore();
    }
    const rows = Object.entries(counts).map(([family, c]) => `  ${family.padEnd(42)} tried ${c.tried}  good ${c.good}  bad ${c.bad}`);
    console.log(`checkpoint fuzz (seeded), per mutation family:\n${rows.join('\n')}`);
    const total = Object.values(counts).reduce((n, c) => n + c.tried, 0);
    expect(total).toBeGreaterThanOrEqual(2000);
    // Both outcomes occur where they can: hostile but well-formed contents load, damaged bytes do not.
    expect(counts['training state fields (digest rewritten)']!.good).toBeGreaterThan(0);
    expect(counts['training state fields (digest rewritten)']!.bad).toBeGreaterThan(0);
    expect(counts['tensors (digest rewritten)']!.bad).toBeGreaterThan(0);
    expect(counts['bit flips']!.bad).toBeGreaterThan(0);
  }, 600_000);
});
