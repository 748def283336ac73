// Oracle gradients by fourth-order central differences of the oracle's own float64 forward pass:
// for L(x) = Σ w·f(x), ∂L/∂xᵢ ≈ (−L(x+2h) + 8L(x+h) − 8L(x−h) + L(x−2h)) / 12h. The truncation
// error is O(h⁴) and the rounding error O(ε·|L|/h), so h = 1e-3·max(1, |xᵢ|) gives ~1e-11 relative
// accuracy for the smooth functions (away from kinks) the autograd samples use.
import { nd, type NdArray } from './ndarray.js';

export function weightedSum(y: NdArray, w: NdArray): number {
  let s = 0;
  for (let i = 0; i < y.data.length; i++) s += y.data[i]! * w.data[i]!;
  return s;
}

/**
 * Gradient of Σ w·f(inputs) with respect to each input listed in `wrt` (others get null).
 * `f` must be the float64 oracle forward (no rounding into a smaller dtype).
 */
export function numericGradients(
  f: (inputs: NdArray[]) => NdArray,
  inputs: readonly NdArray[],
  w: NdArray,
  wrt: readonly boolean[],
): (NdArray | null)[] {
  return inputs.map((x, k) => {
    if (!wrt[k]) return null;
    return nd(x.shape, (i) => {
      const h = 1e-3 * Math.max(1, Math.abs(x.data[i]!));
      const at = (delta: number) => {
        const moved = inputs.map((t, j) => (j === k ? nd(t.shape, (e) => t.data[e]! + (e === i ? delta : 0)) : t));
        return weightedSum(f(moved), w);
      };
      return (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
    });
  });
}
