// The N-API surface (node-addon-api, Node-API 8). Small and generic: probe, storage, one function
// per primitive family. Every entry point converts rt::CudaError into a JS Error; reads and
// synchronize return promises resolved from the libuv pool once the device's event completes.
#include <napi.h>

#include <string.h>

#include <memory>
#include <vector>

#include "fusion.h"
#include "runtime.h"

namespace {

const cu::Driver* driver = nullptr;
std::string unavailableReason;
int deviceCount = 0;
std::vector<std::unique_ptr<rt::DeviceState>> devices;
std::vector<std::string> deviceErrors;
int64_t reportedBytes = 0;  // device bytes reported to V8 as external memory
// A prepared program's capture: armed by captureBegin, it starts on the device the first call queues on.
bool captureArmed = false;
int captureDevice = -1;

rt::DeviceState& device(const Napi::Env& env, const Napi::Value& v) {
  if (!driver) throw Napi::Error::New(env, "cuda is unavailable: " + unavailableReason);
  int i = v.As<Napi::Number>().Int32Value();
  if (i < 0 || i >= deviceCount) throw Napi::RangeError::New(env, "cuda:" + std::to_string(i) + " does not exist (" + std::to_string(deviceCount) + " devices)");
  if (!devices[i]) {
    if (!deviceErrors[i].empty()) throw Napi::Error::New(env, deviceErrors[i]);
    try {
      devices[i] = std::make_unique<rt::DeviceState>(*driver, i);
    } catch (const rt::CudaError& e) {
      deviceErrors[i] = e.what();
      throw Napi::Error::New(env, e.what());
    }
  }
  return *devices[i];
}

Napi::Error notCapturable(const Napi::Env& env, const std::string& what, const char* code) {
  Napi::Error e = Napi::Error::New(env, what);
  e.Set("code", Napi::String::New(env, code));
  return e;
}

/** The device an operation queues on: while a capture is armed, it starts there or must be there. */
rt::DeviceState& queueOn(const Napi::Env& env, const Napi::Value& v) {
  rt::DeviceState& d = device(env, v);
  if (!captureArmed) return d;
  if (captureDevice < 0) {
    try {
      d.beginCapture();
    } catch (const rt::CudaError& e) {
      captureArmed = false;
      throw Napi::Error::New(env, e.what());
    }
    captureDevice = d.index();
  } else if (captureDevice != d.index()) {
    throw notCapturable(env, "cuda:" + std::to_string(d.index()) + ": a call on another device than the capture's (cuda:" + std::to_string(captureDevice) + ")",
                        "CUDA_CAPTURE_OTHER_DEVICE");
  }
  return d;
}

/** Keep V8's view of external memory equal to the bytes the allocators hold, so GC keeps pace with device memory. */
void reportMemory(const Napi::Env& env) {
  int64_t total = 0;
  for (auto& d : devices)
    if (d) total += (int64_t)d->reservedBytes();
  if (total != reportedBytes) {
    Napi::MemoryManagement::AdjustExternalMemory(env, total - reportedBytes);
    reportedBytes = total;
  }
}

double num(const Napi::Object& o, const char* key) { return o.Get(key).As<Napi::Number>().DoubleValue(); }

/** { ptr, dtype, shape, strides, offset } → rt::Ref. */
rt::Ref ref(const Napi::Env& env, const Napi::Value& v) {
  Napi::Object o = v.As<Napi::Object>();
  rt::Ref r;
  r.ptr = (cu::DevicePtr)num(o, "ptr");
  r.dtype = (int)num(o, "dtype");
  Napi::Array shape = o.Get("shape").As<Napi::Array>(), strides = o.Get("strides").As<Napi::Array>();
  r.ndim = (int)shape.Length();
  if (r.ndim > rt::MAX_REF_DIMS) throw Napi::RangeError::New(env, "cuda: tensors of rank > " + std::to_string(rt::MAX_REF_DIMS) + " are not supported");
  for (int d = 0; d < r.ndim; d++) {
    r.shape[d] = (int64_t)shape.Get((uint32_t)d).As<Napi::Number>().DoubleValue();
    r.strides[d] = (int64_t)strides.Get((uint32_t)d).As<Napi::Number>().DoubleValue();
  }
  r.offset = (int64_t)num(o, "offset");
  return r;
}

/** An optional operand: false for null or undefined, otherwise `r` is set from it. */
bool optionalRef(const Napi::Env& env, const Napi::Value& v, rt::Ref& r) {
  if (v.IsNull() || v.IsUndefined()) return false;
  r = ref(env, v);
  return true;
}

template <typename F>
Napi::Value guarded(const Napi::CallbackInfo& info, F&& f) {
  try {
    return f();
  } catch (const rt::NotCapturable& e) {
    throw notCapturable(info.Env(), e.what(), "CUDA_NOT_CAPTURABLE");
  } catch (const rt::CudaError& e) {
    throw Napi::Error::New(info.Env(), e.what());
  }
}

/** Waits on a device event in the libuv pool, then hands the staging bytes (if any) to JS. */
class EventWaiter : public Napi::AsyncWorker {
 public:
  EventWaiter(Napi::Env env, rt::DeviceState& d, void* host, size_t bytes, cu::Event ev, bool wantsBytes)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), d_(d), host_(host), bytes_(bytes), ev_(ev), wantsBytes_(wantsBytes) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      d_.makeCurrent();
    } catch (const rt::CudaError& e) {
      SetError(e.what());
      return;
    }
    cu::Result r = d_.driver().eventSynchronize(ev_);
    if (r != cu::SUCCESS) SetError("cuda:" + std::to_string(d_.index()) + ": a queued kernel or copy failed: " + cu::errorText(d_.driver(), r));
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (!wantsBytes_) {  // synchronize: nothing to hand over
      d_.releaseStaging(host_);
      deferred_.Resolve(env.Undefined());
      return;
    }
    Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, bytes_);
    if (bytes_) memcpy(ab.Data(), host_, bytes_);
    d_.releaseStaging(host_);
    deferred_.Resolve(ab);
  }
  void OnError(const Napi::Error& e) override {
    d_.releaseStaging(host_);
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  rt::DeviceState& d_;
  void* host_;
  size_t bytes_;
  cu::Event ev_;
  bool wantsBytes_;
};

Napi::Value Probe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  std::string lastError;
  bool usable = false;
  Napi::Array list = Napi::Array::New(env);
  if (driver) {
    for (int i = 0; i < deviceCount; i++) {
      try {
        rt::DeviceState& d = device(env, Napi::Number::New(env, i));
        Napi::Object o = Napi::Object::New(env);
        o.Set("name", d.name());
        o.Set("computeCapability", std::to_string(d.ccMajor()) + "." + std::to_string(d.ccMinor()));
        o.Set("totalMemory", (double)d.totalMemory());
        o.Set("cublasLt", d.cublasLtName() ? Napi::Value(Napi::String::New(env, d.cublasLtName())) : env.Null());
        list.Set((uint32_t)i, o);
        usable = true;
      } catch (const Napi::Error& e) {
        if (lastError.empty()) lastError = e.Message();
      }
    }
  }
  out.Set("available", usable);
  out.Set("reason", usable ? "" : (driver ? lastError : unavailableReason));
  out.Set("deviceCount", usable ? deviceCount : 0);
  out.Set("driverVersion", driver ? driver->version : 0);
  out.Set("devices", list);
  return out;
}

Napi::Value Alloc(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    rt::DeviceState& d = queueOn(info.Env(), info[0]);
    cu::DevicePtr p = d.alloc((size_t)info[1].As<Napi::Number>().DoubleValue());
    reportMemory(info.Env());
    return Napi::Number::New(info.Env(), (double)p);
  });
}

Napi::Value Free(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    queueOn(info.Env(), info[0]).free((cu::DevicePtr)info[1].As<Napi::Number>().DoubleValue());
    return info.Env().Undefined();
  });
}

Napi::Value EmptyCache(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    queueOn(info.Env(), info[0]).emptyCache();
    reportMemory(info.Env());
    return info.Env().Undefined();
  });
}

Napi::Value Write(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    Napi::TypedArray data = info[3].As<Napi::TypedArray>();
    const uint8_t* src = static_cast<const uint8_t*>(data.ArrayBuffer().Data()) + data.ByteOffset();
    queueOn(info.Env(), info[0]).write((cu::DevicePtr)info[1].As<Napi::Number>().DoubleValue(), (size_t)info[2].As<Napi::Number>().DoubleValue(), src,
                                      data.ByteLength());
    return info.Env().Undefined();
  });
}

Napi::Value Read(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    rt::DeviceState& d = queueOn(info.Env(), info[0]);
    size_t bytes = (size_t)info[2].As<Napi::Number>().DoubleValue();
    cu::Event ev = nullptr;
    void* host = d.readAsync((cu::DevicePtr)info[1].As<Napi::Number>().DoubleValue(), bytes, ev);
    auto* w = new EventWaiter(info.Env(), d, host, bytes, ev, true);
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  });
}

Napi::Value Synchronize(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    rt::DeviceState& d = queueOn(info.Env(), info[0]);
    cu::Event ev = nullptr;
    void* host = d.readAsync(0, 0, ev);
    auto* w = new EventWaiter(info.Env(), d, host, 0, ev, false);
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  });
}

Napi::Value MemoryStats(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    rt::DeviceState& d = device(info.Env(), info[0]);
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("allocatedBytes", (double)d.allocatedBytes());
    o.Set("allocations", (double)d.allocations());
    o.Set("reservedBytes", (double)d.reservedBytes());
    return o;
  });
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    rt::DeviceState& d = device(info.Env(), info[0]);
    const rt::Stats& s = d.stats();
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("launches", (double)s.launches);
    o.Set("cublasLtCalls", (double)s.cublasLtCalls);
    o.Set("wmmaCalls", (double)s.wmmaCalls);
    o.Set("tiledCalls", (double)s.tiledCalls);
    o.Set("h2dBytes", (double)s.h2dBytes);
    o.Set("d2hBytes", (double)s.d2hBytes);
    o.Set("stagingBytes", (double)s.stagingBytes);
    o.Set("gemmMode", d.gemmMode());
    o.Set("graphLaunches", (double)s.graphLaunches);
    o.Set("graphs", (double)d.liveGraphs());
    return o;
  });
}

Napi::Value SetGemmMode(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    std::string mode = info[1].As<Napi::String>().Utf8Value();
    if (mode != "auto" && mode != "own" && mode != "cublaslt") throw Napi::TypeError::New(info.Env(), "gemm mode must be 'auto', 'own' or 'cublaslt'");
    device(info.Env(), info[0]).setGemmMode(mode);
    return info.Env().Undefined();
  });
}

// compile()'s elementwise fusion (fusion.cpp): NVRTC, optional and dlopened on first use.
Napi::Value Nvrtc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string why;
  const nv::Lib* lib = fz::nvrtc(why);
  Napi::Object o = Napi::Object::New(env);
  o.Set("available", lib != nullptr);
  o.Set("library", lib ? lib->soname : std::string());
  o.Set("version", lib ? std::to_string(lib->major) + "." + std::to_string(lib->minor) : std::string());
  o.Set("reason", lib ? std::string() : why);
  return o;
}

/** fusedBuild(device, source) → module id; NVRTC's failure throws with code CUDA_FUSION_COMPILE and its log. */
Napi::Value FusedBuild(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    rt::DeviceState& d = device(env, info[0]);
    const std::string source = info[1].As<Napi::String>().Utf8Value();
    const fz::Built& built = fz::build(source, d.ccMajor(), d.ccMinor());
    if (!built.ok) {
      Napi::Error e = Napi::Error::New(env, built.log);
      e.Set("code", Napi::String::New(env, "CUDA_FUSION_COMPILE"));
      throw e;
    }
    return Napi::Number::New(env, d.loadFusedModule(built.image));
  });
}

/**
 * fusionCompile(source, ccMajor, ccMinor) → { ok, log, image }: what fusedBuild's NVRTC step makes for
 * an architecture, with no device (the cubin is not loaded). The tests compile generated modules with
 * a real NVRTC this way on machines without a GPU.
 */
Napi::Value FusionCompile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber())
    throw Napi::TypeError::New(env, "fusionCompile(source, ccMajor, ccMinor): a string and two numbers");
  const fz::Built& built = fz::build(info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::Number>().Int32Value(),
                                     info[2].As<Napi::Number>().Int32Value());
  Napi::Object o = Napi::Object::New(env);
  o.Set("ok", built.ok);
  o.Set("log", built.log);
  o.Set("image", Napi::Buffer<char>::Copy(env, built.image.data(), built.image.size()));
  return o;
}

/** fusionProgram(source): the program NVRTC is given for a fused module's source (the embedded headers inlined). */
Napi::Value FusionProgram(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), fz::expandHeaders(info[0].As<Napi::String>().Utf8Value()));
}

/** fusedLaunch(device, module, name, numel, ptrs): queued like any kernel (captured while a capture is under way). */
Napi::Value FusedLaunch(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    rt::DeviceState& d = queueOn(env, info[0]);
    Napi::Array list = info[4].As<Napi::Array>();
    std::vector<cu::DevicePtr> ptrs;
    for (uint32_t i = 0; i < list.Length(); i++) ptrs.push_back((cu::DevicePtr)list.Get(i).As<Napi::Number>().DoubleValue());
    d.launchFused((uint32_t)info[1].As<Napi::Number>().Uint32Value(), info[2].As<Napi::String>().Utf8Value(),
                  (int64_t)info[3].As<Napi::Number>().DoubleValue(), ptrs);
    return env.Undefined();
  });
}

// Captures (prepared programs, src/prepared.ts in the package): captureBegin arms one, each call then
// runs as usual and its launches are captured (or it throws NotCapturable having done nothing),
// captureEnd instantiates the graph.
Napi::Value CaptureBegin(const Napi::CallbackInfo& info) {
  if (captureArmed) throw Napi::Error::New(info.Env(), "cuda: a capture is already under way");
  captureArmed = true;
  captureDevice = -1;
  return info.Env().Undefined();
}

Napi::Value CaptureNodes(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), captureDevice < 0 ? 0.0 : (double)devices[captureDevice]->capturedNodes());
}

/** { device, graph, nodes } (graph 0: nothing was captured), or null when no call queued anything. */
Napi::Value CaptureEnd(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const int d = captureDevice;
    captureArmed = false;
    captureDevice = -1;
    if (d < 0) return info.Env().Null();
    const uint64_t nodes = devices[d]->capturedNodes();
    uint32_t graph = 0;
    try {
      graph = devices[d]->endCapture();
    } catch (...) {
      devices[d]->abortCapture();  // a no-op unless the capture could not even be ended
      throw;
    }
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("device", d);
    o.Set("graph", (double)graph);
    o.Set("nodes", (double)nodes);
    return o;
  });
}

Napi::Value CaptureAbort(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    const int d = captureDevice;
    captureArmed = false;
    captureDevice = -1;
    if (d >= 0) devices[d]->abortCapture();
    return info.Env().Undefined();
  });
}

Napi::Value GraphLaunch(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    queueOn(info.Env(), info[0]).launchGraph((uint32_t)info[1].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  });
}

Napi::Value GraphDestroy(const Napi::CallbackInfo& info) {
  return guarded(info, [&] {
    device(info.Env(), info[0]).destroyGraph((uint32_t)info[1].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  });
}

#define OP_CALL(...)                                        \
  [](const Napi::CallbackInfo& info) -> Napi::Value {       \
    return guarded(info, [&] {                              \
      Napi::Env env = info.Env();                           \
      rt::DeviceState& d = queueOn(env, info[0]);           \
      __VA_ARGS__;                                          \
      reportMemory(env);                                    \
      return env.Undefined();                               \
    });                                                     \
  }

int i32(const Napi::Value& v) { return v.As<Napi::Number>().Int32Value(); }
double f64(const Napi::Value& v) { return v.As<Napi::Number>().DoubleValue(); }

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  driver = cu::loadDriver(unavailableReason, deviceCount);
  devices.resize(deviceCount);
  deviceErrors.resize(deviceCount);
  exports.Set("probe", Napi::Function::New(env, Probe));
  exports.Set("alloc", Napi::Function::New(env, Alloc));
  exports.Set("free", Napi::Function::New(env, Free));
  exports.Set("emptyCache", Napi::Function::New(env, EmptyCache));
  exports.Set("write", Napi::Function::New(env, Write));
  exports.Set("read", Napi::Function::New(env, Read));
  exports.Set("synchronize", Napi::Function::New(env, Synchronize));
  exports.Set("memoryStats", Napi::Function::New(env, MemoryStats));
  exports.Set("stats", Napi::Function::New(env, Stats));
  exports.Set("setGemmMode", Napi::Function::New(env, SetGemmMode));
  exports.Set("captureBegin", Napi::Function::New(env, CaptureBegin));
  exports.Set("captureNodes", Napi::Function::New(env, CaptureNodes));
  exports.Set("captureEnd", Napi::Function::New(env, CaptureEnd));
  exports.Set("captureAbort", Napi::Function::New(env, CaptureAbort));
  exports.Set("graphLaunch", Napi::Function::New(env, GraphLaunch));
  exports.Set("graphDestroy", Napi::Function::New(env, GraphDestroy));
  exports.Set("nvrtc", Napi::Function::New(env, Nvrtc));
  exports.Set("fusedBuild", Napi::Function::New(env, FusedBuild));
  exports.Set("fusionProgram", Napi::Function::New(env, FusionProgram));
  exports.Set("fusionCompile", Napi::Function::New(env, FusionCompile));
  exports.Set("fusedLaunch", Napi::Function::New(env, FusedLaunch));
  exports.Set("unary", Napi::Function::New(env, OP_CALL(d.unary(i32(info[1]), ref(env, info[2]), ref(env, info[3])))));
  exports.Set("binary", Napi::Function::New(env, OP_CALL(d.binary(i32(info[1]), ref(env, info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("compare", Napi::Function::New(env, OP_CALL(d.compare(i32(info[1]), ref(env, info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("where", Napi::Function::New(env, OP_CALL(d.where(ref(env, info[1]), ref(env, info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("cast", Napi::Function::New(env, OP_CALL(d.cast(ref(env, info[1]), ref(env, info[2])))));
  exports.Set("copy", Napi::Function::New(env, OP_CALL(d.copy(ref(env, info[1]), ref(env, info[2])))));
  exports.Set("fill", Napi::Function::New(env, OP_CALL(d.fill(ref(env, info[1]), f64(info[2])))));
  exports.Set("reduce", Napi::Function::New(env, OP_CALL({
    Napi::Array ax = info[3].As<Napi::Array>();
    std::vector<int> axes;
    for (uint32_t i = 0; i < ax.Length(); i++) axes.push_back(i32(ax.Get(i)));
    d.reduce(i32(info[1]), ref(env, info[2]), axes, ref(env, info[4]));
  })));
  exports.Set("argReduce", Napi::Function::New(env, OP_CALL(d.argReduce(i32(info[1]), ref(env, info[2]), i32(info[3]), ref(env, info[4])))));
  exports.Set("matmul", Napi::Function::New(env, OP_CALL(d.matmul(ref(env, info[1]), ref(env, info[2]), ref(env, info[3])))));
  exports.Set("gather", Napi::Function::New(env, OP_CALL(d.gather(ref(env, info[1]), i32(info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("scatterAdd", Napi::Function::New(env, OP_CALL(d.scatterAdd(ref(env, info[1]), i32(info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("random", Napi::Function::New(env, OP_CALL(d.random(ref(env, info[1]), (uint32_t)f64(info[2]), (uint32_t)f64(info[3]), (uint64_t)f64(info[4]),
                                                                    i32(info[5]), i32(info[6]), (uint64_t)f64(info[7])))));
  exports.Set("argsort", Napi::Function::New(env, OP_CALL(d.argsort(ref(env, info[1]), i32(info[2]), info[3].ToBoolean().Value(), ref(env, info[4])))));
  exports.Set("cumulative", Napi::Function::New(env, OP_CALL(d.cumulative(i32(info[1]), ref(env, info[2]), i32(info[3]), ref(env, info[4])))));
  exports.Set("scatter", Napi::Function::New(env, OP_CALL(d.scatter(ref(env, info[1]), i32(info[2]), ref(env, info[3]), ref(env, info[4]), i32(info[5])))));
  exports.Set("softmax", Napi::Function::New(env, OP_CALL(d.softmax(ref(env, info[1]), i32(info[2]), ref(env, info[3]), info[4].ToBoolean().Value()))));
  exports.Set("crossEntropy", Napi::Function::New(env, OP_CALL(d.crossEntropy(ref(env, info[1]), ref(env, info[2]), i32(info[3]), (float)f64(info[4]),
                                                                               ref(env, info[5])))));
  exports.Set("unscaleAndCheck", Napi::Function::New(env, OP_CALL({
    Napi::Array grads = info[1].As<Napi::Array>();
    rt::Ref found = ref(env, info[2]), inv = ref(env, info[3]);
    for (uint32_t i = 0; i < grads.Length(); i++) d.unscale(ref(env, grads.Get(i)), found, inv);
  })));
  exports.Set("adam", Napi::Function::New(env, OP_CALL({
    Napi::Object s = info[6].As<Napi::Object>();
    rt::AdamScalars a{(float)num(s, "oneMinusBeta1"), (float)num(s, "beta2"), (float)num(s, "oneMinusBeta2"), (float)num(s, "eps"),
                      (float)num(s, "weightDecay"), (float)num(s, "decayFactor"), (float)num(s, "stepSize"), (float)num(s, "biasCorrection2Sqrt"),
                      s.Get("decoupled").ToBoolean().Value(), s.Get("maximize").ToBoolean().Value()};
    rt::Ref vmax;
    const bool ams = optionalRef(env, info[5], vmax);
    d.adam(ref(env, info[1]), ref(env, info[2]), ref(env, info[3]), ref(env, info[4]), ams ? &vmax : nullptr, a);
  })));
  exports.Set("addcmul", Napi::Function::New(env, OP_CALL(d.addcmul(ref(env, info[1]), ref(env, info[2]), ref(env, info[3]), ref(env, info[4])))));
  exports.Set("attention", Napi::Function::New(env, OP_CALL({
    rt::Ref mask;
    const bool masked = optionalRef(env, info[4], mask);
    d.attention(ref(env, info[1]), ref(env, info[2]), ref(env, info[3]), masked ? &mask : nullptr, (float)f64(info[5]), info[6].ToBoolean().Value(),
                ref(env, info[7]), ref(env, info[8]));
  })));
  return exports;
}

}  // namespace

NODE_API_MODULE(core_cuda, Init)
