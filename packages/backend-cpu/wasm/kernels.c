// WebAssembly SIMD kernels of the CPU backend, compiled by clang (wasm32, simd128, atomics) into
// one module that every thread instantiates over the same shared memory. The TypeScript side owns
// all memory: it passes byte addresses of tensors, argument blocks and per-thread scratch, so these
// functions use no stack, no globals and no allocator, and any thread may run any task.
#include <stdint.h>
#include <wasm_simd128.h>

#include "generated/op-codes.h" // OP_* and AXIS_* codes, generated with their TypeScript twins by scripts/codegen

#define EXPORT(name) __attribute__((export_name(#name)))
#define MAX_DIMS 8

#ifdef RELAXED
#define MADD(a, b, c) wasm_f32x4_relaxed_madd(a, b, c)
#else
#define MADD(a, b, c) wasm_f32x4_add(c, wasm_f32x4_mul(a, b))
#endif

static inline int min_int(int a, int b) { return a < b ? a : b; }

// Half conversions, bit for bit the core's (packages/tensor/src/dtype/half.ts).

static inline uint32_t f32_bits(float x) {
  union { float f; uint32_t u; } v = {x};
  return v.u;
}

static inline float f32_from_bits(uint32_t u) {
  union { uint32_t u; float f; } v = {u};
  return v.f;
}

// f32 → f16, round to nearest even; NaN → sign | 0x7e00.
static inline uint16_t f32_to_f16(float x) {
  uint32_t bits = f32_bits(x), sign = (bits >> 16) & 0x8000, exp = (bits >> 23) & 0xff, mant = bits & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(mant ? sign | 0x7e00 : sign | 0x7c00);
  int e = (int)exp - 127;
  if (e > 15) return (uint16_t)(sign | 0x7c00);
  if (e >= -14) {
    uint32_t half = ((uint32_t)(e + 15) << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half += 1;
    return (uint16_t)(sign | half);
  }
  if (e < -25) return (uint16_t)sign;
  uint32_t full = mant | 0x800000, shift = (uint32_t)(-e - 1);
  uint32_t half = full >> shift, rest = full & ((1u << shift) - 1), tie = 1u << (shift - 1);
  if (rest > tie || (rest == tie && (half & 1))) half += 1;
  return (uint16_t)(sign | half);
}

// f16 → f32, exact; every NaN becomes the canonical quiet NaN 0x7fc00000, as a JS number store does.
static inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return f32_from_bits(mant ? 0x7fc00000u : sign | 0x7f800000u);
  if (exp == 0) {
    float v = (float)mant * 5.9604644775390625e-8f; // m · 2^-24, exact
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

// f32 → bf16: NaN → 0x7fc0, else (u + 0x7fff + ((u >> 16) & 1)) >> 16 (nearest even; PyTorch's).
static inline uint16_t f32_to_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static inline float bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  return (u & 0x7fffffff) > 0x7f800000 ? f32_from_bits(0x7fc00000u) : f32_from_bits(u);
}


// ---------------------------------------------------------------------------------------------
// GEMM: C[b] = A[b] @ B[b] for strided operands, BLIS-style. A task computes one tile of C:
// K is walked in blocks of KC; per block the tile's B columns are packed into NR-wide panels and
// its A rows into MR-tall panels (zero-padded), then an MR×NR register-blocked micro-kernel runs
// over every panel pair. Packing reads any strides, so transposed operands cost no extra copy.
// Operands may be f16 or bf16: packing converts to f32, sums stay in f32 (an f32 tile buffer
// when C is a half type) and C is rounded once at the end.

enum { MR = 4, NR = 8, KC = 256, MC_MAX = 128, NC_MAX = 512 };
enum { T_F32 = 0, T_F16 = 1, T_BF16 = 2 }; // element types of GEMM operands

static inline float load_as_f32(const void *base, int type, int index) {
  if (type == T_F32) return ((const float *)base)[index];
  uint16_t h = ((const uint16_t *)base)[index];
  return type == T_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}


// The argument block (int32 words), written by the TypeScript side.
typedef struct {
  int m, n, k, batches;
  int a, a_rs, a_cs, a_bs; // byte address, then row/col/batch strides in elements
  int b, b_rs, b_cs, b_bs;
  int c, c_rs, c_cs, c_bs;
  int tile_m, tile_n, tiles_m, tiles_n;
  int scratch, scratch_bytes; // per-thread scratch: thread t uses [scratch + t·scratch_bytes, …)
  int a_type, b_type, c_type;
} GemmArgs;

// The MR×NR product of a packed A panel (kc × MR) and a packed B panel (kc × NR), into `tile`.
static void micro_kernel(int kc, const float *a, const float *b, float *tile) {
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00;
  v128_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int p = 0; p < kc; p++) {
    v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
    v128_t ai = wasm_v128_load32_splat(a + 0);
    c00 = MADD(ai, b0, c00);
    c01 = MADD(ai, b1, c01);
    ai = wasm_v128_load32_splat(a + 1);
    c10 = MADD(ai, b0, c10);
    c11 = MADD(ai, b1, c11);
    ai = wasm_v128_load32_splat(a + 2);
    c20 = MADD(ai, b0, c20);
    c21 = MADD(ai, b1, c21);
    ai = wasm_v128_load32_splat(a + 3);
    c30 = MADD(ai, b0, c30);
    c31 = MADD(ai, b1, c31);
    a += MR;
    b += NR;
  }
  wasm_v128_store(tile + 0, c00);
  wasm_v128_store(tile + 4, c01);
  wasm_v128_store(tile + 8, c10);
  wasm_v128_store(tile + 12, c11);
  wasm_v128_store(tile + 16, c20);
  wasm_v128_store(tile + 20, c21);
  wasm_v128_store(tile + 24, c30);
  wasm_v128_store(tile + 28, c31);
}

// The 4×4 transpose of rows r0..r3: on return r_q holds column q.
#define TRANSPOSE4(r0, r1, r2, r3)                                                                 \
  do {                                                                                             \
    v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7); \
    v128_t t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7); \
    r0 = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);                                                   \
    r1 = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);                                                   \
    r2 = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);                                                   \
    r3 = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);                                                   \
  } while (0)

// Packs rows [0, mt) × cols [0, kc) of A (element `at` of `a`, strides rs/cs) into MR-tall panels.
static void pack_a(const void *a, int type, int at, int rs, int cs, int mt, int kc, float *dst) {
  if (type != T_F32) {
    for (int i0 = 0; i0 < mt; i0 += MR) {
      int rows = min_int(MR, mt - i0);
      for (int p = 0; p < kc; p++) {
        for (int i = 0; i < MR; i++) dst[i] = i < rows ? load_as_f32(a, type, at + (i0 + i) * rs + p * cs) : 0.0f;
        dst += MR;
      }
    }
    return;
  }
  for (int i0 = 0; i0 < mt; i0 += MR) {
    int rows = min_int(MR, mt - i0);
    const float *src = (const float *)a + at + i0 * rs;
    if (rows == MR && rs == 1) { // A transposed (column-major): a panel row is 4 consecutive floats
      for (int p = 0; p < kc; p++) {
        wasm_v128_store(dst, wasm_v128_load(src + p * cs));
        dst += MR;
      }
    } else if (rows == MR && cs == 1) { // row-major: transpose 4×4 blocks
      int p = 0;
      for (; p + 4 <= kc; p += 4) {
        v128_t r0 = wasm_v128_load(src + p), r1 = wasm_v128_load(src + rs + p);
        v128_t r2 = wasm_v128_load(src + 2 * rs + p), r3 = wasm_v128_load(src + 3 * rs + p);
        TRANSPOSE4(r0, r1, r2, r3);
        wasm_v128_store(dst, r0);
        wasm_v128_store(dst + 4, r1);
        wasm_v128_store(dst + 8, r2);
        wasm_v128_store(dst + 12, r3);
        dst += 4 * MR;
      }
      for (; p < kc; p++) {
        dst[0] = src[p];
        dst[1] = src[rs + p];
        dst[2] = src[2 * rs + p];
        dst[3] = src[3 * rs + p];
        dst += MR;
      }
    } else {
      for (int p = 0; p < kc; p++) {
        for (int i = 0; i < MR; i++) dst[i] = i < rows ? src[i * rs + p * cs] : 0.0f;
        dst += MR;
      }
    }
  }
}

// Packs rows [0, kc) × cols [0, nt) of B (element `at` of `b`, strides rs/cs) into NR-wide panels.
static void pack_b(const void *b, int type, int at, int rs, int cs, int kc, int nt, float *dst) {
  if (type != T_F32) {
    for (int j0 = 0; j0 < nt; j0 += NR) {
      int cols = min_int(NR, nt - j0);
      for (int p = 0; p < kc; p++) {
        for (int j = 0; j < NR; j++) dst[j] = j < cols ? load_as_f32(b, type, at + p * rs + (j0 + j) * cs) : 0.0f;
        dst += NR;
      }
    }
    return;
  }
  for (int j0 = 0; j0 < nt; j0 += NR) {
    int cols = min_int(NR, nt - j0);
    const float *src = (const float *)b + at + j0 * cs;
    if (cols == NR && cs == 1) {
      for (int p = 0; p < kc; p++) {
        wasm_v128_store(dst, wasm_v128_load(src + p * rs));
        wasm_v128_store(dst + 4, wasm_v128_load(src + p * rs + 4));
        dst += NR;
      }
    } else if (cols == NR && rs == 1) { // B transposed (column-major): transpose 4×4 blocks
      int p = 0;
      for (; p + 4 <= kc; p += 4) {
        for (int g = 0; g < NR; g += 4) {
          v128_t r0 = wasm_v128_load(src + g * cs + p), r1 = wasm_v128_load(src + (g + 1) * cs + p);
          v128_t r2 = wasm_v128_load(src + (g + 2) * cs + p), r3 = wasm_v128_load(src + (g + 3) * cs + p);
          TRANSPOSE4(r0, r1, r2, r3);
          wasm_v128_store(dst + g, r0);
          wasm_v128_store(dst + NR + g, r1);
          wasm_v128_store(dst + 2 * NR + g, r2);
          wasm_v128_store(dst + 3 * NR + g, r3);
        }
        dst += 4 * NR;
      }
      for (; p < kc; p++) {
        for (int j = 0; j < NR; j++) dst[j] = src[p + j * cs];
        dst += NR;
      }
    } else {
      for (int p = 0; p < kc; p++) {
        for (int j = 0; j < NR; j++) dst[j] = j < cols ? src[p * rs + j * cs] : 0.0f;
        dst += NR;
      }
    }
  }
}

// Writes (first K block) or adds an MR×NR tile into C, clipped to rows × cols.
static void store_tile(const float *tile, float *c, int rs, int cs, int rows, int cols, int accumulate) {
  if (rows == MR && cols == NR && cs == 1) {
    for (int i = 0; i < MR; i++) {
      v128_t t0 = wasm_v128_load(tile + i * NR), t1 = wasm_v128_load(tile + i * NR + 4);
      float *row = c + i * rs;
      if (accumulate) {
        t0 = wasm_f32x4_add(wasm_v128_load(row), t0);
        t1 = wasm_f32x4_add(wasm_v128_load(row + 4), t1);
      }
      wasm_v128_store(row, t0);
      wasm_v128_store(row + 4, t1);
    }
    return;
  }
  for (int i = 0; i < rows; i++) {
    for (int j = 0; j < cols; j++) {
      float *dst = c + i * rs + j * cs;
      *dst = accumulate ? *dst + tile[i * NR + j] : tile[i * NR + j];
    }
  }
}

EXPORT(gemm_task) void gemm_task(int thread, int task, const GemmArgs *g) {
  int per_batch = g->tiles_m * g->tiles_n;
  int batch = task / per_batch, rest = task % per_batch;
  int i_start = (rest / g->tiles_n) * g->tile_m, j_start = (rest % g->tiles_n) * g->tile_n;
  int mt = min_int(g->tile_m, g->m - i_start), nt = min_int(g->tile_n, g->n - j_start);
  int a_at = batch * g->a_bs + i_start * g->a_rs, b_at = batch * g->b_bs + j_start * g->b_cs;
  int c_at = batch * g->c_bs + i_start * g->c_rs + j_start * g->c_cs;
  float *pa = (float *)(g->scratch + thread * g->scratch_bytes);
  float *pb = pa + MC_MAX * KC;
  float *tile = pb + KC * NC_MAX;
  // Sums collect in a contiguous f32 tile buffer and go to C once at the end (rounded once for a
  // half C). Its row pitch is padded off a power of two: rows of a large C, 4 or 8 KiB apart,
  // would all land in the same L1 cache sets.
  float *acc = tile + MR * NR;
  int acc_rs = ((nt + NR - 1) / NR) * NR + 4, acc_cs = 1;

  if (g->k == 0) { // an empty sum: C is zero
    for (int i = 0; i < mt; i++)
      for (int j = 0; j < nt; j++) acc[i * acc_rs + j * acc_cs] = 0.0f;
  }
  for (int p0 = 0; p0 < g->k; p0 += KC) {
    int kc = min_int(KC, g->k - p0);
    pack_b((const void *)g->b, g->b_type, b_at + p0 * g->b_rs, g->b_rs, g->b_cs, kc, nt, pb);
    pack_a((const void *)g->a, g->a_type, a_at + p0 * g->a_cs, g->a_rs, g->a_cs, mt, kc, pa);
    for (int j0 = 0; j0 < nt; j0 += NR) {
      const float *bp = pb + (j0 / NR) * kc * NR;
      for (int i0 = 0; i0 < mt; i0 += MR) {
        micro_kernel(kc, pa + (i0 / MR) * kc * MR, bp, tile);
        store_tile(tile, acc + i0 * acc_rs + j0 * acc_cs, acc_rs, acc_cs, min_int(MR, mt - i0), min_int(NR, nt - j0), p0 > 0);
      }
    }
  }
  if (g->c_type == T_F32) {
    float *c = (float *)g->c + c_at;
    for (int i = 0; i < mt; i++) {
      const float *row = acc + i * acc_rs;
      float *dst = c + i * g->c_rs;
      int j = 0;
      if (g->c_cs == 1)
        for (; j + 4 <= nt; j += 4) wasm_v128_store(dst + j, wasm_v128_load(row + j));
      for (; j < nt; j++) dst[j * g->c_cs] = row[j];
    }
  } else {
    uint16_t *c = (uint16_t *)g->c + c_at;
    for (int i = 0; i < mt; i++)
      for (int j = 0; j < nt; j++) {
        float v = acc[i * acc_rs + j];
        c[i * g->c_rs + j * g->c_cs] = g->c_type == T_F16 ? f32_to_f16(v) : f32_to_bf16(v);
      }
  }
}

EXPORT(gemm_scratch_bytes) int gemm_scratch_bytes(void) {
  return (MC_MAX * KC + KC * NC_MAX + MR * NR + MC_MAX * (NC_MAX + 4)) * (int)sizeof(float);
}

// The packing buffers' sizes, for the caller's choice of tiles: a tile of tile_m × tile_n with
// kc = min(K, KC) needs tile_m·kc ≤ MC_MAX·KC (packed A), kc·tile_n ≤ KC·NC_MAX (packed B) and
// tile_m·(tile_n rounded up to NR, + 4) ≤ MC_MAX·(NC_MAX + 4) (the sums): small K allows larger tiles.
EXPORT(gemm_tile_limits) int gemm_tile_limits(int which) {
  return which == 0 ? MC_MAX : which == 1 ? NC_MAX : which == 2 ? MR : which == 3 ? NR : KC;
}

// ---------------------------------------------------------------------------------------------
// Strided elementwise loops. A task covers a range of flat output indices; the last dim is the
// inner loop, vectorised when its strides are unit (or 0 for a broadcast operand). Operands are
// f32 except: compare writes bool (u8), where reads a bool condition (z), copy moves any 32-bit
// pattern unchanged, casts read or write 16-bit half patterns.

typedef struct {
  int op, ndim;
  int x, y, z, out; // byte addresses (unused operands: 0)
  int shape[MAX_DIMS], sx[MAX_DIMS], sy[MAX_DIMS], sz[MAX_DIMS], so[MAX_DIMS];
  int numel, chunk;           // task t covers flat indices [t·chunk, min((t+1)·chunk, numel))
  int scratch, scratch_bytes; // per-thread scratch, as in GemmArgs (holds the loop's multi-index)
  int type;                   // T_F32, or T_F16/T_BF16: the floating operands are half patterns
} EltArgs;

// Whether op is in the group of codes starting at base (OP_BINARY, OP_UNARY, …: generated/op-codes.h).
static inline int in_group(int op, int base) { return op >= base && op < base + OP_GROUP; }

#define BINARY_LOOP(VEXPR, SEXPR)                                                                  \
  do {                                                                                             \
    int i = 0;                                                                                     \
    if (sx == 1 && sy == 1 && so == 1) {                                                           \
      for (; i + 4 <= len; i += 4) {                                                               \
        v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(y + i);                               \
        wasm_v128_store(o + i, VEXPR);                                                             \
      }                                                                                            \
    } else if (sx == 1 && sy == 0 && so == 1) {                                                    \
      v128_t b = wasm_v128_load32_splat(y);                                                        \
      for (; i + 4 <= len; i += 4) {                                                               \
        v128_t a = wasm_v128_load(x + i);                                                          \
        wasm_v128_store(o + i, VEXPR);                                                             \
      }                                                                                            \
    } else if (sx == 0 && sy == 1 && so == 1) {                                                    \
      v128_t a = wasm_v128_load32_splat(x);                                                        \
      for (; i + 4 <= len; i += 4) {                                                               \
        v128_t b = wasm_v128_load(y + i);                                                          \
        wasm_v128_store(o + i, VEXPR);                                                             \
      }                                                                                            \
    }                                                                                              \
    for (; i < len; i++) {                                                                         \
      float a = x[i * sx], b = y[i * sy];                                                          \
      o[i * so] = SEXPR;                                                                           \
    }                                                                                              \
  } while (0)

static void binary_run(int op, const float *x, int sx, const float *y, int sy, float *o, int so, int len) {
  switch (op) {
  case OP_ADD: BINARY_LOOP(wasm_f32x4_add(a, b), a + b); break;
  case OP_SUB: BINARY_LOOP(wasm_f32x4_sub(a, b), a - b); break;
  case OP_MUL: BINARY_LOOP(wasm_f32x4_mul(a, b), a * b); break;
  case OP_DIV: BINARY_LOOP(wasm_f32x4_div(a, b), a / b); break;
  }
}

// x + y·z with the product rounded to f32 before the sum (two statements: never contracted into
// a fused multiply-add), as the decomposition x + (y·z) computes it.
static void addcmul_run(const float *x, int sx, const float *y, int sy, const float *z, int sz, float *o, int so, int len) {
  int i = 0;
  if (sx == 1 && sy == 1 && so == 1 && sz == 0) {
    v128_t c = wasm_v128_load32_splat(z);
    for (; i + 4 <= len; i += 4) {
      v128_t p = wasm_f32x4_mul(wasm_v128_load(y + i), c);
      wasm_v128_store(o + i, wasm_f32x4_add(wasm_v128_load(x + i), p));
    }
  } else if (sx == 1 && sy == 1 && sz == 1 && so == 1) {
    for (; i + 4 <= len; i += 4) {
      v128_t p = wasm_f32x4_mul(wasm_v128_load(y + i), wasm_v128_load(z + i));
      wasm_v128_store(o + i, wasm_f32x4_add(wasm_v128_load(x + i), p));
    }
  }
  for (; i < len; i++) {
    float p = y[i * sy] * z[i * sz];
    o[i * so] = x[i * sx] + p;
  }
}

#define UNARY_LOOP(VEXPR, SEXPR)                                                                   \
  do {                                                                                             \
    int i = 0;                                                                                     \
    if (sx == 1 && so == 1) {                                                                      \
      for (; i + 4 <= len; i += 4) {                                                               \
        v128_t a = wasm_v128_load(x + i);                                                          \
        wasm_v128_store(o + i, VEXPR);                                                             \
      }                                                                                            \
    }                                                                                              \
    for (; i < len; i++) {                                                                         \
      float a = x[i * sx];                                                                         \
      o[i * so] = SEXPR;                                                                           \
    }                                                                                              \
  } while (0)

static void unary_run(int op, const float *x, int sx, float *o, int so, int len) {
  const v128_t zero = wasm_f32x4_splat(0.0f);
  switch (op) {
  case OP_NEG: UNARY_LOOP(wasm_f32x4_neg(a), -a); break;
  case OP_ABS: UNARY_LOOP(wasm_f32x4_abs(a), __builtin_fabsf(a)); break;
  // relu keeps NaN (like max(x, 0) in PyTorch) and maps -0 to +0.
  case OP_RELU: UNARY_LOOP(wasm_v128_bitselect(zero, a, wasm_f32x4_le(a, zero)), a > 0 ? a : (a != a ? a : 0.0f)); break;
  case OP_SQRT: UNARY_LOOP(wasm_f32x4_sqrt(a), __builtin_sqrtf(a)); break;
  }
}

// Copies 32-bit patterns as integers, so NaN payloads pass untouched.
static void copy32_run(const int32_t *x, int sx, int32_t *o, int so, int len) {
  int i = 0;
  if (sx == 1 && so == 1)
    for (; i + 4 <= len; i += 4) wasm_v128_store(o + i, wasm_v128_load(x + i));
  for (; i < len; i++) o[i * so] = x[i * sx];
}

// Copies 16-bit (half types) and 8-bit (bool) patterns.
static void copy16_run(const uint16_t *x, int sx, uint16_t *o, int so, int len) {
  int i = 0;
  if (sx == 1 && so == 1)
    for (; i + 8 <= len; i += 8) wasm_v128_store(o + i, wasm_v128_load(x + i));
  for (; i < len; i++) o[i * so] = x[i * sx];
}

static void copy8_run(const uint8_t *x, int sx, uint8_t *o, int so, int len) {
  int i = 0;
  if (sx == 1 && so == 1)
    for (; i + 16 <= len; i += 16) wasm_v128_store(o + i, wasm_v128_load(x + i));
  for (; i < len; i++) o[i * so] = x[i * sx];
}

// Four compare masks (16 lanes of -1/0) → 16 bools.
static inline v128_t masks_to_bools(v128_t m0, v128_t m1, v128_t m2, v128_t m3) {
  v128_t lo = wasm_i16x8_narrow_i32x4(m0, m1), hi = wasm_i16x8_narrow_i32x4(m2, m3);
  return wasm_v128_and(wasm_i8x16_narrow_i16x8(lo, hi), wasm_i8x16_splat(1));
}

// Compares x and y (elements of type T) into bools, 16 lanes at a time when x is contiguous.
#define COMPARE_LOOP(T, VCMP, SCMP)                                                                \
  do {                                                                                             \
    int i = 0;                                                                                     \
    if (sx == 1 && so == 1 && (sy == 1 || sy == 0)) {                                              \
      v128_t yb = wasm_v128_load32_splat(y);                                                       \
      for (; i + 16 <= len; i += 16) {                                                             \
        v128_t m[4];                                                                               \
        for (int q = 0; q < 4; q++) {                                                              \
          v128_t a = wasm_v128_load(x + i + 4 * q), b = sy ? wasm_v128_load(y + i + 4 * q) : yb;   \
          m[q] = VCMP(a, b);                                                                       \
        }                                                                                          \
        wasm_v128_store(o + i, masks_to_bools(m[0], m[1], m[2], m[3]));                            \
      }                                                                                            \
    }                                                                                              \
    for (; i < len; i++) {                                                                         \
      T a = x[i * sx], b = y[i * sy];                                                              \
      o[i * so] = (SCMP) ? 1 : 0;                                                                  \
    }                                                                                              \
  } while (0)

static void compare_run(int op, const float *x, int sx, const float *y, int sy, uint8_t *o, int so, int len) {
  switch (op) {
  case OP_EQ: COMPARE_LOOP(float, wasm_f32x4_eq, a == b); break;
  case OP_NE: COMPARE_LOOP(float, wasm_f32x4_ne, a != b); break;
  case OP_LT: COMPARE_LOOP(float, wasm_f32x4_lt, a < b); break;
  case OP_LE: COMPARE_LOOP(float, wasm_f32x4_le, a <= b); break;
  case OP_GT: COMPARE_LOOP(float, wasm_f32x4_gt, a > b); break;
  case OP_GE: COMPARE_LOOP(float, wasm_f32x4_ge, a >= b); break;
  }
}

static void compare_i32_run(int op, const int32_t *x, int sx, const int32_t *y, int sy, uint8_t *o, int so, int len) {
  switch (op) {
  case OP_EQ_I32: COMPARE_LOOP(int32_t, wasm_i32x4_eq, a == b); break;
  case OP_NE_I32: COMPARE_LOOP(int32_t, wasm_i32x4_ne, a != b); break;
  case OP_LT_I32: COMPARE_LOOP(int32_t, wasm_i32x4_lt, a < b); break;
  case OP_LE_I32: COMPARE_LOOP(int32_t, wasm_i32x4_le, a <= b); break;
  case OP_GT_I32: COMPARE_LOOP(int32_t, wasm_i32x4_gt, a > b); break;
  case OP_GE_I32: COMPARE_LOOP(int32_t, wasm_i32x4_ge, a >= b); break;
  }
}

static void bool_to_f32_run(const uint8_t *x, int sx, float *o, int so, int len) {
  for (int i = 0; i < len; i++) o[i * so] = x[i * sx] ? 1.0f : 0.0f;
}

// out = z ? x : y, any bool byte other than 0 counting as true; bits pass unchanged.
static void where_run(const uint8_t *z, int sz, const int32_t *x, int sx, const int32_t *y, int sy, int32_t *o, int so, int len) {
  int i = 0;
  if (sz == 1 && so == 1 && (sx == 1 || sx == 0) && (sy == 1 || sy == 0)) {
    v128_t xb = wasm_v128_load32_splat(x), yb = wasm_v128_load32_splat(y), zero = wasm_i32x4_splat(0);
    for (; i + 4 <= len; i += 4) {
      v128_t c = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(z + i)));
      v128_t a = sx ? wasm_v128_load(x + i) : xb, b = sy ? wasm_v128_load(y + i) : yb;
      wasm_v128_store(o + i, wasm_v128_bitselect(b, a, wasm_i32x4_eq(c, zero)));
    }
  }
  for (; i < len; i++) o[i * so] = z[i * sz] ? x[i * sx] : y[i * sy];
}

static void cast_run(int op, const void *x, int sx, void *o, int so, int len) {
  const float *xf = (const float *)x;
  const uint16_t *xh = (const uint16_t *)x;
  float *of = (float *)o;
  uint16_t *oh = (uint16_t *)o;
  switch (op) {
  case OP_F32_TO_F16: for (int i = 0; i < len; i++) oh[i * so] = f32_to_f16(xf[i * sx]); break;
  case OP_F32_TO_BF16: for (int i = 0; i < len; i++) oh[i * so] = f32_to_bf16(xf[i * sx]); break;
  case OP_F16_TO_F32: for (int i = 0; i < len; i++) of[i * so] = f16_to_f32(xh[i * sx]); break;
  case OP_BF16_TO_F32: for (int i = 0; i < len; i++) of[i * so] = bf16_to_f32(xh[i * sx]); break;
  }
}

static inline uint16_t f32_to_half(float v, int type) { return type == T_F16 ? f32_to_f16(v) : f32_to_bf16(v); }

// The binary, unary, compare and where ops on half operands: each value widened exactly to f32,
// the op computed in f32 (a correctly rounded f32 result, as the TypeScript kernels get from f64
// and one rounding), the result rounded once to the half type. Operands are base pointers plus
// element offsets and strides, as in op_run.
static void half_run(int op, int t, const void *xb, int ox, int sx, const void *yb, int oy, int sy, const void *zb, int oz,
                     int sz, void *ob, int oo, int so, int len) {
  const uint16_t *x = (const uint16_t *)xb + ox, *y = (const uint16_t *)yb + oy;
  if (in_group(op, OP_BINARY) || op == OP_ADDCMUL || in_group(op, OP_UNARY)) {
    uint16_t *o = (uint16_t *)ob + oo;
    for (int i = 0; i < len; i++) {
      float a = load_as_f32(x, t, i * sx), r;
      switch (op) {
      case OP_ADD: r = a + load_as_f32(y, t, i * sy); break;
      case OP_SUB: r = a - load_as_f32(y, t, i * sy); break;
      case OP_MUL: r = a * load_as_f32(y, t, i * sy); break;
      case OP_DIV: r = a / load_as_f32(y, t, i * sy); break;
      case OP_ADDCMUL: {
        float p = load_as_f32(y, t, i * sy) * load_as_f32((const uint16_t *)zb + oz, t, i * sz);
        r = a + p;
        break;
      }
      case OP_NEG: r = -a; break;
      case OP_ABS: r = __builtin_fabsf(a); break;
      case OP_RELU: r = a > 0 ? a : (a != a ? a : 0.0f); break;
      default: r = __builtin_sqrtf(a); break;
      }
      o[i * so] = f32_to_half(r, t);
    }
  } else if (in_group(op, OP_COMPARE)) {
    uint8_t *o = (uint8_t *)ob + oo;
    for (int i = 0; i < len; i++) {
      float a = load_as_f32(x, t, i * sx), b = load_as_f32(y, t, i * sy);
      int r = op == OP_EQ ? a == b : op == OP_NE ? a != b : op == OP_LT ? a < b : op == OP_LE ? a <= b : op == OP_GT ? a > b : a >= b;
      o[i * so] = (uint8_t)r;
    }
  } else { // OP_WHERE: 16-bit patterns pass unchanged
    const uint8_t *z = (const uint8_t *)zb + oz;
    uint16_t *o = (uint16_t *)ob + oo;
    for (int i = 0; i < len; i++) o[i * so] = z[i * sz] ? x[i * sx] : y[i * sy];
  }
}

// One elementwise op (EltArgs.op, element type t) over `len` elements: each operand is a base
// pointer, the element offset of its first element, and its element stride. Both elementwise_task
// and fused_task run their ops through here, so a fused chain computes every element with the
// very code a standalone call does.
static inline void op_run(int op, int t, const void *xb, int ox, int sx, const void *yb, int oy, int sy, const void *zb, int oz,
                          int sz, void *ob, int oo, int so, int len) {
  if (t != T_F32) {
    half_run(op, t, xb, ox, sx, yb, oy, sy, zb, oz, sz, ob, oo, so, len);
    return;
  }
  if (op == OP_ADDCMUL)
    addcmul_run((const float *)xb + ox, sx, (const float *)yb + oy, sy, (const float *)zb + oz, sz, (float *)ob + oo, so, len);
  else if (in_group(op, OP_BINARY))
    binary_run(op, (const float *)xb + ox, sx, (const float *)yb + oy, sy, (float *)ob + oo, so, len);
  else if (in_group(op, OP_UNARY))
    unary_run(op, (const float *)xb + ox, sx, (float *)ob + oo, so, len);
  else if (in_group(op, OP_COMPARE))
    compare_run(op, (const float *)xb + ox, sx, (const float *)yb + oy, sy, (uint8_t *)ob + oo, so, len);
  else if (in_group(op, OP_COMPARE_I32))
    compare_i32_run(op, (const int32_t *)xb + ox, sx, (const int32_t *)yb + oy, sy, (uint8_t *)ob + oo, so, len);
  else if (op == OP_COPY32)
    copy32_run((const int32_t *)xb + ox, sx, (int32_t *)ob + oo, so, len);
  else if (op == OP_COPY16)
    copy16_run((const uint16_t *)xb + ox, sx, (uint16_t *)ob + oo, so, len);
  else if (op == OP_COPY8)
    copy8_run((const uint8_t *)xb + ox, sx, (uint8_t *)ob + oo, so, len);
  else if (op == OP_BOOL_TO_F32)
    bool_to_f32_run((const uint8_t *)xb + ox, sx, (float *)ob + oo, so, len);
  else if (op == OP_F32_TO_F16 || op == OP_F32_TO_BF16)
    cast_run(op, (const float *)xb + ox, sx, (uint16_t *)ob + oo, so, len);
  else if (op == OP_F16_TO_F32 || op == OP_BF16_TO_F32)
    cast_run(op, (const uint16_t *)xb + ox, sx, (float *)ob + oo, so, len);
  else
    where_run((const uint8_t *)zb + oz, sz, (const int32_t *)xb + ox, sx, (const int32_t *)yb + oy, sy, (int32_t *)ob + oo, so, len);
}

static inline void inner_run(const EltArgs *e, int ox, int oy, int oz, int oo, int len) {
  int d = e->ndim - 1;
  op_run(e->op, e->type, (const void *)e->x, ox, e->sx[d], (const void *)e->y, oy, e->sy[d], (const void *)e->z, oz, e->sz[d],
         (void *)e->out, oo, e->so[d], len);
}

EXPORT(elementwise_task) void elementwise_task(int thread, int task, const EltArgs *e) {
  int begin = task * e->chunk, end = min_int(begin + e->chunk, e->numel);
  int nd = e->ndim, *idx = (int *)(e->scratch + thread * e->scratch_bytes);
  // The multi-index of `begin`, last dim fastest; offsets in elements of each operand.
  int rem = begin, ox = 0, oy = 0, oz = 0, oo = 0;
  for (int d = nd - 1; d >= 0; d--) {
    idx[d] = rem % e->shape[d];
    rem /= e->shape[d];
    ox += idx[d] * e->sx[d];
    oy += idx[d] * e->sy[d];
    oz += idx[d] * e->sz[d];
    oo += idx[d] * e->so[d];
  }
  int inner = e->shape[nd - 1];
  for (int pos = begin; pos < end;) {
    int len = min_int(inner - idx[nd - 1], end - pos);
    inner_run(e, ox, oy, oz, oo, len);
    pos += len;
    // Step to the start of the next inner run: carry into the outer dims.
    ox += len * e->sx[nd - 1];
    oy += len * e->sy[nd - 1];
    oz += len * e->sz[nd - 1];
    oo += len * e->so[nd - 1];
    idx[nd - 1] += len;
    for (int d = nd - 1; d > 0 && idx[d] == e->shape[d]; d--) {
      ox += e->sx[d - 1] - e->shape[d] * e->sx[d];
      oy += e->sy[d - 1] - e->shape[d] * e->sy[d];
      oz += e->sz[d - 1] - e->shape[d] * e->sz[d];
      oo += e->so[d - 1] - e->shape[d] * e->so[d];
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A fused chain of elementwise ops (a prepared program's consecutive elementwise_task calls over
// one element count, src/wasm/fusion.ts): a tiny program run tile by tile, so an intermediate that
// a later op reads stays in a per-thread tile buffer (a slot) while the tile is in cache, and one
// nothing reads afterwards is never written to memory. Every operand walks the flat index as a 2-D
// view [numel / cols, cols] of its own strides; a slot holds a tile's elements contiguously. Each
// op runs through op_run, as elementwise_task does, so every element gets the same bits.

typedef struct {
  int addr;   // byte address; 0: unused; negative: slot −addr − 1 of the tile buffers
  int s0, s1; // element strides over [rows, cols]
} FusedOperand;

typedef struct {
  int op, type; // as EltArgs
  int rows;     // 1: an operand's row stride is not cols × its column stride (a broadcast row), so runs stop at row ends
  FusedOperand x, y, z, out;
} FusedOp;

typedef struct {
  int numel, chunk, cols, count; // task t covers flat indices [t·chunk, …); count ops
  int scratch, scratch_bytes;    // per-thread scratch, as in GemmArgs: the slots, `tile` elements of ≤ 4 bytes each
  int tile;
  FusedOp ops[];
} FusedArgs;

static inline const void *fused_base(const FusedOperand *q, char *slots, int slot_bytes) {
  return q->addr < 0 ? (const void *)(slots + (-q->addr - 1) * slot_bytes) : (const void *)q->addr;
}

// The element offset of flat index (row, col) = pos, in a tile that starts at flat index `start`.
static inline int fused_offset(const FusedOperand *q, int row, int col, int pos, int start) {
  return q->addr < 0 ? pos - start : row * q->s0 + col * q->s1;
}

static inline int fused_stride(const FusedOperand *q) { return q->addr < 0 ? 1 : q->s1; }

// Op f over flat indices [pos, pos + len) of the tile starting at `start` (one run: the whole range
// is one strided line for every operand).
static inline void fused_op_run(const FusedOp *f, char *slots, int slot_bytes, int cols, int pos, int start, int len) {
  int row = pos / cols, col = pos - row * cols;
  op_run(f->op, f->type,
         fused_base(&f->x, slots, slot_bytes), fused_offset(&f->x, row, col, pos, start), fused_stride(&f->x),
         fused_base(&f->y, slots, slot_bytes), fused_offset(&f->y, row, col, pos, start), fused_stride(&f->y),
         fused_base(&f->z, slots, slot_bytes), fused_offset(&f->z, row, col, pos, start), fused_stride(&f->z),
         (void *)fused_base(&f->out, slots, slot_bytes), fused_offset(&f->out, row, col, pos, start), fused_stride(&f->out), len);
}

EXPORT(fused_task) void fused_task(int thread, int task, const FusedArgs *a) {
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->numel), cols = a->cols;
  char *slots = (char *)(a->scratch + thread * a->scratch_bytes);
  int slot_bytes = a->tile * 4;
  for (int start = begin; start < end; start += a->tile) {
    int stop = min_int(start + a->tile, end);
    for (int k = 0; k < a->count; k++) {
      const FusedOp *f = &a->ops[k];
      if (!f->rows) {
        fused_op_run(f, slots, slot_bytes, cols, start, start, stop - start);
        continue;
      }
      for (int pos = start; pos < stop;) { // a run per row (piece)
        int len = min_int(cols - pos % cols, stop - pos);
        fused_op_run(f, slots, slot_bytes, cols, pos, start, len);
        pos += len;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Sum of a contiguous f32 block viewed as [outer, length, inner] over its middle axis, into
// [outer, inner]. Task t covers outer rows [t·chunk, …). Lane-wise partial sums: the order
// differs from a sequential loop, which the reduction tolerance allows.

typedef struct {
  int x, out;
  int outer, length, inner;
  int chunk;
} ReduceArgs;

static float sum_run(const float *x, int n) {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = wasm_f32x4_add(s0, wasm_v128_load(x + i));
    s1 = wasm_f32x4_add(s1, wasm_v128_load(x + i + 4));
    s2 = wasm_f32x4_add(s2, wasm_v128_load(x + i + 8));
    s3 = wasm_f32x4_add(s3, wasm_v128_load(x + i + 12));
  }
  for (; i + 4 <= n; i += 4) s0 = wasm_f32x4_add(s0, wasm_v128_load(x + i));
  v128_t s = wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3));
  float total = (wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1)) +
                (wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3));
  for (; i < n; i++) total += x[i];
  return total;
}

EXPORT(reduce_f32_task) void reduce_f32_task(int thread, int task, const ReduceArgs *r) {
  (void)thread;
  int begin = task * r->chunk, end = min_int(begin + r->chunk, r->outer);
  const float *x = (const float *)r->x;
  float *out = (float *)r->out;
  for (int o = begin; o < end; o++) {
    const float *block = x + o * r->length * r->inner;
    float *dst = out + o * r->inner;
    if (r->inner == 1) {
      dst[0] = sum_run(block, r->length);
      continue;
    }
    int j = 0;
    for (; j + 4 <= r->inner; j += 4) {
      v128_t s = wasm_f32x4_splat(0.0f);
      for (int i = 0; i < r->length; i++) s = wasm_f32x4_add(s, wasm_v128_load(block + i * r->inner + j));
      wasm_v128_store(dst + j, s);
    }
    for (; j < r->inner; j++) {
      float s = 0.0f;
      for (int i = 0; i < r->length; i++) s += block[i * r->inner + j];
      dst[j] = s;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax and log-softmax over the last axis of a contiguous f32 [rows, length] block.

typedef struct {
  int x, out;
  int rows, length;
  int chunk;
  int log; // 1: log-softmax
} SoftmaxArgs;

// e^x for x ≤ 0 (softmax exponents: x − max): 2^n · e^r with n = round(x / ln 2), r = x − n·ln 2
// (ln 2 split in two so r is exact), e^r by its degree-7 Taylor polynomial (|r| ≤ ln2/2: error
// below 1e-8 relative). Below −87.3 the result would be subnormal and is flushed to 0; NaN stays NaN.
static inline v128_t exp_nonpositive(v128_t x) {
  const v128_t lo = wasm_f32x4_splat(-87.3f);
  v128_t xc = wasm_f32x4_max(x, lo); // f32x4.max propagates NaN
  v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(xc, wasm_f32x4_splat(1.44269504088896341f)));
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.0f / 5040.0f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 720.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 120.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 24.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f / 6.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(0.5f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.0f));
  v128_t scale = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
  v128_t result = wasm_f32x4_mul(p, scale);
  return wasm_v128_bitselect(wasm_f32x4_splat(0.0f), result, wasm_f32x4_lt(x, lo));
}

// ln(s) in f64 for s ≥ 1 or NaN (a softmax denominator): s = 2^e · m with m in [√½, √2), then
// ln m = 2·atanh(z), z = (m − 1)/(m + 1), |z| ≤ 0.172, by its odd series to z^15.
static double log_f64(double s) {
  if (s != s) return s; // a NaN in the row: every output is NaN
  union { double d; uint64_t u; } bits = {s};
  int e = (int)((bits.u >> 52) & 0x7ff) - 1023;
  bits.u = (bits.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL; // m in [1, 2)
  double m = bits.d;
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e++;
  }
  double z = (m - 1.0) / (m + 1.0), z2 = z * z;
  double series = 1.0 / 15.0;
  for (int k = 13; k >= 1; k -= 2) series = series * z2 + 1.0 / k;
  return e * 0.6931471805599453 + 2.0 * z * series;
}

EXPORT(softmax_f32_task) void softmax_f32_task(int thread, int task, const SoftmaxArgs *a) {
  (void)thread;
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->rows), n = a->length;
  for (int row = begin; row < end; row++) {
    const float *x = (const float *)a->x + row * n;
    float *out = (float *)a->out + row * n;
    // Pass 1: the row max (NaN propagates through f32x4.max and the scalar tail check).
    v128_t mv = wasm_f32x4_splat(-__builtin_inff());
    int i = 0;
    for (; i + 4 <= n; i += 4) mv = wasm_f32x4_max(mv, wasm_v128_load(x + i));
    float max = wasm_f32x4_extract_lane(mv, 0);
    for (int lane = 1; lane < 4; lane++) {
      float v = lane == 1 ? wasm_f32x4_extract_lane(mv, 1) : lane == 2 ? wasm_f32x4_extract_lane(mv, 2) : wasm_f32x4_extract_lane(mv, 3);
      if (v > max || v != v) max = v;
    }
    for (; i < n; i++)
      if (x[i] > max || x[i] != x[i]) max = x[i];
    // Pass 2: e^(x − max) into out, summed in f64 per lane group.
    v128_t vmax = wasm_f32x4_splat(max);
    double sum = 0.0;
    for (i = 0; i + 4 <= n; i += 4) {
      v128_t e = exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + i), vmax));
      wasm_v128_store(out + i, e);
      sum += (double)(wasm_f32x4_extract_lane(e, 0) + wasm_f32x4_extract_lane(e, 1)) +
             (double)(wasm_f32x4_extract_lane(e, 2) + wasm_f32x4_extract_lane(e, 3));
    }
    for (; i < n; i++) {
      v128_t e = exp_nonpositive(wasm_f32x4_splat(x[i] - max));
      out[i] = wasm_f32x4_extract_lane(e, 0);
      sum += out[i];
    }
    // Pass 3: normalise.
    if (a->log) {
      float log_sum = (float)log_f64(sum);
      v128_t vlog = wasm_f32x4_splat(log_sum);
      for (i = 0; i + 4 <= n; i += 4)
        wasm_v128_store(out + i, wasm_f32x4_sub(wasm_f32x4_sub(wasm_v128_load(x + i), vmax), vlog));
      for (; i < n; i++) out[i] = (x[i] - max) - log_sum;
    } else {
      v128_t total = wasm_f32x4_splat((float)sum);
      for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(out + i, wasm_f32x4_div(wasm_v128_load(out + i), total));
      for (; i < n; i++) out[i] = out[i] / (float)sum;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One Adam/AdamW update of float32 parameters in place (the contract's fused adamw), op for op
// the TypeScript kernel's f32 arithmetic, so the results are the same bits. The scalars are
// computed (and rounded to f32) by the caller.

typedef struct {
  int p, g, m, v, vmax; // byte addresses; vmax 0 without amsgrad
  int numel, chunk;
  int maximize, weight_decay, decoupled, lerp_from_m; // flags
  float decay, wd, lerp_w, b2, one_minus_b2, bc2, eps, neg_step;
} AdamArgs;

EXPORT(adamw_task) void adamw_task(int thread, int task, const AdamArgs *a) {
  (void)thread;
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->numel);
  float *p = (float *)a->p, *m = (float *)a->m, *v = (float *)a->v, *vmax = (float *)a->vmax;
  const float *g = (const float *)a->g;
  const v128_t decay = wasm_f32x4_splat(a->decay), wd = wasm_f32x4_splat(a->wd), lerp_w = wasm_f32x4_splat(a->lerp_w);
  const v128_t b2 = wasm_f32x4_splat(a->b2), omb2 = wasm_f32x4_splat(a->one_minus_b2), bc2 = wasm_f32x4_splat(a->bc2);
  const v128_t eps = wasm_f32x4_splat(a->eps), neg_step = wasm_f32x4_splat(a->neg_step);
  int i = begin;
  for (; i + 4 <= end; i += 4) {
    v128_t gi = wasm_v128_load(g + i), pi = wasm_v128_load(p + i), mi = wasm_v128_load(m + i), vi = wasm_v128_load(v + i);
    if (a->maximize) gi = wasm_f32x4_neg(gi);
    if (a->weight_decay) {
      if (a->decoupled) pi = wasm_f32x4_mul(pi, decay);
      else gi = wasm_f32x4_add(gi, wasm_f32x4_mul(pi, wd));
    }
    v128_t diff = wasm_f32x4_sub(gi, mi);
    mi = a->lerp_from_m ? wasm_f32x4_add(mi, wasm_f32x4_mul(diff, lerp_w)) : wasm_f32x4_sub(gi, wasm_f32x4_mul(diff, lerp_w));
    vi = wasm_f32x4_add(wasm_f32x4_mul(vi, b2), wasm_f32x4_mul(wasm_f32x4_mul(gi, omb2), gi));
    wasm_v128_store(m + i, mi);
    wasm_v128_store(v + i, vi);
    if (vmax) {
      vi = wasm_f32x4_max(wasm_v128_load(vmax + i), vi); // NaN-propagating, like Math.max
      wasm_v128_store(vmax + i, vi);
    }
    v128_t denom = wasm_f32x4_add(wasm_f32x4_div(wasm_f32x4_sqrt(vi), bc2), eps);
    wasm_v128_store(p + i, wasm_f32x4_add(pi, wasm_f32x4_div(wasm_f32x4_mul(mi, neg_step), denom)));
  }
  for (; i < end; i++) {
    float gi = a->maximize ? -g[i] : g[i], pi = p[i], mi = m[i], vi = v[i];
    if (a->weight_decay) {
      if (a->decoupled) pi = pi * a->decay;
      else gi = gi + pi * a->wd;
    }
    float diff = gi - mi;
    mi = a->lerp_from_m ? mi + diff * a->lerp_w : gi - diff * a->lerp_w;
    vi = vi * a->b2 + (gi * a->one_minus_b2) * gi;
    m[i] = mi;
    v[i] = vi;
    if (vmax) {
      float old = vmax[i];
      vi = (old != old || vi != vi) ? __builtin_nanf("") : (old > vi ? old : vi);
      vmax[i] = vi;
    }
    float denom = __builtin_sqrtf(vi) / a->bc2 + a->eps;
    p[i] = pi + (mi * a->neg_step) / denom;
  }
}

// ---------------------------------------------------------------------------------------------
// One Adadelta or RMSprop update of float32 parameters in place (the contract's fused adadelta
// and rmsprop), op for op the TypeScript kernels' f32 arithmetic, so the results are the same
// bits. The scalars are rounded to f32 by the caller. Four lanes at a time; the last one to three
// elements go through the same lanes, loaded and stored one by one (no stack: see build.mjs).

/** `count` (1 to 4) floats from x, the other lanes 0. */
static inline v128_t load_lanes(const float *x, int count) {
  if (count == 4) return wasm_v128_load(x);
  return wasm_f32x4_make(x[0], count > 1 ? x[1] : 0.0f, count > 2 ? x[2] : 0.0f, 0.0f);
}

/** The first `count` (1 to 4) lanes of v into x. */
static inline void store_lanes(float *x, v128_t v, int count) {
  if (count == 4) {
    wasm_v128_store(x, v);
    return;
  }
  x[0] = wasm_f32x4_extract_lane(v, 0);
  if (count > 1) x[1] = wasm_f32x4_extract_lane(v, 1);
  if (count > 2) x[2] = wasm_f32x4_extract_lane(v, 2);
}

typedef struct {
  int p, g, v, u; // byte addresses: the square average v, the accumulated delta u
  int numel, chunk;
  int maximize, weight_decay; // flags
  float rho, one_minus_rho, eps, wd, neg_lr;
} AdadeltaArgs;

static inline void adadelta_lanes(const AdadeltaArgs *a, int i, int count) {
  float *p = (float *)a->p + i, *v = (float *)a->v + i, *u = (float *)a->u + i;
  v128_t gi = load_lanes((const float *)a->g + i, count), pi = load_lanes(p, count), ui = load_lanes(u, count);
  const v128_t rho = wasm_f32x4_splat(a->rho), omr = wasm_f32x4_splat(a->one_minus_rho), eps = wasm_f32x4_splat(a->eps);
  if (a->maximize) gi = wasm_f32x4_neg(gi);
  if (a->weight_decay) gi = wasm_f32x4_add(gi, wasm_f32x4_mul(pi, wasm_f32x4_splat(a->wd)));
  v128_t vi = wasm_f32x4_add(wasm_f32x4_mul(load_lanes(v, count), rho), wasm_f32x4_mul(wasm_f32x4_mul(gi, omr), gi));
  v128_t std = wasm_f32x4_sqrt(wasm_f32x4_add(vi, eps));
  v128_t delta = wasm_f32x4_mul(wasm_f32x4_div(wasm_f32x4_sqrt(wasm_f32x4_add(ui, eps)), std), gi);
  ui = wasm_f32x4_add(wasm_f32x4_mul(ui, rho), wasm_f32x4_mul(wasm_f32x4_mul(delta, omr), delta));
  store_lanes(v, vi, count);
  store_lanes(u, ui, count);
  store_lanes(p, wasm_f32x4_add(pi, wasm_f32x4_mul(delta, wasm_f32x4_splat(a->neg_lr))), count);
}

EXPORT(adadelta_task) void adadelta_task(int thread, int task, const AdadeltaArgs *a) {
  (void)thread;
  int i = task * a->chunk, end = min_int(i + a->chunk, a->numel);
  for (; i + 4 <= end; i += 4) adadelta_lanes(a, i, 4);
  if (i < end) adadelta_lanes(a, i, end - i);
}

typedef struct {
  int p, g, v, b, a; // byte addresses: the square average v, the momentum buffer b and gradient average a (0: none)
  int numel, chunk;
  int maximize, weight_decay; // flags
  float alpha, one_minus_alpha, eps, wd, momentum, neg_lr;
} RmspropArgs;

static inline void rmsprop_lanes(const RmspropArgs *r, int i, int count) {
  float *p = (float *)r->p + i, *v = (float *)r->v + i;
  v128_t gi = load_lanes((const float *)r->g + i, count), pi = load_lanes(p, count);
  const v128_t alpha = wasm_f32x4_splat(r->alpha), oma = wasm_f32x4_splat(r->one_minus_alpha);
  if (r->maximize) gi = wasm_f32x4_neg(gi);
  if (r->weight_decay) gi = wasm_f32x4_add(gi, wasm_f32x4_mul(pi, wasm_f32x4_splat(r->wd)));
  v128_t variance = wasm_f32x4_add(wasm_f32x4_mul(load_lanes(v, count), alpha), wasm_f32x4_mul(wasm_f32x4_mul(gi, oma), gi));
  store_lanes(v, variance, count);
  if (r->a) {
    float *a = (float *)r->a + i;
    v128_t mean = wasm_f32x4_add(wasm_f32x4_mul(load_lanes(a, count), alpha), wasm_f32x4_mul(gi, oma));
    store_lanes(a, mean, count);
    variance = wasm_f32x4_sub(variance, wasm_f32x4_mul(mean, mean));
  }
  v128_t avg = wasm_f32x4_add(wasm_f32x4_sqrt(variance), wasm_f32x4_splat(r->eps));
  const v128_t neg_lr = wasm_f32x4_splat(r->neg_lr);
  if (r->b) {
    float *b = (float *)r->b + i;
    v128_t bi = wasm_f32x4_add(wasm_f32x4_mul(load_lanes(b, count), wasm_f32x4_splat(r->momentum)), wasm_f32x4_div(gi, avg));
    store_lanes(b, bi, count);
    store_lanes(p, wasm_f32x4_add(pi, wasm_f32x4_mul(bi, neg_lr)), count);
  } else {
    store_lanes(p, wasm_f32x4_add(pi, wasm_f32x4_div(wasm_f32x4_mul(gi, neg_lr), avg)), count);
  }
}

EXPORT(rmsprop_task) void rmsprop_task(int thread, int task, const RmspropArgs *r) {
  (void)thread;
  int i = task * r->chunk, end = min_int(i + r->chunk, r->numel);
  for (; i + 4 <= end; i += 4) rmsprop_lanes(r, i, 4);
  if (i < end) rmsprop_lanes(r, i, end - i);
}

// ---------------------------------------------------------------------------------------------
// Per-row cross entropy of contiguous float32 logits [rows, classes] against int32 targets (the
// contract's fused crossEntropy): lse − (1 − ε)·x[t] − (ε/C)·Σx, 0 for ignored rows, NaN for a
// target outside [0, C). The exponentials are summed in f64, the rest combined in f64 as the
// TypeScript kernel does, and each row rounded once to f32.

typedef struct {
  int x, target, out;
  int rows, classes, chunk;
  int ignore_index;
  float smoothing;
} CrossEntropyArgs;

EXPORT(cross_entropy_task) void cross_entropy_task(int thread, int task, const CrossEntropyArgs *a) {
  (void)thread;
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->rows), n = a->classes;
  const int32_t *targets = (const int32_t *)a->target;
  float *out = (float *)a->out;
  for (int row = begin; row < end; row++) {
    int t = targets[row];
    if (t == a->ignore_index) {
      out[row] = 0.0f;
      continue;
    }
    if (t < 0 || t >= n) {
      out[row] = __builtin_nanf("");
      continue;
    }
    const float *x = (const float *)a->x + row * n;
    float max = -__builtin_inff();
    double total = 0.0;
    for (int i = 0; i < n; i++) {
      if (x[i] > max || x[i] != x[i]) max = x[i];
      total += x[i];
    }
    v128_t vmax = wasm_f32x4_splat(max);
    double sum = 0.0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      v128_t e = exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + i), vmax));
      sum += (double)(wasm_f32x4_extract_lane(e, 0) + wasm_f32x4_extract_lane(e, 1)) +
             (double)(wasm_f32x4_extract_lane(e, 2) + wasm_f32x4_extract_lane(e, 3));
    }
    for (; i < n; i++) sum += wasm_f32x4_extract_lane(exp_nonpositive(wasm_f32x4_splat(x[i] - max)), 0);
    double lse = (double)max + log_f64(sum), picked = x[t], s = a->smoothing;
    out[row] = (float)(s == 0.0 ? lse - picked : lse - (1.0 - s) * picked - (s / n) * total);
  }
}

// ---------------------------------------------------------------------------------------------
// out[i][j] = x[i + j·ld] for 32-bit elements: a transposing copy (x column-major, out row-major
// with row pitch out_rs), by 4×4 blocks of SIMD transposes. Task t covers rows [t·chunk, …).

typedef struct {
  int x, out;
  int rows, cols, x_ld, out_rs;
  int chunk;
} TransposeArgs;

EXPORT(transpose32_task) void transpose32_task(int thread, int task, const TransposeArgs *a) {
  (void)thread;
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->rows), cols = a->cols, ld = a->x_ld, rs = a->out_rs;
  const int32_t *x = (const int32_t *)a->x;
  int32_t *out = (int32_t *)a->out;
  int i = begin;
  for (; i + 4 <= end; i += 4) {
    int j = 0;
    for (; j + 4 <= cols; j += 4) {
      v128_t r0 = wasm_v128_load(x + i + j * ld), r1 = wasm_v128_load(x + i + (j + 1) * ld);
      v128_t r2 = wasm_v128_load(x + i + (j + 2) * ld), r3 = wasm_v128_load(x + i + (j + 3) * ld);
      TRANSPOSE4(r0, r1, r2, r3);
      wasm_v128_store(out + i * rs + j, r0);
      wasm_v128_store(out + (i + 1) * rs + j, r1);
      wasm_v128_store(out + (i + 2) * rs + j, r2);
      wasm_v128_store(out + (i + 3) * rs + j, r3);
    }
    for (; j < cols; j++)
      for (int q = 0; q < 4; q++) out[(i + q) * rs + j] = x[i + q + j * ld];
  }
  for (; i < end; i++)
    for (int j = 0; j < cols; j++) out[i * rs + j] = x[i + j * ld];
}

// ---------------------------------------------------------------------------------------------
// Along one axis of contiguous blocks viewed as [outer, length, inner]: argmax/argmin of float32
// (the first index; NaN counts as both the maximum and the minimum, so the first NaN wins), and
// gather / scatter-add of float32 through int32 indices (index and out share their shape
// [outer, count, inner]; indices are in range, core checks). Task t covers outer rows [t·chunk, …).

typedef struct {
  int op; // AXIS_ARGMAX, AXIS_ARGMIN, AXIS_GATHER, AXIS_SCATTER_ADD (generated/op-codes.h)
  int x, index, out;
  int outer, length, count, inner;
  int chunk;
} AxisArgs;

EXPORT(axis_task) void axis_task(int thread, int task, const AxisArgs *a) {
  (void)thread;
  int begin = task * a->chunk, end = min_int(begin + a->chunk, a->outer);
  int length = a->length, count = a->count, inner = a->inner;
  const float *x = (const float *)a->x;
  const int32_t *index = (const int32_t *)a->index;
  for (int o = begin; o < end; o++) {
    if (a->op == AXIS_ARGMAX || a->op == AXIS_ARGMIN) {
      int32_t *out = (int32_t *)a->out + o * inner;
      const float *row = x + o * length * inner;
      for (int k = 0; k < inner; k++) {
        float best = row[k];
        int at = 0;
        for (int i = 1; i < length && best == best; i++) {
          float v = row[i * inner + k];
          if (v != v || (a->op == AXIS_ARGMAX ? v > best : v < best)) {
            best = v;
            at = i;
          }
        }
        out[k] = at;
      }
    } else if (a->op == AXIS_GATHER) {
      float *out = (float *)a->out + o * count * inner;
      const int32_t *idx = index + o * count * inner;
      const float *src = x + o * length * inner;
      for (int j = 0; j < count; j++)
        for (int k = 0; k < inner; k++) out[j * inner + k] = src[idx[j * inner + k] * inner + k];
    } else {
      // scatter-add: x is the destination [outer, length, inner], out the source [outer, count, inner].
      float *dst = (float *)a->x + o * length * inner;
      const float *src = (const float *)a->out + o * count * inner;
      const int32_t *idx = index + o * count * inner;
      for (int j = 0; j < count; j++)
        for (int k = 0; k < inner; k++) dst[idx[j * inner + k] * inner + k] += src[j * inner + k];
    }
  }
}
