#include "openblas.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>

namespace core_cpu {

namespace {

constexpr int ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;

struct Layout {
  int trans;
  int ld;
};

/**
 * How cblas reads a rows×cols matrix with these strides: row-major (column stride 1) or its
 * transpose (row stride 1), with a leading dimension that covers the other extent. A stride along a
 * dimension of size 1 is never used, so it is replaced by the smallest valid leading dimension.
 */
bool layoutOf(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride, Layout* out) {
  if (rows == 1) rowStride = cols;
  if (cols == 1) colStride = rows;
  if (colStride == 1 && rowStride >= std::max<int64_t>(cols, 1) && rowStride <= INT_MAX) {
    *out = {NO_TRANS, static_cast<int>(rowStride)};
    return true;
  }
  if (rowStride == 1 && colStride >= std::max<int64_t>(rows, 1) && colStride <= INT_MAX) {
    *out = {TRANS, static_cast<int>(colStride)};
    return true;
  }
  return false;
}

}  // namespace

OpenBlas::OpenBlas() {
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    detail_ = why != nullptr ? why : "libopenblas.so.0 was not found";
    return;
  }
  sgemm_ = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
  setThreads_ = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"));
  detail_ = sgemm_ != nullptr ? "libopenblas.so.0" : "libopenblas.so.0 has no cblas_sgemm";
}

const OpenBlas& OpenBlas::instance() {
  static const OpenBlas lib;
  return lib;
}

bool OpenBlas::gemm(const GemmProblem& p, int threads) const {
  if (sgemm_ == nullptr || p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return false;
  Layout a, b, c;
  if (!layoutOf(p.m, p.k, p.a.rowStride, p.a.colStride, &a) || !layoutOf(p.k, p.n, p.b.rowStride, p.b.colStride, &b) ||
      !layoutOf(p.m, p.n, p.outRowStride, p.outColStride, &c) || c.trans != NO_TRANS) {
    return false;
  }
  if (setThreads_ != nullptr) setThreads_(threads);
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    sgemm_(ROW_MAJOR, a.trans, b.trans, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), 1.0f,
           p.a.data + batch * p.a.batchStride, a.ld, p.b.data + batch * p.b.batchStride, b.ld, 0.0f,
           p.out + batch * p.outBatchStride, c.ld);
  }
  return true;
}

}  // namespace core_cpu
