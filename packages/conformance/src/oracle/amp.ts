// The GradScaler's arithmetic (GS-5, GS-6, GS-9), written from the spec's statements rather than
// the library's code: plain numbers, float64 products rounded once into float32 with Math.fround,
// half types through the library-independent rounding in ./dtype.ts.
import type { DTypeName } from '@core/tensor';
import { isHalf, roundTo } from './dtype.js';

/** GS-5: `inv_scale = f32(1 / f64(scale))`. */
export function invScale(scale: number): number {
  return Math.fround(1 / scale);
}

/** GS-6: whether any value is Inf or NaN. */
export function hasNonFinite(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) return true;
  return false;
}

/**
 * GS-6: one grad element after `_amp_foreach_non_finite_check_and_unscale_`: f16/bf16 are read as
 * f32 and multiplied in f32, then stored back in the grad's dtype; f32 multiplies in f32; f64
 * multiplies by the (exactly widened) f32 inv_scale in f64. `inv == 1` leaves the value alone,
 * which is the same number. Inf and NaN stay Inf and NaN (inv_scale > 0).
 */
export function unscaleValue(v: number, dtype: DTypeName, inv: number): number {
  if (inv === 1) return v;
  if (dtype === 'float64') return v * inv;
  const product = Math.fround(v * inv);
  return isHalf(dtype) ? roundTo(dtype, product) : product;
}

/** A GradScaler's scale and growth tracker, as host numbers. */
export interface ScaleState {
  /** The loss scale. */
  readonly scale: number;
  /** Clean steps in a row since the scale last changed. */
  readonly tracker: number;
}

/**
 * GS-9: `_amp_update_scale_` on host numbers. Products are computed in f64 and rounded once to f32:
 * - found: scale = f32(scale·backoff), tracker = 0;
 * - else s = tracker + 1; at s == interval: c = f32(scale·growth), scale = c only if c is finite,
 *   tracker = 0; otherwise tracker = s.
 */
export function updateScale(state: ScaleState, found: boolean, growthFactor: number, backoffFactor: number, growthInterval: number): ScaleState {
  if (found) return { scale: Math.fround(state.scale * backoffFactor), tracker: 0 };
  const successful = state.tracker + 1;
  if (successful !== growthInterval) return { scale: state.scale, tracker: successful };
  const grown = Math.fround(state.scale * growthFactor);
  return { scale: Number.isFinite(grown) ? grown : state.scale, tracker: 0 };
}

/** GS-9 over a sequence of found-inf flags: the state after each update, starting from `init`. */
export function scaleTrajectory(init: ScaleState, flags: readonly boolean[], growthFactor: number, backoffFactor: number, growthInterval: number): ScaleState[] {
  const out: ScaleState[] = [];
  let s = init;
  for (const found of flags) {
    s = updateScale(s, found, growthFactor, backoffFactor, growthInterval);
    out.push(s);
  }
  return out;
}
