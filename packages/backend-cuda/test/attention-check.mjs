// Contract 1.4.0's fused attention called through a cuda backend (`backend.fused.attention`, so the
// addon, runtime, launch geometry and kernel all take part) and checked against the contract's
// formula evaluated in float64 on the host from the same dtype-rounded inputs. Used by
// test/fake-driver-run.mjs (small cases on the emulated driver) and by native/cuda/gpu-check (large
// ones on a GPU, where races and the grid-stride loop show).
import { bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits } from '@core/tensor';

/**
 * @typedef {object} AttentionCase
 * @property {string} name
 * @property {'float32' | 'float16' | 'bfloat16'} dtype
 * @property {number} B
 * @property {number} L
 * @property {number} S
 * @property {number} E
 * @property {number} Ev
 * @property {number} scale
 * @property {boolean} causal
 * @property {boolean} mask  An additive mask shared by the batch (stride 0), stored transposed after
 *   3 unread elements, with a quarter of its entries −∞ and row 1 (when L > 1) wholly −∞.
 */

/** Cases for the emulated driver: a few blocks each. @type {AttentionCase[]} */
export const EMULATED_CASES = [
  { name: 'two row tiles, two key tiles, two E chunks, a shared mask with a fully masked row', dtype: 'float32', B: 2, L: 70, S: 45, E: 40, Ev: 24, scale: 0.158, causal: false, mask: true },
  { name: 'causal, L < S, Ev 130 over two blocks of 128 columns', dtype: 'float16', B: 2, L: 5, S: 40, E: 6, Ev: 130, scale: 0.4, causal: true, mask: false },
  { name: 'causal, L > S, S not a multiple of the key tile', dtype: 'bfloat16', B: 1, L: 67, S: 33, E: 9, Ev: 8, scale: -0.3, causal: true, mask: false },
];

/**
 * Cases for a GPU: realistic head sizes, long rows, every variant, and more (batch, row tile) pairs
 * than the grid's cap of 64 blocks per SM, so blocks loop. @type {AttentionCase[]}
 */
export const GPU_CASES = [
  { name: 'causal self-attention, head dim 64', dtype: 'float16', B: 8, L: 512, S: 512, E: 64, Ev: 64, scale: 0.125, causal: true, mask: false },
  { name: 'head dim 128 with a shared mask', dtype: 'bfloat16', B: 4, L: 300, S: 700, E: 128, Ev: 128, scale: 0.088, causal: false, mask: true },
  { name: 'E 200, Ev 300: E chunks and three column blocks', dtype: 'float32', B: 2, L: 257, S: 129, E: 200, Ev: 300, scale: 0.0707, causal: false, mask: false },
  { name: 'more (batch, row tile) pairs than the grid has blocks', dtype: 'float32', B: 9000, L: 65, S: 16, E: 8, Ev: 8, scale: 0.35, causal: true, mask: false },
];

/** out's tolerance per dtype: f32 math, then one rounding to the dtype (about one unit in the last place). */
const TOLERANCE = { float32: { atol: 1e-5, rtol: 1e-5 }, float16: { atol: 1e-5, rtol: 1e-3 }, bfloat16: { atol: 1e-4, rtol: 8e-3 } };
/** logSumExp is float32 for every dtype, computed in f32 from the dtype's exact values. */
const LSE_TOLERANCE = { atol: 1e-5, rtol: 1e-5 };

/** Host encodings of each dtype's elements. */
const CODEC = {
  float32: { array: (n) => new Float32Array(n), encode: (x) => x, decode: (x) => x },
  float16: { array: (n) => new Uint16Array(n), encode: float32ToFloat16Bits, decode: float16BitsToNumber },
  bfloat16: { array: (n) => new Uint16Array(n), encode: float32ToBFloat16Bits, decode: bfloat16BitsToNumber },
};

/** A deterministic stream of roughly normal numbers (mulberry32 and the sum of four uniforms). */
function normals(seed) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => (uniform() + uniform() + uniform() + uniform() - 2) * Math.sqrt(3);
}

/**
 * The contract's formula in float64 over the keys that take part (s < S, and s ≤ l when causal).
 * @returns {{ out: Float64Array, lse: Float64Array }}
 */
function reference(c, q, k, v, maskAt) {
  const out = new Float64Array(c.B * c.L * c.Ev);
  const lse = new Float64Array(c.B * c.L);
  const score = new Float64Array(c.S);
  for (let b = 0; b < c.B; b++) {
    for (let l = 0; l < c.L; l++) {
      const keys = c.causal ? Math.min(c.S, l + 1) : c.S;
      let m = -Infinity;
      let nan = false;
      for (let s = 0; s < keys; s++) {
        let dot = 0;
        for (let e = 0; e < c.E; e++) dot += q[(b * c.L + l) * c.E + e] * k[(b * c.S + s) * c.E + e];
        score[s] = c.scale * dot + maskAt(b, l, s);
        if (Number.isNaN(score[s])) nan = true;
        else m = Math.max(m, score[s]);
      }
      let total = 0;
      for (let s = 0; s < keys; s++) total += Math.exp(score[s] - m);
      const logSum = nan ? NaN : m === -Infinity ? -Infinity : m + Math.log(total);
      lse[b * c.L + l] = logSum;
      const row = (b * c.L + l) * c.Ev;
      for (let s = 0; s < keys && Number.isFinite(logSum); s++) {
        const p = Math.exp(score[s] - logSum);
        for (let col = 0; col < c.Ev; col++) out[row + col] += p * v[(b * c.S + s) * c.Ev + col];
      }
      if (!Number.isFinite(logSum)) out.fill(NaN, row, row + c.Ev);
    }
  }
  return { out, lse };
}

/** Where got and want differ beyond atol + rtol·|want| (NaN matches NaN, ±Infinity itself). */
function compare(got, want, { atol, rtol }) {
  let bad = 0;
  let worst = 0;
  let first = null;
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const g = got[i];
    const ok = Number.isNaN(w) ? Number.isNaN(g) : Number.isFinite(w) ? Math.abs(g - w) <= atol + rtol * Math.abs(w) : g === w;
    if (Number.isFinite(w) && Number.isFinite(g)) worst = Math.max(worst, Math.abs(g - w) / (atol + rtol * Math.abs(w)));
    if (!ok) {
      bad++;
      first ??= { index: i, got: g, want: w };
    }
  }
  return { mismatches: bad, worstOfTolerance: worst, first };
}

/**
 * Runs one case on device 0 of `backend` and compares out and logSumExp with the reference.
 * @param {import('@core/tensor').Backend<unknown>} backend
 * @param {AttentionCase} c
 */
export async function checkAttentionCase(backend, c, seed = 1) {
  const codec = CODEC[c.dtype];
  const next = normals(seed);
  const storages = [];
  // A storage holding n values after `offset` unread NaNs; returns its view and the values as read back.
  const operand = (shape, strides, offset, n, fill = () => next()) => {
    const host = codec.array(offset + n);
    host.fill(codec.encode(NaN));
    for (let i = 0; i < n; i++) host[offset + i] = codec.encode(fill(i));
    const storage = backend.alloc(0, c.dtype, host.length);
    storages.push(storage);
    backend.write(storage, host, 0);
    const values = Float64Array.from(host.subarray(offset), codec.decode);
    return { ref: { storage, dtype: c.dtype, shape, strides, offset }, values };
  };
  const { B, L, S, E, Ev } = c;
  const q = operand([B, L, E], [L * E, E, 1], 1, B * L * E);
  const k = operand([B, S, E], [S * E, E, 1], 2, B * S * E);
  const v = operand([B, S, Ev], [S * Ev, Ev, 1], 3, B * S * Ev);
  const mask = c.mask
    ? operand([B, L, S], [0, 1, L], 3, L * S, (i) => (i % 4 === 1 || (L > 1 && i % L === 1) ? -Infinity : next()))
    : null;
  const out = operand([B, L, Ev], [L * Ev, Ev, 1], 2, B * L * Ev, () => 0);
  const lseStorage = backend.alloc(0, 'float32', B * L);
  storages.push(lseStorage);
  const lse = { storage: lseStorage, dtype: 'float32', shape: [B, L], strides: [L, 1], offset: 0 };
  try {
    backend.fused.attention(q.ref, k.ref, v.ref, mask?.ref ?? null, { scale: c.scale, isCausal: c.causal }, out.ref, lse);
    const whole = Float64Array.from(await backend.read(out.ref.storage), codec.decode);
    const gotLse = Float64Array.from(await backend.read(lseStorage));
    const want = reference(c, q.values, k.values, v.values, (b, l, s) => (mask ? mask.values[l + s * L] : 0));
    const outCheck = compare(whole.subarray(2), want.out, TOLERANCE[c.dtype]);
    const lseCheck = compare(gotLse, want.lse, LSE_TOLERANCE);
    const beforeOffsetKept = Number.isNaN(whole[0]) && Number.isNaN(whole[1]);
    return {
      name: `${c.dtype}, B ${B}, L ${L}, S ${S}, E ${E}, Ev ${Ev}: ${c.name}`,
      ok: outCheck.mismatches === 0 && lseCheck.mismatches === 0 && beforeOffsetKept,
      out: outCheck,
      logSumExp: lseCheck,
      beforeOffsetKept,
    };
  } finally {
    for (const s of storages) backend.free(s);
  }
}

/**
 * What the backend says when q is not contiguous (the kernel reads whole rows): the error's message,
 * or null if the call was accepted.
 * @param {import('@core/tensor').Backend<unknown>} backend
 */
export function transposedQueryError(backend) {
  const storage = backend.alloc(0, 'float32', 8);
  const view = (shape, strides) => ({ storage, dtype: 'float32', shape, strides, offset: 0 });
  try {
    backend.fused.attention(view([1, 2, 2], [4, 1, 2]), view([1, 2, 2], [4, 2, 1]), view([1, 2, 2], [4, 2, 1]), null, { scale: 1, isCausal: false },
      view([1, 2, 2], [4, 2, 1]), view([1, 2], [2, 1]));
    return null;
  } catch (e) {
    return e.message;
  } finally {
    backend.free(storage);
  }
}

/** Every case in turn; `ok` when all pass. */
export async function checkAttention(backend, cases) {
  const results = [];
  for (const c of cases) results.push(await checkAttentionCase(backend, c));
  return { ok: results.every((r) => r.ok), results };
}
