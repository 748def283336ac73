// Loading a state dict into a module's tensors: PyTorch's checks and messages
// ("Error(s) in loading state_dict for Net: …"), then in-place copies that keep the objects.
import { noGrad, Tensor, TensorError } from '@core/tensor';
import { shapeText, sameShape } from './internal/args.js';

/** Parameters and buffers by dotted name ("0.weight", "bn.running_mean"), in registration order. */
export type StateDict = Record<string, Tensor>;

/** The keys that did not line up (returned by `loadStateDict`, also when not strict). */
export interface IncompatibleKeys {
  /** Keys the module has and the state dict lacks. */
  readonly missingKeys: string[];
  /** Keys the state dict has and the module lacks. */
  readonly unexpectedKeys: string[];
}

/** A key whose tensor has a different shape in the checkpoint than in the model. */
export interface SizeMismatch {
  /** The dotted name. */
  readonly key: string;
  /** The shape in the state dict. */
  readonly checkpointShape: readonly number[];
  /** The shape in the module. */
  readonly modelShape: readonly number[];
}

/** A state dict that does not fit the module; the fields list what went wrong. */
export class StateDictError extends TensorError implements IncompatibleKeys {
  constructor(
    message: string,
    /** Keys the module has and the state dict lacks. */
    readonly missingKeys: string[],
    /** Keys the state dict has and the module lacks. */
    readonly unexpectedKeys: string[],
    /** Keys whose shapes differ. */
    readonly sizeMismatches: SizeMismatch[],
  ) {
    super(message);
  }
}

const quoted = (keys: readonly string[]) => keys.map((k) => `"${k}"`).join(', ');

/**
 * Check `source` against `target` (the module's own tensors by name) and copy it in. A key of
 * `source` that `target` lacks is read as `currentKey(key)` when `target` has that key and
 * `source` does not (keys saved under an earlier name).
 */
export function loadStateDictInto(
  moduleName: string, target: StateDict, source: StateDict, strict: boolean, currentKey: (key: string) => string = (key) => key,
): IncompatibleKeys {
  if (source === null || typeof source !== 'object' || source instanceof Tensor) {
    throw new TypeError(`Expected stateDict to be a Record<string, Tensor>, got ${source === null ? 'null' : typeof source}`);
  }
  const has = (dict: StateDict, key: string) => Object.prototype.hasOwnProperty.call(dict, key);
  const given = new Map<string, unknown>();
  for (const [key, value] of Object.entries(source)) {
    const renamed = has(target, key) ? key : currentKey(key);
    given.set(has(target, renamed) && !has(source, renamed) ? renamed : key, value);
  }
  const missingKeys = Object.keys(target).filter((k) => !given.has(k));
  const unexpectedKeys = [...given.keys()].filter((k) => !has(target, k));
  const errors: string[] = [];
  const sizeMismatches: SizeMismatch[] = [];
  for (const [key, own] of Object.entries(target)) {
    if (!given.has(key)) continue;
    const value = given.get(key);
    if (!(value instanceof Tensor)) {
      errors.push(`While copying the parameter named "${key}", expected a Tensor from checkpoint but received ${value === null ? 'null' : typeof value}.`);
    } else if (!sameShape(value.shape, own.shape)) {
      sizeMismatches.push({ key, checkpointShape: value.shape, modelShape: own.shape });
      errors.push(`size mismatch for ${key}: copying a param with shape ${shapeText(value.shape)} from checkpoint, the shape in current model is ${shapeText(own.shape)}.`);
    }
  }
  if (strict) {
    if (unexpectedKeys.length > 0) errors.unshift(`Unexpected key(s) in state_dict: ${quoted(unexpectedKeys)}.`);
    if (missingKeys.length > 0) errors.unshift(`Missing key(s) in state_dict: ${quoted(missingKeys)}.`);
  }
  if (errors.length > 0) {
    throw new StateDictError(`Error(s) in loading state_dict for ${moduleName}:\n\t${errors.join('\n\t')}`, missingKeys, unexpectedKeys, sizeMismatches);
  }
  // Checked first, copied after: a failed load leaves the module untouched.
  noGrad(() => {
    for (const [key, own] of Object.entries(target)) {
      const value = given.get(key);
      if (value instanceof Tensor && value !== own) own.copy_(value);
    }
  });
  return { missingKeys, unexpectedKeys };
}
