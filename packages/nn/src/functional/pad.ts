// F.pad with PyTorch's argument order: constant (core's pad), reflect, replicate and circular.
// The non-constant modes are index selections per padded dim, so they are differentiable.
import { int32, pad as constantPad, tensor, ValueError, type Tensor } from '@core/tensor';
import { checkTensor } from '../internal/args.js';

/** How `pad` fills: a constant value, a mirror image without the edge, copies of the edge, or wrap-around. */
export type PadMode = 'constant' | 'reflect' | 'replicate' | 'circular';

/** Source position for output position j (j < 0: in the left padding) of a dim of size n. */
const SOURCE: Record<Exclude<PadMode, 'constant'>, (j: number, n: number) => number> = {
  reflect: (j, n) => (j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j),
  replicate: (j, n) => Math.min(Math.max(j, 0), n - 1),
  circular: (j, n) => ((j % n) + n) % n,
};

/** `padding` lists (before, after) pairs from the last dim backwards, e.g. [left, right, top, bottom]. */
export function pad(input: Tensor, padding: readonly number[], mode: PadMode = 'constant', value = 0): Tensor {
  checkTensor(input, 'input', 'pad');
  if (mode === 'constant') return constantPad(input, padding, value);
  const source = SOURCE[mode];
  if (!source) throw new ValueError(`pad(): mode must be 'constant', 'reflect', 'replicate' or 'circular', got ${JSON.stringify(mode)}`);
  if (!Array.isArray(padding) || padding.length % 2 !== 0 || padding.length / 2 > input.ndim) {
    throw new ValueError(`pad(): padding length must be even and at most 2 × ${input.ndim} (the input's dims), got ${padding?.length}`);
  }
  let out = input;
  for (let i = 0; i < padding.length / 2; i++) {
    const d = input.ndim - 1 - i;
    const [before, after] = [padding[2 * i]!, padding[2 * i + 1]!];
    const n = input.shape[d]!;
    if (![before, after].every((p) => Number.isInteger(p) && p >= 0)) throw new ValueError(`pad(): ${mode} padding must be non-negative integers, got ${before}, ${after}`);
    const limit = mode === 'reflect' ? n - 1 : mode === 'circular' ? n : Infinity;
    if (before > limit || after > limit || n === 0) {
      throw new ValueError(`pad(): ${mode} padding (${before}, ${after}) must be at most ${limit} for dim ${d} of size ${n}`);
    }
    if (before === 0 && after === 0) continue;
    const index = Int32Array.from({ length: n + before + after }, (_, j) => source(j - before, n));
    out = out.indexSelect(d, tensor(index, { dtype: int32, device: input.device }));
  }
  return out;
}
