// Unary, binary, compare and where. Inputs are read as value arrays (halves decoded to f32) and
// results are written into out's value array: a Float32Array for float32 and half outputs, so
// every result is rounded to f32 first (one correctly rounded f32 op for add/sub/mul/div/sqrt,
// since f64 carries more than 2·24+2 bits), then rounded once more only when stored as a half.
// int32 outputs land in an Int32Array, which wraps exact f64 results like C; products use imul.
import type { BinaryOp, CompareOp, DTypeName, UnaryOp } from '@core/tensor';
import type { CpuArray } from '../storage.js';
import { checkDType, checkShape, commitRaw, commitValues, isFloat, numelOf, rawBuffer, readRaw, readValues, type Ref, valueBuffer } from './io.js';
import {
  erf, maximum, minimum, powFloat, powInt, relu, remainderFloat, remainderInt, roundHalfEven, sigmoid, sign,
} from './math.js';

type Fn1 = (x: number) => number;
type Fn2 = (a: number, b: number) => number;

const logicalNot: Fn1 = (x) => (x === 0 ? 1 : 0); // NaN is truthy
const logicalAnd: Fn2 = (a, b) => (a !== 0 && b !== 0 ? 1 : 0);
const logicalOr: Fn2 = (a, b) => (a !== 0 || b !== 0 ? 1 : 0);
const identity: Fn1 = (x) => x;

const FLOAT_UNARY: Readonly<Record<UnaryOp, Fn1>> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign,
  exp: Math.exp,
  expm1: Math.expm1,
  log: Math.log,
  log1p: Math.log1p,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  reciprocal: (x) => 1 / x,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  tanh: Math.tanh,
  sigmoid,
  erf,
  relu,
  floor: Math.floor,
  ceil: Math.ceil,
  round: roundHalfEven,
  trunc: Math.trunc,
  logicalNot,
};

// Results are stored into an Int32Array, so -(-2^31) and abs(-2^31) wrap to -2^31 as in C.
const INT_UNARY: Readonly<Partial<Record<UnaryOp, Fn1>>> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign,
  relu,
  floor: identity,
  ceil: identity,
  round: identity,
  trunc: identity,
  logicalNot,
};

// Core sends the 'same'-dtype rounding ops on bool too; they change nothing.
const BOOL_UNARY: Readonly<Partial<Record<UnaryOp, Fn1>>> = {
  floor: identity, ceil: identity, round: identity, trunc: identity, logicalNot,
};

const FLOAT_BINARY: Readonly<Record<BinaryOp, Fn2>> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: powFloat,
  maximum,
  minimum,
  remainder: remainderFloat,
  atan2: Math.atan2,
  logicalAnd,
  logicalOr,
};

// Sums and differences of int32 values are exact in f64 and wrap when stored; products need imul.
const INT_BINARY: Readonly<Partial<Record<BinaryOp, Fn2>>> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: Math.imul,
  pow: powInt,
  maximum: Math.max,
  minimum: Math.min,
  remainder: remainderInt,
  logicalAnd,
  logicalOr,
};

// PyTorch's bool arithmetic: add/maximum are "or", mul/minimum are "and".
const BOOL_BINARY: Readonly<Partial<Record<BinaryOp, Fn2>>> = {
  add: logicalOr,
  mul: logicalAnd,
  maximum: logicalOr,
  minimum: logicalAnd,
  logicalAnd,
  logicalOr,
};

function pick<Op extends string, F>(table: Readonly<Partial<Record<Op, F>>>, op: Op, dtype: DTypeName, what: string): F {
  const fn = table[op];
  if (fn === undefined) throw new TypeError(`cpu ${what}: '${op}' does not take ${dtype} inputs (core promotes them first)`);
  return fn;
}

function unaryFn(op: UnaryOp, dtype: DTypeName): Fn1 {
  if (isFloat(dtype)) return FLOAT_UNARY[op];
  return pick(dtype === 'int32' ? INT_UNARY : BOOL_UNARY, op, dtype, 'unary');
}

function binaryFn(op: BinaryOp, dtype: DTypeName): Fn2 {
  if (isFloat(dtype)) return FLOAT_BINARY[op];
  return pick(dtype === 'int32' ? INT_BINARY : BOOL_BINARY, op, dtype, 'binary');
}

function isLogical(op: UnaryOp | BinaryOp): boolean {
  return op === 'logicalNot' || op === 'logicalAnd' || op === 'logicalOr';
}

export function unary(op: UnaryOp, x: Ref, out: Ref): void {
  checkShape(`unary ${op}`, 'out', out, x.shape);
  // Logical ops give 0/1 in whatever out's dtype is; every other op keeps the dtype.
  if (!isLogical(op)) checkDType(`unary ${op}`, 'out', out, x.dtype);
  const fn = unaryFn(op, x.dtype);
  const n = numelOf(out);
  const src = readValues(x);
  const dst = valueBuffer(out);
  for (let i = 0; i < n; i++) dst[i] = fn(src[i]);
  commitValues(out, dst);
}

export function binary(op: BinaryOp, a: Ref, b: Ref, out: Ref): void {
  const what = `binary ${op}`;
  checkShape(what, 'a', a, out.shape);
  checkShape(what, 'b', b, out.shape);
  checkDType(what, 'b', b, a.dtype);
  if (!isLogical(op)) checkDType(what, 'out', out, a.dtype);
  const fn = binaryFn(op, a.dtype);
  const n = numelOf(out);
  const x = readValues(a);
  const y = readValues(b);
  const dst = valueBuffer(out);
  binaryLoop(op, fn, isFloat(a.dtype), x, y, dst, n);
  commitValues(out, dst);
}

function binaryLoop(op: BinaryOp, fn: Fn2, float: boolean, x: CpuArray, y: CpuArray, dst: CpuArray, n: number): void {
  // The hottest float ops get their own loops; everything else goes through the scalar function.
  if (float && op === 'add') for (let i = 0; i < n; i++) dst[i] = x[i] + y[i];
  else if (float && op === 'sub') for (let i = 0; i < n; i++) dst[i] = x[i] - y[i];
  else if (float && op === 'mul') for (let i = 0; i < n; i++) dst[i] = x[i] * y[i];
  else if (float && op === 'div') for (let i = 0; i < n; i++) dst[i] = x[i] / y[i];
  else for (let i = 0; i < n; i++) dst[i] = fn(x[i], y[i]);
}

export function compare(op: CompareOp, a: Ref, b: Ref, out: Ref): void {
  const what = `compare ${op}`;
  checkShape(what, 'a', a, out.shape);
  checkShape(what, 'b', b, out.shape);
  checkDType(what, 'b', b, a.dtype);
  const n = numelOf(out);
  const x = readValues(a);
  const y = readValues(b);
  const dst = valueBuffer(out);
  // JS comparisons are IEEE: every comparison with NaN is false except !==.
  switch (op) {
    case 'eq': for (let i = 0; i < n; i++) dst[i] = x[i] === y[i] ? 1 : 0; break;
    case 'ne': for (let i = 0; i < n; i++) dst[i] = x[i] !== y[i] ? 1 : 0; break;
    case 'lt': for (let i = 0; i < n; i++) dst[i] = x[i] < y[i] ? 1 : 0; break;
    case 'le': for (let i = 0; i < n; i++) dst[i] = x[i] <= y[i] ? 1 : 0; break;
    case 'gt': for (let i = 0; i < n; i++) dst[i] = x[i] > y[i] ? 1 : 0; break;
    case 'ge': for (let i = 0; i < n; i++) dst[i] = x[i] >= y[i] ? 1 : 0; break;
    default: throw new TypeError(`cpu compare: unknown op '${String(op satisfies never)}'`);
  }
  commitValues(out, dst);
}

/** out = cond ? a : b, moving raw storage elements so half bit patterns (NaN payloads too) are kept. */
export function where(cond: Ref, a: Ref, b: Ref, out: Ref): void {
  checkShape('where', 'cond', cond, out.shape);
  checkShape('where', 'a', a, out.shape);
  checkShape('where', 'b', b, out.shape);
  checkDType('where', 'a', a, out.dtype);
  checkDType('where', 'b', b, out.dtype);
  const n = numelOf(out);
  const c = readValues(cond); // bool reads as 0/1; any other dtype as its values (NaN is true)
  const x = readRaw(a);
  const y = readRaw(b);
  const dst = rawBuffer(out);
  for (let i = 0; i < n; i++) dst[i] = c[i] !== 0 ? x[i] : y[i];
  commitRaw(out, dst);
}
