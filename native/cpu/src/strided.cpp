#include "strided.h"

#include <algorithm>

#include "half.h"
#include "pool.h"

namespace core_cpu {

namespace {

/** Elements one task takes at least: below this, handing work to another thread costs more than it saves. */
constexpr int64_t TASK_ELEMENTS = 1 << 15;

/** The problem with unit dims dropped and neighbours merged wherever every operand walks them as one. */
struct Collapsed {
  int rank = 0;
  int64_t shape[MAX_RANK];
  int64_t strides[3][MAX_RANK];  // out, a, b
};

Collapsed collapse(const StridedProblem& p) {
  const int64_t* from[3] = {p.outStrides, p.aStrides, p.bStrides};
  Collapsed c;
  for (int d = 0; d < p.rank; ++d) {
    if (p.shape[d] == 1) continue;
    const int last = c.rank - 1;
    bool merges = last >= 0;
    for (int o = 0; o < 3 && merges; ++o) merges = c.strides[o][last] == from[o][d] * p.shape[d];
    if (merges) {
      c.shape[last] *= p.shape[d];
      for (int o = 0; o < 3; ++o) c.strides[o][last] = from[o][d];
      continue;
    }
    c.shape[c.rank] = p.shape[d];
    for (int o = 0; o < 3; ++o) c.strides[o][c.rank] = from[o][d];
    ++c.rank;
  }
  if (c.rank == 0) {  // a single element
    c.rank = 1;
    c.shape[0] = 1;
    for (int o = 0; o < 3; ++o) c.strides[o][0] = 0;
  }
  return c;
}

template <ElementOp Op>
CORE_CLONE_INLINE float apply(float a, float b) {
  if constexpr (Op == ElementOp::copy) return a;
  if constexpr (Op == ElementOp::add) return a + b;
  if constexpr (Op == ElementOp::sub) return a - b;
  if constexpr (Op == ElementOp::mul) return a * b;
  if constexpr (Op == ElementOp::div) return a / b;
}

/** One run of n elements along the innermost dim; unit strides get a loop the compiler vectorizes. */
template <ElementOp Op>
CORE_CLONE_INLINE void row(float* out, const float* a, const float* b, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  if (so == 1 && sa == 1 && (Op == ElementOp::copy || sb == 1)) {
    for (int64_t j = 0; j < n; ++j) out[j] = apply<Op>(a[j], Op == ElementOp::copy ? 0.0f : b[j]);
  } else if (so == 1 && sa == 1 && sb == 0) {  // a broadcast scalar operand (a bias)
    const float bv = *b;
    for (int64_t j = 0; j < n; ++j) out[j] = apply<Op>(a[j], bv);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j * so] = apply<Op>(a[j * sa], Op == ElementOp::copy ? 0.0f : b[j * sb]);
  }
}

/** Rows [first, last) of the collapsed problem, in row-major order. */
template <ElementOp Op>
CORE_CLONE_INLINE void rows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) {
  const int inner = c.rank - 1;
  const int64_t n = c.shape[inner];
  // The outer index of row `first`, and each operand's position there.
  int64_t index[MAX_RANK] = {};
  int64_t pos[3] = {0, 0, 0};
  for (int64_t d = inner - 1, r = first; d >= 0; --d) {
    index[d] = r % c.shape[d];
    r /= c.shape[d];
    for (int o = 0; o < 3; ++o) pos[o] += index[d] * c.strides[o][d];
  }
  for (int64_t r = first; r < last; ++r) {
    row<Op>(p.out + pos[0], p.a + pos[1], p.b + pos[2], n, c.strides[0][inner], c.strides[1][inner], c.strides[2][inner]);
    // Step the outer index like an odometer.
    for (int d = inner - 1; d >= 0; --d) {
      for (int o = 0; o < 3; ++o) pos[o] += c.strides[o][d];
      if (++index[d] < c.shape[d]) break;
      for (int o = 0; o < 3; ++o) pos[o] -= c.shape[d] * c.strides[o][d];
      index[d] = 0;
    }
  }
}

// Each op's rows compiled per vector ISA: a convolution's im2col copies rows as short as an output
// row (24 floats in the mnist Net), where the baseline's 4-wide loop and its scalar tail dominate.
// Elementwise float32 results do not depend on the vector width.
CORE_VECTOR_CLONES void copyRows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) { rows<ElementOp::copy>(p, c, first, last); }
CORE_VECTOR_CLONES void addRows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) { rows<ElementOp::add>(p, c, first, last); }
CORE_VECTOR_CLONES void subRows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) { rows<ElementOp::sub>(p, c, first, last); }
CORE_VECTOR_CLONES void mulRows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) { rows<ElementOp::mul>(p, c, first, last); }
CORE_VECTOR_CLONES void divRows(const StridedProblem& p, const Collapsed& c, int64_t first, int64_t last) { rows<ElementOp::div>(p, c, first, last); }

using RowsFn = void (*)(const StridedProblem&, const Collapsed&, int64_t, int64_t);

RowsFn rowsFor(ElementOp op) {
  switch (op) {
    case ElementOp::copy: return copyRows;
    case ElementOp::add: return addRows;
    case ElementOp::sub: return subRows;
    case ElementOp::mul: return mulRows;
    case ElementOp::div: return divRows;
  }
  return copyRows;
}

}  // namespace

void strided(const StridedProblem& p, int threads) {
  const Collapsed c = collapse(p);
  const int64_t n = c.shape[c.rank - 1];
  int64_t rowCount = 1;
  for (int d = 0; d < c.rank - 1; ++d) rowCount *= c.shape[d];
  // Tasks of at least TASK_ELEMENTS, and a few per thread so that a slow thread holds no one up.
  const int64_t rowsPerTask = std::max((TASK_ELEMENTS + n - 1) / n, (rowCount + 4 * threads - 1) / (4 * threads));
  const int64_t tasks = (rowCount + rowsPerTask - 1) / rowsPerTask;
  const RowsFn fn = rowsFor(p.op);
  Pool::instance().run(threads, tasks, [&](int64_t task) {
    const int64_t first = task * rowsPerTask;
    fn(p, c, first, std::min(rowCount, first + rowsPerTask));
  });
}

}  // namespace core_cpu
