// PyTorch's torch.autograd, as the `autograd` namespace of @core/tensor (API.md's naming rule:
// `torch.autograd.x` → `autograd.x`).
export { grad, type GradOptions, type GradFlags, type GradOutputs, type Tensors } from './grad.js';
export { Function, FunctionCtx, type FunctionDefinition, type InputGradient } from './function.js';
export { gradcheck, gradgradcheck, type GradcheckOptions, type GradcheckResult } from './gradcheck.js';
