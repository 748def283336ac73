// OpenBLAS's cblas_sgemm, when libopenblas.so.0 (Debian's libopenblas0) can be dlopen'ed.
#pragma once
#include <string>

#include "gemm.h"

namespace core_cpu {

class OpenBlas {
 public:
  /** The library, loaded on first call; `available()` says whether it was found. */
  static const OpenBlas& instance();
  bool available() const { return sgemm_ != nullptr; }
  /** Where it was loaded from, or why not. */
  const std::string& detail() const { return detail_; }
  /**
   * Runs the problem batch by batch when every matrix has a unit stride along rows or columns (what
   * cblas takes); false, having done nothing, otherwise.
   */
  bool gemm(const GemmProblem& problem, int threads) const;

 private:
  OpenBlas();
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  using SetThreads = void (*)(int);
  Sgemm sgemm_ = nullptr;
  SetThreads setThreads_ = nullptr;
  std::string detail_;
};

}  // namespace core_cpu
