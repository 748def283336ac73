#include "fused.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_features.h"
#include "pool.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

namespace core_cpu {

namespace {

/** Elements one task takes at least: below this, waking another thread costs more than it saves. */
constexpr int64_t TASK_ELEMENTS = 1 << 15;

// Eight lanes as GCC vectors: one AVX-512 register in the AVX-512 build of a kernel, SSE registers
// in the portable one. The same source, so both builds give the same bits.
typedef float FloatLoad __attribute__((vector_size(32), aligned(4), may_alias));
typedef float Floats __attribute__((vector_size(32)));
typedef int32_t Ints __attribute__((vector_size(32)));
typedef double Doubles __attribute__((vector_size(64)));
typedef int64_t Longs __attribute__((vector_size(64)));
constexpr int LANES = 8;

ALWAYS_INLINE Floats load(const float* x) { return *reinterpret_cast<const FloatLoad*>(x); }
ALWAYS_INLINE Doubles widen(const float* x) { return __builtin_convertvector(load(x), Doubles); }

/** The bits of a double (of each lane) as an integer, and back. */
ALWAYS_INLINE int64_t bitsOf(double x) {
  int64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
ALWAYS_INLINE Longs bitsOf(Doubles x) { return (Longs)x; }  // a GCC vector cast keeps the bits
ALWAYS_INLINE double fromBits(int64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
ALWAYS_INLINE Doubles fromBits(Longs b) { return (Doubles)b; }

/** The lanes' sum, added pairwise. */
ALWAYS_INLINE double total(Doubles v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// e^x in double for x ≤ 0 (x − the row max) or NaN: 2^n · e^r with n = x·log2(e) rounded to the
// nearest integer (adding and subtracting 1.5·2^52 rounds it), r = x − n·ln 2 with ln 2 split in a
// high part whose products with n are exact and a low part, e^r (|r| ≤ 0.35) by its Taylor
// polynomial to degree 13 (truncation below 2^-56 relative), 2^n built from its exponent bits.
// Below −708, where 2^n would leave the normal range, the result is 0: such a term changes no
// double sum that includes the row max's e^0 = 1, and its softmax is 0 once rounded to float32.
constexpr double LOG2E = 1.4426950408889634;
constexpr double LN2_HI = 6.93147180369123816490e-01;  // 32 significant bits
constexpr double LN2_LO = 1.90821492927058770002e-10;
constexpr double ROUNDER = 0x1.8p52;
constexpr double EXP_MIN = -708.0;
constexpr int DEGREE = 13;

struct Taylor {
  double c[DEGREE + 1];
  constexpr Taylor() : c() {
    double f = 1.0;
    for (int k = 0; k <= DEGREE; ++k) {
      if (k > 0) f *= k;
      c[k] = 1.0 / f;
    }
  }
};
constexpr Taylor TAYLOR;

/** e^x of a double or of eight lanes, operation for operation the same. */
template <typename V>
ALWAYS_INLINE V expNonPositive(V x) {
  const V zero = V{} + 0.0;
  const V shifted = x * LOG2E + ROUNDER;
  const V n = shifted - ROUNDER;
  const V r = (x - n * LN2_HI) - n * LN2_LO;
  V p = zero + TAYLOR.c[DEGREE];
  for (int k = DEGREE - 1; k >= 0; --k) p = p * r + TAYLOR.c[k];
  const V scale = fromBits((bitsOf(shifted) - bitsOf(zero + ROUNDER) + 1023) << 52);
  return x < EXP_MIN ? zero : p * scale;
}

/** The TypeScript kernels' row max: NaN wins (once NaN, `v > m` is never true again). */
ALWAYS_INLINE float maxStep(float m, float v) { return v > m || v != v ? v : m; }

/** The row max; NaN if any element is NaN. */
ALWAYS_INLINE float rowMax(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  if (n >= LANES) {
    Floats lanes = load(x);
    Ints nan = lanes != lanes;
    for (i = LANES; i + LANES <= n; i += LANES) {
      const Floats v = load(x + i);
      nan |= v != v;
      lanes = v > lanes ? v : lanes;
    }
    for (int l = 0; l < LANES; ++l) m = nan[l] != 0 ? std::numeric_limits<float>::quiet_NaN() : maxStep(m, lanes[l]);
    if (m != m) return m;
  }
  for (; i < n; ++i) m = maxStep(m, x[i]);
  return m;
}

/** Σ x in double. */
ALWAYS_INLINE double rowSum(const float* x, int64_t n) {
  Doubles lanes = {};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) lanes += widen(x + i);
  double s = total(lanes);
  for (; i < n; ++i) s += x[i];
  return s;
}

/** Σ e^(x − max) in double, each term also written to e unless it is null. */
ALWAYS_INLINE double rowExps(const float* x, double max, int64_t n, double* e) {
  Doubles lanes = {};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    const Doubles v = expNonPositive(widen(x + i) - max);
    if (e != nullptr) std::memcpy(e + i, &v, sizeof v);
    lanes += v;
  }
  double s = total(lanes);
  for (; i < n; ++i) {
    const double v = expNonPositive(static_cast<double>(x[i]) - max);
    if (e != nullptr) e[i] = v;
    s += v;
  }
  return s;
}

/** Softmax rows [first, last), e a row of scratch (unused for log-softmax). */
ALWAYS_INLINE void softmaxRows(const SoftmaxProblem& s, int64_t first, int64_t last, double* e) {
  for (int64_t r = first; r < last; ++r) {
    const float* x = s.x + r * s.length;
    float* out = s.out + r * s.length;
    const double max = rowMax(x, s.length);
    const double sum = rowExps(x, max, s.length, s.log ? nullptr : e);
    if (s.log) {
      const double logSum = std::log(sum);
      for (int64_t i = 0; i < s.length; ++i) out[i] = static_cast<float>((static_cast<double>(x[i]) - max) - logSum);
    } else {
      for (int64_t i = 0; i < s.length; ++i) out[i] = static_cast<float>(e[i] / sum);
    }
  }
}

/** Cross-entropy rows [first, last). */
ALWAYS_INLINE void crossEntropyRows(const CrossEntropyProblem& c, int64_t first, int64_t last) {
  for (int64_t r = first; r < last; ++r) {
    const int64_t t = c.target[r * c.targetStride];
    float& out = c.out[r * c.outStride];
    if (t == c.ignoreIndex) {
      out = 0.0f;
    } else if (t < 0 || t >= c.classes) {
      out = std::numeric_limits<float>::quiet_NaN();
    } else {
      const float* x = c.x + r * c.rowStride;
      const double max = rowMax(x, c.classes);
      const double lse = max + std::log(rowExps(x, max, c.classes, nullptr));
      const double picked = x[t], s = c.smoothing;
      out = static_cast<float>(s == 0.0 ? lse - picked : lse - (1.0 - s) * picked - (s / static_cast<double>(c.classes)) * rowSum(x, c.classes));
    }
  }
}

enum class Decay { none, coupled, decoupled };

/** Math.max: NaN if either is NaN (the TypeScript kernel's max of the second moments). */
ALWAYS_INLINE float maxOrNaN(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }

template <Decay D, bool Amsgrad>
ALWAYS_INLINE void adamRange(const AdamProblem& a, int64_t first, int64_t last) {
  float *__restrict p = a.p, *__restrict m = a.m, *__restrict v = a.v, *__restrict vmax = a.vmax;
  const float* __restrict g = a.g;
  const float sign = a.maximize ? -1.0f : 1.0f;
  for (int64_t i = first; i < last; ++i) {
    float gi = g[i] * sign, pi = p[i];
    if constexpr (D == Decay::decoupled) pi = pi * a.decay;
    if constexpr (D == Decay::coupled) gi = gi + pi * a.wd;
    const float diff = gi - m[i];
    const float mi = a.lerpFromM ? m[i] + diff * a.lerpW : gi - diff * a.lerpW;
    float vi = v[i] * a.b2 + (gi * a.oneMinusB2) * gi;
    m[i] = mi;
    v[i] = vi;
    if constexpr (Amsgrad) vmax[i] = vi = maxOrNaN(vmax[i], vi);
    const float denom = std::sqrt(vi) / a.bc2 + a.eps;
    p[i] = pi + (mi * a.negStep) / denom;
  }
}

ALWAYS_INLINE void adamElements(const AdamProblem& a, int64_t first, int64_t last) {
  const Decay d = !a.weightDecay ? Decay::none : a.decoupled ? Decay::decoupled : Decay::coupled;
  const bool ams = a.vmax != nullptr;
  if (d == Decay::none) return ams ? adamRange<Decay::none, true>(a, first, last) : adamRange<Decay::none, false>(a, first, last);
  if (d == Decay::coupled) return ams ? adamRange<Decay::coupled, true>(a, first, last) : adamRange<Decay::coupled, false>(a, first, last);
  return ams ? adamRange<Decay::decoupled, true>(a, first, last) : adamRange<Decay::decoupled, false>(a, first, last);
}

// Each kernel built twice from the same source: with AVX-512 enabled, and for baseline x86-64.
#define WIDE CORE_CPU_WIDE
WIDE void softmaxWide(const SoftmaxProblem& s, int64_t first, int64_t last, double* e) { softmaxRows(s, first, last, e); }
void softmaxPortable(const SoftmaxProblem& s, int64_t first, int64_t last, double* e) { softmaxRows(s, first, last, e); }
WIDE void crossEntropyWide(const CrossEntropyProblem& c, int64_t first, int64_t last) { crossEntropyRows(c, first, last); }
void crossEntropyPortable(const CrossEntropyProblem& c, int64_t first, int64_t last) { crossEntropyRows(c, first, last); }
WIDE void adamWide(const AdamProblem& a, int64_t first, int64_t last) { adamElements(a, first, last); }
void adamPortable(const AdamProblem& a, int64_t first, int64_t last) { adamElements(a, first, last); }

/** Tasks of whole rows, at least TASK_ELEMENTS each and a few per thread; threads only where that many elements pay for them. */
struct Split {
  int64_t rowsPerTask, tasks;
  int threads;
  Split(int64_t rows, int64_t length, int threadsWanted) {
    rowsPerTask = std::max((TASK_ELEMENTS + length - 1) / std::max<int64_t>(length, 1), (rows + 4 * threadsWanted - 1) / (4 * threadsWanted));
    tasks = (rows + rowsPerTask - 1) / rowsPerTask;
    threads = rows * length >= 2 * TASK_ELEMENTS ? threadsWanted : 1;
  }
  int64_t end(int64_t task, int64_t rows) const { return std::min(rows, (task + 1) * rowsPerTask); }
};

}  // namespace

void softmax(const SoftmaxProblem& s, int threads) {
  const auto rows = widest(softmaxWide, softmaxPortable);
  const Split split(s.rows, s.length, threads);
  Pool::instance().run(split.threads, split.tasks, [&](int64_t task) {
    std::vector<double> e(s.log ? 0 : s.length);
    rows(s, task * split.rowsPerTask, split.end(task, s.rows), e.data());
  });
}

void crossEntropy(const CrossEntropyProblem& c, int threads) {
  const auto rows = widest(crossEntropyWide, crossEntropyPortable);
  const Split split(c.rows, c.classes, threads);
  Pool::instance().run(split.threads, split.tasks, [&](int64_t task) { rows(c, task * split.rowsPerTask, split.end(task, c.rows)); });
}

void forElements(int64_t n, int threads, const std::function<void(int64_t first, int64_t last)>& range) {
  const Split split(n, 1, threads);
  Pool::instance().run(split.threads, split.tasks, [&](int64_t task) { range(task * split.rowsPerTask, split.end(task, n)); });
}

void adamw(const AdamProblem& a, int threads) {
  const auto elements = widest(adamWide, adamPortable);
  forElements(a.n, threads, [&](int64_t first, int64_t last) { elements(a, first, last); });
}

}  // namespace core_cpu
