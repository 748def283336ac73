// Max-pooling's fused kernels (the contract's maxPool2d and maxPool2dBackward): each window's first
// maximum and its flat position in the plane, NaN counting as the maximum as argReduce counts it,
// and the gradient added back at those positions. Positions outside the input are never read, so
// no padded copy is made. Half types compare and sum as their f32 values.
import type { MaxPool2dGeometry } from '@core/tensor';
import { checkDType, checkShape, commitValues, readValues, type Ref, scatterFrom, valueBuffer } from './io.js';

function checkFloating(what: string, ref: Ref): void {
  if (ref.dtype !== 'float32' && ref.dtype !== 'float64' && ref.dtype !== 'float16' && ref.dtype !== 'bfloat16') {
    throw new TypeError(`cpu ${what}: needs a floating dtype, got ${ref.dtype}`);
  }
}

/** [N, C, H, W] of a rank-4 ref, or a TypeError naming it. */
function planes(what: string, name: string, ref: Ref): [number, number, number, number] {
  if (ref.shape.length !== 4) throw new TypeError(`cpu ${what}: ${name} must be [N, C, H, W], got [${ref.shape.join(', ')}]`);
  return ref.shape as [number, number, number, number];
}

/**
 * Per window along one dim, its first position inside [0, size): window o reads
 * o·stride − padding + a·dilation for a < kernel. Throws for a window with none (core never passes one).
 */
function firstInside(size: number, g: MaxPool2dGeometry, d: 0 | 1): Int32Array {
  return Int32Array.from({ length: g.out[d] }, (_, o) => {
    const start = o * g.stride[d] - g.padding[d];
    const a = start >= 0 ? 0 : Math.ceil(-start / g.dilation[d]);
    if (a >= g.kernel[d] || start + a * g.dilation[d] >= size) {
      throw new RangeError(`cpu maxPool2d: window ${o} along dim ${d + 2} has no position inside the input of size ${size}`);
    }
    return start + a * g.dilation[d];
  });
}

/**
 * Each window's first maximum (NaN wins, the first one) into `out` and its position h·W + w into
 * `indices`. One output row at a time: the window positions (a, b) outside, the row's outputs
 * inside, each output holding the element at its index so far (−∞ at its first position inside
 * until something beats it).
 */
export function maxPool2d(x: Ref, out: Ref, indices: Ref, g: MaxPool2dGeometry): void {
  checkFloating('maxPool2d', x);
  const [N, C, H, W] = planes('maxPool2d', 'x', x);
  const [oh, ow] = g.out;
  checkDType('maxPool2d', 'out', out, x.dtype);
  checkShape('maxPool2d', 'out', out, [N, C, oh, ow]);
  checkDType('maxPool2d', 'indices', indices, 'int32');
  checkShape('maxPool2d', 'indices', indices, [N, C, oh, ow]);
  const rows = firstInside(H, g, 0);
  const cols = firstInside(W, g, 1);
  const [kh, kw] = g.kernel;
  const values = readValues(x);
  const best = valueBuffer(out);
  const where = valueBuffer(indices);
  for (let plane = 0; plane < N * C; plane++) {
    const base = plane * H * W;
    for (let i = 0; i < oh; i++) {
      const row = (plane * oh + i) * ow;
      for (let j = 0; j < ow; j++) {
        best[row + j] = -Infinity;
        where[row + j] = rows[i]! * W + cols[j]!;
      }
      for (let a = 0; a < kh; a++) {
        const r = i * g.stride[0] - g.padding[0] + a * g.dilation[0];
        if (r < 0 || r >= H) continue;
        for (let b = 0; b < kw; b++) {
          const shift = b * g.dilation[1] - g.padding[1];
          for (let j = 0; j < ow; j++) {
            const c = j * g.stride[1] + shift;
            if (c < 0 || c >= W) continue;
            const v = values[base + r * W + c]!;
            const m = best[row + j]!;
            // argReduce's argmax: a larger value wins, and the first NaN, which nothing later replaces.
            if (v > m || (v !== v && m === m)) {
              best[row + j] = v;
              where[row + j] = r * W + c;
            }
          }
        }
      }
    }
  }
  commitValues(out, best);
  commitValues(indices, where);
}

/** gradInput = zeros plus each element of `grad` at its index, in row-major order (half types summed in f32, rounded once). */
export function maxPool2dBackward(grad: Ref, indices: Ref, gradInput: Ref): void {
  checkFloating('maxPool2dBackward', grad);
  const [N, C, oh, ow] = planes('maxPool2dBackward', 'grad', grad);
  const [, , H, W] = planes('maxPool2dBackward', 'gradInput', gradInput);
  checkDType('maxPool2dBackward', 'indices', indices, 'int32');
  checkShape('maxPool2dBackward', 'indices', indices, [N, C, oh, ow]);
  checkDType('maxPool2dBackward', 'gradInput', gradInput, grad.dtype);
  checkShape('maxPool2dBackward', 'gradInput', gradInput, [N, C, H, W]);
  const gs = readValues(grad);
  const is = readValues(indices);
  // Each += rounds to the accumulator's precision: float32 (half types too), float64 for float64.
  const sums = grad.dtype === 'float64' ? new Float64Array(N * C * H * W) : new Float32Array(N * C * H * W);
  const plane = H * W;
  const perPlane = oh * ow;
  for (let k = 0; k < N * C * perPlane; k++) {
    const at = is[k]!;
    if (!(at >= 0 && at < plane)) throw new RangeError(`cpu maxPool2dBackward: index ${at} is outside the input plane of ${H}x${W}`);
    sums[Math.floor(k / perPlane) * plane + at] += gs[k]!;
  }
  scatterFrom(sums, gradInput);
}
