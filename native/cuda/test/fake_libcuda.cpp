// A fake libcuda.so.1 for the tests: the driver API entry points the addon resolves, implemented on
// host memory, with kernel launches running the same kernel sources on the CPU emulation. Loaded
// through LD_LIBRARY_PATH, it lets the whole backend (TypeScript, N-API addon, runtime, layouts,
// kernels) run end to end — conformance suite included — on a machine without a GPU. Device
// pointers are host pointers; streams and events are synchronous. FAKE_CUDA_VERSION and
// FAKE_CUDA_DEVICES simulate an old driver or a machine without a device.
//
// Stream capture and graphs are strict: while a stream captures, its kernel launches and device
// copies are recorded (parameters copied, as the driver does) instead of run, and cuGraphLaunch runs
// them in order. A host copy, event record, event wait or synchronize on the capturing stream, and an
// allocation, free or event query on the capturing thread, fail with CUDA's capture errors and
// invalidate the capture (cuStreamEndCapture then fails): a capture that would be wrong on a GPU
// fails here. (CUDA itself captures host copies and events; the addon must not, so we refuse them.)
#include "../kernels/kernels.cu"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using Thunk = std::function<void(dim3, dim3, void**)>;

/** A kernel: how to call it, and its parameters' sizes (a captured launch copies their bytes). */
struct Kernel {
  Thunk run;
  std::vector<size_t> sizes;
};

template <typename... A, size_t... I>
void callWith(void (*k)(A...), dim3 g, dim3 b, void** p, std::index_sequence<I...>) {
  emu::launch(g, b, k, *static_cast<A*>(p[I])...);
}
template <typename... A>
Kernel thunk(void (*k)(A...)) {
  return {[k](dim3 g, dim3 b, void** p) { callWith(k, g, b, p, std::index_sequence_for<A...>{}); }, {sizeof(A)...}};
}

std::unordered_map<std::string, Kernel>& kernels() {
  static std::unordered_map<std::string, Kernel> table = [] {
    std::unordered_map<std::string, Kernel> t;
#define K(name) t.emplace(#name, thunk(name));
#define K_TYPED(sfx, T) K(ck_unary_##sfx) K(ck_binary_##sfx) K(ck_compare_##sfx) K(ck_reduce_##sfx) K(ck_argreduce_##sfx)
    CK_FOR_TYPES(K_TYPED)
#define K_FLOAT(sfx, T) K(ck_matmul_##sfx) K(ck_softmax_##sfx) K(ck_crossentropy_##sfx) K(ck_unscale_##sfx) K(ck_adam_##sfx) K(ck_scatteradd_##sfx) K(ck_addcmul_##sfx) \
  K(ck_attention_##sfx##_64) K(ck_attention_##sfx##_128)
    CK_FOR_FLOATS(K_FLOAT)
#define K_ORDERING(sfx, T) K(ck_argsort_keys_##sfx) K(ck_scatter_##sfx)
    CK_FOR_TYPES(K_ORDERING)
    K(ck_argsort_step) K(ck_cumulative_f32) K(ck_cumulative_f16) K(ck_cumulative_bf16) K(ck_cumulative_i32)
    K(ck_matmul_i32) K(ck_scatteradd_i32) K(ck_reduce_f16_f32) K(ck_reduce_bf16_f32) K(ck_matmul_wmma_f16) K(ck_matmul_wmma_bf16) K(ck_random)
#define K_MOVES(w) K(ck_copy_##w) K(ck_fill_##w) K(ck_where_##w) K(ck_gather_##w)
    K_MOVES(w1) K_MOVES(w2) K_MOVES(w4)
#define K_CAST_TO(s, d) K(ck_cast_##s##_##d)
#define K_CAST_FROM(s, T) K_CAST_TO(s, f32) K_CAST_TO(s, f16) K_CAST_TO(s, bf16) K_CAST_TO(s, i32) K_CAST_TO(s, b8)
    CK_FOR_TYPES(K_CAST_FROM)
    return t;
  }();
  return table;
}

int envInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v ? atoi(v) : fallback;
}

int dummy;
uint64_t launches = 0;

/**
 * A module the fake NVRTC (fake_nvrtc.cpp) built: a shared object of kernels `void k(ck_fused_args)`
 * run on its own copy of the emulation through its fake_nvrtc_launch.
 */
struct SharedModule {
  void* lib;
  void (*launch)(void (*)(void*), dim3, dim3, void**);
  size_t argsBytes;
  std::unordered_map<std::string, Kernel> kernels;
};
std::set<SharedModule*> sharedModules;
constexpr char SHARED_MODULE_PREFIX[] = "FAKE-NVRTC-SO:";

constexpr int INVALID_HANDLE = 400, ILLEGAL_STATE = 401, CAPTURE_UNSUPPORTED = 900, CAPTURE_INVALIDATED = 901, CAPTURE_ISOLATION = 905,
              CAPTURE_WRONG_THREAD = 908;

/** One recorded operation: a kernel launch (parameter bytes copied) or a device copy / memset. */
struct Node {
  const Kernel* kernel = nullptr;
  dim3 grid, block;
  std::vector<unsigned char> bytes;
  std::vector<size_t> offsets;
  void* dst = nullptr;
  const void* src = nullptr;  // null with a kernel-less node: a memset of `value`
  size_t n = 0;
  unsigned char value = 0;
  void run() const {
    if (kernel) {
      std::vector<void*> params;
      for (size_t o : offsets) params.push_back(const_cast<unsigned char*>(bytes.data()) + o);
      kernel->run(grid, block, params.data());
    } else if (src) {
      memmove(dst, src, n);
    } else {
      memset(dst, value, n);
    }
  }
};

struct Stream {
  bool capturing = false, invalidated = false;
  int mode = 0;
  std::thread::id thread;
  std::vector<Node> nodes;
};
struct Graph { std::vector<Node> nodes; };

// Worker threads (event waits) look at the streams' capture state while the JS thread changes it.
std::mutex captureLock;
std::set<Stream*> streams;
std::set<Graph*> graphs;
std::set<Graph*> execs;  // instantiated graphs: their own copy of the nodes

Stream* asStream(void* s) { return static_cast<Stream*>(s); }

/** The stream captures: an operation that a capture cannot take invalidates it, as CUDA does. */
int refuse(Stream* s, int error) {
  s->invalidated = true;
  return error;
}

/** Allocation, free and event queries are "potentially unsafe" while this thread captures (any mode but relaxed). */
int unsafeCall() {
  std::lock_guard<std::mutex> hold(captureLock);
  for (Stream* s : streams)
    if (s->capturing && s->mode != 2 /* relaxed */ && s->thread == std::this_thread::get_id()) return refuse(s, CAPTURE_UNSUPPORTED);
  return 0;
}

}  // namespace

using CUresult = int;
using CUdeviceptr = unsigned long long;

extern "C" {
CUresult cuInit(unsigned) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = envInt("FAKE_CUDA_VERSION", 13000); return 0; }
CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case 0: *s = "no error"; break;
    case 400: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
    case 401: *s = "CUDA_ERROR_ILLEGAL_STATE"; break;
    case 900: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
    case 901: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
    case 905: *s = "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"; break;
    default: *s = "fake driver error"; break;
  }
  return 0;
}
CUresult cuDeviceGetCount(int* n) { *n = envInt("FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char* name, int len, int) { strncpy(name, "Fake CUDA device (CPU emulation)", len); return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
  *v = attr == 75 ? envInt("FAKE_CUDA_CC_MAJOR", 9) : attr == 76 ? 0 : attr == 16 ? 2 : 0;
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, int) { *b = size_t(1) << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int) { *c = &dummy; return 0; }
CUresult cuCtxSetCurrent(void*) { return 0; }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = *t = size_t(1) << 30; return 0; }
CUresult cuStreamCreate(void** s, unsigned) {
  Stream* stream = new Stream;
  std::lock_guard<std::mutex> hold(captureLock);
  streams.insert(stream);
  *s = stream;
  return 0;
}
CUresult cuStreamSynchronize(void* s) { return asStream(s)->capturing ? refuse(asStream(s), CAPTURE_UNSUPPORTED) : 0; }
// CUDA only joins an event recorded in the same capture; the addon never waits inside one.
CUresult cuStreamWaitEvent(void* s, void*, unsigned) { return asStream(s)->capturing ? refuse(asStream(s), CAPTURE_ISOLATION) : 0; }
CUresult cuEventCreate(void** e, unsigned) { *e = new int(0); return 0; }
CUresult cuEventRecord(void*, void* s) { return asStream(s)->capturing ? refuse(asStream(s), CAPTURE_UNSUPPORTED) : 0; }
CUresult cuEventQuery(void*) { return unsafeCall(); }
CUresult cuEventSynchronize(void*) { return unsafeCall(); }
CUresult cuEventDestroy_v2(void* e) { delete static_cast<int*>(e); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  if (int r = unsafeCall()) return r;
  void* m = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  memset(m, 0xA5, n);  // garbage, like fresh device memory: a kernel that reads before writing shows up
  *p = (CUdeviceptr)(uintptr_t)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  if (int r = unsafeCall()) return r;
  free((void*)(uintptr_t)p);
  return 0;
}
CUresult cuMemHostAlloc(void** p, size_t n, unsigned) {
  if (int r = unsafeCall()) return r;
  *p = malloc(n);
  return *p ? 0 : 2;
}
CUresult cuMemFreeHost(void* p) {
  if (int r = unsafeCall()) return r;
  free(p);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) {
  if (asStream(st)->capturing) return refuse(asStream(st), CAPTURE_UNSUPPORTED);
  memcpy((void*)(uintptr_t)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) {
  if (asStream(st)->capturing) return refuse(asStream(st), CAPTURE_UNSUPPORTED);
  memcpy(d, (const void*)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) {
  Node node;
  node.dst = (void*)(uintptr_t)d;
  node.src = (const void*)(uintptr_t)s;
  node.n = n;
  if (asStream(st)->capturing) asStream(st)->nodes.push_back(node);
  else node.run();
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void* st) {
  Node node;
  node.dst = (void*)(uintptr_t)d;
  node.n = n;
  node.value = v;
  if (asStream(st)->capturing) asStream(st)->nodes.push_back(node);
  else node.run();
  return 0;
}
CUresult cuModuleLoadData(void** m, const void* image) {
  // A fused module from the fake NVRTC: its "PTX" names the shared object it built.
  if (strncmp(static_cast<const char*>(image), SHARED_MODULE_PREFIX, sizeof SHARED_MODULE_PREFIX - 1) == 0) {
    void* lib = dlopen(static_cast<const char*>(image) + sizeof SHARED_MODULE_PREFIX - 1, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 200;  // CUDA_ERROR_INVALID_IMAGE
    auto* mod = new SharedModule{lib, reinterpret_cast<void (*)(void (*)(void*), dim3, dim3, void**)>(dlsym(lib, "fake_nvrtc_launch")), 0, {}};
    const auto* bytes = static_cast<const unsigned long*>(dlsym(lib, "fake_nvrtc_args_bytes"));
    if (!mod->launch || !bytes) {
      delete mod;
      return 200;
    }
    mod->argsBytes = *bytes;
    sharedModules.insert(mod);
    *m = mod;
    return 0;
  }
  // The addon hands over its embedded fatbin; check its magic (0xBA55ED50) so a broken embed fails here.
  uint32_t magic;
  memcpy(&magic, image, 4);
  if (magic != 0xBA55ED50u) return 200;  // CUDA_ERROR_INVALID_IMAGE
  *m = &dummy;
  return 0;
}
CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  if (sharedModules.count(static_cast<SharedModule*>(m))) {
    SharedModule* mod = static_cast<SharedModule*>(m);
    auto found = mod->kernels.find(name);
    if (found == mod->kernels.end()) {
      auto k = reinterpret_cast<void (*)(void*)>(dlsym(mod->lib, name));
      if (!k) return 500;  // CUDA_ERROR_NOT_FOUND
      auto launch = mod->launch;
      found = mod->kernels.emplace(name, Kernel{[launch, k](dim3 g, dim3 b, void** p) { launch(k, g, b, p); }, {mod->argsBytes}}).first;
    }
    *f = &found->second;
    return 0;
  }
  auto it = kernels().find(name);
  if (it == kernels().end()) return 500;  // CUDA_ERROR_NOT_FOUND
  *f = const_cast<Kernel*>(&it->second);
  return 0;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned, void* st, void** params,
                        void**) {
  const Kernel* k = static_cast<const Kernel*>(f);
  Stream* s = asStream(st);
  if (!s->capturing) {
    k->run(dim3(gx, gy, gz), dim3(bx, by, bz), params);
    launches++;
    return 0;
  }
  if (s->invalidated) return CAPTURE_INVALIDATED;
  // FAKE_CUDA_CAPTURE_FAIL=n: the n-th captured launch of the process fails and invalidates its capture.
  static int failAt = envInt("FAKE_CUDA_CAPTURE_FAIL", 0), captured = 0;
  if (++captured == failAt) return refuse(s, 1);  // CUDA_ERROR_INVALID_VALUE
  // The driver copies the parameters at the launch: the caller's variables may be gone at replay.
  Node node;
  node.kernel = k;
  node.grid = dim3(gx, gy, gz);
  node.block = dim3(bx, by, bz);
  for (size_t i = 0; i < k->sizes.size(); i++) {
    node.offsets.push_back(node.bytes.size());
    const unsigned char* p = static_cast<const unsigned char*>(params[i]);
    node.bytes.insert(node.bytes.end(), p, p + k->sizes[i]);
    node.bytes.resize((node.bytes.size() + 15) / 16 * 16);  // each parameter aligned for any type
  }
  s->nodes.push_back(std::move(node));
  return 0;
}

CUresult cuStreamBeginCapture_v2(void* st, int mode) {
  Stream* s = asStream(st);
  std::lock_guard<std::mutex> hold(captureLock);
  if (s->capturing) return ILLEGAL_STATE;
  s->capturing = true;
  s->invalidated = false;
  s->mode = mode;
  s->thread = std::this_thread::get_id();
  s->nodes.clear();
  return 0;
}
CUresult cuStreamEndCapture(void* st, void** graph) {
  Stream* s = asStream(st);
  *graph = nullptr;
  if (!s->capturing) return ILLEGAL_STATE;
  if (s->mode != 2 && s->thread != std::this_thread::get_id()) return CAPTURE_WRONG_THREAD;
  std::lock_guard<std::mutex> hold(captureLock);
  s->capturing = false;
  if (s->invalidated) {
    s->nodes.clear();
    return CAPTURE_INVALIDATED;
  }
  Graph* g = new Graph{std::move(s->nodes)};
  s->nodes.clear();
  graphs.insert(g);
  *graph = g;
  return 0;
}
CUresult cuStreamIsCapturing(void* st, int* status) {
  Stream* s = asStream(st);
  *status = !s->capturing ? 0 : s->invalidated ? 2 : 1;
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  Graph* g = static_cast<Graph*>(graph);
  if (!graphs.count(g)) return INVALID_HANDLE;
  Graph* e = new Graph{g->nodes};
  execs.insert(e);
  *exec = e;
  return 0;
}
CUresult cuGraphLaunch(void* exec, void* st) {
  Graph* e = static_cast<Graph*>(exec);
  if (!execs.count(e)) return INVALID_HANDLE;
  if (asStream(st)->capturing) return refuse(asStream(st), CAPTURE_UNSUPPORTED);  // no nested graphs here
  for (const Node& n : e->nodes) {
    n.run();
    if (n.kernel) launches++;
  }
  return 0;
}
CUresult cuGraphExecDestroy(void* exec) {
  Graph* e = static_cast<Graph*>(exec);
  if (!execs.erase(e)) return INVALID_HANDLE;
  delete e;
  return 0;
}
CUresult cuGraphDestroy(void* graph) {
  Graph* g = static_cast<Graph*>(graph);
  if (!graphs.erase(g)) return INVALID_HANDLE;
  delete g;
  return 0;
}
}
