// F.unfold (im2col): the sliding blocks of a batched image as columns; F.fold (col2im): columns
// summed back into an image, where overlapping blocks add up. fold(unfold(x)) is x times how many
// blocks cover each pixel.
import { pad, ShapeError, type Tensor } from '@core/tensor';
import { bindArgs, checkFloating, checkTensor, pair, shapeText, type Args, type Pair } from '../internal/args.js';
import { accumulatingInFloat32, convOutputSize, overlapAdd, windowColumns, type WindowGeometry } from './windows.js';

/** unfold's and fold's options after the kernel size (PyTorch's keyword arguments). */
export interface UnfoldOptions {
  /** Spacing between the elements of a block (default 1). */
  readonly dilation?: Pair;
  /** Zeros added on both sides of the image before taking blocks (default 0). */
  readonly padding?: Pair;
  /** The step between blocks (default 1). */
  readonly stride?: Pair;
}

/** The blocks' sizes, checked, and their text for error messages. */
export interface BlockGeometry {
  readonly kernel: [number, number];
  readonly dilation: [number, number];
  readonly padding: [number, number];
  readonly stride: [number, number];
}

/** The kernel size and options of unfold, fold, nn.Unfold and nn.Fold, checked. */
export function blockGeometry(op: string, kernelSize: Pair, { dilation = 1, padding = 0, stride = 1 }: UnfoldOptions): BlockGeometry {
  return {
    kernel: pair(kernelSize, 'kernelSize', op, 1),
    dilation: pair(dilation, 'dilation', op, 1),
    padding: pair(padding, 'padding', op, 0),
    stride: pair(stride, 'stride', op, 1),
  };
}

const sizeText = ([h, w]: readonly number[]): string => `(${h}, ${w})`;

/** How many blocks fit along height and width into `size` (padding added). */
function blocksIn(size: readonly number[], g: BlockGeometry): [number, number] {
  return [0, 1].map((i) => convOutputSize(size[i]! + 2 * g.padding[i]!, g.kernel[i]!, g.stride[i]!, g.dilation[i]!)) as [number, number];
}

function windowsOf(g: BlockGeometry, out: [number, number]): WindowGeometry {
  return { kernel: g.kernel, stride: g.stride, dilation: g.dilation, out };
}

/**
 * im2col: the sliding blocks of [N, C, H, W] (or [C, H, W]) input as columns, [N, C·kH·kW, L]
 * (or [C·kH·kW, L]) with L blocks, rows in (channel, kernel row, kernel column) order. PyTorch's
 * positional order `unfold(input, kernelSize, dilation, padding, stride)`, or the options by name.
 */
export function unfold(input: Tensor, kernelSize: Pair, ...args: Args<[dilation: Pair, padding: Pair, stride: Pair], UnfoldOptions>): Tensor {
  const g = blockGeometry('unfold', kernelSize, bindArgs<UnfoldOptions>('unfold', ['dilation', 'padding', 'stride'], args));
  checkTensor(input, 'input', 'unfold');
  checkFloating(input, 'input', 'unfold');
  if ((input.ndim !== 3 && input.ndim !== 4) || input.shape.slice(-3).includes(0)) {
    throw new ShapeError(`unfold(): Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ${shapeText(input.shape)}`, 'unfold');
  }
  const size = input.shape.slice(-2);
  const out = blocksIn(size, g);
  if (out.some((n) => n < 1)) {
    throw new ShapeError(
      `unfold(): Given input with spatial size ${sizeText(size)}, kernelSize=${sizeText(g.kernel)}, dilation=${sizeText(g.dilation)}, padding=${sizeText(g.padding)}, ` +
        `calculated shape of the array of sliding blocks as ${sizeText(out)}, but its components must be at least one.`,
      'unfold',
    );
  }
  const x = input.ndim === 4 ? input : input.unsqueeze(0);
  const [ph, pw] = g.padding;
  const cols = windowColumns(ph + pw > 0 ? pad(x, [pw, pw, ph, ph]) : x, windowsOf(g, out));
  return input.ndim === 4 ? cols : cols.squeeze(0);
}

/**
 * col2im: columns [N, C·kH·kW, L] (or [C·kH·kW, L]) summed into an image [N, C, ...outputSize]
 * (or [C, ...outputSize]) at their blocks' places; where blocks overlap, their values add up (the
 * adjoint of `unfold`). PyTorch's positional order `fold(input, outputSize, kernelSize, dilation,
 * padding, stride)`, or the options by name.
 */
export function fold(input: Tensor, outputSize: Pair, kernelSize: Pair, ...args: Args<[dilation: Pair, padding: Pair, stride: Pair], UnfoldOptions>): Tensor {
  const g = blockGeometry('fold', kernelSize, bindArgs<UnfoldOptions>('fold', ['dilation', 'padding', 'stride'], args));
  const size = pair(outputSize, 'outputSize', 'fold', 1);
  checkTensor(input, 'input', 'fold');
  checkFloating(input, 'input', 'fold');
  if ((input.ndim !== 2 && input.ndim !== 3) || input.shape.slice(-2).includes(0)) {
    throw new ShapeError(`fold(): Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: ${shapeText(input.shape)}`, 'fold');
  }
  const [rows, L] = input.shape.slice(-2) as [number, number];
  const [kh, kw] = g.kernel;
  if (rows % (kh * kw) !== 0) {
    throw new ShapeError(`fold(): Expected size of input's dimension ${input.ndim - 2} to be divisible by the product of kernelSize, but got input.size(${input.ndim - 2})=${rows} and kernelSize=${sizeText(g.kernel)}.`, 'fold');
  }
  const out = blocksIn(size, g);
  if (out.some((n) => n < 1) || out[0] * out[1] !== L) {
    throw new ShapeError(
      `fold(): Given outputSize=${sizeText(size)}, kernelSize=${sizeText(g.kernel)}, dilation=${sizeText(g.dilation)}, padding=${sizeText(g.padding)}, stride=${sizeText(g.stride)}, ` +
        `expected size of input's dimension ${input.ndim - 1} to match the calculated number of sliding blocks ${out[0]} * ${out[1]} = ${out[0] * out[1]}, but got input.size(${input.ndim - 1})=${L}.`,
      'fold',
    );
  }
  const [ph, pw] = g.padding;
  const y = accumulatingInFloat32('fold', [input.ndim === 3 ? input : input.unsqueeze(0)] as const, (cols) => {
    const full = overlapAdd(cols, windowsOf(g, out), [size[0] + 2 * ph, size[1] + 2 * pw]);
    return ph + pw > 0 ? full.narrow(2, ph, size[0]).narrow(3, pw, size[1]) : full;
  });
  return input.ndim === 3 ? y : y.squeeze(0);
}
