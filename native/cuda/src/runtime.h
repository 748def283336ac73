// One CUDA device as the addon drives it: its primary context, a compute stream and a copy stream,
// the caching allocator, pinned staging buffers for host transfers, the kernel module loaded from
// the embedded fatbin, and the launchers of every primitive. Not thread-safe: the JS thread owns
// it; worker threads only wait on events.
#pragma once
#include <stdexcept>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../kernels/args.h"  // launch structs; conversions come from common.cuh in runtime.cpp
#include "ref.h"
#include "cublaslt_api.h"
#include "driver_api.h"

namespace rt {

/** A launch's grid or block size. */
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/** Bytes per element of a dtype code. */
int elementSize(int dtype);

struct AdamScalars {
  float oneMinusBeta1, beta2, oneMinusBeta2, eps, weightDecay, decayFactor, stepSize, biasCorrection2Sqrt;
  bool decoupled, maximize;
};

/** Counters for tests and profiling. */
struct Stats {
  uint64_t launches = 0, cublasLtCalls = 0, wmmaCalls = 0, tiledCalls = 0, h2dBytes = 0, d2hBytes = 0, stagingBytes = 0;
  uint64_t graphLaunches = 0;  // CUDA graphs launched (prepared programs)
};

class DeviceState {
 public:
  DeviceState(const cu::Driver& d, int index);
  ~DeviceState() = default;
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  int index() const { return index_; }
  const std::string& name() const { return name_; }
  int ccMajor() const { return ccMajor_; }
  int ccMinor() const { return ccMinor_; }
  size_t totalMemory() const { return totalMem_; }

  // Storage.
  cu::DevicePtr alloc(size_t bytes);
  void free(cu::DevicePtr ptr);
  void emptyCache();
  size_t allocatedBytes() const { return allocatedBytes_; }
  size_t reservedBytes() const { return reservedBytes_; }
  size_t allocations() const { return live_.size(); }
  /** Host → device through pinned staging on the copy stream; later kernels wait for it (events). */
  void write(cu::DevicePtr ptr, size_t byteOffset, const void* src, size_t bytes);
  /** Queue device → pinned staging after all queued kernels; returns the staging buffer and the event that marks it full. */
  void* readAsync(cu::DevicePtr ptr, size_t bytes, cu::Event& done);
  /** Give a staging buffer of readAsync back once its bytes have been copied out. */
  void releaseStaging(void* host);
  /** An event recorded after everything queued so far, on both streams. */
  cu::Event recordAll();
  void makeCurrent() const;
  const cu::Driver& driver() const { return d_; }

  // Primitives.
  void unary(int op, const Ref& x, const Ref& out);
  void binary(int op, const Ref& a, const Ref& b, const Ref& out);
  void compare(int op, const Ref& a, const Ref& b, const Ref& out);
  void where(const Ref& c, const Ref& a, const Ref& b, const Ref& out);
  void cast(const Ref& x, const Ref& out);
  void copy(const Ref& x, const Ref& out);
  void fill(const Ref& out, double value);
  void reduce(int op, const Ref& x, const std::vector<int>& axes, const Ref& out);
  void argReduce(int op, const Ref& x, int axis, const Ref& out);
  void matmul(const Ref& a, const Ref& b, const Ref& out);
  void gather(const Ref& x, int dim, const Ref& index, const Ref& out);
  void scatterAdd(const Ref& out, int dim, const Ref& index, const Ref& src);
  void random(const Ref& out, uint32_t k0, uint32_t k1, uint64_t offset, int kind, int32_t low, uint64_t range);
  void argsort(const Ref& x, int axis, bool descending, const Ref& out);
  void cumulative(int op, const Ref& x, int axis, const Ref& out);
  void scatter(const Ref& out, int dim, const Ref& index, const Ref& src, int mode);
  // Fused.
  void softmax(const Ref& x, int dim, const Ref& out, bool logMode);
  void crossEntropy(const Ref& x, const Ref& target, int32_t ignoreIndex, float labelSmoothing, const Ref& out);
  void unscale(const Ref& grad, const Ref& foundInf, const Ref& invScale);
  void adam(const Ref& p, const Ref& g, const Ref& m, const Ref& v, const Ref* vmax, const AdamScalars& s);
  void addcmul(const Ref& x, const Ref& t1, const Ref& t2, const Ref& out);
  /** Attention's forward pass into out and lse (contract 1.4.0); mask may be null. */
  void attention(const Ref& q, const Ref& k, const Ref& v, const Ref* mask, float scale, bool causal, const Ref& out, const Ref& lse);

  // CUDA graphs (prepared programs): the compute stream captures kernel launches and device copies;
  // every other operation throws NotCapturable while it does.
  void beginCapture();
  /** Nodes (kernels and device copies) captured so far. */
  uint64_t capturedNodes() const { return capturedNodes_; }
  bool capturing() const { return capturing_; }
  /** Ends the capture and instantiates it: a graph id, or 0 when nothing was captured. */
  uint32_t endCapture();
  /** Ends a capture after a failure, dropping what it holds; the stream is usable again. */
  void abortCapture();
  void launchGraph(uint32_t id);
  void destroyGraph(uint32_t id);
  size_t liveGraphs() const { return graphs_.size(); }

  // compile()'s fused elementwise kernels (fusion.cpp builds their modules with NVRTC).
  /** Loads a module image (a cubin) once per image; returns its id. */
  uint32_t loadFusedModule(const std::string& image);
  /** Launches kernel `name` of a fused module over `numel` elements, its buffers at `ptrs` (ck_fused_args). */
  void launchFused(uint32_t module, const std::string& name, int64_t numel, const std::vector<cu::DevicePtr>& ptrs);

  /** 'auto' (cuBLASLt when loaded, else our kernels), 'own' (tiled / wmma only) or 'cublaslt'. */
  void setGemmMode(const std::string& mode) { gemmMode_ = mode; }
  const std::string& gemmMode() const { return gemmMode_; }
  const Stats& stats() const { return stats_; }
  const char* cublasLtName() const { return lt_ ? lt_->soname.c_str() : nullptr; }

 private:
  struct Block {
    size_t size;
    cu::Event freed = nullptr;     // recorded on the compute stream when the block was last freed
    int writes = 0;                // host writes since it was (re)issued
    uint64_t launchesAtAlloc = 0;  // kernel launches queued before it was (re)issued
  };
  struct Staging {
    void* host;
    size_t size;
    cu::Event done;
    bool busy;
  };

  void check(cu::Result r, const char* what) const;
  /** Throws NotCapturable when the compute stream captures. */
  void refuseCapture(const char* what) const;
  cu::Function function(const std::string& name);
  template <typename... A>
  void launch(const std::string& name, Dim3 grid, Dim3 block, A... args);
  unsigned gridFor(int64_t n, unsigned threads) const;
  Staging& staging(size_t bytes);
  void* ptrOf(const Ref& r) const { return reinterpret_cast<void*>(static_cast<uintptr_t>(r.ptr)); }
  bool cublasLtMatmul(const Ref& a, const Ref& b, const Ref& out);

  const cu::Driver& d_;
  int index_;
  cu::Device dev_ = 0;
  cu::Context ctx_ = nullptr;
  cu::Stream compute_ = nullptr, copy_ = nullptr;
  cu::Module module_ = nullptr;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0, smCount_ = 1;
  size_t totalMem_ = 0;
  std::unordered_map<std::string, cu::Function> functions_;
  std::multimap<size_t, std::pair<cu::DevicePtr, Block>> cache_;
  std::unordered_map<cu::DevicePtr, Block> live_;
  size_t allocatedBytes_ = 0, reservedBytes_ = 0;
  std::vector<Staging> staging_;
  const lt::Lib* lt_ = nullptr;
  lt::Handle ltHandle_ = nullptr;
  cu::DevicePtr ltWorkspace_ = 0;
  size_t ltWorkspaceBytes_ = 0;
  std::string gemmMode_ = "auto";
  Stats stats_;
  bool capturing_ = false;
  uint64_t capturedNodes_ = 0;
  struct Graph {
    cu::GraphExec exec;
    uint64_t nodes;
  };
  std::unordered_map<uint32_t, Graph> graphs_;
  uint32_t nextGraph_ = 1;
  std::vector<cu::Module> fusedModules_;
  std::unordered_map<std::string, uint32_t> fusedByImage_;
  std::map<std::pair<uint32_t, std::string>, cu::Function> fusedFunctions_;
};

/** The launch argument of a fused kernel (generated source: `struct ck_fused_args`). */
constexpr int MAX_FUSED_BUFFERS = 16;
struct FusedArgs {
  int64_t numel;
  cu::DevicePtr ptr[MAX_FUSED_BUFFERS];
  uint32_t zero;  // always 0: a value the compiler cannot see, to keep ops from being contracted across
};

/** The embedded fatbin (see embed.S). */
extern "C" const unsigned char core_cuda_fatbin[];

}  // namespace rt
