// What the rest of core sees of compile(): the recorder of the capture in progress (null outside
// one), so that a hook on a hot path costs one property load when compile is not in use, and the
// typed error a capture raises.
import type { Backend } from '../backend/contract.js';
import { TensorError } from '../errors/errors.js';
import { captureSite } from '../tensor/site.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * @internal The key under which a compiled function's recording proxy of a backend carries what a
 * storage it allocates frees through (deferred while the recording owns the storage) and the real
 * backend. A storage keeps these, never the proxy: the proxy reaches the recording, whose calls
 * hold storages, so one long-lived tensor made during a capture (optimizer state) would keep all.
 */
export const RECORDED = Symbol('core.compile.recorded');

/** @internal What a recording proxy carries under RECORDED. */
export interface RecordedAllocation {
  readonly backend: Backend<unknown>;
  free(handle: unknown): void;
}

/** Why a capture stopped: a stable code per cause. */
export type CompileErrorCode =
  | 'COMPILE_HOST_READ'
  | 'COMPILE_TENSOR_AS_NUMBER'
  | 'COMPILE_RANDOM'
  | 'COMPILE_NONDETERMINISTIC'
  | 'COMPILE_UNSUPPORTED'
  | 'COMPILE_STALE_TENSOR';

/**
 * A compiled function did something a recorded program cannot replay: it read a tensor's values on
 * the host, used a tensor as a JS number, drew random numbers without a Generator, ran different kernels on two
 * calls with the same guards, or used library code that cannot tell a replay what changes per call; or a tensor made inside a
 * compiled function and kept outside it was used after a later call overwrote it ('COMPILE_STALE_TENSOR').
 * `site` is the user's line ("file:line:col") when known.
 */
export class CompileError extends TensorError {
  constructor(
    /** The cause, e.g. 'COMPILE_HOST_READ'. */
    readonly code: CompileErrorCode,
    message: string,
    /** "file:line:col" of the user code that broke the capture, when known. */
    readonly site: string | undefined,
  ) {
    super(message);
  }
}

/** @internal What a capture records besides backend calls; implemented by compile/recorder.ts. */
export interface CaptureHooks {
  /** The backend dispatch should call while recording. */
  proxy<B extends object>(backend: B): B;
  /** A user-facing host read (`op` names it) happened: break the capture. */
  hostRead(op: string, remedy: string): void;
  /** Break the capture: throw `error`, or (onBreak: 'eager') let the call go on eagerly. */
  fail(error: CompileError): void;
  /** `t.grad`, now `current`, is read or about to change. */
  gradSet(t: Tensor, current: Tensor | null): void;
}

/** @internal The capture in progress, or null. */
export const compileState: { recorder: CaptureHooks | null } = { recorder: null };

/** @internal Called by the host reads users make (data(), item(), dataSync(), ...). */
export function noteHostRead(op: string): void {
  compileState.recorder?.hostRead(op, 'return the tensor from the compiled function and read it outside');
}

/** @internal Build the CompileError for a break at the current user line. */
export function compileBreak(code: CompileErrorCode, what: string, remedy: string): CompileError {
  const site = captureSite();
  return new CompileError(code, `compile(): ${what}${site ? ` at ${site}` : ''} while capturing: ${remedy} (or pass { onBreak: 'eager' })`, site);
}

/** Tensors made while a compiled function was captured and kept outside it, which a replay has since overwritten. */
const stale = new WeakSet<Tensor>();

/** @internal `t` (made during a capture, disposed by the replay that overwrites its memory) is stale from now on. */
export function markStale(t: Tensor): void {
  stale.add(t);
}

/** @internal Called for a tensor that can no longer be used: throws the stale-tensor CompileError when a replay overwrote it. */
export function throwIfStale(t: Tensor, op: string): void {
  if (!stale.has(t)) return;
  throw new CompileError(
    'COMPILE_STALE_TENSOR',
    `${op}: this tensor was made inside a compiled function and kept outside it other than as its return value; a later call of ` +
      "that function replayed its program, which reuses the tensor's memory, so its values were overwritten. Return the tensor from " +
      'the compiled function instead (returned tensors are fresh copies each call); a clone() made inside the function lives in ' +
      "the program's memory too.",
    undefined,
  );
}
