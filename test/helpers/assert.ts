// Small assertion helpers shared by the integration tests.
import { expect } from 'vitest';

/** Run `fn`, which must throw, and return what it threw. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the call to throw, but it returned normally');
}

export async function rejected(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** `fn` must throw an instance of `cls` whose message contains every string / matches every RegExp. */
export function expectError<C extends ErrorClass>(fn: () => unknown, cls: C, ...parts: Array<string | RegExp>): InstanceType<C> {
  const e = thrown(fn);
  expect(e, `threw ${e?.constructor?.name}: ${e?.message}`).toBeInstanceOf(cls);
  for (const p of parts) {
    if (typeof p === 'string') expect(e.message).toContain(p);
    else expect(e.message).toMatch(p);
  }
  return e as InstanceType<C>;
}

export async function expectRejection<C extends ErrorClass>(fn: () => Promise<unknown>, cls: C, ...parts: Array<string | RegExp>): Promise<InstanceType<C>> {
  const e = await rejected(fn);
  expect(e, `rejected with ${e?.constructor?.name}: ${e?.message}`).toBeInstanceOf(cls);
  for (const p of parts) {
    if (typeof p === 'string') expect(e.message).toContain(p);
    else expect(e.message).toMatch(p);
  }
  return e as InstanceType<C>;
}

/**
 * Elementwise |a − e| ≤ atol + rtol·|e| (NaN matches NaN, ±Inf must match exactly); reports the
 * first failing index.
 */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: { atol?: number; rtol?: number } = {}): void {
  const atol = tol.atol ?? 0;
  const rtol = tol.rtol ?? 0;
  expect(actual.length, 'length').toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (Number.isNaN(e)) {
      if (!Number.isNaN(a)) expect.fail(`index ${i}: expected NaN, got ${a}`);
      continue;
    }
    if (!Number.isFinite(e)) {
      if (a !== e) expect.fail(`index ${i}: expected ${e}, got ${a}`);
      continue;
    }
    if (!(Math.abs(a - e) <= atol + rtol * Math.abs(e))) {
      expect.fail(`index ${i}: expected ${e} ± (${atol} + ${rtol}·|e|), got ${a} (diff ${Math.abs(a - e)})`);
    }
  }
}

/** Flatten nested arrays (as `toArray()` returns) into a number list. */
export function flat(x: unknown): number[] {
  return Array.isArray(x) ? (x as unknown[]).flat(Infinity as 1) as number[] : [x as number];
}

/**
 * File and line of the code that calls `here()`, read from a fresh stack trace (so it goes through
 * the same source mapping as any other stack). Use it in the same statement as the code whose line
 * you need: `const [t, at] = [tensor([1]), here()];`.
 */
export function here(): { file: string; line: number } {
  const depth = 2; // frame 1 is here() itself, frame 2 its caller
  const stack = new Error().stack ?? '';
  const frames = stack.split('\n').slice(1);
  const frame = frames[depth - 1] ?? '';
  const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(frame.trim());
  if (!m) throw new Error(`cannot parse stack frame: ${frame}`);
  return { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]) };
}
