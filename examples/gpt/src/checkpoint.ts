// The trained model as one safetensors file: the state dict (the tied token embedding appears under
// both of its names, `wte.weight` and `lmHead.weight`, as in PyTorch's state_dict) and, in the
// header's metadata, the model's sizes and the vocabulary, so that the file alone can be loaded
// and sampled from.
import { nn } from '@core/nn';
import { GPT, type GPTConfig } from './model.js';
import { CharVocab } from './text.js';

/** The metadata key holding the model's sizes (JSON). */
export const CONFIG_KEY = 'gpt.config';
/** The metadata key holding the vocabulary: its characters in token order (JSON array). */
export const VOCAB_KEY = 'gpt.vocab';

const INTEGER_FIELDS = ['vocabSize', 'blockSize', 'nLayer', 'nHead', 'nEmbd'] as const;

/** Write `model` and its vocabulary to `path` (a .safetensors file). */
export async function saveModel(path: string, model: GPT, vocab: CharVocab): Promise<void> {
  if (vocab.size !== model.config.vocabSize) throw new Error(`the vocabulary has ${vocab.size} characters but the model ${model.config.vocabSize} tokens`);
  await nn.saveSafetensors(path, model.stateDict(), { [CONFIG_KEY]: JSON.stringify(model.config), [VOCAB_KEY]: JSON.stringify(vocab.chars) });
}

/** The JSON under `key` in `metadata`, or an error naming the file and the key. */
function metadataJson(path: string, metadata: Record<string, string>, key: string): unknown {
  const raw = metadata[key];
  if (raw === undefined) throw new Error(`${path}: no '${key}' in the safetensors metadata: not a checkpoint written by saveModel`);
  try {
    return JSON.parse(raw) as unknown;
  } catch (e) {
    throw new Error(`${path}: the metadata '${key}' is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** The model's sizes from a checkpoint's metadata, each field checked. */
function parseConfig(path: string, value: unknown): GPTConfig {
  const c = (value ?? {}) as Record<string, unknown>;
  for (const key of INTEGER_FIELDS) {
    if (!Number.isSafeInteger(c[key]) || (c[key] as number) <= 0) throw new Error(`${path}: ${CONFIG_KEY}.${key} must be a positive integer, got ${JSON.stringify(c[key])}`);
  }
  if (typeof c.dropout !== 'number' || !(c.dropout >= 0 && c.dropout < 1)) throw new Error(`${path}: ${CONFIG_KEY}.dropout must be a number in [0, 1), got ${JSON.stringify(c.dropout)}`);
  if (typeof c.bias !== 'boolean') throw new Error(`${path}: ${CONFIG_KEY}.bias must be a boolean, got ${JSON.stringify(c.bias)}`);
  const { vocabSize, blockSize, nLayer, nHead, nEmbd, dropout, bias } = c as unknown as GPTConfig;
  return { vocabSize, blockSize, nLayer, nHead, nEmbd, dropout, bias };
}

/** A model and vocabulary `saveModel` wrote, on the cpu, in eval mode. */
export async function loadModel(path: string): Promise<{ model: GPT; vocab: CharVocab }> {
  const file = await nn.safeOpen(path);
  let metadata: Record<string, string>;
  try {
    metadata = file.metadata();
  } finally {
    await file.close();
  }
  const config = parseConfig(path, metadataJson(path, metadata, CONFIG_KEY));
  const chars = metadataJson(path, metadata, VOCAB_KEY);
  const single = (c: unknown) => typeof c === 'string' && [...c].length === 1;
  const vocab = Array.isArray(chars) && chars.every(single) ? new CharVocab(chars as string[]) : null;
  if (vocab?.size !== config.vocabSize || (chars as unknown[]).length !== config.vocabSize) {
    throw new Error(`${path}: ${VOCAB_KEY} must list ${config.vocabSize} distinct single characters`);
  }
  const model = new GPT(config);
  model.loadStateDict(await nn.loadSafetensors(path));
  return { model: model.eval(), vocab };
}
