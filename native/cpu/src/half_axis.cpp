// The along-an-axis kernels of 16-bit tensors that max-pooling runs: argmax/argmin over the window
// axis and the gather of the winners (forward), and scatter-add of the gradient back to them (backward).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "half.h"
#include "pool.h"

namespace core_cpu {

namespace {

inline float widen(Elem type, uint16_t h) { return type == Elem::bf16 ? fromBFloat16(h) : fromFloat16(h); }

/** Positions of `count` operands at the flat index `at` of `shape` (row-major), each by its strides. */
void positionsAt(int64_t at, int rank, const int64_t* shape, const int64_t* const* strides, int count, int64_t* index, int64_t* pos) {
  for (int o = 0; o < count; ++o) pos[o] = 0;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = at % shape[d];
    at /= shape[d];
    for (int o = 0; o < count; ++o) pos[o] += index[d] * strides[o][d];
  }
}

/** Steps `index` (and each operand's position) to the next one of `shape`, row-major. */
void step(int rank, const int64_t* shape, const int64_t* const* strides, int count, int64_t* index, int64_t* pos) {
  for (int d = rank - 1; d >= 0; --d) {
    for (int o = 0; o < count; ++o) pos[o] += strides[o][d];
    if (++index[d] < shape[d]) return;
    for (int o = 0; o < count; ++o) pos[o] -= shape[d] * strides[o][d];
    index[d] = 0;
  }
}

}  // namespace

void halfArgReduce(bool max, Elem type, const uint16_t* x, const HalfView& v, int axis, int32_t* out, const int64_t* outStrides,
                   int threads) {
  // The outer dims: every dim but the axis.
  int rank = 0;
  int64_t shape[MAX_RANK], xs[MAX_RANK], os[MAX_RANK];
  for (int d = 0; d < v.rank; ++d) {
    if (d == axis) continue;
    shape[rank] = v.shape[d];
    xs[rank] = v.strides[d];
    os[rank] = outStrides[d];
    ++rank;
  }
  int64_t fibres = 1;
  for (int d = 0; d < rank; ++d) fibres *= shape[d];
  const int64_t length = v.shape[axis], stride = v.strides[axis];
  const int64_t perTask = std::max<int64_t>((1 << 14) / std::max<int64_t>(length, 1) + 1, (fibres + 4 * threads - 1) / (4 * threads));
  const int64_t tasks = (fibres + perTask - 1) / perTask;
  const int64_t* strides[2] = {xs, os};
  Pool::instance().run(static_cast<int>(std::min<int64_t>(threads, tasks)), tasks, [&](int64_t task) {
    const int64_t first = task * perTask, last = std::min(fibres, first + perTask);
    int64_t index[MAX_RANK], pos[2];
    positionsAt(first, rank, shape, strides, 2, index, pos);
    for (int64_t f = first; f < last; ++f, step(rank, shape, strides, 2, index, pos)) {
      const uint16_t* fibre = x + pos[0];
      float best = widen(type, fibre[0]);
      int32_t at = 0;
      if (best == best) {
        for (int64_t j = 1; j < length; ++j) {
          const float value = widen(type, fibre[j * stride]);
          if (value != value) {  // the first NaN is both the max and the min
            at = static_cast<int32_t>(j);
            break;
          }
          if (max ? value > best : value < best) {
            best = value;
            at = static_cast<int32_t>(j);
          }
        }
      }
      out[pos[1]] = at;
    }
  });
}

namespace {

/** Checks an index along `dim` against the extent there. */
void checkIndex(int64_t i, int64_t extent, int dim) {
  if (i < 0 || i >= extent) {
    throw std::out_of_range("index " + std::to_string(i) + " is out of range for size " + std::to_string(extent) + " along dim " + std::to_string(dim));
  }
}

/**
 * Calls fn(indexed, other) for every position p of index's shape, in row-major order: `indexed` is
 * the offset of the element index[p] picks along `dim` in the indexed tensor (strides `v.strides`),
 * `other` that of p in the other operand. Throws std::out_of_range for an index outside [0, extent).
 */
template <typename Fn>
void alongAxis(const HalfView& v, int dim, int64_t extent, const int32_t* index, const int64_t* indexStrides, const int64_t* otherStrides,
               Fn fn) {
  int64_t base[MAX_RANK];
  for (int d = 0; d < v.rank; ++d) base[d] = d == dim ? 0 : v.strides[d];
  const int64_t* strides[3] = {indexStrides, otherStrides, base};
  int64_t count = 1;
  for (int d = 0; d < v.rank; ++d) count *= v.shape[d];
  int64_t at[MAX_RANK], pos[3];
  positionsAt(0, v.rank, v.shape, strides, 3, at, pos);
  for (int64_t p = 0; p < count; ++p, step(v.rank, v.shape, strides, 3, at, pos)) {
    const int64_t i = index[pos[0]];
    checkIndex(i, extent, dim);
    fn(pos[2] + i * v.strides[dim], pos[1]);
  }
}

}  // namespace

void halfGather(const uint16_t* x, const HalfView& v, int dim, int64_t xExtent, const int32_t* index, const int64_t* indexStrides,
                uint16_t* out, const int64_t* outStrides) {
  alongAxis(v, dim, xExtent, index, indexStrides, outStrides, [&](int64_t from, int64_t to) { out[to] = x[from]; });
}

void halfScatterAdd(Elem type, uint16_t* out, const HalfView& v, int dim, int64_t outExtent, const int32_t* index,
                    const int64_t* indexStrides, const uint16_t* src, const int64_t* srcStrides) {
  // f32 sums over the storage range out spans (a view never overlaps itself: one offset, one element).
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < v.rank; ++d) {
    const int64_t reach = ((d == dim ? outExtent : v.shape[d]) - 1) * v.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  std::vector<float> acc(static_cast<size_t>(hi - lo + 1));
  std::vector<uint8_t> touched(acc.size());
  alongAxis(v, dim, outExtent, index, indexStrides, srcStrides, [&](int64_t to, int64_t from) {
    const int64_t t = to - lo;
    if (!touched[t]) {
      touched[t] = 1;
      acc[t] = widen(type, out[to]);
    }
    acc[t] += widen(type, src[from]);
  });
  for (size_t t = 0; t < acc.size(); ++t) {
    if (touched[t]) out[static_cast<int64_t>(t) + lo] = type == Elem::bf16 ? toBFloat16(acc[t]) : toFloat16(acc[t]);
  }
}

}  // namespace core_cpu
