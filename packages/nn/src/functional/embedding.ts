// F.embedding and F.embeddingBag: rows of `weight` picked by int32 indices. Rows at `paddingIdx`
// get no gradient; `maxNorm` renormalises the looked-up rows of the weight in place first, on the
// device (no index read on the host); `scaleGradByFreq` divides each row's gradient by how often
// the batch looks it up.
import {
  arange, cat, checkSameDevice, DTypeError, float32, full, fullLike, int32, isCompiling, noGrad, ones, ShapeError, ValueError, where, zeros, type Tensor,
} from '@core/tensor';
import { bindArgs, checkTensor, shapeText, type Args } from '../internal/args.js';

/** Normalise a paddingIdx (negative counts from the end) against `rows`. */
export function paddingIndex(paddingIdx: number | null | undefined, rows: number, op: string): number | null {
  if (paddingIdx === null || paddingIdx === undefined) return null;
  if (!Number.isInteger(paddingIdx) || paddingIdx >= rows || paddingIdx < -rows) {
    throw new ShapeError(`${op}: paddingIdx must be within num_embeddings (${rows}), got ${paddingIdx}`, op);
  }
  return paddingIdx < 0 ? paddingIdx + rows : paddingIdx;
}

/** embedding's parameters by name (PyTorch's keyword arguments). */
export interface EmbeddingArgs {
  /** A row that receives no gradient (negative counts from the end). */
  readonly paddingIdx?: number | null;
  /** Looked-up rows with a larger `normType`-norm are scaled in place to this norm first. */
  readonly maxNorm?: number | null;
  /** The p of the norm `maxNorm` bounds (default 2). */
  readonly normType?: number;
  /** Divide each row's gradient by the number of times the batch looks it up (default false). */
  readonly scaleGradByFreq?: boolean;
  /** Sparse gradients: not supported (only false). */
  readonly sparse?: boolean;
}

function checkIndices(input: Tensor, weight: Tensor, op: string, name = 'indices'): void {
  checkTensor(input, 'input', op);
  checkTensor(weight, 'weight', op);
  if (input.dtype !== int32) {
    throw new DTypeError(`${op}(): expected ${name} of dtype int32, got ${input.dtype.name}; convert with ${name}.int()`, op, input.dtype.name);
  }
  if (weight.ndim !== 2) throw new ShapeError(`${op}(): weight must be 2-D [numEmbeddings, embeddingDim], got ${shapeText(weight.shape)}`, op);
  checkSameDevice(op, [{ name: 'weight', tensor: weight }, { name, tensor: input }]);
  const rows = weight.shape[0]!;
  // Checked where the indices can be read synchronously, but not while a compiled function is
  // captured: its replays could not repeat a host check (the kernels then get them unchecked, as
  // on the other devices).
  if (input.device.type === 'cpu' && input.numel() > 0 && !isCompiling()) {
    const values = input.dataSync();
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v < 0 || v >= rows) {
        throw new ShapeError(`${op}(): index ${v} (at flat position ${i}) is out of range for an embedding with ${rows} rows (valid indices are 0..${rows - 1})`, op);
      }
    }
  }
}

function checkDenseOnly(sparse: boolean | undefined, op: string): void {
  if (sparse) throw new ValueError(`${op}(): sparse gradients are not supported; use sparse: false (dense gradients, the default)`);
}

/** How many times each row of a `rows`-row table appears in the flat int32 `indices` (float32). */
function rowCounts(indices: Tensor, rows: number): Tensor {
  return zeros([rows], { dtype: float32, device: indices.device }).scatterAdd(0, indices, ones([indices.numel()], { dtype: float32, device: indices.device }));
}

/**
 * PyTorch's embedding_renorm_: each row of `weight` that `indices` looks up and whose
 * `normType`-norm exceeds `maxNorm` is scaled in place by maxNorm / (norm + 1e-7).
 */
function renorm_(weight: Tensor, indices: Tensor, maxNorm: number, normType: number): void {
  noGrad(() => {
    const norms = weight.norm(normType, 1, true);
    const over = rowCounts(indices, weight.shape[0]!).gt(0).unsqueeze(1).logicalAnd(norms.gt(maxNorm));
    weight.mul_(fullLike(norms, maxNorm).div(norms.add(1e-7)).where(over, 1));
  });
}

/**
 * The rows of `weight` at the int32 indices `input` (output shape: input's shape + [embeddingDim]);
 * the row at `paddingIdx` gets no gradient. With `maxNorm`, the looked-up rows of `weight` are
 * renormalised in place first, as PyTorch's.
 */
export function embedding(input: Tensor, weight: Tensor, ...args: Args<[paddingIdx: number | null, maxNorm: number | null, normType: number, scaleGradByFreq: boolean, sparse: boolean], EmbeddingArgs>): Tensor {
  const { paddingIdx, maxNorm, normType = 2, scaleGradByFreq = false, sparse } = bindArgs<EmbeddingArgs>(
    'embedding', ['paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse'], args,
  );
  checkIndices(input, weight, 'embedding');
  checkDenseOnly(sparse, 'embedding');
  const [rows, dim] = weight.shape as [number, number];
  const pad = paddingIndex(paddingIdx, rows, 'embedding()');
  const flat = input.reshape([-1]);
  if (maxNorm != null) renorm_(weight, flat, maxNorm, normType);
  let picked = weight.indexSelect(0, flat);
  // Same values, but rows at paddingIdx come from a detached weight: no gradient reaches them.
  if (pad !== null) picked = where(flat.eq(pad).unsqueeze(1), weight.detach().indexSelect(0, flat), picked);
  if (scaleGradByFreq) {
    // picked + (picked − picked)/count: the same values, with each gradient divided by the count.
    const count = rowCounts(flat, rows).indexSelect(0, flat).unsqueeze(1).to(picked.dtype);
    const constant = picked.detach();
    picked = constant.add(picked.sub(constant).div(count));
  }
  return picked.reshape([...input.shape, dim]);
}

/** How embeddingBag reduces each bag. */
export type EmbeddingBagMode = 'sum' | 'mean' | 'max';

/** embeddingBag's parameters by name (PyTorch's keyword arguments). */
export interface EmbeddingBagArgs extends EmbeddingArgs {
  /** With 1-D input, the start of each bag (int32, starting at 0); must be absent for 2-D input. */
  readonly offsets?: Tensor | null;
  /** 'mean' (default), 'sum' or 'max' over each bag. */
  readonly mode?: EmbeddingBagMode;
  /** A weight per index, multiplying its row ('sum' mode only). */
  readonly perSampleWeights?: Tensor | null;
  /** `offsets` has one more entry, the end of the last bag (default false). */
  readonly includeLastOffset?: boolean;
}

/** [start, end) of each bag, as int32 tensors on the input's device. */
function bagBounds(input: Tensor, offsets: Tensor | null | undefined, includeLastOffset: boolean): { starts: Tensor; ends: Tensor } {
  const device = input.device;
  if (input.ndim === 2) {
    if (offsets != null) {
      throw new ValueError('embeddingBag(): if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.');
    }
    const [B, L] = input.shape as [number, number];
    const starts = arange(B, { dtype: int32, device }).mul(L);
    return { starts, ends: starts.add(L) };
  }
  if (input.ndim !== 1) throw new ShapeError(`embeddingBag(): input has to be 1D or 2D Tensor, but got Tensor of dimension ${input.ndim}`, 'embeddingBag');
  if (offsets == null) throw new ValueError('embeddingBag(): offsets has to be a 1D Tensor but got None');
  checkTensor(offsets, 'offsets', 'embeddingBag');
  if (offsets.ndim !== 1) throw new ShapeError(`embeddingBag(): offsets has to be a 1D Tensor, got shape ${shapeText(offsets.shape)}`, 'embeddingBag');
  if (offsets.dtype !== int32) throw new DTypeError(`embeddingBag(): expected offsets of dtype int32, got ${offsets.dtype.name}; convert with offsets.int()`, 'embeddingBag', offsets.dtype.name);
  checkSameDevice('embeddingBag', [{ name: 'input', tensor: input }, { name: 'offsets', tensor: offsets }]);
  const n = input.shape[0]!;
  if (offsets.device.type === 'cpu' && offsets.numel() > 0) {
    const o = offsets.dataSync();
    if (o[0] !== 0) throw new ValueError(`embeddingBag(): offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got ${o[0]}`);
    for (let i = 1; i < o.length; i++) {
      if (o[i]! < o[i - 1]! || o[i]! > n) throw new ValueError(`embeddingBag(): offsets must be non-decreasing and at most the input length ${n}, got ${o[i]} at position ${i}`);
    }
  }
  if (includeLastOffset && offsets.shape[0] === 0) throw new ValueError('embeddingBag(): includeLastOffset needs at least one offset (the end of the last bag)');
  const bags = includeLastOffset ? offsets.shape[0]! - 1 : offsets.shape[0]!;
  const starts = offsets.narrow(0, 0, bags);
  if (includeLastOffset) return { starts, ends: offsets.narrow(0, 1, bags) };
  const ends = bags === 0 ? starts : cat([offsets.narrow(0, 1, bags - 1), full([1], n, { dtype: int32, device })]);
  return { starts, ends };
}

/**
 * Sums, means or maxima of bags of embedding rows, without materialising the lookups per bag:
 * 2-D input [B, L] is B bags of L indices; 1-D input with `offsets` [B] is B bags, bag b from
 * offsets[b] to the next offset. Indices equal to `paddingIdx` are left out of their bag (and of
 * its mean's count); empty bags give zeros. Output [B, embeddingDim].
 */
export function embeddingBag(
  input: Tensor,
  weight: Tensor,
  ...args: Args<[offsets: Tensor | null, maxNorm: number | null, normType: number, scaleGradByFreq: boolean, mode: EmbeddingBagMode, sparse: boolean, perSampleWeights: Tensor | null, includeLastOffset: boolean, paddingIdx: number | null], EmbeddingBagArgs>
): Tensor {
  const { offsets, maxNorm, normType = 2, scaleGradByFreq = false, mode = 'mean', sparse, perSampleWeights, includeLastOffset = false, paddingIdx } = bindArgs<EmbeddingBagArgs>(
    'embeddingBag', ['offsets', 'maxNorm', 'normType', 'scaleGradByFreq', 'mode', 'sparse', 'perSampleWeights', 'includeLastOffset', 'paddingIdx'], args,
  );
  checkIndices(input, weight, 'embeddingBag', 'input');
  checkDenseOnly(sparse, 'embeddingBag');
  if (mode !== 'sum' && mode !== 'mean' && mode !== 'max') throw new ValueError(`embeddingBag(): mode has to be one of sum, mean or max, got ${JSON.stringify(mode)}`);
  if (perSampleWeights != null) {
    checkTensor(perSampleWeights, 'perSampleWeights', 'embeddingBag');
    if (mode !== 'sum') {
      throw new ValueError(`embeddingBag(): per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='${mode}'). Please open a feature request on GitHub.`);
    }
    if (perSampleWeights.ndim !== input.ndim || perSampleWeights.shape.some((s, i) => s !== input.shape[i])) {
      throw new ShapeError(`embeddingBag(): perSampleWeights ${shapeText(perSampleWeights.shape)} must have the input's shape ${shapeText(input.shape)}`, 'embeddingBag');
    }
  }
  const { starts, ends } = bagBounds(input, offsets, includeLastOffset);
  const flat = input.reshape([-1]);
  const rows = embedding(flat, weight, { paddingIdx: paddingIdx ?? null, maxNorm: maxNorm ?? null, normType, scaleGradByFreq });
  // members[b, i]: position i belongs to bag b and is not padding.
  const position = arange(flat.shape[0]!, { dtype: int32, device: input.device }).unsqueeze(0);
  let members = position.ge(starts.unsqueeze(1)).logicalAnd(position.lt(ends.unsqueeze(1)));
  const pad = paddingIndex(paddingIdx, weight.shape[0]!, 'embeddingBag()');
  if (pad !== null) members = members.logicalAnd(flat.ne(pad).unsqueeze(0));
  const membership = members.to(weight.dtype);
  const counts = membership.sum(1, true);
  if (mode === 'max') {
    // An empty bag's maximum is over −∞ only; it gives 0, as PyTorch's.
    return rows.unsqueeze(0).where(members.unsqueeze(2), -Infinity).amax(1).where(counts.gt(0), 0);
  }
  const weighted = perSampleWeights != null ? membership.mul(perSampleWeights.reshape([1, -1]).to(weight.dtype)) : membership;
  const sums = weighted.matmul(rows);
  return mode === 'sum' ? sums : sums.div(counts.clamp(1));
}
