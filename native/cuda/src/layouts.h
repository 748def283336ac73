// Host-side launch geometry: TensorRefs (as rt::Ref) turned into the kernels' argument structs.
// Pure functions with no driver calls, so native/cuda/test/kernel_test.cpp runs them together with
// the kernels on the CPU emulation.
#pragma once
#include <initializer_list>
#include <vector>

#include "../kernels/args.h"
#include "ref.h"

namespace rt {

/** out's iteration space with each operand's strides; size-1 dims dropped, contiguous runs merged. */
ck::Layout elementwiseLayout(const Ref& out, std::initializer_list<const Ref*> inputs);
/** x split into kept dims (addressed in x and out) and the reduced `axes`. */
ck::ReduceLayout reduceLayout(const Ref& x, const std::vector<int>& axes, const Ref& out);
/** Threads of a reduction block: a power of two from 32 to REDUCE_THREADS covering `inner`. */
unsigned reduceThreads(int64_t inner);
/** A [B,M,K] @ [B,K,N] → [B,M,N] launch; a batch of size 1 broadcasts. */
ck::MatmulArgs matmulArgs(const Ref& a, const Ref& b, const Ref& out);
/**
 * Fused attention's arguments: q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev] of one
 * floating dtype and the float32 lse [B, L], all contiguous from their offsets; mask null or
 * [B, L, S] of out's dtype, strided. Throws CudaError saying which operand does not fit.
 */
ck::AttentionArgs attentionArgs(const Ref& q, const Ref& k, const Ref& v, const Ref* mask, const Ref& out, const Ref& lse, float scale, bool causal);
/** The Ev columns one attention block computes: ATT_COLUMNS_SMALL when Ev fits in them, else ATT_COLUMNS. */
int attentionColumns(int64_t ev);
/**
 * gather / scatterAdd over the index's positions: operands [0] `iter` (out for gather, src for
 * scatterAdd), [1] index, [2] `target` (x for gather, out for scatterAdd) with its `dim` stride
 * zeroed and returned in `dimStride` (the index value supplies that coordinate).
 */
ck::Layout indexLayout(const Ref& iter, const Ref& index, const Ref& target, int dim, int64_t& dimStride);

/** `r` with `axis` moved last (for kernels that walk fibres along it). */
Ref axisLast(const Ref& r, int axis);
/** `r` without `axis`: the space of its fibres along it. */
Ref withoutAxis(const Ref& r, int axis);
/** A 0-dim view as the one-element vector it stands for in kernels along an axis. */
Ref asVector(const Ref& r);

/** A [rows, cols] operand as cuBLASLt's column-major matrix: usable at all, transposed, leading dimension. */
struct LtOperand {
  bool ok;
  bool transposed;
  int64_t ld;
};
/** Row-major [rows, cols] (unit column stride) is column-major [cols, rows]: cuBLASLt sees our transpose, and vice versa. */
LtOperand ltOperand(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride);

}  // namespace rt
