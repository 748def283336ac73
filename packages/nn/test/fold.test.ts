// F.unfold (im2col), F.fold (col2im), nn.Unfold and nn.Fold: values and gradients against PyTorch
// 1.13 (conv-references.ts), fold∘unfold identities, the adjoint pair, conv2d as unfold + matmul,
// gradcheck in float64, half types, empty batches and PyTorch's errors.
import { describe, expect, it } from 'vitest';
import { float16, ones, ShapeError, ValueError, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectMatchesTorch, FOLD_REF } from './conv-references.js';
import { expectClose, expectGradcheck, leaf, uniform, values } from './helpers.js';

/** Σ a·b over all elements. */
const dot = (a: Tensor, b: Tensor): number => values(a.mul(b).sum())[0]!;

describe('F.unfold and F.fold against PyTorch 1.13 (float64 to 1e-9, float32 to 1e-5)', () => {
  it('unfold: kernel [2, 3], dilation [2, 1], padding 1, stride [2, 3]', () => {
    expectMatchesTorch(FOLD_REF.unfoldStrided, (x) => F.unfold(x!, [2, 3], [2, 1], 1, [2, 3]));
  });
  it('unfold: unbatched [C, H, W], kernel 3, padding 1', () => {
    expectMatchesTorch(FOLD_REF.unfoldUnbatched, (x) => F.unfold(x!, 3, { padding: 1 }));
  });
  it('fold: overlapping 3×3 blocks, padding 1 (the blocks sum where they meet)', () => {
    expectMatchesTorch(FOLD_REF.foldOverlapping, (x) => F.fold(x!, [4, 5], 3, { padding: 1 }));
  });
  it('fold: kernel [2, 3], dilation [2, 1], padding 1, stride [2, 3]', () => {
    expectMatchesTorch(FOLD_REF.foldStrided, (x) => F.fold(x!, [6, 7], [2, 3], [2, 1], 1, [2, 3]));
  });
  it('fold: unbatched [C·kH·kW, L], stride [1, 2]', () => {
    expectMatchesTorch(FOLD_REF.foldUnbatched, (x) => F.fold(x!, [5, 4], 2, { stride: [1, 2] }));
  });
});

describe('identities', () => {
  it('fold(unfold(x)) = x where the blocks tile the image', () => {
    const x = uniform([2, 3, 6, 8], 1);
    expect(values(F.fold(F.unfold(x, [3, 2], { stride: [3, 2] }), [6, 8], [3, 2], { stride: [3, 2] }))).toEqual(values(x));
  });

  it('fold(unfold(x)) = x · fold(unfold(ones)), the number of blocks covering each pixel, where blocks overlap', () => {
    const x = uniform([2, 3, 7, 6], 2);
    const options = { dilation: [1, 2] as [number, number], padding: 1, stride: [2, 1] as [number, number] };
    const cover = F.fold(F.unfold(ones(x.shape).double(), 3, options), [7, 6], 3, options);
    expectClose(F.fold(F.unfold(x, 3, options), [7, 6], 3, options), x.mul(cover), 1e-12);
    // the centre of a 3×3 stride-1 cover is covered 9 times
    expect(values(F.fold(F.unfold(ones([1, 1, 5, 5]), 3), 5, 3)).slice(10, 15)).toEqual([3, 6, 9, 6, 3]);
  });

  it('fold is the adjoint of unfold: <unfold(x), c> = <x, fold(c)>, so each is the gradient of the other', () => {
    const x = uniform([2, 2, 6, 5], 3).requiresGrad_();
    const cols = F.unfold(x, [2, 3], { padding: [1, 0], dilation: [2, 1], stride: [1, 2] });
    const c = uniform(cols.shape, 4);
    const back = F.fold(c, [6, 5], [2, 3], { padding: [1, 0], dilation: [2, 1], stride: [1, 2] });
    expect(dot(cols, c)).toBeCloseTo(dot(x, back), 11);
    cols.backward(c);
    expectClose(x.grad!, back, 1e-12);
  });

  it('conv2d = the weight times unfold(x) (the example of PyTorch\'s nn.Unfold documentation)', () => {
    const x = uniform([2, 3, 6, 7], 5);
    const w = uniform([4, 3, 3, 2], 6);
    const viaUnfold = w.reshape([4, -1]).matmul(F.unfold(x, [3, 2], { padding: 1, stride: 2 })).reshape([2, 4, 3, 4]);
    expectClose(viaUnfold, F.conv2d(x, w, null, { padding: 1, stride: 2 }), 1e-12);
  });
});

describe('gradcheck in float64', () => {
  it('unfold (kernel [2, 3], dilation [2, 1], padding 1, stride [1, 2])', () => {
    expectGradcheck((x) => F.unfold(x!, [2, 3], [2, 1], 1, [1, 2]), [leaf([1, 2, 5, 5], 10)]);
  });
  it('fold with overlapping blocks (kernel 2, stride 1, padding [1, 0])', () => {
    expectGradcheck((c) => F.fold(c!, [3, 4], 2, { padding: [1, 0] }), [leaf([2, 8, 12], 11)]);
  });
});

describe('dtypes and empty batches', () => {
  it('fold of float16 sums overlapping blocks in float32 and rounds once', () => {
    const c = uniform([1, 18, 16], 20).to(float16);
    const y = F.fold(c, 6, 3);
    expect(y.dtype).toBe(float16);
    expect(values(y)).toEqual(values(F.fold(c.float(), 6, 3).to(float16)));
  });

  it('a batch of 0 gives an empty result of the right shape', () => {
    expect(F.unfold(zeros([0, 3, 5, 5]), 2).shape).toEqual([0, 12, 16]);
    expect(F.fold(zeros([0, 12, 16]), 5, 2).shape).toEqual([0, 3, 5, 5]);
  });
});

describe("PyTorch's errors, as typed errors", () => {
  it('unfold: ranks, empty dims, too-small inputs, integer input and bad sizes', () => {
    expect(() => F.unfold(zeros([5, 5]), 2)).toThrow(
      new ShapeError('unfold(): Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: [5, 5]', 'unfold'),
    );
    expect(() => F.unfold(zeros([1, 0, 5, 5]), 2)).toThrow('other non-zero dimensions for input, but got: [1, 0, 5, 5]');
    expect(() => F.unfold(zeros([2, 3, 5, 5]), 6)).toThrow(
      'unfold(): Given input with spatial size (5, 5), kernelSize=(6, 6), dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding blocks as (0, 0), but its components must be at least one.',
    );
    expect(() => F.unfold(zeros([1, 1, 4, 4]).int(), 2)).toThrow('expected a floating point input');
    expect(() => F.unfold(zeros([1, 1, 4, 4]), 0)).toThrow(new ValueError('unfold: kernelSize must be an integer ≥ 1 or a pair of them, got 0'));
    expect(() => F.unfold(zeros([1, 1, 4, 4]), 2, { stride: 0 })).toThrow('unfold: stride must be an integer ≥ 1');
    expect(() => F.unfold(zeros([1, 1, 4, 4]), 2, { padding: -1 })).toThrow('unfold: padding must be an integer ≥ 0');
    expect(() => F.unfold(zeros([1, 1, 4, 4]), 2, { kernelSize: 2 } as never)).toThrow("unfold() got an unexpected keyword argument 'kernelSize'");
  });

  it('fold: ranks, rows not divisible by the kernel, a block count that does not match', () => {
    expect(() => F.fold(zeros([1, 2, 12, 16]), 5, 2)).toThrow(
      new ShapeError('fold(): Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: [1, 2, 12, 16]', 'fold'),
    );
    expect(() => F.fold(zeros([2, 11, 16]), 5, 2)).toThrow(
      "fold(): Expected size of input's dimension 1 to be divisible by the product of kernelSize, but got input.size(1)=11 and kernelSize=(2, 2).",
    );
    expect(() => F.fold(zeros([2, 12, 15]), 5, 2)).toThrow(
      "fold(): Given outputSize=(5, 5), kernelSize=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size of input's dimension 2 to match the calculated number of sliding blocks 4 * 4 = 16, but got input.size(2)=15.",
    );
    expect(() => F.fold(zeros([12, 15]), [1, 1], 2)).toThrow('sliding blocks 0 * 0 = 0, but got input.size(1)=15.');
    expect(() => F.fold(zeros([2, 12, 16]), [0, 5], 2)).toThrow('fold: outputSize must be an integer ≥ 1 or a pair of them, got [0,5]');
  });
});

describe('nn.Unfold and nn.Fold', () => {
  it("PyTorch's order: new nn.Unfold(kernelSize, dilation, padding, stride), new nn.Fold(outputSize, kernelSize, dilation, padding, stride), or by name", () => {
    const x = uniform([2, 3, 6, 7], 30);
    const unfold = new nn.Unfold([2, 3], 1, 1, 2);
    expect([unfold.kernelSize, unfold.dilation, unfold.padding, unfold.stride]).toEqual([[2, 3], [1, 1], [1, 1], [2, 2]]);
    const cols = unfold.forward(x);
    expect(values(cols)).toEqual(values(F.unfold(x, [2, 3], { padding: 1, stride: 2 })));
    const fold = new nn.Fold([6, 7], [2, 3], { padding: 1, stride: 2 });
    expect(values(fold.forward(cols))).toEqual(values(F.fold(cols, [6, 7], [2, 3], 1, 1, 2)));
    expect(fold.toString()).toBe('Fold(outputSize=[6,7], kernelSize=[2,3], dilation=[1,1], padding=[1,1], stride=[2,2])');
    expect(unfold.toString()).toBe('Unfold(kernelSize=[2,3], dilation=[1,1], padding=[1,1], stride=[2,2])');
    expect(unfold.parameters()).toEqual([]);
  });

  it('checks its sizes when built', () => {
    expect(() => new nn.Unfold(0)).toThrow('Unfold: kernelSize must be an integer ≥ 1 or a pair of them, got 0');
    expect(() => new nn.Fold(4, 2, { stride: 0 })).toThrow('Fold: stride must be an integer ≥ 1');
    expect(() => new nn.Fold([4, 4, 4] as never, 2)).toThrow('Fold: outputSize must be an integer ≥ 1 or a pair of them');
    expect(() => new nn.Fold(4, 2, 1, 0, 1, 5 as never)).toThrow('Fold() takes at most 3 positional arguments');
  });
});
