// The 16-bit floating types on the native path: bfloat16 and float16 conversions bit for bit the
// core's (packages/tensor/src/dtype/half.ts and the wasm kernels), a GEMM over bfloat16 or float16
// operands that accumulates in float32 and rounds once, and strided casts, copies and
// add/sub/mul/div of 16-bit views.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "strided.h"

// The 16-bit element loops are plain C++ that the compiler vectorizes; the portable baseline build
// (SSE2) keeps them narrow and leaves the conversions' selects scalar. These clones of a loop for
// x86-64-v4 (AVX-512) and v3 (AVX2, F16C) are chosen once, when the addon loads (one thread: a
// bf16 [64,64,24,24] multiply 1.5 -> 0.28 ms, its cast from float32 0.57 -> 0.31 ms). Measure
// before cloning a loop: max-pool's strided window loop ran 2x slower cloned, on AMD's AVX-512.
// A loop body a clone calls must be inlined into it to be compiled for the clone's target: a body
// left out of line is compiled once, for the baseline (CORE_CLONE_INLINE).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CORE_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CORE_CLONE_INLINE __attribute__((always_inline)) inline
#else
#define CORE_VECTOR_CLONES
#define CORE_CLONE_INLINE inline
#endif

namespace core_cpu {

/** The element types the half kernels read and write. */
enum class Elem { f32, f16, bf16 };

CORE_CLONE_INLINE uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

CORE_CLONE_INLINE float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

/** f32 → bf16, round to nearest even; every NaN becomes 0x7fc0. */
CORE_CLONE_INLINE uint16_t toBFloat16(float x) {
  const uint32_t u = bitsOf(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/** bf16 → f32, exact; every NaN becomes the quiet NaN 0x7fc00000, as a JavaScript number store does. */
CORE_CLONE_INLINE float fromBFloat16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  return floatOf((u & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : u);
}

/** f32 → f16, round to nearest even (subnormals included); a NaN becomes its sign | 0x7e00. */
CORE_CLONE_INLINE uint16_t toFloat16(float x) {
  const uint32_t u = bitsOf(x), sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
  if (exp == 0xffu) return static_cast<uint16_t>(sign | (mant != 0 ? 0x7e00u : 0x7c00u));
  const int e = static_cast<int>(exp) - 127;
  if (e > 15) return static_cast<uint16_t>(sign | 0x7c00u);
  // Normal halves keep 10 of the 23 mantissa bits; subnormal ones shift the implicit bit in as well.
  const uint32_t full = e >= -14 ? mant : mant | 0x800000u;
  const uint32_t shift = e >= -14 ? 13u : static_cast<uint32_t>(-e - 1);
  if (shift > 24) return static_cast<uint16_t>(sign);
  uint32_t h = (e >= -14 ? static_cast<uint32_t>(e + 15) << 10 : 0u) | (full >> shift);
  const uint32_t rest = full & ((1u << shift) - 1), tie = 1u << (shift - 1);
  if (rest > tie || (rest == tie && (h & 1u))) h += 1;  // a carry into the exponent is the right rounding
  return static_cast<uint16_t>(sign | h);
}

/** f16 → f32, exact; every NaN becomes the quiet NaN 0x7fc00000. */
CORE_CLONE_INLINE float fromFloat16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) return floatOf(mant != 0 ? 0x7fc00000u : sign | 0x7f800000u);
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // m · 2^-24, exact
    return sign != 0 ? -v : v;
  }
  return floatOf(sign | ((exp + 112) << 23) | (mant << 13));
}

/** One GEMM operand of 16-bit elements: its first element and strides (in elements) along batch, rows, columns. */
struct HalfOperand {
  const uint16_t* data;
  int64_t batchStride, rowStride, colStride;
};

/**
 * out[b] = a[b] @ b[b] (+ bias[b]) with a and b of type `in` (f16 or bf16), summed in f32, the f32
 * bias (when given) added to each sum, and stored as `outType` (f32 or `in`, rounded once).
 */
struct HalfGemmProblem {
  int64_t batches, m, n, k;
  Elem in;
  HalfOperand a, b;
  void* out;
  Elem outType;
  int64_t outBatchStride, outRowStride, outColStride;
  /** Null, or the bias's element for out's (0, 0, 0) and its strides (0 where it is broadcast). */
  const float* bias = nullptr;
  int64_t biasBatchStride = 0, biasRowStride = 0, biasColStride = 0;
};

/** Whether vdpbf16ps (AVX512-BF16) runs here: the bf16 GEMM then multiplies bf16 pairs directly. */
bool dpbf16Available();

/**
 * Runs the problem with kernel `name` on up to `threads` threads and returns its name: 'avx512_bf16'
 * (vdpbf16ps on k-pair panels; bfloat16 operands on a CPU with AVX512-BF16), or 'avx512', 'avx2' or
 * 'portable' (that fp32 micro-kernel, the operands widened to f32 while packing). Throws
 * std::invalid_argument for a kernel that cannot run these operands here, std::bad_alloc when
 * scratch cannot be had.
 */
const char* halfGemm(const HalfGemmProblem& problem, const std::string& name, int threads);

/**
 * Where a halfGemmStridedSum's product goes: its [batches, m, n] f32 elements, in row-major order,
 * are the source of a stridedSum of shape `shape` (rank ≥ 2, shape[0] = batches, dims [1, split)
 * making m and [split, rank) making n) into `out` (outNumel contiguous elements of outType) at
 * viewOffset + Σ i_d·viewStrides[d]. Batches reach disjoint ranges of out (viewStrides[0] passes
 * what the other dims reach).
 */
struct ProductSum {
  int rank = 0, split = 0;
  int64_t shape[MAX_RANK] = {};
  int64_t viewOffset = 0;
  int64_t viewStrides[MAX_RANK] = {};
  void* out = nullptr;
  Elem outType = Elem::f32;
  int64_t outNumel = 0;
};

/**
 * matmulStridedSum: out = zeros, then each batch's f32 product (halfGemm's sums: the same bits as
 * its float32 out) added into place as ProductSum says, in row-major order, and rounded once into
 * out's type. Each batch is one task whose product never leaves the thread's cache-sized block.
 * Throws as halfGemm.
 */
const char* halfGemmStridedSum(const HalfGemmProblem& problem, const ProductSum& sum, const std::string& name, int threads);

/**
 * A strided problem whose operands may be 16-bit: out = cast(a) (copy) or out = round(a ∘ b), each
 * read widened to f32. Operands in the order out, a, b (b is a itself for copy): their element types,
 * first elements and strides (in elements) over `shape`.
 */
struct HalfStridedProblem {
  ElementOp op;
  int rank;
  int64_t shape[MAX_RANK];
  Elem types[3];
  void* data[3];
  int64_t strides[3][MAX_RANK];
};

/**
 * Runs it on up to `threads` threads: copies between equal types move bits unchanged (NaN payloads
 * too), copies between types are the core's casts, and arithmetic computes one f32 operation on the
 * widened operands and rounds it once into out's type — the TypeScript and wasm kernels' bits.
 * Out may be a or b itself; other overlaps are the caller's to avoid.
 */
void halfStrided(const HalfStridedProblem& problem, int threads);

}  // namespace core_cpu

namespace core_cpu {

/** An N-d strided view: its first element and per-dim extents and strides (in elements). */
struct HalfView {
  int rank;
  int64_t shape[MAX_RANK];
  int64_t strides[MAX_RANK];
};

/**
 * out = the index along `axis` of the first maximum (`max`) or minimum of each fibre of x (16-bit of
 * type `type`, compared as f32; the first NaN wins both), as the TypeScript argReduce gives. out is
 * int32 with x's shape but 1 along `axis` (`outStrides` its strides). On up to `threads` threads.
 */
void halfArgReduce(bool max, Elem type, const uint16_t* x, const HalfView& xView, int axis, int32_t* out, const int64_t* outStrides,
                   int threads);

/**
 * In place: out[…, index[p], …] += src[p] along `dim` for every position p of `index`'s shape (`view`
 * gives that shape and out's strides; `outExtent` is out's size along dim). Every touched element of
 * out (16-bit of type `type`) sums its contributions in f32 in index order from its old value and is
 * rounded once, untouched ones keep their bits: the TypeScript kernel's result. Throws
 * std::out_of_range, with out unchanged, for an index outside [0, outExtent).
 */
void halfScatterAdd(Elem type, uint16_t* out, const HalfView& view, int dim, int64_t outExtent, const int32_t* index,
                    const int64_t* indexStrides, const uint16_t* src, const int64_t* srcStrides);

/**
 * out[p] = x[p with its `dim` coordinate replaced by index[p]] for every position p of `index`'s shape
 * (`view` gives that shape and x's strides; `xExtent` is x's size along dim): 16-bit elements moved
 * bit for bit. Throws std::out_of_range for an index outside [0, xExtent).
 */
void halfGather(const uint16_t* x, const HalfView& view, int dim, int64_t xExtent, const int32_t* index, const int64_t* indexStrides,
                uint16_t* out, const int64_t* outStrides);

}  // namespace core_cpu

namespace core_cpu {

/** The unary ops the addon computes on 16-bit tensors (relu: x > 0 ? x : NaN stays NaN, else 0). */
enum class HalfUnaryOp { exp, erf, relu };

/**
 * out[i] = op(x[i]) over n contiguous elements of type `type` (16-bit, or f32 for exp and erf): the
 * value widened to double, the function in double (erf by the TypeScript kernel's series and
 * continued fraction), rounded to f32 and then to the 16-bit type, as the TypeScript kernels round.
 * A 16-bit type's exp and erf come from a table of all 65,536 results, made at first use. On up to
 * `threads` threads.
 */
void halfUnary(HalfUnaryOp op, Elem type, const void* x, void* out, int64_t n, int threads);

/** The comparisons the addon makes of float32 and 16-bit tensors; a NaN compares unequal to everything. */
enum class CompareOp { gt, lt, ge, le, eq, ne };

/**
 * out[i] = x[i] op y[i·yStride] (1 or 0) over n contiguous elements of type `type` (f32, or 16-bit
 * compared as their f32 values): a relu's backward mask, y > 0 with y a broadcast 0. Bool bytes 0 or 1.
 */
void compareRuns(CompareOp op, Elem type, const void* x, const void* y, int64_t yStride, uint8_t* out, int64_t n, int threads);

/** out[i] = cond[i·cs] ? a[i·as] : b[i·bs] over n elements of `bytes` (2 or 4) each (strides 0 or 1), bits moved as they are. */
void selectRuns(int bytes, const uint8_t* cond, int64_t cs, const void* a, int64_t as, const void* b, int64_t bs, void* out, int64_t n, int threads);

}  // namespace core_cpu
