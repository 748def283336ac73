// The cpu backend's fused float32 kernels (FusedKernels in packages/tensor): softmax and
// log-softmax over the last axis, per-row cross entropy, and the Adam/AdamW update.
//   Softmax and cross entropy compute each row in double, as the TypeScript kernels do: e^x by a
//   polynomial whose error is a few double ulps, sums in double, one rounding into float32 at the
//   end. So results match the TypeScript kernels' to the last float32 bit but for rare ties.
//   The Adam/AdamW update repeats the decomposition's float32 operations one by one (no fused
//   multiply-adds: this file is compiled with -ffp-contract=off), so it gives the same bits.
#pragma once
#include <cstdint>
#include <functional>

#include "cpu_features.h"

namespace core_cpu {

// The fused kernels are built twice from the same source: with AVX-512 enabled (WIDE), and for
// baseline x86-64. GCC vectors of eight floats and -ffp-contract=off make both give the same bits.
#if defined(__x86_64__)
#define CORE_CPU_WIDE __attribute__((target("avx512f")))
#else
#define CORE_CPU_WIDE
#endif

/** The AVX-512 build of a kernel where the CPU runs it. */
template <typename F>
F widest(F wide, F portable) {
  return cpuFeatures().avx512 ? wide : portable;
}

/**
 * Calls `range(first, last)` over [0, n) in tasks of at least 2^15 elements, a few per thread, on
 * up to `threads` threads of the pool (one thread below 2^16 elements).
 */
void forElements(int64_t n, int threads, const std::function<void(int64_t first, int64_t last)>& range);

/** Softmax (or log-softmax) of each contiguous row of `length` floats: out[r·length + i] from x[r·length + i]. */
struct SoftmaxProblem {
  const float* x;
  float* out;
  int64_t rows, length;
  bool log;
};

void softmax(const SoftmaxProblem& problem, int threads);

/**
 * Per-row cross entropy of logits x [rows, classes] (row r at x + r·rowStride, its classes
 * contiguous) against target[r·targetStride]: lse − (1 − ε)·x[t] − (ε/C)·Σx into out[r·outStride],
 * 0 where the target is ignoreIndex, NaN where it is outside [0, classes).
 */
struct CrossEntropyProblem {
  const float* x;
  int64_t rowStride;
  const int32_t* target;
  int64_t targetStride;
  float* out;
  int64_t outStride;
  int64_t rows, classes;
  int64_t ignoreIndex;
  double smoothing;
};

void crossEntropy(const CrossEntropyProblem& problem, int threads);

/**
 * One Adam/AdamW update of n contiguous float32 elements in place (vmax null without amsgrad). The
 * scalars are float32 already, rounded as the TypeScript kernel rounds them: decay = 1 − lr·wd,
 * lerpW = w or 1 − w (w = 1 − β1; lerpFromM when |w| < 0.5), β2, 1 − β2, the bias correction's
 * square root, eps and −stepSize.
 */
struct AdamProblem {
  float *p, *m, *v, *vmax;
  const float* g;
  int64_t n;
  bool maximize, weightDecay, decoupled, lerpFromM;
  float decay, wd, lerpW, b2, oneMinusB2, bc2, eps, negStep;
};

void adamw(const AdamProblem& problem, int threads);

}  // namespace core_cpu
