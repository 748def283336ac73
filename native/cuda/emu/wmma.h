// The tensor-core fragment API (nvcuda::wmma) for the CPU emulation. On a GPU a fragment is spread
// over the 32 threads of a warp; here every thread holds the whole 16×16 tile and computes it,
// so each thread of a warp writes the same values: the semantics (which elements meet which, fp32
// accumulation) are the GPU's, the distribution over lanes is not modelled.
#pragma once
#include <stdint.h>
#include <string.h>

/** Half-precision element types as 16-bit patterns; conversions come from kernels/common.cuh. */
struct __half { uint16_t bits; };
struct __nv_bfloat16 { uint16_t bits; };

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

inline float toFloat(const __half& h) { return ck::f16ToFloat(h.bits); }
inline float toFloat(const __nv_bfloat16& h) { return ck::bf16ToFloat(h.bits); }

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static constexpr int ROWS = std::is_same<Use, matrix_b>::value ? K : M;
  static constexpr int COLS = std::is_same<Use, matrix_a>::value ? K : N;
  float x[ROWS * COLS];
};

template <typename Use, int M, int N, int K, typename T, typename L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, float v) {
  for (float& e : f.x) e = v;
}

template <typename Use, int M, int N, int K, typename T>
inline void load_matrix_sync(fragment<Use, M, N, K, T, row_major>& f, const T* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, row_major>;
  for (int r = 0; r < F::ROWS; r++)
    for (int c = 0; c < F::COLS; c++) {
      T v;
      memcpy(&v, p + (size_t)r * ldm + c, sizeof v);
      f.x[r * F::COLS + c] = toFloat(v);
    }
}

template <int M, int N, int K, typename T>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, row_major>& a,
                     const fragment<matrix_b, M, N, K, T, row_major>& b, const fragment<accumulator, M, N, K, float>& c) {
  float out[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = c.x[i * N + j];
      for (int k = 0; k < K; k++) acc += a.x[i * K + k] * b.x[k * N + j];
      out[i * N + j] = acc;
    }
  memcpy(d.x, out, sizeof out);
}

template <int M, int N, int K>
inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout) {
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      if (layout == mem_row_major) p[(size_t)r * ldm + c] = f.x[r * N + c];
      else p[(size_t)c * ldm + r] = f.x[r * N + c];
    }
}

}  // namespace wmma
}  // namespace nvcuda
