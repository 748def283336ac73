#include "cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace core_cpu {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const unsigned leaf1c = c, leaf1d = d;
  unsigned long long xcr0 = 0;
  if (leaf1c & (1u << 27)) {  // OSXSAVE: XGETBV is available
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool ymmState = (xcr0 & 0x6) == 0x6;     // xmm and ymm saved
  const bool zmmState = (xcr0 & 0xe6) == 0xe6;   // plus opmask, zmm_hi256, hi16_zmm
  const bool tileState = (xcr0 & 0x60000) == 0x60000;  // AMX tile config and data
  unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b7, c7, d7);
    unsigned b71 = 0, c71 = 0, d71 = 0;
    __cpuid_count(7, 1, a71, b71, c71, d71);
  }
  struct Bit { const char* name; bool on; };
  const Bit bits[] = {
      {"sse2", (leaf1d & (1u << 26)) != 0},
      {"sse4_2", (leaf1c & (1u << 20)) != 0},
      {"avx", ymmState && (leaf1c & (1u << 28)) != 0},
      {"f16c", ymmState && (leaf1c & (1u << 29)) != 0},
      {"fma", ymmState && (leaf1c & (1u << 12)) != 0},
      {"avx2", ymmState && (b7 & (1u << 5)) != 0},
      {"avx512f", zmmState && (b7 & (1u << 16)) != 0},
      {"avx512dq", zmmState && (b7 & (1u << 17)) != 0},
      {"avx512bw", zmmState && (b7 & (1u << 30)) != 0},
      {"avx512vl", zmmState && (b7 & (1u << 31)) != 0},
      {"avx512_vnni", zmmState && (c7 & (1u << 11)) != 0},
      {"avx512_bf16", zmmState && (a71 & (1u << 5)) != 0},
      {"avx512_fp16", zmmState && (d7 & (1u << 23)) != 0},
      {"amx_bf16", tileState && (d7 & (1u << 22)) != 0},
      {"amx_tile", tileState && (d7 & (1u << 24)) != 0},
      {"amx_int8", tileState && (d7 & (1u << 25)) != 0},
  };
  for (const Bit& bit : bits) {
    if (bit.on) f.names.emplace_back(bit.name);
  }
  const auto has = [&](const char* name) {
    for (const std::string& n : f.names) {
      if (n == name) return true;
    }
    return false;
  };
  f.avx2fma = has("avx2") && has("fma");
  f.avx512 = has("avx512f");
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel's hardware capability words, by the bit numbers of its uapi <asm/hwcap.h> (a fixed
  // ABI, so older headers need not define every name) and named as /proc/cpuinfo's Features line.
  // Nothing here picks a kernel yet: the portable code is compiled for the AArch64 baseline (NEON).
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  struct Bit { const char* name; unsigned long word; int bit; };
  const Bit bits[] = {
      {"fp", hwcap, 0},        {"asimd", hwcap, 1},      {"aes", hwcap, 3},        {"pmull", hwcap, 4},
      {"sha2", hwcap, 6},      {"crc32", hwcap, 7},      {"atomics", hwcap, 8},    {"fphp", hwcap, 9},
      {"asimdhp", hwcap, 10},  {"asimdrdm", hwcap, 12},  {"fcma", hwcap, 14},      {"asimddp", hwcap, 20},
      {"sve", hwcap, 22},      {"asimdfhm", hwcap, 23},  {"sve2", hwcap2, 1},      {"svei8mm", hwcap2, 9},
      {"svebf16", hwcap2, 12}, {"i8mm", hwcap2, 13},     {"bf16", hwcap2, 14},     {"sme", hwcap2, 23},
  };
  for (const Bit& bit : bits) {
    if ((bit.word >> bit.bit) & 1ul) f.names.emplace_back(bit.name);
  }
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace core_cpu
