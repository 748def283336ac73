// A program's memory plan. A capture allocates a fresh storage for every intermediate (its frees
// are deferred, so none is reused while it runs): replayed as recorded, a program would hold the
// sum of all of them, where eager holds only what is live at once. The plan gives each storage the
// program owns a lifetime (its first and last recorded call) and lets storages whose lifetimes do
// not overlap share one allocation, as an arena planner does. A replay then writes every shared
// allocation before it reads it, as the capture did; the storages no call uses any more are freed.
// Before that, the constants: fills a replay would repeat to the same effect run only at capture.
import type { Backend, TensorRef } from '../backend/contract.js';
import type { DTypeName } from '../dtype/dtype.js';
import { isRef, type CallStep, type Step } from './recorder.js';

/** What the plan needs to know of a storage the capture allocated. */
export interface OwnedStorage {
  readonly backend: Backend<unknown>;
  readonly index: number;
  readonly dtype: DTypeName;
  readonly numel: number;
}


interface Lifetime {
  first: number;
  last: number;
}

/**
 * Rewrites `steps` so that owned storages with disjoint lifetimes share one allocation, and
 * returns the storages that no step refers to any more (to be freed). `owned` describes every
 * storage the capture allocated; `pinned` are those that must keep their own allocation: what the
 * caller reads after a replay (the returned value, `.grad` tensors) and what a step refers to
 * other than as a kernel argument or inside an argument list (a branch's flags, a ref inside an
 * object), whose uses the plan cannot see. When `lastUses` is given, it receives for each step the
 * allocations whose contents die there: the last use of a storage that is neither pinned nor
 * hidden, after which nothing reads that allocation until a later lifetime writes it.
 */
export function planMemory(steps: Step[], owned: ReadonlyMap<unknown, OwnedStorage>, pinned: ReadonlySet<unknown>, lastUses?: Map<Step, unknown[]>): unknown[] {
  const lifetimes = new Map<unknown, Lifetime>();
  const hidden = new Set<unknown>(pinned);
  const use = (handle: unknown, at: number) => {
    if (!owned.has(handle)) return;
    const life = lifetimes.get(handle);
    if (life === undefined) lifetimes.set(handle, { first: at, last: at });
    else life.last = at;
  };
  steps.forEach((s, at) => {
    if (s.kind === 'branch') {
      for (const f of s.flags) hidden.add(f.ref.storage);
      return;
    }
    if (s.kind !== 'call') return;
    s.args.forEach((a, i) => {
      if (s.name === 'write' && i === 0) use(a, at);
      else if (isRef(a)) use(a.storage, at);
      else if (Array.isArray(a)) for (const r of a) if (isRef(r)) use(r.storage, at); else hideRefsIn(r, hidden);
      else hideRefsIn(a, hidden);
    });
  });

  // Walk the calls in order: a storage whose lifetime starts takes the smallest free allocation of
  // its kind that is large enough, else keeps its own; one whose lifetime ended frees its allocation.
  const target = new Map<unknown, unknown>();
  const free: { handle: unknown; numel: number; kind: string }[] = [];
  const kindOf = (o: OwnedStorage) => `${o.dtype} ${o.index}`;
  const starts = groupBy(lifetimes, (l) => l.first);
  const ends = groupBy(lifetimes, (l) => l.last);
  for (let at = 0; at < steps.length; at++) {
    for (const handle of starts.get(at) ?? []) {
      if (hidden.has(handle)) continue;
      const o = owned.get(handle)!;
      let best = -1;
      free.forEach((f, i) => {
        if (f.kind === kindOf(o) && owned.get(f.handle)!.backend === o.backend && f.numel >= o.numel && (best < 0 || f.numel < free[best]!.numel)) best = i;
      });
      if (best >= 0) target.set(handle, free.splice(best, 1)[0]!.handle);
    }
    for (const handle of ends.get(at) ?? []) {
      if (hidden.has(handle)) continue;
      const allocation = target.get(handle) ?? handle;
      free.push({ handle: allocation, numel: owned.get(allocation)!.numel, kind: kindOf(owned.get(allocation)!) });
    }
  }
  if (lastUses !== undefined) {
    for (const [handle, life] of lifetimes) {
      if (hidden.has(handle)) continue;
      const step = steps[life.last]!;
      const list = lastUses.get(step) ?? [];
      list.push(target.get(handle) ?? handle);
      lastUses.set(step, list);
    }
  }
  if (target.size === 0) return [];

  steps.forEach((s) => {
    if (s.kind === 'call') retarget(s, target);
  });
  return [...target.keys()];
}

/** Refs somewhere inside `x` (an options object, say) are used in ways the plan cannot follow. */
function hideRefsIn(x: unknown, hidden: Set<unknown>, depth = 0): void {
  if (typeof x !== 'object' || x === null || depth > 3 || ArrayBuffer.isView(x)) return;
  if (isRef(x)) {
    hidden.add(x.storage);
    return;
  }
  for (const v of Object.values(x)) hideRefsIn(v, hidden, depth + 1);
}

/** The call's arguments with each storage in `target` replaced; argument lists are copied, never changed in place. */
function retarget(s: CallStep, target: ReadonlyMap<unknown, unknown>): void {
  const moved = (r: TensorRef<unknown>) => (target.has(r.storage) ? { ...r, storage: target.get(r.storage) } : r);
  const args = s.args as unknown[];
  args.forEach((a, i) => {
    if (s.name === 'write' && i === 0) {
      if (target.has(a)) args[i] = target.get(a);
    } else if (isRef(a)) {
      args[i] = moved(a);
    } else if (Array.isArray(a) && a.some((r) => isRef(r) && target.has(r.storage))) {
      args[i] = a.map((r) => (isRef(r) ? moved(r) : r));
    }
  });
}

function groupBy(lifetimes: ReadonlyMap<unknown, Lifetime>, key: (l: Lifetime) => number): Map<number, unknown[]> {
  const out = new Map<number, unknown[]>();
  for (const [handle, life] of lifetimes) {
    const list = out.get(key(life));
    if (list) list.push(handle);
    else out.set(key(life), [handle]);
  }
  return out;
}

/** Kernels whose last ref argument is their output and whose other refs are inputs they only read (the contract's rule for them). */
const READS_ALL_BUT_LAST = new Set([
  'kernels.unary', 'kernels.binary', 'kernels.compare', 'kernels.where', 'kernels.cast', 'kernels.copy', 'kernels.reduce',
  'kernels.argReduce', 'kernels.matmul', 'kernels.gather', 'fused.softmax', 'fused.logSoftmax', 'fused.addcmul', 'fused.crossEntropy',
  'fused.maxPool2dBackward',
  'fused.stridedSum',
]);

/** The storages a call may write: its output for the kernels above, every storage it names for any other. */
function writtenBy(s: CallStep): unknown[] {
  if (s.name === 'write') return [s.args[0]];
  const refs = s.args.flatMap((a) => (isRef(a) ? [a] : Array.isArray(a) ? a.filter(isRef) : []));
  return READS_ALL_BUT_LAST.has(s.name) ? refs.slice(-1).map((r) => r.storage) : refs.map((r) => r.storage);
}

/** What `planConstants` decided. */
export interface ConstantPlan {
  /** The fills a replay skips. */
  readonly fills: ReadonlySet<Step>;
  /** The storages holding the constants, which must keep their own allocation. */
  readonly storages: readonly unknown[];
  /** Storages of duplicate constants, no longer used by any step (to be freed). */
  readonly merged: readonly unknown[];
}

/**
 * The fills a replay need not repeat: a `kernels.fill` of a storage the capture allocated, with a
 * value that does not change between replays (not in `dynamic`), where no other call may write
 * that storage, so it still holds the value the capture wrote (the scalar operands of `x.mul(2)`,
 * which eager keeps cached). `exposed` are storages the caller can reach (`.grad` tensors): theirs
 * are repeated. Constants of one backend, device, dtype, size, layout and value share a storage:
 * `steps` are rewritten to use the first one.
 */
export function planConstants(steps: Step[], owned: ReadonlyMap<unknown, OwnedStorage>, exposed: ReadonlySet<unknown>, dynamic: ReadonlySet<Step>): ConstantPlan {
  const writers = new Map<unknown, number>();
  for (const s of steps) {
    if (s.kind === 'call') for (const h of new Set(writtenBy(s))) writers.set(h, (writers.get(h) ?? 0) + 1);
  }
  const fills = steps.filter((s): s is CallStep => {
    if (s.kind !== 'call' || s.name !== 'kernels.fill' || dynamic.has(s) || !isRef(s.args[0])) return false;
    const handle = s.args[0].storage;
    return owned.has(handle) && !exposed.has(handle) && writers.get(handle) === 1;
  });
  const first = new Map<Backend<unknown>, Map<string, unknown>>();
  const target = new Map<unknown, unknown>();
  for (const s of fills) {
    const { storage, shape, strides, offset } = s.args[0] as TensorRef<unknown>;
    const o = owned.get(storage)!;
    const key = `${o.index} ${o.dtype} ${o.numel} [${shape.join()}] [${strides.join()}] ${offset} ${Object.is(s.args[1], -0) ? '-0' : String(s.args[1])}`;
    let keys = first.get(o.backend);
    if (keys === undefined) first.set(o.backend, (keys = new Map()));
    const kept = keys.get(key);
    if (kept === undefined) keys.set(key, storage);
    else target.set(storage, kept);
  }
  if (target.size > 0) for (const s of steps) if (s.kind === 'call') retarget(s, target);
  return { fills: new Set(fills), storages: [...first.values()].flatMap((k) => [...k.values()]), merged: [...target.keys()] };
}
