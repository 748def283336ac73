// A fake libcuda.so.1 for the tests: the driver API entry points the addon resolves, implemented on
// host memory, with kernel launches running the same kernel sources on the CPU emulation. Loaded
// through LD_LIBRARY_PATH, it lets the whole backend (TypeScript, N-API addon, runtime, layouts,
// kernels) run end to end — conformance suite included — on a machine without a GPU. Device
// pointers are host pointers; streams and events are synchronous. FAKE_CUDA_VERSION and
// FAKE_CUDA_DEVICES simulate an old driver or a machine without a device.
#include "../kernels/kernels.cu"

#include <stdlib.h>
#include <string.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

namespace {

using Thunk = std::function<void(dim3, dim3, void**)>;

template <typename... A, size_t... I>
void callWith(void (*k)(A...), dim3 g, dim3 b, void** p, std::index_sequence<I...>) {
  emu::launch(g, b, k, *static_cast<A*>(p[I])...);
}
template <typename... A>
Thunk thunk(void (*k)(A...)) {
  return [k](dim3 g, dim3 b, void** p) { callWith(k, g, b, p, std::index_sequence_for<A...>{}); };
}

std::unordered_map<std::string, Thunk>& kernels() {
  static std::unordered_map<std::string, Thunk> table = [] {
    std::unordered_map<std::string, Thunk> t;
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

}  // namespace

using CUresult = int;
using CUdeviceptr = unsigned long long;

extern "C" {
CUresult cuInit(unsigned) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = envInt("FAKE_CUDA_VERSION", 13000); return 0; }
CUresult cuGetErrorString(CUresult r, const char** s) { *s = r == 0 ? "no error" : "fake driver error"; return 0; }
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
CUresult cuStreamCreate(void** s, unsigned) { *s = &dummy; return 0; }
CUresult cuStreamSynchronize(void*) { return 0; }
CUresult cuStreamWaitEvent(void*, void*, unsigned) { return 0; }
CUresult cuEventCreate(void** e, unsigned) { *e = new int(0); return 0; }
CUresult cuEventRecord(void*, void*) { return 0; }
CUresult cuEventQuery(void*) { return 0; }
CUresult cuEventSynchronize(void*) { return 0; }
CUresult cuEventDestroy_v2(void* e) { delete static_cast<int*>(e); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  void* m = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  memset(m, 0xA5, n);  // garbage, like fresh device memory: a kernel that reads before writing shows up
  *p = (CUdeviceptr)(uintptr_t)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void*)(uintptr_t)p); return 0; }
CUresult cuMemHostAlloc(void** p, size_t n, unsigned) { *p = malloc(n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void*) { memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void*) { memcpy(d, (const void*)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void*) { memmove((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void*) { memset((void*)(uintptr_t)d, v, n); return 0; }
CUresult cuModuleLoadData(void** m, const void* image) {
  // The addon hands over its embedded fatbin; check its magic (0xBA55ED50) so a broken embed fails here.
  uint32_t magic;
  memcpy(&magic, image, 4);
  if (magic != 0xBA55ED50u) return 200;  // CUDA_ERROR_INVALID_IMAGE
  *m = &dummy;
  return 0;
}
CUresult cuModuleGetFunction(void** f, void*, const char* name) {
  auto it = kernels().find(name);
  if (it == kernels().end()) return 500;  // CUDA_ERROR_NOT_FOUND
  *f = &it->second;
  return 0;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned, void*, void** params, void**) {
  (*static_cast<Thunk*>(f))(dim3(gx, gy, gz), dim3(bx, by, bz), params);
  launches++;
  return 0;
}
}
