// nn.Parameter: a mark on an ordinary Tensor, not a subclass. `Parameter(t)` returns a new leaf
// over t's memory (like torch.nn.Parameter) that requires grad, and remembers it in a WeakSet;
// Module finds its parameters by this mark when it walks its own fields.
import { Tensor } from '@core/tensor';

const parameters = new WeakSet<Tensor>();

/** A parameter is a Tensor; the type alias documents intent in field declarations. */
export type Parameter = Tensor;

/**
 * Mark a tensor as a module parameter: a new leaf tensor sharing `data`'s memory, with
 * `requiresGrad` set (only floating tensors can require grad). Assigning it to a Module field
 * registers it.
 */
export function Parameter(data: Tensor, requiresGrad = true): Parameter {
  if (!(data instanceof Tensor)) {
    throw new TypeError(`nn.Parameter(): expected a Tensor, got ${data === null ? 'null' : typeof data}`);
  }
  const p = data.detach();
  if (requiresGrad) p.requiresGrad_(true);
  parameters.add(p);
  return p;
}

/** Whether `value` was made by `nn.Parameter()`. */
export function isParameter(value: unknown): value is Parameter {
  return value instanceof Tensor && parameters.has(value);
}
