#include "numeric_addon.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>

#include "fused.h"
#include "fused_optim.h"
#include "random.h"
#include "reduce.h"
#include "strided_sum.h"

namespace core_cpu {

namespace {

/** The most threads a call may ask for. */
constexpr int64_t MAX_THREADS = 256;

/** Reads a params Float64Array in order, each number checked as it is taken. */
class Params {
 public:
  Params(Napi::Env env, const char* op, const Napi::Value& value) : env_(env), op_(op) {
    if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
      throw Napi::TypeError::New(env, std::string(op) + ": params must be a Float64Array");
    }
    const Napi::Float64Array a = value.As<Napi::Float64Array>();
    data_ = a.Data();
    length_ = a.ElementLength();
  }

  double real(const char* what) {
    if (next_ >= length_) fail(std::string("params end before ") + what);
    return data_[next_++];
  }

  /** An integer in [lo, hi]. */
  int64_t integer(const char* what, int64_t lo, int64_t hi) {
    const double x = real(what);
    if (!(x >= static_cast<double>(lo) && x <= static_cast<double>(hi) && x == static_cast<double>(static_cast<int64_t>(x)))) {
      fail(std::string(what) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    }
    return static_cast<int64_t>(x);
  }

  int64_t index(const char* what) { return integer(what, 0, INT64_C(1) << 52); }
  int64_t stride(const char* what) { return integer(what, -(INT64_C(1) << 52), INT64_C(1) << 52); }
  bool flag(const char* what) { return integer(what, 0, 1) == 1; }
  int threads() { return static_cast<int>(integer("threads", 1, MAX_THREADS)); }

  /** Every number read: a longer params is a caller's mistake too. */
  void end() {
    if (next_ != length_) fail("params holds " + std::to_string(length_) + " numbers, expected " + std::to_string(next_));
  }

  [[noreturn]] void fail(const std::string& why) const { throw Napi::RangeError::New(env_, std::string(op_) + ": " + why); }

 private:
  Napi::Env env_;
  const char* op_;
  const double* data_;  // the caller's array, alive for the call
  size_t length_;
  size_t next_ = 0;
};

template <typename T>
napi_typedarray_type arrayType();
template <>
napi_typedarray_type arrayType<float>() { return napi_float32_array; }
template <>
napi_typedarray_type arrayType<int32_t>() { return napi_int32_array; }
template <>
napi_typedarray_type arrayType<uint16_t>() { return napi_uint16_array; }

const char* arrayName(napi_typedarray_type type) {
  return type == napi_int32_array ? "Int32Array" : type == napi_uint16_array ? "Uint16Array" : "Float32Array";
}

bool isArrayOf(const Napi::Value& value, napi_typedarray_type type) {
  return value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == type;
}

/**
 * The element at `offset` of a typed array argument, after checking that the elements it reaches
 * from there over `extents` by `strides` (in elements) lie inside it.
 */
template <typename T>
T* operand(Params& params, const Napi::Value& value, const char* name, int64_t offset, const int64_t* extents, const int64_t* strides, int rank) {
  if (!isArrayOf(value, arrayType<T>())) params.fail(std::string(name) + " must be a " + arrayName(arrayType<T>()));
  Napi::TypedArrayOf<T> array = value.As<Napi::TypedArrayOf<T>>();
  int64_t lo = offset, hi = offset;
  for (int d = 0; d < rank; ++d) {
    if (extents[d] == 0) return array.Data() + offset;  // reaches nothing
    (strides[d] < 0 ? lo : hi) += (extents[d] - 1) * strides[d];
  }
  if (lo < 0 || hi >= static_cast<int64_t>(array.ElementLength())) {
    params.fail(std::string(name) + " reaches elements [" + std::to_string(lo) + ", " + std::to_string(hi) + "] of an array of " +
                std::to_string(array.ElementLength()));
  }
  return array.Data() + offset;
}

/** A contiguous run of `count` elements from `offset`. */
template <typename T>
T* run(Params& params, const Napi::Value& value, const char* name, int64_t offset, int64_t count) {
  const int64_t one = 1;
  return operand<T>(params, value, name, offset, &count, &one, 1);
}

/**
 * An entry point's frame: checks the argument count, hands `body` the params (the last argument)
 * to read and run the kernel with, and returns undefined.
 */
template <typename Body>
Napi::Value entry(const Napi::CallbackInfo& info, size_t count, const char* usage, const char* op, Body body) {
  if (info.Length() != count) throw Napi::TypeError::New(info.Env(), std::string(usage) + " takes " + std::to_string(count) + " arguments");
  Params params(info.Env(), op, info[count - 1]);
  body(params);
  return info.Env().Undefined();
}

// random(out, [outOffset, count, key0, key1, offset, kind (0 uniform, 1 randint), low, range, threads])
Napi::Value Random(const Napi::CallbackInfo& info) {
  return entry(info, 2, "random(out, params)", "random", [&](Params& params) {
    RandomProblem p{};
    const int64_t at = params.index("the out offset");
    p.count = params.index("count");
    p.key0 = static_cast<uint32_t>(params.integer("key0", 0, UINT32_MAX));
    p.key1 = static_cast<uint32_t>(params.integer("key1", 0, UINT32_MAX));
    p.offset = static_cast<uint64_t>(params.index("offset"));
    p.kind = params.flag("kind") ? RandomKind::randint : RandomKind::uniform;
    p.low = params.real("low");
    p.range = static_cast<uint64_t>(params.integer("range", 1, INT64_C(1) << 32));
    const int threads = params.threads();
    params.end();
    if (isArrayOf(info[0], napi_int32_array)) {
      // Every value low + [0, range) must be an int32.
      if (p.kind != RandomKind::randint || !(p.low >= INT32_MIN && p.low + static_cast<double>(p.range - 1) <= INT32_MAX && p.low == static_cast<double>(static_cast<int64_t>(p.low)))) {
        params.fail("an Int32Array out takes randint values that fit int32");
      }
      p.i32 = run<int32_t>(params, info[0], "out", at, p.count);
    } else {
      p.f32 = run<float>(params, info[0], "out", at, p.count);
    }
    random(p, threads);
  });
}

// reduce(op, x, out, [rank, threads, wide (a sum accumulates in double), shape, reduced flags, x offset, x strides, out offset, out strides,
//   type code (0 float32, 1 float16, 2 bfloat16: x and out Float32Arrays, or Uint16Arrays of 16-bit patterns)])
Napi::Value Reduce(const Napi::CallbackInfo& info) {
  return entry(info, 4, "reduce(op, x, out, params)", "reduce", [&](Params& params) {
    if (!info[0].IsString()) throw Napi::TypeError::New(info.Env(), "reduce: op must be a string");
    const std::string op = info[0].As<Napi::String>().Utf8Value();
    ReduceProblem p{};
    if (op == "sum") {
      p.op = ReduceOp::sum;
    } else if (op == "max") {
      p.op = ReduceOp::max;
    } else if (op == "min") {
      p.op = ReduceOp::min;
    } else {
      params.fail("op must be sum, max or min, got '" + op + "'");
    }
    p.rank = static_cast<int>(params.integer("rank", 0, MAX_RANK));
    const int threads = params.threads();
    p.wide = params.flag("wide");
    for (int d = 0; d < p.rank; ++d) p.shape[d] = params.integer("every extent", 1, INT64_C(1) << 52);
    for (int d = 0; d < p.rank; ++d) p.reduced[d] = params.flag("every reduced flag");
    const int64_t xOffset = params.index("the x offset");
    for (int d = 0; d < p.rank; ++d) p.xStrides[d] = params.stride("every x stride");
    const int64_t outOffset = params.index("the out offset");
    for (int d = 0; d < p.rank; ++d) {
      const int64_t stride = params.stride("every out stride");
      p.outStrides[d] = p.reduced[d] ? 0 : stride;  // every index of a reduced dim lands on one output
    }
    const int64_t code = params.integer("the type code", 0, 2);
    params.end();
    p.type = code == 0 ? Elem::f32 : code == 1 ? Elem::f16 : Elem::bf16;
    if (p.type == Elem::f32) {
      p.x = operand<float>(params, info[1], "x", xOffset, p.shape, p.xStrides, p.rank);
      p.out = operand<float>(params, info[2], "out", outOffset, p.shape, p.outStrides, p.rank);
    } else {
      p.x = operand<uint16_t>(params, info[1], "x", xOffset, p.shape, p.xStrides, p.rank);
      p.out = operand<uint16_t>(params, info[2], "out", outOffset, p.shape, p.outStrides, p.rank);
    }
    reduce(p, threads);
  });
}

// softmax(x, out, [x offset, out offset, rows, length, log, threads])
Napi::Value Softmax(const Napi::CallbackInfo& info) {
  return entry(info, 3, "softmax(x, out, params)", "softmax", [&](Params& params) {
    SoftmaxProblem p{};
    const int64_t xOffset = params.index("the x offset"), outOffset = params.index("the out offset");
    p.rows = params.index("rows");
    p.length = params.integer("length", 1, INT64_C(1) << 52);
    p.log = params.flag("log");
    const int threads = params.threads();
    params.end();
    p.x = run<float>(params, info[0], "x", xOffset, p.rows * p.length);
    p.out = run<float>(params, info[1], "out", outOffset, p.rows * p.length);
    softmax(p, threads);
  });
}

// crossEntropy(x, target, out, [x offset, row stride, target offset, target stride, out offset, out stride, rows, classes, ignoreIndex, smoothing, threads])
Napi::Value CrossEntropy(const Napi::CallbackInfo& info) {
  return entry(info, 4, "crossEntropy(x, target, out, params)", "crossEntropy", [&](Params& params) {
    CrossEntropyProblem p{};
    const int64_t xOffset = params.index("the x offset");
    p.rowStride = params.stride("the row stride");
    const int64_t targetOffset = params.index("the target offset");
    p.targetStride = params.stride("the target stride");
    const int64_t outOffset = params.index("the out offset");
    p.outStride = params.stride("the out stride");
    p.rows = params.index("rows");
    p.classes = params.integer("classes", 1, INT64_C(1) << 52);
    p.ignoreIndex = params.stride("ignoreIndex");
    p.smoothing = params.real("smoothing");
    const int threads = params.threads();
    params.end();
    const int64_t xExtents[2] = {p.rows, p.classes}, xStrides[2] = {p.rowStride, 1};
    p.x = operand<float>(params, info[0], "x", xOffset, xExtents, xStrides, 2);
    p.target = operand<int32_t>(params, info[1], "target", targetOffset, &p.rows, &p.targetStride, 1);
    p.out = operand<float>(params, info[2], "out", outOffset, &p.rows, &p.outStride, 1);
    crossEntropy(p, threads);
  });
}

// adamw(p, g, m, v, vmax, [offsets of p, g, m, v and vmax, n, maximize, weightDecay, decoupled, lerpFromM,
//                          decay, wd, lerpW, b2, oneMinusB2, bc2, eps, negStep, threads])
Napi::Value Adamw(const Napi::CallbackInfo& info) {
  return entry(info, 6, "adamw(p, g, m, v, vmax, params)", "adamw", [&](Params& params) {
    int64_t offsets[5];
    for (int64_t& offset : offsets) offset = params.index("every offset");
    AdamProblem a{};
    a.n = params.index("n");
    a.maximize = params.flag("maximize");
    a.weightDecay = params.flag("weightDecay");
    a.decoupled = params.flag("decoupled");
    a.lerpFromM = params.flag("lerpFromM");
    float* scalars[] = {&a.decay, &a.wd, &a.lerpW, &a.b2, &a.oneMinusB2, &a.bc2, &a.eps, &a.negStep};
    for (float* s : scalars) *s = static_cast<float>(params.real("every scalar"));
    const int threads = params.threads();
    params.end();
    a.p = run<float>(params, info[0], "p", offsets[0], a.n);
    a.g = run<float>(params, info[1], "g", offsets[1], a.n);
    a.m = run<float>(params, info[2], "m", offsets[2], a.n);
    a.v = run<float>(params, info[3], "v", offsets[3], a.n);
    a.vmax = info[4].IsNull() ? nullptr : run<float>(params, info[4], "vmax", offsets[4], a.n);
    adamw(a, threads);
  });
}

// stridedSum(src, out, [rank, threads, shape, src offset, src strides, out offset, out numel, view offset, view strides])
Napi::Value StridedSum(const Napi::CallbackInfo& info) {
  return entry(info, 3, "stridedSum(src, out, params)", "stridedSum", [&](Params& params) {
    StridedSumProblem p{};
    p.rank = static_cast<int>(params.integer("rank", 0, MAX_RANK));
    const int threads = params.threads();
    for (int d = 0; d < p.rank; ++d) p.shape[d] = params.index("every extent");
    const int64_t srcOffset = params.index("the src offset");
    for (int d = 0; d < p.rank; ++d) p.srcStrides[d] = params.stride("every src stride");
    const int64_t outOffset = params.index("the out offset");
    p.outNumel = params.index("the out numel");
    p.viewOffset = params.index("the view offset");
    for (int d = 0; d < p.rank; ++d) p.outStrides[d] = params.index("every view stride");
    params.end();
    p.src = operand<float>(params, info[0], "src", srcOffset, p.shape, p.srcStrides, p.rank);
    p.out = run<float>(params, info[1], "out", outOffset, p.outNumel);
    // The view must stay inside out's numel elements, not just inside the array.
    int64_t last = p.viewOffset;
    for (int d = 0; d < p.rank; ++d) {
      if (p.shape[d] == 0) last = -1;
      if (last >= 0) last += (p.shape[d] - 1) * p.outStrides[d];
    }
    if (last >= p.outNumel) params.fail("the view reaches element " + std::to_string(last) + " of an out of " + std::to_string(p.outNumel));
    stridedSum(p, threads);
  });
}

/** What readUpdate reads: the arrays (a null optional one stays null), their length and the common flags. */
struct UpdateFrame {
  float* arrays[5] = {};
  int64_t n = 0;
  bool maximize = false, weightDecay = false;
  int threads = 1;
};

/**
 * The params the in-place Adadelta and RMSprop updates share, [an offset per array, n, maximize,
 * weightDecay, the scalars (each rounded to float32 into `scalars`), threads], and the array
 * arguments named `names`, each checked to hold n floats from its offset; those from
 * `firstOptional` on may be null.
 */
UpdateFrame readUpdate(const Napi::CallbackInfo& info, Params& params, std::initializer_list<const char*> names, size_t firstOptional,
                       std::initializer_list<float*> scalars) {
  UpdateFrame f;
  int64_t offsets[5];
  for (size_t k = 0; k < names.size(); ++k) offsets[k] = params.index("every offset");
  f.n = params.index("n");
  f.maximize = params.flag("maximize");
  f.weightDecay = params.flag("weightDecay");
  for (float* s : scalars) *s = static_cast<float>(params.real("every scalar"));
  f.threads = params.threads();
  params.end();
  size_t k = 0;
  for (const char* name : names) {
    f.arrays[k] = k >= firstOptional && info[k].IsNull() ? nullptr : run<float>(params, info[k], name, offsets[k], f.n);
    ++k;
  }
  return f;
}

// adadelta(p, g, v, u, [offsets of p, g, v and u, n, maximize, weightDecay, rho, oneMinusRho, eps, wd, negLr, threads])
Napi::Value Adadelta(const Napi::CallbackInfo& info) {
  return entry(info, 5, "adadelta(p, g, v, u, params)", "adadelta", [&](Params& params) {
    AdadeltaProblem a{};
    const UpdateFrame f = readUpdate(info, params, {"p", "g", "v", "u"}, 4, {&a.rho, &a.oneMinusRho, &a.eps, &a.wd, &a.negLr});
    std::tie(a.p, a.g, a.v, a.u) = std::make_tuple(f.arrays[0], f.arrays[1], f.arrays[2], f.arrays[3]);
    std::tie(a.n, a.maximize, a.weightDecay) = std::make_tuple(f.n, f.maximize, f.weightDecay);
    adadelta(a, f.threads);
  });
}

// rmsprop(p, g, v, b, a, [offsets of p, g, v, b and a, n, maximize, weightDecay, alpha, oneMinusAlpha, eps, wd,
//                         momentum, negLr, threads]); b (the momentum buffer) and a (the gradient average) may be null
Napi::Value Rmsprop(const Napi::CallbackInfo& info) {
  return entry(info, 6, "rmsprop(p, g, v, b, a, params)", "rmsprop", [&](Params& params) {
    RMSpropProblem r{};
    const UpdateFrame f = readUpdate(info, params, {"p", "g", "v", "b", "a"}, 3, {&r.alpha, &r.oneMinusAlpha, &r.eps, &r.wd, &r.momentum, &r.negLr});
    std::tie(r.p, r.g, r.v, r.b, r.a) = std::make_tuple(f.arrays[0], f.arrays[1], f.arrays[2], f.arrays[3], f.arrays[4]);
    std::tie(r.n, r.maximize, r.weightDecay) = std::make_tuple(f.n, f.maximize, f.weightDecay);
    rmsprop(r, f.threads);
  });
}

}  // namespace

void addNumericExports(Napi::Env env, Napi::Object exports) {
  exports.Set("random", Napi::Function::New(env, Random, "random"));
  exports.Set("reduce", Napi::Function::New(env, Reduce, "reduce"));
  exports.Set("softmax", Napi::Function::New(env, Softmax, "softmax"));
  exports.Set("crossEntropy", Napi::Function::New(env, CrossEntropy, "crossEntropy"));
  exports.Set("adamw", Napi::Function::New(env, Adamw, "adamw"));
  exports.Set("adadelta", Napi::Function::New(env, Adadelta, "adadelta"));
  exports.Set("rmsprop", Napi::Function::New(env, Rmsprop, "rmsprop"));
  exports.Set("stridedSum", Napi::Function::New(env, StridedSum, "stridedSum"));
}

}  // namespace core_cpu
