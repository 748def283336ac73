// The convolutions as decompositions that autograd differentiates. conv1d/conv2d: im2col (an
// asStrided view copied into a [N, groups, C/groups·k, L] matrix) times the weight viewed as
// [groups, O/groups, C/groups·k], one batched matmul. convTranspose1d/2d, the gradient of a
// convolution with respect to its input: the weight's transpose times the input gives each input
// pixel's contribution to every kernel position (columns), and col2im sums them into the output.
// 1-D convolutions are 2-D ones over a height of 1.
import { autocastOp, checkCompute, checkSameDevice, matmulInFloat32, pad, releaseWithGraph, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkRank, checkTensor, shapeText, type Args, type Pair } from '../internal/args.js';
import { checkSameDType, isHalf } from './linear.js';
import { checkOutputSize, convOutputSize, overlapAdd, overlappingWindows, slidingWindows, spatialSizes, tiles } from './windows.js';

/** A 1-D size: one number, or a list of one (PyTorch's `_single`). */
export type Single = number | readonly [number];

/** conv2d padding: zeros on each side (one number or [h, w]), 'valid' (none) or 'same' (keep the size). */
export type Conv2dPadding = Pair | 'valid' | 'same';

/** conv1d padding: zeros on each side, 'valid' (none) or 'same' (keep the length). */
export type Conv1dPadding = Single | 'valid' | 'same';

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

/** conv1d's options (PyTorch's keyword arguments). */
export interface Conv1dOptions {
  /** The window step (default 1). */
  readonly stride?: Single;
  /** Zeros added on both ends, `'valid'` (none) or `'same'` (output length = input length; stride 1). */
  readonly padding?: Conv1dPadding;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Single;
  /** Split input and output channels into this many independent groups (default 1). */
  readonly groups?: number;
}

/** convTranspose2d's options (PyTorch's keyword arguments). */
export interface ConvTranspose2dOptions {
  /** The step between the input pixels' windows in the output (default 1). */
  readonly stride?: Pair;
  /** `dilation·(kernelSize − 1) − padding` zeros of implicit padding: cuts `padding` from both sides of the output (default 0). */
  readonly padding?: Pair;
  /** Extra size added to one side (the end) of the output, below max(stride, dilation) (default 0). */
  readonly outputPadding?: Pair;
  /** Split input and output channels into this many independent groups (default 1). */
  readonly groups?: number;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Pair;
}

/** convTranspose1d's options (PyTorch's keyword arguments). */
export interface ConvTranspose1dOptions {
  /** The step between the input elements' windows in the output (default 1). */
  readonly stride?: Single;
  /** Cuts `padding` from both ends of the output (default 0). */
  readonly padding?: Single;
  /** Extra length added at the end of the output, below max(stride, dilation) (default 0). */
  readonly outputPadding?: Single;
  /** Split input and output channels into this many independent groups (default 1). */
  readonly groups?: number;
  /** Spacing between kernel elements (default 1). */
  readonly dilation?: Single;
}

/** The parameters after the weight, by name: the options and the bias. */
type WithBias<O> = O & { readonly bias?: Tensor | null };
type ConvOp = 'conv1d' | 'conv2d' | 'convTranspose1d' | 'convTranspose2d';
type AnyConvOptions = Conv1dOptions | Conv2dOptions;
type AnyTransposeOptions = ConvTranspose1dOptions | ConvTranspose2dOptions;

/**
 * 1-D convolution (cross-correlation, like PyTorch) of [N, C, L] or [C, L] input with weight
 * [outChannels, C/groups, kW], with PyTorch's positional order
 * `conv1d(input, weight, bias, stride, padding, dilation, groups)`, or any of them by name in a
 * trailing object. Autocast: lower precision (AC-8).
 */
export function conv1d(input: Tensor, weight: Tensor, ...args: Args<[bias: Tensor | null, stride: Single, padding: Conv1dPadding, dilation: Single, groups: number], WithBias<Conv1dOptions>>): Tensor {
  const { bias, ...options } = bindArgs<WithBias<Conv1dOptions>>('conv1d', ['bias', 'stride', 'padding', 'dilation', 'groups'], args);
  return autocastOp('conv1d', [input, weight, bias] as const, (x, w, b) => convolution('conv1d', 1, x, w, b, options));
}

/**
 * 2-D convolution (cross-correlation, like PyTorch) of [N, C, H, W] or [C, H, W] input, with
 * PyTorch's positional order `conv2d(input, weight, bias, stride, padding, dilation, groups)`, or
 * any of them by name in a trailing object. Autocast: lower precision (AC-8).
 */
export function conv2d(input: Tensor, weight: Tensor, ...args: Args<[bias: Tensor | null, stride: Pair, padding: Conv2dPadding, dilation: Pair, groups: number], WithBias<Conv2dOptions>>): Tensor {
  const { bias, ...options } = bindArgs<WithBias<Conv2dOptions>>('conv2d', ['bias', 'stride', 'padding', 'dilation', 'groups'], args);
  return autocastOp('conv2d', [input, weight, bias] as const, (x, w, b) => convolution('conv2d', 2, x, w, b, options));
}

/**
 * 1-D transposed convolution (the gradient of conv1d with respect to its input) of [N, C, L] or
 * [C, L] input with weight [C, outChannels/groups, kW], with PyTorch's positional order
 * `convTranspose1d(input, weight, bias, stride, padding, outputPadding, groups, dilation)`, or any
 * of them by name in a trailing object. Output length `(L − 1)·stride − 2·padding +
 * dilation·(kW − 1) + outputPadding + 1`. Autocast: lower precision (AC-8).
 */
export function convTranspose1d(
  input: Tensor, weight: Tensor,
  ...args: Args<[bias: Tensor | null, stride: Single, padding: Single, outputPadding: Single, groups: number, dilation: Single], WithBias<ConvTranspose1dOptions>>
): Tensor {
  const { bias, ...options } = bindArgs<WithBias<ConvTranspose1dOptions>>('convTranspose1d', ['bias', 'stride', 'padding', 'outputPadding', 'groups', 'dilation'], args);
  return autocastOp('convTranspose1d', [input, weight, bias] as const, (x, w, b) => transposedConvolution('convTranspose1d', 1, x, w, b, options));
}

/**
 * 2-D transposed convolution (the gradient of conv2d with respect to its input; "deconvolution")
 * of [N, C, H, W] or [C, H, W] input with weight [C, outChannels/groups, kH, kW], with PyTorch's
 * positional order `convTranspose2d(input, weight, bias, stride, padding, outputPadding, groups,
 * dilation)`, or any of them by name in a trailing object. Each output size is `(in − 1)·stride −
 * 2·padding + dilation·(k − 1) + outputPadding + 1`. Autocast: lower precision (AC-8).
 */
export function convTranspose2d(
  input: Tensor, weight: Tensor,
  ...args: Args<[bias: Tensor | null, stride: Pair, padding: Pair, outputPadding: Pair, groups: number, dilation: Pair], WithBias<ConvTranspose2dOptions>>
): Tensor {
  const { bias, ...options } = bindArgs<WithBias<ConvTranspose2dOptions>>('convTranspose2d', ['bias', 'stride', 'padding', 'outputPadding', 'groups', 'dilation'], args);
  return autocastOp('convTranspose2d', [input, weight, bias] as const, (x, w, b) => transposedConvolution('convTranspose2d', 2, x, w, b, options));
}

/** [before, after] zero padding per spatial dim, from a size, 'valid' or 'same' (the odd one at the end, as PyTorch). */
export function convPadding(op: string, padding: Conv1dPadding | Conv2dPadding, kernel: readonly number[], stride: readonly number[], dilation: readonly number[]): [number, number][] {
  if (padding === 'valid') return kernel.map(() => [0, 0]);
  if (padding === 'same') {
    if (stride.some((s) => s !== 1)) throw new ValueError(`${op}(): padding='same' is not supported for strided convolutions`);
    return kernel.map((k, i) => {
      const total = dilation[i]! * (k - 1);
      return [Math.floor(total / 2), total - Math.floor(total / 2)];
    });
  }
  if (typeof padding === 'string') throw new ValueError(`${op}(): invalid padding string ${JSON.stringify(padding)}; use 'valid' or 'same'`);
  return spatialSizes(padding, kernel.length as 1 | 2, 'padding', op).map((p) => [p, p]);
}

function convolution(op: ConvOp, dims: 1 | 2, input: Tensor, weight: Tensor, bias: Tensor | null | undefined, options: AnyConvOptions): Tensor {
  const groups = checkConvTensors(op, dims, input, weight, bias, false, options.groups);
  const stride = spatialSizes(options.stride ?? 1, dims, 'stride', op, 1);
  const dilation = spatialSizes(options.dilation ?? 1, dims, 'dilation', op, 1);
  const [O, Cg, ...kernel] = weight.shape as number[] as [number, number, ...number[]];
  const padding = convPadding(op, options.padding ?? 0, kernel, stride, dilation);
  const spatial = input.shape.slice(-dims);
  const out = spatial.map((s, i) => convOutputSize(s + padding[i]![0] + padding[i]![1], kernel[i]!, stride[i]!, dilation[i]!));
  checkOutputSize(op, spatial, out, O);
  return planar(op, dims, input, weight, bias, (x, w, b, product) => {
    const [N] = x.shape as [number];
    const [, , kh, kw] = w.shape as [number, number, number, number];
    const [[top, bottom], [left, right]] = lift<readonly [number, number]>(padding, [0, 0]);
    const xp = top + bottom + left + right > 0 ? pad(x, [left, right, top, bottom]) : x;
    const [oh, ow] = lift(out, 1);
    const K = Cg * kh * kw;
    // The windows [N, C, kh, kw, oh, ow] as columns [N, groups, K, L]: a copy of the view (im2col).
    // Overlapping ones go as the view of xp they are, so their gradient is summed straight into xp's.
    const geometry = { kernel: [kh, kw], stride: lift(stride, 1), dilation: lift(dilation, 1), out: [oh, ow] } as const;
    let windows: { operand: Tensor; view?: WindowView };
    if (tiles(geometry)) windows = { operand: slidingWindows(xp, geometry, 'kernel-first') };
    else {
      const { base, size, stride: strides } = overlappingWindows(xp, geometry, 'kernel-first');
      windows = { operand: base, view: { size, stride: strides } };
    }
    // [groups, O/g, K] @ [N, groups, K, L] + bias → [N, groups, O/g, L]: one matmul per (sample, group).
    const products = product(w.reshape([groups, O / groups, K]), windows.operand, [N, groups, K, oh * ow], { bias: b?.reshape([groups, O / groups, 1]) ?? null }, windows.view);
    const y = products.reshape([N, O, oh, ow]);
    products.dispose(); // y holds the memory; what autograd keeps needs neither
    return y;
  });
}

function transposedConvolution(op: ConvOp, dims: 1 | 2, input: Tensor, weight: Tensor, bias: Tensor | null | undefined, options: AnyTransposeOptions): Tensor {
  const groups = checkConvTensors(op, dims, input, weight, bias, true, options.groups);
  const [stride, padding, outputPadding, dilation] = ([['stride', 1], ['padding', 0], ['outputPadding', 0], ['dilation', 1]] as const).map(
    ([name, fallback]) => spatialSizes(options[name] ?? fallback, dims, name, op, fallback),
  ) as [number[], number[], number[], number[]];
  if (outputPadding.some((p, i) => p >= stride[i]! && p >= dilation[i]!)) {
    throw new ValueError(`${op}(): output padding must be smaller than either stride or dilation, but got outputPadding=[${outputPadding}], stride=[${stride}], dilation=[${dilation}]`);
  }
  const [C, Og, ...kernel] = weight.shape as number[] as [number, number, ...number[]];
  const spatial = input.shape.slice(-dims);
  // The windows of the input's pixels span `reach`; the output drops `padding` at both ends and adds `outputPadding` at the end.
  const reach = spatial.map((s, i) => (s - 1) * stride[i]! + dilation[i]! * (kernel[i]! - 1) + 1 + outputPadding[i]!);
  const out = reach.map((r, i) => r - 2 * padding[i]!);
  if (out.some((s) => s <= 0)) {
    throw new ShapeError(`${op}(): Given input size per channel: (${spatial.join(' x ')}). Calculated output size per channel: (${out.join(' x ')}). Output size is too small`, op);
  }
  const O = Og * groups;
  return planar(op, dims, input, weight, bias, (x, w, b, product) => {
    const [N, , H, W] = x.shape as [number, number, number, number];
    const [, , kh, kw] = w.shape as [number, number, number, number];
    // [groups, O/g·kh·kw, C/g] @ [N, groups, C/g, H·W]: what each input pixel adds at each kernel position.
    const cols = product(w.reshape([groups, C / groups, Og * kh * kw]).transpose(1, 2), x.reshape([N, groups, C / groups, H * W]));
    const geometry = { kernel: [kh, kw], stride: lift(stride, 1), dilation: lift(dilation, 1), out: [H, W] } as const;
    const full = overlapAdd(cols.reshape([N, O * kh * kw, H * W]), geometry, lift(reach, 1));
    const [ph, pw] = lift(padding, 0);
    const [oh, ow] = lift(out, 1);
    const y = full.narrow(2, ph, oh).narrow(3, pw, ow);
    return b ? y.add(b.reshape([1, O, 1, 1])) : y;
  });
}

/** One value per spatial dim as [height, width]: 1-D ones get `height` for the height of 1 they run over. */
function lift<T>(values: readonly T[], height: T): [T, T] {
  return values.length === 1 ? [height, values[0]!] : [values[0]!, values[1]!];
}

/**
 * The matrix product of a convolution's weight and columns: `a @ b.reshape(bShape)` (no reshape
 * without bShape), or with `view`, `a @ b.asStrided(view.size, view.stride).reshape(bShape)`. With
 * `output`, the product is the convolution's result: `output.bias` added and, for the half types,
 * rounded once.
 */
type Product = (a: Tensor, b: Tensor, bShape?: readonly number[], output?: { readonly bias: Tensor | null }, view?: WindowView) => Tensor;
/** Overlapping windows of a contiguous tensor, as asStrided takes them. */
type WindowView = { readonly size: readonly number[]; readonly stride: readonly number[] };

/**
 * `fn` on batched 4-D `input` ([N, C, H, W]) and `weight`, 1-D ones over a height of 1, with the
 * result given the input's rank back. Half types keep their sums in float32 and round once at the
 * end, as PyTorch's convolutions do: the bias is widened, and the input and weight stay half for
 * `product`, a half GEMM summed in float32 where the backend has one. The input's gradient is
 * summed in float32 too (col2im of the columns' float32 gradient, in one step where the backend
 * can) and rounded once; a transposed convolution's input is the GEMM's operand as it is.
 */
function planar(op: ConvOp, dims: 1 | 2, input: Tensor, weight: Tensor, bias: Tensor | null | undefined, fn: (x: Tensor, w: Tensor, b: Tensor | null, product: Product) => Tensor): Tensor {
  const batched = input.ndim === dims + 2;
  const x = batched ? input : input.unsqueeze(0);
  const [xs, ws] = dims === 1 ? [x.unsqueeze(2), weight.unsqueeze(2)] : [x, weight];
  const dtype = input.dtype;
  let y: Tensor;
  if (isHalf(dtype) && weight.dtype === dtype && (bias == null || bias.dtype === dtype)) {
    checkCompute(op, input);
    // A convolution's product is its rounded result, whose gradient then stays 16-bit; a
    // transposed one's float32 sums are rounded after col2im and the bias.
    const sums = fn(xs, ws, bias?.float() ?? null, (a, b, bShape, output, view) =>
      matmulInFloat32(a, b, dtype, { otherShape: bShape, otherView: view, bias: output?.bias, round: output !== undefined }),
    );
    y = sums.to(dtype);
    if (y !== sums) sums.dispose(); // the float32 sums, rounded once into y, are read by nothing else
  } else {
    y = fn(xs, ws, bias ?? null, (a, b, bShape, output, view) => {
      // The columns (an im2col copy of the windows: tens of MB) go with the graph that saved them.
      const elements = view ? b.asStrided(view.size, view.stride) : b;
      const columns = bShape ? elements.reshape(bShape) : elements;
      const product = a.matmul(columns);
      if (columns !== b) releaseWithGraph(columns);
      if (!output?.bias) return product;
      // The product before its bias is read by nothing after the add (its gradient is the sum's):
      // freed now rather than left to the garbage collector.
      const biased = product.add(output.bias);
      product.dispose();
      return biased;
    });
  }
  if (dims === 1) y = y.squeeze(2);
  return batched ? y : y.squeeze(0);
}

/** The checks every convolution makes of its tensors; returns `groups`. */
function checkConvTensors(op: ConvOp, dims: 1 | 2, input: Tensor, weight: Tensor, bias: Tensor | null | undefined, transposed: boolean, groupsOption: number | undefined): number {
  checkTensor(input, 'input', op);
  checkTensor(weight, 'weight', op);
  if (bias != null) checkTensor(bias, 'bias', op);
  checkSameDevice(op, [{ name: 'weight', tensor: weight }, { name: 'bias', tensor: bias }, { name: 'input', tensor: input }]);
  checkFloating(input, 'input', op);
  checkSameDType(op, input, weight);
  checkRank(input, [dims + 1, dims + 2], `${dims + 1}D (unbatched) or ${dims + 2}D (batched) input to ${op}`, op);
  if (weight.ndim !== dims + 2) {
    const layout = transposed ? 'inChannels, outChannels/groups' : 'outChannels, inChannels/groups';
    throw new ShapeError(`${op}(): weight must be ${dims + 2}-D [${layout}, ${dims === 1 ? 'kW' : 'kH, kW'}], got ${shapeText(weight.shape)}`, op);
  }
  const groups = groupsOption ?? 1;
  if (!Number.isInteger(groups) || groups < 1) throw new ValueError(`${op}(): groups must be a positive integer, got ${groups}`);
  const [w0, w1] = weight.shape as [number, number];
  if (w0 % groups !== 0) {
    throw new ShapeError(`${op}(): Given groups=${groups}, expected weight to be divisible by ${groups} at dimension 0, but got weight of size ${shapeText(weight.shape)} instead`, op);
  }
  const batchShape = input.ndim === dims + 2 ? input.shape : [1, ...input.shape];
  const channels = transposed ? w0 : w1 * groups;
  if (batchShape[1] !== channels) {
    throw new ShapeError(
      `${op}(): Given ${transposed ? 'transposed=1' : `groups=${groups}`}, weight of size ${shapeText(weight.shape)}, expected input${shapeText(batchShape)} to have ${channels} channels, but got ${batchShape[1]} channels instead`,
      op,
    );
  }
  const outChannels = transposed ? w1 * groups : w0;
  if (bias != null && (bias.ndim !== 1 || bias.shape[0] !== outChannels)) {
    throw new ShapeError(
      `${op}(): Given ${transposed ? 'transposed=1, ' : ''}weight of size ${shapeText(weight.shape)}, expected bias to be 1-dimensional with ${outChannels} elements, but got bias of size ${shapeText(bias.shape)} instead`,
      op,
    );
  }
  return groups;
}
