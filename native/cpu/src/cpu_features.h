// What the processor and the OS let the kernels use, read once: on x86-64 from CPUID (and XGETBV:
// the OS must save the wider registers for AVX and AVX-512 to be usable), on linux-arm64 from the
// kernel's hardware capabilities (getauxval: AT_HWCAP, AT_HWCAP2).
#pragma once
#include <string>
#include <vector>

namespace core_cpu {

struct CpuFeatures {
  bool avx2fma = false;  // AVX2 and FMA3, with OS support for the ymm state
  bool avx512 = false;   // AVX-512 F, with OS support for the zmm and opmask state
  std::vector<std::string> names;  // every feature found, lowercase as in /proc/cpuinfo (x86 flags, arm64 Features)
};

const CpuFeatures& cpuFeatures();

}  // namespace core_cpu
