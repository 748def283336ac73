#include "reduce.h"

#include <algorithm>
#include <vector>

#include "cpu_features.h"
#include "pool.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

namespace core_cpu {

namespace {

/** Elements one task reads at least: below this, waking another thread costs more than it saves. */
constexpr int64_t TASK_ELEMENTS = 1 << 15;
/** The most outputs one task accumulates (in cache) when each reduces runs along a reduced dim. */
constexpr int64_t TASK_OUTPUTS = 1 << 13;
/** Outputs along a contiguous kept dim that one pass accumulates side by side. */
constexpr int64_t COLUMNS = 256;

/** Dims of one kind (kept or reduced), unit dims dropped, neighbours merged where x and out walk them as one. */
struct Dims {
  int n = 0;
  int64_t extent[MAX_RANK];
  int64_t xs[MAX_RANK];
  int64_t os[MAX_RANK];

  void push(int64_t extent_, int64_t xs_, int64_t os_) {
    if (n > 0 && xs[n - 1] == xs_ * extent_ && os[n - 1] == os_ * extent_) {
      extent[n - 1] *= extent_;
      xs[n - 1] = xs_;
      os[n - 1] = os_;
      return;
    }
    extent[n] = extent_;
    xs[n] = xs_;
    os[n] = os_;
    ++n;
  }
  /** The product of the extents of dims [0, upTo). */
  int64_t count(int upTo) const {
    int64_t c = 1;
    for (int d = 0; d < upTo; ++d) c *= extent[d];
    return c;
  }
};

/** An odometer over dims [0, n) of a Dims: the x and out positions of the current index. */
struct Walk {
  const Dims& dims;
  int n;
  int64_t index[MAX_RANK] = {};
  int64_t x = 0, o = 0;

  Walk(const Dims& d, int dimsWalked, int64_t linear) : dims(d), n(dimsWalked) {
    for (int k = n - 1; k >= 0; --k) {
      index[k] = linear % d.extent[k];
      linear /= d.extent[k];
      x += index[k] * d.xs[k];
      o += index[k] * d.os[k];
    }
  }
  ALWAYS_INLINE void next() {
    for (int k = n - 1; k >= 0; --k) {
      x += dims.xs[k];
      o += dims.os[k];
      if (++index[k] < dims.extent[k]) return;
      x -= dims.extent[k] * dims.xs[k];
      o -= dims.extent[k] * dims.os[k];
      index[k] = 0;
    }
  }
};

/** The problem in kept and reduced dims, and how it is split: `columns` > 0 when the innermost kept dim is contiguous in x. */
struct Plan {
  ReduceOp op;
  bool wide;
  Elem type;
  const void* x;
  void* out;
  Dims kept, reduced;
  int64_t columns = 0;       // kept-dim outputs per task along the contiguous kept dim (0: one output at a time)
  int64_t outputsPerTask = 1;  // otherwise: outputs per task
  int64_t tasks = 1;
};

/** NaN wins, and of equal values the first one stays: the TypeScript kernel's `x > m` test. */
template <ReduceOp Op>
ALWAYS_INLINE float pick(float m, float v) {
  if constexpr (Op == ReduceOp::max) return (v > m || v != v) && m == m ? v : m;
  return (v < m || v != v) && m == m ? v : m;
}

// GCC vectors: AVX-512 registers in the AVX-512 build of a task, SSE registers in the portable one.
typedef float Floats8 __attribute__((vector_size(32), aligned(4), may_alias));   // loads
typedef float Floats16 __attribute__((vector_size(64), aligned(4), may_alias));  // loads
typedef uint16_t Halves8 __attribute__((vector_size(16), aligned(2), may_alias));   // loads
typedef uint16_t Halves16 __attribute__((vector_size(32), aligned(2), may_alias));  // loads
typedef uint32_t Words8 __attribute__((vector_size(32)));
typedef uint32_t Words16 __attribute__((vector_size(64)));
typedef float FloatLanes8 __attribute__((vector_size(32)));
typedef float FloatLanes __attribute__((vector_size(64)));
typedef double DoubleLanes __attribute__((vector_size(64)));

/** An element type's storage and its exact widening to float (16-bit NaNs become the quiet NaN, as a JavaScript number does). */
template <Elem E>
struct Element;
template <>
struct Element<Elem::f32> {
  using T = float;
  static ALWAYS_INLINE float get(const T* x, int64_t i) { return x[i]; }
  static ALWAYS_INLINE void put(T* out, float v) { *out = v; }
};
template <>
struct Element<Elem::bf16> {
  using T = uint16_t;
  static ALWAYS_INLINE float get(const T* x, int64_t i) { return fromBFloat16(x[i]); }
  static ALWAYS_INLINE void put(T* out, float v) { *out = toBFloat16(v); }
};
template <>
struct Element<Elem::f16> {
  using T = uint16_t;
  static ALWAYS_INLINE float get(const T* x, int64_t i) { return fromFloat16(x[i]); }
  static ALWAYS_INLINE void put(T* out, float v) { *out = toFloat16(v); }
};

/** A load of W contiguous elements, unaligned (named typedefs: an attribute does not pass through a template argument). */
template <int W>
struct Loads;
template <>
struct Loads<8> {
  using Out = FloatLanes8;
  static ALWAYS_INLINE Out f32(const float* x) { return *reinterpret_cast<const Floats8*>(x); }
  static ALWAYS_INLINE Out bf16(const uint16_t* x) { return reinterpret_cast<Out>(__builtin_convertvector(*reinterpret_cast<const Halves8*>(x), Words8) << 16); }
};
template <>
struct Loads<16> {
  using Out = FloatLanes;
  static ALWAYS_INLINE Out f32(const float* x) { return *reinterpret_cast<const Floats16*>(x); }
  static ALWAYS_INLINE Out bf16(const uint16_t* x) { return reinterpret_cast<Out>(__builtin_convertvector(*reinterpret_cast<const Halves16*>(x), Words16) << 16); }
};

/** W contiguous elements of x widened to floats: bf16 by a shift (a NaN stays a NaN, all a sum needs), f16 one by one. */
template <Elem E, int W>
ALWAYS_INLINE typename Loads<W>::Out floats(const typename Element<E>::T* x) {
  if constexpr (E == Elem::f32) {
    return Loads<W>::f32(x);
  } else if constexpr (E == Elem::bf16) {
    return Loads<W>::bf16(x);
  } else {
    typename Loads<W>::Out v;
    for (int j = 0; j < W; ++j) v[j] = fromFloat16(x[j]);
    return v;
  }
}

/** Sixteen float or eight double accumulators, and the next that many elements of x widened into them. */
template <typename Acc>
struct Lanes;
template <>
struct Lanes<float> {
  using Type = FloatLanes;
  static constexpr int width = 16;
  template <Elem E>
  static ALWAYS_INLINE Type load(const typename Element<E>::T* x) { return floats<E, 16>(x); }
};
template <>
struct Lanes<double> {
  using Type = DoubleLanes;
  static constexpr int width = 8;
  template <Elem E>
  static ALWAYS_INLINE Type load(const typename Element<E>::T* x) { return __builtin_convertvector(floats<E, 8>(x), DoubleLanes); }
};

/** The sum of n elements from x by stride s in Acc; where contiguous, four independent chains of vector lanes, added pairwise at the end. */
template <typename Acc, Elem E>
ALWAYS_INLINE Acc runSum(const typename Element<E>::T* x, int64_t n, int64_t s) {
  using L = Lanes<Acc>;
  Acc acc = 0;
  int64_t i = 0;
  if (s == 1 && n >= 4 * L::width) {
    typename L::Type chains[4] = {};
    for (; i + 4 * L::width <= n; i += 4 * L::width) {
      for (int c = 0; c < 4; ++c) chains[c] += L::template load<E>(x + i + c * L::width);
    }
    typename L::Type a = (chains[0] + chains[1]) + (chains[2] + chains[3]);
    for (int half = L::width / 2; half >= 1; half /= 2) {
      for (int j = 0; j < half; ++j) a[j] += a[j + half];
    }
    acc = a[0];
  }
  for (; i < n; ++i) acc += static_cast<Acc>(Element<E>::get(x, i * s));
  return acc;
}

/**
 * A task's outputs, each the reduction of runs along the innermost reduced dim: for each index of
 * the outer reduced dims, every output's run is added to its accumulator, so x is read in the
 * order it lies in memory (batch by batch for a conv's bias gradient) and each output still takes
 * its runs in index order.
 */
template <ReduceOp Op, typename Acc, Elem E>
ALWAYS_INLINE void byOutput(const Plan& p, int64_t task) {
  using El = Element<E>;
  const auto* px = static_cast<const typename El::T*>(p.x);
  auto* po = static_cast<typename El::T*>(p.out);
  const Dims& r = p.reduced;
  const int inner = r.n - 1;
  const int64_t runs = r.count(inner), length = r.extent[inner], stride = r.xs[inner];
  const int64_t first = task * p.outputsPerTask, count = std::min(p.kept.count(p.kept.n), first + p.outputsPerTask) - first;
  std::vector<Acc> acc(count, Acc(0));
  Walk run(r, inner, 0);
  for (int64_t k = 0; k < runs; ++k, run.next()) {
    Walk out(p.kept, p.kept.n, first);
    for (int64_t j = 0; j < count; ++j, out.next()) {
      const auto* x = px + out.x + run.x;
      if constexpr (Op == ReduceOp::sum) {
        acc[j] += runSum<Acc, E>(x, length, stride);
      } else {
        Acc m = k == 0 ? El::get(x, 0) : acc[j];
        for (int64_t i = 0; i < length; ++i) m = pick<Op>(m, El::get(x, i * stride));
        acc[j] = m;
      }
    }
  }
  Walk out(p.kept, p.kept.n, first);
  for (int64_t j = 0; j < count; ++j, out.next()) El::put(po + out.o, static_cast<float>(acc[j]));
}

/**
 * COLUMNS outputs side by side along the contiguous innermost kept dim: each reduced index adds a
 * contiguous row, so each output is a running reduction in index order (a float32 sum gives the
 * TypeScript kernel's bits).
 */
template <ReduceOp Op, typename Acc, Elem E>
ALWAYS_INLINE void byColumns(const Plan& p, int64_t task) {
  using El = Element<E>;
  const Dims& k = p.kept;
  const int inner = k.n - 1;
  const int64_t chunks = (k.extent[inner] + p.columns - 1) / p.columns;
  const int64_t c0 = (task % chunks) * p.columns, width = std::min(p.columns, k.extent[inner] - c0);
  const Walk out(k, inner, task / chunks);
  const auto* x = static_cast<const typename El::T*>(p.x) + out.x + c0;
  const int64_t points = p.reduced.count(p.reduced.n);
  Walk at(p.reduced, p.reduced.n, 0);
  auto* dst = static_cast<typename El::T*>(p.out) + out.o + c0 * k.os[inner];
  Acc acc[COLUMNS];
  for (int64_t c = 0; c < width; ++c) acc[c] = Op == ReduceOp::sum ? Acc(0) : El::get(x, c);
  for (int64_t i = 0; i < points; ++i, at.next()) {
    const auto* row = x + at.x;
    for (int64_t c = 0; c < width; ++c) {
      if constexpr (Op == ReduceOp::sum) {
        acc[c] += static_cast<Acc>(El::get(row, c));
      } else {
        acc[c] = pick<Op>(acc[c], El::get(row, c));
      }
    }
  }
  for (int64_t c = 0; c < width; ++c) El::put(dst + c * k.os[inner], static_cast<float>(acc[c]));
}

template <ReduceOp Op, typename Acc, Elem E>
ALWAYS_INLINE void runTask(const Plan& p, int64_t task) {
  if (p.columns > 0) {
    byColumns<Op, Acc, E>(p, task);
  } else {
    byOutput<Op, Acc, E>(p, task);
  }
}

template <Elem E>
ALWAYS_INLINE void dispatchOp(const Plan& p, int64_t task) {
  switch (p.op) {
    case ReduceOp::sum: return p.wide ? runTask<ReduceOp::sum, double, E>(p, task) : runTask<ReduceOp::sum, float, E>(p, task);
    case ReduceOp::max: return runTask<ReduceOp::max, float, E>(p, task);
    case ReduceOp::min: return runTask<ReduceOp::min, float, E>(p, task);
  }
}

ALWAYS_INLINE void dispatchTask(const Plan& p, int64_t task) {
  switch (p.type) {
    case Elem::f32: return dispatchOp<Elem::f32>(p, task);
    case Elem::f16: return dispatchOp<Elem::f16>(p, task);
    case Elem::bf16: return dispatchOp<Elem::bf16>(p, task);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void taskAvx512(const Plan& p, int64_t task) { dispatchTask(p, task); }
#endif
void taskPortable(const Plan& p, int64_t task) { dispatchTask(p, task); }

Plan plan(const ReduceProblem& problem, int threads) {
  Plan p;
  p.op = problem.op;
  p.wide = problem.wide;
  p.type = problem.type;
  p.x = problem.x;
  p.out = problem.out;
  for (int d = 0; d < problem.rank; ++d) {
    if (problem.shape[d] == 1) continue;
    if (problem.reduced[d]) {
      p.reduced.push(problem.shape[d], problem.xStrides[d], 0);
    } else {
      p.kept.push(problem.shape[d], problem.xStrides[d], problem.outStrides[d]);
    }
  }
  // A single output, or a single element per output: one dim of extent 1 keeps the loops uniform.
  if (p.kept.n == 0) p.kept.push(1, 0, 0);
  if (p.reduced.n == 0) p.reduced.push(1, 0, 0);
  const int64_t outputs = p.kept.count(p.kept.n), length = p.reduced.count(p.reduced.n);
  const int64_t keptInner = p.kept.extent[p.kept.n - 1];
  const int64_t perTaskMin = std::max<int64_t>(1, TASK_ELEMENTS / length);
  if (p.kept.xs[p.kept.n - 1] == 1 && p.reduced.xs[p.reduced.n - 1] != 1 && keptInner > 1) {
    p.columns = std::min(COLUMNS, keptInner);
    const int64_t chunks = (keptInner + p.columns - 1) / p.columns;
    p.tasks = outputs / keptInner * chunks;
  } else {
    p.outputsPerTask = std::min(TASK_OUTPUTS, std::max(perTaskMin, (outputs + 4 * threads - 1) / (4 * threads)));
    p.tasks = (outputs + p.outputsPerTask - 1) / p.outputsPerTask;
  }
  return p;
}

}  // namespace

void reduce(const ReduceProblem& problem, int threads) {
  const Plan p = plan(problem, threads);
  void (*task)(const Plan&, int64_t) = taskPortable;
#if defined(__x86_64__)
  if (cpuFeatures().avx512) task = taskAvx512;
#endif
  const int64_t elements = p.kept.count(p.kept.n) * p.reduced.count(p.reduced.n);
  Pool::instance().run(elements >= 2 * TASK_ELEMENTS ? threads : 1, p.tasks, [&](int64_t t) { task(p, t); });
}

}  // namespace core_cpu
