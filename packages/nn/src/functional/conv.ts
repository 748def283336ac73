// F.conv2d as im2col + one batched matmul: pad, view the windows with asStrided, copy them into a
// [N, groups, C/groups·kh·kw, outH·outW] matrix, multiply by the weight viewed as
// [groups, O/groups, C/groups·kh·kw]. Autograd differentiates the decomposition.
import { pad, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkRank, checkTensor, pair, shapeText, type Args, type Pair } from '../internal/args.js';
import { checkCompute, checkSameDevice } from '@core/tensor';
import { checkSameDType, isHalf } from './linear.js';
import { checkOutputSize, convOutputSize, slidingWindows } from './windows.js';
import { autocastOp } from '@core/tensor';

/** conv2d padding: zeros on each side (one number or [h, w]), 'valid' (none) or 'same' (keep the size). */
export type Conv2dPadding = Pair | 'valid' | 'same';

/** conv2d's options (PyTorch's keyword arguments). */
export interface Conv2dOptions {
  /** The window step (default 1). */
  readonly stride?: Pair;
  /** Zeros added on both sides, `'valid'` (none) or `'same'` (output size = input size; stride 1). */
  readonly padding?: Conv2dPadding;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Pair;
  /** Split input and output channels into this many independent groups (default 1). */
  readonly groups?: number;
}

/** [top, bottom, left, right] zero padding. */
function paddingOf(padding: Conv2dPadding, kernel: [number, number], stride: [number, number], dilation: [number, number]): [number, number, number, number] {
  if (padding === 'valid') return [0, 0, 0, 0];
  if (padding === 'same') {
    if (stride[0] !== 1 || stride[1] !== 1) throw new ValueError("conv2d(): padding='same' is not supported for strided convolutions");
    // PyTorch puts the odd pixel of padding at the end.
    const [th, tw] = [dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1)];
    return [Math.floor(th / 2), th - Math.floor(th / 2), Math.floor(tw / 2), tw - Math.floor(tw / 2)];
  }
  if (typeof padding === 'string') throw new ValueError(`conv2d(): invalid padding string ${JSON.stringify(padding)}; use 'valid' or 'same'`);
  const [ph, pw] = pair(padding, 'padding', 'conv2d');
  return [ph, ph, pw, pw];
}

/** conv2d's parameters after the weight, by name. */
interface Conv2dArgs extends Conv2dOptions {
  readonly bias?: Tensor | null;
}

/**
 * 2-D convolution (cross-correlation, like PyTorch) of [N, C, H, W] or [C, H, W] input, with
 * PyTorch's positional order `conv2d(input, weight, bias, stride, padding, dilation, groups)`, or
 * any of them by name in a trailing object. Autocast: lower precision (AC-8).
 */
export function conv2d(input: Tensor, weight: Tensor, ...args: Args<[bias: Tensor | null, stride: Pair, padding: Conv2dPadding, dilation: Pair, groups: number], Conv2dArgs>): Tensor {
  const { bias, ...options } = bindArgs<Conv2dArgs>('conv2d', ['bias', 'stride', 'padding', 'dilation', 'groups'], args);
  return autocastOp('conv2d', [input, weight, bias] as const, (x, w, b) => conv2dImpl(x, w, b, options));
}

/** 2-D convolution (cross-correlation, like PyTorch) of [N, C, H, W] or [C, H, W] input. */
function conv2dImpl(input: Tensor, weight: Tensor, bias?: Tensor | null, options: Conv2dOptions = {}): Tensor {
  checkTensor(input, 'input', 'conv2d');
  checkTensor(weight, 'weight', 'conv2d');
  if (bias != null) checkTensor(bias, 'bias', 'conv2d');
  checkSameDevice('conv2d', [{ name: 'weight', tensor: weight }, { name: 'bias', tensor: bias }, { name: 'input', tensor: input }]);
  checkFloating(input, 'input', 'conv2d');
  checkSameDType('conv2d', input, weight);
  checkRank(input, [3, 4], '3D (unbatched) or 4D (batched) input to conv2d', 'conv2d');
  if (weight.ndim !== 4) throw new ShapeError(`conv2d(): weight must be 4-D [outChannels, inChannels/groups, kH, kW], got ${shapeText(weight.shape)}`, 'conv2d');
  const groups = options.groups ?? 1;
  if (!Number.isInteger(groups) || groups < 1) throw new ValueError(`conv2d(): groups must be a positive integer, got ${groups}`);
  const stride = pair(options.stride ?? 1, 'stride', 'conv2d', 1);
  const dilation = pair(options.dilation ?? 1, 'dilation', 'conv2d', 1);
  const x = input.ndim === 4 ? input : input.unsqueeze(0);
  const [N, C, H, W] = x.shape as [number, number, number, number];
  const [O, Cg, kh, kw] = weight.shape as [number, number, number, number];
  if (Cg * groups !== C) {
    throw new ShapeError(
      `conv2d(): Given groups=${groups}, weight of size ${shapeText(weight.shape)}, expected input${shapeText(x.shape)} to have ${Cg * groups} channels, but got ${C} channels instead`,
      'conv2d',
    );
  }
  if (O % groups !== 0) throw new ShapeError(`conv2d(): out channels (${O}) must be divisible by groups (${groups})`, 'conv2d');
  if (bias != null && (bias.ndim !== 1 || bias.shape[0] !== O)) {
    throw new ShapeError(`conv2d(): bias must have shape [${O}] (one per output channel), got ${shapeText(bias.shape)}`, 'conv2d');
  }
  const [top, bottom, left, right] = paddingOf(options.padding ?? 0, [kh, kw], stride, dilation);
  // Half types run in f32 and round once at the end, as PyTorch's convolutions accumulate in f32
  // (bias included) and store once; the backward pass then also sums overlapping windows in f32.
  const half = isHalf(x.dtype) && (bias == null || bias.dtype === x.dtype);
  if (half) checkCompute('conv2d', x);
  const x32 = half ? x.float() : x;
  const xp = top + bottom + left + right > 0 ? pad(x32, [left, right, top, bottom]) : x32;
  const [Hp, Wp] = [H + top + bottom, W + left + right];
  const out: [number, number] = [convOutputSize(Hp, kh, stride[0], dilation[0]), convOutputSize(Wp, kw, stride[1], dilation[1])];
  checkOutputSize('conv2d', [H, W], out, O);
  const K = Cg * kh * kw;
  const cols = slidingWindows(xp, { kernel: [kh, kw], stride, dilation, out }, 'kernel-first').reshape([N, groups, K, out[0] * out[1]]);
  // [groups, O/g, K] @ [N, groups, K, L] → [N, groups, O/g, L]: one matmul per (sample, group).
  let y = (half ? weight.float() : weight).reshape([groups, O / groups, K]).matmul(cols).reshape([N, O, out[0], out[1]]);
  if (bias != null) y = y.add((half ? bias.float() : bias).reshape([1, O, 1, 1]));
  if (half) y = y.to(x.dtype);
  return input.ndim === 4 ? y : y.squeeze(0);
}
