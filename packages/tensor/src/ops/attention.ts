// Scaled dot-product attention through a backend's fused kernel: the forward pass (output and the
// per-row log-sum-exp of the scores) comes from the kernel, which never stores the [L, S] scores;
// the backward is written here with core ops, from the saved inputs and that log-sum-exp, so
// autograd is the same on every backend. @core/nn's F.scaledDotProductAttention calls this first
// (without dropout) and runs its decomposition when it returns undefined.
import { inheritSite } from '../tensor/site.js';
import { bfloat16, bool, float16, float32, float64, type DType } from '../dtype/dtype.js';
import { allocate, backendOf, ref } from '../dispatch/run.js';
import { record } from '../autograd/engine.js';
import { isGradEnabled } from '../autograd/grad-mode.js';
import { broadcastShapes, numelOf } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import { ones, zeros } from './creation.js';
import { fusedKernel } from '../dispatch/fused.js';

/**
 * `F.scaledDotProductAttention(query, key, value, attnMask, 0, isCausal, { scale })` through the
 * backend's fused `attention` kernel: query [..., L, E], key [..., S, E], value [..., S, Ev] (batch
 * dims broadcast), `attnMask` null, bool (true: the key takes part) or additive of the query's
 * dtype, broadcastable to [..., L, S]; `scale` is the resolved factor (1/√E by default). Returns
 * the output [..., L, Ev], or undefined when the kernel does not apply (no kernel, fusion disabled,
 * a dtype the backend does not compute, an empty dim, a float mask that requires grad, tensors on
 * different devices); the caller then runs the decomposition, which has the same semantics.
 * @internal Called by \@core/nn; arguments are checked there.
 */
export function fusedScaledDotProductAttention(
  query: Tensor, key: Tensor, value: Tensor, attnMask: Tensor | null, scale: number, isCausal: boolean,
): Tensor | undefined {
  const dtype = query.dtype;
  if (!dtype.isFloatingPoint || key.dtype !== dtype || value.dtype !== dtype || !Number.isFinite(scale)) return undefined;
  if (query.ndim < 2 || key.ndim < 2 || value.ndim < 2 || (isCausal && attnMask !== null)) return undefined;
  if (attnMask !== null && (attnMask.requiresGrad || (attnMask.dtype !== bool && attnMask.dtype !== dtype))) return undefined;
  if (![key, value, attnMask].every((t) => t === null || t.device.equals(query.device))) return undefined;
  const [L, E] = query.shape.slice(-2) as [number, number];
  const [S, Ev] = [key.shape[key.ndim - 2]!, value.shape[value.ndim - 1]!];
  const batch = broadcastShapes([query.shape.slice(0, -2), key.shape.slice(0, -2), value.shape.slice(0, -2)], 'scaledDotProductAttention');
  const B = numelOf(batch);
  if (B * L * S * E * Ev === 0) return undefined;
  const backend = backendOf(query.device);
  if (!backend.capabilities.dtypes[dtype.name]?.compute) return undefined;
  const kernel = fusedKernel(backend, 'attention');
  if (!kernel) return undefined;
  // [..., X, Y] → [B, X, Y], contiguous; the broadcast batch dims are copied out (the kernel reads q, k, v densely).
  const flat = (t: Tensor, rows: number, cols: number) => t.expand([...batch, rows, cols]).reshape([B, rows, cols]).contiguous();
  const [q, k, v] = [flat(query, L, E), flat(key, S, E), flat(value, S, Ev)];
  // The mask stays a strided view where it can (stride 0 on its broadcast dims).
  const mask = attnMask === null ? null : (attnMask.dtype === bool ? additive(attnMask, dtype) : attnMask).expand([...batch, L, S]).reshape([B, L, S]);
  inheritSite(query._site);
  const out = allocate([B, L, Ev], dtype, query.device);
  const logSumExp = allocate([B, L], dtype === float64 ? float64 : float32, query.device);
  kernel(ref(q), ref(k), ref(v), mask && ref(mask), { scale, isCausal }, ref(out), ref(logSumExp));
  const saved = mask ? [q, k, v, logSumExp, mask] : [q, k, v, logSumExp];
  const output = record('scaledDotProductAttentionBackward', out, [q, k, v], (g) => attentionGrad(q, k, v, mask, isCausal, scale, logSumExp, g), saved);
  return output.reshape([...batch, L, Ev]);
}

/** `mask` (true: takes part) as an additive mask of `dtype`: 0 where true, −∞ where false. */
function additive(mask: Tensor, dtype: DType): Tensor {
  return zeros(mask.shape, { dtype, device: mask.device }).maskedFill(mask.logicalNot(), -Infinity);
}

/**
 * The gradients of q [B, L, E], k [B, S, E] and v [B, S, Ev] from the output's, g [B, L, Ev], with
 * the weights P = exp(scale·q·kᵀ + mask − logSumExp) recomputed: dV = Pᵀ·g, dP = g·vᵀ,
 * dS = P ⊙ (dP − rowsum(P ⊙ dP)) (softmax's backward), dQ = scale·dS·k, dK = scale·dSᵀ·q. The
 * row sums come from P and dP rather than from the output, which is then not saved (an in-place
 * change of it is allowed, as with the decomposition) and, in the half types, not re-read rounded.
 * Half inputs are differentiated in float32 and the results rounded once. Every step is a core op,
 * so under createGraph the gradients are differentiable again; the normaliser is then recomputed
 * from the scores (the kernel's log-sum-exp is a constant to autograd, the weights depend on it).
 */
function attentionGrad(
  q: Tensor, k: Tensor, v: Tensor, mask: Tensor | null, isCausal: boolean, scale: number, logSumExp: Tensor, g: Tensor,
): Tensor[] {
  const work = q.dtype === float16 || q.dtype === bfloat16 ? float32 : q.dtype;
  const [Q, K, V, dO] = [q, k, v, g].map((t) => t.to(work)) as [Tensor, Tensor, Tensor, Tensor];
  const [L, S] = [q.shape[1]!, k.shape[1]!];
  let scores = Q.matmul(K.transpose(1, 2)).mul(scale);
  if (mask) scores = scores.add(mask.to(work));
  if (isCausal) scores = scores.add(additive(ones([L, S], { dtype: bool, device: q.device }).tril(), work));
  const normaliser = isGradEnabled() ? scores.logsumexp(-1, true) : logSumExp.unsqueeze(-1);
  const P = scores.sub(normaliser).exp();
  const dP = dO.matmul(V.transpose(1, 2));
  const dS = P.mul(dP.sub(P.mul(dP).sum(-1, true)));
  return [dS.matmul(K).mul(scale), dS.transpose(1, 2).matmul(Q).mul(scale), P.transpose(1, 2).matmul(dO)].map((d) => d.to(q.dtype));
}
