// F.maxPool2d: pad with −∞, view the windows with asStrided, take the max over each window. The
// gradient goes to the (first) argmax of each window, like PyTorch.
import { pad, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkRank, checkTensor, pair, type Args, type Pair } from '../internal/args.js';
import { checkOutputSize, slidingWindows } from './windows.js';

/** maxPool2d's options (PyTorch's keyword arguments). */
export interface MaxPool2dOptions {
  /** Defaults to the kernel size. */
  readonly stride?: Pair | null;
  /** −∞ padding on both sides, at most half the kernel size. */
  readonly padding?: Pair;
  /** Spacing between window elements (default 1). */
  readonly dilation?: Pair;
  /** Round the output size up, letting the last window hang over the end. */
  readonly ceilMode?: boolean;
  /** Also return the argmax indices: not supported (only false). */
  readonly returnIndices?: boolean;
}

/** PyTorch's maxPool2d rejects what the library does not implement. */
export function checkNoIndices(returnIndices: boolean | undefined, op: string): void {
  if (returnIndices) throw new ValueError(`${op}: returnIndices is not supported; take the max over the windows without indices (returnIndices: false)`);
}

/** PyTorch's pooling_output_shape. */
export function pooledSize(input: number, kernel: number, padding: number, stride: number, dilation: number, ceilMode: boolean): number {
  const span = input + 2 * padding - dilation * (kernel - 1) - 1 + (ceilMode ? stride - 1 : 0);
  let out = Math.floor(span / stride) + 1;
  // The last window must start inside the input or the left padding.
  if (ceilMode && (out - 1) * stride >= input + padding) out--;
  return out;
}

/**
 * The max over each `kernelSize` window of a [N, C, H, W] (or [C, H, W]) input; the gradient goes
 * to each window's first maximum. PyTorch's order: `maxPool2d(input, kernelSize, stride, padding,
 * dilation, ceilMode)`, or any of them by name in a trailing object.
 */
export function maxPool2d(input: Tensor, kernelSize: Pair, ...args: Args<[stride: Pair | null, padding: Pair, dilation: Pair, ceilMode: boolean, returnIndices: boolean], MaxPool2dOptions>): Tensor {
  const options = bindArgs<MaxPool2dOptions>('maxPool2d', ['stride', 'padding', 'dilation', 'ceilMode', 'returnIndices'], args);
  checkNoIndices(options.returnIndices, 'maxPool2d()');
  checkTensor(input, 'input', 'maxPool2d');
  checkFloating(input, 'input', 'maxPool2d');
  checkRank(input, [3, 4], '3D (unbatched) or 4D (batched) input to maxPool2d', 'maxPool2d');
  const kernel = pair(kernelSize, 'kernelSize', 'maxPool2d', 1);
  const stride = pair(options.stride ?? kernel, 'stride', 'maxPool2d', 1);
  const padding = pair(options.padding ?? 0, 'padding', 'maxPool2d');
  const dilation = pair(options.dilation ?? 1, 'dilation', 'maxPool2d', 1);
  const ceilMode = options.ceilMode ?? false;
  if (padding[0] > kernel[0] / 2 || padding[1] > kernel[1] / 2) {
    throw new ShapeError(
      `maxPool2d(): pad should be smaller than or equal to half of kernel size, but got padW = ${padding[1]}, padH = ${padding[0]}, kW = ${kernel[1]}, kH = ${kernel[0]}`,
      'maxPool2d',
    );
  }
  const x = input.ndim === 4 ? input : input.unsqueeze(0);
  const [N, C, H, W] = x.shape as [number, number, number, number];
  const out: [number, number] = [
    pooledSize(H, kernel[0], padding[0], stride[0], dilation[0], ceilMode),
    pooledSize(W, kernel[1], padding[1], stride[1], dilation[1], ceilMode),
  ];
  checkOutputSize('maxPool2d', [H, W], out, C);
  // Extra −∞ at the end for ceil mode's overhanging last window.
  const extra = (i: 0 | 1, size: number) => Math.max(0, (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - (size + 2 * padding[i]));
  const [bottom, right] = [padding[0] + extra(0, H), padding[1] + extra(1, W)];
  const xp = padding[0] + padding[1] + bottom + right > 0 ? pad(x, [padding[1], right, padding[0], bottom], -Infinity) : x;
  const windows = slidingWindows(xp, { kernel, stride, dilation, out }, 'kernel-last').reshape([N, C, out[0], out[1], kernel[0] * kernel[1]]);
  const y = windows.max(-1).values;
  return input.ndim === 4 ? y : y.squeeze(0);
}
