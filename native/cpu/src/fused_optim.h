// The cpu backend's fused float32 Adadelta and RMSprop updates (FusedKernels.adadelta and
// .rmsprop in packages/tensor). Each repeats the decomposition's float32 operations one by one,
// every scalar already rounded to float32 by the caller and no fused multiply-adds (this file is
// compiled with -ffp-contract=off), so it gives the TypeScript kernels' bits.
#pragma once
#include <cstdint>

namespace core_cpu {

/** One Adadelta update of n contiguous float32 elements in place: v the square average, u the accumulated delta. */
struct AdadeltaProblem {
  float *p, *v, *u;
  const float* g;
  int64_t n;
  bool maximize, weightDecay;
  float rho, oneMinusRho, eps, wd, negLr;
};

void adadelta(const AdadeltaProblem& problem, int threads);

/**
 * One RMSprop update of n contiguous float32 elements in place: v the square average, b the
 * momentum buffer (null without momentum), a the gradient average (null unless centered).
 */
struct RMSpropProblem {
  float *p, *v, *b, *a;
  const float* g;
  int64_t n;
  bool maximize, weightDecay;
  float alpha, oneMinusAlpha, eps, wd, momentum, negLr;
};

void rmsprop(const RMSpropProblem& problem, int threads);

}  // namespace core_cpu
