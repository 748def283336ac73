// The PyTorch 1.13 values of rnn.test.ts, ctc.test.ts and one-hot.test.ts, made by
// rnn_ctc_reference.py (see it for the calls). NaN and ±Infinity are stored as strings.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { float64, type Tensor } from '@core/tensor';

/** One case: named lists of numbers, and for modules the parameter gradients by state-dict key. */
export interface Reference {
  readonly [name: string]: unknown;
}

const entries = JSON.parse(readFileSync(new URL('./rnn-ctc-1.13.json', import.meta.url), 'utf8'), (_, v: unknown) => (typeof v === 'string' && /^-?(NaN|Infinity)$/.test(v) ? Number(v) : v)) as Record<string, Reference>;

/** The case `key` of rnn-ctc-1.13.json. */
export function reference(key: string): Reference {
  const entry = entries[key];
  if (entry === undefined) throw new Error(`reference/rnn-ctc-1.13.json has no entry '${key}'`);
  return entry;
}

/** The list `name` of the case `key`. */
export function numbers(key: string, name: string): number[] {
  const list = reference(key)[name];
  if (!Array.isArray(list)) throw new Error(`reference/rnn-ctc-1.13.json: '${key}' has no list '${name}'`);
  return list as number[];
}

/**
 * `actual` against PyTorch's `expected`: non-finite values must be the same (NaN where NaN), finite
 * ones within `tol` relative to max(1, |expected|).
 */
export function expectNear(actual: Tensor, expected: readonly number[], tol: number): void {
  const got = Array.from(actual.to(float64).dataSync());
  expect(got.length).toBe(expected.length);
  got.forEach((v, i) => {
    const e = expected[i]!;
    if (!Number.isFinite(e)) expect(v, `flat index ${i}`).toBe(e);
    else expect(Math.abs(v - e) / Math.max(1, Math.abs(e)), `flat index ${i}: ${v} vs ${e}`).toBeLessThanOrEqual(tol);
  });
}
