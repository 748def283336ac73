// The primitives, written per element for clarity: a strided view is walked index by index, each
// input element is read as its exact value, the result is computed in float64 and rounded once
// into the output's dtype. Reductions and matmul accumulate in float64 whatever `accumulate` asks
// for: more precise than required, which the suite's tolerances allow.
import type {
  ArgReduceOp, BinaryOp, CompareOp, CumulativeOp, DTypeName, Kernels, RandomSpec, ReduceOp, ScatterMode, TensorRef, UnaryOp,
} from '@core/tensor';
import { philoxWords } from './philox.js';
import { JsStorage, roundTo } from './values.js';

type Ref = TensorRef<JsStorage>;

function numel(shape: readonly number[]): number {
  return shape.reduce((n, s) => n * s, 1);
}

/** Visit every multi-index of `shape` in row-major order. */
function forEachIndex(shape: readonly number[], visit: (idx: number[], flat: number) => void): void {
  const n = numel(shape);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < n; flat++) {
    visit(idx, flat);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
}

/** Storage position of element `idx` of a view. */
function position(ref: Ref, idx: readonly number[]): number {
  let p = ref.offset;
  for (let d = 0; d < idx.length; d++) p += idx[d]! * ref.strides[d]!;
  return p;
}

/** A view's values in logical (row-major) order. */
function read(ref: Ref): Float64Array {
  const values = ref.storage.live('read');
  const out = new Float64Array(numel(ref.shape));
  forEachIndex(ref.shape, (idx, flat) => { out[flat] = values[position(ref, idx)]!; });
  return out;
}

/** Store values (logical order) into a view, rounding each into the view's dtype. */
function write(ref: Ref, values: ArrayLike<number>): void {
  const target = ref.storage.live('write');
  forEachIndex(ref.shape, (idx, flat) => { target[position(ref, idx)] = roundTo(ref.dtype, values[flat]!); });
}

const isFloat = (d: DTypeName) => d === 'float32' || d === 'float64' || d === 'float16' || d === 'bfloat16';

/** erf(x) = 2/√π · e^(−x²) · Σ (2x²)ⁿ / (1·3·…·(2n+1)) x: positive terms, no cancellation; ±1 beyond |x| = 6. */
function erf(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  const ax = Math.abs(x);
  if (ax >= 6) return Math.sign(x);
  let term = ax;
  let sum = ax;
  for (let n = 1; n < 500 && term > sum * 1e-17; n++) {
    term *= (2 * ax * ax) / (2 * n + 1);
    sum += term;
  }
  return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * Math.exp(-ax * ax) * sum;
}

function roundHalfEven(x: number): number {
  const r = Math.round(x); // rounds half up
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r === 0 ? x * 0 : r; // ties go to the even neighbour; keeps −0
}

const UNARY: Record<UnaryOp, (x: number) => number> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign: (x) => (x > 0 ? 1 : x < 0 ? -1 : x === 0 ? 0 : NaN),
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
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  erf,
  relu: (x) => (x > 0 || Number.isNaN(x) ? x : 0),
  floor: Math.floor,
  ceil: Math.ceil,
  round: roundHalfEven,
  trunc: Math.trunc,
  logicalNot: (x) => (x === 0 ? 1 : 0),
};

/** Python's modulo: the result takes the divisor's sign. */
function remainder(a: number, b: number): number {
  const m = a % b;
  return m !== 0 && m < 0 !== b < 0 ? m + b : m;
}

/** C's pow: 1^y = 1 and (−1)^±∞ = 1, where Math.pow gives NaN. */
function pow(a: number, b: number): number {
  if (a === 1 || (a === -1 && (b === Infinity || b === -Infinity))) return 1;
  return Math.pow(a, b);
}

function intPow(a: number, b: number): number {
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  let r = 1;
  for (let i = 0; i < b; i++) r = Math.imul(r, a);
  return r;
}

const nanMax = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : a > b ? a : b);
const nanMin = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : a < b ? a : b);

const BINARY: Record<BinaryOp, (a: number, b: number) => number> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow,
  maximum: nanMax,
  minimum: nanMin,
  remainder,
  atan2: Math.atan2,
  logicalAnd: (a, b) => (a !== 0 && b !== 0 ? 1 : 0),
  logicalOr: (a, b) => (a !== 0 || b !== 0 ? 1 : 0),
};

/** int32 arithmetic that f64 cannot do exactly: products and powers wrap like C. */
function binaryFn(op: BinaryOp, dtype: DTypeName): (a: number, b: number) => number {
  if (dtype === 'int32') {
    if (op === 'mul') return Math.imul;
    if (op === 'pow') return intPow;
    if (op === 'remainder') return (a, b) => {
      if (b === 0) throw new RangeError('jsref remainder: integer division by zero');
      return remainder(a, b);
    };
  }
  if (dtype === 'bool') {
    if (op === 'add' || op === 'maximum') return BINARY.logicalOr;
    if (op === 'mul' || op === 'minimum') return BINARY.logicalAnd;
  }
  return BINARY[op];
}

const COMPARE: Record<CompareOp, (a: number, b: number) => boolean> = {
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
};

/** For each element of x, the flat index of the output element it reduces into (reduced axes → 0). */
function reducedTarget(x: Ref, out: Ref, axes: readonly number[]): Int32Array {
  const targets = new Int32Array(numel(x.shape));
  const outShape = out.shape;
  forEachIndex(x.shape, (idx, flat) => {
    let t = 0;
    for (let d = 0; d < idx.length; d++) t = t * outShape[d]! + (axes.includes(d) ? 0 : idx[d]!);
    targets[flat] = t;
  });
  return targets;
}

function reduce(op: ReduceOp, x: Ref, axes: readonly number[], out: Ref, accumulate: DTypeName): void {
  const norm = axes.map((a) => (a < 0 ? a + x.shape.length : a));
  const values = read(x);
  const targets = reducedTarget(x, out, norm);
  const n = numel(out.shape);
  const acc = new Float64Array(n).fill(op === 'sum' ? 0 : op === 'prod' ? 1 : op === 'max' ? -Infinity : Infinity);
  const intProd = op === 'prod' && accumulate === 'int32'; // f64 products of ints lose exactness past 2^53
  values.forEach((v, i) => {
    const t = targets[i]!;
    const a = acc[t]!;
    switch (op) {
      case 'sum': acc[t] = a + v; break;
      case 'prod': acc[t] = intProd ? Math.imul(a, v) : a * v; break;
      case 'max': acc[t] = nanMax(a, v); break;
      case 'min': acc[t] = nanMin(a, v); break;
    }
  });
  write(out, acc);
}

function argReduce(op: ArgReduceOp, x: Ref, axis: number, out: Ref): void {
  const rank = x.shape.length;
  const values = read(x);
  if (rank === 0) { write(out, [0]); return; }
  const a = axis < 0 ? axis + rank : axis;
  const best = new Float64Array(numel(out.shape));
  const at = new Float64Array(numel(out.shape)).fill(-1);
  const targets = reducedTarget(x, out, [a]);
  forEachIndex(x.shape, (idx, flat) => {
    const t = targets[flat]!;
    const v = values[flat]!;
    if (at[t] !== -1 && Number.isNaN(best[t]!)) return; // the first NaN is both the max and the min
    const better = at[t] === -1 || Number.isNaN(v) || (op === 'argmax' ? v > best[t]! : v < best[t]!);
    if (better) { best[t] = v; at[t] = idx[a]!; }
  });
  write(out, at);
}

function matmul(a: Ref, b: Ref, out: Ref): void {
  const [batches, m, n] = out.shape as [number, number, number];
  const k = a.shape[2]!;
  const A = a.storage.live('matmul');
  const B = b.storage.live('matmul');
  const int = out.dtype === 'int32';
  const result = new Float64Array(batches * m * n);
  for (let p = 0; p < batches; p++) {
    const pa = a.shape[0] === 1 ? 0 : p;
    const pb = b.shape[0] === 1 ? 0 : p;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let q = 0; q < k; q++) {
          const x = A[position(a, [pa, i, q])]!;
          const y = B[position(b, [pb, q, j])]!;
          s = int ? (s + Math.imul(x, y)) | 0 : s + x * y;
        }
        result[(p * m + i) * n + j] = s;
      }
    }
  }
  write(out, result);
}

/** PyTorch lets a 0-dim tensor stand for a 1-element vector in gather and scatterAdd. */
function asVector(ref: Ref): Ref {
  return ref.shape.length === 0 ? { ...ref, shape: [1], strides: [1] } : ref;
}

function checkIndex(what: string, i: number, size: number): void {
  // This backend has no readSync, so core does not range-check indices: the kernel must.
  if (!(i >= 0 && i < size)) throw new RangeError(`jsref ${what}: index ${i} is out of bounds for a dimension of size ${size}`);
}

function gather(xRef: Ref, dim: number, indexRef: Ref, outRef: Ref): void {
  const [x, index, out] = [xRef, indexRef, outRef].map(asVector) as [Ref, Ref, Ref];
  const d = dim < 0 ? dim + x.shape.length : dim;
  const X = x.storage.live('gather');
  const I = index.storage.live('gather');
  const picked = new Float64Array(numel(index.shape));
  forEachIndex(index.shape, (idx, flat) => {
    const from = idx.slice();
    from[d] = I[position(index, idx)]!;
    checkIndex('gather', from[d]!, x.shape[d]!);
    picked[flat] = X[position(x, from)]!;
  });
  write(out, picked);
}

function scatterAdd(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref): void {
  const [out, index, src] = [outRef, indexRef, srcRef].map(asVector) as [Ref, Ref, Ref];
  const d = dim < 0 ? dim + out.shape.length : dim;
  const O = out.storage.live('scatterAdd');
  const I = index.storage.live('scatterAdd');
  const S = src.storage.live('scatterAdd');
  const sums = new Map<number, number>(); // storage position → float64 running sum
  forEachIndex(index.shape, (idx) => {
    const to = idx.slice();
    to[d] = I[position(index, idx)]!;
    checkIndex('scatterAdd', to[d]!, out.shape[d]!);
    const p = position(out, to);
    const v = S[position(src, idx)]!;
    const prev = sums.get(p) ?? O[p]!;
    sums.set(p, out.dtype === 'bool' ? (prev !== 0 || v !== 0 ? 1 : 0) : out.dtype === 'int32' ? (prev + v) | 0 : prev + v);
  });
  for (const [p, v] of sums) O[p] = roundTo(out.dtype, v); // one rounding per element
}

/** The storage positions of each fibre of a view along `axis`, in order (a 0-dim view is one fibre of one). */
function fibresOf(ref: Ref, axis: number): number[][] {
  if (ref.shape.length === 0) return [[ref.offset]];
  const a = axis < 0 ? axis + ref.shape.length : axis;
  const fibres: number[][] = [];
  forEachIndex(ref.shape.map((s, d) => (d === a ? 1 : s)), (idx) => {
    const base = position(ref, idx);
    fibres.push(Array.from({ length: ref.shape[a]! }, (_, j) => base + j * ref.strides[a]!));
  });
  return fibres;
}

/** Ascending with NaN the largest (NaNs equal each other, −0 equals +0). */
function ascending(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 0;
  return Number.isNaN(a) ? 1 : -1;
}

/** Each fibre's stable order: ties compare by position, so the order is the same in any sort. */
function argsort(x: Ref, axis: number, descending: boolean, out: Ref): void {
  const X = x.storage.live('argsort');
  const O = out.storage.live('argsort');
  const outFibres = fibresOf(out, axis);
  fibresOf(x, axis).forEach((fibre, f) => {
    const order = fibre.map((_, j) => j).sort((i, j) => (descending ? ascending(X[fibre[j]!]!, X[fibre[i]!]!) : ascending(X[fibre[i]!]!, X[fibre[j]!]!)) || i - j);
    outFibres[f]!.forEach((p, j) => { O[p] = order[j]!; });
  });
}

/** Running sums and products in float64 (int32 wrapping like C), each output rounded once. */
function cumulative(op: CumulativeOp, x: Ref, axis: number, out: Ref): void {
  const X = x.storage.live(op);
  const O = out.storage.live(op);
  const int = out.dtype === 'int32';
  const outFibres = fibresOf(out, axis);
  fibresOf(x, axis).forEach((fibre, f) => {
    let acc = op === 'cumsum' ? 0 : 1;
    fibre.forEach((p, j) => {
      const v = X[p]!;
      acc = op === 'cumsum' ? (int ? (acc + v) | 0 : acc + v) : int ? Math.imul(acc, v) : acc * v;
      O[outFibres[f]![j]!] = roundTo(out.dtype, acc);
    });
  });
}

const SCATTER: Record<ScatterMode, (current: number, v: number) => number> = {
  assign: (_current, v) => v,
  prod: (a, b) => a * b,
  amax: nanMax,
  amin: nanMin,
};

/** In place, contributions in index order (the last of repeated indices wins), each combination rounded on store. */
function scatter(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref, mode: ScatterMode): void {
  const [out, index, src] = [outRef, indexRef, srcRef].map(asVector) as [Ref, Ref, Ref];
  const d = dim < 0 ? dim + out.shape.length : dim;
  const O = out.storage.live('scatter');
  const I = index.storage.live('scatter');
  const S = src.storage.live('scatter');
  const combine = mode === 'prod' && out.dtype === 'int32' ? Math.imul : SCATTER[mode];
  forEachIndex(index.shape, (idx) => {
    const to = idx.slice();
    to[d] = I[position(index, idx)]!;
    checkIndex('scatter', to[d]!, out.shape[d]!);
    const p = position(out, to);
    O[p] = roundTo(out.dtype, combine(O[p]!, S[position(src, idx)]!));
  });
}

function random(out: Ref, spec: RandomSpec): void {
  const words = philoxWords(spec.key, spec.offset, numel(out.shape));
  const dist = spec.distribution;
  const values = words.map((w) => (dist.kind === 'uniform'
    ? (w >>> 8) * 2 ** -24
    : dist.low + Number((BigInt(w) * BigInt(dist.high - dist.low)) >> 32n)));
  write(out, values);
}

export const JsKernels: Kernels<JsStorage> = {
  unary(op, x, out) {
    const f = UNARY[op];
    write(out, read(x).map(f));
  },
  binary(op, a, b, out) {
    const f = binaryFn(op, a.dtype);
    const y = read(b);
    write(out, read(a).map((v, i) => f(v, y[i]!)));
  },
  compare(op, a, b, out) {
    const f = COMPARE[op];
    const y = read(b);
    write(out, read(a).map((v, i) => (f(v, y[i]!) ? 1 : 0)));
  },
  where(cond, a, b, out) {
    const c = read(cond);
    const x = read(a);
    const y = read(b);
    write(out, c.map((v, i) => (v !== 0 ? x[i]! : y[i]!)));
  },
  cast(x, out) {
    // Stores round (float), truncate toward zero (int32) or test != 0 (bool); values are exact already.
    write(out, isFloat(x.dtype) && out.dtype === 'int32' ? read(x).map(Math.trunc) : read(x));
  },
  copy(x, out) {
    write(out, read(x));
  },
  fill(out, value) {
    write(out, new Float64Array(numel(out.shape)).fill(value));
  },
  reduce,
  argReduce,
  matmul,
  gather,
  scatterAdd,
  random,
  argsort,
  cumulative,
  scatter,
};
