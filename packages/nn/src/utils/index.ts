// nn.utils: PyTorch's torch.nn.utils in camelCase.
export { clipGradNorm_, clipGradNormAsync_, clipGradValue_, type ClipGradNormOptions, type Parameters } from './clip-grad.js';
export { parametersToVector, vectorToParameters } from './convert-parameters.js';
