// Inputs and parameter values made by one formula in TypeScript and in the Python that computed
// the PyTorch 1.13 reference values of attention.test.ts and transformer.test.ts:
//
//   def seq(shape, c, scale=1.0):  # scale·sin(0.37·i + c) over the flat index i
//       return torch.tensor([scale * math.sin(0.37 * i + c) for i in range(math.prod(shape))], dtype=torch.float64).reshape(shape)
//   def fill(module):              # state-dict entry j (in order) ← seq(shape, 0.5 + j, 0.5)
//       with torch.no_grad():
//           for j, (name, p) in enumerate(module.state_dict(keep_vars=True).items()): p.copy_(seq(p.shape, 0.5 + j, 0.5))
//       return list(module.state_dict().keys())
//   out = lambda t: [float('%.10g' % v) for v in t.detach().flatten().tolist()]
import { expect } from 'vitest';
import { float32, tensor, type DType, type Tensor } from '@core/tensor';
import type { nn } from '../src/index.js';

/** scale·sin(0.37·i + c) over the flat index i, in `shape` (Python's `seq`). */
export function seq(shape: readonly number[], c: number, scale = 1, dtype: DType = float32): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(Array.from({ length: n }, (_, i) => scale * Math.sin(0.37 * i + c)), { dtype }).reshape(shape);
}

/**
 * Python's `fill`: state-dict entry j ← seq(shape, 0.5 + j, 0.5), after checking that the state
 * dict's keys are PyTorch's (`torchKeys`) in PyTorch's order.
 */
export function fill(module: nn.AnyModule, torchKeys: readonly string[]): void {
  const state = module.stateDict();
  expect(Object.keys(state)).toEqual(torchKeys);
  module.loadStateDict(Object.fromEntries(Object.entries(state).map(([key, p], j) => [key, seq(p.shape, 0.5 + j, 0.5, p.dtype)])));
}
