// The slice of NVRTC (the CUDA runtime compiler) that compile()'s elementwise fusion uses, declared
// by hand and resolved with dlsym at run time like the driver (driver_api.h) and cuBLASLt: NVRTC is
// optional. Without it the backend does not fuse (prepared programs are CUDA graphs of the eager
// kernels) and says why once. test/api_check.cpp compares these declarations with nvrtc.h where the
// toolkit ships it.
#pragma once
#include <stddef.h>
#include <string>

namespace nv {

using Result = int;  // nvrtcResult
struct Program_st; using Program = Program_st*;

constexpr Result SUCCESS = 0;
constexpr Result ERROR_COMPILATION = 6;

/** Each entry: our name, the exported symbol, the prototype. */
#define NVRTC_FUNCTIONS(X)                                                                                          \
  X(version, "nvrtcVersion", Result (*)(int*, int*))                                                                \
  X(getErrorString, "nvrtcGetErrorString", const char* (*)(Result))                                                 \
  X(createProgram, "nvrtcCreateProgram", Result (*)(Program*, const char*, const char*, int, const char* const*, const char* const*)) \
  X(compileProgram, "nvrtcCompileProgram", Result (*)(Program, int, const char* const*))                            \
  X(getProgramLogSize, "nvrtcGetProgramLogSize", Result (*)(Program, size_t*))                                      \
  X(getProgramLog, "nvrtcGetProgramLog", Result (*)(Program, char*))                                                \
  X(getPTXSize, "nvrtcGetPTXSize", Result (*)(Program, size_t*))                                                    \
  X(getPTX, "nvrtcGetPTX", Result (*)(Program, char*))                                                              \
  X(getCUBINSize, "nvrtcGetCUBINSize", Result (*)(Program, size_t*))                                                \
  X(getCUBIN, "nvrtcGetCUBIN", Result (*)(Program, char*))                                                          \
  X(destroyProgram, "nvrtcDestroyProgram", Result (*)(Program*))

/** The resolved entry points. */
struct Lib {
#define NVRTC_FIELD(name, sym, type) \
  using name##_fn = type;          \
  name##_fn name = nullptr;
  NVRTC_FUNCTIONS(NVRTC_FIELD)
#undef NVRTC_FIELD
  std::string soname;     // what was loaded: "libnvrtc.so.13" or CORE_CUDA_NVRTC's path
  int major = 0, minor = 0;
};

/**
 * dlopen NVRTC once: CORE_CUDA_NVRTC (a path or soname) when set, else libnvrtc.so.13, then
 * libnvrtc.so.12. Returns nullptr with `why` set when it is absent or lacks an entry point.
 */
const Lib* load(std::string& why);

/** "NVRTC_ERROR_COMPILATION (nvrtcResult 6)" style text. */
std::string errorText(const Lib& l, Result r);

}  // namespace nv
