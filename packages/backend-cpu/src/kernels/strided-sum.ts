// The contract's stridedSum (asStrided's gradient) in TypeScript: the reference the native kernel
// is tested against, and what runs for views the addon does not take.
import type { StridedView, TensorRef } from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { RowWalker, sizeOf } from './strided.js';

/**
 * out = 0, then each element of float32 `src` added at `view.offset + Σ i_k·view.strides[k]` of
 * out, in src's row-major order (one float32 rounding per add: the double sum of two floats rounds
 * to the float sum).
 */
export function stridedSum(src: TensorRef<CpuStorage>, view: StridedView, out: TensorRef<CpuStorage>): void {
  const s = src.storage.data as Float32Array;
  const o = out.storage.data as Float32Array;
  o.fill(0, out.offset, out.offset + sizeOf(out.shape));
  // The walker merges dims only where row-major order is kept, so each element's terms keep their order.
  const w = new RowWalker(src.shape, [src.strides, view.strides], [src.offset, out.offset + view.offset]);
  for (let r = 0; r < w.rows; r++, w.next()) {
    let si = w.pos[0];
    let oi = w.pos[1];
    for (let j = 0; j < w.rowLength; j++, si += w.step[0], oi += w.step[1]) o[oi] += s[si];
  }
}
