// The recurrences of PyTorch's RNN, LSTM and GRU cells, and one layer direction run over a
// sequence, as tensor ops (so they run and differentiate on every backend). The gates are
// PyTorch's, in its order:
//   RNN   h' = tanh or relu(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)
//   LSTM  i, f, g, o = σ, σ, tanh, σ of (x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh), c' = f·c + i·g,
//         h' = o·tanh(c'), then h'·W_hrᵀ with a projection
//   GRU   r, z = σ(x·W_i{r,z}ᵀ + b_i{r,z} + h·W_h{r,z}ᵀ + b_h{r,z}),
//         n = tanh(x·W_inᵀ + b_in + r·(h·W_hnᵀ + b_hn)), h' = (1 − z)·n + z·h
import { stack, type Tensor } from '@core/tensor';
import { linear } from './linear.js';

/** PyTorch's RNN modes: which cell a layer runs. */
export type RNNMode = 'RNN_TANH' | 'RNN_RELU' | 'LSTM' | 'GRU';

/** How many gate blocks W_ih and W_hh stack, per mode. */
export const GATES: Readonly<Record<RNNMode, number>> = { RNN_TANH: 1, RNN_RELU: 1, LSTM: 4, GRU: 3 };

/** The weights of one cell: one layer and direction of a recurrent layer, or a cell module. */
export interface CellWeights {
  readonly weightIh: Tensor;
  readonly weightHh: Tensor;
  readonly biasIh: Tensor | null;
  readonly biasHh: Tensor | null;
  /** LSTM's projection of h, [projSize, hiddenSize], or null. */
  readonly weightHr: Tensor | null;
}

/**
 * One step from the input's gate pre-activations `gi` = x·W_ihᵀ + b_ih and the state ([h], or
 * [h, c] for LSTM) to the new state.
 */
export function cellStep(mode: RNNMode, gi: Tensor, state: readonly Tensor[], w: CellWeights): Tensor[] {
  const h = state[0]!;
  const gh = linear(h, w.weightHh, w.biasHh);
  switch (mode) {
    case 'RNN_TANH': return [gi.add(gh).tanh()];
    case 'RNN_RELU': return [gi.add(gh).relu()];
    case 'LSTM': {
      const [i, f, g, o] = gi.add(gh).chunk(4, -1) as [Tensor, Tensor, Tensor, Tensor];
      const c = f.sigmoid().mul(state[1]!).add(i.sigmoid().mul(g.tanh()));
      const out = o.sigmoid().mul(c.tanh());
      return [w.weightHr ? linear(out, w.weightHr) : out, c];
    }
    case 'GRU': {
      const [ir, iz, inew] = gi.chunk(3, -1) as [Tensor, Tensor, Tensor];
      const [hr, hz, hnew] = gh.chunk(3, -1) as [Tensor, Tensor, Tensor];
      const r = ir.add(hr).sigmoid();
      const z = iz.add(hz).sigmoid();
      const n = inew.add(r.mul(hnew)).tanh();
      return [n.add(z.mul(h.sub(n)))];
    }
    default: return mode satisfies never;
  }
}

/**
 * One direction of one layer over a sequence-first input [T, N, inputSize] from `state`: the
 * outputs [T, N, hOut] in time order (a reverse direction reads the sequence backwards) and the
 * final state. The input projection is one product for all steps.
 */
export function runDirection(mode: RNNMode, input: Tensor, state: readonly Tensor[], w: CellWeights, reverse: boolean): { output: Tensor; state: Tensor[] } {
  const gi = linear(input, w.weightIh, w.biasIh);
  const steps = input.shape[0]!;
  const outputs = new Array<Tensor>(steps);
  let current = [...state];
  for (let k = 0; k < steps; k++) {
    const t = reverse ? steps - 1 - k : k;
    current = cellStep(mode, gi.select(0, t), current, w);
    outputs[t] = current[0]!;
  }
  return { output: stack(outputs), state: current };
}
