#include "fused_optim.h"

#include <cmath>

#include "fused.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

namespace core_cpu {

namespace {

template <bool Decay>
ALWAYS_INLINE void adadeltaRange(const AdadeltaProblem& a, int64_t first, int64_t last) {
  float *__restrict p = a.p, *__restrict v = a.v, *__restrict u = a.u;
  const float* __restrict g = a.g;
  const float sign = a.maximize ? -1.0f : 1.0f;
  for (int64_t i = first; i < last; ++i) {
    float gi = g[i] * sign;
    if constexpr (Decay) gi = gi + p[i] * a.wd;
    const float vi = v[i] * a.rho + (gi * a.oneMinusRho) * gi;
    v[i] = vi;
    const float delta = (std::sqrt(u[i] + a.eps) / std::sqrt(vi + a.eps)) * gi;
    u[i] = u[i] * a.rho + (delta * a.oneMinusRho) * delta;
    p[i] = p[i] + delta * a.negLr;
  }
}

ALWAYS_INLINE void adadeltaElements(const AdadeltaProblem& a, int64_t first, int64_t last) {
  return a.weightDecay ? adadeltaRange<true>(a, first, last) : adadeltaRange<false>(a, first, last);
}

template <bool Decay, bool Momentum, bool Centered>
ALWAYS_INLINE void rmspropRange(const RMSpropProblem& r, int64_t first, int64_t last) {
  float *__restrict p = r.p, *__restrict v = r.v, *__restrict b = r.b, *__restrict a = r.a;
  const float* __restrict g = r.g;
  const float sign = r.maximize ? -1.0f : 1.0f;
  for (int64_t i = first; i < last; ++i) {
    float gi = g[i] * sign;
    if constexpr (Decay) gi = gi + p[i] * r.wd;
    float variance = v[i] * r.alpha + (gi * r.oneMinusAlpha) * gi;
    v[i] = variance;
    if constexpr (Centered) {
      const float mean = a[i] * r.alpha + gi * r.oneMinusAlpha;
      a[i] = mean;
      variance = variance - mean * mean;
    }
    const float avg = std::sqrt(variance) + r.eps;
    if constexpr (Momentum) {
      const float bi = b[i] * r.momentum + gi / avg;
      b[i] = bi;
      p[i] = p[i] + bi * r.negLr;
    } else {
      p[i] = p[i] + (gi * r.negLr) / avg;
    }
  }
}

template <bool Decay>
ALWAYS_INLINE void rmspropWith(const RMSpropProblem& r, int64_t first, int64_t last) {
  const bool momentum = r.b != nullptr, centered = r.a != nullptr;
  if (momentum) return centered ? rmspropRange<Decay, true, true>(r, first, last) : rmspropRange<Decay, true, false>(r, first, last);
  return centered ? rmspropRange<Decay, false, true>(r, first, last) : rmspropRange<Decay, false, false>(r, first, last);
}

ALWAYS_INLINE void rmspropElements(const RMSpropProblem& r, int64_t first, int64_t last) {
  return r.weightDecay ? rmspropWith<true>(r, first, last) : rmspropWith<false>(r, first, last);
}

CORE_CPU_WIDE void adadeltaWide(const AdadeltaProblem& a, int64_t first, int64_t last) { adadeltaElements(a, first, last); }
void adadeltaPortable(const AdadeltaProblem& a, int64_t first, int64_t last) { adadeltaElements(a, first, last); }
CORE_CPU_WIDE void rmspropWide(const RMSpropProblem& r, int64_t first, int64_t last) { rmspropElements(r, first, last); }
void rmspropPortable(const RMSpropProblem& r, int64_t first, int64_t last) { rmspropElements(r, first, last); }

}  // namespace

void adadelta(const AdadeltaProblem& a, int threads) {
  const auto elements = widest(adadeltaWide, adadeltaPortable);
  forElements(a.n, threads, [&](int64_t first, int64_t last) { elements(a, first, last); });
}

void rmsprop(const RMSpropProblem& r, int threads) {
  const auto elements = widest(rmspropWide, rmspropPortable);
  forElements(r.n, threads, [&](int64_t first, int64_t last) { elements(r, first, last); });
}

}  // namespace core_cpu
