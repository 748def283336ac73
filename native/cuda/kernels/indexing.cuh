// gather / scatterAdd along any dim, any rank. The launch iterates over the index's positions with
// a Layout whose operands are [0] out (gather) or src (scatterAdd), [1] index and [2] x (gather) or
// the accumulation target (scatterAdd) with its stride along `dim` set to 0: the index value times
// `dimStride` supplies that coordinate instead.
#pragma once
#include "common.cuh"

namespace ck {

template <typename W>
__device__ void gatherKernel(Layout L, int64_t dimStride, const W* x, const int32_t* index, W* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[3];
    offsetsOf(L, i, o);
    out[o[0]] = x[o[2] + (int64_t)index[o[1]] * dimStride];
  }
}

/** target[…index…] += src[…]; the target is float (half and float data) or int32, so duplicates add in f32 / i32. */
template <typename S, typename D>
__device__ void scatterAddKernel(Layout L, int64_t dimStride, D* target, const int32_t* index, const S* src) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[3];
    offsetsOf(L, i, o);
    atomicAdd(target + o[2] + (int64_t)index[o[1]] * dimStride, (D)Io<S>::load(src + o[0]));
  }
}

}  // namespace ck
