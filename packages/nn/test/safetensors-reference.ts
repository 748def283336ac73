// Shared by the safetensors tests: decoders written from the IEEE 754 definitions, independent of
// the library's own conversions.

/** The value of IEEE 754 binary16 bits. */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The value of bfloat16 bits: the top half of a float32's. */
export function bfloat16ToNumber(bits: number): number {
  return new Float32Array(new Uint32Array([bits << 16]).buffer)[0]!;
}
