// Reductions over a set of axes and arg-reductions along one axis. One block per output element
// (grid-stride over outputs), its threads stride over the reduced elements, then a shared-memory
// tree combines the partials. Half inputs accumulate in float, int32 in wrapping 32-bit integers.
#pragma once
#include "common.cuh"

namespace ck {




KF void outerOffsets(const ReduceLayout& L, int64_t i, int64_t& ox, int64_t& oo) {
  ox = L.offsetX;
  oo = L.offsetOut;
  for (int d = L.outerDims - 1; d >= 0; d--) {
    int64_t c = i % L.outerShape[d];
    i /= L.outerShape[d];
    ox += c * L.outerStrideX[d];
    oo += c * L.outerStrideOut[d];
  }
}
KF int64_t innerOffset(const ReduceLayout& L, int64_t j) {
  int64_t o = 0;
  for (int d = L.innerDims - 1; d >= 0; d--) {
    o += (j % L.innerShape[d]) * L.innerStrideX[d];
    j /= L.innerShape[d];
  }
  return o;
}

template <typename A> struct ReduceMath;
template <> struct ReduceMath<float> {
  static KF float identity(int op) {
    return op == R_SUM ? 0.f : op == R_PROD ? 1.f : op == R_MAX ? -INFINITY : INFINITY;
  }
  static KF float combine(int op, float a, float b) {
    switch (op) {
      case R_SUM: return a + b;
      case R_PROD: return a * b;
      case R_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);  // NaN propagates
      default: return (a != a || b != b) ? a + b : (a < b ? a : b);
    }
  }
};
template <> struct ReduceMath<int32_t> {
  static KF int32_t identity(int op) {
    return op == R_SUM ? 0 : op == R_PROD ? 1 : op == R_MAX ? (-2147483647 - 1) : 2147483647;
  }
  static KF int32_t combine(int op, int32_t a, int32_t b) {
    switch (op) {
      case R_SUM: return (int32_t)((uint32_t)a + (uint32_t)b);
      case R_PROD: return (int32_t)((uint32_t)a * (uint32_t)b);
      case R_MAX: return a > b ? a : b;
      default: return a < b ? a : b;
    }
  }
};

/** Reduce T into O (O = T, or float32 for half inputs: mean sums f16/bf16 into an f32 result). */
template <typename T, typename O = T>
__device__ void reduceKernel(ReduceLayout L, int op, const T* x, O* out) {
  using A = typename Io<T>::C;
  __shared__ A partial[REDUCE_THREADS];
  const int t = threadIdx.x, nt = blockDim.x;
  for (int64_t i = blockIdx.x; i < L.outer; i += gridDim.x) {
    int64_t ox, oo;
    outerOffsets(L, i, ox, oo);
    A acc = ReduceMath<A>::identity(op);
    for (int64_t j = t; j < L.inner; j += nt) acc = ReduceMath<A>::combine(op, acc, Io<T>::load(x + ox + innerOffset(L, j)));
    partial[t] = acc;
    __syncthreads();
    for (int s = nt / 2; s > 0; s >>= 1) {
      if (t < s) partial[t] = ReduceMath<A>::combine(op, partial[t], partial[t + s]);
      __syncthreads();
    }
    if (t == 0) Io<O>::store(out + oo, (typename Io<O>::C)partial[0]);
    __syncthreads();  // partial[0] is read before the next output overwrites it
  }
}

/** The better of two (value, index) candidates: NaN wins (first NaN), else the extreme, ties to the lower index. */
template <typename C>
KF bool argBetter(int op, C v, int64_t vi, C w, int64_t wi) {
  bool vNan = v != v, wNan = w != w;
  if (vNan || wNan) return vNan && (!wNan || vi < wi);
  if (v == w) return vi < wi;
  return op == A_ARGMAX ? v > w : v < w;
}

template <typename T>
__device__ void argReduceKernel(ReduceLayout L, int op, const T* x, int32_t* out) {
  using C = typename Io<T>::C;
  __shared__ C vals[REDUCE_THREADS];
  __shared__ int64_t idxs[REDUCE_THREADS];
  const int t = threadIdx.x, nt = blockDim.x;
  for (int64_t i = blockIdx.x; i < L.outer; i += gridDim.x) {
    int64_t ox, oo;
    outerOffsets(L, i, ox, oo);
    C best = 0;
    int64_t bi = -1;
    for (int64_t j = t; j < L.inner; j += nt) {
      C v = Io<T>::load(x + ox + innerOffset(L, j));
      if (bi < 0 || argBetter(op, v, j, best, bi)) { best = v; bi = j; }
    }
    vals[t] = best;
    idxs[t] = bi;
    __syncthreads();
    for (int s = nt / 2; s > 0; s >>= 1) {
      if (t < s && idxs[t + s] >= 0 && (idxs[t] < 0 || argBetter(op, vals[t + s], idxs[t + s], vals[t], idxs[t]))) {
        vals[t] = vals[t + s];
        idxs[t] = idxs[t + s];
      }
      __syncthreads();
    }
    if (t == 0) out[oo] = (int32_t)(idxs[0] < 0 ? 0 : idxs[0]);
    __syncthreads();
  }
}

}  // namespace ck
