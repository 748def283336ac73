// A small CUDA execution model on the CPU, so the kernel sources compile with g++ and run in the
// kernel tests. Each thread of a block is a ucontext fiber with its own stack; `__syncthreads()`
// switches back to the scheduler, which resumes the next fiber, and a barrier is released only when
// every thread of the block has reached it (a thread that exits while others wait is reported as a
// divergent barrier). Blocks run one after another, so `__shared__` (a function-local static) is
// one copy per block, as on a GPU. Not modelled: warps, shuffles, memory races, tensor cores.
#pragma once
#include <stdint.h>
#include <math.h>
#include <string.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace emu {

/** The calling fiber's coordinates; the scheduler updates them before each resume. */
struct Coords {
  dim3 thread, block, blockSize, gridSize;
};
extern Coords current;

/** Wait at the block barrier (the emulation of __syncthreads). */
void syncthreads();

/** A type-erased kernel body: the launcher calls it once per thread. */
struct Body {
  virtual void run() = 0;
  virtual ~Body() = default;
};
void launchBody(dim3 grid, dim3 block, Body& body);

/** Run `kernel(args...)` on a grid of blocks, each a set of fibers: `emu::launch(grid, block, k, a, b)`. */
template <typename K, typename... A>
void launch(dim3 grid, dim3 block, K kernel, A... args) {
  // Arguments are copied once and shared read-only by every thread, like CUDA's parameter space.
  auto tup = [=]() { kernel(args...); };
  struct L : Body {
    decltype(tup) f;
    explicit L(decltype(tup) g) : f(g) {}
    void run() override { f(); }
  } body(tup);
  launchBody(grid, block, body);
}

/** Number of barriers passed in the last launch (tests use it to show barriers really ran). */
extern uint64_t barriersPassed;

}  // namespace emu

#define threadIdx (emu::current.thread)
#define blockIdx (emu::current.block)
#define blockDim (emu::current.blockSize)
#define gridDim (emu::current.gridSize)
#define __syncthreads() emu::syncthreads()

// Atomics: one OS thread runs every fiber, and fibers only switch at barriers, so plain updates are atomic here.
template <typename T> inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
inline int atomicOr(int* p, int v) { int old = *p; *p = old | v; return old; }
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) { unsigned old = *p; if (old == cmp) *p = v; return old; }

// Round-to-nearest float arithmetic that is never contracted into an FMA: the host compiles the
// kernels with -ffp-contract=off (scripts/kernel-test.mjs), so a plain operation rounds on its own.
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
