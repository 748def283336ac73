/**
 * PyTorch's torch.nn for @core/tensor: `nn` (Module, layers, losses, init, safetensors I/O) and
 * `F` (the functional ops).
 *
 * @module \@core/nn
 */
// @core/nn: PyTorch's torch.nn for @core/tensor.
//   import { nn, F } from '@core/nn';
//   const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10));
//   const loss = F.crossEntropy(model.forward(x), y);
/** Modules, layers, losses, initialisers (`nn.init`) and safetensors I/O: PyTorch's `torch.nn`. */
export * as nn from './nn.js';
/** The functional ops: PyTorch's `torch.nn.functional`. */
export * as F from './functional/index.js';
