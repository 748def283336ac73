// Everything under `nn` (`import { nn } from '@core/nn'`): modules, layers, losses, init and
// safetensors I/O. A namespace re-export, so `nn.Module` works as a value and as a type.
export { Module, type AnyModule, type ModuleTarget, type StateDict, type IncompatibleKeys } from './module.js';
export { StateDictError, type SizeMismatch } from './state-dict.js';
export { Parameter, isParameter } from './parameter.js';
export { Linear, Identity, type LinearOptions } from './layers/linear.js';
export { Conv2d, type Conv2dLayerOptions } from './layers/conv.js';
export { MaxPool2d } from './layers/pooling.js';
export { ReLU, GELU, Tanh, Sigmoid, LeakyReLU, SiLU, Softmax, LogSoftmax } from './layers/activation.js';
export { Dropout } from './layers/dropout.js';
export { LayerNorm, BatchNorm1d, BatchNorm2d, type LayerNormOptions, type BatchNormOptions } from './layers/normalization.js';
export { Embedding, type EmbeddingOptions } from './layers/embedding.js';
export { Flatten } from './layers/flatten.js';
export { Sequential, type TensorModule } from './layers/sequential.js';
export { CrossEntropyLoss, NLLLoss, MSELoss, BCELoss, BCEWithLogitsLoss } from './layers/loss.js';
/** PyTorch's initialisers (`torch.nn.init`): in place, under noGrad, from a seeded generator. */
export * as init from './init.js';
export {
  saveSafetensors, loadSafetensors, serializeSafetensors, serializeSafetensorsAsync, deserializeSafetensors,
  parseSafetensorsHeader, SafetensorsError, type SafetensorsEntry, type SafetensorsHeader, type LoadSafetensorsOptions,
} from './safetensors.js';
export type { Reduction, Pair, FactoryOptions } from './internal/args.js';
