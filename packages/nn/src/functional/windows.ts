// Sliding windows (im2col) for convolution, pooling and F.unfold: an overlapping, differentiable
// `asStrided` view of a padded NCHW tensor. No JS loop touches pixels; the copy into a matrix is
// one strided-copy kernel, and asStrided's backward scatters gradients back. Its adjoint, col2im
// (F.fold and the transposed convolutions), sums windows back into an image with pads and adds.
import { autograd, checkCompute, pad, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { pair, shapeText, type Pair } from '../internal/args.js';
import { isHalf } from './linear.js';

export interface WindowGeometry {
  readonly kernel: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly dilation: readonly [number, number];
  /** Output positions along height and width. */
  readonly out: readonly [number, number];
}

/**
 * The windows of `xp` ([N, C, H, W], padded already) as a 6-D view: `kernel-first` gives
 * [N, C, kh, kw, outH, outW] (im2col for conv), `kernel-last` [N, C, outH, outW, kh, kw] (pooling).
 */
export function slidingWindows(xp: Tensor, g: WindowGeometry, layout: 'kernel-first' | 'kernel-last'): Tensor {
  const [kh, kw] = g.kernel;
  const [oh, ow] = g.out;
  const kernelDims = layout === 'kernel-first' ? [0, 1, 3, 5, 2, 4] : [0, 1, 2, 4, 3, 5];
  if (tiles(g)) {
    // Windows that tile the input (MaxPool2d(2), patchify convs): a plain view, whose backward is
    // a copy rather than asStrided's scatter.
    const [N, C] = xp.shape as [number, number];
    const tiled = xp.narrow(2, 0, oh * kh).narrow(3, 0, ow * kw).reshape([N, C, oh, kh, ow, kw]);
    return tiled.permute(kernelDims);
  }
  const { base, size, stride } = overlappingWindows(xp, g, layout);
  return base.asStrided(size, stride);
}

/** Whether the windows tile the input: each element in at most one window. */
export function tiles(g: WindowGeometry): boolean {
  return g.stride[0] === g.kernel[0] && g.stride[1] === g.kernel[1] && g.dilation[0] === 1 && g.dilation[1] === 1;
}

/**
 * Windows that may overlap, as the asStrided view of the contiguous `base` (xp, or its copy) that
 * slidingWindows takes: [N, C, kh, kw, oh, ow] kernel-first, [N, C, oh, ow, kh, kw] kernel-last.
 */
export function overlappingWindows(xp: Tensor, g: WindowGeometry, layout: 'kernel-first' | 'kernel-last'): { base: Tensor; size: number[]; stride: number[] } {
  const [kh, kw] = g.kernel;
  const [oh, ow] = g.out;
  const base = xp.contiguous();
  const [N, C, H, W] = base.shape as [number, number, number, number];
  const kernelStrides = [g.dilation[0] * W, g.dilation[1]];
  const outStrides = [g.stride[0] * W, g.stride[1]];
  const lead = [C * H * W, H * W];
  return layout === 'kernel-first'
    ? { base, size: [N, C, kh, kw, oh, ow], stride: [...lead, ...kernelStrides, ...outStrides] }
    : { base, size: [N, C, oh, ow, kh, kw], stride: [...lead, ...outStrides, ...kernelStrides] };
}

/** Output length of a convolution along one dim (input already padded). */
export function convOutputSize(padded: number, kernel: number, stride: number, dilation: number): number {
  return Math.floor((padded - dilation * (kernel - 1) - 1) / stride) + 1;
}

export function checkOutputSize(op: string, input: readonly number[], out: readonly number[], channels: number): void {
  if (out.some((s) => s <= 0)) {
    throw new ShapeError(
      `${op}(): Given input size: (${channels}x${input.join('x')}). Calculated output size: (${channels}x${out.join('x')}). Output size is too small ` +
        `(input spatial shape ${shapeText(input)}; reduce the kernel size, stride or dilation, or add padding)`,
      op,
    );
  }
}

/** im2col: the windows of `xp` (padded [N, C, H, W]) as [N, C·kh·kw, outH·outW], rows in (c, i, j) order like PyTorch's unfold. */
export function windowColumns(xp: Tensor, g: WindowGeometry): Tensor {
  const [N, C] = xp.shape as [number, number];
  return slidingWindows(xp, g, 'kernel-first').reshape([N, C * g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]]);
}

/**
 * col2im, the adjoint of `windowColumns`: the columns `cols` ([N, C·kh·kw, outH·outW]) put back at
 * their windows' places in a zero [N, C, ...size] image, where overlapping windows add up. One
 * autograd node whose backward is im2col of the gradient (one strided copy).
 */
export function overlapAdd(cols: Tensor, g: WindowGeometry, size: readonly [number, number]): Tensor {
  return OverlapAdd.apply(cols, g, size);
}

class OverlapAdd extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, cols: Tensor, g: WindowGeometry, size: readonly [number, number]): Tensor {
    ctx.geometry = g;
    const [N, CK] = cols.shape as [number, number];
    const [kh, kw] = g.kernel;
    const blocks = cols.reshape([N, CK / (kh * kw), kh, kw, g.out[0], g.out[1]]);
    // One spatial dim at a time, as kh + kw shifted pads: heights first ([N, C, kw, outW, kh, outH]
    // → [N, C, kw, outW, H]), then widths into [N, C, H, W].
    const rows = sumShifted(blocks.permute([0, 1, 3, 5, 2, 4]), g.dilation[0], g.stride[0], size[0]);
    return sumShifted(rows.permute([0, 1, 4, 2, 3]), g.dilation[1], g.stride[1], size[1]);
  }

  static backward(ctx: autograd.FunctionCtx, grad: Tensor): (Tensor | null)[] {
    return [windowColumns(grad, ctx.geometry as WindowGeometry), null, null];
  }
}

/** [..., k, out] → [..., length]: output j of kernel position i lands at i·dilation + j·stride; what lands together adds up. */
function sumShifted(t: Tensor, dilation: number, stride: number, length: number): Tensor {
  const [k, out] = t.shape.slice(-2) as [number, number];
  const span = (out - 1) * stride + 1;
  // stride − 1 zeros after each output, less the ones past the last.
  const spaced = stride === 1 ? t : pad(t.unsqueeze(-1), [0, stride - 1]).flatten(-2).narrow(-1, 0, span);
  let sum: Tensor | undefined;
  for (let i = 0; i < k; i++) {
    const placed = pad(spaced.select(-2, i), [i * dilation, length - i * dilation - span]);
    sum = sum ? sum.add(placed) : placed;
  }
  return sum!;
}

/** One size per spatial dim: a number for all of them, or a list of `dims` integers ≥ `min` (PyTorch's `_single` and `_pair`). */
export function spatialSizes(value: unknown, dims: 1 | 2, name: string, op: string, min = 0): number[] {
  if (dims === 2) return pair(value as Pair, name, op, min);
  const v = typeof value === 'number' ? value : Array.isArray(value) && value.length === 1 ? (value[0] as number) : NaN;
  if (!Number.isInteger(v) || v < min) throw new ValueError(`${op}: ${name} must be an integer ≥ ${min} or a list of one, got ${JSON.stringify(value)}`);
  return [v];
}

/**
 * `fn` of `tensors`, where half types (all of one dtype, nulls aside) run in float32 and round
 * once at the end, as PyTorch's convolutions and col2im accumulate in f32 and store once; the
 * backward pass then also sums in f32.
 */
export function accumulatingInFloat32<T extends readonly [Tensor, ...(Tensor | null)[]]>(op: string, tensors: T, fn: (...ts: T) => Tensor): Tensor {
  const dtype = tensors[0].dtype;
  if (!isHalf(dtype) || tensors.some((t) => t !== null && t.dtype !== dtype)) return fn(...tensors);
  checkCompute(op, tensors[0]);
  return fn(...(tensors.map((t) => t?.float() ?? null) as unknown as T)).to(dtype);
}
