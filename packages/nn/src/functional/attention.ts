// F.scaledDotProductAttention: softmax(q·kᵀ·scale + mask)·v as a decomposition into core ops
// (matmul, add, softmax, dropout), so it runs on every backend and is differentiated by autograd.
// It follows PyTorch 2.1's math path: the scale is split as √scale on each of q and k, a bool mask
// (true = takes part) becomes an additive mask of 0 and −∞, and a row whose every key is masked out
// gives NaN (PyTorch 2.1's softmax of all −∞; 2.5 and later return zeros there). Without dropout,
// F.scaledDotProductAttention runs the backend's fused attention kernel instead when it has one
// (core's fusedScaledDotProductAttention), which never stores the [L, S] weights.
import {
  autocastOp, bool, checkSameDevice, DTypeError, fusedScaledDotProductAttention, ones, ShapeError, ValueError, zeros, type Tensor,
} from '@core/tensor';
import { bindArgs, broadcastShape, checkFloating, checkTensor, shapeText, type Args } from '../internal/args.js';
import { checkProbability, dropout } from './dropout.js';

/** `scaledDotProductAttention`'s parameters by name. */
export interface ScaledDotProductAttentionOptions {
  /** A bool mask (true: the key takes part) or a float mask added to the scores, broadcastable to [..., L, S]. */
  readonly attnMask?: Tensor | null;
  /** Dropout probability applied to the attention weights (default 0: none). */
  readonly dropoutP?: number;
  /** Mask out keys after each query (query i sees keys 0..i, aligned top-left); not with `attnMask`. */
  readonly isCausal?: boolean;
  /** The factor the scores are multiplied by (default 1/√E, E the query's last dim). */
  readonly scale?: number | null;
}

/** The attention weights (after dropout) and their product with the values. */
export interface Attention {
  /** `[..., L, Ev]`. */
  readonly output: Tensor;
  /** `[..., L, S]`: softmax over the keys of each query. */
  readonly weights: Tensor;
}

/** `mask` (true: takes part) as an additive mask of `like`'s dtype and device: 0 where true, −∞ where false. */
export function additiveMask(mask: Tensor, like: Tensor): Tensor {
  return zeros(mask.shape, { dtype: like.dtype, device: like.device }).maskedFill(mask.logicalNot(), -Infinity);
}

/** The inputs' checks, with PyTorch's messages where it has one; returns the scores' shape [..., L, S]. */
function checkInputs(op: string, query: Tensor, key: Tensor, value: Tensor, attnMask: Tensor | null): number[] {
  checkTensor(query, 'query', op);
  checkTensor(key, 'key', op);
  checkTensor(value, 'value', op);
  if (attnMask !== null) checkTensor(attnMask, 'attnMask', op);
  if (query.dtype !== key.dtype || query.dtype !== value.dtype) {
    throw new DTypeError(
      `${op}(): Expected query, key, and value to have the same dtype, but got query.dtype: ${query.dtype.name} key.dtype: ${key.dtype.name} and value.dtype: ${value.dtype.name} instead.`,
      op,
    );
  }
  checkFloating(query, 'query', op);
  checkSameDevice(op, [{ name: 'query', tensor: query }, { name: 'key', tensor: key }, { name: 'value', tensor: value }, { name: 'attnMask', tensor: attnMask }]);
  if (query.ndim < 2 || key.ndim < 2 || value.ndim < 2) {
    throw new ShapeError(
      `${op}(): Expected query, key, and value to all be at least 2 dimensional, but got query.dim: ${query.ndim} key.dim: ${key.ndim} and value.dim: ${value.ndim} instead.`,
      op,
    );
  }
  const [L, E] = query.shape.slice(-2) as [number, number];
  const [S, Ek] = key.shape.slice(-2) as [number, number];
  if (Ek !== E) throw new ShapeError(`${op}(): query ${shapeText(query.shape)} and key ${shapeText(key.shape)} must have the same last dim (the embedding size E)`, op);
  if (value.shape[value.ndim - 2] !== S) {
    throw new ShapeError(`${op}(): key ${shapeText(key.shape)} and value ${shapeText(value.shape)} must have the same second-to-last dim (the source length S)`, op);
  }
  const batch = broadcastShape(broadcastShape(query.shape.slice(0, -2), key.shape.slice(0, -2), op), value.shape.slice(0, -2), op);
  const scores = [...batch, L, S];
  if (attnMask !== null) {
    if (attnMask.dtype !== bool && attnMask.dtype !== query.dtype) {
      throw new DTypeError(
        `${op}(): Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: ${attnMask.dtype.name} and query.dtype: ${query.dtype.name} instead.`,
        op,
        attnMask.dtype.name,
      );
    }
    const offset = scores.length - attnMask.ndim;
    if (offset < 0 || attnMask.shape.some((s, i) => s !== 1 && s !== scores[offset + i])) {
      throw new ShapeError(`${op}(): attnMask of shape ${shapeText(attnMask.shape)} does not broadcast to the attention scores' shape ${shapeText(scores)} ([..., L, S])`, op);
    }
  }
  return scores;
}

/** attention's arguments, checked as `op`; returns the scale factor (default 1/√E). */
function checkArguments(
  op: string, query: Tensor, key: Tensor, value: Tensor, attnMask: Tensor | null, dropoutP: number, isCausal: boolean, scale: number | null,
): number {
  checkInputs(op, query, key, value, attnMask);
  checkProbability(dropoutP);
  if (typeof isCausal !== 'boolean') throw new TypeError(`${op}(): isCausal must be a boolean, got ${typeof isCausal}`);
  if (scale !== null && (typeof scale !== 'number' || Number.isNaN(scale))) throw new TypeError(`${op}(): scale must be a number or null, got ${String(scale)}`);
  if (isCausal && attnMask !== null) throw new ValueError(`${op}(): Explicit attnMask should not be set when isCausal=true (give one or the other)`);
  return scale ?? 1 / Math.sqrt(query.shape[query.ndim - 1]!);
}

/** The decomposition, on checked arguments: scores, mask, softmax, dropout, product with v. */
function decomposed(query: Tensor, key: Tensor, value: Tensor, attnMask: Tensor | null, dropoutP: number, isCausal: boolean, factor: number): Attention {
  const [L, S] = [query.shape[query.ndim - 2]!, key.shape[key.ndim - 2]!];
  // PyTorch scales q and k by √|scale| each, the sign going to q, before the product.
  const root = Math.sqrt(Math.abs(factor));
  let scores = query.mul(factor < 0 ? -root : root).matmul(key.mul(root).transpose(-2, -1));
  const mask = isCausal ? additiveMask(ones([L, S], { dtype: bool, device: query.device }).tril(), query) : attnMask;
  if (mask !== null) scores = scores.add(mask.dtype === bool ? additiveMask(mask, query) : mask);
  let weights = scores.softmax(-1);
  if (dropoutP > 0) weights = dropout(weights, dropoutP, true);
  return { output: weights.matmul(value), weights };
}

/**
 * softmax(q·kᵀ·scale + mask) along the keys, dropped out with probability `dropoutP`, and its
 * product with v; checked as `op`. The shared body of `F.scaledDotProductAttention` and
 * `nn.MultiheadAttention` (which needs the weights too, so it always runs the decomposition).
 */
export function attention(
  op: string, query: Tensor, key: Tensor, value: Tensor, attnMask: Tensor | null, dropoutP: number, isCausal: boolean, scale: number | null,
): Attention {
  const factor = checkArguments(op, query, key, value, attnMask, dropoutP, isCausal, scale);
  return decomposed(query, key, value, attnMask, dropoutP, isCausal, factor);
}

/**
 * PyTorch 2.1's `F.scaled_dot_product_attention`: softmax(q·kᵀ·scale + mask)·v for query [..., L, E],
 * key [..., S, E] and value [..., S, Ev] (batch dims broadcast), giving [..., L, Ev].
 *
 * - `attnMask`: bool (true: the key takes part) or of the query's dtype (added to the scores),
 *   broadcastable to [..., L, S].
 * - `dropoutP`: dropout on the attention weights, drawn from the global generator (`manualSeed`);
 *   like PyTorch, it applies whenever it is > 0, so pass 0 outside training.
 * - `isCausal`: query i attends to keys 0..i (top-left aligned when L ≠ S); not with `attnMask`.
 * - `scale`: keyword only; default 1/√E.
 *
 * A query whose every key is masked out gets NaN, as in PyTorch 2.1. Autocast: lower precision.
 * Without dropout it runs the backend's fused attention kernel where there is one (see
 * `setFusedKernelsEnabled`): the same result up to rounding, without storing the [L, S] weights.
 */
export function scaledDotProductAttention(
  query: Tensor, key: Tensor, value: Tensor, ...args: Args<[attnMask: Tensor | null, dropoutP: number, isCausal: boolean], ScaledDotProductAttentionOptions>
): Tensor {
  const op = 'scaledDotProductAttention';
  const { attnMask = null, dropoutP = 0, isCausal = false, scale = null } = bindArgs<ScaledDotProductAttentionOptions>(op, ['attnMask', 'dropoutP', 'isCausal'], args, ['scale']);
  return autocastOp(op, [query, key, value, attnMask] as const, (q, k, v, m) => {
    const factor = checkArguments(op, q, k, v, m, dropoutP, isCausal, scale);
    // Without dropout, the backend's fused kernel when it has one (same semantics; the weights are never stored).
    const fused = dropoutP === 0 ? fusedScaledDotProductAttention(q, k, v, m, factor, isCausal) : undefined;
    return fused ?? decomposed(q, k, v, m, dropoutP, isCausal, factor).output;
  });
}
