// A checkpoint is one file, <path>.safetensors: every tensor (model weights, optimizer moments) and,
// in the header's __metadata__, the rest of the training state as JSON with a sha256 digest over
// that state, the tensor entries and the tensor bytes. One file means one atomic rename: a crash at
// any moment of a save leaves either the previous checkpoint or the new one, never a mix of epochs.
//
// Loading reads and checks everything before anything changes: the safetensors structure, the
// digest, the training state against a schema, every tensor's name, dtype and shape against the
// model and the optimizer. Only then are model, optimizer, GradScaler and the loader's generator
// set, in an order that undoes the earlier ones if a later one refuses its part.
//
// The schema uses valibot: declarative, typed, small (tree-shaken to the validators used), with no
// dependencies, and its issues carry the path of the field at fault for the error message.
import { createHash } from 'node:crypto';
import { open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { nn } from '@core/nn';
import type { AdamW } from '@core/optim';
import type { Generator, GradScaler, Tensor } from '@core/tensor';
import * as v from 'valibot';
import type { EpochRecord } from './train.js';

/** The format this program writes and reads (the earlier one kept the training state in a .json). */
export const CHECKPOINT_FORMAT = 'core-train-mnist/2';
/** The __metadata__ key holding the training state (JSON). */
export const STATE_KEY = 'core-train-mnist';
/** The __metadata__ key holding the sha256 digest (hex) of the checkpoint's contents. */
export const DIGEST_KEY = 'core-train-mnist.sha256';

/** A checkpoint that cannot be read or applied; the message names the file and the field at fault. */
export class CheckpointError extends Error {
  constructor(
    message: string,
    /** The checkpoint file. */
    readonly file: string,
    /** The field at fault (a dotted path), when one is. */
    readonly field?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CheckpointError';
  }
}

const DAMAGED = 'the file is damaged or was not written by this program (resume from another checkpoint, or start over)';

// ---- the training state's schema ----

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
/** A number JSON may have written as null (NaN, ±Infinity: a diverged loss), read back as NaN. */
const measured = v.pipe(v.nullable(v.number()), v.transform((x) => x ?? NaN));
const precision = v.picklist(['off', 'bf16', 'fp16']);

const epochRecord = v.strictObject({
  epoch: count, step: count, trainLoss: measured, testAccuracy: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  seconds: v.pipe(v.number(), v.minValue(0)), imagesPerSecond: measured, stepsPerSecond: measured,
  amp: precision, skippedSteps: count, peakBytes: count,
});

/** AdamW's group options as its stateDict() writes them; their ranges are AdamW's own loadStateDict's to check. */
const adamGroup = v.strictObject({
  lr: v.number(), betas: v.strictTuple([v.number(), v.number()]), eps: v.number(), weightDecay: v.number(),
  amsgrad: v.boolean(), maximize: v.boolean(), params: v.array(count),
});

const stateSchema = v.pipe(
  v.strictObject({
    format: v.literal(CHECKPOINT_FORMAT),
    model: v.string(),
    epoch: count,
    step: count,
    amp: precision,
    loaderGenerator: v.strictObject({ seed: count, offset: count }),
    // Types here; GradScaler.loadStateDict checks the ranges (and is undone if a later part fails).
    scaler: v.nullable(v.strictObject({ scale: v.number(), growthFactor: v.number(), backoffFactor: v.number(), growthInterval: v.number(), _growthTracker: v.number() })),
    optimizer: v.strictObject({
      paramGroups: v.array(adamGroup),
      state: v.record(v.pipe(v.string(), v.regex(/^(0|[1-9]\d{0,8})$/, 'Invalid key: expected a parameter index')), v.strictObject({ step: count })),
    }),
    history: v.strictObject({ stepLosses: v.array(measured), epochs: v.array(epochRecord) }),
  }),
  // One run's history: no epochs or steps missing or left over from another run.
  v.check((s) => s.history.epochs.length === s.epoch, 'history.epochs must hold one record per completed epoch'),
  v.check((s) => s.history.epochs.every((e, i) => e.epoch === i + 1), 'history.epochs must be numbered 1, 2, …'),
  v.check((s) => s.history.stepLosses.length === s.step, 'history.stepLosses must hold one loss per step'),
  v.check((s) => (s.history.epochs.at(-1)?.step ?? 0) === s.step, 'step must be the last epoch record\'s step'),
);

type SavedState = v.InferOutput<typeof stateSchema>;

/** Where training stands: saved beside the tensors, handed back on resume. */
export interface TrainingProgress {
  /** Epochs completed. */
  readonly epoch: number;
  /** Optimizer steps taken. */
  readonly step: number;
  /** The precision the run is in (a stability fallback carries over). */
  readonly amp: 'off' | 'bf16' | 'fp16';
  /** Every step's loss so far. */
  readonly stepLosses: readonly number[];
  /** One record per completed epoch. */
  readonly epochs: readonly EpochRecord[];
}

/** The objects a checkpoint saves and restores. */
export interface TrainingObjects {
  /** The model's name ('cnn', 'mlp'): a checkpoint restores only into the same kind. */
  readonly modelKind: string;
  /** The model. */
  readonly model: nn.Module;
  /** Its optimizer. */
  readonly optimizer: AdamW;
  /** The generator the data loader shuffles with. */
  readonly loaderGenerator: Generator;
}

/** A checkpoint read and checked in full, not yet applied: `restore` applies it, all or nothing. */
export interface PendingCheckpoint {
  /** The file it came from. */
  readonly file: string;
  /** Where training stood. */
  readonly progress: TrainingProgress;
  /**
   * Set the model, optimizer, loader generator and (when enabled and the checkpoint has its state)
   * `scaler` from the checkpoint; if any of them refuses its part, the others are put back as they
   * were and a CheckpointError says why.
   */
  restore(scaler: GradScaler): void;
}

// ---- the file's contents ----

/** Tensor names in the file: the model's by its state dict keys, the optimizer's by parameter index. */
const modelName = (key: string) => `model.${key}`;
const momentName = (index: number | string, key: string) => `optimizer.${index}.${key}`;
/** AdamW's per-parameter tensors: the moments of every parameter with state, and amsgrad's maximum. */
const MOMENTS = ['expAvg', 'expAvgSq', 'maxExpAvgSq'] as const;
const FILE_DTYPE: Record<string, string> = { float64: 'F64', float32: 'F32', float16: 'F16', bfloat16: 'BF16', int32: 'I32', bool: 'BOOL' };

/**
 * The sha256 (hex) of a checkpoint file's contents: its tensor entries (by name: dtype, shape and
 * offsets), its training state text and its data section. The digest's own entry is left out, so
 * the digest of the file written without it equals the digest of the file written with it.
 */
export function checkpointDigest(bytes: Uint8Array, header: nn.SafetensorsHeader): string {
  const entries = Object.entries(header.tensors).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify(entries.map(([name, e]) => [name, e.dtype, e.shape, e.dataOffsets])))
    .update('\n')
    .update(header.metadata[STATE_KEY] ?? '')
    .update('\n')
    .update(bytes.subarray(header.dataStart))
    .digest('hex');
}

/** The bytes of a checkpoint file holding `tensors` (on any device) and the training state `stateText`. */
export async function encodeCheckpoint(tensors: Record<string, Tensor>, stateText: string): Promise<Uint8Array> {
  // Written with a placeholder digest of the same length, which the digest (blind to its own entry)
  // then overwrites in place. Inside the header's JSON, the quoted key and value can only be the
  // entry itself: a string value (the state) holds its quotes escaped.
  const placeholder = `"${DIGEST_KEY}":"${'0'.repeat(64)}"`;
  const bytes = await nn.serializeSafetensorsAsync(tensors, { [STATE_KEY]: stateText, [DIGEST_KEY]: '0'.repeat(64) });
  const header = nn.parseSafetensorsHeader(bytes);
  const at = Buffer.from(bytes.buffer, bytes.byteOffset, header.dataStart).indexOf(placeholder);
  bytes.set(new TextEncoder().encode(`"${DIGEST_KEY}":"${checkpointDigest(bytes, header)}"`), at);
  return bytes;
}

// ---- saving ----

/**
 * The steps of a save, in order; a crash before 'renamed' keeps the previous checkpoint, from
 * 'renamed' on the new one is in place. TRAIN_MNIST_KILL_AT=n makes the process SIGKILL itself at
 * the n-th of these points (counted from 0 over all saves of the process): the crash tests' hook.
 */
export const SAVE_POINTS = ['clean', 'created', 'half-written', 'written', 'synced', 'renamed', 'done'] as const;

let pointsPassed = 0;

function savePoint(): void {
  const killAt = process.env.TRAIN_MNIST_KILL_AT;
  if (killAt === undefined) return;
  if (!/^\d+$/.test(killAt)) throw new Error(`TRAIN_MNIST_KILL_AT must be a non-negative integer (a save point to crash at), got '${killAt}'`);
  if (pointsPassed++ === Number(killAt)) process.kill(process.pid, 'SIGKILL');
}

/** fsync a directory, so a rename in it survives a power loss (Windows has no such call; its renames are journaled). */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replace `file` with `bytes` so that a crash at any point leaves the old file or the new one:
 * write a temporary file beside it, fsync it, rename it over `file`, fsync the directory. Temporary
 * files left by an earlier crash are removed first.
 */
async function writeAtomically(file: string, bytes: Uint8Array): Promise<void> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.tmp-`;
  savePoint();
  for (const name of await readdir(dir)) if (name.startsWith(prefix)) await rm(join(dir, name), { force: true });
  const temp = join(dir, `${prefix}${process.pid}`);
  const handle = await open(temp, 'wx');
  try {
    try {
      savePoint();
      const half = bytes.length >> 1;
      await handle.writeFile(bytes.subarray(0, half));
      savePoint();
      await handle.writeFile(bytes.subarray(half));
      savePoint();
      await handle.sync();
    } finally {
      await handle.close();
    }
    savePoint();
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  savePoint();
  await syncDirectory(dir);
  savePoint();
}

/** Write the checkpoint `<path>.safetensors` (with the scaler's state when it is enabled), replacing the previous one atomically. */
export async function saveCheckpoint(path: string, objects: TrainingObjects & { readonly scaler: GradScaler }, progress: TrainingProgress): Promise<void> {
  const { model, optimizer, loaderGenerator, scaler } = objects;
  const tensors: Record<string, Tensor> = {};
  for (const [key, t] of Object.entries(model.stateDict())) tensors[modelName(key)] = t;
  const sd = optimizer.stateDict();
  const state: Record<string, { step: number }> = {};
  for (const [index, entry] of Object.entries(sd.state)) {
    const { step, ...moments } = entry;
    state[index] = { step };
    for (const [key, t] of Object.entries(moments)) if (t !== undefined) tensors[momentName(index, key)] = t;
  }
  const saved: v.InferInput<typeof stateSchema> = {
    format: CHECKPOINT_FORMAT, model: objects.modelKind, epoch: progress.epoch, step: progress.step, amp: progress.amp,
    loaderGenerator: loaderGenerator.getState(),
    scaler: scaler.isEnabled() ? (await scaler.stateDictAsync()) as NonNullable<SavedState['scaler']> : null,
    optimizer: { paramGroups: sd.paramGroups, state },
    history: { stepLosses: [...progress.stepLosses], epochs: [...progress.epochs] },
  };
  await writeAtomically(`${path}.safetensors`, await encodeCheckpoint(tensors, JSON.stringify(saved)));
}

// ---- loading ----

/** `path` with the extension, accepted with or without it. */
function checkpointFile(path: string): string {
  return path.endsWith('.safetensors') ? path : `${path}.safetensors`;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** The whole file, read once: its size is checked to be a regular file's before the buffer is made. */
async function readWhole(file: string): Promise<Uint8Array> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CheckpointError(`checkpoint ${file} does not exist (was a checkpoint ever completed there? a run writes one after each epoch)`, file, undefined, { cause: e });
    }
    throw e;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new CheckpointError(`checkpoint ${file} is not a regular file`, file);
    const bytes = new Uint8Array(info.size);
    let done = 0;
    while (done < bytes.length) {
      const { bytesRead } = await handle.read(bytes, done, bytes.length - done, done);
      if (bytesRead === 0) throw new CheckpointError(`checkpoint ${file} ended at byte ${done} of ${bytes.length} while being read (it changed meanwhile?)`, file);
      done += bytesRead;
    }
    return bytes;
  } finally {
    await handle.close();
  }
}

/** The training state, checked against the schema; the error names the field. */
function parseState(text: string, file: string): SavedState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError(`checkpoint ${file}: the training state is not valid JSON (${(e as Error).message}); ${DAMAGED}`, file, STATE_KEY, { cause: e });
  }
  const result = v.safeParse(stateSchema, json);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const field = v.getDotPath(issue) ?? undefined; // none for the checks across fields, whose messages name them
  throw new CheckpointError(`checkpoint ${file}: training state${field ? ` field ${field}` : ''}: ${issue.message}; ${DAMAGED}`, file, field);
}

/**
 * Read and check the checkpoint at `path` (with or without `.safetensors`) against `objects`,
 * changing nothing: the safetensors structure (sizes checked against the file before anything is
 * allocated), the digest, the training state's schema, and each tensor's name, dtype and shape
 * against the model's and the optimizer's. Throws a CheckpointError (or a SafetensorsError for a
 * broken file structure) naming the file and the field.
 */
export async function readCheckpoint(path: string, objects: TrainingObjects): Promise<PendingCheckpoint> {
  const file = checkpointFile(path);
  return parseCheckpoint(await readWhole(file), file, objects);
}

/** `readCheckpoint`'s checks on the bytes of `file`, already read (`file` names them in errors). */
export async function parseCheckpoint(bytes: Uint8Array, file: string, objects: TrainingObjects): Promise<PendingCheckpoint> {
  const bad = (field: string, what: string): never => {
    throw new CheckpointError(`checkpoint ${file}: ${field}: ${what}; ${DAMAGED}`, file, field);
  };
  const header = nn.parseSafetensorsHeader(bytes, file);
  const stateText = header.metadata[STATE_KEY];
  if (stateText === undefined) {
    const legacy = file.replace(/\.safetensors$/, '.json');
    if (await exists(legacy)) {
      throw new CheckpointError(`checkpoint ${file} was written by an earlier version of this demo (its training state is in ${legacy}), which this version cannot resume: start over`, file, STATE_KEY);
    }
    bad(`__metadata__.${STATE_KEY}`, 'missing: a safetensors file, but not a checkpoint of this program');
  }
  const extra = Object.keys(header.metadata).find((k) => k !== STATE_KEY && k !== DIGEST_KEY);
  if (extra !== undefined) bad(`__metadata__.${extra}`, 'unexpected key');
  const digest = checkpointDigest(bytes, header);
  if (header.metadata[DIGEST_KEY] !== digest) {
    bad(`__metadata__.${DIGEST_KEY}`, `the contents' sha256 is ${digest}, not the ${JSON.stringify(header.metadata[DIGEST_KEY] ?? null)} recorded at save`);
  }
  const state = parseState(stateText!, file);
  const { model, optimizer, loaderGenerator } = objects;
  if (state.model !== objects.modelKind) {
    throw new CheckpointError(`checkpoint ${file} holds a '${state.model}' model, but --model is '${objects.modelKind}'`, file, 'model');
  }

  // The tensors the file may hold: by name, the tensor whose dtype and shape each must have, and
  // whether it must be there.
  const expected = new Map<string, { like: Tensor; required: boolean }>();
  const modelState = model.stateDict();
  for (const [key, t] of Object.entries(modelState)) expected.set(modelName(key), { like: t, required: true });
  const params = optimizer.paramGroups.flatMap((g) => g.params);
  const groups = state.optimizer.paramGroups;
  if (groups.length !== optimizer.paramGroups.length) bad('optimizer.paramGroups', `${groups.length} groups, but the optimizer has ${optimizer.paramGroups.length}`);
  let first = 0;
  groups.forEach((group, g) => {
    const size = optimizer.paramGroups[g]!.params.length;
    if (group.params.length !== size || group.params.some((id, i) => id !== first + i)) {
      bad(`optimizer.paramGroups.${g}.params`, `must be the indices ${first}..${first + size - 1} of the optimizer's parameters, got ${JSON.stringify(group.params)}`);
    }
    first += size;
  });
  for (const index of Object.keys(state.optimizer.state)) {
    const param = params[Number(index)] ?? bad(`optimizer.state.${index}`, `no such parameter (the optimizer has ${params.length})`);
    for (const key of MOMENTS) expected.set(momentName(index, key), { like: param, required: key !== 'maxExpAvgSq' });
  }
  for (const [name, entry] of Object.entries(header.tensors)) {
    const { like } = expected.get(name) ?? bad(`tensor '${name}'`, 'not a tensor of this model or its optimizer');
    if (entry.dtype !== FILE_DTYPE[like.dtype.name]) bad(`tensor '${name}'`, `dtype ${entry.dtype}, but the model's is ${FILE_DTYPE[like.dtype.name]}`);
    if (entry.shape.length !== like.shape.length || entry.shape.some((d, i) => d !== like.shape[i])) {
      bad(`tensor '${name}'`, `shape [${entry.shape.join(', ')}], but the model's is [${like.shape.join(', ')}]`);
    }
  }
  for (const [name, { required }] of expected) if (required && !(name in header.tensors)) bad(`tensor '${name}'`, 'missing');

  const tensors = nn.deserializeSafetensors(bytes, { source: file });
  const progress: TrainingProgress = { epoch: state.epoch, step: state.step, amp: state.amp, stepLosses: state.history.stepLosses, epochs: state.history.epochs };
  return {
    file,
    progress,
    restore(scaler) {
      const undo: Array<() => void> = [];
      try {
        // On each tensor's device first (this can fail, e.g. out of memory, while nothing has changed).
        const weights = Object.fromEntries(Object.entries(modelState).map(([key, own]) => [key, tensors[modelName(key)]!.to(own.device)]));
        const moments = Object.fromEntries(Object.entries(state.optimizer.state).map(([index, { step }]) => {
          const entry: Record<string, unknown> = { step };
          for (const key of MOMENTS) if (tensors[momentName(index, key)]) entry[key] = tensors[momentName(index, key)];
          return [index, entry];
        }));
        const optimizerBefore = optimizer.stateDict();
        optimizer.loadStateDict({ state: moments, paramGroups: groups } as unknown as Parameters<AdamW['loadStateDict']>[0]);
        undo.push(() => optimizer.loadStateDict(optimizerBefore));
        if (state.scaler !== null && scaler.isEnabled()) {
          const scalerBefore = scaler.stateDict();
          scaler.loadStateDict(state.scaler);
          undo.push(() => scaler.loadStateDict(scalerBefore));
        }
        const generatorBefore = loaderGenerator.getState();
        loaderGenerator.setState(state.loaderGenerator);
        undo.push(() => loaderGenerator.setState(generatorBefore));
        // Last: it checks everything before it copies, so it either fails unchanged or succeeds.
        model.loadStateDict(weights);
      } catch (e) {
        for (const step of undo.reverse()) step();
        throw new CheckpointError(`checkpoint ${file}: ${e instanceof Error ? e.message : String(e)}; nothing was changed`, file, undefined, { cause: e });
      }
    },
  };
}
