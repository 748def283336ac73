// Everything under `nn` (`import { nn } from '@core/nn'`): modules, layers, losses, init and
// safetensors I/O. A namespace re-export, so `nn.Module` works as a value and as a type.
export { Module, type AnyModule, type ModuleTarget, type RegisteredNames, type StateDict, type IncompatibleKeys } from './module.js';
export type { ForwardPreHook, ForwardHook, FullBackwardHook, ModuleGradients } from './hooks.js';
export { StateDictError, type SizeMismatch } from './state-dict.js';
export { Parameter, isParameter } from './parameter.js';
export { Linear, Identity, type LinearOptions } from './layers/linear.js';
export {
  Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
  type Conv1dLayerOptions, type Conv2dLayerOptions, type ConvTranspose1dLayerOptions, type ConvTranspose2dLayerOptions, type ConvPaddingMode,
} from './layers/conv.js';
export { Unfold, Fold } from './layers/fold.js';
export {
  MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
} from './layers/pooling.js';
export {
  Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle, type UpsampleOptions, type UpsamplingOptions,
} from './layers/resample.js';
export {
  ReLU, GELU, Tanh, Sigmoid, LeakyReLU, SiLU, Softmax, LogSoftmax, ELU, SELU, Softplus, Mish, Hardswish, Hardsigmoid, PReLU, GLU, Softsign,
  type PReLUOptions,
} from './layers/activation.js';
export { Dropout, Dropout1d, Dropout2d, AlphaDropout } from './layers/dropout.js';
export {
  LayerNorm, RMSNorm, GroupNorm, BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d,
  type LayerNormOptions, type RMSNormOptions, type GroupNormOptions, type BatchNormOptions,
} from './layers/normalization.js';
export { Embedding, EmbeddingBag, type EmbeddingOptions, type EmbeddingBagOptions } from './layers/embedding.js';
export { Flatten } from './layers/flatten.js';
export { Sequential, type TensorModule } from './layers/sequential.js';
export { ModuleList, ModuleDict, ParameterList, ParameterDict } from './layers/container.js';
export {
  RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell,
  type RNNBaseOptions, type RNNOptions, type LSTMOptions, type GRUOptions, type RNNCellOptions, type RNNNonlinearity,
} from './layers/rnn.js';
export { MultiheadAttention, type MultiheadAttentionOptions, type MultiheadAttentionForwardOptions } from './layers/attention.js';
export {
  TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder, Transformer,
  type TransformerActivation, type TransformerLayerOptions, type TransformerOptions, type TransformerEncoderLayerForwardOptions,
  type TransformerEncoderForwardOptions, type TransformerDecoderLayerForwardOptions, type TransformerForwardOptions,
  type TransformerEncoderLayerModule, type TransformerDecoderLayerModule, type TransformerEncoderModule, type TransformerDecoderModule,
} from './layers/transformer.js';
export {
  CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, KLDivLoss, CosineEmbeddingLoss, MarginRankingLoss, BCELoss, BCEWithLogitsLoss, CTCLoss,
} from './layers/loss.js';
/** PyTorch's `torch.nn.utils`: gradient clipping and parameters as one vector. */
export * as utils from './utils/index.js';
/** PyTorch's initialisers (`torch.nn.init`): in place, under noGrad, from a seeded generator. */
export * as init from './init.js';
export {
  saveSafetensors, loadSafetensors, safeOpen, serializeSafetensors, serializeSafetensorsAsync, deserializeSafetensors,
  parseSafetensorsHeader, SafetensorsError, type SafetensorsEntry, type SafetensorsHeader, type LoadSafetensorsOptions,
  type SafetensorsFile,
} from './safetensors.js';
export type { Reduction, Pair, FactoryOptions, Args } from './internal/args.js';
