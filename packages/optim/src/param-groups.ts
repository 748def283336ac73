// Turning an optimizer's constructor arguments into parameter groups, PyTorch style: a list of
// tensors is one group; a list of `{ params, ...overrides }` objects is one group each; the
// hyperparameters after `params` bind by position or by name, as Python binds them.
import { bindArguments, Tensor, ValueError } from '@core/tensor';
import { checkOptionNames } from './checks.js';

/** The fields LR schedulers keep in a parameter group (PyTorch's `initial_lr`, `max_lr`, …). */
export interface SchedulerGroupFields {
  /** The lr the schedule started from (PyTorch's `initial_lr`), recorded by the first scheduler. */
  initialLr?: number;
  /** OneCycleLR: the peak lr. */
  maxLr?: number;
  /** OneCycleLR: the final lr. */
  minLr?: number;
  /** OneCycleLR: the momentum (or beta1) at the start and end of the cycle. */
  maxMomentum?: number;
  /** OneCycleLR: the momentum (or beta1) at the peak lr. */
  baseMomentum?: number;
}

/** The names of {@link SchedulerGroupFields}: a group may carry them besides the optimizer's options. */
export const SCHEDULER_GROUP_FIELDS: readonly string[] = ['initialLr', 'maxLr', 'minLr', 'maxMomentum', 'baseMomentum'];

/** A parameter group as the optimizer holds it: its tensors, its options, and scheduler fields. */
export type ParamGroup<O extends object> = O & SchedulerGroupFields & {
  /** The group's parameters. */
  params: Tensor[];
};

/** A group as a user passes it: tensors plus any options that override the optimizer's defaults (and scheduler fields, when resuming a schedule). */
export type ParamGroupInput<O extends object> = Partial<O> & SchedulerGroupFields & {
  /** The group's parameters: an iterable of tensors, or one tensor. */
  params: Iterable<Tensor> | Tensor;
};

/** What an optimizer's constructor takes: tensors, or group objects. */
export type ParamsInput<O extends object> = Iterable<Tensor> | Iterable<ParamGroupInput<O>>;

/** Split the constructor's `params` into group inputs, with PyTorch's checks. */
export function groupInputs<O extends object>(params: ParamsInput<O>): ParamGroupInput<O>[] {
  if (params instanceof Tensor || params === null || typeof params !== 'object' || !(Symbol.iterator in params)) {
    const got = params instanceof Tensor ? params.toString() : params === null ? 'null' : typeof params;
    throw new TypeError(
      `params argument given to the optimizer should be an iterable of Tensors or dicts, but got ${got}`,
    );
  }
  const items = [...(params as Iterable<Tensor | ParamGroupInput<O>>)];
  if (items.length === 0) throw new ValueError('optimizer got an empty parameter list');
  if (items[0] instanceof Tensor) return [{ params: items as Tensor[] } as Partial<O> & { params: Tensor[] }];
  return items.map((item, i) => {
    if (item instanceof Tensor || item === null || typeof item !== 'object' || !('params' in item)) {
      throw new TypeError(
        `params[${i}]: expected a parameter group { params, ...options } like the others, got ${describe(item)}`,
      );
    }
    return item;
  });
}

/** The tensors of one group input, checked: Tensors only, no duplicates within the group. */
export function groupParams(params: Iterable<Tensor> | Tensor): Tensor[] {
  const list = params instanceof Tensor ? [params] : [...params];
  for (const p of list) {
    if (!(p instanceof Tensor)) throw new TypeError(`optimizer can only optimize Tensors, but one of the params is ${describe(p)}`);
    if (!p.isLeaf) throw new ValueError("can't optimize a non-leaf Tensor");
  }
  if (new Set(list).size !== list.length) {
    throw new ValueError('optimizer contains a parameter group with duplicate parameters');
  }
  return list;
}

function describe(v: unknown): string {
  if (v instanceof Tensor) return v.toString();
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

/** A group option copied so that later changes to one side don't show on the other. */
export function copyOption<V>(value: V): V {
  return (Array.isArray(value) ? value.slice() : value) as V;
}

/**
 * `defaults` with every option the user gave (an explicit `undefined` keeps the default). A name
 * that is neither an option nor one of `alsoAllowed` is a TypeError naming it and `owner` (as
 * Python's "unexpected keyword argument").
 */
export function withDefaults<O extends object>(defaults: O, options: Partial<O>, owner: string, alsoAllowed: readonly string[] = []): O {
  checkOptionNames(owner, options, [...Object.keys(defaults), ...alsoAllowed]);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) out[key] = copyOption(value);
  for (const [key, value] of Object.entries(options)) if (value !== undefined) out[key] = copyOption(value);
  return out as O;
}

/** The leading runs of the parameters `P`, each parameter skippable with undefined. */
type LeadingRuns<P extends readonly unknown[]> = P extends readonly [...infer Init, unknown]
  ? { [I in keyof P]: P[I] | undefined } | LeadingRuns<Init>
  : P;

/**
 * An optimizer's arguments after `params`, bound as Python binds PyTorch's: any leading run of
 * the positional hyperparameters `P` in PyTorch's order (undefined skips one), then optionally an
 * options object `Partial<O>` naming the others, keyword-only ones included
 * (`new SGD(params, 0.1, 0.9)`, `new SGD(params, 0.1, { momentum: 0.9 })`, `new SGD(params, { lr: 0.1 })`).
 */
export type OptimizerArgs<P extends readonly unknown[], O extends object> = LeadingRuns<P> extends infer Run extends readonly unknown[]
  ? Run | [...Run, Partial<O> | undefined]
  : never;

/**
 * The options given in an optimizer's constructor arguments (see {@link OptimizerArgs}), by
 * name: `positional` are PyTorch's positional hyperparameters in its order, the other options of
 * `defaults` are keyword-only. A name given both ways, one the optimizer does not have, or more
 * positional values than `positional` is a TypeError naming it and `owner`.
 */
export function givenOptions<O extends object>(owner: string, defaults: O, positional: readonly (keyof O & string)[], args: readonly unknown[]): Partial<O> {
  const keywordOnly = Object.keys(defaults).filter((name) => !(positional as readonly string[]).includes(name));
  return bindArguments(owner, args, positional, keywordOnly) as Partial<O>;
}

/** {@link givenOptions} with `defaults` for the options not given. */
export function optionsFromArgs<O extends object>(owner: string, defaults: O, positional: readonly (keyof O & string)[], args: readonly unknown[]): O {
  return withDefaults(defaults, givenOptions(owner, defaults, positional, args), owner);
}
