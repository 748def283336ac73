// Autocast of the nn ops: each F function goes through core's autocastOp under its own name, so a
// region casts it by the class the op table gives it for the device type. Checked with tables
// registered for the 'fake' device type from the table's cuda and cpu columns (AC-8, AC-9): the
// losses in float32, prelu in the region dtype, softplus, groupNorm, cosineSimilarity and
// normalize in float32 by the cuda column only; the recurrent ops in the region dtype by the cuda
// column only, ctcLoss in float32 by the cpu column only.
import { describe, expect, it } from 'vitest';
import {
  autocast, bfloat16, cat, DTypeError, float16, float32, int32, OP_TABLE, registerAutocastPolicy, tensor, type AutocastPolicyTable, type DType, type OpName, type Tensor,
} from '@core/tensor';
import { F, nn } from '../src/index.js';

/** The nn ops PyTorch's autocast lists, with their classes per device type (from the op table). */
const PYTORCH_AUTOCAST = Object.fromEntries(
  [
    'l1Loss', 'smoothL1Loss', 'huberLoss', 'klDiv', 'cosineEmbeddingLoss', 'marginRankingLoss', 'softplus', 'groupNorm', 'cosineSimilarity', 'normalize', 'prelu', 'scaledDotProductAttention',
    'ctcLoss', 'lstm', 'gru', 'rnnTanh', 'rnnRelu', 'lstmCell', 'gruCell', 'rnnTanhCell', 'rnnReluCell',
  ]
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

/** w_ih [gates·4, 3], w_hh [gates·4, 4], b_ih and b_hh [gates·4]: one layer of hidden size 4 over 3 features. */
const cellWeights = (dtype: DType, gates: number): [Tensor, Tensor, Tensor, Tensor] =>
  [on(dtype, [4 * gates, 3], 11), on(dtype, [4 * gates, 4], 12), on(dtype, [4 * gates], 13), on(dtype, [4 * gates], 14)];

const joined = (parts: readonly Tensor[]): Tensor => cat(parts.map((t) => t.flatten()));

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
  // The recurrent ops: every output, flattened and joined (a dtype of one that differs promotes the whole).
  lstm: (t) => joined(F.lstm(on(t, [3, 2, 3], 1), [on(t, [1, 2, 4], 2), on(t, [1, 2, 4], 3)], cellWeights(t, 4), true, 1, 0, false, false, false)),
  gru: (t) => joined(F.gru(on(t, [3, 2, 3], 1), on(t, [1, 2, 4], 2), cellWeights(t, 3), true, 1, 0, false, false, false)),
  rnnTanh: (t) => joined(F.rnnTanh(on(t, [3, 2, 3], 1), on(t, [1, 2, 4], 2), cellWeights(t, 1), true, 1, 0, false, false, false)),
  rnnRelu: (t) => joined(F.rnnRelu(on(t, [3, 2, 3], 1), on(t, [1, 2, 4], 2), cellWeights(t, 1), true, 1, 0, false, false, false)),
  lstmCell: (t) => joined(F.lstmCell(on(t, [2, 3], 1), [on(t, [2, 4], 2), on(t, [2, 4], 3)], ...cellWeights(t, 4))),
  gruCell: (t) => F.gruCell(on(t, [2, 3], 1), on(t, [2, 4], 2), ...cellWeights(t, 3)),
  rnnTanhCell: (t) => F.rnnTanhCell(on(t, [2, 3], 1), on(t, [2, 4], 2), ...cellWeights(t, 1)),
  rnnReluCell: (t) => F.rnnReluCell(on(t, [2, 3], 1), on(t, [2, 4], 2), ...cellWeights(t, 1)),
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
    expect(Object.keys(CALLS).sort()).toEqual(Object.keys(PYTORCH_AUTOCAST).filter((op) => op !== 'scaledDotProductAttention' && op !== 'ctcLoss').sort());
  });

  it("AC-9: ctcLoss runs half log-probabilities in float32 with PyTorch's cpu table; its cuda table leaves them to be refused", () => {
    const logProbs = () => on(float16, [4, 2, 3], 1).logSoftmax(2);
    const ctc = () => F.ctcLoss(logProbs(), tensor([[1, 2], [2, 0]], { dtype: int32 }).to(FAKE), [4, 3], [2, 1], { reduction: 'none' });
    registerAutocastPolicy(FAKE, tableFrom('cpu'));
    const loss = autocast({ deviceType: FAKE, dtype: float16 }, ctc);
    expect(loss.dtype).toBe(float32);
    const direct = F.ctcLoss(logProbs().float(), tensor([[1, 2], [2, 0]], { dtype: int32 }).to(FAKE), [4, 3], [2, 1], { reduction: 'none' });
    expect(Array.from(loss.cpu().dataSync())).toEqual(Array.from(direct.cpu().dataSync()));
    registerAutocastPolicy(FAKE, tableFrom('cuda'));
    expect(() => autocast({ deviceType: FAKE, dtype: float16 }, ctc)).toThrow(DTypeError);
  });
});

describe('the recurrent ops cast once at entry (AC-8 with the cuda table; unlisted, AC-7, with the cpu table)', () => {
  const x = () => on(float32, [3, 2, 3], 1);
  const state = () => [on(float32, [1, 2, 4], 2), on(float32, [1, 2, 4], 3)] as const;
  const values = (parts: readonly Tensor[]) => parts.map((t) => [t.dtype.name, Array.from(t.cpu().dataSync())]);
  const half = (t: Tensor) => t.to(float16);

  it('AC-8: F.lstm in a float16 region is F.lstm of its inputs cast to float16 first, every output float16', () => {
    registerAutocastPolicy(FAKE, tableFrom('cuda'));
    const [h0, c0] = state();
    const inRegion = autocast({ deviceType: FAKE, dtype: float16 }, () => F.lstm(x(), [h0, c0], cellWeights(float32, 4), true, 1, 0, false, false, false));
    const cast = F.lstm(half(x()), [half(h0), half(c0)], cellWeights(float32, 4).map(half), true, 1, 0, false, false, false);
    expect(values(inRegion)).toEqual(values(cast));
    expect(inRegion.map((t) => t.dtype)).toEqual([float16, float16, float16]);
  });

  it('AC-8: nn.LSTM, nn.GRU and nn.LSTMCell route through their ops: float16 outputs and states from float32 modules', () => {
    registerAutocastPolicy(FAKE, tableFrom('cuda'));
    const lstm = new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true }).to(FAKE);
    const gru = new nn.GRU(3, 4).to(FAKE);
    const cell = new nn.LSTMCell(3, 4).to(FAKE);
    const [out, [h, c]] = autocast({ deviceType: FAKE, dtype: float16 }, () => lstm.forward(x()));
    expect([out.dtype, h.dtype, c.dtype]).toEqual([float16, float16, float16]);
    const [gOut, gH] = autocast({ deviceType: FAKE, dtype: float16 }, () => gru.forward(x()));
    expect([gOut.dtype, gH.dtype]).toEqual([float16, float16]);
    const [ch, cc] = autocast({ deviceType: FAKE, dtype: float16 }, () => cell.forward(on(float32, [2, 3], 1)));
    expect([ch.dtype, cc.dtype]).toEqual([float16, float16]);
  });

  it('AC-7: with the cpu table the products are linear\'s (float16) and the float32 cell state keeps LSTM\'s outputs float32', () => {
    const cpuTable = tableFrom('cpu');
    registerAutocastPolicy(FAKE, { ...cpuTable, lowerPrecision: [...cpuTable.lowerPrecision, 'linear'] });
    const [h0, c0] = state();
    const weights = cellWeights(float32, 4);
    const [out, h, c] = autocast({ deviceType: FAKE, dtype: float16 }, () => F.lstm(x(), [h0, c0], weights, true, 1, 0, false, false, false));
    expect([out.dtype, h.dtype, c.dtype]).toEqual([float32, float32, float32]);
    const exact = F.lstm(x(), [h0, c0], weights, true, 1, 0, false, false, false);
    expect(values([out])).not.toEqual(values([exact[0]])); // float16 products
    expect(out.sub(exact[0]).abs().amax().cpu().dataSync()[0]).toBeLessThan(1e-2);
  });
});
