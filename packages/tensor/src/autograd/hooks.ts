// Tensor gradient hooks (PyTorch's `Tensor.register_hook`): a function that sees a tensor's
// gradient during backward and may replace it. A non-leaf's hooks live on its node and run on the
// whole gradient that reached it, before its backward; a leaf's run before accumulation into `.grad`.
import { TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { outputNumber, type GradHook, type GradHookFn } from './node.js';

/** What `registerHook` returns (PyTorch's `RemovableHandle`): `remove()` unregisters the hook; `using` removes it at the end of the block. */
export interface RemovableHandle {
  /** Unregister the hook; a second call does nothing. */
  remove(): void;
  /** `remove()`, for `using handle = t.registerHook(...)`. */
  [Symbol.dispose](): void;
}

const leafHookLists = new WeakMap<Tensor, GradHook[]>();
const NONE: readonly GradHook[] = [];

/** The hooks registered on leaf `t`. */
export function leafHooks(t: Tensor): readonly GradHook[] {
  return leafHookLists.get(t) ?? NONE;
}

/** `t.registerHook(fn)`: see Tensor.registerHook. */
export function registerHook(t: Tensor, fn: GradHookFn): RemovableHandle {
  if (typeof fn !== 'function') throw new TypeError(`registerHook(hook): hook must be a function, got ${fn === null ? 'null' : typeof fn}`);
  if (!t.requiresGrad) {
    throw new TensorError("cannot register a hook on a tensor that doesn't require gradient: call requiresGrad_() on the leaf first");
  }
  let list: GradHook[];
  if (t._gradFn) list = t._gradFn.hooks;
  else {
    list = leafHookLists.get(t) ?? [];
    leafHookLists.set(t, list);
  }
  const hook: GradHook = { output: outputNumber(t), name: fn.name || 'anonymous', fn };
  list.push(hook);
  const remove = () => {
    const at = list.indexOf(hook);
    if (at >= 0) list.splice(at, 1);
  };
  return { remove, [Symbol.dispose]: remove };
}
