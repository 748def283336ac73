// Elementwise float32 over strided N-D operands: out = a (a copy) or out = a ∘ b for ∘ in + − × ÷.
// These are the data movements a convolution is built from: im2col copies an overlapping window
// view of the image into the column matrix, and its adjoint adds shifted window views of the
// gradient back into the image; the bias arrives as a stride-0 broadcast. Each result is one
// correctly rounded float32 operation, so outputs match the TypeScript and wasm kernels bit for bit.
#pragma once
#include <cstdint>

namespace core_cpu {

enum class ElementOp { copy, add, sub, mul, div };

/** The most dims a strided problem may have (core's tensors have at most 8 after a window view). */
constexpr int MAX_RANK = 8;

/** out[i] = op(a[i], b[i]) for every index i of `shape`; each operand's element i is at data + Σ i_d · strides[d]. */
struct StridedProblem {
  ElementOp op;
  int rank;
  int64_t shape[MAX_RANK];
  float* out;
  const float* a;
  const float* b;  // unused by copy
  int64_t outStrides[MAX_RANK], aStrides[MAX_RANK], bStrides[MAX_RANK];
};

/**
 * Runs the problem on up to `threads` threads, rows of the innermost dim split between them. Out may
 * be a or b itself (the same element for the same index); other overlaps are the caller's to avoid.
 */
void strided(const StridedProblem& problem, int threads);

}  // namespace core_cpu
