// Kernels along one axis (contract 1.3.0): argsort as a bitonic network over padded (key, position)
// pairs, the running reductions (cumsum, cumprod) and scatter with a combine mode. Running values
// and scatters take one thread per fibre, in index order, so their results are the cpu backend's
// (and deterministic: no atomics).
#pragma once
#include "common.cuh"

namespace ck {

// Arithmetic by accumulator type: float rounds each step (never contracted), int32 wraps like C.
KF float wrapAdd(float a, float b) { return __fadd_rn(a, b); }
KF float wrapMul(float a, float b) { return __fmul_rn(a, b); }
KF int32_t wrapAdd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
KF int32_t wrapMul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
KF bool isNaN(float v) { return v != v; }
KF bool isNaN(int32_t) { return false; }
KF float nanOf(float) { return bitsFloat(0x7fc00000u); }
KF int32_t nanOf(int32_t v) { return v; }

/** Order-preserving bits of a value: NaN the largest, both zeros equal; int32 and bool flip the sign bit. */
KF uint32_t sortKey(float v) {
  uint32_t b = floatBits(v);
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if ((b & 0x7fffffffu) == 0u) return 0x80000000u;
  return (b >> 31) ? ~b : (b | 0x80000000u);
}
KF uint32_t sortKey(int32_t v) { return (uint32_t)v ^ 0x80000000u; }

/**
 * The pairs of a [fibres, padded] sort: keys at [0, total), positions at [total, 2·total). L walks
 * [fibres…, padded] with operands [0] the keys (contiguous) and [1] x along the sorted axis, read
 * only below n; padding gets the largest key and a position past the end, so it sorts last.
 */
template <typename T>
__device__ void argsortKeysKernel(Layout L, int64_t padded, int64_t n, int descending, int64_t total, const T* x, uint32_t* pairs) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[2];
    offsetsOf(L, i, o);
    const int64_t j = i % padded;
    uint32_t key = 0xffffffffu;
    if (j < n) {
      key = sortKey(Io<T>::load(x + o[1]));
      if (descending) key = ~key;
    }
    pairs[o[0]] = key;
    pairs[total + o[0]] = (uint32_t)j;
  }
}

/** One bitonic stage (block size k, distance j) over every fibre: pairs compare by (key, position), a total order. */
__device__ inline void argsortStepKernel(int64_t threads, int64_t padded, int64_t k, int64_t j, int64_t total, uint32_t* pairs) {
  CK_GRID_LOOP(i, threads) {
    const int64_t f = i / (padded / 2), q = i % (padded / 2);
    const int64_t at = (q / j) * 2 * j + (q % j);
    const int64_t lo = f * padded + at, hi = lo + j;
    const uint32_t kl = pairs[lo], kh = pairs[hi], il = pairs[total + lo], ih = pairs[total + hi];
    const bool greater = kl > kh || (kl == kh && il > ih);
    if (greater == ((at & k) == 0)) {
      pairs[lo] = kh; pairs[hi] = kl;
      pairs[total + lo] = ih; pairs[total + hi] = il;
    }
  }
}

/** Inclusive running sum or product along the axis, one thread per fibre: L's operands [0] out, [1] x; A is the accumulator (float or int32, which wraps). */
template <typename T, typename A>
__device__ void cumulativeKernel(Layout L, AxisWalk w, int op, const T* x, T* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[2];
    offsetsOf(L, i, o);
    A acc = op == CU_CUMSUM ? (A)0 : (A)1;
    for (int64_t j = 0; j < w.length; j++) {
      const A v = (A)Io<T>::load(x + o[1] + j * w.stride[1]);
      acc = op == CU_CUMSUM ? wrapAdd(acc, v) : wrapMul(acc, v);
      Io<T>::store(out + o[0] + j * w.stride[0], (typename Io<T>::C)acc);
    }
  }
}

/** How scatter combines the current element with a src value (NaN wins amax and amin). */
template <typename C>
KF C scatterCombine(int mode, C cur, C v) {
  switch (mode) {
    case S_PROD: return wrapMul(cur, v);
    case S_AMAX: return isNaN(cur) || isNaN(v) ? nanOf(cur) : (cur > v ? cur : v);
    case S_AMIN: return isNaN(cur) || isNaN(v) ? nanOf(cur) : (cur < v ? cur : v);
    default: return v;
  }
}

/**
 * scatter, one thread per fibre of index along the axis applying its contributions in order (no
 * other thread touches those elements of out): L's operands [0] out, [1] index, [2] src, over
 * index's other dims. Each combination is rounded on store; indices out of range are skipped.
 */
template <typename T>
__device__ void scatterKernel(Layout L, AxisWalk w, int mode, T* out, const int32_t* index, const T* src) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[3];
    offsetsOf(L, i, o);
    for (int64_t j = 0; j < w.length; j++) {
      const int32_t at = index[o[1] + j * w.stride[1]];
      if (at < 0 || at >= w.size) continue;
      T* p = out + o[0] + (int64_t)at * w.stride[0];
      Io<T>::store(p, scatterCombine(mode, Io<T>::load(p), Io<T>::load(src + o[2] + j * w.stride[2])));
    }
  }
}

}  // namespace ck
