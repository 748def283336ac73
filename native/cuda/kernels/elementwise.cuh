// Elementwise primitives over strided operands: unary, binary, compare, where, cast, copy, fill.
// One kernel per storage type and op family; the op is a launch argument switched on per element
// (uniform across a warp, so the branch costs little) — this keeps the fatbin and CI build small.
#pragma once
#include "common.cuh"

namespace ck {

// The helpers the generated expressions call (scripts/codegen/expressions.mjs), named as their WGSL
// twins in packages/backend-webgpu/src/wgsl/lib.ts so that one expression serves both targets.

/** Python's modulo: the result takes the divisor's sign (PyTorch's remainder). */
KF float remainder_f(float a, float b) {
  float m = fmodf(a, b);
  if (m != 0.f && ((m < 0.f) != (b < 0.f))) m += b;
  return m;
}

/** Python's modulo on int32. A GPU cannot throw: division by zero gives 0 (the CPU backend raises instead). */
KF int32_t remainder_i(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (b == -1) return 0;  // INT_MIN % -1 traps on x86 and is 0 mathematically
  int32_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

KF int32_t pow_i(int32_t a, int32_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((-(int64_t)b) % 2 ? -1 : 1) : 0;
  uint32_t r = 1, base = (uint32_t)a;
  for (uint32_t e = (uint32_t)b; e; e >>= 1) {
    if (e & 1u) r *= base;
    base *= base;
  }
  return (int32_t)r;
}

}  // namespace ck

// unaryFloat/Int/Bool, binaryFloat/Int/Bool, compareValues: the per-op expressions.
#include "../generated/elementwise-expressions.cuh"

namespace ck {

// Each storage type's value kind: floating types compute in float, int32 in int, bool as 0/1 int.
template <typename T> KF typename Io<T>::C applyUnary(int op, typename Io<T>::C x) { return unaryFloat(op, x); }
template <> KF int32_t applyUnary<int32_t>(int op, int32_t x) { return unaryInt(op, x); }
template <> KF int32_t applyUnary<uint8_t>(int op, int32_t x) { return unaryBool(op, x); }
template <typename T> KF typename Io<T>::C applyBinary(int op, typename Io<T>::C a, typename Io<T>::C b) { return binaryFloat(op, a, b); }
template <> KF int32_t applyBinary<int32_t>(int op, int32_t a, int32_t b) { return binaryInt(op, a, b); }
template <> KF int32_t applyBinary<uint8_t>(int op, int32_t a, int32_t b) { return binaryBool(op, a, b); }

// Operand slots in Layout: 0 is always out.
template <typename T>
__device__ void unaryKernel(Layout L, int op, const T* __restrict__ x, T* __restrict__ out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[2];
    offsetsOf(L, i, o);
    Io<T>::store(out + o[0], applyUnary<T>(op, Io<T>::load(x + o[1])));
  }
}

template <typename T>
__device__ void binaryKernel(Layout L, int op, const T* a, const T* b, T* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[3];
    offsetsOf(L, i, o);
    Io<T>::store(out + o[0], applyBinary<T>(op, Io<T>::load(a + o[1]), Io<T>::load(b + o[2])));
  }
}

template <typename T>
__device__ void compareKernel(Layout L, int op, const T* a, const T* b, uint8_t* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[3];
    offsetsOf(L, i, o);
    out[o[0]] = compareValues(op, Io<T>::load(a + o[1]), Io<T>::load(b + o[2])) ? 1 : 0;
  }
}

/** `where` moves raw elements, so one kernel per element size serves every dtype. */
template <typename W>
__device__ void whereKernel(Layout L, const uint8_t* cond, const W* a, const W* b, W* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[4];
    offsetsOf(L, i, o);
    out[o[0]] = cond[o[1]] ? a[o[2]] : b[o[3]];
  }
}

template <typename W>
__device__ void copyKernel(Layout L, const W* x, W* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[2];
    offsetsOf(L, i, o);
    out[o[0]] = x[o[1]];
  }
}

template <typename W>
__device__ void fillKernel(Layout L, W value, W* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[1];
    offsetsOf(L, i, o);
    out[o[0]] = value;
  }
}

/** int32 → bfloat16 with a single rounding (int → float → bf16 would round twice). */
KF uint16_t intToBf16(int32_t v) {
  if (v == 0) return 0;
  uint32_t sign = v < 0 ? 0x8000u : 0u;
  uint32_t m = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
  int p = 31;
  while (!(m >> p)) p--;  // position of the leading one
  uint32_t q = m, exp = (uint32_t)p;
  if (p > 7) {
    int shift = p - 7;
    q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    if (q == 256u) { q = 128u; exp++; }
  } else {
    q = m << (7 - p);
  }
  return (uint16_t)(sign | ((exp + 127u) << 7) | (q & 0x7fu));
}

/** Float → int32 truncating toward zero; NaN gives 0 and out-of-range saturates (unspecified by the contract). */
KF int32_t floatToInt(float v) {
  if (v != v) return 0;
  if (v >= 2147483648.f) return 2147483647;
  if (v <= -2147483648.f) return (-2147483647 - 1);
  return (int32_t)v;
}

/** Cast between any two storage types. */
template <typename S, typename D>
KF void castOne(const S* src, D* dst) {
  Io<D>::store(dst, (typename Io<D>::C)Io<S>::load(src));
}
template <> KF void castOne<float, int32_t>(const float* s, int32_t* d) { *d = floatToInt(*s); }
template <> KF void castOne<f16, int32_t>(const f16* s, int32_t* d) { *d = floatToInt(f16ToFloat(s->bits)); }
template <> KF void castOne<bf16, int32_t>(const bf16* s, int32_t* d) { *d = floatToInt(bf16ToFloat(s->bits)); }
template <> KF void castOne<int32_t, bf16>(const int32_t* s, bf16* d) { d->bits = intToBf16(*s); }
template <> KF void castOne<float, uint8_t>(const float* s, uint8_t* d) { *d = *s != 0.f; }
template <> KF void castOne<f16, uint8_t>(const f16* s, uint8_t* d) { *d = f16ToFloat(s->bits) != 0.f; }
template <> KF void castOne<bf16, uint8_t>(const bf16* s, uint8_t* d) { *d = bf16ToFloat(s->bits) != 0.f; }

template <typename S, typename D>
__device__ void castKernel(Layout L, const S* x, D* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[2];
    offsetsOf(L, i, o);
    castOne<S, D>(x + o[1], out + o[0]);
  }
}

}  // namespace ck
