#include "gemm.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

#include "pool.h"

namespace core_cpu {

namespace {

/** Depth of a packed block: a kc×NR panel of b (32 KiB at NR = 32) stays in L1 while a panels stream past it. */
constexpr int64_t KC = 256;
/** Rows of a per block, in MR panels: a 16·MR × KC block of a (about 200 KiB for AVX-512) stays in L2. */
constexpr int64_t MC_PANELS = 16;
/** Columns of b per block: a KC × NC block of b (2 MiB) stays in L3. */
constexpr int64_t NC = 2048;

/** The depth from which a product may run transposed (below it, writing out costs as much as computing it). */
constexpr int64_t TRANSPOSE_MIN_K = 64;

int64_t ceilDiv(int64_t x, int64_t y) { return (x + y - 1) / y; }
int64_t roundUp(int64_t x, int64_t y) { return ceilDiv(x, y) * y; }

/**
 * This thread's packing scratch, at least `count` floats, 64-byte aligned. Kept between calls (a
 * task runs wholly on one thread), so small products allocate nothing. Throws std::bad_alloc.
 */
float* threadScratch(int64_t count) {
  struct Buffer {
    float* data = nullptr;
    int64_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < count) {
    void* p = std::aligned_alloc(64, static_cast<size_t>(roundUp(count * 4, 64)));
    if (p == nullptr) throw std::bad_alloc();
    std::free(buffer.data);
    buffer.data = static_cast<float*>(p);
    buffer.size = count;
  }
  return buffer.data;
}

/**
 * Packs rows [0, rows) × depth [0, kc) of x (x[i·rs + p·cs]) into MR-row panels: panel[p][i],
 * zero-padded to MR rows. Depth contiguous (a row-major a, a transposed b: nn.Linear's x·Wᵀ, a
 * convolution's dY·colsᵀ) is a transpose, which the kernel's packRows does in register tiles.
 */
void packPanels(const float* x, int64_t rows, int64_t kc, int64_t rs, int64_t cs, const MicroKernel& kernel, int mr, float* dst) {
  if (cs == 1) {
    kernel.packRows(x, rows, kc, rs, mr, dst);
    return;
  }
  for (int64_t i0 = 0; i0 < rows; i0 += mr) {
    const int64_t r = std::min<int64_t>(mr, rows - i0);
    const float* src = x + i0 * rs;
    if (r == mr && rs == 1) {
      for (int64_t p = 0; p < kc; ++p, dst += mr) std::copy(src + p * cs, src + p * cs + mr, dst);
      continue;
    }
    for (int64_t p = 0; p < kc; ++p, dst += mr) {
      for (int64_t i = 0; i < r; ++i) dst[i] = src[i * rs + p * cs];
      for (int64_t i = r; i < mr; ++i) dst[i] = 0.0f;
    }
  }
}

/**
 * How the work is split: each task owns a rectangle of out (rows × cols, whole micro-panels) of one
 * batch, and walks it in cache blocks (BLIS's loop order: columns by NC, depth by KC with b's block
 * packed once, rows by MC with a's block packed once, then micro-tiles). Rectangles are as large as
 * the thread count allows, so each operand is packed as few times as possible.
 */
struct Split {
  int64_t rows, cols, mParts, nParts, tasks;
};

Split split(const GemmProblem& p, const MicroKernel& kernel, int threads) {
  const int64_t maxM = ceilDiv(p.m, kernel.mr), maxN = ceilDiv(p.n, kernel.nr);
  int64_t mParts = 1, nParts = 1;
  // Enough tasks for every thread, and an even share each while the tasks are few.
  const auto tasks = [&] { return p.batches * mParts * nParts; };
  while (threads > 1 && (tasks() < threads || (tasks() % threads != 0 && tasks() < 8 * threads))) {
    // Split the dimension whose parts are longer (in floats), as far as whole micro-panels allow.
    const bool splitM = mParts < maxM && (nParts >= maxN || ceilDiv(p.m, mParts) >= ceilDiv(p.n, nParts));
    if (splitM) {
      ++mParts;
    } else if (nParts < maxN) {
      ++nParts;
    } else {
      break;
    }
  }
  Split s;
  s.rows = roundUp(ceilDiv(p.m, mParts), kernel.mr);
  s.cols = roundUp(ceilDiv(p.n, nParts), kernel.nr);
  s.mParts = ceilDiv(p.m, s.rows);
  s.nParts = ceilDiv(p.n, s.cols);
  s.tasks = p.batches * s.mParts * s.nParts;
  return s;
}

/** The same product transposed, outᵀ = bᵀ · aᵀ: the operands swap places and rows swap with columns. */
GemmProblem transposed(const GemmProblem& p) {
  GemmProblem t = p;
  t.m = p.n;
  t.n = p.m;
  t.a = {p.b.data, p.b.batchStride, p.b.colStride, p.b.rowStride};
  t.b = {p.a.data, p.a.batchStride, p.a.colStride, p.a.rowStride};
  t.outRowStride = p.outColStride;
  t.outColStride = p.outRowStride;
  return t;
}

/** Output elements the micro-kernel computes for an m×n out, zero padding of partial tiles included. */
int64_t tiledArea(int64_t m, int64_t n, const MicroKernel& kernel) { return roundUp(m, kernel.mr) * roundUp(n, kernel.nr); }

void run(const GemmProblem& p, const MicroKernel& kernel, int threads) {
  const int mr = kernel.mr, nr = kernel.nr;
  const Split sp = split(p, kernel, threads);
  threads = static_cast<int>(std::min<int64_t>(threads, sp.tasks));
  const int64_t kcMax = ceilDiv(p.k, ceilDiv(p.k, KC));
  const int64_t mcMax = std::min<int64_t>(sp.rows, mr * MC_PANELS), ncMax = std::min<int64_t>(sp.cols, NC);
  // Each region starts on a 64-byte boundary (the kernels load packed b with aligned loads).
  const int64_t aFloats = roundUp(mcMax * kcMax, 16) + PACK_SLACK_FLOATS, bFloats = roundUp(roundUp(ncMax, nr) * kcMax, 16) + PACK_SLACK_FLOATS, tileFloats = mr * nr;
  // The caller's scratch is had here, so running out of memory throws before any thread starts.
  threadScratch(aFloats + bFloats + tileFloats);

  Pool::instance().run(threads, sp.tasks, [&](int64_t task) {
    float* packedA = threadScratch(aFloats + bFloats + tileFloats);
    float* packedB = packedA + aFloats;
    float* tile = packedB + bFloats;
    const int64_t batch = task / (sp.mParts * sp.nParts);
    const int64_t rowBegin = task / sp.nParts % sp.mParts * sp.rows, colBegin = task % sp.nParts * sp.cols;
    const int64_t rowEnd = std::min(p.m, rowBegin + sp.rows), colEnd = std::min(p.n, colBegin + sp.cols);
    const float* aBatch = p.a.data + batch * p.a.batchStride;
    const float* bBatch = p.b.data + batch * p.b.batchStride;
    float* outBatch = p.out + batch * p.outBatchStride;
    for (int64_t j0 = colBegin; j0 < colEnd; j0 += ncMax) {
      const int64_t nc = std::min(ncMax, colEnd - j0);
      for (int64_t p0 = 0; p0 < p.k; p0 += kcMax) {
        const int64_t kc = std::min(kcMax, p.k - p0);
        const bool accumulate = p0 > 0;
        // b's block transposed is an nc-row panel set over depth kc: b[p][j] = bt[j][p].
        packPanels(bBatch + p0 * p.b.rowStride + j0 * p.b.colStride, nc, kc, p.b.colStride, p.b.rowStride, kernel, nr, packedB);
        for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += mcMax) {
          const int64_t mc = std::min(mcMax, rowEnd - i0);
          packPanels(aBatch + i0 * p.a.rowStride + p0 * p.a.colStride, mc, kc, p.a.rowStride, p.a.colStride, kernel, mr, packedA);
          for (int64_t jr = 0; jr < nc; jr += nr) {
            const float* bPanel = packedB + jr * kc;
            const int64_t cols = std::min<int64_t>(nr, nc - jr);
            for (int64_t ir = 0; ir < mc; ir += mr) {
              const float* aPanel = packedA + ir * kc;
              const int64_t rows = std::min<int64_t>(mr, mc - ir);
              float* c = outBatch + (i0 + ir) * p.outRowStride + (j0 + jr) * p.outColStride;
              if (rows == mr && cols == nr && p.outColStride == 1) {
                kernel.run(kc, aPanel, bPanel, c, p.outRowStride, accumulate);
                continue;
              }
              kernel.run(kc, aPanel, bPanel, tile, nr, false);
              for (int64_t i = 0; i < rows; ++i) {
                for (int64_t j = 0; j < cols; ++j) {
                  float& dst = c[i * p.outRowStride + j * p.outColStride];
                  dst = accumulate ? dst + tile[i * nr + j] : tile[i * nr + j];
                }
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace

void gemm(const GemmProblem& p, const MicroKernel& kernel, int threads) {
  // Few columns and many rows (a convolution's weight gradient with few input channels, dY·colsᵀ
  // with n = C·kh·kw; a classifier's 10 outputs) fill a fraction of each NR-wide tile: the
  // transposed product, whose n is the wide m, computes far less padding. A third less is worth
  // the strided writes of its output once each element sums enough products.
  if (p.k >= TRANSPOSE_MIN_K && 3 * tiledArea(p.m, p.n, kernel) > 4 * tiledArea(p.n, p.m, kernel)) {
    run(transposed(p), kernel, threads);
  } else {
    run(p, kernel, threads);
  }
}

namespace {

constexpr int PORTABLE_MR = 4, PORTABLE_NR = 16;

void portableRun(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  float acc[PORTABLE_MR][PORTABLE_NR] = {};
  for (int64_t p = 0; p < kc; ++p, a += PORTABLE_MR, b += PORTABLE_NR) {
    for (int i = 0; i < PORTABLE_MR; ++i) {
      for (int j = 0; j < PORTABLE_NR; ++j) acc[i][j] += a[i] * b[j];
    }
  }
  for (int i = 0; i < PORTABLE_MR; ++i) {
    for (int j = 0; j < PORTABLE_NR; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
  }
}

/** The transposing pack in plain C++: runs of DEPTH_RUN steps of each row, so each row is read a cache line at a time. */
void portablePackRows(const float* x, int64_t rows, int64_t kc, int64_t rs, int mr, float* dst) {
  constexpr int64_t DEPTH_RUN = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += kc * mr) {
    const int64_t r = std::min<int64_t>(mr, rows - i0);
    for (int64_t p0 = 0; p0 < kc; p0 += DEPTH_RUN) {
      const int64_t pEnd = std::min(kc, p0 + DEPTH_RUN);
      for (int64_t i = 0; i < r; ++i) {
        const float* row = x + (i0 + i) * rs;
        for (int64_t p = p0; p < pEnd; ++p) dst[p * mr + i] = row[p];
      }
      for (int64_t p = p0; p < pEnd; ++p) std::fill(dst + p * mr + r, dst + p * mr + mr, 0.0f);
    }
  }
}

}  // namespace

MicroKernel portableKernel() { return {"portable", PORTABLE_MR, PORTABLE_NR, portableRun, portablePackRows}; }

}  // namespace core_cpu
