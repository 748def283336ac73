// nn.RNN, nn.LSTM, nn.GRU and the cells against PyTorch 1.13 (reference/rnn_ctc_reference.py:
// float64 here to 1e-9, float32 to 1e-5, relative to max(1, |expected|)): outputs, final states
// and the gradients of the input, the initial states and every parameter, for stacked,
// bidirectional, batch-first, projected, bias-free and unbatched layers. The parameters come from
// the formula in sine-inputs.ts (state-dict entry j ← seq(shape, 0.5 + j, 0.5)), loaded through a
// state dict whose keys must be PyTorch's. Then initialisation, dropout between layers, argument
// forms, printing and errors.
import '@core/backend-cpu';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { autocast, bfloat16, DTypeError, float32, float64, manualSeed, ShapeError, tensor, ValueError, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { seq } from './sine-inputs.js';
import { expectNear, numbers, reference } from './reference/rnn-ctc-reference.js';

const TOL = 1e-9;
type Recurrent = nn.RNN | nn.LSTM | nn.GRU | nn.RNNCell | nn.LSTMCell | nn.GRUCell;

/** Python's `fill`, after checking that the state-dict keys are PyTorch's, in its order. */
function fill(module: Recurrent, key: string, dtype = float64): void {
  const keys = reference(key).keys as string[];
  const state = module.stateDict();
  expect(Object.keys(state)).toEqual(keys);
  module.loadStateDict(Object.fromEntries(keys.map((k, j) => [k, seq(state[k]!.shape, 0.5 + j, 0.5, dtype)])));
}

/** Σ t·seq(t.shape, c), the reference script's `weigh`. */
const weigh = (t: Tensor, c: number) => t.mul(seq(t.shape, c, 1, t.dtype)).sum();

/** Run a case of the reference script (see `recurrent` and `cell` there) and compare everything it recorded. */
function expectReference(key: string, module: Recurrent, xShape: number[], stateShape: number[] | null, withCell: boolean, dtype = float64, tol = TOL): void {
  module.to(dtype);
  fill(module, key, dtype);
  const x = seq(xShape, 0.1, 1, dtype).requiresGrad_();
  const h0 = stateShape ? seq(stateShape, 0.3, 0.5, dtype).requiresGrad_() : null;
  const c0 = stateShape && withCell ? seq(stateShape.map((s, i) => (i === stateShape.length - 1 && module instanceof nn.LSTM ? module.hiddenSize : s)), 0.7, 0.5, dtype).requiresGrad_() : null;
  const hx = c0 ? [h0!, c0] : h0;
  const forward = module.forward.bind(module) as (x: Tensor, hx: unknown) => unknown;
  const result = forward(x, hx);
  const isCell = !(module instanceof nn.RNN || module instanceof nn.LSTM || module instanceof nn.GRU);
  // Layers return [output, state]; cells return the state.
  const [out, state] = isCell ? [null, result] : (result as [Tensor, unknown]);
  const [h, c] = (Array.isArray(state) ? state : [state]) as [Tensor, Tensor | undefined];
  let loss = weigh(h, 2.5);
  if (out) {
    expect(out.dtype).toBe(dtype);
    expectNear(out, numbers(key, 'out'), tol);
    loss = loss.add(weigh(out, 2));
  }
  expectNear(h, numbers(key, isCell ? 'h' : 'hn'), tol);
  if (c) {
    expectNear(c, numbers(key, isCell ? 'c' : 'cn'), tol);
    loss = loss.add(weigh(c, 3));
  }
  loss.backward();
  expectNear(x.grad!, numbers(key, 'gx'), tol);
  if (h0) expectNear(h0.grad!, numbers(key, 'gh0'), tol);
  if (c0) expectNear(c0.grad!, numbers(key, 'gc0'), tol);
  const gparams = reference(key).gparams as Record<string, number[]>;
  const named = module.namedParameters();
  expect(named.map(([name]) => name)).toEqual(Object.keys(gparams));
  for (const [name, p] of named) expectNear(p.grad!, gparams[name]!, tol);
}

describe('recurrent layers against PyTorch 1.13 (outputs, states, gradients of input, states and parameters)', () => {
  it('LSTM: 2 layers, bidirectional, batchFirst, with [h0, c0]', () => {
    expectReference('lstm-2l-bi-batchfirst', new nn.LSTM(3, 4, 2, { batchFirst: true, bidirectional: true }), [2, 5, 3], [4, 2, 4], true);
  });

  it('GRU: 2 layers, bidirectional, batchFirst, with h0', () => {
    expectReference('gru-2l-bi-batchfirst', new nn.GRU(3, 4, 2, true, true, 0, true), [2, 5, 3], [4, 2, 4], false);
  });

  it('LSTM with projSize: 2 layers, bidirectional (h is projected to 2, c keeps 4)', () => {
    expectReference('lstm-proj-2l-bi', new nn.LSTM(3, 4, 2, { bidirectional: true, projSize: 2 }), [4, 2, 3], [4, 2, 2], true);
  });

  it('RNN with relu: 2 layers, no bias, zero initial state', () => {
    expectReference('rnn-relu-2l-nobias', new nn.RNN(3, 4, 2, 'relu', false), [4, 2, 3], null, false);
  });

  it('RNN with tanh, bidirectional, unbatched [T, inputSize] input and [D, hidden] state', () => {
    expectReference('rnn-tanh-bi-unbatched', new nn.RNN(3, 4, { bidirectional: true }), [5, 3], [2, 4], false);
  });

  it('GRU and LSTM with unbatched input (batchFirst does not apply)', () => {
    expectReference('gru-unbatched', new nn.GRU(3, 4), [5, 3], null, false);
    expectReference('lstm-unbatched', new nn.LSTM(3, 4, { batchFirst: true }), [5, 3], [1, 4], true);
  });

  it('float32 matches the float64 reference to 1e-5', () => {
    expectReference('lstm-2l-bi-batchfirst', new nn.LSTM(3, 4, 2, { batchFirst: true, bidirectional: true }), [2, 5, 3], [4, 2, 4], true, float32, 1e-5);
  });

  it('cells: RNNCell (tanh; relu without bias), LSTMCell, GRUCell, batched and unbatched', () => {
    expectReference('rnncell-tanh', new nn.RNNCell(3, 4), [2, 3], [2, 4], false);
    expectReference('rnncell-relu-nobias', new nn.RNNCell(3, 4, false, 'relu'), [2, 3], [2, 4], false);
    expectReference('lstmcell', new nn.LSTMCell(3, 4), [2, 3], [2, 4], true);
    expectReference('grucell', new nn.GRUCell(3, 4), [2, 3], [2, 4], false);
    expectReference('grucell-unbatched', new nn.GRUCell(3, 4), [3], [4], false);
  });
});

describe('parameters', () => {
  it("are PyTorch's, by name and shape, in PyTorch's order; allWeights groups them per layer and direction", () => {
    const lstm = new nn.LSTM(3, 4, 2, { bidirectional: true, projSize: 2 });
    const shapes = Object.fromEntries(lstm.namedParameters().map(([name, p]) => [name, p.shape]));
    expect(shapes).toEqual({
      weight_ih_l0: [16, 3], weight_hh_l0: [16, 2], bias_ih_l0: [16], bias_hh_l0: [16], weight_hr_l0: [2, 4],
      weight_ih_l0_reverse: [16, 3], weight_hh_l0_reverse: [16, 2], bias_ih_l0_reverse: [16], bias_hh_l0_reverse: [16], weight_hr_l0_reverse: [2, 4],
      weight_ih_l1: [16, 4], weight_hh_l1: [16, 2], bias_ih_l1: [16], bias_hh_l1: [16], weight_hr_l1: [2, 4],
      weight_ih_l1_reverse: [16, 4], weight_hh_l1_reverse: [16, 2], bias_ih_l1_reverse: [16], bias_hh_l1_reverse: [16], weight_hr_l1_reverse: [2, 4],
    });
    expect(lstm.allWeights.map((ws) => ws.length)).toEqual([5, 5, 5, 5]);
    expect(lstm.allWeights[1]![0]).toBe(lstm.weight_ih_l0_reverse);
    expect(Object.keys(new nn.GRU(3, 4, 2, false).stateDict())).toEqual(['weight_ih_l0', 'weight_hh_l0', 'weight_ih_l1', 'weight_hh_l1']);
    const cell = new nn.GRUCell(3, 4);
    expect(cell.namedParameters().map(([name, p]) => [name, p.shape])).toEqual([['weight_ih', [12, 3]], ['weight_hh', [12, 4]], ['bias_ih', [12]], ['bias_hh', [12]]]);
  });

  it('a parameter replaced after construction is the one forward uses', () => {
    const rnn = new nn.RNN(3, 4).double();
    const x = seq([2, 1, 3], 0.1, 1, float64);
    rnn.weight_ih_l0 = nn.Parameter(zeros([4, 3], { dtype: float64 }));
    const [out] = rnn.forward(x);
    // With W_ih = 0 the first step is tanh(b_ih + b_hh), whatever the input.
    const first = rnn.bias_ih_l0!.add(rnn.bias_hh_l0!).tanh();
    expectNear(out.select(0, 0).reshape([-1]), Array.from(first.dataSync()), TOL);
  });

  it('initialise as PyTorch: every parameter ~ U(−1/√hiddenSize, 1/√hiddenSize), from the seeded generator', () => {
    manualSeed(3);
    const a = new nn.GRU(5, 16, 2, { bidirectional: true });
    manualSeed(3);
    const b = new nn.GRU(5, 16, 2, { bidirectional: true });
    const all = (m: nn.GRU) => m.parameters().flatMap((p) => Array.from(p.dataSync()));
    const values = all(a);
    expect(all(b)).toEqual(values);
    const bound = 1 / Math.sqrt(16);
    expect(Math.max(...values.map(Math.abs))).toBeLessThanOrEqual(bound);
    // 3120 draws: the extremes come close to the bounds, and the mean is near 0.
    expect(Math.max(...values)).toBeGreaterThan(0.95 * bound);
    expect(Math.min(...values)).toBeLessThan(-0.95 * bound);
    expect(Math.abs(values.reduce((s, v) => s + v, 0) / values.length)).toBeLessThan(0.02);
    for (const p of new nn.LSTMCell(3, 25).parameters()) expect(Math.max(...Array.from(p.dataSync()).map(Math.abs))).toBeLessThanOrEqual(0.2);
  });
});

describe('dropout between layers', () => {
  afterEach(() => vi.restoreAllMocks());

  it('drops the outputs of every layer but the last while training, never in eval mode', () => {
    const rnn = new nn.RNN(3, 4, 2, { dropout: 1 }).double();
    const x = seq([3, 2, 3], 0.1, 1, float64);
    const h0 = seq([2, 2, 4], 0.3, 0.5, float64);
    // p = 1 zeroes layer 0's outputs, so layer 1 sees zeros: the same as a 1-layer RNN with layer 1's weights on zeros.
    const top = new nn.RNN(4, 4).double();
    top.loadStateDict({ weight_ih_l0: rnn.weight_ih_l1!, weight_hh_l0: rnn.weight_hh_l1!, bias_ih_l0: rnn.bias_ih_l1!, bias_hh_l0: rnn.bias_hh_l1! });
    const [trained, hTrained] = rnn.forward(x, h0);
    const [expected, hExpected] = top.forward(zeros([3, 2, 4], { dtype: float64 }), h0.narrow(0, 1, 1));
    expectNear(trained, Array.from(expected.dataSync()), TOL);
    expectNear(hTrained.select(0, 1), Array.from(hExpected.dataSync()), TOL);
    // Layer 0's final state is not dropped, and eval mode is dropout 0.
    const noDropout = new nn.RNN(3, 4, 2).double();
    noDropout.loadStateDict(rnn.stateDict());
    const [evaluated, hEvaluated] = rnn.eval().forward(x, h0);
    const [reference_, hReference] = noDropout.forward(x, h0);
    expectNear(evaluated, Array.from(reference_.dataSync()), TOL);
    expectNear(hEvaluated, Array.from(hReference.dataSync()), TOL);
    expectNear(hTrained.select(0, 0), Array.from(hReference.select(0, 0).dataSync()), TOL);
  });

  it('warns, as PyTorch, when there is no layer after which to drop', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    new nn.LSTM(3, 4, { dropout: 0.5 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('non-zero dropout expects numLayers greater than 1, but got dropout=0.5 and numLayers=1'));
  });
});

describe('argument forms and printing', () => {
  it("positional arguments follow PyTorch's order; options by name are the same", () => {
    const byPosition = new nn.LSTM(3, 4, 2, false, true, 0.25, true, 2);
    const byName = new nn.LSTM(3, 4, { numLayers: 2, bias: false, batchFirst: true, dropout: 0.25, bidirectional: true, projSize: 2 });
    for (const m of [byPosition, byName]) {
      expect([m.numLayers, m.bias, m.batchFirst, m.dropout, m.bidirectional, m.projSize]).toEqual([2, false, true, 0.25, true, 2]);
    }
    expect(byPosition.toString()).toBe('LSTM(3, 4, projSize=2, numLayers=2, bias=false, batchFirst=true, dropout=0.25, bidirectional=true)');
    expect(new nn.RNN(3, 4, 1, 'relu').toString()).toBe("RNN(3, 4, nonlinearity='relu')");
    expect(new nn.GRU(3, 4).toString()).toBe('GRU(3, 4)');
    expect(new nn.RNNCell(3, 4, false, 'relu').toString()).toBe("RNNCell(3, 4, bias=false, nonlinearity='relu')");
    expect(new nn.LSTMCell(3, 4).toString()).toBe('LSTMCell(3, 4)');
    expect(new nn.GRUCell(3, 4, { dtype: float64 }).weight_ih.dtype).toBe(float64);
  });

  it('AC-7, AC-8: in a cpu autocast region the products run in the region\'s dtype, so the input need not match the weights', () => {
    const lstm = new nn.LSTM(3, 4, 2);
    const x = seq([3, 2, 3], 0.1);
    expect(() => lstm.forward(x.to(bfloat16))).toThrow(DTypeError);
    const [out] = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => lstm.forward(x.to(bfloat16)));
    expect(out.dtype).toBe(bfloat16); // a bfloat16 initial state: every step stays bfloat16
  });
  it('an empty batch gives empty outputs of the right shapes', () => {
    const [out, [h, c]] = new nn.LSTM(3, 4, { bidirectional: true }).forward(zeros([2, 0, 3]));
    expect([out.shape, h.shape, c.shape]).toEqual([[2, 0, 8], [2, 0, 4], [2, 0, 4]]);
  });
});

describe('errors', () => {
  it('constructor arguments, with PyTorch\'s messages', () => {
    expect(() => new nn.LSTM(3, 4, { dropout: 1.5 })).toThrow('dropout should be a number in range [0, 1] representing the probability of an element being zeroed');
    expect(() => new nn.LSTM(3, 4, { projSize: 4 })).toThrow('proj_size has to be smaller than hidden_size');
    expect(() => new nn.LSTM(3, 4, { projSize: -1 })).toThrow('proj_size should be a positive integer or zero to disable projections');
    expect(() => new nn.GRU(3, 4, { projSize: 2 } as never)).toThrow(TypeError);
    expect(() => new nn.RNN(3, 4, { nonlinearity: 'sigmoid' as 'tanh' })).toThrow("Unknown nonlinearity 'sigmoid'");
    expect(() => new nn.RNNCell(3, 4, true, 'gelu' as 'tanh')).toThrow(ValueError);
    expect(() => new nn.RNN(3, 0)).toThrow('hidden_size must be greater than zero');
    expect(() => new nn.RNN(3, 4, 0)).toThrow('num_layers must be greater than zero');
    expect(() => new nn.RNN(3, 4.5)).toThrow(TypeError);
    expect(() => new nn.LSTMCell(3, 4, { nonlinearity: 'relu' } as never)).toThrow(TypeError);
  });

  it('forward shapes and dtypes, and the input is left unchanged', () => {
    const lstm = new nn.LSTM(3, 4);
    const x = seq([2, 1, 3], 0.1);
    const before = Array.from(x.dataSync());
    const pair = (a: number[], b: number[]) => [zeros(a), zeros(b)] as [Tensor, Tensor];
    expect(() => lstm.forward(zeros([1, 1, 1, 3]))).toThrow('LSTM: Expected input to be 2-D or 3-D but received 4-D tensor');
    expect(() => lstm.forward(zeros([2, 1, 5]))).toThrow('input.size(-1) must be equal to input_size. Expected 3, got 5');
    expect(() => lstm.forward(zeros([0, 1, 3]))).toThrow('Expected sequence length to be larger than 0 in RNN');
    expect(() => lstm.forward(x, pair([1, 4], [1, 4]))).toThrow('For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors');
    expect(() => lstm.forward(zeros([2, 3]), pair([1, 1, 4], [1, 1, 4]))).toThrow('For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors');
    expect(() => lstm.forward(x, pair([1, 2, 4], [1, 1, 4]))).toThrow('Expected hidden[0] size (1, 1, 4), got [1, 2, 4]');
    expect(() => lstm.forward(x, pair([1, 1, 4], [1, 1, 5]))).toThrow(ShapeError);
    expect(() => lstm.forward(x, pair([1, 1, 4], [1, 1, 5]))).toThrow('Expected hidden[1] size (1, 1, 4), got [1, 1, 5]');
    expect(() => lstm.forward(x, zeros([1, 1, 4]) as never)).toThrow('hx must be a pair [h0, c0]');
    expect(() => lstm.forward(x.double())).toThrow(DTypeError);
    expect(() => lstm.forward(x.double())).toThrow('LSTM: input must have the type float32, got type float64');
    const gru = new nn.GRU(3, 4);
    expect(() => gru.forward(x, zeros([1, 4]))).toThrow('GRU: For batched 3-D input, hx should also be 3-D but got 2-D tensor');
    expect(() => gru.forward(x, zeros([1, 2, 4]))).toThrow('Expected hidden size (1, 1, 4), got [1, 2, 4]');
    expect(Array.from(x.dataSync())).toEqual(before);
  });

  it("cells: PyTorch's messages for the input and state sizes", () => {
    const cell = new nn.RNNCell(3, 4);
    expect(() => cell.forward(zeros([1, 1, 3]))).toThrow('RNNCell: Expected input to be 1-D or 2-D but received 3-D tensor');
    expect(() => cell.forward(zeros([2, 5]))).toThrow('input has inconsistent input_size: got 5 expected 3');
    expect(() => cell.forward(zeros([2, 3]), zeros([3, 4]))).toThrow("Input batch size 2 doesn't match hidden0 batch size 3");
    expect(() => cell.forward(zeros([2, 3]), zeros([2, 5]))).toThrow('hidden0 has inconsistent hidden_size: got 5, expected 4');
    expect(() => cell.forward(zeros([3]), zeros([1, 4]))).toThrow('For unbatched 1-D input, hx should also be 1-D but got 2-D tensor');
    expect(() => new nn.LSTMCell(3, 4).forward(zeros([2, 3]), [zeros([2, 4]), zeros([2, 5])])).toThrow('hidden1 has inconsistent hidden_size: got 5, expected 4');
    expect(() => new nn.GRUCell(3, 4).forward(tensor([[1, 2, 3]], { dtype: float64 }))).toThrow(DTypeError);
  });
});

// PyTorch 1.13 lists none of the recurrent ops for CPU autocast (the op table leaves their cpu
// class out): they decompose above autocast, so the products run in bfloat16 as linear's and the
// gate arithmetic promotes with the float32 initial state. LSTM and GRU (and their cells) end in
// float32, a plain RNN in bfloat16. Reference: rnn_ctc_reference.py's `autocast_recurrent`
// (module(seq(x_shape, 0.1).float()) in `torch.autocast('cpu', dtype=torch.bfloat16)`, float32
// parameters from `fill`).
describe('recurrent layers in a cpu bfloat16 autocast region, against PyTorch 1.13', () => {
  const CASES: Array<[key: string, make: () => Recurrent, xShape: number[]]> = [
    ['autocast-lstm-2l', () => new nn.LSTM(3, 4, 2), [3, 2, 3]],
    ['autocast-gru-bi', () => new nn.GRU(3, 4, { bidirectional: true }), [3, 2, 3]],
    ['autocast-rnn-tanh', () => new nn.RNN(3, 4), [3, 2, 3]],
    ['autocast-rnn-relu', () => new nn.RNN(3, 4, 1, 'relu'), [3, 2, 3]],
    ['autocast-lstmcell', () => new nn.LSTMCell(3, 4), [2, 3]],
    ['autocast-grucell', () => new nn.GRUCell(3, 4), [2, 3]],
    ['autocast-rnncell-tanh', () => new nn.RNNCell(3, 4), [2, 3]],
  ];
  for (const [key, make, xShape] of CASES) {
    const dtypes = reference(key).dtypes as string[];
    it(`AC-7, AC-8: ${key} gives PyTorch's dtypes (${dtypes.join(', ')}) and values`, () => {
      const module = make();
      fill(module, key, float32);
      const x = seq(xShape, 0.1);
      const forward = module.forward.bind(module) as (x: Tensor) => Tensor | [Tensor, Tensor | [Tensor, Tensor]] | [Tensor, Tensor];
      const result = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => forward(x));
      const parts = (Array.isArray(result) ? result.flat() : [result]) as Tensor[];
      expect(parts.map((t) => t.dtype.name)).toEqual(dtypes);
      // The same roundings as PyTorch's: bfloat16 products, float32 or bfloat16 gate arithmetic.
      parts.forEach((t, k) => expectNear(t, numbers(key, `y${k}`), 1e-6));
    });
  }
});

describe("the recurrent ops the layers run (PyTorch's torch.lstm, torch.gru_cell, …)", () => {
  it('F.lstm with the flat weight list gives what nn.LSTM gives (projected, 2 layers, bidirectional, batchFirst)', () => {
    const lstm = new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true, batchFirst: true, projSize: 2 });
    const x = seq([2, 5, 3], 0.1);
    const hx = [seq([4, 2, 2], 0.3, 0.5), seq([4, 2, 4], 0.7, 0.5)] as const;
    const [out, [h, c]] = lstm.forward(x, hx);
    const parts = F.lstm(x, hx, lstm.allWeights.flat(), true, 2, 0, false, true, true);
    [out, h, c].forEach((t, k) => expectNear(parts[k]!, Array.from(t.dataSync()), 0));
  });

  it('F.gruCell and F.rnnReluCell give what the cell modules give; the cells without bias take null', () => {
    const gru = new nn.GRUCell(3, 4);
    const rnn = new nn.RNNCell(3, 4, false, 'relu');
    const x = seq([2, 3], 0.1);
    const h = seq([2, 4], 0.3, 0.5);
    expectNear(F.gruCell(x, h, gru.weight_ih, gru.weight_hh, gru.bias_ih, gru.bias_hh), Array.from(gru.forward(x, h).dataSync()), 0);
    expectNear(F.rnnReluCell(x, h, rnn.weight_ih, rnn.weight_hh), Array.from(rnn.forward(x, h).dataSync()), 0);
  });

  it('refuse inputs of the wrong rank and weight lists of the wrong length, saying what they expected', () => {
    const gru = new nn.GRU(3, 4, 2);
    const weights = gru.allWeights.flat();
    const h0 = zeros([2, 2, 4]);
    expect(() => F.gru(zeros([5, 3]), h0, weights, true, 2, 0, false, false, false)).toThrow(ShapeError);
    expect(() => F.gru(zeros([5, 2, 3]), h0, weights.slice(1), true, 2, 0, false, false, false)).toThrow(/gru\(\): expected 8 weights \(2 layers × 1 directions × \[w_ih, w_hh, b_ih, b_hh\]\), got 7/);
    expect(() => F.gru(zeros([5, 2, 3]), h0, weights, false, 2, 0, false, false, false)).toThrow(ValueError);
    expect(() => F.lstmCell(zeros([3]), [zeros([4]), zeros([4])], zeros([16, 3]), zeros([16, 4]))).toThrow(/lstmCell\(\): expected a 2-D input and 2-D states/);
    expect(() => F.lstm(zeros([5, 2, 3]), zeros([1, 2, 4]) as never, [], true, 1, 0, false, false, false)).toThrow(/lstm\(\): hx must be a pair \[h0, c0\]/);
    expect(() => F.lstmCell(zeros([2, 3]), null as never, zeros([16, 3]), zeros([16, 4]))).toThrow(/lstmCell\(\): hx must be a pair \[h, c\] of tensors, got none/);
  });
});
