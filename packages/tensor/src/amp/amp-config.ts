// One flag for mixed precision: 'auto' picks bf16 where the device computes it and autocast to it is
// faster there than float32 (float32's exponent range: no loss scaling), else fp16 with a GradScaler
// on the same terms, else off — and says which and why.
import { getBackend, isAvailable } from '../backend/registry.js';
import { bfloat16, float16, type DType } from '../dtype/dtype.js';
import { device as parseDevice, type DeviceLike } from '../device/device.js';
import { DTypeError, ValueError } from '../errors/errors.js';
import { autocastPolicy } from './autocast.js';

/** The one mixed-precision flag: 'auto' picks the best the device supports; 'bf16', 'fp16' and 'off' ask for one. */
export type AmpMode = 'auto' | 'bf16' | 'fp16' | 'off';

/** What `ampConfig` chose: the autocast settings and whether a GradScaler is needed. */
export interface AmpConfig {
  /** The precision chosen ('auto' resolved). */
  readonly mode: Exclude<AmpMode, 'auto'>;
  /** Autocast on, with `dtype`. */
  readonly enabled: boolean;
  /** The autocast dtype (bfloat16 or float16), or null when off. */
  readonly dtype: DType | null;
  /** Use a GradScaler (fp16 only: its small exponent range underflows gradients). */
  readonly useScaler: boolean;
  /** One line saying what was chosen and why. */
  readonly reason: string;
}

const OFF = (reason: string): AmpConfig => ({ mode: 'off', enabled: false, dtype: null, useScaler: false, reason });

/** Whether autocast can run `dtype` on this device type: a policy table allows it and the backend computes it. */
export function ampSupports(deviceType: string, dtype: DType): boolean {
  const table = autocastPolicy(deviceType);
  if (!table || !table.allowedDtypes.includes(dtype) || !isAvailable(deviceType)) return false;
  return getBackend(deviceType).capabilities.dtypes[dtype.name]?.compute === true;
}

/** Why autocast to `dtype` is not faster than float32 on this device type, or null when it is (or the backend does not say). */
function slower(deviceType: string, dtype: DType): string | null {
  const speed = getBackend(deviceType).capabilities.autocastSpeed?.[dtype.name as 'float16' | 'bfloat16'];
  return speed === undefined || speed.faster ? null : speed.reason;
}

function config(mode: 'bf16' | 'fp16', reason: string): AmpConfig {
  const dtype = mode === 'bf16' ? bfloat16 : float16;
  return { mode, enabled: true, dtype, useScaler: mode === 'fp16', reason };
}

/**
 * The mixed-precision setup for `device`. Explicit 'bf16'/'fp16' must be supported (else a
 * DTypeError says what to use instead); 'auto' takes a dtype only where the backend computes it and
 * does not report it slower than float32 (`capabilities.autocastSpeed`), falls back otherwise, and
 * its `reason` says so.
 */
export function ampConfig(device: DeviceLike, mode: AmpMode = 'auto'): AmpConfig {
  if (!['auto', 'bf16', 'fp16', 'off'].includes(mode)) throw new ValueError(`ampConfig(): mode must be auto, bf16, fp16 or off, got '${String(mode)}'`);
  const type = parseDevice(device).type;
  if (mode === 'off') return OFF('mixed precision off: training in float32');
  const bf16 = ampSupports(type, bfloat16);
  const fp16 = ampSupports(type, float16);
  if (mode === 'bf16' || mode === 'fp16') {
    const ok = mode === 'bf16' ? bf16 : fp16;
    if (!ok) {
      const alternative = mode === 'bf16' ? (fp16 ? "'fp16'" : "'off'") : bf16 ? "'bf16'" : "'off'";
      throw new DTypeError(`amp ${mode}: the ${type} device cannot autocast to ${mode === 'bf16' ? 'bfloat16' : 'float16'}; use ${alternative} or 'auto'`, 'amp', mode);
    }
    return config(mode, mode === 'bf16'
      ? `bf16 autocast on ${type}: bfloat16 has float32's exponent range, so no loss scaling`
      : `fp16 autocast on ${type} with a GradScaler: float16 gradients underflow without loss scaling`);
  }
  const bf16Slower = bf16 ? slower(type, bfloat16) : null;
  const fp16Slower = fp16 ? slower(type, float16) : null;
  if (bf16 && bf16Slower === null) return config('bf16', `amp auto → bf16 on ${type}: it computes bfloat16, which needs no loss scaling`);
  const noBf16 = bf16 ? `bfloat16 is not faster than float32 there (${bf16Slower})` : 'no bfloat16 there';
  if (fp16 && fp16Slower === null) return config('fp16', `amp auto → fp16 with a GradScaler on ${type}: ${noBf16}`);
  if (!bf16 && !fp16) return OFF(`amp auto → off on ${type}: it computes neither bfloat16 nor float16 under autocast`);
  const noFp16 = fp16 ? `float16 is not faster either (${fp16Slower})` : 'no float16 either';
  return OFF(`amp auto → off on ${type}, training in float32: ${noBf16}; ${noFp16}`);
}
