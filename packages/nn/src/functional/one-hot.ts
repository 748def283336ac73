// F.oneHot: int32 class indices to rows with a 1 at each index (PyTorch's int64 result is int32
// here, the library's index dtype). Without numClasses the class count is the largest index + 1, a
// value the output's shape depends on, so the synchronous form needs a device with synchronous
// reads and F.oneHotAsync works everywhere (API.md, data-dependent shapes). The range checks read
// only the smallest and largest index, where they can be read without awaiting.
import { arange, DTypeError, getBackend, int32, stack, TensorError, ValueError, valuesNow, type Tensor } from '@core/tensor';
import { checkTensor } from '../internal/args.js';

const OP = 'oneHot';

/** [smallest, largest] index, as a 2-element tensor to read in one transfer. */
function extremes(input: Tensor): Tensor {
  return stack([input.amin(), input.amax()]);
}

function checkArguments(input: Tensor, numClasses: number): void {
  checkTensor(input, 'tensor', OP);
  if (input.dtype !== int32) {
    throw new DTypeError(`${OP}(): one_hot is only applicable to index tensor: expected int32 class indices, got ${input.dtype.name}; convert with tensor.int()`, OP, input.dtype.name);
  }
  if (!Number.isInteger(numClasses)) throw new TypeError(`${OP}(): argument 'numClasses' must be an integer, got ${String(numClasses)}`);
}

/** The one-hot rows, after the checks `range` ([min, max], or null where unread) allows. */
function encode(input: Tensor, numClasses: number, range: ArrayLike<number> | null): Tensor {
  if (input.numel() === 0 && numClasses <= 0) {
    throw new ValueError(`${OP}(): Can not infer total number of classes from empty tensor. Pass numClasses (a positive integer) for an empty input of shape [${input.shape.join(', ')}]`);
  }
  if (range && input.numel() > 0 && range[0]! < 0) {
    throw new ValueError(`${OP}(): Class values must be non-negative. Found ${range[0]}`);
  }
  // Any index is ≥ 0, so a count below 1 is too small whatever the values (PyTorch's CUDA check).
  const tooSmall = numClasses !== -1 && input.numel() > 0 && (numClasses < 1 || (range !== null && range[1]! >= numClasses));
  if (tooSmall) {
    throw new ValueError(`${OP}(): Class values must be smaller than num_classes. Got numClasses=${numClasses}${range ? ` but the largest class value is ${range[1]}` : ''}`);
  }
  const classes = numClasses === -1 ? range![1]! + 1 : numClasses;
  return input.unsqueeze(-1).eq(arange(classes, { dtype: int32, device: input.device })).to(int32);
}

/**
 * PyTorch's `F.one_hot`: for int32 class indices of any shape, an int32 tensor of shape
 * `[...tensor.shape, numClasses]` with a 1 at each index and 0 elsewhere. `numClasses = -1` (the
 * default) uses the largest index + 1; that reads the values, so on a device without synchronous
 * reads it throws a TensorError naming `F.oneHotAsync`. Negative indices, or indices ≥ numClasses,
 * are ValueErrors where the indices can be read synchronously (on other devices such an index gives
 * a row of zeros).
 */
export function oneHot(tensor: Tensor, numClasses = -1): Tensor {
  checkArguments(tensor, numClasses);
  if (tensor.numel() === 0) return encode(tensor, numClasses, null);
  const readable = getBackend(tensor.device.type).readSync !== undefined;
  if (!readable) {
    if (numClasses === -1) {
      throw new TensorError(
        `${OP}(): numClasses=-1 needs the largest class value, and tensors on ${tensor.device} have no synchronous reads: use \`await F.oneHotAsync(tensor)\`, or pass numClasses`,
      );
    }
    return encode(tensor, numClasses, null);
  }
  return encode(tensor, numClasses, valuesNow(extremes(tensor)));
}

/** `F.oneHot` on any device: reads the smallest and largest index with `await`, then checks them as the synchronous form does. */
export async function oneHotAsync(tensor: Tensor, numClasses = -1): Promise<Tensor> {
  checkArguments(tensor, numClasses);
  if (tensor.numel() === 0) return encode(tensor, numClasses, null);
  return encode(tensor, numClasses, await extremes(tensor).data());
}
