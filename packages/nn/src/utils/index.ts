// nn.utils: PyTorch's torch.nn.utils in camelCase.
export { clipGradNorm_, clipGradNormAsync_, clipGradValue_, type ClipGradNormOptions, type Parameters } from './clip-grad.js';
export { parametersToVector, vectorToParameters } from './convert-parameters.js';
export { checkpoint, type CheckpointOutput } from './checkpoint.js';
export {
  weightNorm, removeWeightNorm, spectralNorm, removeSpectralNorm, type WeightNormOptions, type SpectralNormOptions,
} from './weight-norm.js';
