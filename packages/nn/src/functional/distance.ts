// F.cosineSimilarity: each input divided by its own norm first (clamped at eps), then their dot
// product, as PyTorch computes it, so the result stays within [−1, 1]. Half inputs are computed
// in float32 and rounded once.
import { autocastOp, checkSameDevice, DTypeError, resultType, type Tensor } from '@core/tensor';
import { bindArgs, broadcastShape, checkTensor, dimIndex, opmathDType, sameShape, type Args } from '../internal/args.js';

/** cosineSimilarity's parameters by name. */
export interface CosineSimilarityOptions {
  /** The dim the vectors lie along (default 1). */
  readonly dim?: number;
  /** The smallest norm divided by (default 1e-8). */
  readonly eps?: number;
}

/**
 * x / max(‖x‖, eps). PyTorch clamps the norm in place under no_grad, so its backward reads the
 * clamped value: the norm's gradient is x / max(‖x‖, eps). `c + (s − s)/(2c)`, s = Σx², has the
 * value c = max(√s, eps) exactly and that gradient (and no 0·∞ at a zero vector).
 */
function unitVectors(x: Tensor, dim: number, eps: number): Tensor {
  const squares = x.mul(x).sum(dim, true);
  const clamped = squares.detach().sqrt().clamp(eps);
  return x.div(clamped.add(squares.sub(squares.detach()).div(clamped.mul(2))));
}

/**
 * The cosine of the angle between x1 and x2 along `dim` (they broadcast): Σ (x1/‖x1‖)·(x2/‖x2‖),
 * each norm clamped at `eps`. Autocast: by its name's class in the region's policy table (PyTorch: float32 on GPUs, AC-9).
 */
export function cosineSimilarity(x1: Tensor, x2: Tensor, ...args: Args<[dim: number, eps: number], CosineSimilarityOptions>): Tensor {
  const { dim = 1, eps = 1e-8 } = bindArgs<CosineSimilarityOptions>('cosineSimilarity', ['dim', 'eps'], args);
  return autocastOp('cosineSimilarity', [x1, x2] as const, (a, b) => {
    checkTensor(a, 'x1', 'cosineSimilarity');
    checkTensor(b, 'x2', 'cosineSimilarity');
    checkSameDevice('cosineSimilarity', [{ name: 'x1', tensor: a }, { name: 'x2', tensor: b }]);
    const dtype = resultType(a, b);
    if (!dtype.isFloatingPoint) {
      throw new DTypeError(`cosineSimilarity(): expected common dtype to be floating point, yet common dtype is ${dtype.name}`, 'cosineSimilarity', dtype.name);
    }
    const shape = broadcastShape(a.shape, b.shape, 'cosineSimilarity');
    const d = dimIndex(dim, shape.length, 'cosineSimilarity');
    const compute = opmathDType(dtype);
    const [ea, eb] = [a, b].map((t) => (sameShape(t.shape, shape) ? t : t.expand(shape)).to(compute)) as [Tensor, Tensor];
    return unitVectors(ea, d, eps).mul(unitVectors(eb, d, eps)).sum(d).to(dtype);
  });
}
