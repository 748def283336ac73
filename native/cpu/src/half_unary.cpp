// exp, erf and relu of 16-bit tensors (a GPT's exps and its GELU's erf, the Net's relus, under bf16 autocast),
// computed in double as the TypeScript kernels compute them (Math.exp; erf in kernels/math.ts, the
// same operations in the same order), then rounded to f32 and to the 16-bit type.
#include <algorithm>
#include <cmath>

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

void halfUnary(HalfUnaryOp op, Elem type, const uint16_t* x, uint16_t* out, int64_t n, int threads) {
  constexpr int64_t TASK = 1 << 13;
  const int64_t tasks = (n + TASK - 1) / TASK;
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t end = std::min(n, (task + 1) * TASK);
    for (int64_t i = task * TASK; i < end; ++i) {
      const double v = type == Elem::bf16 ? fromBFloat16(x[i]) : fromFloat16(x[i]);
      const double r = op == HalfUnaryOp::exp ? std::exp(v) : op == HalfUnaryOp::erf ? erf(v) : v > 0 || v != v ? v : 0.0;
      const float y = static_cast<float>(r);
      out[i] = type == Elem::bf16 ? toBFloat16(y) : toFloat16(y);
    }
  });
}

}  // namespace core_cpu
