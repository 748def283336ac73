// Conformance tests for the fp32 ↔ fp16 / bf16 conversions (spec §5, RND-1..RND-8).
//
// Every check compares src against references written here in a different way from src:
// decoders built from the bit fields with plain arithmetic, and a rounding that works on exact
// f64 values (find the two neighbouring grid values, take the nearer, ties to the even one)
// instead of shifting and masking f32 bits.
import { describe, expect, it } from 'vitest';
import { bfloat16, bool, float16, float32, float64, finfo, int32 } from '../../src/dtype/dtype.js';
import {
  bfloat16BitsToNumber,
  float16BitsToNumber,
  float32Bits,
  float32FromBits,
  float32ToBFloat16Bits,
  float32ToFloat16Bits,
  roundToBFloat16,
  roundToFloat16,
} from '../../src/dtype/half.js';

// ---------------------------------------------------------------------------------------------
// Independent helpers
// ---------------------------------------------------------------------------------------------

// f32 bit reinterpretation through a big-endian DataView (src uses typed-array aliasing).
const view = new DataView(new ArrayBuffer(4));
function f32FromBitsRef(u: number): number {
  view.setUint32(0, u >>> 0);
  return view.getFloat32(0);
}
function bitsOfF32Ref(x: number): number {
  view.setFloat32(0, x);
  return view.getUint32(0);
}

/** IEEE binary16 from its fields: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
function refDecodeF16(h: number): number {
  const negative = h >= 0x8000;
  const e = Math.floor(h / 1024) % 32;
  const f = h % 1024;
  let v: number;
  if (e === 31) v = f === 0 ? Infinity : NaN;
  else if (e === 0) v = (f / 1024) * 2 ** -14;
  else v = (1 + f / 1024) * 2 ** (e - 15);
  return negative ? -v : v;
}

/** bfloat16 from its fields: 1 sign, 8 exponent (bias 127), 7 fraction bits. */
function refDecodeBF16(b: number): number {
  const negative = b >= 0x8000;
  const e = Math.floor(b / 128) % 256;
  const f = b % 128;
  let v: number;
  if (e === 255) v = f === 0 ? Infinity : NaN;
  else if (e === 0) v = (f / 128) * 2 ** -126;
  else v = (1 + f / 128) * 2 ** (e - 127);
  return negative ? -v : v;
}

const REF_F16 = new Float64Array(65536);
const REF_BF16 = new Float64Array(65536);
for (let i = 0; i < 65536; i++) {
  REF_F16[i] = refDecodeF16(i);
  REF_BF16[i] = refDecodeBF16(i);
}

const isF16NaNBits = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x03ff) !== 0;
const isBF16NaNBits = (b: number) => (b & 0x7f80) === 0x7f80 && (b & 0x007f) !== 0;

interface Format {
  readonly name: string;
  /** Fraction bits of the significand. */
  readonly mantBits: number;
  /** Exponent of the smallest normal; below it the grid spacing stays 2^(minExp - mantBits). */
  readonly minExp: number;
  /** Largest finite value; anything that rounds above it is infinite. */
  readonly max: number;
}
const F16: Format = { name: 'f16', mantBits: 10, minExp: -14, max: 65504 };
const BF16: Format = { name: 'bf16', mantBits: 7, minExp: -126, max: (2 - 2 ** -7) * 2 ** 127 };

/** Largest e with 2^e ≤ a, for finite a > 0, exact (Math.log2 alone can be off by one). */
function floorLog2(a: number): number {
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  return e;
}

/**
 * Reference rounding of an f32 value (exact in f64) to a binary format: round to nearest,
 * ties to even, overflow to ±inf, gradual underflow, sign of zero kept. All steps are exact in
 * f64: a/q and m·q scale by a power of two, a − lo only drops a's high bits.
 */
function refRound(x: number, fmt: Format): number {
  if (Number.isNaN(x)) return NaN;
  if (x === 0 || !Number.isFinite(x)) return x;
  const a = Math.abs(x);
  const q = 2 ** (Math.max(floorLog2(a), fmt.minExp) - fmt.mantBits); // grid spacing around a
  const m = Math.floor(a / q);
  const lo = m * q;
  const hi = lo + q;
  const twice = 2 * (a - lo); // compare a − lo with q/2 without rounding error
  let r: number;
  if (twice < q) r = lo;
  else if (twice > q) r = hi;
  else r = m % 2 === 0 ? lo : hi; // the even neighbour has an even integral significand
  if (r > fmt.max) r = Infinity;
  return x < 0 ? -r : r;
}

const fmtBits = (u: number) => '0x' + (u >>> 0).toString(16).padStart(8, '0');
const fmtHalf = (u: number) => '0x' + u.toString(16).padStart(4, '0');

/** A growable list of f32 bit patterns. */
class BitList {
  private buf = new Uint32Array(1 << 16);
  length = 0;
  push(u: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = u >>> 0;
  }
  /** u and its f32 neighbours u ± 1 (same sign), for both signs. */
  pushAround(u: number): void {
    const mag = u & 0x7fffffff;
    for (const d of [-1, 0, 1]) {
      const v = mag + d;
      if (v < 0 || v > 0x7f800000) continue;
      this.push(v);
      this.push((v | 0x80000000) >>> 0);
    }
  }
  values(): Float32Array {
    return new Float32Array(this.buf.buffer, 0, this.length);
  }
}

/** All 2^32 f32 patterns with a stride (odd, so the low bits vary too). */
function pushStrided(list: BitList, stride: number, start = 0): void {
  for (let u = start; u < 2 ** 32; u += stride) list.push(u);
}

interface SweepResult {
  checked: number;
  mismatches: number;
  examples: string[];
}

/** Runs `encode` on every value and compares the decoded result with refRound. */
function sweep(values: Float32Array, encode: (x: number) => number, table: Float64Array, fmt: Format): SweepResult {
  const res: SweepResult = { checked: 0, mismatches: 0, examples: [] };
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    const g = encode(x);
    const want = refRound(x, fmt);
    let ok = Number.isInteger(g) && g >= 0 && g <= 0xffff;
    if (ok) {
      const got = table[g]!;
      ok = Number.isNaN(want) ? Number.isNaN(got) : Object.is(got, want);
    }
    res.checked++;
    if (!ok) {
      res.mismatches++;
      if (res.examples.length < 10) {
        res.examples.push(`${fmt.name}: input ${fmtBits(bitsOfF32Ref(x))} (${x}) → got ${g}, want ${want}`);
      }
    }
  }
  return res;
}

const SLOW = 60_000;

// ---------------------------------------------------------------------------------------------
// Sanity of the references themselves (so a wrong reference cannot hide a wrong src).
// ---------------------------------------------------------------------------------------------

describe('test references', () => {
  it('reference decoders give the textbook values', () => {
    expect(refDecodeF16(0x3c00)).toBe(1);
    expect(refDecodeF16(0x7bff)).toBe(65504);
    expect(refDecodeF16(0x0001)).toBe(2 ** -24);
    expect(refDecodeF16(0x0400)).toBe(2 ** -14);
    expect(refDecodeF16(0xc000)).toBe(-2);
    expect(Object.is(refDecodeF16(0x8000), -0)).toBe(true);
    expect(refDecodeF16(0x7c00)).toBe(Infinity);
    expect(refDecodeF16(0x7e00)).toBeNaN();
    expect(refDecodeBF16(0x3f80)).toBe(1);
    expect(refDecodeBF16(0x0001)).toBe(2 ** -133);
    expect(refDecodeBF16(0xff80)).toBe(-Infinity);
    const bad: number[] = [];
    for (let b = 0; b < 65536; b++) {
      const v = refDecodeBF16(b);
      const w = f32FromBitsRef(b * 65536);
      if (!(Number.isNaN(v) ? Number.isNaN(w) : Object.is(v, w))) bad.push(b);
    }
    expect(bad).toEqual([]);
  });

  it('reference rounding reproduces the spec examples (RND-1..RND-4)', () => {
    expect(refRound(65519.99, F16)).toBe(65504);
    expect(refRound(65520, F16)).toBe(Infinity);
    expect(refRound(-65520, F16)).toBe(-Infinity);
    expect(refRound(2 ** -25, F16)).toBe(0);
    expect(refRound(1.5 * 2 ** -25, F16)).toBe(2 ** -24);
    expect(refRound(2049, F16)).toBe(2048);
    expect(refRound(2051, F16)).toBe(2052);
    expect(refRound(1 + 2 ** -11, F16)).toBe(1);
    expect(refRound(1 + 3 * 2 ** -11, F16)).toBe(1.001953125);
    expect(refRound(1 + 2 ** -8, BF16)).toBe(1);
    expect(refRound(1 + 3 * 2 ** -8, BF16)).toBe(1.015625);
    expect(refRound(f32FromBitsRef(0x7f7f8000), BF16)).toBe(Infinity);
    expect(refRound(f32FromBitsRef(0x7f7f7fff), BF16)).toBe(BF16.max);
    expect(refRound(Math.fround(1e-40), BF16)).toBe(2 ** -133);
  });
});

// ---------------------------------------------------------------------------------------------
// Exhaustive 16-bit patterns (RND-6 decode, round trip)
// ---------------------------------------------------------------------------------------------

describe('f16 bit patterns', () => {
  it('RND-6: all 65,536 f16 patterns decode exactly and re-encode to the same bits (NaNs stay NaN, RND-5)', () => {
    const bad: string[] = [];
    let nans = 0;
    for (let h = 0; h < 65536; h++) {
      const v = float16BitsToNumber(h);
      const want = REF_F16[h]!;
      if (Number.isNaN(want)) {
        nans++;
        const back = float32ToFloat16Bits(v);
        if (!Number.isNaN(v) || !isF16NaNBits(back)) bad.push(`${fmtHalf(h)}: NaN → ${v}, re-encoded ${back}`);
        continue;
      }
      if (!Object.is(v, want)) bad.push(`${fmtHalf(h)}: decoded ${v}, want ${want}`);
      if (Math.fround(v) !== v) bad.push(`${fmtHalf(h)}: ${v} is not an f32 value`);
      const back = float32ToFloat16Bits(v);
      if (back !== h) bad.push(`${fmtHalf(h)}: re-encoded as ${back}`);
      if (bad.length > 20) break;
    }
    expect(bad).toEqual([]);
    expect(nans).toBe(2 * 1023);
  });

  it('RND-6: roundToFloat16 is the identity on every f16 value', () => {
    for (let h = 0; h < 65536; h += 1) {
      const v = REF_F16[h]!;
      const r = roundToFloat16(v);
      if (Number.isNaN(v)) expect(r).toBeNaN();
      else if (!Object.is(r, v)) expect.fail(`${fmtHalf(h)}: roundToFloat16(${v}) = ${r}`);
    }
  });
});

describe('bf16 bit patterns', () => {
  it('RND-6: all 65,536 bf16 patterns decode as (bits << 16) read as f32 and re-encode to the same bits (NaNs stay NaN, RND-5)', () => {
    const bad: string[] = [];
    let nans = 0;
    for (let b = 0; b < 65536; b++) {
      const v = bfloat16BitsToNumber(b);
      const want = REF_BF16[b]!;
      if (Number.isNaN(want)) {
        nans++;
        const back = float32ToBFloat16Bits(v);
        if (!Number.isNaN(v) || !isBF16NaNBits(back)) bad.push(`${fmtHalf(b)}: NaN → ${v}, re-encoded ${back}`);
        continue;
      }
      if (!Object.is(v, want)) bad.push(`${fmtHalf(b)}: decoded ${v}, want ${want}`);
      if (!Object.is(v, f32FromBitsRef(b * 65536))) bad.push(`${fmtHalf(b)}: differs from bits<<16`);
      const back = float32ToBFloat16Bits(v);
      if (back !== b) bad.push(`${fmtHalf(b)}: re-encoded as ${back}`);
      if (!Object.is(roundToBFloat16(v), v)) bad.push(`${fmtHalf(b)}: roundToBFloat16 moved it`);
      if (bad.length > 20) break;
    }
    expect(bad).toEqual([]);
    expect(nans).toBe(2 * 127);
  });
});

// ---------------------------------------------------------------------------------------------
// Millions of f32 inputs against the reference rounding (RND-1..RND-4)
// ---------------------------------------------------------------------------------------------

describe('f32 → f16 against the reference rounding', () => {
  it('RND-1/RND-2: strided f32 patterns + every f16 rounding boundary ±1 f32 ulp (≈3.8M values)', { timeout: SLOW }, () => {
    const list = new BitList();
    // (a) all 2^32 patterns with an odd stride: every exponent, NaNs, infinities, f32 subnormals.
    pushStrided(list, 2897);
    // (b) denser over the interesting range |x| ∈ [2^-26, 2^17), alternating signs.
    let i = 0;
    for (let u = 101 << 23; u < 144 << 23; u += 263) list.push(i++ % 2 === 0 ? u : (u | 0x80000000) >>> 0);
    // (c) each f16 value and each midpoint to the next f16 value (its rounding boundary),
    //     ±1 f32 ulp, both signs: all 1024 subnormal steps, every normal binade, and the
    //     overflow boundary 65520 (midpoint between 65504 and the would-be next value 2^16).
    for (let h = 0; h <= 0x7bff; h++) {
      const v = REF_F16[h]!;
      const next = h === 0x7bff ? 65536 : REF_F16[h + 1]!;
      list.pushAround(bitsOfF32Ref(v));
      list.pushAround(bitsOfF32Ref((v + next) / 2));
    }
    // (d) everything between the largest f16 and 2^16 (+16 ulps), both signs.
    for (let u = bitsOfF32Ref(65504); u <= bitsOfF32Ref(65536) + 16; u++) {
      list.push(u);
      list.push((u | 0x80000000) >>> 0);
    }
    // (e) everything below 2^-24 down to 2^-27 in a few steps, where subnormal rounding and the
    //     tie-to-zero at 2^-25 live.
    for (let u = bitsOfF32Ref(2 ** -27); u <= bitsOfF32Ref(2 ** -23); u += 61) list.push(u);

    const r = sweep(list.values(), float32ToFloat16Bits, REF_F16, F16);
    expect(r.examples).toEqual([]);
    expect(r.mismatches).toBe(0);
    expect(r.checked).toBeGreaterThan(3_000_000);
  });

  const f16round = (Math as unknown as { f16round?: (x: number) => number }).f16round;
  it.runIf(typeof f16round === 'function')('RND-1: agrees with Math.f16round on f32 inputs (where the runtime has it)', () => {
    const list = new BitList();
    pushStrided(list, 40_009);
    for (let h = 0; h <= 0x7bff; h += 7) {
      const v = REF_F16[h]!;
      const next = h === 0x7bff ? 65536 : REF_F16[h + 1]!;
      list.pushAround(bitsOfF32Ref((v + next) / 2));
    }
    const xs = list.values();
    for (let k = 0; k < xs.length; k++) {
      const x = xs[k]!;
      const got = REF_F16[float32ToFloat16Bits(x)]!;
      const want = f16round!(x);
      if (!(Number.isNaN(want) ? Number.isNaN(got) : Object.is(got, want))) expect.fail(`${x}: got ${got}, want ${want}`);
    }
  });
});

describe('f32 → bf16 against the reference rounding', () => {
  it('RND-4: strided f32 patterns + every bf16 rounding boundary ±1 ulp + all low halves under selected high halves (≈2.9M values)', { timeout: SLOW }, () => {
    const list = new BitList();
    pushStrided(list, 2897, 1);
    // Each bf16 value and each midpoint to the next one, ±1 f32 ulp, both signs, including the
    // overflow tie 0x7F7F8000 (midpoint between the bf16 maximum and 2^128).
    for (let b = 0; b <= 0x7f7f; b++) {
      const v = REF_BF16[b]!;
      const next = b === 0x7f7f ? 2 ** 128 : REF_BF16[b + 1]!;
      list.pushAround(bitsOfF32Ref(v));
      list.pushAround(bitsOfF32Ref((v + next) / 2));
    }
    // Every one of the 65,536 dropped low halves under high halves where carries, ties, signs,
    // subnormals, overflow and inf/NaN meet.
    const highs = [0x0000, 0x0001, 0x007f, 0x0080, 0x3f80, 0x3f81, 0x7f7e, 0x7f7f, 0x7f80, 0x7fc0, 0x8000, 0x8001, 0xbf80, 0xff7f, 0xff80];
    for (const hi of highs) for (let lo = 0; lo < 65536; lo++) list.push(hi * 65536 + lo);

    const r = sweep(list.values(), float32ToBFloat16Bits, REF_BF16, BF16);
    expect(r.examples).toEqual([]);
    expect(r.mismatches).toBe(0);
    expect(r.checked).toBeGreaterThan(2_500_000);
  });
});

// ---------------------------------------------------------------------------------------------
// The individual claims
// ---------------------------------------------------------------------------------------------

describe('f16 rounding claims', () => {
  it('RND-1: largest finite f16 is 65504 (0x7BFF)', () => {
    expect(float16BitsToNumber(0x7bff)).toBe(65504);
    expect(float32ToFloat16Bits(65504)).toBe(0x7bff);
    expect(float32ToFloat16Bits(-65504)).toBe(0xfbff);
  });

  it('RND-1: f32→f16 rounds to nearest even; 65519.99 → 65504, 65520 → inf', () => {
    expect(float32ToFloat16Bits(65519.99)).toBe(0x7bff);
    // the largest f32 below 65520 still rounds down
    expect(float32ToFloat16Bits(f32FromBitsRef(bitsOfF32Ref(65520) - 1))).toBe(0x7bff);
    expect(float32ToFloat16Bits(65520)).toBe(0x7c00);
    expect(float32ToFloat16Bits(-65520)).toBe(0xfc00);
    expect(float32ToFloat16Bits(65536)).toBe(0x7c00);
    expect(float32ToFloat16Bits(1e6)).toBe(0x7c00);
    expect(float32ToFloat16Bits(float32FromBits(0x7f7fffff))).toBe(0x7c00);
    expect(roundToFloat16(65519.99)).toBe(65504);
    expect(roundToFloat16(65520)).toBe(Infinity);
    expect(roundToFloat16(-70000)).toBe(-Infinity);
  });

  it('RND-1: ±inf and ±0 are preserved', () => {
    expect(float32ToFloat16Bits(Infinity)).toBe(0x7c00);
    expect(float32ToFloat16Bits(-Infinity)).toBe(0xfc00);
    expect(float32ToFloat16Bits(0)).toBe(0x0000);
    expect(float32ToFloat16Bits(-0)).toBe(0x8000);
    expect(float16BitsToNumber(0x7c00)).toBe(Infinity);
    expect(float16BitsToNumber(0xfc00)).toBe(-Infinity);
    expect(Object.is(float16BitsToNumber(0x8000), -0)).toBe(true);
  });

  it('RND-2: subnormals reach 2^-24 (0x0001); 2^-25 → 0 (tie to even); 1.5·2^-25 → 2^-24; −0 → 0x8000', () => {
    expect(float16BitsToNumber(0x0001)).toBe(2 ** -24);
    expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001);
    expect(float32ToFloat16Bits(2 ** -25)).toBe(0x0000);
    expect(float32ToFloat16Bits(-(2 ** -25))).toBe(0x8000);
    expect(float32ToFloat16Bits(f32FromBitsRef(bitsOfF32Ref(2 ** -25) + 1))).toBe(0x0001); // just above the tie
    expect(float32ToFloat16Bits(1.5 * 2 ** -25)).toBe(0x0001);
    expect(float32ToFloat16Bits(3 * 2 ** -25)).toBe(0x0002); // tie between 1 and 2 → 2
    expect(float32ToFloat16Bits(5 * 2 ** -25)).toBe(0x0002); // tie between 2 and 3 → 2
    expect(float32ToFloat16Bits(2 ** -30)).toBe(0x0000);
    expect(float32ToFloat16Bits(float32FromBits(0x00000001))).toBe(0x0000); // f32 subnormal
    expect(float32ToFloat16Bits(-0)).toBe(0x8000);
    // the smallest normal, and the tie just below it that carries into it
    expect(float32ToFloat16Bits(2 ** -14)).toBe(0x0400);
    expect(float32ToFloat16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400);
    expect(float32ToFloat16Bits(2 ** -14 - 2 ** -24)).toBe(0x03ff);
  });

  it('RND-3: ties go to even: 2049 → 2048, 2051 → 2052, 1+2^-11 → 1, 1+3·2^-11 → 1.001953125 (0x3C02)', () => {
    expect(roundToFloat16(2049)).toBe(2048);
    expect(roundToFloat16(2051)).toBe(2052);
    expect(float32ToFloat16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(float32ToFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(float16BitsToNumber(0x3c02)).toBe(1.001953125);
    expect(roundToFloat16(-2049)).toBe(-2048);
    expect(roundToFloat16(-2051)).toBe(-2052);
  });

  it('RND-5: f16 NaN input gives a NaN pattern (only isNaN is asserted)', () => {
    for (const x of [NaN, -NaN, float32FromBits(0x7f800001), float32FromBits(0xffc00000)]) {
      const h = float32ToFloat16Bits(x);
      expect(isF16NaNBits(h)).toBe(true);
      expect(float16BitsToNumber(h)).toBeNaN();
    }
  });

  it('RND-7: an f64 goes through f32 first, so it rounds twice: 1+2^-11+2^-40 → f16 1.0, not 1+2^-10', () => {
    const x = 1 + 2 ** -11 + 2 ** -40;
    expect(refRound(x, F16)).toBe(1 + 2 ** -10); // what a single rounding would give
    expect(float32ToFloat16Bits(x)).toBe(0x3c00);
    expect(roundToFloat16(x)).toBe(1);
    expect(float32ToFloat16Bits(-x)).toBe(0xbc00);
  });
});

describe('bf16 rounding claims', () => {
  it('RND-4: NaN → 0x7FC0 (scalar path)', () => {
    expect(float32ToBFloat16Bits(NaN)).toBe(0x7fc0);
    expect(float32ToBFloat16Bits(float32FromBits(0x7f800001))).toBe(0x7fc0);
    expect(float32ToBFloat16Bits(float32FromBits(0xffc00000))).toBe(0x7fc0);
    expect(bfloat16BitsToNumber(0x7fc0)).toBeNaN();
  });

  it('RND-4: ties to even: 1+2^-8 → 1, 1+3·2^-8 → 1.015625', () => {
    expect(float32ToBFloat16Bits(1 + 2 ** -8)).toBe(0x3f80);
    expect(roundToBFloat16(1 + 2 ** -8)).toBe(1);
    expect(float32ToBFloat16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(roundToBFloat16(1 + 3 * 2 ** -8)).toBe(1.015625);
    expect(roundToBFloat16(-(1 + 3 * 2 ** -8))).toBe(-1.015625);
  });

  it('RND-4: f32 max and the tie 0x7F7F8000 → +inf; 0x7F7F7FFF → 0x7F7F (≈3.3895e38, the bf16 max)', () => {
    expect(float32ToBFloat16Bits(float32FromBits(0x7f7fffff))).toBe(0x7f80);
    expect(float32ToBFloat16Bits(float32FromBits(0x7f7f8000))).toBe(0x7f80);
    expect(float32ToBFloat16Bits(float32FromBits(0xff7f8000))).toBe(0xff80);
    expect(float32ToBFloat16Bits(float32FromBits(0x7f7f7fff))).toBe(0x7f7f);
    expect(bfloat16BitsToNumber(0x7f7f)).toBe(3.3895313892515355e38);
    expect(bfloat16BitsToNumber(0x7f7f)).toBeCloseTo(3.3895e38, -34);
    expect(bfloat16BitsToNumber(0x7f80)).toBe(Infinity);
  });

  it('RND-4: subnormals are kept, not flushed: 1e-40 → 2^-133', () => {
    expect(float32ToBFloat16Bits(1e-40)).toBe(0x0001);
    expect(roundToBFloat16(1e-40)).toBe(2 ** -133);
    expect(roundToBFloat16(-1e-40)).toBe(-(2 ** -133));
    expect(float32ToBFloat16Bits(float32FromBits(0x00008000))).toBe(0x0000); // tie 2^-134 → 0 (even)
    expect(float32ToBFloat16Bits(float32FromBits(0x00018000))).toBe(0x0002); // tie → even 2
  });

  it('RND-4: ±inf and ±0 are preserved', () => {
    expect(float32ToBFloat16Bits(Infinity)).toBe(0x7f80);
    expect(float32ToBFloat16Bits(-Infinity)).toBe(0xff80);
    expect(float32ToBFloat16Bits(0)).toBe(0x0000);
    expect(float32ToBFloat16Bits(-0)).toBe(0x8000);
    expect(Object.is(bfloat16BitsToNumber(0x8000), -0)).toBe(true);
    expect(Object.is(roundToBFloat16(-0), -0)).toBe(true);
  });

  it('RND-7: an f64 goes through f32 first: 1+2^-8+2^-40 → bf16 1.0, not 1+2^-7', () => {
    const x = 1 + 2 ** -8 + 2 ** -40;
    expect(refRound(x, BF16)).toBe(1 + 2 ** -7); // single rounding
    expect(float32ToBFloat16Bits(x)).toBe(0x3f80);
    expect(roundToBFloat16(x)).toBe(1);
  });
});

describe('f32 bit helpers', () => {
  it('float32Bits / float32FromBits reinterpret f32 bits', () => {
    expect(float32Bits(1)).toBe(0x3f800000);
    expect(float32Bits(-2)).toBe(0xc0000000);
    expect(float32Bits(-0)).toBe(0x80000000);
    expect(float32FromBits(0x7f7fffff)).toBe(3.4028234663852886e38);
    expect(float32FromBits(0x00000001)).toBe(2 ** -149);
    expect(float32Bits(1 + 2 ** -30)).toBe(0x3f800000); // rounds to f32 first
    for (let u = 0; u < 2 ** 32; u += 1_000_003) {
      const x = float32FromBits(u);
      const want = f32FromBitsRef(u);
      if (Number.isNaN(want)) {
        expect(x).toBeNaN();
      } else {
        expect(Object.is(x, want)).toBe(true);
        expect(float32Bits(x)).toBe(u);
      }
    }
  });
});

describe('finfo', () => {
  it('RND-8: f16 has max 65504, tiny 6.1035e-5, eps 2^-10', () => {
    const fi = finfo(float16);
    expect(fi.max).toBe(65504);
    expect(fi.max).toBe(REF_F16[0x7bff]);
    expect(fi.tiny).toBe(2 ** -14);
    expect(fi.tiny).toBeCloseTo(6.1035e-5, 8);
    expect(fi.tiny).toBe(REF_F16[0x0400]);
    expect(fi.eps).toBe(2 ** -10);
    expect(fi.eps).toBe(REF_F16[0x3c01]! - 1);
    expect(fi.bits).toBe(16);
  });

  it('RND-8: bf16 has max 3.3895e38, tiny 1.1755e-38, eps 2^-7', () => {
    const fi = finfo(bfloat16);
    expect(fi.max).toBe(REF_BF16[0x7f7f]);
    expect(fi.max / 1e38).toBeCloseTo(3.3895, 4);
    expect(fi.tiny).toBe(2 ** -126);
    expect(fi.tiny).toBe(REF_BF16[0x0080]);
    expect(fi.tiny / 1e-38).toBeCloseTo(1.1755, 4);
    expect(fi.eps).toBe(2 ** -7);
    expect(fi.eps).toBe(REF_BF16[0x3f81]! - 1);
    expect(fi.bits).toBe(16);
  });

  it('RND-8: f32 and f64 limits; non-floating dtypes throw', () => {
    expect(finfo(float32)).toEqual({ max: f32FromBitsRef(0x7f7fffff), tiny: 2 ** -126, eps: 2 ** -23, bits: 32 });
    expect(finfo(float64)).toEqual({ max: Number.MAX_VALUE, tiny: 2 ** -1022, eps: Number.EPSILON, bits: 64 });
    expect(() => finfo(int32)).toThrow(TypeError);
    expect(() => finfo(bool)).toThrow(TypeError);
  });
});
