// What library code (optimizers, GradScaler) tells a compiled function's capture, so that a replay,
// which runs no JS above the backend, still follows the host state eager would: scalars recomputed
// per replay, host effects re-applied, guards checked, GradScaler's found-inf branch kept. Every
// function here does nothing outside a capture.
import type { Tensor } from '../tensor/tensor.js';
import { Recorder } from './recorder.js';
import { compileBreak, compileState } from './state.js';

function recorder(): Recorder | null {
  const r = compileState.recorder;
  return r instanceof Recorder && r.active ? r : null;
}

/** Whether a compiled function is being captured now (library code registers its participants only then). */
export function isCompiling(): boolean {
  return recorder() !== null;
}

/**
 * Run `fn`; inside a capture, every scalar its kernels receive that is `value` (compared with
 * Object.is) is recomputed by `compute()` at each replay. For a host-computed scalar that changes
 * between calls, such as an optimizer's `-lr` (a scheduler changes lr).
 */
export function compileScalars<T>(bindings: readonly { readonly value: number; readonly compute: () => number }[], fn: () => T): T {
  const r = recorder();
  return r === null ? fn() : r.withScalars(bindings, fn);
}

/**
 * Inside a capture: the kernel argument `arg` (an object, such as an AdamSpec, found by identity) is
 * replaced by `compute()` at each replay.
 */
export function compileDynamicArg(arg: object, compute: () => unknown): void {
  recorder()?.dynamicArg(arg, compute);
}

/**
 * Inside a capture: run `effect` after the kernels recorded so far at each replay, e.g. an
 * optimizer's `state.step += 1`. Effects inside GradScaler's skipped optimizer segment are skipped;
 * `found` is whether the last found-inf read saw an Inf/NaN.
 */
export function compileHostEffect(effect: (found: boolean) => void): void {
  recorder()?.effect(effect);
}

/**
 * Inside a capture: a replay first checks that `read()` still equals (Object.is, or equal JSON for
 * objects) what it returned now; otherwise the function is traced again. `name` is what
 * `explain()` and the retrace reason call it.
 */
export function compileGuard(name: string, read: () => unknown): void {
  recorder()?.guard(name, read);
}

/** GradScaler's found-inf read: the one host read a capture allows. */
export async function compileAllowedRead<T>(read: () => Promise<T>): Promise<T> {
  const r = recorder();
  return r === null ? read() : r.allowedRead(read);
}

/**
 * GradScaler's branch: the found-inf `flags` were read (found: any was set); the calls until
 * `compileBranchEnd()` run at replay only when every flag reads 0, as eager skips the optimizer.
 */
export function compileBranch(flags: readonly Tensor[], found: boolean): void {
  recorder()?.branch(flags, found);
}

/** The end of the segment `compileBranch` opened. */
export function compileBranchEnd(): void {
  recorder()?.branchEnd();
}

/**
 * Inside a capture: `what` (e.g. an optimizer) would replay with values frozen at capture, so the
 * capture breaks with a `CompileError` ('COMPILE_UNSUPPORTED') saying `remedy`, or, with
 * `onBreak: 'eager'`, the call goes on eagerly.
 */
export function compileUnsupported(what: string, remedy: string): void {
  recorder()?.fail(compileBreak('COMPILE_UNSUPPORTED', what, remedy));
}
