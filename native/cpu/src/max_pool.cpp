#include "max_pool.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <limits>
#include <vector>

#include "pool.h"

namespace core_cpu {

namespace {

/** About this many elements per task: enough to outweigh handing the task out. */
constexpr int64_t TASK_ELEMENTS = INT64_C(1) << 15;

/**
 * Per window along one dim, its first position inside [0, size) (window o reads o·stride − padding
 * + a·dilation for a < kernel); false when a window has none.
 */
bool firstInside(int64_t size, int64_t out, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, std::vector<int64_t>& first) {
  first.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - padding;
    const int64_t a = start >= 0 ? 0 : (-start + dilation - 1) / dilation;  // the first position at or after 0
    if (a >= kernel || start + a * dilation >= size) return false;
    first[o] = start + a * dilation;
  }
  return true;
}

/** Planes [begin, end) of N·C in `tasks` pieces over the pool; each plane `perPlane` elements of work. */
template <typename Fn>
void overPlanes(int64_t planes, int64_t perPlane, int threads, Fn fn) {
  const int64_t chunk = std::max<int64_t>(1, TASK_ELEMENTS / std::max<int64_t>(1, perPlane));
  const int64_t tasks = (planes + chunk - 1) / chunk;
  if (threads <= 1 || tasks <= 1) {
    fn(0, planes);
    return;
  }
  Pool::instance().run(threads, tasks, [&](int64_t t) { fn(t * chunk, std::min(planes, (t + 1) * chunk)); });
}

/** How a kernel reads and writes one element type: as its f32 value, and back (half types round to nearest even). */
struct F32 {
  using T = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct BF16 {
  using T = uint16_t;
  // A shift, without fromBFloat16's NaN canonicalization: a NaN still compares as one, and storing
  // rounds every NaN to the quiet one; the branchless load lets the window loops vectorize.
  static float load(uint16_t h) { return floatOf(static_cast<uint32_t>(h) << 16); }
  static uint16_t store(float v) { return toBFloat16(v); }
};
struct F16 {
  using T = uint16_t;
  static float load(uint16_t h) { return fromFloat16(h); }
  static uint16_t store(float v) { return toFloat16(v); }
};

/** `fn` instantiated for the problem's element type. */
template <typename Fn>
auto byType(Elem type, Fn fn) {
  if (type == Elem::bf16) return fn(BF16{});
  if (type == Elem::f16) return fn(F16{});
  return fn(F32{});
}

/**
 * MaxPool2d(2) (a 2×2 window, stride 2, no padding or dilation) of whole planes. Per output row,
 * the two input rows are split (half types widened) into four float32 lines, one per window
 * position: then each position is one pass of contiguous, branchless selects over the row, in
 * (row, column) order and by the general loop's rule, so the same values and indices.
 */
template <typename E>
void forward2x2(const MaxPoolProblem& p, int threads) {
  using T = typename E::T;
  const int64_t C = p.shape[1], W = p.shape[3];
  const int64_t oh = p.outSize[0], ow = p.outSize[1];
  const int64_t sH = p.xStrides[2];
  overPlanes(p.shape[0] * C, p.shape[2] * W, threads, [&](int64_t begin, int64_t end) {
    std::vector<float> lines(5 * ow);  // the four window positions, then the row's maxima
    float* position[4] = {lines.data(), lines.data() + ow, lines.data() + 2 * ow, lines.data() + 3 * ow};
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* x = static_cast<const T*>(p.x) + (plane / C) * p.xStrides[0] + (plane % C) * p.xStrides[1];
      for (int64_t i = 0; i < oh; ++i) {
        const T* r0 = x + 2 * i * sH;
        const T* r1 = r0 + sH;
        for (int64_t j = 0; j < ow; ++j) {
          position[0][j] = E::load(r0[2 * j]);
          position[1][j] = E::load(r0[2 * j + 1]);
          position[2][j] = E::load(r1[2 * j]);
          position[3][j] = E::load(r1[2 * j + 1]);
        }
        T* stored = static_cast<T*>(p.out) + (plane * oh + i) * ow;
        float* best = std::is_same<T, float>::value ? reinterpret_cast<float*>(stored) : lines.data() + 4 * ow;
        int32_t* where = p.indices + (plane * oh + i) * ow;
        const int32_t at = static_cast<int32_t>(2 * i * W);
        // The first position always stands: it beats the −∞ the general loop starts from, or equals it.
        for (int64_t j = 0; j < ow; ++j) {
          best[j] = position[0][j];
          where[j] = at + 2 * static_cast<int32_t>(j);
        }
        const int32_t offsets[4] = {0, 1, static_cast<int32_t>(W), static_cast<int32_t>(W) + 1};
        for (int k = 1; k < 4; ++k) {
          const float* values = position[k];
          const int32_t offset = at + offsets[k];
          for (int64_t j = 0; j < ow; ++j) {
            const float v = values[j], m = best[j];
            const bool take = (v > m) | ((v != v) & (m == m));
            best[j] = take ? v : m;
            where[j] = take ? offset + 2 * static_cast<int32_t>(j) : where[j];
          }
        }
        if (!std::is_same<T, float>::value) {
          for (int64_t j = 0; j < ow; ++j) stored[j] = E::store(best[j]);
        }
      }
    }
  });
}

template <typename E>
void forward(const MaxPoolProblem& p, int threads, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  using T = typename E::T;
  const int64_t N = p.shape[0], C = p.shape[1], H = p.shape[2], W = p.shape[3];
  const int64_t oh = p.outSize[0], ow = p.outSize[1];
  const int64_t sH = p.xStrides[2], sW = p.xStrides[3];
  const int64_t kh = p.kernel[0], kw = p.kernel[1];
  // Per column offset b of the kernel: the outputs j whose column j·stride + b·dilation − padding is inside, [lo[b], hi[b]).
  std::vector<int64_t> lo(kw), hi(kw);
  for (int64_t b = 0; b < kw; ++b) {
    const int64_t shift = b * p.dilation[1] - p.padding[1];
    lo[b] = std::min(ow, shift >= 0 ? 0 : (-shift + p.stride[1] - 1) / p.stride[1]);
    hi[b] = shift >= W ? 0 : std::min(ow, (W - 1 - shift) / p.stride[1] + 1);
  }
  overPlanes(N * C, H * W, threads, [&](int64_t begin, int64_t end) {
    std::vector<float> row(std::is_same<T, float>::value ? 0 : ow);  // half types: the row's maxima as f32, stored at the end
    // The input row copied (half types widened) into a contiguous float32 line in L1 for the window
    // loop: reading the windows from the tensor itself ran 3× slower (f32 [64,64,24,24], MaxPool2d(2)).
    std::vector<float> wide(W);
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* x = static_cast<const T*>(p.x) + (plane / C) * p.xStrides[0] + (plane % C) * p.xStrides[1];
      for (int64_t i = 0; i < oh; ++i) {
        // One output row at a time, the window's positions in (a, b) order outside and the outputs
        // inside, so the loop over outputs runs without branches. best[j] is always the element at
        // where[j]: −∞ at the window's first position inside until something beats it.
        T* stored = static_cast<T*>(p.out) + (plane * oh + i) * ow;
        float* best = std::is_same<T, float>::value ? reinterpret_cast<float*>(stored) : row.data();
        int32_t* where = p.indices + (plane * oh + i) * ow;
        for (int64_t j = 0; j < ow; ++j) {
          best[j] = -std::numeric_limits<float>::infinity();
          where[j] = static_cast<int32_t>(rows[i] * W + cols[j]);
        }
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t r = i * p.stride[0] - p.padding[0] + a * p.dilation[0];
          if (r < 0 || r >= H) continue;
          const T* line = x + r * sH;
          for (int64_t w = 0; w < W; ++w) wide[w] = E::load(line[w * sW]);
          const float* values = wide.data();
          for (int64_t b = 0; b < kw; ++b) {
            const int64_t shift = b * p.dilation[1] - p.padding[1];
            for (int64_t j = lo[b]; j < hi[b]; ++j) {
              const int64_t c = j * p.stride[1] + shift;
              const float v = values[c], m = best[j];
              // argReduce's argmax: a larger value wins, and the first NaN, which nothing later replaces.
              const bool take = (v > m) | ((v != v) & (m == m));
              best[j] = take ? v : m;
              where[j] = take ? static_cast<int32_t>(r * W + c) : where[j];
            }
          }
        }
        if (!std::is_same<T, float>::value) {
          for (int64_t j = 0; j < ow; ++j) stored[j] = E::store(best[j]);
        }
      }
    }
  });
}

/** A half plane's f32 sums rounded into it: a loop of its own, so it gets the vector clones. */
template <typename E>
CORE_VECTOR_CLONES void storeRounded(const float* sums, typename E::T* out, int64_t n) {
  for (int64_t e = 0; e < n; ++e) out[e] = E::store(sums[e]);
}

template <typename E>
bool backward(const MaxPoolBackwardProblem& p, int threads, int64_t& bad) {
  using T = typename E::T;
  const int64_t C = p.shape[1], plane = p.shape[2] * p.shape[3];
  const int64_t oh = p.outSize[0], ow = p.outSize[1];
  std::atomic<bool> failed{false};
  std::atomic<int64_t> badIndex{0};
  overPlanes(p.shape[0] * C, plane + oh * ow, threads, [&](int64_t begin, int64_t end) {
    std::vector<float> sums(std::is_same<T, float>::value ? 0 : plane);  // half types: the plane's f32 sums, rounded once at the end
    for (int64_t k = begin; k < end; ++k) {
      const int64_t n = k / C, c = k % C;
      const T* g = static_cast<const T*>(p.grad) + n * p.gradStrides[0] + c * p.gradStrides[1];
      const int32_t* idx = p.indices + n * p.indexStrides[0] + c * p.indexStrides[1];
      T* stored = static_cast<T*>(p.gradInput) + k * plane;
      float* gi = std::is_same<T, float>::value ? reinterpret_cast<float*>(stored) : sums.data();
      std::fill(gi, gi + plane, 0.0f);
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t at = idx[i * p.indexStrides[2] + j * p.indexStrides[3]];
          if (at < 0 || at >= plane) {
            if (!failed.exchange(true)) badIndex = at;
            continue;
          }
          gi[at] += E::load(g[i * p.gradStrides[2] + j * p.gradStrides[3]]);
        }
      }
      if (!std::is_same<T, float>::value) storeRounded<E>(gi, stored, plane);
    }
  });
  bad = badIndex.load();
  return !failed.load();
}

}  // namespace

bool maxPool2d(const MaxPoolProblem& p, int threads) {
  std::vector<int64_t> rows, cols;
  if (!firstInside(p.shape[2], p.outSize[0], p.kernel[0], p.stride[0], p.padding[0], p.dilation[0], rows) ||
      !firstInside(p.shape[3], p.outSize[1], p.kernel[1], p.stride[1], p.padding[1], p.dilation[1], cols)) {
    return false;
  }
  const bool twoByTwo = p.kernel[0] == 2 && p.kernel[1] == 2 && p.stride[0] == 2 && p.stride[1] == 2 && p.padding[0] == 0 && p.padding[1] == 0 &&
                        p.dilation[0] == 1 && p.dilation[1] == 1 && p.xStrides[3] == 1;
  byType(p.type, [&](auto e) {
    if (twoByTwo) forward2x2<decltype(e)>(p, threads);
    else forward<decltype(e)>(p, threads, rows, cols);
  });
  return true;
}

bool maxPool2dBackward(const MaxPoolBackwardProblem& p, int threads, int64_t& bad) {
  return byType(p.type, [&](auto e) { return backward<decltype(e)>(p, threads, bad); });
}

}  // namespace core_cpu
