import { type DType, bool, float32, float64, int32 } from './dtype.js';

/** promoteTypes for our dtypes (TP-1): f16∘bf16 is f32, anything with f64 is f64. */
export function promoteTypes(a: DType, b: DType): DType {
  if (a === b) return a;
  if (a === bool) return b;
  if (b === bool) return a;
  if (a === int32) return b; // b is a float
  if (b === int32) return a;
  if (a === float64 || b === float64) return float64;
  return float32; // two different floats below f64: f16∘bf16, f16∘f32, bf16∘f32
}

const rank = { bool: 0, int: 1, float: 2 } as const;

/** An operand as resultType sees it: a tensor (only its dtype and rank matter) or a JS scalar. */
export type PromotionOperand = { readonly dtype: DType; readonly shape: readonly number[] } | number | boolean;

function scalarDType(x: number | boolean): DType {
  if (typeof x === 'boolean') return bool;
  // JS has one number type: an integral value acts as an integer scalar (PyTorch's int, which is
  // int64 there and int32 here), anything else as the default float dtype.
  return Number.isInteger(x) ? int32 : float32;
}

// PyTorch's combine_categories: a lower tier counts only when its category is higher.
function combine(higher: DType | undefined, lower: DType | undefined): DType | undefined {
  if (higher === undefined) return lower;
  if (lower === undefined) return higher;
  if (higher.category === 'float') return higher;
  if (higher === bool || rank[lower.category] > rank[higher.category]) return promoteTypes(higher, lower);
  return higher;
}

/**
 * The dtype an op computes in (TP-2): tensors with dim > 0 first, then 0-dim tensors, then
 * JS numbers/booleans; each tier reduced with promoteTypes.
 */
export function resultType(...operands: PromotionOperand[]): DType {
  let dims: DType | undefined;
  let zeros: DType | undefined;
  let scalars: DType | undefined;
  const fold = (acc: DType | undefined, d: DType) => (acc === undefined ? d : promoteTypes(acc, d));
  for (const op of operands) {
    if (typeof op === 'number' || typeof op === 'boolean') scalars = fold(scalars, scalarDType(op));
    else if (op.shape.length === 0) zeros = fold(zeros, op.dtype);
    else dims = fold(dims, op.dtype);
  }
  const result = combine(dims, combine(zeros, scalars));
  if (result === undefined) throw new TypeError('resultType() needs at least one operand');
  return result;
}

/** canCast (TP-4): no float → int/bool, no non-bool → bool. */
export function canCast(from: DType, to: DType): boolean {
  if (from.category === 'float' && to.category !== 'float') return false;
  if (from !== bool && to === bool) return false;
  return true;
}
