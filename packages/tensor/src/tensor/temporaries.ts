// Library code that makes many tensors on behalf of one call (an optimizer step) and keeps only a
// few can free the rest when it returns, instead of leaving them to the garbage collector.
import type { Tensor } from './tensor.js';

let created: Tensor[] | null = null;

/** @internal Called for every tensor that holds memory as it is made. */
export function noteCreated(t: Tensor): void {
  if (created !== null) created.push(t);
}

/**
 * @internal Runs `fn`; when it returns or throws, every tensor it created is disposed unless
 * `keep(t)` says the caller holds it (optimizer state, a result). Disposing is PyTorch's `del`:
 * memory that a kept tensor shares stays. Only for library code that hands none of the others out.
 */
export function freeingTemporaries<T>(fn: () => T, keep: (t: Tensor) => boolean): T {
  const outer = created;
  const mine: Tensor[] = [];
  created = mine;
  try {
    return fn();
  } finally {
    created = outer;
    for (const t of mine) {
      if (keep(t)) outer?.push(t);
      else t.dispose();
    }
  }
}

/**
 * @internal For library code: `t` is an intermediate that only the autograd graph holds (a
 * convolution's columns, a dropout mask, max-pool's indices), never handed to user code. It is
 * disposed as soon as no node holds it saved: when the last one that saved it is released (after a
 * backward pass that does not retain the graph), or now when none did. PyTorch frees such tensors
 * by reference count; here the garbage collector would find them only at its next full collection.
 */
export function releaseWithGraph(t: Tensor): void {
  if (t._savers === 0) t.dispose();
  else t._releasesWithGraph = true;
}
