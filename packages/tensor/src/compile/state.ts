// What the rest of core sees of compile(): the recorder of the capture in progress (null outside
// one), so that a hook on a hot path costs one property load when compile is not in use, and the
// typed error a capture raises.
import { TensorError } from '../errors/errors.js';
import { captureSite } from '../tensor/site.js';
import type { Tensor } from '../tensor/tensor.js';

/** Why a capture stopped: a stable code per cause. */
export type CompileErrorCode =
  | 'COMPILE_HOST_READ'
  | 'COMPILE_TENSOR_AS_NUMBER'
  | 'COMPILE_RANDOM'
  | 'COMPILE_NONDETERMINISTIC'
  | 'COMPILE_UNSUPPORTED';

/**
 * A compiled function did something a recorded program cannot replay: it read a tensor's values on
 * the host, used a tensor as a JS number, drew random numbers without a Generator, ran different kernels on two
 * calls with the same guards, or used library code that cannot tell a replay what changes per call. `site` is the user's line ("file:line:col") when known.
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
  /** `t.grad` is about to change. */
  gradSet(t: Tensor): void;
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
