// Module hooks, PyTorch 1.13's: forward pre-hooks, forward hooks and full backward hooks.
//
// Registering the first hook gives the module an own, non-enumerable `forward` that runs the
// hooks around the class's forward; removing the last one takes it away again. So `forward(x)`
// and `call(x)` both run hooks (containers call their children's `forward`), and a module
// without hooks runs its forward directly, at no cost. Backward hooks work like PyTorch's
// BackwardHook: identity autograd nodes around the forward's tensor inputs and outputs; the
// output node captures the gradients of the outputs, the input node calls the hooks with the
// gradients of the inputs and passes on what they return.
import { autograd, isGradEnabled, Tensor, TensorError, type RemovableHandle } from '@core/tensor';

/**
 * A forward pre-hook (`registerForwardPreHook`): sees the module and its arguments before forward
 * runs. Returning an array replaces the arguments; returning another value replaces the only
 * argument; returning nothing keeps them.
 */
export type ForwardPreHook<M, In extends unknown[]> = (module: M, args: In) => In | In[0] | void | null | undefined;

/**
 * A forward hook (`registerForwardHook`): sees the module, the arguments forward got and its
 * output. Returning a value replaces the output (a Tensor for a Tensor, an array for an array);
 * returning nothing keeps it.
 */
export type ForwardHook<M, In extends unknown[], Out> = (module: M, args: In, output: Out) => Out | void | null | undefined;

/** Gradients aligned with a module's arguments or outputs: null where there is none (not a tensor, or no gradient reached it). */
export type ModuleGradients = readonly (Tensor | null)[];

/**
 * A full backward hook (`registerFullBackwardHook`): called once the gradients of the module's
 * inputs are computed, with one entry per forward argument (`gradInput`) and per output
 * (`gradOutput`). Returning an array of the same length replaces `gradInput` (each entry null or
 * a tensor of its input's shape); returning nothing keeps it. The gradients are read-only.
 */
export type FullBackwardHook<M> = (module: M, gradInput: ModuleGradients, gradOutput: ModuleGradients) => ModuleGradients | void | null | undefined;

type AnyHook = (module: never, ...rest: never[]) => unknown;
type Kind = 'forwardPre' | 'forward' | 'backward';

interface HookSet {
  readonly lists: Record<Kind, AnyHook[]>;
  /** The `forward` the module had before hooks: an own property or the class's method. */
  readonly inner: (...args: unknown[]) => unknown;
  readonly ownBefore: PropertyDescriptor | undefined;
  readonly wrapper: (...args: unknown[]) => unknown;
}

const hookSets = new WeakMap<object, HookSet>();

function nameOf(hook: AnyHook): string {
  return hook.name || 'anonymous';
}

function moduleName(module: object): string {
  return module.constructor.name;
}

/** Register `hook` of `kind` on `module` (Module's registerForwardPreHook and friends). */
export function addModuleHook(module: object, kind: Kind, hook: AnyHook): RemovableHandle {
  if (typeof hook !== 'function') {
    throw new TypeError(`${moduleName(module)}: a ${kind === 'forwardPre' ? 'forward pre-' : `${kind} `}hook must be a function, got ${hook === null ? 'null' : typeof hook}`);
  }
  const set = hookSets.get(module) ?? install(module);
  set.lists[kind].push(hook);
  const remove = (): void => {
    const list = set.lists[kind];
    const at = list.indexOf(hook);
    if (at < 0) return;
    list.splice(at, 1);
    if (hookSets.get(module) === set && Object.values(set.lists).every((l) => l.length === 0)) uninstall(module, set);
  };
  return { remove, [Symbol.dispose]: remove };
}

function install(module: object): HookSet {
  const set: HookSet = {
    lists: { forwardPre: [], forward: [], backward: [] },
    inner: (module as { forward: (...args: unknown[]) => unknown }).forward,
    ownBefore: Object.getOwnPropertyDescriptor(module, 'forward'),
    wrapper: (...args) => hookedForward(module, set, args),
  };
  // Not enumerable: module walks (parameters, state dict, printing) list enumerable fields only.
  Object.defineProperty(module, 'forward', { value: set.wrapper, writable: true, configurable: true, enumerable: false });
  hookSets.set(module, set);
  return set;
}

function uninstall(module: object, set: HookSet): void {
  hookSets.delete(module);
  if ((module as { forward: unknown }).forward !== set.wrapper) return; // replaced by its owner since: leave it
  if (set.ownBefore) Object.defineProperty(module, 'forward', set.ownBefore);
  else delete (module as { forward?: unknown }).forward;
}

/** PyTorch's `Module._call_impl`: pre-hooks, forward, forward hooks, with backward hooks wired around it. */
function hookedForward(module: object, set: HookSet, args: unknown[]): unknown {
  const { forwardPre, forward, backward } = set.lists;
  let input = args;
  for (const hook of forwardPre.slice()) {
    const result = (hook as (m: object, a: unknown[]) => unknown)(module, input);
    if (result !== undefined && result !== null) input = Array.isArray(result) ? result : [result];
  }
  const backwardHooks = backward.length > 0 && isGradEnabled() ? new BackwardHooks(module, backward.slice()) : null;
  if (backwardHooks) input = backwardHooks.wrapInputs(input);
  let output = set.inner.apply(module, input);
  for (const hook of forward.slice()) {
    const result = (hook as (m: object, a: unknown[], o: unknown) => unknown)(module, input, output);
    if (result === undefined || result === null) continue;
    if (kindOf(result) !== kindOf(output)) {
      throw new TypeError(
        `forward hook '${nameOf(hook)}' of ${moduleName(module)} returned ${kindOf(result)} in place of ${kindOf(output)}: ` +
          'a forward hook returns a replacement output of the same kind (a Tensor for a Tensor, an array for an array) or nothing',
      );
    }
    output = result;
  }
  return backwardHooks ? backwardHooks.wrapOutputs(output) : output;
}

function kindOf(value: unknown): string {
  if (value instanceof Tensor) return 'a Tensor';
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : typeof value;
}

/** The tensors among `values`, with their positions. */
function tensorsOf(values: readonly unknown[]): { tensors: Tensor[]; at: number[] } {
  const at = values.flatMap((v, i) => (v instanceof Tensor ? [i] : []));
  return { tensors: at.map((i) => values[i] as Tensor), at };
}

/** A copy of `values` with the entries at positions `at` replaced, in order, by `replacements`. */
function replaceAt<T>(values: readonly T[], at: readonly number[], replacements: readonly T[]): T[] {
  const out = values.slice();
  at.forEach((i, j) => (out[i] = replacements[j]!));
  return out;
}

/** Gradients at positions `at` of a list of `length`, null elsewhere. */
function gradientsAt(length: number, at: readonly number[], grads: readonly (Tensor | null)[]): (Tensor | null)[] {
  return replaceAt(new Array<Tensor | null>(length).fill(null), at, grads);
}

type OnGradients = (grads: readonly Tensor[]) => readonly (Tensor | null)[];

/**
 * The identity whose node holds a module's backward hooks (PyTorch's BackwardHookFunction):
 * forward returns the tensors unchanged, backward passes the gradients to `onBackward`.
 */
class BackwardHookFunction extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, onBackward: OnGradients, ...tensors: Tensor[]): Tensor[] {
    ctx.onBackward = onBackward;
    ctx.markNonDifferentiable(...tensors.filter((t) => !t.requiresGrad));
    return tensors;
  }

  static backward(ctx: autograd.FunctionCtx, ...grads: Tensor[]): (Tensor | null)[] {
    return [null, ...(ctx.onBackward as OnGradients)(grads)];
  }
}

/** One call's backward hooks (PyTorch's `torch.utils.hooks.BackwardHook`). */
class BackwardHooks {
  /** How many arguments forward got. */
  private argCount = 0;
  /** The tensor arguments passed through the input node: their positions and shapes (null: none requires grad). */
  private inputs: { at: number[]; shapes: (readonly number[])[] } | null = null;
  /** The outputs' gradients, from when they reach the output node until the hooks run. */
  private gradOutputs: (Tensor | null)[] | null = null;

  constructor(
    private readonly module: object,
    private readonly hooks: readonly AnyHook[],
  ) {}

  /** The arguments with their tensors passed through the input node, if any of them requires grad. */
  wrapInputs(args: unknown[]): unknown[] {
    this.argCount = args.length;
    const { tensors, at } = tensorsOf(args);
    if (!tensors.some((t) => t.requiresGrad)) return args;
    this.inputs = { at, shapes: tensors.map((t) => t.shape) };
    return replaceAt(args, at, BackwardHookFunction.apply((grads) => this.runHooks(grads), ...tensors));
  }

  /** The output with its tensors passed through the output node, which captures their gradients. */
  wrapOutputs(output: unknown): unknown {
    const list = output instanceof Tensor ? [output] : Array.isArray(output) ? (output as unknown[]) : null;
    if (!list) return output;
    const { tensors, at } = tensorsOf(list);
    if (!tensors.some((t) => t.requiresGrad)) return output;
    // Tensor hooks on the node's outputs run before its backward, and only where a gradient
    // arrived: outputs that got none stay null in gradOutput, as in PyTorch.
    let arrived: (Tensor | null)[] = tensors.map(() => null);
    const wrapped = BackwardHookFunction.apply((grads) => {
      this.gradOutputs = gradientsAt(list.length, at, arrived);
      arrived = tensors.map(() => null);
      if (!this.inputs) this.runHooksWithoutInputs();
      return grads;
    }, ...tensors);
    wrapped.forEach((t, j) => {
      if (t.requiresGrad) t.registerHook((g) => void (arrived[j] = g));
    });
    return output instanceof Tensor ? wrapped[0] : replaceAt(list, at, wrapped);
  }

  private call(hook: AnyHook, gradInput: ModuleGradients, gradOutput: ModuleGradients): unknown {
    return (hook as FullBackwardHook<object>)(this.module, gradInput, gradOutput);
  }

  /** The input node's backward: the hooks see the inputs' gradients and may replace them. */
  private runHooks(grads: readonly Tensor[]): readonly (Tensor | null)[] {
    const { at, shapes } = this.inputs!;
    const gradOutput = this.gradOutputs;
    // A gradient that reached the inputs without passing through the outputs (double backward): no hook.
    if (gradOutput === null) return grads;
    this.gradOutputs = null;
    let gradInput: ModuleGradients = gradientsAt(this.argCount, at, grads);
    for (const hook of this.hooks) {
      const result = this.call(hook, gradInput, gradOutput);
      if (result !== undefined && result !== null) gradInput = this.checked(hook, result, shapes, at);
    }
    return at.map((i) => gradInput[i] ?? null);
  }

  /** No input requires grad: the hooks run when the outputs' gradients arrive, and may not return gradients. */
  private runHooksWithoutInputs(): void {
    const gradOutput = this.gradOutputs!;
    this.gradOutputs = null;
    const gradInput = gradientsAt(this.argCount, [], []);
    for (const hook of this.hooks) {
      const result = this.call(hook, gradInput, gradOutput);
      if (result === undefined || result === null || (Array.isArray(result) && result.every((g) => g === null || g === undefined))) continue;
      throw new TensorError(
        `backward hook '${nameOf(hook)}' of ${moduleName(this.module)} returned gradients, but no input of the module requires grad: ` +
          'it should return nothing, or null for every gradient',
      );
    }
  }

  /** A hook's replacement gradInput, checked: one entry per argument, each null or of its input's shape. */
  private checked(hook: AnyHook, result: unknown, shapes: readonly (readonly number[])[], at: readonly number[]): ModuleGradients {
    const where = `backward hook '${nameOf(hook)}' of ${moduleName(this.module)}`;
    if (!Array.isArray(result)) {
      throw new TypeError(`${where} returned ${kindOf(result)}; it returns an array of gradients (one per forward argument, null where none) or nothing`);
    }
    if (result.length !== this.argCount) {
      throw new TensorError(`${where} returned an invalid number of gradInput: got ${result.length}, but expected ${this.argCount} (one per forward argument)`);
    }
    at.forEach((i, j) => {
      const g: unknown = result[i];
      if (g === null || g === undefined) return;
      if (!(g instanceof Tensor)) throw new TypeError(`${where} returned ${kindOf(g)} as gradInput[${i}]; expected a Tensor or null`);
      const expected = shapes[j]!;
      if (g.shape.length !== expected.length || g.shape.some((s, k) => s !== expected[k])) {
        throw new TensorError(
          `${where} returned gradInput[${i}] of shape [${g.shape.join(', ')}], but input ${i} has shape [${expected.join(', ')}]: ` +
            'a hook must return gradients of its inputs\' shapes',
        );
      }
    });
    return result as ModuleGradients;
  }
}
