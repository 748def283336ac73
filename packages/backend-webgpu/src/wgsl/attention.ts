// The flash-style attention kernel (the fused kernel of contract 1.4.0) as WGSL.
//
// One workgroup per (batch b, tile of ATTENTION_ROWS query rows, chunk of Ev columns); each
// invocation owns one query row. Keys and values stream through workgroup memory in tiles of
// `keys` rows (decoded to f32); every invocation scores its row against the tile, then folds the
// tile into its running maximum m, running sum l and Ev accumulators (all private), rescaling them
// by exp(m_old − m_new) when the maximum grows. The [L, S] scores never exist in device memory.
//
// Head dims up to ATTENTION_MAX_CHUNK are held whole (the shader is specialised to them): the query
// row is loaded once and there is one Ev chunk. Wider ones take the same path in chunks of that
// width: the q·k products are summed chunk by chunk (the query chunk reloaded per key tile), and
// each Ev chunk is its own workgroup that recomputes the scores (chunk 0 writes logSumExp). Private
// memory stays within WGSL's 8 KiB per invocation and the K and V tiles within the 16 KiB of
// workgroup storage every WebGPU device has.
//
// Parameters (u32 words):
//   0 B   1 L   2 S   3 E   4 Ev   5 row tiles   6 Ev chunks   7 workgroups (B · row tiles · chunks)
//   8 scale (f32 bits)   9 causal (0/1)   10..14 offsets of q, k, v, out, logSumExp
//   15 mask offset   16..18 mask strides (b, l, s)
import { WORKGROUP } from './gen.js';

/** Query rows per workgroup, one invocation each. */
export const ATTENTION_ROWS = WORKGROUP;
/** The widest head dim (E or Ev) held whole in private memory; wider ones go through in chunks this wide. */
export const ATTENTION_MAX_CHUNK = 256;
/** f32 elements of the K and V tiles together: the 16 KiB of workgroup storage WebGPU guarantees. */
export const ATTENTION_TILE_FLOATS = 16384 / 4;
const MAX_KEYS = 64;

/** How the kernel tiles one (E, Ev): it is specialised to these numbers. */
export interface AttentionPlan {
  /** Elements of q·k summed per step: E, or ATTENTION_MAX_CHUNK when E is wider. */
  readonly qkChunk: number;
  /** Ev columns per workgroup: Ev, or ATTENTION_MAX_CHUNK when Ev is wider. */
  readonly vChunk: number;
  /** Keys per tile, so that the K tile [keys, qkChunk] and the V tile [keys, vChunk] fit ATTENTION_TILE_FLOATS. */
  readonly keys: number;
  /** E is wider than qkChunk: the query row is read chunk by chunk. */
  readonly chunkedE: boolean;
}

/** The tiling for head dims E and Ev (both ≥ 1). */
export function attentionPlan(E: number, Ev: number): AttentionPlan {
  const qkChunk = Math.min(E, ATTENTION_MAX_CHUNK);
  const vChunk = Math.min(Ev, ATTENTION_MAX_CHUNK);
  const keys = Math.min(MAX_KEYS, Math.floor(ATTENTION_TILE_FLOATS / (qkChunk + vChunk)));
  return { qkChunk, vChunk, keys, chunkedE: E > qkChunk };
}

/**
 * The shader's entry point for `plan`, after the operand bindings `qq`, `kk`, `vv`, (`mk` when
 * `masked`), `o` and `ls` (gen.ts's accessors: values are decoded to f32, stores round once).
 */
export function attentionMain(plan: AttentionPlan, masked: boolean): string {
  const { qkChunk: EC, vChunk: VC, keys: TK, chunkedE } = plan;
  // The workgroup fills tile [TK, width] together: element (j, c) is `load` of key t0 + j and
  // column col = first + c when both exist (j < nk, col < limit), else 0.
  const fillTile = (tile: string, width: number, first: string, load: string, limit: string) => `
      for (var x = li; x < ${TK * width}u; x = x + ${ATTENTION_ROWS}u) {
        let j = x / ${width}u;
        let col = ${first} + x % ${width}u;
        var val = 0.0;
        if (j < nk && col < ${limit}) { val = ${load}; }
        ${tile}[x] = val;
      }`;
  const loadQ = (e0: string) => `if (valid) {
      for (var e = 0u; e < ${EC}u; e = e + 1u) {
        var x = 0.0;
        if (${e0} + e < E) { x = qq_ld(qbase + ${e0} + e); }
        qv[e] = x;
      }
    }`;
  return `
var<workgroup> Ks: array<f32, ${TK * EC}>;
var<workgroup> Vs: array<f32, ${TK * VC}>;
// −∞'s bits (a constant −∞ itself is a WGSL compile error).
const NEG_INF_BITS: u32 = 0xff800000u;
@compute @workgroup_size(${ATTENTION_ROWS})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let g = wg.y * nwg.x + wg.x;
  if (g >= P[7]) { return; }
  let L = P[1]; let S = P[2]; let E = P[3]; let Ev = P[4];
  let chunk = g % P[6];
  let rest = g / P[6];
  let r0 = (rest % P[5]) * ${ATTENTION_ROWS}u;
  let b = rest / P[5];
  let row = r0 + li;
  let valid = row < L;
  let v0 = chunk * ${VC}u;
  let causal = P[9] != 0u;
  let scale = bitcast<f32>(P[8]);
  // Causal: no key past the tile's last row takes part, so the tiles above the diagonal are skipped.
  var kend = S;
  if (causal) { kend = min(S, min(r0 + ${ATTENTION_ROWS}u, L)); }
  let qbase = P[10] + (b * L + row) * E;
  let kbase = P[11] + b * S * E;
  let vbase = P[12] + b * S * Ev;
  ${masked ? 'let mbase = P[15] + b * P[16] + row * P[17];' : ''}
  var qv: array<f32, ${EC}>;
  var acc: array<f32, ${VC}>;
  var sc: array<f32, ${TK}>;
  var m = f32_inf(true);
  var lsum = 0.0;
  ${chunkedE ? '' : loadQ('0u')}
  for (var t0 = 0u; t0 < kend; t0 = t0 + ${TK}u) {
    let nk = min(${TK}u, kend - t0);
    for (var j = 0u; j < ${TK}u; j = j + 1u) { sc[j] = 0.0; }
    for (var e0 = 0u; e0 < E; e0 = e0 + ${EC}u) {
      workgroupBarrier();
      ${fillTile('Ks', EC, 'e0', 'kk_ld(kbase + (t0 + j) * E + col)', 'E')}
      if (e0 == 0u) { ${fillTile('Vs', VC, 'v0', 'vv_ld(vbase + (t0 + j) * Ev + col)', 'Ev')} }
      ${chunkedE ? loadQ('e0') : ''}
      workgroupBarrier();
      for (var j = 0u; j < nk; j = j + 1u) {
        var d = 0.0;
        for (var e = 0u; e < ${EC}u; e = e + 1u) { d = d + qv[e] * Ks[j * ${EC}u + e]; }
        sc[j] = sc[j] + d;
      }
    }
    // The keys of this tile that take part in this row.
    var kn = nk;
    if (causal) { kn = select(0u, min(nk, row + 1u - t0), row + 1u > t0); }
    if (!valid) { kn = 0u; }
    var tmax = f32_inf(true);
    for (var j = 0u; j < kn; j = j + 1u) {
      let s = scale * sc[j]${masked ? ' + mk_ld(mbase + (t0 + j) * P[18])' : ''};
      sc[j] = s;
      tmax = max_f(tmax, s);
    }
    let mnew = max_f(m, tmax);
    if (kn > 0u && bitcast<u32>(mnew) != NEG_INF_BITS) {
      let alpha = select(exp_f(m - mnew), 0.0, bitcast<u32>(m) == NEG_INF_BITS);
      lsum = lsum * alpha;
      for (var c = 0u; c < ${VC}u; c = c + 1u) { acc[c] = acc[c] * alpha; }
      for (var j = 0u; j < kn; j = j + 1u) {
        let p = exp_f(sc[j] - mnew);
        lsum = lsum + p;
        for (var c = 0u; c < ${VC}u; c = c + 1u) { acc[c] = acc[c] + p * Vs[j * ${VC}u + c]; }
      }
      m = mnew;
    }
  }
  if (!valid) { return; }
  // No key took part (every score −∞): NaN out, as softmax gives, and logSumExp −∞.
  let empty = bitcast<u32>(m) == NEG_INF_BITS;
  let obase = P[13] + (b * L + row) * Ev;
  for (var c = 0u; c < ${VC}u; c = c + 1u) {
    if (v0 + c < Ev) { o_st(obase + v0 + c, select(div_rn(acc[c], lsum), f32_nan(), empty)); }
  }
  if (chunk == 0u) { ls_st(P[14] + b * L + row, select(m + log_f(lsum), f32_inf(true), empty)); }
}`;
}
