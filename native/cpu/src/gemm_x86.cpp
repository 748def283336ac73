// The x86-64 micro-kernels. Each function enables its own ISA with a target attribute, so this file
// compiles for baseline x86-64 and the caller picks a kernel only after CPUID says it may run.
// Accumulators live in registers: AVX-512 keeps 14×32 floats in 28 zmm (of 32), AVX2 6×16 in 12
// ymm (of 16); each step loads one packed row of b and broadcasts one packed a value per row.
#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace core_cpu {

namespace {

constexpr int AVX512_MR = 14, AVX512_NR = 32;
constexpr int AVX2_MR = 6, AVX2_NR = 16;

__attribute__((target("avx512f"))) void avx512Run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m512 acc[AVX512_MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < AVX512_MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, a += AVX512_MR, b += AVX512_NR) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int i = 0; i < AVX512_MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < AVX512_MR; ++i, c += ldc) {
    if (accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(c));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(c + 16));
    }
    _mm512_storeu_ps(c, acc[i][0]);
    _mm512_storeu_ps(c + 16, acc[i][1]);
  }
}

__attribute__((target("avx2,fma"))) void avx2Run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m256 acc[AVX2_MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < AVX2_MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, a += AVX2_MR, b += AVX2_NR) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < AVX2_MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < AVX2_MR; ++i, c += ldc) {
    if (accumulate) {
      acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(c));
      acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(c + 8));
    }
    _mm256_storeu_ps(c, acc[i][0]);
    _mm256_storeu_ps(c + 8, acc[i][1]);
  }
}

}  // namespace

MicroKernel avx512Kernel() { return {"avx512", AVX512_MR, AVX512_NR, avx512Run}; }
MicroKernel avx2Kernel() { return {"avx2", AVX2_MR, AVX2_NR, avx2Run}; }

}  // namespace core_cpu

#else

namespace core_cpu {

MicroKernel avx512Kernel() { return {"avx512", 0, 0, nullptr}; }
MicroKernel avx2Kernel() { return {"avx2", 0, 0, nullptr}; }

}  // namespace core_cpu

#endif
