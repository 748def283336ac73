// gather / scatterAdd along dim 1 of 3-D views (core reshapes every call to [outer, dim, inner]).
#pragma once
#include "common.cuh"

namespace ck {


template <typename T>
__device__ void gatherKernel(IndexArgs a, const T* x, const int32_t* index, T* out) {
  CK_GRID_LOOP(i, a.n0 * a.n1 * a.n2) {
    int64_t i2 = i % a.n2, r = i / a.n2, i1 = r % a.n1, i0 = r / a.n1;
    int64_t j = index[a.iOff + i0 * a.is0 + i1 * a.is1 + i2 * a.is2];
    out[a.oOff + i0 * a.os0 + i1 * a.os1 + i2 * a.os2] = x[a.xOff + i0 * a.xs0 + j * a.xs1 + i2 * a.xs2];
  }
}

/** target[i0][index][i2] += src[i0][i1][i2]; the target is float (half and float data) or int32. */
template <typename S, typename D>
__device__ void scatterAddKernel(IndexArgs a, D* target, const int32_t* index, const S* src) {
  CK_GRID_LOOP(i, a.n0 * a.n1 * a.n2) {
    int64_t i2 = i % a.n2, r = i / a.n2, i1 = r % a.n1, i0 = r / a.n1;
    int64_t j = index[a.iOff + i0 * a.is0 + i1 * a.is1 + i2 * a.is2];
    atomicAdd(target + a.xOff + i0 * a.xs0 + j * a.xs1 + i2 * a.xs2, (D)Io<S>::load(src + a.oOff + i0 * a.os0 + i1 * a.os1 + i2 * a.os2));
  }
}

}  // namespace ck
