// Backward formulas of the elementwise primitives, one entry per op: g is the incoming gradient,
// x/a/b the inputs and y the output. Gradients are computed in the forward dtype; the engine sums
// broadcast dims and casts to each input's dtype.
import type { BinaryOp, UnaryOp } from '../backend/contract.js';
import type { Tensor } from '../tensor/tensor.js';
import { binary, compare, unary, where } from '../ops/elementwise.js';

type UnaryGrad = (g: Tensor, x: Tensor, y: Tensor) => Tensor | null;

const mul = (a: Tensor, b: Tensor | number) => binary('mul', a, b);
const div = (a: Tensor, b: Tensor | number) => binary('div', a, b);
const zeroGrad: UnaryGrad = (g) => mul(g, 0);

/** Which saved tensors each unary rule reads: only those are kept alive (and version-checked). */
export const UNARY_SAVES: Record<UnaryOp, 'x' | 'y' | 'none'> = {
  neg: 'none', abs: 'x', sign: 'none', exp: 'y', expm1: 'y', log: 'x', log1p: 'x', sqrt: 'y', rsqrt: 'y',
  reciprocal: 'y', sin: 'x', cos: 'x', tan: 'y', tanh: 'y', sigmoid: 'y', erf: 'x', relu: 'y',
  floor: 'none', ceil: 'none', round: 'none', trunc: 'none', logicalNot: 'none',
};

export const UNARY_GRADS: Record<UnaryOp, UnaryGrad> = {
  neg: (g) => unary('neg', g),
  abs: (g, x) => mul(g, unary('sign', x)),
  sign: zeroGrad,
  exp: (g, _x, y) => mul(g, y),
  expm1: (g, _x, y) => mul(g, binary('add', y, 1)),
  log: (g, x) => div(g, x),
  log1p: (g, x) => div(g, binary('add', x, 1)),
  sqrt: (g, _x, y) => div(g, mul(y, 2)),
  rsqrt: (g, _x, y) => mul(g, mul(binary('pow', y, 3), -0.5)),
  reciprocal: (g, _x, y) => mul(g, unary('neg', mul(y, y))),
  sin: (g, x) => mul(g, unary('cos', x)),
  cos: (g, x) => mul(g, unary('neg', unary('sin', x))),
  tan: (g, _x, y) => mul(g, binary('add', mul(y, y), 1)),
  tanh: (g, _x, y) => mul(g, binary('sub', 1, mul(y, y))),
  sigmoid: (g, _x, y) => mul(g, mul(y, binary('sub', 1, y))),
  erf: (g, x) => mul(g, mul(unary('exp', unary('neg', mul(x, x))), 2 / Math.sqrt(Math.PI))),
  relu: (g, _x, y) => where(compare('gt', y, 0), g, 0),
  floor: zeroGrad,
  ceil: zeroGrad,
  round: zeroGrad,
  trunc: zeroGrad,
  logicalNot: () => null,
};

type Operand = 'a' | 'b' | 'y';

/** The gradient for one input of a binary op, and which tensors it reads (kept alive, version-checked). */
interface PartialGrad {
  readonly reads: readonly Operand[];
  readonly fn: (g: Tensor, a: Tensor, b: Tensor, y: Tensor) => Tensor;
}

export interface BinaryGrad {
  readonly a: PartialGrad | null;
  readonly b: PartialGrad | null;
}

const same: PartialGrad = { reads: [], fn: (g) => g };

/** Ties split the gradient in half, as PyTorch's maximum/minimum do. */
function extremeGrad(op: 'gt' | 'lt'): BinaryGrad {
  const part = (first: 'a' | 'b'): PartialGrad => ({
    reads: ['a', 'b'],
    fn: (g, a, b) => {
      const [self, other] = first === 'a' ? [a, b] : [b, a];
      return where(compare(op, self, other), g, where(compare('eq', a, b), mul(g, 0.5), 0));
    },
  });
  return { a: part('a'), b: part('b') };
}

export const BINARY_GRADS: Record<BinaryOp, BinaryGrad> = {
  add: { a: same, b: same },
  sub: { a: same, b: { reads: [], fn: (g) => unary('neg', g) } },
  mul: { a: { reads: ['b'], fn: (g, _a, b) => mul(g, b) }, b: { reads: ['a'], fn: (g, a) => mul(g, a) } },
  div: {
    a: { reads: ['b'], fn: (g, _a, b) => div(g, b) },
    b: { reads: ['a', 'b'], fn: (g, a, b) => unary('neg', div(mul(g, a), mul(b, b))) },
  },
  pow: {
    // d/da a^b = b·a^(b−1); PyTorch defines it as 0 where b = 0 (else 0·0^−1 = NaN at a = 0).
    a: { reads: ['a', 'b'], fn: (g, a, b) => where(compare('eq', b, 0), 0, mul(g, mul(b, binary('pow', a, binary('sub', b, 1))))) },
    // d/db a^b = a^b·log a; PyTorch defines it as 0 where a = 0.
    b: { reads: ['a', 'y'], fn: (g, a, _b, y) => where(compare('eq', a, 0), 0, mul(g, mul(y, unary('log', a)))) },
  },
  maximum: extremeGrad('gt'),
  minimum: extremeGrad('lt'),
  remainder: { a: same, b: { reads: ['a', 'b'], fn: (g, a, b) => unary('neg', mul(g, unary('floor', div(a, b)))) } },
  atan2: {
    a: { reads: ['a', 'b'], fn: (g, a, b) => mul(g, div(b, binary('add', mul(a, a), mul(b, b)))) },
    b: { reads: ['a', 'b'], fn: (g, a, b) => mul(g, div(unary('neg', a), binary('add', mul(a, a), mul(b, b)))) },
  },
  logicalAnd: { a: null, b: null },
  logicalOr: { a: null, b: null },
};
