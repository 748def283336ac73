// nn.TransformerEncoderLayer, nn.TransformerEncoder, nn.TransformerDecoderLayer,
// nn.TransformerDecoder and nn.Transformer: PyTorch 2.1's modules, their submodule names
// (self_attn and multihead_attn in fields selfAttn and multiheadAttn; linear1, linear2, norm1…3,
// dropout1…3, layers.i, encoder, decoder) and forward signatures. The stacks hold deep copies of the layer they are given, as PyTorch's _get_clones
// does, so every layer starts with the same values and trains on its own.
import { full, ShapeError, Tensor, ValueError, type DeviceLike } from '@core/tensor';
import { Module, registeredName, type AnyModule, type RegisteredNames } from '../module.js';
import { isParameter, Parameter } from '../parameter.js';
import { gelu, relu } from '../functional/activation.js';
import { xavierUniform_ } from '../init.js';
import { bindArgs, checkTensor, factoryOf, type Args, type FactoryOptions } from '../internal/args.js';
import { MultiheadAttention } from './attention.js';
import { ModuleList } from './container.js';
import { Dropout } from './dropout.js';
import { Linear } from './linear.js';
import { LayerNorm } from './normalization.js';
import type { TensorModule } from './sequential.js';

/** The feed-forward activation: PyTorch's names 'relu' and 'gelu', a function, or a module (registered as a submodule). */
export type TransformerActivation = 'relu' | 'gelu' | ((input: Tensor) => Tensor) | TensorModule;

/** The options of the encoder and decoder layers (PyTorch's arguments after dModel and nhead), plus where their parameters go. */
export interface TransformerLayerOptions extends FactoryOptions {
  /** The feed-forward network's hidden size (default 2048). */
  readonly dimFeedforward?: number;
  /** Dropout probability, in attention and after each block (default 0.1). */
  readonly dropout?: number;
  /** The feed-forward activation (default 'relu'). */
  readonly activation?: TransformerActivation;
  /** LayerNorm's eps (default 1e-5). */
  readonly layerNormEps?: number;
  /** Inputs and output are [batch, seq, feature] (default false: [seq, batch, feature]). */
  readonly batchFirst?: boolean;
  /** Normalise before each block instead of after the residual sum (default false). */
  readonly normFirst?: boolean;
  /** Learn biases in the linear layers and layer norms (default true). */
  readonly bias?: boolean;
}

type LayerArgs = Args<
  [dimFeedforward: number, dropout: number, activation: TransformerActivation, layerNormEps: number, batchFirst: boolean, normFirst: boolean, bias: boolean],
  TransformerLayerOptions
>;

const LAYER_ARGS = ['dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'] as const;

type Activation = ((input: Tensor) => Tensor) | TensorModule;

/** The encoder and decoder layers' settings, with PyTorch's defaults. */
interface LayerConfig {
  readonly dimFeedforward: number;
  readonly dropout: number;
  readonly activation: Activation;
  readonly layerNormEps: number;
  readonly batchFirst: boolean;
  readonly normFirst: boolean;
  readonly bias: boolean;
  readonly factory: FactoryOptions;
}

function layerConfig(op: string, args: readonly unknown[]): LayerConfig {
  const options = bindArgs<TransformerLayerOptions>(op, LAYER_ARGS, args, ['device', 'dtype']);
  const { dimFeedforward = 2048, dropout = 0.1, activation = 'relu', layerNormEps = 1e-5, batchFirst = false, normFirst = false, bias = true } = options;
  return { dimFeedforward, dropout, activation: activationOf(activation, op), layerNormEps, batchFirst, normFirst, bias, factory: factoryOf(options) };
}

function activationOf(activation: TransformerActivation, op: string): Activation {
  if (activation === 'relu') return relu;
  if (activation === 'gelu') return (x) => gelu(x);
  if (typeof activation === 'function' || activation instanceof Module) return activation;
  throw new ValueError(`${op}: activation should be relu/gelu, not ${String(activation)}`);
}

/** The parts both layers have: the feed-forward network, its dropouts and activation, and where norms go. */
interface FeedForwardParts {
  readonly linear1: Linear;
  readonly dropout: Dropout;
  readonly linear2: Linear;
  readonly activation: Activation;
  readonly normFirst: boolean;
}

/** linear2(dropout(activation(linear1(x)))), then `out` dropout. */
function feedForward(layer: FeedForwardParts, out: Dropout, x: Tensor): Tensor {
  const hidden = layer.linear1.forward(x);
  const activated = layer.activation instanceof Module ? layer.activation.forward(hidden) : layer.activation(hidden);
  return out.forward(layer.linear2.forward(layer.dropout.forward(activated)));
}

/** x + block(norm(x)) when normFirst, else norm(x + block(x)). */
function residual(layer: FeedForwardParts, norm: LayerNorm, x: Tensor, block: (y: Tensor) => Tensor): Tensor {
  return layer.normFirst ? x.add(block(norm.forward(x))) : norm.forward(x.add(block(x)));
}

/** Attention from x to `memory` (x itself for self-attention) without weights, then `out` dropout. */
function attend(mha: MultiheadAttention, out: Dropout, x: Tensor, memory: Tensor, attnMask: Tensor | null, keyPaddingMask: Tensor | null, isCausal: boolean): Tensor {
  return out.forward(mha.forward(x, memory, memory, { attnMask, keyPaddingMask, needWeights: false, isCausal })[0]);
}

function newLayerNorm(dModel: number, c: LayerConfig): LayerNorm {
  return new LayerNorm(dModel, { eps: c.layerNormEps, bias: c.bias, ...c.factory });
}

function feedForwardLayers(dModel: number, c: LayerConfig): { linear1: Linear; dropout: Dropout; linear2: Linear } {
  return {
    linear1: new Linear(dModel, c.dimFeedforward, { bias: c.bias, ...c.factory }),
    dropout: new Dropout(c.dropout),
    linear2: new Linear(c.dimFeedforward, dModel, { bias: c.bias, ...c.factory }),
  };
}

function newAttention(dModel: number, nhead: number, c: LayerConfig): MultiheadAttention {
  return new MultiheadAttention(dModel, nhead, { dropout: c.dropout, bias: c.bias, batchFirst: c.batchFirst, ...c.factory });
}

// ---- encoder ----

/** TransformerEncoderLayer.forward's parameters after src, by name. */
export interface TransformerEncoderLayerForwardOptions {
  /** `[S, S]` or [N·nhead, S, S] attention mask: bool (true: not allowed) or float (added). */
  readonly srcMask?: Tensor | null;
  /** `[N, S]` (or [S] unbatched): bool, true where a position is padding, or float (added). */
  readonly srcKeyPaddingMask?: Tensor | null;
  /** A hint that srcMask is the causal mask. */
  readonly isCausal?: boolean;
}

/**
 * Self-attention then a feed-forward network, each with a residual connection and LayerNorm
 * (after the sum, or before the block with `normFirst`): PyTorch's `nn.TransformerEncoderLayer`.
 */
export class TransformerEncoderLayer extends Module<[src: Tensor, ...rest: Args<[srcMask: Tensor | null, srcKeyPaddingMask: Tensor | null, isCausal: boolean], TransformerEncoderLayerForwardOptions>]> {
  /** PyTorch's name of the self-attention: `self_attn`. */
  static override readonly registeredNames: RegisteredNames<TransformerEncoderLayer> = { selfAttn: 'self_attn' };
  /** `self_attn`: multi-head self-attention. */
  selfAttn: MultiheadAttention;
  /** dModel → dimFeedforward. */
  linear1: Linear;
  /** Dropout inside the feed-forward network. */
  dropout: Dropout;
  /** dimFeedforward → dModel. */
  linear2: Linear;
  /** Whether each block normalises its input (pre-norm) instead of the residual sum. */
  readonly normFirst: boolean;
  /** Around self-attention. */
  norm1: LayerNorm;
  /** Around the feed-forward network. */
  norm2: LayerNorm;
  /** After self-attention. */
  dropout1: Dropout;
  /** After the feed-forward network. */
  dropout2: Dropout;
  /** The feed-forward activation. */
  activation: Activation;

  /** `new nn.TransformerEncoderLayer(512, 8)`, then PyTorch's order (dimFeedforward, dropout, activation, …) or those by name. */
  constructor(dModel: number, nhead: number, ...args: LayerArgs) {
    super();
    const c = layerConfig('TransformerEncoderLayer', args);
    this.selfAttn = newAttention(dModel, nhead, c);
    ({ linear1: this.linear1, dropout: this.dropout, linear2: this.linear2 } = feedForwardLayers(dModel, c));
    this.normFirst = c.normFirst;
    this.norm1 = newLayerNorm(dModel, c);
    this.norm2 = newLayerNorm(dModel, c);
    this.dropout1 = new Dropout(c.dropout);
    this.dropout2 = new Dropout(c.dropout);
    this.activation = c.activation;
  }

  /** src: [S, N, dModel] ([N, S, dModel] with batchFirst, [S, dModel] unbatched); returns the same shape. */
  forward(src: Tensor, ...args: Args<[srcMask: Tensor | null, srcKeyPaddingMask: Tensor | null, isCausal: boolean], TransformerEncoderLayerForwardOptions>): Tensor {
    const { srcMask = null, srcKeyPaddingMask = null, isCausal = false } = bindArgs<TransformerEncoderLayerForwardOptions>(
      'TransformerEncoderLayer', ['srcMask', 'srcKeyPaddingMask', 'isCausal'], args,
    );
    checkTensor(src, 'src', 'TransformerEncoderLayer');
    const x = residual(this, this.norm1, src, (y) => attend(this.selfAttn, this.dropout1, y, y, srcMask, srcKeyPaddingMask, isCausal));
    return residual(this, this.norm2, x, (y) => feedForward(this, this.dropout2, y));
  }
}

/** A layer `nn.TransformerEncoder` can stack: forward(src, { srcMask, srcKeyPaddingMask, isCausal }). */
export type TransformerEncoderLayerModule = Module<[src: Tensor, options: TransformerEncoderLayerForwardOptions], Tensor>;

/** TransformerEncoder.forward's parameters after src, by name. */
export interface TransformerEncoderForwardOptions {
  /** The attention mask given to every layer (srcMask). */
  readonly mask?: Tensor | null;
  /** The key padding mask given to every layer. */
  readonly srcKeyPaddingMask?: Tensor | null;
  /** A hint that mask is the causal mask (default: not given, treated as false). */
  readonly isCausal?: boolean | null;
}

type EncoderArgs = Args<[mask: Tensor | null, srcKeyPaddingMask: Tensor | null, isCausal: boolean | null], TransformerEncoderForwardOptions>;

/** The stacks' argument after the layer and numLayers: the final norm. */
type NormArgs = Args<[norm: TensorModule | null], { norm?: TensorModule | null }>;

/** What the encoder and decoder stacks share: deep copies of one layer, then an optional norm. */
abstract class LayerStack<L extends AnyModule, In extends unknown[]> extends Module<In> {
  /** The layers, `layers.0` … */
  layers: ModuleList<L>;
  /** The number of layers. */
  readonly numLayers: number;
  /** Applied to the last layer's output (null: none). */
  norm: TensorModule | null;

  constructor(layer: L, numLayers: number, args: readonly unknown[]) {
    super();
    const op = this.constructor.name;
    const { norm = null } = bindArgs<{ norm: TensorModule | null }>(op, ['norm'], args);
    if (typeof numLayers !== 'number' || !Number.isInteger(numLayers) || numLayers < 0) {
      throw new ValueError(`${op}: numLayers must be a non-negative integer, got ${String(numLayers)}`);
    }
    this.layers = new ModuleList(clones(layer, numLayers));
    this.numLayers = numLayers;
    this.norm = norm;
  }

  /** The last layer's output, through the norm if there is one. */
  protected finish(output: Tensor): Tensor {
    return this.norm ? this.norm.forward(output) : output;
  }
}

/**
 * `numLayers` deep copies of `encoderLayer` applied in turn, then the optional `norm`: PyTorch's
 * `nn.TransformerEncoder`. The copies start equal to `encoderLayer` (which is not itself used).
 */
export class TransformerEncoder<L extends TransformerEncoderLayerModule = TransformerEncoderLayer> extends LayerStack<L, [src: Tensor, ...rest: EncoderArgs]> {
  /** `new nn.TransformerEncoder(layer, 6)` or `new nn.TransformerEncoder(layer, 6, new nn.LayerNorm(512))`. */
  constructor(encoderLayer: L, numLayers: number, ...args: NormArgs) {
    super(encoderLayer, numLayers, args);
  }

  /** src as the layers take it; mask and srcKeyPaddingMask go to every layer. */
  forward(src: Tensor, ...args: EncoderArgs): Tensor {
    const { mask = null, srcKeyPaddingMask = null, isCausal } = bindArgs<TransformerEncoderForwardOptions>('TransformerEncoder', ['mask', 'srcKeyPaddingMask', 'isCausal'], args);
    let output = src;
    for (const layer of this.layers) output = layer.forward(output, { srcMask: mask, srcKeyPaddingMask, isCausal: isCausal ?? false });
    return this.finish(output);
  }
}

// ---- decoder ----

/** TransformerDecoderLayer.forward's (and TransformerDecoder.forward's) parameters after tgt and memory, by name. */
export interface TransformerDecoderLayerForwardOptions {
  /** `[T, T]` or [N·nhead, T, T] self-attention mask: bool (true: not allowed) or float (added). */
  readonly tgtMask?: Tensor | null;
  /** `[T, S]` or [N·nhead, T, S] mask of the attention to memory. */
  readonly memoryMask?: Tensor | null;
  /** `[N, T]`: bool, true where a target position is padding, or float (added). */
  readonly tgtKeyPaddingMask?: Tensor | null;
  /** `[N, S]`: bool, true where a memory position is padding, or float (added). */
  readonly memoryKeyPaddingMask?: Tensor | null;
  /** A hint that tgtMask is the causal mask. */
  readonly tgtIsCausal?: boolean | null;
  /** A hint that memoryMask is the causal mask. */
  readonly memoryIsCausal?: boolean;
}

type DecoderArgs = Args<
  [tgtMask: Tensor | null, memoryMask: Tensor | null, tgtKeyPaddingMask: Tensor | null, memoryKeyPaddingMask: Tensor | null, tgtIsCausal: boolean | null, memoryIsCausal: boolean],
  TransformerDecoderLayerForwardOptions
>;

const DECODER_ARGS = ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask', 'tgtIsCausal', 'memoryIsCausal'] as const;

/**
 * Self-attention, attention to the encoder's output (memory), then a feed-forward network, each
 * with a residual connection and LayerNorm: PyTorch's `nn.TransformerDecoderLayer`.
 */
export class TransformerDecoderLayer extends Module<[tgt: Tensor, memory: Tensor, ...rest: DecoderArgs]> {
  /** PyTorch's names of the two attentions: `self_attn` and `multihead_attn`. */
  static override readonly registeredNames: RegisteredNames<TransformerDecoderLayer> = { selfAttn: 'self_attn', multiheadAttn: 'multihead_attn' };
  /** `self_attn`: multi-head self-attention over the target. */
  selfAttn: MultiheadAttention;
  /** `multihead_attn`: multi-head attention from the target to memory. */
  multiheadAttn: MultiheadAttention;
  /** dModel → dimFeedforward. */
  linear1: Linear;
  /** Dropout inside the feed-forward network. */
  dropout: Dropout;
  /** dimFeedforward → dModel. */
  linear2: Linear;
  /** Whether each block normalises its input (pre-norm) instead of the residual sum. */
  readonly normFirst: boolean;
  /** Around self-attention. */
  norm1: LayerNorm;
  /** Around the attention to memory. */
  norm2: LayerNorm;
  /** Around the feed-forward network. */
  norm3: LayerNorm;
  /** After self-attention. */
  dropout1: Dropout;
  /** After the attention to memory. */
  dropout2: Dropout;
  /** After the feed-forward network. */
  dropout3: Dropout;
  /** The feed-forward activation. */
  activation: Activation;

  /** `new nn.TransformerDecoderLayer(512, 8)`, then PyTorch's order (dimFeedforward, dropout, activation, …) or those by name. */
  constructor(dModel: number, nhead: number, ...args: LayerArgs) {
    super();
    const c = layerConfig('TransformerDecoderLayer', args);
    this.selfAttn = newAttention(dModel, nhead, c);
    this.multiheadAttn = newAttention(dModel, nhead, c);
    ({ linear1: this.linear1, dropout: this.dropout, linear2: this.linear2 } = feedForwardLayers(dModel, c));
    this.normFirst = c.normFirst;
    this.norm1 = newLayerNorm(dModel, c);
    this.norm2 = newLayerNorm(dModel, c);
    this.norm3 = newLayerNorm(dModel, c);
    this.dropout1 = new Dropout(c.dropout);
    this.dropout2 = new Dropout(c.dropout);
    this.dropout3 = new Dropout(c.dropout);
    this.activation = c.activation;
  }

  /** tgt: [T, N, dModel] and memory: [S, N, dModel] (batch first with batchFirst; unbatched: no N); returns tgt's shape. */
  forward(tgt: Tensor, memory: Tensor, ...args: DecoderArgs): Tensor {
    const o = bindArgs<TransformerDecoderLayerForwardOptions>('TransformerDecoderLayer', DECODER_ARGS, args);
    checkTensor(tgt, 'tgt', 'TransformerDecoderLayer');
    checkTensor(memory, 'memory', 'TransformerDecoderLayer');
    let x = residual(this, this.norm1, tgt, (y) => attend(this.selfAttn, this.dropout1, y, y, o.tgtMask ?? null, o.tgtKeyPaddingMask ?? null, o.tgtIsCausal ?? false));
    x = residual(this, this.norm2, x, (y) => attend(this.multiheadAttn, this.dropout2, y, memory, o.memoryMask ?? null, o.memoryKeyPaddingMask ?? null, o.memoryIsCausal ?? false));
    return residual(this, this.norm3, x, (y) => feedForward(this, this.dropout3, y));
  }
}

/** A layer `nn.TransformerDecoder` can stack: forward(tgt, memory, { tgtMask, memoryMask, … }). */
export type TransformerDecoderLayerModule = Module<[tgt: Tensor, memory: Tensor, options: TransformerDecoderLayerForwardOptions], Tensor>;

/**
 * `numLayers` deep copies of `decoderLayer` applied in turn, then the optional `norm`: PyTorch's
 * `nn.TransformerDecoder`. The copies start equal to `decoderLayer` (which is not itself used).
 */
export class TransformerDecoder<L extends TransformerDecoderLayerModule = TransformerDecoderLayer> extends LayerStack<L, [tgt: Tensor, memory: Tensor, ...rest: DecoderArgs]> {
  /** `new nn.TransformerDecoder(layer, 6)` or `new nn.TransformerDecoder(layer, 6, new nn.LayerNorm(512))`. */
  constructor(decoderLayer: L, numLayers: number, ...args: NormArgs) {
    super(decoderLayer, numLayers, args);
  }

  /** tgt and memory as the layers take them; the masks and hints go to every layer. */
  forward(tgt: Tensor, memory: Tensor, ...args: DecoderArgs): Tensor {
    const o = bindArgs<TransformerDecoderLayerForwardOptions>('TransformerDecoder', DECODER_ARGS, args);
    let output = tgt;
    for (const layer of this.layers) output = layer.forward(output, memory, { ...o, tgtIsCausal: o.tgtIsCausal ?? false });
    return this.finish(output);
  }
}

// ---- transformer ----

/** An encoder `nn.Transformer` can use (customEncoder): forward(src, { mask, srcKeyPaddingMask, isCausal }). */
export type TransformerEncoderModule = Module<[src: Tensor, options: TransformerEncoderForwardOptions], Tensor>;

/** A decoder `nn.Transformer` can use (customDecoder): forward(tgt, memory, { tgtMask, memoryMask, … }). */
export type TransformerDecoderModule = Module<[tgt: Tensor, memory: Tensor, options: TransformerDecoderLayerForwardOptions], Tensor>;

/** nn.Transformer's options (PyTorch's arguments by name), plus where its parameters go. */
export interface TransformerOptions extends Omit<TransformerLayerOptions, 'dimFeedforward'> {
  /** The model width (default 512). */
  readonly dModel?: number;
  /** The number of attention heads (default 8). */
  readonly nhead?: number;
  /** Encoder layers (default 6). */
  readonly numEncoderLayers?: number;
  /** Decoder layers (default 6). */
  readonly numDecoderLayers?: number;
  /** The feed-forward networks' hidden size (default 2048). */
  readonly dimFeedforward?: number;
  /** Used instead of the standard encoder. */
  readonly customEncoder?: TransformerEncoderModule | null;
  /** Used instead of the standard decoder. */
  readonly customDecoder?: TransformerDecoderModule | null;
}

/** nn.Transformer.forward's parameters after src and tgt, by name: the encoder's, then the decoder's. */
export interface TransformerForwardOptions extends TransformerDecoderLayerForwardOptions {
  /** The encoder's self-attention mask. */
  readonly srcMask?: Tensor | null;
  /** `[N, S]`: which source positions are padding (usually also memoryKeyPaddingMask). */
  readonly srcKeyPaddingMask?: Tensor | null;
  /** A hint that srcMask is causal. */
  readonly srcIsCausal?: boolean | null;
}

type TransformerArgs = Args<
  [
    dModel: number, nhead: number, numEncoderLayers: number, numDecoderLayers: number, dimFeedforward: number, dropout: number,
    activation: TransformerActivation, customEncoder: TransformerEncoderModule | null, customDecoder: TransformerDecoderModule | null,
    layerNormEps: number, batchFirst: boolean, normFirst: boolean, bias: boolean,
  ],
  TransformerOptions
>;

type TransformerForwardArgs = Args<
  [
    srcMask: Tensor | null, tgtMask: Tensor | null, memoryMask: Tensor | null, srcKeyPaddingMask: Tensor | null, tgtKeyPaddingMask: Tensor | null,
    memoryKeyPaddingMask: Tensor | null, srcIsCausal: boolean | null, tgtIsCausal: boolean | null, memoryIsCausal: boolean,
  ],
  TransformerForwardOptions
>;

/**
 * An encoder-decoder transformer (Vaswani et al.), PyTorch's `nn.Transformer`: a
 * TransformerEncoder and a TransformerDecoder, each ending in a LayerNorm, with every parameter of
 * more than one dim initialised by xavier_uniform.
 */
export class Transformer extends Module<[src: Tensor, tgt: Tensor, ...rest: TransformerForwardArgs]> {
  /** The encoder (or customEncoder). */
  encoder: TransformerEncoderModule;
  /** The decoder (or customDecoder). */
  decoder: TransformerDecoderModule;
  /** The model width. */
  readonly dModel: number;
  /** The number of attention heads. */
  readonly nhead: number;
  /** Whether inputs and output are [batch, seq, feature]. */
  readonly batchFirst: boolean;

  /** PyTorch's order (`new nn.Transformer(512, 8, 6, 6)`), or any argument by name (`{ dModel: 64, batchFirst: true }`). */
  constructor(...args: TransformerArgs) {
    super();
    const op = 'Transformer';
    const names = ['dModel', 'nhead', 'numEncoderLayers', 'numDecoderLayers', 'dimFeedforward', 'dropout', 'activation', 'customEncoder', 'customDecoder', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'] as const;
    const o = bindArgs<TransformerOptions>(op, names, args, ['device', 'dtype']);
    const { dModel = 512, nhead = 8, numEncoderLayers = 6, numDecoderLayers = 6, customEncoder = null, customDecoder = null, batchFirst = false } = o;
    const { dimFeedforward, dropout, activation, layerNormEps, normFirst, bias } = o;
    const layer: TransformerLayerOptions = { dimFeedforward, dropout, activation, layerNormEps, batchFirst, normFirst, bias, ...factoryOf(o) };
    const finalNorm = () => new LayerNorm(dModel, { eps: layerNormEps, bias, ...factoryOf(o) });
    this.encoder = customEncoder ?? new TransformerEncoder(new TransformerEncoderLayer(dModel, nhead, layer), numEncoderLayers, finalNorm());
    this.decoder = customDecoder ?? new TransformerDecoder(new TransformerDecoderLayer(dModel, nhead, layer), numDecoderLayers, finalNorm());
    this.dModel = dModel;
    this.nhead = nhead;
    this.batchFirst = batchFirst;
    this.resetParameters();
  }

  /** xavier_uniform on every parameter with more than one dim (PyTorch's `_reset_parameters`). */
  resetParameters(): void {
    for (const p of this.parameters()) if (p.ndim > 1) xavierUniform_(p);
  }

  /**
   * src: [S, N, dModel], tgt: [T, N, dModel] (batch first with batchFirst; unbatched: no N).
   * Returns the decoder's output, tgt's shape.
   */
  forward(src: Tensor, tgt: Tensor, ...args: TransformerForwardArgs): Tensor {
    const op = 'Transformer';
    const names = ['srcMask', 'tgtMask', 'memoryMask', 'srcKeyPaddingMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask', 'srcIsCausal', 'tgtIsCausal', 'memoryIsCausal'] as const;
    const o = bindArgs<TransformerForwardOptions>(op, names, args);
    checkTensor(src, 'src', op);
    checkTensor(tgt, 'tgt', op);
    const batchDim = this.batchFirst ? 0 : 1;
    if (src.ndim === 3 && src.shape[batchDim] !== tgt.shape[batchDim]) {
      throw new ShapeError(`${op}(): the batch number of src and tgt must be equal, got src ${src.shape[batchDim]} and tgt ${tgt.shape[batchDim]}`, op);
    }
    if (src.shape[src.ndim - 1] !== this.dModel || tgt.shape[tgt.ndim - 1] !== this.dModel) {
      throw new ShapeError(`${op}(): the feature number of src and tgt must be equal to dModel (${this.dModel}), got ${src.shape[src.ndim - 1]} and ${tgt.shape[tgt.ndim - 1]}`, op);
    }
    const { srcMask = null, srcKeyPaddingMask = null, srcIsCausal = null, ...decoderOptions } = o;
    const memory = this.encoder.forward(src, { mask: srcMask, srcKeyPaddingMask, isCausal: srcIsCausal });
    return this.decoder.forward(tgt, memory, decoderOptions);
  }

  /** `[sz, sz]` float mask for causal self-attention: 0 on and below the diagonal, −∞ above (`Transformer.generate_square_subsequent_mask`). */
  static generateSquareSubsequentMask(sz: number, ...args: Args<[device: DeviceLike, dtype: FactoryOptions['dtype']], FactoryOptions>): Tensor {
    const options = bindArgs<FactoryOptions>('generateSquareSubsequentMask', ['device', 'dtype'], args);
    if (!Number.isInteger(sz) || sz < 0) throw new ValueError(`generateSquareSubsequentMask: sz must be a non-negative integer, got ${String(sz)}`);
    return full([sz, sz], -Infinity, factoryOf(options)).triu(1);
  }
}

// ---- deep copies (PyTorch's copy.deepcopy of a module, as _get_clones uses it) ----

/** `n` independent deep copies of `module`. */
function clones<M extends AnyModule>(module: M, n: number): M[] {
  if (!(module instanceof Module)) throw new TypeError(`expected a Module to copy, got ${module === null ? 'null' : typeof module}`);
  return Array.from({ length: n }, () => deepCopy(module, new Map()));
}

/**
 * A copy of `module` and everything below it: submodules copied, parameters and buffers copied into
 * new memory (a tensor or module shared inside the tree stays shared in the copy, as deepcopy's memo
 * does), other fields (numbers, shapes, functions, generators) shared. The copy is made without
 * running the subclass's constructor, so its state must live in fields: a class keeping state in
 * `#private` members cannot be copied this way.
 */
function deepCopy<M extends AnyModule>(module: M, memo: Map<unknown, unknown>): M {
  if (memo.has(module)) return memo.get(module) as M;
  const copy = Reflect.construct(Module, [], module.constructor) as M;
  memo.set(module, copy);
  const buffers = new Set(module.namedBuffers('', false).map(([name]) => name));
  const saved = new Set(Object.keys(module.stateDict({ keepVars: true })));
  const fields = copy as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(module)) {
    const registered = registeredName(module, name);
    if (buffers.has(registered)) copy.registerBuffer(registered, copyTensor(value as Tensor, memo), saved.has(registered));
    else if (value instanceof Module) fields[name] = deepCopy(value as AnyModule, memo);
    else if (value instanceof Tensor) fields[name] = copyTensor(value, memo);
    else fields[name] = value;
  }
  return copy;
}

/** A tensor's copy in new memory: a parameter stays a parameter (with a copy of its gradient), requiresGrad is kept. */
function copyTensor(t: Tensor, memo: Map<unknown, unknown>): Tensor {
  if (memo.has(t)) return memo.get(t) as Tensor;
  const data = t.detach().clone();
  const requiresGrad = t.requiresGrad;
  const copy = isParameter(t) ? Parameter(data, requiresGrad) : requiresGrad ? data.requiresGrad_() : data;
  if (isParameter(copy) && t.grad) copy.grad = t.grad.detach().clone();
  memo.set(t, copy);
  return copy;
}
