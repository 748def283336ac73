// Turning the `params` argument of an optimizer into parameter groups, PyTorch style: a list of
// tensors is one group; a list of `{ params, ...overrides }` objects is one group each.
import { Tensor, ValueError } from '@core/tensor';

/** A parameter group as the optimizer holds it: its tensors, its options, and scheduler fields. */
export type ParamGroup<O extends object> = O & {
  /** The group's parameters. */
  params: Tensor[];
  /** Set by LR schedulers: the lr the schedule started from (PyTorch's `initial_lr`). */
  initialLr?: number;
};

/** A group as a user passes it: tensors plus any options that override the optimizer's defaults. */
export type ParamGroupInput<O extends object> = Partial<O> & {
  /** The group's parameters: an iterable of tensors, or one tensor. */
  params: Iterable<Tensor> | Tensor;
  /** The lr a schedule starts from, when resuming one (PyTorch's `initial_lr`). */
  initialLr?: number;
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

/** `defaults` with every option the user gave (an explicit `undefined` keeps the default). */
export function withDefaults<O extends object>(defaults: O, options: Partial<O>): O {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) out[key] = copyOption(value);
  for (const [key, value] of Object.entries(options)) if (value !== undefined) out[key] = copyOption(value);
  return out as O;
}
