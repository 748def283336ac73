// The addon's JavaScript surface (packages/backend-cpu/src/native.ts declares it):
//   info()                         { features, kernels, openblas, openblasDetail, cores, dpbf16 }
//   gemm(a, b, out, params, kind)  out = a @ b in float32 with kernel `kind`; returns the kernel that ran
//   elementwise(op, out, a, b, params)  out = a (op 'copy') or a + − × ÷ b over strided float32 views
//   random, reduce, softmax, crossEntropy, adamw   see numeric_addon.h
//   halfGemm, halfGemmStridedSum, halfElementwise, halfArgReduce, halfScatterAdd, halfGather, halfUnary   16-bit kernels (half.h), below
//   compare, where   float32 and 16-bit compares and selects on contiguous runs (half.h), below
//   maxPool2d, maxPool2dBackward   max-pooling's fused float32, float16 and bfloat16 kernels (max_pool.h), below
// gemm's params (a Float64Array) = [batches, m, n, k, then offset, batch, row and column strides of a,
// b and out, then threads]; elementwise's = [rank, threads, shape, then offset and strides of out, a
// and b]. Every access is bounds-checked against the arrays before anything runs.
#include <napi.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cpu_features.h"
#include "gemm.h"
#include "half.h"
#include "max_pool.h"
#include "numeric_addon.h"
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
  out.Set("dpbf16", dpbf16Available());
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

/** What elementwise and halfElementwise read from their op and params: the op, threads, shape, then each operand's offset and strides. */
struct StridedCall {
  ElementOp op;
  int rank;
  int threads;
  int64_t shape[MAX_RANK];
  std::vector<int64_t> f;
  /** Operand o's (out 0, a 1, b 2) offset, followed by its strides. */
  const int64_t* operand(int o) const { return f.data() + 2 + rank + o * (1 + rank); }
};

/** Checks and reads info[0] (the op) and info[4] (params, `extra` numbers beyond the shared layout, described by `extraLayout`). */
StridedCall stridedCall(const Napi::CallbackInfo& info, const char* op, size_t extra, const std::string& extraLayout) {
  Napi::Env env = info.Env();
  static const std::pair<const char*, ElementOp> OPS[] = {
      {"copy", ElementOp::copy}, {"add", ElementOp::add}, {"sub", ElementOp::sub}, {"mul", ElementOp::mul}, {"div", ElementOp::div}};
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  const auto found = std::find_if(std::begin(OPS), std::end(OPS), [&](const auto& entry) { return name == entry.first; });
  if (found == std::end(OPS)) throw Napi::Error::New(env, std::string(op) + ": op must be copy, add, sub, mul or div, got '" + name + "'");
  Napi::Float64Array params = info[4].As<Napi::Float64Array>();
  const int64_t rank = params.ElementLength() > 0 ? integer(env, params[0], "rank", op) : -1;
  if (rank < 0 || rank > MAX_RANK || params.ElementLength() != static_cast<size_t>(2 + rank + 3 * (1 + rank)) + extra) {
    throw Napi::RangeError::New(env, std::string(op) + ": params holds [rank ≤ " + std::to_string(MAX_RANK) +
                                         ", threads, shape, then offset and strides of out, a and b" + extraLayout + "], got " +
                                         std::to_string(params.ElementLength()) + " numbers");
  }
  StridedCall call;
  call.op = found->second;
  call.rank = static_cast<int>(rank);
  call.f.resize(params.ElementLength());
  for (size_t i = 0; i < call.f.size(); ++i) call.f[i] = integer(env, params[i], "every param", op);
  call.threads = static_cast<int>(std::min<int64_t>(call.f[1], 256));
  if (call.threads < 1) throw Napi::RangeError::New(env, std::string(op) + ": threads must be at least 1");
  for (int d = 0; d < call.rank; ++d) {
    call.shape[d] = call.f[2 + d];
    if (call.shape[d] < 1) throw Napi::RangeError::New(env, std::string(op) + ": every extent must be at least 1");
  }
  return call;
}

Napi::Value Elementwise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 5 || !info[0].IsString() || !isF32(info, 1) || !isF32(info, 2) || !isF32(info, 3) || !isF64(info, 4)) {
    throw Napi::TypeError::New(env, "elementwise(op, out, a, b, params): op is a string, out, a and b Float32Arrays, params a Float64Array");
  }
  const StridedCall call = stridedCall(info, "elementwise", 0, "");
  StridedProblem p;
  p.op = call.op;
  p.rank = call.rank;
  const int rank = call.rank;
  const int threads = call.threads;
  std::copy(call.shape, call.shape + rank, p.shape);
  const int64_t* operand[3] = {call.operand(0), call.operand(1), call.operand(2)};
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

// The 16-bit entry points (half.h); dpbf16 in info() says whether vdpbf16ps runs:
//   halfGemm(a, b, out, params, type, kind)  out = a @ b for Uint16Array a and b of `type` ('bf16' or
//       'f16'), out a Float32Array or a Uint16Array of that type; params as gemm's; returns the kernel that ran
//   halfElementwise(op, out, a, b, params)   elementwise's ops where operands may be 16-bit: params as
//       elementwise's, then the type codes of out, a and b (0 f32, 1 f16, 2 bf16)

/** A Float32Array (f32) or a Uint16Array (f16, bf16) argument of element type `type`, or null. */
void* elementsOf(const Napi::CallbackInfo& info, size_t i, Elem type, size_t& length) {
  if (!info[i].IsTypedArray()) return nullptr;
  Napi::TypedArray array = info[i].As<Napi::TypedArray>();
  if (array.TypedArrayType() != (type == Elem::f32 ? napi_float32_array : napi_uint16_array)) return nullptr;
  length = array.ElementLength();
  // The element pointer of the view itself: the wasm heap's buffer is a SharedArrayBuffer, which ArrayBuffer() refuses.
  if (type == Elem::f32) return info[i].As<Napi::Float32Array>().Data();
  return info[i].As<Napi::Uint16Array>().Data();
}

/** The arguments halfGemm and halfGemmStridedSum share: the operands, the product's params and the threads. */
struct HalfCall {
  HalfGemmProblem p;
  void* out = nullptr;
  size_t outLength = 0;
  Elem outType = Elem::f32;
  int threads = 1;
  /** The product's params: halfGemm's out entries are at f + 12. */
  int64_t f[PARAMS];
};

/**
 * Reads (a, b, out, params, type, kind, …) for entry `name`: Uint16Arrays a and b of `type`, out a
 * Float32Array or a Uint16Array of that type, params a Float64Array of PARAMS numbers. The problem's
 * out is left for the caller.
 */
HalfCall halfCall(const Napi::CallbackInfo& info, const char* name, const char* usage) {
  Napi::Env env = info.Env();
  if (!isF64(info, 3) || !info[4].IsString() || !info[5].IsString()) throw Napi::TypeError::New(env, usage);
  const std::string type = info[4].As<Napi::String>().Utf8Value();
  if (type != "bf16" && type != "f16") throw Napi::TypeError::New(env, usage);
  const Elem in = type == "bf16" ? Elem::bf16 : Elem::f16;
  HalfCall c;
  size_t aLength = 0, bLength = 0;
  const void* a = elementsOf(info, 0, in, aLength);
  const void* b = elementsOf(info, 1, in, bLength);
  c.outType = info[2].IsTypedArray() && info[2].As<Napi::TypedArray>().TypedArrayType() == napi_float32_array ? Elem::f32 : in;
  c.out = elementsOf(info, 2, c.outType, c.outLength);
  if (a == nullptr || b == nullptr || c.out == nullptr) throw Napi::TypeError::New(env, usage);
  Napi::Float64Array params = info[3].As<Napi::Float64Array>();
  if (params.ElementLength() != PARAMS) {
    throw Napi::RangeError::New(env, std::string(name) + ": params holds " + std::to_string(PARAMS) + " numbers, got " + std::to_string(params.ElementLength()));
  }
  int64_t* f = c.f;
  for (size_t i = 0; i < PARAMS; ++i) f[i] = integer(env, params[i], "every param", name);
  const int64_t batches = f[0], m = f[1], n = f[2], k = f[3];
  c.threads = static_cast<int>(std::min<int64_t>(f[16], 256));
  if (batches < 1 || m < 1 || n < 1 || k < 1 || c.threads < 1) {
    throw Napi::RangeError::New(env, std::string(name) + ": batches, m, n, k and threads must be at least 1");
  }
  HalfGemmProblem& p = c.p;
  p.batches = batches;
  p.m = m;
  p.n = n;
  p.k = k;
  p.in = in;
  p.a = {checkedMatrix<const uint16_t>(env, static_cast<const uint16_t*>(a), aLength, f + 4, batches, m, k, "a"), f[5], f[6], f[7]};
  p.b = {checkedMatrix<const uint16_t>(env, static_cast<const uint16_t*>(b), bLength, f + 8, batches, k, n, "b"), f[9], f[10], f[11]};
  p.out = nullptr;
  p.outType = Elem::f32;
  p.outBatchStride = p.outRowStride = p.outColStride = 0;
  return c;
}

Napi::Value HalfGemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage =
      "halfGemm(a, b, out, params, type, kind[, bias, biasParams]): type is 'bf16' or 'f16', a and b Uint16Arrays, out a Float32Array or Uint16Array, params a Float64Array, "
      "kind a string, bias a Float32Array added to the sums before they are stored and biasParams a Float64Array [offset, batch, row and column strides]";
  const bool biased = info.Length() == 8;
  if (info.Length() != 6 && !biased) throw Napi::TypeError::New(env, usage);
  if (biased && (!isF32(info, 6) || !isF64(info, 7) || info[7].As<Napi::Float64Array>().ElementLength() != 4)) throw Napi::TypeError::New(env, usage);
  HalfCall c = halfCall(info, "halfGemm", usage);
  HalfGemmProblem& p = c.p;
  const int64_t* f = c.f;
  p.out = c.outType == Elem::f32 ? static_cast<void*>(checkedMatrix<float>(env, static_cast<float*>(c.out), c.outLength, f + 12, p.batches, p.m, p.n, "out"))
                                 : static_cast<void*>(checkedMatrix<uint16_t>(env, static_cast<uint16_t*>(c.out), c.outLength, f + 12, p.batches, p.m, p.n, "out"));
  p.outType = c.outType;
  p.outBatchStride = f[13];
  p.outRowStride = f[14];
  p.outColStride = f[15];
  if (biased) {
    Napi::Float32Array bias = info[6].As<Napi::Float32Array>();
    Napi::Float64Array where = info[7].As<Napi::Float64Array>();
    int64_t g[4];
    for (size_t i = 0; i < 4; ++i) g[i] = integer(env, where[i], "every bias param", "halfGemm");
    p.bias = checkedMatrix<const float>(env, bias.Data(), bias.ElementLength(), g, p.batches, p.m, p.n, "bias");
    p.biasBatchStride = g[1];
    p.biasRowStride = g[2];
    p.biasColStride = g[3];
  }
  try {
    return Napi::String::New(env, halfGemm(p, info[5].As<Napi::String>().Utf8Value(), c.threads));
  } catch (const std::invalid_argument& e) {
    throw Napi::Error::New(env, std::string("halfGemm: ") + e.what());
  }
}

//   halfGemmStridedSum(a, b, out, params, type, kind, sumParams)  the fused matmulStridedSum (half.h):
//       params as halfGemm's (its out entries unused), out a Float32Array or a Uint16Array of `type`,
//       sumParams [rank, split, out offset, out count, view offset, shape…, view strides…]
Napi::Value HalfGemmStridedSum(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage =
      "halfGemmStridedSum(a, b, out, params, type, kind, sumParams): type is 'bf16' or 'f16', a and b Uint16Arrays, out a Float32Array or Uint16Array, "
      "params and sumParams Float64Arrays, kind a string";
  if (info.Length() != 7 || !isF64(info, 6)) throw Napi::TypeError::New(env, usage);
  HalfCall c = halfCall(info, "halfGemmStridedSum", usage);
  const int64_t batches = c.p.batches;
  // The sum: a rank ≥ 2 source [batches, (m's dims), (n's dims)] whose batches reach disjoint ranges of out.
  Napi::Float64Array where = info[6].As<Napi::Float64Array>();
  const size_t count = where.ElementLength();
  const int64_t rank = count >= 2 ? integer(env, where[0], "rank", "halfGemmStridedSum") : 0;
  if (rank < 2 || rank > MAX_RANK || count != static_cast<size_t>(5 + 2 * rank)) {
    throw Napi::RangeError::New(env, "halfGemmStridedSum: sumParams must hold [rank (2 to " + std::to_string(MAX_RANK) + "), split, out offset, out count, view offset, shape, view strides]");
  }
  int64_t g[5 + 2 * MAX_RANK];
  for (size_t i = 0; i < count; ++i) g[i] = integer(env, where[i], "every sum param", "halfGemmStridedSum");
  ProductSum sum;
  sum.rank = static_cast<int>(rank);
  sum.split = static_cast<int>(g[1]);
  const int64_t outOffset = g[2];
  sum.outNumel = g[3];
  sum.viewOffset = g[4];
  int64_t mDims = 1, nDims = 1, reach = 0;
  for (int d = 0; d < sum.rank; ++d) {
    sum.shape[d] = g[5 + d];
    sum.viewStrides[d] = g[5 + rank + d];
    if (sum.shape[d] < 1 || sum.viewStrides[d] < 0) throw Napi::RangeError::New(env, "halfGemmStridedSum: the sum's dims must be at least 1 and its view strides non-negative");
    if (d >= 1) {
      (d < sum.split ? mDims : nDims) *= sum.shape[d];
      reach += (sum.shape[d] - 1) * sum.viewStrides[d];
    }
  }
  if (sum.split < 2 || sum.split >= sum.rank || sum.shape[0] != batches || mDims != c.p.m || nDims != c.p.n) {
    throw Napi::RangeError::New(env, "halfGemmStridedSum: the sum's shape must be [batches, m's dims, n's dims], split where n's begin");
  }
  if (batches > 1 && sum.viewStrides[0] <= reach) throw Napi::RangeError::New(env, "halfGemmStridedSum: the view's batches overlap in out");
  const int64_t last = sum.viewOffset + (batches - 1) * sum.viewStrides[0] + reach;
  if (outOffset < 0 || sum.outNumel < 1 || sum.viewOffset < 0 || last >= sum.outNumel || outOffset + sum.outNumel > static_cast<int64_t>(c.outLength)) {
    throw Napi::RangeError::New(env, "halfGemmStridedSum: the view reaches element " + std::to_string(last) + " of an out of " + std::to_string(sum.outNumel) +
                                         " (from element " + std::to_string(outOffset) + " of an array of " + std::to_string(c.outLength) + ")");
  }
  sum.outType = c.outType;
  sum.out = static_cast<char*>(c.out) + outOffset * (c.outType == Elem::f32 ? 4 : 2);
  try {
    return Napi::String::New(env, halfGemmStridedSum(c.p, sum, info[5].As<Napi::String>().Utf8Value(), c.threads));
  } catch (const std::invalid_argument& e) {
    throw Napi::Error::New(env, std::string("halfGemmStridedSum: ") + e.what());
  }
}

Napi::Value HalfElementwise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "halfElementwise(op, out, a, b, params): op is a string, out, a and b Float32Arrays or Uint16Arrays as params' type codes say, params a Float64Array";
  if (info.Length() != 5 || !info[0].IsString() || !isF64(info, 4)) throw Napi::TypeError::New(env, usage);
  const StridedCall call = stridedCall(info, "halfElementwise", 3, ", then their type codes");
  const std::vector<int64_t>& f = call.f;
  const int rank = call.rank;
  const int threads = call.threads;
  HalfStridedProblem p;
  p.op = call.op;
  p.rank = rank;
  std::copy(call.shape, call.shape + rank, p.shape);
  for (int o = 0; o < 3; ++o) {
    const int64_t code = f[f.size() - 3 + o];
    if (code < 0 || code > 2) throw Napi::RangeError::New(env, "halfElementwise: a type code is 0 (f32), 1 (f16) or 2 (bf16)");
    p.types[o] = code == 0 ? Elem::f32 : code == 1 ? Elem::f16 : Elem::bf16;
  }
  const char* names[3] = {"out", "a", "b"};
  // copy reads a alone: b is a over again.
  for (int o = 0; o < 3; ++o) {
    const int from = p.op == ElementOp::copy && o == 2 ? 1 : o;
    const int64_t* operand = call.operand(from);
    std::copy(operand + 1, operand + 1 + rank, p.strides[o]);
    p.types[o] = p.types[from];
    size_t length = 0;
    void* base = elementsOf(info, 1 + from, p.types[o], length);
    if (base == nullptr) throw Napi::TypeError::New(env, std::string("halfElementwise: ") + names[from] + " is not the typed array its type code says");
    p.data[o] = p.types[o] == Elem::f32
                    ? static_cast<void*>(checkedOperand<float>(env, "halfElementwise", static_cast<float*>(base), length, operand[0], p.shape, p.strides[o], p.rank, names[from]))
                    : static_cast<void*>(checkedOperand<uint16_t>(env, "halfElementwise", static_cast<uint16_t*>(base), length, operand[0], p.shape, p.strides[o], p.rank, names[from]));
  }
  halfStrided(p, threads);
  return env.Undefined();
}

/** params as integers, checked to hold `fixed` numbers then `perDim` per dim of the rank in params[0] (≤ MAX_RANK). */
std::vector<int64_t> rankedParams(Napi::Env env, const Napi::Value& value, const char* op, size_t fixed, size_t perDim, const char* layout) {
  Napi::Float64Array params = value.As<Napi::Float64Array>();
  const int64_t rank = params.ElementLength() > 0 ? integer(env, params[0], "rank", op) : -1;
  if (rank < 1 || rank > MAX_RANK || params.ElementLength() != fixed + perDim * static_cast<size_t>(rank)) {
    throw Napi::RangeError::New(env, std::string(op) + ": params holds " + layout + ", got " + std::to_string(params.ElementLength()) + " numbers");
  }
  std::vector<int64_t> f(params.ElementLength());
  for (size_t i = 0; i < f.size(); ++i) f[i] = integer(env, params[i], "every param", op);
  return f;
}

/** A 16-bit type code (1 f16, 2 bf16). */
Elem halfType(Napi::Env env, int64_t code, const char* op) {
  if (code != 1 && code != 2) throw Napi::RangeError::New(env, std::string(op) + ": the type code is 1 (f16) or 2 (bf16)");
  return code == 1 ? Elem::f16 : Elem::bf16;
}

// halfArgReduce(op, x, out, params): op 'argmax' or 'argmin' along an axis of a 16-bit x (a Uint16Array)
// into int32 out; params = [rank, axis, threads, type code, shape, x's offset and strides, out's offset and strides].
Napi::Value HalfArgReduce(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* op = "halfArgReduce";
  if (info.Length() != 4 || !info[0].IsString() || !info[1].IsTypedArray() || !info[2].IsTypedArray() || !isF64(info, 3) ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint16_array || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
    throw Napi::TypeError::New(env, "halfArgReduce(op, x, out, params): op is 'argmax' or 'argmin', x a Uint16Array, out an Int32Array, params a Float64Array");
  }
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  if (name != "argmax" && name != "argmin") throw Napi::Error::New(env, "halfArgReduce: op must be argmax or argmin, got '" + name + "'");
  const std::vector<int64_t> f = rankedParams(env, info[3], op, 6, 3, "[rank, axis, threads, type, shape, x's offset and strides, out's offset and strides]");
  const int rank = static_cast<int>(f[0]);
  const int64_t axis = f[1];
  const int threads = static_cast<int>(std::min<int64_t>(f[2], 256));
  if (axis < 0 || axis >= rank || threads < 1) throw Napi::RangeError::New(env, "halfArgReduce: the axis must be a dim of x and threads at least 1");
  HalfView v;
  v.rank = rank;
  std::copy(f.begin() + 4, f.begin() + 4 + rank, v.shape);
  std::copy(f.begin() + 5 + rank, f.begin() + 5 + 2 * rank, v.strides);
  int64_t outExtents[MAX_RANK], outStrides[MAX_RANK];
  std::copy(v.shape, v.shape + rank, outExtents);
  outExtents[axis] = 1;
  std::copy(f.begin() + 6 + 2 * rank, f.end(), outStrides);
  for (int d = 0; d < rank; ++d) {
    if (v.shape[d] < 1) throw Napi::RangeError::New(env, "halfArgReduce: every extent must be at least 1");
  }
  Napi::Uint16Array x = info[1].As<Napi::Uint16Array>();
  Napi::Int32Array out = info[2].As<Napi::Int32Array>();
  const uint16_t* xData = checkedOperand<const uint16_t>(env, op, x.Data(), x.ElementLength(), f[4 + rank], v.shape, v.strides, rank, "x");
  int32_t* outData = checkedOperand<int32_t>(env, op, out.Data(), out.ElementLength(), f[5 + 2 * rank], outExtents, outStrides, rank, "out");
  halfArgReduce(name == "argmax", halfType(env, f[3], op), xData, v, static_cast<int>(axis), outData, outStrides, threads);
  return env.Undefined();
}

// halfScatterAdd(out, index, src, params): out[…, index[p], …] += src[p] along dim; halfGather(x, index,
// out, params): out[p] = x[…, index[p], …] along dim. The 16-bit operands (out and src, or x and out) are
// Uint16Arrays, index an Int32Array; params = [rank, dim, type code, the indexed tensor's extent along
// dim, index's shape, then the offset and strides of the indexed tensor, index and the other].
Napi::Value AlongAxis(const Napi::CallbackInfo& info, bool scatter) {
  Napi::Env env = info.Env();
  const char* op = scatter ? "halfScatterAdd" : "halfGather";
  const auto typed = [&](size_t i, napi_typedarray_type type) { return info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == type; };
  // The indexed tensor comes first for both; gather's index is its second argument, scatterAdd's too.
  if (info.Length() != 4 || !typed(0, napi_uint16_array) || !typed(1, napi_int32_array) || !typed(2, napi_uint16_array) || !isF64(info, 3)) {
    throw Napi::TypeError::New(env, std::string(op) + (scatter ? "(out, index, src, params): out and src" : "(x, index, out, params): x and out") +
                                        " are Uint16Arrays, index an Int32Array, params a Float64Array");
  }
  const std::vector<int64_t> f = rankedParams(env, info[3], op, 7, 4, "[rank, dim, type, extent, index's shape, then three offsets and strides]");
  const int rank = static_cast<int>(f[0]);
  const int64_t dim = f[1], extent = f[3];
  if (dim < 0 || dim >= rank || extent < 1) throw Napi::RangeError::New(env, std::string(op) + ": dim must be a dim, of extent at least 1");
  HalfView v;
  v.rank = rank;
  std::copy(f.begin() + 4, f.begin() + 4 + rank, v.shape);
  for (int d = 0; d < rank; ++d) {
    if (v.shape[d] < 1) throw Napi::RangeError::New(env, std::string(op) + ": every extent of index must be at least 1");
  }
  const int64_t* operand[3];  // offset then strides of the indexed tensor, index, the other
  for (int o = 0; o < 3; ++o) operand[o] = f.data() + 4 + rank + o * (1 + rank);
  std::copy(operand[0] + 1, operand[0] + 1 + rank, v.strides);
  int64_t indexedExtents[MAX_RANK];
  std::copy(v.shape, v.shape + rank, indexedExtents);
  indexedExtents[dim] = extent;
  Napi::Uint16Array indexed = info[0].As<Napi::Uint16Array>(), other = info[2].As<Napi::Uint16Array>();
  Napi::Int32Array index = info[1].As<Napi::Int32Array>();
  uint16_t* indexedData = checkedOperand<uint16_t>(env, op, indexed.Data(), indexed.ElementLength(), operand[0][0], indexedExtents, v.strides, rank, scatter ? "out" : "x");
  const int32_t* indexData = checkedOperand<const int32_t>(env, op, index.Data(), index.ElementLength(), operand[1][0], v.shape, operand[1] + 1, rank, "index");
  uint16_t* otherData = checkedOperand<uint16_t>(env, op, other.Data(), other.ElementLength(), operand[2][0], v.shape, operand[2] + 1, rank, scatter ? "src" : "out");
  try {
    if (scatter) halfScatterAdd(halfType(env, f[2], op), indexedData, v, static_cast<int>(dim), extent, indexData, operand[1] + 1, otherData, operand[2] + 1);
    else halfGather(indexedData, v, static_cast<int>(dim), extent, indexData, operand[1] + 1, otherData, operand[2] + 1);
  } catch (const std::out_of_range& e) {
    throw Napi::RangeError::New(env, std::string(op) + ": " + e.what());
  }
  return env.Undefined();
}

Napi::Value HalfScatterAdd(const Napi::CallbackInfo& info) { return AlongAxis(info, true); }
Napi::Value HalfGather(const Napi::CallbackInfo& info) { return AlongAxis(info, false); }

/** Argument i as its element data and length when it is a Float32Array (f32) or a Uint16Array (16-bit), by `type`; else null. */
const void* runElements(const Napi::CallbackInfo& info, size_t i, Elem type, size_t& length) {
  if (!info[i].IsTypedArray()) return nullptr;
  Napi::TypedArray t = info[i].As<Napi::TypedArray>();
  if (t.TypedArrayType() != (type == Elem::f32 ? napi_float32_array : napi_uint16_array)) return nullptr;
  length = t.ElementLength();
  // The typed array's own data pointer, as the other entry points read theirs.
  if (type == Elem::f32) return info[i].As<Napi::Float32Array>().Data();
  return info[i].As<Napi::Uint16Array>().Data();
}

/**
 * Argument i's elements (as runElements takes them) from element `offset` on, bounds-checked for
 * `extent` elements `stride` apart: their byte address; a TypeError with `usage` for another array.
 */
char* checkedRun(const Napi::CallbackInfo& info, size_t i, Elem type, int64_t offset, const int64_t* extent, const int64_t* stride, const char* op,
                 const char* name, const char* usage) {
  size_t length = 0;
  const char* data = static_cast<const char*>(runElements(info, i, type, length));
  if (data == nullptr) throw Napi::TypeError::New(info.Env(), usage);
  checkedOperand<const char>(info.Env(), op, data, length, offset, extent, stride, 1, name);
  return const_cast<char*>(data) + offset * (type == Elem::f32 ? 4 : 2);
}

// halfUnary(op, x, out, params): out = op(x) ('exp', 'erf' or 'relu') over contiguous elements: 16-bit
// Uint16Arrays, or Float32Arrays for exp and erf; params = [n, x's offset, out's offset, threads, type code (0 f32)].
Napi::Value HalfUnary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "halfUnary(op, x, out, params): op is 'exp', 'erf' or 'relu', x and out Uint16Arrays (Float32Arrays for exp and erf), params a Float64Array";
  if (info.Length() != 4 || !info[0].IsString() || !isF64(info, 3)) throw Napi::TypeError::New(env, usage);
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  if (name != "exp" && name != "erf" && name != "relu") throw Napi::Error::New(env, "halfUnary: op must be exp, erf or relu, got '" + name + "'");
  Napi::Float64Array params = info[3].As<Napi::Float64Array>();
  if (params.ElementLength() != 5) throw Napi::RangeError::New(env, "halfUnary: params holds [n, x's offset, out's offset, threads, type], got " + std::to_string(params.ElementLength()) + " numbers");
  int64_t f[5];
  for (int i = 0; i < 5; ++i) f[i] = integer(env, params[i], "every param", "halfUnary");
  if (f[0] < 1 || f[3] < 1) throw Napi::RangeError::New(env, "halfUnary: n and threads must be at least 1");
  const Elem type = f[4] == 0 ? Elem::f32 : halfType(env, f[4], "halfUnary");
  if (type == Elem::f32 && name == "relu") throw Napi::Error::New(env, "halfUnary: relu takes 16-bit elements only");
  const int64_t extent[1] = {f[0]}, unit[1] = {1};
  const char* x = checkedRun(info, 1, type, f[1], extent, unit, "halfUnary", "x", usage);
  char* out = checkedRun(info, 2, type, f[2], extent, unit, "halfUnary", "out", usage);
  halfUnary(name == "exp" ? HalfUnaryOp::exp : name == "erf" ? HalfUnaryOp::erf : HalfUnaryOp::relu, type, x, out, f[0], static_cast<int>(std::min<int64_t>(f[3], 256)));
  return env.Undefined();
}

// compare(op, x, y, out, params): out = x op y ('gt', 'lt', 'ge', 'le', 'eq', 'ne') over contiguous
// float32 or 16-bit elements (Float32Arrays or Uint16Arrays, as the type code says) into a bool
// Uint8Array, y broadcast when its stride is 0; params = [n, x's offset, y's offset, y's stride
// (0 or 1), out's offset, threads, type code (0 f32, 1 f16, 2 bf16)].
Napi::Value Compare(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "compare(op, x, y, out, params): op is 'gt', 'lt', 'ge', 'le', 'eq' or 'ne', x and y Float32Arrays or Uint16Arrays, out a Uint8Array, params a Float64Array";
  if (info.Length() != 5 || !info[0].IsString() || !info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !isF64(info, 4)) {
    throw Napi::TypeError::New(env, usage);
  }
  static const std::pair<const char*, CompareOp> OPS[] = {
      {"gt", CompareOp::gt}, {"lt", CompareOp::lt}, {"ge", CompareOp::ge}, {"le", CompareOp::le}, {"eq", CompareOp::eq}, {"ne", CompareOp::ne}};
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  const auto found = std::find_if(std::begin(OPS), std::end(OPS), [&](const auto& entry) { return name == entry.first; });
  if (found == std::end(OPS)) throw Napi::Error::New(env, "compare: op must be gt, lt, ge, le, eq or ne, got '" + name + "'");
  Napi::Float64Array params = info[4].As<Napi::Float64Array>();
  if (params.ElementLength() != 7) throw Napi::RangeError::New(env, "compare: params holds [n, x's offset, y's offset, y's stride, out's offset, threads, type], got " + std::to_string(params.ElementLength()) + " numbers");
  int64_t f[7];
  for (int i = 0; i < 7; ++i) f[i] = integer(env, params[i], "every param", "compare");
  if (f[0] < 1 || f[5] < 1 || (f[3] != 0 && f[3] != 1)) throw Napi::RangeError::New(env, "compare: n and threads must be at least 1 and y's stride 0 or 1");
  const Elem type = f[6] == 0 ? Elem::f32 : halfType(env, f[6], "compare");
  const int64_t extent[1] = {f[0]}, unit[1] = {1}, yStride[1] = {f[3]};
  const char* x = checkedRun(info, 1, type, f[1], extent, unit, "compare", "x", usage);
  const char* y = checkedRun(info, 2, type, f[2], extent, yStride, "compare", "y", usage);
  Napi::Uint8Array out = info[3].As<Napi::Uint8Array>();
  uint8_t* outData = checkedOperand<uint8_t>(env, "compare", out.Data(), out.ElementLength(), f[4], extent, unit, 1, "out");
  compareRuns(found->second, type, x, y, f[3], outData, f[0], static_cast<int>(std::min<int64_t>(f[5], 256)));
  return env.Undefined();
}

// where(cond, a, b, out, params): out = cond ? a : b over float32 or 16-bit elements (a, b and out
// Float32Arrays or Uint16Arrays, as the type code says; cond a bool Uint8Array); params = [n, then
// offset and stride (0 or 1) of cond, a and b, out's offset, threads, type code (0 f32, 1 f16, 2 bf16)].
Napi::Value Where(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "where(cond, a, b, out, params): cond a Uint8Array, a, b and out Float32Arrays or Uint16Arrays, params a Float64Array";
  if (info.Length() != 5 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !isF64(info, 4)) {
    throw Napi::TypeError::New(env, usage);
  }
  Napi::Float64Array params = info[4].As<Napi::Float64Array>();
  if (params.ElementLength() != 10) throw Napi::RangeError::New(env, "where: params holds [n, cond's, a's and b's offset and stride, out's offset, threads, type], got " + std::to_string(params.ElementLength()) + " numbers");
  int64_t f[10];
  for (int i = 0; i < 10; ++i) f[i] = integer(env, params[i], "every param", "where");
  if (f[0] < 1 || f[8] < 1) throw Napi::RangeError::New(env, "where: n and threads must be at least 1");
  for (int i : {2, 4, 6}) {
    if (f[i] != 0 && f[i] != 1) throw Napi::RangeError::New(env, "where: every stride must be 0 or 1");
  }
  const Elem type = f[9] == 0 ? Elem::f32 : halfType(env, f[9], "where");
  const int64_t extent[1] = {f[0]}, unit[1] = {1};
  Napi::Uint8Array cond = info[0].As<Napi::Uint8Array>();
  const uint8_t* condData = checkedOperand<const uint8_t>(env, "where", cond.Data(), cond.ElementLength(), f[1], extent, f + 2, 1, "cond");
  const char* a = checkedRun(info, 1, type, f[3], extent, f + 4, "where", "a", usage);
  const char* b = checkedRun(info, 2, type, f[5], extent, f + 6, "where", "b", usage);
  char* out = checkedRun(info, 3, type, f[7], extent, unit, "where", "out", usage);
  selectRuns(type == Elem::f32 ? 4 : 2, condData, f[2], a, f[4], b, f[6], out, f[0], static_cast<int>(std::min<int64_t>(f[8], 256)));
  return env.Undefined();
}

// ---- max pooling (max_pool.h) ----

/** The params of a max-pool entry point, `count` integers ≥ 0 (threads first, at least 1). */
std::vector<int64_t> poolParams(const Napi::CallbackInfo& info, const char* op, const char* usage, size_t count) {
  Napi::Env env = info.Env();
  Napi::Float64Array params = info[3].As<Napi::Float64Array>();
  if (params.ElementLength() != count) {
    throw Napi::RangeError::New(env, std::string(op) + ": params holds " + usage + ", " + std::to_string(count) + " numbers, got " + std::to_string(params.ElementLength()));
  }
  std::vector<int64_t> f(count);
  for (size_t i = 0; i < count; ++i) {
    f[i] = integer(env, params[i], "every param", op);
    if (f[i] < 0) throw Napi::RangeError::New(env, std::string(op) + ": every param must be ≥ 0 (strides too)");
  }
  if (f[0] < 1) throw Napi::RangeError::New(env, std::string(op) + ": threads must be at least 1");
  return f;
}

/** A pool kernel's element type from its type code (0 f32, 1 f16, 2 bf16). */
Elem poolType(Napi::Env env, int64_t code, const char* op) {
  return code == 0 ? Elem::f32 : halfType(env, code, op);
}

/** The element at `offset` of argument `i` (a Float32Array for f32, else a Uint16Array), after checking the view it reaches fits. */
void* poolOperand(const Napi::CallbackInfo& info, size_t i, Elem type, const char* op, int64_t offset, const int64_t* extents, const int64_t* strides, const char* name) {
  size_t length = 0;
  void* data = elementsOf(info, i, type, length);
  if (data == nullptr) throw Napi::TypeError::New(info.Env(), std::string(op) + ": " + name + " must be a " + (type == Elem::f32 ? "Float32Array" : "Uint16Array") + " for its type code");
  if (type == Elem::f32) return checkedOperand<float>(info.Env(), op, static_cast<float*>(data), length, offset, extents, strides, 4, name);
  return checkedOperand<uint16_t>(info.Env(), op, static_cast<uint16_t*>(data), length, offset, extents, strides, 4, name);
}

// maxPool2d(x, out, indices, params): x and out of one type (Float32Array, or Uint16Array for the
// halves), int32 indices; params = [threads, N, C, H, W, x's offset and 4 strides, out's offset,
// indices' offset, kernel, stride, padding, dilation and out size (2 each: rows, columns), type code
// (0 f32, 1 f16, 2 bf16)]. out and indices are contiguous [N, C, oh, ow].
Napi::Value MaxPool2d(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto typed = [&](size_t i, napi_typedarray_type t) { return info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == t; };
  if (info.Length() != 4 || !typed(2, napi_int32_array) || !isF64(info, 3)) {
    throw Napi::TypeError::New(env, "maxPool2d(x, out, indices, params): x and out Float32Arrays or Uint16Arrays, indices an Int32Array, params a Float64Array");
  }
  const std::vector<int64_t> f = poolParams(info, "maxPool2d", "[threads, N, C, H, W, x offset, 4 x strides, out offset, indices offset, kernel, stride, padding, dilation, out size, type code]", 23);
  MaxPoolProblem p{};
  p.type = poolType(env, f[22], "maxPool2d");
  std::copy(f.begin() + 1, f.begin() + 5, p.shape);
  std::copy(f.begin() + 6, f.begin() + 10, p.xStrides);
  for (int d = 0; d < 2; ++d) {
    p.kernel[d] = f[12 + d];
    p.stride[d] = f[14 + d];
    p.padding[d] = f[16 + d];
    p.dilation[d] = f[18 + d];
    p.outSize[d] = f[20 + d];
  }
  if (std::min({p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.dilation[0], p.dilation[1]}) < 1) {
    throw Napi::RangeError::New(env, "maxPool2d: kernel, stride and dilation must be at least 1");
  }
  const int64_t outShape[4] = {p.shape[0], p.shape[1], p.outSize[0], p.outSize[1]};
  const int64_t outStrides[4] = {p.shape[1] * p.outSize[0] * p.outSize[1], p.outSize[0] * p.outSize[1], p.outSize[1], 1};
  for (int64_t extent : outShape) {
    if (extent == 0) return env.Undefined();
  }
  for (int d = 0; d < 4; ++d) {
    if (p.shape[d] == 0) return env.Undefined();
  }
  Napi::Int32Array indices = info[2].As<Napi::Int32Array>();
  p.x = poolOperand(info, 0, p.type, "maxPool2d", f[5], p.shape, p.xStrides, "x");
  p.out = poolOperand(info, 1, p.type, "maxPool2d", f[10], outShape, outStrides, "out");
  p.indices = checkedOperand<int32_t>(env, "maxPool2d", indices.Data(), indices.ElementLength(), f[11], outShape, outStrides, 4, "indices");
  if (!maxPool2d(p, static_cast<int>(std::min<int64_t>(f[0], 256)))) {
    throw Napi::RangeError::New(env, "maxPool2d: a window has no position inside the input");
  }
  return env.Undefined();
}

// maxPool2dBackward(grad, indices, gradInput, params): grad and gradInput of one type (Float32Array,
// or Uint16Array for the halves), int32 indices; params = [threads, N, C, H, W, oh, ow, grad's offset
// and 4 strides, indices' offset and 4 strides, gradInput's offset, type code (0 f32, 1 f16, 2 bf16)].
// gradInput is contiguous [N, C, H, W]; an index outside [0, H·W) is a RangeError.
Napi::Value MaxPool2dBackward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto typed = [&](size_t i, napi_typedarray_type t) { return info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == t; };
  if (info.Length() != 4 || !typed(1, napi_int32_array) || !isF64(info, 3)) {
    throw Napi::TypeError::New(env, "maxPool2dBackward(grad, indices, gradInput, params): grad and gradInput Float32Arrays or Uint16Arrays, indices an Int32Array, params a Float64Array");
  }
  const std::vector<int64_t> f = poolParams(info, "maxPool2dBackward", "[threads, N, C, H, W, oh, ow, grad offset and 4 strides, indices offset and 4 strides, gradInput offset, type code]", 19);
  MaxPoolBackwardProblem p{};
  p.type = poolType(env, f[18], "maxPool2dBackward");
  std::copy(f.begin() + 1, f.begin() + 5, p.shape);
  p.outSize[0] = f[5];
  p.outSize[1] = f[6];
  std::copy(f.begin() + 8, f.begin() + 12, p.gradStrides);
  std::copy(f.begin() + 13, f.begin() + 17, p.indexStrides);
  const int64_t gradShape[4] = {p.shape[0], p.shape[1], p.outSize[0], p.outSize[1]};
  const int64_t inStrides[4] = {p.shape[1] * p.shape[2] * p.shape[3], p.shape[2] * p.shape[3], p.shape[3], 1};
  for (int d = 0; d < 4; ++d) {
    if (p.shape[d] == 0 || gradShape[d] == 0) return env.Undefined();
  }
  Napi::Int32Array indices = info[1].As<Napi::Int32Array>();
  p.grad = poolOperand(info, 0, p.type, "maxPool2dBackward", f[7], gradShape, p.gradStrides, "grad");
  p.indices = checkedOperand<const int32_t>(env, "maxPool2dBackward", indices.Data(), indices.ElementLength(), f[12], gradShape, p.indexStrides, 4, "indices");
  p.gradInput = poolOperand(info, 2, p.type, "maxPool2dBackward", f[17], p.shape, inStrides, "gradInput");
  int64_t bad = 0;
  if (!maxPool2dBackward(p, static_cast<int>(std::min<int64_t>(f[0], 256)), bad)) {
    throw Napi::RangeError::New(env, "maxPool2dBackward: index " + std::to_string(bad) + " is outside the input plane of " + std::to_string(p.shape[2] * p.shape[3]) + " elements");
  }
  return env.Undefined();
}

}  // namespace

}  // namespace core_cpu

static Napi::Object InitCoreCpu(Napi::Env env, Napi::Object exports) {
  exports.Set("info", Napi::Function::New(env, core_cpu::Info, "info"));
  exports.Set("gemm", Napi::Function::New(env, core_cpu::Gemm, "gemm"));
  exports.Set("elementwise", Napi::Function::New(env, core_cpu::Elementwise, "elementwise"));
  core_cpu::addNumericExports(env, exports);
  exports.Set("halfGemm", Napi::Function::New(env, core_cpu::HalfGemm, "halfGemm"));
  exports.Set("halfGemmStridedSum", Napi::Function::New(env, core_cpu::HalfGemmStridedSum, "halfGemmStridedSum"));
  exports.Set("halfElementwise", Napi::Function::New(env, core_cpu::HalfElementwise, "halfElementwise"));
  exports.Set("halfArgReduce", Napi::Function::New(env, core_cpu::HalfArgReduce, "halfArgReduce"));
  exports.Set("halfScatterAdd", Napi::Function::New(env, core_cpu::HalfScatterAdd, "halfScatterAdd"));
  exports.Set("halfGather", Napi::Function::New(env, core_cpu::HalfGather, "halfGather"));
  exports.Set("halfUnary", Napi::Function::New(env, core_cpu::HalfUnary, "halfUnary"));
  exports.Set("compare", Napi::Function::New(env, core_cpu::Compare, "compare"));
  exports.Set("where", Napi::Function::New(env, core_cpu::Where, "where"));
  exports.Set("maxPool2d", Napi::Function::New(env, core_cpu::MaxPool2d, "maxPool2d"));
  exports.Set("maxPool2dBackward", Napi::Function::New(env, core_cpu::MaxPool2dBackward, "maxPool2dBackward"));
  return exports;
}

NODE_API_MODULE(core_cpu, InitCoreCpu)
