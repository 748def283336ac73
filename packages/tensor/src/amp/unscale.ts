// GradScaler's two device-side ops (GS-6, GS-9), written as compositions of core ops so they run on
// every backend without reading anything back to the host. PyTorch's fused kernels
// (`_amp_foreach_non_finite_check_and_unscale_`, `_amp_update_scale_`) do the same arithmetic.
import { getBackend } from '../backend/registry.js';
import type { Device } from '../device/device.js';
import { bfloat16, float16, float32, float64, int32, type DType } from '../dtype/dtype.js';
import { DTypeError, TensorError } from '../errors/errors.js';
import { noGrad } from '../autograd/grad-mode.js';
import { Tensor } from '../tensor/tensor.js';
import { stack } from '../ops/join.js';
import { withoutAutocast } from './autocast.js';
import { backendOf, ref } from '../dispatch/run.js';
import { fusedKernel } from '../dispatch/fused.js';

/** GradScaler's misuse errors: PyTorch raises AssertionError or RuntimeError for these. */
export class AmpError extends TensorError {}

/**
 * Whether `device`'s backend computes in float64. The scale arithmetic (products in f64, rounded
 * once to f32, as PyTorch's kernels do) needs it; without it products round the factor to f32 first,
 * which gives the same result whenever the factor is an f32 value (2, 0.5, any power of two).
 */
export function computesFloat64(device: Device): boolean {
  return getBackend(device.type).capabilities.dtypes.float64?.compute === true;
}

/** `f32(x · factor)` for an f32 tensor `x`, on x's device: the product in f64 when the device has it. */
function productF32(x: Tensor, factor: number): Tensor {
  return computesFloat64(x.device) ? x.to(float64).mul(factor).to(float32) : x.mul(factor);
}

/** The host twin of `productF32` on a device whose float64 support is `wide`: bit-identical results. */
export function hostProductF32(x: number, factor: number, wide: boolean): number {
  return Math.fround(wide ? x * factor : x * Math.fround(factor));
}

/**
 * `f32(1 / f64(scale))`, on the scale's device (GS-5). An f32 reciprocal gives the same bits (a
 * correctly rounded f32 division rounds 1/s once; f64 first then f32 is innocuous double rounding
 * because 53 ≥ 2·24 + 2), so devices without float64 lose nothing.
 */
export function reciprocalF32(scale: Tensor): Tensor {
  return withoutAutocast(() => noGrad(() => (computesFloat64(scale.device) ? scale.to(float64).reciprocal().to(float32) : scale.reciprocal())));
}

function requireTensor(t: unknown, name: string): asserts t is Tensor {
  if (!(t instanceof Tensor)) throw new TypeError(`${name} must be a Tensor`);
}

function isHalf(t: Tensor): boolean {
  return t.dtype === float16 || t.dtype === bfloat16;
}

/**
 * GS-6, in place: for every grad, `foundInf = 1` if any element is Inf or NaN (found_inf is never
 * cleared), then `grad *= invScale` with half types read as f32 and rounded once on store. The
 * check reads the values before unscaling. Grads keep their tensor objects. An empty list is a
 * no-op (before any argument check, as in PyTorch).
 */
export function ampForeachNonFiniteCheckAndUnscale_(scaledGrads: readonly Tensor[], foundInf: Tensor, invScale: Tensor): void {
  if (scaledGrads.length === 0) return;
  requireTensor(invScale, 'inv_scale');
  requireTensor(foundInf, 'found_inf');
  if (invScale.numel() !== 1) throw new AmpError('inv_scale must be a 1-element tensor.');
  if (foundInf.numel() !== 1) throw new AmpError('found_inf must be a 1-element tensor.');
  if (invScale.dtype !== float32) throw new AmpError('inv_scale must be a float tensor.');
  if (foundInf.dtype !== float32) throw new AmpError('found_inf must be a float tensor.');
  const device = foundInf.device;
  if (!invScale.device.equals(device)) {
    throw new AmpError(`inv_scale and found_inf must be on the same device, got ${invScale.device} and ${device}.`);
  }
  scaledGrads.forEach((g, i) => {
    if (!(g instanceof Tensor)) throw new TypeError(`scaled_grads[${i}] must be a Tensor`);
    if (!g.device.equals(device)) {
      throw new AmpError(`scaled_grads must be on the same device. (scaled_grads[${i}] is on ${g.device}, found_inf on ${device})`);
    }
    if (!g.dtype.isFloatingPoint) {
      throw new DTypeError(`_amp_foreach_non_finite_check_and_unscale_ not implemented for '${g.dtype.name}'`, '_amp_foreach_non_finite_check_and_unscale_', g.dtype.name);
    }
  });
  if (fusedUnscale(scaledGrads, foundInf, invScale)) return;
  withoutAutocast(() => noGrad(() => {
    // A grad is finite iff its max and min are: max/min propagate NaN, +Inf reaches the max and
    // -Inf the min. Two reductions per grad and no grad-sized temporary; then one finiteness test
    // over all extremes of a dtype (kept in that dtype: an f64 max may not fit in f32).
    const extremes = new Map<DType, Tensor[]>();
    for (const g of scaledGrads) {
      if (g.numel() === 0) continue;
      const list = extremes.get(g.dtype) ?? [];
      list.push(g.amax(), g.amin());
      extremes.set(g.dtype, list);
    }
    const flags = [...extremes.values()].map((list) => stack(list).isfinite().logicalNot().to(float32).amax());
    for (const g of scaledGrads) {
      if (g.numel() === 0) continue;
      // Half types multiply in f32 and round once on store (PyTorch's opmath); f64 grads multiply
      // by the exactly widened inv_scale. The grad-sized temporaries are freed at once.
      const wide = isHalf(g) ? g.to(float32) : g;
      const product = wide.mul(invScale);
      g.copy_(product);
      product.dispose();
      if (wide !== g) wide.dispose();
    }
    if (flags.length > 0) foundInf.copy_(flags.reduce((a, b) => a.maximum(b), foundInf));
  }));
}

/**
 * GS-6 through the backend's fused `unscaleAndCheck` kernel, one call per dtype group, when it has
 * one, fusion is enabled and every grad is contiguous; false (nothing touched) otherwise.
 */
function fusedUnscale(scaledGrads: readonly Tensor[], foundInf: Tensor, invScale: Tensor): boolean {
  const backend = backendOf(foundInf.device);
  const kernel = fusedKernel(backend, 'unscaleAndCheck');
  if (!kernel) return false;
  const groups = new Map<DType, Tensor[]>();
  for (const g of scaledGrads) {
    if (!g.isContiguous()) return false;
    if (g.numel() === 0) continue;
    const list = groups.get(g.dtype) ?? [];
    list.push(g);
    groups.set(g.dtype, list);
  }
  const flat = (t: Tensor) => ({ ...ref(t), shape: [t.numel()], strides: [1] });
  for (const list of groups.values()) {
    kernel(list.map(flat), flat(foundInf), flat(invScale));
    for (const g of list) g._storage.bumpVersion();
  }
  if (groups.size > 0) foundInf._storage.bumpVersion();
  return true;
}

/**
 * GS-9, in place, with no host read:
 * - foundInf ≠ 0: `scale = f32(scale·backoff)`, `tracker = 0`;
 * - else `s = tracker + 1`; if `s == interval`: `c = f32(scale·growth)`, scale = c only when c is
 *   finite, `tracker = 0`; otherwise `tracker = s`.
 * Products are in f64 rounded to f32 where the device computes f64 (see `computesFloat64`).
 */
export function ampUpdateScale_(
  currentScale: Tensor,
  growthTracker: Tensor,
  foundInf: Tensor,
  growthFactor: number,
  backoffFactor: number,
  growthInterval: number,
): Tensor {
  requireTensor(growthTracker, 'growth_tracker');
  requireTensor(currentScale, 'current_scale');
  requireTensor(foundInf, 'found_inf');
  if (growthTracker.numel() !== 1) throw new AmpError('growth_tracker must be a 1-element tensor.');
  if (currentScale.numel() !== 1) throw new AmpError('current_scale must be a 1-element tensor.');
  if (foundInf.numel() !== 1) throw new AmpError('found_inf must be a 1-element tensor.');
  if (growthTracker.dtype !== int32) throw new AmpError('growth_tracker must be an int tensor.');
  if (currentScale.dtype !== float32) throw new AmpError('current_scale must be a float tensor.');
  if (foundInf.dtype !== float32) throw new AmpError('found_inf must be a float tensor.');
  const device = currentScale.device;
  for (const [name, t] of [['growth_tracker', growthTracker], ['found_inf', foundInf]] as const) {
    if (!t.device.equals(device)) throw new AmpError(`${name} must be on the same device as current_scale (${device}), got ${t.device}.`);
  }
  for (const [name, v] of [['growth_factor', growthFactor], ['backoff_factor', backoffFactor]] as const) {
    if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
  }
  if (!Number.isInteger(growthInterval)) throw new TypeError(`growth_interval must be an integer, got ${growthInterval}`);
  withoutAutocast(() => noGrad(() => {
    const found = foundInf.ne(0); // NaN counts as found, like C++'s `if (*found_inf)`
    const successful = growthTracker.add(1);
    const atInterval = successful.eq(growthInterval);
    const grown = productF32(currentScale, growthFactor);
    const cleanScale = grown.where(atInterval.logicalAnd(grown.isfinite()), currentScale);
    const cleanTracker = successful.where(atInterval.logicalNot(), 0);
    const newScale = productF32(currentScale, backoffFactor).where(found, cleanScale);
    const newTracker = cleanTracker.where(found.logicalNot(), 0);
    currentScale.copy_(newScale);
    growthTracker.copy_(newTracker);
  }));
  return currentScale;
}

/**
 * The host twin of `ampUpdateScale_` (GS-9) for a device whose float64 support is `wide`: the
 * GradScaler keeps its host mirror of the scale exact with it.
 */
export function hostUpdateScale(
  scale: number,
  tracker: number,
  found: boolean,
  growthFactor: number,
  backoffFactor: number,
  growthInterval: number,
  wide: boolean,
): { scale: number; tracker: number } {
  if (found) return { scale: hostProductF32(scale, backoffFactor, wide), tracker: 0 };
  const successful = tracker + 1;
  if (successful !== growthInterval) return { scale, tracker: successful };
  const grown = hostProductF32(scale, growthFactor, wide);
  return { scale: Number.isFinite(grown) ? grown : scale, tracker: 0 };
}
