// Reference optimizers in float64 on flat arrays, transcribing pytorch-semantics.md OPT-5 (SGD),
// OPT-8 (Adam) and OPT-9 (AdamW) step by step.

export interface SgdOptions { lr: number; momentum?: number; dampening?: number; weightDecay?: number; nesterov?: boolean; maximize?: boolean }
export interface AdamOptions { lr: number; betas?: [number, number]; eps?: number; weightDecay?: number; amsgrad?: boolean; maximize?: boolean; decoupled?: boolean }

/** SGD (OPT-5). `state.buf` is created on the first step. */
export function sgdStep(p: Float64Array, grad: Float64Array, o: SgdOptions, state: { buf?: Float64Array }): void {
  const { lr, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false, maximize = false } = o;
  const g = grad.map((v) => (maximize ? -v : v));
  if (weightDecay !== 0) g.forEach((v, i) => { g[i] = v + weightDecay * p[i]!; });
  if (momentum !== 0) {
    if (!state.buf) state.buf = g.slice(); // first step: no dampening
    else state.buf.forEach((b, i) => { state.buf![i] = momentum * b + (1 - dampening) * g[i]!; });
    g.forEach((v, i) => { g[i] = nesterov ? v + momentum * state.buf![i]! : state.buf![i]!; });
  }
  p.forEach((v, i) => { p[i] = v - lr * g[i]!; });
}

/** ATen's lerp (Lerp.h). */
function lerp(a: number, b: number, w: number): number {
  return Math.abs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
}

export interface AdamState { t: number; m: Float64Array; v: Float64Array; vmax: Float64Array }

/** Adam (OPT-8), or AdamW (OPT-9) with `decoupled`. */
export function adamStep(p: Float64Array, grad: Float64Array, o: AdamOptions, state: AdamState): void {
  const { lr, betas: [b1, b2] = [0.9, 0.999], eps = 1e-8, weightDecay = 0, amsgrad = false, maximize = false, decoupled = false } = o;
  state.t += 1;
  const g = grad.map((v) => (maximize ? -v : v));
  if (weightDecay !== 0) {
    if (decoupled) p.forEach((v, i) => { p[i] = v * (1 - lr * weightDecay); });
    else g.forEach((v, i) => { g[i] = v + weightDecay * p[i]!; });
  }
  for (let i = 0; i < p.length; i++) {
    state.m[i] = lerp(state.m[i]!, g[i]!, 1 - b1);
    state.v[i] = b2 * state.v[i]! + (1 - b2) * g[i]! * g[i]!;
    let v = state.v[i]!;
    if (amsgrad) {
      state.vmax[i] = Math.max(state.vmax[i]!, v);
      v = state.vmax[i]!;
    }
    const denom = Math.sqrt(v) / Math.sqrt(1 - b2 ** state.t) + eps;
    p[i] = p[i]! - (lr / (1 - b1 ** state.t)) * (state.m[i]! / denom);
  }
}

/** A zeroed Adam state for `n` parameters. */
export function newAdamState(n: number): AdamState {
  return { t: 0, m: new Float64Array(n), v: new Float64Array(n), vmax: new Float64Array(n) };
}
