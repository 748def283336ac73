// F.ctcLoss and nn.CTCLoss against PyTorch 1.13 (reference/rnn_ctc_reference.py, float64 here to
// 1e-9, float32 to 1e-5, relative to max(1, |expected|)): losses for each reduction, the gradient
// PyTorch gives log-probabilities taken as a leaf (exp(logProbs) − γ) and the one reaching the
// logits through logSoftmax, padded and concatenated targets, another blank, unbatched input,
// infeasible targets with and without zeroInfinity; then argument forms and errors.
import { describe, expect, it } from 'vitest';
import { autocast, bfloat16, DTypeError, float16, float32, float64, gradcheck, int32, ShapeError, tensor, ValueError, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { FAKE } from './helpers.js';
import { NO_SYNC } from './no-sync-device.js';
import { seq } from './sine-inputs.js';
import { expectNear, numbers } from './reference/rnn-ctc-reference.js';

const TOL = 1e-9;
// T = 6 frames, N = 3 samples, C = 5 classes; sample 1 reads 2 labels, sample 2 none.
const logits = (dtype = float64) => seq([6, 3, 5], 0.2, 2, dtype);
const TARGETS = [[1, 2, 2], [3, 1, 0], [4, 4, 4]];
const targets = (rows = TARGETS) => tensor(rows, { dtype: int32 });
const INPUT_LENGTHS = [6, 5, 4];
const TARGET_LENGTHS = [3, 2, 0];
const lengths = (values: number[]) => tensor(values, { dtype: int32 });

/**
 * The loss of `call` on log-probabilities, its gradient with respect to them as a leaf, and with
 * respect to the logits, for PyTorch's upstream gradient `up`.
 */
function run(call: (logProbs: Tensor) => Tensor, up: number[], dtype = float64): { loss: Tensor; glp: Tensor; glogits: Tensor } {
  const lp = logits(dtype).logSoftmax(2).requiresGrad_();
  const loss = call(lp);
  const upstream = tensor(up, { dtype }).reshape(loss.shape);
  loss.mul(upstream).sum().backward();
  const x = logits(dtype).requiresGrad_();
  call(x.logSoftmax(2)).mul(upstream).sum().backward();
  return { loss, glp: lp.grad!, glogits: x.grad! };
}

function expectReference(key: string, call: (logProbs: Tensor) => Tensor, tol = TOL, dtype = float64): void {
  const { loss, glp, glogits } = run(call, numbers(key, 'up'), dtype);
  expect(loss.dtype).toBe(dtype);
  expectNear(loss, numbers(key, 'loss'), tol);
  expectNear(glp, numbers(key, 'glp'), tol);
  expectNear(glogits, numbers(key, 'glogits'), tol);
}

describe('F.ctcLoss against PyTorch 1.13', () => {
  for (const reduction of ['none', 'sum', 'mean'] as const) {
    it(`reduction '${reduction}': losses and gradients (padded targets, tensor lengths)`, () => {
      expectReference(`ctc-${reduction}`, (lp) => F.ctcLoss(lp, targets(), lengths(INPUT_LENGTHS), lengths(TARGET_LENGTHS), { reduction }));
    });
  }

  it("'mean' divides each loss by its target length (at least 1) before averaging", () => {
    const lp = logits().logSoftmax(2);
    const none = Array.from(F.ctcLoss(lp, targets(), INPUT_LENGTHS, TARGET_LENGTHS, { reduction: 'none' }).dataSync());
    const expected = (none[0]! / 3 + none[1]! / 2 + none[2]! / 1) / 3;
    expect(F.ctcLoss(lp, targets(), INPUT_LENGTHS, TARGET_LENGTHS).dataSync()[0]).toBeCloseTo(expected, 12);
  });

  it('1-D targets are the sequences concatenated, with the same result', () => {
    const concatenated = tensor([1, 2, 2, 3, 1], { dtype: int32 });
    expectReference('ctc-concat-none', (lp) => F.ctcLoss(lp, concatenated, INPUT_LENGTHS, TARGET_LENGTHS, 0, 'none'));
  });

  it('padding past a target length is never read (any value works there)', () => {
    const lp = logits().logSoftmax(2);
    const garbage = targets([[1, 2, 2], [3, 1, -7], [99, -1, 4]]);
    expectNear(F.ctcLoss(lp, garbage, INPUT_LENGTHS, TARGET_LENGTHS, { reduction: 'none' }), numbers('ctc-none', 'loss'), TOL);
  });

  it('another blank class', () => {
    expectReference('ctc-blank4-none', (lp) => F.ctcLoss(lp, targets([[1, 2, 2], [3, 1, 0], [0, 0, 0]]), INPUT_LENGTHS, TARGET_LENGTHS, { blank: 4, reduction: 'none' }));
  });

  it('a target no alignment fits has an infinite loss and NaN gradients, as in PyTorch', () => {
    // Sample 0 needs 5 frames for 1, 1, 1 (a blank between repeats) but has 4.
    const rows = targets([[1, 1, 1], [3, 1, 0], [4, 4, 4]]);
    expectReference('ctc-infeasible-none', (lp) => F.ctcLoss(lp, rows, [4, 5, 4], TARGET_LENGTHS, { reduction: 'none' }));
    expectReference('ctc-infeasible-mean', (lp) => F.ctcLoss(lp, rows, [4, 5, 4], TARGET_LENGTHS));
  });

  it('zeroInfinity replaces infinite losses and their gradients by 0', () => {
    const rows = targets([[1, 1, 1], [3, 1, 0], [4, 4, 4]]);
    expectReference('ctc-zeroinf-none', (lp) => F.ctcLoss(lp, rows, [4, 5, 4], TARGET_LENGTHS, 0, 'none', true));
    expectReference('ctc-zeroinf-mean', (lp) => F.ctcLoss(lp, rows, [4, 5, 4], TARGET_LENGTHS, { zeroInfinity: true }));
  });

  it('unbatched [T, C] input with 1-D targets and scalar lengths gives a 0-dim loss', () => {
    const lp = logits().select(1, 0).logSoftmax(1).requiresGrad_();
    const loss = F.ctcLoss(lp, tensor([1, 2, 2], { dtype: int32 }), 6, 3, { reduction: 'none' });
    expect(loss.shape).toEqual([]);
    loss.backward();
    expectNear(loss, numbers('ctc-unbatched', 'loss'), TOL);
    expectNear(lp.grad!, numbers('ctc-unbatched', 'glp'), TOL);
  });

  it('float32 matches the float64 reference to 1e-5', () => {
    expectReference('ctc-mean', (lp) => F.ctcLoss(lp, targets(), INPUT_LENGTHS, TARGET_LENGTHS), 1e-5, float32);
  });

  it('AC-9: in a cpu autocast region half log-probabilities are computed in float32, and the gradient reaches them in their dtype', () => {
    const lp = logits(float32).logSoftmax(2).to(bfloat16).requiresGrad_();
    const loss = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.ctcLoss(lp, targets(), INPUT_LENGTHS, TARGET_LENGTHS, { reduction: 'none' }));
    expect(loss.dtype).toBe(float32);
    // rnn_ctc_reference.py: F.ctc_loss(log_softmax(LOGITS.float(), 2).bfloat16(), …) in torch.autocast('cpu', dtype=torch.bfloat16)
    expectNear(loss, numbers('autocast-ctc', 'y0'), 1e-5);
    loss.sum().backward();
    expect(lp.grad!.dtype).toBe(bfloat16);
    expect(() => F.ctcLoss(lp, targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow(DTypeError);
  });

  it('the gradient reaching the logits through logSoftmax is the true one (gradcheck in float64)', () => {
    const x = seq([4, 2, 3], 0.9, 1.5, float64).requiresGrad_();
    const fn = (z: Tensor) => F.ctcLoss(z.logSoftmax(2), targets([[1, 2], [2, 0]]), [4, 3], [2, 1], { reduction: 'sum' });
    const result = gradcheck(fn, [x]);
    expect(result.mismatch ?? 'ok').toBe('ok');
  });

  it('log-probabilities and targets on another device, lengths on the cpu or as numbers', () => {
    const lp = logits().logSoftmax(2).to(FAKE);
    const loss = F.ctcLoss(lp, targets().to(FAKE), lengths(INPUT_LENGTHS), TARGET_LENGTHS, { reduction: 'none' });
    expect(loss.device.type).toBe(FAKE);
    expectNear(loss.cpu(), numbers('ctc-none', 'loss'), TOL);
  });

  it('on a device without synchronous reads: lengths stay unread, 1-D targets are sliced at full width', async () => {
    const lp = logits().logSoftmax(2).to(NO_SYNC).requiresGrad_();
    const onDevice = (values: number[]) => lengths(values).to(NO_SYNC);
    const loss = F.ctcLoss(lp, onDevice([1, 2, 2, 3, 1]), onDevice(INPUT_LENGTHS), onDevice(TARGET_LENGTHS), { reduction: 'none' });
    expect(loss.device.type).toBe(NO_SYNC);
    loss.mul(tensor(numbers('ctc-none', 'up'), { dtype: float64 }).to(NO_SYNC)).sum().backward();
    expectNear(tensor(await loss.toArray(), { dtype: float64 }), numbers('ctc-none', 'loss'), TOL);
    expectNear(tensor(await lp.grad!.toArray(), { dtype: float64 }), numbers('ctc-none', 'glp'), TOL);
  });

  it('leaves its inputs unchanged', () => {
    const lp = logits().logSoftmax(2);
    const before = Array.from(lp.dataSync());
    const rows = targets();
    F.ctcLoss(lp, rows, INPUT_LENGTHS, TARGET_LENGTHS);
    expect(Array.from(lp.dataSync())).toEqual(before);
    expect(Array.from(rows.dataSync())).toEqual(TARGETS.flat());
  });
});

describe('nn.CTCLoss', () => {
  it('is F.ctcLoss with the options given positionally or by name', () => {
    const lp = logits().logSoftmax(2);
    const rows = targets([[1, 2, 2], [3, 1, 0], [0, 0, 0]]);
    const expected = numbers('ctc-blank4-none', 'loss');
    expectNear(new nn.CTCLoss(4, 'none').forward(lp, rows, INPUT_LENGTHS, TARGET_LENGTHS), expected, TOL);
    expectNear(new nn.CTCLoss({ blank: 4, reduction: 'none' }).forward(lp, rows, INPUT_LENGTHS, TARGET_LENGTHS), expected, TOL);
    const zeroed = new nn.CTCLoss({ zeroInfinity: true });
    expectNear(zeroed.forward(lp, targets([[1, 1, 1], [3, 1, 0], [4, 4, 4]]), [4, 5, 4], TARGET_LENGTHS), numbers('ctc-zeroinf-mean', 'loss'), TOL);
    expect(zeroed.toString()).toBe("CTCLoss(blank=0, reduction='mean', zeroInfinity=true)");
  });

  it('rejects a bad reduction or an unknown option', () => {
    expect(() => new nn.CTCLoss(0, 'avg' as 'mean')).toThrow(ValueError);
    expect(() => new nn.CTCLoss({ zero_infinity: true } as never)).toThrow(TypeError);
  });
});

describe('F.ctcLoss errors', () => {
  const lp = () => logits().logSoftmax(2);
  // Untyped, so that wrong arguments reach the checks.
  const call = (...args: unknown[]) => () => (F.ctcLoss as (...a: unknown[]) => Tensor)(...args);

  it('dtypes: floating float32/float64 log-probabilities, int32 targets and lengths', () => {
    expect(call(lp().to(float16), targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow(DTypeError);
    expect(call(lp().to(float16), targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('logProbs must be float32 or float64');
    expect(call(lp().to(int32), targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow(DTypeError);
    expect(call(lp(), targets().to(float64), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('expected targets of dtype int32 (class indices), got float64; convert with targets.int()');
    expect(call(lp(), targets(), lengths(INPUT_LENGTHS).to(float32), TARGET_LENGTHS)).toThrow('expected inputLengths of dtype int32');
  });

  it('shapes: log-probabilities [T, N, C] or [T, C], targets [N, S] or 1-D, one length per sample', () => {
    expect(call(lp().unsqueeze(0), targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow(ShapeError);
    expect(call(lp().unsqueeze(0), targets(), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('expected logProbs of shape [T, N, C] (or [T, C] unbatched), got [1, 6, 3, 5]');
    expect(call(lp(), targets().unsqueeze(0), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('expected targets of shape [N, S] (padded) or [sum(targetLengths)] (concatenated), got [1, 3, 3]');
    expect(call(lp(), targets().narrow(0, 0, 2), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('Expected tensor to have size 3 at dimension 0, but got size 2');
    expect(call(lp(), targets(), [6, 5], TARGET_LENGTHS)).toThrow('inputLengths must be of size batch_size (3), got 2 lengths');
    expect(call(lp(), targets(), INPUT_LENGTHS, lengths([3, 2]))).toThrow('targetLengths must be of size batch_size (3), got 2 lengths');
    expect(call(lp(), tensor([1, 2, 2, 3], { dtype: int32 }), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('Expected tensor to have size 5 at dimension 0, but got size 4');
  });

  it('values: blank a class, lengths within the frames and the padded targets, labels classes', () => {
    expect(call(lp(), targets(), INPUT_LENGTHS, TARGET_LENGTHS, 5)).toThrow('blank must be in label range [0, 4], got 5');
    expect(call(lp(), targets(), INPUT_LENGTHS, TARGET_LENGTHS, { blank: -1 })).toThrow(ValueError);
    expect(call(lp(), targets(), [7, 5, 4], TARGET_LENGTHS)).toThrow('Expected input_lengths to have value at most 6, but got value 7 (sample 0)');
    expect(call(lp(), targets(), INPUT_LENGTHS, [4, 2, 0])).toThrow('Expected tensor to have size at least 4 at dimension 1, but got size 3');
    expect(call(lp(), targets(), [6, -1, 4], TARGET_LENGTHS)).toThrow('inputLengths must be non-negative, got -1 for sample 1');
    expect(call(lp(), targets([[1, 9, 2], [3, 1, 0], [4, 4, 4]]), INPUT_LENGTHS, TARGET_LENGTHS)).toThrow('target 9 (sample 0, position 1) is not a class: labels must be in [0, 4]');
    expect(call(lp(), targets(), INPUT_LENGTHS, TARGET_LENGTHS, { reduction: 'avg' as 'mean' })).toThrow(ValueError);
    expect(call(lp(), targets(), INPUT_LENGTHS, TARGET_LENGTHS, { zero_infinity: true } as never)).toThrow(TypeError);
  });
});
