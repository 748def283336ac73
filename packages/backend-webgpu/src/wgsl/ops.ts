// WGSL expressions of the elementwise primitives, per value type. Float ops compute in f32 (half
// inputs are decoded exactly first, and the result is rounded once on store), int32 ops in i32
// with wrapping arithmetic, bool as 0/1 in i32. Logical and compare ops give a WGSL bool.
import type { BinaryOp, CompareOp, DTypeName, UnaryOp } from '@core/tensor';
import { isFloat } from './gen.js';

export interface Expr {
  readonly code: string;
  /** The expression is a WGSL bool (logical/compare ops): it is stored as 0/1 in out's dtype. */
  readonly isBool: boolean;
}

const num = (code: string): Expr => ({ code, isBool: false });
const boolean = (code: string): Expr => ({ code, isBool: true });

const FLOAT_UNARY: Record<UnaryOp, (x: string) => Expr> = {
  neg: (x) => num(`f_neg(${x})`),
  abs: (x) => num(`f_abs(${x})`),
  sign: (x) => num(`sign_f(${x})`),
  exp: (x) => num(`exp_f(${x})`),
  expm1: (x) => num(`expm1_f(${x})`),
  log: (x) => num(`log_f(${x})`),
  log1p: (x) => num(`log1p_f(${x})`),
  sqrt: (x) => num(`sqrt_f(${x})`),
  rsqrt: (x) => num(`div_rn(1.0, sqrt_f(${x}))`),
  reciprocal: (x) => num(`div_rn(1.0, ${x})`),
  sin: (x) => num(`sin_f(${x})`),
  cos: (x) => num(`cos_f(${x})`),
  tan: (x) => num(`tan_f(${x})`),
  tanh: (x) => num(`tanh_f(${x})`),
  sigmoid: (x) => num(`sigmoid_f(${x})`),
  erf: (x) => num(`erf_f(${x})`),
  relu: (x) => num(`relu_f(${x})`),
  floor: (x) => num(`floor_f(${x})`),
  ceil: (x) => num(`ceil_f(${x})`),
  round: (x) => num(`round_f(${x})`),
  trunc: (x) => num(`trunc_f(${x})`),
  logicalNot: (x) => boolean(`!f_truthy(${x})`),
};

const INT_UNARY: Partial<Record<UnaryOp, (x: string) => Expr>> = {
  neg: (x) => num(`(0i - ${x})`),
  abs: (x) => num(`abs(${x})`),
  sign: (x) => num(`select(select(0i, -1i, ${x} < 0i), 1i, ${x} > 0i)`),
  relu: (x) => num(`max(${x}, 0i)`),
  floor: (x) => num(x),
  ceil: (x) => num(x),
  round: (x) => num(x),
  trunc: (x) => num(x),
  logicalNot: (x) => boolean(`(${x} == 0i)`),
};

const BOOL_UNARY: Partial<Record<UnaryOp, (x: string) => Expr>> = {
  floor: (x) => num(x),
  ceil: (x) => num(x),
  round: (x) => num(x),
  trunc: (x) => num(x),
  logicalNot: (x) => boolean(`(${x} == 0i)`),
};

type Fn2 = (a: string, b: string) => Expr;

const FLOAT_BINARY: Record<BinaryOp, Fn2> = {
  add: (a, b) => num(`(${a} + ${b})`),
  sub: (a, b) => num(`(${a} - ${b})`),
  mul: (a, b) => num(`(${a} * ${b})`),
  div: (a, b) => num(`div_rn(${a}, ${b})`),
  pow: (a, b) => num(`pow_f(${a}, ${b})`),
  maximum: (a, b) => num(`max_f(${a}, ${b})`),
  minimum: (a, b) => num(`min_f(${a}, ${b})`),
  remainder: (a, b) => num(`remainder_f(${a}, ${b})`),
  atan2: (a, b) => num(`atan2_f(${a}, ${b})`),
  logicalAnd: (a, b) => boolean(`(f_truthy(${a}) && f_truthy(${b}))`),
  logicalOr: (a, b) => boolean(`(f_truthy(${a}) || f_truthy(${b}))`),
};

const INT_BINARY: Partial<Record<BinaryOp, Fn2>> = {
  add: (a, b) => num(`(${a} + ${b})`),
  sub: (a, b) => num(`(${a} - ${b})`),
  mul: (a, b) => num(`(${a} * ${b})`),
  pow: (a, b) => num(`pow_i(${a}, ${b})`),
  maximum: (a, b) => num(`max(${a}, ${b})`),
  minimum: (a, b) => num(`min(${a}, ${b})`),
  remainder: (a, b) => num(`remainder_i(${a}, ${b})`),
  logicalAnd: (a, b) => boolean(`(${a} != 0i && ${b} != 0i)`),
  logicalOr: (a, b) => boolean(`(${a} != 0i || ${b} != 0i)`),
};

const or: Fn2 = (a, b) => boolean(`(${a} != 0i || ${b} != 0i)`);
const and: Fn2 = (a, b) => boolean(`(${a} != 0i && ${b} != 0i)`);
const BOOL_BINARY: Partial<Record<BinaryOp, Fn2>> = { add: or, maximum: or, logicalOr: or, mul: and, minimum: and, logicalAnd: and };

function pick<T>(table: Partial<Record<string, T>>, op: string, dtype: DTypeName, what: string): T {
  const f = table[op];
  if (!f) throw new TypeError(`webgpu ${what}: '${op}' does not take ${dtype} inputs (core promotes them first)`);
  return f;
}

export function unaryExpr(op: UnaryOp, dtype: DTypeName, x: string): Expr {
  if (isFloat(dtype)) return FLOAT_UNARY[op](x);
  return pick(dtype === 'int32' ? INT_UNARY : BOOL_UNARY, op, dtype, 'unary')(x);
}

export function binaryExpr(op: BinaryOp, dtype: DTypeName, a: string, b: string): Expr {
  if (isFloat(dtype)) return FLOAT_BINARY[op](a, b);
  return pick(dtype === 'int32' ? INT_BINARY : BOOL_BINARY, op, dtype, 'binary')(a, b);
}

export function compareExpr(op: CompareOp, dtype: DTypeName, a: string, b: string): Expr {
  if (!isFloat(dtype)) {
    const sym = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' }[op];
    return boolean(`(${a} ${sym} ${b})`);
  }
  // On the bits (f_key): every comparison with NaN is false except ne, subnormals compare right.
  switch (op) {
    case 'eq': return boolean(`f_eq(${a}, ${b})`);
    case 'ne': return boolean(`!f_eq(${a}, ${b})`);
    case 'lt': return boolean(`f_lt(${a}, ${b})`);
    case 'le': return boolean(`f_le(${a}, ${b})`);
    case 'gt': return boolean(`f_lt(${b}, ${a})`);
    case 'ge': return boolean(`f_le(${b}, ${a})`);
    default: return op satisfies never;
  }
}
