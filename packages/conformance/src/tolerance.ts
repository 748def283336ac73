// Tolerance classes. A result passes when |a − e| ≤ atol + rtol·|e| + bound, with e the oracle's
// value computed from the same (already rounded) inputs:
// - exact:       bit-exact (atol = rtol = 0, NaN matches NaN, and ±0 must match unless the op
//                leaves the sign of zero open). Correctly rounded ops (+ − × ÷ √, compare, cast,
//                movement, selection) give the same bits on every backend.
// - approx:      transcendental and other non-correctly-rounded elementwise ops: per-dtype
//                atol/rtol about one ulp of the dtype (APPROX below).
// - accumulated: reductions, matmul and composites built on them: APPROX for the final rounding,
//                plus an oracle-computed bound = k·n·u·Σ|terms| that grows with the reduced length n
//                (the textbook bound for recursive summation in the accumulation dtype).
// Overrides are per case, with a written reason, and never per backend.
import type { DTypeName } from '@core/tensor';
import { isFloat } from './oracle/dtype.js';

/**
 * How closely a result must match the oracle: bit-exact (with or without the sign of zero), about one ulp, or with a bound that grows with the reduced length.
 */
export type ToleranceClass = 'exact' | 'exact-any-zero' | 'approx' | 'accumulated';

/** A result passes when |actual − expected| ≤ atol + rtol·|expected| (+ the accumulation bound). */
export interface Tolerance {
  /** Absolute tolerance. */
  readonly atol: number;
  /** Relative tolerance. */
  readonly rtol: number;
}

/** Per-dtype defaults for approx and accumulated ops (ARCHITECTURE.md: f32 ~1e-5, f16 ~1e-3, bf16 ~2e-2). */
export const APPROX: Readonly<Record<'float32' | 'float16' | 'bfloat16' | 'float64', Tolerance>> = {
  float64: { atol: 1e-12, rtol: 1e-10 },
  float32: { atol: 1e-6, rtol: 1e-5 },
  float16: { atol: 1e-5, rtol: 1e-3 },
  bfloat16: { atol: 1e-5, rtol: 2e-2 },
};

/** Gradients vs the oracle's central differences (their own error is ~1e-10 relative). */
export const GRAD: Readonly<Record<'float32' | 'float64', Tolerance>> = {
  float64: { atol: 1e-7, rtol: 1e-6 },
  float32: { atol: 1e-4, rtol: 1e-3 },
};

/** Bit-exact: atol = rtol = 0. */
export const EXACT: Tolerance = { atol: 0, rtol: 0 };

/** The atol/rtol a class gives for a dtype (int32 and bool are always exact). */
export function toleranceFor(cls: ToleranceClass, dtype: DTypeName): Tolerance {
  if (cls === 'exact' || cls === 'exact-any-zero' || !isFloat(dtype)) return EXACT;
  return APPROX[dtype];
}

/** A tolerance change for some of an op's samples, with the reason it is needed. */
export interface Override {
  /** The dtypes it applies to (all when absent). */
  readonly dtypes?: readonly DTypeName[];
  /** Sample names it applies to (all when absent). */
  readonly samples?: readonly string[];
  /** The tolerance to use instead. */
  readonly tolerance: Tolerance;
  /** Why the class's tolerance is not enough. */
  readonly reason: string;
}
