// BERT under Hugging Face's parameter names (BertModel, BertForMaskedLM), with its math: word +
// position + token-type embeddings and LayerNorm, post-norm encoder layers, a [B, T] attention
// mask of 1/0 turned into an additive mask of the dtype's lowest value, a tanh pooler over the
// first token, and the masked-LM head whose decoder shares the word embeddings' weight.
import { nn, F } from '@core/nn';
import { DTypeError, finfo, int32, ShapeError, ValueError, zeros, type Tensor } from '@core/tensor';
import { checkDropout, checkPositiveInteger, readConfigJson, withDefaults, type ConfigJsonKeys } from './config-json.js';
import { pretrainedModel } from './from-pretrained.js';
import type { PretrainedOptions, PretrainedSource } from './pretrained.js';

/** An activation of a BERT config, by Hugging Face's names: `'gelu'` is exact (erf) GELU, `'gelu_new'` and `'gelu_pytorch_tanh'` its tanh approximation. */
export type BertActivation = 'gelu' | 'gelu_new' | 'gelu_pytorch_tanh' | 'relu' | 'silu';

/** Each activation `hidden_act` may name. */
const ACTIVATIONS: Readonly<Record<BertActivation, (x: Tensor) => Tensor>> = {
  gelu: (x: Tensor) => F.gelu(x),
  gelu_new: (x: Tensor) => F.gelu(x, 'tanh'),
  gelu_pytorch_tanh: (x: Tensor) => F.gelu(x, 'tanh'),
  relu: (x: Tensor) => F.relu(x),
  silu: (x: Tensor) => F.silu(x),
};

/** BERT's sizes and options: Hugging Face's `BertConfig` in camelCase. */
export interface BertConfig {
  /** Tokens in the vocabulary (`vocab_size`). */
  readonly vocabSize: number;
  /** Width of the hidden states (`hidden_size`). */
  readonly hiddenSize: number;
  /** Encoder layers (`num_hidden_layers`). */
  readonly numHiddenLayers: number;
  /** Attention heads, dividing hiddenSize (`num_attention_heads`). */
  readonly numAttentionHeads: number;
  /** Width of each layer's intermediate projection (`intermediate_size`). */
  readonly intermediateSize: number;
  /** The activation of the intermediate projection and of the masked-LM transform (`hidden_act`, default 'gelu': exact). */
  readonly hiddenAct?: BertActivation;
  /** Dropout on embeddings and sublayer outputs in training (`hidden_dropout_prob`, default 0.1). */
  readonly hiddenDropoutProb?: number;
  /** Dropout on attention weights in training (`attention_probs_dropout_prob`, default 0.1). */
  readonly attentionProbsDropoutProb?: number;
  /** Positions with an embedding: the longest input (`max_position_embeddings`, default 512). */
  readonly maxPositionEmbeddings?: number;
  /** Token types (segments) with an embedding (`type_vocab_size`, default 2). */
  readonly typeVocabSize?: number;
  /** LayerNorm's epsilon (`layer_norm_eps`, default 1e-12). */
  readonly layerNormEps?: number;
  /** The padding token (`pad_token_id`, default 0): its word embedding gets no gradient. */
  readonly padTokenId?: number;
}

/** A BertConfig with every default filled in. */
export type ResolvedBertConfig = Required<BertConfig>;

const JSON_KEYS: ConfigJsonKeys<BertConfig> = {
  vocabSize: ['vocab_size', 'number'],
  hiddenSize: ['hidden_size', 'number'],
  numHiddenLayers: ['num_hidden_layers', 'number'],
  numAttentionHeads: ['num_attention_heads', 'number'],
  intermediateSize: ['intermediate_size', 'number'],
  hiddenAct: ['hidden_act', 'string'],
  hiddenDropoutProb: ['hidden_dropout_prob', 'number'],
  attentionProbsDropoutProb: ['attention_probs_dropout_prob', 'number'],
  maxPositionEmbeddings: ['max_position_embeddings', 'number'],
  typeVocabSize: ['type_vocab_size', 'number'],
  layerNormEps: ['layer_norm_eps', 'number'],
  padTokenId: ['pad_token_id', 'number'],
};

/**
 * A BertConfig from Hugging Face's config.json (parsed): its snake_case keys, and `BertConfig`'s
 * defaults in Python (bert-base's sizes) for those it leaves out. Only absolute position
 * embeddings are supported: another `position_embedding_type` is a ValueError.
 */
export function bertConfigFromJson(json: Readonly<Record<string, unknown>>): BertConfig {
  const read = readConfigJson('bertConfigFromJson', json, JSON_KEYS);
  const positions = json.position_embedding_type;
  if (positions !== undefined && positions !== null && positions !== 'absolute') {
    throw new ValueError(`bertConfigFromJson: position_embedding_type ${JSON.stringify(positions)} is not supported; only 'absolute' is`);
  }
  return { vocabSize: 30522, hiddenSize: 768, numHiddenLayers: 12, numAttentionHeads: 12, intermediateSize: 3072, ...read };
}

/** `config` with its defaults, checked: sizes positive integers, heads dividing the width, a known activation. */
export function resolveBertConfig(config: BertConfig): ResolvedBertConfig {
  const model = 'BertConfig';
  const resolved = withDefaults({
    hiddenAct: 'gelu', hiddenDropoutProb: 0.1, attentionProbsDropoutProb: 0.1, maxPositionEmbeddings: 512, typeVocabSize: 2, layerNormEps: 1e-12, padTokenId: 0,
  } as const, config);
  for (const field of ['vocabSize', 'hiddenSize', 'numHiddenLayers', 'numAttentionHeads', 'intermediateSize', 'maxPositionEmbeddings', 'typeVocabSize'] as const) {
    checkPositiveInteger(model, field, resolved[field]);
  }
  if (resolved.hiddenSize % resolved.numAttentionHeads !== 0) {
    throw new ValueError(`${model}: hiddenSize (${resolved.hiddenSize}) must be divisible by numAttentionHeads (${resolved.numAttentionHeads})`);
  }
  if (!Object.hasOwn(ACTIVATIONS, resolved.hiddenAct)) {
    throw new ValueError(`${model}: hiddenAct '${resolved.hiddenAct}' is not supported; use one of ${Object.keys(ACTIVATIONS).join(', ')}`);
  }
  checkDropout(model, 'hiddenDropoutProb', resolved.hiddenDropoutProb);
  checkDropout(model, 'attentionProbsDropoutProb', resolved.attentionProbsDropoutProb);
  if (!Number.isInteger(resolved.padTokenId) || resolved.padTokenId < 0 || resolved.padTokenId >= resolved.vocabSize) {
    throw new ValueError(`${model}: padTokenId must be a token id in 0..${resolved.vocabSize - 1}, got ${resolved.padTokenId}`);
  }
  return resolved;
}

/** What BERT reads besides the token ids. */
export interface BertForwardOptions {
  /** 1 for a token to attend to, 0 for padding, shaped like inputIds `[B, T]` (int32, bool or float; default all ones). */
  readonly attentionMask?: Tensor;
  /** [B, T] int32 segment ids in 0..typeVocabSize−1 (default all 0). */
  readonly tokenTypeIds?: Tensor;
}

/** BertModel's outputs. */
export interface BertModelOutput {
  /** The last layer's hidden states [B, T, hidden]. */
  readonly lastHiddenState: Tensor;
  /** tanh(dense(first token's hidden state)) [B, hidden]; null without a pooling layer. */
  readonly poolerOutput: Tensor | null;
}

/** Word + position + token-type embeddings, then LayerNorm and dropout. */
export class BertEmbeddings extends nn.Module<[Tensor, Tensor]> {
  static override readonly registeredNames: nn.RegisteredNames<BertEmbeddings> = {
    wordEmbeddings: 'word_embeddings', positionEmbeddings: 'position_embeddings', tokenTypeEmbeddings: 'token_type_embeddings', layerNorm: 'LayerNorm',
  };
  /** [vocab, hidden]. */
  wordEmbeddings: nn.Embedding;
  /** [maxPositionEmbeddings, hidden]. */
  positionEmbeddings: nn.Embedding;
  /** [typeVocabSize, hidden]. */
  tokenTypeEmbeddings: nn.Embedding;
  /** The norm of the sum. */
  layerNorm: nn.LayerNorm;
  /** Dropout in training. */
  dropout: nn.Dropout;

  /** The embeddings of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    const { vocabSize, hiddenSize, maxPositionEmbeddings, typeVocabSize, padTokenId, layerNormEps, hiddenDropoutProb } = config;
    this.wordEmbeddings = new nn.Embedding(vocabSize, hiddenSize, padTokenId);
    this.positionEmbeddings = new nn.Embedding(maxPositionEmbeddings, hiddenSize);
    this.tokenTypeEmbeddings = new nn.Embedding(typeVocabSize, hiddenSize);
    this.layerNorm = new nn.LayerNorm(hiddenSize, layerNormEps);
    this.dropout = new nn.Dropout(hiddenDropoutProb);
  }

  /** Embeddings [B, T, hidden] of `inputIds` and `tokenTypeIds` [B, T] at positions 0..T−1. */
  forward(inputIds: Tensor, tokenTypeIds: Tensor): Tensor {
    const positions = this.positionEmbeddings.weight.narrow(0, 0, inputIds.shape[1]!);
    const sum = this.wordEmbeddings.forward(inputIds).add(this.tokenTypeEmbeddings.forward(tokenTypeIds)).add(positions);
    return this.dropout.forward(this.layerNorm.forward(sum));
  }
}

/** Multi-head self-attention: query, key and value projections, scaled dot-product attention under the additive mask. */
export class BertSelfAttention extends nn.Module<[Tensor, Tensor | null]> {
  /** Queries. */
  query: nn.Linear;
  /** Keys. */
  key: nn.Linear;
  /** Values. */
  value: nn.Linear;
  readonly #config: ResolvedBertConfig;

  /** The self-attention of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    const { hiddenSize } = config;
    this.query = new nn.Linear(hiddenSize, hiddenSize);
    this.key = new nn.Linear(hiddenSize, hiddenSize);
    this.value = new nn.Linear(hiddenSize, hiddenSize);
    this.#config = config;
  }

  /** The attended values [B, T, hidden] of `x` [B, T, hidden]; `mask` [B, 1, 1, T] is added to the scores. */
  forward(x: Tensor, mask: Tensor | null): Tensor {
    const { numAttentionHeads, attentionProbsDropoutProb } = this.#config;
    const [batch, length, hidden] = x.shape as [number, number, number];
    const heads = (t: Tensor): Tensor => t.view([batch, length, numAttentionHeads, hidden / numAttentionHeads]).transpose(1, 2);
    const out = F.scaledDotProductAttention(heads(this.query.forward(x)), heads(this.key.forward(x)), heads(this.value.forward(x)), {
      attnMask: mask, dropoutP: this.training ? attentionProbsDropoutProb : 0,
    });
    return out.transpose(1, 2).reshape([batch, length, hidden]);
  }
}

/** A sublayer's output: LayerNorm(dropout(dense(x)) + residual). Hugging Face's BertSelfOutput and BertOutput. */
export class BertResidualOutput extends nn.Module<[Tensor, Tensor]> {
  static override readonly registeredNames: nn.RegisteredNames<BertResidualOutput> = { layerNorm: 'LayerNorm' };
  /** Back to the hidden size. */
  dense: nn.Linear;
  /** The norm after the residual sum. */
  layerNorm: nn.LayerNorm;
  /** Dropout in training. */
  dropout: nn.Dropout;

  /** The output of a sublayer whose result has `inFeatures` features. */
  constructor(config: ResolvedBertConfig, inFeatures: number) {
    super();
    this.dense = new nn.Linear(inFeatures, config.hiddenSize);
    this.layerNorm = new nn.LayerNorm(config.hiddenSize, config.layerNormEps);
    this.dropout = new nn.Dropout(config.hiddenDropoutProb);
  }

  /** LayerNorm(dropout(dense(x)) + residual). */
  forward(x: Tensor, residual: Tensor): Tensor {
    return this.layerNorm.forward(this.dropout.forward(this.dense.forward(x)).add(residual));
  }
}

/** Self-attention and its output (`attention.self`, `attention.output`). */
export class BertAttention extends nn.Module<[Tensor, Tensor | null]> {
  /** The attention proper (Hugging Face's name `self`). */
  self: BertSelfAttention;
  /** Its projection, residual and norm. */
  output: BertResidualOutput;

  /** The attention block of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.self = new BertSelfAttention(config);
    this.output = new BertResidualOutput(config, config.hiddenSize);
  }

  /** LayerNorm(x + attention(x)). */
  forward(x: Tensor, mask: Tensor | null): Tensor {
    return this.output.forward(this.self.forward(x, mask), x);
  }
}

/** The intermediate projection and its activation. */
export class BertIntermediate extends nn.Module {
  /** hidden → intermediate. */
  dense: nn.Linear;
  readonly #activation: (x: Tensor) => Tensor;

  /** The intermediate projection of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.dense = new nn.Linear(config.hiddenSize, config.intermediateSize);
    this.#activation = ACTIVATIONS[config.hiddenAct];
  }

  /** activation(dense(x)). */
  forward(x: Tensor): Tensor {
    return this.#activation(this.dense.forward(x));
  }
}

/** One post-norm encoder layer: attention, then the feed-forward block, each with a residual and LayerNorm. */
export class BertLayer extends nn.Module<[Tensor, Tensor | null]> {
  /** Self-attention with its output. */
  attention: BertAttention;
  /** The feed-forward projection up. */
  intermediate: BertIntermediate;
  /** The feed-forward projection down, residual and norm. */
  output: BertResidualOutput;

  /** An encoder layer of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.attention = new BertAttention(config);
    this.intermediate = new BertIntermediate(config);
    this.output = new BertResidualOutput(config, config.intermediateSize);
  }

  /** The layer's output for `x` [B, T, hidden] under the additive `mask`. */
  forward(x: Tensor, mask: Tensor | null): Tensor {
    const attended = this.attention.forward(x, mask);
    return this.output.forward(this.intermediate.forward(attended), attended);
  }
}

/** The stack of encoder layers (`encoder.layer.{i}`). */
export class BertEncoder extends nn.Module<[Tensor, Tensor | null]> {
  /** The layers. */
  layer: nn.ModuleList<BertLayer>;

  /** The encoder of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.numHiddenLayers }, () => new BertLayer(config)));
  }

  /** `x` through every layer. */
  forward(x: Tensor, mask: Tensor | null): Tensor {
    for (const layer of this.layer) x = layer.forward(x, mask);
    return x;
  }
}

/** tanh(dense(hidden state of the first token)). */
export class BertPooler extends nn.Module {
  /** hidden → hidden. */
  dense: nn.Linear;

  /** The pooler of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.dense = new nn.Linear(config.hiddenSize, config.hiddenSize);
  }

  /** The pooled output [B, hidden] of hidden states [B, T, hidden]. */
  forward(hidden: Tensor): Tensor {
    return this.dense.forward(hidden.select(1, 0)).tanh();
  }
}

/** File keys of older checkpoints as today's: LayerNorm's `gamma`/`beta` are `weight`/`bias`. */
function modernKey(key: string): string {
  return key.replace(/\.gamma$/, '.weight').replace(/\.beta$/, '.bias');
}

/** Buffers some checkpoints hold that the model computes (Hugging Face's non-persistent position and token-type ids). */
const COMPUTED_BUFFERS = /(^|\.)embeddings\.(position_ids|token_type_ids)$/;

/** The encoder without a task head: Hugging Face's BertModel. */
export class BertModel extends nn.Module<[Tensor, BertForwardOptions?], BertModelOutput> {
  /** The configuration, defaults filled in. */
  readonly config: ResolvedBertConfig;
  /** The embeddings. */
  embeddings: BertEmbeddings;
  /** The encoder layers. */
  encoder: BertEncoder;
  /** The pooler (null without a pooling layer, as in BertForMaskedLM). */
  pooler: BertPooler | null;

  /** A randomly initialised encoder, with the pooling layer unless `addPoolingLayer` is false. */
  constructor(config: BertConfig, addPoolingLayer = true) {
    super();
    this.config = resolveBertConfig(config);
    this.embeddings = new BertEmbeddings(this.config);
    this.encoder = new BertEncoder(this.config);
    this.pooler = addPoolingLayer ? new BertPooler(this.config) : null;
  }

  /** A randomly initialised encoder (with the pooler) of Hugging Face's config.json (parsed); see `bertConfigFromJson`. */
  static fromConfigJson(json: Readonly<Record<string, unknown>>): BertModel {
    return new BertModel(bertConfigFromJson(json));
  }

  /**
   * The model of a Hub repo id (e.g. `bert-base-uncased`) or a local folder, on `options.device` in
   * `options.dtype`, in eval mode. The file's keys may carry the `bert.` prefix of a pretraining or
   * task checkpoint (its `cls.` heads are skipped) and older names (`LayerNorm.gamma`/`beta`).
   * (`idOrDir` may also be `ModelFiles` or Blobs by file name; in a browser a string is a Hub repo id.)
   */
  static async fromPretrained(idOrDir: PretrainedSource, options: PretrainedOptions = {}): Promise<BertModel> {
    return pretrainedModel(idOrDir, options, {
      build: (config) => BertModel.fromConfigJson(config),
      keys: () => ({
        renameKey: (key) => (key.startsWith('cls.') || COMPUTED_BUFFERS.test(key) ? undefined : modernKey(key.replace(/^bert\./, ''))),
      }),
    });
  }

  /** The hidden states and pooled output of `inputIds` [B, T] (int32); padding is left out of attention by `attentionMask`. */
  forward(inputIds: Tensor, options: BertForwardOptions = {}): BertModelOutput {
    const { attentionMask, tokenTypeIds } = options;
    this.#checkInputs(inputIds, attentionMask, tokenTypeIds);
    const hidden = this.embeddings.forward(inputIds, tokenTypeIds ?? zeros(inputIds.shape, { dtype: int32, device: inputIds.device }));
    // Hugging Face's extended mask: 0 where attended, the dtype's lowest value (−max) where padded, per key.
    const [batch, length] = inputIds.shape as [number, number];
    const mask = attentionMask === undefined ? null : attentionMask.to(hidden.dtype).sub(1).mul(finfo(hidden.dtype).max).view([batch, 1, 1, length]);
    const lastHiddenState = this.encoder.forward(hidden, mask);
    return { lastHiddenState, poolerOutput: this.pooler === null ? null : this.pooler.forward(lastHiddenState) };
  }

  #checkInputs(inputIds: Tensor, attentionMask: Tensor | undefined, tokenTypeIds: Tensor | undefined): void {
    const op = 'BertModel.forward';
    if (inputIds.dtype !== int32) throw new DTypeError(`${op}(): inputIds must be int32 token ids, got ${inputIds.dtype.name}; convert with inputIds.int()`, op, inputIds.dtype.name);
    if (inputIds.ndim !== 2 || inputIds.shape[1] === 0) {
      throw new ShapeError(`${op}(): inputIds must be [batch, seq] with seq >= 1, got [${inputIds.shape.join(', ')}]; add a batch dim with inputIds.unsqueeze(0)`, op);
    }
    const length = inputIds.shape[1]!;
    if (length > this.config.maxPositionEmbeddings) {
      throw new ShapeError(`${op}(): a sequence of ${length} tokens is longer than maxPositionEmbeddings (${this.config.maxPositionEmbeddings}); truncate the input`, op);
    }
    for (const [name, t] of [['attentionMask', attentionMask], ['tokenTypeIds', tokenTypeIds]] as const) {
      if (t !== undefined && (t.ndim !== 2 || t.shape[0] !== inputIds.shape[0] || t.shape[1] !== length)) {
        throw new ShapeError(`${op}(): ${name} must have inputIds' shape [${inputIds.shape.join(', ')}], got [${t.shape.join(', ')}]`, op);
      }
    }
    if (tokenTypeIds !== undefined && tokenTypeIds.dtype !== int32) {
      throw new DTypeError(`${op}(): tokenTypeIds must be int32, got ${tokenTypeIds.dtype.name}; convert with tokenTypeIds.int()`, op, tokenTypeIds.dtype.name);
    }
  }
}

/** The masked-LM transform: LayerNorm(activation(dense(x))). */
export class BertPredictionHeadTransform extends nn.Module {
  static override readonly registeredNames: nn.RegisteredNames<BertPredictionHeadTransform> = { layerNorm: 'LayerNorm' };
  /** hidden → hidden. */
  dense: nn.Linear;
  /** The norm after the activation. */
  layerNorm: nn.LayerNorm;
  readonly #activation: (x: Tensor) => Tensor;

  /** The transform of `config`. */
  constructor(config: ResolvedBertConfig) {
    super();
    this.dense = new nn.Linear(config.hiddenSize, config.hiddenSize);
    this.layerNorm = new nn.LayerNorm(config.hiddenSize, config.layerNormEps);
    this.#activation = ACTIVATIONS[config.hiddenAct];
  }

  /** LayerNorm(activation(dense(x))). */
  forward(x: Tensor): Tensor {
    return this.layerNorm.forward(this.#activation(this.dense.forward(x)));
  }
}

/** The masked-LM prediction head (`cls.predictions`): transform, then the decoder tied to the word embeddings, plus a per-token bias. */
export class BertLMPredictionHead extends nn.Module {
  /** The transform. */
  transform: BertPredictionHeadTransform;
  /** hidden → vocab: its weight is the word embeddings' and its bias is `bias`, the same tensors. */
  decoder: nn.Linear;
  /** The per-token bias [vocab]. */
  bias: Tensor;

  /** The head of `config`, whose decoder uses `wordEmbeddings` [vocab, hidden] as its weight. */
  constructor(config: ResolvedBertConfig, wordEmbeddings: Tensor) {
    super();
    this.transform = new BertPredictionHeadTransform(config);
    this.decoder = new nn.Linear(config.hiddenSize, config.vocabSize, false);
    this.bias = nn.Parameter(zeros([config.vocabSize]));
    this.decoder.weight = wordEmbeddings;
    this.decoder.bias = this.bias;
  }

  /** Logits [..., vocab] of hidden states [..., hidden]. */
  forward(hidden: Tensor): Tensor {
    return this.decoder.forward(this.transform.forward(hidden));
  }
}

/** The masked-LM head's container (`cls`), named as Hugging Face's BertOnlyMLMHead. */
export class BertOnlyMLMHead extends nn.Module {
  /** The prediction head. */
  predictions: BertLMPredictionHead;

  /** The head of `config`, its decoder tied to `wordEmbeddings`. */
  constructor(config: ResolvedBertConfig, wordEmbeddings: Tensor) {
    super();
    this.predictions = new BertLMPredictionHead(config, wordEmbeddings);
  }

  /** Logits of hidden states. */
  forward(hidden: Tensor): Tensor {
    return this.predictions.forward(hidden);
  }
}

/** BERT with its masked-LM head: Hugging Face's BertForMaskedLM (no pooler), the head bert-base-uncased was trained with. */
export class BertForMaskedLM extends nn.Module<[Tensor, BertForwardOptions?]> {
  /** The encoder, without a pooling layer. */
  bert: BertModel;
  /** The masked-LM head. */
  cls: BertOnlyMLMHead;

  /** A randomly initialised model of `config`. */
  constructor(config: BertConfig) {
    super();
    this.bert = new BertModel(config, false);
    this.cls = new BertOnlyMLMHead(this.bert.config, this.bert.embeddings.wordEmbeddings.weight);
  }

  /** A randomly initialised model of Hugging Face's config.json (parsed); see `bertConfigFromJson`. */
  static fromConfigJson(json: Readonly<Record<string, unknown>>): BertForMaskedLM {
    return new BertForMaskedLM(bertConfigFromJson(json));
  }

  /**
   * The model of a Hub repo id (e.g. `bert-base-uncased`) or a local folder, on `options.device` in
   * `options.dtype`, in eval mode. Pretraining checkpoints' pooler and next-sentence head
   * (`bert.pooler.*`, `cls.seq_relationship.*`) are skipped, older names (`LayerNorm.gamma`/`beta`)
   * read as today's, and the tied decoder may be absent from the file.
   * (`idOrDir` may also be `ModelFiles` or Blobs by file name; in a browser a string is a Hub repo id.)
   */
  static async fromPretrained(idOrDir: PretrainedSource, options: PretrainedOptions = {}): Promise<BertForMaskedLM> {
    return pretrainedModel(idOrDir, options, {
      build: (config) => BertForMaskedLM.fromConfigJson(config),
      keys: () => ({
        renameKey: (key) => (/^(bert\.pooler|cls\.seq_relationship)\./.test(key) || COMPUTED_BUFFERS.test(key) ? undefined : modernKey(key)),
        tiedKeys: { 'cls.predictions.decoder.weight': 'bert.embeddings.word_embeddings.weight', 'cls.predictions.decoder.bias': 'cls.predictions.bias' },
      }),
    });
  }

  /** The configuration, defaults filled in. */
  get config(): ResolvedBertConfig {
    return this.bert.config;
  }

  /** Logits [B, T, vocab] of every position of `inputIds` [B, T] (int32). */
  forward(inputIds: Tensor, options: BertForwardOptions = {}): Tensor {
    return this.cls.forward(this.bert.forward(inputIds, options).lastHiddenState);
  }
}
