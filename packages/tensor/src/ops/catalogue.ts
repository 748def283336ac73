// The op catalogue: one entry per elementwise op with its dtype rule. Dispatch reads it; autograd
// and autocast will add their columns here.
import type { BinaryOp, CompareOp, UnaryOp } from '../backend/contract.js';

/**
 * How an op picks its compute dtype from its (promoted) input dtype:
 * - `float`: int/bool inputs are promoted to float32 (exp, sqrt, div…)
 * - `numeric`: keeps the dtype; bool is rejected (neg, abs, sub…)
 * - `same`: keeps the dtype, bool included (relu, floor…)
 * - `logical`: inputs are cast to bool, output bool
 */
export type DTypeRule = 'float' | 'numeric' | 'same' | 'logical';

export const UNARY_RULES = {
  neg: 'numeric', abs: 'numeric', sign: 'numeric',
  exp: 'float', expm1: 'float', log: 'float', log1p: 'float', sqrt: 'float', rsqrt: 'float',
  reciprocal: 'float', sin: 'float', cos: 'float', tan: 'float', tanh: 'float', sigmoid: 'float', erf: 'float',
  relu: 'numeric', floor: 'same', ceil: 'same', round: 'same', trunc: 'same',
  logicalNot: 'logical',
} as const satisfies Record<UnaryOp, DTypeRule>;

export const BINARY_RULES = {
  add: 'same', sub: 'numeric', mul: 'same', div: 'float', pow: 'numeric', maximum: 'same', minimum: 'same',
  remainder: 'numeric', atan2: 'float', logicalAnd: 'logical', logicalOr: 'logical',
} as const satisfies Record<BinaryOp, DTypeRule>;

/** On bool tensors PyTorch's add/mul/max/min are the logical ops. */
export const BOOL_EQUIVALENT: Partial<Record<BinaryOp, BinaryOp>> = {
  add: 'logicalOr', mul: 'logicalAnd', maximum: 'logicalOr', minimum: 'logicalAnd',
};

export const COMPARE_SYMBOL = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' } as const satisfies Record<CompareOp, string>;
