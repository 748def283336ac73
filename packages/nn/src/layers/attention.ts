// nn.MultiheadAttention: PyTorch's layer with its parameter names (fields inProjWeight,
// inProjBias, outProj, … registered as in_proj_weight, in_proj_bias, out_proj, …), initialisation
// and forward semantics (PyTorch 2.1's
// multi_head_attention_forward): masks where true means "masked out" (the opposite of
// F.scaledDotProductAttention's bool masks), batch-first or sequence-first input, optional learned
// key/value biases and a zero key, and the attention weights averaged over heads on request.
import { bool, cat, empty, pad, ShapeError, TensorError, ValueError, zeros, DTypeError, type Tensor } from '@core/tensor';
import { Module, type RegisteredNames } from '../module.js';
import { Parameter } from '../parameter.js';
import { Linear } from './linear.js';
import { linear } from '../functional/linear.js';
import { additiveMask, attention } from '../functional/attention.js';
import { checkProbability } from '../functional/dropout.js';
import { xavierNormal_, xavierUniform_, zeros_ } from '../init.js';
import { bindArgs, checkTensor, factoryOf, sameShape, shapeText, type Args, type FactoryOptions } from '../internal/args.js';

/** MultiheadAttention's options (PyTorch's keyword arguments), plus where its parameters go. */
export interface MultiheadAttentionOptions extends FactoryOptions {
  /** Dropout probability on the attention weights while training (default 0). */
  readonly dropout?: number;
  /** Learn the input and output projections' biases (default true). */
  readonly bias?: boolean;
  /** Learn a bias key and value appended to the keys and values (`biasK`, `biasV`; default false). */
  readonly addBiasKv?: boolean;
  /** Append a key and value of zeros (default false). */
  readonly addZeroAttn?: boolean;
  /** The keys' feature size (default embedDim). */
  readonly kdim?: number | null;
  /** The values' feature size (default embedDim). */
  readonly vdim?: number | null;
  /** Inputs and output are [batch, seq, feature] (default false: [seq, batch, feature]). */
  readonly batchFirst?: boolean;
}

/** MultiheadAttention.forward's parameters after query, key and value, by name. */
export interface MultiheadAttentionForwardOptions {
  /** `[N, S]` (or [S] unbatched): bool, true where a key is padding (ignored), or float, added to the scores. */
  readonly keyPaddingMask?: Tensor | null;
  /** Also return the attention weights (default true). */
  readonly needWeights?: boolean;
  /** `[L, S]` or [N·numHeads, L, S]: bool, true where attention is not allowed, or float, added to the scores. */
  readonly attnMask?: Tensor | null;
  /** Average the returned weights over the heads (default true). */
  readonly averageAttnWeights?: boolean;
  /** A hint that `attnMask` is the causal mask (it must be given too). */
  readonly isCausal?: boolean;
}

type ForwardArgs = Args<[keyPaddingMask: Tensor | null, needWeights: boolean, attnMask: Tensor | null, averageAttnWeights: boolean, isCausal: boolean], MultiheadAttentionForwardOptions>;

const OP = 'MultiheadAttention';
const CONSTRUCTOR_ARGS = ['dropout', 'bias', 'addBiasKv', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst'] as const;
const FORWARD_ARGS = ['keyPaddingMask', 'needWeights', 'attnMask', 'averageAttnWeights', 'isCausal'] as const;

function checkPositive(value: unknown, name: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ValueError(`${OP}: ${name} must be a positive integer, got ${String(value)}`);
  }
}

/**
 * A mask of bool (true: masked out) or the query's floating dtype as an additive float mask (PyTorch's
 * `_canonical_mask`), or null.
 */
function canonicalMask(mask: Tensor | null, name: string, query: Tensor): Tensor | null {
  if (mask === null) return null;
  checkTensor(mask, name, OP);
  if (mask.dtype === bool) return additiveMask(mask.logicalNot(), query);
  if (mask.dtype !== query.dtype) {
    throw new DTypeError(`${OP}(): only bool and floating types of ${name} are supported, and a float ${name} must have the query's dtype (${query.dtype.name}), got ${mask.dtype.name}`, OP, mask.dtype.name);
  }
  return mask;
}

/** PyTorch's `_mha_shape_check`: batched (3-D) or unbatched (2-D) inputs and masks of matching ranks; true when batched. */
function checkRanks(query: Tensor, key: Tensor, value: Tensor, keyPaddingMask: Tensor | null, attnMask: Tensor | null): boolean {
  const batched = query.ndim === 3;
  if (!batched && query.ndim !== 2) throw new ShapeError(`${OP}(): query should be unbatched 2D or batched 3D tensor but received ${query.ndim}-D query tensor`, OP);
  const kind = batched ? 'batched (3-D)' : 'unbatched (2-D)';
  if (key.ndim !== query.ndim || value.ndim !== query.ndim) {
    throw new ShapeError(`${OP}(): For ${kind} \`query\`, expected \`key\` and \`value\` to be ${query.ndim}-D but found ${key.ndim}-D and ${value.ndim}-D tensors respectively`, OP);
  }
  if (keyPaddingMask !== null && keyPaddingMask.ndim !== query.ndim - 1) {
    throw new ShapeError(`${OP}(): For ${kind} \`query\`, expected \`keyPaddingMask\` to be null or ${query.ndim - 1}-D but found ${keyPaddingMask.ndim}-D tensor instead`, OP);
  }
  if (attnMask !== null && attnMask.ndim !== 2 && attnMask.ndim !== 3) {
    throw new ShapeError(`${OP}(): For ${kind} \`query\`, expected \`attnMask\` to be null, 2-D or 3-D but found ${attnMask.ndim}-D tensor instead`, OP);
  }
  return batched;
}

/** The feature sizes and the lengths of sequence-first [seq, N, features] inputs. */
function checkShapes(mha: MultiheadAttention, query: Tensor, key: Tensor, value: Tensor): void {
  const E = query.shape[2]!;
  if (E !== mha.embedDim) throw new ShapeError(`${OP}(): was expecting embedding dimension of ${mha.embedDim}, but got ${E} (query ${shapeText(query.shape)})`, OP);
  if (key.shape[2] !== mha.kdim || value.shape[2] !== mha.vdim) {
    throw new ShapeError(`${OP}(): expected key and value feature sizes ${mha.kdim} and ${mha.vdim} (kdim, vdim), got ${key.shape[2]} and ${value.shape[2]}`, OP);
  }
  if (!sameShape(key.shape.slice(0, 2), value.shape.slice(0, 2)) || key.shape[1] !== query.shape[1]) {
    throw new ShapeError(`${OP}(): key ${shapeText(key.shape)} and value ${shapeText(value.shape)} must have the same sequence length, and the query's batch size ${query.shape[1]}`, OP);
  }
}

/** The input projections of sequence-first query, key and value. */
function project(mha: MultiheadAttention, query: Tensor, key: Tensor, value: Tensor): [Tensor, Tensor, Tensor] {
  const [bq, bk, bv] = mha.inProjBias ? mha.inProjBias.chunk(3) : [null, null, null];
  const [wq, wk, wv] = mha.inProjWeight ? mha.inProjWeight.chunk(3) : [mha.qProjWeight!, mha.kProjWeight!, mha.vProjWeight!];
  return [linear(query, wq!, bq), linear(key, wk!, bk), linear(value, wv!, bv)];
}

/** A 2-D [L, S] or 3-D [N·numHeads, L, S] attention mask, checked, as 3-D. */
function attnMask3d(mask: Tensor, L: number, S: number, batchHeads: number): Tensor {
  const expected = mask.ndim === 2 ? [L, S] : [batchHeads, L, S];
  if (!sameShape(mask.shape, expected)) throw new ShapeError(`${OP}(): The shape of the ${mask.ndim}D attnMask is ${shapeText(mask.shape)}, but should be ${shapeText(expected)}.`, OP);
  return mask.ndim === 2 ? mask.unsqueeze(0) : mask;
}

/**
 * Attention over `numHeads` heads of embedDim/numHeads features each, with learned input and
 * output projections: PyTorch's `nn.MultiheadAttention`. `forward(query, key, value, …)` returns
 * `[output, weights]` (weights null unless `needWeights`).
 */
export class MultiheadAttention extends Module<[query: Tensor, key: Tensor, value: Tensor, ...rest: ForwardArgs], [Tensor, Tensor | null]> {
  /** The parameters' and the output projection's PyTorch names (`in_proj_weight`, …, `out_proj`, `bias_k`, `bias_v`). */
  static override readonly registeredNames: RegisteredNames<MultiheadAttention> = {
    inProjWeight: 'in_proj_weight', qProjWeight: 'q_proj_weight', kProjWeight: 'k_proj_weight', vProjWeight: 'v_proj_weight',
    inProjBias: 'in_proj_bias', outProj: 'out_proj', biasK: 'bias_k', biasV: 'bias_v',
  };
  /** The query's (and output's) feature size E. */
  readonly embedDim: number;
  /** The keys' feature size. */
  readonly kdim: number;
  /** The values' feature size. */
  readonly vdim: number;
  /** The number of heads. */
  readonly numHeads: number;
  /** Dropout probability on the attention weights while training. */
  readonly dropout: number;
  /** Whether inputs and output are [batch, seq, feature]. */
  readonly batchFirst: boolean;
  /** embedDim / numHeads. */
  readonly headDim: number;
  /** Whether a zero key and value are appended. */
  readonly addZeroAttn: boolean;
  /** `in_proj_weight`, `[3·embedDim, embedDim]`: the query, key and value projections stacked (null when kdim or vdim ≠ embedDim). */
  inProjWeight: Parameter | null;
  /** `q_proj_weight`, `[embedDim, embedDim]` when kdim or vdim ≠ embedDim, else null. */
  qProjWeight: Parameter | null;
  /** `k_proj_weight`, `[embedDim, kdim]` when kdim or vdim ≠ embedDim, else null. */
  kProjWeight: Parameter | null;
  /** `v_proj_weight`, `[embedDim, vdim]` when kdim or vdim ≠ embedDim, else null. */
  vProjWeight: Parameter | null;
  /** `in_proj_bias`, `[3·embedDim]`: the three projections' biases (null without bias). */
  inProjBias: Parameter | null;
  /** `out_proj`: the output projection, embedDim → embedDim. */
  outProj: Linear;
  /** `bias_k`, `[1, 1, embedDim]`: a learned key appended to the keys (addBiasKv), else null. */
  biasK: Parameter | null;
  /** `bias_v`, `[1, 1, embedDim]`: a learned value appended to the values (addBiasKv), else null. */
  biasV: Parameter | null;

  /** PyTorch's order: `new nn.MultiheadAttention(512, 8, 0.1)`, or the arguments after numHeads by name (`{ batchFirst: true }`). */
  constructor(
    embedDim: number, numHeads: number,
    ...args: Args<[dropout: number, bias: boolean, addBiasKv: boolean, addZeroAttn: boolean, kdim: number | null, vdim: number | null, batchFirst: boolean], MultiheadAttentionOptions>
  ) {
    super();
    const options = bindArgs<MultiheadAttentionOptions>(OP, CONSTRUCTOR_ARGS, args, ['device', 'dtype']);
    const { dropout = 0, bias = true, addBiasKv = false, addZeroAttn = false, batchFirst = false } = options;
    checkPositive(embedDim, 'embedDim');
    checkPositive(numHeads, 'numHeads');
    if (embedDim % numHeads !== 0) throw new ValueError(`${OP}: embedDim must be divisible by numHeads, got embedDim=${embedDim} and numHeads=${numHeads}`);
    const kdim = options.kdim ?? embedDim;
    const vdim = options.vdim ?? embedDim;
    checkPositive(kdim, 'kdim');
    checkPositive(vdim, 'vdim');
    checkProbability(dropout);
    this.embedDim = embedDim;
    this.kdim = kdim;
    this.vdim = vdim;
    this.numHeads = numHeads;
    this.dropout = dropout;
    this.batchFirst = batchFirst;
    this.headDim = embedDim / numHeads;
    this.addZeroAttn = addZeroAttn;
    const factory = factoryOf(options);
    const param = (shape: number[]) => Parameter(empty(shape, factory));
    const packed = kdim === embedDim && vdim === embedDim;
    this.inProjWeight = packed ? param([3 * embedDim, embedDim]) : null;
    this.qProjWeight = packed ? null : param([embedDim, embedDim]);
    this.kProjWeight = packed ? null : param([embedDim, kdim]);
    this.vProjWeight = packed ? null : param([embedDim, vdim]);
    this.inProjBias = bias ? param([3 * embedDim]) : null;
    this.outProj = new Linear(embedDim, embedDim, { bias, ...factory });
    this.biasK = addBiasKv ? param([1, 1, embedDim]) : null;
    this.biasV = addBiasKv ? param([1, 1, embedDim]) : null;
    this.resetParameters();
  }

  /** PyTorch's init: xavier_uniform on the input projections, zero biases, xavier_normal on biasK/biasV (outProj.weight keeps Linear's). */
  resetParameters(): void {
    for (const w of [this.inProjWeight, this.qProjWeight, this.kProjWeight, this.vProjWeight]) if (w) xavierUniform_(w);
    if (this.inProjBias) zeros_(this.inProjBias);
    if (this.outProj.bias) zeros_(this.outProj.bias);
    for (const b of [this.biasK, this.biasV]) if (b) xavierNormal_(b);
  }

  /**
   * Attend from `query` to `key`/`value`: [L, N, E], [S, N, kdim], [S, N, vdim] (batchFirst:
   * [N, L, E] …; unbatched: [L, E] …). Returns `[output, weights]`: output like the query,
   * weights [N, L, S] averaged over heads ([N, numHeads, L, S] with `averageAttnWeights: false`),
   * or null without `needWeights`.
   */
  forward(query: Tensor, key: Tensor, value: Tensor, ...args: ForwardArgs): [Tensor, Tensor | null] {
    const options = bindArgs<MultiheadAttentionForwardOptions>(OP, FORWARD_ARGS, args);
    const { needWeights = true, averageAttnWeights = true, isCausal = false } = options;
    checkTensor(query, 'query', OP);
    checkTensor(key, 'key', OP);
    checkTensor(value, 'value', OP);
    let keyPaddingMask = canonicalMask(options.keyPaddingMask ?? null, 'keyPaddingMask', query);
    let attnMask = canonicalMask(options.attnMask ?? null, 'attnMask', query);
    const batched = checkRanks(query, key, value, keyPaddingMask, attnMask);
    if (isCausal && attnMask === null) {
      throw new TensorError(`${OP}(): Need attnMask if specifying the isCausal hint. You may use nn.Transformer.generateSquareSubsequentMask to create this mask.`);
    }
    // Sequence-first with a batch dim from here on: [L, N, E].
    const seqFirst = (t: Tensor) => (!batched ? t.unsqueeze(1) : this.batchFirst ? t.transpose(0, 1) : t);
    const [q0, k0, v0] = [seqFirst(query), seqFirst(key), seqFirst(value)];
    if (!batched && keyPaddingMask) keyPaddingMask = keyPaddingMask.unsqueeze(0);
    const [L, N, E] = q0.shape as [number, number, number];
    checkShapes(this, q0, k0, v0);
    // With the hint, no key padding and no weights asked for, PyTorch hands attention the causal flag instead of the mask.
    const causal = isCausal && keyPaddingMask === null && !needWeights;
    if (causal) attnMask = null;
    const [q1, k1, v1] = project(this, q0, k0, v0);
    const H = this.numHeads;
    const hd = this.headDim;
    if (attnMask) attnMask = attnMask3d(attnMask, L, k0.shape[0]!, N * H);
    // To [N·H, seq, headDim], with the learned bias key/value and the zero key appended along seq.
    const heads = (t: Tensor) => t.reshape([t.shape[0]!, N * H, hd]).transpose(0, 1);
    let k = k1;
    let v = v1;
    const growMasks = () => {
      if (attnMask) attnMask = pad(attnMask, [0, 1]);
      if (keyPaddingMask) keyPaddingMask = pad(keyPaddingMask, [0, 1]);
    };
    if (this.biasK && this.biasV) {
      k = cat([k, this.biasK.repeat([1, N, 1])]);
      v = cat([v, this.biasV.repeat([1, N, 1])]);
      growMasks();
    }
    k = heads(k);
    v = heads(v);
    if (this.addZeroAttn) {
      k = cat([k, zeros([N * H, 1, hd], { dtype: k.dtype, device: k.device })], 1);
      v = cat([v, zeros([N * H, 1, hd], { dtype: v.dtype, device: v.device })], 1);
      growMasks();
    }
    const S = k.shape[1]!;
    if (keyPaddingMask) {
      if (!sameShape(keyPaddingMask.shape, [N, S])) {
        throw new ShapeError(`${OP}(): expecting keyPaddingMask shape of ${shapeText([N, S])}, but got ${shapeText(keyPaddingMask.shape)}`, OP);
      }
      const perHead = keyPaddingMask.reshape([N, 1, 1, S]).expand([N, H, 1, S]).reshape([N * H, 1, S]);
      attnMask = attnMask ? attnMask.add(perHead) : perHead;
    }
    const { output, weights } = attention(OP, heads(q1), k, v, attnMask, this.training ? this.dropout : 0, causal, null);
    // [N·H, L, hd] → [L, N, E], then the output projection.
    let out = linear(output.transpose(0, 1).reshape([L, N, E]), this.outProj.weight, this.outProj.bias);
    out = !batched ? out.squeeze(1) : this.batchFirst ? out.transpose(0, 1) : out;
    if (!needWeights) return [out, null];
    let w = weights.reshape([N, H, L, S]);
    if (averageAttnWeights) w = w.mean(1);
    return [out, batched ? w : w.squeeze(0)];
  }
}
