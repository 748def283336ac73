// Max-pooling's fused kernels (the contract's maxPool2d and maxPool2dBackward) over float32, float16
// and bfloat16, bit for bit the TypeScript ones (packages/backend-cpu/src/kernels/max-pool.ts): half
// types compare as their f32 values and sum in f32, rounded once on store; each window's first maximum,
// NaN counting as the maximum (the first NaN wins), positions outside the input skipped; and the
// gradient summed back at those positions in row-major order of the outputs. Threads split the
// N·C planes, each plane written by one thread, so the bits do not depend on the thread count.
#pragma once
#include <cstdint>

#include "half.h"

namespace core_cpu {

/** maxPool2d over x [N, C, H, W] (any strides) into contiguous out and indices [N, C, oh, ow]; x and out of `type`. */
struct MaxPoolProblem {
  Elem type;
  const void* x;
  int64_t shape[4];      // N, C, H, W
  int64_t xStrides[4];
  void* out;
  int32_t* indices;
  int64_t kernel[2], stride[2], padding[2], dilation[2], outSize[2];  // [rows, columns] each
};

/** Runs the forward pass; false (nothing written) when some window has no position inside the input. */
bool maxPool2d(const MaxPoolProblem& p, int threads);

/** maxPool2dBackward: grad and indices [N, C, oh, ow] (any strides) into contiguous gradInput [N, C, H, W]; grad and gradInput of `type`. */
struct MaxPoolBackwardProblem {
  Elem type;
  const void* grad;
  int64_t gradStrides[4];
  const int32_t* indices;
  int64_t indexStrides[4];
  void* gradInput;
  int64_t shape[4];  // N, C, H, W of gradInput
  int64_t outSize[2];
};

/** Runs the backward pass; false, with an index outside [0, H·W) in `bad`, when it met one (gradInput then partly written). */
bool maxPool2dBackward(const MaxPoolBackwardProblem& p, int threads, int64_t& bad);

}  // namespace core_cpu
