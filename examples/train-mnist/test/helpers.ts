// Shared by the checkpoint tests: the objects a resume restores, a bit-exact snapshot of them, and
// checkpoint files rewritten with a changed training state or changed tensors (and a valid digest).
import { createHash } from 'node:crypto';
import { nn } from '@core/nn';
import { AdamW } from '@core/optim';
import { Generator, GradScaler, Tensor } from '@core/tensor';
import { encodeCheckpoint, STATE_KEY, type TrainingObjects } from '../src/checkpoint.js';
import { buildModel } from '../src/models.js';
import type { TrainConfig } from '../src/train.js';

/** The objects `train(config)` restores on resume, freshly made (cpu). */
export function freshObjects(config: TrainConfig): TrainingObjects & { scaler: GradScaler } {
  const model = buildModel(config.model);
  return {
    modelKind: config.model,
    model,
    optimizer: new AdamW(model.parameters(), { lr: config.lr }),
    loaderGenerator: new Generator(config.seed),
    scaler: new GradScaler('cpu', { enabled: config.amp === 'fp16' }),
  };
}

/** sha256 of named values, tensors by dtype, shape and bytes: equal digests mean equal bits. */
function bits(entries: Iterable<[string, unknown]>): string {
  const hash = createHash('sha256');
  for (const [name, value] of entries) {
    if (value instanceof Tensor) {
      const data = value.dataSync();
      hash.update(`${name}: ${value.dtype.name}[${value.shape.join(',')}]`).update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } else {
      hash.update(`${name}= ${JSON.stringify(value)}`);
    }
  }
  return hash.digest('hex');
}

/** Everything a resume sets, bit for bit: model tensors, optimizer state and groups, scaler, generator. */
export function snapshot({ model, optimizer, loaderGenerator, scaler }: TrainingObjects & { scaler: GradScaler }): unknown {
  const params = optimizer.paramGroups.flatMap((g) => g.params);
  const state = params.flatMap((p, i) => Object.entries(optimizer.state.get(p) ?? {}).map(([k, v]): [string, unknown] => [`${i}.${k}`, v]));
  return {
    model: bits(Object.entries(model.stateDict())),
    optimizer: { state: bits(state), paramGroups: optimizer.paramGroups.map(({ params: _, ...options }) => options) },
    scaler: { state: scaler.stateDict(), device: bits([['scale', scaler._scale], ['tracker', scaler._growthTracker]]) },
    generator: loaderGenerator.getState(),
  };
}

/** A checkpoint file's tensors (on the cpu) and its training state (parsed). */
export interface Decoded {
  tensors: Record<string, Tensor>;
  state: Record<string, unknown>;
}

/** Decode a checkpoint file's bytes (no checks beyond the safetensors format's). */
export function decodeCheckpoint(bytes: Uint8Array): Decoded {
  const header = nn.parseSafetensorsHeader(bytes);
  return { tensors: nn.deserializeSafetensors(bytes), state: JSON.parse(header.metadata[STATE_KEY]!) as Record<string, unknown> };
}

/** A checkpoint (its bytes, or decoded) with its training state and tensors changed by `change`, and a digest that fits them. */
export function rewrite(from: Uint8Array | Decoded, change: (c: Decoded) => void): Promise<Uint8Array> {
  const source = from instanceof Uint8Array ? decodeCheckpoint(from) : from;
  const copy = { tensors: { ...source.tensors }, state: structuredClone(source.state) };
  change(copy);
  return encodeCheckpoint(copy.tensors, JSON.stringify(copy.state));
}

/** A seeded generator of floats in [0, 1) (mulberry32), for test cases that are random but the same on every run. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
