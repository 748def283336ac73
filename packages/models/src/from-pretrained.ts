// The common body of the models' static fromPretrained: resolve the checkpoint, build the model
// from its config.json, load its weights on the requested device and dtype, switch to eval mode
// (as Hugging Face's from_pretrained does).
import type { nn } from '@core/nn';
import { readJson } from './model-files.js';
import { loadPretrainedWeights, pretrainedFiles, type LoadWeightsOptions, type PretrainedOptions, type PretrainedSource } from './pretrained.js';

/** How an architecture reads a checkpoint: its model from config.json, and the key mapping of its files. */
export interface PretrainedRecipe<M extends nn.AnyModule> {
  /** The model described by the parsed config.json. */
  readonly build: (config: Record<string, unknown>) => M;
  /** File key → model key (undefined: skip the tensor), and the model keys tied to another. */
  readonly keys: (model: M) => Pick<LoadWeightsOptions, 'renameKey' | 'tiedKeys'>;
}

/**
 * The model of the checkpoint `source` (a Hub repo id, a local folder in Node, ModelFiles or Blobs
 * by file name), on `options.device` in `options.dtype`, in eval mode.
 */
export async function pretrainedModel<M extends nn.AnyModule>(source: PretrainedSource, options: PretrainedOptions, recipe: PretrainedRecipe<M>): Promise<M> {
  const { files } = await pretrainedFiles('fromPretrained', source, options);
  const model = recipe.build(await readJson(files, 'config.json'));
  await loadPretrainedWeights(model, files, { device: options.device, dtype: options.dtype, ...recipe.keys(model) });
  model.eval();
  return model;
}
