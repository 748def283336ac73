// nn.utils.parametersToVector and nn.utils.vectorToParameters: all parameters as one flat vector
// and back, in the order given (PyTorch's torch.nn.utils.convert_parameters).
import { cat, checkSameDevice, ShapeError, Tensor } from '@core/tensor';
import { shapeText } from '../internal/args.js';
import { parameterList, type Parameters } from './clip-grad.js';

function checkOneDevice(params: readonly Tensor[], op: string): void {
  checkSameDevice(op, params.map((tensor, i) => ({ name: `parameters[${i}]`, tensor })));
}

/** Every parameter flattened and joined into one 1-D tensor, in order (differentiable, like PyTorch's). */
export function parametersToVector(parameters: Parameters): Tensor {
  const params = parameterList(parameters, 'parametersToVector');
  checkOneDevice(params, 'parametersToVector');
  return cat(params.map((p) => p.reshape([-1])));
}

/**
 * Point each parameter at its slice of the 1-D `vec`, in order, as PyTorch's `param.data = …`:
 * the parameter objects stay, and share `vec`'s memory afterwards (and move to its device).
 */
export function vectorToParameters(vec: Tensor, parameters: Parameters): void {
  if (!(vec instanceof Tensor)) throw new TypeError(`vectorToParameters(): expected a Tensor, but got: ${vec === null ? 'null' : typeof vec}`);
  const params = parameterList(parameters, 'vectorToParameters');
  checkOneDevice(params, 'vectorToParameters');
  const needed = params.reduce((n, p) => n + p.numel(), 0);
  if (vec.ndim !== 1 || vec.shape[0]! < needed) {
    throw new ShapeError(`vectorToParameters(): vec must be 1-D with at least ${needed} elements (the parameters' total), got ${shapeText(vec.shape)}`, 'vectorToParameters');
  }
  const source = vec.detach();
  let offset = 0;
  for (const p of params) {
    p.set_(source.narrow(0, offset, p.numel()).reshape(p.shape));
    offset += p.numel();
  }
}
