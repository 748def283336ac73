#include "random.h"

#include <algorithm>

#include "cpu_features.h"
#include "pool.h"

#if defined(__x86_64__)
// GCC 12 warns that the AVX-512 shift and multiply intrinsics read an uninitialised operand: its
// own header passes _mm512_undefined_epi32() as their unused merge source (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace core_cpu {

namespace {

constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
constexpr int ROUNDS = 10;

/** Blocks one pass generates into a stack buffer before converting them (a multiple of 16). */
constexpr int64_t BUFFER_BLOCKS = 256;
/** Blocks one task takes at least: below this, waking another thread costs more than it saves. */
constexpr int64_t TASK_BLOCKS = 1 << 13;

/** The round keys: round r uses (key0 + r·W0, key1 + r·W1) mod 2^32. */
struct RoundKeys {
  uint32_t k0[ROUNDS], k1[ROUNDS];
  RoundKeys(uint32_t key0, uint32_t key1) {
    for (int r = 0; r < ROUNDS; ++r) {
      k0[r] = key0 + static_cast<uint32_t>(r) * W0;
      k1[r] = key1 + static_cast<uint32_t>(r) * W1;
    }
  }
};

/** Blocks [first, first + n) into words[4·j + w] (w: the block's word), one block at a time. */
void philoxPortable(const RoundKeys& keys, uint64_t first, int64_t n, uint32_t* words) {
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t counter = first + static_cast<uint64_t>(j);
    uint32_t x0 = static_cast<uint32_t>(counter), x1 = static_cast<uint32_t>(counter >> 32), x2 = 0, x3 = 0;
    for (int r = 0; r < ROUNDS; ++r) {
      const uint64_t p = static_cast<uint64_t>(M0) * x0, q = static_cast<uint64_t>(M1) * x2;
      const uint32_t y0 = static_cast<uint32_t>(q >> 32) ^ x1 ^ keys.k0[r];
      const uint32_t y2 = static_cast<uint32_t>(p >> 32) ^ x3 ^ keys.k1[r];
      x1 = static_cast<uint32_t>(q);
      x3 = static_cast<uint32_t>(p);
      x0 = y0;
      x2 = y2;
    }
    words[4 * j] = x0;
    words[4 * j + 1] = x1;
    words[4 * j + 2] = x2;
    words[4 * j + 3] = x3;
  }
}

#if defined(__x86_64__)
/** (hi, lo) 32-bit halves of the lane-wise 64-bit products a · m (m: the same in every lane). */
__attribute__((target("avx512f"))) inline void mulHiLo(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);                      // lanes 0, 2, …: full products
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 1, 3, …
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/** philoxPortable for 16 blocks a step (n a multiple of 16): lane j of each vector is block j. */
__attribute__((target("avx512f"))) void philoxAvx512(const RoundKeys& keys, uint64_t first, int64_t n, uint32_t* words) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(M0)), m1 = _mm512_set1_epi32(static_cast<int>(M1));
  const __m512i steps = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  // Gathers the low (even) or high (odd) 32-bit halves of two vectors of 64-bit counters.
  const __m512i lows = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i highs = _mm512_add_epi32(lows, _mm512_set1_epi32(1));
  // Interleaves lanes of two vectors: 32-bit words of blocks 0–7 (and 8–15), then 64-bit pairs.
  const __m512i pairLo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i pairHi = _mm512_add_epi32(pairLo, _mm512_set1_epi32(8));
  const __m512i quadLo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i quadHi = _mm512_add_epi64(quadLo, _mm512_set1_epi64(4));
  for (int64_t j = 0; j < n; j += 16, words += 64) {
    const __m512i base = _mm512_set1_epi64(static_cast<long long>(first + static_cast<uint64_t>(j)));
    const __m512i c0 = _mm512_add_epi64(base, steps), c1 = _mm512_add_epi64(base, _mm512_add_epi64(steps, _mm512_set1_epi64(8)));
    __m512i x0 = _mm512_permutex2var_epi32(c0, lows, c1), x1 = _mm512_permutex2var_epi32(c0, highs, c1);
    __m512i x2 = _mm512_setzero_si512(), x3 = _mm512_setzero_si512();
    for (int r = 0; r < ROUNDS; ++r) {
      __m512i hi0, lo0, hi1, lo1;
      mulHiLo(x0, m0, hi0, lo0);
      mulHiLo(x2, m1, hi1, lo1);
      x0 = _mm512_xor_si512(_mm512_xor_si512(hi1, x1), _mm512_set1_epi32(static_cast<int>(keys.k0[r])));
      x2 = _mm512_xor_si512(_mm512_xor_si512(hi0, x3), _mm512_set1_epi32(static_cast<int>(keys.k1[r])));
      x1 = lo1;
      x3 = lo0;
    }
    const __m512i a01 = _mm512_permutex2var_epi32(x0, pairLo, x1), b01 = _mm512_permutex2var_epi32(x0, pairHi, x1);
    const __m512i a23 = _mm512_permutex2var_epi32(x2, pairLo, x3), b23 = _mm512_permutex2var_epi32(x2, pairHi, x3);
    _mm512_storeu_si512(words, _mm512_permutex2var_epi64(a01, quadLo, a23));
    _mm512_storeu_si512(words + 16, _mm512_permutex2var_epi64(a01, quadHi, a23));
    _mm512_storeu_si512(words + 32, _mm512_permutex2var_epi64(b01, quadLo, b23));
    _mm512_storeu_si512(words + 48, _mm512_permutex2var_epi64(b01, quadHi, b23));
  }
}
#endif

using PhiloxFn = void (*)(const RoundKeys&, uint64_t, int64_t, uint32_t*);

/** The widest block generator this CPU runs, and the blocks it takes per call (a multiple of). */
struct Generator {
  PhiloxFn run;
  int64_t unit;
};

Generator generator() {
#if defined(__x86_64__)
  if (cpuFeatures().avx512) return {philoxAvx512, 16};
#endif
  return {philoxPortable, 1};
}

/** Converts n words into p's output, from its element `at`. */
void convert(const RandomProblem& p, const uint32_t* words, int64_t n, int64_t at) {
  if (p.kind == RandomKind::uniform) {
    float* out = p.f32 + at;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(words[i] >> 8) * 0x1p-24f;  // exact
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    // floor(bits · range / 2^32): the product of a 32-bit word and a range ≤ 2^32 fits 64 bits.
    const double value = p.low + static_cast<double>((static_cast<uint64_t>(words[i]) * p.range) >> 32);
    if (p.i32 != nullptr) {
      p.i32[at + i] = static_cast<int32_t>(value);
    } else {
      p.f32[at + i] = static_cast<float>(value);
    }
  }
}

}  // namespace

void random(const RandomProblem& p, int threads) {
  if (p.count <= 0) return;
  const Generator gen = generator();
  const RoundKeys keys(p.key0, p.key1);
  const int64_t blocks = (p.count + 3) / 4;
  const int64_t perTask = std::max(TASK_BLOCKS, (blocks + 4 * threads - 1) / (4 * threads));
  const int64_t tasks = (blocks + perTask - 1) / perTask;
  Pool::instance().run(threads, tasks, [&](int64_t task) {
    alignas(64) uint32_t words[4 * BUFFER_BLOCKS];
    const int64_t end = std::min(blocks, (task + 1) * perTask);
    for (int64_t block = task * perTask; block < end; block += BUFFER_BLOCKS) {
      const int64_t n = std::min(BUFFER_BLOCKS, end - block);
      const int64_t generated = (n + gen.unit - 1) / gen.unit * gen.unit;  // ≤ BUFFER_BLOCKS
      gen.run(keys, p.offset + static_cast<uint64_t>(block), generated, words);
      convert(p, words, std::min(4 * n, p.count - 4 * block), 4 * block);
    }
  });
}

}  // namespace core_cpu
