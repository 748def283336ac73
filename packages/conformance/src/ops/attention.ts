// Table entry for F.scaledDotProductAttention: softmax(q·kᵀ·scale + mask)·v, a composite of
// matmul, add, softmax and matmul, or without dropout the backend's fused attention kernel (so its
// cases run fused and decomposed), checked on every backend against PyTorch 2.1's math definition
// in float64 (bool masks: true takes part; a query with no key left gives NaN).
//
// The bound covers both paths to first order, per query row, relative to Σ_j p_j·|v_j| (u: the
// dtype's unit roundoff, u_acc: its accumulator's, m: the row's largest score).
// - Scores. Decomposed: q and k each scaled by √|scale| and rounded (2u), the product accumulated
//   ((E + 2)·u_acc), rounded into the dtype (u·|raw_j|), the float mask added in the dtype
//   (u·|score_j|). Fused: the products accumulated in the accumulator without rounding q or k
//   ((E + 1)·u_acc), the scale and the mask applied there (u_acc each): no term is larger, so
//   δ_j = |scale|·Σ_e|q_e·k_je|·(2u + (E + 2)·u_acc) + u·|raw_j| + u·|score_j| (float mask) covers both.
// - Weights: score errors move each weight by at most δ_j + Σ_i p_i·δ_i ≤ 2·max δ. The decomposed
//   softmax adds (S + 4)·u_acc. The fused online softmax sums the same S terms but may rescale its
//   running sum by a rounded exp(m_old − m_new) once per key (2S·u_acc more), and rounds the
//   log-sum-exp, an absolute error u_acc·(|m| + log S + 1) that every weight takes relatively.
// - Output: the S-term product adds (S + 2)·u_acc, and in the fused kernel its accumulator's
//   rescalings another 2S·u_acc; a last rounding u into the dtype.
// In all: 2·max δ + (6S + 7 + |m| + log S)·u_acc + u, of which the decomposition needs (2S + 6)·u_acc.
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { broadcastShapes, broadcastTo, nd, numel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

interface SdpaArgs {
  /** The last input is a mask: bool (true: takes part) or of the column dtype (added). */
  readonly mask?: 'bool' | 'float';
  readonly isCausal?: boolean;
  readonly scale?: number;
}

/** PyTorch 2.1's math path in float64 with the bound above; q [..., L, E], k [..., S, E], v [..., S, Ev]. */
function sdpaReference(q: NdArray, k: NdArray, v: NdArray, mask: NdArray | undefined, a: SdpaArgs, dtype: DTypeName): Expected {
  const [L, E] = q.shape.slice(-2) as [number, number];
  const [S, Ev] = [k.shape[k.shape.length - 2]!, v.shape[v.shape.length - 1]!];
  const batch = broadcastShapes(q.shape.slice(0, -2), k.shape.slice(0, -2), v.shape.slice(0, -2));
  const [qb, kb, vb] = [broadcastTo(q, [...batch, L, E]), broadcastTo(k, [...batch, S, E]), broadcastTo(v, [...batch, S, Ev])];
  const mb = mask ? broadcastTo(mask, [...batch, L, S]) : undefined;
  const scale = a.scale ?? 1 / Math.sqrt(E);
  const u = unitRoundoff(dtype);
  const ua = unitRoundoff(accumulatorOf(dtype));
  const values: number[] = [];
  const bounds: number[] = [];
  for (let b = 0; b < numel(batch); b++) {
    for (let i = 0; i < L; i++) {
      const scores: number[] = [];
      let delta = 0;
      for (let j = 0; j < S; j++) {
        let dot = 0;
        let magnitude = 0;
        for (let e = 0; e < E; e++) {
          const t = qb.data[(b * L + i) * E + e]! * kb.data[(b * S + j) * E + e]!;
          dot += t;
          magnitude += Math.abs(t);
        }
        const raw = dot * scale;
        const m = mb ? mb.data[(b * L + i) * S + j]! : 0;
        const allowed = !(a.isCausal && j > i) && !(a.mask === 'bool' && m === 0);
        const score = allowed ? raw + (a.mask === 'float' ? m : 0) : -Infinity;
        scores.push(score);
        if (allowed) delta = Math.max(delta, Math.abs(scale) * magnitude * (2 * u + (E + 2) * ua) + u * Math.abs(raw) + (a.mask === 'float' ? u * Math.abs(score) : 0));
      }
      const top = Math.max(...scores);
      const exps = scores.map((s) => (s === -Infinity ? 0 : Math.exp(s - top)));
      const total = exps.reduce((s, x) => s + x, 0);
      const p = exps.map((x) => x / total); // NaN for a row with no key left, as PyTorch 2.1
      const relative = 2 * delta + (6 * S + 7 + Math.abs(top) + Math.log(S)) * ua + u;
      for (let c = 0; c < Ev; c++) {
        let out = 0;
        let magnitude = 0;
        for (let j = 0; j < S; j++) {
          const vj = vb.data[(b * S + j) * Ev + c]!;
          out += p[j]! * vj;
          magnitude += Math.abs(p[j]! * vj);
        }
        values.push(roundTo(dtype, out));
        bounds.push(Number.isNaN(out) ? 0 : relative * magnitude);
      }
    }
  }
  return { value: nd([...batch, L, Ev], values), dtype, bound: Float64Array.from(bounds) };
}

/** A bool mask [rows, S] with at least one key kept per row (key `row % S`). */
function keepMask(rng: Rng, rows: number, S: number): NdArray {
  return nd([rows, S], (f) => (f % S === Math.floor(f / S) % S || rng.next() < 0.5 ? 1 : 0));
}

const SDPA: OpInfo = {
  name: 'scaledDotProductAttention',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'accumulated',
  differentiable: true,
  fused: 'attention',
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous'): Input => ({ value: randomArray(rng, dtype, shape, { lo: -2, hi: 2 }), dtype, layout });
    const sdpa = (name: string, inputs: Input[], args: SdpaArgs = {}, numerics = false): Sample => ({ name, inputs, args: { ...args }, ...(numerics ? { numerics } : {}) });
    const bool = (value: NdArray, layout: Layout = 'contiguous'): Input => ({ value, dtype: 'bool', layout });
    return [
      sdpa('2x3x4+2x5x4+2x5x6', [r([2, 3, 4]), r([2, 5, 4]), r([2, 5, 6])]),
      sdpa('bool-mask-3x5-broadcast', [r([2, 3, 4]), r([2, 5, 4]), r([2, 5, 3]), bool(keepMask(rng, 3, 5))], { mask: 'bool' }),
      sdpa('float-mask-2x1x5', [r([2, 3, 4]), r([2, 5, 4]), r([2, 5, 3]), r([2, 1, 5])], { mask: 'float' }),
      sdpa('causal-L3-S5', [r([2, 3, 4]), r([2, 5, 4]), r([2, 5, 2])], { isCausal: true }),
      sdpa('causal-L5-S3', [r([2, 5, 4]), r([2, 3, 4]), r([2, 3, 6])], { isCausal: true }),
      sdpa('scale-0.3-transposed-q-permuted-k', [r([2, 4, 3], 'transposed'), r([2, 5, 3], 'permuted'), r([2, 5, 2])], { scale: 0.3 }),
      sdpa('negative-scale-strided-v-offset-mask', [r([3, 4]), r([5, 4]), r([5, 3], 'strided'), bool(keepMask(rng, 3, 5), 'offset')], { mask: 'bool', scale: -0.4 }),
      sdpa('broadcast-batch-2x3x3x4+3x5x4+1x5x2', [r([2, 3, 3, 4]), r([3, 5, 4]), r([1, 5, 2])]),
      // A mask [2, 1, 1, S] over batch dims [2, 3]: its broadcast batch dims do not flatten to one stride.
      sdpa('float-mask-2x1x1x5-batch-2x3', [r([2, 3, 3, 4]), r([3, 5, 4]), r([2, 1, 5, 3]), r([2, 1, 1, 5])], { mask: 'float' }),
      // Scores up to ~±100: the row maximum moves as keys stream in (an online softmax rescales).
      sdpa('large-scores-scale-8-S-40', [r([2, 3, 3]), r([2, 40, 3]), r([2, 40, 2])], { scale: 8 }),
      sdpa('long-S-96-E-16', [r([1, 4, 16]), r([1, 96, 16]), r([1, 96, 3])]),
      sdpa('fully-masked-row-is-nan', [r([3, 4]), r([4, 4]), r([4, 2]), bool(nd([3, 4], [1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0]))], { mask: 'bool' }, true),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous'): Input => ({ value: randomArray(rng, dtype, shape, { lo: -2, hi: 2 }), dtype, layout });
    return [
      { name: 'grad-float-mask-2x2x3', inputs: [r([2, 2, 3]), r([2, 3, 3]), r([2, 3, 2]), r([2, 3])], args: { mask: 'float' } },
      { name: 'grad-causal-transposed-q', inputs: [r([3, 2], 'transposed'), r([3, 2]), r([3, 2])], args: { isCausal: true } },
      { name: 'grad-causal-L3-S2-Ev-3', inputs: [r([2, 3, 2]), r([2, 2, 2]), r([2, 2, 3])], args: { isCausal: true } },
      { name: 'grad-bool-mask-broadcast-batch', inputs: [r([2, 2, 3]), r([1, 3, 3]), r([3, 2]), { value: keepMask(rng, 2, 3), dtype: 'bool', layout: 'contiguous' }], args: { mask: 'bool' } },
    ];
  },
  overrides: [{
    dtypes: ['float16', 'bfloat16'],
    samples: ['grad-float-mask-2x2x3', 'grad-causal-transposed-q'],
    tolerance: { atol: 1e-3, rtol: 6e-2 },
    reason: 'in a 16-bit autocast region the backward runs three products and a softmax in the region dtype, each rounded, so its error is a few ulps, not one',
  }],
  call: ([q, k, v, m], a: SdpaArgs) => F.scaledDotProductAttention(q!, k!, v!, { attnMask: m ?? null, isCausal: a.isCausal ?? false, scale: a.scale ?? null }),
  reference: ([q, k, v, m], a, dtype) => sdpaReference(q!, k!, v!, m, a as SdpaArgs, dtype),
};

/** The attention ops' table entries. */
export const ATTENTION_INFOS: OpInfo[] = [SDPA];
