#include "nvrtc_api.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <vector>

namespace nv {

std::string errorText(const Lib& l, Result r) {
  const char* s = l.getErrorString ? l.getErrorString(r) : nullptr;
  return (s ? std::string(s) + " " : std::string()) + "(nvrtcResult " + std::to_string(r) + ")";
}

const Lib* load(std::string& why) {
  static Lib lib;
  static bool tried = false, ok = false;
  static std::string reason;
  if (tried) {
    why = reason;
    return ok ? &lib : nullptr;
  }
  tried = true;
  std::vector<std::string> names;
  const char* chosen = getenv("CORE_CUDA_NVRTC");
  if (chosen && *chosen) names.push_back(chosen);
  else names = {"libnvrtc.so.13", "libnvrtc.so.12"};
  void* h = nullptr;
  std::string tried_names;
  for (const std::string& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      lib.soname = n;
      break;
    }
    tried_names += (tried_names.empty() ? "" : ", ") + n;
  }
  if (!h) {
    why = reason = "NVRTC not found (" + tried_names + ")";
    return nullptr;
  }
#define NVRTC_RESOLVE(name, sym, type)                                          \
  lib.name = reinterpret_cast<Lib::name##_fn>(dlsym(h, sym));                    \
  if (!lib.name) {                                                              \
    why = reason = lib.soname + " lacks " sym;                                  \
    return nullptr;                                                             \
  }
  NVRTC_FUNCTIONS(NVRTC_RESOLVE)
#undef NVRTC_RESOLVE
  if (lib.version(&lib.major, &lib.minor) != SUCCESS) {
    why = reason = lib.soname + ": nvrtcVersion failed";
    return nullptr;
  }
  ok = true;
  return &lib;
}

}  // namespace nv
