// compile()'s elementwise fusion on the native side: NVRTC compiles a module of generated kernels
// (packages/backend-cuda/src/fusion.ts) against the eager kernels' own headers, embedded in the
// addon (embed_sources.S) and inlined into the program. Results are cached in memory by
// (source, options); the driver loads them with cuModuleLoadData.
#pragma once
#include <string>

#include "nvrtc_api.h"

namespace fz {

/** What NVRTC made of a module: the image (a cubin) for cuModuleLoadData, or the log of its failure. */
struct Built {
  bool ok = false;
  std::string image;
  std::string log;
};

/** NVRTC, or null with `why` (loaded once). */
const nv::Lib* nvrtc(std::string& why);

/** Compile `source` for compute capability major.minor (cached). */
const Built& build(const std::string& source, int ccMajor, int ccMinor);

/** `source` with the embedded kernel headers it includes inlined: the program NVRTC compiles. */
std::string expandHeaders(const std::string& source);

/** The options a module is compiled with (also part of the cache key). */
std::string optionsText(int ccMajor, int ccMinor);

}  // namespace fz
