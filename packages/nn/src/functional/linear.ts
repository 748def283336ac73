// F.linear: y = x·Wᵀ + b over the last dim of x.
import { bfloat16, DTypeError, float16, matmulInFloat32, ShapeError, type DType, type Tensor } from '@core/tensor';
import { checkTensor, shapeText } from '../internal/args.js';
import { checkCompute, checkSameDevice } from '@core/tensor';
import { autocastOp } from '@core/tensor';

/** Check that input and weight share a dtype, naming both fixes (matrix products never promote). */
export function checkSameDType(op: string, input: Tensor, weight: Tensor): void {
  if (input.dtype !== weight.dtype) {
    throw new DTypeError(
      `${op}(): input is ${input.dtype.name} but weight is ${weight.dtype.name}; convert the input with x.to(${weight.dtype.name}) or the model with model.to(${input.dtype.name})`,
      op,
      input.dtype.name,
    );
  }
}

/** y = x·Wᵀ + b. Autocast: lower precision for all three (AC-8). */
export function linear(input: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  return autocastOp('linear', [input, weight, bias] as const, linearImpl);
}

function linearImpl(input: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  checkTensor(input, 'input', 'linear');
  checkTensor(weight, 'weight', 'linear');
  if (bias != null) checkTensor(bias, 'bias', 'linear');
  // The model's tensors come first, so a stray batch is the one reported (SD-6).
  checkSameDevice('linear', [{ name: 'weight', tensor: weight }, { name: 'bias', tensor: bias }, { name: 'input', tensor: input }]);
  checkSameDType('linear', input, weight);
  if (weight.ndim !== 2) throw new ShapeError(`linear(): weight must be 2-D [outFeatures, inFeatures], got ${shapeText(weight.shape)}`, 'linear');
  if (input.ndim === 0) throw new ShapeError('linear(): input must have at least 1 dimension, got a 0-dim tensor', 'linear');
  const inFeatures = input.shape[input.ndim - 1]!;
  if (inFeatures !== weight.shape[1]) {
    const rows = input.shape.slice(0, -1).reduce((a, b) => a * b, 1);
    throw new ShapeError(
      `linear(): mat1 and mat2 shapes cannot be multiplied (${rows}x${inFeatures} and ${weight.shape[1]}x${weight.shape[0]}): ` +
        `the input's last dim is ${inFeatures} but the layer expects ${weight.shape[1]} features (input shape ${shapeText(input.shape)})`,
      'linear',
    );
  }
  if (bias != null && bias.dtype === input.dtype && isHalf(input.dtype)) {
    // PyTorch's addmm adds the bias to the GEMM's f32 accumulator and rounds once: the product is
    // kept in f32 (one GEMM for all rows, in the half type where the backend can), the bias added
    // there, and the sum rounded.
    checkCompute('linear', input);
    const rows = input.ndim === 1 ? input.unsqueeze(0) : input.reshape([-1, inFeatures]);
    const y = matmulInFloat32(rows, weight.t(), input.dtype, { bias, round: true });
    return y.reshape([...input.shape.slice(0, -1), weight.shape[0]!]);
  }
  const out = input.matmul(weight.t());
  return bias != null ? out.add(bias) : out;
}

/** float16 or bfloat16: the types whose GEMMs accumulate in float32 and round once on store. */
export function isHalf(dtype: DType): boolean {
  return dtype === float16 || dtype === bfloat16;
}
