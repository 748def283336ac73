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

export interface AdadeltaOptions { lr: number; rho?: number; eps?: number; weightDecay?: number; maximize?: boolean }
export interface RmspropOptions { lr: number; alpha?: number; eps?: number; weightDecay?: number; momentum?: number; centered?: boolean; maximize?: boolean }

/** Adadelta's and RMSprop's running state: two averages (v, u or a) and RMSprop's momentum buffer b, zero at first. */
export interface AveragesState { v: Float64Array; u: Float64Array; b: Float64Array }

/** A zeroed Adadelta or RMSprop state for `n` parameters. */
export function newAveragesState(n: number): AveragesState {
  return { v: new Float64Array(n), u: new Float64Array(n), b: new Float64Array(n) };
}

/** The gradient as the update uses it: negated when maximizing, plus wd·p. */
function decayed(p: Float64Array, grad: Float64Array, weightDecay: number, maximize: boolean, i: number): number {
  return (maximize ? -grad[i]! : grad[i]!) + weightDecay * p[i]!;
}

/** PyTorch's Adadelta: v = ρv + (1−ρ)g², Δ = √(u+eps)/√(v+eps)·g, u = ρu + (1−ρ)Δ², p −= lr·Δ. */
export function adadeltaStep(p: Float64Array, grad: Float64Array, o: AdadeltaOptions, s: AveragesState): void {
  const { lr, rho = 0.9, eps = 1e-6, weightDecay = 0, maximize = false } = o;
  for (let i = 0; i < p.length; i++) {
    const g = decayed(p, grad, weightDecay, maximize, i);
    s.v[i] = rho * s.v[i]! + (1 - rho) * g * g;
    const delta = (Math.sqrt(s.u[i]! + eps) / Math.sqrt(s.v[i]! + eps)) * g;
    s.u[i] = rho * s.u[i]! + (1 - rho) * delta * delta;
    p[i] = p[i]! - lr * delta;
  }
}

/** PyTorch's RMSprop: v = αv + (1−α)g², centered: a = αa + (1−α)g and v − a² instead of v; then through the momentum buffer or straight. */
export function rmspropStep(p: Float64Array, grad: Float64Array, o: RmspropOptions, s: AveragesState): void {
  const { lr, alpha = 0.99, eps = 1e-8, weightDecay = 0, momentum = 0, centered = false, maximize = false } = o;
  for (let i = 0; i < p.length; i++) {
    const g = decayed(p, grad, weightDecay, maximize, i);
    s.v[i] = alpha * s.v[i]! + (1 - alpha) * g * g;
    let variance = s.v[i]!;
    if (centered) {
      s.u[i] = alpha * s.u[i]! + (1 - alpha) * g;
      variance -= s.u[i]! * s.u[i]!;
    }
    const avg = Math.sqrt(variance) + eps;
    if (momentum > 0) {
      s.b[i] = momentum * s.b[i]! + g / avg;
      p[i] = p[i]! - lr * s.b[i]!;
    } else {
      p[i] = p[i]! - (lr * g) / avg;
    }
  }
}
