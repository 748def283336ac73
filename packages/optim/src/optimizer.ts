// The optimizer base: parameter groups, per-parameter state, zeroGrad, step's checks, state dicts.
import { DeviceMismatchError, enableGrad, freeingTemporaries, noGrad, ShapeError, Tensor, ValueError, withCreationSite } from '@core/tensor';
import {
  copyOption, groupInputs, groupParams, withDefaults, type ParamGroup, type ParamGroupInput, type ParamsInput,
} from './param-groups.js';

/** A value in a parameter's optimizer state. */
export type StateValue = Tensor | number | boolean | null;
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
 * The base of every optimizer (PyTorch's `torch.optim.Optimizer`): parameter groups with per-group options, per-parameter state, `zeroGrad`, `step`, and state dicts in PyTorch's layout.
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

  /** Update one group's parameters in place. Runs under noGrad; `items` are already checked. */
  protected abstract updateGroup(group: ParamGroup<O>, items: readonly ParamWithGrad[]): void;

  /** Add a group; options it leaves out come from the optimizer's defaults. */
  addParamGroup(group: ParamGroupInput<O>): void {
    const params = groupParams(group.params);
    const taken = new Set(this.paramGroups.flatMap((g) => g.params));
    if (params.some((p) => taken.has(p))) throw new ValueError('some parameters appear in more than one parameter group');
    const { params: _given, ...overrides } = group;
    const full: ParamGroup<O> = { ...withDefaults(this.defaults as O, overrides as Partial<O>), params };
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

  /**
   * One optimization step over every parameter with a gradient (OPT-3: the others are skipped).
   * A closure, if given, is called first with grad enabled (it re-evaluates the loss) and its
   * result is returned. All gradients are checked before any parameter changes.
   */
  step(): undefined;
  step<L>(closure: () => L): L;
  step<L>(closure?: () => L): L | undefined {
    const loss = closure === undefined ? undefined : enableGrad(closure);
    const work = this.paramGroups.map((group, g) => ({ group, items: this.paramsWithGrad(group, g) }));
    // Every tensor the update creates (optimizer state, temporaries) is created at the user's step() call: one capture.
    // The temporaries are freed when the update returns; only the state it keeps stays.
    let held: Set<Tensor> | undefined;
    withCreationSite(() => noGrad(() => freeingTemporaries(() => {
      for (const { group, items } of work) this.updateGroup(group, items);
    }, (t) => (held ??= this.heldTensors()).has(t))));
    return loss;
  }

  /** The parameters, their gradients and the tensors of the optimizer state. */
  private heldTensors(): Set<Tensor> {
    const held = new Set<Tensor>();
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        held.add(p);
        if (p.grad) held.add(p.grad);
      }
    }
    for (const s of this.state.values()) {
      for (const v of Object.values(s)) if (v instanceof Tensor) held.add(v);
    }
    return held;
  }

  private paramsWithGrad(group: ParamGroup<O>, g: number): ParamWithGrad[] {
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
   * floating ones cast to its dtype, as PyTorch does; step counters are kept as they are.
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
    const byIndex = new Map<number, Tensor>();
    saved.forEach((group, g) => {
      const params = this.paramGroups[g]!.params;
      if (!Array.isArray(group.params) || group.params.length !== params.length) {
        throw new ValueError(
          `loaded state dict contains a parameter group that doesn't match the size of optimizer's group ` +
            `(group ${g}: ${Array.isArray(group.params) ? group.params.length : 'no'} params saved, ${params.length} here)`,
        );
      }
      group.params.forEach((id, i) => byIndex.set(id, params[i]!));
    });
    // Everything is checked before anything changes: a bad entry leaves the optimizer as it was.
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
      const p = byIndex.get(Number(key));
      if (p === undefined) throw new ValueError(`loaded state dict has state for parameter ${key}, which none of its parameter groups lists`);
      if (value === null || typeof value !== 'object') throw new TypeError(`loadStateDict(): the state of parameter ${key} must be an object, got ${JSON.stringify(value)}`);
      checkSavedState(key, p, value);
      state.set(p, mapState(value, (name, v) => castStateTensor(p, name, v)) as S);
    }
    this.state.clear();
    for (const [p, s] of state) this.state.set(p, s);
    groups.forEach((group, g) => { this.paramGroups[g] = group; });
  }
}

function copyGroupOptions(group: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(group)) if (key !== 'params') out[key] = copyOption(value);
  return out;
}

/** A copy of a state record, with `tensor` applied to its tensors. */
function mapState(state: object, tensor: (key: string, t: Tensor) => Tensor): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) out[key] = value instanceof Tensor ? tensor(key, value) : copyOption(value);
  return out;
}

/** PyTorch's `_process_value_according_to_param_policy`: follow the param's device (and dtype if floating). */
/**
 * A saved per-parameter state: `step` a non-negative integer (a number or a one-element tensor),
 * every other tensor of its parameter's shape (moments, momentum buffers), so a bad entry fails
 * here instead of turning the parameters NaN or failing at the next step.
 */
function checkSavedState(key: string, param: Tensor, state: object): void {
  for (const [name, v] of Object.entries(state)) {
    if (name === 'step') {
      const step = v instanceof Tensor ? (v.numel() === 1 && v.device.type === 'cpu' ? Number(v.dataSync()[0]) : 0) : v;
      if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0) {
        throw new ValueError(`loadStateDict(): parameter ${key}: step must be a non-negative integer, got ${v instanceof Tensor ? `a tensor of shape [${v.shape.join(', ')}]` : JSON.stringify(v)}`);
      }
    } else if (v instanceof Tensor) {
      if (v.shape.length !== param.shape.length || v.shape.some((d, i) => d !== param.shape[i])) {
        throw new ShapeError(`loadStateDict(): parameter ${key}: '${name}' has shape [${v.shape.join(', ')}], but the parameter has shape [${param.shape.join(', ')}]`, 'loadStateDict');
      }
    }
  }
}

function castStateTensor(param: Tensor, key: string, value: Tensor): Tensor {
  if (key === 'step') return value.to({ device: value.device, copy: true });
  const dtype = param.dtype.isFloatingPoint ? param.dtype : value.dtype;
  return value.to({ device: param.device, dtype, copy: true });
}
