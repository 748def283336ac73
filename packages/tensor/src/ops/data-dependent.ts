// nonzero and unique: ops whose output shape depends on the values, so they read them on the host
// (ops/host-reads.ts gives their sync and async forms). Indices are int32 (PyTorch: int64).
import { bool, int32 } from '../dtype/dtype.js';
import { IndexError, ShapeError } from '../errors/errors.js';
import { checkCompute } from '../dispatch/run.js';
import type { Tensor } from '../tensor/tensor.js';
import { normalizeDim } from '../tensor/shape.js';
import { bindArguments, boolArgument, intArgument } from './arguments.js';
import { tensor } from './creation.js';
import { nonzeroCoordinates, runLater, runNow, type HostPlan } from './host-reads.js';

/**
 * What `unique` returns when asked for inverse indices or counts: the named parts, and PyTorch's
 * tuple (`[output, inverseIndices?, counts?]`, only the parts asked for) by position and by
 * destructuring.
 */
export interface UniqueResult extends Iterable<Tensor> {
  /** The unique elements (or slices along `dim`), sorted ascending. */
  readonly output: Tensor;
  /** For each element (or slice) of the input, the int32 position of its value in `output`. */
  readonly inverseIndices: Tensor;
  /** How many times each unique element (or slice) occurs in the input, as int32. */
  readonly counts: Tensor;
  /** 2 or 3: the length of PyTorch's tuple. */
  readonly length: number;
  /** PyTorch's tuple by position: output, then the inverse indices and/or the counts asked for. */
  readonly [position: number]: Tensor;
}

/** The options of `unique` (PyTorch's keyword arguments). */
export interface UniqueOptions {
  /** Accepted for PyTorch's signature: the output is sorted either way. */
  readonly sorted?: boolean;
  /** Also return the inverse indices. */
  readonly returnInverse?: boolean;
  /** Also return the counts. */
  readonly returnCounts?: boolean;
  /** Unique slices along this dim instead of unique elements. */
  readonly dim?: number | null;
}

/** `x.nonzero({ asTuple })`: the indices of the non-zero (NaN included) elements, row-major. */
function nonzeroPlan(x: Tensor, args: readonly unknown[]): HostPlan<Tensor | Tensor[]> {
  const asTuple = boolArgument('nonzero', 'asTuple', bindArguments('nonzero', args, [], ['asTuple']).asTuple, false);
  const upload = (values: Int32Array) => tensor(values, { dtype: int32, device: x.device });
  return {
    needs: [x.dtype === bool ? x : x.ne(0)],
    finish: ([values]) => {
      const coords = nonzeroCoordinates(values!, x.shape);
      if (asTuple) return coords.map(upload);
      const n = coords[0]!.length;
      const rank = x.ndim;
      const rows = new Int32Array(n * rank);
      coords.forEach((c, d) => c.forEach((v, i) => { if (d < rank) rows[i * rank + d] = v; }));
      return upload(rows).reshape([n, rank]);
    },
  };
}

/** Ascending, NaN the largest (all NaNs tie), −0 equal to +0. */
function ascending(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 0;
  return Number.isNaN(a) ? 1 : -1;
}

/**
 * Group `n` items: sorted stably by `compare`, a run of `equal` neighbours is one group. Returns the
 * first item of each group (in sorted order), each item's group, and each group's size.
 */
function groups(n: number, compare: (i: number, j: number) => number, equal: (i: number, j: number) => boolean) {
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => compare(i, j) || i - j);
  const firsts: number[] = [];
  const counts: number[] = [];
  const inverse = new Int32Array(n);
  order.forEach((i, k) => {
    if (k === 0 || !equal(order[k - 1]!, i)) {
      firsts.push(i);
      counts.push(0);
    }
    inverse[i] = firsts.length - 1;
    counts[counts.length - 1]!++;
  });
  return { firsts: Int32Array.from(firsts), inverse, counts: Int32Array.from(counts) };
}

/** The tuple-like result of unique, with the parts asked for in PyTorch's order. */
function uniqueResult(output: Tensor, inverseIndices: Tensor, counts: Tensor, withInverse: boolean, withCounts: boolean): UniqueResult {
  const parts = [output, ...(withInverse ? [inverseIndices] : []), ...(withCounts ? [counts] : [])];
  return Object.freeze({
    ...parts, output, inverseIndices, counts, length: parts.length,
    *[Symbol.iterator]() {
      yield* parts;
    },
  });
}

/**
 * `x.unique(sorted?, returnInverse?, returnCounts?, dim?)`. The output is always sorted (PyTorch
 * leaves the order unspecified with `sorted: false`); each NaN is its own unique value (NaN ≠ NaN),
 * after every number, as on PyTorch's CUDA; of equal values the first in the input is kept (−0 or
 * +0). With a dim, the slices along it are compared as sequences, in row-major order.
 */
function uniquePlan(x: Tensor, args: readonly unknown[]): HostPlan<Tensor | UniqueResult> {
  const op = 'unique';
  const a = bindArguments(op, args, ['sorted', 'returnInverse', 'returnCounts', 'dim']);
  boolArgument(op, 'sorted', a.sorted, true);
  const withInverse = boolArgument(op, 'returnInverse', a.returnInverse, false);
  const withCounts = boolArgument(op, 'returnCounts', a.returnCounts, false);
  const dim = a.dim === undefined || a.dim === null ? null : intArgument(op, 'dim', a.dim, 0);
  if (dim !== null && x.ndim === 0) throw new IndexError(`Dimension specified as ${dim} but tensor has no dimensions`);
  const d = dim === null ? null : normalizeDim(dim, x.ndim, op);
  if (d !== null && x.shape.some((s, k) => s === 0 && k !== d)) {
    throw new ShapeError("unique(): There are 0 sized dimensions, and they aren't selected, so unique cannot be applied", op);
  }
  checkCompute(op, x); // before the read: the output is gathered in x's dtype
  const source = x.detach(); // unique has no gradient
  const upload = (values: Int32Array) => tensor(values, { dtype: int32, device: x.device });
  return {
    needs: [source],
    finish: ([values]) => {
      const v = values!;
      let found: ReturnType<typeof groups>;
      let output: (firsts: Tensor) => Tensor;
      if (d === null) {
        found = groups(v.length, (i, j) => ascending(v[i]!, v[j]!), (i, j) => v[i] === v[j]);
        output = (firsts) => source.reshape([-1]).indexSelect(0, firsts);
      } else {
        const n = x.shape[d]!;
        const inner = x.shape.slice(d + 1).reduce((p, s) => p * s, 1);
        const outer = x.numel() / Math.max(n * inner, 1);
        const at = (slice: number, e: number) => v[(Math.floor(e / inner) * n + slice) * inner + (e % inner)]!;
        const length = outer * inner;
        const compare = (i: number, j: number) => {
          for (let e = 0; e < length; e++) {
            const c = ascending(at(i, e), at(j, e));
            if (c !== 0) return c;
          }
          return 0;
        };
        const equal = (i: number, j: number) => {
          for (let e = 0; e < length; e++) if (at(i, e) !== at(j, e)) return false;
          return true;
        };
        found = groups(n, compare, equal);
        output = (firsts) => source.indexSelect(d, firsts);
      }
      const out = output(upload(found.firsts));
      if (!withInverse && !withCounts) return out;
      const inverse = upload(found.inverse).reshape(d === null ? x.shape : [x.shape[d]!]);
      return uniqueResult(out, inverse, upload(found.counts), withInverse, withCounts);
    },
  };
}

/** `x.nonzero({ asTuple })`, reading the values synchronously. */
export function nonzero(x: Tensor, args: readonly unknown[]): Tensor | Tensor[] {
  return runNow(nonzeroPlan(x, args), 'nonzero', 'use `await x.nonzeroAsync()`');
}

/** `x.nonzeroAsync({ asTuple })`: `nonzero` on any device. */
export function nonzeroAsync(x: Tensor, args: readonly unknown[]): Promise<Tensor | Tensor[]> {
  return runLater(nonzeroPlan(x, args));
}

/** `x.unique(...)`, reading the values synchronously. */
export function unique(x: Tensor, args: readonly unknown[]): Tensor | UniqueResult {
  return runNow(uniquePlan(x, args), 'unique', 'use `await x.uniqueAsync(...)`');
}

/** `x.uniqueAsync(...)`: `unique` on any device. */
export function uniqueAsync(x: Tensor, args: readonly unknown[]): Promise<Tensor | UniqueResult> {
  return runLater(uniquePlan(x, args));
}
