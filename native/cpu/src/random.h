// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11) as RandomSpec in
// packages/tensor defines it, turned into uniform float32 or randint values exactly as the
// TypeScript kernel turns them, so both give the same bits.
#pragma once
#include <cstdint>

namespace core_cpu {

enum class RandomKind { uniform, randint };

/**
 * Fill `count` elements from the stream keyed (key0, key1): element i is word (i mod 4) of the
 * block at counter `offset + floor(i / 4)` (low 32 bits in the block's first counter word, the
 * high 32 in its second, the other two 0).
 *   uniform: (bits >> 8) · 2^-24 into `f32`.
 *   randint: low + floor(bits · range / 2^32) computed exactly (range ≤ 2^32), the sum in double as
 *            JavaScript adds, then stored into `i32` (the value must fit) or rounded into `f32`.
 * Exactly one of f32 and i32 is set.
 */
struct RandomProblem {
  uint32_t key0, key1;
  uint64_t offset;
  int64_t count;
  RandomKind kind;
  double low;
  uint64_t range;
  float* f32;
  int32_t* i32;
};

/** Runs the problem on up to `threads` threads (blocks split between them). */
void random(const RandomProblem& problem, int threads);

}  // namespace core_cpu
