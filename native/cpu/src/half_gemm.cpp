// The GEMM of bfloat16 and float16 operands, summed in f32 and rounded once into out. Each task
// owns a rectangle of out and sums it in an f32 block of whole micro-tiles, walking it in BLIS's
// cache blocks (columns by NC, depth by KC with b's block packed once, rows by MC with a's block
// packed once, then micro-tiles); at the end the block is stored into out, rounded to its type.
// Two kinds of panels: k-pairs of raw bf16 bits for vdpbf16ps, which multiplies two bf16 pairs
// exactly and adds both products to an f32 lane (AVX512-BF16; it reads bf16 subnormals as zero),
// or f32 values widened while packing for the fp32 micro-kernels of gemm_x86.cpp. An operand whose
// depth is contiguous (a row-major a, a transposed b) packs by register transposes: a k-pair is one
// 32-bit lane of a 16×16 tile; widened values go through the f32 kernel's transposing pack.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_features.h"
#include "gemm.h"
#include "half.h"
#include "pool.h"
#include "strided_sum.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "transpose.h"
#endif

namespace core_cpu {

namespace {

constexpr int64_t MC_PANELS = 16;
constexpr int64_t NC = 2048;
/** Depth of a packed block in bytes per column: a KC × NR panel of b takes half of a 32 KiB L1 at NR = 32, leaving room for a's panel (1024 ran 512² bf16 products 30% slower). */
constexpr int64_t KC_BYTES = 512;

/** Bytes after each packed block that a pack's whole-vector stores may spill into (the f32 packRows' PACK_SLACK_FLOATS too). */
constexpr int64_t PACK_SLACK = 4 * PACK_SLACK_FLOATS;

int64_t ceilDiv(int64_t x, int64_t y) { return (x + y - 1) / y; }
int64_t roundUp(int64_t x, int64_t y) { return ceilDiv(x, y) * y; }

/** Panels and the micro-kernel that multiplies them. */
struct PanelKernel {
  const char* name;
  int mr, nr;
  /** Depth is packed in steps of this many elements (2: bf16 pairs), zero-padded to a whole step. */
  int kStep;
  /** Bytes of one packed element. */
  int bytes;
  /** c[MR×NR] (row stride ldc) = (accumulate ? c : 0) + the product of kc (a multiple of kStep) packed steps. */
  void (*run)(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
  /** The fp32 kernel behind a widening kernel, and its transposing pack. */
  MicroKernelFn f32;
  PackRowsFn packRows;
};

#if defined(__x86_64__)
/**
 * packPairs for depth contiguous (x[i·rs + p]): 16 rows × 16 pairs at a time, loaded masked by
 * halves (an odd depth's last pair ends in a zero; rows past the last are zero), transposed as
 * 32-bit lanes and stored to the slice of the panel's mr rows.
 */
__attribute__((target("avx512bw,avx512f"))) void packPairRows(const uint16_t* x, int64_t rows, int64_t kc, int64_t rs, int mr, uint16_t* dst) {
  const int64_t pairs = ceilDiv(kc, 2);
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += pairs * 2 * mr) {
    for (int h = 0; h < mr; h += 16) {
      const int64_t live = std::clamp<int64_t>(rows - i0 - h, 0, 16);
      const uint16_t* src = x + (i0 + h) * rs;
      for (int64_t q0 = 0; q0 < pairs; q0 += 16) {
        const int64_t halves = std::min<int64_t>(32, kc - 2 * q0);
        const __mmask32 depth = halves == 32 ? ~0u : (1u << halves) - 1;
        const int steps = static_cast<int>(std::min<int64_t>(16, pairs - q0));
        __m512 t[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
          t[i] = i >= live ? _mm512_setzero_ps()
                 : halves == 32 ? _mm512_loadu_ps(src + i * rs + 2 * q0)
                 : _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(depth, src + i * rs + 2 * q0));
        }
        transposeTile<16>(t);
        uint16_t* d = dst + 2 * (q0 * mr + h);
        // Whole 16-lane stores (masked stores are slow on some AVX-512 CPUs, AMD's): with mr < 16 a
        // store's lanes past mr spill into the next k-pair's slot, which is stored after it, or past
        // the last panel, into the scratch's slack (PACK_SLACK).
        if (steps == 16) {
#pragma GCC unroll 16
          for (int q = 0; q < 16; ++q) _mm512_storeu_ps(d + 2 * q * mr, t[q]);
        } else {
          for (int q = 0; q < steps; ++q) _mm512_storeu_ps(d + 2 * q * mr, t[q]);
        }
      }
    }
  }
}
#endif

#if defined(__x86_64__)
/**
 * packPairs for rows contiguous (x[i + p·cs], a row-major b): per k-pair, 16 rows of the two depth
 * runs widened to 32-bit lanes and joined, the first run's element in the low half.
 */
__attribute__((target("avx512vl,avx512bw,avx512f"))) void packPairColumns(const uint16_t* x, int64_t rows, int64_t kc, int64_t cs, int mr, uint16_t* dst) {
  const int64_t pairs = ceilDiv(kc, 2);
  // Depth outside, panels inside: x is read a row at a time, in order, and the packed block (the
  // size of an L2) takes the scattered stores.
  for (int64_t q = 0; q < pairs; ++q) {
    const bool second = 2 * q + 1 < kc;
    for (int64_t i0 = 0; i0 < rows; i0 += mr) {
      const int64_t r = std::min<int64_t>(mr, rows - i0);
      const uint16_t* s0 = x + i0 + 2 * q * cs;
      uint32_t* d = reinterpret_cast<uint32_t*>(dst + (i0 / mr) * pairs * 2 * mr + q * 2 * mr);
      for (int64_t h = 0; h < mr; h += 16) {
        // Rows past the last (and a missing second element) are zeros. Whole runs load and store
        // without masks: masked stores are slow on some AVX-512 CPUs (AMD's).
        const int64_t live = std::clamp<int64_t>(r - h, 0, 16);
        const __mmask16 lanes = static_cast<__mmask16>((1u << live) - 1);
        const uint16_t* s1 = s0 + cs;
        const __m256i first = live == 16 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s0 + h)) : _mm256_maskz_loadu_epi16(lanes, s0 + h);
        const __m256i next = !second ? _mm256_setzero_si256()
                             : live == 16 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s1 + h)) : _mm256_maskz_loadu_epi16(lanes, s1 + h);
        const __m512i low = _mm512_cvtepu16_epi32(first), high = _mm512_cvtepu16_epi32(next);
        const __m512i joined = _mm512_or_si512(low, _mm512_slli_epi32(high, 16));
        if (mr - h >= 16) _mm512_storeu_si512(d + h, joined);
        else _mm512_mask_storeu_epi32(d + h, static_cast<__mmask16>((1u << (mr - h)) - 1), joined);
      }
    }
  }
}
#endif

/** Packs rows [0, rows) × depth [0, kc) of x (x[i·rs + p·cs]) into mr-row panels of bf16 k-pairs: panel[p/2][i][p%2]. */
void packPairs(const uint16_t* x, int64_t rows, int64_t kc, int64_t rs, int64_t cs, int mr, uint16_t* dst) {
#if defined(__x86_64__)
  // The pair kernel runs on AVX512-BF16 CPUs, which have AVX512-BW and -VL (dpbf16Available).
  if (cs == 1) {
    packPairRows(x, rows, kc, rs, mr, dst);
    return;
  }
  if (rs == 1) {
    packPairColumns(x, rows, kc, cs, mr, dst);
    return;
  }
#endif
  const int64_t pairs = ceilDiv(kc, 2);
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += pairs * 2 * mr) {
    const int64_t r = std::min<int64_t>(mr, rows - i0);
    const uint16_t* src = x + i0 * rs;
    for (int64_t q = 0; q < pairs; ++q) {
      uint16_t* d = dst + q * 2 * mr;
      const int64_t p = 2 * q;
      const bool second = p + 1 < kc;
      if (rs == 1) {  // rows contiguous (a row-major b): interleave two runs of depth
        const uint16_t* s0 = src + p * cs;
        const uint16_t* s1 = s0 + cs;
        for (int64_t i = 0; i < r; ++i) {
          d[2 * i] = s0[i];
          d[2 * i + 1] = second ? s1[i] : 0;
        }
      } else {
        for (int64_t i = 0; i < r; ++i) {
          d[2 * i] = src[i * rs + p * cs];
          d[2 * i + 1] = second ? src[i * rs + (p + 1) * cs] : 0;
        }
      }
      std::fill(d + 2 * r, d + 2 * mr, 0);
    }
  }
}

/** One element widened to f32: for bf16 a shift (a NaN stays a NaN, which is all the product needs). */
template <Elem In>
float widen(uint16_t h) {
  return In == Elem::bf16 ? floatOf(static_cast<uint32_t>(h) << 16) : fromFloat16(h);
}

#if defined(__x86_64__)
/** Whether CPUID reports the feature `name` (as cpuFeatures() names it). */
bool cpuHas(const char* name) {
  const std::vector<std::string>& names = cpuFeatures().names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

/** n float16 values widened by F16C, 8 at a time (exact, as fromFloat16; a NaN stays a NaN). */
__attribute__((target("avx,f16c"))) void widenF16C(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = fromFloat16(src[i]);
}
#endif

/** n contiguous elements widened to f32. */
template <Elem In>
void widenRun(const uint16_t* src, int64_t n, float* dst) {
#if defined(__x86_64__)
  static const bool f16c = cpuHas("f16c");
  if (In == Elem::f16 && f16c) {
    widenF16C(src, n, dst);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = widen<In>(src[i]);
}

/**
 * Packs like packPairs but into f32 panels, panel[p][i], each element widened from `in`. Depth
 * contiguous: runs of each panel's rows are widened into f32 rows, which `packRows` transposes.
 */
template <Elem In>
void packWidened(const uint16_t* x, int64_t rows, int64_t kc, int64_t rs, int64_t cs, int mr, PackRowsFn packRows, float* dst) {
  constexpr int64_t RUN = 64;
  std::vector<float> wide(cs == 1 ? mr * RUN : 0);
  for (int64_t i0 = 0; i0 < rows; i0 += mr, dst += kc * mr) {
    const int64_t r = std::min<int64_t>(mr, rows - i0);
    const uint16_t* src = x + i0 * rs;
    if (cs == 1) {
      for (int64_t p0 = 0; p0 < kc; p0 += RUN) {
        const int64_t steps = std::min(RUN, kc - p0);
        for (int64_t i = 0; i < r; ++i) widenRun<In>(src + i * rs + p0, steps, wide.data() + i * RUN);
        packRows(wide.data(), r, steps, RUN, mr, dst + p0 * mr);
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      float* d = dst + p * mr;
      if (rs == 1) {
        widenRun<In>(src + p * cs, r, d);
      } else {
        for (int64_t i = 0; i < r; ++i) d[i] = widen<In>(src[i * rs + p * cs]);
      }
      std::fill(d + r, d + mr, 0.0f);
    }
  }
}

#if defined(__x86_64__)
constexpr int BF16_MR = 14, BF16_NR = 32;

/** 14×32 f32 accumulators in 28 zmm; per k-pair one packed b row (two zmm) and one broadcast a pair per row. */
__attribute__((target("avx512bf16,avx512f"))) void dpbf16Run(int64_t kc, const void* aPanel, const void* bPanel, float* c,
                                                             int64_t ldc, bool accumulate) {
  const uint32_t* a = static_cast<const uint32_t*>(aPanel);
  const __m512i* b = static_cast<const __m512i*>(bPanel);
  __m512 acc[BF16_MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < BF16_MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; p += 2, a += BF16_MR, b += 2) {
    const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_load_si512(b));
    const __m512bh b1 = reinterpret_cast<__m512bh>(_mm512_load_si512(b + 1));
#pragma GCC unroll 14
    for (int i = 0; i < BF16_MR; ++i) {
      const __m512bh ai = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[i])));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < BF16_MR; ++i, c += ldc) {
    if (accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(c));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(c + 16));
    }
    _mm512_storeu_ps(c, acc[i][0]);
    _mm512_storeu_ps(c + 16, acc[i][1]);
  }
}

const PanelKernel DPBF16 = {"avx512_bf16", BF16_MR, BF16_NR, 2, 2, dpbf16Run, nullptr, nullptr};
#endif

/** The PanelKernel that widens into `kernel`'s f32 panels. */
PanelKernel widening(const MicroKernel& kernel) {
  return {kernel.name, kernel.mr, kernel.nr, 1, 4, nullptr, kernel.run, kernel.packRows};
}

/** This thread's scratch of at least `bytes`, 64-byte aligned, kept between calls. Throws std::bad_alloc. */
unsigned char* scratch(int64_t bytes) {
  struct Buffer {
    unsigned char* data = nullptr;
    int64_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    void* p = std::aligned_alloc(64, static_cast<size_t>(roundUp(bytes, 64)));
    if (p == nullptr) throw std::bad_alloc();
    std::free(buffer.data);
    buffer.data = static_cast<unsigned char*>(p);
    buffer.size = bytes;
  }
  return buffer.data;
}

/** A row of sums plus its bias (by stride bs; none when null), rounded into a 16-bit dst (by stride cs). */
template <Elem E>
CORE_CLONE_INLINE void roundRow(const float* src, const float* bias, int64_t bs, int64_t cols, uint16_t* dst, int64_t cs) {
  const auto round = [](float x) { return E == Elem::bf16 ? toBFloat16(x) : toFloat16(x); };
  if (bias == nullptr) {
    for (int64_t j = 0; j < cols; ++j) dst[j * cs] = round(src[j]);
  } else if (bs == 0) {  // a convolution's bias: one per output channel, a row of out
    const float b = *bias;
    for (int64_t j = 0; j < cols; ++j) dst[j * cs] = round(src[j] + b);
  } else {
    for (int64_t j = 0; j < cols; ++j) dst[j * cs] = round(src[j] + bias[j * bs]);
  }
}

/**
 * Stores rows × cols of the f32 block (row stride ld) into out, plus the bias (row and column
 * strides brs, bcs; none when null), converting to out's type. Cloned per target: the rounding
 * loops vectorize (a bf16 conv output of 2.4 M elements is a pass of its own otherwise).
 */
CORE_VECTOR_CLONES void store(const float* block, int64_t ld, int64_t rows, int64_t cols, void* out, Elem type, int64_t rs, int64_t cs,
                              const float* bias, int64_t brs, int64_t bcs) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* src = block + i * ld;
    const float* rowBias = bias == nullptr ? nullptr : bias + i * brs;
    if (type == Elem::f32) {
      float* dst = static_cast<float*>(out) + i * rs;
      if (rowBias != nullptr) for (int64_t j = 0; j < cols; ++j) dst[j * cs] = src[j] + rowBias[j * bcs];
      else if (cs == 1) std::memcpy(dst, src, static_cast<size_t>(cols) * sizeof(float));
      else for (int64_t j = 0; j < cols; ++j) dst[j * cs] = src[j];
    } else {
      uint16_t* dst = static_cast<uint16_t*>(out) + i * rs;
      if (type == Elem::bf16) {
        if (cs == 1) roundRow<Elem::bf16>(src, rowBias, bcs, cols, dst, 1);
        else roundRow<Elem::bf16>(src, rowBias, bcs, cols, dst, cs);
      } else {
        if (cs == 1) roundRow<Elem::f16>(src, rowBias, bcs, cols, dst, 1);
        else roundRow<Elem::f16>(src, rowBias, bcs, cols, dst, cs);
      }
    }
  }
}

/** The same product transposed, outᵀ = bᵀ · aᵀ. */
HalfGemmProblem swapped(const HalfGemmProblem& p) {
  HalfGemmProblem t = p;
  std::swap(t.m, t.n);
  t.a = {p.b.data, p.b.batchStride, p.b.colStride, p.b.rowStride};
  t.b = {p.a.data, p.a.batchStride, p.a.colStride, p.a.rowStride};
  std::swap(t.outRowStride, t.outColStride);
  std::swap(t.biasRowStride, t.biasColStride);
  return t;
}

/** Takes a batch's whole product from the f32 block (row stride ld) in place of the store. */
using BlockConsumer = std::function<void(int64_t batch, const float* block, int64_t ld)>;

void run(const HalfGemmProblem& p, const PanelKernel& kernel, int threads, const BlockConsumer* consume = nullptr) {
  const int mr = kernel.mr, nr = kernel.nr;
  // Rectangles of whole micro-panels, split along the longer side until every thread has one (a
  // consumer takes whole batches).
  int64_t mParts = 1, nParts = 1;
  const int64_t maxM = ceilDiv(p.m, mr), maxN = ceilDiv(p.n, nr);
  while (consume == nullptr && p.batches * mParts * nParts < threads && (mParts < maxM || nParts < maxN)) {
    if (mParts < maxM && (nParts >= maxN || ceilDiv(p.m, mParts) >= ceilDiv(p.n, nParts))) ++mParts;
    else ++nParts;
  }
  const int64_t rows = roundUp(ceilDiv(p.m, mParts), mr), cols = roundUp(ceilDiv(p.n, nParts), nr);
  mParts = ceilDiv(p.m, rows);
  nParts = ceilDiv(p.n, cols);
  const int64_t tasks = p.batches * mParts * nParts;
  // Depth blocks of equal size (288 = 144 + 144, not 256 + 32): a thin last block would pay a whole
  // pass of packing and tile loads and stores for little arithmetic.
  const int64_t kcLimit = KC_BYTES / kernel.bytes;
  const int64_t kcMax = roundUp(ceilDiv(p.k, ceilDiv(p.k, kcLimit)), kernel.kStep);
  const int64_t mcMax = std::min<int64_t>(rows, mr * MC_PANELS), ncMax = std::min<int64_t>(cols, NC);
  const int64_t aBytes = roundUp(mcMax * kcMax * kernel.bytes, 64) + PACK_SLACK, bBytes = roundUp(ncMax * kcMax * kernel.bytes, 64) + PACK_SLACK;
  const int64_t blockBytes = rows * cols * 4;
  scratch(aBytes + bBytes + blockBytes);  // running out of memory throws before any thread starts
  const auto pack = [&](const uint16_t* x, int64_t n, int64_t kc, int64_t rs, int64_t cs, int panel, unsigned char* dst) {
    if (kernel.kStep == 2) packPairs(x, n, kc, rs, cs, panel, reinterpret_cast<uint16_t*>(dst));
    else if (p.in == Elem::bf16) packWidened<Elem::bf16>(x, n, kc, rs, cs, panel, kernel.packRows, reinterpret_cast<float*>(dst));
    else packWidened<Elem::f16>(x, n, kc, rs, cs, panel, kernel.packRows, reinterpret_cast<float*>(dst));
  };

  Pool::instance().run(std::min<int64_t>(threads, tasks), tasks, [&](int64_t task) {
    unsigned char* packedA = scratch(aBytes + bBytes + blockBytes);
    unsigned char* packedB = packedA + aBytes;
    float* block = reinterpret_cast<float*>(packedB + bBytes);
    const int64_t batch = task / (mParts * nParts);
    const int64_t rowBegin = task / nParts % mParts * rows, colBegin = task % nParts * cols;
    const int64_t rowCount = std::min(p.m - rowBegin, rows), colCount = std::min(p.n - colBegin, cols);
    const uint16_t* a = p.a.data + batch * p.a.batchStride + rowBegin * p.a.rowStride;
    const uint16_t* b = p.b.data + batch * p.b.batchStride + colBegin * p.b.colStride;
    char* out = static_cast<char*>(p.out) + (p.outType == Elem::f32 ? 4 : 2) *
                                                (batch * p.outBatchStride + rowBegin * p.outRowStride + colBegin * p.outColStride);
    // A float32 out with unit column stride (and no bias) takes whole micro-tiles directly; the
    // block holds the partial tiles at the right and bottom edges, and everything when out needs
    // converting or a bias.
    float* direct = consume == nullptr && p.outType == Elem::f32 && p.outColStride == 1 && p.bias == nullptr ? reinterpret_cast<float*>(out) : nullptr;
    const float* bias = p.bias == nullptr ? nullptr : p.bias + batch * p.biasBatchStride + rowBegin * p.biasRowStride + colBegin * p.biasColStride;
    const int64_t wholeRows = rowCount / mr * mr, wholeCols = colCount / nr * nr;
    for (int64_t j0 = 0; j0 < colCount; j0 += ncMax) {
      const int64_t nc = std::min(ncMax, colCount - j0);
      for (int64_t p0 = 0; p0 < p.k; p0 += kcMax) {
        const int64_t kc = std::min(kcMax, p.k - p0), kcPacked = roundUp(kc, kernel.kStep);
        // b's block transposed is an nc-row panel set over depth kc.
        pack(b + p0 * p.b.rowStride + j0 * p.b.colStride, nc, kc, p.b.colStride, p.b.rowStride, nr, packedB);
        for (int64_t i0 = 0; i0 < rowCount; i0 += mcMax) {
          const int64_t mc = std::min(mcMax, rowCount - i0);
          pack(a + i0 * p.a.rowStride + p0 * p.a.colStride, mc, kc, p.a.rowStride, p.a.colStride, mr, packedA);
          for (int64_t jr = 0; jr < nc; jr += nr) {
            for (int64_t ir = 0; ir < mc; ir += mr) {
              const unsigned char* aPanel = packedA + ir * kcPacked * kernel.bytes;
              const unsigned char* bPanel = packedB + jr * kcPacked * kernel.bytes;
              const int64_t row = i0 + ir, col = j0 + jr;
              const bool whole = direct != nullptr && row < wholeRows && col < wholeCols;
              float* c = whole ? direct + row * p.outRowStride + col : block + row * cols + col;
              const int64_t ldc = whole ? p.outRowStride : cols;
              if (kernel.run != nullptr) {
                kernel.run(kcPacked, aPanel, bPanel, c, ldc, p0 > 0);
              } else {
                kernel.f32(kc, reinterpret_cast<const float*>(aPanel), reinterpret_cast<const float*>(bPanel), c, ldc, p0 > 0);
              }
            }
          }
        }
      }
    }
    if (consume != nullptr) {
      (*consume)(batch, block, cols);
    } else if (direct == nullptr) {
      store(block, cols, rowCount, colCount, out, p.outType, p.outRowStride, p.outColStride, bias, p.biasRowStride, p.biasColStride);
    } else {
      // The edge tiles: the columns right of the whole ones, then the rows below them.
      store(block + wholeCols, cols, wholeRows, colCount - wholeCols, out + 4 * wholeCols, Elem::f32, p.outRowStride, 1, nullptr, 0, 0);
      store(block + wholeRows * cols, cols, rowCount - wholeRows, colCount, out + 4 * wholeRows * p.outRowStride, Elem::f32, p.outRowStride, 1, nullptr, 0, 0);
    }
  });
}

}  // namespace

bool dpbf16Available() {
#if defined(__x86_64__)
  // Its pair packing loads with AVX512-BW and -VL masks (every CPU with AVX512-BF16 has them).
  return cpuHas("avx512_bf16") && cpuHas("avx512bw") && cpuHas("avx512vl");
#else
  return false;
#endif
}

namespace {

/** The PanelKernel named `name` for p's operands; throws std::invalid_argument where it cannot run. */
PanelKernel kernelFor(const HalfGemmProblem& p, const std::string& name) {
  const CpuFeatures& f = cpuFeatures();
  PanelKernel kernel{};
#if defined(__x86_64__)
  // vdpbf16ps takes bfloat16 pairs only: float16 operands widen into the AVX-512 kernel it implies.
  if (name == DPBF16.name && dpbf16Available()) kernel = p.in == Elem::bf16 ? DPBF16 : widening(avx512Kernel());
#endif
  if (name == "avx512" && f.avx512 && avx512Kernel().run != nullptr) kernel = widening(avx512Kernel());
  if (name == "avx2" && f.avx2fma && avx2Kernel().run != nullptr) kernel = widening(avx2Kernel());
  if (name == "portable") kernel = widening(portableKernel());
  if (kernel.name == nullptr) throw std::invalid_argument("the '" + name + "' kernel cannot run these operands on this CPU");
  return kernel;
}

/** Few columns and many rows pad most of each NR-wide tile: the transposed product pads far less. */
bool runsSwapped(const HalfGemmProblem& p, const PanelKernel& kernel) {
  const int64_t straight = roundUp(p.m, kernel.mr) * roundUp(p.n, kernel.nr);
  const int64_t flipped = roundUp(p.n, kernel.mr) * roundUp(p.m, kernel.nr);
  return 3 * straight > 4 * flipped;
}

/** A scratch plane of f32 sums per thread (a 16-bit out's batch region), kept between calls. */
float* planeScratch(int64_t floats) {
  thread_local std::vector<float> plane;
  if (static_cast<int64_t>(plane.size()) < floats) plane.resize(static_cast<size_t>(floats));
  return plane.data();
}

}  // namespace

const char* halfGemm(const HalfGemmProblem& p, const std::string& name, int threads) {
  const PanelKernel kernel = kernelFor(p, name);
  if (runsSwapped(p, kernel)) run(swapped(p), kernel, threads);
  else run(p, kernel, threads);
  return kernel.name;
}

const char* halfGemmStridedSum(const HalfGemmProblem& p, const ProductSum& sum, const std::string& name, int threads) {
  const PanelKernel kernel = kernelFor(p, name);
  const bool flipped = runsSwapped(p, kernel);
  const size_t bytes = sum.outType == Elem::f32 ? 4 : 2;
  // Out's zeros first (where no window lands), then each batch's region, which no other batch reaches.
  zeroParallel(sum.out, sum.outNumel * static_cast<int64_t>(bytes), threads);
  int64_t reach = 0;  // the last element a batch's region reaches past its first
  for (int d = 1; d < sum.rank; ++d) reach += (sum.shape[d] - 1) * sum.viewStrides[d];
  const BlockConsumer consume = [&](int64_t batch, const float* block, int64_t ld) {
    // The batch's source: element (m, n) of its product sits at block[m·ld + n], or [n·ld + m] when
    // the GEMM ran transposed; dims [1, split) step through m, [split, rank) through n, row-major.
    StridedSumProblem part{};
    part.rank = sum.rank - 1;
    int64_t inner = 1;
    for (int d = sum.rank - 1; d >= 1; --d) {
      if (d == sum.split - 1) inner = 1;
      const int64_t step = (d >= sum.split) == flipped ? ld : 1;
      part.shape[d - 1] = sum.shape[d];
      part.srcStrides[d - 1] = inner * step;
      part.outStrides[d - 1] = sum.viewStrides[d];
      inner *= sum.shape[d];
    }
    part.src = block;
    part.outNumel = reach + 1;
    const int64_t first = sum.viewOffset + batch * sum.viewStrides[0];
    if (sum.outType == Elem::f32) {
      part.out = static_cast<float*>(sum.out) + first;
      addStrided(part);
      return;
    }
    float* plane = planeScratch(reach + 1);
    std::fill(plane, plane + reach + 1, 0.0f);
    part.out = plane;
    addStrided(part);
    store(plane, reach + 1, 1, reach + 1, static_cast<uint16_t*>(sum.out) + first, sum.outType, 0, 1, nullptr, 0, 0);
  };
  if (flipped) run(swapped(p), kernel, threads, &consume);
  else run(p, kernel, threads, &consume);
  return kernel.name;
}

}  // namespace core_cpu
