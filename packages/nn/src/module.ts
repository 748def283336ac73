// Module: the base class of layers and models, with PyTorch's registration rules.
//
// Registration is by field, without a Proxy: a module's parameters are its own enumerable
// fields holding a tensor marked by `nn.Parameter`, its submodules the fields holding a Module,
// and its buffers the fields named by `registerBuffer` (a plain tensor field is just state, as in
// PyTorch). Walks follow field creation order (JavaScript's property order, so integer-like names
// such as Sequential's '0', '1', … come first, ascending). `registerParameter`, `registerBuffer`
// and `registerModule` are the explicit forms; they check the value and assign the field.
//
// A field is registered under its own name unless its class maps it to another in the static
// `registeredNames` (BatchNorm's runningMean is registered as running_mean): the walks, state
// dicts and printing use registered names, the code uses the fields.
import {
  compileGuard, isCompiling,
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
 * The type of a Module subclass's static `registeredNames`: some of its fields (not methods), each
 * with the name it is registered under (PyTorch's), e.g. batch norm's
 * `static override readonly registeredNames: RegisteredNames<NormBase> = { runningMean: 'running_mean' }`.
 */
export type RegisteredNames<M> = { readonly [P in keyof M as M[P] extends (...args: never[]) => unknown ? never : P]?: string };

/** A class's registered names both ways, its base classes' included. */
interface NameMaps {
  readonly nameOf: ReadonlyMap<string, string>;
  readonly propertyOf: ReadonlyMap<string, string>;
}

const nameMaps = new WeakMap<object, NameMaps>();

/** The `registeredNames` of `module`'s class and of the classes it extends (the nearest wins), checked once per class. */
function namesOf(module: object): NameMaps {
  const cls = module.constructor as { registeredNames?: Readonly<Record<string, string>>; name: string };
  const known = nameMaps.get(cls);
  if (known) return known;
  const nameOf = new Map<string, string>();
  for (let c: typeof cls | null = cls; c !== null; c = Object.getPrototypeOf(c) as typeof cls | null) {
    if (!Object.hasOwn(c, 'registeredNames')) continue;
    for (const [property, name] of Object.entries(c.registeredNames!)) if (!nameOf.has(property)) nameOf.set(property, name);
  }
  const propertyOf = new Map<string, string>();
  for (const [property, name] of nameOf) {
    checkName(name, `${cls.name}.registeredNames: the`);
    const other = propertyOf.get(name);
    if (other !== undefined) throw new TensorError(`${cls.name}.registeredNames gives '${other}' and '${property}' the same name '${name}'`);
    propertyOf.set(name, property);
  }
  const maps = { nameOf, propertyOf };
  nameMaps.set(cls, maps);
  return maps;
}

/** The name `module` registers its property `property` under (the property's own name unless its class maps it). */
export function registeredName(module: object, property: string): string {
  return namesOf(module).nameOf.get(property) ?? property;
}

/**
 * The property of `module` registered as `name`. Naming a property whose registered name differs
 * is an error that gives the registered name (`'runningMean'` on a batch norm: use `'running_mean'`).
 */
export function propertyOf(module: object, name: string): string {
  const { nameOf, propertyOf: properties } = namesOf(module);
  const renamed = nameOf.get(name);
  if (renamed !== undefined && renamed !== name) {
    throw new TensorError(`${module.constructor.name} registers its property '${name}' as '${renamed}': use '${renamed}'`);
  }
  return properties.get(name) ?? name;
}

/**
 * The base class of layers and models (PyTorch's `nn.Module`). Fields holding an `nn.Parameter` are parameters, fields holding a Module are submodules, and `registerBuffer` names buffers; `to()`, `stateDict()`, `train()`/`eval()` and `zeroGrad()` walk them all. `In` and `Out` type `forward`.
 *
 * Names: each is registered under its field's name, unless the class's static `registeredNames`
 * maps the field to another. The built-in layers map their camelCase fields to PyTorch's
 * snake_case names (`bn.runningMean` is `running_mean`, `mha.inProjWeight` is `in_proj_weight`,
 * `layer.selfAttn` is `self_attn`), so their `stateDict()` keys are PyTorch's and a PyTorch
 * checkpoint loads unchanged. Registered names are what `stateDict()`, `loadStateDict()`,
 * `namedParameters()`, `namedBuffers()`, `namedChildren()`, `namedModules()`, `getSubmodule()`,
 * `toString()` and the `register*` methods use; code reads and assigns the fields.
 */
export abstract class Module<In extends unknown[] = [Tensor], Out = Tensor> {
  /**
   * Fields registered under another name, field → name (PyTorch's), e.g. batch norm's
   * `{ runningMean: 'running_mean' }`; the maps of the classes a class extends apply too. Empty
   * here: every field is registered under its own name.
   */
  static readonly registeredNames: Readonly<Record<string, string>> = {};

  #training = true;

  /**
   * Training mode (dropout active, batch statistics); set by `train()` / `eval()`. Reading it inside
   * a `compile()` capture makes it a guard: a replay after the mode changed traces again.
   */
  get training(): boolean {
    if (isCompiling()) compileGuard(`${this.constructor.name}.training`, () => this.#training);
    return this.#training;
  }

  /** Sets this module's mode only (`train()` / `eval()` set it on every submodule too). */
  set training(mode: boolean) {
    this.#training = mode;
  }
  /** Field names that hold buffers, and those of them left out of `stateDict()`. */
  readonly #buffers = new Set<string>();
  readonly #nonPersistent = new Set<string>();

  /** Checks the class's `registeredNames` (once per class), so that a bad map fails at construction. */
  constructor() {
    namesOf(this);
  }

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

  /** The field registered as `name`, checked free for a `kind` (a field holding a non-`kind` value is not). */
  #freeField(name: string, kind: string, mayReplace: (field: string, value: unknown) => boolean): string {
    const field = propertyOf(this, name);
    const own = Object.prototype.hasOwnProperty.call(this, field);
    if ((!own && field in this) || (own && !mayReplace(field, this.#fields()[field]))) {
      throw new TensorError(`${this.constructor.name}: cannot register ${kind} '${name}': attribute '${field}' already exists`);
    }
    return field;
  }

  /**
   * Add a parameter (a tensor made by `nn.Parameter`, or null for an absent one like `bias`) under
   * its registered name; it goes into the field of that name, or the field the class's
   * `registeredNames` gives that name to.
   */
  registerParameter(name: string, param: Tensor | null): void {
    checkName(name, 'parameter');
    const value: unknown = param;
    if (value !== null && !isParameter(value)) {
      const got = value instanceof Tensor ? value.toString() : typeof value;
      throw new TypeError(`cannot assign '${got}' as parameter '${name}' (nn.Parameter or null expected): wrap it as nn.Parameter(t)`);
    }
    const field = this.#freeField(name, 'parameter', (f, v) => !this.#buffers.has(f) && (v == null || isParameter(v)));
    this.#fields()[field] = param;
  }

  /**
   * Add a buffer: state that is not trained but moves with `to()` and, if persistent, is saved.
   * `name` is the registered name, as for `registerParameter`.
   */
  registerBuffer(name: string, tensor: Tensor | null, persistent = true): void {
    checkName(name, 'buffer');
    if (tensor !== null && !(tensor instanceof Tensor)) {
      throw new TypeError(`cannot assign '${typeof tensor}' as buffer '${name}' (Tensor or null expected)`);
    }
    const field = this.#freeField(name, 'buffer', (f, v) => this.#buffers.has(f) || (v === null || v === undefined));
    this.#fields()[field] = tensor;
    this.#buffers.add(field);
    if (persistent) this.#nonPersistent.delete(field);
    else this.#nonPersistent.add(field);
  }

  /**
   * Add a submodule (null leaves the slot empty) under its registered name, as for
   * `registerParameter`. Assigning a Module field does the same.
   */
  registerModule(name: string, module: AnyModule | null): void {
    checkName(name, 'module');
    if (module !== null && !(module instanceof Module)) {
      throw new TypeError(`${typeof module} is not a Module subclass`);
    }
    const field = this.#freeField(name, 'module', (f, v) => !this.#buffers.has(f) && (v == null || v instanceof Module));
    this.#fields()[field] = module;
  }

  /** PyTorch's alias of registerModule. */
  addModule(name: string, module: AnyModule | null): void {
    this.registerModule(name, module);
  }

  // ---- walks ----

  /** The own fields holding submodules, by registered name, repeats included. */
  #childEntries(): Array<[string, AnyModule]> {
    return Object.entries(this.#fields())
      .filter((e): e is [string, AnyModule] => e[1] instanceof Module)
      .map(([field, m]) => [registeredName(this, field), m]);
  }

  #ownParameters(): Array<[string, Tensor]> {
    return Object.entries(this.#fields())
      .filter((e): e is [string, Tensor] => isParameter(e[1]) && !this.#buffers.has(e[0]))
      .map(([field, p]) => [registeredName(this, field), p]);
  }

  #ownBuffers(persistentOnly = false): Array<[string, Tensor]> {
    return [...this.#buffers]
      .filter((field) => !(persistentOnly && this.#nonPersistent.has(field)))
      .map((field): [string, unknown] => [registeredName(this, field), this.#fields()[field]])
      .filter((e): e is [string, Tensor] => e[1] instanceof Tensor);
  }

  /** Direct submodules with their registered names. */
  namedChildren(): Array<[string, AnyModule]> {
    const seen = new Set<AnyModule>();
    return this.#childEntries().filter(([, m]) => {
      if (seen.has(m)) return false;
      seen.add(m);
      return true;
    });
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

  /** The submodule at a dotted path of registered names, e.g. `model.getSubmodule('encoder.0')`. */
  getSubmodule(target: string): AnyModule {
    let m = this as unknown as AnyModule;
    if (target === '') return m;
    for (const part of target.split('.')) {
      const next = (m as unknown as Fields)[propertyOf(m, part)];
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
   * Parameters and persistent buffers by dotted registered name (PyTorch's keys for the built-in
   * layers: `bn.running_mean`, `self_attn.in_proj_weight`), in registration order, detached (they
   * share memory with the module). `keepVars` returns the tensors themselves.
   */
  stateDict({ prefix = '', keepVars = false }: { prefix?: string; keepVars?: boolean } = {}): StateDict {
    const out: StateDict = {};
    const visit = (m: AnyModule, path: string, ancestors: Set<AnyModule>): void => {
      for (const [name, p] of m.#ownParameters()) out[path + name] = keepVars ? p : p.detach();
      for (const [name, b] of m.#ownBuffers(true)) out[path + name] = keepVars ? b : b.detach();
      for (const [name, child] of m.#childEntries()) {
        if (!ancestors.has(child)) visit(child, `${path}${name}.`, new Set(ancestors).add(child));
      }
    };
    visit(this as unknown as AnyModule, prefix, new Set([this as unknown as AnyModule]));
    return out;
  }

  /**
   * Copy `stateDict`'s values into this module's parameters and buffers in place (same objects).
   * Shape mismatches are always errors; missing and unexpected keys are errors when `strict`
   * (default) and are returned either way, by the keys `stateDict()` gives. Nothing is copied when
   * there is an error. Keys saved by @core/nn 0.1.0, which named a field registered under another
   * name by the field (`runningMean`, `selfAttn.inProjWeight`), load as the registered names they
   * stand for (`running_mean`, `self_attn.in_proj_weight`).
   */
  loadStateDict(stateDict: StateDict, options: boolean | { strict?: boolean } = {}): IncompatibleKeys {
    const strict = typeof options === 'boolean' ? options : options.strict ?? true;
    return loadStateDictInto(this.constructor.name, this.stateDict({ keepVars: true }), stateDict, strict, (key) => this.#registeredKey(key));
  }

  /** A dotted path of field names (`selfAttn.inProjWeight`) as registered names (`self_attn.in_proj_weight`). */
  #registeredKey(fieldPath: string): string {
    let m: AnyModule | undefined = this as unknown as AnyModule;
    return fieldPath.split('.').map((field) => {
      if (m === undefined) return field;
      const name = registeredName(m, field);
      const next = (m as unknown as Fields)[field];
      m = next instanceof Module ? (next as AnyModule) : undefined;
      return name;
    }).join('.');
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
    // Every child, repeats included, as PyTorch prints `_modules`.
    const childLines = this.#childEntries().map(([name, m]) => `(${name}): ${m.toString().split('\n').join('\n  ')}`);
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
