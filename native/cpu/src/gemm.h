// fp32 batched GEMM: out[b] = a[b] @ b[b] for strided operands (any strides, a batch stride of 0
// broadcasts), in the BLIS scheme: operands are packed into panels (MR rows of a, NR columns of b,
// zero-padded) per cache block, and a register-blocked micro-kernel computes one MR×NR tile of
// out at a time with fused multiply-adds.
#pragma once
#include <cstdint>

namespace core_cpu {

/** One operand: its first element and its strides (in elements) along batch, rows, columns. */
struct Operand {
  const float* data;
  int64_t batchStride, rowStride, colStride;
};

struct GemmProblem {
  int64_t batches, m, n, k;
  Operand a, b;
  float* out;
  int64_t outBatchStride, outRowStride, outColStride;
};

/**
 * c[MR×NR] (row stride ldc, column stride 1) = (accumulate ? c : 0) + Σ_p a[p][0..MR) ⊗ b[p][0..NR)
 * over kc steps of the packed panels a (kc×MR) and b (kc×NR, 64-byte aligned).
 */
using MicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate);

/**
 * Packs rows [0, rows) × depth [0, kc) of x whose depth is contiguous (x[i·rs + p]) into mr-row
 * panels, panel[p][i], zero-padded to mr rows: a transpose, done in register tiles. It may write
 * up to PACK_SLACK_FLOATS past the panels' end (whole-vector stores), so buffers leave that room.
 */
constexpr int64_t PACK_SLACK_FLOATS = 16;
using PackRowsFn = void (*)(const float* x, int64_t rows, int64_t kc, int64_t rs, int mr, float* dst);

struct MicroKernel {
  const char* name;
  int mr, nr;
  MicroKernelFn run;
  /** The transposing pack in the kernel's ISA (for a row-major a and a transposed b). */
  PackRowsFn packRows;
};

/** The AVX-512 and AVX2+FMA kernels; `run` is null where the build target is not x86-64. */
MicroKernel avx512Kernel();
MicroKernel avx2Kernel();
/** Plain C++ that the compiler vectorizes for the baseline ISA: for CPUs with neither. */
MicroKernel portableKernel();

/**
 * Runs the problem with `kernel` on up to `threads` threads, as outᵀ = bᵀ·aᵀ where that pads the
 * micro-tiles far less (few columns, many rows). Throws std::bad_alloc when scratch cannot be had.
 */
void gemm(const GemmProblem& problem, const MicroKernel& kernel, int threads);

}  // namespace core_cpu
