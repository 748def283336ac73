// The elementwise primitives' math, written once for every target that compiles its own kernels:
// WGSL (packages/backend-webgpu) and CUDA C++ (native/cuda). generate.mjs turns it into
// packages/backend-webgpu/src/generated/elementwise-expressions.ts and
// native/cuda/generated/elementwise-expressions.cuh.
//
// Per op and value kind — float (float32, and float16/bfloat16 computed in f32: decoded exactly,
// rounded once on store), int (int32, wrapping), bool (0/1 held as int32) — an entry has:
//   expr    the expression both targets use, over `x` (unary) or `a` and `b` (binary, compare);
//   wgsl    WGSL's own, where the languages differ. Its helpers live in wgsl/lib.ts: WGSL lets a
//           driver assume no NaN/Inf and round division and transcendentals loosely, so the WGSL
//           side decides NaN on the bits and computes with exact f32 routines;
//   cuda    CUDA's own: math.h functions (nvcc's device versions, or the host's in the emulated
//           kernel tests), and unsigned casts where C++ would overflow a signed int;
//   truth   the expression is a truth value (logical and compare ops): WGSL keeps it a bool (the
//           kernel stores 0/1), CUDA turns it into 1/0 of the kind's type.
// A kind left out means the op does not take it: core promotes such inputs first (WGSL throws,
// CUDA passes the value through). Helpers named the same in both targets (remainder_f, pow_i,
// remainder_i) let one `expr` serve both.

/** A float function both targets have under their own names: lib.ts's exact `name_f`, math.h's `namef`. */
const f32Fn = (name, args = 'x') => ({ wgsl: `${name}_f(${args})`, cuda: `${name}f(${args})` });

/** floor/ceil/round/trunc of an integer (or bool) is the value itself. */
const IDENTITY = { expr: 'x' };
const NOT_INT = { truth: true, wgsl: '(x == 0i)', cuda: 'x == 0' };
// Also PyTorch's bool arithmetic: add and maximum are "or", mul and minimum are "and".
const AND_INT = { truth: true, wgsl: '(a != 0i && b != 0i)', cuda: 'a != 0 && b != 0' };
const OR_INT = { truth: true, wgsl: '(a != 0i || b != 0i)', cuda: 'a != 0 || b != 0' };
const ROUNDING = { int: IDENTITY, bool: IDENTITY };

export const UNARY = {
  // CUDA's int negation wraps at -2^31, as C does on the CPU backend.
  neg: { float: { wgsl: 'f_neg(x)', cuda: '-x' }, int: { wgsl: '(0i - x)', cuda: '(int32_t)(0u - (uint32_t)x)' } },
  abs: { float: { wgsl: 'f_abs(x)', cuda: 'fabsf(x)' }, int: { wgsl: 'abs(x)', cuda: 'x < 0 ? (int32_t)(0u - (uint32_t)x) : x' } },
  // NaN stays NaN, both zeros give +0.
  sign: {
    float: { wgsl: 'sign_f(x)', cuda: 'x > 0.f ? 1.f : x < 0.f ? -1.f : x == 0.f ? 0.f : x' },
    int: { wgsl: 'select(select(0i, -1i, x < 0i), 1i, x > 0i)', cuda: '(x > 0) - (x < 0)' },
  },
  exp: { float: f32Fn('exp') },
  expm1: { float: f32Fn('expm1') },
  log: { float: f32Fn('log') },
  log1p: { float: f32Fn('log1p') },
  sqrt: { float: f32Fn('sqrt') },
  rsqrt: { float: { wgsl: 'div_rn(1.0, sqrt_f(x))', cuda: '1.f / sqrtf(x)' } },
  reciprocal: { float: { wgsl: 'div_rn(1.0, x)', cuda: '1.f / x' } },
  sin: { float: f32Fn('sin') },
  cos: { float: f32Fn('cos') },
  tan: { float: f32Fn('tan') },
  tanh: { float: f32Fn('tanh') },
  sigmoid: { float: { wgsl: 'sigmoid_f(x)', cuda: '1.f / (1.f + expf(-x))' } },
  erf: { float: f32Fn('erf') },
  // NaN stays NaN (as max(x, 0) in PyTorch); -0 gives +0.
  relu: { float: { wgsl: 'relu_f(x)', cuda: 'x > 0.f ? x : (x != x ? x : 0.f)' }, int: { wgsl: 'max(x, 0i)', cuda: 'x > 0 ? x : 0' } },
  floor: { float: f32Fn('floor'), ...ROUNDING },
  ceil: { float: f32Fn('ceil'), ...ROUNDING },
  // Half to even, as PyTorch's round: WGSL's round() and CUDA's rintf in the default rounding mode.
  round: { float: { wgsl: 'round_f(x)', cuda: 'rintf(x)' }, ...ROUNDING },
  trunc: { float: f32Fn('trunc'), ...ROUNDING },
  // NaN is truthy, so logicalNot(NaN) is 0.
  logicalNot: { float: { truth: true, wgsl: '!f_truthy(x)', cuda: 'x == 0.f' }, int: NOT_INT, bool: NOT_INT },
};

/** Two's-complement int32 arithmetic: WGSL's i32 wraps; C++ wraps only unsigned, so CUDA computes in uint32_t. */
const wrapping = (op) => ({ wgsl: `(a ${op} b)`, cuda: `(int32_t)((uint32_t)a ${op} (uint32_t)b)` });

export const BINARY = {
  add: { float: { expr: '(a + b)' }, int: wrapping('+'), bool: OR_INT },
  sub: { float: { expr: '(a - b)' }, int: wrapping('-') },
  mul: { float: { expr: '(a * b)' }, int: wrapping('*'), bool: AND_INT },
  // WGSL's `/` may be off by an ulp (SwiftShader's is): div_rn rounds correctly.
  div: { float: { wgsl: 'div_rn(a, b)', cuda: 'a / b' } },
  // C's pow: pow(1, y) = 1 and pow(-1, ±Inf) = 1; pow_i gives 0 for |a| > 1 and b < 0.
  pow: { float: f32Fn('pow', 'a, b'), int: { expr: 'pow_i(a, b)' } },
  // NaN in either operand gives NaN.
  maximum: {
    float: { wgsl: 'max_f(a, b)', cuda: '(a != a || b != b) ? (a + b) : (a > b ? a : b)' },
    int: { wgsl: 'max(a, b)', cuda: 'a > b ? a : b' },
    bool: OR_INT,
  },
  minimum: {
    float: { wgsl: 'min_f(a, b)', cuda: '(a != a || b != b) ? (a + b) : (a < b ? a : b)' },
    int: { wgsl: 'min(a, b)', cuda: 'a < b ? a : b' },
    bool: AND_INT,
  },
  // Python's modulo (the divisor's sign); a GPU cannot throw, so the int remainder by 0 is 0.
  remainder: { float: { expr: 'remainder_f(a, b)' }, int: { expr: 'remainder_i(a, b)' } },
  atan2: { float: f32Fn('atan2', 'a, b') },
  logicalAnd: { float: { truth: true, wgsl: '(f_truthy(a) && f_truthy(b))', cuda: 'a != 0.f && b != 0.f' }, int: AND_INT, bool: AND_INT },
  logicalOr: { float: { truth: true, wgsl: '(f_truthy(a) || f_truthy(b))', cuda: 'a != 0.f || b != 0.f' }, int: OR_INT, bool: OR_INT },
};

// Compares are truth values on any kind; bools compare as their 0/1 ints. WGSL compares floats on
// the bits (f_key): every comparison with NaN is false but ne, and subnormals compare right on
// devices that flush them; CUDA's float compares are IEEE already.
const compare = (sym, wgsl) => ({ float: { truth: true, expr: `(a ${sym} b)`, wgsl }, int: { truth: true, expr: `(a ${sym} b)` } });

export const COMPARE = {
  eq: compare('==', 'f_eq(a, b)'),
  ne: compare('!=', '!f_eq(a, b)'),
  lt: compare('<', 'f_lt(a, b)'),
  le: compare('<=', 'f_le(a, b)'),
  gt: compare('>', 'f_lt(b, a)'),
  ge: compare('>=', 'f_le(b, a)'),
};
