// The compiled form of a case: the library call (and its backward) wrapped in compile() and called
// as a training loop calls a step: on fresh values written into the same input tensors each time.
// Calls 1 and 2 trace (eagerly, the second recorded and compared with the first) on other values of
// the inputs' own, so that a replay that read the inputs as they were at capture would show; call 3
// replays on the sample's own values, and its result is what the case checks, against the oracle
// and bit for bit against an eager call on the same backend.
import { compile, CompileError, Generator, noGrad, type CompileErrorCode, type Device, type Tensor } from '@core/tensor';
import { fmt } from '../check.js';
import { stored, toDevice, type Input } from '../inputs.js';
import { nd } from '../oracle/ndarray.js';
import { fail } from '../types.js';

/** Calls of a compiled case: two that trace, then one that must replay. */
const COMPILED_CALLS = 3;

/**
 * An op that cannot run compiled by design: compile() refuses it with `code`
 * (a host read, say), which the compiled run must see, and `reason` says why.
 */
export interface EagerOnly {
  /** The CompileError code compile() raises for it. */
  readonly code: CompileErrorCode;
  /** Why the op cannot be captured, for the report ("eager only: <reason>"). */
  readonly reason: string;
  /**
   * Only on a backend without synchronous reads, where the op's synchronous form reads with
   * `await` instead; where reads are synchronous it reads only to check values, and compiles.
   */
  readonly withoutSyncRead?: boolean;
}

/**
 * Thrown to end an eager-only case whose compiled run raised the CompileError it is listed with;
 * the runner reports it skipped with `reason` ("eager only: <reason> (<code>)").
 */
export class EagerOnlyResult extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'EagerOnlyResult';
  }
}

/**
 * Run a compiled case's body; for an eager-only one, require the CompileError it is listed with and
 * end the case as eager only. A case not listed fails on any CompileError like on any other error.
 */
export async function underCompile<T>(label: string, eagerOnly: EagerOnly | undefined, body: () => Promise<T>): Promise<T> {
  if (eagerOnly === undefined) return body();
  try {
    await body();
  } catch (e) {
    if (e instanceof CompileError && e.code === eagerOnly.code) throw new EagerOnlyResult(`eager only: ${eagerOnly.reason} (${eagerOnly.code})`);
    throw e;
  }
  return fail(`${label}: listed as eager only (${eagerOnly.code}: ${eagerOnly.reason}), but compile() did not refuse it: it traced and replayed`);
}

/**
 * The input with other values of its own: rotated by `k` places, the first repeating the second, so
 * they stay in its domain and index ranges but change even a sum or a count of the values.
 */
function displaced(input: Input, k: number): Input {
  const { data, shape } = input.value;
  return { ...input, value: nd(shape, (i) => data[(Math.max(i, 1) + k) % data.length]!) };
}

/** Write `input`'s values (its layout's base) into `base`, as an optimizer or a data loader writes a step's tensors. */
function writeInto(base: Tensor, input: Input): void {
  const s = stored(input);
  noGrad(() => base.copy_(toDevice(s.base, input.dtype, base.device)));
}

/**
 * Call `step` COMPILED_CALLS times on `bases` (the inputs' stored tensors, which `step` turns into
 * the inputs' views): displaced values for the two tracing calls, the sample's own for the last,
 * which must replay. An op that refuses the displaced values (a constraint between its inputs, such
 * as a mask's count of ones and a source's length) runs all its calls on the sample's values.
 * `around` wraps each call (the fused-kernels switch); `before` runs before each (clearing
 * `.grad`s, as zeroGrad does).
 */
export async function replayed<R>(
  label: string,
  step: (...bases: Tensor[]) => R | Promise<R>,
  bases: readonly Tensor[],
  inputs: readonly Input[],
  around: <T>(call: () => T) => T,
  before: () => void = () => {},
): Promise<R> {
  const calls = async (displace: boolean): Promise<{ result: R } | undefined> => {
    const compiled = compile(step);
    let result!: R;
    for (let call = 1; call <= COMPILED_CALLS; call++) {
      const shift = displace ? COMPILED_CALLS - call : 0;
      bases.forEach((b, k) => writeInto(b, shift === 0 ? inputs[k]! : displaced(inputs[k]!, shift)));
      before();
      try {
        result = await around(() => compiled(...bases));
      } catch (e) {
        if (shift > 0 && !(e instanceof CompileError)) return undefined;
        throw e;
      }
    }
    if (compiled.explain().replays < 1) fail(`${label}: call ${COMPILED_CALLS} of the compiled function did not replay:\n${compiled.explain().text}`);
    return { result };
  };
  return ((await calls(true)) ?? (await calls(false)))!.result;
}

/**
 * One Generator for every call of a compiled case (CallContext.generator), reset before each call to
 * the seed the op asked for, as a loop seeds outside its step: a replay does not run the call, and
 * draws from this generator where the call left it.
 */
function reseeded(): { readonly generator: (seed: number) => Generator; readonly reset: () => void } {
  const generator = new Generator();
  let seed: number | undefined;
  return {
    generator: (s) => generator.manualSeed((seed = s)),
    reset: () => {
      if (seed !== undefined) generator.manualSeed(seed);
    },
  };
}

/**
 * `call` on the inputs' views (made inside the compiled function from the stored tensors), compiled
 * and replayed as `replayed` says, with one generator seeded outside it (`reseeded`); the replay's
 * result. An eager-only op must raise its listed CompileError (`underCompile`).
 */
export function replayedCall(
  label: string,
  inputs: readonly Input[],
  device: Device,
  call: (xs: Tensor[], generator: (seed: number) => Generator) => Tensor | Promise<Tensor>,
  around: <T>(call: () => T) => T,
  eagerOnly?: EagerOnly,
): Promise<Tensor> {
  const views = inputs.map(stored);
  const random = reseeded();
  const step = (...bs: Tensor[]) => call(bs.map((b, k) => views[k]!.view(b)), random.generator);
  return underCompile(label, eagerOnly, () => replayed(label, step, bases(inputs, device), inputs, around, random.reset));
}

/** The stored tensors of `inputs` on `device` (what `replayed` writes into). */
export function bases(inputs: readonly Input[], device: Device, requiresGrad: (k: number) => boolean = () => false): Tensor[] {
  return inputs.map((input, k) => toDevice(stored(input).base, input.dtype, device, requiresGrad(k)));
}

/**
 * The compiled result equals the eager one bit for bit: same dtype and shape, and every value the
 * same under Object.is (the sign of zero counts; NaN equals NaN, its payload is not compared).
 */
export async function expectSameAsEager(label: string, compiled: Tensor, eager: Tensor): Promise<void> {
  if (compiled.dtype !== eager.dtype || compiled.shape.join() !== eager.shape.join()) {
    fail(`${label}: the compiled result is ${compiled.dtype.name}[${compiled.shape.join(', ')}], eager's ${eager.dtype.name}[${eager.shape.join(', ')}]`);
  }
  const [a, e] = await Promise.all([compiled.data(), eager.data()]);
  for (let i = 0; i < e.length; i++) {
    if (!Object.is(Number(a[i]), Number(e[i]))) {
      fail(`${label}: the compiled replay differs from eager at flat index ${i}: ${fmt(Number(a[i]))}, eager ${fmt(Number(e[i]))} (compared bit for bit on the same backend)`);
    }
  }
}

