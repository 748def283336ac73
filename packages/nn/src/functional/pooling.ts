// Pooling. Max and average pooling pad the input (−∞ or 0), view its windows with asStrided and
// reduce them; the 1-D forms are the 2-D ones over a height of 1. Adaptive pooling reduces
// PyTorch's adaptive windows one spatial dim at a time (a rectangle's max or sum is the max or sum
// over rows of the max or sum over columns): a reshape where the windows tile the dim, else one
// gather of all windows. Gradients come from the decompositions; a max's goes to the first maximum
// of its window, like PyTorch's. Max pooling runs the backend's fused kernels where it has them
// (core's fusedMaxPool2d), with the decomposition's results bit for bit.
import { fusedMaxPool2d, int32, pad, releaseWithGraph, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkRank, checkTensor, opmathDType, pair, shapeText, type Args, type Pair } from '../internal/args.js';
import type { Single } from './conv.js';
import { checkOutputSize, slidingWindows, spatialSizes } from './windows.js';

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

/** maxPool1d's options (PyTorch's keyword arguments). */
export interface MaxPool1dOptions {
  /** Defaults to the kernel size. */
  readonly stride?: Single | null;
  /** −∞ padding on both sides, at most half the kernel size. */
  readonly padding?: Single;
  /** Spacing between window elements (default 1). */
  readonly dilation?: Single;
  /** Round the output size up, letting the last window hang over the end. */
  readonly ceilMode?: boolean;
  /** Also return the argmax indices: not supported (only false). */
  readonly returnIndices?: boolean;
}

/** avgPool1d's options (PyTorch's keyword arguments). */
export interface AvgPool1dOptions {
  /** Defaults to the kernel size. */
  readonly stride?: Single | null;
  /** Zero padding on both sides, at most half the kernel size. */
  readonly padding?: Single;
  /** Round the output size up, letting the last window hang over the end (the overhang is never counted). */
  readonly ceilMode?: boolean;
  /** Count the zero padding in each window's divisor (default true). */
  readonly countIncludePad?: boolean;
}

/** avgPool2d's options (PyTorch's keyword arguments). */
export interface AvgPool2dOptions {
  /** Defaults to the kernel size. */
  readonly stride?: Pair | null;
  /** Zero padding on both sides, at most half the kernel size. */
  readonly padding?: Pair;
  /** Round the output size up, letting the last window hang over the end (the overhang is never counted). */
  readonly ceilMode?: boolean;
  /** Count the zero padding in each window's divisor (default true). */
  readonly countIncludePad?: boolean;
  /** Divide every window's sum by this instead of its size. */
  readonly divisorOverride?: number | null;
}

/** An adaptive pool's 2-D output size: one number for both dims, or [h, w] where null keeps that dim's input size. */
export type AdaptiveSize2d = number | readonly [number | null, number | null];

/** The max pools' returnIndices: true (PyTorch's argmax indices) is not implemented; refuse it. */
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

/** PyTorch's `_single` for the 1-D pools: an integer ≥ `min` (or a list of one). */
export function single(value: Single, name: string, op: string, min = 0): number {
  return spatialSizes(value, 1, name, op, min)[0]!;
}

/** A window pool's geometry over [height, width]. */
interface PoolGeometry {
  readonly kernel: [number, number];
  readonly stride: [number, number];
  readonly padding: [number, number];
  readonly dilation: [number, number];
  readonly ceilMode: boolean;
}

/** The 1-D pools' geometry as the 2-D one over a height of 1. */
function widthOnly(op: string, kernelSize: Single, stride: Single | null | undefined, padding: Single = 0, dilation: Single = 1, ceilMode = false): PoolGeometry {
  const k = single(kernelSize, 'kernelSize', op, 1);
  return { kernel: [1, k], stride: [1, single(stride ?? k, 'stride', op, 1)], padding: [0, single(padding, 'padding', op)], dilation: [1, single(dilation, 'dilation', op, 1)], ceilMode };
}

/** The 1-D pools take [N, C, L] or [C, L] and run the 2-D ones on [N, C, 1, L] or [C, 1, L]. */
function overWidth(input: Tensor, op: string, pool2d: (x: Tensor) => Tensor): Tensor {
  checkTensor(input, 'input', op);
  checkRank(input, [2, 3], `2D (unbatched) or 3D (batched) input to ${op}`, op);
  return pool2d(input.unsqueeze(-2)).squeeze(-2);
}

/** The output size [outH, outW] of pooling [N, C, H, W] `x`, checked to be at least 1. */
function poolOutput(op: string, x: Tensor, g: PoolGeometry): [number, number] {
  const [, C, H, W] = x.shape as [number, number, number, number];
  const { kernel, stride, padding, dilation } = g;
  const out: [number, number] = [
    pooledSize(H, kernel[0], padding[0], stride[0], dilation[0], g.ceilMode),
    pooledSize(W, kernel[1], padding[1], stride[1], dilation[1], g.ceilMode),
  ];
  checkOutputSize(op, [H, W], out, C);
  return out;
}

/**
 * The padding pooling [N, C, H, W] `x` into `out` needs, in pad's order [left, right, top, bottom]:
 * the geometry's on both sides, and past the end where ceilMode's last window hangs over it.
 */
function poolPadding(x: Tensor, g: PoolGeometry, out: readonly [number, number]): [number, number, number, number] {
  const [, , H, W] = x.shape as [number, number, number, number];
  const { kernel, stride, padding, dilation } = g;
  const extra = (i: 0 | 1, size: number) => Math.max(0, (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - (size + 2 * padding[i]));
  return [padding[1], padding[1] + extra(1, W), padding[0], padding[0] + extra(0, H)];
}

/** The windows of [N, C, H, W] `x` as a [N, C, outH, outW, kh, kw] view, padded with `fill` (see poolPadding). */
function poolWindows(x: Tensor, g: PoolGeometry, out: readonly [number, number], fill: number): Tensor {
  const sides = poolPadding(x, g, out);
  const xp = sides.some((p) => p > 0) ? pad(x, sides, fill) : x;
  return slidingWindows(xp, { kernel: g.kernel, stride: g.stride, dilation: g.dilation, out }, 'kernel-last');
}

/** Run a 2-D pool of [N, C, H, W] on [N, C, H, W] or [C, H, W] input. */
function batched(input: Tensor, pool: (x: Tensor) => Tensor): Tensor {
  return input.ndim === 4 ? pool(input) : pool(input.unsqueeze(0)).squeeze(0);
}

/**
 * Divide each output position's sum by its divisor, `divisors` row-major over the last `dims` dims
 * (a scalar when they are all the same), in the sums' dtype.
 */
function divideBy(sums: Tensor, divisors: readonly number[], dims: number): Tensor {
  const first = divisors[0];
  if (first === undefined) return sums;
  if (divisors.every((d) => d === first)) return sums.div(first);
  return sums.div(sums.newTensor(divisors as number[]).reshape(sums.shape.slice(sums.ndim - dims)));
}

/**
 * Per window along one dim, the first of its `kernel` positions inside [0, size) (0 when none is):
 * where PyTorch sends the gradient of a window whose every position is −∞.
 */
function firstInside(size: number, out: number, kernel: number, padding: number, stride: number, dilation: number): number[] {
  return Array.from({ length: out }, (_, o) => {
    const start = o * stride - padding;
    const first = start >= 0 ? 0 : Math.ceil(-start / dilation);
    return first < kernel && start + first * dilation < size ? first : 0;
  });
}

/**
 * max_pool2d of [N, C, H, W] `x`: the backend's fused kernel, else the max over a −∞-padded window
 * view. There a window of −∞ whose first position is padding would pick the padding (and lose its
 * gradient); it picks its first position inside the input instead, as PyTorch and the kernel do.
 */
function maxPool2dOf(op: string, x: Tensor, g: PoolGeometry): Tensor {
  const out = poolOutput(op, x, g);
  const fused = fusedMaxPool2d(x, { kernel: g.kernel, stride: g.stride, padding: g.padding, dilation: g.dilation, out });
  if (fused) {
    releaseWithGraph(fused.indices); // only the backward pass reads them
    return fused.output;
  }
  const [N, C, H, W] = x.shape as [number, number, number, number];
  const [kh, kw] = g.kernel;
  const windows = poolWindows(x, g, out, -Infinity).reshape([N, C, out[0], out[1], kh * kw]);
  const { values, indices } = windows.max(-1);
  if (poolPadding(x, g, out).every((p) => p === 0)) return values;
  const rows = firstInside(H, out[0], kh, g.padding[0], g.stride[0], g.dilation[0]);
  const cols = firstInside(W, out[1], kw, g.padding[1], g.stride[1], g.dilation[1]);
  const first = x.newTensor(rows.flatMap((r) => cols.map((c) => r * kw + c)), { dtype: int32 }).reshape(out);
  return windows.gather(-1, first.where(values.eq(-Infinity), indices).unsqueeze(-1)).squeeze(-1);
}

function maxPool2dImpl(op: string, input: Tensor, g: PoolGeometry): Tensor {
  checkFloating(input, 'input', op);
  return batched(input, (x) => maxPool2dOf(op, x, g));
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
  checkRank(input, [3, 4], '3D (unbatched) or 4D (batched) input to maxPool2d', 'maxPool2d');
  const kernel = pair(kernelSize, 'kernelSize', 'maxPool2d', 1);
  const stride = pair(options.stride ?? kernel, 'stride', 'maxPool2d', 1);
  const padding = pair(options.padding ?? 0, 'padding', 'maxPool2d');
  const dilation = pair(options.dilation ?? 1, 'dilation', 'maxPool2d', 1);
  if (padding[0] > kernel[0] / 2 || padding[1] > kernel[1] / 2) {
    throw new ShapeError(
      `maxPool2d(): pad should be smaller than or equal to half of kernel size, but got padW = ${padding[1]}, padH = ${padding[0]}, kW = ${kernel[1]}, kH = ${kernel[0]}`,
      'maxPool2d',
    );
  }
  return maxPool2dImpl('maxPool2d', input, { kernel, stride, padding, dilation, ceilMode: options.ceilMode ?? false });
}

/**
 * The max over each `kernelSize` window of a [N, C, L] (or [C, L]) input; the gradient goes to each
 * window's first maximum. PyTorch's order: `maxPool1d(input, kernelSize, stride, padding, dilation,
 * ceilMode)`, or any of them by name in a trailing object.
 */
export function maxPool1d(input: Tensor, kernelSize: Single, ...args: Args<[stride: Single | null, padding: Single, dilation: Single, ceilMode: boolean, returnIndices: boolean], MaxPool1dOptions>): Tensor {
  const o = bindArgs<MaxPool1dOptions>('maxPool1d', ['stride', 'padding', 'dilation', 'ceilMode', 'returnIndices'], args);
  checkNoIndices(o.returnIndices, 'maxPool1d()');
  const g = widthOnly('maxPool1d', kernelSize, o.stride, o.padding, o.dilation, o.ceilMode);
  if (g.padding[1] > g.kernel[1] / 2) {
    throw new ShapeError(`maxPool1d(): padding should be at most half of kernel size, but got padding=${g.padding[1]} and kernelSize=${g.kernel[1]}`, 'maxPool1d');
  }
  return overWidth(input, 'maxPool1d', (x) => maxPool2dImpl('maxPool1d', x, g));
}

/** Each window's divisor along one dim: its size counting the padding (`with`) or not (`without`); ceilMode's overhang never counts. */
function windowSizes(size: number, out: number, kernel: number, stride: number, padding: number): { with: number[]; without: number[] } {
  const sizes = { with: [] as number[], without: [] as number[] };
  for (let o = 0; o < out; o++) {
    const start = o * stride - padding;
    const end = Math.min(start + kernel, size + padding);
    sizes.with.push(end - start);
    sizes.without.push(Math.min(end, size) - Math.max(start, 0));
  }
  return sizes;
}

/** Every output position's entry of the product of per-dim factors (row-major over the dims). */
function outerProduct(factors: readonly (readonly number[])[]): number[] {
  return factors.reduce<number[]>((acc, f) => acc.flatMap((a) => f.map((b) => a * b)), [1]);
}

/**
 * avg_pool2d over [N, C, H, W] or [C, H, W]: window sums over PyTorch's divisors, in the opmath
 * dtype and rounded back once. The sums name their dtype, so an autocast region's float32 `sum`
 * (CUDA's AC-10) leaves the result in the input's dtype, as PyTorch's own kernel does.
 */
function avgPool2dImpl(op: string, input: Tensor, g: PoolGeometry, countIncludePad: boolean, divisorOverride: number | null | undefined): Tensor {
  checkFloating(input, 'input', op);
  if (divisorOverride != null && (!Number.isInteger(divisorOverride) || divisorOverride === 0)) {
    throw new ValueError(`${op}(): divisor must be not zero (divisorOverride must be a non-zero integer or null), got ${divisorOverride}`);
  }
  return batched(input, (x) => {
    const windows = poolWindows(x, g, poolOutput(op, x, g), 0);
    const [, , oh, ow] = windows.shape as [number, number, number, number];
    const sums = windows.sum([-2, -1], false, { dtype: opmathDType(x.dtype) });
    const [hs, ws] = [windowSizes(x.shape[2]!, oh, g.kernel[0], g.stride[0], g.padding[0]), windowSizes(x.shape[3]!, ow, g.kernel[1], g.stride[1], g.padding[1])];
    const divisors = divisorOverride != null
      ? [divisorOverride]
      : countIncludePad ? outerProduct([hs.with, ws.with]) : outerProduct([hs.without, ws.without]);
    return divideBy(sums, divisors, 2).to(x.dtype);
  });
}

/** PyTorch's avg pools allow padding of at most half the kernel. */
function checkAvgPadding(op: string, g: PoolGeometry): void {
  for (const i of [0, 1] as const) {
    if (g.padding[i] > g.kernel[i] / 2) {
      throw new ShapeError(`${op}(): pad should be at most half of kernel size, but got pad=${g.padding[i]} and kernelSize=${g.kernel[i]}`, op);
    }
  }
}

/**
 * The mean of each `kernelSize` window of a [N, C, H, W] (or [C, H, W]) input, zero padded; each
 * window's sum is divided by its size (with the padding unless `countIncludePad` is false; never
 * with ceilMode's overhang) or by `divisorOverride`. PyTorch's order: `avgPool2d(input, kernelSize,
 * stride, padding, ceilMode, countIncludePad, divisorOverride)`, or any of them by name.
 */
export function avgPool2d(
  input: Tensor,
  kernelSize: Pair,
  ...args: Args<[stride: Pair | null, padding: Pair, ceilMode: boolean, countIncludePad: boolean, divisorOverride: number | null], AvgPool2dOptions>
): Tensor {
  const o = bindArgs<AvgPool2dOptions>('avgPool2d', ['stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride'], args);
  checkTensor(input, 'input', 'avgPool2d');
  checkRank(input, [3, 4], '3D (unbatched) or 4D (batched) input to avgPool2d', 'avgPool2d');
  const kernel = pair(kernelSize, 'kernelSize', 'avgPool2d', 1);
  const g: PoolGeometry = {
    kernel,
    stride: pair(o.stride ?? kernel, 'stride', 'avgPool2d', 1),
    padding: pair(o.padding ?? 0, 'padding', 'avgPool2d'),
    dilation: [1, 1],
    ceilMode: o.ceilMode ?? false,
  };
  checkAvgPadding('avgPool2d', g);
  return avgPool2dImpl('avgPool2d', input, g, o.countIncludePad ?? true, o.divisorOverride);
}

/**
 * The mean of each `kernelSize` window of a [N, C, L] (or [C, L]) input, zero padded (see
 * avgPool2d). PyTorch's order: `avgPool1d(input, kernelSize, stride, padding, ceilMode,
 * countIncludePad)`, or any of them by name.
 */
export function avgPool1d(input: Tensor, kernelSize: Single, ...args: Args<[stride: Single | null, padding: Single, ceilMode: boolean, countIncludePad: boolean], AvgPool1dOptions>): Tensor {
  const o = bindArgs<AvgPool1dOptions>('avgPool1d', ['stride', 'padding', 'ceilMode', 'countIncludePad'], args);
  const g = widthOnly('avgPool1d', kernelSize, o.stride, o.padding, 1, o.ceilMode);
  checkAvgPadding('avgPool1d', g);
  return overWidth(input, 'avgPool1d', (x) => avgPool2dImpl('avgPool1d', x, g, o.countIncludePad ?? true, null));
}

// ---- adaptive pooling ----

/** Where each adaptive window starts and ends (exclusive). */
interface AdaptiveWindows {
  readonly starts: number[];
  readonly ends: number[];
}

/** PyTorch's adaptive windows: output i of `out` reduces inputs [⌊i·size/out⌋, ⌈(i+1)·size/out⌉). */
function adaptiveWindows(size: number, out: number): AdaptiveWindows {
  const starts = Array.from({ length: out }, (_, i) => Math.floor((i * size) / out));
  const ends = Array.from({ length: out }, (_, i) => Math.ceil(((i + 1) * size) / out));
  return { starts, ends };
}

type AdaptiveReduction = 'max' | 'sum';

/**
 * `x` with dim `dim` reduced to its adaptive windows. Windows that tile the dim are a reshape;
 * otherwise one gather reads all of them, K = the longest window wide: a shorter window repeats
 * its last element (harmless to a max) or, for a sum, reads a zero appended to the dim.
 */
function reduceAdaptive(x: Tensor, dim: number, { starts, ends }: AdaptiveWindows, how: AdaptiveReduction): Tensor {
  const size = x.shape[dim]!;
  const out = starts.length;
  if (out === 0) return x.narrow(dim, 0, 0);
  const split = (k: number) => [...x.shape.slice(0, dim), out, k, ...x.shape.slice(dim + 1)];
  let windows: Tensor;
  if (size % out === 0) {
    windows = x.reshape(split(size / out));
  } else {
    const K = Math.max(...ends.map((e, i) => e - starts[i]!));
    const index = starts.flatMap((s, i) => Array.from({ length: K }, (_, j) => (s + j < ends[i]! ? s + j : how === 'max' ? ends[i]! - 1 : size)));
    const zeroAfter = Array.from({ length: 2 * (x.ndim - dim) }, (_, p) => (p === 2 * (x.ndim - 1 - dim) + 1 ? 1 : 0));
    const source = how === 'max' ? x : pad(x, zeroAfter);
    windows = source.indexSelect(dim, x.newTensor(index, { dtype: int32 })).reshape(split(K));
  }
  return how === 'max' ? windows.max(dim + 1).values : windows.sum(dim + 1, false, { dtype: opmathDType(x.dtype) });
}

/**
 * Adaptive pooling of the last `outputSize.length` dims of `input` (null keeps that dim). A mean
 * sums the windows dim by dim and divides once by the product of their lengths, in the opmath
 * dtype.
 */
function adaptivePool(op: string, input: Tensor, outputSize: readonly (number | null)[], how: AdaptiveReduction): Tensor {
  checkFloating(input, 'input', op);
  const first = input.ndim - outputSize.length;
  const empty = input.shape.findIndex((s, d) => d >= first && s === 0);
  if (empty >= 0) {
    throw new ShapeError(
      `${op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ${shapeText(input.shape)} with dimension ${empty} being empty`,
      op,
    );
  }
  const windows = outputSize.map((out, i) => (out === null ? null : adaptiveWindows(input.shape[first + i]!, out)));
  // Innermost dim first: a max then lands on the first maximum of its window in row-major order.
  let y = input;
  for (let i = windows.length - 1; i >= 0; i--) y = windows[i] ? reduceAdaptive(y, first + i, windows[i]!, how) : y;
  if (how === 'max') return y === input ? input.clone() : y;
  const lengths = windows.map((w, i) => (w ? w.ends.map((e, k) => e - w.starts[k]!) : Array.from({ length: input.shape[first + i]! }, () => 1)));
  return divideBy(y.to(opmathDType(y.dtype)), outerProduct(lengths), outputSize.length).to(input.dtype);
}

/** Check an adaptive pool's output size: `dims` entries (one number fills them all), integers ≥ 0 or null. */
function outputSizeOf(outputSize: unknown, dims: 1 | 2, op: string): (number | null)[] {
  const sizes = typeof outputSize === 'number' ? Array.from({ length: dims }, () => outputSize) : outputSize;
  if (!Array.isArray(sizes) || sizes.length !== dims) {
    const got = Array.isArray(sizes) ? `${sizes.length}` : JSON.stringify(outputSize);
    throw new ValueError(dims === 1
      ? `${op}(): argument 'outputSize' should contain one int (got ${got})`
      : `${op}(): outputSize must be 2 (one size, or [h, w] with null keeping that dim), got ${got}`);
  }
  if (sizes.some((s) => s !== null && (!Number.isInteger(s) || s < 0)) || (dims === 1 && sizes[0] === null)) {
    throw new ValueError(`${op}(): elements of outputSize must be integers greater than or equal to 0, but received ${JSON.stringify(sizes)}`);
  }
  return sizes as (number | null)[];
}

/** A public adaptive pool: check its output size and the input's rank (`dims` spatial dims, batched or not), then pool. */
function adaptive(op: string, input: Tensor, outputSize: unknown, dims: 1 | 2, how: AdaptiveReduction): Tensor {
  const sizes = outputSizeOf(outputSize, dims, op);
  checkTensor(input, 'input', op);
  checkRank(input, [dims + 1, dims + 2], `${dims + 1}D (unbatched) or ${dims + 2}D (batched) input to ${op}`, op);
  return adaptivePool(op, input, sizes, how);
}

/** The mean over PyTorch's adaptive windows of a [N, C, L] (or [C, L]) input, giving `outputSize` values along L. */
export function adaptiveAvgPool1d(input: Tensor, outputSize: Single): Tensor {
  return adaptive('adaptiveAvgPool1d', input, outputSize, 1, 'sum');
}

/**
 * The mean over PyTorch's adaptive windows of a [N, C, H, W] (or [C, H, W]) input: output (i, j)
 * averages rows [⌊i·H/h⌋, ⌈(i+1)·H/h⌉) and columns likewise. `outputSize` is one number or [h, w]
 * (null keeps that dim).
 */
export function adaptiveAvgPool2d(input: Tensor, outputSize: AdaptiveSize2d): Tensor {
  return adaptive('adaptiveAvgPool2d', input, outputSize, 2, 'sum');
}

/** The mean over adaptive windows of the last dims, for any number of them (interpolate's 'area' mode). */
export function adaptiveAvgPoolNd(input: Tensor, outputSize: readonly number[], op: string): Tensor {
  return adaptivePool(op, input, outputSize, 'sum');
}

/** adaptiveMaxPool's options (PyTorch's keyword arguments). */
export interface AdaptiveMaxPoolOptions {
  /** Also return the argmax indices: not supported (only false). */
  readonly returnIndices?: boolean;
}

/**
 * The max over PyTorch's adaptive windows of a [N, C, L] (or [C, L]) input; the gradient goes to
 * each window's first maximum. `adaptiveMaxPool1d(input, outputSize, returnIndices)`.
 */
export function adaptiveMaxPool1d(input: Tensor, outputSize: Single, ...args: Args<[returnIndices: boolean], AdaptiveMaxPoolOptions>): Tensor {
  checkNoIndices(bindArgs<AdaptiveMaxPoolOptions>('adaptiveMaxPool1d', ['returnIndices'], args).returnIndices, 'adaptiveMaxPool1d()');
  return adaptive('adaptiveMaxPool1d', input, outputSize, 1, 'max');
}

/**
 * The max over PyTorch's adaptive windows of a [N, C, H, W] (or [C, H, W]) input (see
 * adaptiveAvgPool2d); the gradient goes to each window's first maximum in row-major order.
 * `adaptiveMaxPool2d(input, outputSize, returnIndices)`.
 */
export function adaptiveMaxPool2d(input: Tensor, outputSize: AdaptiveSize2d, ...args: Args<[returnIndices: boolean], AdaptiveMaxPoolOptions>): Tensor {
  checkNoIndices(bindArgs<AdaptiveMaxPoolOptions>('adaptiveMaxPool2d', ['returnIndices'], args).returnIndices, 'adaptiveMaxPool2d()');
  return adaptive('adaptiveMaxPool2d', input, outputSize, 2, 'max');
}
