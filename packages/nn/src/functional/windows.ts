// Sliding windows (im2col) for convolution and pooling: an overlapping, differentiable
// `asStrided` view of a padded NCHW tensor. No JS loop touches pixels; the copy into a matrix is
// one strided-copy kernel, and asStrided's backward scatters gradients back (col2im).
import { ShapeError, type Tensor } from '@core/tensor';
import { shapeText } from '../internal/args.js';

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
  if (g.stride[0] === kh && g.stride[1] === kw && g.dilation[0] === 1 && g.dilation[1] === 1) {
    // Windows that tile the input (MaxPool2d(2), patchify convs): a plain view, whose backward is
    // a copy rather than asStrided's scatter.
    const [N, C] = xp.shape as [number, number];
    const tiled = xp.narrow(2, 0, oh * kh).narrow(3, 0, ow * kw).reshape([N, C, oh, kh, ow, kw]);
    return tiled.permute(kernelDims);
  }
  const x = xp.contiguous();
  const [N, C, H, W] = x.shape as [number, number, number, number];
  const kernelStrides = [g.dilation[0] * W, g.dilation[1]];
  const outStrides = [g.stride[0] * W, g.stride[1]];
  const lead = [C * H * W, H * W];
  return layout === 'kernel-first'
    ? x.asStrided([N, C, kh, kw, oh, ow], [...lead, ...kernelStrides, ...outStrides])
    : x.asStrided([N, C, oh, ow, kh, kw], [...lead, ...outStrides, ...kernelStrides]);
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
