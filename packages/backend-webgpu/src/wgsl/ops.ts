// WGSL expressions of the elementwise primitives, per value type: the WGSL side of the one
// expression table the native backends share (scripts/codegen/expressions.mjs, generated into
// ../generated/elementwise-expressions.ts). Float ops compute in f32 (half inputs are decoded
// exactly first, and the result is rounded once on store), int32 ops in i32 with wrapping
// arithmetic, bool as 0/1 in i32. Logical and compare ops give a WGSL bool.
import type { BinaryOp, CompareOp, DTypeName, UnaryOp } from '@core/tensor';
import { BINARY_EXPRESSIONS, COMPARE_EXPRESSIONS, UNARY_EXPRESSIONS } from '../generated/elementwise-expressions.js';
import { isFloat } from './gen.js';

export interface Expr {
  readonly code: string;
  /** The expression is a WGSL bool (logical/compare ops): it is stored as 0/1 in out's dtype. */
  readonly isBool: boolean;
}

/** An entry of the generated tables: a WGSL expression over its operands' WGSL expressions. */
export interface ExprTemplate<Operands extends string[]> {
  readonly isBool: boolean;
  readonly code: (...operands: Operands) => string;
}

/** The generated table of one op family: float takes every op, the other kinds only some. */
export type ExpressionTable<Op extends string, Operands extends string[], Other extends 'int' | 'bool' = 'int' | 'bool'> =
  { readonly float: Readonly<Record<Op, ExprTemplate<Operands>>> } & { readonly [K in Other]: Readonly<Partial<Record<Op, ExprTemplate<Operands>>>> };

/** The table's value kind of a dtype. */
function kindOf(dtype: DTypeName): 'float' | 'int' | 'bool' {
  return isFloat(dtype) ? 'float' : dtype === 'int32' ? 'int' : 'bool';
}

function build<Operands extends string[]>(
  table: Readonly<Partial<Record<string, ExprTemplate<Operands>>>>, op: string, dtype: DTypeName, what: string, ...operands: Operands
): Expr {
  const template = table[op];
  if (!template) throw new TypeError(`webgpu ${what}: '${op}' does not take ${dtype} inputs (core promotes them first)`);
  return { code: template.code(...operands), isBool: template.isBool };
}

export function unaryExpr(op: UnaryOp, dtype: DTypeName, x: string): Expr {
  return build(UNARY_EXPRESSIONS[kindOf(dtype)], op, dtype, 'unary', x);
}

export function binaryExpr(op: BinaryOp, dtype: DTypeName, a: string, b: string): Expr {
  return build(BINARY_EXPRESSIONS[kindOf(dtype)], op, dtype, 'binary', a, b);
}

/** Bools compare as their 0/1 values, with the int32 expressions. */
export function compareExpr(op: CompareOp, dtype: DTypeName, a: string, b: string): Expr {
  return build(COMPARE_EXPRESSIONS[isFloat(dtype) ? 'float' : 'int'], op, dtype, 'compare', a, b);
}
