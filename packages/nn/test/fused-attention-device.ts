// 'flash': a renamed CPU backend that adds the contract's fused attention kernel, written in plain
// TypeScript straight from its definition (FusedKernels.attention): per query row, the scores
// scale·q·kᵀ + mask (keys after the row skipped when causal), their log-sum-exp about the row's
// maximum, and the output Σ exp(score − lse)·v. Sums run in float32 (float64 for float64) and the
// output is rounded once into its dtype. The cpu backend itself has no such kernel, so this device
// is how core's fused path (and its backward) is tested. `attentionCalls` counts the kernel's runs.
import { createCpuBackend } from '@core/backend-cpu';
import {
  bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, hostArrayFor, listBackends, registerBackend,
  type AttentionSpec, type Backend, type DTypeName, type TensorRef,
} from '@core/tensor';

export const FLASH = 'flash';

let calls = 0;

/** How many times the 'flash' device's attention kernel has run. */
export function attentionCalls(): number {
  return calls;
}

const decoders: Partial<Record<DTypeName, (bits: number) => number>> = { float16: float16BitsToNumber, bfloat16: bfloat16BitsToNumber };
const encoders: Partial<Record<DTypeName, (x: number) => number>> = { float16: float32ToFloat16Bits, bfloat16: float32ToBFloat16Bits };

function createFlashBackend(): Backend<unknown> {
  const cpu = createCpuBackend() as Backend<unknown>;
  /** Element [i, j, k] of a rank-3 ref, as a number. */
  const reader = (r: TensorRef<unknown>) => {
    const data = cpu.readSync!(r.storage);
    const decode = decoders[r.dtype] ?? ((x: number) => x);
    const [s0, s1, s2] = r.strides as [number, number, number];
    return (i: number, j: number, k: number) => decode(data[r.offset + i * s0 + j * s1 + k * s2]!);
  };
  function attention(q: TensorRef<unknown>, k: TensorRef<unknown>, v: TensorRef<unknown>, mask: TensorRef<unknown> | null, spec: AttentionSpec, out: TensorRef<unknown>, logSumExp: TensorRef<unknown>): void {
    calls++;
    const [B, L, E] = q.shape as [number, number, number];
    const [S, Ev] = [k.shape[1]!, v.shape[2]!];
    const round = q.dtype === 'float64' ? (x: number) => x : Math.fround;
    const [Q, K, V] = [reader(q), reader(k), reader(v)];
    const M = mask && reader(mask);
    const result = new Float64Array(B * L * Ev);
    const lse = new Float64Array(B * L);
    const scores = new Float64Array(S);
    for (let b = 0; b < B; b++) {
      for (let l = 0; l < L; l++) {
        let top = -Infinity;
        for (let s = 0; s < S; s++) {
          let dot = 0;
          for (let e = 0; e < E; e++) dot = round(dot + round(Q(b, l, e) * K(b, s, e)));
          scores[s] = spec.isCausal && s > l ? -Infinity : round(round(spec.scale * dot) + (M ? M(b, l, s) : 0));
          top = Math.max(top, scores[s]!); // NaN if any score is NaN
        }
        let total = 0;
        for (let s = 0; s < S; s++) total = round(total + round(Math.exp(scores[s]! - top)));
        // No key taking part: lse −∞, and exp(−∞ − (−∞)) below makes the row NaN.
        const rowLse = top === -Infinity ? -Infinity : round(top + round(Math.log(total)));
        lse[b * L + l] = rowLse;
        for (let c = 0; c < Ev; c++) {
          let acc = 0;
          for (let s = 0; s < S; s++) acc = round(acc + round(round(Math.exp(scores[s]! - rowLse)) * V(b, s, c)));
          result[(b * L + l) * Ev + c] = acc;
        }
      }
    }
    const store = (r: TensorRef<unknown>, values: Float64Array) => {
      const host = hostArrayFor(r.dtype, values.length);
      const encode = encoders[r.dtype] ?? ((x: number) => x);
      values.forEach((x, i) => (host[i] = encode(x)));
      cpu.write(r.storage, host, r.offset);
    };
    store(out, result);
    store(logSumExp, lse);
  }
  return { ...cpu, name: FLASH, fused: { ...cpu.fused, attention } };
}

if (!listBackends().includes(FLASH)) registerBackend({ name: FLASH, priority: 0, create: createFlashBackend });
