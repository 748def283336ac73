// Shared by every kernel: portability between nvcc and the host emulation (emu/emu.h), the storage
// types, fp16/bf16 conversions and strided indexing. The same text is compiled by nvcc into the
// fatbin and by g++ into the kernel tests, so nothing here may use a CUDA-only intrinsic outside
// an `#ifdef __CUDA_ARCH__` branch that has a host twin.
#pragma once
#include <stdint.h>
#include <math.h>

#include "args.h"

#if !defined(__CUDACC__) && defined(CK_HOST_ONLY)
// The addon's host code: the structs and the conversions, no kernels.
#define __device__
#define __host__
#define __forceinline__ inline
#elif !defined(__CUDACC__)
#include "../emu/emu.h"
#endif

#define KF __device__ __forceinline__
#define KF_HOST_DEVICE __host__ __device__ __forceinline__

namespace ck {


/** 16-bit storage words: the kernels convert them to float on load and round once on store. */
struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };

KF_HOST_DEVICE uint32_t floatBits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u; __builtin_memcpy(&u, &f, 4); return u;
#endif
}
KF_HOST_DEVICE float bitsFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f; __builtin_memcpy(&f, &u, 4); return f;
#endif
}

/** float → bfloat16, round to nearest even; NaN stays a quiet NaN with its sign. */
KF_HOST_DEVICE uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
KF_HOST_DEVICE float bf16ToFloat(uint16_t h) { return bitsFloat((uint32_t)h << 16); }

/**
 * float → IEEE binary16, round to nearest even: overflow goes to ±Inf, subnormals are kept, NaN
 * stays a quiet NaN. Works on the bits so the host tests check exactly what the GPU runs.
 */
KF_HOST_DEVICE uint16_t floatToF16(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // ≥ 65520 rounds to Inf (Inf included)
  if (a >= 0x38800000u) {                                   // normal half: ≥ 2^-14
    uint32_t mant = a + 0xc8000fffu + ((a >> 13) & 1u);      // rebias exponent (−112 << 23) and round
    return (uint16_t)(sign | (mant >> 13));
  }
  if (a < 0x33000000u) return sign;                          // < 2^-25: rounds to ±0 (2^-25 itself is a tie to 0)
  // Subnormal half: value = m · 2^-24 with m = round(a_value · 2^24).
  uint32_t e = a >> 23;                                      // 102..112
  uint32_t m = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - e;                                  // bits to drop: 14..24
  uint32_t q = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}
KF_HOST_DEVICE float f16ToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bitsFloat(sign | 0x7f800000u | (m << 13));
  if (e != 0) return bitsFloat(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return bitsFloat(sign);
  // Subnormal: m · 2^-24, exact in float.
  float v = (float)m * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

/** Load/store by storage type. Floating types compute in float, int32 in int, bool as 0/1. */
template <typename T> struct Io;
template <> struct Io<float> {
  using C = float;
  static KF C load(const float* p) { return *p; }
  static KF void store(float* p, C v) { *p = v; }
};
template <> struct Io<f16> {
  using C = float;
  static KF C load(const f16* p) { return f16ToFloat(p->bits); }
  static KF void store(f16* p, C v) { p->bits = floatToF16(v); }
};
template <> struct Io<bf16> {
  using C = float;
  static KF C load(const bf16* p) { return bf16ToFloat(p->bits); }
  static KF void store(bf16* p, C v) { p->bits = floatToBf16(v); }
};
template <> struct Io<int32_t> {
  using C = int32_t;
  static KF C load(const int32_t* p) { return *p; }
  static KF void store(int32_t* p, C v) { *p = v; }
};
template <> struct Io<uint8_t> {
  using C = int32_t;
  static KF C load(const uint8_t* p) { return *p ? 1 : 0; }
  static KF void store(uint8_t* p, C v) { *p = v ? 1 : 0; }
};


/** Element offsets of linear index i (row-major over shape) for the first `n` operands. */
template <int N>
KF void offsetsOf(const Layout& L, int64_t i, int64_t (&off)[N]) {
  for (int k = 0; k < N; k++) off[k] = L.offset[k];
  for (int d = L.ndim - 1; d >= 0; d--) {
    int64_t s = L.shape[d];
    int64_t c = i % s;
    i /= s;
    for (int k = 0; k < N; k++) off[k] += c * L.stride[k][d];
  }
}

/** Under nvcc, fully unroll the loop that follows (a constant trip count), so the arrays it indexes stay in registers. */
#ifdef __CUDACC__
#define CK_UNROLL _Pragma("unroll")
#else
#define CK_UNROLL
#endif

/** Grid-stride loop bounds, 64-bit so tensors over 2^31 elements index correctly. */
#define CK_GRID_LOOP(i, n)                                                              \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);            \
       i += (int64_t)blockDim.x * gridDim.x)

}  // namespace ck
