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

/** Restore model and optimizer in place; returns where training stopped. */
export async function loadCheckpoint(path: string, modelKind: string, model: nn.Module, optimizer: AdamW, device: Device): Promise<TrainingState> {
  const meta = JSON.parse(await readFile(`${path}.json`, 'utf8')) as CheckpointJson;
  if (meta.format !== 'core-train-mnist/1') throw new Error(`${path}.json is not a train-mnist checkpoint`);
  if (meta.model !== modelKind) throw new Error(`checkpoint ${path} holds a '${meta.model}' model, but --model is '${modelKind}'`);
  const tensors = await nn.loadSafetensors(`${path}.safetensors`);
  const modelState: Record<string, Tensor> = {};
  for (const [k, v] of Object.entries(tensors)) if (k.startsWith('model.')) modelState[k.slice(6)] = v.to(device);
  model.loadStateDict(modelState);
  optimizer.loadStateDict(joinOptimizer(meta.optimizer, tensors, path) as Parameters<AdamW['loadStateDict']>[0]);
  return { epoch: meta.epoch, step: meta.step, loaderGenerator: meta.loaderGenerator, history: meta.history };
}
