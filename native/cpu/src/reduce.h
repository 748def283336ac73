// Reductions (sum, max, min) over any set of axes of a strided float32, float16 or bfloat16 input
// into an output of its type (16-bit elements widened exactly, results rounded once). Sums accumulate as
// the TypeScript kernel's accumulate dtype says: in double, rounded once into float32; or in
// float32, where the TypeScript kernel keeps one running sum per output (within n·2^-24·Σ|x| of
// the exact sum): here a run along a contiguous reduced dim is split over independent vector
// lanes added pairwise, which stays within that bound, and outputs side by side along a
// contiguous kept dim keep the very same running sums, so the same bits. Max and min take the
// elements of each output in the TypeScript kernel's order (NaN wins, the first of equal values
// stays), so they give its bits.
#pragma once
#include <cstdint>

#include "half.h"
#include "strided.h"

namespace core_cpu {

enum class ReduceOp { sum, max, min };

/**
 * out[j] = op over every index i of `shape` that maps to j, of x at Σ i_d · xStrides[d]; out's
 * element for i is at Σ i_d · outStrides[d] where outStrides is 0 on every reduced dim. Reduced
 * dims are those set in `reduced`; max and min need every reduced extent ≥ 1.
 */
struct ReduceProblem {
  ReduceOp op;
  bool wide;  // a sum accumulates in double (else in float32)
  Elem type;  // of x and out
  int rank;
  int64_t shape[MAX_RANK];
  bool reduced[MAX_RANK];
  const void* x;
  int64_t xStrides[MAX_RANK];
  void* out;
  int64_t outStrides[MAX_RANK];
};

/** Runs the problem on up to `threads` threads, outputs split between them. Out must not overlap x. */
void reduce(const ReduceProblem& problem, int threads);

}  // namespace core_cpu
