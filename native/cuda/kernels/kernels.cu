// The kernels' entry points: `extern "C"` names the addon looks up in the embedded fatbin
// (ck_<family>_<dtype>). The same file is compiled by g++ against emu/emu.h for the kernel tests.
#include "common.cuh"
#include "elementwise.cuh"
#include "reduce.cuh"
#include "fused.cuh"
#include "matmul.cuh"
#include "indexing.cuh"
#include "random.cuh"
#include "ordering.cuh"

using namespace ck;

// Every numeric family exists for each storage type; suffixes match DTYPE_SUFFIX in src/kernels.cpp.
#define CK_FOR_TYPES(X) X(f32, float) X(f16, f16) X(bf16, bf16) X(i32, int32_t) X(b8, uint8_t)
#define CK_FOR_FLOATS(X) X(f32, float) X(f16, f16) X(bf16, bf16)

#define CK_ELEMENTWISE(sfx, T)                                                                           \
  extern "C" __global__ void ck_unary_##sfx(Layout L, int op, const T* x, T* out) { unaryKernel<T>(L, op, x, out); } \
  extern "C" __global__ void ck_binary_##sfx(Layout L, int op, const T* a, const T* b, T* out) {       \
    binaryKernel<T>(L, op, a, b, out);                                                                   \
  }                                                                                                      \
  extern "C" __global__ void ck_compare_##sfx(Layout L, int op, const T* a, const T* b, uint8_t* out) { \
    compareKernel<T>(L, op, a, b, out);                                                                  \
  }                                                                                                      \
  extern "C" __global__ void ck_reduce_##sfx(ReduceLayout L, int op, const T* x, T* out) {             \
    reduceKernel<T>(L, op, x, out);                                                                      \
  }                                                                                                      \
  extern "C" __global__ void ck_argreduce_##sfx(ReduceLayout L, int op, const T* x, int32_t* out) {    \
    argReduceKernel<T>(L, op, x, out);                                                                   \
  }
CK_FOR_TYPES(CK_ELEMENTWISE)

#define CK_MATMUL(sfx, T)                                                                              \
  extern "C" __global__ void ck_matmul_##sfx(MatmulArgs g, const T* a, const T* b, T* out) {        \
    tiledMatmul<T>(g, a, b, out);                                                                      \
  }
CK_FOR_FLOATS(CK_MATMUL)
CK_MATMUL(i32, int32_t)

// Contract 1.4.0's attention, per dtype and per width of a block's Ev slice: ck_attention_<dtype>_<columns>.
static_assert(ATT_COLUMNS == 128 && ATT_COLUMNS_SMALL == 64, "the ck_attention_* names spell the slice widths");
#define CK_ATTENTION(sfx, T, DV)                                                                                    \
  extern "C" __global__ void ck_attention_##sfx##_##DV(AttentionArgs a, const T* q, const T* k, const T* v,         \
                                                        const T* mask, T* out, float* lse) {                         \
    attentionKernel<T, DV>(a, q, k, v, mask, out, lse);                                                             \
  }

#define CK_FUSED(sfx, T)                                                                                          \
  extern "C" __global__ void ck_softmax_##sfx(ReduceLayout L, int64_t outDimStride, int logMode, const T* x, T* out) { \
    softmaxKernel<T>(L, outDimStride, logMode, x, out);                                                            \
  }                                                                                                                 \
  extern "C" __global__ void ck_crossentropy_##sfx(CrossEntropyArgs a, const T* x, const int32_t* t, T* out) {     \
    crossEntropyKernel<T>(a, x, t, out);                                                                            \
  }                                                                                                                 \
  extern "C" __global__ void ck_unscale_##sfx(int64_t n, T* g, float* foundInf, const float* invScale) {          \
    unscaleKernel<T>(n, g, foundInf, invScale);                                                                     \
  }                                                                                                                 \
  extern "C" __global__ void ck_adam_##sfx(AdamArgs a, T* p, const T* g, T* m, T* v, T* vmax) {                   \
    adamKernel<T>(a, p, g, m, v, vmax);                                                                             \
  }                                                                                                                 \
  extern "C" __global__ void ck_scatteradd_##sfx(Layout L, int64_t dimStride, float* target, const int32_t* index, const T* src) { \
    scatterAddKernel<T, float>(L, dimStride, target, index, src);                                                                   \
  }                                                                                                                 \
  extern "C" __global__ void ck_addcmul_##sfx(Layout L, const T* x, const T* t1, const T* t2, T* out) {           \
    addcmulKernel<T>(L, x, t1, t2, out);                                                                            \
  }                                                                                                                 \
  CK_ATTENTION(sfx, T, 128) CK_ATTENTION(sfx, T, 64)
CK_FOR_FLOATS(CK_FUSED)

extern "C" __global__ void ck_reduce_f16_f32(ReduceLayout L, int op, const f16* x, float* out) { reduceKernel<f16, float>(L, op, x, out); }
extern "C" __global__ void ck_reduce_bf16_f32(ReduceLayout L, int op, const bf16* x, float* out) { reduceKernel<bf16, float>(L, op, x, out); }

extern "C" __global__ void ck_scatteradd_i32(Layout L, int64_t dimStride, int32_t* target, const int32_t* index, const int32_t* src) {
  scatterAddKernel<int32_t, int32_t>(L, dimStride, target, index, src);
}

#ifdef CK_HAS_WMMA
extern "C" __global__ void ck_matmul_wmma_f16(MatmulArgs g, const f16* a, const f16* b, f16* out) { wmmaMatmul<f16>(g, a, b, out); }
extern "C" __global__ void ck_matmul_wmma_bf16(MatmulArgs g, const bf16* a, const bf16* b, bf16* out) { wmmaMatmul<bf16>(g, a, b, out); }
#endif

// Families that move raw elements are instantiated per element width (w1, w2, w4).
#define CK_MOVES(w, W)                                                                                             \
  extern "C" __global__ void ck_copy_##w(Layout L, const W* x, W* out) { copyKernel<W>(L, x, out); }             \
  extern "C" __global__ void ck_fill_##w(Layout L, W value, W* out) { fillKernel<W>(L, value, out); }            \
  extern "C" __global__ void ck_where_##w(Layout L, const uint8_t* c, const W* a, const W* b, W* out) {          \
    whereKernel<W>(L, c, a, b, out);                                                                               \
  }                                                                                                                \
  extern "C" __global__ void ck_gather_##w(Layout L, int64_t dimStride, const W* x, const int32_t* index, W* out) { \
    gatherKernel<W>(L, dimStride, x, index, out);                                                                    \
  }
CK_MOVES(w1, uint8_t)
CK_MOVES(w2, uint16_t)
CK_MOVES(w4, uint32_t)

// Casts: every (source, destination) pair of storage types.
#define CK_CAST_TO(ssfx, S, dsfx, D) \
  extern "C" __global__ void ck_cast_##ssfx##_##dsfx(Layout L, const S* x, D* out) { castKernel<S, D>(L, x, out); }
#define CK_CAST_FROM(ssfx, S) \
  CK_CAST_TO(ssfx, S, f32, float) CK_CAST_TO(ssfx, S, f16, f16) CK_CAST_TO(ssfx, S, bf16, bf16) CK_CAST_TO(ssfx, S, i32, int32_t) CK_CAST_TO(ssfx, S, b8, uint8_t)
CK_FOR_TYPES(CK_CAST_FROM)

extern "C" __global__ void ck_random(RandomArgs a, void* out) { randomKernel(a, out); }

// Contract 1.3.0: argsort (keys per storage type, one stage kernel), running reductions, scatter.
#define CK_ORDERING(sfx, T)                                                                                                 \
  extern "C" __global__ void ck_argsort_keys_##sfx(Layout L, int64_t padded, int64_t n, int descending, int64_t total,     \
                                                    const T* x, uint32_t* pairs) {                                           \
    argsortKeysKernel<T>(L, padded, n, descending, total, x, pairs);                                                         \
  }                                                                                                                          \
  extern "C" __global__ void ck_scatter_##sfx(Layout L, AxisWalk w, int mode, T* out, const int32_t* index, const T* src) { \
    scatterKernel<T>(L, w, mode, out, index, src);                                                                           \
  }
CK_FOR_TYPES(CK_ORDERING)

extern "C" __global__ void ck_argsort_step(int64_t threads, int64_t padded, int64_t k, int64_t j, int64_t total, uint32_t* pairs) {
  argsortStepKernel(threads, padded, k, j, total, pairs);
}

#define CK_CUMULATIVE(sfx, T, A) \
  extern "C" __global__ void ck_cumulative_##sfx(Layout L, AxisWalk w, int op, const T* x, T* out) { cumulativeKernel<T, A>(L, w, op, x, out); }
CK_CUMULATIVE(f32, float, float)
CK_CUMULATIVE(f16, f16, float)
CK_CUMULATIVE(bf16, bf16, float)
CK_CUMULATIVE(i32, int32_t, int32_t)
