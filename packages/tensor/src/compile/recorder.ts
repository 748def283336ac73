// The capture layer: a proxy around each backend that forwards every call and records it, plus what
// library code declares while it runs (dynamic scalars, host effects, guards, GradScaler's branch).
// A recording owns the storages allocated while it ran: their frees are deferred for as long as a
// program replays into them. What defers them (Frees) holds handles only, never the recording:
// each storage and its garbage collector's record reach it, and reaching the recorded calls, which
// hold the storages, would keep every storage of the recording alive as long as any one of them.
import type { Backend, TensorRef } from '../backend/contract.js';
import type { Tensor } from '../tensor/tensor.js';
import type { OwnedStorage } from './memory-plan.js';
import { compileBreak, compileState, RECORDED, type CaptureHooks, type CompileError, type RecordedAllocation } from './state.js';

/** One recorded backend call: `fn.apply(self, args)` repeats it. */
export interface CallStep {
  readonly kind: 'call';
  /** 'kernels.matmul', 'fused.adamw', 'write', ... */
  readonly name: string;
  /** The backend the call goes to. */
  readonly backend: Backend<unknown>;
  readonly self: object;
  readonly fn: (...args: unknown[]) => void;
  readonly args: unknown[];
}

/** GradScaler's found-inf read: the steps up to the matching 'end' run only when every flag is 0. */
export interface BranchStep {
  readonly kind: 'branch';
  readonly flags: readonly { readonly backend: Backend<unknown>; readonly ref: TensorRef<unknown> }[];
}

/** A host effect re-applied at replay; `found` is the last branch's outcome. */
export interface EffectStep {
  readonly kind: 'effect';
  readonly run: (found: boolean) => void;
}

export type Step = CallStep | BranchStep | { readonly kind: 'end' } | EffectStep;

/** A value a replay recomputes: argument `arg` of step `step` (inside a nested array at `sub`). */
export interface DynamicSlot {
  readonly step: number;
  readonly arg: number;
  readonly compute: () => unknown;
}

/** A condition a replay needs, read now and compared with its value at capture. */
export interface LibraryGuard {
  readonly name: string;
  readonly read: () => unknown;
  readonly value: unknown;
}

const isRef = (x: unknown): x is TensorRef<unknown> => typeof x === 'object' && x !== null && 'strides' in x && 'storage' in x;

/** The frees of a recording's storages: deferred while it owns them, done once it lets go. */
class Frees {
  /** The storages allocated while recording, and what the memory plan needs to know of each. */
  readonly owned = new Map<unknown, OwnedStorage>();
  private readonly deferred: { backend: Backend<unknown>; handle: unknown }[] = [];

  constructor(private owning: boolean) {}

  free(backend: Backend<unknown>, handle: unknown): void {
    if (this.owning && this.owned.has(handle)) this.deferred.push({ backend, handle });
    else backend.free(handle);
  }

  release(): void {
    this.owning = false;
    for (const { backend, handle } of this.deferred.splice(0)) backend.free(handle);
  }

  /** `handles` are no longer the recording's: freed now if their frees were deferred, else when they come. */
  disown(handles: readonly unknown[]): void {
    const gone = new Set(handles);
    for (const h of gone) this.owned.delete(h);
    let kept = 0;
    for (const d of this.deferred) {
      if (gone.has(d.handle)) d.backend.free(d.handle);
      else this.deferred[kept++] = d;
    }
    this.deferred.length = kept;
  }
}

/**
 * What a storage the proxy allocates frees through, and its real backend. Made here, not in the
 * proxy's scope: a closure there would share its context, which holds the recording.
 */
function recordedAllocation(frees: Frees, backend: Backend<unknown>): RecordedAllocation {
  return { backend, free: (handle) => frees.free(backend, handle) };
}

export class Recorder implements CaptureHooks {
  readonly steps: Step[] = [];
  readonly dynamic: DynamicSlot[] = [];
  readonly guards: LibraryGuard[] = [];
  /** Tensors whose `.grad` was read or changed, with their grad at entry. */
  readonly gradEntry = new Map<Tensor, Tensor | null>();
  /** Outcome of each branch at capture (true: found inf, the optimizer segment was skipped). */
  readonly branches: boolean[] = [];
  /** Tensors the recorded function made (kept until the program is built). */
  readonly made: Tensor[] = [];
  /** Set by onBreak 'eager': the call goes on eagerly, unrecorded. */
  broken = false;
  /** The first break, when the capture could not continue. */
  breakReason: string | undefined;
  private readonly proxies = new Map<object, object>();
  private readonly frees: Frees;

  private allowedReads = 0;
  private readonly scopes: { value: number; compute: () => number }[][] = [];
  private readonly byIdentity = new Map<object, () => unknown>();

  /**
   * `owning`: this recording may become a program, so the storages it allocates stay allocated
   * (a first call of a signature is only compared with the next one: its frees go through).
   */
  constructor(private readonly breakToEager: boolean, owning: boolean) {
    this.frees = new Frees(owning);
  }

  /** The storages allocated while recording (and still the recording's), with what the memory plan needs to know of each. */
  get owned(): ReadonlyMap<unknown, OwnedStorage> {
    return this.frees.owned;
  }

  /** Record from now on (nested captures are not supported: the outer one records the inner function's calls). */
  start(): void {
    compileState.recorder = this;
  }

  stop(): void {
    if (compileState.recorder === this) compileState.recorder = null;
  }

  get active(): boolean {
    return compileState.recorder === this && !this.broken;
  }

  proxy<B extends object>(backend: B): B {
    if (this.broken) return backend;
    let p = this.proxies.get(backend);
    if (p === undefined) this.proxies.set(backend, (p = this.wrap(backend as unknown as Backend<unknown>)));
    return p as B;
  }

  /** The backend with every kernel, fused kernel, allocation and host write recorded, and frees deferred. */
  private wrap(backend: Backend<unknown>): Backend<unknown> {
    const record = (group: 'kernels' | 'fused', table: object) => {
      const out: Record<string, (...args: unknown[]) => void> = {};
      for (const name of Object.keys(table)) {
        const fn = (table as Record<string, (...args: unknown[]) => void>)[name]!;
        if (typeof fn !== 'function') continue;
        out[name] = (...args: unknown[]) => {
          if (this.active) this.addCall(backend, `${group}.${name}`, table, fn, args);
          fn.apply(table, args);
        };
      }
      return out;
    };
    const self = this;
    const frees = this.frees;
    const recorded = recordedAllocation(frees, backend);
    return Object.assign(Object.create(backend) as Backend<unknown>, {
      kernels: record('kernels', backend.kernels),
      ...(backend.fused ? { fused: record('fused', backend.fused) } : {}),
      alloc(index: number, dtype: Parameters<Backend['alloc']>[1], numel: number): unknown {
        const handle = backend.alloc(index, dtype, numel);
        if (self.active) frees.owned.set(handle, { backend, index, dtype, numel });
        return handle;
      },
      free: recorded.free,
      [RECORDED]: recorded,
      write(handle: unknown, data: Parameters<Backend['write']>[1], offset: number, hint?: Parameters<Backend['write']>[3]): void {
        if (self.active) self.addCall(backend, 'write', backend, backend.write as (...a: unknown[]) => void, [handle, data.slice(), offset, hint]);
        backend.write(handle, data, offset, hint);
      },
    });
  }

  private addCall(backend: Backend<unknown>, name: string, self: object, fn: (...args: unknown[]) => void, args: unknown[]): void {
    if (name === 'kernels.random' && !this.byIdentity.has(args[1] as object)) {
      // Only a Generator's specs can be redrawn per replay.
      this.fail(compileBreak('COMPILE_RANDOM', 'random numbers were drawn without a Generator', 'draw them outside the compiled function and pass them in'));
      return;
    }
    const index = this.steps.length;
    const scope = this.scopes[this.scopes.length - 1];
    args.forEach((a, i) => {
      if (typeof a === 'number' && scope) {
        const hit = scope.find((b) => Object.is(b.value, a));
        if (hit) this.dynamic.push({ step: index, arg: i, compute: hit.compute });
      } else if (typeof a === 'object' && a !== null) {
        const compute = this.byIdentity.get(a);
        if (compute) this.dynamic.push({ step: index, arg: i, compute });
      }
    });
    this.steps.push({ kind: 'call', name, backend, self, fn, args: args.slice() });
  }

  hostRead(op: string, remedy: string): void {
    if (!this.active || this.allowedReads > 0) return;
    this.fail(compileBreak('COMPILE_HOST_READ', `a tensor's values were read on the host (${op})`, remedy));
  }

  fail(error: CompileError): void {
    if (!this.active) return;
    this.breakReason = error.message;
    if (!this.breakToEager) throw error;
    this.broken = true; // the rest of this call runs eagerly
  }

  gradSet(t: Tensor, current: Tensor | null): void {
    if (this.active && !this.gradEntry.has(t)) this.gradEntry.set(t, current);
  }

  // ---- what library code declares (participants.ts) ----

  withScalars<T>(bindings: readonly { value: number; compute: () => number }[], fn: () => T): T {
    this.scopes.push([...bindings]);
    try {
      return fn();
    } finally {
      this.scopes.pop();
    }
  }

  dynamicArg(arg: object, compute: () => unknown): void {
    this.byIdentity.set(arg, compute);
  }

  effect(run: (found: boolean) => void): void {
    if (this.active) this.steps.push({ kind: 'effect', run });
  }

  guard(name: string, read: () => unknown): void {
    if (this.active) this.guards.push({ name, read, value: read() });
  }

  async allowedRead<T>(read: () => Promise<T>): Promise<T> {
    this.allowedReads++;
    try {
      return await read();
    } finally {
      this.allowedReads--;
    }
  }

  branch(flags: readonly Tensor[], found: boolean): void {
    if (!this.active) return;
    this.steps.push({
      kind: 'branch',
      flags: flags.map((t) => ({ backend: t._storage.backend, ref: { storage: t._storage.handle, dtype: t.dtype.name, shape: t.shape, strides: t._strides, offset: t._offset } })),
    });
    this.branches.push(found);
  }

  branchEnd(): void {
    if (this.active) this.steps.push({ kind: 'end' });
  }

  /** The storage handles the recorded calls read or write. */
  referencedHandles(): Set<unknown> {
    const handles = new Set<unknown>();
    for (const s of this.steps) {
      if (s.kind !== 'call') continue;
      for (const a of s.args) {
        if (isRef(a)) handles.add(a.storage);
        else if (Array.isArray(a)) for (const r of a) if (isRef(r)) handles.add(r.storage);
      }
      if (s.name === 'write') handles.add(s.args[0]);
    }
    return handles;
  }

  /** Each library guard with its value at capture, one line each ("name: value"). */
  guardLines(): string[] {
    return this.guards.map((g) => `${g.name}: ${JSON.stringify(g.value)}`);
  }

  /** The memory plan no longer uses `handles`: they are freed like any storage. */
  disown(handles: readonly unknown[]): void {
    this.frees.disown(handles);
  }

  /** The recording will not be replayed: free what it kept and stop deferring frees. */
  release(): void {
    this.made.length = 0;
    this.frees.release();
  }
}

export { isRef };
