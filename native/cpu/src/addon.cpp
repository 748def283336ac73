// The addon's JavaScript surface (packages/backend-cpu/src/native.ts declares it):
//   info()                         { features, kernels, openblas, openblasDetail, cores }
//   gemm(a, b, out, params, kind)  out = a @ b in float32 with kernel `kind`; returns the kernel that ran
//   elementwise(op, out, a, b, params)  out = a (op 'copy') or a + − × ÷ b over strided float32 views
// gemm's params (a Float64Array) = [batches, m, n, k, then offset, batch, row and column strides of a,
// b and out, then threads]; elementwise's = [rank, threads, shape, then offset and strides of out, a
// and b]. Every access is bounds-checked against the arrays before anything runs.
#include <napi.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cpu_features.h"
#include "gemm.h"
#include "openblas.h"
#include "strided.h"

namespace core_cpu {

namespace {

constexpr size_t PARAMS = 17;

/** The micro-kernels this CPU can run, fastest first. */
std::vector<MicroKernel> runnableKernels() {
  std::vector<MicroKernel> kernels;
  const CpuFeatures& f = cpuFeatures();
  if (f.avx512 && avx512Kernel().run != nullptr) kernels.push_back(avx512Kernel());
  if (f.avx2fma && avx2Kernel().run != nullptr) kernels.push_back(avx2Kernel());
  kernels.push_back(portableKernel());
  return kernels;
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  const CpuFeatures& f = cpuFeatures();
  Napi::Array features = Napi::Array::New(env, f.names.size());
  for (size_t i = 0; i < f.names.size(); ++i) features.Set(static_cast<uint32_t>(i), f.names[i]);
  const std::vector<MicroKernel> runnable = runnableKernels();
  Napi::Array kernels = Napi::Array::New(env, runnable.size());
  for (size_t i = 0; i < runnable.size(); ++i) kernels.Set(static_cast<uint32_t>(i), runnable[i].name);
  out.Set("features", features);
  out.Set("kernels", kernels);
  out.Set("openblas", OpenBlas::instance().available());
  out.Set("openblasDetail", OpenBlas::instance().detail());
  out.Set("cores", std::max(1u, std::thread::hardware_concurrency()));
  return out;
}

int64_t integer(Napi::Env env, double x, const char* what, const char* op = "gemm") {
  if (!(x == static_cast<double>(static_cast<int64_t>(x))) || x < -9.0e15 || x > 9.0e15) {
    throw Napi::RangeError::New(env, std::string(op) + ": " + what + " must be an integer, got " + std::to_string(x));
  }
  return static_cast<int64_t>(x);
}

/**
 * The operand's first element, after checking that every element it reaches over `extents` (rank
 * dims, in elements from `offset` by `strides`) lies in `length`.
 */
template <typename T>
T* checkedOperand(Napi::Env env, const char* op, T* data, size_t length, int64_t offset, const int64_t* extents,
                  const int64_t* strides, int rank, const char* name) {
  int64_t lo = offset, hi = offset;
  for (int d = 0; d < rank; ++d) {
    const int64_t reach = (extents[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  if (lo < 0 || hi >= static_cast<int64_t>(length)) {
    throw Napi::RangeError::New(env, std::string(op) + ": " + name + " reaches elements [" + std::to_string(lo) + ", " +
                                         std::to_string(hi) + "] of an array of " + std::to_string(length));
  }
  return data + offset;
}

/** A gemm operand: f = its offset then batch, row and column strides. */
template <typename T>
T* checkedMatrix(Napi::Env env, T* data, size_t length, const int64_t* f, int64_t batches, int64_t rows, int64_t cols,
                 const char* name) {
  const int64_t extents[3] = {batches, rows, cols};
  return checkedOperand<T>(env, "gemm", data, length, f[0], extents, f + 1, 3, name);
}

bool isF32(const Napi::CallbackInfo& info, size_t i) {
  return info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == napi_float32_array;
}

bool isF64(const Napi::CallbackInfo& info, size_t i) {
  return info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == napi_float64_array;
}

Napi::Value Gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 5 || !isF32(info, 0) || !isF32(info, 1) || !isF32(info, 2) || !isF64(info, 3) || !info[4].IsString()) {
    throw Napi::TypeError::New(env, "gemm(a, b, out, params, kind): a, b and out are Float32Arrays, params a Float64Array, kind a string");
  }
  Napi::Float64Array params = info[3].As<Napi::Float64Array>();
  if (params.ElementLength() != PARAMS) {
    throw Napi::RangeError::New(env, "gemm: params holds " + std::to_string(PARAMS) + " numbers, got " + std::to_string(params.ElementLength()));
  }
  int64_t f[PARAMS];
  for (size_t i = 0; i < PARAMS; ++i) f[i] = integer(env, params[i], "every param");
  const int64_t batches = f[0], m = f[1], n = f[2], k = f[3];
  const int threads = static_cast<int>(std::min<int64_t>(f[16], 256));
  if (batches < 1 || m < 1 || n < 1 || k < 1 || threads < 1) {
    throw Napi::RangeError::New(env, "gemm: batches, m, n, k and threads must be at least 1");
  }
  Napi::Float32Array a = info[0].As<Napi::Float32Array>(), b = info[1].As<Napi::Float32Array>(), out = info[2].As<Napi::Float32Array>();
  GemmProblem p;
  p.batches = batches;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = {checkedMatrix<const float>(env, a.Data(), a.ElementLength(), f + 4, batches, m, k, "a"), f[5], f[6], f[7]};
  p.b = {checkedMatrix<const float>(env, b.Data(), b.ElementLength(), f + 8, batches, k, n, "b"), f[9], f[10], f[11]};
  p.out = checkedMatrix<float>(env, out.Data(), out.ElementLength(), f + 12, batches, m, n, "out");
  p.outBatchStride = f[13];
  p.outRowStride = f[14];
  p.outColStride = f[15];

  const std::string kind = info[4].As<Napi::String>().Utf8Value();
  const std::vector<MicroKernel> runnable = runnableKernels();
  if (kind == "openblas") {
    if (!OpenBlas::instance().available()) throw Napi::Error::New(env, "gemm: OpenBLAS is not available: " + OpenBlas::instance().detail());
    if (OpenBlas::instance().gemm(p, threads)) return Napi::String::New(env, "openblas");
    gemm(p, runnable.front(), threads);  // a layout cblas cannot express
    return Napi::String::New(env, runnable.front().name);
  }
  for (const MicroKernel& kernel : runnable) {
    if (kind == kernel.name) {
      gemm(p, kernel, threads);
      return Napi::String::New(env, kernel.name);
    }
  }
  throw Napi::Error::New(env, "gemm: kernel '" + kind + "' cannot run on this CPU");
}

Napi::Value Elementwise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 5 || !info[0].IsString() || !isF32(info, 1) || !isF32(info, 2) || !isF32(info, 3) || !isF64(info, 4)) {
    throw Napi::TypeError::New(env, "elementwise(op, out, a, b, params): op is a string, out, a and b Float32Arrays, params a Float64Array");
  }
  static const std::pair<const char*, ElementOp> OPS[] = {
      {"copy", ElementOp::copy}, {"add", ElementOp::add}, {"sub", ElementOp::sub}, {"mul", ElementOp::mul}, {"div", ElementOp::div}};
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  const auto found = std::find_if(std::begin(OPS), std::end(OPS), [&](const auto& op) { return name == op.first; });
  if (found == std::end(OPS)) throw Napi::Error::New(env, "elementwise: op must be copy, add, sub, mul or div, got '" + name + "'");
  Napi::Float64Array params = info[4].As<Napi::Float64Array>();
  const int64_t rank = params.ElementLength() > 0 ? integer(env, params[0], "rank", "elementwise") : -1;
  if (rank < 0 || rank > MAX_RANK || params.ElementLength() != static_cast<size_t>(2 + rank + 3 * (1 + rank))) {
    throw Napi::RangeError::New(env, "elementwise: params holds [rank ≤ " + std::to_string(MAX_RANK) +
                                         ", threads, shape, then offset and strides of out, a and b], got " +
                                         std::to_string(params.ElementLength()) + " numbers");
  }
  std::vector<int64_t> f(params.ElementLength());
  for (size_t i = 0; i < f.size(); ++i) f[i] = integer(env, params[i], "every param", "elementwise");
  StridedProblem p;
  p.op = found->second;
  p.rank = static_cast<int>(rank);
  const int threads = static_cast<int>(std::min<int64_t>(f[1], 256));
  if (threads < 1) throw Napi::RangeError::New(env, "elementwise: threads must be at least 1");
  for (int d = 0; d < p.rank; ++d) {
    p.shape[d] = f[2 + d];
    if (p.shape[d] < 1) throw Napi::RangeError::New(env, "elementwise: every extent must be at least 1");
  }
  const int64_t* operand[3];
  for (int o = 0; o < 3; ++o) operand[o] = f.data() + 2 + rank + o * (1 + rank);
  std::copy(operand[0] + 1, operand[0] + 1 + rank, p.outStrides);
  std::copy(operand[1] + 1, operand[1] + 1 + rank, p.aStrides);
  std::copy(operand[2] + 1, operand[2] + 1 + rank, p.bStrides);
  Napi::Float32Array out = info[1].As<Napi::Float32Array>(), a = info[2].As<Napi::Float32Array>(), b = info[3].As<Napi::Float32Array>();
  p.out = checkedOperand<float>(env, "elementwise", out.Data(), out.ElementLength(), operand[0][0], p.shape, p.outStrides, p.rank, "out");
  p.a = checkedOperand<const float>(env, "elementwise", a.Data(), a.ElementLength(), operand[1][0], p.shape, p.aStrides, p.rank, "a");
  p.b = p.op == ElementOp::copy ? p.a
                                : checkedOperand<const float>(env, "elementwise", b.Data(), b.ElementLength(), operand[2][0], p.shape,
                                                              p.bStrides, p.rank, "b");
  strided(p, threads);
  return env.Undefined();
}

}  // namespace

}  // namespace core_cpu

static Napi::Object InitCoreCpu(Napi::Env env, Napi::Object exports) {
  exports.Set("info", Napi::Function::New(env, core_cpu::Info, "info"));
  exports.Set("gemm", Napi::Function::New(env, core_cpu::Gemm, "gemm"));
  exports.Set("elementwise", Napi::Function::New(env, core_cpu::Elementwise, "elementwise"));
  return exports;
}

NODE_API_MODULE(core_cpu, InitCoreCpu)
