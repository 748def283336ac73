// nn.ModuleList, nn.ModuleDict, nn.ParameterList and nn.ParameterDict: modules and parameters
// held by position or by key, registered as fields like any module's ('0', '1', … or the key), so
// parameters(), namedParameters(), stateDict() ('layers.0.weight'), to() and train()/eval() see
// them as PyTorch's do. The fields are the only state: the lists renumber them after an insert
// or a removal, as PyTorch does.
import { Tensor, TensorError } from '@core/tensor';
import { Module, type AnyModule } from '../module.js';
import { isParameter, Parameter } from '../parameter.js';

type Fields = Record<string, unknown>;

const INDEX_KEY = /^(0|[1-9]\d*)$/;

/** The values of `owner`'s fields '0', '1', … (JavaScript lists integer-like keys first, ascending). */
function indexed<T>(owner: object): T[] {
  return Object.keys(owner).filter((k) => INDEX_KEY.test(k)).map((k) => (owner as Fields)[k] as T);
}

/** `index` as a position in a list of `length` (negative counts from the end), or an IndexError-like error. */
function position(index: number, length: number, kind: string): number {
  if (!Number.isInteger(index)) throw new TypeError(`${kind} indices must be integers, not ${typeof index === 'number' ? index : typeof index}`);
  const i = index < 0 ? index + length : index;
  if (i < 0 || i >= length) throw new TensorError(`${kind}: index ${index} is out of range for ${length} entries`);
  return i;
}

/** [start, end) of a Python slice `[start:end]` over `length` entries. */
function sliceBounds(length: number, start = 0, end = length): [number, number] {
  const clampIndex = (i: number) => Math.min(Math.max(i < 0 ? i + length : i, 0), length);
  const s = clampIndex(start);
  return [s, Math.max(clampIndex(end), s)];
}

/** Python's list.insert position: negative counts from the end, clamped to [0, length]. */
function insertionPoint(index: number, length: number, kind: string): number {
  if (!Number.isInteger(index)) throw new TypeError(`${kind} indices must be integers, not ${index}`);
  return Math.min(Math.max(index < 0 ? index + length : index, 0), length);
}

/** Containers have no computation of their own, as in PyTorch. */
function noForward(kind: string): never {
  throw new TensorError(`${kind} has no forward(): call the modules it holds (iterate over it, or look one up)`);
}

/** A key of a dict container: a non-empty string without '.' (module and parameter names). */
function checkKey(key: unknown, kind: string): asserts key is string {
  if (typeof key !== 'string') throw new TypeError(`${kind} keys must be strings, got ${typeof key}`);
}

/** The module's own fields holding `isEntry` values, by key, in field order. */
function entriesOf<T>(owner: object, isEntry: (v: unknown) => v is T): Array<[string, T]> {
  return Object.entries(owner).filter((e): e is [string, T] => isEntry(e[1]));
}

/** PyTorch's 'Parameter containing: [float32 of size 3x4]' (with the device when not cpu). */
function describeParameter(p: Tensor): string {
  const device = p.device.type === 'cpu' ? '' : ` (${p.device})`;
  return `Parameter containing: [${p.dtype.name} of size ${p.shape.join('x')}${device}]`;
}

const isModule = (v: unknown): v is AnyModule => v instanceof Module;

/** What ModuleList and ParameterList share: values registered as fields '0', '1', … */
abstract class ListContainer<V> extends Module<unknown[], never> implements Iterable<V> {
  /** The value at position `index` (a field, as registered). */
  readonly [index: number]: V;

  /** Register `value` as field `String(index)`, checked. */
  protected abstract register(index: number, value: V): void;

  /** The values in order. */
  protected list(): V[] {
    return indexed<V>(this);
  }

  /** Replace the contents with `values`, numbered from 0. */
  protected renumber(values: readonly V[]): void {
    for (const key of Object.keys(this).filter((k) => INDEX_KEY.test(k))) delete (this as unknown as Fields)[key];
    values.forEach((v, i) => this.register(i, v));
  }

  /** The number of entries. */
  get length(): number {
    return this.list().length;
  }

  /** The entry at `index` (negative counts from the end). */
  at(index: number): V {
    const list = this.list();
    return list[position(index, list.length, this.constructor.name)]!;
  }

  /** Replace the entry at `index` (PyTorch's `list[i] = value`). */
  set(index: number, value: V): void {
    this.register(position(index, this.length, this.constructor.name), value);
  }

  /** Add an entry at the end. */
  append(value: V): this {
    this.register(this.length, value);
    return this;
  }

  /** Add entries at the end, in order. */
  extend(values: Iterable<V>): this {
    if (values === null || values instanceof Tensor || typeof (values as Partial<Iterable<V>>)[Symbol.iterator] !== 'function') {
      throw new TypeError(`${this.constructor.name}.extend should be called with an iterable, but got ${values === null ? 'null' : values instanceof Tensor ? 'a Tensor' : typeof values}`);
    }
    for (const v of [...values]) this.append(v);
    return this;
  }

  /** A new container of the same class holding the entries from `start` to `end` (PyTorch's `list[start:end]`). */
  slice(start?: number, end?: number): this {
    const list = this.list();
    const [s, e] = sliceBounds(list.length, start, end);
    return new (this.constructor as new (values: Iterable<V>) => this)(list.slice(s, e));
  }

  /** The entries in order. */
  [Symbol.iterator](): Iterator<V> {
    return this.list()[Symbol.iterator]();
  }

  /** Containers only hold modules or parameters. */
  forward(): never {
    return noForward(this.constructor.name);
  }
}

/**
 * Modules held in a list, registered as children '0', '1', …: their parameters belong to this
 * module (`layers.0.weight`). PyTorch's `nn.ModuleList`; `list[i]` works as in Python, and `at(i)`
 * counts negatives from the end.
 */
export class ModuleList<M extends AnyModule = AnyModule> extends ListContainer<M> {
  /** `new nn.ModuleList([new nn.Linear(4, 4), new nn.ReLU()])`. */
  constructor(modules: Iterable<M> = []) {
    super();
    this.extend(modules);
  }

  protected register(index: number, module: M): void {
    if (!(module instanceof Module)) throw new TypeError(`ModuleList: ${module === null ? 'null' : typeof module} is not a Module subclass`);
    this.registerModule(String(index), module);
  }

  /** Insert a module before position `index` (as Python's list.insert: negatives count from the end, out of range clamps). */
  insert(index: number, module: M): void {
    const list = this.list();
    list.splice(insertionPoint(index, list.length, 'ModuleList'), 0, module);
    this.renumber(list);
  }

  /** Remove and return the module at `index` (default the last); the ones after it move down. */
  pop(index = -1): M {
    const list = this.list();
    const [removed] = list.splice(position(index, list.length, 'ModuleList'), 1);
    this.renumber(list);
    return removed!;
  }

  /** A new ModuleList of this one's modules followed by `other`'s (PyTorch's `a + b`). */
  concat(other: Iterable<M>): ModuleList<M> {
    return new ModuleList([...this.list(), ...other]);
  }
}

/**
 * Parameters held in a list, registered as '0', '1', … (`params.0`). Tensors that are not yet
 * parameters become ones (sharing memory), as in PyTorch's `nn.ParameterList`.
 */
export class ParameterList extends ListContainer<Tensor> {
  /** `new nn.ParameterList([randn([3, 4]), randn([4])])`. */
  constructor(values: Iterable<Tensor> = []) {
    super();
    this.extend(values);
  }

  protected register(index: number, value: Tensor): void {
    registerTensor(this, String(index), value, 'ParameterList');
  }

  /** One line per parameter, as PyTorch prints it. */
  override extraRepr(): string {
    return this.list().map((p, i) => `  (${i}): ${describeParameter(p)}`).join('\n');
  }
}

/** [key, value] pairs from a record or an iterable of pairs, checked. */
function pairsOf<V>(source: Readonly<Record<string, V>> | Iterable<readonly [string, V]>, kind: string): Array<readonly [string, V]> {
  if (source === null || typeof source !== 'object' || source instanceof Tensor) {
    throw new TypeError(`${kind}.update should be called with a record or an iterable of [key, value] pairs, got ${source === null ? 'null' : typeof source}`);
  }
  const pairs = Symbol.iterator in source ? [...(source as Iterable<readonly [string, V]>)] : Object.entries(source as Record<string, V>);
  pairs.forEach((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) throw new TypeError(`${kind} update sequence element #${i} should be a [key, value] pair`);
  });
  return pairs;
}

/** What ModuleDict and ParameterDict share: values registered as fields under their keys. */
abstract class DictContainer<V> extends Module<unknown[], never> implements Iterable<string> {
  /** Whether a field value is one of this container's entries. */
  protected abstract isEntry(value: unknown): value is V;

  /** Put `value` under `key` (replacing the entry there). */
  abstract set(key: string, value: V): void;

  /** The [key, value] entries in field order. */
  protected entries(): Array<[string, V]> {
    return entriesOf(this, (v): v is V => this.isEntry(v));
  }

  /** Whether an entry is held under `key`. */
  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this, key) && this.isEntry((this as unknown as Fields)[key]);
  }

  /** Remove and return the entry under `key`; an error when there is none. */
  pop(key: string): V {
    if (!this.has(key)) throw new TensorError(`${this.constructor.name}: no entry under key '${key}' (keys: ${this.keys().join(', ') || 'none'})`);
    const value = (this as unknown as Fields)[key] as V;
    delete (this as unknown as Fields)[key];
    return value;
  }

  /** Remove the entry under `key` (PyTorch's `del d[key]`); an error when there is none. */
  delete(key: string): void {
    this.pop(key);
  }

  /** Remove every entry. */
  clear(): void {
    for (const key of this.keys()) delete (this as unknown as Fields)[key];
  }

  /** Put each [key, value] of `source` in, in order (replacing entries under existing keys). */
  update(source: Readonly<Record<string, V>> | Iterable<readonly [string, V]>): void {
    for (const [key, value] of pairsOf(source, this.constructor.name)) this.set(key, value);
  }

  /** The number of entries. */
  get length(): number {
    return this.entries().length;
  }

  /** The keys, in order. */
  keys(): string[] {
    return this.entries().map(([k]) => k);
  }

  /** The values, in key order. */
  values(): V[] {
    return this.entries().map(([, v]) => v);
  }

  /** The [key, value] pairs, in order (PyTorch's `items()`). */
  items(): Array<[string, V]> {
    return this.entries();
  }

  /** The keys, in order, as iterating a Python dict gives. */
  [Symbol.iterator](): Iterator<string> {
    return this.keys()[Symbol.iterator]();
  }

  /** Containers only hold modules or parameters. */
  forward(): never {
    return noForward(this.constructor.name);
  }
}

/** The type of the module under `K` in a ModuleDict: its own for a key of `T`, else `M`. */
type EntryOf<M, T, K extends string> = K extends keyof T ? T[K] : M;

/**
 * Modules held by name, registered as children under their keys (`blocks.encoder.weight`), in
 * insertion order (integer-like keys come first, as JavaScript orders fields). PyTorch's
 * `nn.ModuleDict`; iterating gives the keys, as in Python. Made from a record, it types each of
 * the record's keys (`new nn.ModuleDict({ enc: new nn.Linear(2, 3), act: new nn.ReLU() }).get('enc')`
 * is a Linear); other keys hold `M`s (any module by default; `nn.ModuleDict<nn.Linear>` holds
 * Linears under any key).
 */
export class ModuleDict<M extends AnyModule = AnyModule, T extends Record<keyof T, M> = Record<string, M>> extends DictContainer<M> {
  /** `new nn.ModuleDict({ encoder, decoder })`: typed per key. */
  constructor(modules?: T);
  /** From [key, module] pairs. */
  constructor(modules: Iterable<readonly [string, M]>);
  constructor(modules: T | Iterable<readonly [string, M]> = {} as T) {
    super();
    this.update(modules as Readonly<Record<string, M>> | Iterable<readonly [string, M]>);
  }

  protected isEntry(value: unknown): value is M {
    return isModule(value);
  }

  /** The module under `key`; an error when there is none (PyTorch's `d[key]`). */
  get<K extends string>(key: K): EntryOf<M, T, K> {
    if (!this.has(key)) throw new TensorError(`ModuleDict: no module under key '${key}' (keys: ${this.keys().join(', ') || 'none'})`);
    return (this as unknown as Fields)[key] as EntryOf<M, T, K>;
  }

  /** Put `module` under `key` (replacing the module there); a key of the record it was made from takes that key's type. */
  set<K extends string>(key: K, module: EntryOf<M, T, K>): void {
    checkKey(key, 'ModuleDict');
    if (!(module instanceof Module)) throw new TypeError(`ModuleDict: ${module === null ? 'null' : typeof module} is not a Module subclass`);
    this.registerModule(key, module);
  }
}

/**
 * Parameters held by name (`params.scale`), in insertion order (integer-like keys first).
 * Tensors that are not yet parameters become ones, as in PyTorch's `nn.ParameterDict`;
 * iterating gives the keys.
 */
export class ParameterDict extends DictContainer<Tensor> {
  /** `new nn.ParameterDict({ scale: ones([3]) })`, or from [key, tensor] pairs. */
  constructor(parameters: Readonly<Record<string, Tensor>> | Iterable<readonly [string, Tensor]> = {}) {
    super();
    this.update(parameters);
  }

  protected isEntry(value: unknown): value is Tensor {
    return isParameter(value);
  }

  /** The parameter under `key`, or `defaultValue` (null) when there is none (PyTorch's `get`). */
  get(key: string, defaultValue: Tensor | null = null): Tensor | null {
    return this.has(key) ? ((this as unknown as Fields)[key] as Tensor) : defaultValue;
  }

  /** Put `value` under `key` (a tensor becomes a parameter sharing its memory). */
  set(key: string, value: Tensor): void {
    checkKey(key, 'ParameterDict');
    registerTensor(this, key, value, 'ParameterDict');
  }

  /** One line per parameter, as PyTorch prints it. */
  override extraRepr(): string {
    return this.entries().map(([k, p]) => `  (${k}): ${describeParameter(p)}`).join('\n');
  }
}

/** Register `value` as parameter `name`: a tensor not yet a parameter becomes one (sharing its memory), as PyTorch's containers do. */
function registerTensor(owner: Module<unknown[], unknown>, name: string, value: Tensor, kind: string): void {
  if (!(value instanceof Tensor)) throw new TypeError(`${kind}: expected a Tensor, got ${value === null ? 'null' : typeof value}`);
  owner.registerParameter(name, isParameter(value) ? value : Parameter(value));
}
