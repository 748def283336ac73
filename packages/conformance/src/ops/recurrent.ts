// Table entries for @core/nn's recurrent ops, which nn.RNN, nn.LSTM, nn.GRU and their cells run:
// F.lstm, F.gru, F.rnnTanh, F.rnnRelu over a sequence (stacked, bidirectional, batch-first,
// without bias, LSTM with a projection) and one step of F.lstmCell, F.gruCell, F.rnnTanhCell,
// F.rnnReluCell. A case's result is every output flattened and joined (output, then the final
// h, then c), so one comparison and one backward cover them all.
//
// The oracle walks PyTorch's recurrences in float64 with a `Trace` (activations.ts): each
// product x·Wᵀ + b is bounded as an accumulation of its K terms ((K + 3)·u_acc·Σ|terms|, and
// two roundings into the dtype, whether or not the bias is added before rounding), each gate's
// sum, product and activation as its own rounded step, and the errors the input and the state
// carry in propagate through the weights (Σ|w|·e), so they compound over the steps as they do.
import { F } from '@core/nn';
import { cat, type DTypeName, type Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, unitRoundoff } from '../oracle/dtype.js';
import type { NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';
import { Trace, traced, type Traced } from './activations.js';

type Mode = 'lstm' | 'gru' | 'rnnTanh' | 'rnnRelu';

const GATES: Readonly<Record<Mode, number>> = { lstm: 4, gru: 3, rnnTanh: 1, rnnRelu: 1 };

/** One layer direction's weights: w_ih [G·H, K], w_hh [G·H, Hout], the biases [G·H] or null, LSTM's w_hr [Hout, H] or null. */
interface CellWeights {
  readonly ih: NdArray;
  readonly hh: NdArray;
  readonly bih: NdArray | null;
  readonly bhh: NdArray | null;
  readonly hr: NdArray | null;
}

/** Rounded steps in the column dtype, with the accumulation dtype's unit roundoff for products. */
class Steps extends Trace {
  readonly ua: number;

  constructor(dtype: DTypeName) {
    super(dtype);
    this.ua = unitRoundoff(accumulatorOf(dtype));
  }

  /** x·Wᵀ + b for one row x [K], W [out, K]. */
  linear(x: readonly Traced[], w: NdArray, b: NdArray | null): Traced[] {
    const [out, k] = w.shape as [number, number];
    return Array.from({ length: out }, (_, j) => {
      let dot = 0;
      let magnitude = 0;
      let carried = 0;
      for (let i = 0; i < k; i++) {
        const wi = w.data[j * k + i]!;
        dot += wi * x[i]!.v;
        magnitude += Math.abs(wi * x[i]!.v);
        carried += Math.abs(wi) * x[i]!.e;
      }
      const bias = b ? b.data[j]! : 0;
      const v = dot + bias;
      return { v, e: carried + (k + 3) * this.ua * (magnitude + Math.abs(bias)) + this.u * (Math.abs(dot) + Math.abs(v)) };
    });
  }

  sigmoid(a: Traced): Traced {
    return this.apply(a, (x) => 1 / (1 + Math.exp(-x)), (x) => {
      const s = 1 / (1 + Math.exp(-x));
      return s * (1 - s);
    });
  }

  tanh(a: Traced): Traced {
    return this.apply(a, Math.tanh, (x) => 1 - Math.tanh(x) ** 2);
  }

  /** relu is exact and 1-Lipschitz: the error it gets is the error it passes on. */
  relu(a: Traced): Traced {
    return { v: Math.max(a.v, 0), e: a.e };
  }
}

/** One step of a cell for one batch row, from gi = x·W_ihᵀ + b_ih: the new [h] or [h, c]. */
function cellStep(s: Steps, mode: Mode, gi: readonly Traced[], state: readonly Traced[][], w: CellWeights): Traced[][] {
  const h = state[0]!;
  const gh = s.linear(h, w.hh, w.bhh);
  const size = gh.length / GATES[mode];
  const gate = (g: readonly Traced[], k: number) => g.slice(k * size, (k + 1) * size);
  switch (mode) {
    case 'rnnTanh': return [gi.map((x, j) => s.tanh(s.add(x, gh[j]!)))];
    case 'rnnRelu': return [gi.map((x, j) => s.relu(s.add(x, gh[j]!)))];
    case 'lstm': {
      const pre = gi.map((x, j) => s.add(x, gh[j]!));
      const [i, f, g, o] = [0, 1, 2, 3].map((k) => gate(pre, k)) as [Traced[], Traced[], Traced[], Traced[]];
      const c = f.map((fj, j) => s.add(s.mul(s.sigmoid(fj), state[1]![j]!), s.mul(s.sigmoid(i[j]!), s.tanh(g[j]!))));
      const out = o.map((oj, j) => s.mul(s.sigmoid(oj), s.tanh(c[j]!)));
      return [w.hr ? s.linear(out, w.hr, null) : out, c];
    }
    case 'gru': {
      const r = gate(gi, 0).map((x, j) => s.sigmoid(s.add(x, gh[j]!)));
      const z = gate(gi, 1).map((x, j) => s.sigmoid(s.add(x, gh[size + j]!)));
      const n = gate(gi, 2).map((x, j) => s.tanh(s.add(x, s.mul(r[j]!, gh[2 * size + j]!))));
      return [n.map((nj, j) => s.add(nj, s.mul(z[j]!, s.sub(h[j]!, nj))))];
    }
    default: return mode satisfies never;
  }
}

const exact = (a: NdArray, from: number, length: number): Traced[] => Array.from({ length }, (_, i) => ({ v: a.data[from + i]!, e: 0 }));

/** The recurrence's options, a sample's args. */
interface RecurrentArgs {
  readonly numLayers: number;
  readonly bidirectional: boolean;
  readonly batchFirst: boolean;
  readonly bias: boolean;
}

/**
 * PyTorch's layers over [x, h0, (c0), ...weights] in float64: output, final h and c flattened and
 * joined, with their bounds in `dtype`.
 */
function sequenceReference(mode: Mode, inputs: readonly NdArray[], a: RecurrentArgs, dtype: DTypeName): Expected {
  const s = new Steps(dtype);
  const [x, h0] = inputs as [NdArray, NdArray];
  const c0 = mode === 'lstm' ? inputs[2]! : null;
  const weights = inputs.slice(mode === 'lstm' ? 3 : 2);
  const [steps, batch] = a.batchFirst ? [x.shape[1]!, x.shape[0]!] : [x.shape[0]!, x.shape[1]!];
  const directions = a.bidirectional ? 2 : 1;
  const hOut = h0.shape[2]!;
  const projected = c0 !== null && c0.shape[2] !== hOut;
  const stride = 2 + (a.bias ? 2 : 0) + (projected ? 1 : 0);
  // seqIn[t][n]: one step's input row.
  let seqIn: Traced[][][] = Array.from({ length: steps }, (_, t) => Array.from({ length: batch }, (_, n) => {
    const features = x.shape[2]!;
    return exact(x, (a.batchFirst ? n * steps + t : t * batch + n) * features, features);
  }));
  const finals: Traced[][][][] = []; // [layer·direction][state][n]
  for (let layer = 0; layer < a.numLayers; layer++) {
    const outputs: Traced[][][][] = [];
    for (let d = 0; d < directions; d++) {
      const k = layer * directions + d;
      const [ih, hh, ...rest] = weights.slice(k * stride, (k + 1) * stride) as [NdArray, NdArray, ...NdArray[]];
      const w: CellWeights = { ih, hh, bih: a.bias ? rest[0]! : null, bhh: a.bias ? rest[1]! : null, hr: projected ? rest[rest.length - 1]! : null };
      const out: Traced[][][] = Array.from({ length: steps }, () => []);
      const last: Traced[][][] = [[], []];
      for (let n = 0; n < batch; n++) {
        let state = [exact(h0, (k * batch + n) * hOut, hOut), ...(c0 ? [exact(c0, (k * batch + n) * c0.shape[2]!, c0.shape[2]!)] : [])];
        for (let step = 0; step < steps; step++) {
          const t = d === 1 ? steps - 1 - step : step;
          state = cellStep(s, mode, s.linear(seqIn[t]![n]!, w.ih, w.bih), state, w);
          out[t]![n] = state[0]!;
        }
        state.forEach((st, j) => { last[j]![n] = st; });
      }
      outputs.push(out);
      finals.push(last.slice(0, c0 ? 2 : 1));
    }
    seqIn = Array.from({ length: steps }, (_, t) => Array.from({ length: batch }, (_, n) => outputs.flatMap((o) => o[t]![n]!)));
  }
  const output = a.batchFirst
    ? Array.from({ length: batch }, (_, n) => Array.from({ length: steps }, (_, t) => seqIn[t]![n]!)).flat(2)
    : seqIn.flat(2);
  const states = [0, ...(c0 ? [1] : [])].flatMap((j) => finals.flatMap((f) => f[j]!.flat()));
  const values = [...output, ...states];
  return traced([values.length], values, dtype);
}

/** One step of a cell over [x, h, (c), w_ih, w_hh, (b_ih, b_hh)]: h' (and c') flattened and joined. */
function cellReference(mode: Mode, inputs: readonly NdArray[], a: { readonly bias: boolean }, dtype: DTypeName): Expected {
  const s = new Steps(dtype);
  const states = inputs.slice(0, mode === 'lstm' ? 3 : 2).slice(1);
  const [x] = inputs as [NdArray];
  const [ih, hh, bih, bhh] = inputs.slice(1 + states.length) as [NdArray, NdArray, NdArray?, NdArray?];
  const w: CellWeights = { ih, hh, bih: a.bias ? bih! : null, bhh: a.bias ? bhh! : null, hr: null };
  const [batch, features] = x.shape as [number, number];
  const hidden = hh.shape[1]!;
  const next = Array.from({ length: batch }, (_, n) =>
    cellStep(s, mode, s.linear(exact(x, n * features, features), ih, w.bih), states.map((st) => exact(st, n * hidden, hidden)), w));
  const values = states.flatMap((_, j) => next.flatMap((rows) => rows[j]!));
  return traced([values.length], values, dtype);
}

const joined = (parts: readonly Tensor[]): Tensor => cat(parts.map((t) => t.flatten()));

interface Shape {
  readonly steps: number;
  readonly batch: number;
  readonly features: number;
  readonly hidden: number;
  /** LSTM's projected h size (0: none). */
  readonly proj?: number;
}

/** Values drawn uniformly from [−hi, hi]. */
const uniform = (rng: Rng, dtype: DTypeName) => (dims: number[], hi: number): Input => ({ value: randomArray(rng, dtype, dims, { lo: -hi, hi }), dtype });

/** [x, h0, (c0), ...weights] for a configuration, weights in PyTorch's flat order. */
function sequenceInputs(mode: Mode, dtype: DTypeName, rng: Rng, shape: Shape, a: RecurrentArgs): Input[] {
  const { steps, batch, features, hidden, proj = 0 } = shape;
  const r = uniform(rng, dtype);
  const directions = a.bidirectional ? 2 : 1;
  const hOut = proj || hidden;
  const gates = GATES[mode] * hidden;
  const rows = a.numLayers * directions;
  const inputs = [r(a.batchFirst ? [batch, steps, features] : [steps, batch, features], 1), r([rows, batch, hOut], 0.5)];
  if (mode === 'lstm') inputs.push(r([rows, batch, hidden], 0.5));
  for (let layer = 0; layer < a.numLayers; layer++) {
    for (let d = 0; d < directions; d++) {
      inputs.push(r([gates, layer === 0 ? features : hOut * directions], 0.6), r([gates, hOut], 0.6));
      if (a.bias) inputs.push(r([gates], 0.4), r([gates], 0.4));
      if (proj) inputs.push(r([proj, hidden], 0.6));
    }
  }
  return inputs;
}

const SMALL: Shape = { steps: 3, batch: 2, features: 3, hidden: 4 };
const ONE_LAYER: RecurrentArgs = { numLayers: 1, bidirectional: false, batchFirst: false, bias: true };

/** The configurations every recurrent op is checked on (forward), and the first three for gradients. */
function sequenceSamples(mode: Mode, dtype: DTypeName, rng: Rng): Sample[] {
  const sample = (name: string, shape: Shape, args: RecurrentArgs): Sample => ({ name, inputs: sequenceInputs(mode, dtype, rng, shape, args), args: { ...args } });
  return [
    sample('1-layer-3x2x3-h4', SMALL, ONE_LAYER),
    sample('2-layers-bidirectional-batch-first', { ...SMALL, hidden: 3 }, { numLayers: 2, bidirectional: true, batchFirst: true, bias: true }),
    sample('no-bias-5-steps', { ...SMALL, steps: 5, batch: 1 }, { ...ONE_LAYER, bias: false }),
    ...(mode === 'lstm' ? [sample('projected-2-layers-bidirectional', { ...SMALL, hidden: 4, proj: 2 }, { numLayers: 2, bidirectional: true, batchFirst: false, bias: true })] : []),
    sample('batch-first-longer-7x3x2-h5', { steps: 7, batch: 3, features: 2, hidden: 5 }, { ...ONE_LAYER, batchFirst: true }),
  ];
}

/** Backward through the recurrence in a half region dtype: every step's derivatives round to it and compound. */
const HALF_BACKWARD = [
  { dtypes: ['float16'] as DTypeName[], tolerance: { atol: 2e-2, rtol: 2e-2 } },
  { dtypes: ['bfloat16'] as DTypeName[], tolerance: { atol: 1.5e-1, rtol: 1.5e-1 } },
];

function halfBackwardOverrides(names: readonly string[]): OpInfo['overrides'] {
  return HALF_BACKWARD.map((o) => ({
    ...o,
    samples: names,
    reason: 'the backward of the recurrence runs in the half region dtype (AC-14): each step\'s gate derivatives round to it and the errors compound over the steps and layers, beyond one ulp of the float32 gradient',
  }));
}

const SEQUENCE_CALLS: Readonly<Record<Mode, (xs: Tensor[], a: RecurrentArgs) => Tensor[]>> = {
  lstm: ([x, h0, c0, ...w], a) => F.lstm(x!, [h0!, c0!], w, a.bias, a.numLayers, 0, false, a.bidirectional, a.batchFirst),
  gru: ([x, h0, ...w], a) => F.gru(x!, h0!, w, a.bias, a.numLayers, 0, false, a.bidirectional, a.batchFirst),
  rnnTanh: ([x, h0, ...w], a) => F.rnnTanh(x!, h0!, w, a.bias, a.numLayers, 0, false, a.bidirectional, a.batchFirst),
  rnnRelu: ([x, h0, ...w], a) => F.rnnRelu(x!, h0!, w, a.bias, a.numLayers, 0, false, a.bidirectional, a.batchFirst),
};

function sequenceInfo(mode: Mode): OpInfo {
  const gradNames = ['grad-1-layer-3x2x3-h4', 'grad-2-layers-bidirectional-batch-first', mode === 'lstm' ? 'grad-projected-2-layers-bidirectional' : 'grad-no-bias-5-steps'];
  return {
    name: mode,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    samples: (dtype, rng) => sequenceSamples(mode, dtype, rng),
    gradSamples: (dtype, rng) => sequenceSamples(mode, dtype, rng)
      .map((sample) => ({ ...sample, name: `grad-${sample.name}` }))
      .filter((sample) => gradNames.includes(sample.name)),
    call: (xs, a) => joined(SEQUENCE_CALLS[mode](xs, a as RecurrentArgs)),
    reference: (inputs, a, dtype) => sequenceReference(mode, inputs, a as RecurrentArgs, dtype),
    overrides: halfBackwardOverrides(gradNames),
  };
}

const CELL_CALLS: Readonly<Record<Mode, (x: Tensor, states: Tensor[], w: Tensor[]) => Tensor[]>> = {
  lstm: (x, [h, c], w) => F.lstmCell(x, [h!, c!], w[0]!, w[1]!, w[2] ?? null, w[3] ?? null),
  gru: (x, [h], w) => [F.gruCell(x, h!, w[0]!, w[1]!, w[2] ?? null, w[3] ?? null)],
  rnnTanh: (x, [h], w) => [F.rnnTanhCell(x, h!, w[0]!, w[1]!, w[2] ?? null, w[3] ?? null)],
  rnnRelu: (x, [h], w) => [F.rnnReluCell(x, h!, w[0]!, w[1]!, w[2] ?? null, w[3] ?? null)],
};

function cellInfo(mode: Mode): OpInfo {
  const count = mode === 'lstm' ? 2 : 1;
  const samples = (dtype: DTypeName, rng: Rng): Sample[] => {
    const sample = (name: string, batch: number, features: number, hidden: number, bias: boolean): Sample => {
      const r = uniform(rng, dtype);
      const gates = GATES[mode] * hidden;
      const inputs = [r([batch, features], 1), ...Array.from({ length: count }, () => r([batch, hidden], 0.5)), r([gates, features], 0.6), r([gates, hidden], 0.6)];
      if (bias) inputs.push(r([gates], 0.4), r([gates], 0.4));
      return { name, inputs, args: { bias } };
    };
    return [sample('batch-3-in-4-h5', 3, 4, 5, true), sample('no-bias-batch-2-in-3-h4', 2, 3, 4, false), sample('batch-1-in-6-h3', 1, 6, 3, true)];
  };
  const gradNames = ['grad-batch-3-in-4-h5', 'grad-no-bias-batch-2-in-3-h4'];
  return {
    name: `${mode}Cell`,
    category: 'composites',
    dtypes: FLOAT_DTYPES,
    tolerance: 'accumulated',
    differentiable: true,
    samples,
    // Named, so that the backward in a half region (AC-14) takes the first with its override.
    gradSamples: (dtype, rng) => samples(dtype, rng).slice(0, 2).map((sample) => ({ ...sample, name: `grad-${sample.name}` })),
    call: ([x, ...rest]) => joined(CELL_CALLS[mode](x!, rest.slice(0, count), rest.slice(count))),
    reference: (inputs, a, dtype) => cellReference(mode, inputs, a as { bias: boolean }, dtype),
    overrides: halfBackwardOverrides(gradNames),
  };
}

/** F.lstm, F.gru, F.rnnTanh, F.rnnRelu and their cells. */
export const RECURRENT_INFOS: readonly OpInfo[] = (['lstm', 'gru', 'rnnTanh', 'rnnRelu'] as const).flatMap((mode) => [sequenceInfo(mode), cellInfo(mode)]);
