// An in-register transpose of an N×N tile of 32-bit lanes (N = 8 or 16 rows, each a GCC vector of N
// lanes): the core of the GEMM's packing of operands whose depth is contiguous. Written with GCC's
// generic vector shuffles in the patterns of x86's unpack and 128-bit lane shuffles, so that one
// source serves AVX-512 (16×16 zmm tiles: vunpck*, vshuff32x4) and AVX (8×8 ymm tiles: vunpck*,
// vperm2f128). Lanes are moved, never computed on: any 32-bit payload (an f32, a pair of bf16)
// passes through bit for bit.
#pragma once
#include <cstdint>

namespace core_cpu {

/** The lane indices of __builtin_shuffle for N lanes of 32 bits. */
template <int N>
struct ShuffleMask;
template <>
struct ShuffleMask<8> {
  typedef int32_t type __attribute__((vector_size(32)));
};
template <>
struct ShuffleMask<16> {
  typedef int32_t type __attribute__((vector_size(64)));
};

/** r[i][j] ↔ r[j][i]. Shuffle indices count a's lanes then b's; a 128-bit lane holds 4. */
template <int N, typename V>
__attribute__((always_inline)) inline void transposeTile(V* r) {
  static_assert(N == 8 || N == 16, "tiles of 8 or 16 lanes");
  typename ShuffleMask<N>::type lo32, hi32, lo64, hi64, even, odd;
  for (int j = 0; j < N; ++j) {
    const int lane = j & ~3, k = j & 3;
    lo32[j] = lane + (k >> 1) + (k & 1) * N;  // per 128-bit lane: a0 b0 a1 b1
    hi32[j] = lo32[j] + 2;                    // a2 b2 a3 b3
    lo64[j] = lane + (k & 1) + (k >> 1) * N;  // a0 a1 b0 b1
    hi64[j] = lo64[j] + 2;                    // a2 a3 b2 b3
    even[j] = 2 * lane + k;                   // the even 128-bit lanes of a then b
    odd[j] = even[j] + 4;                     // the odd ones
  }
  V t[N];
#pragma GCC unroll 16
  for (int i = 0; i < N; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], lo32);
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi32);
  }
  // r[4j + c], 128-bit lane L: column 4L + c of rows 4j..4j+3.
#pragma GCC unroll 16
  for (int j = 0; j < N; j += 4) {
    r[j] = __builtin_shuffle(t[j], t[j + 2], lo64);
    r[j + 1] = __builtin_shuffle(t[j], t[j + 2], hi64);
    r[j + 2] = __builtin_shuffle(t[j + 1], t[j + 3], lo64);
    r[j + 3] = __builtin_shuffle(t[j + 1], t[j + 3], hi64);
  }
  // Column 4L + c gathers lane L of r[c], r[4 + c] (, r[8 + c], r[12 + c]).
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const V even0 = __builtin_shuffle(r[c], r[4 + c], even), odd0 = __builtin_shuffle(r[c], r[4 + c], odd);
    if constexpr (N == 8) {
      t[c] = even0;
      t[4 + c] = odd0;
    } else {
      const V even1 = __builtin_shuffle(r[8 + c], r[12 + c], even), odd1 = __builtin_shuffle(r[8 + c], r[12 + c], odd);
      t[c] = __builtin_shuffle(even0, even1, even);
      t[4 + c] = __builtin_shuffle(odd0, odd1, even);
      t[8 + c] = __builtin_shuffle(even0, even1, odd);
      t[12 + c] = __builtin_shuffle(odd0, odd1, odd);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < N; ++i) r[i] = t[i];
}

}  // namespace core_cpu
