export { KVCache, type CausalLM, type CausalLMForwardOptions } from './causal-lm.js';
export {
  LlamaForCausalLM, LlamaModel, LlamaDecoderLayer, LlamaAttention, LlamaMLP, LlamaRMSNorm, llamaConfigFromJson, resolveLlamaConfig,
  type LlamaConfig, type ResolvedLlamaConfig,
} from './llama.js';
export { causalMask } from './causal-mask.js';
export {
  resolvePretrained, loadPretrainedWeights, PretrainedError, type PretrainedErrorReason, type PretrainedOptions, type LoadWeightsOptions, type PretrainedFolder, type PretrainedSource,
} from './pretrained.js';
export { modelFiles, hubFiles, blobFiles, isModelFiles, type ModelFiles } from './model-files.js';
export { folderFiles } from './platform.js';
export {
  GPT2LMHeadModel, GPT2Model, GPT2Block, GPT2Attention, GPT2MLP, Conv1D, gpt2ConfigFromJson, resolveGPT2Config, gpt2CheckpointKey, GPT2_DEFAULTS,
  type GPT2Config, type GPT2Activation,
} from './gpt2.js';
export { generate, maskTopK, maskTopP, type GenerateOptions } from './generate.js';
export { Tokenizer, type EncodeOptions, type EncodeBatchOptions, type DecodeOptions, type BatchEncoding } from './tokenizer.js';
export {
  BertModel, BertForMaskedLM, BertEmbeddings, BertSelfAttention, BertResidualOutput, BertAttention, BertIntermediate, BertLayer, BertEncoder, BertPooler,
  BertPredictionHeadTransform, BertLMPredictionHead, BertOnlyMLMHead, bertConfigFromJson, resolveBertConfig,
  type BertConfig, type ResolvedBertConfig, type BertActivation, type BertForwardOptions, type BertModelOutput,
} from './bert.js';
