// Table entries for @core/nn's activations beside relu/gelu: F.elu, F.selu, F.softplus, F.mish,
// F.hardswish, F.hardsigmoid, F.prelu, F.glu and F.softsign. Each oracle walks the library's
// decomposition step by step in float64 with a `Trace`: the exact value, and a first-order bound on
// the error of the same steps computed in the column dtype (each step rounded into it once, half
// types through f32; each transcendental within what its own approx cases allow). The last
// rounding into the column dtype, and the oracle's own, are left to the class's rtol.
import { F } from '@core/nn';
import type { DTypeName, Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Domain, type Input, type Layout } from '../inputs.js';
import { FLOAT_DTYPES, roundTo, unitRoundoff, type FloatDType } from '../oracle/dtype.js';
import { broadcastTo, nd, numel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { APPROX } from '../tolerance.js';

/** A value computed by a decomposition: `v` exact, `e` a bound on the computed value's error. */
export interface Traced {
  readonly v: number;
  readonly e: number;
}

/**
 * First-order error propagation through elementwise steps that each round into `dtype`: every
 * arithmetic step adds u·|result| to the errors its operands carry in, a transcendental step adds
 * what its approx cases allow, and a scalar constant adds its own rounding into the dtype.
 */
export class Trace {
  /** The unit roundoff of the dtype the steps round into. */
  readonly u: number;

  constructor(readonly dtype: DTypeName) {
    this.u = unitRoundoff(dtype);
  }

  /** An exact input value. */
  exact(v: number): Traced {
    return { v, e: 0 };
  }

  /** How far a transcendental primitive's result may be off: what its approx cases allow. */
  approx(v: number): number {
    const t = APPROX[this.dtype as FloatDType];
    return t.atol + t.rtol * Math.abs(v);
  }

  add(a: Traced, b: Traced): Traced {
    const v = a.v + b.v;
    return { v, e: a.e + b.e + this.u * Math.abs(v) };
  }

  sub(a: Traced, b: Traced): Traced {
    return this.add(a, { v: -b.v, e: b.e });
  }

  mul(a: Traced, b: Traced): Traced {
    const v = a.v * b.v;
    return { v, e: Math.abs(a.v) * b.e + Math.abs(b.v) * a.e + a.e * b.e + this.u * Math.abs(v) };
  }

  div(a: Traced, b: Traced): Traced {
    const v = a.v / b.v;
    return { v, e: (a.e + Math.abs(v) * b.e) / (Math.abs(b.v) - b.e) + this.u * Math.abs(v) };
  }

  /** A product with (or quotient by) a constant, which itself rounds into the dtype. */
  scale(a: Traced, c: number): Traced {
    return this.mul(a, { v: c, e: this.u * Math.abs(c) });
  }

  /** A transcendental step f with derivative df. */
  apply(a: Traced, f: (x: number) => number, df: (x: number) => number): Traced {
    const v = f(a.v);
    return { v, e: Math.abs(df(a.v)) * a.e + this.approx(v) };
  }
}

/** Values and per-element bounds as an Expected of `dtype`. */
export function traced(shape: readonly number[], values: readonly Traced[], dtype: DTypeName): Expected {
  return { value: nd(shape, values.map((t) => roundTo(dtype, t.v))), dtype, bound: Float64Array.from(values, (t) => t.e) };
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** log1p(e^−|z|) + max(z, 0): the library's log(1 + e^z), step by step. */
export function logOnePlusExp(tr: Trace, z: Traced): Traced {
  const e = tr.apply({ v: -Math.abs(z.v), e: z.e }, Math.exp, Math.exp);
  const l = tr.apply(e, Math.log1p, (x) => 1 / (1 + x));
  return tr.add(l, { v: Math.max(z.v, 0), e: z.v > 0 ? z.e : 0 });
}

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** The layouts and shapes every activation is checked on, drawn from `domain`. */
function layoutSamples(dtype: DTypeName, rng: Rng, domain: Domain, args: Readonly<Record<string, unknown>> = {}): Sample[] {
  const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, domain), dtype, layout);
  return [
    { name: 'rand-3x4', inputs: [r([3, 4])], args },
    { name: '0-dim', inputs: [r([])], args },
    { name: 'empty-0x3', inputs: [r([0, 3])], args },
    { name: 'transposed-4x3', inputs: [r([4, 3], 'transposed')], args },
    { name: 'strided-2x5', inputs: [r([2, 5], 'strided')], args },
    { name: 'permuted-2x3x4', inputs: [r([2, 3, 4], 'permuted')], args },
    { name: 'long-1031', inputs: [r([1031])], args },
  ];
}

/** An elementwise activation: its call, its traced decomposition, its input domains. */
interface Activation {
  readonly name: string;
  readonly call: (x: Tensor, a: Readonly<Record<string, any>>) => Tensor;
  readonly trace: (tr: Trace, x: Traced, a: Readonly<Record<string, any>>) => Traced;
  readonly domain: Domain;
  /** Gradient samples' domains: away from the kinks (finite differences step over them otherwise). */
  readonly gradDomains: readonly Domain[];
  /** Samples with other arguments, named. */
  readonly variants?: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>;
}

function activationInfo(act: Activation): OpInfo {
  return {
    name: act.name,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    samples: (dtype, rng) => [
      ...layoutSamples(dtype, rng, act.domain),
      ...(act.variants ?? []).map(([name, args]): Sample => ({ name, inputs: [input(randomArray(rng, dtype, [3, 5], act.domain), dtype)], args })),
    ],
    gradSamples: (dtype, rng) => act.gradDomains.map((domain, i) => ({
      name: `grad-${i}-${domain.lo}..${domain.hi}`,
      inputs: [input(randomArray(rng, dtype, [3, 4], domain), dtype, i % 2 === 0 ? 'contiguous' : 'transposed')],
      args: act.variants?.[0]?.[1] ?? {},
    })),
    call: ([x], a) => act.call(x!, a),
    reference: ([x], a, dtype) => {
      const tr = new Trace(dtype);
      return traced(x!.shape, Array.from(x!.data, (v) => act.trace(tr, tr.exact(v), a)), dtype);
    },
  };
}

/** scale·x for x > 0, scale·alpha·expm1(x) otherwise (the library's scaled elu). */
function scaledElu(tr: Trace, x: Traced, alpha: number, scale: number): Traced {
  if (x.v > 0) return scale === 1 ? x : tr.scale(x, scale);
  return tr.scale(tr.apply(x, Math.expm1, Math.exp), alpha * scale);
}

const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;
const AROUND_ZERO: Domain = { lo: -3, hi: 3, awayFromZero: 0.05 };

const ELU = activationInfo({
  name: 'elu',
  call: (x, a) => F.elu(x, a.alpha ?? 1),
  trace: (tr, x, a) => scaledElu(tr, x, a.alpha ?? 1, 1),
  domain: { lo: -4, hi: 4 },
  gradDomains: [AROUND_ZERO, { lo: -6, hi: -0.5 }],
  variants: [['alpha-0.5', { alpha: 0.5 }]],
});

const SELU = activationInfo({
  name: 'selu',
  call: (x) => F.selu(x),
  trace: (tr, x) => scaledElu(tr, x, SELU_ALPHA, SELU_SCALE),
  domain: { lo: -4, hi: 4 },
  gradDomains: [AROUND_ZERO],
});

const SOFTPLUS = activationInfo({
  name: 'softplus',
  call: (x, a) => F.softplus(x, a.beta ?? 1, a.threshold ?? 20),
  trace: (tr, x, a) => {
    const beta = a.beta ?? 1;
    const z = beta === 1 ? x : tr.scale(x, beta);
    if (z.v > (a.threshold ?? 20)) return x;
    const soft = logOnePlusExp(tr, z);
    return beta === 1 ? soft : tr.scale(soft, 1 / beta);
  },
  domain: { lo: -8, hi: 8 },
  // β·x stays clear of the threshold 3 (the branch a rounded β·x takes must be the exact one's).
  variants: [['beta-2-threshold-3', { beta: 2, threshold: 3 }]],
  gradDomains: [{ lo: -5, hi: 1.3 }, { lo: 1.7, hi: 4 }],
});

const MISH = activationInfo({
  name: 'mish',
  call: (x) => F.mish(x),
  trace: (tr, x) => tr.mul(x, tr.apply(logOnePlusExp(tr, x), Math.tanh, (v) => 1 - Math.tanh(v) ** 2)),
  domain: { lo: -6, hi: 6 },
  gradDomains: [{ lo: -5, hi: 5 }],
});

/** Values away from the kinks at ±3 of the hard activations. */
const HARD_DOMAIN: Domain = { lo: -2.9, hi: 2.9 };

const HARDSWISH = activationInfo({
  name: 'hardswish',
  call: (x) => F.hardswish(x),
  trace: (tr, x) => (x.v < -3 ? tr.exact(0) : x.v > 3 ? x : tr.scale(tr.mul(x, tr.add(x, tr.exact(3))), 1 / 6)),
  domain: { lo: -5, hi: 5 },
  gradDomains: [HARD_DOMAIN, { lo: 3.1, hi: 6 }],
});

const HARDSIGMOID = activationInfo({
  name: 'hardsigmoid',
  call: (x) => F.hardsigmoid(x),
  trace: (tr, x) => (x.v <= -3 ? tr.exact(0) : x.v >= 3 ? tr.exact(1) : tr.scale(tr.add(x, tr.exact(3)), 1 / 6)),
  domain: { lo: -5, hi: 5 },
  gradDomains: [HARD_DOMAIN],
});

const SOFTSIGN = activationInfo({
  name: 'softsign',
  call: (x) => F.softsign(x),
  trace: (tr, x) => tr.div(x, tr.add({ v: Math.abs(x.v), e: x.e }, tr.exact(1))),
  domain: { lo: -6, hi: 6 },
  gradDomains: [AROUND_ZERO],
});

// ---- prelu and glu: two operands ----

/** x for x > 0, slope·x otherwise, the slope per channel (dim 1) or shared. */
function preluReference(x: NdArray, w: NdArray, dtype: DTypeName): Expected {
  const tr = new Trace(dtype);
  const slopes = w.data.length === 1 ? nd(x.shape, () => w.data[0]!) : broadcastTo(nd([w.data.length, ...x.shape.slice(2).map(() => 1)], w.data), x.shape);
  return traced(x.shape, Array.from(x.data, (v, i) => (v > 0 ? tr.exact(v) : tr.mul(tr.exact(v), tr.exact(slopes.data[i]!)))), dtype);
}

const PRELU: OpInfo = {
  name: 'prelu',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous', domain: Domain = { lo: -3, hi: 3 }) => input(randomArray(rng, dtype, shape, domain), dtype, layout);
    const slopes = (n: number) => r([n], 'contiguous', { lo: -0.5, hi: 1 });
    return [
      { name: 'per-channel-2x3x4', inputs: [r([2, 3, 4]), slopes(3)] },
      { name: 'shared-3x4', inputs: [r([3, 4]), slopes(1)] },
      { name: 'per-channel-transposed-4x3', inputs: [r([4, 3], 'transposed'), slopes(3)] },
      { name: 'per-channel-permuted-2x3x2x2', inputs: [r([2, 3, 2, 2], 'permuted'), slopes(3)] },
      { name: 'shared-1d-7', inputs: [r([7]), slopes(1)] },
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], domain: Domain) => input(randomArray(rng, dtype, shape, domain), dtype);
    return [
      { name: 'grad-per-channel-2x3x2', inputs: [r([2, 3, 2], AROUND_ZERO), r([3], { lo: -0.5, hi: 1 })] },
      { name: 'grad-shared-5', inputs: [r([5], AROUND_ZERO), r([1], { lo: -0.5, hi: 1 })] },
    ];
  },
  call: ([x, w]) => F.prelu(x!, w!),
  reference: ([x, w], _a, dtype) => preluReference(x!, w!, dtype),
};

/** a·σ(b), a and b the halves of x along `dim`. */
function gluReference(x: NdArray, dim: number, dtype: DTypeName): Expected {
  const tr = new Trace(dtype);
  const d = dim < 0 ? dim + x.shape.length : dim;
  const outer = numel(x.shape.slice(0, d));
  const half = x.shape[d]! / 2;
  const inner = numel(x.shape.slice(d + 1));
  const out: Traced[] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < half * inner; i++) {
      const a = x.data[o * 2 * half * inner + i]!;
      const b = x.data[o * 2 * half * inner + half * inner + i]!;
      out.push(tr.mul(tr.exact(a), tr.apply(tr.exact(b), sigmoid, (v) => sigmoid(v) * (1 - sigmoid(v)))));
    }
  }
  return traced(x.shape.map((s, i) => (i === d ? half : s)), out, dtype);
}

const GLU: OpInfo = {
  name: 'glu',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape, { lo: -4, hi: 4 }), dtype, layout);
    return [
      { name: 'last-3x4', inputs: [r([3, 4])], args: { dim: -1 } },
      { name: 'dim0-4x3', inputs: [r([4, 3])], args: { dim: 0 } },
      { name: 'dim1-permuted-2x6x3', inputs: [r([2, 6, 3], 'permuted')], args: { dim: 1 } },
      { name: 'last-strided-2x6', inputs: [r([2, 6], 'strided')], args: { dim: -1 } },
    ];
  },
  call: ([x], a) => F.glu(x!, a.dim),
  reference: ([x], a, dtype) => gluReference(x!, a.dim, dtype),
};

/** The entries of @core/nn's activations beside relu/gelu. */
export const ACTIVATION_INFOS: OpInfo[] = [ELU, SELU, SOFTPLUS, MISH, HARDSWISH, HARDSIGMOID, SOFTSIGN, PRELU, GLU];
