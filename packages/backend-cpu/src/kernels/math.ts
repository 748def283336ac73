// Scalar functions with PyTorch's semantics where JavaScript's Math differs.

const TWO_OVER_SQRT_PI = 1.1283791670955126; // 2/√π
const ONE_OVER_SQRT_PI = 0.5641895835477563; // 1/√π

/**
 * erf in f64, relative error ~1e-15. For |x| < 2 the series
 *   erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1))
 * (all terms positive, so no cancellation); above, erf = 1 − erfc with erfc from its continued
 * fraction e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))) evaluated by modified Lentz.
 */
export function erf(x: number): number {
  if (x !== x) return NaN;
  const ax = Math.abs(x);
  if (ax >= 6) return x > 0 ? 1 : -1; // erfc(6) ≈ 2e-17: below half an ulp of 1
  let r: number;
  if (ax < 2) {
    const x2 = ax * ax;
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 100; n++) {
      term *= (2 * x2) / (2 * n + 1);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    r = TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
  } else {
    r = 1 - erfcContinuedFraction(ax);
  }
  return x < 0 ? -r : r;
}

/** erfc(x) for x ≥ 2 from the continued fraction x + (1/2)/(x + 1/(x + (3/2)/(x + …))). */
function erfcContinuedFraction(x: number): number {
  const tiny = 1e-300;
  // f = b0 + a1/(b1 + a2/(b2 + …)) with b_k = x and a_k = k/2.
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 200; k++) {
    const a = k / 2;
    d = x + a * d;
    if (d === 0) d = tiny;
    c = x + a / c;
    if (c === 0) c = tiny;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (ONE_OVER_SQRT_PI * Math.exp(-x * x)) / f;
}

/** Round half to even (PyTorch's round); keeps the sign of zero. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  let r: number;
  if (diff > 0.5) r = f + 1;
  else if (diff < 0.5) r = f;
  else r = f % 2 === 0 ? f : f + 1; // exact tie; NaN and ±Inf fall through here too and stay as they are
  return r === 0 ? x * 0 : r; // −0.4 → −0
}

/** sign: −1, 0 or 1; NaN stays NaN and both zeros give +0 (as PyTorch's (0 < x) − (x < 0)). */
export function sign(x: number): number {
  return x > 0 ? 1 : x < 0 ? -1 : x === 0 ? 0 : NaN;
}

export function relu(x: number): number {
  return x > 0 ? x : x !== x ? x : 0;
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** C's pow: unlike Math.pow, 1^y = 1 and (−1)^±Inf = 1 for every y, NaN included. */
export function powFloat(a: number, b: number): number {
  if (a === 1) return 1;
  if (a === -1 && (b === Infinity || b === -Infinity)) return 1;
  return Math.pow(a, b);
}

/** Python's float modulo: the result has the sign of the divisor (PyTorch's remainder). */
export function remainderFloat(a: number, b: number): number {
  let m = a % b;
  if (m !== 0 && m < 0 !== b < 0) m += b;
  return m;
}

/** Python's int modulo on int32; division by zero throws like PyTorch's CPU kernel. */
export function remainderInt(a: number, b: number): number {
  if (b === 0) throw new RangeError('cpu remainder: integer division by zero');
  let m = a % b;
  if (m !== 0 && m < 0 !== b < 0) m += b;
  return m | 0;
}

/** Integer power with int32 wraparound; negative exponents follow PyTorch (1, ±1 for −1, else 0). */
export function powInt(a: number, b: number): number {
  if (b < 0) {
    if (a === 1) return 1;
    if (a === -1) return (-b) % 2 !== 0 ? -1 : 1;
    return 0;
  }
  let result = 1;
  let base = a | 0;
  let e = b;
  while (e > 0) {
    if (e & 1) result = Math.imul(result, base);
    base = Math.imul(base, base);
    e >>>= 1;
  }
  return result;
}

export function maximum(a: number, b: number): number {
  return a !== a || b !== b ? NaN : a > b ? a : b;
}

export function minimum(a: number, b: number): number {
  return a !== a || b !== b ? NaN : a < b ? a : b;
}
