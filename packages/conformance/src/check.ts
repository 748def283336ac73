// Comparing a backend's results with the oracle's, and the failure messages that say exactly where
// and by how much they differ.
import type { Device, DTypeName, Tensor } from '@core/tensor';
import { at, type NdArray, unravel } from './oracle/ndarray.js';
import { EXACT, toleranceFor, type Tolerance, type ToleranceClass } from './tolerance.js';
import { fail, type Measure } from './types.js';

/** What a result should be: the value (already in `dtype`), and for accumulated ops an error bound. */
export interface Expected {
  /** The expected values, already rounded into `dtype`. */
  readonly value: NdArray;
  /** The dtype the result must have. */
  readonly dtype: DTypeName;
  /** Extra absolute allowance per element (accumulated ops). */
  readonly bound?: Float64Array;
}

/** How `expectTensor` compares: a label for messages and the tolerance class. */
export interface CheckSpec {
  /** Names the checked value in failure messages. */
  readonly label: string;
  /** The tolerance class (exact, approx, accumulated…), which gives atol/rtol per dtype. */
  readonly cls: ToleranceClass;
  /** Overrides the class's per-dtype tolerance. */
  readonly tolerance?: Tolerance;
  /** The device the result must live on. */
  readonly device?: Device;
  /** The op's inputs: a failure shows their values at the first wrong element. */
  readonly inputs?: readonly NdArray[];
}

export function fmt(v: number): string {
  if (Object.is(v, -0)) return '-0';
  if (Number.isInteger(v) || !Number.isFinite(v)) return String(v);
  return Math.abs(v) < 1e-4 || Math.abs(v) >= 1e6 ? v.toExponential() : String(v);
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** Check a tensor's dtype, shape, device and values; returns the measured errors. */
export async function expectTensor(t: Tensor, expected: Expected, spec: CheckSpec): Promise<Measure> {
  if (t.dtype.name !== expected.dtype) fail(`${spec.label}: dtype is ${t.dtype.name}, expected ${expected.dtype}`);
  if (t.shape.length !== expected.value.shape.length || t.shape.some((s, i) => s !== expected.value.shape[i])) {
    fail(`${spec.label}: shape is ${shapeText(t.shape)}, expected ${shapeText(expected.value.shape)}`);
  }
  if (spec.device && !t.device.equals(spec.device)) fail(`${spec.label}: result is on ${t.device}, expected ${spec.device}`);
  const data = await t.data();
  return expectValues(data, expected, spec);
}

/** Check flat values (logical order) against the expectation. */
export function expectValues(actual: ArrayLike<number>, expected: Expected, spec: CheckSpec): Measure {
  const e = expected.value.data;
  if (actual.length !== e.length) fail(`${spec.label}: ${actual.length} values, expected ${e.length}`);
  const exact = spec.cls === 'exact' || spec.cls === 'exact-any-zero';
  const tol = spec.tolerance ?? (exact ? EXACT : toleranceFor(spec.cls, expected.dtype));
  const signedZero = spec.cls === 'exact';
  let maxAbs = 0;
  let maxRel = 0;
  let bad = 0;
  let first = '';
  for (let i = 0; i < e.length; i++) {
    const a = Number(actual[i]);
    const x = e[i]!;
    let ok: boolean;
    let allowed = 0;
    if (Number.isNaN(x)) ok = Number.isNaN(a);
    else if (!Number.isFinite(x)) ok = a === x;
    else if (!Number.isFinite(a)) ok = false;
    else {
      const err = Math.abs(a - x);
      maxAbs = Math.max(maxAbs, err);
      if (x !== 0) maxRel = Math.max(maxRel, err / Math.abs(x));
      allowed = tol.atol + tol.rtol * Math.abs(x) + (expected.bound?.[i] ?? 0);
      ok = err <= allowed && (!signedZero || a !== 0 || Object.is(a, x));
    }
    if (!ok) {
      bad++;
      if (!first) {
        const where = expected.value.shape.length > 0 ? shapeText(unravel(i, expected.value.shape)) : '(0-dim)';
        const how = exact || !Number.isFinite(x) || !Number.isFinite(a)
          ? ''
          : ` (|err| ${fmt(Math.abs(a - x))} > allowed ${fmt(allowed)})`;
        first = `at ${where}: got ${fmt(a)}, expected ${fmt(x)}${how}${inputsAt(spec.inputs, expected.value.shape, i)}`;
      }
    }
  }
  if (bad > 0) {
    const rule = exact ? (signedZero ? 'bit-exact' : 'exact (either zero)') : `atol ${tol.atol}, rtol ${tol.rtol}${expected.bound ? ' + accumulation bound' : ''}`;
    fail(`${spec.label}: ${bad} of ${e.length} ${expected.dtype} values wrong (${rule}); first ${first}; max abs err ${fmt(maxAbs)}, max rel err ${fmt(maxRel)}`);
  }
  return { maxAbs, maxRel };
}

/**
 * The inputs behind output element `flat`: an input that broadcasts to the output's shape shows
 * its value there (`input0 = 0.5`), a small one all its values, a large one its shape.
 */
function inputsAt(inputs: readonly NdArray[] | undefined, shape: readonly number[], flat: number): string {
  if (!inputs?.length) return '';
  const idx = unravel(flat, shape);
  const parts = inputs.map((input, k) => {
    const lead = shape.length - input.shape.length;
    const broadcasts = lead >= 0 && input.shape.every((s, d) => s === 1 || s === shape[lead + d]);
    if (broadcasts) return `input${k} = ${fmt(at(input, input.shape.map((s, d) => (s === 1 ? 0 : idx[lead + d]!))))}`;
    if (input.data.length <= 8) return `input${k} = [${Array.from(input.data, fmt).join(', ')}] (shape ${shapeText(input.shape)})`;
    return `input${k} of shape ${shapeText(input.shape)}`;
  });
  return ` (from ${parts.join(', ')})`;
}

/** Run `fn` and require it to throw an instance of `type` whose message contains every fragment. */
export function expectThrows(label: string, fn: () => unknown, type: abstract new (...args: never[]) => Error, ...fragments: string[]): Error {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  return checkError(label, error, type, fragments);
}

export async function expectRejects(label: string, fn: () => Promise<unknown>, type: abstract new (...args: never[]) => Error, ...fragments: string[]): Promise<Error> {
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  return checkError(label, error, type, fragments);
}

function checkError(label: string, error: unknown, type: abstract new (...args: never[]) => Error, fragments: string[]): Error {
  if (error === undefined) fail(`${label}: expected ${type.name}${fragments.length ? ` mentioning "${fragments.join('", "')}"` : ''}, but nothing was thrown`);
  if (!(error instanceof type)) {
    const e = error as Error;
    fail(`${label}: expected ${type.name}, got ${e?.name ?? typeof e}: ${e?.message ?? String(e)}`);
  }
  for (const f of fragments) {
    if (!error.message.includes(f)) fail(`${label}: the ${type.name} message should contain "${f}"; it was: ${error.message}`);
  }
  return error;
}

export function expectEqual<T>(label: string, actual: T, expected: T): void {
  if (!Object.is(actual, expected)) fail(`${label}: got ${String(actual)}, expected ${String(expected)}`);
}

export function expectTrue(label: string, cond: boolean, detail = ''): void {
  if (!cond) fail(`${label}${detail ? `: ${detail}` : ''}`);
}
