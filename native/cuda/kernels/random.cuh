// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11), the contract's stream.
#pragma once
#include "common.cuh"

namespace ck {

KF void philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1, uint32_t (&out)[4]) {
  uint32_t x0 = c0, x1 = c1, x2 = c2, x3 = c3;
  for (int round = 0; round < 10; round++) {
    if (round > 0) { k0 += 0x9e3779b9u; k1 += 0xbb67ae85u; }
    uint64_t p0 = (uint64_t)0xd2511f53u * x0, p1 = (uint64_t)0xcd9e8d57u * x2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    x0 = hi1 ^ x1 ^ k0;
    x1 = lo1;
    x2 = hi0 ^ x3 ^ k1;
    x3 = lo0;
  }
  out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}


/** One thread per 4-word block: element i is word i mod 4 of the block at counter offset + i/4. */
__device__ inline void randomKernel(RandomArgs a, void* out) {
  CK_GRID_LOOP(blk, (a.n + 3) / 4) {
    uint64_t c = a.offset + (uint64_t)blk;
    uint32_t w[4];
    philox((uint32_t)c, (uint32_t)(c >> 32), 0u, 0u, a.k0, a.k1, w);
    for (int k = 0; k < 4; k++) {
      int64_t i = blk * 4 + k;
      if (i >= a.n) break;
      if (a.kind == 0) ((float*)out)[i] = (float)(w[k] >> 8) * 5.9604644775390625e-8f;
      else ((int32_t*)out)[i] = (int32_t)((int64_t)a.low + (int64_t)(((uint64_t)w[k] * a.range) >> 32));
    }
  }
}

}  // namespace ck
