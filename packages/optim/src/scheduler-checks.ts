// Checks of scheduler options and of the fields of a loaded scheduler state dict: the same checks
// run in the constructor and in loadStateDict, with errors that name the scheduler and the field
// (TypeError for a value of the wrong type, ValueError for one out of range).
import { ValueError } from '@core/tensor';
import { describeValue } from './state-fields.js';

/** What a field must be (`want`), and what is wrong with a value: its type, its range, or nothing. */
export interface Check {
  /** What the field must be, for the error message. */
  readonly want: string;
  /** 'type' for a value of the wrong type, 'range' for one out of range, undefined when fine. */
  problem(v: unknown): 'type' | 'range' | undefined;
}

/** A number with `ok(v)`. */
export function num(want: string, ok: (v: number) => boolean = Number.isFinite): Check {
  return { want, problem: (v) => (typeof v !== 'number' ? 'type' : ok(v) ? undefined : 'range') };
}

export const finite = num('a finite number');
export const positive = num('a positive finite number', (v) => v > 0 && Number.isFinite(v));
export const nonNegative = num('a finite number ≥ 0', (v) => v >= 0 && Number.isFinite(v));
export const positiveInt = num('a positive integer', (v) => Number.isSafeInteger(v) && v > 0);
export const nonNegativeInt = num('a non-negative integer', (v) => Number.isSafeInteger(v) && v >= 0);
/** The epoch index a scheduler starts from or reached: -1 before the first step. */
export const epochIndex = num('an integer ≥ -1', (v) => Number.isSafeInteger(v) && v >= -1);
/** (0, 1]: a factor that scales the lr down and later back up (ConstantLR, LinearLR's start), so 0 is out. */
export const lrFactor = num('a number in (0, 1]', (v) => v > 0 && v <= 1);
export const unitClosed = num('a number in [0, 1]', (v) => v >= 0 && v <= 1);

/** One of `values`. */
export function oneOf(...values: readonly string[]): Check {
  return {
    want: values.map((v) => `'${v}'`).join(' or '),
    problem: (v) => (typeof v !== 'string' ? 'type' : values.includes(v) ? undefined : 'range'),
  };
}

export const bool: Check = { want: 'true or false', problem: (v) => (typeof v === 'boolean' ? undefined : 'type') };

/** `check`, or null. */
export function nullable(check: Check): Check {
  return { want: `${check.want} or null`, problem: (v) => (v === null ? undefined : check.problem(v)) };
}

/** An array of `length` items (any length when undefined), each passing `item`. */
export function list(item: Check, length?: number): Check {
  return {
    want: `an array of ${length ?? 'any number of'} items, each ${item.want}`,
    problem(v) {
      if (!Array.isArray(v)) return 'type';
      if (length !== undefined && v.length !== length) return 'range';
      for (const x of v) {
        const bad = item.problem(x);
        if (bad) return bad;
      }
      return undefined;
    },
  };
}

/** Throw for the first field of `values` that fails its check, naming `owner` and the field. */
export function checkFields(owner: string, checks: Readonly<Record<string, Check>>, values: object): void {
  for (const [field, check] of Object.entries(checks)) {
    const value = (values as Record<string, unknown>)[field];
    const bad = check.problem(value);
    if (bad) throw new (bad === 'type' ? TypeError : ValueError)(`${owner}: ${field} must be ${check.want}, got ${describeValue(value)}`);
  }
}

/** Run `fn`; an error it throws gets `prefix` at the front of its message. */
export function prefixErrors<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Error) e.message = `${prefix}${e.message}`;
    throw e;
  }
}
