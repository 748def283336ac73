// What loadStateDict accepts for each key of a saved per-parameter state: every optimizer lists
// its keys, so a bad entry fails at load (naming the entry) instead of turning the parameters NaN
// or failing at the next step.
import { ShapeError, Tensor, ValueError } from '@core/tensor';

/** How `loadStateDict` checks one key of a saved per-parameter state. */
export interface StateField {
  /** Whether every saved state must have this key (else it may be absent). */
  readonly required: boolean;
  /** Throw a typed error naming `where` when `value` can't be this key's value for `param`. */
  check(value: unknown, param: Tensor, where: string): void;
}

/** An optimizer's per-parameter state keys and their checks. */
export type StateFields = Readonly<Record<string, StateField>>;

/** A short description of a bad value for an error message. */
export function describeValue(v: unknown): string {
  if (v instanceof Tensor) return `a tensor of shape [${v.shape.join(', ')}]`;
  if (Array.isArray(v)) {
    const shown = v.every((x) => typeof x === 'number' || typeof x === 'string' || x === null) ? JSON.stringify(v) : '';
    return shown !== '' && shown.length <= 60 ? shown : `an array of length ${v.length}`;
  }
  if (typeof v === 'function') return 'a function';
  return JSON.stringify(v) ?? String(v);
}

/**
 * A counter (`step`, LBFGS's `funcEvals`): a non-negative integer, as a number or a one-element
 * CPU tensor (PyTorch saves `step` as a tensor).
 */
export function count(required = true): StateField {
  return {
    required,
    check(v, _param, where) {
      const n = v instanceof Tensor ? (v.numel() === 1 && v.device.type === 'cpu' ? Number(v.dataSync()[0]) : NaN) : v;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        throw new ValueError(`${where} must be a non-negative integer, got ${describeValue(v)}`);
      }
    },
  };
}

/** A tensor whose shape `expected(param)` gives; `what` names that shape in the error. */
export function tensorOfShape(required: boolean, expected: (param: Tensor) => readonly number[], what: (shape: readonly number[]) => string): StateField {
  return {
    required,
    check(v, param, where) {
      if (!(v instanceof Tensor)) throw new TypeError(`${where} must be a tensor, got ${describeValue(v)}`);
      const shape = expected(param);
      if (v.shape.length !== shape.length || v.shape.some((d, i) => d !== shape[i])) {
        throw new ShapeError(`${where} has shape [${v.shape.join(', ')}], but ${what(shape)}`, 'loadStateDict');
      }
    },
  };
}

/** A tensor of its parameter's shape (moments, momentum buffers, accumulators). */
export function likeParam(required = true): StateField {
  return tensorOfShape(required, (p) => p.shape, (shape) => `the parameter has shape [${shape.join(', ')}]`);
}

/** A number with `ok(value)`; `want` says what it must be. */
export function numberField(required: boolean, ok: (v: number) => boolean, want: string): StateField {
  return {
    required,
    check(v, _param, where) {
      if (typeof v !== 'number') throw new TypeError(`${where} must be a number, got ${describeValue(v)}`);
      if (!ok(v)) throw new ValueError(`${where} must be ${want}, got ${v}`);
    },
  };
}

/** An array whose every item passes `item`. */
export function listOf(required: boolean, item: StateField): StateField {
  return {
    required,
    check(v, param, where) {
      if (!Array.isArray(v)) throw new TypeError(`${where} must be an array, got ${describeValue(v)}`);
      v.forEach((x, i) => item.check(x, param, `${where}[${i}]`));
    },
  };
}
