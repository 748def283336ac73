// F.layerNorm, F.rmsNorm, F.batchNorm, F.instanceNorm, F.groupNorm and F.normalize, written in
// core ops (mean, centred squares, rsqrt). Statistics of half inputs are computed in float32 and
// the result rounded once to the input's dtype.
import { autocastOp, checkSameDevice, float64, noGrad, resultType, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkTensor, opmathDType, sameShape, shapeText, type Args } from '../internal/args.js';

type Named = ReadonlyArray<readonly [string, Tensor | null | undefined]>;

/** (x − mean)/√(var + eps) over `dims`, with the mean and the biased variance (kept dims). */
function standardize(x: Tensor, dims: readonly number[], eps: number): { y: Tensor; mean: Tensor; variance: Tensor } {
  const mean = x.mean(dims, true);
  const centered = x.sub(mean);
  const variance = centered.mul(centered).mean(dims, true);
  return { y: centered.mul(variance.add(eps).rsqrt()), mean, variance };
}

/** y·weight + bias, each reshaped to `shape` (per-channel parameters) when given. */
function scaleShift(y: Tensor, weight: Tensor | null | undefined, bias: Tensor | null | undefined, shape?: readonly number[]): Tensor {
  let out = y;
  if (weight != null) out = out.mul(shape ? weight.reshape(shape) : weight);
  if (bias != null) out = out.add(shape ? bias.reshape(shape) : bias);
  return out;
}

/** `running ← (1 − momentum)·running + momentum·factor·batch`, in place and outside autograd. */
function updateRunning(running: Tensor | null | undefined, batch: Tensor, momentum: number, factor = 1): void {
  if (running != null) noGrad(() => running.copy_(running.mul(1 - momentum).add(batch.mul(momentum * factor))));
}

/** (x − mean)/√(var + eps) with running statistics, computed in x's dtype (float32 for half statistics too). */
function withRunningStats(x: Tensor, runningMean: Tensor, runningVar: Tensor, statShape: readonly number[], eps: number): Tensor {
  return x.sub(runningMean.reshape(statShape).to(x.dtype)).mul(runningVar.reshape(statShape).to(x.dtype).add(eps).rsqrt());
}

/** Per-channel tensors must hold one value per channel of `input` (dim 1). */
function checkPerChannel(op: string, input: Tensor, tensors: Named): void {
  const C = input.shape[1]!;
  for (const [name, t] of tensors) {
    if (t != null && (t.ndim !== 1 || t.shape[0] !== C)) {
      throw new ShapeError(`${op}(): ${name} should contain ${C} elements (one per channel of input ${shapeText(input.shape)}), got shape ${shapeText(t.shape)}`, op);
    }
  }
  checkSameDevice(op, [{ name: 'input', tensor: input }, ...tensors.map(([name, tensor]) => ({ name, tensor }))]);
}

/** The trailing dims `normalizedShape` names, checked against the input and the elementwise parameters. */
function trailingDims(op: string, input: Tensor, normalizedShape: number | readonly number[], params: Named): number[] {
  checkTensor(input, 'input', op);
  checkFloating(input, 'input', op);
  const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
  const k = shape.length;
  if (k === 0 || k > input.ndim || !sameShape(input.shape.slice(input.ndim - k), shape)) {
    throw new ShapeError(
      `${op}(): Given normalized_shape=${shapeText(shape)}, expected input with shape [*, ${shape.join(', ')}], but got input of size ${shapeText(input.shape)}`,
      op,
    );
  }
  for (const [name, t] of params) {
    if (t != null && !sameShape(t.shape, shape)) {
      throw new ShapeError(`${op}(): expected ${name} of shape ${shapeText(shape)} (normalized_shape), got ${shapeText(t.shape)}`, op);
    }
  }
  checkSameDevice(op, [{ name: 'input', tensor: input }, ...params.map(([name, tensor]) => ({ name, tensor }))]);
  return shape.map((_, i) => input.ndim - k + i);
}

/** What batch and instance norm take, defaults applied. */
interface ChannelNormArgs {
  readonly runningMean: Tensor | null | undefined;
  readonly runningVar: Tensor | null | undefined;
  readonly weight: Tensor | null | undefined;
  readonly bias: Tensor | null | undefined;
  readonly useInputStats: boolean;
  readonly momentum: number;
  readonly eps: number;
}

/**
 * Batch norm (statistics over every dim but 1) and instance norm (over the spatial dims, each
 * sample's own): normalise with the input's statistics, moving the running ones (when given)
 * towards them with the unbiased variance, or with the running ones; then the per-channel affine.
 */
function channelNorm(op: 'batchNorm' | 'instanceNorm', input: Tensor, a: ChannelNormArgs): Tensor {
  checkTensor(input, 'input', op);
  checkFloating(input, 'input', op);
  if (input.ndim < 2) throw new ShapeError(`${op}(): expected input of shape [N, C, *] (at least 2-D), got ${shapeText(input.shape)}`, op);
  const { runningMean, runningVar, weight, bias } = a;
  checkPerChannel(op, input, [['runningMean', runningMean], ['runningVar', runningVar], ['weight', weight], ['bias', bias]]);
  const [N, C] = input.shape as [number, number];
  const batch = op === 'batchNorm';
  const dims = input.shape.map((_, i) => i).filter((i) => (batch ? i !== 1 : i >= 2));
  const count = dims.reduce((n, d) => n * input.shape[d]!, 1);
  const statShape = input.shape.map((s, i) => (i === 1 ? s : 1));
  const x = input.to(opmathDType(input.dtype));
  let y: Tensor;
  if (a.useInputStats) {
    if (batch ? count <= 1 : count === 1) {
      throw new ValueError(`Expected more than 1 ${batch ? 'value per channel' : 'spatial element'} when training, got input size ${shapeText(input.shape)}`);
    }
    const stats = standardize(x, dims, a.eps);
    y = stats.y;
    // Instance statistics are per [N, C]: the running ones move towards their mean over the batch.
    const perChannel = (t: Tensor) => (batch ? t.reshape([C]) : t.reshape([N, C]).mean(0));
    updateRunning(runningMean, perChannel(stats.mean), a.momentum);
    updateRunning(runningVar, perChannel(stats.variance), a.momentum, count / (count - 1));
  } else {
    if (runningMean == null || runningVar == null) {
      throw new ValueError(`${op}(): runningMean and runningVar must be given ${batch ? 'in evaluation mode (training=false)' : 'when useInputStats is false'}`);
    }
    y = withRunningStats(x, runningMean, runningVar, statShape, a.eps);
  }
  return scaleShift(y, weight, bias, statShape).to(input.dtype);
}

/** Layer normalisation over the last dims. Autocast: float32 on GPUs (AC-9); unlisted on the cpu. */
export function layerNorm(input: Tensor, normalizedShape: number | readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  return autocastOp('layerNorm', [input, weight, bias] as const, (x, w, b) => layerNormImpl(x, normalizedShape, w, b, eps));
}

/** (x − E[x]) / √(Var[x] + eps) · weight + bias over the last `normalizedShape.length` dims (biased variance). */
function layerNormImpl(input: Tensor, normalizedShape: number | readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  const dims = trailingDims('layerNorm', input, normalizedShape, [['weight', weight], ['bias', bias]]);
  const { y } = standardize(input.to(opmathDType(input.dtype)), dims, eps);
  return scaleShift(y, weight, bias).to(input.dtype);
}

/** The machine epsilon of the dtype RMS norm computes in (float32's for half inputs), its default eps as in PyTorch's kernel. */
function machineEpsilon(computeDType: Tensor['dtype']): number {
  return computeDType === float64 ? 2 ** -52 : 2 ** -23;
}

/**
 * x / √(mean(x²) + eps) · weight over the last `normalizedShape.length` dims (root mean square
 * layer normalisation). `eps` defaults to the machine epsilon of the computation dtype. The result
 * has the dtype of input and weight promoted.
 */
export function rmsNorm(input: Tensor, normalizedShape: number | readonly number[], ...args: Args<[weight: Tensor | null, eps: number | null], RMSNormOptions>): Tensor {
  const { weight, eps } = bindArgs<RMSNormOptions>('rmsNorm', ['weight', 'eps'], args);
  const dims = trailingDims('rmsNorm', input, normalizedShape, [['weight', weight]]);
  const x = input.to(opmathDType(input.dtype));
  const y = x.mul(x.mul(x).mean(dims, true).add(eps ?? machineEpsilon(x.dtype)).rsqrt());
  return scaleShift(y, weight, null).to(weight != null ? resultType(input, weight) : input.dtype);
}

/** rmsNorm's parameters by name. */
export interface RMSNormOptions {
  /** The learned scale, shaped like normalizedShape (default: none). */
  readonly weight?: Tensor | null;
  /** Added to the mean square (default: the computation dtype's machine epsilon). */
  readonly eps?: number | null;
}

/**
 * Batch normalisation over dim 1 of [N, C, …]. Training: normalise with the batch's mean and
 * biased variance, and update the running stats in place with the unbiased variance
 * (`running = (1 − momentum)·running + momentum·batch`). Eval: use the running stats.
 */
export function batchNorm(
  input: Tensor,
  runningMean: Tensor | null | undefined,
  runningVar: Tensor | null | undefined,
  weight?: Tensor | null,
  bias?: Tensor | null,
  training = false,
  momentum = 0.1,
  eps = 1e-5,
): Tensor {
  return channelNorm('batchNorm', input, { runningMean, runningVar, weight, bias, useInputStats: training, momentum, eps });
}

/** instanceNorm's parameters by name. */
export interface InstanceNormOptions {
  /** Running mean per channel [C], updated in place when using input statistics. */
  readonly runningMean?: Tensor | null;
  /** Running (unbiased) variance per channel [C], updated likewise. */
  readonly runningVar?: Tensor | null;
  /** Per-channel scale [C]. */
  readonly weight?: Tensor | null;
  /** Per-channel shift [C]. */
  readonly bias?: Tensor | null;
  /** Normalise with each sample's own statistics (default true); false uses the running ones. */
  readonly useInputStats?: boolean;
  /** Weight of the new statistics in the running averages (default 0.1). */
  readonly momentum?: number;
  /** Added to the variance (default 1e-5). */
  readonly eps?: number;
}

/**
 * Instance normalisation of [N, C, *]: each sample's each channel to zero mean and unit (biased)
 * variance over its spatial dims, then the per-channel affine. With input statistics, running
 * stats (when given) move towards the batch's mean over N of the per-instance mean and unbiased
 * variance; without, the running stats normalise.
 */
export function instanceNorm(
  input: Tensor,
  ...args: Args<[runningMean: Tensor | null, runningVar: Tensor | null, weight: Tensor | null, bias: Tensor | null, useInputStats: boolean, momentum: number, eps: number], InstanceNormOptions>
): Tensor {
  const { runningMean, runningVar, weight, bias, useInputStats = true, momentum = 0.1, eps = 1e-5 } = bindArgs<InstanceNormOptions>(
    'instanceNorm', ['runningMean', 'runningVar', 'weight', 'bias', 'useInputStats', 'momentum', 'eps'], args,
  );
  return channelNorm('instanceNorm', input, { runningMean, runningVar, weight, bias, useInputStats, momentum, eps });
}

/** groupNorm's parameters by name. */
export interface GroupNormOptions {
  /** Per-channel scale [C]. */
  readonly weight?: Tensor | null;
  /** Per-channel shift [C]. */
  readonly bias?: Tensor | null;
  /** Added to the variance (default 1e-5). */
  readonly eps?: number;
}

/**
 * Group normalisation of [N, C, *]: the C channels split into `numGroups` groups, each sample's
 * group normalised over its channels and spatial positions (biased variance), then the
 * per-channel affine. Autocast: by its name's class in the region's policy table (PyTorch: float32 on GPUs, AC-9).
 */
export function groupNorm(input: Tensor, numGroups: number, ...args: Args<[weight: Tensor | null, bias: Tensor | null, eps: number], GroupNormOptions>): Tensor {
  const { weight, bias, eps = 1e-5 } = bindArgs<GroupNormOptions>('groupNorm', ['weight', 'bias', 'eps'], args);
  return autocastOp('groupNorm', [input, weight, bias] as const, (x, w, b) => {
    checkTensor(x, 'input', 'groupNorm');
    checkFloating(x, 'input', 'groupNorm');
    if (x.ndim < 2) throw new ShapeError(`groupNorm(): Expected at least 2 dimensions for input tensor but received ${x.ndim}`, 'groupNorm');
    const [N, C] = x.shape as [number, number];
    if (!Number.isInteger(numGroups) || numGroups < 1) throw new ValueError(`groupNorm(): numGroups must be a positive integer, got ${numGroups}`);
    if (C % numGroups !== 0) {
      throw new ShapeError(`groupNorm(): Expected number of channels in input to be divisible by num_groups, but got input of shape ${shapeText(x.shape)} and num_groups=${numGroups}`, 'groupNorm');
    }
    checkPerChannel('groupNorm', x, [['weight', w], ['bias', b]]);
    const spatial = x.shape.slice(2).reduce((a, s) => a * s, 1);
    const perGroup = (C / numGroups) * spatial;
    // PyTorch's _verify_batch_size of [N·C/G, G, *spatial]: the first size times the spatial ones.
    if ((N * C / numGroups) * spatial === 1) {
      throw new ValueError(`Expected more than 1 value per channel when training, got input size ${shapeText([N * C / numGroups, numGroups, ...x.shape.slice(2)])}`);
    }
    const grouped = x.to(opmathDType(x.dtype)).reshape([N, numGroups, perGroup]);
    const y = standardize(grouped, [2], eps).y.reshape(x.shape);
    return scaleShift(y, w, b, x.shape.map((s, i) => (i === 1 ? s : 1))).to(x.dtype);
  });
}

/** normalize's parameters by name. */
export interface NormalizeOptions {
  /** The norm's exponent (default 2; Infinity for the max norm). */
  readonly p?: number;
  /** The dim the vectors lie along (default 1). */
  readonly dim?: number;
  /** The smallest norm divided by (default 1e-12). */
  readonly eps?: number;
}

/** x / max(‖x‖_p, eps) along `dim`: vectors scaled to unit p-norm. Autocast: by its name's class in the region's policy table (PyTorch: float32 on GPUs, AC-9). */
export function normalize(input: Tensor, ...args: Args<[p: number, dim: number, eps: number], NormalizeOptions>): Tensor {
  const { p = 2, dim = 1, eps = 1e-12 } = bindArgs<NormalizeOptions>('normalize', ['p', 'dim', 'eps'], args);
  return autocastOp('normalize', [input] as const, (x) => {
    checkTensor(x, 'input', 'normalize');
    checkFloating(x, 'input', 'normalize');
    return x.div(x.norm(p, dim, true).clamp(eps));
  });
}
