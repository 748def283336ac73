// Counter-based random numbers: Philox4x32-10 as in Random123 (Salmon et al., SC'11), so every
// backend produces the same stream for the same key and counter.
import type { RandomSpec } from '@core/tensor';
import { numelOf, type Ref, scatterFrom } from './io.js';

const PHILOX_M0 = 0xd2511f53;
const PHILOX_M1 = 0xcd9e8d57;
const PHILOX_W0 = 0x9e3779b9;
const PHILOX_W1 = 0xbb67ae85;
const TWO_POW_32 = 4294967296;

/** High 32 bits of the 64-bit product of two u32s, from 16-bit halves so every partial product is exact. */
export function mulhi32(a: number, b: number): number {
  const aLo = a & 0xffff;
  const aHi = a >>> 16;
  const bLo = b & 0xffff;
  const bHi = b >>> 16;
  const lh = aLo * bHi;
  const hl = aHi * bLo;
  const mid = ((aLo * bLo) >>> 16) + (lh & 0xffff) + (hl & 0xffff); // < 3·2^16: carries into the high word
  return (aHi * bHi + (lh >>> 16) + (hl >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * One Philox4x32-10 block: counter (c0..c3), key (k0, k1) → four u32 words written to `out`.
 * Each round: (hi0, lo0) = M0·c0, (hi1, lo1) = M1·c2, c = [hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0];
 * the key gets the Weyl increments between rounds.
 */
export function philox4x32_10(c0: number, c1: number, c2: number, c3: number, k0: number, k1: number, out: Uint32Array): void {
  let x0 = c0 >>> 0;
  let x1 = c1 >>> 0;
  let x2 = c2 >>> 0;
  let x3 = c3 >>> 0;
  let key0 = k0 >>> 0;
  let key1 = k1 >>> 0;
  for (let round = 0; round < 10; round++) {
    if (round > 0) {
      key0 = (key0 + PHILOX_W0) >>> 0;
      key1 = (key1 + PHILOX_W1) >>> 0;
    }
    const hi0 = mulhi32(PHILOX_M0, x0);
    const lo0 = Math.imul(PHILOX_M0, x0) >>> 0;
    const hi1 = mulhi32(PHILOX_M1, x2);
    const lo1 = Math.imul(PHILOX_M1, x2) >>> 0;
    x0 = (hi1 ^ x1 ^ key0) >>> 0;
    x1 = lo1;
    x2 = (hi0 ^ x3 ^ key1) >>> 0;
    x3 = lo0;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

/** Element i is word (i mod 4) of the block at counter offset + floor(i / 4) (low word, carry word, 0, 0). */
export function randomBits(key: readonly [number, number], offset: number, count: number): Uint32Array {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`cpu random: offset ${offset} must be a non-negative safe integer`);
  const bits = new Uint32Array(count);
  const block = new Uint32Array(4);
  for (let i = 0; i < count; i += 4) {
    const counter = offset + i / 4;
    philox4x32_10(counter >>> 0, Math.floor(counter / TWO_POW_32), 0, 0, key[0], key[1], block);
    const take = Math.min(4, count - i);
    for (let w = 0; w < take; w++) bits[i + w] = block[w];
  }
  return bits;
}

/** floor(bits · range / 2^32) exactly, for bits < 2^32 and range ≤ 2^32: partial products stay below 2^53. */
export function scaleBits(bits: number, range: number): number {
  const hiPart = (bits >>> 16) * range; // < 2^48
  const loPart = (bits & 0xffff) * range; // < 2^48
  // bits·range = hiPart·2^16 + loPart = (hiPart + floor(loPart / 2^16))·2^16 + (loPart mod 2^16),
  // and the last term is too small to change the floor of the division by 2^32.
  return Math.floor((hiPart + Math.floor(loPart / 65536)) / 65536);
}

export function random(out: Ref, spec: RandomSpec): void {
  const n = numelOf(out);
  const bits = randomBits(spec.key, spec.offset, n);
  const dist = spec.distribution;
  if (dist.kind === 'uniform') {
    if (out.dtype === 'int32' || out.dtype === 'bool') throw new TypeError(`cpu random: uniform needs a floating out, got ${out.dtype}`);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = (bits[i] >>> 8) * 2 ** -24; // exact in f32
    scatterFrom(values, out);
    return;
  }
  const { low, high } = dist;
  if (!Number.isInteger(low) || !Number.isInteger(high) || high <= low || high - low > TWO_POW_32) {
    throw new RangeError(`cpu random: randint needs integers low < high with high − low ≤ 2^32, got [${low}, ${high})`);
  }
  const range = high - low;
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = low + scaleBits(bits[i], range);
  scatterFrom(values, out);
}
