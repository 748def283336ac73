// Autocast of the nn ops: each F function goes through core's autocastOp under its own name, so a
// region casts it by the class the op table gives it for the device type. Checked with tables
// registered for the 'fake' device type from the table's cuda and cpu columns (AC-8, AC-9): the
// losses in float32, prelu in the region dtype, softplus, groupNorm, cosineSimilarity and
// normalize in float32 by the cuda column only.
import { describe, expect, it } from 'vitest';
import {
  autocast, bfloat16, float16, float32, OP_TABLE, registerAutocastPolicy, tensor, type AutocastPolicyTable, type DType, type OpName, type Tensor,
} from '@core/tensor';
import { F } from '../src/index.js';

/** The nn ops PyTorch's autocast lists, with their classes per device type (from the op table). */
const PYTORCH_AUTOCAST = Object.fromEntries(
  ['l1Loss', 'smoothL1Loss', 'huberLoss', 'klDiv', 'cosineEmbeddingLoss', 'marginRankingLoss', 'softplus', 'groupNorm', 'cosineSimilarity', 'normalize', 'prelu', 'scaledDotProductAttention']
    .map((op) => [op, OP_TABLE[op as OpName].autocast ?? {}]),
) as Record<string, { cuda?: string; cpu?: string }>;
import { FAKE, uniform } from './helpers.js';

/** A policy table listing the ops by PyTorch's `column` classes. */
function tableFrom(column: 'cuda' | 'cpu'): AutocastPolicyTable {
  const lists: Record<'lowerPrecision' | 'fp32' | 'fp32FirstArg' | 'promote', OpName[]> = { lowerPrecision: [], fp32: [], fp32FirstArg: [], promote: [] };
  for (const [op, rule] of Object.entries(PYTORCH_AUTOCAST) as Array<[string, { cuda?: string; cpu?: string }]>) {
    const cls = rule[column];
    if (cls) lists[cls as keyof typeof lists].push(op as OpName);
  }
  return { defaultDtype: float16, allowedDtypes: [float16, bfloat16], ...lists, banned: {} };
}

const on = (dtype: DType, shape: number[], seed: number, lo = -1, hi = 1): Tensor => uniform(shape, seed, lo, hi, dtype).to(FAKE);

const CALLS: Record<string, (dtype: DType) => Tensor> = {
  l1Loss: (t) => F.l1Loss(on(t, [3, 4], 1), on(t, [3, 4], 2)),
  smoothL1Loss: (t) => F.smoothL1Loss(on(t, [3, 4], 1), on(t, [3, 4], 2)),
  huberLoss: (t) => F.huberLoss(on(t, [3, 4], 1), on(t, [3, 4], 2)),
  klDiv: (t) => F.klDiv(on(t, [3, 4], 1, -3, -0.1), on(t, [3, 4], 2, 0, 1), { reduction: 'batchmean' }),
  cosineEmbeddingLoss: (t) => F.cosineEmbeddingLoss(on(t, [3, 4], 1), on(t, [3, 4], 2), tensor([1, -1, 1], { dtype: t }).to(FAKE)),
  marginRankingLoss: (t) => F.marginRankingLoss(on(t, [4], 1), on(t, [4], 2), tensor([1, -1, 1, -1], { dtype: t }).to(FAKE)),
  softplus: (t) => F.softplus(on(t, [3, 4], 1)),
  groupNorm: (t) => F.groupNorm(on(t, [2, 4, 3], 1), 2, on(t, [4], 2), on(t, [4], 3)),
  cosineSimilarity: (t) => F.cosineSimilarity(on(t, [3, 4], 1), on(t, [3, 4], 2)),
  normalize: (t) => F.normalize(on(t, [3, 4], 1)),
  prelu: (t) => F.prelu(on(t, [2, 3, 4], 1), on(t, [3], 2, 0, 0.5)),
};

describe('the nn ops autocast by their own names (PyTorch 1.13\'s classes in a registered table)', () => {
  for (const column of ['cuda', 'cpu'] as const) {
    for (const [op, call] of Object.entries(CALLS)) {
      const cls = (PYTORCH_AUTOCAST as Record<string, { cuda?: string; cpu?: string }>)[op]![column] ?? 'unlisted';
      it(`${op} in a float16 region with PyTorch's ${column} table: ${cls}`, () => {
        registerAutocastPolicy(FAKE, tableFrom(column));
        const input = cls === 'lowerPrecision' ? float32 : float16;
        const out = autocast({ deviceType: FAKE, dtype: float16 }, () => call(input));
        expect(out.dtype).toBe(cls === 'fp32' ? float32 : float16);
        expect(call(input).dtype).toBe(input); // outside a region: the inputs' dtype
      });
    }
  }

  it('every op PyTorch lists is exercised here', () => {
    expect(Object.keys(CALLS).sort()).toEqual(Object.keys(PYTORCH_AUTOCAST).filter((op) => op !== 'scaledDotProductAttention').sort());
  });
});
