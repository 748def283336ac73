// compile(fn): call 1 runs eagerly (and is recorded), call 2 is captured at the backend boundary and
// checked against call 1, later calls replay the recorded backend calls: no dispatch, autocast,
// autograd or allocation above the backend, only guards, recomputed scalars and host effects.
import type { Backend, PreparedCall, PreparedProgram, TensorRef } from '../backend/contract.js';
import { listBackends } from '../backend/registry.js';
import { anomalyModeActive } from '../amp/anomaly.js';
import { getAutocastDtype, isAutocastEnabled } from '../amp/autocast.js';
import { isGradEnabled } from '../autograd/grad-mode.js';
import { fusedKernelsEnabled } from '../dispatch/fused.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { freeingTemporaries } from '../tensor/temporaries.js';
import { Tensor } from '../tensor/tensor.js';
import { planConstants, planMemory } from './memory-plan.js';
import { isRef, Recorder, type CallStep, type EffectStep, type Step } from './recorder.js';
import { CompileError, compileState, markStale } from './state.js';

/** How `compile` behaves. */
export interface CompileOptions {
  /**
   * At a trace break (a host read, a tensor used as a JS number): `'error'` throws a
   * CompileError naming the user's line; `'eager'` runs that signature eagerly from then on and warns once.
   */
  readonly onBreak?: 'error' | 'eager';
  /** Programs traced per compiled function before new signatures run eagerly (with one warning). Default 8. */
  readonly recompileLimit?: number;
  /** `'eager'` makes compile a pass-through, as does `CORE_COMPILE=0` in the environment. Default `'replay'`. */
  readonly mode?: 'replay' | 'eager';
}

/** One cached program, as `explain()` describes it. */
export interface CompiledProgramInfo {
  /** The guards a call must pass to replay this program, e.g. "arg 0: Tensor [4, 16] float32 cpu". */
  readonly guards: readonly string[];
  /** The program's segments in order (GradScaler's optimizer segment runs only when no Inf/NaN was found). */
  readonly segments: readonly {
    /** 'step', 'optimizer (runs when no Inf/NaN was found)' or 'after the optimizer'. */
    readonly name: string;
    /** Backend calls in the segment. */
    readonly kernels: number;
    /** Calls per kernel, e.g. { 'kernels.matmul': 5 }. */
    readonly byKernel: Readonly<Record<string, number>>;
  }[];
  /** Scalar arguments recomputed at every replay (learning rates, Adam's bias corrections). */
  readonly dynamicScalars: number;
  /** Host effects re-applied after every replay (step counters, `.grad` attachments). */
  readonly hostEffects: number;
  /** Storages the program owns (allocated once, at capture). */
  readonly storages: number;
  /**
   * How a replay runs: 'prepared (…)' with the backend's description of each prepared program
   * (`Backend.prepare`), else 'interpreter' (each recorded call made again), with the reason.
   */
  readonly replay: string;
}

/** What `step.explain()` returns. */
export interface CompileExplanation {
  /** 'replay', or 'eager' with the reason compile is a pass-through. */
  readonly mode: string;
  /** Cached programs, one per guard set. */
  readonly programs: readonly CompiledProgramInfo[];
  /** Why the last trace happened (a failed guard), if any. */
  readonly lastRetraceReason: string | undefined;
  /** Signatures that run eagerly, and why (a break with `onBreak: 'eager'`, the recompile limit). */
  readonly eager: readonly string[];
  /** Calls so far, and how many of them replayed. */
  readonly calls: number;
  /** Calls that replayed a program. */
  readonly replays: number;
  /** The same as readable text. */
  readonly text: string;
}

/**
 * A compiled function: the same signature as the function it wraps, plus `explain()`.
 * @typeParam F - The wrapped function's type.
 */
export type CompiledFunction<F extends (...args: never[]) => unknown> = F & {
  /** What was captured: programs, guards, kernels per segment, the last retrace reason. */
  explain(): CompileExplanation;
};

interface Slot {
  readonly arg: number;
  readonly sub: number; // index inside an array argument, or -1
  readonly ref: TensorRef<unknown> | null; // null: the argument is a bare handle (write)
  readonly source: number; // index into the replay's live handles
  /** The storage the call's argument holds now: a replay with the same input storages rewrites nothing. */
  current: unknown;
}

interface ReplayCall {
  readonly step: CallStep;
  readonly slots: readonly Slot[];
}

/** Consecutive calls to a backend with `prepare` (and the host effects among them), run as one prepared program. */
interface PreparedRun {
  readonly kind: 'prepared';
  readonly calls: readonly ReplayCall[];
  readonly effects: readonly EffectStep[];
  /** Null when prepare failed or the program was dropped; the calls are then made one by one. */
  program: PreparedProgram | null;
  /** Why `program` is null. */
  fallback?: string;
}

interface GradBinding {
  readonly tensor: Tensor;
  /**
   * The view (viewKey) of the `.grad` at entry, or null when it was null. Not the tensor: it may
   * be the last call's gradient, in another program's memory, which must not be kept alive.
   */
  readonly entry: string | null;
  readonly exit: Tensor | null;
  /**
   * Which tensor argument the `.grad` at exit is (`p.grad = g` for an argument `g`), or -1: a
   * replay attaches that argument of its own call, as eager would, not the one of the capture.
   */
  readonly exitArg: number;
  /** Index into the live handles when the entry grad's storage is read by the program. */
  readonly source: number;
  /** The step left `.grad` as it found it (read it, or wrote into it in place): a replay leaves the one set then. */
  readonly kept: boolean;
}

interface Program {
  readonly recorder: Recorder;
  readonly steps: readonly (ReplayCall | PreparedRun | Exclude<Step, CallStep>)[];
  readonly ends: ReadonlyMap<number, number>;
  readonly grads: readonly GradBinding[];
  readonly output: (handles: readonly unknown[]) => unknown;
  readonly guardText: readonly string[];
  readonly async: boolean;
  /**
   * Tensors the capture made in the program's storages (all but the `.grad`s it attaches): the first
   * replay overwrites them, so it marks the ones still alive stale (kept outside `fn`, they would
   * silently hold another call's values).
   */
  captured: readonly WeakRef<Tensor>[];
}

interface Entry {
  readonly parts: readonly string[];
  previous?: { readonly trace: string[]; readonly branches: readonly boolean[]; readonly guards: string };
  program?: Program;
  eager?: string;
  /** The first two recordings differed once already. */
  mismatched?: boolean;
}

const OPTION_NAMES = ['onBreak', 'recompileLimit', 'mode'];

const disabledByEnv = () => (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.CORE_COMPILE === '0';

/**
 * PyTorch's `torch.compile` for a training or inference step, phase 1: capture and replay. Returns
 * a function with `fn`'s signature. Call 1 runs eagerly; call 2 runs eagerly while every backend
 * call is recorded and checked against call 1; later calls with the same guards (argument shapes,
 * dtypes, devices, grad mode, autocast state, optimizer structure) replay the recorded calls
 * without running `fn`. JS in `fn` runs only while tracing: values a replay must recompute come
 * from library code (optimizer learning rates and step counts, GradScaler's found-inf branch). A
 * host read inside `fn` is a CompileError naming the line. Returned tensors are fresh copies.
 *
 * @example
 * const step = compile((x: Tensor, y: Tensor) => {
 *   opt.zeroGrad();
 *   const loss = model(x).sub(y).square().mean();
 *   loss.backward();
 *   opt.step();
 *   return loss;
 * });
 * @typeParam F - `fn`'s type, which the compiled function keeps.
 */
export function compile<F extends (...args: never[]) => unknown>(fn: F, options: CompileOptions = {}): CompiledFunction<F> {
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.includes(name)) throw new TypeError(`compile() got an unexpected keyword argument '${name}' (it takes ${OPTION_NAMES.join(', ')})`);
  }
  const onBreak = options.onBreak ?? 'error';
  const limit = options.recompileLimit ?? 8;
  if (onBreak !== 'error' && onBreak !== 'eager') throw new TypeError(`compile(): onBreak must be 'error' or 'eager', got ${String(onBreak)}`);
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`compile(): recompileLimit must be a positive integer, got ${String(limit)}`);
  if (options.mode !== undefined && options.mode !== 'replay' && options.mode !== 'eager') {
    throw new TypeError(`compile(): mode must be 'replay' or 'eager', got ${String(options.mode)}`);
  }
  const passThrough = options.mode === 'eager' ? "mode: 'eager'" : disabledByEnv() ? 'CORE_COMPILE=0' : undefined;

  const entries = new Map<string, Entry>();
  let lastParts: readonly string[] | undefined;
  let lastRetraceReason: string | undefined;
  let traces = 0;
  let calls = 0;
  let replays = 0;
  let warned = false;
  const warnOnce = (message: string) => {
    if (!warned) console.warn(message);
    warned = true;
  };

  const runEager = (args: Parameters<F>) => fn(...args);

  /** Run fn recorded; build a program when this recording matches the previous one. */
  const trace = (entry: Entry, args: Parameters<F>): unknown => {
    const recorder = new Recorder(onBreak === 'eager', entry.previous !== undefined);
    recorder.start();
    let result: unknown;
    try {
      // Every tensor fn makes (before its first await) is noted; none is disposed here.
      result = freeingTemporaries(() => fn(...args), (t) => recorder.made.push(t) > 0);
    } catch (e) {
      recorder.stop();
      recorder.release();
      throw e;
    }
    const finish = (value: unknown) => {
      recorder.stop();
      return settle(entry, recorder, args, value, result instanceof Promise);
    };
    if (result instanceof Promise) {
      return result.then(finish, (e: unknown) => {
        recorder.stop();
        recorder.release();
        throw e;
      });
    }
    return finish(result);
  };

  const settle = (entry: Entry, recorder: Recorder, args: Parameters<F>, value: unknown, isAsync: boolean): unknown => {
    if (recorder.broken) {
      recorder.release();
      entry.eager = `${entry.parts.join('; ')}: ${recorder.breakReason}`;
      warnOnce(`${recorder.breakReason}; this signature runs eagerly from now on (onBreak: 'eager')`);
      return value;
    }
    const guards = recorder.guardLines().join('\n');
    const current = { trace: summarize(recorder.steps), branches: recorder.branches, guards };
    const previous = entry.previous;
    const comparable = previous !== undefined && previous.guards === guards &&
      previous.branches.join() === current.branches.join() && !current.branches.includes(true);
    if (!comparable) {
      // First call of this signature, a library guard changed since the last call (model.train()
      // between the two calls compared), or GradScaler skipped the optimizer: capture again next call.
      entry.previous = current;
      recorder.release();
      return value;
    }
    const diff = firstDifference(previous.trace, current.trace);
    if (diff !== undefined && !entry.mismatched) {
      // Call 1 may create state later calls reuse (optimizer moments): compare the next two calls.
      entry.mismatched = true;
      entry.previous = current;
      recorder.release();
      return value;
    }
    if (diff !== undefined) {
      recorder.release();
      const message =
        `compile(): two calls with the same guards ran different kernels (call ${diff + 1}: ${previous.trace[diff] ?? 'nothing'} then ${current.trace[diff] ?? 'nothing'}); ` +
        'the function depends on JS state that changes between calls: pass it as an argument or move it outside';
      if (onBreak === 'error') throw new CompileError('COMPILE_NONDETERMINISTIC', message, undefined);
      entry.eager = `${entry.parts.join('; ')}: ${message}`;
      warnOnce(message);
      return value;
    }
    const program = build(recorder, args, value, entry.parts, isAsync);
    entry.program = program;
    traces++;
    // The caller gets copies, as from every replay: the program overwrites its own storages.
    return program.output(liveHandles(program, args));
  };

  const compiled = (...args: Parameters<F>): unknown => {
    calls++;
    if (passThrough !== undefined || compileState.recorder !== null || anomalyModeActive()) return runEager(args);
    const parts = signature(args);
    const key = parts.join('\n');
    let entry = entries.get(key);
    if (entry === undefined) {
      if (lastParts !== undefined) lastRetraceReason = describeChange(lastParts, parts);
      if (entries.size >= limit) {
        warnOnce(`compile(): recompileLimit (${limit}) reached; new signatures run eagerly (last change: ${lastRetraceReason})`);
        return runEager(args);
      }
      entries.set(key, (entry = { parts }));
    }
    lastParts = parts;
    if (entry.eager !== undefined) return runEager(args);
    const program = entry.program;
    if (program !== undefined) {
      const failed = failedGuard(program);
      if (failed === undefined) {
        replays++;
        return replay(program, args);
      }
      lastRetraceReason = failed;
      releaseProgram(program);
      entry.program = undefined;
      entry.previous = undefined;
      if (traces >= limit) {
        entry.eager = `${parts.join('; ')}: recompileLimit (${limit}) reached`;
        warnOnce(`compile(): recompileLimit (${limit}) reached; running eagerly (last retrace: ${failed})`);
        return runEager(args);
      }
    }
    return trace(entry, args);
  };

  const explain = (): CompileExplanation => {
    const programs = [...entries.values()].flatMap((e) => (e.program ? [describeProgram(e.program)] : []));
    const eager = [...entries.values()].flatMap((e) => (e.eager ? [e.eager] : []));
    const mode = passThrough === undefined ? 'replay' : `eager (${passThrough})`;
    const text = [
      `compile: ${mode}; ${calls} calls, ${replays} replays`,
      ...programs.flatMap((p, i) => [
        `program ${i + 1}: ${p.storages} storages, ${p.dynamicScalars} dynamic scalars, ${p.hostEffects} host effects`,
        `  replay: ${p.replay}`,
        ...p.guards.map((g) => `  guard ${g}`),
        ...p.segments.map((s) => `  segment ${s.name}: ${s.kernels} kernels (${Object.entries(s.byKernel).map(([k, n]) => `${k} ×${n}`).join(', ')})`),
      ]),
      ...eager.map((e) => `eager: ${e}`),
      `last retrace reason: ${lastRetraceReason ?? 'none'}`,
    ].join('\n');
    return { mode, programs, lastRetraceReason, eager, calls, replays, text };
  };

  // A program keeps its capture's storages until it is dropped: when the compiled function is
  // collected, its programs give them back (wasm heap and device memory are not the collector's).
  droppedPrograms.register(compiled, entries);
  return Object.assign(compiled, { explain }) as unknown as CompiledFunction<F>;
}

const droppedPrograms = new FinalizationRegistry<ReadonlyMap<string, Entry>>((entries) => {
  for (const entry of entries.values()) if (entry.program) releaseProgram(entry.program);
});

/** Give back what a program holds: its prepared programs, then its storages. */
function releaseProgram(p: Program): void {
  for (const s of p.steps) {
    if ('kind' in s && s.kind === 'prepared') s.program?.release();
  }
  p.recorder.release();
}

// ---- guards ----

const ids = new WeakMap<object, number>();
let nextId = 1;
const idOf = (o: object) => {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = nextId++));
  return id;
};

/** The tensor arguments (top level and inside arrays), in order. */
function tensorArgs(args: readonly unknown[]): Tensor[] {
  return args.flatMap((a) => (a instanceof Tensor ? [a] : Array.isArray(a) ? a.filter((x): x is Tensor => x instanceof Tensor) : []));
}

function describeArg(a: unknown, seen: Tensor[]): string {
  if (a instanceof Tensor) {
    const alias = seen.findIndex((t) => t._storage === a._storage);
    seen.push(a);
    return `Tensor [${a.shape.join(', ')}] ${a.dtype.name} ${a.device} strides [${a._strides.join(', ')}] offset ${a._offset}` +
      (a.requiresGrad ? ' requiresGrad' : '') + (alias >= 0 ? ` shares storage with tensor ${alias}` : '');
  }
  if (Array.isArray(a)) return `[${a.map((x) => describeArg(x, seen)).join(', ')}]`;
  if (typeof a === 'object' && a !== null) return `object #${idOf(a)}`;
  if (typeof a === 'function') return `function #${idOf(a)}`;
  return `${typeof a} ${String(a)}`;
}

/** The cheap guards, one labelled string each: arguments, grad mode, autocast state, fused kernels. */
function signature(args: readonly unknown[]): string[] {
  const seen: Tensor[] = [];
  const parts = args.map((a, i) => `arg ${i}: ${describeArg(a, seen)}`);
  parts.push(`grad mode: ${isGradEnabled() ? 'on' : 'off'}`, `fused kernels: ${fusedKernelsEnabled() ? 'on' : 'off'}`);
  for (const type of listBackends()) {
    parts.push(`autocast ${type}: ${isAutocastEnabled(type) ? getAutocastDtype(type).name : 'off'}`);
  }
  return parts;
}

function describeChange(before: readonly string[], after: readonly string[]): string {
  for (let i = 0; i < Math.max(before.length, after.length); i++) {
    if (before[i] !== after[i]) return `guard failed: ${before[i] ?? '(none)'} → ${after[i] ?? '(none)'}`;
  }
  return 'guard failed';
}

const sameValue = (a: unknown, b: unknown) => Object.is(a, b) || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));

/** A tensor's dtype, device and layout: two tensors with the same key are the same kind of view. */
function viewKey(t: Tensor): string {
  return `${t.dtype.name} ${t.device} offset ${t._offset} shape ${t.shape.join()} strides ${t._strides.join()}`;
}

/** The first guard a program's library and `.grad` guards fail now, described; undefined when all pass. */
function failedGuard(p: Program): string | undefined {
  for (const g of p.recorder.guards) {
    const now = g.read();
    if (!sameValue(now, g.value)) return `guard failed: ${g.name} was ${JSON.stringify(g.value)}, now ${JSON.stringify(now)}`;
  }
  for (const b of p.grads) {
    const now = b.tensor.grad;
    if (b.entry === null ? now !== null : now === null || (b.source >= 0 && viewKey(now) !== b.entry)) {
      return `guard failed: a .grad was ${b.entry === null ? 'null' : 'set'} at capture and is ${now === null ? 'null' : 'set'} (or another shape) now`;
    }
  }
  return undefined;
}

// ---- trace comparison ----

const describeRef = (r: TensorRef<unknown>) => `${r.dtype}[${r.shape.join(',')}]`;

/** One line per step: the call and its operands' dtypes and shapes (scalars may change between calls). */
function summarize(steps: readonly Step[]): string[] {
  return steps.map((s) => {
    if (s.kind !== 'call') return s.kind;
    const operands = s.args.map((a) => (isRef(a) ? describeRef(a) : Array.isArray(a) ? `[${a.filter(isRef).map(describeRef).join(' ')}]` : typeof a === 'string' ? a : ''));
    return `${s.name}(${operands.filter((o) => o !== '').join(', ')})`;
  });
}

function firstDifference(a: readonly string[], b: readonly string[]): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return undefined;
}

// ---- build and replay ----

/**
 * The program of a capture: calls with the storages of this call's inputs (and of `.grad` tensors it
 * reads) turned into slots filled per replay, its dynamic scalars, effects and outputs.
 */
function build(recorder: Recorder, args: readonly unknown[], value: unknown, parts: readonly string[], isAsync: boolean): Program {
  const sources = new Map<unknown, number>();
  for (const t of tensorArgs(args)) if (!sources.has(t._storage.handle)) sources.set(t._storage.handle, sources.size);
  const referenced = recorder.referencedHandles();
  const argTensors = tensorArgs(args);
  const grads: GradBinding[] = [...recorder.gradEntry].map(([tensor, entry]) => {
    let source = -1;
    if (entry !== null && referenced.has(entry._storage.handle)) {
      if (!sources.has(entry._storage.handle)) sources.set(entry._storage.handle, sources.size);
      source = sources.get(entry._storage.handle)!;
    }
    const exit = tensor.grad;
    const exitArg = exit === null ? -1 : argTensors.indexOf(exit);
    return { tensor, entry: entry === null ? null : viewKey(entry), exit, exitArg, source, kept: entry !== null && exit === entry };
  });
  recorder.gradEntry.clear();
  const attached = new Set(grads.flatMap((g) => (g.exit === null || g.kept ? [] : [g.exit._storage.handle])));
  const captured = recorder.made
    .filter((t) => recorder.owned.has(t._storage.handle) && !attached.has(t._storage.handle))
    .map((t) => new WeakRef(t));
  recorder.made.length = 0;
  // Constant fills ran at capture and stay in their storages: replays skip them.
  const dynamic = new Set(recorder.dynamic.map((d) => recorder.steps[d.step]!));
  const constants = planConstants(recorder.steps, recorder.owned, attached, dynamic);
  recorder.disown(constants.merged);
  // What the caller reads after a replay keeps its own storage, as do the constants; the rest share by lifetime.
  const lastUses = new Map<Step, unknown[]>();
  recorder.disown(planMemory(recorder.steps, recorder.owned, new Set([...attached, ...outputHandles(value), ...constants.storages]), lastUses));
  const slotsOf = (s: CallStep): Slot[] => {
    const slots: Slot[] = [];
    s.args.forEach((a, arg) => {
      if (isRef(a) && sources.has(a.storage)) slots.push({ arg, sub: -1, ref: a, source: sources.get(a.storage)!, current: a.storage });
      else if (Array.isArray(a)) {
        a.forEach((r, sub) => {
          if (isRef(r) && sources.has(r.storage)) slots.push({ arg, sub, ref: r, source: sources.get(r.storage)!, current: r.storage });
        });
      } else if (s.name === 'write' && arg === 0 && sources.has(a)) slots.push({ arg, sub: -1, ref: null, source: sources.get(a)!, current: a });
    });
    return slots;
  };
  const replayed = recorder.steps.filter((s) => !constants.fills.has(s)).map((s) => (s.kind === 'call' ? { step: s, slots: slotsOf(s) } : s));
  const steps = prepareRuns(replayed, dynamic, lastUses);
  const ends = new Map<number, number>();
  const open: number[] = [];
  steps.forEach((s, i) => {
    if ('kind' in s && s.kind === 'branch') open.push(i);
    if ('kind' in s && s.kind === 'end') ends.set(open.pop()!, i);
  });
  const output = outputBuilder(value, sources);
  const guardText = [
    ...parts,
    ...recorder.guardLines(),
    ...(grads.length > 0 ? [`.grad of ${grads.length} tensors: ${grads.filter((g) => g.entry === null).length} null, ${grads.filter((g) => g.entry !== null).length} set at entry`] : []),
  ];
  return { recorder, steps, ends, grads, output, guardText, async: isAsync || ends.size > 0, captured };
}

/** The storages this call's slots refer to: its tensor arguments', then the `.grad`s the program reads. */
function liveHandles(p: Program, args: readonly unknown[]): unknown[] {
  const handles: unknown[] = [];
  const seen = new Set<unknown>();
  for (const t of tensorArgs(args)) {
    if (!seen.has(t._storage.handle)) handles.push(t._storage.handle);
    seen.add(t._storage.handle);
  }
  for (const g of p.grads) if (g.source >= 0) handles[g.source] = g.tensor.grad!._storage.handle;
  return handles;
}

/** The storages of the tensors in a returned value. */
function outputHandles(value: unknown): unknown[] {
  if (value instanceof Tensor) return [value._storage.handle];
  if (Array.isArray(value)) return value.flatMap(outputHandles);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value).flatMap(outputHandles);
  return [];
}

/** A function making the returned value of one call: tensors copied out of the program's storages, other values as captured. */
function outputBuilder(value: unknown, sources: ReadonlyMap<unknown, number>): (handles: readonly unknown[]) => unknown {
  if (value instanceof Tensor) {
    const src = { storage: value._storage.handle, dtype: value.dtype.name, shape: value.shape, strides: value._strides, offset: value._offset };
    const source = sources.get(src.storage);
    const { shape, dtype, device } = value;
    return (handles) => {
      const out = allocate(shape, dtype, device);
      const from = source === undefined ? src : { ...src, storage: handles[source] };
      if (out.numel() > 0) backendOf(device).kernels.copy(from, ref(out));
      return out;
    };
  }
  if (Array.isArray(value)) {
    const items = value.map((v) => outputBuilder(v, sources));
    return (handles) => items.map((f) => f(handles));
  }
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const fields = Object.entries(value).map(([k, v]) => [k, outputBuilder(v, sources)] as const);
    return (handles) => Object.fromEntries(fields.map(([k, f]) => [k, f(handles)]));
  }
  return () => value;
}

/** Put this call's input storages into the recorded call's arguments. */
function fillSlots({ step, slots }: ReplayCall, handles: readonly unknown[]): void {
  const args = step.args;
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k]!;
    const handle = handles[slot.source];
    if (handle === slot.current) continue;
    slot.current = handle;
    const replaced = slot.ref === null ? handle : { ...slot.ref, storage: handle };
    if (slot.sub < 0) args[slot.arg] = replaced;
    else (args[slot.arg] as unknown[])[slot.sub] = replaced;
  }
}

const makeCall = ({ step }: ReplayCall) => step.fn.apply(step.self, step.args);

/** Run a program's steps from `start` until a branch (its index is returned) or the end (-1). */
function runSteps(p: Program, start: number, handles: readonly unknown[], found: boolean): number {
  const { steps } = p;
  for (let i = start; i < steps.length; i++) {
    const s = steps[i]!;
    if ('step' in s) {
      fillSlots(s, handles);
      makeCall(s);
    } else if (s.kind === 'prepared') {
      for (const c of s.calls) if (c.slots.length > 0) fillSlots(c, handles);
      if (s.program !== null && !s.program.run()) {
        s.program.release();
        s.program = null;
        s.fallback = 'a call whose arguments change queued other work than at prepare';
      }
      if (s.program === null) s.calls.forEach(makeCall);
      for (const e of s.effects) e.run(found);
    } else if (s.kind === 'branch') {
      return i;
    } else if (s.kind === 'effect') {
      s.run(found);
    }
  }
  return -1;
}

/**
 * Groups consecutive calls to a backend that has `prepare` (with the host effects among them: they
 * touch no storage, so they may run after the group) into prepared runs, each handed to the
 * backend once. A call varies when its arguments are refilled per replay: input storages (slots)
 * or dynamic scalars. `lastUses` (from the memory plan) tells the backend which storages' contents
 * die at each call.
 */
function prepareRuns(
  steps: readonly (ReplayCall | Exclude<Step, CallStep>)[], dynamic: ReadonlySet<Step>, lastUses: ReadonlyMap<Step, readonly unknown[]>,
): (ReplayCall | PreparedRun | Exclude<Step, CallStep>)[] {
  const out: (ReplayCall | PreparedRun | Exclude<Step, CallStep>)[] = [];
  // (Cast: TypeScript would narrow a plain `= null` to null for good, not seeing close() reset it.)
  let group = null as { backend: Backend<unknown>; calls: ReplayCall[]; effects: EffectStep[] } | null;
  const close = () => {
    if (group === null) return;
    const { backend, calls, effects } = group;
    group = null;
    const prepared: PreparedCall[] = calls.map((c) => ({ run: () => makeCall(c), varies: c.slots.length > 0 || dynamic.has(c.step) }));
    try {
      out.push({ kind: 'prepared', calls, effects, program: backend.prepare!(prepared, { deadAfter: calls.map((c) => lastUses.get(c.step) ?? []) }) });
    } catch (e) {
      out.push({ kind: 'prepared', calls, effects, program: null, fallback: `prepare failed: ${(e as Error).message}` });
    }
  };
  for (const s of steps) {
    if ('step' in s && s.step.backend.prepare !== undefined) {
      if (group?.backend !== s.step.backend) {
        close();
        group = { backend: s.step.backend, calls: [], effects: [] };
      }
      group.calls.push(s);
    } else if (group !== null && 'kind' in s && s.kind === 'effect') {
      group.effects.push(s);
    } else {
      close();
      out.push(s);
    }
  }
  close();
  return out;
}

async function flagsFound(flags: readonly { readonly backend: Backend<unknown>; readonly ref: TensorRef<unknown> }[]): Promise<boolean> {
  const values = await Promise.all(flags.map(async ({ backend, ref: r }) => (await backend.read(r.storage))[r.offset]!));
  return values.some((v) => v !== 0); // NaN counts as found, as in GradScaler.step
}

/** The first replay overwrites what the capture made: tensors of it kept outside `fn` become unusable, with a CompileError that says why. */
function invalidateCaptured(p: Program): void {
  for (const r of p.captured) {
    const t = r.deref();
    if (t === undefined || t.isDisposed) continue;
    markStale(t);
    t.dispose(); // its storage stays the program's (the recorder defers the free) unless the memory plan let it go
  }
  p.captured = [];
}

function replay(p: Program, args: readonly unknown[]): unknown {
  if (p.captured.length > 0) invalidateCaptured(p);
  const handles = liveHandles(p, args);
  // Dynamic scalars: recomputed from the host state now (lr after a scheduler step, Adam's next step).
  for (const d of p.recorder.dynamic) (p.recorder.steps[d.step] as CallStep).args[d.arg] = d.compute();
  const finish = () => {
    const argTensors = tensorArgs(args);
    for (const g of p.grads) if (!g.kept) g.tensor.grad = g.exitArg >= 0 ? argTensors[g.exitArg]! : g.exit;
    return p.output(handles);
  };
  let at = runSteps(p, 0, handles, false);
  if (at < 0) return p.async ? Promise.resolve(finish()) : finish();
  return (async () => {
    while (at >= 0) {
      const step = p.steps[at] as Extract<Step, { kind: 'branch' }>;
      const found = await flagsFound(step.flags);
      at = runSteps(p, found ? p.ends.get(at)! + 1 : at + 1, handles, found);
    }
    return finish();
  })();
}

function describeProgram(p: Program): CompiledProgramInfo {
  const segments: { name: string; kernels: number; byKernel: Record<string, number> }[] = [{ name: 'step', kernels: 0, byKernel: {} }];
  let effects = 0;
  const count = ({ step }: ReplayCall) => {
    const seg = segments[segments.length - 1]!;
    seg.kernels++;
    seg.byKernel[step.name] = (seg.byKernel[step.name] ?? 0) + 1;
  };
  const prepared: string[] = [];
  const fallbacks: string[] = [];
  for (const s of p.steps) {
    if ('step' in s) count(s);
    else if (s.kind === 'prepared') {
      s.calls.forEach(count);
      effects += s.effects.length;
      if (s.program !== null) prepared.push(s.program.description);
      else fallbacks.push(s.fallback!);
    } else if (s.kind === 'branch') segments.push({ name: 'optimizer (runs when no Inf/NaN was found)', kernels: 0, byKernel: {} });
    else if (s.kind === 'end') segments.push({ name: 'after the optimizer', kernels: 0, byKernel: {} });
    else effects++;
  }
  const interpreted = p.steps.some((s) => 'step' in s) || fallbacks.length > 0;
  const replay = [
    ...(prepared.length > 0 ? [`prepared (${prepared.join('; ')})`] : []),
    ...(interpreted ? [`interpreter (${fallbacks.length > 0 ? fallbacks.join('; ') : 'the backend has no prepare'})`] : []),
  ].join(' and ');
  return {
    guards: p.guardText,
    segments,
    dynamicScalars: p.recorder.dynamic.length,
    hostEffects: effects + p.grads.length,
    storages: p.recorder.owned.size,
    replay,
  };
}
