#define CK_HOST_ONLY
#include "runtime.h"
#include "layouts.h"

#include <string.h>

#include <algorithm>

#include "../kernels/common.cuh"

namespace rt {

namespace {

const char* const DTYPE_SUFFIX[] = {"f32", "f16", "bf16", "i32", "b8"};
const char* const WIDTH_SUFFIX[] = {"", "w1", "w2", "", "w4"};
constexpr unsigned ELEMENTWISE_THREADS = 256;

std::string suffix(int dtype) {
  if (dtype < 0 || dtype > ck::BOOL) throw CudaError("cuda: unknown dtype code " + std::to_string(dtype));
  return DTYPE_SUFFIX[dtype];
}
bool isFloat(int dtype) { return dtype == ck::F32 || dtype == ck::F16 || dtype == ck::BF16; }
size_t roundSize(size_t bytes) {
  // Small blocks in 512-byte steps, large ones in 2 MiB steps: few distinct sizes, little waste.
  if (bytes == 0) bytes = 1;
  const size_t step = bytes < (1u << 20) ? 512 : (2u << 20);
  return (bytes + step - 1) / step * step;
}

}  // namespace

int elementSize(int dtype) {
  switch (dtype) {
    case ck::F32: case ck::I32: return 4;
    case ck::F16: case ck::BF16: return 2;
    case ck::BOOL: return 1;
    default: throw CudaError("cuda: unknown dtype code " + std::to_string(dtype));
  }
}

void DeviceState::check(cu::Result r, const char* what) const {
  if (r != cu::SUCCESS) throw CudaError(std::string("cuda:") + std::to_string(index_) + ": " + what + " failed: " + cu::errorText(d_, r));
}

DeviceState::DeviceState(const cu::Driver& d, int index) : d_(d), index_(index) {
  check(d_.deviceGet(&dev_, index), "cuDeviceGet");
  char name[256] = {};
  check(d_.deviceGetName(name, sizeof name, dev_), "cuDeviceGetName");
  name_ = name;
  check(d_.deviceGetAttribute(&ccMajor_, cu::ATTR_COMPUTE_CAPABILITY_MAJOR, dev_), "cuDeviceGetAttribute");
  check(d_.deviceGetAttribute(&ccMinor_, cu::ATTR_COMPUTE_CAPABILITY_MINOR, dev_), "cuDeviceGetAttribute");
  check(d_.deviceGetAttribute(&smCount_, cu::ATTR_MULTIPROCESSOR_COUNT, dev_), "cuDeviceGetAttribute");
  check(d_.deviceTotalMem(&totalMem_, dev_), "cuDeviceTotalMem");
  if (ccMajor_ < 8)
    throw CudaError("no device: " + name_ + " has compute capability " + std::to_string(ccMajor_) + "." + std::to_string(ccMinor_) +
                    "; this build has kernels for 8.0 and newer");
  check(d_.primaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  makeCurrent();
  check(d_.streamCreate(&compute_, cu::STREAM_NON_BLOCKING), "cuStreamCreate");
  check(d_.streamCreate(&copy_, cu::STREAM_NON_BLOCKING), "cuStreamCreate");
  check(d_.moduleLoadData(&module_, core_cuda_fatbin), "cuModuleLoadData (the embedded kernels)");
  std::string why;
  lt_ = lt::load(why);
  if (lt_ && lt_->create(&ltHandle_) != lt::SUCCESS) lt_ = nullptr;
  if (lt_) {
    ltWorkspaceBytes_ = 32u << 20;
    if (d_.memAlloc(&ltWorkspace_, ltWorkspaceBytes_) != cu::SUCCESS) { ltWorkspace_ = 0; ltWorkspaceBytes_ = 0; }
  }
}

void DeviceState::makeCurrent() const { check(d_.ctxSetCurrent(ctx_), "cuCtxSetCurrent"); }

cu::Function DeviceState::function(const std::string& name) {
  auto it = functions_.find(name);
  if (it != functions_.end()) return it->second;
  cu::Function f = nullptr;
  check(d_.moduleGetFunction(&f, module_, name.c_str()), ("cuModuleGetFunction " + name).c_str());
  functions_.emplace(name, f);
  return f;
}

template <typename... A>
void DeviceState::launch(const std::string& name, Dim3 grid, Dim3 block, A... args) {
  void* params[] = {static_cast<void*>(&args)...};
  check(d_.launchKernel(function(name), grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, compute_, params, nullptr),
        ("cuLaunchKernel " + name).c_str());
  // A captured launch is queued only when its graph is (launchGraph counts it then).
  if (capturing_) capturedNodes_++;
  else stats_.launches++;
}

unsigned DeviceState::gridFor(int64_t n, unsigned threads) const {
  int64_t blocks = (n + threads - 1) / threads;
  int64_t cap = (int64_t)smCount_ * 32;  // grid-stride loops cover the rest
  return (unsigned)std::max<int64_t>(1, std::min(blocks, cap));
}

// ---- storage ------------------------------------------------------------------------------

cu::DevicePtr DeviceState::alloc(size_t bytes) {
  // Also a cached block: its free recorded an event on the stream, which a capture cannot order.
  refuseCapture("an allocation");
  const size_t size = roundSize(bytes);
  auto it = cache_.lower_bound(size);
  if (it != cache_.end() && it->first <= size * 2) {
    // A cached block: stream-ordered reuse on the compute stream is safe as is; writes through the
    // copy stream wait for the event recorded when it was freed (see write()).
    cu::DevicePtr p = it->second.first;
    Block b = it->second.second;
    b.writes = 0;
    b.launchesAtAlloc = stats_.launches;
    cache_.erase(it);
    live_.emplace(p, b);
    allocatedBytes_ += b.size;
    return p;
  }
  makeCurrent();
  cu::DevicePtr p = 0;
  cu::Result r = d_.memAlloc(&p, size);
  if (r != cu::SUCCESS) {
    // Out of memory: wait for the device, give every cached block back, try once more.
    d_.streamSynchronize(compute_);
    d_.streamSynchronize(copy_);
    emptyCache();
    r = d_.memAlloc(&p, size);
  }
  if (r != cu::SUCCESS) {
    size_t freeB = 0, totalB = 0;
    d_.memGetInfo(&freeB, &totalB);
    throw CudaError("CUDA out of memory: tried to allocate " + std::to_string(size) + " bytes on cuda:" + std::to_string(index_) + " (" +
                    std::to_string(allocatedBytes_) + " bytes allocated by tensors, " + std::to_string(reservedBytes_) + " reserved, " +
                    std::to_string(freeB) + " free of " + std::to_string(totalB) + "); " + cu::errorText(d_, r));
  }
  Block b{size};
  b.launchesAtAlloc = stats_.launches;
  live_.emplace(p, b);
  allocatedBytes_ += size;
  reservedBytes_ += size;
  return p;
}

void DeviceState::free(cu::DevicePtr ptr) {
  refuseCapture("a free");
  auto it = live_.find(ptr);
  if (it == live_.end()) throw CudaError("cuda: free of an unknown pointer");
  Block b = it->second;
  live_.erase(it);
  allocatedBytes_ -= b.size;
  // Everything that used the block is queued before this point on the compute stream.
  if (!b.freed) check(d_.eventCreate(&b.freed, cu::EVENT_DISABLE_TIMING), "cuEventCreate");
  check(d_.eventRecord(b.freed, compute_), "cuEventRecord");
  cache_.emplace(b.size, std::make_pair(ptr, b));
}

void DeviceState::emptyCache() {
  refuseCapture("emptyCache");
  makeCurrent();
  d_.streamSynchronize(compute_);
  d_.streamSynchronize(copy_);
  for (auto& e : cache_) {
    d_.memFree(e.second.first);
    if (e.second.second.freed) d_.eventDestroy(e.second.second.freed);
    reservedBytes_ -= e.second.second.size;
  }
  cache_.clear();
}

DeviceState::Staging& DeviceState::staging(size_t bytes) {
  for (Staging& s : staging_)
    if (!s.busy && s.size >= bytes && d_.eventQuery(s.done) == cu::SUCCESS) return s;
  size_t size = 1u << 20;
  while (size < bytes) size *= 2;
  Staging s{nullptr, size, nullptr, false};
  check(d_.memHostAlloc(&s.host, size, cu::MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc (pinned staging)");
  check(d_.eventCreate(&s.done, cu::EVENT_DISABLE_TIMING), "cuEventCreate");
  stats_.stagingBytes += size;
  staging_.push_back(s);
  return staging_.back();
}

void DeviceState::write(cu::DevicePtr ptr, size_t byteOffset, const void* src, size_t bytes) {
  // A graph would copy from the staging buffer as it is at each launch, long after this write.
  refuseCapture("a host write");
  if (bytes == 0) return;
  auto it = live_.find(ptr);
  if (it == live_.end()) throw CudaError("cuda: write to an unknown storage");
  Block& b = it->second;
  if (byteOffset + bytes > b.size) throw CudaError("cuda: write past the end of a storage");
  makeCurrent();
  if (b.writes == 0 && b.launchesAtAlloc == stats_.launches) {
    // The upload pattern (allocate, then write): only the block's previous life must be over, so
    // the copy overlaps with the kernels queued since then.
    if (b.freed) check(d_.streamWaitEvent(copy_, b.freed, 0), "cuStreamWaitEvent");
  } else {
    // Kernels may have touched the block since: order the copy after everything queued so far.
    if (!b.freed) check(d_.eventCreate(&b.freed, cu::EVENT_DISABLE_TIMING), "cuEventCreate");
    check(d_.eventRecord(b.freed, compute_), "cuEventRecord");
    check(d_.streamWaitEvent(copy_, b.freed, 0), "cuStreamWaitEvent");
  }
  b.writes++;
  Staging& s = staging(bytes);
  memcpy(s.host, src, bytes);
  check(d_.memcpyHtoDAsync(ptr + byteOffset, s.host, bytes, copy_), "cuMemcpyHtoDAsync");
  check(d_.eventRecord(s.done, copy_), "cuEventRecord");
  // Kernels queued from now on see the data.
  check(d_.streamWaitEvent(compute_, s.done, 0), "cuStreamWaitEvent");
  stats_.h2dBytes += bytes;
}

void* DeviceState::readAsync(cu::DevicePtr ptr, size_t bytes, cu::Event& done) {
  refuseCapture("a host read");
  makeCurrent();
  Staging& s = staging(std::max<size_t>(bytes, 1));
  s.busy = true;
  if (bytes) check(d_.memcpyDtoHAsync(s.host, ptr, bytes, compute_), "cuMemcpyDtoHAsync");
  check(d_.eventRecord(s.done, compute_), "cuEventRecord");
  done = s.done;
  stats_.d2hBytes += bytes;
  return s.host;
}

void DeviceState::releaseStaging(void* host) {
  for (Staging& s : staging_)
    if (s.host == host) s.busy = false;
}

cu::Event DeviceState::recordAll() {
  refuseCapture("an event");
  makeCurrent();
  Staging& s = staging(1);  // borrow a staging slot's event: it completes after all queued work
  check(d_.eventRecord(s.done, compute_), "cuEventRecord");
  return s.done;
}

// ---- CUDA graphs ----------------------------------------------------------------------------

void DeviceState::refuseCapture(const char* what) const {
  if (capturing_) throw NotCapturable(std::string("cuda:") + std::to_string(index_) + ": " + what + " cannot be captured into a CUDA graph");
}

void DeviceState::beginCapture() {
  if (capturing_) throw CudaError("cuda: a capture is already under way");
  makeCurrent();
  check(d_.streamBeginCapture(compute_, cu::STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  capturing_ = true;
  capturedNodes_ = 0;
}

uint32_t DeviceState::endCapture() {
  if (!capturing_) throw CudaError("cuda: no capture is under way");
  makeCurrent();
  cu::Graph graph = nullptr;
  const cu::Result r = d_.streamEndCapture(compute_, &graph);
  capturing_ = false;  // the capture is over either way
  if (r != cu::SUCCESS) {
    if (graph) d_.graphDestroy(graph);
    check(r, "cuStreamEndCapture");
  }
  if (capturedNodes_ == 0) {
    d_.graphDestroy(graph);
    return 0;
  }
  cu::GraphExec exec = nullptr;
  const cu::Result ri = d_.graphInstantiate(&exec, graph, 0);
  d_.graphDestroy(graph);  // the executable graph keeps what it needs
  check(ri, "cuGraphInstantiateWithFlags");
  const uint32_t id = nextGraph_++;
  graphs_.emplace(id, Graph{exec, capturedNodes_});
  return id;
}

void DeviceState::abortCapture() {
  if (!capturing_) return;
  capturing_ = false;
  makeCurrent();
  cu::Graph graph = nullptr;
  d_.streamEndCapture(compute_, &graph);  // fails when the capture was invalidated: it still ends
  if (graph) d_.graphDestroy(graph);
  int status = -1;
  check(d_.streamIsCapturing(compute_, &status), "cuStreamIsCapturing");
  if (status != cu::STREAM_CAPTURE_STATUS_NONE) throw CudaError("cuda: the compute stream is still capturing after the capture was ended");
}

void DeviceState::launchGraph(uint32_t id) {
  refuseCapture("a graph launch");
  auto it = graphs_.find(id);
  if (it == graphs_.end()) throw CudaError("cuda: launch of an unknown or destroyed CUDA graph");
  makeCurrent();
  check(d_.graphLaunch(it->second.exec, compute_), "cuGraphLaunch");
  // Counted as launches: write() orders a host copy after kernels queued since the block's allocation.
  stats_.launches += it->second.nodes;
  stats_.graphLaunches++;
}

void DeviceState::destroyGraph(uint32_t id) {
  auto it = graphs_.find(id);
  if (it == graphs_.end()) return;
  const cu::GraphExec exec = it->second.exec;
  graphs_.erase(it);
  check(d_.graphExecDestroy(exec), "cuGraphExecDestroy");
}

uint32_t DeviceState::loadFusedModule(const std::string& image) {
  refuseCapture("loading a fused module");
  auto it = fusedByImage_.find(image);
  if (it != fusedByImage_.end()) return it->second;
  makeCurrent();
  cu::Module m = nullptr;
  check(d_.moduleLoadData(&m, image.c_str()), "cuModuleLoadData (fused kernels)");
  fusedModules_.push_back(m);
  const uint32_t id = (uint32_t)fusedModules_.size() - 1;
  fusedByImage_.emplace(image, id);
  return id;
}

void DeviceState::launchFused(uint32_t module, const std::string& name, int64_t numel, const std::vector<cu::DevicePtr>& ptrs) {
  if (module >= fusedModules_.size()) throw CudaError("cuda: unknown fused module " + std::to_string(module));
  if (ptrs.size() > (size_t)MAX_FUSED_BUFFERS) throw CudaError("cuda: a fused kernel addresses at most " + std::to_string(MAX_FUSED_BUFFERS) + " buffers");
  if (numel <= 0) return;
  makeCurrent();
  const auto key = std::make_pair(module, name);
  auto it = fusedFunctions_.find(key);
  if (it == fusedFunctions_.end()) {
    cu::Function f = nullptr;
    check(d_.moduleGetFunction(&f, fusedModules_[module], name.c_str()), ("cuModuleGetFunction " + name).c_str());
    it = fusedFunctions_.emplace(key, f).first;
  }
  FusedArgs args{};
  args.numel = numel;
  for (size_t i = 0; i < ptrs.size(); i++) args.ptr[i] = ptrs[i];
  void* params[] = {&args};
  check(d_.launchKernel(it->second, gridFor(numel, ELEMENTWISE_THREADS), 1, 1, ELEMENTWISE_THREADS, 1, 1, 0, compute_, params, nullptr),
        ("cuLaunchKernel " + name).c_str());
  if (capturing_) capturedNodes_++;
  else stats_.launches++;
}

// ---- primitives ---------------------------------------------------------------------------

void DeviceState::unary(int op, const Ref& x, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&x});
  if (!L.numel) return;
  makeCurrent();
  launch("ck_unary_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, op, x.ptr, out.ptr);
}

void DeviceState::binary(int op, const Ref& a, const Ref& b, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&a, &b});
  if (!L.numel) return;
  makeCurrent();
  launch("ck_binary_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, op, a.ptr, b.ptr, out.ptr);
}

void DeviceState::compare(int op, const Ref& a, const Ref& b, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&a, &b});
  if (!L.numel) return;
  makeCurrent();
  launch("ck_compare_" + suffix(a.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, op, a.ptr, b.ptr, out.ptr);
}

void DeviceState::where(const Ref& c, const Ref& a, const Ref& b, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&c, &a, &b});
  if (!L.numel) return;
  makeCurrent();
  launch(std::string("ck_where_") + WIDTH_SUFFIX[elementSize(out.dtype)], {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L,
         c.ptr, a.ptr, b.ptr, out.ptr);
}

void DeviceState::cast(const Ref& x, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&x});
  if (!L.numel) return;
  makeCurrent();
  launch("ck_cast_" + suffix(x.dtype) + "_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, x.ptr, out.ptr);
}

void DeviceState::copy(const Ref& x, const Ref& out) {
  ck::Layout L = elementwiseLayout(out, {&x});
  if (!L.numel) return;
  makeCurrent();
  const int w = elementSize(out.dtype);
  if (L.ndim == 1 && L.stride[0][0] == 1 && L.stride[1][0] == 1) {
    // Both contiguous: a plain device-to-device copy.
    check(d_.memcpyDtoDAsync(out.ptr + (cu::DevicePtr)(L.offset[0] * w), x.ptr + (cu::DevicePtr)(L.offset[1] * w), (size_t)L.numel * w, compute_),
          "cuMemcpyDtoDAsync");
    if (capturing_) capturedNodes_++;
    return;
  }
  launch(std::string("ck_copy_") + WIDTH_SUFFIX[w], {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, x.ptr, out.ptr);
}

void DeviceState::fill(const Ref& out, double value) {
  ck::Layout L = elementwiseLayout(out, {});
  if (!L.numel) return;
  makeCurrent();
  const unsigned grid = gridFor(L.numel, ELEMENTWISE_THREADS);
  switch (out.dtype) {
    case ck::F32: { float v = (float)value; uint32_t w; memcpy(&w, &v, 4); launch("ck_fill_w4", {grid}, {ELEMENTWISE_THREADS}, L, w, out.ptr); break; }
    case ck::I32: { uint32_t w = (uint32_t)(int32_t)value; launch("ck_fill_w4", {grid}, {ELEMENTWISE_THREADS}, L, w, out.ptr); break; }
    case ck::F16: launch("ck_fill_w2", {grid}, {ELEMENTWISE_THREADS}, L, ck::floatToF16((float)value), out.ptr); break;
    case ck::BF16: launch("ck_fill_w2", {grid}, {ELEMENTWISE_THREADS}, L, ck::floatToBf16((float)value), out.ptr); break;
    default: launch("ck_fill_w1", {grid}, {ELEMENTWISE_THREADS}, L, (uint8_t)(value != 0 ? 1 : 0), out.ptr); break;
  }
}

void DeviceState::reduce(int op, const Ref& x, const std::vector<int>& axes, const Ref& out) {
  if (out.numel() == 0) return;
  ck::ReduceLayout L = reduceLayout(x, axes, out);
  makeCurrent();
  const unsigned threads = reduceThreads(L.inner);
  std::string name = "ck_reduce_" + suffix(x.dtype);
  if (out.dtype != x.dtype) {
    // Only half → float32 (mean's sum) has its own kernel: other pairs are cast by core first.
    if (!((x.dtype == ck::F16 || x.dtype == ck::BF16) && out.dtype == ck::F32))
      throw CudaError("cuda reduce: " + suffix(x.dtype) + " into " + suffix(out.dtype) + " is not supported");
    name += "_f32";
  }
  launch(name, {(unsigned)std::min<int64_t>(L.outer, (int64_t)smCount_ * 64)}, {threads}, L, op, x.ptr, out.ptr);
}

void DeviceState::argReduce(int op, const Ref& x, int axis, const Ref& out) {
  if (out.numel() == 0) return;
  ck::ReduceLayout L = reduceLayout(x, {axis}, out);
  makeCurrent();
  const unsigned threads = reduceThreads(L.inner);
  launch("ck_argreduce_" + suffix(x.dtype), {(unsigned)std::min<int64_t>(L.outer, (int64_t)smCount_ * 64)}, {threads}, L, op, x.ptr, out.ptr);
}


bool DeviceState::cublasLtMatmul(const Ref& a, const Ref& b, const Ref& out) {
  const ck::MatmulArgs g = matmulArgs(a, b, out);
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.batch > INT32_MAX) return false;
  const int type = out.dtype == ck::F32 ? lt::R_32F : out.dtype == ck::F16 ? lt::R_16F : lt::R_16BF;
  const int es = elementSize(out.dtype);
  // out^T = b^T · a^T in column-major terms: cuBLASLt's A is our b, its B is our a.
  LtOperand ob = ltOperand(g.k, g.n, g.bSk, g.bSn);
  LtOperand oa = ltOperand(g.m, g.k, g.aSm, g.aSk);
  LtOperand oo = ltOperand(g.m, g.n, g.oSm, g.oSn);
  if (!ob.ok || !oa.ok || !oo.ok || oo.transposed) return false;
  const cu::DevicePtr pa = a.ptr + (cu::DevicePtr)(g.aOff * es), pb = b.ptr + (cu::DevicePtr)(g.bOff * es), po = out.ptr + (cu::DevicePtr)(g.oOff * es);
  if ((pa | pb | po) % 16 != 0) return false;  // the aligned kernels only; odd offsets take our kernels
  lt::MatmulDesc desc = nullptr;
  lt::MatrixLayout la = nullptr, lb = nullptr, lo = nullptr;
  bool ok = lt_->descCreate(&desc, lt::COMPUTE_32F, lt::R_32F) == lt::SUCCESS;
  const int32_t opA = ob.transposed ? lt::OP_T : lt::OP_N, opB = oa.transposed ? lt::OP_T : lt::OP_N;
  ok = ok && lt_->descSet(desc, lt::DESC_TRANSA, &opA, sizeof opA) == lt::SUCCESS;
  ok = ok && lt_->descSet(desc, lt::DESC_TRANSB, &opB, sizeof opB) == lt::SUCCESS;
  // Stored shapes (before the op): A is n×k (or k×n when transposed), B is k×m (or m×k), D is n×m.
  ok = ok && lt_->layoutCreate(&la, type, ob.transposed ? g.k : g.n, ob.transposed ? g.n : g.k, ob.ld) == lt::SUCCESS;
  ok = ok && lt_->layoutCreate(&lb, type, oa.transposed ? g.m : g.k, oa.transposed ? g.k : g.m, oa.ld) == lt::SUCCESS;
  ok = ok && lt_->layoutCreate(&lo, type, g.n, g.m, oo.ld) == lt::SUCCESS;
  if (ok && g.batch > 1) {
    const int32_t count = (int32_t)g.batch;
    const int64_t sa = g.bSb, sb = g.aSb, so = g.oSb;
    for (auto [layout, stride] : {std::pair{la, sa}, std::pair{lb, sb}, std::pair{lo, so}}) {
      ok = ok && lt_->layoutSet(layout, lt::LAYOUT_BATCH_COUNT, &count, sizeof count) == lt::SUCCESS;
      ok = ok && lt_->layoutSet(layout, lt::LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride) == lt::SUCCESS;
    }
  }
  const float alpha = 1.f, beta = 0.f;
  if (ok) {
    makeCurrent();
    ok = lt_->matmul(ltHandle_, desc, &alpha, reinterpret_cast<const void*>(pb), la, reinterpret_cast<const void*>(pa), lb, &beta,
                     reinterpret_cast<const void*>(po), lo, reinterpret_cast<void*>(po), lo, nullptr, reinterpret_cast<void*>(ltWorkspace_),
                     ltWorkspaceBytes_, compute_) == lt::SUCCESS;
  }
  if (lo) lt_->layoutDestroy(lo);
  if (lb) lt_->layoutDestroy(lb);
  if (la) lt_->layoutDestroy(la);
  if (desc) lt_->descDestroy(desc);
  if (ok) stats_.cublasLtCalls++;
  return ok;
}

void DeviceState::matmul(const Ref& a, const Ref& b, const Ref& out) {
  const ck::MatmulArgs g = matmulArgs(a, b, out);
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  if (gemmMode_ == "cublaslt" && !lt_) throw CudaError("cuda matmul: gemm mode 'cublaslt' but cuBLASLt is not loaded");
  // cuBLASLt is made as a call, between graphs: whether each library version captures cleanly
  // cannot be checked without a GPU (the fake driver runs it on the host).
  if (gemmMode_ != "own" && lt_ && isFloat(out.dtype)) {
    refuseCapture("a cuBLASLt matmul");
    if (cublasLtMatmul(a, b, out)) return;
  }
  makeCurrent();
  const unsigned gz = (unsigned)std::min<int64_t>(g.batch, 65535);
  if (out.dtype == ck::F16 || out.dtype == ck::BF16) {
    stats_.wmmaCalls++;
    launch("ck_matmul_wmma_" + suffix(out.dtype), {(unsigned)((g.m + 63) / 64), (unsigned)((g.n + 63) / 64), gz}, {128}, g, a.ptr, b.ptr, out.ptr);
    return;
  }
  if (out.dtype == ck::BOOL) throw CudaError("cuda matmul: bool operands are not supported");
  stats_.tiledCalls++;
  launch("ck_matmul_" + suffix(out.dtype), {(unsigned)((g.m + 63) / 64), (unsigned)((g.n + 63) / 64), gz}, {(unsigned)ck::MM_THREADS}, g, a.ptr, b.ptr, out.ptr);
}


void DeviceState::gather(const Ref& x, int dim, const Ref& index, const Ref& out) {
  int64_t dimStride = 0;
  ck::Layout L = indexLayout(out, index, x, dim, dimStride);
  if (!L.numel) return;
  makeCurrent();
  launch(std::string("ck_gather_") + WIDTH_SUFFIX[elementSize(out.dtype)], {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, dimStride,
         x.ptr, index.ptr, out.ptr);
}

void DeviceState::scatterAdd(const Ref& out, int dim, const Ref& index, const Ref& src) {
  if (index.numel() == 0) return;
  makeCurrent();
  if (out.dtype == ck::F32 || out.dtype == ck::I32) {
    int64_t dimStride = 0;
    ck::Layout L = indexLayout(src, index, out, dim, dimStride);
    launch("ck_scatteradd_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, dimStride, out.ptr, index.ptr, src.ptr);
    return;
  }
  if (out.dtype == ck::BOOL) throw CudaError("cuda scatterAdd: bool is not supported");
  // Half types: accumulate duplicates in an f32 copy of out, then round once back into out.
  Ref tmp;
  tmp.dtype = ck::F32;
  tmp.ndim = out.ndim;
  int64_t s = 1;
  for (int d = out.ndim - 1; d >= 0; d--) { tmp.shape[d] = out.shape[d]; tmp.strides[d] = s; s *= out.shape[d]; }
  tmp.ptr = alloc((size_t)s * 4);
  cast(out, tmp);
  int64_t dimStride = 0;
  ck::Layout L = indexLayout(src, index, tmp, dim, dimStride);
  launch("ck_scatteradd_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, dimStride, tmp.ptr, index.ptr, src.ptr);
  cast(tmp, out);
  free(tmp.ptr);
}

void DeviceState::random(const Ref& out, uint32_t k0, uint32_t k1, uint64_t offset, int kind, int32_t low, uint64_t range) {
  ck::RandomArgs a{};
  a.n = out.numel();
  if (!a.n) return;
  a.k0 = k0; a.k1 = k1; a.offset = offset; a.kind = kind; a.low = low; a.range = range;
  makeCurrent();
  cu::DevicePtr p = out.ptr + (cu::DevicePtr)(out.offset * 4);
  launch("ck_random", {gridFor((a.n + 3) / 4, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, a, p);
}

// ---- contract 1.3.0: along one axis -------------------------------------------------------

namespace {
void checkAxis(const Ref& r, int axis, const char* what) {
  if (axis < 0 || axis >= r.ndim) throw CudaError(std::string("cuda ") + what + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r.ndim));
}
}  // namespace

void DeviceState::argsort(const Ref& x0, int axis, bool descending, const Ref& out0) {
  const Ref x = asVector(x0), out = asVector(out0);
  checkAxis(x, axis, "argsort");
  if (out.dtype != ck::I32 || out.ndim != x.ndim) throw CudaError("cuda argsort: out must be int32 with x's shape");
  const int64_t total = x.numel();
  if (!total) return;
  const int64_t n = x.shape[axis];
  int64_t padded = 1;
  while (padded < n) padded *= 2;
  const int64_t all = total / n * padded;
  makeCurrent();
  // (key, position) pairs of every fibre, padded to a power of two: keys first, positions after.
  Ref keys = axisLast(x, axis);
  keys.shape[keys.ndim - 1] = padded;
  keys.dtype = ck::I32;
  keys.offset = 0;
  int64_t s = 1;
  for (int d = keys.ndim - 1; d >= 0; d--) { keys.strides[d] = s; s *= keys.shape[d]; }
  keys.ptr = alloc((size_t)all * 8);
  Ref xs = axisLast(x, axis);
  xs.shape[xs.ndim - 1] = padded;  // positions past n are never read
  const ck::Layout L = elementwiseLayout(keys, {&xs});
  launch("ck_argsort_keys_" + suffix(x.dtype), {gridFor(all, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, padded, n, (int)descending, all, x.ptr, keys.ptr);
  // One launch per bitonic stage; (key, position) is a total order, so the result is the stable one.
  for (int64_t k = 2; k <= padded; k *= 2)
    for (int64_t j = k / 2; j >= 1; j /= 2)
      launch("ck_argsort_step", {gridFor(all / 2, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, all / 2, padded, k, j, all, keys.ptr);
  Ref positions = keys;
  positions.shape[positions.ndim - 1] = n;
  positions.offset = all;
  copy(positions, axisLast(out, axis));
  free(keys.ptr);
}

void DeviceState::cumulative(int op, const Ref& x0, int axis, const Ref& out0) {
  const Ref x = asVector(x0), out = asVector(out0);
  checkAxis(x, axis, "cumulative");
  if (x.dtype == ck::BOOL || out.dtype != x.dtype) throw CudaError("cuda cumulative: x and out must share a numeric dtype (core casts bool to int32)");
  if (!x.numel()) return;
  const ck::AxisWalk w{x.shape[axis], x.shape[axis], {out.strides[axis], x.strides[axis], 0}};
  const Ref xf = withoutAxis(x, axis), of = withoutAxis(out, axis);
  const ck::Layout L = elementwiseLayout(of, {&xf});
  makeCurrent();
  launch("ck_cumulative_" + suffix(x.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, w, op, x.ptr, out.ptr);
}

void DeviceState::scatter(const Ref& out0, int dim, const Ref& index0, const Ref& src0, int mode) {
  if (!index0.numel()) return;
  // PyTorch lets 0-dim tensors stand for 1-element vectors when nothing has rank above 1.
  const bool vectors = out0.ndim <= 1 && index0.ndim <= 1 && src0.ndim <= 1;
  const Ref out = vectors ? asVector(out0) : out0, index = vectors ? asVector(index0) : index0, src = vectors ? asVector(src0) : src0;
  checkAxis(out, dim, "scatter");
  if (index.ndim != out.ndim || src.ndim != out.ndim) throw CudaError("cuda scatter: index and src must have out's rank");
  if (index.dtype != ck::I32 || src.dtype != out.dtype) throw CudaError("cuda scatter: index must be int32 and src of out's dtype");
  const ck::AxisWalk w{index.shape[dim], out.shape[dim], {out.strides[dim], index.strides[dim], src.strides[dim]}};
  // Out and src walked over index's other dims.
  const Ref idx = withoutAxis(index, dim);
  Ref of = withoutAxis(out, dim), sf = withoutAxis(src, dim);
  for (int d = 0; d < idx.ndim; d++) of.shape[d] = sf.shape[d] = idx.shape[d];
  const ck::Layout L = elementwiseLayout(of, {&idx, &sf});
  makeCurrent();
  launch("ck_scatter_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, w, mode, out.ptr, index.ptr, src.ptr);
}

// ---- fused --------------------------------------------------------------------------------

void DeviceState::softmax(const Ref& x, int dim, const Ref& out, bool logMode) {
  if (out.numel() == 0) return;
  ck::ReduceLayout L = reduceLayout(x, {dim}, out);
  // The softmax dim is kept even at size 1 so that rows are addressed by it.
  L.innerDims = 1;
  L.innerShape[0] = x.shape[dim];
  L.innerStrideX[0] = x.strides[dim];
  makeCurrent();
  launch("ck_softmax_" + suffix(x.dtype), {(unsigned)std::min<int64_t>(L.outer, (int64_t)smCount_ * 64)}, {reduceThreads(L.inner)}, L,
         (int64_t)out.strides[dim], (int)logMode, x.ptr, out.ptr);
}

void DeviceState::crossEntropy(const Ref& x, const Ref& target, int32_t ignoreIndex, float labelSmoothing, const Ref& out) {
  if (x.ndim != 2 || target.ndim != 1 || out.ndim != 1) throw CudaError("cuda crossEntropy: x must be [N, C], target and out [N]");
  ck::CrossEntropyArgs a{};
  a.rows = x.shape[0]; a.classes = x.shape[1];
  if (!a.rows) return;
  a.xRowStride = x.strides[0]; a.xClassStride = x.strides[1]; a.xOffset = x.offset;
  a.tStride = target.strides[0]; a.tOffset = target.offset;
  a.outStride = out.strides[0]; a.outOffset = out.offset;
  a.ignoreIndex = ignoreIndex; a.labelSmoothing = labelSmoothing;
  makeCurrent();
  launch("ck_crossentropy_" + suffix(x.dtype), {(unsigned)std::min<int64_t>(a.rows, (int64_t)smCount_ * 64)}, {reduceThreads(a.classes)}, a, x.ptr,
         target.ptr, out.ptr);
}

void DeviceState::unscale(const Ref& grad, const Ref& foundInf, const Ref& invScale) {
  const int64_t n = grad.numel();
  if (!n) return;
  makeCurrent();
  const int es = elementSize(grad.dtype);
  launch("ck_unscale_" + suffix(grad.dtype), {gridFor(n, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, n, grad.ptr + (cu::DevicePtr)(grad.offset * es),
         foundInf.ptr + (cu::DevicePtr)(foundInf.offset * 4), invScale.ptr + (cu::DevicePtr)(invScale.offset * 4));
}

void DeviceState::adam(const Ref& p, const Ref& g, const Ref& m, const Ref& v, const Ref* vmax, const AdamScalars& s) {
  ck::AdamArgs a{};
  a.n = p.numel();
  if (!a.n) return;
  a.oneMinusBeta1 = s.oneMinusBeta1; a.beta2 = s.beta2; a.oneMinusBeta2 = s.oneMinusBeta2; a.eps = s.eps;
  a.weightDecay = s.weightDecay; a.decayFactor = s.decayFactor; a.stepSize = s.stepSize; a.biasCorrection2Sqrt = s.biasCorrection2Sqrt;
  a.decoupled = s.decoupled; a.maximize = s.maximize; a.amsgrad = vmax != nullptr;
  const int es = elementSize(p.dtype);
  auto at = [es](const Ref& r) { return r.ptr + (cu::DevicePtr)(r.offset * es); };
  makeCurrent();
  launch("ck_adam_" + suffix(p.dtype), {gridFor(a.n, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, a, at(p), at(g), at(m), at(v),
         vmax ? at(*vmax) : at(v));
}

void DeviceState::addcmul(const Ref& x, const Ref& t1, const Ref& t2, const Ref& out) {
  if (!isFloat(out.dtype)) throw CudaError("cuda addcmul: needs a floating dtype, got " + suffix(out.dtype));
  for (const Ref* r : {&x, &t1, &t2})
    if (r->dtype != out.dtype) throw CudaError("cuda addcmul: operands are " + suffix(r->dtype) + ", out is " + suffix(out.dtype));
  ck::Layout L = elementwiseLayout(out, {&x, &t1, &t2});
  if (!L.numel) return;
  makeCurrent();
  launch("ck_addcmul_" + suffix(out.dtype), {gridFor(L.numel, ELEMENTWISE_THREADS)}, {ELEMENTWISE_THREADS}, L, x.ptr, t1.ptr, t2.ptr, out.ptr);
}

void DeviceState::attention(const Ref& q, const Ref& k, const Ref& v, const Ref* mask, float scale, bool causal, const Ref& out, const Ref& lse) {
  const ck::AttentionArgs a = attentionArgs(q, k, v, mask, out, lse, scale, causal);
  const int columns = attentionColumns(a.Ev);
  // Blocks walk the (batch, row tile) pairs on x (a grid-stride loop past the cap); y slices Ev.
  const int64_t tasks = a.batch * ((a.L + ck::ATT_ROWS - 1) / ck::ATT_ROWS);
  makeCurrent();
  launch("ck_attention_" + suffix(out.dtype) + "_" + std::to_string(columns),
         {(unsigned)std::min<int64_t>(tasks, (int64_t)smCount_ * 64), (unsigned)((a.Ev + columns - 1) / columns)}, {(unsigned)ck::ATT_ROWS}, a, q.ptr,
         k.ptr, v.ptr, mask ? mask->ptr : 0ull, out.ptr, lse.ptr);
}

}  // namespace rt
