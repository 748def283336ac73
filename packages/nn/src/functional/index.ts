// The functional API, `import { F } from '@core/nn'`: PyTorch's torch.nn.functional in camelCase.
import type { Tensor } from '@core/tensor';

export {
  relu, gelu, tanh, sigmoid, leakyRelu, silu, softmax, logSoftmax, elu, selu, softplus, mish, hardswish, hardsigmoid, prelu, glu, softsign,
  type GeluApproximate, type SoftmaxOptions, type SoftplusOptions,
} from './activation.js';
export { linear } from './linear.js';
export {
  conv1d, conv2d, convTranspose1d, convTranspose2d,
  type Conv1dOptions, type Conv2dOptions, type Conv1dPadding, type Conv2dPadding, type ConvTranspose1dOptions, type ConvTranspose2dOptions, type Single,
} from './conv.js';
export { unfold, fold, type UnfoldOptions } from './fold.js';
export {
  maxPool1d, maxPool2d, avgPool1d, avgPool2d, adaptiveAvgPool1d, adaptiveAvgPool2d, adaptiveMaxPool1d, adaptiveMaxPool2d,
  type MaxPool1dOptions, type MaxPool2dOptions, type AvgPool1dOptions, type AvgPool2dOptions, type AdaptiveMaxPoolOptions, type AdaptiveSize2d,
} from './pooling.js';
export { interpolate, pixelShuffle, pixelUnshuffle, type InterpolateMode, type InterpolateOptions } from './resample.js';
export { dropout, dropout1d, dropout2d, alphaDropout, type DropoutOptions, type DropoutArgs } from './dropout.js';
export {
  layerNorm, rmsNorm, batchNorm, instanceNorm, groupNorm, normalize,
  type RMSNormOptions, type InstanceNormOptions, type GroupNormOptions, type NormalizeOptions,
} from './normalization.js';
export { embedding, embeddingBag, type EmbeddingArgs, type EmbeddingBagArgs, type EmbeddingBagMode } from './embedding.js';
export { cosineSimilarity, type CosineSimilarityOptions } from './distance.js';
export { crossEntropy, nllLoss, type CrossEntropyOptions, type NLLLossOptions } from './cross-entropy.js';
export {
  mseLoss, l1Loss, smoothL1Loss, huberLoss, klDiv, cosineEmbeddingLoss, marginRankingLoss, binaryCrossEntropy, binaryCrossEntropyWithLogits,
  type ReductionOptions, type SmoothL1LossOptions, type HuberLossOptions, type KLDivOptions, type KLDivReduction, type MarginLossOptions,
  type BCEOptions, type BCEWithLogitsOptions,
} from './loss.js';
export { pad, type PadMode } from './pad.js';
export { scaledDotProductAttention, type ScaledDotProductAttentionOptions } from './attention.js';
export { oneHot, oneHotAsync } from './one-hot.js';
export { ctcLoss, type CTCLossOptions, type CTCLengths } from './ctc.js';
export { lstm, gru, rnnTanh, rnnRelu, lstmCell, gruCell, rnnTanhCell, rnnReluCell } from '../layers/rnn.js';

/** Merge dims startDim..endDim into one (torch.flatten; nn.Flatten starts at dim 1). */
export function flatten(input: Tensor, startDim = 0, endDim = -1): Tensor {
  return input.flatten(startDim, endDim);
}
