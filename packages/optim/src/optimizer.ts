// The optimizer base (parameter groups, per-parameter state, zeroGrad, state dicts) and the base of
// the optimizers that update each group from its gradients (step's checks).
import { compileGuard, compileHostEffect, compileUnsupported, DeviceMismatchError, enableGrad, freeingTemporaries, noGrad, ShapeError, Tensor, ValueError, withCreationSite } from '@core/tensor';
import {
  copyOption, groupInputs, groupParams, SCHEDULER_GROUP_FIELDS, withDefaults, type ParamGroup, type ParamGroupInput, type ParamsInput,
} from './param-groups.js';
import type { StateFields } from './state-fields.js';

/** A value in a parameter's optimizer state (LBFGS keeps lists: its history and their weights). */
export type StateValue = Tensor | number | boolean | null | ReadonlyArray<Tensor | number>;
/** A parameter's optimizer state, e.g. `{ step, expAvg, expAvgSq }` for Adam. */
export type ParamState = { [key: string]: StateValue };

/** PyTorch's layout: state keyed by parameter index, groups listing indices instead of tensors. */
export interface OptimizerStateDict<O extends object, S extends object = ParamState> {
  /** Per-parameter state, keyed by the parameter's index across all groups. */
  state: Record<number, S>;
  /** Each group's options, with its parameters as indices into `state`'s numbering. */
  paramGroups: Array<Omit<ParamGroup<O>, 'params'> & {
    /** The group's parameters, numbered across all groups in order. */
    params: number[];
  }>;
}

/** A parameter that has a gradient this step. */
export interface ParamWithGrad {
  /** The parameter. */
  readonly param: Tensor;
  /** Its gradient. */
  readonly grad: Tensor;
}

/**
 * The base of every optimizer (PyTorch's `torch.optim.Optimizer`): parameter groups with
 * per-group options, per-parameter state, `zeroGrad`, and state dicts in PyTorch's layout.
 * Subclasses supply `step`; most extend {@link FirstOrderOptimizer}, which needs only the update
 * of one group.
 */
export abstract class Optimizer<O extends object, S extends object = ParamState> {
  /** The options groups get unless they override them. */
  readonly defaults: Readonly<O>;
  /** The parameter groups, each with its own options (schedulers change `lr` here). */
  readonly paramGroups: ParamGroup<O>[] = [];
  /** Per-parameter state, keyed by the parameter tensor itself. */
  readonly state = new Map<Tensor, S>();

  protected constructor(params: ParamsInput<O>, defaults: O) {
    this.checkOptions(defaults);
    this.defaults = defaults;
    for (const group of groupInputs(params)) this.addParamGroup(group);
  }

  /** Throw a ValueError for options the algorithm can't run with (PyTorch's messages). */
  protected abstract checkOptions(options: O): void;

  /** The keys of a parameter's state and how `loadStateDict` checks each. */
  protected abstract stateFields(): StateFields;

  /**
   * One optimization step. A closure, if given, re-evaluates the model and returns the loss;
   * it runs with grad enabled.
   */
  abstract step(closure?: () => unknown): unknown;

  /** Add a group; options it leaves out come from the optimizer's defaults. */
  addParamGroup(group: ParamGroupInput<O>): void {
    const params = groupParams(group.params);
    const taken = new Set(this.paramGroups.flatMap((g) => g.params));
    if (params.some((p) => taken.has(p))) throw new ValueError('some parameters appear in more than one parameter group');
    const { params: _given, ...overrides } = group;
    const full: ParamGroup<O> = { ...withDefaults(this.defaults as O, overrides as Partial<O>, `${this.constructor.name}.addParamGroup`, SCHEDULER_GROUP_FIELDS), params };
    this.checkOptions(full);
    this.paramGroups.push(full);
  }

  /** OPT-1: drop every gradient (default), or zero it in place keeping the same tensor. */
  zeroGrad({ setToNone = true }: { setToNone?: boolean } = {}): void {
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        if (p.grad === null) continue;
        if (setToNone) {
          p.grad = null;
        } else {
          const grad = p.grad;
          if (grad.isLeaf) grad.requiresGrad = false;
          // PyTorch detaches a grad that has a history (create_graph) before zeroing it; zero_()
          // with grad mode on does both, since the zeroed tensor is a constant.
          enableGrad(() => grad.zero_());
        }
      }
    }
  }

  /** The state of `param`, made by `init` when it has none yet. */
  protected stateFor(param: Tensor, init: () => S): S {
    let s = this.state.get(param);
    if (s === undefined) {
      s = init();
      this.state.set(param, s);
    }
    return s;
  }

  /**
   * Runs update math: under noGrad, with every tensor it creates attributed to the user's call
   * (one creation-site capture), and freed when it returns unless the parameters, their grads,
   * the optimizer state or `fn`'s result hold it.
   */
  protected compute<T>(fn: () => T): T {
    let result: T | undefined;
    let held: Set<Tensor> | undefined;
    return withCreationSite(() => noGrad(() => freeingTemporaries(
      () => (result = fn()),
      (t) => (held ??= this.heldTensors(result)).has(t),
    )));
  }

  /** The parameters, their gradients, the tensors of the optimizer state and those in `extra`. */
  private heldTensors(extra: unknown): Set<Tensor> {
    const held = new Set<Tensor>();
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        held.add(p);
        if (p.grad) held.add(p.grad);
      }
    }
    for (const s of this.state.values()) collectTensors(Object.values(s), held);
    collectTensors(extra, held);
    return held;
  }

  /**
   * The parameters of group `g` that have a gradient, each gradient checked: on its parameter's
   * device (DeviceMismatchError) and of its shape (ShapeError), naming the parameter.
   */
  protected paramsWithGrad(group: ParamGroup<O>, g: number): ParamWithGrad[] {
    const items: ParamWithGrad[] = [];
    group.params.forEach((param, i) => {
      const grad = param.grad;
      if (grad === null || grad === undefined) return;
      const where = `paramGroups[${g}].params[${i}]`;
      if (!grad.device.equals(param.device)) {
        throw new DeviceMismatchError(
          { op: `${this.constructor.name}.step`, argument: `${where}.grad`, expected: String(param.device), got: String(grad.device), createdAt: undefined },
          `${this.constructor.name}.step(): the grad of ${where} is on ${grad.device}, but the parameter is on ${param.device}; ` +
            `a gradient must live on its parameter's device`,
        );
      }
      if (grad.shape.length !== param.shape.length || grad.shape.some((s, d) => s !== param.shape[d])) {
        throw new ShapeError(
          `${this.constructor.name}.step(): the grad of ${where} has shape [${grad.shape.join(', ')}], ` +
            `but the parameter has shape [${param.shape.join(', ')}]`,
          `${this.constructor.name}.step`,
        );
      }
      items.push({ param, grad });
    });
    return items;
  }

  /** A snapshot: later steps don't change it (state tensors are copied). */
  stateDict(): OptimizerStateDict<O, S> {
    const index = new Map<Tensor, number>();
    const paramGroups = this.paramGroups.map((group) => {
      const saved = copyGroupOptions(group) as OptimizerStateDict<O, S>['paramGroups'][number];
      saved.params = group.params.map((p) => {
        index.set(p, index.size);
        return index.size - 1;
      });
      return saved;
    });
    const state: Record<number, S> = {};
    for (const [p, i] of index) {
      const s = this.state.get(p);
      if (s !== undefined) state[i] = mapState(s, (_, v) => v.clone()) as S;
    }
    return { state, paramGroups };
  }

  /**
   * Restore a state dict from an optimizer over parameters of the same shapes, in the same groups.
   * Group options come from the dict. State tensors are copied onto each parameter's device, and
   * floating ones cast to its dtype, as PyTorch does; a `step` saved as a one-element tensor (as
   * PyTorch saves it) becomes a number.
   * Everything is checked first (group options, state keys, types, ranges and shapes): a bad
   * entry throws an error naming it and leaves the optimizer as it was.
   */
  loadStateDict(sd: OptimizerStateDict<O, S>): void {
    if (sd === null || typeof sd !== 'object' || !Array.isArray(sd.paramGroups) || sd.state === null || typeof sd.state !== 'object') {
      throw new TypeError('loadStateDict(): expected { state, paramGroups } as returned by stateDict()');
    }
    const saved = sd.paramGroups;
    if (saved.length !== this.paramGroups.length) {
      throw new ValueError(
        `loaded state dict has a different number of parameter groups (${saved.length}, this optimizer has ${this.paramGroups.length})`,
      );
    }
    const byIndex = new Map<number, { param: Tensor; group: number }>();
    saved.forEach((group, g) => {
      const params = this.paramGroups[g]!.params;
      if (!Array.isArray(group.params) || group.params.length !== params.length) {
        throw new ValueError(
          `loaded state dict contains a parameter group that doesn't match the size of optimizer's group ` +
            `(group ${g}: ${Array.isArray(group.params) ? group.params.length : 'no'} params saved, ${params.length} here)`,
        );
      }
      group.params.forEach((id, i) => byIndex.set(id, { param: params[i]!, group: g }));
    });
    const groups = saved.map((group, g) => {
      const restored = copyGroupOptions(group) as ParamGroup<O>;
      try {
        this.checkOptions(restored);
      } catch (e) {
        if (e instanceof Error) e.message = `loadStateDict(): parameter group ${g}: ${e.message}`;
        throw e;
      }
      restored.params = this.paramGroups[g]!.params;
      return restored;
    });
    const state = new Map<Tensor, S>();
    for (const [key, value] of Object.entries(sd.state)) {
      const owner = byIndex.get(Number(key));
      if (owner === undefined) throw new ValueError(`loaded state dict has state for parameter ${key}, which none of its parameter groups lists`);
      if (value === null || typeof value !== 'object') throw new TypeError(`loadStateDict(): the state of parameter ${key} must be an object, got ${JSON.stringify(value)}`);
      this.checkLoadedState(`loadStateDict(): parameter ${key}`, owner.param, value as Record<string, unknown>, groups[owner.group]!);
      state.set(owner.param, mapState(value, (name, v) => loadStateTensor(owner.param, name, v)) as S);
    }
    this.state.clear();
    for (const [p, s] of state) this.state.set(p, s);
    groups.forEach((group, g) => { this.paramGroups[g] = group; });
  }

  /**
   * Check one saved per-parameter state against {@link Optimizer.stateFields}: no unknown key,
   * every required key present, each value of the right type, range and shape. `group` holds the
   * options being loaded with it. Throws an error that starts with `where` and names the key.
   */
  protected checkLoadedState(where: string, param: Tensor, state: Readonly<Record<string, unknown>>, _group: ParamGroup<O>): void {
    const fields = this.stateFields();
    const keeps = () => `${this.constructor.name} keeps ${Object.keys(fields).join(', ') || 'no state'}`;
    for (const name of Object.keys(state)) {
      if (!Object.hasOwn(fields, name)) throw new ValueError(`${where}: unknown state key '${name}' (${keeps()})`);
    }
    for (const [name, field] of Object.entries(fields)) {
      const value = state[name];
      if (value !== undefined) field.check(value, param, `${where}: '${name}'`);
      else if (field.required) throw new ValueError(`${where}: the state has no '${name}' (${keeps()})`);
    }
  }
}

/**
 * An optimizer whose step updates each parameter from its own gradient and state, group by
 * group: SGD, Adam and the others here — all but the quasi-Newton LBFGS, which re-evaluates the
 * model within a step. Subclasses supply the update of one group.
 */
export abstract class FirstOrderOptimizer<O extends object, S extends object = ParamState> extends Optimizer<O, S> {
  /**
   * Whether `updateGroup` registers what a compiled replay must recompute (compile(): its per-step
   * scalars with `compileScalars`, its host state with `compileHostEffect`, the rest with
   * `compileGuard`); a subclass that does not breaks a capture.
   */
  protected readonly replaysCompiled: boolean = false;

  /**
   * In a compiled step: every option of `group` but lr is baked into the recorded kernels, so a
   * replay first checks that they are unchanged (a change traces again). lr a replay reads anew.
   */
  protected guardCompiledOptions(group: ParamGroup<O>): void {
    compileGuard(`${this.constructor.name} options`, () => Object.entries(group).filter(([key]) => key !== 'params' && key !== 'lr'));
  }

  /** `state.step += 1`, returning the new count; a compiled step's replay advances it too, as eager does. */
  protected countStep(state: { step: number }): number {
    compileHostEffect(() => {
      state.step += 1;
    });
    return (state.step += 1);
  }

  /** Update one group's parameters in place. Runs under noGrad; `items` are already checked. */
  protected abstract updateGroup(group: ParamGroup<O>, items: readonly ParamWithGrad[]): void;

  /**
   * One optimization step over every parameter with a gradient (OPT-3: the others are skipped).
   * A closure, if given, is called first with grad enabled (it re-evaluates the loss) and its
   * result is returned. All gradients are checked before any parameter changes.
   */
  step(): undefined;
  step<L>(closure: () => L): L;
  step<L>(closure?: () => L): L | undefined {
    if (!this.replaysCompiled) {
      compileUnsupported(
        `${this.constructor.name}.step() ran`,
        `${this.constructor.name} does not tell a replay which of its per-step values change (lr, step counts), so a replay would reuse the captured ones; ` +
          'call step() outside the compiled function, or have its update register them (compileScalars, compileHostEffect, compileGuard) and set replaysCompiled',
      );
    }
    const loss = closure === undefined ? undefined : enableGrad(closure);
    const work = this.paramGroups.map((group, g) => ({ group, items: this.paramsWithGrad(group, g) }));
    // The temporaries are freed when the update returns; only the state it keeps stays.
    this.compute(() => {
      for (const { group, items } of work) this.updateGroup(group, items);
    });
    return loss;
  }
}


function copyGroupOptions(group: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(group)) if (key !== 'params') out[key] = copyOption(value);
  return out;
}

/** A copy of a state record, with `tensor` applied to its tensors (also those in lists). */
function mapState(state: object, tensor: (key: string, t: Tensor) => unknown): Record<string, unknown> {
  const copy = (key: string, value: unknown): unknown =>
    value instanceof Tensor ? tensor(key, value) : Array.isArray(value) ? value.map((v) => copy(key, v)) : value;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) out[key] = copy(key, value);
  return out;
}

/** Add every tensor in `value` (a tensor, or arrays and plain objects holding tensors) to `into`. */
function collectTensors(value: unknown, into: Set<Tensor>): void {
  if (value instanceof Tensor) into.add(value);
  else if (Array.isArray(value)) for (const v of value) collectTensors(v, into);
  else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) collectTensors(v, into);
  }
}

/**
 * A loaded state tensor: PyTorch's `_process_value_according_to_param_policy` (follow the param's
 * device, and its dtype if floating), except `step`, which PyTorch saves as a one-element tensor
 * and the optimizers here count in a number.
 */
function loadStateTensor(param: Tensor, key: string, value: Tensor): Tensor | number {
  if (key === 'step') return Number(value.dataSync()[0]);
  const dtype = param.dtype.isFloatingPoint ? param.dtype : value.dtype;
  return value.to({ device: param.device, dtype, copy: true });
}
