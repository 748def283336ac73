// Backward rules of every differentiable op: each op passes `gradcheck`
// (central differences) in float64 on the CPU backend, and its float32 gradient matches the float64
// gradient at the same (float32-representable) inputs. Inputs are small (gradcheck runs two forward
// passes per input element) and chosen away from kinks and singularities: abs/relu/sign away from 0,
// max/min/maximum/clamp without ties, log/sqrt/rsqrt on positives, remainder away from jumps, prod on
// non-zero values.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import {
  bool, cat, einsum, float32, float64, gradcheck, int32, linalg, pad, setFusedKernelsEnabled, stack, tensor, where,
  type DType, type Tensor,
} from '@core/tensor';
import { expectClose } from '../helpers/assert.js';
import { prng } from '../helpers/random.js';

// ---- inputs ----


function numel(shape: readonly number[]): number {
  return shape.reduce((n, s) => n * s, 1);
}

interface In {
  readonly shape: readonly number[];
  /** float32-representable values, so the float32 and float64 runs see the same inputs. */
  readonly values: readonly number[];
  /** Whether the input requires grad (default true); constants are made in the case's dtype too. */
  readonly grad?: boolean;
}

const f32 = (vs: readonly number[]) => vs.map((v) => Math.fround(v));

/** Values with |v| in [0.3, 1.5] and random signs: away from 0 (abs, relu, sign, division). */
function signed(shape: readonly number[], seed: number): In {
  const r = prng(seed);
  return { shape, values: f32(Array.from({ length: numel(shape) }, () => (r() < 0.5 ? -1 : 1) * (0.3 + 1.2 * r()))) };
}

/** Values in [lo, hi). */
function uniform(shape: readonly number[], seed: number, lo = 0.5, hi = 2): In {
  const r = prng(seed);
  return { shape, values: f32(Array.from({ length: numel(shape) }, () => lo + (hi - lo) * r())) };
}

/** Distinct values at least 0.2 apart (no ties for max/min), in shuffled order, none near 0. */
function distinct(shape: readonly number[], seed: number): In {
  const r = prng(seed);
  const n = numel(shape);
  const vs = Array.from({ length: n }, (_, k) => (k - (n - 1) / 2) * 0.37 + 0.11 + 0.05 * r());
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [vs[i], vs[j]] = [vs[j]!, vs[i]!];
  }
  return { shape, values: f32(vs) };
}

const given = (shape: readonly number[], values: readonly number[]): In => ({ shape, values: f32(values) });
const constant = (x: In): In => ({ ...x, grad: false });

/** `b` shaped like a broadcast partner of `a`, each pair at least 0.2 apart (maximum/minimum/clamp). */
function apart(a: In, shape: readonly number[], seed: number): In {
  const r = prng(seed);
  const n = numel(shape);
  // b[j] = a[j]'s value (cycling) ± 0.2..0.8, so pairs that meet under broadcasting do not tie.
  return { shape, values: f32(Array.from({ length: n }, (_, j) => a.values[j % a.values.length]! + (r() < 0.5 ? -1 : 1) * (0.2 + 0.6 * r()))) };
}

// Constants captured by the cases (not differentiated).
const idx = (values: number[], shape: number[]) => tensor(values, { dtype: int32 }).reshape(shape);
const mask = (values: boolean[], shape: number[]) => tensor(values, { dtype: bool }).reshape(shape);

function withFused<T>(on: boolean, fn: () => T): T {
  setFusedKernelsEnabled(on);
  try {
    return fn();
  } finally {
    setFusedKernelsEnabled(true);
  }
}

// ---- the table ----

interface Case {
  readonly name: string;
  readonly inputs: readonly In[];
  readonly fn: (...xs: Tensor[]) => Tensor;
  /** gradcheck options (float64). */
  readonly eps?: number;
  readonly atol?: number;
  readonly rtol?: number;
  /** float32 vs float64 gradient: |g32 − g64| ≤ tol·(|g64| + max|g64|). */
  readonly f32tol?: number;
}

const x23 = signed([2, 3], 1);
const p23 = uniform([2, 3], 2);

const UNARY: Case[] = [
  { name: 'neg', inputs: [x23], fn: (x) => x.neg() },
  { name: 'abs (away from 0)', inputs: [x23], fn: (x) => x.abs() },
  { name: 'exp', inputs: [x23], fn: (x) => x.exp() },
  { name: 'expm1', inputs: [x23], fn: (x) => x.expm1() },
  { name: 'log (positive)', inputs: [p23], fn: (x) => x.log() },
  { name: 'log1p (> -1)', inputs: [uniform([2, 3], 3, -0.5, 2)], fn: (x) => x.log1p() },
  { name: 'sqrt (positive)', inputs: [p23], fn: (x) => x.sqrt() },
  { name: 'rsqrt (positive)', inputs: [p23], fn: (x) => x.rsqrt() },
  { name: 'reciprocal (away from 0)', inputs: [x23], fn: (x) => x.reciprocal() },
  { name: 'sin', inputs: [x23], fn: (x) => x.sin() },
  { name: 'cos', inputs: [x23], fn: (x) => x.cos() },
  { name: 'tan (|x| < 1.2)', inputs: [uniform([2, 3], 4, -1.2, 1.2)], fn: (x) => x.tan() },
  { name: 'tanh', inputs: [x23], fn: (x) => x.tanh() },
  { name: 'sigmoid', inputs: [x23], fn: (x) => x.sigmoid() },
  { name: 'erf', inputs: [x23], fn: (x) => x.erf() },
  { name: 'relu (away from 0)', inputs: [x23], fn: (x) => x.relu() },
  { name: 'square', inputs: [x23], fn: (x) => x.square() },
  // Piecewise constant: zero gradients (inputs away from the jumps).
  { name: 'sign (zero grad)', inputs: [x23], fn: (x) => x.sign() },
  { name: 'floor (zero grad)', inputs: [given([4], [-1.7, -0.3, 0.4, 2.6])], fn: (x) => x.floor() },
  { name: 'ceil (zero grad)', inputs: [given([4], [-1.7, -0.3, 0.4, 2.6])], fn: (x) => x.ceil() },
  { name: 'round (zero grad)', inputs: [given([4], [-1.7, -0.3, 0.4, 2.3])], fn: (x) => x.round() },
  { name: 'trunc (zero grad)', inputs: [given([4], [-1.7, -0.3, 0.4, 2.6])], fn: (x) => x.trunc() },
  { name: 'exp of a non-contiguous input', inputs: [x23], fn: (x) => x.t().exp() },
  { name: 'unary chain on 0-dim', inputs: [given([], [0.7])], fn: (x) => x.sin().exp().mul(x) },
];

/** remainder inputs: b > 0 and a/b at least 0.2 away from an integer (remainder jumps there). */
function remainderPair(seed: number): [In, In] {
  const r = prng(seed);
  const b = Array.from({ length: 6 }, () => 0.7 + 0.8 * r());
  const a = b.map((bv) => bv * (Math.floor(r() * 6) - 3 + 0.2 + 0.6 * r()));
  return [given([2, 3], a), given([2, 3], b)];
}

const maxA = distinct([2, 3], 5);
const BINARY: Case[] = [
  { name: 'add', inputs: [x23, signed([2, 3], 6)], fn: (a, b) => a.add(b) },
  { name: 'add with alpha', inputs: [x23, signed([2, 3], 6)], fn: (a, b) => a.add(b, 0.5) },
  { name: 'add broadcast [2,3] + [3]', inputs: [x23, signed([3], 7)], fn: (a, b) => a.add(b) },
  { name: 'add broadcast [2,1] + [1,3]', inputs: [signed([2, 1], 8), signed([1, 3], 9)], fn: (a, b) => a.add(b) },
  { name: 'add scalar', inputs: [x23], fn: (a) => a.add(2) },
  { name: 'add 0-dim tensor (requires grad) + [2,3]', inputs: [given([], [0.8]), x23], fn: (a, b) => a.add(b) },
  { name: 'mul of two 0-dim tensors', inputs: [given([], [0.8]), given([], [-1.3])], fn: (a, b) => a.mul(b) },
  { name: 'sub', inputs: [x23, signed([2, 3], 6)], fn: (a, b) => a.sub(b) },
  { name: 'sub with alpha, broadcast', inputs: [x23, signed([3], 10)], fn: (a, b) => a.sub(b, 2.5) },
  { name: 'sub scalar', inputs: [x23], fn: (a) => a.sub(0.25) },
  { name: 'mul', inputs: [x23, signed([2, 3], 6)], fn: (a, b) => a.mul(b) },
  { name: 'mul broadcast [2,3,1] * [4]', inputs: [signed([2, 3, 1], 11), signed([4], 12)], fn: (a, b) => a.mul(b) },
  { name: 'mul scalar', inputs: [x23], fn: (a) => a.mul(-1.5) },
  { name: 'mul by itself (same tensor twice)', inputs: [x23], fn: (a) => a.mul(a) },
  { name: 'mul by a constant 0-dim tensor', inputs: [x23, constant(given([], [1.7]))], fn: (a, c) => a.mul(c) },
  { name: 'div', inputs: [x23, signed([2, 3], 6)], fn: (a, b) => a.div(b) },
  { name: 'div broadcast [2,3] / [3]', inputs: [x23, signed([3], 13)], fn: (a, b) => a.div(b) },
  { name: 'div scalar', inputs: [x23], fn: (a) => a.div(3) },
  { name: 'div 0-dim / [2,3]', inputs: [given([], [1.3]), x23], fn: (a, b) => a.div(b) },
  { name: 'pow tensor^tensor (positive base)', inputs: [p23, signed([2, 3], 14)], fn: (a, b) => a.pow(b) },
  { name: 'pow broadcast [2,3]^[3]', inputs: [p23, signed([3], 15)], fn: (a, b) => a.pow(b) },
  { name: 'pow tensor^2 (any sign)', inputs: [x23], fn: (a) => a.pow(2) },
  { name: 'pow tensor^3 (any sign)', inputs: [x23], fn: (a) => a.pow(3) },
  { name: 'pow tensor^-1.5 (positive base)', inputs: [p23], fn: (a) => a.pow(-1.5) },
  // PyTorch: d/da a^b = 0 where b = 0, so a zero base with exponents 0, 1, 2 gives 0 + 1 + 0 (not NaN).
  { name: 'pow zero base ^ constant exponents 0, 1, 2', inputs: [given([3], [0, 1.5, -0.7]), constant(given([3], [0, 1, 2]))], fn: (a, e) => a.unsqueeze(1).pow(e) },
  { name: 'pow tensor^0 at a zero base', inputs: [given([3], [0, 1.5, -0.7])], fn: (a) => a.pow(0).add(a) },
  { name: 'pow constant 0-dim base ^ tensor', inputs: [constant(given([], [1.8])), x23], fn: (c, b) => c.pow(b) },
  { name: 'maximum (no ties)', inputs: [maxA, apart(maxA, [2, 3], 16)], fn: (a, b) => a.maximum(b) },
  { name: 'maximum broadcast [2,3] vs [3] (no ties)', inputs: [maxA, apart(maxA, [3], 17)], fn: (a, b) => a.maximum(b) },
  { name: 'maximum with a scalar', inputs: [x23], fn: (a) => a.maximum(0.1) },
  { name: 'minimum (no ties)', inputs: [maxA, apart(maxA, [2, 3], 18)], fn: (a, b) => a.minimum(b) },
  { name: 'minimum broadcast [3] vs [2,3] (no ties)', inputs: [apart(maxA, [3], 19), maxA], fn: (a, b) => a.minimum(b) },
  { name: 'remainder (away from jumps)', inputs: remainderPair(20), fn: (a, b) => a.remainder(b) },
  { name: 'remainder by a scalar', inputs: [given([4], [2.3, -1.1, 0.4, 3.7])], fn: (a) => a.remainder(1.5) },
  { name: 'atan2', inputs: [x23, signed([2, 3], 21)], fn: (a, b) => a.atan2(b) },
  { name: 'atan2 broadcast [2,3] vs [3]', inputs: [x23, signed([3], 22)], fn: (a, b) => a.atan2(b) },
  { name: 'atan2 with a scalar', inputs: [x23], fn: (a) => a.atan2(0.7) },
];

const clampX = given([2, 3], [-1.2, -0.3, 0.1, 0.7, 1.4, -0.8]);
const SELECTION: Case[] = [
  { name: 'where(cond, a, b)', inputs: [x23, signed([2, 3], 23)], fn: (a, b) => where(mask([true, false, true, false, false, true], [2, 3]), a, b) },
  { name: 'where broadcast: cond [2,3], a [3], b [2,1]', inputs: [signed([3], 24), signed([2, 1], 25)], fn: (a, b) => where(mask([true, false, true, false, false, true], [2, 3]), a, b) },
  { name: 'where with a scalar other', inputs: [x23], fn: (a) => where(mask([true, false, true, false, false, true], [2, 3]), a, 0.5) },
  { name: 'where with a scalar input', inputs: [x23], fn: (b) => where(mask([true, false, true, false, false, true], [2, 3]), -2, b) },
  { name: 'Tensor.where(cond, other)', inputs: [x23, signed([2, 3], 26)], fn: (a, b) => a.where(mask([false, false, true, true, false, true], [2, 3]), b) },
  { name: 'clamp(min, max) scalars', inputs: [clampX], fn: (x) => x.clamp(-0.5, 0.5) },
  { name: 'clamp(min) only', inputs: [clampX], fn: (x) => x.clamp(0) },
  { name: 'clamp(null, max) only', inputs: [clampX], fn: (x) => x.clamp(null, 0.4) },
  {
    name: 'clamp with tensor min and max (grads to all three)',
    inputs: [clampX, given([3], [-0.5, -0.5, 0.3]), given([3], [0.5, 0.9, 0.8])],
    fn: (x, lo, hi) => x.clamp(lo, hi),
  },
];

const CASTS: Case[] = [
  // The gradient comes back in the leaf's dtype (the engine casts it): checked for every case below.
  { name: 'cast float64 → float32 → float64', inputs: [x23], fn: (x) => x.to(float32).mul(3).to(float64), eps: 1e-3, atol: 1e-3 },
  { name: 'cast to float32 then a nonlinear op', inputs: [x23], fn: (x) => x.float().exp(), eps: 1e-3, atol: 1e-3, rtol: 1e-2 },
  { name: 'cast to float64 (.double())', inputs: [x23], fn: (x) => x.double().sin().mul(x.double()) },
  { name: 'mixed float32 × float64 operands promote', inputs: [x23, signed([2, 3], 27)], fn: (a, b) => a.float().mul(b.double()), eps: 1e-3, atol: 1e-3 },
];

const x234 = signed([2, 3, 4], 28);
const VIEWS: Case[] = [
  { name: 'reshape', inputs: [x234], fn: (x) => x.reshape([4, 6]).mul(x.reshape([4, 6])) },
  { name: 'reshape with -1', inputs: [x234], fn: (x) => x.reshape([-1, 2]) },
  { name: 'reshape of a non-contiguous view (copy path)', inputs: [x234], fn: (x) => x.transpose(0, 2).reshape([-1]) },
  { name: 'view', inputs: [x234], fn: (x) => x.view([6, 4]).exp() },
  { name: 'permute', inputs: [x234], fn: (x) => x.permute([2, 0, 1]) },
  { name: 'permute of a non-leaf', inputs: [x234], fn: (x) => x.mul(x).permute([1, 2, 0]).mul(2) },
  { name: 'transpose', inputs: [x234], fn: (x) => x.transpose(0, 2) },
  { name: 't() of 2-D', inputs: [x23], fn: (x) => x.t() },
  { name: 't() of 1-D', inputs: [signed([4], 29)], fn: (x) => x.t().mul(2) },
  { name: '.T of 3-D', inputs: [x234], fn: (x) => x.T.mul(x.T) },
  { name: 'expand [3,1] → [2,3,4]', inputs: [signed([3, 1], 30)], fn: (x) => x.expand([2, 3, 4]) },
  { name: 'expand with -1 and expandAs', inputs: [signed([1, 4], 31)], fn: (x) => x.expand([3, -1]).mul(x.expandAs(tensor([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]).double())) },
  { name: 'slice', inputs: [x234], fn: (x) => x.slice(2, 1, 3) },
  { name: 'slice with step', inputs: [signed([5, 4], 32)], fn: (x) => x.slice(0, 0, 5, 2) },
  { name: 'slice with step and negative start', inputs: [signed([5, 7], 33)], fn: (x) => x.slice(1, -6, undefined, 3) },
  { name: 'overlapping slices add up', inputs: [signed([6], 34)], fn: (x) => x.slice(0, 0, 4).mul(x.slice(0, 2, 6)) },
  { name: 'narrow', inputs: [x234], fn: (x) => x.narrow(1, 1, 2) },
  { name: 'select', inputs: [x234], fn: (x) => x.select(1, -1) },
  { name: 'select twice (a scalar element)', inputs: [x23], fn: (x) => x.select(0, 1).select(0, 2).mul(x.select(1, 0).sum()) },
  { name: 'squeeze(dim)', inputs: [signed([3, 1, 2], 35)], fn: (x) => x.squeeze(1) },
  { name: 'squeeze() all', inputs: [signed([1, 3, 1, 2], 36)], fn: (x) => x.squeeze() },
  { name: 'unsqueeze', inputs: [x23], fn: (x) => x.unsqueeze(1).mul(x.unsqueeze(-1)) },
  { name: 'flatten', inputs: [x234], fn: (x) => x.flatten() },
  { name: 'flatten(1)', inputs: [x234], fn: (x) => x.flatten(1) },
  { name: 'contiguous of a permuted view', inputs: [x234], fn: (x) => x.permute([2, 1, 0]).contiguous() },
  { name: 'asStrided: overlapping 1-D windows', inputs: [signed([6], 37)], fn: (x) => x.asStrided([4, 3], [1, 1]) },
  { name: 'asStrided: overlapping 2-D patches (unfold)', inputs: [signed([3, 4], 38)], fn: (x) => x.asStrided([2, 3, 2, 2], [4, 1, 4, 1]) },
  { name: 'asStrided with an offset, of a non-leaf', inputs: [signed([8], 39)], fn: (x) => x.mul(x).asStrided([3, 2], [2, 1], 1) },
];

const x34 = signed([3, 4], 40);
const REDUCTIONS: Case[] = [
  { name: 'sum() all', inputs: [x234], fn: (x) => x.sum() },
  { name: 'sum(dim)', inputs: [x234], fn: (x) => x.sum(1) },
  { name: 'sum(dims, keepdim)', inputs: [x234], fn: (x) => x.sum([0, 2], true) },
  { name: 'sum(-1) of a non-leaf', inputs: [x234], fn: (x) => x.mul(x).sum(-1) },
  { name: 'sum of 0-dim', inputs: [given([], [0.6])], fn: (x) => x.exp().sum() },
  { name: 'mean() all', inputs: [x234], fn: (x) => x.mean() },
  { name: 'mean(dim)', inputs: [x234], fn: (x) => x.mean(2) },
  { name: 'mean(dims, keepdim)', inputs: [x234], fn: (x) => x.mean([0, 1], true) },
  { name: 'prod() all (non-zero)', inputs: [given([2, 3], [0.9, -1.2, 1.1, 0.7, -0.8, 1.3])], fn: (x) => x.prod() },
  { name: 'prod(dim) (non-zero)', inputs: [x34], fn: (x) => x.prod(1) },
  { name: 'prod(dim, keepdim) (non-zero)', inputs: [x34], fn: (x) => x.prod(0, true) },
  // prod's gradient is the product of the others, also where the slice holds zeros (not Π/x = 0/0).
  { name: 'prod(dim) with one zero and with two zeros in a slice', inputs: [given([3, 3], [0.9, 0, 1.1, 0, 0, 1.3, -0.6, 0, 1.2])], fn: (x) => x.prod(1) },
  { name: 'prod() all with one zero', inputs: [given([2, 2], [0.9, -1.2, 0, 0.7])], fn: (x) => x.prod() },
  { name: 'prod of a 0-dim zero', inputs: [given([], [0])], fn: (x) => x.prod() },
  { name: 'max() all (no ties)', inputs: [distinct([3, 4], 41)], fn: (x) => x.max() },
  { name: 'min() all (no ties)', inputs: [distinct([3, 4], 42)], fn: (x) => x.min() },
  { name: 'max(dim).values', inputs: [distinct([3, 4], 43)], fn: (x) => x.max(1).values },
  { name: 'max(dim, keepdim).values', inputs: [distinct([3, 4], 44)], fn: (x) => x.max(0, true).values },
  { name: 'min(dim).values', inputs: [distinct([2, 3, 4], 45)], fn: (x) => x.min(-1).values },
  { name: 'amax(dims)', inputs: [distinct([2, 3, 4], 46)], fn: (x) => x.amax([0, 2]) },
  { name: 'amax(dim, keepdim)', inputs: [distinct([3, 4], 47)], fn: (x) => x.amax(1, true) },
  { name: 'amin() all', inputs: [distinct([3, 4], 48)], fn: (x) => x.amin() },
  { name: 'amax of 0-dim', inputs: [given([], [0.3])], fn: (x) => x.amax().mul(x) },
  { name: 'amin(dim)', inputs: [distinct([3, 4], 49)], fn: (x) => x.amin(0) },
  { name: 'var() all', inputs: [x34], fn: (x) => x.var() },
  { name: 'var(dim)', inputs: [x34], fn: (x) => x.var(1) },
  { name: 'var(dims, keepdim)', inputs: [x234], fn: (x) => x.var([0, 2], true) },
  { name: 'var(dim, correction 0)', inputs: [x34], fn: (x) => x.var(1, false, { correction: 0 }) },
  { name: 'var(dim, keepdim, correction 2)', inputs: [x34], fn: (x) => x.var(1, true, { correction: 2 }) },
  { name: 'std() all', inputs: [x34], fn: (x) => x.std() },
  { name: 'std(dim, keepdim)', inputs: [x34], fn: (x) => x.std(0, true) },
  { name: 'std(dims, correction 0)', inputs: [x234], fn: (x) => x.std([1, 2], false, { correction: 0 }) },
];

const LINALG: Case[] = [
  { name: 'matmul 1-D · 1-D (dot)', inputs: [signed([4], 50), signed([4], 51)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 2-D · 1-D (mv)', inputs: [signed([3, 4], 52), signed([4], 53)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 1-D · 2-D (vm)', inputs: [signed([4], 54), signed([4, 3], 55)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 2-D · 2-D (mm)', inputs: [signed([2, 3], 56), signed([3, 4], 57)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 3-D · 3-D (batched)', inputs: [signed([2, 2, 3], 58), signed([2, 3, 2], 59)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul broadcast batch [2,1,2,3] · [3,3,2]', inputs: [signed([2, 1, 2, 3], 60), signed([3, 3, 2], 61)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 3-D · 2-D', inputs: [signed([2, 2, 3], 62), signed([3, 2], 63)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 2-D · 3-D', inputs: [signed([2, 3], 64), signed([2, 3, 2], 65)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 1-D · 3-D', inputs: [signed([3], 66), signed([2, 3, 2], 67)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul 3-D · 1-D', inputs: [signed([2, 2, 3], 68), signed([3], 69)], fn: (a, b) => a.matmul(b) },
  { name: 'matmul of transposed (non-contiguous) operands', inputs: [signed([3, 2], 70), signed([4, 3], 71)], fn: (a, b) => a.t().matmul(b.t()) },
  { name: 'matmul with a constant operand', inputs: [signed([2, 3], 72), constant(signed([3, 2], 73))], fn: (a, b) => a.matmul(b) },
  { name: 'mm', inputs: [signed([2, 3], 74), signed([3, 2], 75)], fn: (a, b) => a.mm(b) },
  { name: 'bmm', inputs: [signed([2, 2, 3], 76), signed([2, 3, 2], 77)], fn: (a, b) => a.bmm(b) },
];

const INDEXING: Case[] = [
  { name: 'gather dim 1 (repeated indices add up)', inputs: [x34], fn: (x) => x.gather(1, idx([0, 0, 1, 3, 2, 2], [3, 2])) },
  { name: 'gather dim 0', inputs: [x34], fn: (x) => x.gather(0, idx([2, 0, 1, 2, 1, 1, 0, 0], [2, 4])) },
  {
    name: 'scatterAdd: grads to self and src (duplicate indices)',
    inputs: [x34, signed([3, 2], 78)],
    fn: (x, src) => x.scatterAdd(1, idx([0, 0, 1, 3, 2, 2], [3, 2]), src).mul(x),
  },
  { name: 'scatterAdd: grad to src only', inputs: [constant(x34), signed([2, 4], 79)], fn: (x, src) => x.scatterAdd(0, idx([2, 0, 1, 2, 1, 1, 0, 0], [2, 4]), src) },
  { name: 'indexSelect dim 0 (repeats)', inputs: [signed([4, 3], 80)], fn: (x) => x.indexSelect(0, idx([2, 0, 2], [3])) },
  { name: 'indexSelect dim 1', inputs: [signed([4, 3], 81)], fn: (x) => x.indexSelect(1, idx([1, 1, 0], [3])) },
];

const JOINS: Case[] = [
  { name: 'cat dim 1', inputs: [signed([2, 2], 82), signed([2, 3], 83)], fn: (a, b) => cat([a, b], 1) },
  { name: 'cat dim 0 with a constant in the middle', inputs: [signed([1, 3], 84), constant(signed([2, 3], 85)), signed([2, 3], 86)], fn: (a, b, c) => cat([a, b, c], 0) },
  { name: 'cat of the same tensor twice', inputs: [signed([2, 2], 87)], fn: (a) => cat([a, a.mul(2), a], -1) },
  { name: 'stack dim 0', inputs: [signed([2, 3], 88), signed([2, 3], 89)], fn: (a, b) => stack([a, b], 0) },
  { name: 'stack of the same tensor twice', inputs: [signed([3], 99)], fn: (a) => stack([a, a.exp(), a], 1) },
  { name: 'stack dim -1', inputs: [signed([2, 3], 90), signed([2, 3], 91)], fn: (a, b) => stack([a, b], -1) },
  { name: 'pad last dim', inputs: [x23], fn: (x) => pad(x, [1, 2]) },
  { name: 'pad two dims with a value', inputs: [x23], fn: (x) => pad(x, [1, 0, 2, 1], 0.5) },
  { name: 'pad negative (crop)', inputs: [signed([3, 4], 92)], fn: (x) => pad(x, [-1, 1, 0, -1]) },
  { name: 'pad crop both sides of a non-leaf', inputs: [signed([2, 5], 93)], fn: (x) => pad(x.mul(x), [-1, -2]) },
];

const SOFTMAX: Case[] = [true, false].flatMap((fused) => {
  const tag = fused ? 'fused' : 'decomposed';
  const x = signed([2, 3, 4], 94);
  return [
    { name: `softmax dim -1 (${tag})`, inputs: [x], fn: (t: Tensor) => withFused(fused, () => t.softmax(-1)) },
    { name: `softmax dim 0 (${tag})`, inputs: [x], fn: (t: Tensor) => withFused(fused, () => t.softmax(0)) },
    { name: `softmax dim 1 of a non-leaf (${tag})`, inputs: [x], fn: (t: Tensor) => withFused(fused, () => t.mul(2).softmax(1)) },
    { name: `logSoftmax dim -1 (${tag})`, inputs: [x], fn: (t: Tensor) => withFused(fused, () => t.logSoftmax(-1)) },
    { name: `logSoftmax dim 1 (${tag})`, inputs: [x], fn: (t: Tensor) => withFused(fused, () => t.logSoftmax(1)) },
    { name: `logSoftmax of 1-D (${tag})`, inputs: [signed([5], 95)], fn: (t: Tensor) => withFused(fused, () => t.logSoftmax(0).mul(t)) },
    { name: `softmax of 0-dim (${tag})`, inputs: [given([], [0.7])], fn: (t: Tensor) => withFused(fused, () => t.softmax(0).mul(t)) },
  ];
});

const IN_PLACE: Case[] = [
  {
    name: 'copy_ into a non-leaf: the old history is cut, the gradient goes to the source',
    inputs: [x23, signed([2, 3], 96)],
    fn: (a, b) => {
      const y = a.mul(2);
      y.copy_(b.mul(3));
      return y.mul(a);
    },
  },
  {
    name: 'copy_ broadcast [3] into a non-leaf [2,3]',
    inputs: [x23, signed([3], 97)],
    fn: (a, b) => {
      const y = a.exp(); // overwritten: a's gradient comes only from the `.add(a)` below
      y.copy_(b);
      return y.mul(y).add(a);
    },
  },
  {
    name: 'add_ and mul_ (scalar) on a non-leaf',
    inputs: [x23, signed([2, 3], 98)],
    fn: (a, b) => {
      const y = a.mul(b);
      y.add_(b);
      y.mul_(3);
      return y.mul(a);
    },
  },
];

// PyTorch's composite ops (core's ops/decompositions.ts): their gradients come from the parts.
const m34 = signed([3, 4], 100);
const mask34 = () => mask([true, false, false, true, false, true, false, false, true, true, false, false], [3, 4]);
const shape26 = () => tensor(new Array<number>(12).fill(0)).reshape([2, 6]);
const COMPOSITES: Case[] = [
  { name: 'maskedFill with a number', inputs: [m34], fn: (x) => x.maskedFill(mask34(), 0.5) },
  { name: 'maskedFill with a 0-dim value tensor (grads to both)', inputs: [x23, given([], [0.7])], fn: (x, v) => x.maskedFill(mask([true, false, true, false, false, true], [2, 3]), v) },
  { name: 'tril and triu', inputs: [m34], fn: (x) => x.tril(1).mul(x.triu(-1)) },
  { name: 'split into sizes, joined the other way round', inputs: [m34], fn: (x) => { const [a, b] = x.split([1, 2]); return cat([b!, a!.mul(2)], 0); } },
  { name: 'chunk and unbind', inputs: [m34], fn: (x) => stack([...x.chunk(2, 1).map((p) => p.sum(1)), x.unbind(1)[3]!], 0) },
  { name: 'flip and roll', inputs: [m34], fn: (x) => x.flip([0, 1]).mul(x.roll([1, -2], [0, 1])) },
  { name: 'roll of the flattened tensor', inputs: [m34], fn: (x) => x.roll(5).mul(x) },
  { name: 'repeat, tile and repeatInterleave', inputs: [signed([2, 3], 101)], fn: (x) => x.repeat([2, 1]).add(x.tile([2, 1])).mul(x.repeatInterleave(2, 0)) },
  { name: "norm: 'fro', p = 1 over a dim, Infinity (no ties), p = 3", inputs: [m34], fn: (x) => stack([x.norm(), x.norm(1, 1).sum(), x.norm(Infinity), x.norm(3, [0, 1])], 0) },
  { name: 'linalg.vectorNorm(ord -1.5, dim, keepdim) and dist', inputs: [m34, signed([4], 102)], fn: (x, y) => linalg.vectorNorm(x, -1.5, 1, true).add(x.dist(y)) },
  { name: 'outer', inputs: [signed([3], 103), signed([4], 104)], fn: (a, b) => a.outer(b) },
  { name: 'addmm with beta and alpha (input broadcast)', inputs: [signed([4], 105), signed([2, 3], 106), signed([3, 4], 107)], fn: (i, a, b) => i.addmm(a, b, { beta: 0.5, alpha: -2 }) },
  { name: 'baddbmm (input broadcast)', inputs: [signed([2, 4], 108), signed([2, 2, 3], 109), signed([2, 3, 4], 110)], fn: (i, a, b) => i.baddbmm(a, b, { alpha: 1.5 }) },
  {
    name: 'einsum: matrix product, diagonal, three operands',
    inputs: [signed([3, 3], 111), signed([3, 2], 112), signed([2, 3, 3], 113)],
    fn: (a, b, w) => einsum('ij,jk->ik', a, b).sum(0).add(einsum('ii->i', a).sum()).add(einsum('i,aij,j->a', a.select(0, 0), w, a.select(1, 1))),
  },
  { name: 'einsum with an ellipsis broadcast', inputs: [signed([2, 1, 2, 3], 114), signed([3, 3, 2], 115)], fn: (a, b) => einsum('...ij,...jk->...ik', a, b) },
  { name: 'lerp with scalar weights on both sides of 0.5 and a tensor weight', inputs: [x23, signed([2, 3], 116), uniform([2, 3], 117, -0.4, 1.4)], fn: (a, b, w) => a.lerp(b, 0.3).add(a.lerp(b, 0.8)).mul(a.lerp(b, w)) },
  { name: 'addcmul and addcdiv (broadcast)', inputs: [x23, signed([2, 3], 118), signed([3], 119)], fn: (a, b, c) => a.addcmul(b, c, { value: 0.5 }).mul(a.addcdiv(b, c, { value: -2 })) },
  { name: 'clampMin and clampMax (away from the bounds)', inputs: [clampX], fn: (x) => x.clampMin(-0.5).mul(x.clampMax(0.4)) },
  { name: 'hypot (broadcast)', inputs: [x23, signed([3], 120)], fn: (a, b) => a.hypot(b) },
  { name: 'take (repeats and negative indices)', inputs: [m34], fn: (x) => x.take(idx([0, -1, 5, 5], [2, 2])) },
  { name: 'takeAlongDim (broadcast)', inputs: [m34], fn: (x) => x.takeAlongDim(idx([2, 0], [2, 1]), 0) },
  { name: 'indexFill with a 0-dim value tensor', inputs: [m34, given([], [0.9])], fn: (x, v) => x.indexFill(1, idx([0, -1], [2]), v) },
  { name: 'indexCopy: grads to self and source', inputs: [m34, signed([2, 4], 121)], fn: (x, s) => x.indexCopy(0, idx([2, 0], [2]), s).mul(x) },
  { name: 'indexAdd with alpha and repeated indices', inputs: [m34, signed([3, 4], 122)], fn: (x, s) => x.indexAdd(0, idx([1, 1, 0], [3]), s, { alpha: 0.5 }) },
  { name: 'viewAs and reshapeAs', inputs: [m34], fn: (x) => x.t().reshapeAs(shape26()).mul(x.viewAs(shape26())) },
  { name: 'diag of a vector and of a matrix, diagonal, trace', inputs: [signed([3], 123), m34], fn: (v, m) => v.diag(1).sum(0).add(m.diag(-1).sum()).add(m.diagonal(1).sum()).mul(m.trace()) },
  { name: 'diagonal of a non-contiguous 3-D tensor', inputs: [x234], fn: (x) => x.transpose(0, 2).diagonal(0, 1, 2) },
  {
    name: 'in-place maskedFill_, indexAdd_, addcmul_, addcdiv_, indexFill_, indexCopy_ on a non-leaf',
    inputs: [m34, signed([2, 4], 124)],
    fn: (x, s) => {
      const y = x.mul(1);
      y.maskedFill_(mask34(), 0.5).indexAdd_(0, idx([1, 1], [2]), s, { alpha: 2 }).addcmul_(x, x, { value: 0.25 });
      y.addcdiv_(x, x.abs().add(1)).indexFill_(1, idx([2], [1]), -1).indexCopy_(0, idx([2, 0], [2]), s.mul(3));
      return y.mul(x);
    },
  },
];

const GROUPS: Record<string, Case[]> = {
  'unary ops': UNARY,
  'binary ops (broadcasting, scalars, 0-dim)': BINARY,
  'where and clamp': SELECTION,
  'casts (gradient dtype)': CASTS,
  views: VIEWS,
  reductions: REDUCTIONS,
  'matmul family': LINALG,
  'gather, scatterAdd, indexSelect': INDEXING,
  'cat, stack, pad': JOINS,
  'softmax and logSoftmax, fused kernels on and off': SOFTMAX,
  'in-place ops on non-leaves': IN_PLACE,
  "PyTorch's composite ops": COMPOSITES,
};

// ---- checks ----

/** The projection weights gradcheck uses: Σ w·out, so every output element matters differently. */
function weights(n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + 1) * 0.5 + 0.75);
}

function leaves(c: Case, dtype: DType): Tensor[] {
  return c.inputs.map((inp) => {
    const t = tensor(inp.values.slice(), { dtype }).reshape(inp.shape);
    return inp.grad === false ? t : t.requiresGrad_();
  });
}

/** Gradients of Σ w·fn(inputs) in `dtype`, as float64 values, after checking each one's dtype and shape. */
function analytic(c: Case, dtype: DType): Array<Float64Array | null> {
  const xs = leaves(c, dtype);
  const out = c.fn(...xs);
  expect(out.requiresGrad, 'the output requires grad').toBe(true);
  out.backward(tensor(weights(out.numel()), { dtype: out.dtype }).reshape(out.shape));
  return xs.map((x, i) => {
    if (c.inputs[i]!.grad === false) {
      expect(x.grad, `input ${i} (constant) has no grad`).toBeNull();
      return null;
    }
    const g = x.grad;
    expect(g, `input ${i} has a grad`).not.toBeNull();
    expect(g!.dtype, `input ${i}: gradient dtype`).toBe(dtype);
    expect(g!.shape, `input ${i}: gradient shape`).toEqual(x.shape);
    expect(g!.requiresGrad, `input ${i}: the gradient is not part of a graph`).toBe(false);
    return Float64Array.from(g!.to(float64).dataSync());
  });
}

for (const [group, cases] of Object.entries(GROUPS)) {
  describe(group, () => {
    for (const c of cases) {
      it(`${c.name}: gradcheck in float64`, () => {
        const xs = leaves(c, float64);
        const res = gradcheck(c.fn, xs, {
          ...(c.eps !== undefined ? { eps: c.eps } : {}),
          ...(c.atol !== undefined ? { atol: c.atol } : {}),
          ...(c.rtol !== undefined ? { rtol: c.rtol } : {}),
        });
        expect(res.mismatch ?? 'ok').toBe('ok');
        expect(res.ok).toBe(true);
      });

      it(`${c.name}: float32 gradient matches float64`, () => {
        const g64 = analytic(c, float64);
        const g32 = analytic(c, float32);
        const tol = c.f32tol ?? 1e-4;
        g64.forEach((e, i) => {
          if (!e) return;
          const scale = e.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
          expectClose(g32[i]!, e, { atol: tol * scale, rtol: tol });
        });
      });
    }
  });
}

// ---- sanity checks of the harness itself ----

describe('gradcheck helper', () => {
  it('detects a wrong backward rule', () => {
    // x.detach() contributes a value but no gradient, so backward gives x where the truth is 2x.
    const x = tensor([0.5, 1.5, -0.7], { dtype: float64 }).requiresGrad_();
    const res = gradcheck((t) => t.mul(t.detach()), [x]);
    expect(res.ok).toBe(false);
    expect(res.mismatch).toMatch(/input 0, element 0: analytic .* vs numeric/);
  });

  it('rejects float32 inputs', () => {
    const x = tensor([1, 2], { dtype: float32 }).requiresGrad_();
    expect(() => gradcheck((t) => t.exp(), [x])).toThrow(/must be a float64 cpu tensor/);
  });

  it('restores the inputs after perturbing them', () => {
    const x = tensor([0.25, -1.5, 2], { dtype: float64 }).requiresGrad_();
    gradcheck((t) => t.exp(), [x]);
    expect(Array.from(x.dataSync())).toEqual([0.25, -1.5, 2]);
  });

  it('softmax takes the fused path only when fused kernels are enabled', () => {
    const x = tensor([[0.1, 0.2], [0.3, -0.4]], { dtype: float64 }).requiresGrad_();
    expect(withFused(true, () => x.softmax(1)).gradFn).toBe('SoftmaxBackward');
    expect(withFused(false, () => x.softmax(1)).gradFn).not.toBe('SoftmaxBackward');
    expect(withFused(true, () => x.logSoftmax(1)).gradFn).toBe('LogSoftmaxBackward');
    expect(withFused(false, () => x.logSoftmax(1)).gradFn).not.toBe('LogSoftmaxBackward');
  });
});
