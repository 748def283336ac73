// F.layerNorm and F.batchNorm, written in core ops (mean, centred squares, rsqrt). Statistics of
// half inputs are computed in float32 and the result rounded once to the input's dtype.
import { noGrad, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { checkFloating, checkTensor, opmathDType, sameShape, shapeText } from '../internal/args.js';
import { checkSameDevice } from '@core/tensor';
import { autocastOp } from '@core/tensor';

/** Layer normalisation over the last dims. Autocast: float32 on GPUs (AC-9); unlisted on the cpu. */
export function layerNorm(input: Tensor, normalizedShape: number | readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  return autocastOp('layerNorm', [input, weight, bias] as const, (x, w, b) => layerNormImpl(x, normalizedShape, w, b, eps));
}

/** (x − E[x]) / √(Var[x] + eps) · weight + bias over the last `normalizedShape.length` dims (biased variance). */
function layerNormImpl(input: Tensor, normalizedShape: number | readonly number[], weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  checkTensor(input, 'input', 'layerNorm');
  checkFloating(input, 'input', 'layerNorm');
  const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
  const k = shape.length;
  if (k === 0 || k > input.ndim || !sameShape(input.shape.slice(input.ndim - k), shape)) {
    throw new ShapeError(
      `layerNorm(): Given normalized_shape=${shapeText(shape)}, expected input with shape [*, ${shape.join(', ')}], but got input of size ${shapeText(input.shape)}`,
      'layerNorm',
    );
  }
  for (const [name, t] of [['weight', weight], ['bias', bias]] as const) {
    if (t != null && !sameShape(t.shape, shape)) {
      throw new ShapeError(`layerNorm(): expected ${name} of shape ${shapeText(shape)} (normalized_shape), got ${shapeText(t.shape)}`, 'layerNorm');
    }
  }
  checkSameDevice('layerNorm', [{ name: 'input', tensor: input }, { name: 'weight', tensor: weight }, { name: 'bias', tensor: bias }]);
  const dims = shape.map((_, i) => input.ndim - k + i);
  const x = input.to(opmathDType(input.dtype));
  const centered = x.sub(x.mean(dims, true));
  let y = centered.mul(centered.mul(centered).mean(dims, true).add(eps).rsqrt());
  if (weight != null) y = y.mul(weight);
  if (bias != null) y = y.add(bias);
  return y.to(input.dtype);
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
  checkTensor(input, 'input', 'batchNorm');
  checkFloating(input, 'input', 'batchNorm');
  if (input.ndim < 2) throw new ShapeError(`batchNorm(): expected input of shape [N, C, *] (at least 2-D), got ${shapeText(input.shape)}`, 'batchNorm');
  const C = input.shape[1]!;
  for (const [name, t] of [['runningMean', runningMean], ['runningVar', runningVar], ['weight', weight], ['bias', bias]] as const) {
    if (t != null && (t.ndim !== 1 || t.shape[0] !== C)) {
      throw new ShapeError(`batchNorm(): ${name} should contain ${C} elements (one per channel of input ${shapeText(input.shape)}), got shape ${shapeText(t.shape)}`, 'batchNorm');
    }
  }
  checkSameDevice('batchNorm', [
    { name: 'input', tensor: input }, { name: 'runningMean', tensor: runningMean }, { name: 'runningVar', tensor: runningVar },
    { name: 'weight', tensor: weight }, { name: 'bias', tensor: bias },
  ]);
  const dims = input.shape.map((_, i) => i).filter((i) => i !== 1);
  const statShape = input.shape.map((s, i) => (i === 1 ? s : 1));
  const x = input.to(opmathDType(input.dtype));
  let y: Tensor;
  if (training) {
    const n = input.numel() / C;
    if (n <= 1) throw new ValueError(`Expected more than 1 value per channel when training, got input size ${shapeText(input.shape)}`);
    const mean = x.mean(dims, true);
    const centered = x.sub(mean);
    const variance = centered.mul(centered).mean(dims, true);
    y = centered.mul(variance.add(eps).rsqrt());
    noGrad(() => {
      if (runningMean != null) runningMean.copy_(runningMean.mul(1 - momentum).add(mean.reshape([C]).mul(momentum)));
      if (runningVar != null) runningVar.copy_(runningVar.mul(1 - momentum).add(variance.reshape([C]).mul(momentum * n / (n - 1))));
    });
  } else {
    if (runningMean == null || runningVar == null) {
      throw new ValueError('batchNorm(): runningMean and runningVar must be given in evaluation mode (training=false)');
    }
    y = x.sub(runningMean.reshape(statShape)).mul(runningVar.reshape(statShape).add(eps).rsqrt());
  }
  if (weight != null) y = y.mul(weight.reshape(statShape));
  if (bias != null) y = y.add(bias.reshape(statShape));
  return y.to(input.dtype);
}
