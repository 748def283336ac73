// Python's subscripts with PyTorch's rules: `x.index(spec)` is `x[spec]`, `x.indexPut_(spec, v)` is
// `x[spec] = v`. A spec is the tuple between the brackets, as an array; its items are integers,
// slices written as strings ('1:3', '::2', ':'), '...' for Ellipsis, null for None (a new dim),
// booleans, and integer or boolean tensors and nested arrays (advanced indexing).
//
// Integers, slices, '...' and null give a view (select, slice, unsqueeze: no copy). Advanced indices
// are broadcast together into one shape B, which replaces the dims they index: where the first of
// them was when they index adjacent dims, else in front (NumPy's rule, as PyTorch applies it after
// the integers have selected their dims away). They are gathered with indexSelect, so gradients
// flow back through indexSelect's backward (a scatterAdd). A boolean mask stands for the integer
// indices of its true elements (its nonzero), so its result shape depends on the data: reading it
// follows the sync/async rule (ops/host-reads.ts). Writes scatter the values into a copy of the
// tensor at the positions the same subscript picks from a tensor of positions.
import { bool, int32 } from '../dtype/dtype.js';
import { DTypeError, IndexError, ShapeError, ValueError } from '../errors/errors.js';
import { schemaDevice } from '../dispatch/device-rule.js';
import { checkCompute } from '../dispatch/run.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { Tensor } from '../tensor/tensor.js';
import { broadcastShapes, contiguousStrides } from '../tensor/shape.js';
import type { Device } from '../device/device.js';
import type { DataArray } from '../tensor/transfer.js';
import { bindArguments, boolArgument, required } from './arguments.js';
import { arange, tensor } from './creation.js';
import { cast, scalarTensor, where } from './elementwise.js';
import { nonzeroCoordinates, runLater, runNow, type HostPlan } from './host-reads.js';
import { alias, select, slice, unsqueeze } from './views.js';

/** Nested arrays of integers (an integer index) or of booleans (a mask), as Python lists in a subscript. */
export type IndexList = readonly (number | boolean | IndexList)[];

/**
 * One item of a subscript (`x[a, b, c]` has three):
 * - an integer: that index of the next dim, which is removed (negatives count from the end);
 * - a slice, as a string `'start:stop'` or `'start:stop:step'` with any part left out (`':'`,
 *   `'1:'`, `'::2'`, `'-3:-1'`): Python's slice of the next dim (step > 0);
 * - `'...'`: Python's Ellipsis, as many `':'` as the other items leave dims;
 * - `null`: Python's None, a new dim of size 1;
 * - an int32 tensor or nested arrays of integers: advanced indexing of the next dim;
 * - a bool tensor or nested arrays of booleans: a mask over the next dims (its shape must match
 *   theirs), the indices of its true elements;
 * - `true` / `false`: a new dim of size 1 / 0, as Python's bools.
 */
export type IndexItem = number | boolean | string | null | Tensor | IndexList;

/** A subscript: the items between Python's brackets, as an array; a single item may be given alone. */
export type IndexSpec = IndexItem | readonly IndexItem[];

/** One view op of basic indexing, replayable on any tensor of the indexed shape. */
type Step =
  | { readonly op: 'select'; readonly dim: number; readonly index: number }
  | { readonly op: 'slice'; readonly dim: number; readonly start: number; readonly end: number; readonly step: number }
  | { readonly op: 'unsqueeze'; readonly dim: number };

/** Values given on the host (nested arrays, Python bools), row-major, with their shape. */
interface HostIndex {
  readonly values: ArrayLike<number>;
  readonly shape: readonly number[];
}

/** An advanced index of the basic view: integers for one dim, or a mask over `sizes.length` dims. */
interface Advanced {
  readonly kind: 'int' | 'mask';
  /** The first dim of the basic view it indexes. */
  readonly dim: number;
  /** The dims it indexes in the indexed tensor's numbering, for messages. */
  readonly named: readonly number[];
  /** The sizes of the dims it indexes. */
  readonly sizes: readonly number[];
  /** Its values: a tensor, or host values. */
  readonly source: Tensor | HostIndex;
}

/** A parsed subscript: the view steps of basic indexing, then the advanced indices of that view. */
interface Subscript {
  readonly steps: readonly Step[];
  readonly advanced: readonly Advanced[];
}

type Item =
  | { readonly kind: 'integer'; readonly value: number }
  | { readonly kind: 'slice'; readonly start?: number; readonly stop?: number; readonly step: number }
  | { readonly kind: 'none' | 'ellipsis' }
  | { readonly kind: 'int' | 'mask'; readonly source: Tensor | HostIndex; readonly rank: number };

const SLICE = /^\s*([+-]?\d+)?\s*:\s*([+-]?\d+)?\s*(?::\s*([+-]?\d+)?\s*)?$/;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Tensor) return 'a Tensor';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return `${typeof v} ${String(v)}`;
}

/** Nested arrays as row-major values and a shape: all integers or all booleans, rectangular. */
function hostList(list: IndexList): { host: HostIndex; isMask: boolean } {
  const shape: number[] = [];
  for (let level: unknown = list; Array.isArray(level); level = level[0]) shape.push(level.length);
  const values: number[] = [];
  let kinds = 0; // 1: integers seen, 2: booleans seen
  const walk = (v: unknown, d: number): void => {
    if (d === shape.length) {
      if (typeof v === 'boolean') kinds |= 2;
      else if (typeof v === 'number' && Number.isInteger(v)) kinds |= 1;
      else throw new TypeError(`index(): an index list holds integers or booleans, got ${describe(v)}`);
      values.push(Number(v));
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[d]) throw new ValueError(`index(): an index list must be rectangular: expected a list of length ${shape[d]} at depth ${d}`);
    for (const e of v) walk(e, d + 1);
  };
  walk(list, 0);
  if (kinds === 3) throw new TypeError('index(): an index list holds integers or booleans, not both');
  return { host: { values, shape }, isMask: kinds === 2 };
}

function classify(v: unknown): Item {
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new TypeError(`index(): an integer index must be an integer, got ${v}`);
    return { kind: 'integer', value: v };
  }
  if (typeof v === 'boolean') return { kind: 'mask', source: { values: [v ? 1 : 0], shape: [] }, rank: 0 };
  if (v === null) return { kind: 'none' };
  if (typeof v === 'string') {
    if (v.trim() === '...') return { kind: 'ellipsis' };
    const m = SLICE.exec(v);
    if (!m) throw new TypeError(`index(): '${v}' is not a slice: write 'start:stop' or 'start:stop:step' (any part may be left out, e.g. ':', '1:', '::2') or '...'`);
    const [start, stop, step] = [m[1], m[2], m[3]].map((s) => (s === undefined ? undefined : Number(s)));
    if (step === 0) throw new ValueError('slice step cannot be zero');
    if (step !== undefined && step < 0) throw new ValueError(`step must be greater than zero (got '${v}'): reverse a dim with flip()`);
    return { kind: 'slice', ...(start === undefined ? {} : { start }), ...(stop === undefined ? {} : { stop }), step: step ?? 1 };
  }
  if (v instanceof Tensor) {
    if (v.dtype === bool) return { kind: 'mask', source: v, rank: v.ndim };
    if (v.dtype !== int32) {
      throw new IndexError(`tensors used as indices must be int32 or bool tensors, got ${v.dtype.name} (PyTorch: long, byte or bool); convert with .int()`);
    }
    return { kind: 'int', source: v, rank: 1 };
  }
  if (Array.isArray(v)) {
    const { host, isMask } = hostList(v as IndexList);
    return { kind: isMask ? 'mask' : 'int', source: host, rank: isMask ? host.shape.length : 1 };
  }
  throw new TypeError(`index(): a subscript item is an integer, a slice string, '...', null, a boolean, a Tensor or an array, got ${describe(v)}`);
}

/** Parse a subscript of a tensor of `shape`: checks counts, integer bounds and mask shapes. */
function parseSubscript(shape: readonly number[], spec: unknown): Subscript {
  const items = (Array.isArray(spec) ? (spec as unknown[]) : [spec]).map(classify);
  const consumes = (it: Item) => (it.kind === 'integer' || it.kind === 'slice' ? 1 : it.kind === 'int' || it.kind === 'mask' ? it.rank : 0);
  const used = items.reduce((n, it) => n + consumes(it), 0);
  if (items.filter((it) => it.kind === 'ellipsis').length > 1) throw new IndexError("an index can only have a single ellipsis ('...')");
  if (used > shape.length) {
    throw new IndexError(shape.length === 0
      ? 'invalid index of a 0-dim tensor: use `await x.item()` to read its value'
      : `too many indices for tensor of dimension ${shape.length}`);
  }
  const view = shape.slice(); // the shape of the view so far
  const named = shape.map((_, d) => d); // each view dim's number in the indexed tensor (a new dim: its view position)
  const steps: Step[] = [];
  const advanced: Advanced[] = [];
  let dim = 0;
  const insert = () => {
    steps.push({ op: 'unsqueeze', dim });
    view.splice(dim, 0, 1);
    named.splice(dim, 0, dim);
  };
  for (const it of items) {
    switch (it.kind) {
      case 'integer': {
        const size = view[dim]!;
        if (it.value < -size || it.value >= size) throw new IndexError(`index ${it.value} is out of bounds for dimension ${named[dim]} with size ${size}`, named[dim], it.value, size);
        steps.push({ op: 'select', dim, index: it.value < 0 ? it.value + size : it.value });
        view.splice(dim, 1);
        named.splice(dim, 1);
        break;
      }
      case 'slice': {
        const size = view[dim]!;
        const clamp = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
        const start = clamp(it.start ?? 0);
        const end = Math.max(clamp(it.stop ?? size), start);
        steps.push({ op: 'slice', dim, start, end, step: it.step });
        view[dim++] = Math.ceil((end - start) / it.step);
        break;
      }
      case 'none':
        insert();
        dim++;
        break;
      case 'ellipsis':
        dim += shape.length - used;
        break;
      case 'int':
        advanced.push({ kind: 'int', dim, named: [named[dim]!], sizes: [view[dim]!], source: it.source });
        dim++;
        break;
      case 'mask': {
        // A 0-dim mask (a Python bool) indexes a new dim of size 1: x[True] is x[None] picked at 0.
        if (it.rank === 0) insert();
        const rank = Math.max(it.rank, 1);
        const maskShape = it.rank === 0 ? [1] : it.source.shape;
        for (let j = 0; j < rank; j++) {
          if (maskShape[j] !== view[dim + j]) {
            throw new IndexError(`The shape of the mask [${maskShape.join(', ')}] at index ${j} does not match the shape of the indexed tensor [${view.join(', ')}] at index ${dim + j}`);
          }
        }
        const source = it.rank > 0 ? it.source : it.source instanceof Tensor ? it.source.reshape([1]) : { values: it.source.values, shape: [1] };
        advanced.push({ kind: 'mask', dim, named: named.slice(dim, dim + rank), sizes: view.slice(dim, dim + rank), source });
        dim += rank;
        break;
      }
    }
  }
  return { steps, advanced };
}

/** Basic indexing: the view steps applied to `x` (an alias when there are none). */
function viewOf(x: Tensor, sub: Subscript): Tensor {
  if (sub.steps.length === 0) return alias(x);
  return sub.steps.reduce((t, s) => (s.op === 'select' ? select(t, s.dim, s.index) : s.op === 'slice' ? slice(t, s.dim, s.start, s.end, s.step) : unsqueeze(t, s.dim)), x);
}

function tensorSources(sub: Subscript, kind: 'int' | 'mask'): Tensor[] {
  return sub.advanced.filter((a) => a.kind === kind && a.source instanceof Tensor).map((a) => a.source as Tensor);
}

function checkBounds(values: ArrayLike<number>, size: number, dim: number): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < -size || v >= size) throw new IndexError(`index ${v} is out of bounds for dimension ${dim} with size ${size}`, dim, v, size);
  }
}

/**
 * The int32 index tensors on `device`, one per indexed dim of the view (a mask gives one per dim
 * it covers), negatives wrapped. `masks` and `ints` are the values read of the tensor masks and
 * int tensors, in order (null: an int tensor not read, left to the kernels' bounds guards).
 */
function indexTensors(sub: Subscript, device: Device, masks: readonly DataArray[], ints: readonly (DataArray | null)[]): Tensor[] {
  const upload = (values: Int32Array, shape: readonly number[]) => tensor(values, { dtype: int32, device }).reshape(shape);
  let m = 0;
  let k = 0;
  return sub.advanced.flatMap((a) => {
    if (a.kind === 'mask') {
      const values = a.source instanceof Tensor ? masks[m++]! : a.source.values;
      return nonzeroCoordinates(values, a.sizes).map((c) => upload(c, [c.length]));
    }
    const size = a.sizes[0]!;
    if (!(a.source instanceof Tensor)) {
      checkBounds(a.source.values, size, a.named[0]!);
      return [upload(Int32Array.from(a.source.values, (v) => (v < 0 ? v + size : v)), a.source.shape)];
    }
    const values = ints[k++] ?? null;
    if (values !== null) checkBounds(values, size, a.named[0]!);
    let t = a.source.device.type === 'cpu' && device.type !== 'cpu' ? a.source.to(device) : a.source;
    if (values === null || values.some((v) => v < 0)) t = t.add(size).where(t.lt(0), t);
    return [t];
  });
}

/**
 * Advanced indexing of the basic view: the index tensors broadcast to B, which replaces the
 * indexed dims where the first of them was when they are adjacent, else goes in front. The
 * indexed dims are flattened into one and picked at the row-major linear index (indexSelect).
 */
function pick(view: Tensor, sub: Subscript, indices: readonly Tensor[]): Tensor {
  const dims = sub.advanced.flatMap((a) => a.sizes.map((_, j) => a.dim + j));
  let shape: number[];
  try {
    shape = broadcastShapes(indices.map((t) => t.shape), 'index');
  } catch {
    throw new IndexError(`shape mismatch: indexing tensors could not be broadcast together with shapes ${indices.map((t) => `[${t.shape.join(', ')}]`).join(', ')}`);
  }
  const adjacent = dims.every((d, j) => d === dims[0]! + j);
  const rest = view.shape.map((_, d) => d).filter((d) => !dims.includes(d));
  const w = adjacent ? view : view.permute([...dims, ...rest]);
  const p = adjacent ? dims[0]! : 0;
  const m = dims.length;
  let linear = indices[m - 1]!;
  let stride = w.shape[p + m - 1]!;
  for (let j = m - 2; j >= 0; j--) {
    linear = indices[j]!.mul(stride).add(linear);
    stride *= w.shape[p + j]!;
  }
  const flat = m > 1 ? w.flatten(p, p + m - 1) : w;
  const picked = flat.indexSelect(p, linear.expand(shape).reshape([-1]));
  return picked.reshape([...flat.shape.slice(0, p), ...shape, ...flat.shape.slice(p + 1)]);
}

/** The plan of `x[spec]`: a view, or the advanced indices gathered once the masks are read. */
function indexPlan(x: Tensor, spec: unknown): HostPlan<Tensor> {
  if (spec === undefined) throw new TypeError("index() missing required argument 'indices'");
  const sub = parseSubscript(x.shape, spec);
  const view = viewOf(x, sub);
  if (sub.advanced.length === 0) return { needs: [], finish: () => view };
  checkCompute('index', x); // before any read: the gather computes in x's dtype
  return {
    needs: tensorSources(sub, 'mask'),
    checks: tensorSources(sub, 'int'),
    finish: (masks, ints) => pick(view, sub, indexTensors(sub, x.device, masks, ints)),
  };
}

/** `torch.masked_select(x, mask)`: the elements where the bool mask (broadcast with x) is true, as a 1-D tensor. */
function maskedSelectPlan(x: Tensor, mask: unknown): HostPlan<Tensor> {
  if (!(mask instanceof Tensor)) throw new TypeError(`maskedSelect(): argument 'mask' must be a Tensor, got ${describe(mask)}`);
  if (mask.dtype !== bool) throw new DTypeError(`maskedSelect(): expected a bool tensor for mask, got ${mask.dtype.name}`, 'maskedSelect', mask.dtype.name);
  schemaDevice('maskedSelect', [{ name: 'self', tensor: x }, { name: 'mask', tensor: mask }]);
  const shape = broadcastShapes([x.shape, mask.shape], 'maskedSelect');
  return indexPlan(x.expand(shape), [mask.expand(shape)]);
}

/** The row-major position of each element of a tensor of `shape`, as int32 on `device`. */
function positionsOf(shape: readonly number[], device: Device): Tensor {
  const strides = contiguousStrides(shape);
  return shape.reduce<Tensor>(
    (acc, size, d) => acc.add(arange(size, { dtype: int32, device }).mul(strides[d]!).reshape([size, ...shape.slice(d + 1).map(() => 1)])),
    scalarTensor(0, int32, device),
  );
}

/** The values of a write, as a tensor of x's dtype (advanced writes need that dtype already, as PyTorch's index_put_). */
function valuesArgument(op: string, x: Tensor, v: unknown, advanced: boolean): Tensor {
  if (typeof v === 'number' || typeof v === 'boolean') return scalarTensor(x.dtype === bool ? Number(Number(v) !== 0) : Number(v), x.dtype, x.device);
  if (!(v instanceof Tensor)) throw new TypeError(`${op}(): argument 'values' must be a Tensor, a number or a boolean, got ${describe(v)}`);
  if (v.dtype === x.dtype) return v;
  if (advanced) {
    throw new DTypeError(`${op}(): Index put requires the source and destination dtypes match, got ${x.dtype.name} for the destination and ${v.dtype.name} for the source.`, op, v.dtype.name);
  }
  return cast(v, x.dtype);
}

/** x with `values` (broadcast to `at`'s shape) written, or added, at the row-major positions `at`. */
function written(x: Tensor, at: Tensor, values: Tensor, accumulate: boolean): Tensor {
  const flat = x.reshape([-1]);
  const positions = at.reshape([-1]);
  const src = values.expand(at.shape).reshape([-1]);
  if (!accumulate) return flat.scatter(0, positions, src).view(x.shape);
  const sum = x.dtype === bool ? flat.int().scatterAdd(0, positions, src.int()).ne(0) : flat.scatterAdd(0, positions, src);
  return sum.view(x.shape);
}

function broadcastsTo(from: readonly number[], to: readonly number[]): boolean {
  return from.length <= to.length && from.every((s, i) => s === 1 || s === to[to.length - from.length + i]);
}

/**
 * A write through one tensor mask whose values do not depend on how many elements it selects
 * (size 1 or absent along the selected dim): `where` over the masked region, so the mask is never
 * read. Null when the write is not of that kind.
 */
function maskedWrite(x: Tensor, sub: Subscript, region: Tensor, values: Tensor, accumulate: boolean): Tensor | null {
  const a = sub.advanced.length === 1 ? sub.advanced[0]! : null;
  if (a === null || a.kind !== 'mask' || !(a.source instanceof Tensor)) return null;
  const rank = a.sizes.length;
  const after = region.ndim - a.dim - rank;
  const at = values.ndim - after - 1; // the values dim the selected elements would run along
  if (at >= 0 && values.shape[at] !== 1) return null;
  const spread = at < 0 ? values : values.reshape([...values.shape.slice(0, at), ...a.sizes.map(() => 1), ...values.shape.slice(at + 1)]);
  if (!broadcastsTo(spread.shape, region.shape)) return null;
  const source = a.source.device.type === 'cpu' && x.device.type !== 'cpu' ? a.source.to(x.device) : a.source;
  const mask = source.reshape([...Array<number>(a.dim).fill(1), ...a.sizes, ...Array<number>(after).fill(1)]);
  const old = viewOf(x, sub);
  return written(x, region, where(mask, spread, accumulate ? 0 : old), accumulate);
}

/** The plan of `x[spec] = values` (or `+=` with accumulate), out of place. */
function indexPutPlan(x: Tensor, args: readonly unknown[], op: string): HostPlan<Tensor> {
  const a = bindArguments(op, args, ['indices', 'values', 'accumulate']);
  const spec = required(op, 'indices', a.indices);
  const accumulate = boolArgument(op, 'accumulate', a.accumulate, false);
  const sub = parseSubscript(x.shape, spec);
  checkCompute(op, x);
  const values = valuesArgument(op, x, required(op, 'values', a.values), sub.advanced.length > 0);
  const region = viewOf(positionsOf(x.shape, x.device), sub);
  const direct = sub.advanced.length === 0 ? region : null;
  const masked = direct === null ? maskedWrite(x, sub, region, values, accumulate) : null;
  if (masked !== null) return { needs: [], finish: () => masked };
  return {
    needs: tensorSources(sub, 'mask'),
    checks: tensorSources(sub, 'int'),
    finish: (masks, ints) => {
      const at = direct ?? pick(region, sub, indexTensors(sub, x.device, masks, ints));
      if (!broadcastsTo(values.shape, at.shape)) {
        throw new ShapeError(`shape mismatch: value tensor of shape [${values.shape.join(', ')}] cannot be broadcast to indexing result of shape [${at.shape.join(', ')}]`, op);
      }
      return written(x, at, values, accumulate);
    },
  };
}

/** `x.index(indices)`: `x[indices]`, reading boolean masks synchronously. */
export function index(x: Tensor, indices: unknown): Tensor {
  return runNow(indexPlan(x, indices), 'index', 'use `await x.indexAsync(indices)`');
}

/** `x.indexAsync(indices)`: `x[indices]` on any device. */
export function indexAsync(x: Tensor, indices: unknown): Promise<Tensor> {
  return runLater(indexPlan(x, indices));
}

/**
 * `x.indexPut(indices, values, accumulate?)`: a copy with `x[indices] = values` done; with op
 * 'indexPut_', the value indexPut_ writes. The out-of-place form is a promote op in CUDA autocast
 * regions (AC-12), as PyTorch's index_put; in-place ops are not autocast.
 */
export function indexPut(x: Tensor, args: readonly unknown[], op: 'indexPut' | 'indexPut_' = 'indexPut'): Tensor {
  const run = (self: Tensor, ...rest: unknown[]) => runNow(indexPutPlan(self, rest, op), op,
    "find the mask's indices first with `await mask.nonzeroAsync({ asTuple: true })` and index with them, or give values of one element along the mask's dims");
  return op === 'indexPut' && !autocastIdle() ? autocastOp('indexPut', [x, ...args], run) : run(x, ...args);
}

/** `x.maskedSelect(mask)`, reading the mask synchronously. */
export function maskedSelect(x: Tensor, mask: unknown): Tensor {
  return runNow(maskedSelectPlan(x, mask), 'maskedSelect', 'use `await x.maskedSelectAsync(mask)`');
}

/** `x.maskedSelectAsync(mask)`: `maskedSelect` on any device. */
export function maskedSelectAsync(x: Tensor, mask: unknown): Promise<Tensor> {
  return runLater(maskedSelectPlan(x, mask));
}
