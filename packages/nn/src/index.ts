// @core/nn: PyTorch's torch.nn for @core/tensor.
//   import { nn, F } from '@core/nn';
//   const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10));
//   const loss = F.crossEntropy(model.forward(x), y);
export * as nn from './nn.js';
export * as F from './functional/index.js';
