// A fake libcublasLt.so.13 for the tests: the entry points src/cublaslt_api.h declares, computing
// D = op(A)·op(B) on the host with cuBLAS's column-major conventions (element (i, j) of a matrix
// with leading dimension ld at p[i + j·ld]; strided batches). With the fake driver it checks the
// addon's row-major → column-major mapping (operand swap, transposes, leading dimensions, batch
// strides) through the conformance suite's matmul cases.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/common.cuh"

namespace {

struct Desc { int compute, scale; int32_t transA = 0, transB = 0; };
struct Layout { int type; uint64_t rows, cols; int64_t ld; int32_t batch = 1; int64_t stride = 0; };

constexpr int INVALID_VALUE = 7, NOT_SUPPORTED = 15;

/**
 * This fake computes on the host at once, so a call on a capturing stream would run at capture and
 * never at replay: the addon must make cuBLASLt matmuls as calls, and a test that breaks that stops here.
 */
void refuseCapturingStream(void* stream) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  auto isCapturing = lib ? reinterpret_cast<int (*)(void*, int*)>(dlsym(lib, "cuStreamIsCapturing")) : nullptr;
  int status = 0;
  if (isCapturing && isCapturing(stream, &status) == 0 && status != 0) {
    fprintf(stderr, "fake cuBLASLt: cublasLtMatmul on a capturing stream (the addon must not capture cuBLASLt)\n");
    abort();
  }
  if (lib) dlclose(lib);
}

float load(int type, const void* p, int64_t i) {
  switch (type) {
    case 0: return static_cast<const float*>(p)[i];
    case 2: return ck::f16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case 14: return ck::bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    default: return 0;
  }
}
void store(int type, void* p, int64_t i, float v) {
  switch (type) {
    case 0: static_cast<float*>(p)[i] = v; break;
    case 2: static_cast<uint16_t*>(p)[i] = ck::floatToF16(v); break;
    case 14: static_cast<uint16_t*>(p)[i] = ck::floatToBf16(v); break;
  }
}

}  // namespace

extern "C" {
int cublasLtCreate(void** h) { static int handle; *h = &handle; return 0; }
int cublasLtMatmulDescCreate(void** d, int compute, int scale) { *d = new Desc{compute, scale}; return 0; }
int cublasLtMatmulDescDestroy(void* d) { delete static_cast<Desc*>(d); return 0; }
int cublasLtMatmulDescSetAttribute(void* d, int attr, const void* buf, size_t size) {
  if (size != sizeof(int32_t)) return INVALID_VALUE;
  Desc* desc = static_cast<Desc*>(d);
  if (attr == 3) memcpy(&desc->transA, buf, 4);
  else if (attr == 4) memcpy(&desc->transB, buf, 4);
  else return INVALID_VALUE;
  return 0;
}
int cublasLtMatrixLayoutCreate(void** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (ld < (int64_t)rows || (type != 0 && type != 2 && type != 14)) return INVALID_VALUE;  // cuBLASLt rejects ld < rows
  *l = new Layout{type, rows, cols, ld};
  return 0;
}
int cublasLtMatrixLayoutDestroy(void* l) { delete static_cast<Layout*>(l); return 0; }
int cublasLtMatrixLayoutSetAttribute(void* l, int attr, const void* buf, size_t size) {
  Layout* layout = static_cast<Layout*>(l);
  if (attr == 5 && size == 4) memcpy(&layout->batch, buf, 4);
  else if (attr == 6 && size == 8) memcpy(&layout->stride, buf, 8);
  else return INVALID_VALUE;
  return 0;
}
int cublasLtMatmul(void*, void* descp, const void* alpha, const void* A, void* Adp, const void* B, void* Bdp, const void* beta, const void* C,
                   void* Cdp, void* D, void* Ddp, const void* algo, void*, size_t, void* stream) {
  refuseCapturingStream(stream);
  const Desc& desc = *static_cast<Desc*>(descp);
  const Layout &a = *static_cast<Layout*>(Adp), &b = *static_cast<Layout*>(Bdp), &c = *static_cast<Layout*>(Cdp), &d = *static_cast<Layout*>(Ddp);
  if (desc.compute != 68 || desc.scale != 0 || algo != nullptr || C != D || Cdp != Ddp) return NOT_SUPPORTED;
  const uint64_t m = desc.transA ? a.cols : a.rows, k = desc.transA ? a.rows : a.cols;
  const uint64_t kb = desc.transB ? b.cols : b.rows, n = desc.transB ? b.rows : b.cols;
  if (k != kb || d.rows != m || d.cols != n || a.batch != d.batch || b.batch != d.batch || c.batch != d.batch) return INVALID_VALUE;
  float al, be;
  memcpy(&al, alpha, 4);
  memcpy(&be, beta, 4);
  const int64_t ea = a.type == 0 ? 4 : 2, eb = b.type == 0 ? 4 : 2, ed = d.type == 0 ? 4 : 2;
  for (int32_t z = 0; z < d.batch; z++) {
    const char* pa = static_cast<const char*>(A) + z * a.stride * ea;
    const char* pb = static_cast<const char*>(B) + z * b.stride * eb;
    char* pd = static_cast<char*>(D) + z * d.stride * ed;
    for (uint64_t i = 0; i < m; i++)
      for (uint64_t j = 0; j < n; j++) {
        float acc = 0;
        for (uint64_t p = 0; p < k; p++) {
          float x = load(a.type, pa, desc.transA ? p + i * a.ld : i + p * a.ld);
          float y = load(b.type, pb, desc.transB ? j + p * b.ld : p + j * b.ld);
          acc += x * y;
        }
        float prior = be != 0 ? load(d.type, pd, i + j * d.ld) : 0;
        store(d.type, pd, i + j * d.ld, al * acc + be * prior);
      }
  }
  return 0;
}
}
