// A fake libnvrtc.so.13 for the tests: NVRTC's entry points that the addon resolves (src/nvrtc_api.h),
// "compiling" CUDA source for the CPU emulation instead of a GPU. nvrtcCompileProgram writes the
// program and its in-memory headers into a temporary directory laid out as native/cuda (kernels/,
// generated/, emu/ linked to the real emulation), appends a launcher, and runs the host C++ compiler
// (CXX, else g++) with the kernel tests' flags into a shared object; the "PTX" or "cubin" it returns names that
// object, and the fake libcuda.so.1 (fake_libcuda.cpp) loads it in cuModuleLoadData and runs its
// kernels on the emulation. So a fused kernel of compile() runs here through the same addon path as
// on a GPU, from the same generated source. The compiler's diagnostics are the program log.
//
// FAKE_NVRTC_FAIL=1 puts an #error at the top of every program (a compile error, with its log);
// FAKE_NVRTC_COUNT=<file> appends a line per compilation to that file (tests count compilations).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#ifndef FAKE_NVRTC_EMU_DIR
#error "build with -DFAKE_NVRTC_EMU_DIR=\"<native/cuda/emu>\""
#endif

namespace {

struct Program {
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;  // include name → text
  std::string log, image;
};

constexpr int SUCCESS = 0, ERROR_INVALID_INPUT = 3, ERROR_INVALID_PROGRAM = 4, ERROR_COMPILATION = 6;

std::mutex lock;
std::string workDir;
int programs = 0;

std::string sh(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void removeWorkDir() {
  if (!workDir.empty() && !getenv("FAKE_NVRTC_KEEP")) (void)!system(("rm -rf " + sh(workDir)).c_str());
}

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return (bool)f;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string compiler() {
  const char* cxx = getenv("CXX");
  return cxx && *cxx ? cxx : "g++";
}

/** The emulation's scheduler, compiled once per process. */
bool emuObject(std::string& obj, std::string& log) {
  obj = workDir + "/emu.o";
  if (access(obj.c_str(), F_OK) == 0) return true;
  const std::string cmd = compiler() + " -std=c++17 -O1 -ffp-contract=off -fPIC -c -o " + sh(obj) + " " + sh(std::string(FAKE_NVRTC_EMU_DIR) + "/emu.cpp") +
                          " 2>" + sh(workDir + "/emu.log");
  if (system(cmd.c_str()) != 0) {
    log = "fake NVRTC: compiling the emulation failed: " + readFile(workDir + "/emu.log");
    return false;
  }
  return true;
}

// Appended to every program: the fake libcuda.so.1 launches a kernel `void k(ck_fused_args)` of the
// object through fake_nvrtc_launch (this object's own emulation), with sizeof(ck_fused_args) bytes of parameters.
const char LAUNCHER[] =
    "\n// fake NVRTC: the launcher fake_libcuda.so.1 calls\n"
    "extern \"C\" void fake_nvrtc_launch(void (*k)(ck_fused_args), dim3 g, dim3 b, void** p) {\n"
    "  emu::launch(g, b, k, *static_cast<ck_fused_args*>(p[0]));\n"
    "}\n"
    "extern \"C\" const unsigned long fake_nvrtc_args_bytes = sizeof(ck_fused_args);\n";

int compile(Program& p, int numOptions, const char* const* options) {
  std::lock_guard<std::mutex> hold(lock);
  if (workDir.empty()) {
    std::string base = (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") + std::string("/fake-nvrtc-XXXXXX");
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      p.log = "fake NVRTC: cannot create a temporary directory";
      return ERROR_COMPILATION;
    }
    workDir = buf.data();
    atexit(removeWorkDir);
  }
  std::string opts;
  for (int i = 0; i < numOptions; i++) opts += std::string(i ? " " : "") + options[i];
  const std::string dir = workDir + "/p" + std::to_string(programs++);
  mkdir(dir.c_str(), 0700);
  mkdir((dir + "/kernels").c_str(), 0700);
  mkdir((dir + "/generated").c_str(), 0700);
  if (symlink(FAKE_NVRTC_EMU_DIR, (dir + "/emu").c_str()) != 0) {
    p.log = "fake NVRTC: cannot link the emulation";
    return ERROR_COMPILATION;
  }
  for (const auto& h : p.headers) {
    // Names as the #include directives spell them, relative to kernels/.
    const std::string path = h.first.rfind("../", 0) == 0 ? dir + "/" + h.first.substr(3) : dir + "/kernels/" + h.first;
    if (!writeFile(path, h.second)) {
      p.log = "fake NVRTC: cannot write header " + h.first;
      return ERROR_COMPILATION;
    }
  }
  std::string source = p.source;
  if (getenv("FAKE_NVRTC_FAIL") && *getenv("FAKE_NVRTC_FAIL") == '1') source = "#error \"FAKE_NVRTC_FAIL: a simulated compile error\"\n" + source;
  if (!writeFile(dir + "/kernels/" + p.name, source + LAUNCHER)) {
    p.log = "fake NVRTC: cannot write the program";
    return ERROR_COMPILATION;
  }
  std::string emu;
  if (!emuObject(emu, p.log)) return ERROR_COMPILATION;
  const std::string so = dir + "/fused.so";
  // The kernel tests' flags (scripts/kernel-test.mjs): -ffp-contract=off keeps every operation rounding on its own.
  const std::string cmd = compiler() + " -std=c++17 -O1 -ffp-contract=off -shared -fPIC -Wl,-Bsymbolic -o " + sh(so) + " -x c++ " +
                          sh(dir + "/kernels/" + p.name) + " -x none " + sh(emu) + " 2>" + sh(dir + "/log");
  const int status = system(cmd.c_str());
  p.log = "fake NVRTC (" + opts + ")\n" + readFile(dir + "/log");
  if (const char* counter = getenv("FAKE_NVRTC_COUNT")) {
    std::ofstream f(counter, std::ios::app);
    f << opts << "\n";
  }
  if (status != 0) return ERROR_COMPILATION;
  p.image = "FAKE-NVRTC-SO:" + so;
  return SUCCESS;
}

}  // namespace

extern "C" {
int nvrtcVersion(int* major, int* minor) {
  *major = 13;
  *minor = 0;
  return SUCCESS;
}
const char* nvrtcGetErrorString(int r) {
  switch (r) {
    case SUCCESS: return "NVRTC_SUCCESS";
    case ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR (fake)";
  }
}
int nvrtcCreateProgram(Program** prog, const char* src, const char* name, int numHeaders, const char* const* headers, const char* const* includeNames) {
  if (!prog || !src) return ERROR_INVALID_INPUT;
  Program* p = new Program;
  p->source = src;
  p->name = name && *name ? name : "default_program.cu";
  for (int i = 0; i < numHeaders; i++) p->headers.emplace_back(includeNames[i], headers[i]);
  *prog = p;
  return SUCCESS;
}
int nvrtcCompileProgram(Program* p, int numOptions, const char* const* options) {
  if (!p) return ERROR_INVALID_PROGRAM;
  return compile(*p, numOptions, options);
}
int nvrtcGetProgramLogSize(Program* p, size_t* n) {
  if (!p) return ERROR_INVALID_PROGRAM;
  *n = p->log.size() + 1;
  return SUCCESS;
}
int nvrtcGetProgramLog(Program* p, char* out) {
  if (!p) return ERROR_INVALID_PROGRAM;
  memcpy(out, p->log.c_str(), p->log.size() + 1);
  return SUCCESS;
}
int nvrtcGetPTXSize(Program* p, size_t* n) {
  if (!p || p->image.empty()) return ERROR_INVALID_PROGRAM;
  *n = p->image.size() + 1;
  return SUCCESS;
}
int nvrtcGetPTX(Program* p, char* out) {
  if (!p || p->image.empty()) return ERROR_INVALID_PROGRAM;
  memcpy(out, p->image.c_str(), p->image.size() + 1);
  return SUCCESS;
}
// The "cubin" is the same text: the fake libcuda.so.1 loads either.
int nvrtcGetCUBINSize(Program* p, size_t* n) { return nvrtcGetPTXSize(p, n); }
int nvrtcGetCUBIN(Program* p, char* out) { return nvrtcGetPTX(p, out); }
int nvrtcDestroyProgram(Program** p) {
  if (!p) return ERROR_INVALID_PROGRAM;
  delete *p;
  *p = nullptr;
  return SUCCESS;
}
}
