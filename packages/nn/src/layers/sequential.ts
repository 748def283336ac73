// nn.Sequential(...modules): children named '0', '1', …; forward feeds each one's output to the next.
import { TensorError, type Tensor } from '@core/tensor';
import { Module } from '../module.js';

/** A module that maps one tensor to one tensor, as Sequential's children do. */
export type TensorModule = Module<[Tensor], Tensor>;

/**
 * A chain of modules: forward feeds each one's output to the next. Children are named '0', '1', … (PyTorch's `nn.Sequential`).
 */
export class Sequential extends Module implements Iterable<TensorModule> {
  constructor(...modules: TensorModule[]) {
    super();
    modules.forEach((m) => this.append(m));
  }

  /** The children in order, repeats included (the same module may appear twice, as in PyTorch). */
  #list(): TensorModule[] {
    return Object.values(this).filter((v): v is TensorModule => v instanceof Module);
  }

  /** The number of child modules. */
  get length(): number {
    return this.#list().length;
  }

  /** Add a module at the end, named by its position. */
  append(module: TensorModule): this {
    if (!(module instanceof Module)) throw new TypeError(`Sequential: ${typeof module} is not a Module subclass`);
    this.registerModule(String(this.length), module as unknown as Module<unknown[], unknown>);
    return this;
  }

  /** The child at `index` (negative counts from the end). */
  at(index: number): TensorModule {
    const list = this.#list();
    const i = index < 0 ? index + list.length : index;
    const m = list[i];
    if (!Number.isInteger(index) || m === undefined) throw new TensorError(`Sequential: index ${index} is out of range for ${list.length} modules`);
    return m;
  }

  /** The children in order. */
  [Symbol.iterator](): Iterator<TensorModule> {
    return this.#list()[Symbol.iterator]();
  }

  forward(input: Tensor): Tensor {
    let x = input;
    for (const m of this) x = m.forward(x);
    return x;
  }
}
