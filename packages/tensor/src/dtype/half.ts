// Bit-exact conversions between fp32 and the 16-bit float formats (RND-1..7).
// One shared scratch buffer reinterprets float bits without allocating.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Bits of the float32 nearest to `x` (JS numbers are f64, so this rounds first). */
export function float32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

export function float32FromBits(bits: number): number {
  u32[0] = bits >>> 0;
  return f32[0]!;
}

/**
 * f32 → f16 bits, round to nearest with ties to even. Overflow gives ±Inf (|x| ≥ 65520),
 * subnormals are kept down to 2^-24, NaN gives sign|0x7E00 (quiet), −0 keeps its sign.
 * A JS number is first rounded to f32, so an f64 input rounds twice, as in PyTorch (RND-7).
 */
export function float32ToFloat16Bits(x: number): number {
  const bits = float32Bits(x);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;

  if (exp === 0xff) return mant !== 0 ? sign | 0x7e00 : sign | 0x7c00;

  const e = exp - 127; // unbiased exponent
  if (e > 15) return sign | 0x7c00; // ≥ 2^16: overflow

  if (e >= -14) {
    // Normal f16: keep 10 mantissa bits, round on the 13 dropped ones.
    let half = ((e + 15) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) !== 0)) half += 1; // may carry into Inf: correct
    return sign | half;
  }

  if (e < -25) return sign; // below half the smallest subnormal: ±0
  // Subnormal f16: value = m · 2^-24 with m = full significand >> shift.
  const full = mant | 0x800000;
  const shift = -e - 1; // e = -15 → 14, e = -25 → 24 (2^-25 is the tie to zero)
  let half = full >>> shift;
  const rest = full & ((1 << shift) - 1);
  const tie = 1 << (shift - 1);
  if (rest > tie || (rest === tie && (half & 1) !== 0)) half += 1; // may carry into the smallest normal: correct
  return sign | half;
}

/** f16 bits → the exact value (RND-6). */
export function float16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant !== 0 ? NaN : sign * Infinity;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/**
 * f32 → bf16 bits with PyTorch's rounding (RND-4): NaN → 0x7FC0, otherwise
 * (u + 0x7FFF + ((u >> 16) & 1)) >> 16 on the f32 bits, which rounds to nearest even,
 * overflows to Inf and keeps subnormals.
 */
export function float32ToBFloat16Bits(x: number): number {
  const u = float32Bits(x);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bf16 bits → the exact value: the bits are the top half of an f32 (RND-6). */
export function bfloat16BitsToNumber(b: number): number {
  return float32FromBits((b & 0xffff) << 16);
}

/** Round a number to the nearest f16 value (through f32, as PyTorch does). */
export function roundToFloat16(x: number): number {
  return float16BitsToNumber(float32ToFloat16Bits(x));
}

/** Round a number to the nearest bfloat16 value (through f32, as PyTorch does). */
export function roundToBFloat16(x: number): number {
  return bfloat16BitsToNumber(float32ToBFloat16Bits(x));
}
