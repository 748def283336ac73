// The x86-64 micro-kernels. Each function enables its own ISA with a target attribute, so this file
// compiles for baseline x86-64 and the caller picks a kernel only after CPUID says it may run.
// Accumulators live in registers: AVX-512 keeps 14×32 floats in 28 zmm (of 32), AVX2 6×16 in 12
// ymm (of 16); each step loads one packed row of b and broadcasts one packed a value per row.
// Operands whose depth is contiguous pack by register transposes of 16×16 (8×8) tiles.
#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>

#include "transpose.h"

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

/**
 * Each mr-row panel in slices of 16 rows (one for mr = 14, two for 32) and 16 depth steps: loads
 * a step run of each row (masked at the depth's end, zero past the last row), transposes the tile,
 * stores each step's row lanes.
 */
__attribute__((target("avx512f"))) void avx512PackRows(const float* x, int64_t rows, int64_t kc, int64_t rs, int mr, float* dst) {
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += kc * mr) {
    for (int h = 0; h < mr; h += 16) {
      const int64_t live = std::clamp<int64_t>(rows - i0 - h, 0, 16);
      const float* src = x + (i0 + h) * rs;
      for (int64_t p0 = 0; p0 < kc; p0 += 16) {
        const int steps = static_cast<int>(std::min<int64_t>(16, kc - p0));
        const __mmask16 depth = static_cast<__mmask16>((1u << steps) - 1);
        __m512 t[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
          t[i] = i >= live ? _mm512_setzero_ps() : steps == 16 ? _mm512_loadu_ps(src + i * rs + p0) : _mm512_maskz_loadu_ps(depth, src + i * rs + p0);
        }
        transposeTile<16>(t);
        float* d = dst + p0 * mr + h;
        // Whole 16-lane stores (masked stores are slow on some AVX-512 CPUs, AMD's): with mr = 14 a
        // store's last two lanes spill into the next step's slot, which is stored after it, or past
        // the last panel, into the slack the callers leave (PACK_SLACK_FLOATS).
        if (steps == 16) {
#pragma GCC unroll 16
          for (int q = 0; q < 16; ++q) _mm512_storeu_ps(d + q * mr, t[q]);
        } else {
          for (int q = 0; q < steps; ++q) _mm512_storeu_ps(d + q * mr, t[q]);
        }
      }
    }
  }
}

/** avx512PackRows with 8×8 tiles, the masks as lane vectors. */
__attribute__((target("avx2"))) void avx2PackRows(const float* x, int64_t rows, int64_t kc, int64_t rs, int mr, float* dst) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += kc * mr) {
    for (int h = 0; h < mr; h += 8) {
      const int64_t live = std::clamp<int64_t>(rows - i0 - h, 0, 8);
      const int width = std::min(8, mr - h);
      const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(width), iota);
      const float* src = x + (i0 + h) * rs;
      for (int64_t p0 = 0; p0 < kc; p0 += 8) {
        const int steps = static_cast<int>(std::min<int64_t>(8, kc - p0));
        const __m256i depth = _mm256_cmpgt_epi32(_mm256_set1_epi32(steps), iota);
        __m256 t[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          const float* row = src + i * rs + p0;
          t[i] = i >= live ? _mm256_setzero_ps() : steps == 8 ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, depth);
        }
        transposeTile<8>(t);
        float* d = dst + p0 * mr + h;
        if (steps == 8 && width == 8) {
#pragma GCC unroll 8
          for (int q = 0; q < 8; ++q) _mm256_storeu_ps(d + q * mr, t[q]);
        } else {
          for (int q = 0; q < steps; ++q) _mm256_maskstore_ps(d + q * mr, lanes, t[q]);
        }
      }
    }
  }
}

}  // namespace

MicroKernel avx512Kernel() { return {"avx512", AVX512_MR, AVX512_NR, avx512Run, avx512PackRows}; }
MicroKernel avx2Kernel() { return {"avx2", AVX2_MR, AVX2_NR, avx2Run, avx2PackRows}; }

}  // namespace core_cpu

#else

namespace core_cpu {

MicroKernel avx512Kernel() { return {"avx512", 0, 0, nullptr, nullptr}; }
MicroKernel avx2Kernel() { return {"avx2", 0, 0, nullptr, nullptr}; }

}  // namespace core_cpu

#endif
