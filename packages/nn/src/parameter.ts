// nn.Parameter: a mark on an ordinary Tensor, not a subclass. `Parameter(t)` returns a new leaf
// over t's memory (like torch.nn.Parameter) that requires grad, and remembers it in a WeakSet;
// Module finds its parameters by this mark when it walks its own fields.
//
// `Parameter` is a function and a type, as PyTorch's class is both (`const w: nn.Parameter =
// nn.Parameter(t)`). Both are declared as ParameterTensor and exported as Parameter: the bundler
// of the declaration files keeps only one meaning of a name re-exported through the `nn`
// namespace when the local and exported names are the same (test/built-types.test.ts checks it).
import { Tensor } from '@core/tensor';

const parameters = new WeakSet<Tensor>();

/** A parameter is a Tensor; the type documents intent in field declarations (`weight: nn.Parameter`). */
interface ParameterTensor extends Tensor {}

/**
 * Mark a tensor as a module parameter: a new leaf tensor sharing `data`'s memory, with
 * `requiresGrad` set (only floating tensors can require grad). Assigning it to a Module field
 * registers it.
 */
function ParameterTensor(data: Tensor, requiresGrad = true): ParameterTensor {
  if (!(data instanceof Tensor)) {
    throw new TypeError(`nn.Parameter(): expected a Tensor, got ${data === null ? 'null' : typeof data}`);
  }
  const p = data.detach();
  if (requiresGrad) p.requiresGrad_(true);
  parameters.add(p);
  return p;
}

export { ParameterTensor as Parameter };

/** Whether `value` was made by `nn.Parameter()`. */
export function isParameter(value: unknown): value is ParameterTensor {
  return value instanceof Tensor && parameters.has(value);
}
