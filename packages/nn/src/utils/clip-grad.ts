// nn.utils.clipGradNorm_ and nn.utils.clipGradValue_, PyTorch 1.13's: the total norm is the norm
// of the per-gradient norms, kept on the device, and every gradient is multiplied in place by
// min(1, maxNorm / (total + 1e-6)) — no host read, unless errorIfNonfinite asks for one.
import { fullLike, noGrad, stack, tensor, Tensor, TensorError, ValueError, valuesNow } from '@core/tensor';
import { bindArgs, type Args } from '../internal/args.js';

/** What the utils take as parameters: one tensor, or any iterable of them (`model.parameters()`). */
export type Parameters = Tensor | Iterable<Tensor>;

/** The parameters as a list, each checked to be a tensor. */
export function parameterList(parameters: Parameters, op: string): Tensor[] {
  if (parameters instanceof Tensor) return [parameters];
  if (parameters === null || typeof (parameters as Partial<Iterable<Tensor>>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`${op}(): parameters must be a Tensor or an iterable of Tensors, got ${parameters === null ? 'null' : typeof parameters}`);
  }
  const list = [...parameters];
  list.forEach((p, i) => {
    if (!(p instanceof Tensor)) throw new TypeError(`${op}(): parameters[${i}] is ${p === null ? 'null' : typeof p}, not a Tensor`);
  });
  return list;
}

/** The gradients of `parameters` that exist. */
function gradsOf(parameters: Parameters, op: string): Tensor[] {
  return parameterList(parameters, op).map((p) => p.grad).filter((g): g is Tensor => g !== null);
}

/** clipGradNorm_'s parameters after maxNorm, by name. */
export interface ClipGradNormOptions {
  /** The norm's p (default 2; Infinity for the largest absolute value). */
  readonly normType?: number;
  /** Throw instead of clipping when the total norm is NaN or ±Inf (default false; needs a host read of the norm). */
  readonly errorIfNonfinite?: boolean;
}

type ClipGradNormArgs = Args<[normType: number, errorIfNonfinite: boolean], ClipGradNormOptions>;

interface Plan {
  readonly grads: Tensor[];
  /** The total norm, on the first gradient's device. */
  readonly total: Tensor;
  readonly errorIfNonfinite: boolean;
  readonly normType: number;
}

/** Bind the arguments and compute the total norm (PyTorch's order of checks and computations). */
function plan(op: string, parameters: Parameters, maxNorm: number, args: readonly unknown[]): Plan {
  const { normType = 2, errorIfNonfinite = false } = bindArgs<ClipGradNormOptions>(op, ['normType', 'errorIfNonfinite'], args);
  if (typeof maxNorm !== 'number' || Number.isNaN(maxNorm)) throw new ValueError(`${op}(): maxNorm must be a number, got ${String(maxNorm)}`);
  if (typeof normType !== 'number' || Number.isNaN(normType)) throw new ValueError(`${op}(): normType must be a number (Infinity for the max norm), got ${String(normType)}`);
  const grads = gradsOf(parameters, op);
  if (grads.length === 0) return { grads, total: tensor(0), errorIfNonfinite, normType };
  const device = grads[0]!.device;
  const total = noGrad(() => {
    if (normType === Infinity) {
      const norms = grads.map((g) => g.detach().abs().amax().to(device));
      return norms.length === 1 ? norms[0]! : stack(norms).amax();
    }
    return stack(grads.map((g) => g.detach().norm(normType).to(device))).norm(normType);
  });
  return { grads, total, errorIfNonfinite, normType };
}

function nonfiniteError(normType: number): TensorError {
  return new TensorError(
    `The total norm of order ${normType} for gradients from \`parameters\` is non-finite, so it cannot be clipped. To disable ` +
      'this error and scale the gradients by the non-finite norm anyway, set `errorIfNonfinite: false`',
  );
}

/** Multiply every gradient in place by min(1, maxNorm / (total + 1e-6)), on the device. */
function scale(grads: readonly Tensor[], total: Tensor, maxNorm: number): void {
  noGrad(() => {
    const coef = fullLike(total, maxNorm).div(total.add(1e-6)).clamp(null, 1);
    for (const g of grads) g.detach().mul_(coef.to(g.device));
  });
}

/**
 * Scale the gradients of `parameters` in place so that their total `normType`-norm (the norm of
 * all of them together) is at most `maxNorm`; returns the total norm before clipping, a 0-dim
 * tensor on the first gradient's device (a float32 0 when no parameter has a gradient). Works
 * after `scaler.unscale_(optimizer)`. Nothing is read on the host unless `errorIfNonfinite` is
 * set; a device without synchronous reads then needs `clipGradNormAsync_`.
 */
export function clipGradNorm_(parameters: Parameters, maxNorm: number, ...args: ClipGradNormArgs): Tensor {
  const { grads, total, errorIfNonfinite, normType } = plan('clipGradNorm_', parameters, maxNorm, args);
  if (grads.length === 0) return total;
  if (errorIfNonfinite) {
    const nonfinite = valuesNow(total.isfinite().logicalNot());
    if (!nonfinite) {
      throw new TensorError(
        `clipGradNorm_(): errorIfNonfinite reads the total norm on the host, and the ${total.device.type} backend cannot read synchronously: ` +
          'use `await nn.utils.clipGradNormAsync_(parameters, maxNorm, normType, { errorIfNonfinite: true })`',
      );
    }
    if (nonfinite[0]) throw nonfiniteError(normType);
  }
  scale(grads, total, maxNorm);
  return total;
}

/** `clipGradNorm_` for every device: the errorIfNonfinite check awaits its read of the total norm. */
export async function clipGradNormAsync_(parameters: Parameters, maxNorm: number, ...args: ClipGradNormArgs): Promise<Tensor> {
  const { grads, total, errorIfNonfinite, normType } = plan('clipGradNormAsync_', parameters, maxNorm, args);
  if (grads.length === 0) return total;
  if (errorIfNonfinite && !(await total.isfinite().item())) throw nonfiniteError(normType);
  scale(grads, total, maxNorm);
  return total;
}

/** Clamp every gradient of `parameters` to [−clipValue, clipValue], in place. */
export function clipGradValue_(parameters: Parameters, clipValue: number): void {
  if (typeof clipValue !== 'number' || Number.isNaN(clipValue)) throw new ValueError(`clipGradValue_(): clipValue must be a number, got ${String(clipValue)}`);
  const grads = gradsOf(parameters, 'clipGradValue_');
  noGrad(() => {
    for (const g of grads) g.detach().clamp_(-clipValue, clipValue);
  });
}
