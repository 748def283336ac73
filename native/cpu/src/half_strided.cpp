// Strided casts, copies and add/sub/mul/div where an operand is 16-bit. The outer dims are walked
// row by row (unit dims dropped, neighbours every operand walks as one merged), tasks taking whole
// rows; the innermost loop is typed by the operand types, so the compiler vectorizes the unit-stride
// cases (a contiguous cast, a bf16 convolution's im2col rows).
#include <algorithm>
#include <type_traits>

#include "half.h"
#include "pool.h"

namespace core_cpu {

namespace {

constexpr int64_t TASK_ELEMENTS = 1 << 15;
/** Rows shorter than this are walked a block of rows at a time. */
constexpr int64_t SHORT_ROW = 128;

int64_t ceilDivide(int64_t x, int64_t y) { return (x + y - 1) / y; }

template <Elem T>
using Storage = std::conditional_t<T == Elem::f32, float, uint16_t>;

template <Elem T>
CORE_CLONE_INLINE float widen(Storage<T> x) {
  if constexpr (T == Elem::f32) return x;
  else if constexpr (T == Elem::bf16) return fromBFloat16(x);
  else return fromFloat16(x);
}

template <Elem T>
CORE_CLONE_INLINE Storage<T> narrow(float x) {
  if constexpr (T == Elem::f32) return x;
  else if constexpr (T == Elem::bf16) return toBFloat16(x);
  else return toFloat16(x);
}

/** A cast's widening: into a 16-bit type, a bf16 NaN keeps its sign (f16 NaNs are sign | 0x7e00, as the TypeScript cast gives). */
template <Elem A, Elem O>
CORE_CLONE_INLINE float castWiden(Storage<A> x) {
  if constexpr (A == Elem::bf16 && O != Elem::f32) return floatOf(static_cast<uint32_t>(x) << 16);
  else return widen<A>(x);
}

template <ElementOp Op>
CORE_CLONE_INLINE float apply(float a, float b) {
  if constexpr (Op == ElementOp::add) return a + b;
  else if constexpr (Op == ElementOp::sub) return a - b;
  else if constexpr (Op == ElementOp::mul) return a * b;
  else return a / b;
}

/** One row: a copy of bits (equal types), a cast, or one rounded f32 operation per element. */
template <ElementOp Op, Elem O, Elem A, Elem B>
CORE_CLONE_INLINE void row(void* outRow, const void* aRow, const void* bRow, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  Storage<O>* out = static_cast<Storage<O>*>(outRow);
  const Storage<A>* a = static_cast<const Storage<A>*>(aRow);
  const Storage<B>* b = static_cast<const Storage<B>*>(bRow);
  if constexpr (Op == ElementOp::copy && O == A) {
    if (so == 1 && sa == 1) std::copy(a, a + n, out);
    else for (int64_t j = 0; j < n; ++j) out[j * so] = a[j * sa];
  } else if constexpr (Op == ElementOp::copy) {
    if (so == 1 && sa == 1) for (int64_t j = 0; j < n; ++j) out[j] = narrow<O>(castWiden<A, O>(a[j]));
    else for (int64_t j = 0; j < n; ++j) out[j * so] = narrow<O>(castWiden<A, O>(a[j * sa]));
  } else if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = narrow<O>(apply<Op>(widen<A>(a[j]), widen<B>(b[j])));
  } else if (so == 1 && sa == 1 && sb == 0) {  // a broadcast scalar operand (a bias)
    const float bv = widen<B>(*b);
    for (int64_t j = 0; j < n; ++j) out[j] = narrow<O>(apply<Op>(widen<A>(a[j]), bv));
  } else {
    for (int64_t j = 0; j < n; ++j) out[j * so] = narrow<O>(apply<Op>(widen<A>(a[j * sa]), widen<B>(b[j * sb])));
  }
}

/** Where a block's rows start: each operand's stride between rows, in elements. */
struct RowSteps {
  int64_t out, a, b;
};

/**
 * `rows` rows of `n` elements, `steps` apart: one call per block rather than per row, so a short
 * row (a convolution's windows, 24 wide) does not pay a call and the walker's step each.
 */
template <ElementOp Op, Elem O, Elem A, Elem B>
CORE_VECTOR_CLONES void block(char* out, const char* a, const char* b, int64_t rows, RowSteps steps, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  constexpr int64_t bo = sizeof(Storage<O>), ba = sizeof(Storage<A>), bb = sizeof(Storage<B>);
  for (int64_t r = 0; r < rows; ++r) row<Op, O, A, B>(out + r * steps.out * bo, a + r * steps.a * ba, b + r * steps.b * bb, n, so, sa, sb);
}

using RowFn = void (*)(char*, const char*, const char*, int64_t, RowSteps, int64_t, int64_t, int64_t, int64_t);

template <ElementOp Op, Elem O, Elem A>
RowFn rowFor(Elem b) {
  if (Op == ElementOp::copy) return block<Op, O, A, A>;
  switch (b) {
    case Elem::f32: return block<Op, O, A, Elem::f32>;
    case Elem::f16: return block<Op, O, A, Elem::f16>;
    default: return block<Op, O, A, Elem::bf16>;
  }
}

template <ElementOp Op, Elem O>
RowFn rowFor(Elem a, Elem b) {
  switch (a) {
    case Elem::f32: return rowFor<Op, O, Elem::f32>(b);
    case Elem::f16: return rowFor<Op, O, Elem::f16>(b);
    default: return rowFor<Op, O, Elem::bf16>(b);
  }
}

template <ElementOp Op>
RowFn rowFor(const HalfStridedProblem& p) {
  switch (p.types[0]) {
    case Elem::f32: return rowFor<Op, Elem::f32>(p.types[1], p.types[2]);
    case Elem::f16: return rowFor<Op, Elem::f16>(p.types[1], p.types[2]);
    default: return rowFor<Op, Elem::bf16>(p.types[1], p.types[2]);
  }
}

RowFn rowFor(const HalfStridedProblem& p) {
  switch (p.op) {
    case ElementOp::copy: return rowFor<ElementOp::copy>(p);
    case ElementOp::add: return rowFor<ElementOp::add>(p);
    case ElementOp::sub: return rowFor<ElementOp::sub>(p);
    case ElementOp::mul: return rowFor<ElementOp::mul>(p);
    default: return rowFor<ElementOp::div>(p);
  }
}

int bytesOf(Elem e) { return e == Elem::f32 ? 4 : 2; }

}  // namespace

void halfStrided(const HalfStridedProblem& p, int threads) {
  const RowFn fn = rowFor(p);
  // Unit dims dropped and neighbours merged where every operand walks them as one.
  int rank = 0;
  int64_t shape[MAX_RANK], strides[3][MAX_RANK];
  int64_t blockShape = 1, blockSteps[3] = {0, 0, 0};
  for (int d = 0; d < p.rank; ++d) {
    if (p.shape[d] == 1) continue;
    bool merges = rank > 0;
    for (int o = 0; o < 3 && merges; ++o) merges = strides[o][rank - 1] == p.strides[o][d] * p.shape[d];
    if (!merges) shape[rank++] = 1;
    shape[rank - 1] *= p.shape[d];
    for (int o = 0; o < 3; ++o) strides[o][rank - 1] = p.strides[o][d];
  }
  if (rank == 0) {
    rank = 1;
    shape[0] = 1;
    for (int o = 0; o < 3; ++o) strides[o][0] = 0;
  }
  // Short rows go a block at a time: the next dim's rows of them in one call.
  if (rank >= 2 && shape[rank - 1] < SHORT_ROW) {
    blockShape = shape[rank - 2];
    for (int o = 0; o < 3; ++o) blockSteps[o] = strides[o][rank - 2];
    --rank;
    for (int o = 0; o < 3; ++o) strides[o][rank - 1] = strides[o][rank];
    shape[rank - 1] = shape[rank];
  }
  const int inner = rank - 1;
  const int64_t n = shape[inner];
  int64_t rows = 1;
  for (int d = 0; d < inner; ++d) rows *= shape[d];
  const RowSteps steps{blockSteps[0], blockSteps[1], blockSteps[2]};
  const int64_t rowsPerTask = std::max(ceilDivide(TASK_ELEMENTS, n * blockShape), ceilDivide(rows, 4 * threads));
  const int64_t tasks = ceilDivide(rows, rowsPerTask);
  char* base[3];
  int bytes[3];
  for (int o = 0; o < 3; ++o) {
    base[o] = static_cast<char*>(p.data[o]);
    bytes[o] = bytesOf(p.types[o]);
  }
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t first = task * rowsPerTask, last = std::min(rows, first + rowsPerTask);
    int64_t index[MAX_RANK] = {};
    int64_t pos[3] = {0, 0, 0};
    for (int64_t d = inner - 1, r = first; d >= 0; --d) {
      index[d] = r % shape[d];
      r /= shape[d];
      for (int o = 0; o < 3; ++o) pos[o] += index[d] * strides[o][d];
    }
    for (int64_t r = first; r < last; ++r) {
      fn(base[0] + pos[0] * bytes[0], base[1] + pos[1] * bytes[1], base[2] + pos[2] * bytes[2], blockShape, steps, n, strides[0][inner],
         strides[1][inner], strides[2][inner]);
      for (int d = inner - 1; d >= 0; --d) {
        for (int o = 0; o < 3; ++o) pos[o] += strides[o][d];
        if (++index[d] < shape[d]) break;
        for (int o = 0; o < 3; ++o) pos[o] -= shape[d] * strides[o][d];
        index[d] = 0;
      }
    }
  });
}

}  // namespace core_cpu
