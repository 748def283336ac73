// A checkpoint is two files: <path>.safetensors holds every tensor (model weights and optimizer
// moments), <path>.json the rest (epoch, optimizer groups and counters, generator states).
import { readFile, writeFile } from 'node:fs/promises';
import { nn } from '@core/nn';
import type { AdamW, OptimizerStateDict } from '@core/optim';
import { Tensor, type Device } from '@core/tensor';

type OptimizerState = OptimizerStateDict<object>;

export interface TrainingState {
  /** Epochs completed. */
  readonly epoch: number;
  readonly step: number;
  readonly loaderGenerator: { seed: number; offset: number };
  readonly history: unknown;
}

interface CheckpointJson extends TrainingState {
  readonly format: 'core-train-mnist/1';
  readonly model: string;
  readonly optimizer: { readonly paramGroups: unknown; readonly state: Record<string, Record<string, unknown>> };
}

/** Split optimizer state into tensors (saved as safetensors) and plain values (saved as JSON). */
function splitOptimizer(sd: OptimizerState): { tensors: Record<string, Tensor>; json: CheckpointJson['optimizer'] } {
  const tensors: Record<string, Tensor> = {};
  const state: Record<string, Record<string, unknown>> = {};
  for (const [index, entry] of Object.entries(sd.state)) {
    state[index] = {};
    for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
      if (value instanceof Tensor) {
        tensors[`optimizer.${index}.${key}`] = value;
        state[index]![key] = { tensor: `optimizer.${index}.${key}` };
      } else state[index]![key] = value;
    }
  }
  return { tensors, json: { paramGroups: sd.paramGroups, state } };
}

function joinOptimizer(json: CheckpointJson['optimizer'], tensors: Record<string, Tensor>, path: string): OptimizerState {
  const state: Record<number, Record<string, unknown>> = {};
  for (const [index, entry] of Object.entries(json.state)) {
    state[Number(index)] = Object.fromEntries(Object.entries(entry).map(([key, value]) => {
      const ref = (value as { tensor?: string } | null)?.tensor;
      if (ref === undefined) return [key, value];
      const t = tensors[ref];
      if (!t) throw new Error(`checkpoint ${path}: the optimizer tensor '${ref}' is missing from the .safetensors file`);
      return [key, t];
    }));
  }
  return { state, paramGroups: json.paramGroups } as OptimizerState;
}

export async function saveCheckpoint(path: string, modelKind: string, model: nn.Module, optimizer: AdamW, training: TrainingState): Promise<void> {
  const { tensors, json } = splitOptimizer(optimizer.stateDict() as OptimizerState);
  const modelTensors = Object.fromEntries(Object.entries(model.stateDict()).map(([k, v]) => [`model.${k}`, v]));
  await nn.saveSafetensors(`${path}.safetensors`, { ...modelTensors, ...tensors });
  const meta: CheckpointJson = { format: 'core-train-mnist/1', model: modelKind, optimizer: json, ...training };
  await writeFile(`${path}.json`, JSON.stringify(meta, null, 1));
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The .json, checked field by field: a resume must not start from a wrong epoch or bad history. */
function checkMeta(meta: unknown, path: string, modelKind: string): CheckpointJson {
  const bad = (what: string): never => {
    throw new Error(`checkpoint ${path}.json: ${what}; the file is damaged or was not written by this program (resume from another checkpoint, or start over)`);
  };
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) bad('expected a JSON object');
  const m = meta as Record<string, unknown>;
  if (m.format !== 'core-train-mnist/1') bad(`format is ${JSON.stringify(m.format)}, not 'core-train-mnist/1'`);
  if (m.model !== modelKind) throw new Error(`checkpoint ${path} holds a '${String(m.model)}' model, but --model is '${modelKind}'`);
  if (!isCount(m.epoch)) bad(`epoch must be a non-negative integer, got ${JSON.stringify(m.epoch)}`);
  if (!isCount(m.step)) bad(`step must be a non-negative integer, got ${JSON.stringify(m.step)}`);
  const gen = m.loaderGenerator as Record<string, unknown> | null | undefined;
  if (gen === null || typeof gen !== 'object' || !Number.isSafeInteger(gen.seed) || !isCount(gen.offset)) {
    bad(`loaderGenerator must be { seed, offset } integers, got ${JSON.stringify(m.loaderGenerator)}`);
  }
  const history = m.history as Record<string, unknown> | null | undefined;
  if (history === null || typeof history !== 'object' || !Array.isArray(history.stepLosses) || !Array.isArray(history.epochs)) {
    bad('history must hold the stepLosses and epochs arrays');
  }
  if (!(history!.stepLosses as unknown[]).every((v) => typeof v === 'number')) bad('history.stepLosses must hold numbers');
  const opt = m.optimizer as Record<string, unknown> | null | undefined;
  if (opt === null || typeof opt !== 'object' || !Array.isArray(opt.paramGroups) || opt.state === null || typeof opt.state !== 'object') {
    bad('optimizer must hold paramGroups and state');
  }
  return m as unknown as CheckpointJson;
}

/**
 * Restore model and optimizer in place; returns where training stopped. Everything is checked
 * before the model changes: the .json field by field, the optimizer by its own loadStateDict
 * (restored if the model's tensors then fail their check), the model's tensors by name and shape.
 */
export async function loadCheckpoint(path: string, modelKind: string, model: nn.Module, optimizer: AdamW, device: Device): Promise<TrainingState> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(`${path}.json`, 'utf8'));
  } catch (e) {
    if (e instanceof SyntaxError) throw new Error(`checkpoint ${path}.json is not valid JSON (${e.message}); the file is damaged, e.g. by a crash while it was written`);
    throw e;
  }
  const meta = checkMeta(parsed, path, modelKind);
  const tensors = await nn.loadSafetensors(`${path}.safetensors`);
  const modelState: Record<string, Tensor> = {};
  for (const [k, v] of Object.entries(tensors)) if (k.startsWith('model.')) modelState[k.slice(6)] = v.to(device);
  const before = optimizer.stateDict();
  optimizer.loadStateDict(joinOptimizer(meta.optimizer, tensors, path) as Parameters<AdamW['loadStateDict']>[0]);
  try {
    model.loadStateDict(modelState);
  } catch (e) {
    optimizer.loadStateDict(before);
    throw e;
  }
  return { epoch: meta.epoch, step: meta.step, loaderGenerator: meta.loaderGenerator, history: meta.history };
}
