// WGSL helpers every kernel includes: bit-exact 16-bit float conversions, NaN tests on bits (WGSL
// lets implementations assume no NaN/Inf in float comparisons, so every NaN decision is made on
// the bits), a correctly rounded f32 division and an exact fmod in integer arithmetic (WGSL's `/`
// may be off by an ulp: SwiftShader's is), and f32 transcendental functions with documented error
// (a few ulp), so results do not depend on the driver's built-ins.

export const LIB = /* wgsl */ `
// Private variables, not constants: a constant NaN or Inf bit pattern is a WGSL compile error.
var<private> NAN_BITS: u32 = 0x7fc00000u;
var<private> INF_BITS: u32 = 0x7f800000u;

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn is_zero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0u; }
fn f32_nan() -> f32 { return bitcast<f32>(NAN_BITS); }
fn f32_inf(neg: bool) -> f32 { return bitcast<f32>(INF_BITS | select(0u, 0x80000000u, neg)); }
fn copy_sign(x: f32, s: f32) -> f32 { return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u)); }
fn sign_bit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn is_subnormal(x: f32) -> bool { let b = bitcast<u32>(x); return (b & 0x7f800000u) == 0u && (b & 0x7fffffu) != 0u; }
/**
 * Ordering on the bits: monotonic in the value, both zeros equal. Comparisons never go through
 * float hardware, so subnormals compare right on devices that flush them (SwiftShader).
 */
fn f_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) == 0u) { return 0x80000000u; }
  return select(b | 0x80000000u, ~b, (b >> 31u) != 0u);
}
fn f_lt(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && f_key(a) < f_key(b); }
fn f_le(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && f_key(a) <= f_key(b); }
fn f_eq(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && f_key(a) == f_key(b); }
fn f_neg(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ 0x80000000u); }
fn f_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }
/** Truthiness of a float: x != 0, NaN is true. */
fn f_truthy(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) != 0u; }

// ---- 16-bit floats (bit patterns in the low 16 bits of a u32) ----

fn f16_to_f32(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) {
    // ±0 and subnormals: m·2^-24, a normal f32 (or zero), exact.
    if (m == 0u) { return bitcast<f32>(s); }
    let t = 31u - countLeadingZeros(m);           // top set bit: m·2^-24 = 1.f · 2^(t-24)
    return bitcast<f32>(s | ((t + 103u) << 23u) | ((m << (23u - t)) & 0x7fffffu));
  }
  if (e == 31u) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}

/** f32 → f16 bits, round to nearest even; overflow → ±Inf, subnormals kept, NaN → quiet. */
fn f32_to_f16(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  let sign = (bits >> 16u) & 0x8000u;
  let ex = (bits >> 23u) & 0xffu;
  let mant = bits & 0x7fffffu;
  if (ex == 0xffu) { return select(sign | 0x7c00u, sign | 0x7e00u, mant != 0u); }
  let e = i32(ex) - 127;
  if (e > 15) { return sign | 0x7c00u; }
  if (e >= -14) {
    var half = (u32(e + 15) << 10u) | (mant >> 13u);
    let rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0u)) { half = half + 1u; }
    return sign | half;
  }
  if (e < -25) { return sign; }
  let full = mant | 0x800000u;
  let shift = u32(-e - 1);
  var half = full >> shift;
  let rest = full & ((1u << shift) - 1u);
  let tie = 1u << (shift - 1u);
  if (rest > tie || (rest == tie && (half & 1u) != 0u)) { half = half + 1u; }
  return sign | half;
}

fn bf16_to_f32(h: u32) -> f32 { return bitcast<f32>((h & 0xffffu) << 16u); }

/** f32 → bf16 bits with PyTorch's rounding: NaN → 0x7fc0, else RNE on the f32 bits. */
fn f32_to_bf16(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return 0x7fc0u; }
  return ((u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u) & 0xffffu;
}

// ---- wide integer helpers ----

/** The 64-bit product of two u32s as (lo, hi). */
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a_lo = a & 0xffffu; let a_hi = a >> 16u;
  let b_lo = b & 0xffffu; let b_hi = b >> 16u;
  let ll = a_lo * b_lo; let lh = a_lo * b_hi; let hl = a_hi * b_lo; let hh = a_hi * b_hi;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  let hi = hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
  let lo = (mid << 16u) | (ll & 0xffffu);
  return vec2<u32>(lo, hi);
}

// ---- correctly rounded division ----

fn div_rn(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  let sign = (ua ^ ub) & 0x80000000u;
  let aa = ua & 0x7fffffffu;
  let ab = ub & 0x7fffffffu;
  if (aa > 0x7f800000u || ab > 0x7f800000u) { return f32_nan(); }
  if (aa == 0x7f800000u) {
    if (ab == 0x7f800000u) { return f32_nan(); }
    return bitcast<f32>(sign | 0x7f800000u);
  }
  if (ab == 0x7f800000u) { return bitcast<f32>(sign); }
  if (aa == 0u) {
    if (ab == 0u) { return f32_nan(); }
    return bitcast<f32>(sign);
  }
  if (ab == 0u) { return bitcast<f32>(sign | 0x7f800000u); }
  var ea = i32(aa >> 23u);
  var eb = i32(ab >> 23u);
  var ma = aa & 0x7fffffu;
  var mb = ab & 0x7fffffu;
  if (ea == 0) { let s = countLeadingZeros(ma) - 8u; ma = ma << s; ea = 1 - i32(s); } else { ma = ma | 0x800000u; }
  if (eb == 0) { let s = countLeadingZeros(mb) - 8u; mb = mb << s; eb = 1 - i32(s); } else { mb = mb | 0x800000u; }
  var e = ea - eb + 127;
  if (ma < mb) { ma = ma << 1u; e = e - 1; }
  var q = 0u;
  var r = ma;
  for (var i = 0u; i < 25u; i = i + 1u) {
    q = q << 1u;
    if (r >= mb) { r = r - mb; q = q | 1u; }
    r = r << 1u;
  }
  let sticky = r != 0u;
  if (e >= 1) {
    var m = q >> 1u;
    if ((q & 1u) != 0u && (sticky || (m & 1u) != 0u)) { m = m + 1u; }
    if (m == 0x1000000u) { m = m >> 1u; e = e + 1; }
    if (e >= 255) { return bitcast<f32>(sign | 0x7f800000u); }
    return bitcast<f32>(sign | (u32(e) << 23u) | (m & 0x7fffffu));
  }
  let s = u32(2 - e);
  if (s >= 32u) { return bitcast<f32>(sign); }
  var m = q >> s;
  let rest = q & ((1u << s) - 1u);
  let half = 1u << (s - 1u);
  if (rest > half || (rest == half && (sticky || (m & 1u) != 0u))) { m = m + 1u; }
  return bitcast<f32>(sign | m);
}

/** C's fmod, exact (musl's fmodf in integer arithmetic). */
fn fmod_exact(x: f32, y: f32) -> f32 {
  var uxi = bitcast<u32>(x);
  var uyi = bitcast<u32>(y);
  var ex = i32((uxi >> 23u) & 0xffu);
  var ey = i32((uyi >> 23u) & 0xffu);
  let sx = uxi & 0x80000000u;
  if ((uyi << 1u) == 0u || is_nan(y) || ex == 0xff) { return f32_nan(); }
  if ((uxi << 1u) <= (uyi << 1u)) {
    if ((uxi << 1u) == (uyi << 1u)) { return bitcast<f32>(sx); }
    return x;
  }
  if (ex == 0) {
    var i = uxi << 9u;
    while ((i >> 31u) == 0u) { ex = ex - 1; i = i << 1u; }
    uxi = uxi << u32(-ex + 1);
  } else {
    uxi = (uxi & 0x7fffffu) | 0x800000u;
  }
  if (ey == 0) {
    var i = uyi << 9u;
    while ((i >> 31u) == 0u) { ey = ey - 1; i = i << 1u; }
    uyi = uyi << u32(-ey + 1);
  } else {
    uyi = (uyi & 0x7fffffu) | 0x800000u;
  }
  for (; ex > ey; ex = ex - 1) {
    let i = uxi - uyi;
    if ((i >> 31u) == 0u) {
      if (i == 0u) { return bitcast<f32>(sx); }
      uxi = i;
    }
    uxi = uxi << 1u;
  }
  let i = uxi - uyi;
  if ((i >> 31u) == 0u) {
    if (i == 0u) { return bitcast<f32>(sx); }
    uxi = i;
  }
  while ((uxi >> 23u) == 0u) { uxi = uxi << 1u; ex = ex - 1; }
  if (ex > 0) {
    uxi = (uxi - 0x800000u) | (u32(ex) << 23u);
  } else {
    uxi = uxi >> u32(-ex + 1);
  }
  return bitcast<f32>(uxi | sx);
}

/** Python's float modulo (sign of the divisor). */
fn remainder_f(a: f32, b: f32) -> f32 {
  var m = fmod_exact(a, b);
  if (!is_zero(m) && !is_nan(m) && sign_bit(m) != (sign_bit(b) && !is_zero(b))) { m = m + b; }
  return m;
}

fn remainder_i(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  if (b == -1) { return 0; }
  var m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) { m = m + b; }
  return m;
}

fn pow_i(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, ((-b) & 1) != 0); }
    return 0;
  }
  var result = 1;
  var base = a;
  var e = u32(b);
  while (e > 0u) {
    if ((e & 1u) != 0u) { result = result * base; }
    base = base * base;
    e = e >> 1u;
  }
  return result;
}

/** x · 2^k for any int k, with one rounding at most (two steps keep subnormal results). */
fn ldexp_f(x: f32, k: i32) -> f32 {
  var kk = clamp(k, -300, 300);
  var r = x;
  if (kk > 127) { r = r * bitcast<f32>(0x7f000000u); kk = kk - 127; if (kk > 127) { r = r * bitcast<f32>(0x7f000000u); kk = kk - 127; } kk = min(kk, 127); }
  if (kk < -126) { r = r * bitcast<f32>(0x00800000u); kk = kk + 126; if (kk < -126) { r = r * bitcast<f32>(0x00800000u); kk = kk + 126; } kk = max(kk, -126); }
  return r * bitcast<f32>(u32(kk + 127) << 23u);
}

// ---- exp, log and friends ----

fn exp_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x > 88.72284) { return f32_inf(false); }
  if (x < -103.972084) { return 0.0; }
  let k = round(x * 1.442695041);
  let r = (x - k * 0.693145751953125) - k * 1.428606765330187e-6;
  // e^r on |r| <= 0.35: Taylor to r^8 (relative error < 3e-9)
  let p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666666666 + r * (0.041666666666 + r * (0.0083333333333 + r * (0.0013888888889 + r * (1.9841269841e-4 + r * 2.4801587302e-5)))))));
  return ldexp_f(p, i32(k));
}

fn expm1_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let ax = abs(x);
  if (ax < 0.5) {
    // x·(1 + x/2·(1 + x/3·(1 + …))) to x^10
    var t = 1.0 + x / 11.0;
    t = 1.0 + x / 10.0 * t;
    t = 1.0 + x / 9.0 * t;
    t = 1.0 + x / 8.0 * t;
    t = 1.0 + x / 7.0 * t;
    t = 1.0 + x / 6.0 * t;
    t = 1.0 + x / 5.0 * t;
    t = 1.0 + x / 4.0 * t;
    t = 1.0 + x / 3.0 * t;
    t = 1.0 + x / 2.0 * t;
    return x * t;
  }
  if (x < -20.0) { return -1.0; }
  return exp_f(x) - 1.0;
}

const LG1: f32 = 0.66666662693;
const LG2: f32 = 0.40000972152;
const LG3: f32 = 0.28498786688;
const LG4: f32 = 0.24279078841;
const LN2_HI: f32 = 6.9313812256e-01;
const LN2_LO: f32 = 9.0580006145e-06;

/** musl's logf (error < 1 ulp). */
fn log_f(xin: f32) -> f32 {
  var x = xin;
  var ix = bitcast<u32>(x);
  var k = 0;
  if (ix < 0x00800000u || (ix >> 31u) != 0u) {
    if ((ix << 1u) == 0u) { return f32_inf(true); }
    if ((ix >> 31u) != 0u) { return f32_nan(); }
    k = k - 25;
    x = f32(ix & 0x7fffffu) * 4.70197740328915e-38;   // x·2^25 = m·2^-124, exact even where subnormals flush
    ix = bitcast<u32>(x);
  } else if (ix >= 0x7f800000u) {
    return x;
  } else if (ix == 0x3f800000u) {
    return 0.0;
  }
  ix = ix + (0x3f800000u - 0x3f3504f3u);
  k = k + i32(ix >> 23u) - 0x7f;
  ix = (ix & 0x007fffffu) + 0x3f3504f3u;
  x = bitcast<f32>(ix);
  let f = x - 1.0;
  let s = f / (2.0 + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (LG2 + w * LG4);
  let t2 = z * (LG1 + w * LG3);
  let R = t2 + t1;
  let hfsq = 0.5 * f * f;
  let dk = f32(k);
  return s * (hfsq + R) + dk * LN2_LO - hfsq + f + dk * LN2_HI;
}

/** musl's log1pf. */
fn log1p_f(x: f32) -> f32 {
  let ix = bitcast<u32>(x);
  var k = 1;
  var c = 0.0;
  var f = 0.0;
  if (ix < 0x3ed413d0u || (ix >> 31u) != 0u) {
    if (ix >= 0xbf800000u) {
      if (x == -1.0) { return f32_inf(true); }
      return f32_nan();
    }
    if ((ix << 1u) < (0x33800000u << 1u)) { return x; }
    if (ix <= 0xbe95f619u) { k = 0; c = 0.0; f = x; }
  } else if (ix >= 0x7f800000u) {
    return x;
  }
  if (k != 0) {
    let uf = 1.0 + x;
    var iu = bitcast<u32>(uf);
    iu = iu + (0x3f800000u - 0x3f3504f3u);
    k = i32(iu >> 23u) - 0x7f;
    if (k < 25) {
      c = select(x - (uf - 1.0), 1.0 - (uf - x), k >= 2);
      c = c / uf;
    } else {
      c = 0.0;
    }
    iu = (iu & 0x007fffffu) + 0x3f3504f3u;
    f = bitcast<f32>(iu) - 1.0;
  }
  let s = f / (2.0 + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (LG2 + w * LG4);
  let t2 = z * (LG1 + w * LG3);
  let R = t2 + t1;
  let hfsq = 0.5 * f * f;
  let dk = f32(k);
  return s * (hfsq + R) + (dk * LN2_LO + c) - hfsq + f + dk * LN2_HI;
}

fn tanh_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let ax = abs(x);
  if (ax > 9.5) { return copy_sign(1.0, x); }
  let t = expm1_f(2.0 * ax);
  return copy_sign(t / (t + 2.0), x);
}

fn sigmoid_f(x: f32) -> f32 { return 1.0 / (1.0 + exp_f(-x)); }

/** erf: Taylor series near 0, Numerical Recipes' erfc (relative error < 1.2e-7) elsewhere. */
fn erf_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let ax = abs(x);
  if (ax < 0.5) {
    let z = x * x;
    let p = 1.0 + z * (-0.333333333333 + z * (0.1 + z * (-0.0238095238095 + z * (0.00462962962963 + z * (-0.000757575757576 + z * (0.000106837606838 + z * -1.30718954248e-5))))));
    return 1.1283791670955126 * x * p;
  }
  if (ax >= 6.0) { return copy_sign(1.0, x); }
  let t = 1.0 / (1.0 + 0.5 * ax);
  let e = t * exp_f(-ax * ax - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return copy_sign(1.0 - e, x);
}

// ---- trigonometry: Payne–Hanek reduction by x·2/π in integer arithmetic, Cephes kernels ----

const TWO_OVER_PI = array<u32, 12>(0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu);

fn tpi_word(j: u32, r: u32) -> u32 {
  let a = TWO_OVER_PI[min(j, 11u)];
  let b = TWO_OVER_PI[min(j + 1u, 11u)];
  if (r == 0u) { return a; }
  return (a << r) | (b >> (32u - r));
}

/** For finite |x| > π/4: (quadrant n mod 4, y) with x = n·π/2 + y, |y| <= π/4. */
fn reduce_pio2(ax: f32) -> vec2<f32> {
  let bits = bitcast<u32>(ax);
  let ex = i32(bits >> 23u);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let E = ex - 150;                 // ax = m · 2^E
  let p = u32(E + 30);              // window starts after bit p of the zero-padded 2/π
  let j = p >> 5u;
  let r = p & 31u;
  let w0 = tpi_word(j, r);
  let w1 = tpi_word(j + 1u, r);
  let w2 = tpi_word(j + 2u, r);
  // Low 96 bits of m · (w0 w1 w2); ax·2/π = product · 2^-94 (mod 4).
  let p2 = mul_wide(m, w2);
  let p1 = mul_wide(m, w1);
  let p0 = mul_wide(m, w0);
  let P0 = p2.x;
  let s1 = p2.y + p1.x;
  let c1 = select(0u, 1u, s1 < p2.y);
  let P1 = s1;
  let P2 = p1.y + p0.x + c1;
  var n = (P2 >> 30u) & 3u;
  var hi = (P2 << 2u) | (P1 >> 30u);
  var lo = (P1 << 2u) | (P0 >> 30u);
  var neg = false;
  if ((hi >> 31u) != 0u) {
    // Fraction >= 1/2: round the quadrant up and take 1 - fraction.
    n = (n + 1u) & 3u;
    neg = true;
    lo = ~lo + 1u;
    hi = ~hi + select(0u, 1u, lo == 0u);
  }
  let frac = f32(hi) * 2.3283064365386963e-10 + f32(lo) * 5.421010862427522e-20;
  var y = frac * 1.5707963267948966;
  if (neg) { y = -y; }
  return vec2<f32>(f32(n), y);
}

fn sin_kernel(y: f32) -> f32 {
  let z = y * y;
  return y + y * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
}

fn cos_kernel(y: f32) -> f32 {
  let z = y * y;
  return 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
}

fn tan_kernel(y: f32) -> f32 {
  let z = y * y;
  if (abs(y) < 1e-4) { return y; }
  return (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z + 5.34112807005e-2) * z + 1.33387994085e-1) * z + 3.33331568548e-1) * z * y + y;
}

fn trig_reduce(x: f32) -> vec2<f32> {
  let ax = abs(x);
  if (ax <= 0.785398163) { return vec2<f32>(0.0, ax); }
  return reduce_pio2(ax);
}

fn sin_f(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f32_nan(); }
  let ny = trig_reduce(x);
  let n = u32(ny.x);
  var r: f32;
  switch (n) {
    case 0u: { r = sin_kernel(ny.y); }
    case 1u: { r = cos_kernel(ny.y); }
    case 2u: { r = -sin_kernel(ny.y); }
    default: { r = -cos_kernel(ny.y); }
  }
  if (sign_bit(x)) { r = -r; }
  return r;
}

fn cos_f(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f32_nan(); }
  let ny = trig_reduce(x);
  let n = u32(ny.x);
  switch (n) {
    case 0u: { return cos_kernel(ny.y); }
    case 1u: { return -sin_kernel(ny.y); }
    case 2u: { return -cos_kernel(ny.y); }
    default: { return sin_kernel(ny.y); }
  }
}

fn tan_f(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f32_nan(); }
  let ny = trig_reduce(x);
  let n = u32(ny.x);
  var r = tan_kernel(ny.y);
  if ((n & 1u) != 0u) { r = -1.0 / r; }
  if (sign_bit(x)) { r = -r; }
  return r;
}

/** Cephes atanf. */
fn atan_f(xin: f32) -> f32 {
  if (is_nan(xin)) { return xin; }
  var x = abs(xin);
  var y = 0.0;
  if (x > 2.414213562373095) { y = 1.5707963267948966; x = -1.0 / x; }
  else if (x > 0.4142135623730950) { y = 0.7853981633974483; x = (x - 1.0) / (x + 1.0); }
  let z = x * x;
  y = y + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x);
  return copy_sign(y, xin);
}

fn atan2_f(y: f32, x: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return f32_nan(); }
  let PI = 3.141592653589793;
  if (is_zero(y)) {
    if (!sign_bit(x)) { return y; }
    return copy_sign(PI, y);
  }
  if (is_zero(x)) { return copy_sign(1.5707963267948966, y); }
  if (is_inf(y)) {
    if (is_inf(x)) { return copy_sign(select(0.7853981633974483, 2.356194490192345, x < 0.0), y); }
    return copy_sign(1.5707963267948966, y);
  }
  if (is_inf(x)) {
    if (x > 0.0) { return copy_sign(0.0, y); }
    return copy_sign(PI, y);
  }
  let t = atan_f(f_abs(div_rn(y, x)));
  var r = t;
  if (sign_bit(x)) { r = PI - t; }
  return copy_sign(r, y);
}

/** log2 as an unevaluated sum hi + lo (for pow): log(x)·log2(e) with the product split. */
fn pow_f(x: f32, y: f32) -> f32 {
  if (x == 1.0 || is_zero(y)) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return f32_nan(); }
  let ay = abs(y);
  let y_int = !is_subnormal(y) && (ay >= 16777216.0 || floor(ay) == ay);
  let y_odd = ay < 16777216.0 && y_int && (u32(ay) & 1u) != 0u;
  let ax = abs(x);
  if (is_inf(y)) {
    if (ax == 1.0) { return 1.0; }
    if ((ax < 1.0) == sign_bit(y)) { return f32_inf(false); }
    return 0.0;
  }
  if (is_zero(x)) {
    if (sign_bit(y)) { return select(f32_inf(false), copy_sign(f32_inf(false), x), y_odd); }
    return select(0.0, x, y_odd);
  }
  if (is_inf(x)) {
    if (!sign_bit(x)) { return select(f32_inf(false), 0.0, sign_bit(y)); }
    if (sign_bit(y)) { return bitcast<f32>(select(0u, 0x80000000u, y_odd)); }
    return select(f32_inf(false), f32_inf(true), y_odd);
  }
  if (sign_bit(x) && !y_int) { return f32_nan(); }
  // The common exponents, correctly rounded (and exact near the overflow threshold).
  if (y == 1.0) { return x; }
  if (y == 2.0) { return x * x; }
  if (y == 0.5) { return sqrt(x); }
  if (y == -1.0) { return div_rn(1.0, x); }
  // |x|^y = e^(y·log|x|), with log|x| split so the product keeps ~10 more bits.
  let l = log_f(ax);
  let lh = bitcast<f32>(bitcast<u32>(l) & 0xfffff000u);
  let ll = l - lh;
  let yh = bitcast<f32>(bitcast<u32>(y) & 0xfffff000u);
  let yl = y - yh;
  let t_hi = yh * lh;
  let t_lo = yh * ll + yl * l;
  var r: f32;
  if (t_hi + t_lo > 88.8) { r = f32_inf(false); }
  else if (t_hi + t_lo < -104.0) { r = 0.0; }
  else {
    let k = round((t_hi + t_lo) * 1.442695041);
    let rr = ((t_hi - k * 0.693145751953125) + t_lo) - k * 1.428606765330187e-6;
    let p = 1.0 + rr * (1.0 + rr * (0.5 + rr * (0.16666666666 + rr * (0.041666666666 + rr * (0.0083333333333 + rr * (0.0013888888889 + rr * (1.9841269841e-4 + rr * 2.4801587302e-5)))))));
    r = ldexp_f(p, i32(k));
  }
  if (sign_bit(x) && y_odd) { r = -r; }
  return r;
}

fn sign_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (is_zero(x)) { return 0.0; }
  return select(1.0, -1.0, sign_bit(x));
}

fn relu_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  return select(x, 0.0, sign_bit(x) || is_zero(x));
}

fn max_f(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return f32_nan(); }
  return select(b, a, f_lt(b, a));
}

fn min_f(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return f32_nan(); }
  return select(b, a, f_lt(a, b));
}

// Rounding to integers: subnormal inputs decided on the bits, and a zero result takes x's sign
// (ceil(-0.5) = -0), which some drivers drop.
fn signed_zero(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x80000000u); }

fn floor_f(x: f32) -> f32 {
  if (is_subnormal(x)) { return select(signed_zero(x), -1.0, sign_bit(x)); }
  let r = floor(x);
  return select(r, signed_zero(x), is_zero(r));
}

fn ceil_f(x: f32) -> f32 {
  if (is_subnormal(x)) { return select(1.0, signed_zero(x), sign_bit(x)); }
  let r = ceil(x);
  return select(r, signed_zero(x), is_zero(r));
}

fn trunc_f(x: f32) -> f32 {
  if (is_subnormal(x)) { return signed_zero(x); }
  let r = trunc(x);
  return select(r, signed_zero(x), is_zero(r));
}

fn round_f(x: f32) -> f32 {
  // Ties to even, keeping the sign of zero (round() in WGSL rounds half to even).
  if (is_nan(x) || is_inf(x)) { return x; }
  if (is_subnormal(x)) { return signed_zero(x); }
  return copy_sign(round(x), x);
}

fn sqrt_f(x: f32) -> f32 {
  if (is_nan(x) || is_zero(x)) { return x; }
  if (sign_bit(x)) { return f32_nan(); }
  if (is_subnormal(x)) {
    // x = m·2^-149: sqrt(2m)·2^-75, exact scalings around one correctly rounded sqrt of a normal number.
    return sqrt(f32(bitcast<u32>(x)) * 2.0) * 2.6469779601696886e-23;
  }
  return sqrt(x);
}
`;
