// The kernels' launch arguments and op codes: plain structs passed by value into kernel parameter
// space, shared by the kernels (nvcc and the host emulation) and by the addon that fills them.
#pragma once
#include <stdint.h>

// Op codes (UnaryOp, BinaryOp, CompareOp, ReduceOp, ArgReduceOp): the op's index in the contract's
// lists, generated from them by scripts/codegen.
#include "../generated/op-codes.h"

namespace ck {

// dtype codes shared with src/addon.cpp and the TypeScript side (DTYPE_CODES in src/native.ts).
enum DType : int { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, BOOL = 4 };

constexpr int MAX_DIMS = 8;
/** Threads of a reduction / softmax block (the tree needs a power of two). */
constexpr int REDUCE_THREADS = 256;
/** The tiled GEMM: 64×64 output tile, 16-deep K slices, 256 threads of 4×4 outputs. */
constexpr int MM_TILE = 64, MM_KTILE = 16, MM_THREADS = 256;

/**
 * x viewed as [kept dims..., reduced dims...]: `outer` outputs, each reducing `inner` elements.
 * out is strided over the kept dims (its reduced dims have size 1 and are left out).
 */
struct ReduceLayout {
  int64_t outer, inner;
  int32_t outerDims, innerDims;
  int64_t outerShape[MAX_DIMS], outerStrideX[MAX_DIMS], outerStrideOut[MAX_DIMS];
  int64_t innerShape[MAX_DIMS], innerStrideX[MAX_DIMS];
  int64_t offsetX, offsetOut;
};

struct CrossEntropyArgs {
  int64_t rows, classes;
  int64_t xRowStride, xClassStride, xOffset;
  int64_t tStride, tOffset, outStride, outOffset;
  int32_t ignoreIndex;
  float labelSmoothing;
};

/** Scalars derived on the host in double and rounded once to float, as the decomposition's scalar operands are. */
struct AdamArgs {
  int64_t n;
  float oneMinusBeta1, beta2, oneMinusBeta2, eps, weightDecay, decayFactor /* 1 − lr·wd */, stepSize, biasCorrection2Sqrt;
  int32_t decoupled, maximize, amsgrad;
};

/**
 * Fused attention's forward: q [batch, L, E], k [batch, S, E], v [batch, S, Ev], out [batch, L, Ev]
 * and the float32 logSumExp [batch, L], all contiguous from their element offsets; the additive mask
 * (hasMask) is [batch, L, S] through its strides. Blocks take ATT_ROWS query rows (one per thread)
 * and ATT_COLUMNS (or ATT_COLUMNS_SMALL) columns of Ev each; keys stream through shared memory
 * ATT_KEYS at a time, their E dims ATT_DEPTH at a time.
 */
struct AttentionArgs {
  int64_t batch, L, S, E, Ev;
  int64_t qOff, kOff, vOff, outOff, lseOff;
  int64_t maskOff, maskSb, maskSl, maskSs;
  float scale;
  int32_t hasMask, causal;
};
constexpr int ATT_ROWS = 64, ATT_KEYS = 32, ATT_DEPTH = 32, ATT_COLUMNS = 128, ATT_COLUMNS_SMALL = 64;

struct MatmulArgs {
  int64_t batch, m, n, k;
  int64_t aOff, aSb, aSm, aSk;
  int64_t bOff, bSb, bSk, bSn;
  int64_t oOff, oSb, oSm, oSn;
};


struct RandomArgs {
  int64_t n;
  uint32_t k0, k1;
  uint64_t offset;
  int32_t kind;  // 0 uniform float32, 1 randint int32
  int32_t low;
  uint64_t range;  // high − low, ≤ 2^32
};

/**
 * Kernels with one thread per fibre along an axis (cumulative, scatter): the fibre's length, the
 * target's extent along the axis (scatter's index range) and each Layout operand's stride along it.
 */
struct AxisWalk {
  int64_t length, size;
  int64_t stride[3];
};

/**
 * The iteration space of an elementwise launch (out's shape) and up to four operands' strides and
 * offsets over it, in elements. Passed by value: it lives in the kernel's parameter space.
 */
struct Layout {
  int64_t numel;
  int32_t ndim;
  int64_t shape[MAX_DIMS];
  int64_t stride[4][MAX_DIMS];
  int64_t offset[4];
};

}  // namespace ck
