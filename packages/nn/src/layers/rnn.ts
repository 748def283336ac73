// nn.RNN, nn.LSTM and nn.GRU (stacked, optionally bidirectional, with dropout between layers) and
// the single-step nn.RNNCell, nn.LSTMCell and nn.GRUCell, with PyTorch's arguments, checks and
// initialisation. Parameters carry PyTorch's own snake_case names (weight_ih_l0, bias_hh_l1_reverse,
// weight_hr_l0, …; weight_ih, … on the cells) in PyTorch's order, so a PyTorch state dict loads
// unchanged. The layers run through PyTorch's recurrent ops, exported as F.lstm, F.gru, F.rnnTanh,
// F.rnnRelu and the cells' F.lstmCell, F.gruCell, F.rnnTanhCell, F.rnnReluCell: each is an op of the
// op table, so an autocast region casts its inputs once at entry by that op's class. The math is
// in functional/rnn.ts.
import { autocastOp, cat, DTypeError, empty, isAutocastEnabled, ShapeError, stack, ValueError, zeros, type OpName, type Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { Parameter } from '../parameter.js';
import { uniform_ } from '../init.js';
import { dropout as dropoutFn } from '../functional/dropout.js';
import { linear } from '../functional/linear.js';
import { cellStep, GATES, runDirection, type CellWeights, type RNNMode } from '../functional/rnn.js';
import { bindArgs, checkTensor, factoryOf, sameShape, type Args, type FactoryOptions } from '../internal/args.js';

/** The options RNN, LSTM and GRU share (PyTorch's keyword arguments), plus where parameters go. */
export interface RNNBaseOptions extends FactoryOptions {
  /** Stacked recurrent layers, each reading the previous one's outputs (default 1). */
  readonly numLayers?: number;
  /** Learn the biases b_ih and b_hh (default true). */
  readonly bias?: boolean;
  /** Input and output are [batch, seq, feature] (default false: [seq, batch, feature]); the states stay [layers, batch, hidden]. */
  readonly batchFirst?: boolean;
  /** Dropout probability on each layer's outputs but the last, while training (default 0). */
  readonly dropout?: number;
  /** Also run each layer backwards over the sequence and concatenate both directions' features (default false). */
  readonly bidirectional?: boolean;
}

/** A plain RNN's activation. */
export type RNNNonlinearity = 'tanh' | 'relu';

/** nn.RNN's options. */
export interface RNNOptions extends RNNBaseOptions {
  /** The activation, 'tanh' (default) or 'relu'. */
  readonly nonlinearity?: RNNNonlinearity;
}

/** nn.LSTM's options. */
export interface LSTMOptions extends RNNBaseOptions {
  /** Project each h to this size with weight_hr (0, the default: no projection); less than hiddenSize. */
  readonly projSize?: number;
}

/** nn.GRU's options. */
export type GRUOptions = RNNBaseOptions;

/** The options of the cells (RNNCell also takes `nonlinearity`). */
export interface RNNCellOptions extends FactoryOptions {
  /** Learn the biases b_ih and b_hh (default true). */
  readonly bias?: boolean;
  /** RNNCell's activation, 'tanh' (default) or 'relu'. */
  readonly nonlinearity?: RNNNonlinearity;
}

const BASE_ARGS = ['numLayers', 'bias', 'batchFirst', 'dropout', 'bidirectional'] as const;
const FACTORY_ARGS = ['device', 'dtype'] as const;

function checkSize(value: unknown, name: string, op: string, min: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${op}: ${name} should be of type int, got: ${String(value)}`);
  if (value < min) throw new ValueError(`${op}: ${name} must be ${min === 0 ? 'non-negative' : 'greater than zero'}, got ${value}`);
}

function modeOf(nonlinearity: unknown): RNNMode {
  if (nonlinearity === 'tanh') return 'RNN_TANH';
  if (nonlinearity === 'relu') return 'RNN_RELU';
  throw new ValueError(`Unknown nonlinearity '${String(nonlinearity)}': use 'tanh' or 'relu'`);
}

/** PyTorch's U(−1/√hiddenSize, 1/√hiddenSize) for every parameter. */
function initUniform(parameters: readonly Tensor[], hiddenSize: number): void {
  const bound = 1 / Math.sqrt(hiddenSize);
  for (const p of parameters) uniform_(p, -bound, bound);
}

/** The input must have the weights' dtype (autocast regions cast inside the products instead). */
function checkInputDType(op: string, input: Tensor, weight: Tensor): void {
  if (input.dtype !== weight.dtype && !isAutocastEnabled(input.device.type)) {
    throw new DTypeError(
      `${op}: input must have the type ${weight.dtype.name}, got type ${input.dtype.name}; convert the input with x.to(${weight.dtype.name}) or the model with model.to(${input.dtype.name})`,
      op,
      input.dtype.name,
    );
  }
}

/** The states given for `input` must have its rank: PyTorch's message for hx (and cx). */
function checkStateRanks(op: string, input: Tensor, hx: readonly Tensor[], batchedRank: number): void {
  hx.forEach((h, k) => checkTensor(h, k === 0 ? 'hx' : 'cx', op));
  if (hx.every((h) => h.ndim === input.ndim)) return;
  const kind = input.ndim === batchedRank ? `batched ${batchedRank}-D` : `unbatched ${batchedRank - 1}-D`;
  throw new ShapeError(
    hx.length === 1
      ? `${op}: For ${kind} input, hx should also be ${input.ndim}-D but got ${hx[0]!.ndim}-D tensor`
      : `${op}: For ${kind} input, hx and cx should also be ${input.ndim}-D but got (${hx.map((h) => `${h.ndim}-D`).join(', ')}) tensors`,
    op,
  );
}

/** LSTM's state: a pair, never a lone tensor. */
function statePair(op: string, hx: unknown): readonly Tensor[] | null {
  if (hx == null) return null;
  if (!Array.isArray(hx) || hx.length !== 2) throw new TypeError(`${op}: hx must be a pair [h0, c0] of tensors (or null for zeros), got ${typeof hx}`);
  return hx as Tensor[];
}

/** The op of the op table that runs each mode over a sequence, and one step of it. */
const SEQUENCE_OP: Readonly<Record<RNNMode, OpName>> = { RNN_TANH: 'rnnTanh', RNN_RELU: 'rnnRelu', LSTM: 'lstm', GRU: 'gru' };
const CELL_OP: Readonly<Record<RNNMode, OpName>> = { RNN_TANH: 'rnnTanhCell', RNN_RELU: 'rnnReluCell', LSTM: 'lstmCell', GRU: 'gruCell' };

/** The states an op takes: [h, c] for LSTM (`statePair` has checked that it is a pair), else [h]. */
function checkStates(op: string, mode: RNNMode, hx: readonly Tensor[]): void {
  if (hx.length !== (mode === 'LSTM' ? 2 : 1)) throw new TypeError(`${op}(): hx must be a pair [h, c] of tensors, got ${hx.length === 0 ? 'none' : 'one'}`);
  hx.forEach((h) => checkTensor(h, 'hx', op));
}

/**
 * PyTorch's torch.lstm/gru/rnn_tanh/rnn_relu: `numLayers` layers (each both ways when
 * `bidirectional`, with dropout between them while `train`) over a 3-D input from the states
 * `hx` ([h] or [h, c], each [layers·directions, N, size]), with the weights in `params` as
 * PyTorch's flat list (per layer and direction: w_ih, w_hh, then b_ih, b_hh when `hasBiases`,
 * then w_hr for a projected LSTM, which its h being smaller than c marks). Returns the output and
 * the final states.
 */
function recurrence(
  mode: RNNMode, input: Tensor, hx: readonly Tensor[], params: readonly Tensor[], hasBiases: boolean, numLayers: number,
  dropout: number, train: boolean, bidirectional: boolean, batchFirst: boolean,
): Tensor[] {
  const op = SEQUENCE_OP[mode];
  checkTensor(input, 'input', op);
  checkStates(op, mode, hx);
  if (input.ndim !== 3 || hx.some((h) => h.ndim !== 3)) {
    throw new ShapeError(`${op}(): expected a 3-D input and 3-D states, got input ${input.ndim}-D and states (${hx.map((h) => `${h.ndim}-D`).join(', ')}); the modules take unbatched input`, op);
  }
  const directions = bidirectional ? 2 : 1;
  const projected = mode === 'LSTM' && hx[0]!.shape[2] !== hx[1]!.shape[2];
  const stride = 2 + (hasBiases ? 2 : 0) + (projected ? 1 : 0);
  if (params.length !== numLayers * directions * stride) {
    throw new ValueError(`${op}(): expected ${numLayers * directions * stride} weights (${numLayers} layers × ${directions} directions × [w_ih, w_hh${hasBiases ? ', b_ih, b_hh' : ''}${projected ? ', w_hr' : ''}]), got ${params.length}`);
  }
  return autocastOp(op, [input, hx, params] as const, (x0, states, weights) => {
    let x = batchFirst ? x0.transpose(0, 1) : x0;
    const finals: Tensor[][] = [];
    for (let layer = 0; layer < numLayers; layer++) {
      if (layer > 0 && train && dropout > 0) x = dropoutFn(x, dropout, true);
      const outputs: Tensor[] = [];
      for (let d = 0; d < directions; d++) {
        const k = layer * directions + d;
        const [weightIh, weightHh, ...rest] = weights.slice(k * stride, (k + 1) * stride) as Tensor[];
        const cell: CellWeights = {
          weightIh: weightIh!, weightHh: weightHh!, biasIh: hasBiases ? rest[0]! : null, biasHh: hasBiases ? rest[1]! : null, weightHr: projected ? rest[rest.length - 1]! : null,
        };
        const { output, state } = runDirection(mode, x, states.map((s) => s.select(0, k)), cell, d === 1);
        outputs.push(output);
        finals.push(state);
      }
      x = outputs.length === 1 ? outputs[0]! : cat(outputs, 2);
    }
    return [batchFirst ? x.transpose(0, 1) : x, ...states.map((_, j) => stack(finals.map((f) => f[j]!)))];
  });
}

/**
 * PyTorch's `torch.lstm`, which nn.LSTM runs: `[output, hN, cN]` of the layers over `input`
 * ([T, N, inputSize], or [N, T, inputSize] with `batchFirst`) from `hx` = [h0, c0]; `params` is
 * the flat weight list (`lstm.allWeights.flat()`). Its own op in autocast regions (lower precision
 * on cuda and webgpu, unlisted on cpu, as PyTorch 1.13).
 */
export function lstm(
  input: Tensor, hx: readonly [Tensor, Tensor], params: readonly Tensor[], hasBiases: boolean, numLayers: number,
  dropout: number, train: boolean, bidirectional: boolean, batchFirst: boolean,
): [Tensor, Tensor, Tensor] {
  return recurrence('LSTM', input, statePair('lstm()', hx) ?? [], params, hasBiases, numLayers, dropout, train, bidirectional, batchFirst) as [Tensor, Tensor, Tensor];
}

/** PyTorch's `torch.gru`, which nn.GRU runs: `[output, hN]`, with `lstm`'s arguments and a single state `hx`. */
export function gru(
  input: Tensor, hx: Tensor, params: readonly Tensor[], hasBiases: boolean, numLayers: number,
  dropout: number, train: boolean, bidirectional: boolean, batchFirst: boolean,
): [Tensor, Tensor] {
  return recurrence('GRU', input, [hx], params, hasBiases, numLayers, dropout, train, bidirectional, batchFirst) as [Tensor, Tensor];
}

/** PyTorch's `torch.rnn_tanh`, which nn.RNN runs with tanh: `[output, hN]`, with `gru`'s arguments. */
export function rnnTanh(
  input: Tensor, hx: Tensor, params: readonly Tensor[], hasBiases: boolean, numLayers: number,
  dropout: number, train: boolean, bidirectional: boolean, batchFirst: boolean,
): [Tensor, Tensor] {
  return recurrence('RNN_TANH', input, [hx], params, hasBiases, numLayers, dropout, train, bidirectional, batchFirst) as [Tensor, Tensor];
}

/** PyTorch's `torch.rnn_relu`, which nn.RNN runs with relu: `[output, hN]`, with `gru`'s arguments. */
export function rnnRelu(
  input: Tensor, hx: Tensor, params: readonly Tensor[], hasBiases: boolean, numLayers: number,
  dropout: number, train: boolean, bidirectional: boolean, batchFirst: boolean,
): [Tensor, Tensor] {
  return recurrence('RNN_RELU', input, [hx], params, hasBiases, numLayers, dropout, train, bidirectional, batchFirst) as [Tensor, Tensor];
}

/** One step of a cell from a 2-D input [N, inputSize] and the states ([h] or [h, c], each [N, hiddenSize]). */
function cellOp(mode: RNNMode, input: Tensor, hx: readonly Tensor[], wIh: Tensor, wHh: Tensor, bIh: Tensor | null, bHh: Tensor | null): Tensor[] {
  const op = CELL_OP[mode];
  checkTensor(input, 'input', op);
  checkStates(op, mode, hx);
  if (input.ndim !== 2 || hx.some((h) => h.ndim !== 2)) {
    throw new ShapeError(`${op}(): expected a 2-D input and 2-D states, got input ${input.ndim}-D and states (${hx.map((h) => `${h.ndim}-D`).join(', ')}); the cell modules take unbatched input`, op);
  }
  return autocastOp(op, [input, hx, wIh, wHh, bIh, bHh] as const, (x, states, wi, wh, bi, bh) =>
    cellStep(mode, linear(x, wi, bi), states, { weightIh: wi, weightHh: wh, biasIh: bi, biasHh: bh, weightHr: null }));
}

/** PyTorch's `torch.lstm_cell`, which nn.LSTMCell runs: `[h', c']` from input [N, inputSize] and `hx` = [h, c]. */
export function lstmCell(input: Tensor, hx: readonly [Tensor, Tensor], wIh: Tensor, wHh: Tensor, bIh: Tensor | null = null, bHh: Tensor | null = null): [Tensor, Tensor] {
  return cellOp('LSTM', input, statePair('lstmCell()', hx) ?? [], wIh, wHh, bIh, bHh) as [Tensor, Tensor];
}

/** PyTorch's `torch.gru_cell`, which nn.GRUCell runs: h' from input [N, inputSize] and h [N, hiddenSize]. */
export function gruCell(input: Tensor, hx: Tensor, wIh: Tensor, wHh: Tensor, bIh: Tensor | null = null, bHh: Tensor | null = null): Tensor {
  return cellOp('GRU', input, [hx], wIh, wHh, bIh, bHh)[0]!;
}

/** PyTorch's `torch.rnn_tanh_cell`, which nn.RNNCell runs with tanh: `gruCell`'s arguments. */
export function rnnTanhCell(input: Tensor, hx: Tensor, wIh: Tensor, wHh: Tensor, bIh: Tensor | null = null, bHh: Tensor | null = null): Tensor {
  return cellOp('RNN_TANH', input, [hx], wIh, wHh, bIh, bHh)[0]!;
}

/** PyTorch's `torch.rnn_relu_cell`, which nn.RNNCell runs with relu: `gruCell`'s arguments. */
export function rnnReluCell(input: Tensor, hx: Tensor, wIh: Tensor, wHh: Tensor, bIh: Tensor | null = null, bHh: Tensor | null = null): Tensor {
  return cellOp('RNN_RELU', input, [hx], wIh, wHh, bIh, bHh)[0]!;
}

/** The names of one layer direction's parameters, PyTorch's. */
interface CellNames {
  readonly weightIh: string;
  readonly weightHh: string;
  readonly biasIh: string | null;
  readonly biasHh: string | null;
  readonly weightHr: string | null;
}

/**
 * What RNN, LSTM and GRU share (PyTorch's `RNNBase`): the stacked, optionally bidirectional layers,
 * their parameters by PyTorch's names, and the forward pass over [h] or [h, c] states.
 */
abstract class RNNBase<State> extends Module<[input: Tensor, hx?: State | null], [Tensor, State]> {
  /** The parameters by PyTorch's names: `weight_ih_l0`, `bias_hh_l1_reverse`, `weight_hr_l0`, …. */
  [name: `weight_${string}` | `bias_${string}`]: Parameter | undefined;
  /** Which cell each layer runs. */
  readonly mode: RNNMode;
  /** Each input step's feature size. */
  readonly inputSize: number;
  /** The hidden state's size (and the cell state's, for LSTM). */
  readonly hiddenSize: number;
  /** Stacked layers. */
  readonly numLayers: number;
  /** Whether the layers learn biases. */
  readonly bias: boolean;
  /** Whether input and output are [batch, seq, feature]. */
  readonly batchFirst: boolean;
  /** Dropout probability between layers while training. */
  readonly dropout: number;
  /** Whether each layer also runs backwards. */
  readonly bidirectional: boolean;
  /** LSTM's projection size (0: none). */
  readonly projSize: number;
  readonly #cells: CellNames[] = [];

  constructor(mode: RNNMode, op: string, inputSize: number, hiddenSize: number, options: RNNBaseOptions & { projSize?: number }) {
    super();
    const { numLayers = 1, bias = true, batchFirst = false, dropout = 0, bidirectional = false, projSize = 0 } = options;
    checkSize(inputSize, 'input_size', op, 0);
    checkSize(hiddenSize, 'hidden_size', op, 1);
    checkSize(numLayers, 'num_layers', op, 1);
    if (typeof dropout !== 'number' || !(dropout >= 0 && dropout <= 1)) {
      throw new ValueError(`${op}: dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got ${String(dropout)}`);
    }
    if (dropout > 0 && numLayers === 1) {
      console.warn(`${op}: dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects numLayers greater than 1, but got dropout=${dropout} and numLayers=${numLayers}`);
    }
    if (!Number.isInteger(projSize) || projSize < 0) throw new ValueError(`${op}: proj_size should be a positive integer or zero to disable projections, got ${projSize}`);
    if (projSize >= hiddenSize) throw new ValueError(`${op}: proj_size has to be smaller than hidden_size (projSize=${projSize}, hiddenSize=${hiddenSize})`);
    this.mode = mode;
    this.inputSize = inputSize;
    this.hiddenSize = hiddenSize;
    this.numLayers = numLayers;
    this.bias = bias;
    this.batchFirst = batchFirst;
    this.dropout = dropout;
    this.bidirectional = bidirectional;
    this.projSize = projSize;
    const factory = factoryOf(options);
    const gates = GATES[mode] * hiddenSize;
    const out = projSize || hiddenSize;
    const add = (name: string, shape: number[]): string => {
      this.registerParameter(name, Parameter(empty(shape, factory)));
      return name;
    };
    for (let layer = 0; layer < numLayers; layer++) {
      for (const suffix of bidirectional ? ['', '_reverse'] : ['']) {
        const at = `_l${layer}${suffix}`;
        const layerInput = layer === 0 ? inputSize : out * (bidirectional ? 2 : 1);
        this.#cells.push({
          weightIh: add(`weight_ih${at}`, [gates, layerInput]),
          weightHh: add(`weight_hh${at}`, [gates, out]),
          biasIh: bias ? add(`bias_ih${at}`, [gates]) : null,
          biasHh: bias ? add(`bias_hh${at}`, [gates]) : null,
          weightHr: projSize > 0 ? add(`weight_hr${at}`, [projSize, hiddenSize]) : null,
        });
      }
    }
    this.resetParameters();
  }

  /** Every parameter ~ U(−1/√hiddenSize, 1/√hiddenSize), as PyTorch initialises them. */
  resetParameters(): void {
    initUniform(this.parameters(), this.hiddenSize);
  }

  #weights(names: CellNames): CellWeights {
    const get = (name: string | null) => (name === null ? null : (this as unknown as Record<string, Parameter>)[name]!);
    return { weightIh: get(names.weightIh)!, weightHh: get(names.weightHh)!, biasIh: get(names.biasIh), biasHh: get(names.biasHh), weightHr: get(names.weightHr) };
  }

  /** PyTorch's `all_weights`: per layer and direction, [weight_ih, weight_hh, bias_ih?, bias_hh?, weight_hr?]. */
  get allWeights(): Parameter[][] {
    return this.#cells.map((names) => {
      const w = this.#weights(names);
      return [w.weightIh, w.weightHh, w.biasIh, w.biasHh, w.weightHr].filter((p): p is Parameter => p !== null);
    });
  }

  /**
   * The forward pass over the states as a list ([h] or [h, c]), each [numLayers·directions, N, size]
   * (without N for unbatched input); null starts from zeros.
   */
  protected run(input: Tensor, hx: readonly Tensor[] | null): [Tensor, Tensor[]] {
    const op = this.constructor.name;
    checkTensor(input, 'input', op);
    if (input.ndim !== 2 && input.ndim !== 3) throw new ShapeError(`${op}: Expected input to be 2-D or 3-D but received ${input.ndim}-D tensor`, op);
    const batched = input.ndim === 3;
    if (hx) checkStateRanks(op, input, hx, 3);
    checkInputDType(op, input, this.#weights(this.#cells[0]!).weightIh);
    const batchDim = this.batchFirst ? 0 : 1;
    const x = batched ? input : input.unsqueeze(batchDim);
    const [steps, batch, features] = [x.shape[1 - batchDim]!, x.shape[batchDim]!, x.shape[2]!];
    if (features !== this.inputSize) throw new ShapeError(`${op}: input.size(-1) must be equal to input_size. Expected ${this.inputSize}, got ${features}`, op);
    if (steps === 0) throw new ShapeError(`${op}: Expected sequence length to be larger than 0 in RNN`, op);
    const directions = this.bidirectional ? 2 : 1;
    const rows = this.numLayers * directions;
    const sizes = this.mode === 'LSTM' ? [[rows, batch, this.projSize || this.hiddenSize], [rows, batch, this.hiddenSize]] : [[rows, batch, this.hiddenSize]];
    const states = hx ? hx.map((h) => (batched ? h : h.unsqueeze(1))) : sizes.map((s) => zeros(s, { dtype: input.dtype, device: input.device }));
    states.forEach((h, k) => {
      if (!sameShape(h.shape, sizes[k]!)) {
        throw new ShapeError(`${op}: Expected hidden${states.length > 1 ? `[${k}]` : ''} size (${sizes[k]!.join(', ')}), got [${h.shape.join(', ')}]`, op);
      }
    });
    const [output, ...last] = recurrence(this.mode, x, states, this.allWeights.flat(), this.bias, this.numLayers, this.dropout, this.training, this.bidirectional, this.batchFirst);
    return [batched ? output! : output!.squeeze(batchDim), batched ? last : last.map((h) => h.squeeze(1))];
  }

  /** The sizes, then the options that differ from PyTorch's defaults. */
  override extraRepr(): string {
    const parts = [`${this.inputSize}, ${this.hiddenSize}`];
    if (this.projSize !== 0) parts.push(`projSize=${this.projSize}`);
    if (this.mode === 'RNN_RELU') parts.push("nonlinearity='relu'");
    if (this.numLayers !== 1) parts.push(`numLayers=${this.numLayers}`);
    if (!this.bias) parts.push('bias=false');
    if (this.batchFirst) parts.push('batchFirst=true');
    if (this.dropout !== 0) parts.push(`dropout=${this.dropout}`);
    if (this.bidirectional) parts.push('bidirectional=true');
    return parts.join(', ');
  }
}

/**
 * An Elman RNN, PyTorch's `nn.RNN`: h_t = tanh(x_t·W_ihᵀ + b_ih + h_{t−1}·W_hhᵀ + b_hh) (or relu),
 * stacked `numLayers` deep. `forward(input, h0?)` returns `[output, hN]`: output [T, N, D·hidden]
 * (batchFirst: [N, T, …]; unbatched input [T, inputSize]: [T, D·hidden]) and hN [D·numLayers, N, hidden].
 */
export class RNN extends RNNBase<Tensor> {
  /** PyTorch's order: `new nn.RNN(10, 20, 2, 'relu')`, or the arguments after hiddenSize by name (`{ batchFirst: true }`). */
  constructor(
    inputSize: number, hiddenSize: number,
    ...args: Args<[numLayers: number, nonlinearity: RNNNonlinearity, bias: boolean, batchFirst: boolean, dropout: number, bidirectional: boolean], RNNOptions>
  ) {
    const options = bindArgs<RNNOptions>('RNN', ['numLayers', 'nonlinearity', ...BASE_ARGS.slice(1)], args, FACTORY_ARGS);
    super(modeOf(options.nonlinearity ?? 'tanh'), 'RNN', inputSize, hiddenSize, options);
  }

  /** The outputs of the last layer at every step, and each layer direction's last hidden state. */
  forward(input: Tensor, hx: Tensor | null = null): [Tensor, Tensor] {
    const [output, [h]] = this.run(input, hx === null ? null : [hx]);
    return [output, h!];
  }
}

/**
 * A long short-term memory RNN, PyTorch's `nn.LSTM` (gates i, f, g, o; optional projection of h to
 * `projSize`). `forward(input, [h0, c0]?)` returns `[output, [hN, cN]]`: output [T, N, D·hOut]
 * with hOut = projSize || hiddenSize, hN [D·numLayers, N, hOut], cN [D·numLayers, N, hiddenSize].
 */
export class LSTM extends RNNBase<[Tensor, Tensor]> {
  /** PyTorch's order: `new nn.LSTM(10, 20, 2)`, or the arguments after hiddenSize by name (`{ bidirectional: true, projSize: 8 }`). */
  constructor(
    inputSize: number, hiddenSize: number,
    ...args: Args<[numLayers: number, bias: boolean, batchFirst: boolean, dropout: number, bidirectional: boolean, projSize: number], LSTMOptions>
  ) {
    super('LSTM', 'LSTM', inputSize, hiddenSize, bindArgs<LSTMOptions>('LSTM', [...BASE_ARGS, 'projSize'], args, FACTORY_ARGS));
  }

  /** The outputs of the last layer at every step, and each layer direction's last hidden and cell states. */
  forward(input: Tensor, hx: readonly [Tensor, Tensor] | null = null): [Tensor, [Tensor, Tensor]] {
    const [output, [h, c]] = this.run(input, statePair('LSTM', hx));
    return [output, [h!, c!]];
  }
}

/**
 * A gated recurrent unit RNN, PyTorch's `nn.GRU` (gates r, z, n with n = tanh(W_in·x + b_in +
 * r·(W_hn·h + b_hn))). `forward(input, h0?)` returns `[output, hN]` shaped as nn.RNN's.
 */
export class GRU extends RNNBase<Tensor> {
  /** PyTorch's order: `new nn.GRU(10, 20, 2)`, or the arguments after hiddenSize by name (`{ batchFirst: true }`). */
  constructor(
    inputSize: number, hiddenSize: number,
    ...args: Args<[numLayers: number, bias: boolean, batchFirst: boolean, dropout: number, bidirectional: boolean], GRUOptions>
  ) {
    super('GRU', 'GRU', inputSize, hiddenSize, bindArgs<GRUOptions>('GRU', BASE_ARGS, args, FACTORY_ARGS));
  }

  /** The outputs of the last layer at every step, and each layer direction's last hidden state. */
  forward(input: Tensor, hx: Tensor | null = null): [Tensor, Tensor] {
    const [output, [h]] = this.run(input, hx === null ? null : [hx]);
    return [output, h!];
  }
}

/** What the cells share (PyTorch's `RNNCellBase`): one step's parameters and checks. */
abstract class RNNCellBase<State> extends Module<[input: Tensor, hx?: State | null], State> {
  /** Which cell this is. */
  readonly mode: RNNMode;
  /** The input's feature size. */
  readonly inputSize: number;
  /** The hidden state's size. */
  readonly hiddenSize: number;
  /** Whether the cell learns biases. */
  readonly bias: boolean;
  /** [gates·hiddenSize, inputSize]. */
  weight_ih: Parameter;
  /** [gates·hiddenSize, hiddenSize]. */
  weight_hh: Parameter;
  /** [gates·hiddenSize], or null without bias. */
  bias_ih: Parameter | null;
  /** [gates·hiddenSize], or null without bias. */
  bias_hh: Parameter | null;

  constructor(mode: RNNMode, op: string, inputSize: number, hiddenSize: number, options: RNNCellOptions) {
    super();
    const { bias = true } = options;
    checkSize(inputSize, 'input_size', op, 0);
    checkSize(hiddenSize, 'hidden_size', op, 1);
    this.mode = mode;
    this.inputSize = inputSize;
    this.hiddenSize = hiddenSize;
    this.bias = bias;
    const factory = factoryOf(options);
    const gates = GATES[mode] * hiddenSize;
    this.weight_ih = Parameter(empty([gates, inputSize], factory));
    this.weight_hh = Parameter(empty([gates, hiddenSize], factory));
    this.bias_ih = bias ? Parameter(empty([gates], factory)) : null;
    this.bias_hh = bias ? Parameter(empty([gates], factory)) : null;
    this.resetParameters();
  }

  /** Every parameter ~ U(−1/√hiddenSize, 1/√hiddenSize), as PyTorch initialises them. */
  resetParameters(): void {
    initUniform(this.parameters(), this.hiddenSize);
  }

  /** One step over the state as a list ([h] or [h, c], each [N, hiddenSize] or unbatched [hiddenSize]); null starts from zeros. */
  protected step(input: Tensor, hx: readonly Tensor[] | null): Tensor[] {
    const op = this.constructor.name;
    checkTensor(input, 'input', op);
    if (input.ndim !== 1 && input.ndim !== 2) throw new ShapeError(`${op}: Expected input to be 1-D or 2-D but received ${input.ndim}-D tensor`, op);
    const batched = input.ndim === 2;
    if (hx) checkStateRanks(op, input, hx, 2);
    checkInputDType(op, input, this.weight_ih);
    const x = batched ? input : input.unsqueeze(0);
    if (x.shape[1] !== this.inputSize) throw new ShapeError(`${op}: input has inconsistent input_size: got ${x.shape[1]} expected ${this.inputSize}`, op);
    const batch = x.shape[0]!;
    const count = this.mode === 'LSTM' ? 2 : 1;
    const states = hx ? hx.map((h) => (batched ? h : h.unsqueeze(0))) : Array.from({ length: count }, () => zeros([batch, this.hiddenSize], { dtype: input.dtype, device: input.device }));
    states.forEach((h, k) => {
      if (h.shape[0] !== batch) throw new ShapeError(`${op}: Input batch size ${batch} doesn't match hidden${k} batch size ${h.shape[0]}`, op);
      if (h.shape[1] !== this.hiddenSize) throw new ShapeError(`${op}: hidden${k} has inconsistent hidden_size: got ${h.shape[1]}, expected ${this.hiddenSize}`, op);
    });
    const next = cellOp(this.mode, x, states, this.weight_ih, this.weight_hh, this.bias_ih, this.bias_hh);
    return batched ? next : next.map((h) => h.squeeze(0));
  }

  /** The sizes, then the options that differ from PyTorch's defaults. */
  override extraRepr(): string {
    return `${this.inputSize}, ${this.hiddenSize}${this.bias ? '' : ', bias=false'}${this.mode === 'RNN_RELU' ? ", nonlinearity='relu'" : ''}`;
  }
}

/** One step of an Elman RNN, PyTorch's `nn.RNNCell`: h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh) (or relu). */
export class RNNCell extends RNNCellBase<Tensor> {
  /** PyTorch's order: `new nn.RNNCell(10, 20, true, 'relu')`, or by name (`{ nonlinearity: 'relu' }`). */
  constructor(inputSize: number, hiddenSize: number, ...args: Args<[bias: boolean, nonlinearity: RNNNonlinearity], RNNCellOptions>) {
    const options = bindArgs<RNNCellOptions>('RNNCell', ['bias', 'nonlinearity'], args, FACTORY_ARGS);
    super(modeOf(options.nonlinearity ?? 'tanh'), 'RNNCell', inputSize, hiddenSize, options);
  }

  /** h' from input [N, inputSize] (or [inputSize]) and h [N, hiddenSize] (zeros when absent). */
  forward(input: Tensor, hx: Tensor | null = null): Tensor {
    return this.step(input, hx === null ? null : [hx])[0]!;
  }
}

/** One step of an LSTM, PyTorch's `nn.LSTMCell`: `forward(input, [h, c]?)` returns `[h', c']`. */
export class LSTMCell extends RNNCellBase<[Tensor, Tensor]> {
  /** PyTorch's order: `new nn.LSTMCell(10, 20, false)`, or by name (`{ bias: false }`). */
  constructor(inputSize: number, hiddenSize: number, ...args: Args<[bias: boolean], Omit<RNNCellOptions, 'nonlinearity'>>) {
    super('LSTM', 'LSTMCell', inputSize, hiddenSize, bindArgs<RNNCellOptions>('LSTMCell', ['bias'], args, FACTORY_ARGS));
  }

  /** [h', c'] from input [N, inputSize] (or [inputSize]) and [h, c], each [N, hiddenSize] (zeros when absent). */
  forward(input: Tensor, hx: readonly [Tensor, Tensor] | null = null): [Tensor, Tensor] {
    const [h, c] = this.step(input, statePair('LSTMCell', hx));
    return [h!, c!];
  }
}

/** One step of a GRU, PyTorch's `nn.GRUCell`. */
export class GRUCell extends RNNCellBase<Tensor> {
  /** PyTorch's order: `new nn.GRUCell(10, 20, false)`, or by name (`{ bias: false }`). */
  constructor(inputSize: number, hiddenSize: number, ...args: Args<[bias: boolean], Omit<RNNCellOptions, 'nonlinearity'>>) {
    super('GRU', 'GRUCell', inputSize, hiddenSize, bindArgs<RNNCellOptions>('GRUCell', ['bias'], args, FACTORY_ARGS));
  }

  /** h' from input [N, inputSize] (or [inputSize]) and h [N, hiddenSize] (zeros when absent). */
  forward(input: Tensor, hx: Tensor | null = null): Tensor {
    return this.step(input, hx === null ? null : [hx])[0]!;
  }
}
