// F.embedding: rows of `weight` picked by int32 indices. Rows at `paddingIdx` get no gradient.
import { DTypeError, int32, ShapeError, where, type Tensor } from '@core/tensor';
import { checkTensor, shapeText } from '../internal/args.js';
import { checkSameDevice } from '@core/tensor';

/** Normalise a paddingIdx (negative counts from the end) against `rows`. */
export function paddingIndex(paddingIdx: number | null | undefined, rows: number, op: string): number | null {
  if (paddingIdx === null || paddingIdx === undefined) return null;
  if (!Number.isInteger(paddingIdx) || paddingIdx >= rows || paddingIdx < -rows) {
    throw new ShapeError(`${op}: paddingIdx must be within num_embeddings (${rows}), got ${paddingIdx}`, op);
  }
  return paddingIdx < 0 ? paddingIdx + rows : paddingIdx;
}

/**
 * The rows of `weight` at the int32 indices `input` (output shape: input's shape + [embeddingDim]); the row at `paddingIdx` gets no gradient.
 */
export function embedding(input: Tensor, weight: Tensor, paddingIdx?: number | null): Tensor {
  checkTensor(input, 'input', 'embedding');
  checkTensor(weight, 'weight', 'embedding');
  if (input.dtype !== int32) {
    throw new DTypeError(`embedding(): expected indices of dtype int32, got ${input.dtype.name}; convert with indices.int()`, 'embedding', input.dtype.name);
  }
  if (weight.ndim !== 2) throw new ShapeError(`embedding(): weight must be 2-D [numEmbeddings, embeddingDim], got ${shapeText(weight.shape)}`, 'embedding');
  checkSameDevice('embedding', [{ name: 'weight', tensor: weight }, { name: 'indices', tensor: input }]);
  const [rows, dim] = weight.shape as [number, number];
  if (input.device.type === 'cpu' && input.numel() > 0) {
    const values = input.dataSync();
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v < 0 || v >= rows) {
        throw new ShapeError(`embedding(): index ${v} (at flat position ${i}) is out of range for an embedding with ${rows} rows (valid indices are 0..${rows - 1})`, 'embedding');
      }
    }
  }
  const pad = paddingIndex(paddingIdx, rows, 'embedding()');
  const flat = input.reshape([-1]);
  let picked = weight.indexSelect(0, flat);
  // Same values, but rows at paddingIdx come from a detached weight: no gradient reaches them.
  if (pad !== null) picked = where(flat.eq(pad).unsqueeze(1), weight.detach().indexSelect(0, flat), picked);
  return picked.reshape([...input.shape, dim]);
}
