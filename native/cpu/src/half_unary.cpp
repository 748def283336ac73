// exp, erf and relu of 16-bit tensors (a GPT's exps and its GELU's erf, the Net's relus, under bf16 autocast)
// and exp and erf of float32 ones, computed in double as the TypeScript kernels compute them (Math.exp; erf in kernels/math.ts, the
// same operations in the same order), then rounded to f32 and to the 16-bit type; and the compares
// and selects of a relu's backward pass (y > 0, where(mask, g, 0)) on contiguous float32 and 16-bit data.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <type_traits>

#include "half.h"
#include "pool.h"

namespace core_cpu {

namespace {

constexpr double TWO_OVER_SQRT_PI = 1.1283791670955126;
constexpr double ONE_OVER_SQRT_PI = 0.5641895835477563;

/** erfc(x) for x ≥ 2 from its continued fraction, by modified Lentz (kernels/math.ts's erfcContinuedFraction). */
double erfcContinuedFraction(double x) {
  const double tiny = 1e-300;
  double f = x, c = x, d = 0;
  for (int k = 1; k < 200; ++k) {
    const double a = k / 2.0;
    d = x + a * d;
    if (d == 0) d = tiny;
    c = x + a / c;
    if (c == 0) c = tiny;
    d = 1 / d;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return (ONE_OVER_SQRT_PI * std::exp(-x * x)) / f;
}

/** erf in double: the series below 2, 1 − erfc above (kernels/math.ts's erf). */
double erf(double x) {
  if (x != x) return x;
  const double ax = std::fabs(x);
  if (ax >= 6) return x > 0 ? 1 : -1;
  double r;
  if (ax < 2) {
    const double x2 = ax * ax;
    double term = ax, sum = ax;
    for (int n = 1; n < 100; ++n) {
      term *= (2 * x2) / (2 * n + 1);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    r = TWO_OVER_SQRT_PI * std::exp(-x2) * sum;
  } else {
    r = 1 - erfcContinuedFraction(ax);
  }
  return x < 0 ? -r : r;
}

}  // namespace

// relu on 16-bit bits over [begin, end), cloned for wider vectors (bf16 [64,64,24,24] on two
// threads: 0.71 -> 0.20 ms).
CORE_VECTOR_CLONES void reluBits(const uint16_t* x, uint16_t* out, int64_t begin, int64_t end, uint16_t infinity, uint16_t nan) {
  for (int64_t i = begin; i < end; ++i) {
    const uint16_t h = x[i];
    out[i] = (h & 0x7fff) > infinity ? nan : (h & 0x8000) ? uint16_t{0} : h;
  }
}

/** exp's or erf's result for every bf16 or f16 value (widened, computed in double, rounded to f32 and then to the type), made at first use. */
template <typename Value>
const uint16_t* resultTable(HalfUnaryOp op, Elem type, const Value& value) {
  static std::once_flag made[4];
  static std::unique_ptr<uint16_t[]> tables[4];
  const int k = (op == HalfUnaryOp::exp ? 0 : 2) + (type == Elem::bf16 ? 1 : 0);
  std::call_once(made[k], [&] {
    std::unique_ptr<uint16_t[]> table(new uint16_t[65536]);
    for (uint32_t h = 0; h < 65536; ++h) {
      const auto bits = static_cast<uint16_t>(h);
      const float y = static_cast<float>(value(type == Elem::bf16 ? fromBFloat16(bits) : fromFloat16(bits)));
      table[h] = type == Elem::bf16 ? toBFloat16(y) : toFloat16(y);
    }
    tables[k] = std::move(table);
  });
  return tables[k].get();
}

void halfUnary(HalfUnaryOp op, Elem type, const void* xData, void* outData, int64_t n, int threads) {
  constexpr int64_t TASK = 1 << 13;
  const int64_t tasks = (n + TASK - 1) / TASK;
  const auto value = [op](double v) { return op == HalfUnaryOp::exp ? std::exp(v) : op == HalfUnaryOp::erf ? erf(v) : v > 0 || v != v ? v : 0.0; };
  if (type == Elem::f32) {
    // exp and erf of float32 (a GPT's GELU): the double result rounded once, as a Float32Array store does.
    const float* x = static_cast<const float*>(xData);
    float* out = static_cast<float*>(outData);
    Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
      const int64_t end = std::min(n, (task + 1) * TASK);
      for (int64_t i = task * TASK; i < end; ++i) out[i] = static_cast<float>(value(x[i]));
    });
    return;
  }
  const uint16_t* x = static_cast<const uint16_t*>(xData);
  uint16_t* out = static_cast<uint16_t*>(outData);
  if (op == HalfUnaryOp::relu) {
    // On the bits: a NaN becomes the quiet NaN the round trip through double gives, anything with
    // the sign bit (−0 included) becomes +0, the rest is kept; the loop vectorizes.
    const uint16_t infinity = type == Elem::bf16 ? 0x7f80 : 0x7c00, nan = type == Elem::bf16 ? 0x7fc0 : 0x7e00;
    Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
      reluBits(x, out, task * TASK, std::min(n, (task + 1) * TASK), infinity, nan);
    });
    return;
  }
  // A 16-bit type has 65,536 values: each op's results for all of them are computed once (about 3 ms
  // for erf), the same way, and a call only looks them up (a GPT's GELU: 56 ns an element before).
  const uint16_t* table = resultTable(op, type, value);
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t end = std::min(n, (task + 1) * TASK);
    for (int64_t i = task * TASK; i < end; ++i) out[i] = table[x[i]];
  });
}

namespace {

constexpr int64_t SELECT_TASK = 1 << 15;

template <Elem T>
using Storage = std::conditional_t<T == Elem::f32, float, uint16_t>;

template <Elem T>
inline float widened(Storage<T> h) {
  if constexpr (T == Elem::f32) return h;
  else if constexpr (T == Elem::bf16) return floatOf(static_cast<uint32_t>(h) << 16);
  else return fromFloat16(h);
}

template <CompareOp Op>
inline bool compared(float x, float y) {
  if constexpr (Op == CompareOp::gt) return x > y;
  else if constexpr (Op == CompareOp::lt) return x < y;
  else if constexpr (Op == CompareOp::ge) return x >= y;
  else if constexpr (Op == CompareOp::le) return x <= y;
  else if constexpr (Op == CompareOp::eq) return x == y;
  else return x != y;
}

/** One run of a comparison, typed so that the unit-stride and broadcast loops vectorize. */
template <CompareOp Op, Elem T>
CORE_VECTOR_CLONES void compareRun(const void* xRun, const void* yRun, int64_t yStride, uint8_t* out, int64_t n) {
  const Storage<T>* x = static_cast<const Storage<T>*>(xRun);
  const Storage<T>* y = static_cast<const Storage<T>*>(yRun);
  if (yStride == 0) {
    const float v = widened<T>(*y);
    for (int64_t i = 0; i < n; ++i) out[i] = compared<Op>(widened<T>(x[i]), v) ? 1 : 0;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = compared<Op>(widened<T>(x[i]), widened<T>(y[i])) ? 1 : 0;
  }
}

using CompareRun = void (*)(const void*, const void*, int64_t, uint8_t*, int64_t);

template <Elem T>
CompareRun compareRunFor(CompareOp op) {
  switch (op) {
    case CompareOp::gt: return compareRun<CompareOp::gt, T>;
    case CompareOp::lt: return compareRun<CompareOp::lt, T>;
    case CompareOp::ge: return compareRun<CompareOp::ge, T>;
    case CompareOp::le: return compareRun<CompareOp::le, T>;
    case CompareOp::eq: return compareRun<CompareOp::eq, T>;
    default: return compareRun<CompareOp::ne, T>;
  }
}

/** selectRuns over elements of type U, by masks rather than branches: a relu's mask is a coin flip per element, and the masked loop vectorizes. */
template <typename U>
CORE_VECTOR_CLONES void selectRun(const uint8_t* cond, int64_t cs, const U* a, int64_t as, const U* b, int64_t bs, U* out, int64_t begin, int64_t end) {
  const auto pick = [](uint8_t c, U x, U y) {
    const U m = static_cast<U>(U{0} - static_cast<U>(c != 0));
    return static_cast<U>((x & m) | (y & static_cast<U>(~m)));
  };
  if (cs == 1 && as == 1 && bs == 0) {  // where(mask, g, 0)
    const U other = *b;
    for (int64_t i = begin; i < end; ++i) out[i] = pick(cond[i], a[i], other);
  } else {
    for (int64_t i = begin; i < end; ++i) out[i] = pick(cond[i * cs], a[i * as], b[i * bs]);
  }
}

}  // namespace

void compareRuns(CompareOp op, Elem type, const void* x, const void* y, int64_t yStride, uint8_t* out, int64_t n, int threads) {
  const CompareRun run = type == Elem::f32 ? compareRunFor<Elem::f32>(op) : type == Elem::bf16 ? compareRunFor<Elem::bf16>(op) : compareRunFor<Elem::f16>(op);
  const int64_t bytes = type == Elem::f32 ? 4 : 2;
  const int64_t tasks = (n + SELECT_TASK - 1) / SELECT_TASK;
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t begin = task * SELECT_TASK, count = std::min(n, begin + SELECT_TASK) - begin;
    run(static_cast<const char*>(x) + begin * bytes, static_cast<const char*>(y) + begin * yStride * bytes, yStride, out + begin, count);
  });
}

void selectRuns(int bytes, const uint8_t* cond, int64_t cs, const void* a, int64_t as, const void* b, int64_t bs, void* out, int64_t n, int threads) {
  const int64_t tasks = (n + SELECT_TASK - 1) / SELECT_TASK;
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t begin = task * SELECT_TASK, end = std::min(n, begin + SELECT_TASK);
    if (bytes == 4) {
      selectRun(cond, cs, static_cast<const uint32_t*>(a), as, static_cast<const uint32_t*>(b), bs, static_cast<uint32_t*>(out), begin, end);
    } else {
      selectRun(cond, cs, static_cast<const uint16_t*>(a), as, static_cast<const uint16_t*>(b), bs, static_cast<uint16_t*>(out), begin, end);
    }
  });
}

}  // namespace core_cpu
