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
