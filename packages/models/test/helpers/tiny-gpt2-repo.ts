// A tiny GPT-2 as a Hub repo holds it, for tests that download, load and fine-tune one: config.json,
// model.safetensors (random weights, seeded; no lm_head.weight, as save_pretrained writes GPT-2)
// and tokenizer.json (this package's small byte-level BPE test tokenizer, whose size is the vocabulary's).
import '@core/backend-cpu';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { nn } from '@core/nn';
import { manualSeed } from '@core/tensor';
import { GPT2LMHeadModel, Tokenizer } from '../../src/index.js';

const TOKENIZER = fileURLToPath(new URL('../fixtures/tokenizer-bpe/tokenizer.json', import.meta.url));

/** The files of a tiny GPT-2 repo by name: 2 layers of width 32, 4 heads, a context of 64 tokens, weights drawn after `manualSeed(seed)`. */
export async function tinyGpt2RepoFiles(seed = 7): Promise<Record<string, string | Uint8Array>> {
  const tokenizerJson = await readFile(TOKENIZER, 'utf8');
  const vocabSize = new Tokenizer(JSON.parse(tokenizerJson) as Record<string, unknown>).vocabSize;
  const config = {
    model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], vocab_size: vocabSize, n_positions: 64, n_embd: 32, n_layer: 2, n_head: 4,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0,
  };
  manualSeed(seed);
  const model = GPT2LMHeadModel.fromConfigJson(config);
  const weights = Object.fromEntries(Object.entries(model.stateDict()).filter(([key]) => key !== 'lm_head.weight'));
  return { 'config.json': JSON.stringify(config), 'model.safetensors': nn.serializeSafetensors(weights, { format: 'pt' }), 'tokenizer.json': tokenizerJson };
}
