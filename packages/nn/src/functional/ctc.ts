// F.ctcLoss: the connectionist temporal classification loss, −log of the summed probability of
// every alignment of a target sequence to the input frames (Graves et al., 2006), with PyTorch
// 1.13's arguments, checks, reductions and gradient. The recursions run in log space as batched
// tensor ops over the extended target l' (blanks around and between the labels, length 2S + 1),
// one step per frame, so they run on every backend.
//
// The backward is PyTorch's formula, exp(logProbs) − γ, where γ[t, c] is the posterior probability
// of class c at frame t. It is the gradient with respect to the logits when logProbs is their
// log-softmax (the usual case, and then the gradient reaching the logits is the true one), not the
// derivative with respect to logProbs taken as free inputs, which is −γ; PyTorch returns the same.
import {
  arange, autocastOp, autograd, cat, DTypeError, float32, float64, full, int32, ShapeError, stack, tensor, ValueError, type DataArray, type Tensor, valuesNow,
} from '@core/tensor';
import { bindArgs, checkReduction, checkTensor, shapeText, type Args, type Reduction } from '../internal/args.js';

const OP = 'ctcLoss';

/**
 * Per-sample lengths: an int32 tensor [N] (0-dim or [1] unbatched; on any device, as PyTorch takes
 * CPU lengths for CUDA inputs), or numbers (PyTorch's tuple of ints).
 */
export type CTCLengths = Tensor | readonly number[] | number;

/** ctcLoss's parameters after the lengths, by name (PyTorch's keyword arguments). */
export interface CTCLossOptions {
  /** The blank class (default 0). */
  readonly blank?: number;
  /** 'mean' (default: each loss divided by its target length, then averaged), 'sum' or 'none'. */
  readonly reduction?: Reduction;
  /** Replace infinite losses (targets no alignment fits) and their gradients by 0 (default false). */
  readonly zeroInfinity?: boolean;
}

/** Lengths on the device, and on the host when they can be read without awaiting. */
interface Lengths {
  readonly tensor: Tensor;
  readonly host: readonly number[] | null;
}

function readableNow(t: Tensor): DataArray | null {
  return valuesNow(t);
}

function lengthsOf(value: CTCLengths, name: string, batch: number, logProbs: Tensor): Lengths {
  let lengths: Lengths;
  if (typeof value === 'number' || Array.isArray(value)) {
    const host = typeof value === 'number' ? [value] : (value as readonly number[]);
    if (host.some((v) => !Number.isInteger(v))) throw new TypeError(`${OP}(): ${name} must hold integers, got [${host.join(', ')}]`);
    lengths = { tensor: tensor([...host], { dtype: int32, device: logProbs.device }), host };
  } else {
    checkTensor(value, name, OP);
    if (value.dtype !== int32) throw new DTypeError(`${OP}(): expected ${name} of dtype int32, got ${value.dtype.name}; convert with ${name}.int()`, OP, value.dtype.name);
    if (value.ndim > 1) throw new ShapeError(`${OP}(): ${name} must be 1-D [batch], got ${shapeText(value.shape)}`, OP);
    const flat = value.reshape([-1]);
    const host = readableNow(flat);
    lengths = { tensor: flat.to(logProbs.device), host: host && Array.from(host) };
  }
  if (lengths.tensor.shape[0] !== batch) throw new ShapeError(`${OP}(): ${name} must be of size batch_size (${batch}), got ${lengths.tensor.shape[0]} lengths`, OP);
  const negative = lengths.host?.findIndex((v) => v < 0) ?? -1;
  if (negative >= 0) throw new ValueError(`${OP}(): ${name} must be non-negative, got ${lengths.host![negative]} for sample ${negative}`);
  return lengths;
}

/**
 * Targets as a padded [N, S] int32 matrix. 1-D targets are the concatenation of the N target
 * sequences; each row takes its slice (S is the longest target, or every label where the lengths
 * cannot be read synchronously: more work, the same result).
 */
function paddedTargets(targets: Tensor, targetLengths: Lengths, batch: number): Tensor {
  if (targets.ndim === 2) {
    if (targets.shape[0] !== batch) throw new ShapeError(`${OP}(): Expected tensor to have size ${batch} at dimension 0, but got size ${targets.shape[0]} for argument #2 'targets' (targets ${shapeText(targets.shape)}, batch size ${batch})`, OP);
    const longest = Math.max(0, ...(targetLengths.host ?? []));
    if (longest > targets.shape[1]!) {
      throw new ShapeError(`${OP}(): Expected tensor to have size at least ${longest} at dimension 1, but got size ${targets.shape[1]} for argument #2 'targets' (a target length exceeds the padded targets' width)`, OP);
    }
    return targets;
  }
  const total = targets.shape[0]!;
  const host = targetLengths.host;
  if (host) {
    const sum = host.reduce((a, b) => a + b, 0);
    if (sum !== total) throw new ShapeError(`${OP}(): Expected tensor to have size ${sum} at dimension 0, but got size ${total} for argument #2 'targets' (1-D targets are the ${batch} sequences concatenated, the sum of targetLengths)`, OP);
  }
  const width = host ? Math.max(0, ...host) : total;
  if (width === 0 || total === 0) return full([batch, width], 0, { dtype: int32, device: targets.device });
  const lengths = targetLengths.tensor;
  const starts = lengths.cumsum(0).sub(lengths).unsqueeze(1);
  const at = starts.add(arange(width, { dtype: int32, device: targets.device }).unsqueeze(0)).clamp(0, total - 1);
  return targets.indexSelect(0, at.reshape([-1])).reshape([batch, width]);
}

/** Labels must be classes (PyTorch reads whatever memory an out-of-range label points at); checked where they can be read now. */
function checkLabels(padded: Tensor, targetLengths: Lengths, classes: number): void {
  const values = targetLengths.host && padded.numel() > 0 ? readableNow(padded) : null;
  if (!values) return;
  const width = padded.shape[1]!;
  targetLengths.host!.forEach((length, n) => {
    for (let s = 0; s < length; s++) {
      const v = values[n * width + s]!;
      if (v < 0 || v >= classes) throw new ValueError(`${OP}(): target ${v} (sample ${n}, position ${s}) is not a class: labels must be in [0, ${classes - 1}]`);
    }
  });
}

/** [N, 2S + 1] from `column` [N, 1] and `odd` [N, S]: the column at the even positions, odd's columns between. */
function interleave(column: Tensor, odd: Tensor): Tensor {
  const [batch, width] = odd.shape as [number, number];
  return cat([stack([column.expand([batch, width]), odd], 2).reshape([batch, 2 * width]), column], 1);
}

/** `x` [N, U] moved `by` positions along dim 1 (right when positive), filled with `fill`. */
function shift(x: Tensor, by: number, fill: number | boolean): Tensor {
  const [batch, width] = x.shape as [number, number];
  const k = Math.min(Math.abs(by), width);
  const pad = full([batch, k], fill, { dtype: x.dtype, device: x.device });
  return by > 0 ? cat([pad, x.narrow(1, 0, width - k)], 1) : cat([x.narrow(1, k, width - k), pad], 1);
}

/** log(e^a + e^b + e^c), −∞ where all three are. */
function logAddExp3(a: Tensor, b: Tensor, c: Tensor): Tensor {
  return stack([a, b, c]).logsumexp(0);
}

/**
 * −log p(target | input) per sample. forward runs the α recursion; backward the β recursion and
 * PyTorch's gradient formula (see the file comment). Arguments after logProbs: the extended labels
 * l' [N, 2S + 1], the input and target lengths, and zeroInfinity.
 */
class CTCLossFunction extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, logProbs: Tensor, labels: Tensor, inputLengths: Tensor, targetLengths: Tensor, zeroInfinity: boolean): Tensor {
    const [T, N] = logProbs.shape as [number, number, number];
    const U = labels.shape[1]!;
    const picked = logProbs.gather(2, labels.unsqueeze(0).expand([T, N, U]));
    const position = arange(U, { dtype: int32, device: logProbs.device }).unsqueeze(0);
    // A path may skip the blank between two different labels: l'[s] ≠ l'[s − 2] (blanks equal
    // blanks; the fill also lets s = 0, 1 through, where the shifted α is −∞ anyway).
    const skips = labels.ne(shift(labels, 2, -1));
    // α[t, s]: log of the summed probability of the paths through frames 0..t that are at l'[s] at t.
    // At t = 0 only the leading blank and the first label can start a path.
    const alphas = [picked.select(0, 0).where(position.lt(2), -Infinity)];
    for (let t = 1; t < T; t++) {
      const prev = alphas[t - 1]!;
      alphas.push(picked.select(0, t).add(logAddExp3(prev, shift(prev, 1, -Infinity), shift(prev, 2, -Infinity).where(skips, -Infinity))));
    }
    // Paths end on the last label or the blank after it, at each sample's last frame.
    const twice = targetLengths.mul(2).unsqueeze(1);
    const ends = position.eq(twice).logicalOr(position.eq(twice.sub(1)));
    const last = inputLengths.sub(1).clamp(0).reshape([1, N, 1]).expand([1, N, U]);
    const logLikelihood = stack(alphas).gather(0, last).squeeze(0).where(ends, -Infinity).logsumexp(1);
    // Without frames only the empty target has an alignment (probability 1).
    const zero = logProbs.newZeros([N]);
    const nll = logLikelihood.where(inputLengths.gt(0), zero.where(targetLengths.eq(0), -Infinity)).neg();
    ctx.saveForBackward(logProbs, picked, labels, skips, inputLengths, ends, nll, ...alphas);
    ctx.zeroInfinity = zeroInfinity;
    return nll;
  }

  static backward(ctx: autograd.FunctionCtx, gradOut: Tensor): (Tensor | null)[] {
    const [logProbs, picked, labels, skips, inputLengths, ends, nll, ...alphas] = ctx.savedTensors as Tensor[];
    const [T, N, U] = picked!.shape as [number, number, number];
    // β[t, s]: log of the summed probability of the path's frames after t, from l'[s] at t; the
    // posterior of l'[s] at t is then α[t, s]·β[t, s]/p.
    const skipsAhead = shift(skips!, -2, false);
    const zero = logProbs!.newZeros([N, U]);
    const occupancy = new Array<Tensor>(T);
    let beta = zero;
    for (let t = T - 1; t >= 0; t--) {
      // A sample's β starts at its last frame (0 at its two end positions), is −∞ after it.
      const start = zero.where(ends!.logicalAnd(inputLengths!.eq(t + 1).unsqueeze(1)), -Infinity);
      if (t === T - 1) beta = start;
      else {
        const q = picked!.select(0, t + 1).add(beta);
        const step = logAddExp3(q, shift(q, -1, -Infinity), shift(q, -2, -Infinity).where(skipsAhead, -Infinity));
        beta = step.where(inputLengths!.gt(t + 1).unsqueeze(1), start);
      }
      occupancy[t] = alphas[t]!.add(beta).add(nll!.unsqueeze(1)).exp();
    }
    const gamma = logProbs!.newZeros(logProbs!.shape).scatterAdd(2, labels!.unsqueeze(0).expand([T, N, U]), stack(occupancy));
    const frames = arange(T, { dtype: int32, device: logProbs!.device }).reshape([T, 1, 1]).lt(inputLengths!.reshape([1, N, 1]));
    // An infinite loss has no gradient: NaN in every class, as PyTorch's, or 0 with zeroInfinity.
    const finite = nll!.isfinite().reshape([1, N, 1]);
    const grad = logProbs!.exp().sub(gamma).mul(gradOut.reshape([1, N, 1])).where(finite, ctx.zeroInfinity ? 0 : NaN).where(frames, 0);
    return [grad, null, null, null, null];
  }
}

/**
 * PyTorch's `F.ctc_loss`: the CTC loss of log-probabilities `logProbs` [T, N, C] (a log-softmax over
 * C classes; unbatched [T, C]) against targets, padded [N, S] or the N sequences concatenated
 * (1-D), of int32 class indices other than `blank`; `inputLengths` and `targetLengths` give each
 * sample's frames and labels (int32 tensors [N] or numbers). 'mean' divides each loss by its target
 * length (at least 1) and averages; `zeroInfinity` zeroes the infinite losses of targets that no
 * alignment fits, and their gradients. The gradient is PyTorch's (see the file comment). Targets and
 * length tensors may be on another device than logProbs (PyTorch takes CPU ones for CUDA input).
 */
export function ctcLoss(
  logProbs: Tensor, targets: Tensor, inputLengths: CTCLengths, targetLengths: CTCLengths,
  ...args: Args<[blank: number, reduction: Reduction, zeroInfinity: boolean], CTCLossOptions>
): Tensor {
  const options = bindArgs<CTCLossOptions>(OP, ['blank', 'reduction', 'zeroInfinity'], args);
  checkTensor(logProbs, 'logProbs', OP);
  checkTensor(targets, 'targets', OP);
  // A cpu autocast region casts half log-probabilities to float32 once, here (AC-9); elsewhere
  // they are an error, as PyTorch has no half kernel.
  return autocastOp(OP, [logProbs, targets, inputLengths, targetLengths] as const, (lp, t, il, tl) => ctcLossOf(lp, t, il, tl, options));
}

function ctcLossOf(logProbs: Tensor, targets: Tensor, inputLengths: CTCLengths, targetLengths: CTCLengths, options: CTCLossOptions): Tensor {
  const { blank = 0, zeroInfinity = false } = options;
  const reduction = checkReduction(options.reduction ?? 'mean', OP);
  if (logProbs.dtype !== float32 && logProbs.dtype !== float64) {
    throw new DTypeError(`${OP}(): logProbs must be float32 or float64 (PyTorch's ctc_loss has no ${logProbs.dtype.name} kernel), got ${logProbs.dtype.name}; convert with logProbs.float()`, OP, logProbs.dtype.name);
  }
  if (targets.dtype !== int32) throw new DTypeError(`${OP}(): expected targets of dtype int32 (class indices), got ${targets.dtype.name}; convert with targets.int()`, OP, targets.dtype.name);
  const batched = logProbs.ndim === 3;
  if (!batched && logProbs.ndim !== 2) throw new ShapeError(`${OP}(): expected logProbs of shape [T, N, C] (or [T, C] unbatched), got ${shapeText(logProbs.shape)}`, OP);
  if (targets.ndim !== 1 && !(batched && targets.ndim === 2)) {
    throw new ShapeError(`${OP}(): expected targets of shape ${batched ? '[N, S] (padded) or [sum(targetLengths)] (concatenated)' : '[S]'}, got ${shapeText(targets.shape)}`, OP);
  }
  const lp = batched ? logProbs : logProbs.unsqueeze(1);
  const [T, N, C] = lp.shape as [number, number, number];
  if (T === 0) throw new ShapeError(`${OP}(): logProbs has no frames (shape ${shapeText(logProbs.shape)}); CTC needs at least one`, OP);
  if (!Number.isInteger(blank) || blank < 0 || blank >= C) throw new ValueError(`${OP}(): blank must be in label range [0, ${C - 1}], got ${blank}`);
  const frames = lengthsOf(inputLengths, 'inputLengths', N, lp);
  const labels = lengthsOf(targetLengths, 'targetLengths', N, lp);
  const tooLong = frames.host?.findIndex((v) => v > T) ?? -1;
  if (tooLong >= 0) throw new ValueError(`${OP}(): Expected input_lengths to have value at most ${T}, but got value ${frames.host![tooLong]} (sample ${tooLong})`);
  const padded = paddedTargets((batched ? targets : targets.unsqueeze(0)).to(lp.device), labels, N);
  checkLabels(padded, labels, C);
  // The extended labels: blanks around and between the labels; labels past a target's length
  // are padding and read as blank.
  const inTarget = arange(padded.shape[1]!, { dtype: int32, device: lp.device }).unsqueeze(0).lt(labels.tensor.unsqueeze(1));
  const extended = interleave(full([N, 1], blank, { dtype: int32, device: lp.device }), padded.where(inTarget, blank));
  const nll = CTCLossFunction.apply(lp, extended, frames.tensor, labels.tensor, zeroInfinity);
  const losses = zeroInfinity ? nll.where(nll.isinf().logicalNot(), 0) : nll;
  switch (reduction) {
    case 'none': return batched ? losses : losses.squeeze(0);
    case 'sum': return losses.sum();
    case 'mean': return losses.div(labels.tensor.clamp(1).to(losses.dtype)).mean();
    default: return reduction satisfies never;
  }
}
