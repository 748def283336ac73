// Scalar definitions of every elementwise primitive, in float64, with PyTorch's conventions where
// IEEE or JavaScript leave a choice (C's pow, Python's modulo, round half to even, NaN handling).
// The oracle evaluates these on exact inputs and rounds once into the result dtype.
import type { BinaryOp, CompareOp, UnaryOp } from '@core/tensor';

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

/**
 * erf(x) to ~1e-15 relative: the Maclaurin series Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)) for |x| ≤ 2.5
 * (the alternating terms lose at most ~3 digits there), and 1 − erfc(x) from erfc's continued
 * fraction beyond.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x === 0) return x; // keeps −0
  const ax = Math.abs(x);
  let r: number;
  if (ax <= 2.5) {
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 200; n++) {
      term *= (-ax * ax) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-18 * Math.abs(sum)) break;
    }
    r = TWO_OVER_SQRT_PI * sum;
  } else if (ax >= 6) {
    r = 1;
  } else {
    // erfc(x) = exp(−x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + 2/(x + …))))), evaluated bottom-up.
    let f = 0;
    for (let k = 120; k >= 1; k--) f = (k / 2) / (ax + f);
    r = 1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f);
  }
  return x < 0 ? -r : r;
}

/** Round half to even, keeping the sign of zero (−0.4 → −0). */
export function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const lower = Math.floor(x);
  const frac = x - lower;
  let r = frac < 0.5 ? lower : frac > 0.5 ? lower + 1 : lower % 2 === 0 ? lower : lower + 1;
  if (r === 0) r = x < 0 || Object.is(x, -0) ? -0 : 0;
  return r;
}

/** Every unary primitive on one float64 value. */
export const UNARY: Readonly<Record<UnaryOp, (x: number) => number>> = {
  neg: (x) => -x,
  abs: (x) => Math.abs(x),
  sign: (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : 0),
  exp: (x) => Math.exp(x),
  expm1: (x) => Math.expm1(x),
  log: (x) => Math.log(x),
  log1p: (x) => Math.log1p(x),
  sqrt: (x) => Math.sqrt(x),
  rsqrt: (x) => 1 / Math.sqrt(x),
  reciprocal: (x) => 1 / x,
  sin: (x) => Math.sin(x),
  cos: (x) => Math.cos(x),
  tan: (x) => Math.tan(x),
  tanh: (x) => Math.tanh(x),
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  erf,
  relu: (x) => (Number.isNaN(x) ? NaN : x > 0 ? x : 0),
  floor: (x) => Math.floor(x),
  ceil: (x) => Math.ceil(x),
  round: roundHalfEven,
  trunc: (x) => Math.trunc(x),
  logicalNot: (x) => (x === 0 ? 1 : 0), // NaN is true, so its negation is false
};

/** int32 versions of the unary ops defined on integers; results wrap like C. */
export const UNARY_INT: Readonly<Partial<Record<UnaryOp, (x: number) => number>>> = {
  neg: (x) => -x | 0,
  abs: (x) => Math.abs(x) | 0,
  sign: (x) => Math.sign(x),
  relu: (x) => Math.max(x, 0),
  floor: (x) => x,
  ceil: (x) => x,
  round: (x) => x,
  trunc: (x) => x,
  logicalNot: (x) => (x === 0 ? 1 : 0),
};

/** C's pow: 1^y = 1 and (−1)^±∞ = 1 even for NaN y; otherwise IEEE pow. */
export function cPow(a: number, b: number): number {
  if (a === 1) return 1;
  if (b === 0) return 1;
  if (a === -1 && !Number.isFinite(b) && !Number.isNaN(b)) return 1;
  return Math.pow(a, b);
}

/** Python's modulo: a − b·floor(a/b), with the sign of the divisor; computed exactly as fmod then a fix-up. */
export function pyRemainder(a: number, b: number): number {
  let m = a % b;
  if (m !== 0 && m < 0 !== b < 0) m += b;
  return m;
}

/** Every binary primitive on float64 values. */
export const BINARY: Readonly<Record<BinaryOp, (a: number, b: number) => number>> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: cPow,
  maximum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b)),
  minimum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b)),
  remainder: pyRemainder,
  atan2: (a, b) => Math.atan2(a, b),
  logicalAnd: (a, b) => (a !== 0 && b !== 0 ? 1 : 0),
  logicalOr: (a, b) => (a !== 0 || b !== 0 ? 1 : 0),
};

/** Integer power by repeated multiplication with int32 wraparound (non-negative exponents). */
function intPow(a: number, b: number): number {
  let r = 1;
  for (let i = 0; i < b; i++) r = Math.imul(r, a);
  return r;
}

/** int32 versions of the binary primitives defined on integers; results wrap like C. */
export const BINARY_INT: Readonly<Partial<Record<BinaryOp, (a: number, b: number) => number>>> = {
  add: (a, b) => (a + b) | 0,
  sub: (a, b) => (a - b) | 0,
  mul: (a, b) => Math.imul(a, b),
  pow: intPow,
  maximum: (a, b) => Math.max(a, b),
  minimum: (a, b) => Math.min(a, b),
  remainder: (a, b) => pyRemainder(a, b) | 0,
  logicalAnd: BINARY.logicalAnd,
  logicalOr: BINARY.logicalOr,
};

/** On bool, PyTorch's add/mul/maximum/minimum are or/and/or/and. */
export const BINARY_BOOL: Readonly<Partial<Record<BinaryOp, (a: number, b: number) => number>>> = {
  add: BINARY.logicalOr,
  mul: BINARY.logicalAnd,
  maximum: BINARY.logicalOr,
  minimum: BINARY.logicalAnd,
  logicalAnd: BINARY.logicalAnd,
  logicalOr: BINARY.logicalOr,
};

/** Every comparison primitive, giving 1 or 0 (NaN compares unequal to everything). */
export const COMPARE: Readonly<Record<CompareOp, (a: number, b: number) => number>> = {
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};
