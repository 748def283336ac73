// The functional API, `import { F } from '@core/nn'`: PyTorch's torch.nn.functional in camelCase.
import type { Tensor } from '@core/tensor';

export { relu, gelu, tanh, sigmoid, leakyRelu, silu, softmax, logSoftmax, type GeluApproximate, type SoftmaxOptions } from './activation.js';
export { linear } from './linear.js';
export { conv2d, type Conv2dOptions, type Conv2dPadding } from './conv.js';
export { maxPool2d, type MaxPool2dOptions } from './pooling.js';
export { dropout, type DropoutOptions } from './dropout.js';
export { layerNorm, batchNorm } from './normalization.js';
export { embedding } from './embedding.js';
export { crossEntropy, nllLoss, type CrossEntropyOptions, type NLLLossOptions } from './cross-entropy.js';
export { mseLoss, binaryCrossEntropy, binaryCrossEntropyWithLogits, type BCEOptions, type BCEWithLogitsOptions } from './loss.js';
export { pad, type PadMode } from './pad.js';

/** Merge dims startDim..endDim into one (torch.flatten; nn.Flatten starts at dim 1). */
export function flatten(input: Tensor, startDim = 0, endDim = -1): Tensor {
  return input.flatten(startDim, endDim);
}
