// Kernel logic on the CPU: kernels/kernels.cu compiled by g++ against emu/emu.h, each entry point
// launched on the fiber emulation and checked against a plain host reference (double precision,
// rounded once to the output dtype) with the tolerance stated at each check. Catches indexing,
// tiling, reduction-tree and rounding bugs; not warp-level behaviour or races.
#include "../kernels/kernels.cu"
#include "../src/layouts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

static int passed = 0, failed = 0;

static void check(bool ok, const std::string& what) {
  if (ok) passed++;
  else { failed++; fprintf(stderr, "FAIL %s\n", what.c_str()); }
}

/** |a − e| ≤ atol + rtol·|e|, with NaN matching NaN and ±Inf matching exactly. */
static bool close(double a, double e, double atol, double rtol) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

static double toF(float v) { return v; }
static double toF(f16 v) { return f16ToFloat(v.bits); }
static double toF(bf16 v) { return bf16ToFloat(v.bits); }
static double toF(int32_t v) { return v; }
static double toF(uint8_t v) { return v; }

template <typename V>
static void checkAll(const std::vector<V>& got, const std::vector<double>& want, double atol, double rtol, const std::string& what) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); i++)
    if (!close(toF(got[i]), want[i], atol, rtol)) { if (!bad) first = i; bad++; }
  if (bad) fprintf(stderr, "  %s: %zu/%zu mismatches, first at %zu: got %.9g want %.9g\n", what.c_str(), bad, want.size(), first, toF(got[first]), want[first]);
  check(bad == 0, what);
}

// ---- references -----------------------------------------------------------------------------

/** Every finite non-negative half value, decoded by ldexp (independent of the kernels' bit tricks). */
static std::vector<double> halfValues() {
  std::vector<double> v;
  for (int e = 0; e < 31; e++)
    for (int m = 0; m < 1024; m++) v.push_back(e == 0 ? std::ldexp((double)m, -24) : std::ldexp(1024.0 + m, e - 25));
  return v;
}

/** The nearest half to x (ties to the even bit pattern), by search in the sorted list of values. */
static double refHalf(double x) {
  static const std::vector<double> vals = halfValues();
  if (std::isnan(x)) return NAN;
  double ax = std::fabs(x);
  double r;
  if (ax >= 65520.0) r = INFINITY;
  else {
    size_t hi = std::lower_bound(vals.begin(), vals.end(), ax) - vals.begin();
    if (hi == vals.size()) r = vals.back();
    else if (vals[hi] == ax || hi == 0) r = vals[hi];
    else {
      double dl = ax - vals[hi - 1], dh = vals[hi] - ax;
      r = dl < dh ? vals[hi - 1] : dh < dl ? vals[hi] : ((hi - 1) % 2 == 0 ? vals[hi - 1] : vals[hi]);
    }
  }
  return x < 0 || (x == 0 && std::signbit(x)) ? -r : r;
}

/** The nearest bfloat16 to x: 8 significant bits, round half to even in double arithmetic. */
static double refBf16(double x) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e = std::ilogb(x);
  if (e < -126) e = -126;  // subnormal range: fixed quantum 2^-133
  double q = std::ldexp(1.0, e - 7);
  double r = std::nearbyint(x / q) * q;  // x/q is exact (power-of-two scaling); nearbyint rounds half to even
  if (std::fabs(r) > 3.3895313892515355e38) r = x > 0 ? INFINITY : -INFINITY;
  return r;
}

template <typename T> T fromD(double v);
template <> float fromD<float>(double v) { return (float)v; }
template <> f16 fromD<f16>(double v) { return f16{floatToF16((float)v)}; }
template <> bf16 fromD<bf16>(double v) { return bf16{floatToBf16((float)v)}; }
template <> int32_t fromD<int32_t>(double v) { return (int32_t)v; }
template <typename T> double roundRef(double v);
template <> double roundRef<float>(double v) { return (double)(float)v; }
template <> double roundRef<f16>(double v) { return refHalf((double)(float)v); }
template <> double roundRef<bf16>(double v) { return refBf16((double)(float)v); }

/** The dtype code of a floating storage type. */
template <typename T> constexpr int dtypeCode() { return std::is_same<T, float>::value ? ck::F32 : std::is_same<T, f16>::value ? ck::F16 : ck::BF16; }

template <typename T>
static std::vector<double> asDouble(const std::vector<T>& v) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); i++) d[i] = toF(v[i]);
  return d;
}

template <typename T>
static rt::Ref refOf(const std::vector<T>& buf, int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset = 0) {
  rt::Ref r;
  r.ptr = (unsigned long long)(uintptr_t)buf.data();
  r.dtype = dtype;
  r.ndim = (int)shape.size();
  for (int d = 0; d < r.ndim; d++) { r.shape[d] = shape[d]; r.strides[d] = strides[d]; }
  r.offset = offset;
  return r;
}
template <typename T> static const T* at(const rt::Ref& r) { return reinterpret_cast<const T*>((uintptr_t)r.ptr); }
template <typename T> static T* atMut(const rt::Ref& r) { return reinterpret_cast<T*>((uintptr_t)r.ptr); }

static Layout contiguousLayout(const std::vector<int64_t>& shape, int operands) {
  Layout L{};
  L.ndim = (int)shape.size();
  L.numel = 1;
  for (int d = 0; d < L.ndim; d++) { L.shape[d] = shape[d]; L.numel *= shape[d]; }
  for (int k = 0; k < operands; k++) {
    int64_t s = 1;
    for (int d = L.ndim - 1; d >= 0; d--) { L.stride[k][d] = s; s *= shape[d]; }
  }
  return L;
}

static std::mt19937 rng(1234);
static std::vector<float> randn(size_t n, float scale = 1.f) {
  std::normal_distribution<float> nd(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// ---- tests ----------------------------------------------------------------------------------

static void testConversions() {
  // Every half decodes to the ldexp value (exact).
  size_t bad = 0;
  std::vector<double> vals = halfValues();
  for (uint32_t h = 0; h < 0x7c00; h++) if ((double)f16ToFloat((uint16_t)h) != vals[h]) bad++;
  check(bad == 0, "f16ToFloat decodes all 31744 finite positive halves exactly");
  check(std::isinf(f16ToFloat(0x7c00)) && std::isnan(f16ToFloat(0x7e00)) && f16ToFloat(0x8001) == -(float)vals[1], "f16ToFloat: Inf, NaN, negative subnormal");

  // float → half / bfloat16 via the cast kernels on hand-picked edge cases and random bit patterns.
  std::vector<float> src = {0.f, -0.f, 1.f, 65504.f, 65519.99f, 65520.f, 1e10f, -1e10f, INFINITY, -INFINITY, NAN,
                            5.9604645e-8f, 2.9802322e-8f, 2.98023259e-8f, 8.940697e-8f, 6.1035156e-5f, 6.1032e-5f,
                            1.00048828125f /* tie 1 + 2^-11 → 1 */, 1.00146484375f /* tie → 1.001953125 */,
                            1.00390625f /* bf16 tie 1 + 2^-8 → 1 */, 1.01171875f /* bf16 tie → 1.015625 */,
                            3.3895314e38f, 3.4028235e38f, 1e-40f, -1e-45f};
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; i++) src.push_back(bitsFloat(bits(rng)));
  const int64_t n = (int64_t)src.size();
  std::vector<f16> h(n);
  std::vector<bf16> b(n);
  Layout L = contiguousLayout({n}, 2);
  emu::launch(dim3(64), dim3(128), ck_cast_f32_f16, L, src.data(), h.data());
  emu::launch(dim3(64), dim3(128), ck_cast_f32_bf16, L, src.data(), b.data());
  std::vector<double> wantH(n), wantB(n);
  for (int64_t i = 0; i < n; i++) { wantH[i] = refHalf(src[i]); wantB[i] = refBf16(src[i]); }
  checkAll(h, wantH, 0, 0, "cast f32→f16 rounds to nearest even (exact, 200k random bit patterns + edges)");
  checkAll(b, wantB, 0, 0, "cast f32→bf16 rounds to nearest even (exact, 200k random bit patterns + edges)");
  bool signs = true;
  for (int64_t i = 0; i < n; i++)
    if (!std::isnan(src[i]) && (std::signbit(toF(h[i])) != std::signbit(src[i]) || std::signbit(toF(b[i])) != std::signbit(src[i]))) signs = false;
  check(signs, "casts to half types keep the sign (−0 included)");

  // int32 → bfloat16 rounds once; int32 → float16 and back; float → int truncates.
  std::vector<int32_t> ints = {0, 1, -1, 255, 256, 257, 16777217, 33554435, 2147483647, -2147483647 - 1, 0x01018000, 0x01028000};
  std::uniform_int_distribution<int32_t> idist(-2147483647 - 1, 2147483647);
  for (int i = 0; i < 10000; i++) ints.push_back(idist(rng));
  std::vector<bf16> ib(ints.size());
  Layout Li = contiguousLayout({(int64_t)ints.size()}, 2);
  emu::launch(dim3(8), dim3(64), ck_cast_i32_bf16, Li, ints.data(), ib.data());
  std::vector<double> wantIb(ints.size());
  for (size_t i = 0; i < ints.size(); i++) wantIb[i] = refBf16((double)ints[i]);
  checkAll(ib, wantIb, 0, 0, "cast i32→bf16 rounds once (exact vs double reference)");

  std::vector<float> fl = {2.7f, -2.7f, 0.5f, -0.99f, 1e9f, NAN};
  std::vector<int32_t> fi(fl.size());
  std::vector<uint8_t> fb(fl.size());
  Layout Lf = contiguousLayout({(int64_t)fl.size()}, 2);
  emu::launch(dim3(1), dim3(32), ck_cast_f32_i32, Lf, fl.data(), fi.data());
  emu::launch(dim3(1), dim3(32), ck_cast_f32_b8, Lf, fl.data(), fb.data());
  check(fi[0] == 2 && fi[1] == -2 && fi[2] == 0 && fi[3] == 0 && fi[4] == 1000000000, "cast f32→i32 truncates toward zero");
  check(fb[0] == 1 && fb[2] == 1 && fb[5] == 1 && fl[3] != 0 && fb[3] == 1, "cast f32→bool is x != 0 (NaN is true)");
}

/** The entry points of one storage type, so the tests are written once per family. */
template <typename T> struct K;
#define CK_TEST_K(sfx, T)                                           \
  template <> struct K<T> {                                         \
    static constexpr auto unary = ck_unary_##sfx;                   \
    static constexpr auto binary = ck_binary_##sfx;                 \
    static constexpr auto compare = ck_compare_##sfx;               \
    static constexpr auto reduce = ck_reduce_##sfx;                 \
    static constexpr auto argreduce = ck_argreduce_##sfx;           \
  };
CK_FOR_TYPES(CK_TEST_K)

/** out[i,j] = op(a[i,j], b[j]) with b broadcast over rows and a read transposed from a [cols, rows] buffer. */
template <typename T>
static void testBinaryBroadcast(int op, const char* name, const std::function<double(double, double)>& ref, double atol, double rtol) {
  const int64_t R = 37, C = 53;
  std::vector<float> af = randn(R * C, 2.f), bf = randn(C, 2.f);
  if (op == B_POW) for (auto& v : af) v = std::fabs(v) + 0.1f;
  std::vector<T> a(R * C), b(C), out(R * C);
  for (size_t i = 0; i < a.size(); i++) a[i] = fromD<T>(af[i]);
  for (size_t i = 0; i < b.size(); i++) b[i] = fromD<T>(bf[i]);
  Layout L = contiguousLayout({R, C}, 3);
  L.stride[1][0] = 1; L.stride[1][1] = R;  // a stored column-major: element (i, j) at j·R + i
  L.stride[2][0] = 0; L.stride[2][1] = 1;  // b broadcast along rows
  emu::launch(dim3(5), dim3(64), K<T>::binary, L, op, (const T*)a.data(), (const T*)b.data(), out.data());
  std::vector<double> want(R * C);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) want[i * C + j] = roundRef<T>(ref(toF(a[j * R + i]), toF(b[j])));
  checkAll(out, want, atol, rtol, std::string("binary ") + name + " (transposed a, broadcast b)");
}

template <typename T>
static void testUnary(int op, const char* name, const std::function<double(double)>& ref, float lo, float hi, double atol, double rtol) {
  const int64_t n = 3001;
  std::uniform_real_distribution<float> ud(lo, hi);
  std::vector<T> x(n), out(n);
  for (auto& v : x) v = fromD<T>(ud(rng));
  // Non-contiguous input: every other element of a 2n buffer, read backwards through an offset.
  std::vector<T> wide(2 * n);
  for (int64_t i = 0; i < n; i++) wide[2 * (n - 1 - i)] = x[i];
  Layout L = contiguousLayout({n}, 2);
  L.stride[1][0] = -2; L.offset[1] = 2 * (n - 1);
  emu::launch(dim3(7), dim3(96), K<T>::unary, L, op, (const T*)wide.data(), out.data());
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; i++) want[i] = roundRef<T>(ref(toF(x[i])));
  checkAll(out, want, atol, rtol, std::string("unary ") + name + " (negative stride)");
}

static void testElementwise() {
  // Exact ops are bit-exact: add/mul/sub/div of floats are single IEEE operations in float.
  testBinaryBroadcast<float>(B_ADD, "add f32", [](double a, double b) { return (float)a + (float)b; }, 0, 0);
  testBinaryBroadcast<float>(B_DIV, "div f32", [](double a, double b) { return (float)a / (float)b; }, 0, 0);
  testBinaryBroadcast<f16>(B_MUL, "mul f16", [](double a, double b) { return (float)a * (float)b; }, 0, 0);
  testBinaryBroadcast<bf16>(B_SUB, "sub bf16", [](double a, double b) { return (float)a - (float)b; }, 0, 0);
  testBinaryBroadcast<float>(B_REMAINDER, "remainder f32 (divisor's sign)", [](double a, double b) { double m = std::fmod(a, b); return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }, 1e-6, 1e-6);
  // libm transcendental functions: f32 within 2 ulp of the double reference.
  testBinaryBroadcast<float>(B_POW, "pow f32", [](double a, double b) { return std::pow(a, b); }, 0, 2.5e-7);
  testBinaryBroadcast<float>(B_ATAN2, "atan2 f32", [](double a, double b) { return std::atan2(a, b); }, 1e-7, 2.5e-7);
  testUnary<float>(U_EXP, "exp f32", [](double x) { return std::exp(x); }, -20, 20, 0, 2.5e-7);
  testUnary<float>(U_TANH, "tanh f32", [](double x) { return std::tanh(x); }, -5, 5, 1e-7, 2.5e-7);
  testUnary<float>(U_ERF, "erf f32", [](double x) { return std::erf(x); }, -4, 4, 1e-7, 2.5e-7);
  testUnary<float>(U_ROUND, "round f32 (half to even)", [](double x) { return std::nearbyint(x); }, -10, 10, 0, 0);
  // Half types: computed in float and rounded once, so within rounding of the double reference (1 half ulp ≈ 1e-3 rel).
  testUnary<f16>(U_SIGMOID, "sigmoid f16", [](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8, 1e-4, 1e-3);
  testUnary<bf16>(U_LOG, "log bf16", [](double x) { return std::log(x); }, 0.01f, 100, 0, 8e-3);

  // NaN semantics: maximum propagates NaN, relu keeps it, sign of NaN is NaN, int ops wrap.
  std::vector<float> a = {1, NAN, -3, 0}, b = {NAN, 2, -4, -0.f}, o(4);
  Layout L = contiguousLayout({4}, 3);
  emu::launch(dim3(1), dim3(32), ck_binary_f32, L, (int)B_MAXIMUM, (const float*)a.data(), (const float*)b.data(), o.data());
  check(std::isnan(o[0]) && std::isnan(o[1]) && o[2] == -3, "maximum propagates NaN");
  emu::launch(dim3(1), dim3(32), ck_unary_f32, L, (int)U_RELU, (const float*)a.data(), o.data());
  check(o[0] == 1 && std::isnan(o[1]) && o[2] == 0, "relu keeps NaN");
  std::vector<int32_t> ia = {-2147483647 - 1, 7, -7, 3}, ib = {-1, -3, 3, 0}, io(4);
  emu::launch(dim3(1), dim3(32), ck_binary_i32, L, (int)B_REMAINDER, (const int32_t*)ia.data(), (const int32_t*)ib.data(), io.data());
  check(io[0] == 0 && io[1] == -2 && io[2] == 2, "int remainder takes the divisor's sign");
  emu::launch(dim3(1), dim3(32), ck_unary_i32, L, (int)U_NEG, (const int32_t*)ia.data(), io.data());
  check(io[0] == -2147483647 - 1 && io[1] == -7, "int neg wraps at -2^31");
  std::vector<uint8_t> cmp(4);
  emu::launch(dim3(1), dim3(32), ck_compare_f32, L, (int)C_NE, (const float*)a.data(), (const float*)a.data(), cmp.data());
  check(cmp[0] == 0 && cmp[1] == 1 && cmp[3] == 0, "NaN != NaN, x == x otherwise");
}

/** Sum/max over axes {0, 2} of x [A, B, C] read through a permuted layout; out [B] strided by 3. */
template <typename T>
static void testReduce(int op, const char* name, double atol, double rtol) {
  const int64_t A = 5, B = 19, C = 301;
  std::vector<float> xf = randn(A * B * C);
  std::vector<T> x(A * B * C);
  for (size_t i = 0; i < x.size(); i++) x[i] = fromD<T>(xf[i]);
  // Storage order [C, A, B]: element (a, b, c) lives at c·A·B + a·B + b.
  ReduceLayout L{};
  L.outer = B; L.inner = A * C;
  L.outerDims = 1; L.outerShape[0] = B; L.outerStrideX[0] = 1; L.outerStrideOut[0] = 3;
  L.innerDims = 2; L.innerShape[0] = A; L.innerStrideX[0] = B; L.innerShape[1] = C; L.innerStrideX[1] = A * B;
  std::vector<T> out(3 * B);
  emu::launch(dim3(4), dim3(REDUCE_THREADS), K<T>::reduce, L, op, (const T*)x.data(), out.data());
  check(emu::barriersPassed > 0, std::string("reduce ") + name + ": the tree reduction passed real barriers");
  std::vector<T> got(B);
  std::vector<double> want(B);
  for (int64_t bi = 0; bi < B; bi++) {
    double acc = op == R_SUM ? 0 : -INFINITY;
    for (int64_t a = 0; a < A; a++)
      for (int64_t c = 0; c < C; c++) {
        double v = toF(x[c * A * B + a * B + bi]);
        acc = op == R_SUM ? acc + v : std::max(acc, v);
      }
    want[bi] = roundRef<T>(acc);
    got[bi] = out[3 * bi];
  }
  checkAll(got, want, atol, rtol, std::string("reduce ") + name + " over axes {0,2} of a permuted [5,19,301]");
}

static void testReduceEdges() {
  // max propagates NaN, argmax takes the first NaN / first of ties, empty sum is 0, int sums wrap.
  std::vector<float> x = {1, 5, 5, NAN, 2, NAN, 7, 7};
  ReduceLayout L{};
  L.outer = 1; L.inner = 8; L.outerDims = 0; L.innerDims = 1; L.innerShape[0] = 8; L.innerStrideX[0] = 1;
  float out = 0;
  emu::launch(dim3(1), dim3(4), ck_reduce_f32, L, (int)R_MAX, (const float*)x.data(), &out);
  check(std::isnan(out), "reduce max propagates NaN");
  int32_t idx = -1;
  emu::launch(dim3(1), dim3(4), ck_argreduce_f32, L, (int)A_ARGMAX, (const float*)x.data(), &idx);
  check(idx == 3, "argmax: the first NaN wins");
  L.inner = 3; L.innerShape[0] = 3;
  emu::launch(dim3(1), dim3(2), ck_argreduce_f32, L, (int)A_ARGMAX, (const float*)x.data(), &idx);
  check(idx == 1, "argmax: ties go to the lower index");
  std::vector<float> y = {3, -1, 4, -1, 5};
  L.inner = 5; L.innerShape[0] = 5;
  emu::launch(dim3(1), dim3(4), ck_argreduce_f32, L, (int)A_ARGMIN, (const float*)y.data(), &idx);
  check(idx == 1, "argmin: first of equal minima");
  L.inner = 0; L.innerShape[0] = 0;
  out = 9;
  emu::launch(dim3(1), dim3(32), ck_reduce_f32, L, (int)R_SUM, (const float*)x.data(), &out);
  check(out == 0, "empty sum is 0");
  std::vector<int32_t> big = {2147483647, 1, 5};
  int32_t s = 0;
  L.inner = 3; L.innerShape[0] = 3;
  emu::launch(dim3(1), dim3(2), ck_reduce_i32, L, (int)R_SUM, (const int32_t*)big.data(), &s);
  check(s == (int32_t)(-2147483647 - 1 + 5), "int32 sum wraps");
}

/** The float-only families. */
template <typename T> struct KF32;
#define CK_TEST_KF(sfx, T)                                          \
  template <> struct KF32<T> {                                      \
    static constexpr auto softmax = ck_softmax_##sfx;               \
    static constexpr auto crossentropy = ck_crossentropy_##sfx;     \
    static constexpr auto unscale = ck_unscale_##sfx;               \
    static constexpr auto adam = ck_adam_##sfx;                     \
    static constexpr auto matmul = ck_matmul_##sfx;                 \
    static constexpr auto addcmul = ck_addcmul_##sfx;               \
    static constexpr auto attention64 = ck_attention_##sfx##_64;    \
    static constexpr auto attention128 = ck_attention_##sfx##_128;  \
  };
CK_FOR_FLOATS(CK_TEST_KF)
template <typename T> struct Wmma;
template <> struct Wmma<f16> { static constexpr auto matmul = ck_matmul_wmma_f16; };
template <> struct Wmma<bf16> { static constexpr auto matmul = ck_matmul_wmma_bf16; };

template <typename T>
static void testSoftmax(bool logMode, double atol, double rtol, const char* name) {
  // x [R, D] stored [D, R] (softmax dim strided by R); out contiguous [R, D].
  const int64_t R = 11, D = 517;
  std::vector<float> xf = randn(R * D, 3.f);
  std::vector<T> x(R * D), out(R * D);
  for (size_t i = 0; i < x.size(); i++) x[i] = fromD<T>(xf[i]);
  ReduceLayout L{};
  L.outer = R; L.inner = D;
  L.outerDims = 1; L.outerShape[0] = R; L.outerStrideX[0] = 1; L.outerStrideOut[0] = D;
  L.innerDims = 1; L.innerShape[0] = D; L.innerStrideX[0] = R;
  emu::launch(dim3(3), dim3(128), KF32<T>::softmax, L, (int64_t)1, (int)logMode, (const T*)x.data(), out.data());
  std::vector<double> want(R * D);
  for (int64_t r = 0; r < R; r++) {
    double m = -INFINITY, s = 0;
    for (int64_t d = 0; d < D; d++) m = std::max(m, toF(x[d * R + r]));
    for (int64_t d = 0; d < D; d++) s += std::exp(toF(x[d * R + r]) - m);
    for (int64_t d = 0; d < D; d++) {
      double v = toF(x[d * R + r]) - m;
      want[r * D + d] = roundRef<T>(logMode ? v - std::log(s) : std::exp(v) / s);
    }
  }
  checkAll(out, want, atol, rtol, name);
}

static void testCrossEntropy() {
  const int64_t N = 9, C = 300;
  std::vector<float> x = randn(N * C, 2.f), out(N);
  std::vector<int32_t> t = {0, 299, 5, -100, 17, 300, 42, 7, 100};
  CrossEntropyArgs a{};
  a.rows = N; a.classes = C; a.xRowStride = C; a.xClassStride = 1;
  a.tStride = 1; a.outStride = 1; a.ignoreIndex = -100; a.labelSmoothing = 0.1f;
  emu::launch(dim3(4), dim3(64), ck_crossentropy_f32, a, (const float*)x.data(), (const int32_t*)t.data(), out.data());
  std::vector<double> want(N);
  for (int64_t i = 0; i < N; i++) {
    if (t[i] == -100) { want[i] = 0; continue; }
    if (t[i] < 0 || t[i] >= C) { want[i] = NAN; continue; }
    double m = -INFINITY, s = 0, tot = 0;
    for (int64_t c = 0; c < C; c++) m = std::max(m, (double)x[i * C + c]);
    for (int64_t c = 0; c < C; c++) { s += std::exp(x[i * C + c] - m); tot += x[i * C + c]; }
    want[i] = m + std::log(s) - 0.9 * x[i * C + t[i]] - (0.1 / C) * tot;
  }
  checkAll(out, want, 1e-5, 1e-5, "crossEntropy f32 (label smoothing 0.1, ignoreIndex, out-of-range target → NaN)");
}

/** GS-6: found-inf is set by any Inf/NaN and never cleared; values are scaled (exactly, by 2^-k). */
template <typename T>
static void testUnscale(const char* name) {
  std::vector<float> vf = randn(1000, 100.f);
  std::vector<T> g(vf.size());
  for (size_t i = 0; i < g.size(); i++) g[i] = fromD<T>(vf[i]);
  std::vector<T> orig = g;
  float found = 0, inv = 1.f / 1024.f;
  emu::launch(dim3(3), dim3(64), KF32<T>::unscale, (int64_t)g.size(), g.data(), &found, (const float*)&inv);
  std::vector<double> want(g.size());
  for (size_t i = 0; i < g.size(); i++) want[i] = roundRef<T>(toF(orig[i]) / 1024.0);
  checkAll(g, want, 0, 0, std::string(name) + ": finite grads unscaled exactly");
  check(found == 0.f, std::string(name) + ": finite grads leave foundInf at 0");
  g[500] = fromD<T>(INFINITY);
  g[10] = fromD<T>(NAN);
  emu::launch(dim3(3), dim3(64), KF32<T>::unscale, (int64_t)g.size(), g.data(), &found, (const float*)&inv);
  check(found == 1.f && std::isnan(toF(g[10])) && std::isinf(toF(g[500])), std::string(name) + ": Inf/NaN set foundInf, stay Inf/NaN");
  std::vector<T> fine(10, fromD<T>(1.0));
  emu::launch(dim3(1), dim3(32), KF32<T>::unscale, (int64_t)fine.size(), fine.data(), &found, (const float*)&inv);
  check(found == 1.f, std::string(name) + ": foundInf is never cleared");
}

/** a [batch, M, K] (read transposed, as K-major storage) @ b [K, N] broadcast over batches; out strided. */
template <typename T, bool TensorCores = false>
static void testMatmul(const char* name, double atol, double rtol) {
  const int64_t Bt = 3, M = 70, N = 65, K = 37;
  std::vector<float> af = randn(Bt * M * K), bf = randn(K * N);
  std::vector<T> a(af.size()), b(bf.size()), out(Bt * M * N * 2);
  for (size_t i = 0; i < a.size(); i++) a[i] = fromD<T>(af[i]);
  for (size_t i = 0; i < b.size(); i++) b[i] = fromD<T>(bf[i]);
  MatmulArgs g{};
  g.batch = Bt; g.m = M; g.n = N; g.k = K;
  g.aSb = M * K; g.aSm = 1; g.aSk = M;     // each batch of a stored [K, M]
  g.bSb = 0; g.bSk = N; g.bSn = 1;          // b shared by every batch
  g.oSb = M * N * 2; g.oSm = N * 2; g.oSn = 2;  // out written every other element
  dim3 grid((unsigned)((M + MM_TILE - 1) / MM_TILE), (unsigned)((N + MM_TILE - 1) / MM_TILE), (unsigned)Bt);
  if constexpr (TensorCores) emu::launch(grid, dim3(128), Wmma<T>::matmul, g, (const T*)a.data(), (const T*)b.data(), out.data());
  else emu::launch(grid, dim3(MM_THREADS), KF32<T>::matmul, g, (const T*)a.data(), (const T*)b.data(), out.data());
  std::vector<T> got(Bt * M * N);
  std::vector<double> want(Bt * M * N);
  for (int64_t z = 0; z < Bt; z++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += toF(a[z * M * K + k * M + i]) * toF(b[k * N + j]);
        want[(z * M + i) * N + j] = roundRef<T>(acc);
        got[(z * M + i) * N + j] = out[z * M * N * 2 + i * N * 2 + j * 2];
      }
  checkAll(got, want, atol, rtol, std::string(TensorCores ? "tensor-core (wmma, emulated fragments) matmul " : "tiled matmul ") + name + " [3,70,37]@[37,65], partial tiles, transposed a, broadcast b, strided out");
}

static void testMatmulInt() {
  const int64_t M = 17, N = 70, K = 20;
  std::vector<int32_t> a(M * K), b(K * N), out(M * N);
  std::uniform_int_distribution<int32_t> d(-100000, 100000);
  for (auto& v : a) v = d(rng);
  for (auto& v : b) v = d(rng);
  MatmulArgs g{};
  g.batch = 1; g.m = M; g.n = N; g.k = K;
  g.aSm = K; g.aSk = 1; g.bSk = N; g.bSn = 1; g.oSm = N; g.oSn = 1;
  emu::launch(dim3(1, 2, 1), dim3(MM_THREADS), ck_matmul_i32, g, (const int32_t*)a.data(), (const int32_t*)b.data(), out.data());
  bool ok = true;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      uint32_t acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (uint32_t)a[i * K + k] * (uint32_t)b[k * N + j];
      if (out[i * N + j] != (int32_t)acc) ok = false;
    }
  check(ok, "tiled matmul i32 wraps exactly like 32-bit integer arithmetic");
}

static void testAdam() {
  const int64_t n = 777;
  std::vector<float> p = randn(n), g = randn(n), m = randn(n, 0.1f), v(n), vmax(n);
  for (int64_t i = 0; i < n; i++) { v[i] = std::fabs(randn(1, 0.01f)[0]); vmax[i] = i % 2 ? v[i] * 2 : 0; }
  std::vector<float> p0 = p, m0 = m, v0 = v, vmax0 = vmax;
  AdamArgs a{};
  a.n = n; a.oneMinusBeta1 = 0.1f; a.beta2 = 0.999f; a.oneMinusBeta2 = 0.001f; a.eps = 1e-8f; a.weightDecay = 0.01f; a.decayFactor = (float)(1 - 1e-3 * 0.01);
  a.decoupled = 1; a.maximize = 0; a.amsgrad = 1;
  const int step = 3;
  a.stepSize = (float)(1e-3 / (1 - std::pow(0.9, step)));
  a.biasCorrection2Sqrt = (float)std::sqrt(1 - std::pow(0.999, step));
  emu::launch(dim3(2), dim3(128), ck_adam_f32, a, p.data(), (const float*)g.data(), m.data(), v.data(), vmax.data());
  std::vector<double> wp(n), wm(n), wv(n);
  for (int64_t i = 0; i < n; i++) {
    double pp = p0[i] * (1 - 1e-3 * 0.01);
    double mm = m0[i] + 0.1 * (g[i] - m0[i]);
    double vv = v0[i] * 0.999 + 0.001 * g[i] * g[i];
    double vm = std::max((double)vmax0[i], vv);
    wm[i] = mm; wv[i] = vv;
    wp[i] = pp - a.stepSize * mm / (std::sqrt(vm) / a.biasCorrection2Sqrt + 1e-8);
  }
  checkAll(p, wp, 1e-7, 1e-5, "adamw f32 (decoupled decay, amsgrad) parameter");
  checkAll(m, wm, 1e-7, 1e-5, "adamw f32 first moment");
  checkAll(v, wv, 1e-9, 1e-5, "adamw f32 second moment");
}

/**
 * addcmul through the addon's elementwiseLayout: x at an offset, t1 read transposed, t2 a broadcast
 * row or a 0-dim scalar (p.add(g, alpha)). Exact: the product rounded to float, then the sum in
 * float, rounded once to T.
 */
template <typename T>
static void testAddcmul(const char* name) {
  const int64_t R = 5, C = 7;
  const int dtype = dtypeCode<T>();
  std::vector<float> xf = randn(R * C + 1), t1f = randn(R * C), t2f = randn(C);
  // Element (0, 0): the product (1 + 2^-23)(1 − 2^-23) = 1 − 2^-46 rounds to 1 and the sum to 0; an FMA gives −2^-46.
  xf[1] = -1.f; t1f[0] = 1.f + 0x1p-23f; t2f[0] = 1.f - 0x1p-23f;
  xf[4] = INFINITY; t1f[3 * R] = NAN;
  std::vector<T> x(xf.size()), t1(t1f.size()), t2(t2f.size());
  for (size_t i = 0; i < x.size(); i++) x[i] = fromD<T>(xf[i]);
  for (size_t i = 0; i < t1.size(); i++) t1[i] = fromD<T>(t1f[i]);
  for (size_t i = 0; i < t2.size(); i++) t2[i] = fromD<T>(t2f[i]);
  rt::Ref rx = refOf(x, dtype, {R, C}, {C, 1}, 1), r1 = refOf(t1, dtype, {R, C}, {1, R});
  for (bool scalar : {false, true}) {
    std::vector<T> out(R * C);
    rt::Ref r2 = refOf(t2, dtype, {R, C}, {0, scalar ? 0 : 1}), ro = refOf(out, dtype, {R, C}, {C, 1});
    ck::Layout L = rt::elementwiseLayout(ro, {&rx, &r1, &r2});
    emu::launch(dim3(2), dim3(32), KF32<T>::addcmul, L, at<T>(rx), at<T>(r1), at<T>(r2), atMut<T>(ro));
    std::vector<double> want(R * C);
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < C; j++) {
        const double product = (float)(toF(t1[j * R + i]) * toF(t2[scalar ? 0 : j]));  // exact in double, rounded once to float
        want[i * C + j] = roundRef<T>(toF(x[1 + i * C + j]) + product);
      }
    const std::string what = std::string("addcmul ") + name + (scalar ? " (t2 a 0-dim scalar)" : " (t2 a broadcast row)");
    checkAll(out, want, 0, 0, what + ", transposed t1, x at an offset");
    // Stated apart from the reference, which the host compiler could contract as well.
    check(toF(out[0]) == 0 && !std::signbit(toF(out[0])), what + ": the product is rounded before the sum (+0, not an FMA's −2^-46)");
  }
}

// ---- fused attention (contract 1.4.0) -------------------------------------------------------

/** An additive mask: `data` viewed as [B, L, S] through `strides` (0 on a broadcast dim) from `offset`. */
struct AttentionMask {
  std::vector<float> data;
  int64_t offset;
  int64_t strides[3];
};

/** One attention launch: sizes, scale, isCausal, an optional mask, and NaNs put into q, k or v. */
struct AttentionCase {
  std::string name;
  int64_t B, L, S, E, Ev;
  float scale;
  bool causal;
  const AttentionMask* mask;
  std::vector<std::pair<char, int64_t>> nans;  // ('q' | 'k' | 'v', element index)
};

/**
 * The contract's formula in double over the keys that take part (s < S, and s ≤ l with isCausal):
 * score = scale·q·k + mask, lse = log Σ exp(score), out = Σ exp(score − lse)·v. A row whose scores
 * are all −∞ gives NaN and −∞; a NaN score makes the row NaN.
 */
static void attentionReference(const AttentionCase& c, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                               const std::function<double(int64_t, int64_t, int64_t)>& mask, std::vector<double>& out, std::vector<double>& lse) {
  out.assign(c.B * c.L * c.Ev, 0.0);
  lse.assign(c.B * c.L, 0.0);
  for (int64_t b = 0; b < c.B; b++)
    for (int64_t l = 0; l < c.L; l++) {
      const int64_t keys = c.causal ? std::min(c.S, l + 1) : c.S;
      std::vector<double> score(keys);
      double m = -INFINITY;
      bool nan = false;
      for (int64_t s = 0; s < keys; s++) {
        double dot = 0;
        for (int64_t e = 0; e < c.E; e++) dot += q[(b * c.L + l) * c.E + e] * k[(b * c.S + s) * c.E + e];
        score[s] = c.scale * dot + mask(b, l, s);
        if (std::isnan(score[s])) nan = true;
        else m = std::max(m, score[s]);
      }
      double total = 0;
      for (int64_t s = 0; s < keys; s++) total += std::exp(score[s] - m);
      const double logSum = nan ? NAN : m == -INFINITY ? -INFINITY : m + std::log(total);
      lse[b * c.L + l] = logSum;
      for (int64_t col = 0; col < c.Ev; col++) {
        double o = 0;
        for (int64_t s = 0; s < keys; s++) o += std::exp(score[s] - logSum) * v[(b * c.S + s) * c.Ev + col];
        out[(b * c.L + l) * c.Ev + col] = std::isfinite(logSum) ? o : NAN;
      }
    }
}

/**
 * Runs one case through the addon's attentionArgs and the kernel variant the runtime would pick,
 * on at most 3 blocks along x (so larger cases also take the grid-stride loop). Inputs sit at
 * offsets after NaNs, outputs between sentinels: reading or writing the wrong element shows.
 */
template <typename T>
static void testAttention(const AttentionCase& c, double atol, double rtol, const char* dtypeName) {
  const int dtype = dtypeCode<T>();
  const int64_t QO = 1, KO = 2, VO = 3, OO = 2, LO = 1;
  auto input = [](int64_t n, int64_t offset) {
    std::vector<float> f = randn(n);
    std::vector<T> t(offset + n, fromD<T>(NAN));
    for (int64_t i = 0; i < n; i++) t[offset + i] = fromD<T>(f[i]);
    return t;
  };
  std::vector<T> q = input(c.B * c.L * c.E, QO), k = input(c.B * c.S * c.E, KO), v = input(c.B * c.S * c.Ev, VO);
  for (auto [which, i] : c.nans) (which == 'q' ? q[QO + i] : which == 'k' ? k[KO + i] : v[VO + i]) = fromD<T>(NAN);
  std::vector<T> mask;
  if (c.mask) for (float x : c.mask->data) mask.push_back(fromD<T>(x));
  const T sentinel = fromD<T>(12345.0);
  std::vector<T> out(OO + c.B * c.L * c.Ev + 1, sentinel);
  std::vector<float> lse(LO + c.B * c.L + 1, 12345.f);
  rt::Ref rq = refOf(q, dtype, {c.B, c.L, c.E}, {c.L * c.E, c.E, 1}, QO), rk = refOf(k, dtype, {c.B, c.S, c.E}, {c.S * c.E, c.E, 1}, KO);
  rt::Ref rv = refOf(v, dtype, {c.B, c.S, c.Ev}, {c.S * c.Ev, c.Ev, 1}, VO), ro = refOf(out, dtype, {c.B, c.L, c.Ev}, {c.L * c.Ev, c.Ev, 1}, OO);
  rt::Ref rl = refOf(lse, ck::F32, {c.B, c.L}, {c.L, 1}, LO);
  rt::Ref rm = c.mask ? refOf(mask, dtype, {c.B, c.L, c.S}, {c.mask->strides[0], c.mask->strides[1], c.mask->strides[2]}, c.mask->offset) : rt::Ref{};
  const ck::AttentionArgs a = rt::attentionArgs(rq, rk, rv, c.mask ? &rm : nullptr, ro, rl, c.scale, c.causal);
  const int columns = rt::attentionColumns(c.Ev);
  const int64_t tasks = c.B * ((c.L + ATT_ROWS - 1) / ATT_ROWS);
  emu::launch(dim3((unsigned)std::min<int64_t>(tasks, 3), (unsigned)((c.Ev + columns - 1) / columns)), dim3(ATT_ROWS),
              columns == ATT_COLUMNS_SMALL ? KF32<T>::attention64 : KF32<T>::attention128, a, at<T>(rq), at<T>(rk), at<T>(rv),
              c.mask ? at<T>(rm) : nullptr, atMut<T>(ro), atMut<float>(rl));

  std::vector<double> wantOut, wantLse;
  auto values = [](const std::vector<T>& x, int64_t offset) { return asDouble(std::vector<T>(x.begin() + offset, x.end())); };
  auto maskAt = [&](int64_t b, int64_t l, int64_t s) {
    return c.mask ? toF(mask[c.mask->offset + b * c.mask->strides[0] + l * c.mask->strides[1] + s * c.mask->strides[2]]) : 0.0;
  };
  attentionReference(c, values(q, QO), values(k, KO), values(v, VO), maskAt, wantOut, wantLse);
  for (double& o : wantOut) o = roundRef<T>(o);
  const std::string what = std::string("attention ") + dtypeName + ", " + c.name;
  checkAll(std::vector<T>(out.begin() + OO, out.end() - 1), wantOut, atol, rtol, what + ": out");
  checkAll(std::vector<float>(lse.begin() + LO, lse.end() - 1), wantLse, 1e-5, 1e-5, what + ": logSumExp (float32)");
  const double mark = toF(sentinel);
  const bool kept = toF(out[0]) == mark && toF(out[OO - 1]) == mark && toF(out.back()) == mark && lse[0] == 12345.f && lse.back() == 12345.f;
  check(kept, what + ": nothing written outside out and logSumExp");
}

static void testAttentionArgs() {
  std::vector<float> buf(64);
  std::vector<f16> half(64);
  const rt::Ref q = refOf(buf, ck::F32, {1, 2, 4}, {8, 4, 1}), k = refOf(buf, ck::F32, {1, 3, 4}, {12, 4, 1}), v = refOf(buf, ck::F32, {1, 3, 2}, {6, 2, 1});
  const rt::Ref out = refOf(buf, ck::F32, {1, 2, 2}, {4, 2, 1}), lse = refOf(buf, ck::F32, {1, 2}, {2, 1});
  auto error = [&](const rt::Ref& q_, const rt::Ref& k_, const rt::Ref* mask, const rt::Ref& lse_) -> std::string {
    try {
      rt::attentionArgs(q_, k_, v, mask, out, lse_, 1.f, false);
      return "";
    } catch (const rt::CudaError& e) {
      return e.what();
    }
  };
  const rt::Ref mask = refOf(buf, ck::F32, {1, 2, 3}, {0, 0, 1}, 7), badMask = refOf(buf, ck::F32, {1, 2, 4}, {0, 4, 1});
  const ck::AttentionArgs a = rt::attentionArgs(q, k, v, &mask, out, lse, 0.5f, true);
  check(error(q, k, &mask, lse).empty() && a.L == 2 && a.S == 3 && a.E == 4 && a.Ev == 2 && a.hasMask && a.maskOff == 7 && a.maskSl == 0 && a.causal,
        "attentionArgs: sizes, a broadcast mask's strides and offset");
  check(error(refOf(buf, ck::F32, {1, 2, 4}, {8, 1, 2}), k, nullptr, lse).find("must be contiguous") != std::string::npos,
        "attentionArgs: a transposed q is refused (the kernel reads contiguous rows)");
  check(error(q, refOf(buf, ck::F32, {1, 3, 5}, {15, 5, 1}), nullptr, lse).find("do not agree (q [1, 2, 4], k [1, 3, 5]") != std::string::npos,
        "attentionArgs: k's E must be q's, and the message lists the shapes");
  check(error(q, k, &badMask, lse).find("do not agree") != std::string::npos, "attentionArgs: the mask must be [B, L, S]");
  check(error(q, k, nullptr, refOf(half, ck::F16, {1, 2}, {2, 1})).find("logSumExp must be float32") != std::string::npos,
        "attentionArgs: a float16 logSumExp is refused");
  check(rt::attentionColumns(64) == 64 && rt::attentionColumns(65) == 128 && rt::attentionColumns(1000) == 128,
        "attentionColumns: the 64-column variant up to Ev 64, the 128-column one above");
}

static void testAttentionKernels() {
  testAttentionArgs();
  const AttentionCase tiles{"B 2, L 70, S 45, E 40, Ev 24: two row tiles, two key tiles, two E chunks, none full", 2, 70, 45, 40, 24, 0.158f, false, nullptr, {}};
  testAttention<float>(tiles, 1e-5, 1e-5, "f32");
  testAttention<f16>(tiles, 1e-5, 1e-3, "f16 (f32 math, one rounding)");
  testAttention<bf16>(tiles, 1e-4, 8e-3, "bf16 (f32 math, one rounding)");
  testAttention<float>({"S 1: every weight is 1", 2, 3, 1, 5, 7, 0.5f, false, nullptr, {}}, 1e-6, 1e-6, "f32");
  const AttentionCase wide{"E 200, Ev 300: seven E chunks, Ev in three blocks of 128 columns", 1, 5, 37, 200, 300, 0.0707f, false, nullptr, {}};
  testAttention<float>(wide, 1e-5, 1e-5, "f32");
  testAttention<bf16>(wide, 1e-4, 8e-3, "bf16 (f32 math, one rounding)");

  // [B, L, S] = [2, 9, 33] broadcast over the batch and stored transposed ([S, L]: strides 0, 1, 9)
  // after 5 NaNs it must not read; a quarter of the scores −∞, and row 3 with no key left.
  AttentionMask batchShared{randn(5 + 9 * 33), 5, {0, 1, 9}};
  for (int i = 0; i < 5; i++) batchShared.data[i] = NAN;
  for (int i = 0; i < 9 * 33; i++) if (i % 4 == 1) batchShared.data[5 + i] = -INFINITY;
  for (int s = 0; s < 33; s++) batchShared.data[5 + s * 9 + 3] = -INFINITY;
  const AttentionCase masked{"mask broadcast over the batch, transposed, at an offset; a fully masked row is NaN with logSumExp −∞", 2, 9, 33, 8, 8,
                             0.35f, false, &batchShared, {}};
  testAttention<float>(masked, 1e-5, 1e-5, "f32");
  testAttention<f16>(masked, 1e-5, 1e-3, "f16 (f32 math, one rounding)");
  AttentionMask rowShared{randn(2 * 6), 0, {6, 0, 1}};
  testAttention<float>({"mask [B, 1, S] broadcast over the rows, negative scale", 2, 4, 6, 3, 5, -0.7f, false, &rowShared, {}}, 1e-5, 1e-5, "f32");

  // Keys past a row take no part: NaNs at key 30 (k of batch 0, v of batch 1) must not reach any row.
  const AttentionCase causalShort{"causal, L 5 < S 40: NaN in k and v past the diagonal stays out", 2, 5, 40, 6, 4, 0.4f, true, nullptr,
                                  {{'k', 30 * 6}, {'v', (40 + 30) * 4 + 2}}};
  testAttention<float>(causalShort, 1e-5, 1e-5, "f32");
  testAttention<f16>(causalShort, 1e-5, 1e-3, "f16 (f32 math, one rounding)");
  testAttention<float>({"causal, L 100 > S 40: rows from 40 on see every key", 1, 100, 40, 16, 16, 0.25f, true, nullptr, {}}, 1e-5, 1e-5, "f32");
  testAttention<bf16>({"causal, L 70 > S 33, Ev 65 (the 128-column variant)", 1, 70, 33, 9, 65, 0.3f, true, nullptr, {}}, 1e-4, 8e-3, "bf16");
  testAttention<float>({"NaN propagates: from q to its row, from a key of k to every row, from v to its column", 3, 4, 5, 3, 4, 0.5f, false, nullptr,
                        {{'q', 1 * 3 + 2}, {'k', (5 + 3) * 3}, {'v', (2 * 5 + 4) * 4 + 1}}},
                       1e-5, 1e-5, "f32");
}

static void testIndexingAndRandom() {
  // gather and scatterAdd on [2, 4, 3] along dim 1 with duplicate indices, through the addon's indexLayout.
  std::vector<float> x(2 * 4 * 3), out(2 * 2 * 3), target(2 * 4 * 3, 0.f);
  for (size_t i = 0; i < x.size(); i++) x[i] = (float)i;
  std::vector<int32_t> index = {3, 0, 1, 3, 3, 2, 0, 0, 0, 1, 2, 3};
  rt::Ref rx = refOf(x, ck::F32, {2, 4, 3}, {12, 3, 1}), ri = refOf(index, ck::I32, {2, 2, 3}, {6, 3, 1}), ro = refOf(out, ck::F32, {2, 2, 3}, {6, 3, 1});
  int64_t dimStride = 0;
  ck::Layout L = rt::indexLayout(ro, ri, rx, 1, dimStride);
  emu::launch(dim3(1), dim3(32), ck_gather_w4, L, dimStride, at<uint32_t>(rx), at<int32_t>(ri), atMut<uint32_t>(ro));
  bool ok = dimStride == 3;
  for (int i0 = 0; i0 < 2; i0++)
    for (int i1 = 0; i1 < 2; i1++)
      for (int i2 = 0; i2 < 3; i2++)
        if (out[i0 * 6 + i1 * 3 + i2] != x[i0 * 12 + index[i0 * 6 + i1 * 3 + i2] * 3 + i2]) ok = false;
  check(ok, "gather along dim 1");
  // gather along dim 0 of x [4, 3] with index [2, 3] (PyTorch: out[i][j] = x[index[i][j]][j]).
  std::vector<float> x2(12), out2(6);
  for (int i = 0; i < 12; i++) x2[i] = (float)(i * 10);
  std::vector<int32_t> idx2 = {3, 0, 2, 1, 1, 0};
  rt::Ref rx2 = refOf(x2, ck::F32, {4, 3}, {3, 1}), ri2 = refOf(idx2, ck::I32, {2, 3}, {3, 1}), ro2 = refOf(out2, ck::F32, {2, 3}, {3, 1});
  ck::Layout L2 = rt::indexLayout(ro2, ri2, rx2, 0, dimStride);
  emu::launch(dim3(1), dim3(32), ck_gather_w4, L2, dimStride, at<uint32_t>(rx2), at<int32_t>(ri2), atMut<uint32_t>(ro2));
  check(out2[0] == 90 && out2[1] == 10 && out2[2] == 80 && out2[3] == 30 && out2[4] == 40 && out2[5] == 20, "gather along dim 0 with an index smaller than x");
  std::vector<float> src(12, 1.5f);
  rt::Ref rs = refOf(src, ck::F32, {2, 2, 3}, {6, 3, 1}), rt_ = refOf(target, ck::F32, {2, 4, 3}, {12, 3, 1});
  ck::Layout L3 = rt::indexLayout(rs, ri, rt_, 1, dimStride);
  emu::launch(dim3(1), dim3(32), ck_scatteradd_f32, L3, dimStride, atMut<float>(rt_), at<int32_t>(ri), at<float>(rs));
  check(target[0 * 12 + 3 * 3 + 0] == 3.f && target[12 + 0 * 3 + 0] == 1.5f && target[12 + 0 * 3 + 1] == 1.5f, "scatterAdd accumulates duplicate indices");

  // Philox4x32-10 known answers (Random123's kat_vectors), then the stream layout.
  uint32_t w[4];
  philox(0, 0, 0, 0, 0, 0, w);
  check(w[0] == 0x6627e8d5u && w[1] == 0xe169c58du && w[2] == 0xbc57ac4cu && w[3] == 0x9b00dbd8u, "philox4x32-10 KAT (zeros)");
  philox(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, w);
  check(w[0] == 0xd16cfe09u && w[1] == 0x94fdccebu && w[2] == 0x5001e420u && w[3] == 0x24126ea1u, "philox4x32-10 KAT (pi digits)");
  RandomArgs r{};
  r.n = 10; r.k0 = 42; r.k1 = 0; r.offset = 0xffffffffull; r.kind = 0;
  std::vector<float> u(10);
  emu::launch(dim3(1), dim3(32), ck_random, r, (void*)u.data());
  philox(0xffffffffu, 0, 0, 0, 42, 0, w);
  uint32_t w2[4];
  philox(0, 1, 0, 0, 42, 0, w2);  // the next counter carries into the second word
  check(u[1] == (float)(w[1] >> 8) / 16777216.f && u[6] == (float)(w2[2] >> 8) / 16777216.f, "random: element i is word i%4 of block offset+i/4, counter carries");
  r.kind = 1; r.low = -5; r.range = 10;
  std::vector<int32_t> rints(10);
  emu::launch(dim3(1), dim3(32), ck_random, r, (void*)rints.data());
  check(rints[1] == -5 + (int32_t)(((uint64_t)w[1] * 10) >> 32), "randint: low + floor(bits·range / 2^32)");
}

/** The contract 1.3.0 kernels against host references: a stable sort, running values, scatter in index order. */
static void testAlongAxis() {
  // argsort of x [3, 37] (fibres not a power of two long) along dim 1, read through a transposed view:
  // ties, NaN and both zeros; the stable order with NaN as the largest value, both directions.
  const int R = 3, C = 37;
  std::vector<float> x(R * C);
  for (int i = 0; i < R * C; i++) x[i] = i % 11 == 0 ? NAN : i % 7 == 0 ? (i % 2 ? -0.f : 0.f) : (float)((i * 5) % 9) - 4.f;
  const rt::Ref rx = refOf(x, ck::F32, {R, C}, {1, R});  // stored [C, R]
  for (int descending = 0; descending < 2; descending++) {
    int64_t padded = 1;
    while (padded < C) padded *= 2;
    const int64_t all = R * padded;
    std::vector<uint32_t> pairs(2 * all);
    rt::Ref keys = refOf(pairs, ck::I32, {R, padded}, {padded, 1}), xs = rt::axisLast(rx, 1);
    xs.shape[1] = padded;
    emu::launch(dim3(2), dim3(64), ck_argsort_keys_f32, rt::elementwiseLayout(keys, {&xs}), padded, (int64_t)C, descending, all, at<float>(rx), atMut<uint32_t>(keys));
    for (int64_t k = 2; k <= padded; k *= 2)
      for (int64_t j = k / 2; j >= 1; j /= 2) emu::launch(dim3(2), dim3(64), ck_argsort_step, all / 2, padded, k, j, all, pairs.data());
    bool ok = true;
    for (int r = 0; r < R; r++) {
      std::vector<int> order(C);
      for (int j = 0; j < C; j++) order[j] = j;
      auto key = [&](int j) { double v = x[j * R + r]; return std::isnan(v) ? INFINITY : v; };
      auto nan = [&](int j) { return std::isnan(x[j * R + r]); };
      std::stable_sort(order.begin(), order.end(), [&](int p, int q) {
        if (nan(p) != nan(q)) return descending ? nan(p) : nan(q);
        return descending ? key(p) > key(q) : key(p) < key(q);
      });
      for (int j = 0; j < C; j++) ok = ok && pairs[all + r * padded + j] == (uint32_t)order[j];
    }
    check(ok, descending ? "argsort f32 descending: the stable order, NaN first" : "argsort f32 ascending: the stable order, NaN last, −0 = +0");
  }

  // cumsum f16 of [2, 300] along dim 0 of a transposed view: f32 accumulation, each output rounded once.
  std::vector<f16> h(600), hout(600);
  for (int i = 0; i < 600; i++) h[i] = fromD<f16>(std::sin(i * 0.37) * 4);
  const rt::Ref rh = refOf(h, ck::F16, {300, 2}, {1, 300}), rho = refOf(hout, ck::F16, {300, 2}, {2, 1});
  AxisWalk w{300, 300, {rho.strides[0], rh.strides[0], 0}};
  const rt::Ref hf = rt::withoutAxis(rh, 0), of = rt::withoutAxis(rho, 0);
  emu::launch(dim3(1), dim3(32), ck_cumulative_f16, rt::elementwiseLayout(of, {&hf}), w, (int)CU_CUMSUM, at<f16>(rh), atMut<f16>(rho));
  std::vector<double> want(600);
  for (int c = 0; c < 2; c++) {
    float acc = 0;
    for (int r = 0; r < 300; r++) want[r * 2 + c] = roundRef<f16>(acc = acc + (float)toF(h[c * 300 + r]));
  }
  checkAll(hout, want, 0, 0, "cumsum f16 along a strided dim (f32 running value, one rounding per output)");
  // cumprod int32 wraps like C.
  std::vector<int32_t> xi = {65536, 65536, 3, -1}, oi(4);
  const rt::Ref ri = refOf(xi, ck::I32, {4}, {1}), roi = refOf(oi, ck::I32, {4}, {1});
  const rt::Ref fi = rt::withoutAxis(ri, 0), foi = rt::withoutAxis(roi, 0);
  emu::launch(dim3(1), dim3(32), ck_cumulative_i32, rt::elementwiseLayout(foi, {&fi}), AxisWalk{4, 4, {1, 1, 0}}, (int)CU_CUMPROD, at<int32_t>(ri), atMut<int32_t>(roi));
  check(oi[0] == 65536 && oi[1] == 0 && oi[2] == 0 && oi[3] == 0, "cumprod int32 wraps");

  // scatter along dim 1 of out [2, 4] with repeated indices and one out of range (skipped).
  std::vector<int32_t> index = {1, 1, 3, 9, 0, 2, 2, -1};
  std::vector<float> src = {1, 2, 3, 4, 5, NAN, 7, 8};
  const struct { int mode; std::vector<float> want; const char* what; } cases[] = {
    {S_ASSIGN, {10, 2, 12, 3, 5, 14, 7, 16}, "scatter assign: the last of repeated indices wins, out of range skipped"},
    {S_PROD, {10, 22, 12, 39, 70, 14, NAN, 16}, "scatter prod in index order"},
    {S_AMAX, {10, 11, 12, 13, 14, 14, NAN, 16}, "scatter amax: NaN wins"},
  };
  for (const auto& c : cases) {
    std::vector<float> out = {10, 11, 12, 13, 14, 14, 15, 16};
    const rt::Ref ro = refOf(out, ck::F32, {2, 4}, {4, 1}), rix = refOf(index, ck::I32, {2, 4}, {4, 1}), rs = refOf(src, ck::F32, {2, 4}, {4, 1});
    const rt::Ref idx = rt::withoutAxis(rix, 1), sf = rt::withoutAxis(rs, 1);
    rt::Ref ofs = rt::withoutAxis(ro, 1);
    emu::launch(dim3(1), dim3(32), ck_scatter_f32, rt::elementwiseLayout(ofs, {&idx, &sf}), AxisWalk{4, 4, {1, 1, 1}}, c.mode, atMut<float>(ro), at<int32_t>(rix), at<float>(rs));
    std::vector<double> want(c.want.begin(), c.want.end());
    checkAll(out, want, 0, 0, c.what);
  }
  // bf16 products round at every step, as the contract says.
  std::vector<bf16> b = {fromD<bf16>(1.0)}, bs = {fromD<bf16>(1.0078125), fromD<bf16>(1.0078125), fromD<bf16>(1.0078125)};
  std::vector<int32_t> b0 = {0, 0, 0};
  const rt::Ref rb = refOf(b, ck::BF16, {1}, {1}), rbi = refOf(b0, ck::I32, {3}, {1}), rbs = refOf(bs, ck::BF16, {3}, {1});
  const rt::Ref bi = rt::withoutAxis(rbi, 0), bsf = rt::withoutAxis(rbs, 0);
  rt::Ref bo = rt::withoutAxis(rb, 0);
  emu::launch(dim3(1), dim3(32), ck_scatter_bf16, rt::elementwiseLayout(bo, {&bi, &bsf}), AxisWalk{3, 1, {1, 1, 1}}, (int)S_PROD, atMut<bf16>(rb), at<int32_t>(rbi), at<bf16>(rbs));
  double step = 1;
  for (int k = 0; k < 3; k++) step = roundRef<bf16>(step * 1.0078125);
  checkAll(b, std::vector<double>{step}, 0, 0, "scatter prod bf16: each combination rounded on store");
}

/** A kernel whose barrier is skipped by some threads must be reported, not silently run. */
__global__ void divergentKernel(int* out) {
  if (threadIdx.x < 3) __syncthreads();
  out[threadIdx.x] = 1;
}
/** Threads exchange values through shared memory: wrong unless the barrier orders writes before reads. */
__global__ void rotateKernel(const int* in, int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

static void testEmulation() {
  std::vector<int> in(64), out(64);
  for (int i = 0; i < 64; i++) in[i] = i * 7;
  emu::launch(dim3(1), dim3(64), rotateKernel, (const int*)in.data(), out.data());
  bool ok = true;
  for (int i = 0; i < 64; i++) ok = ok && out[i] == in[(i + 1) % 64];
  check(ok && emu::barriersPassed == 1, "emulation: a barrier orders shared-memory writes before reads");
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    std::vector<int> o(8);
    emu::launch(dim3(1), dim3(8), divergentKernel, o.data());
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  check(WIFSIGNALED(status), "emulation: a divergent __syncthreads aborts the launch");
}

// ---- the addon's host-side geometry (src/layouts.cpp) driving the kernels -------------------

static void testLayouts() {
  // A contiguous [4, 5, 6] op a broadcast [1, 5, 1] into out: dims merge where every operand is contiguous.
  std::vector<float> a(120), b(5), out(120);
  for (int i = 0; i < 120; i++) a[i] = (float)i;
  for (int i = 0; i < 5; i++) b[i] = 1000.f * (float)(i + 1);
  rt::Ref ra = refOf(a, ck::F32, {4, 5, 6}, {30, 6, 1}), rb = refOf(b, ck::F32, {4, 5, 6}, {0, 1, 0}), ro = refOf(out, ck::F32, {4, 5, 6}, {30, 6, 1});
  ck::Layout L = rt::elementwiseLayout(ro, {&ra, &rb});
  check(L.ndim == 3 && L.numel == 120, "elementwiseLayout keeps dims that a broadcast operand walks differently");
  emu::launch(dim3(2), dim3(64), ck_binary_f32, L, (int)B_ADD, at<float>(ra), at<float>(rb), atMut<float>(ro));
  bool ok = true;
  for (int i = 0; i < 4; i++) for (int j = 0; j < 5; j++) for (int k = 0; k < 6; k++) ok = ok && out[i * 30 + j * 6 + k] == a[i * 30 + j * 6 + k] + b[j];
  check(ok, "binary through elementwiseLayout: broadcast [1,5,1] added to [4,5,6]");
  rt::Ref rc = refOf(a, ck::F32, {4, 5, 6}, {30, 6, 1}), rc2 = refOf(out, ck::F32, {4, 1, 5, 6}, {30, 30, 6, 1});
  rt::Ref rc4 = refOf(a, ck::F32, {4, 1, 5, 6}, {30, 7, 6, 1});
  ck::Layout M = rt::elementwiseLayout(rc2, {&rc4});
  check(M.ndim == 1 && M.numel == 120 && M.stride[0][0] == 1 && M.stride[1][0] == 1, "contiguous views collapse to one dim (size-1 dims ignored)");
  (void)rc;

  // A transposed copy: out [6, 20] = a viewed [6, 20] with strides (1, 6).
  std::vector<float> t(120);
  rt::Ref rx = refOf(a, ck::F32, {6, 20}, {1, 6}), rt_ = refOf(t, ck::F32, {6, 20}, {20, 1});
  ck::Layout C = rt::elementwiseLayout(rt_, {&rx});
  emu::launch(dim3(1), dim3(64), ck_copy_w4, C, at<uint32_t>(rx), atMut<uint32_t>(rt_));
  ok = true;
  for (int i = 0; i < 6; i++) for (int j = 0; j < 20; j++) ok = ok && t[i * 20 + j] == a[j * 6 + i];
  check(ok, "strided copy materialises a transpose");

  // sum over axes {0, 2} of a [4, 5, 6] into out [1, 5, 1] with an offset, through reduceLayout.
  std::vector<float> red(8, -1.f);
  rt::Ref rr = refOf(red, ck::F32, {1, 5, 1}, {5, 1, 1}, 2);
  ck::ReduceLayout R = rt::reduceLayout(ra, {0, 2}, rr);
  check(R.outer == 5 && R.inner == 24 && rt::reduceThreads(R.inner) == 32, "reduceLayout: 5 outputs of 24 elements, a 32-thread block");
  emu::launch(dim3(3), dim3(rt::reduceThreads(R.inner)), ck_reduce_f32, R, (int)R_SUM, at<float>(ra), atMut<float>(rr));
  ok = red[0] == -1.f && red[1] == -1.f && red[7] == -1.f;
  for (int j = 0; j < 5; j++) {
    float want = 0;
    for (int i = 0; i < 4; i++) for (int k = 0; k < 6; k++) want += a[i * 30 + j * 6 + k];
    ok = ok && red[2 + j] == want;
  }
  check(ok, "reduce through reduceLayout writes exactly the 5 outputs at the offset");

  // matmulArgs: a batch of 1 broadcasts (stride 0); a [1,3,2] @ b [2,2,4] → out [2,3,4].
  std::vector<float> ma = {1, 2, 3, 4, 5, 6}, mb(16), mo(24);
  for (int i = 0; i < 16; i++) mb[i] = (float)(i % 7) - 3.f;
  rt::Ref xa = refOf(ma, ck::F32, {1, 3, 2}, {6, 2, 1}), xb = refOf(mb, ck::F32, {2, 2, 4}, {8, 4, 1}), xo = refOf(mo, ck::F32, {2, 3, 4}, {12, 4, 1});
  ck::MatmulArgs g = rt::matmulArgs(xa, xb, xo);
  check(g.aSb == 0 && g.batch == 2 && g.k == 2, "matmulArgs broadcasts a batch of one");
  emu::launch(dim3(1, 1, 2), dim3(ck::MM_THREADS), ck_matmul_f32, g, at<float>(xa), at<float>(xb), atMut<float>(xo));
  ok = true;
  for (int z = 0; z < 2; z++) for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) {
    float want = 0;
    for (int k = 0; k < 2; k++) want += ma[i * 2 + k] * mb[z * 8 + k * 4 + j];
    ok = ok && mo[z * 12 + i * 4 + j] == want;
  }
  check(ok, "matmul through matmulArgs with a broadcast batch");

  // How cuBLASLt sees our operands.
  rt::LtOperand rowMajor = rt::ltOperand(3, 4, 4, 1), colMajor = rt::ltOperand(3, 4, 1, 3), padded = rt::ltOperand(3, 4, 8, 1);
  rt::LtOperand neither = rt::ltOperand(3, 4, 8, 2), vec = rt::ltOperand(1, 4, 999, 1);
  check(rowMajor.ok && !rowMajor.transposed && rowMajor.ld == 4, "ltOperand: row-major is cuBLASLt's transpose-free column-major [cols, rows]");
  check(colMajor.ok && colMajor.transposed && colMajor.ld == 3, "ltOperand: column-major needs cuBLASLt's transpose");
  check(padded.ok && padded.ld == 8 && !neither.ok && vec.ok && vec.ld == 4, "ltOperand: padded rows keep their ld; doubly strided is refused; a single row ignores its row stride");
}

int main() {
  testEmulation();
  testLayouts();
  testConversions();
  testElementwise();
  testReduce<float>(R_SUM, "sum f32", 1e-5, 1e-5);
  testReduce<bf16>(R_SUM, "sum bf16 (f32 accumulation, one rounding)", 0, 8e-3);
  testReduce<f16>(R_MAX, "max f16", 0, 0);
  testReduceEdges();
  testSoftmax<float>(false, 1e-7, 1e-5, "softmax f32, strided dim [11,517]");
  testSoftmax<float>(true, 1e-5, 1e-5, "logSoftmax f32, strided dim [11,517]");
  testSoftmax<f16>(false, 1e-6, 1e-3, "softmax f16 (f32 math, one rounding)");
  testSoftmax<bf16>(true, 1e-3, 8e-3, "logSoftmax bf16 (f32 math, one rounding)");
  testCrossEntropy();
  testUnscale<float>("unscale f32");
  testUnscale<f16>("unscale f16");
  testUnscale<bf16>("unscale bf16");
  testMatmul<float>("f32", 1e-5, 1e-5);
  testMatmul<f16>("f16 (f32 accumulation)", 1e-3, 1e-3);
  testMatmul<bf16>("bf16 (f32 accumulation)", 1e-2, 8e-3);
  testMatmul<f16, true>("f16 (f32 accumulation)", 1e-3, 1e-3);
  testMatmul<bf16, true>("bf16 (f32 accumulation)", 1e-2, 8e-3);
  testMatmulInt();
  testAdam();
  testAddcmul<float>("f32 (bit for bit the decomposition: no FMA)");
  testAddcmul<f16>("f16 (f32 math, one rounding)");
  testAddcmul<bf16>("bf16 (f32 math, one rounding)");
  testAttentionKernels();
  testIndexingAndRandom();
  testAlongAxis();
  printf("kernel tests (CPU emulation): %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
