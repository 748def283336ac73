// Table entries for the elementwise primitives: unary, binary, compare, where and cast.
import { BINARY_OPS, bfloat16BitsToNumber, COMPARE_OPS, float16BitsToNumber, UNARY_OPS, where, type BinaryOp, type CompareOp, type DTypeName, type Tensor, type UnaryOp } from '@core/tensor';
import type { Expected } from '../check.js';
import { dtypeObject, edges, NONFINITE, randomArray, randomValue, REAL, type Domain, type Input, type Layout } from '../inputs.js';
import { ALL_DTYPES, FLOAT_DTYPES, isFloat, isHalf, roundTo, storeResult } from '../oracle/dtype.js';
import { map, nd, zipWith, type NdArray } from '../oracle/ndarray.js';
import { BINARY, BINARY_BOOL, BINARY_INT, COMPARE, UNARY, UNARY_INT } from '../oracle/scalar.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import type { ToleranceClass } from '../tolerance.js';

const FLOATS = FLOAT_DTYPES;
const NUMERIC = [...FLOAT_DTYPES, 'int32'] as const;

type Rule = 'float' | 'numeric' | 'same' | 'logical';

interface UnarySpec {
  readonly rule: Rule;
  readonly tolerance: ToleranceClass;
  readonly domain: Domain;
  /** Domain for gradient samples (away from kinks/poles); defaults to `domain`. */
  readonly gradDomain?: Domain;
  readonly differentiable: boolean;
}

const exact: ToleranceClass = 'exact';
const approx: ToleranceClass = 'approx';
const POSITIVE: Domain = { lo: 0.05, hi: 4 };
const NONZERO: Domain = { lo: -3, hi: 3, awayFromZero: 0.2 };
/** Values k + 0.2…0.4 never sit on a floor/round jump. */
const OFF_INTEGER: Domain = { lo: -3, hi: 3 };

export const UNARY_SPECS: Readonly<Record<UnaryOp, UnarySpec>> = {
  neg: { rule: 'numeric', tolerance: exact, domain: REAL, differentiable: true },
  abs: { rule: 'numeric', tolerance: exact, domain: REAL, gradDomain: NONZERO, differentiable: true },
  sign: { rule: 'numeric', tolerance: 'exact-any-zero', domain: REAL, gradDomain: NONZERO, differentiable: true },
  exp: { rule: 'float', tolerance: approx, domain: { lo: -6, hi: 6 }, differentiable: true },
  expm1: { rule: 'float', tolerance: approx, domain: { lo: -4, hi: 4 }, differentiable: true },
  log: { rule: 'float', tolerance: approx, domain: POSITIVE, gradDomain: { lo: 0.2, hi: 4 }, differentiable: true },
  log1p: { rule: 'float', tolerance: approx, domain: { lo: -0.9, hi: 4 }, gradDomain: { lo: -0.7, hi: 4 }, differentiable: true },
  // sqrt is correctly rounded (IEEE), so exact on every backend.
  sqrt: { rule: 'float', tolerance: exact, domain: POSITIVE, gradDomain: { lo: 0.2, hi: 4 }, differentiable: true },
  rsqrt: { rule: 'float', tolerance: approx, domain: POSITIVE, gradDomain: { lo: 0.2, hi: 4 }, differentiable: true },
  reciprocal: { rule: 'float', tolerance: exact, domain: NONZERO, differentiable: true },
  sin: { rule: 'float', tolerance: approx, domain: { lo: -6, hi: 6 }, differentiable: true },
  cos: { rule: 'float', tolerance: approx, domain: { lo: -6, hi: 6 }, differentiable: true },
  tan: { rule: 'float', tolerance: approx, domain: { lo: -1.4, hi: 1.4 }, gradDomain: { lo: -1.2, hi: 1.2 }, differentiable: true },
  tanh: { rule: 'float', tolerance: approx, domain: { lo: -4, hi: 4 }, differentiable: true },
  sigmoid: { rule: 'float', tolerance: approx, domain: { lo: -8, hi: 8 }, differentiable: true },
  erf: { rule: 'float', tolerance: approx, domain: { lo: -3, hi: 3 }, differentiable: true },
  relu: { rule: 'numeric', tolerance: 'exact-any-zero', domain: REAL, gradDomain: NONZERO, differentiable: true },
  floor: { rule: 'same', tolerance: exact, domain: REAL, gradDomain: OFF_INTEGER, differentiable: true },
  ceil: { rule: 'same', tolerance: exact, domain: REAL, gradDomain: OFF_INTEGER, differentiable: true },
  round: { rule: 'same', tolerance: exact, domain: REAL, gradDomain: OFF_INTEGER, differentiable: true },
  trunc: { rule: 'same', tolerance: exact, domain: REAL, gradDomain: OFF_INTEGER, differentiable: true },
  logicalNot: { rule: 'logical', tolerance: exact, domain: REAL, differentiable: false },
};

/** The dtypes an op takes natively (promotion of other inputs is the promotion category's job). */
function dtypesOf(rule: Rule): readonly DTypeName[] {
  switch (rule) {
    case 'float': return FLOATS;
    case 'numeric': return NUMERIC;
    case 'same':
    case 'logical': return ALL_DTYPES;
    default: return rule satisfies never;
  }
}

function outDType(rule: Rule, dtype: DTypeName): DTypeName {
  return rule === 'logical' ? 'bool' : dtype;
}

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** Values shifted off integers and half-integers (for floor/round/ceil/trunc gradients). */
function offInteger(rng: Rng, dtype: DTypeName, shape: number[]): NdArray {
  return nd(shape, () => roundTo(dtype, rng.int(-3, 3) + rng.uniform(0.2, 0.4)));
}

// ---- unary ----

function unaryFn(op: UnaryOp, dtype: DTypeName): (x: number) => number {
  if (isFloat(dtype)) return UNARY[op];
  const fn = UNARY_INT[op];
  if (!fn) throw new Error(`oracle: ${op} is not defined on ${dtype}`);
  return fn;
}

function unaryReference(op: UnaryOp, rule: Rule) {
  return ([x]: NdArray[], _args: unknown, dtype: DTypeName): Expected => {
    const out = outDType(rule, dtype);
    const f = unaryFn(op, rule === 'logical' ? 'float64' : dtype);
    return { value: map(x!, (v) => storeResult(out, f(v))), dtype: out };
  };
}

/** Edge inputs split by whether the op's result is finite (edge sample) or not (numerics sample). */
function splitEdges(dtype: DTypeName, f: (...xs: number[]) => number, candidates: number[][]): { finite: number[][]; other: number[][] } {
  const finite: number[][] = [];
  const other: number[][] = [];
  for (const xs of candidates) (Number.isFinite(storeResult(isFloat(dtype) ? dtype : 'float64', f(...xs))) ? finite : other).push(xs);
  return { finite, other };
}

function columns(rows: number[][], arity: number): NdArray[] {
  return [...Array(arity).keys()].map((k) => nd([rows.length], rows.map((r) => r[k]!)));
}

function unarySamples(op: UnaryOp, spec: UnarySpec) {
  return (dtype: DTypeName, rng: Rng): Sample[] => {
    const r = (shape: number[]) => randomArray(rng, dtype, shape, spec.domain);
    const samples: Sample[] = [
      { name: 'rand-3x4', inputs: [input(r([3, 4]), dtype)] },
      { name: '0-dim', inputs: [input(r([]), dtype)] },
      { name: 'empty-0x3', inputs: [input(r([0, 3]), dtype)] },
      { name: 'transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')] },
      { name: 'strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided')] },
      { name: 'permuted-2x3x4', inputs: [input(r([2, 3, 4]), dtype, 'permuted')] },
      { name: 'long-1031', inputs: [input(r([1031]), dtype)] },
    ];
    if (dtype !== 'bool') {
      const f = unaryFn(op, spec.rule === 'logical' ? 'float64' : dtype);
      const { finite, other } = splitEdges(dtype, f, edges(dtype).map((v) => [v]));
      samples.push({ name: 'edge', inputs: [input(columns(finite, 1)[0]!, dtype)] });
      if (isFloat(dtype)) {
        const nonfinite = [...NONFINITE.map((v) => [v]), ...other];
        samples.push({ name: 'nonfinite', inputs: [input(columns(nonfinite, 1)[0]!, dtype)], numerics: true });
      }
    }
    return samples;
  };
}

function unaryGradSamples(spec: UnarySpec) {
  return (dtype: DTypeName, rng: Rng): Sample[] => {
    const domain = spec.gradDomain ?? spec.domain;
    const r = (shape: number[]) => (domain === OFF_INTEGER ? offInteger(rng, dtype, shape) : randomArray(rng, dtype, shape, domain));
    return [
      { name: 'grad-3x4', inputs: [input(r([3, 4]), dtype)] },
      { name: 'grad-transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')] },
    ];
  };
}

const UNARY_CALL = (op: UnaryOp) => ([x]: Tensor[]): Tensor => (x as unknown as Record<UnaryOp, () => Tensor>)[op].call(x);

export const UNARY_INFOS: OpInfo[] = UNARY_OPS.map((op) => {
  const spec = UNARY_SPECS[op];
  return {
    name: op,
    category: 'primitives',
    dtypes: dtypesOf(spec.rule),
    // Logical ops convert their inputs to bool (a cast) and compute in bool.
    needs: spec.rule === 'logical' ? 'storage' : 'compute',
    outDtype: (d) => outDType(spec.rule, d),
    tolerance: spec.tolerance,
    differentiable: spec.differentiable,
    samples: unarySamples(op, spec),
    gradSamples: unaryGradSamples(spec),
    call: UNARY_CALL(op),
    reference: unaryReference(op, spec.rule),
  };
});

// ---- binary ----

interface BinarySpec {
  readonly rule: Rule;
  readonly tolerance: ToleranceClass;
  readonly a: Domain;
  readonly b: Domain;
  readonly gradA?: Domain;
  readonly gradB?: Domain;
  readonly differentiable: boolean;
  /** int32 second operands: domain and which edge values to keep (int remainder by zero throws; int powers stay small). */
  readonly intB?: Domain;
  readonly intOk?: (b: number) => boolean;
}

const BINARY_SPECS: Readonly<Record<BinaryOp, BinarySpec>> = {
  add: { rule: 'same', tolerance: exact, a: REAL, b: REAL, differentiable: true },
  sub: { rule: 'numeric', tolerance: exact, a: REAL, b: REAL, differentiable: true },
  mul: { rule: 'same', tolerance: exact, a: REAL, b: REAL, differentiable: true },
  div: { rule: 'float', tolerance: exact, a: REAL, b: NONZERO, differentiable: true },
  pow: { rule: 'numeric', tolerance: approx, a: { lo: 0.1, hi: 3 }, b: { lo: -2, hi: 2 }, intB: { lo: 0, hi: 0.5 }, intOk: (b) => b >= 0 && b <= 8, differentiable: true },
  // maximum/minimum of −0 and +0 may return either zero (IEEE 754-2008 leaves it open).
  maximum: { rule: 'same', tolerance: 'exact-any-zero', a: REAL, b: REAL, differentiable: true },
  minimum: { rule: 'same', tolerance: 'exact-any-zero', a: REAL, b: REAL, differentiable: true },
  // Python's modulo is fmod plus a correction (a·b sign fix), which backends may compute as a − b·floor(a/b).
  remainder: { rule: 'numeric', tolerance: approx, a: REAL, b: NONZERO, intB: NONZERO, intOk: (b) => b !== 0, differentiable: true },
  atan2: { rule: 'float', tolerance: approx, a: REAL, b: NONZERO, differentiable: true },
  logicalAnd: { rule: 'logical', tolerance: exact, a: REAL, b: REAL, differentiable: false },
  logicalOr: { rule: 'logical', tolerance: exact, a: REAL, b: REAL, differentiable: false },
};

function binaryFn(op: BinaryOp, dtype: DTypeName): (a: number, b: number) => number {
  if (isFloat(dtype)) return BINARY[op];
  const fn = (dtype === 'int32' ? BINARY_INT : BINARY_BOOL)[op];
  if (!fn) throw new Error(`oracle: ${op} is not defined on ${dtype}`);
  return fn;
}

/**
 * The value a JS number scalar takes in the computation: it is filled into a tensor of the compute
 * dtype, which for half types is f32 (core widens half ops with a scalar to f32, like PyTorch's opmath).
 */
export function scalarAs(dtype: DTypeName, s: number): number {
  return roundTo(isHalf(dtype) ? 'float32' : dtype, s);
}

function binaryReference(
  fnFor: (dtype: DTypeName) => (a: number, b: number) => number,
  out: (dtype: DTypeName) => DTypeName,
  scalarIn: (dtype: DTypeName, s: number) => number = scalarAs,
) {
  return (inputs: NdArray[], args: Readonly<Record<string, any>>, dtype: DTypeName): Expected => {
    const f = fnFor(dtype);
    const o = out(dtype);
    const operands = args.scalar === undefined ? inputs : [inputs[0]!, nd([], [scalarIn(dtype, Number(args.scalar))])];
    return { value: map(zipWith(operands, f), (v) => storeResult(o, v)), dtype: o };
  };
}

function pairs(rng: Rng, values: readonly number[], count: number): number[][] {
  const rows: number[][] = [];
  for (const a of values) for (const b of values) rows.push([a, b]);
  return rng.shuffle(rows).slice(0, count);
}

interface BinarySampling {
  readonly a: Domain;
  readonly b: Domain;
  readonly intB?: Domain;
  readonly intOk?: (b: number) => boolean;
  /** Comparisons: make a third of the second operand equal to the first. */
  readonly ties?: boolean;
}

function binarySamples(f: (dtype: DTypeName) => (a: number, b: number) => number, { a: da, b: db, intB, intOk, ties = false }: BinarySampling) {
  return (dtype: DTypeName, rng: Rng): Sample[] => {
    const bDomain = dtype === 'int32' && intB ? intB : db;
    const ra = (shape: number[]) => randomArray(rng, dtype, shape, da);
    const rb = (shape: number[]) => randomArray(rng, dtype, shape, bDomain);
    // For comparisons, make about a third of the second operand equal to the first.
    const withTies = (a: NdArray, b: NdArray) => (ties && a.data.length === b.data.length ? nd(b.shape, (i) => (i % 3 === 0 ? a.data[i]! : b.data[i]!)) : b);
    const a34 = ra([3, 4]);
    const aT = ra([4, 3]);
    const aL = ra([1031]);
    const scalar = randomScalar(rng, dtype, bDomain);
    const samples: Sample[] = [
      { name: 'rand-3x4', inputs: [input(a34, dtype), input(withTies(a34, rb([3, 4])), dtype)] },
      { name: 'broadcast-2x1x4+3x1', inputs: [input(ra([2, 1, 4]), dtype), input(rb([3, 1]), dtype)] },
      { name: '0-dim+3', inputs: [input(ra([]), dtype), input(rb([3]), dtype)] },
      { name: '2x3+0-dim', inputs: [input(ra([2, 3]), dtype), input(rb([]), dtype)] },
      { name: `scalar-${scalar}`, inputs: [input(ra([2, 3]), dtype)], args: { scalar } },
      { name: 'transposed+strided-4x3', inputs: [input(aT, dtype, 'transposed'), input(withTies(aT, rb([4, 3])), dtype, 'strided')] },
      { name: 'empty-0x3+1x3', inputs: [input(ra([0, 3]), dtype), input(rb([1, 3]), dtype)] },
      { name: 'long-1031', inputs: [input(aL, dtype), input(withTies(aL, rb([1031])), dtype)] },
    ];
    if (dtype !== 'bool') {
      const fn = f(dtype);
      const ok = (b: number) => dtype !== 'int32' || !intOk || intOk(b);
      const candidates = pairs(rng, edges(dtype), 200).filter(([, b]) => ok(b!));
      const { finite, other } = splitEdges(dtype, fn, candidates);
      const [ea, eb] = columns(finite, 2);
      samples.push({ name: 'edge', inputs: [input(ea!, dtype), input(eb!, dtype)] });
      if (isFloat(dtype)) {
        const special = [...NONFINITE, 0, -0, 1, -1, 2.5];
        const rows = [...pairs(rng, special, 36), ...other.slice(0, 40)];
        const [na, nb] = columns(rows, 2);
        samples.push({ name: 'nonfinite', inputs: [input(na!, dtype), input(nb!, dtype)], numerics: true });
      }
    }
    return samples;
  };
}

/** A scalar operand: not representable in half types (so f32 widening matters) when the dtype is floating. */
function randomScalar(rng: Rng, dtype: DTypeName, domain: Domain): number | boolean {
  if (dtype === 'bool') return true; // a JS number would promote bool to int32
  if (dtype === 'int32') return randomValue(rng, 'int32', domain);
  const v = randomValue(rng, 'float64', domain);
  return Number(v.toPrecision(3)) || 0.1;
}

export const BINARY_INFOS: OpInfo[] = BINARY_OPS.map((op) => {
  const spec = BINARY_SPECS[op];
  return {
    name: op,
    category: 'primitives',
    dtypes: dtypesOf(spec.rule),
    // Logical ops convert their inputs to bool (a cast) and compute in bool.
    needs: spec.rule === 'logical' ? 'storage' : 'compute',
    outDtype: (d) => outDType(spec.rule, d),
    tolerance: spec.tolerance,
    differentiable: spec.differentiable,
    samples: binarySamples((d) => binaryFn(op, spec.rule === 'logical' ? 'float64' : d), spec),
    gradSamples: (dtype, rng) => {
      const ga = spec.gradA ?? spec.a;
      const gb = spec.gradB ?? spec.b;
      // maximum/minimum: keep the operands apart so no element sits on the tie.
      const apart = op === 'maximum' || op === 'minimum';
      if (op === 'remainder') {
        // a/b stays 0.3…0.7 away from an integer, where remainder jumps.
        const b = randomArray(rng, dtype, [2, 3], gb);
        const a = map(b, (v) => roundTo(dtype, v * (rng.int(-2, 3) + rng.uniform(0.3, 0.7))));
        return [{ name: 'grad-2x3', inputs: [input(a, dtype), input(b, dtype)] }];
      }
      const a = randomArray(rng, dtype, [2, 3], ga);
      const b = apart ? map(a, (v) => roundTo(dtype, v + (rng.next() < 0.5 ? -0.5 : 0.5))) : randomArray(rng, dtype, [2, 3], gb);
      return [
        { name: 'grad-2x3', inputs: [input(a, dtype), input(b, dtype)] },
        { name: 'grad-broadcast-2x1x3+3', inputs: [input(randomArray(rng, dtype, [2, 1, 3], ga), dtype), input(apart ? nd([3], [5, -5, 6]) : randomArray(rng, dtype, [3], gb), dtype)] },
      ];
    },
    call: ([a, b]: Tensor[], args) => {
      const other = args.scalar ?? b!;
      const t = a as unknown as Record<BinaryOp, (o: unknown) => Tensor>;
      return t[op].call(a, other);
    },
    reference: binaryReference((d) => binaryFn(op, spec.rule === 'logical' ? 'float64' : d), (d) => outDType(spec.rule, d)),
  } satisfies OpInfo;
});

// ---- compare ----

export const COMPARE_INFOS: OpInfo[] = COMPARE_OPS.map((op: CompareOp) => ({
  name: op,
  category: 'primitives',
  dtypes: ALL_DTYPES,
  outDtype: () => 'bool',
  tolerance: exact,
  differentiable: false,
  samples: binarySamples(() => COMPARE[op], { a: REAL, b: REAL, ties: true }),
  call: ([a, b]: Tensor[], args) => (a as unknown as Record<CompareOp, (o: unknown) => Tensor>)[op].call(a, args.scalar ?? b!),
  // A comparison's output is bool, so there is no half-precision widening: the scalar is rounded to the input dtype.
  reference: binaryReference(() => COMPARE[op], () => 'bool', (d, v) => roundTo(d, v)),
}));

// ---- where ----

export const WHERE_INFO: OpInfo = {
  name: 'where',
  category: 'primitives',
  dtypes: ALL_DTYPES,
  tolerance: exact,
  differentiable: true,
  gradInputs: [1, 2],
  samples: (dtype, rng) => {
    const cond = (shape: number[]) => randomArray(rng, 'bool', shape);
    const r = (shape: number[]) => randomArray(rng, dtype, shape);
    const samples: Sample[] = [
      { name: 'rand-3x4', inputs: [input(cond([3, 4]), 'bool'), input(r([3, 4]), dtype), input(r([3, 4]), dtype)] },
      { name: 'broadcast-3x1+1x4+3x4', inputs: [input(cond([3, 1]), 'bool'), input(r([1, 4]), dtype), input(r([3, 4]), dtype)] },
      { name: 'strided+transposed-4x3', inputs: [input(cond([4, 3]), 'bool', 'strided'), input(r([4, 3]), dtype, 'transposed'), input(r([4, 3]), dtype, 'strided')] },
      { name: 'empty-0x2', inputs: [input(cond([0, 2]), 'bool'), input(r([0, 2]), dtype), input(r([1, 2]), dtype)] },
      { name: '0-dim', inputs: [input(cond([]), 'bool'), input(r([]), dtype), input(r([]), dtype)] },
    ];
    if (isFloat(dtype)) {
      samples.push({ name: 'nonfinite', inputs: [input(nd([4], [1, 0, 1, 0]), 'bool'), input(nd([4], [NaN, 1, -Infinity, 2]), dtype), input(nd([4], [3, NaN, 4, Infinity]), dtype)], numerics: true });
    }
    return samples;
  },
  call: ([c, a, b]: Tensor[]) => where(c!, a!, b!),
  reference: ([c, a, b]: NdArray[], _args, dtype) => ({ value: zipWith([c!, a!, b!], (x, y, z) => (x !== 0 ? y : z)), dtype }),
};

// ---- cast ----

/** Cast samples keep float → int32 values finite and inside int32 (out of range is unspecified by the contract). */
export const CAST_INFOS: OpInfo[] = ALL_DTYPES.map((to) => ({
  name: `to(${to})`,
  category: 'primitives',
  dtypes: ALL_DTYPES.filter((d) => d !== to),
  // Converting is how data leaves a dtype a backend only stores, so casts need storage only.
  needs: 'storage',
  outDtype: () => to,
  tolerance: exact,
  differentiable: false,
  samples: (dtype, rng) => {
    const domain: Domain = to === 'int32' && isFloat(dtype) ? { lo: -1000, hi: 1000 } : { lo: -70000, hi: 70000 };
    const r = (shape: number[]) => randomArray(rng, dtype, shape, domain);
    const fine = (shape: number[]) => randomArray(rng, dtype, shape, { lo: -3, hi: 3 });
    const samples: Sample[] = [
      { name: 'rand-3x4', inputs: [input(r([3, 4]), dtype)] },
      { name: 'fine-3x4', inputs: [input(fine([3, 4]), dtype)] },
      { name: 'transposed-4x3', inputs: [input(r([4, 3]), dtype, 'transposed')] },
      { name: 'strided-2x5', inputs: [input(r([2, 5]), dtype, 'strided')] },
      { name: '0-dim', inputs: [input(r([]), dtype)] },
      { name: 'empty-0x3', inputs: [input(r([0, 3]), dtype)] },
    ];
    const edgeValues = edges(dtype).filter((v) => !(to === 'int32' && isFloat(dtype) && Math.abs(v) >= 2 ** 31));
    samples.push({ name: 'edge', inputs: [input(nd([edgeValues.length], edgeValues), dtype)] });
    if ((to === 'float16' || to === 'bfloat16') && (dtype === 'float32' || dtype === 'float64')) {
      samples.push({ name: 'ties', inputs: [input(halfTies(rng, to), dtype)] });
    }
    if (isFloat(dtype) && to !== 'int32') samples.push({ name: 'nonfinite', inputs: [input(nd([3], NONFINITE), dtype)], numerics: true });
    return samples;
  },
  call: ([x]: Tensor[]) => x!.to(dtypeObject(to)),
  reference: ([x]: NdArray[]) => ({ value: map(x!, (v) => roundTo(to, v)), dtype: to }),
}));

/**
 * Values exactly halfway between neighbouring f16/bf16 values (exact in f32), normal and
 * subnormal, positive and negative: round-to-nearest-even must pick the even neighbour.
 */
function halfTies(rng: Rng, half: 'float16' | 'bfloat16'): NdArray {
  const decode = half === 'float16' ? float16BitsToNumber : bfloat16BitsToNumber;
  const maxFinite = half === 'float16' ? 0x7bfe : 0x7f7e;
  return nd([64], (i) => {
    const bits = i < 8 ? i : rng.int(0, maxFinite + 1); // the first few are subnormal
    const mid = (decode(bits) + decode(bits + 1)) / 2;
    return i % 2 === 0 ? mid : -mid;
  });
}

export const ELEMENTWISE_INFOS: OpInfo[] = [...UNARY_INFOS, ...BINARY_INFOS, ...COMPARE_INFOS, WHERE_INFO, ...CAST_INFOS];
