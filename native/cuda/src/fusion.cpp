#include "fusion.h"

#include <map>
#include <memory>
#include <vector>

extern "C" const char core_cuda_src_args[], core_cuda_src_op_codes[], core_cuda_src_common[], core_cuda_src_elementwise[],
    core_cuda_src_expressions[];

namespace fz {

namespace {

// NVRTC ships no C library headers: the two that common.cuh includes, reduced to what the kernels use
// (LP64 types, as glibc defines them; math functions are NVRTC built-ins).
const char STDINT_H[] =
    "#pragma once\n"
    "typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t;\n"
    "typedef int int32_t; typedef unsigned int uint32_t; typedef long int64_t; typedef unsigned long uint64_t;\n"
    "typedef unsigned long uintptr_t;\n";
const char MATH_H[] = "#pragma once\n";

std::vector<std::string> options(int ccMajor, int ccMinor) {
  // The eager fatbin is built by nvcc with its defaults (-O3, --fmad=true, IEEE division and square
  // root, denormals kept): the same here, so each op's own formula compiles as in eager; op boundaries
  // use __fadd_rn/__fsub_rn/__fmul_rn (never contracted) in the generated glue.
  // A cubin for the device's own architecture, by NVRTC's ptxas: the same code generator as the
  // eager fatbin's sm_90/sm_80 cubins when NVRTC and the build's nvcc are one CUDA release.
  return {"--std=c++17", "-arch=sm_" + std::to_string(ccMajor) + std::to_string(ccMinor), "--fmad=true", "--prec-div=true",
          "--prec-sqrt=true", "--ftz=false", "-default-device"};
}

/** The kernel headers by the names their #include directives spell. */
const std::pair<const char*, const char*> EMBEDDED[] = {
    {"args.h", core_cuda_src_args},
    {"../generated/op-codes.h", core_cuda_src_op_codes},
    {"common.cuh", core_cuda_src_common},
    {"elementwise.cuh", core_cuda_src_elementwise},
    {"../generated/elementwise-expressions.cuh", core_cuda_src_expressions},
};

/**
 * `text` with each `#include "X"` of an embedded header replaced by that header's text, once (they
 * are all #pragma once): NVRTC then needs no rule for resolving one in-memory header's relative
 * include from another, only the C library shims (<stdint.h>, <math.h>). Other includes stay.
 */
std::string expand(const std::string& text, std::vector<std::string>& done) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    const char* embedded = nullptr;
    std::string name;
    size_t q = line.find("#include \"");
    if (q != std::string::npos && line.find_first_not_of(" \t") == q) {
      const size_t close = line.find('"', q + 10);
      if (close != std::string::npos) {
        name = line.substr(q + 10, close - q - 10);
        for (const auto& e : EMBEDDED)
          if (name == e.first) embedded = e.second;
      }
    }
    if (line == "#pragma once") continue;  // inlined once anyway (a main file's #pragma once draws a warning)
    if (!embedded) {
      out += line + "\n";
      continue;
    }
    bool seen = false;
    for (const std::string& d : done) seen = seen || d == name;
    if (seen) continue;
    done.push_back(name);
    out += "// ---- " + name + " (embedded) ----\n" + expand(embedded, done);
  }
  return out;
}

}  // namespace

const nv::Lib* nvrtc(std::string& why) { return nv::load(why); }

std::string expandHeaders(const std::string& source) {
  std::vector<std::string> done;
  return expand(source, done);
}

std::string optionsText(int ccMajor, int ccMinor) {
  std::string s;
  for (const std::string& o : options(ccMajor, ccMinor)) s += (s.empty() ? "" : " ") + o;
  return s;
}

const Built& build(const std::string& source, int ccMajor, int ccMinor) {
  static std::map<std::string, std::unique_ptr<Built>> cache;
  const std::vector<std::string> opts = options(ccMajor, ccMinor);
  const std::string key = optionsText(ccMajor, ccMinor) + "\n" + source;
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  auto built = std::make_unique<Built>();
  std::string why;
  const nv::Lib* lib = nvrtc(why);
  if (!lib) {
    built->log = why;
    return *cache.emplace(key, std::move(built)).first->second;
  }
  const std::string program = expandHeaders(source);
  const char* headers[] = {STDINT_H, MATH_H};
  const char* names[] = {"stdint.h", "math.h"};
  nv::Program prog = nullptr;
  nv::Result r = lib->createProgram(&prog, program.c_str(), "core_cuda_fused.cu", 2, headers, names);
  if (r != nv::SUCCESS) {
    built->log = "nvrtcCreateProgram failed: " + nv::errorText(*lib, r);
    return *cache.emplace(key, std::move(built)).first->second;
  }
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = lib->compileProgram(prog, (int)argv.size(), argv.data());
  size_t logSize = 0;
  if (lib->getProgramLogSize(prog, &logSize) == nv::SUCCESS && logSize > 1) {
    std::string log(logSize, '\0');
    if (lib->getProgramLog(prog, &log[0]) == nv::SUCCESS) built->log = log.c_str();
  }
  if (r != nv::SUCCESS) {
    built->log = "nvrtcCompileProgram: " + nv::errorText(*lib, r) + (built->log.empty() ? "" : ": " + built->log);
  } else {
    size_t size = 0;
    r = lib->getCUBINSize(prog, &size);
    if (r == nv::SUCCESS && size > 0) {
      built->image.assign(size, '\0');
      r = lib->getCUBIN(prog, &built->image[0]);
    } else if (r == nv::SUCCESS) {
      r = -1;
    }
    if (r == nv::SUCCESS) built->ok = true;
    else built->log = "nvrtcGetCUBIN failed: " + (r < 0 ? std::string("no cubin") : nv::errorText(*lib, r));
  }
  lib->destroyProgram(&prog);
  return *cache.emplace(key, std::move(built)).first->second;
}

}  // namespace fz
