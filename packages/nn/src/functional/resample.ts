// F.interpolate and F.pixelShuffle / F.pixelUnshuffle. Interpolation is separable: each spatial dim
// is resampled in turn, innermost first as PyTorch's kernels nest them, as a weighted sum of
// gathered slices (one tap for nearest, two for linear, four for bicubic). The source indices and
// weights are PyTorch 1.13's, computed on the host in the input's precision (float32 for float32
// and the 16-bit types), so the rounding that picks a nearest pixel is PyTorch's too. Gradients
// come from the decomposition (the gathers' scatter-add and the products).
import { autocastOp, float64, int32, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkTensor, opmathDType, shapeText, type Args } from '../internal/args.js';
import { adaptiveAvgPoolNd } from './pooling.js';

/** How interpolate fills the output: PyTorch's modes. */
export type InterpolateMode = 'nearest' | 'nearest-exact' | 'linear' | 'bilinear' | 'bicubic' | 'trilinear' | 'area';

/** interpolate's options (PyTorch's keyword arguments). */
export interface InterpolateOptions {
  /** The output's spatial size: one number for every spatial dim, or one each. Give this or scaleFactor. */
  readonly size?: number | readonly number[] | null;
  /** Multiply each spatial size by this (one number, or one each), rounding down. Give this or size. */
  readonly scaleFactor?: number | readonly number[] | null;
  /** 'nearest' (default), 'nearest-exact', 'linear' (3-D input), 'bilinear' or 'bicubic' (4-D), 'trilinear' (5-D), or 'area'. */
  readonly mode?: InterpolateMode;
  /** Linear and bicubic modes: map the corner pixels' centres onto each other (default false: the image edges). */
  readonly alignCorners?: boolean | null;
  /** With scaleFactor: compute the sampling scale from the rounded output size rather than from scaleFactor. */
  readonly recomputeScaleFactor?: boolean | null;
  /** Anti-aliased downsampling: not supported (only false). */
  readonly antialias?: boolean;
}

/** The input rank each mode needs (null: any of 3, 4, 5). */
const MODE_RANK: Readonly<Record<InterpolateMode, number | null>> = {
  nearest: null, 'nearest-exact': null, area: null, linear: 3, bilinear: 4, bicubic: 4, trilinear: 5,
};
const ALIGNABLE: readonly InterpolateMode[] = ['linear', 'bilinear', 'bicubic', 'trilinear'];
const SPATIAL_NAMES = ['D', 'H', 'W'];

/** One tap of a resampling along a dim: per output position, the input index it reads and its weight (null: 1). */
interface Tap {
  readonly index: number[];
  readonly weight: number[] | null;
}

/** Host arithmetic in the precision PyTorch's CPU kernels compute indices and weights in. */
type Round = (v: number) => number;

/** PyTorch's area_pixel_compute_scale: the input step per output step. */
function pixelScale(size: number, out: number, alignCorners: boolean, scale: number | null, round: Round): number {
  if (alignCorners) return out > 1 ? round((size - 1) / (out - 1)) : 0;
  return scale !== null && scale > 0 ? round(1 / scale) : round(size / out);
}

/**
 * PyTorch's nearest_idx / nearest_exact_idx: floor(dst·scale) or floor((dst + ½)·scale), clamped.
 * PyTorch 1.13's 2-D and 3-D 'nearest' kernels (not its 1-D one) copy when the size is unchanged
 * and halve the index when it doubles, whatever scaleFactor says (`shortcuts`).
 */
function nearestTaps(size: number, out: number, scale: number | null, exact: boolean, shortcuts: boolean, round: Round): Tap[] {
  const s = pixelScale(size, out, false, scale, round);
  const source = (d: number) => {
    if (shortcuts && out === size) return d;
    if (shortcuts && out === 2 * size) return d >> 1;
    return Math.min(Math.floor(round((exact ? d + 0.5 : d) * s)), size - 1);
  };
  return [{ index: Array.from({ length: out }, (_, d) => source(d)), weight: null }];
}

/** PyTorch's area_pixel_compute_source_index: where output `d` samples the input. */
function sourceIndex(s: number, d: number, alignCorners: boolean, cubic: boolean, round: Round): number {
  if (alignCorners) return round(s * d);
  const src = round(s * (d + 0.5) - 0.5);
  return !cubic && src < 0 ? 0 : src;
}

/**
 * Linear interpolation between the two neighbours. An output as long as the input reads each
 * pixel twice, with weights 1 and 0, as PyTorch's kernel does (so an infinity becomes NaN there).
 */
function linearTaps(size: number, out: number, scale: number | null, alignCorners: boolean, round: Round): Tap[] {
  const taps: [Tap, Tap] = [{ index: [], weight: [] }, { index: [], weight: [] }];
  const same = out === size;
  const s = pixelScale(size, out, alignCorners, scale, round);
  for (let d = 0; d < out; d++) {
    const real = same ? d : sourceIndex(s, d, alignCorners, false, round);
    const i0 = Math.min(Math.floor(real), size - 1);
    const lambda1 = Math.min(Math.max(round(real - i0), 0), 1);
    taps[0].index.push(i0);
    taps[0].weight!.push(round(1 - lambda1));
    taps[1].index.push(!same && i0 < size - 1 ? i0 + 1 : i0);
    taps[1].weight!.push(lambda1);
  }
  return taps;
}

/** Keys' cubic convolution weights (A = −0.75) at distance t from the second of four neighbours. */
function cubicWeights(t: number): [number, number, number, number] {
  const A = -0.75;
  const near = (x: number) => ((A + 2) * x - (A + 3)) * x * x + 1;
  const far = (x: number) => ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return [far(t + 1), near(t), near(1 - t), far(2 - t)];
}

/** Bicubic interpolation over the four neighbours, indices clamped to the edges. */
function cubicTaps(size: number, out: number, scale: number | null, alignCorners: boolean, round: Round): Tap[] {
  const taps: Tap[] = Array.from({ length: 4 }, () => ({ index: [], weight: [] }));
  const s = pixelScale(size, out, alignCorners, scale, round);
  for (let d = 0; d < out; d++) {
    const real = sourceIndex(s, d, alignCorners, true, round);
    const i0 = Math.floor(real);
    cubicWeights(round(real - i0)).forEach((w, j) => {
      taps[j]!.index.push(Math.max(Math.min(i0 - 1 + j, size - 1), 0));
      taps[j]!.weight!.push(w);
    });
  }
  return taps;
}

/** Σ weight·x[index] along `dim` over the taps, in x's dtype. */
function applyTaps(x: Tensor, dim: number, taps: readonly Tap[]): Tensor {
  const trailing = Array.from({ length: x.ndim - 1 - dim }, () => 1);
  let sum: Tensor | null = null;
  for (const { index, weight } of taps) {
    const picked = x.indexSelect(dim, x.newTensor(index, { dtype: int32 }));
    const term = weight === null ? picked : picked.mul(x.newTensor(weight).reshape([weight.length, ...trailing]));
    sum = sum === null ? term : sum.add(term);
  }
  return sum!;
}

/** Resample every spatial dim of `input` ([N, C, ...spatial]) to `size`. */
function resample(input: Tensor, mode: Exclude<InterpolateMode, 'area'>, size: readonly number[], scales: readonly (number | null)[], alignCorners: boolean): Tensor {
  const nearest = mode === 'nearest' || mode === 'nearest-exact';
  // 16-bit inputs in float32, even where nearest only gathers: a device that stores them need not compute in them.
  const x = input.to(opmathDType(input.dtype));
  const round: Round = x.dtype === float64 ? (v) => v : Math.fround;
  let y = x;
  for (let i = size.length - 1; i >= 0; i--) {
    const dim = 2 + i;
    const [inSize, out, scale] = [x.shape[dim]!, size[i]!, scales[i]!];
    const taps = nearest
      ? nearestTaps(inSize, out, scale, mode === 'nearest-exact', mode === 'nearest' && size.length > 1, round)
      : mode === 'bicubic' ? cubicTaps(inSize, out, scale, alignCorners, round) : linearTaps(inSize, out, scale, alignCorners, round);
    y = applyTaps(y, dim, taps);
  }
  return y.to(input.dtype);
}

/** One value per spatial dim from a number or a list, PyTorch's check of the list's length. */
function perDim(value: number | readonly number[], dims: number, input: Tensor, what: 'output size' | 'scaleFactor'): number[] {
  const values = typeof value === 'number' ? Array.from({ length: dims }, () => value) : value;
  if (!Array.isArray(values) || values.length !== dims) {
    const [name, format] = what === 'output size' ? ['output', 'output size in (o1, o2, ...,oK)'] : ['scaleFactor', 'scaleFactor in (s1, s2, ...,sK)'];
    throw new ShapeError(
      `interpolate(): Input and ${name} must have the same number of spatial dimensions, but got input with spatial dimensions of ` +
        `${shapeText(input.shape.slice(2))} and ${what} of ${JSON.stringify(value)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and ${format} format.`,
      'interpolate',
    );
  }
  return values as number[];
}

/** The output size and the scales the kernels sample with (null: from the sizes), PyTorch's rules. */
function targetSize(input: Tensor, o: InterpolateOptions, mode: InterpolateMode): { size: number[]; scales: (number | null)[] } {
  const dims = input.ndim - 2;
  if (o.size != null && o.scaleFactor != null) throw new ValueError('interpolate(): only one of size or scaleFactor should be defined');
  if (o.size != null) {
    if (o.recomputeScaleFactor) throw new ValueError('interpolate(): recomputeScaleFactor is not meaningful with an explicit size.');
    const size = perDim(o.size, dims, input, 'output size');
    if (size.some((s) => !Number.isInteger(s))) throw new ValueError(`interpolate(): size must be integers, got ${JSON.stringify(o.size)}`);
    return { size, scales: size.map(() => null) };
  }
  if (o.scaleFactor == null) throw new ValueError('interpolate(): either size or scaleFactor should be defined');
  const factors = perDim(o.scaleFactor, dims, input, 'scaleFactor');
  if (factors.some((f) => typeof f !== 'number' || !Number.isFinite(f))) throw new ValueError(`interpolate(): scaleFactor must be finite numbers, got ${JSON.stringify(o.scaleFactor)}`);
  const size = factors.map((f, i) => Math.floor(input.shape[2 + i]! * f));
  // 'area' is adaptive average pooling, which knows only sizes.
  const recompute = o.recomputeScaleFactor === true || mode === 'area';
  return { size, scales: recompute ? size.map(() => null) : factors };
}

/**
 * Resize the spatial dims of a [N, C, W], [N, C, H, W] or [N, C, D, H, W] input, PyTorch 1.13's
 * `interpolate(input, size, scaleFactor, mode, alignCorners, recomputeScaleFactor, antialias)`:
 * give the output `size` or a `scaleFactor` (the size rounds down; the kernels sample with
 * 1/scaleFactor unless recomputeScaleFactor). 'nearest' reads input ⌊dst·scale⌋, 'nearest-exact'
 * ⌊(dst + ½)·scale⌋; linear modes interpolate between pixel centres (alignCorners: between corner
 * pixels); 'area' averages adaptive windows. Autocast: float32 on CUDA, like PyTorch's upsample ops.
 */
export function interpolate(
  input: Tensor,
  ...args: Args<[
    size: number | readonly number[] | null, scaleFactor: number | readonly number[] | null, mode: InterpolateMode,
    alignCorners: boolean | null, recomputeScaleFactor: boolean | null, antialias: boolean,
  ], InterpolateOptions>
): Tensor {
  const o = bindArgs<InterpolateOptions>('interpolate', ['size', 'scaleFactor', 'mode', 'alignCorners', 'recomputeScaleFactor', 'antialias'], args);
  checkTensor(input, 'input', 'interpolate');
  const mode = o.mode ?? 'nearest';
  const modes = Object.keys(MODE_RANK).join(' | ');
  if (!Object.keys(MODE_RANK).includes(mode)) throw new ValueError(`interpolate(): unknown mode ${JSON.stringify(mode)}; use one of ${modes}`);
  if (input.ndim < 3 || input.ndim > 5) {
    throw new ShapeError(`interpolate(): Input Error: Only 3D, 4D and 5D input Tensors supported (got ${input.ndim}D) for the modes: ${modes} (got ${mode})`, 'interpolate');
  }
  const rank = MODE_RANK[mode];
  if (rank !== null && input.ndim !== rank) throw new ShapeError(`interpolate(): Got ${input.ndim}D input, but ${mode} mode needs ${rank}D input`, 'interpolate');
  if (o.alignCorners != null && !ALIGNABLE.includes(mode)) {
    throw new ValueError(`interpolate(): alignCorners option can only be set with the interpolating modes: ${ALIGNABLE.join(' | ')}`);
  }
  if (o.antialias) throw new ValueError('interpolate(): antialias is not supported; resize with antialias: false (an avgPool2d before a downsampling resize smooths it)');
  const { size, scales } = targetSize(input, o, mode);
  checkFloating(input, 'input', 'interpolate');
  const spatial = input.shape.slice(2);
  if (spatial.some((s) => s <= 0) || size.some((s) => s <= 0)) {
    const names = SPATIAL_NAMES.slice(3 - spatial.length);
    const text = (sizes: readonly number[]) => `(${sizes.map((s, i) => `${names[i]}: ${s}`).join(', ')})`;
    throw new ShapeError(`interpolate(): Input and output sizes should be greater than 0, but got input ${text(spatial)} output ${text(size)}`, 'interpolate');
  }
  if (mode === 'area') return adaptiveAvgPoolNd(input, size, 'interpolate');
  if (input.numel() === 0) {
    throw new ShapeError(`interpolate(): Non-empty ${input.ndim}D data tensor expected but got a tensor with sizes ${shapeText(input.shape)}`, 'interpolate');
  }
  return autocastOp('interpolate', [input] as const, (x) => resample(x, mode, size, scales, o.alignCorners ?? false));
}

/** Check a pixel shuffle's factor and rank. */
function checkShuffle(op: string, input: Tensor, factor: number, name: string): void {
  checkTensor(input, 'input', op);
  if (!Number.isInteger(factor) || factor <= 0) throw new ValueError(`${op}(): expects a positive ${name} (an integer), but got ${factor}`);
  if (input.ndim < 3) throw new ShapeError(`${op}(): expects input to have at least 3 dimensions, but got input with ${input.ndim} dimension(s)`, op);
}

/**
 * Rearrange [*, C·r², H, W] into [*, C, H·r, W·r]: channel c·r² + i·r + j becomes pixel
 * (h·r + i, w·r + j) of channel c (sub-pixel convolution's upsampling). `pixelShuffle(input, upscaleFactor)`.
 */
export function pixelShuffle(input: Tensor, upscaleFactor: number): Tensor {
  const r = upscaleFactor;
  checkShuffle('pixelShuffle', input, r, 'upscaleFactor');
  const batch = input.shape.slice(0, -3);
  const [c, h, w] = input.shape.slice(-3) as [number, number, number];
  if (c % (r * r) !== 0) {
    throw new ShapeError(
      `pixelShuffle(): expects its input's 'channel' dimension to be divisible by the square of upscaleFactor, but input.size(-3)=${c} is not divisible by ${r * r}`,
      'pixelShuffle',
    );
  }
  const b = batch.length;
  return input
    .reshape([...batch, c / (r * r), r, r, h, w])
    .permute([...batch.keys(), b, b + 3, b + 1, b + 4, b + 2])
    .reshape([...batch, c / (r * r), h * r, w * r]);
}

/** pixelShuffle's inverse: [*, C, H·r, W·r] into [*, C·r², H, W]. `pixelUnshuffle(input, downscaleFactor)`. */
export function pixelUnshuffle(input: Tensor, downscaleFactor: number): Tensor {
  const r = downscaleFactor;
  checkShuffle('pixelUnshuffle', input, r, 'downscaleFactor');
  const batch = input.shape.slice(0, -3);
  const [c, h, w] = input.shape.slice(-3) as [number, number, number];
  for (const [name, size, dim] of [['height', h, -2], ['width', w, -1]] as const) {
    if (size % r !== 0) {
      throw new ShapeError(`pixelUnshuffle(): expects ${name} to be divisible by downscaleFactor, but input.size(${dim})=${size} is not divisible by ${r}`, 'pixelUnshuffle');
    }
  }
  const b = batch.length;
  return input
    .reshape([...batch, c, h / r, r, w / r, r])
    .permute([...batch.keys(), b, b + 2, b + 4, b + 1, b + 3])
    .reshape([...batch, c * r * r, h / r, w / r]);
}
