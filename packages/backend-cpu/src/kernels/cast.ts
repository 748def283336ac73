// dtype conversion. Reading decodes halves exactly; the store into out does the conversion:
// → half rounds to nearest even (an f64 value goes through f32 first, as PyTorch does),
// → int32 truncates toward zero (the Int32Array store; NaN/Inf/out of range are unspecified),
// → bool is `x != 0` with NaN true, and bool → numbers is 0/1.
import { copy } from './copy.js';
import { checkShape, readValues, type Ref, scatterFrom } from './io.js';

export function cast(x: Ref, out: Ref): void {
  checkShape('cast', 'out', out, x.shape);
  if (x.dtype === out.dtype) {
    copy(x, out); // bit for bit, so NaN payloads survive
    return;
  }
  scatterFrom(readValues(x), out);
}
