// Module: the base class of layers and models, with PyTorch's registration rules.
//
// Registration is by field, without a Proxy: a module's parameters are its own enumerable
// fields holding a tensor marked by `nn.Parameter`, its submodules the fields holding a Module,
// and its buffers the fields named by `registerBuffer` (a plain tensor field is just state, as in
// PyTorch). Walks follow field creation order (JavaScript's property order, so integer-like names
// such as Sequential's '0', '1', … come first, ascending). `registerParameter`, `registerBuffer`
// and `registerModule` are the explicit forms; they check the value and assign the field.
import {
  bfloat16, Device, float16, float32, float64, noGrad, Tensor, TensorError, type DeviceLike, type DType, type RemovableHandle, type ToOptions,
} from '@core/tensor';
import { addModuleHook, type ForwardHook, type ForwardPreHook, type FullBackwardHook } from './hooks.js';
import { isDType } from './internal/args.js';
import { isParameter } from './parameter.js';
import { loadStateDictInto, type IncompatibleKeys, type StateDict } from './state-dict.js';

export type { StateDict, IncompatibleKeys } from './state-dict.js';

/** What `Module.to()` accepts: a device, a floating dtype, or both. */
export type ModuleTarget = DeviceLike | DType | {
  /** The device to move to. */
  readonly device?: DeviceLike;
  /** The floating dtype to cast floating parameters and buffers to. */
  readonly dtype?: DType;
};

/** Any module, whatever its forward signature (methods are compared bivariantly). */
export type AnyModule = Module<unknown[], unknown>;

type Fields = Record<string, unknown>;

function checkName(name: unknown, kind: string): asserts name is string {
  if (typeof name !== 'string') throw new TypeError(`${kind} name should be a string, got ${typeof name}`);
  if (name === '') throw new TensorError(`${kind} name can't be empty string ""`);
  if (name.includes('.')) throw new TensorError(`${kind} name can't contain ".", got "${name}"`);
}

/**
 * The base class of layers and models (PyTorch's `nn.Module`). Fields holding an `nn.Parameter` are parameters, fields holding a Module are submodules, and `registerBuffer` names buffers; `to()`, `stateDict()`, `train()`/`eval()` and `zeroGrad()` walk them all. `In` and `Out` type `forward`.
 */
export abstract class Module<In extends unknown[] = [Tensor], Out = Tensor> {
  /** Training mode (dropout active, batch statistics); set by `train()` / `eval()`. */
  training = true;
  /** Field names that hold buffers, and those of them left out of `stateDict()`. */
  readonly #buffers = new Set<string>();
  readonly #nonPersistent = new Set<string>();

  /** The computation. Call it directly (`model.forward(x)`) or through `model.call(x)`. */
  abstract forward(...inputs: In): Out;

  /** `forward(...inputs)`; PyTorch's `model(x)`. */
  call(...inputs: In): Out {
    return this.forward(...inputs);
  }

  // ---- hooks (`forward` and `call` both run them; see hooks.ts) ----

  /**
   * Run `hook(module, args)` before every forward (PyTorch's `register_forward_pre_hook`): it may
   * return replacement arguments (an array, or the only argument). Hooks run in registration order.
   */
  registerForwardPreHook<H extends ForwardPreHook<this, In>>(hook: H): RemovableHandle {
    return addModuleHook(this, 'forwardPre', hook);
  }

  /**
   * Run `hook(module, args, output)` after every forward (PyTorch's `register_forward_hook`): it
   * may return a replacement output of the same kind. Hooks run in registration order.
   */
  registerForwardHook<H extends ForwardHook<this, In, Out>>(hook: H): RemovableHandle {
    return addModuleHook(this, 'forward', hook);
  }

  /**
   * Run `hook(module, gradInput, gradOutput)` in backward once the gradients of this module's
   * inputs are computed (PyTorch's `register_full_backward_hook`), for every forward run with grad
   * mode on: it may return a replacement `gradInput`.
   */
  registerFullBackwardHook<H extends FullBackwardHook<this>>(hook: H): RemovableHandle {
    return addModuleHook(this, 'backward', hook);
  }

  // ---- registration ----

  #fields(): Fields {
    return this as unknown as Fields;
  }

  #checkFree(name: string, kind: string, mayReplace: (value: unknown) => boolean): void {
    const own = Object.prototype.hasOwnProperty.call(this, name);
    if ((!own && name in this) || (own && !mayReplace(this.#fields()[name]))) {
      throw new TensorError(`${this.constructor.name}: cannot register ${kind} '${name}': attribute '${name}' already exists`);
    }
  }

  /** Add a parameter (a tensor made by `nn.Parameter`, or null for an absent one like `bias`). */
  registerParameter(name: string, param: Tensor | null): void {
    checkName(name, 'parameter');
    const value: unknown = param;
    if (value !== null && !isParameter(value)) {
      const got = value instanceof Tensor ? value.toString() : typeof value;
      throw new TypeError(`cannot assign '${got}' as parameter '${name}' (nn.Parameter or null expected): wrap it as nn.Parameter(t)`);
    }
    this.#checkFree(name, 'parameter', (v) => !this.#buffers.has(name) && (v == null || isParameter(v)));
    this.#fields()[name] = param;
  }

  /** Add a buffer: state that is not trained but moves with `to()` and, if persistent, is saved. */
  registerBuffer(name: string, tensor: Tensor | null, persistent = true): void {
    checkName(name, 'buffer');
    if (tensor !== null && !(tensor instanceof Tensor)) {
      throw new TypeError(`cannot assign '${typeof tensor}' as buffer '${name}' (Tensor or null expected)`);
    }
    this.#checkFree(name, 'buffer', (v) => this.#buffers.has(name) || (v === null || v === undefined));
    this.#fields()[name] = tensor;
    this.#buffers.add(name);
    if (persistent) this.#nonPersistent.delete(name);
    else this.#nonPersistent.add(name);
  }

  /** Add a submodule (null leaves the slot empty). Assigning a Module field does the same. */
  registerModule(name: string, module: AnyModule | null): void {
    checkName(name, 'module');
    if (module !== null && !(module instanceof Module)) {
      throw new TypeError(`${typeof module} is not a Module subclass`);
    }
    this.#checkFree(name, 'module', (v) => !this.#buffers.has(name) && (v == null || v instanceof Module));
    this.#fields()[name] = module;
  }

  /** PyTorch's alias of registerModule. */
  addModule(name: string, module: AnyModule | null): void {
    this.registerModule(name, module);
  }

  // ---- walks ----

  #ownParameters(): Array<[string, Tensor]> {
    return Object.entries(this.#fields()).filter((e): e is [string, Tensor] => isParameter(e[1]) && !this.#buffers.has(e[0]));
  }

  #ownBuffers(persistentOnly = false): Array<[string, Tensor]> {
    return [...this.#buffers]
      .filter((name) => !(persistentOnly && this.#nonPersistent.has(name)))
      .map((name): [string, unknown] => [name, this.#fields()[name]])
      .filter((e): e is [string, Tensor] => e[1] instanceof Tensor);
  }

  /** Direct submodules with their field names. */
  namedChildren(): Array<[string, AnyModule]> {
    const seen = new Set<AnyModule>();
    const out: Array<[string, AnyModule]> = [];
    for (const [name, value] of Object.entries(this.#fields())) {
      if (value instanceof Module && !seen.has(value)) {
        seen.add(value);
        out.push([name, value]);
      }
    }
    return out;
  }

  /** The direct submodules, each once. */
  children(): AnyModule[] {
    return this.namedChildren().map(([, m]) => m);
  }

  /** This module and all below it, pre-order, each once (`''` names this module). */
  namedModules(prefix = ''): Array<[string, AnyModule]> {
    const out: Array<[string, AnyModule]> = [];
    const seen = new Set<AnyModule>();
    const visit = (m: AnyModule, path: string): void => {
      if (seen.has(m)) return;
      seen.add(m);
      out.push([path, m]);
      for (const [name, child] of m.namedChildren()) visit(child, path ? `${path}.${name}` : name);
    };
    visit(this as unknown as AnyModule, prefix);
    return out;
  }

  /** This module and all below it, pre-order, each once. */
  modules(): AnyModule[] {
    return this.namedModules().map(([, m]) => m);
  }

  #namedMembers(own: (m: AnyModule) => Array<[string, Tensor]>, prefix: string, recurse: boolean): Array<[string, Tensor]> {
    const scope: Array<[string, AnyModule]> = recurse ? this.namedModules(prefix) : [[prefix, this as unknown as AnyModule]];
    const seen = new Set<Tensor>();
    const out: Array<[string, Tensor]> = [];
    for (const [path, m] of scope) {
      for (const [name, t] of own(m)) {
        if (seen.has(t)) continue; // a tensor shared by two modules is listed once
        seen.add(t);
        out.push([path ? `${path}.${name}` : name, t]);
      }
    }
    return out;
  }

  /** `[name, parameter]` pairs, this module's own first, then each submodule's, each tensor once. */
  namedParameters(prefix = '', recurse = true): Array<[string, Tensor]> {
    return this.#namedMembers((m) => m.#ownParameters(), prefix, recurse);
  }

  /** Every parameter (of submodules too unless `recurse` is false), each tensor once: what an optimizer takes. */
  parameters(recurse = true): Tensor[] {
    return this.namedParameters('', recurse).map(([, p]) => p);
  }

  /** `[name, buffer]` pairs, this module's own first, then each submodule's, each tensor once. */
  namedBuffers(prefix = '', recurse = true): Array<[string, Tensor]> {
    return this.#namedMembers((m) => m.#ownBuffers(), prefix, recurse);
  }

  /** Every buffer (of submodules too unless `recurse` is false), each tensor once. */
  buffers(recurse = true): Tensor[] {
    return this.namedBuffers('', recurse).map(([, b]) => b);
  }

  /** The submodule at a dotted path, e.g. `model.getSubmodule('encoder.0')`. */
  getSubmodule(target: string): AnyModule {
    let m = this as unknown as AnyModule;
    if (target === '') return m;
    for (const part of target.split('.')) {
      const next = (m as unknown as Fields)[part];
      if (!(next instanceof Module)) {
        throw new TensorError(`${m.constructor.name} has no submodule '${part}' (looking up '${target}')`);
      }
      m = next as AnyModule;
    }
    return m;
  }

  // ---- modes and gradients ----

  /** Set training mode on this module and every submodule (`train(false)` is `eval()`). */
  train(mode = true): this {
    if (typeof mode !== 'boolean') throw new TypeError('training mode is expected to be boolean');
    for (const m of this.modules()) m.training = mode;
    return this;
  }

  /** Evaluation mode: `train(false)` (dropout off, batch norm uses running statistics). */
  eval(): this {
    return this.train(false);
  }

  /** Turn gradient recording on or off for every parameter (e.g. to freeze a part). */
  requiresGrad_(requiresGrad = true): this {
    for (const p of this.parameters()) p.requiresGrad_(requiresGrad);
    return this;
  }

  /** Reset parameter gradients: to null (default, OPT-1), or zero in place keeping the objects. */
  zeroGrad({ setToNone = true }: { setToNone?: boolean } = {}): void {
    for (const p of this.parameters()) {
      const g = p.grad;
      if (g === null) continue;
      if (setToNone) p.grad = null;
      else noGrad(() => (g.isLeaf ? g.requiresGrad_(false) : (p.grad = g.detach())).zero_());
    }
  }

  /** Call `fn` on every submodule (children first) and then on this module. */
  apply(fn: (m: AnyModule) => void): this {
    for (const child of this.children()) child.apply(fn);
    fn(this as unknown as AnyModule);
    return this;
  }

  // ---- device and dtype (DEV-8) ----

  /**
   * Move and/or cast every parameter, buffer and gradient **in place**: the tensor objects stay the
   * same (optimizers keep working), only their memory changes. A dtype applies to floating
   * tensors only; int and bool buffers keep theirs. Returns this module.
   */
  to(target: ModuleTarget, options: Pick<ToOptions, 'nonBlocking'> = {}): this {
    const { device, dtype } = parseTarget(target);
    this.#convertAll((t) => {
      const dt = dtype && t.dtype.isFloatingPoint ? dtype : t.dtype;
      return noGrad(() => t.to({ ...(device !== undefined ? { device } : {}), dtype: dt, ...options }));
    });
    return this;
  }

  /** `to()` for devices that can only be read asynchronously (e.g. WebGPU → CPU). */
  async toAsync(target: ModuleTarget, options: Pick<ToOptions, 'nonBlocking'> = {}): Promise<this> {
    const { device, dtype } = parseTarget(target);
    const moved = new Map<Tensor, Tensor>();
    for (const t of this.#tensorsToConvert()) {
      const dt = dtype && t.dtype.isFloatingPoint ? dtype : t.dtype;
      moved.set(t, await t.toAsync({ ...(device !== undefined ? { device } : {}), dtype: dt, ...options }));
    }
    this.#convertAll((t) => moved.get(t)!);
    return this;
  }

  /** Move every parameter and buffer to the cpu. */
  cpu(): this { return this.to('cpu'); }
  /** Cast floating parameters and buffers to float32. */
  float(): this { return this.to(float32); }
  /** Cast floating parameters and buffers to float64. */
  double(): this { return this.to(float64); }
  /** Cast floating parameters and buffers to float16. */
  half(): this { return this.to(float16); }
  /** Cast floating parameters and buffers to bfloat16. */
  bfloat16(): this { return this.to(bfloat16); }

  /** Parameters, buffers and existing grads, each tensor once. */
  #tensorsToConvert(): Tensor[] {
    const all = new Set<Tensor>();
    for (const m of this.modules()) {
      for (const [, p] of m.#ownParameters()) {
        all.add(p);
        if (p.grad) all.add(p.grad);
      }
      for (const [, b] of m.#ownBuffers()) all.add(b);
    }
    return [...all];
  }

  #convertAll(convert: (t: Tensor) => Tensor): void {
    for (const t of this.#tensorsToConvert()) {
      const moved = convert(t);
      if (moved === t) continue;
      t.set_(moved); // same object, new memory (DEV-8)
      moved.dispose(); // t holds the memory now
    }
  }

  // ---- state dict ----

  /**
   * Parameters and persistent buffers by dotted name, in registration order, detached (they
   * share memory with the module). `keepVars` returns the tensors themselves.
   */
  stateDict({ prefix = '', keepVars = false }: { prefix?: string; keepVars?: boolean } = {}): StateDict {
    const out: StateDict = {};
    const visit = (m: AnyModule, path: string, ancestors: Set<AnyModule>): void => {
      for (const [name, p] of m.#ownParameters()) out[path + name] = keepVars ? p : p.detach();
      for (const [name, b] of m.#ownBuffers(true)) out[path + name] = keepVars ? b : b.detach();
      for (const [name, child] of Object.entries(m as unknown as Fields)) {
        if (!(child instanceof Module) || ancestors.has(child as AnyModule)) continue;
        visit(child as AnyModule, `${path}${name}.`, new Set(ancestors).add(child as AnyModule));
      }
    };
    visit(this as unknown as AnyModule, prefix, new Set([this as unknown as AnyModule]));
    return out;
  }

  /**
   * Copy `stateDict`'s values into this module's parameters and buffers in place (same objects).
   * Shape mismatches are always errors; missing and unexpected keys are errors when `strict`
   * (default) and are returned either way. Nothing is copied when there is an error.
   */
  loadStateDict(stateDict: StateDict, options: boolean | { strict?: boolean } = {}): IncompatibleKeys {
    const strict = typeof options === 'boolean' ? options : options.strict ?? true;
    return loadStateDictInto(this.constructor.name, this.stateDict({ keepVars: true }), stateDict, strict);
  }

  // ---- printing ----

  /** The constructor arguments shown by `toString()`, e.g. `inFeatures=784, outFeatures=256`. */
  extraRepr(): string {
    return '';
  }

  /**
   * The module tree as PyTorch prints it, e.g. `Linear(inFeatures=784, outFeatures=10, bias=true)`:
   * a one-line `extraRepr()` inline when there are no children, else each line of it and each child
   * on its own indented line.
   */
  toString(): string {
    const extra = this.extraRepr();
    const extraLines = extra ? extra.split('\n') : [];
    // Every child field, repeats included, as PyTorch prints `_modules`.
    const childLines = Object.entries(this.#fields())
      .filter((e): e is [string, AnyModule] => e[1] instanceof Module)
      .map(([name, m]) => `(${name}): ${m.toString().split('\n').join('\n  ')}`);
    const lines = [...extraLines, ...childLines];
    const body = lines.length === 0 ? '' : extraLines.length === 1 && childLines.length === 0 ? extraLines[0] : `\n  ${lines.join('\n  ')}\n`;
    return `${this.constructor.name}(${body})`;
  }
}

function parseTarget(target: ModuleTarget): { device?: DeviceLike; dtype?: DType } {
  let device: DeviceLike | undefined;
  let dtype: DType | undefined;
  if (isDType(target)) dtype = target;
  else if (typeof target === 'string' || target instanceof Device) device = target;
  else if (typeof target === 'object' && target !== null) ({ device, dtype } = target);
  else throw new TypeError(`Module.to(): expected a device, a dtype or { device, dtype }, got ${String(target)}`);
  if (dtype !== undefined && (!isDType(dtype) || !dtype.isFloatingPoint)) {
    throw new TypeError(`nn.Module.to only accepts floating point dtypes, but got desired dtype=${String(dtype)}`);
  }
  return { ...(device !== undefined ? { device } : {}), ...(dtype !== undefined ? { dtype } : {}) };
}
