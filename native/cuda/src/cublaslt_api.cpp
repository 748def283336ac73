#include "cublaslt_api.h"

#include <dlfcn.h>

namespace lt {

const Lib* load(std::string& why) {
  static Lib lib;
  static bool tried = false, ok = false;
  static std::string reason;
  if (tried) { why = reason; return ok ? &lib : nullptr; }
  tried = true;
  void* h = nullptr;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) { lib.soname = name; break; }
  }
  if (!h) { why = reason = "libcublasLt.so not found"; return nullptr; }
#define LT_RESOLVE(name, sym, type)                                   \
  lib.name = reinterpret_cast<Lib::name##_fn>(dlsym(h, sym));                   \
  if (!lib.name) { why = reason = lib.soname + " lacks " sym; return nullptr; }
  LT_FUNCTIONS(LT_RESOLVE)
#undef LT_RESOLVE
  ok = true;
  return &lib;
}

}  // namespace lt
