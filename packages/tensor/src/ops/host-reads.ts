// Ops that must see values on the host: the data-dependent ones (nonzero, unique, maskedSelect,
// boolean indexing), whose output shape depends on the data, and multinomial, whose checks do.
// Each is written as a plan: the tensors it needs read, then a function that finishes the op from
// their values. The synchronous form reads where the device's backend reads synchronously (the
// cpu, or any backend with `readSync`, through its own read: never by way of the cpu) and
// otherwise throws a TensorError naming the async form; the async form reads with `await` on every
// device (API.md, "Naming the rest of PyTorch").
import { TensorError } from '../errors/errors.js';
import { backendOf } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import type { DataArray } from '../tensor/transfer.js';
import { valuesNow } from '../tensor/host-data.js';
import { noteHostRead } from '../compile/state.js';

/** What a data-dependent op needs read, and how it finishes from the values. */
export interface HostPlan<T> {
  /** Tensors whose values the op cannot do without. */
  readonly needs: readonly Tensor[];
  /**
   * The values of `needs` only decide whether the op throws (multinomial's checks), not its result:
   * a compiled function's capture goes on, and its replays skip them as they skip index checks.
   * Otherwise reading them during a capture is a host read (`COMPILE_HOST_READ`): a replay could
   * not follow the shape or positions they decide.
   */
  readonly needsOnlyChecked?: boolean;
  /** Tensors read only to check their values (index bounds): read when the read is synchronous, and always by the async form. */
  readonly checks?: readonly Tensor[];
  /** The op's result from the values of `needs`, and those of `checks` (null when not read). */
  finish(needed: readonly DataArray[], checked: readonly (DataArray | null)[]): T;
}

/** Whether `t`'s values can be read without `await`. */
export function readsSynchronously(t: Tensor): boolean {
  return backendOf(t.device).readSync !== undefined;
}

/**
 * Run a plan synchronously. `remedy` says what to do on a device without synchronous reads, e.g.
 * 'use `await x.nonzeroAsync()`'.
 */
export function runNow<T>(plan: HostPlan<T>, op: string, remedy: string): T {
  const blocked = plan.needs.find((t) => !readsSynchronously(t));
  if (blocked) {
    throw new TensorError(`${op}(): needs the values of a tensor on ${blocked.device}, which has no synchronous reads: ${remedy}`);
  }
  if (plan.needs.length > 0 && plan.needsOnlyChecked !== true) noteHostRead(`${op}()`);
  return plan.finish(plan.needs.map((t) => valuesNow(t)!), (plan.checks ?? []).map(valuesNow));
}

/** Run a plan, reading every tensor it names with `await`. */
export async function runLater<T>(plan: HostPlan<T>): Promise<T> {
  const checks = plan.checks ?? [];
  const values = await Promise.all([...plan.needs, ...checks].map((t) => t.data()));
  return plan.finish(values.slice(0, plan.needs.length), values.slice(plan.needs.length));
}

/**
 * The coordinates of the non-zero elements of a row-major array of `shape`, in row-major order:
 * one Int32Array per dim (a 0-dim array has one coordinate, 0, per non-zero element).
 */
export function nonzeroCoordinates(values: ArrayLike<number>, shape: readonly number[]): Int32Array[] {
  let count = 0;
  for (let i = 0; i < values.length; i++) if (values[i] !== 0) count++;
  const rank = shape.length;
  const coords = Array.from({ length: Math.max(rank, 1) }, () => new Int32Array(count));
  if (rank === 0) return coords;
  const at = new Array<number>(rank).fill(0);
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== 0) {
      for (let d = 0; d < rank; d++) coords[d]![k] = at[d]!;
      k++;
    }
    for (let d = rank - 1; d >= 0; d--) {
      if (++at[d]! < shape[d]!) break;
      at[d] = 0;
    }
  }
  return coords;
}
