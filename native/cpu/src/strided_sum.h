// asStrided's gradient in float32 (col2im for a convolution's input): the elements of a strided
// source summed into a contiguous output at the places a possibly overlapping view maps them to.
// Contributions to one output element are added in the source's row-major order, one float32
// rounding each, so the bits do not depend on how the work is split between threads.
#pragma once
#include <cstdint>

#include "strided.h"

namespace core_cpu {

/** out = 0, then out[viewOffset + Σ i_d · outStrides[d]] += src[Σ i_d · srcStrides[d]] for every index i of `shape`, in row-major order. */
struct StridedSumProblem {
  int rank;
  int64_t shape[MAX_RANK];
  const float* src;
  int64_t srcStrides[MAX_RANK];
  float* out;  // outNumel contiguous elements, every index of the view inside them
  int64_t viewOffset;
  int64_t outStrides[MAX_RANK];  // non-negative
  int64_t outNumel;
};

/**
 * Runs the problem on up to `threads` threads: the zeroing split in chunks, the sums split over the
 * leading dims whose indices land on disjoint ranges of out (a convolution's samples and channels),
 * a run of consecutive indices per pool task.
 */
void stridedSum(const StridedSumProblem& problem, int threads);

/** `bytes` of out set to zero, in chunks over up to `threads` threads of the pool. */
void zeroParallel(void* out, int64_t bytes, int threads);

/**
 * Adds the problem's src into out at the view's places, in src's row-major order, on this thread,
 * without zeroing out first: one part of a problem whose parts reach disjoint ranges of out (a
 * 16-bit GEMM's batch summed into place as it finishes, see halfGemmStridedSum).
 */
void addStrided(const StridedSumProblem& problem);

}  // namespace core_cpu
