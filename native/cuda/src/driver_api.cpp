#include "driver_api.h"

#include <dlfcn.h>
#include <stdio.h>

namespace cu {

namespace {
std::string versionText(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

std::string errorText(const Driver& d, Result r) {
  const char* s = nullptr;
  if (d.getErrorString && d.getErrorString(r, &s) == SUCCESS && s) return std::string(s) + " (CUresult " + std::to_string(r) + ")";
  return "CUresult " + std::to_string(r);
}

const Driver* loadDriver(std::string& reason, int& deviceCount) {
  static Driver driver;
  static bool tried = false, ok = false;
  static std::string lastReason;
  static int count = 0;
  if (tried) {
    reason = lastReason;
    deviceCount = count;
    return ok ? &driver : nullptr;
  }
  tried = true;
  auto fail = [&](std::string why) -> const Driver* {
    lastReason = reason = std::move(why);
    return nullptr;
  };
  // RTLD_LOCAL: the driver's symbols stay out of the process namespace (Node and other addons).
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("no NVIDIA driver (libcuda.so.1 not found)");
#define CU_RESOLVE(name, sym, type)                                                       \
  driver.name = reinterpret_cast<Driver::name##_fn>(dlsym(lib, sym));                                  \
  if (!driver.name) return fail(std::string("driver too old: needs ≥ CUDA ") +            \
                                std::to_string(REQUIRED_DRIVER_VERSION / 1000) + " (libcuda.so.1 lacks " sym ")");
  CU_DRIVER_FUNCTIONS(CU_RESOLVE)
#undef CU_RESOLVE
  Result r = driver.init(0);
  if (r == ERROR_NO_DEVICE) return fail("no device (cuInit: no CUDA-capable device is detected)");
  if (r != SUCCESS) return fail("no device (cuInit failed: " + errorText(driver, r) + ")");
  if (driver.driverGetVersion(&driver.version) != SUCCESS) return fail("no NVIDIA driver (cuDriverGetVersion failed)");
  if (driver.version < REQUIRED_DRIVER_VERSION)
    return fail("driver too old: needs ≥ CUDA " + versionText(REQUIRED_DRIVER_VERSION) + " (an R580 or newer driver), found CUDA " +
                versionText(driver.version));
  r = driver.deviceGetCount(&count);
  if (r != SUCCESS || count == 0) {
    count = 0;
    return fail("no device (the driver reports no CUDA device)");
  }
  ok = true;
  deviceCount = count;
  return &driver;
}

}  // namespace cu
