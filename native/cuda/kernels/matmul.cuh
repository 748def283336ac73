// Batched GEMM fallbacks used when cuBLASLt is absent or the layout does not suit it:
// - tiledMatmul: 64×64 output tile per block, 16-deep K slices staged in shared memory, each of the
//   256 threads accumulating a 4×4 micro-tile (float for float types, wrapping u32 for int32).
//   Operands are loaded through their strides, so transposes and broadcast batches need no copies.
// - wmmaMatmul (sm_80+; emulated fragments in the kernel tests): fp16/bf16 tensor cores; tiles are staged in shared memory as
//   16-bit values and multiplied by 16×16×16 wmma fragments with fp32 accumulators.
#pragma once
#include "common.cuh"

namespace ck {



template <typename T> struct MatAcc { using A = float; static KF A load(const T* p) { return Io<T>::load(p); } };
template <> struct MatAcc<int32_t> { using A = uint32_t; static KF A load(const int32_t* p) { return (uint32_t)*p; } };

template <typename T>
__device__ void tiledMatmul(MatmulArgs g, const T* a, const T* b, T* out) {
  using A = typename MatAcc<T>::A;
  __shared__ A As[MM_KTILE][MM_TILE + 1];  // As[k][row]: +1 column avoids bank conflicts on the transposed store
  __shared__ A Bs[MM_KTILE][MM_TILE];
  const int t = threadIdx.x;
  const int tr = t / 16, tc = t % 16;  // this thread's 4×4 micro-tile: rows tr*4.., cols tc*4..
  // Rows on grid x (up to 2^31 − 1 tiles), columns on y (65535 tiles of 64: N up to ~4M).
  const int64_t row0 = (int64_t)blockIdx.x * MM_TILE, col0 = (int64_t)blockIdx.y * MM_TILE;
  for (int64_t bz = blockIdx.z; bz < g.batch; bz += gridDim.z) {
    const T* ab = a + g.aOff + bz * g.aSb;
    const T* bb = b + g.bOff + bz * g.bSb;
    A acc[4][4];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) acc[i][j] = 0;
    for (int64_t k0 = 0; k0 < g.k; k0 += MM_KTILE) {
      // 64×16 elements of each operand, 4 per thread; out-of-range elements load as zero.
      for (int e = t; e < MM_TILE * MM_KTILE; e += MM_THREADS) {
        int r = e / MM_KTILE, kk = e % MM_KTILE;
        int64_t gr = row0 + r, gk = k0 + kk;
        As[kk][r] = (gr < g.m && gk < g.k) ? MatAcc<T>::load(ab + gr * g.aSm + gk * g.aSk) : (A)0;
        int kr = e / MM_TILE, c = e % MM_TILE;
        int64_t gk2 = k0 + kr, gc = col0 + c;
        Bs[kr][c] = (gk2 < g.k && gc < g.n) ? MatAcc<T>::load(bb + gk2 * g.bSk + gc * g.bSn) : (A)0;
      }
      __syncthreads();
      for (int kk = 0; kk < MM_KTILE; kk++) {
        A av[4], bv[4];
        for (int i = 0; i < 4; i++) av[i] = As[kk][tr * 4 + i];
        for (int j = 0; j < 4; j++) bv[j] = Bs[kk][tc * 4 + j];
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
      }
      __syncthreads();
    }
    T* ob = out + g.oOff + bz * g.oSb;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        int64_t r = row0 + tr * 4 + i, c = col0 + tc * 4 + j;
        if (r < g.m && c < g.n) Io<T>::store(ob + r * g.oSm + c * g.oSn, (typename Io<T>::C)acc[i][j]);
      }
  }
}

}  // namespace ck

#if defined(__CUDACC__)
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define CK_HAS_WMMA 1
#elif !defined(CK_HOST_ONLY)
#include <type_traits>
#include "../emu/wmma.h"  // the kernel tests run the same tensor-core kernel on emulated fragments
#define CK_HAS_WMMA 1
#endif

#ifdef CK_HAS_WMMA
namespace ck {

constexpr int WM_TILE = 64, WM_KTILE = 32, WM_THREADS = 128;

template <typename T> struct WmmaType;
template <> struct WmmaType<f16> { using type = __half; };
template <> struct WmmaType<bf16> { using type = __nv_bfloat16; };

template <typename T>
__device__ void wmmaMatmul(MatmulArgs g, const T* a, const T* b, T* out) {
#if !defined(__CUDACC__) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
  using namespace nvcuda;
  using H = typename WmmaType<T>::type;
  constexpr int LDA = WM_KTILE + 8, LDB = WM_TILE + 8, LDC = WM_TILE + 4;
  __shared__ __align__(32) uint16_t As[WM_TILE * LDA];
  __shared__ __align__(32) uint16_t Bs[WM_KTILE * LDB];
  __shared__ __align__(32) float Cs[WM_TILE * LDC];
  const int t = threadIdx.x, warp = t / 32;
  const int wr = (warp / 2) * 32, wc = (warp % 2) * 32;  // each warp owns a 32×32 quarter
  const int64_t row0 = (int64_t)blockIdx.x * WM_TILE, col0 = (int64_t)blockIdx.y * WM_TILE;
  for (int64_t bz = blockIdx.z; bz < g.batch; bz += gridDim.z) {
    const T* ab = a + g.aOff + bz * g.aSb;
    const T* bb = b + g.bOff + bz * g.bSb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
    for (int64_t k0 = 0; k0 < g.k; k0 += WM_KTILE) {
      for (int e = t; e < WM_TILE * WM_KTILE; e += WM_THREADS) {
        int r = e / WM_KTILE, kk = e % WM_KTILE;
        int64_t gr = row0 + r, gk = k0 + kk;
        As[r * LDA + kk] = (gr < g.m && gk < g.k) ? ab[gr * g.aSm + gk * g.aSk].bits : (uint16_t)0;
        int kr = e / WM_TILE, c = e % WM_TILE;
        int64_t gk2 = k0 + kr, gc = col0 + c;
        Bs[kr * LDB + c] = (gk2 < g.k && gc < g.n) ? bb[gk2 * g.bSk + gc * g.bSn].bits : (uint16_t)0;
      }
      __syncthreads();
      for (int kk = 0; kk < WM_KTILE; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, H, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, H, wmma::row_major> fb[2];
        for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], reinterpret_cast<const H*>(As + (wr + i * 16) * LDA + kk), LDA);
        for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], reinterpret_cast<const H*>(Bs + kk * LDB + wc + j * 16), LDB);
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
      __syncthreads();
    }
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++)
        wmma::store_matrix_sync(Cs + (wr + i * 16) * LDC + wc + j * 16, acc[i][j], LDC, wmma::mem_row_major);
    __syncthreads();
    T* ob = out + g.oOff + bz * g.oSb;
    for (int e = t; e < WM_TILE * WM_TILE; e += WM_THREADS) {
      int r = e / WM_TILE, c = e % WM_TILE;
      int64_t gr = row0 + r, gc = col0 + c;
      if (gr < g.m && gc < g.n) Io<T>::store(ob + gr * g.oSm + gc * g.oSn, Cs[r * LDC + c]);
    }
    __syncthreads();
  }
#endif
}

}  // namespace ck
#endif
