#include "strided_sum.h"

#include <algorithm>
#include <cstring>

#include "half.h"
#include "pool.h"

namespace core_cpu {

namespace {

/** Below this many elements a call runs on one thread: waking workers costs more. */
constexpr int64_t PARALLEL_ELEMENTS = INT64_C(1) << 16;
/** Pool tasks per thread for the sums: a few, so a slow thread's share is taken over. */
constexpr int64_t BLOCKS_PER_THREAD = 8;
/** Zeroing chunk, in bytes. */
constexpr int64_t ZERO_CHUNK = INT64_C(1) << 18;

/**
 * `rows` contiguous runs of n: out run r (at o + r·os) += src run r (at s + r·ss), in order. Runs
 * may overlap in out (a 1-D unfold's windows); within a run the elements are distinct, so the
 * vectorised loop adds each element's terms in the same order. Compiled per vector ISA: a
 * convolution's runs are short (an output row), and with the baseline's 4-wide loop and scalar
 * tail the Net's col2im took a quarter longer.
 */
CORE_VECTOR_CLONES void addRuns(const float* s, int64_t ss, float* o, int64_t os, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict a = s + r * ss;
    float* __restrict b = o + r * os;
    for (int64_t j = 0; j < n; ++j) b[j] += a[j];
  }
}

/** Adds the dims from `d` on, row-major, of src at `s` into out at `o`. */
void addFrom(const StridedSumProblem& p, int d, const float* s, float* o) {
  const int64_t n = p.shape[d];
  const int64_t ss = p.srcStrides[d], os = p.outStrides[d];
  const int last = p.rank - 1;
  if (d == last) {
    if (ss == 1 && os == 1) addRuns(s, 0, o, 0, 1, n);
    else
      for (int64_t j = 0; j < n; ++j) o[j * os] += s[j * ss];
    return;
  }
  if (d == last - 1 && p.srcStrides[last] == 1 && p.outStrides[last] == 1) {
    addRuns(s, ss, o, os, n, p.shape[last]);
    return;
  }
  for (int64_t j = 0; j < n; ++j) addFrom(p, d + 1, s + j * ss, o + j * os);
}

}  // namespace

void zeroParallel(void* out, int64_t bytes, int threads) {
  Pool::instance().run(threads, (bytes + ZERO_CHUNK - 1) / ZERO_CHUNK, [&](int64_t c) {
    const int64_t begin = c * ZERO_CHUNK;
    std::memset(static_cast<char*>(out) + begin, 0, static_cast<size_t>(std::min(ZERO_CHUNK, bytes - begin)));
  });
}

void addStrided(const StridedSumProblem& p) {
  if (p.rank == 0) {
    p.out[p.viewOffset] += p.src[0];  // 0 + src, as every other element: −0 sums to +0
    return;
  }
  addFrom(p, 0, p.src, p.out + p.viewOffset);
}

void stridedSum(const StridedSumProblem& p, int threads) {
  int64_t numel = 1;
  for (int d = 0; d < p.rank; ++d) numel *= p.shape[d];
  if (numel < PARALLEL_ELEMENTS) threads = 1;
  zeroParallel(p.out, p.outNumel * static_cast<int64_t>(sizeof(float)), threads);
  if (numel == 0) return;
  if (p.rank == 0) {
    addStrided(p);
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
  // Runs of consecutive tasks per pool task: neighbouring tasks' out regions can share a cache line
  // (a 26×26 plane is not a whole number of lines), and handing them to threads one at a time made
  // two threads slower than one on a convolution's col2im.
  const int64_t blocks = std::min<int64_t>(tasks, static_cast<int64_t>(threads) * BLOCKS_PER_THREAD);
  Pool::instance().run(tasks > 1 ? threads : 1, blocks, [&](int64_t block) {
    const int64_t first = block * tasks / blocks, end = (block + 1) * tasks / blocks;
    for (int64_t task = first; task < end; ++task) {
      const float* s = p.src;
      float* o = p.out + p.viewOffset;
      for (int64_t rest = task, d = lead - 1; d >= 0; --d) {
        const int64_t i = rest % p.shape[d];
        rest /= p.shape[d];
        s += i * p.srcStrides[d];
        o += i * p.outStrides[d];
      }
      addFrom(p, lead, s, o);
    }
  });
}

}  // namespace core_cpu
