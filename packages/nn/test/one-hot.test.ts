// F.oneHot and F.oneHotAsync: values against PyTorch 1.13 (reference/rnn_ctc_reference.py; int32
// here where PyTorch gives int64), shapes, PyTorch's errors, and the async form on a device
// without synchronous reads.
import { describe, expect, it } from 'vitest';
import { DTypeError, float32, int32, tensor, TensorError, ValueError, zeros } from '@core/tensor';
import { F } from '../src/index.js';
import { numbers } from './reference/rnn-ctc-reference.js';
import { NO_SYNC } from './no-sync-device.js';

const indices = (values: number[] | number[][] | number) => tensor(values, { dtype: int32 });

describe('F.oneHot', () => {
  it('numClasses = -1 uses the largest index + 1 (PyTorch: F.one_hot(torch.tensor([[0, 2], [3, 1]])))', () => {
    const out = F.oneHot(indices([[0, 2], [3, 1]]));
    expect(out.dtype).toBe(int32);
    expect(out.shape).toEqual([2, 2, 4]);
    expect(Array.from(out.dataSync())).toEqual(numbers('onehot', 'y'));
  });

  it('a given numClasses sets the last dim (PyTorch: F.one_hot(torch.tensor([0, 2, 3, 1]), 5))', () => {
    const out = F.oneHot(indices([0, 2, 3, 1]), 5);
    expect(out.shape).toEqual([4, 5]);
    expect(Array.from(out.dataSync())).toEqual(numbers('onehot', 'y5'));
  });

  it('a 0-dim index gives one row; an empty input needs numClasses', () => {
    expect(F.oneHot(indices(2), 4).dataSync()).toEqual(new Int32Array([0, 0, 1, 0]));
    expect(F.oneHot(zeros([0, 2], { dtype: int32 }), 3).shape).toEqual([0, 2, 3]);
    expect(() => F.oneHot(zeros([0], { dtype: int32 }))).toThrow('Can not infer total number of classes from empty tensor.');
    expect(() => F.oneHot(zeros([0], { dtype: int32 }), 0)).toThrow(ValueError);
  });

  it("rejects what PyTorch does, with PyTorch's messages", () => {
    expect(() => F.oneHot(tensor([1], { dtype: float32 }))).toThrow(DTypeError);
    expect(() => F.oneHot(tensor([1], { dtype: float32 }))).toThrow('one_hot is only applicable to index tensor');
    expect(() => F.oneHot(indices([-1, 2]))).toThrow('Class values must be non-negative. Found -1');
    expect(() => F.oneHot(indices([-1, 2]), 4)).toThrow('Class values must be non-negative.');
    expect(() => F.oneHot(indices([1, 3]), 3)).toThrow('Class values must be smaller than num_classes. Got numClasses=3 but the largest class value is 3');
    expect(() => F.oneHot(indices([1, 2]), 0)).toThrow('Class values must be smaller than num_classes.');
    expect(() => F.oneHot(indices([1, 2]), -2)).toThrow(ValueError);
    expect(() => F.oneHot(indices([1, 2]), 2.5)).toThrow(TypeError);
  });
});

describe('F.oneHotAsync and devices without synchronous reads', () => {
  it('oneHotAsync gives what oneHot gives, and checks the same', async () => {
    const out = await F.oneHotAsync(indices([[0, 2], [3, 1]]));
    expect(Array.from(out.dataSync())).toEqual(numbers('onehot', 'y'));
    await expect(F.oneHotAsync(indices([1, 3]), 3)).rejects.toThrow('Class values must be smaller than num_classes.');
  });

  it('the sync form needs numClasses there, and names the async form', async () => {
    const x = indices([0, 2, 3, 1]).to(NO_SYNC);
    expect(() => F.oneHot(x)).toThrow(TensorError);
    expect(() => F.oneHot(x)).toThrow('use `await F.oneHotAsync(tensor)`, or pass numClasses');
    expect(((await F.oneHot(x, 5).toArray()) as number[][]).flat()).toEqual(numbers('onehot', 'y5'));
    const out = await F.oneHotAsync(x);
    expect(out.device.type).toBe(NO_SYNC);
    expect(out.shape).toEqual([4, 4]);
    await expect(F.oneHotAsync(indices([-3, 1]).to(NO_SYNC), 4)).rejects.toThrow('Class values must be non-negative.');
  });
});
