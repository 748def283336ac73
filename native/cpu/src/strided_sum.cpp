#include "strided_sum.h"

#include <algorithm>
#include <cstring>

#include "pool.h"

namespace core_cpu {

namespace {

/** Below this many elements a call runs on one thread: waking workers costs more. */
constexpr int64_t PARALLEL_ELEMENTS = INT64_C(1) << 16;
/** Zeroing chunk, in elements (256 KiB). */
constexpr int64_t ZERO_CHUNK = INT64_C(1) << 16;

/** Adds the dims from `d` on, row-major, of src at `s` into out at `o`. */
void addFrom(const StridedSumProblem& p, int d, const float* s, float* o) {
  const int64_t n = p.shape[d];
  const int64_t ss = p.srcStrides[d], os = p.outStrides[d];
  if (d == p.rank - 1) {
    if (ss == 1 && os == 1) {
      // Distinct out elements per j: the vectorised loop adds each element's terms in the same order.
      const float* __restrict a = s;
      float* __restrict b = o;
      for (int64_t j = 0; j < n; ++j) b[j] += a[j];
    } else {
      for (int64_t j = 0; j < n; ++j) o[j * os] += s[j * ss];
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) addFrom(p, d + 1, s + j * ss, o + j * os);
}

}  // namespace

void stridedSum(const StridedSumProblem& p, int threads) {
  int64_t numel = 1;
  for (int d = 0; d < p.rank; ++d) numel *= p.shape[d];
  if (numel < PARALLEL_ELEMENTS) threads = 1;
  Pool& pool = Pool::instance();
  const int64_t chunks = (p.outNumel + ZERO_CHUNK - 1) / ZERO_CHUNK;
  pool.run(threads, chunks, [&](int64_t c) {
    const int64_t begin = c * ZERO_CHUNK;
    std::memset(p.out + begin, 0, sizeof(float) * static_cast<size_t>(std::min(ZERO_CHUNK, p.outNumel - begin)));
  });
  if (numel == 0) return;
  if (p.rank == 0) {
    p.out[p.viewOffset] += p.src[0];  // 0 + src, as every other element: −0 sums to +0
    return;
  }
  // Leading dims whose distinct indices reach disjoint ranges of out: a dim's stride passes
  // everything the dims after it reach. Tasks over them never add to the same element.
  int lead = 0;
  int64_t after[MAX_RANK + 1];
  after[p.rank] = 0;
  for (int d = p.rank - 1; d >= 0; --d) after[d] = after[d + 1] + (p.shape[d] - 1) * p.outStrides[d];
  for (int d = 0; d < p.rank - 1; ++d) {
    if (p.shape[d] > 1 && p.outStrides[d] <= after[d + 1]) break;
    lead = d + 1;
  }
  int64_t tasks = 1;
  for (int d = 0; d < lead; ++d) tasks *= p.shape[d];
  pool.run(tasks > 1 ? threads : 1, tasks, [&](int64_t task) {
    const float* s = p.src;
    float* o = p.out + p.viewOffset;
    for (int d = lead - 1; d >= 0; --d) {
      const int64_t i = task % p.shape[d];
      task /= p.shape[d];
      s += i * p.srcStrides[d];
      o += i * p.outStrides[d];
    }
    addFrom(p, lead, s, o);
  });
}

}  // namespace core_cpu
