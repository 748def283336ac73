// GPT-2 (Hugging Face's GPT2Model and GPT2LMHeadModel) under Hugging Face's parameter names, so
// that `stateDict()` keys are `transformer.h.0.attn.c_attn.weight`, … and a checkpoint loads
// unchanged.
//
// The projections are Hugging Face's Conv1D: a linear layer whose weight is stored [in, out] and
// applied as x·W + b. Keeping that layout (rather than nn.Linear's [out, in] with a transpose at
// load) means a GPT-2 state dict, from PyTorch or the Hub, is copied in as is, and a model's own
// `stateDict()` is one PyTorch's GPT-2 takes back.
import { F, nn } from '@core/nn';
import { arange, DTypeError, empty, int32, ShapeError, Tensor, ValueError, zeros } from '@core/tensor';
import type { CausalLM, CausalLMForwardOptions, KVCache } from './causal-lm.js';
import { causalMask } from './causal-mask.js';
import { checkDropout, checkPositiveInteger, readConfigJson, type ConfigJsonKeys } from './config-json.js';
import { pretrainedModel } from './from-pretrained.js';
import type { PretrainedOptions, PretrainedSource } from './pretrained.js';

/** GPT-2's hyperparameters, Hugging Face's `GPT2Config` in camelCase. */
export interface GPT2Config {
  /** Tokens in the vocabulary (rows of `wte`). */
  readonly vocabSize: number;
  /** The longest sequence: rows of the position table `wpe`. */
  readonly nPositions: number;
  /** The hidden size. */
  readonly nEmbd: number;
  /** Transformer blocks. */
  readonly nLayer: number;
  /** Attention heads per block (`nEmbd` must be a multiple of it). */
  readonly nHead: number;
  /** The MLP's inner size; null means 4·nEmbd. */
  readonly nInner: number | null;
  /** LayerNorm's epsilon. */
  readonly layerNormEpsilon: number;
  /** The MLP's activation: 'gelu_new' (and its alias 'gelu_pytorch_tanh') is GELU's tanh approximation, 'gelu' the exact one. */
  readonly activationFunction: GPT2Activation;
  /** Dropout after each block's attention and MLP projections. */
  readonly residPdrop: number;
  /** Dropout on the summed token and position embeddings. */
  readonly embdPdrop: number;
  /** Dropout on the attention weights. */
  readonly attnPdrop: number;
  /** The standard deviation of the random initial weights. */
  readonly initializerRange: number;
}

/** The MLP activations GPT-2 checkpoints use, by Hugging Face's names. */
export type GPT2Activation = 'gelu_new' | 'gelu_pytorch_tanh' | 'gelu' | 'relu' | 'silu';

const ACTIVATIONS: Record<GPT2Activation, (x: Tensor) => Tensor> = {
  gelu_new: (x) => F.gelu(x, 'tanh'),
  gelu_pytorch_tanh: (x) => F.gelu(x, 'tanh'),
  gelu: (x) => F.gelu(x),
  relu: (x) => F.relu(x),
  silu: (x) => F.silu(x),
};

/** Hugging Face's `GPT2Config()` defaults: the 124M-parameter GPT-2. */
export const GPT2_DEFAULTS: GPT2Config = {
  vocabSize: 50257,
  nPositions: 1024,
  nEmbd: 768,
  nLayer: 12,
  nHead: 12,
  nInner: null,
  layerNormEpsilon: 1e-5,
  activationFunction: 'gelu_new',
  residPdrop: 0.1,
  embdPdrop: 0.1,
  attnPdrop: 0.1,
  initializerRange: 0.02,
};

const JSON_KEYS: ConfigJsonKeys<GPT2Config> = {
  vocabSize: ['vocab_size', 'number'],
  nPositions: ['n_positions', 'number'],
  nEmbd: ['n_embd', 'number'],
  nLayer: ['n_layer', 'number'],
  nHead: ['n_head', 'number'],
  nInner: ['n_inner', 'number'],
  layerNormEpsilon: ['layer_norm_epsilon', 'number'],
  activationFunction: ['activation_function', 'string'],
  residPdrop: ['resid_pdrop', 'number'],
  embdPdrop: ['embd_pdrop', 'number'],
  attnPdrop: ['attn_pdrop', 'number'],
  initializerRange: ['initializer_range', 'number'],
};

// config.json options that change GPT-2's math away from what is computed here, with the value computed.
const FIXED: Readonly<Record<string, unknown>> = {
  scale_attn_weights: true, scale_attn_by_inverse_layer_idx: false, reorder_and_upcast_attn: false, add_cross_attention: false,
};

/**
 * A `GPT2Config` from Hugging Face's config.json (parsed): `vocab_size`, `n_positions`, `n_embd`,
 * `n_layer`, `n_head`, `n_inner`, `layer_norm_epsilon`, `activation_function`, `resid_pdrop`,
 * `embd_pdrop`, `attn_pdrop`, `initializer_range`; absent keys take Hugging Face's defaults. Options
 * that would change the math to something not computed here (`scale_attn_by_inverse_layer_idx`,
 * `reorder_and_upcast_attn`, …) are a ValueError rather than a model that computes something else.
 */
export function gpt2ConfigFromJson(json: Readonly<Record<string, unknown>>): GPT2Config {
  const op = 'gpt2ConfigFromJson';
  const read = readConfigJson(op, json, JSON_KEYS);
  for (const [key, computed] of Object.entries(FIXED)) {
    if (json[key] !== undefined && json[key] !== computed) {
      throw new ValueError(`${op}: config.json's ${key} ${JSON.stringify(json[key])} is not supported (only ${JSON.stringify(computed)})`);
    }
  }
  return resolveGPT2Config(read, op);
}

/** `config` over GPT-2's defaults, checked: sizes positive integers, heads dividing the width, a known activation, probabilities. */
export function resolveGPT2Config(config: Partial<GPT2Config>, model = 'GPT2Config'): GPT2Config {
  const resolved: GPT2Config = { ...GPT2_DEFAULTS, ...config };
  for (const field of ['vocabSize', 'nPositions', 'nEmbd', 'nLayer', 'nHead'] as const) checkPositiveInteger(model, field, resolved[field]);
  if (resolved.nInner !== null) checkPositiveInteger(model, 'nInner', resolved.nInner);
  const { nEmbd, nHead } = resolved;
  if (nEmbd % nHead !== 0) throw new ValueError(`${model}: nEmbd (${nEmbd}) must be divisible by nHead (${nHead})`);
  if (!(resolved.layerNormEpsilon > 0)) throw new ValueError(`${model}: layerNormEpsilon must be > 0, got ${resolved.layerNormEpsilon}`);
  if (!Object.hasOwn(ACTIVATIONS, resolved.activationFunction)) {
    throw new ValueError(`${model}: activationFunction ${JSON.stringify(resolved.activationFunction)} is not supported; use one of ${Object.keys(ACTIVATIONS).join(', ')}`);
  }
  for (const field of ['residPdrop', 'embdPdrop', 'attnPdrop'] as const) checkDropout(model, field, resolved[field]);
  if (!(resolved.initializerRange >= 0)) throw new ValueError(`${model}: initializerRange must be >= 0, got ${resolved.initializerRange}`);
  return resolved;
}

/**
 * Hugging Face's Conv1D: y = x·W + b with the weight stored `[inFeatures, outFeatures]` (the
 * transpose of nn.Linear's), as GPT-2's checkpoints hold it. Hugging Face's constructor takes
 * `(nf, nx)` = (out, in); this one takes `(inFeatures, outFeatures)` like nn.Linear.
 */
export class Conv1D extends nn.Module {
  /** The size of each input's last dim. */
  readonly inFeatures: number;
  /** The size of each output's last dim. */
  readonly outFeatures: number;
  /** `[inFeatures, outFeatures]`. */
  weight: nn.Parameter;
  /** `[outFeatures]`. */
  bias: nn.Parameter;

  /** A layer with weight ~ N(0, std²) and a zero bias (Hugging Face's initialisation). */
  constructor(inFeatures: number, outFeatures: number, std = 0.02) {
    super();
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    this.weight = nn.Parameter(nn.init.normal_(empty([inFeatures, outFeatures]), 0, std));
    this.bias = nn.Parameter(zeros([outFeatures]));
  }

  /** x·W + b over the last dim. */
  forward(x: Tensor): Tensor {
    return x.matmul(this.weight).add(this.bias);
  }

  /** `inFeatures=…, outFeatures=…`. */
  override extraRepr(): string {
    return `inFeatures=${this.inFeatures}, outFeatures=${this.outFeatures}`;
  }
}

/** One block's causal self-attention; the keys and values of earlier positions come from the cache. */
export class GPT2Attention extends nn.Module<[x: Tensor, layer: number, cache: KVCache | undefined], Tensor> {
  static override readonly registeredNames: nn.RegisteredNames<GPT2Attention> = {
    cAttn: 'c_attn', cProj: 'c_proj', attnDropout: 'attn_dropout', residDropout: 'resid_dropout',
  };

  /** The query, key and value projections in one: `[nEmbd, 3·nEmbd]`. */
  cAttn: Conv1D;
  /** The output projection. */
  cProj: Conv1D;
  /** Dropout on the attention weights in training (its `p` is passed to scaledDotProductAttention). */
  attnDropout: nn.Dropout;
  /** Dropout on the output. */
  residDropout: nn.Dropout;

  /** A randomly initialised attention layer of a checked config. */
  constructor(private readonly config: GPT2Config) {
    super();
    const { nEmbd, initializerRange, nLayer } = config;
    this.cAttn = new Conv1D(nEmbd, 3 * nEmbd, initializerRange);
    // GPT-2's scaled initialisation of the projections into the residual stream.
    this.cProj = new Conv1D(nEmbd, nEmbd, initializerRange / Math.sqrt(2 * nLayer));
    this.attnDropout = new nn.Dropout(config.attnPdrop);
    this.residDropout = new nn.Dropout(config.residPdrop);
  }

  /** `x` [B, T, C] following the cached positions, if any; appends this pass's keys and values to `cache` as `layer`. */
  forward(x: Tensor, layer: number, cache: KVCache | undefined): Tensor {
    const [B, T, C] = x.shape as [number, number, number];
    const heads = this.config.nHead;
    const split = (t: Tensor) => t.reshape([B, T, heads, C / heads]).transpose(1, 2);
    const [q, kNew, vNew] = this.cAttn.forward(x).split(C, 2).map(split) as [Tensor, Tensor, Tensor];
    const [k, v] = cache === undefined ? [kNew, vNew] : cache.update(layer, kNew, vNew);
    const y = F.scaledDotProductAttention(q, k, v, { ...causalMask(T, k.shape[2]!, x.device), dropoutP: this.training ? this.attnDropout.p : 0 });
    return this.residDropout.forward(this.cProj.forward(y.transpose(1, 2).reshape([B, T, C])));
  }
}

/** The feed-forward part of a block: Conv1D up to nInner, the activation, Conv1D back down. */
export class GPT2MLP extends nn.Module {
  static override readonly registeredNames: nn.RegisteredNames<GPT2MLP> = { cFc: 'c_fc', cProj: 'c_proj' };

  /** Up to the inner size. */
  cFc: Conv1D;
  /** Back down to nEmbd. */
  cProj: Conv1D;
  /** Dropout on the output. */
  dropout: nn.Dropout;
  private readonly act: (x: Tensor) => Tensor;

  /** A randomly initialised MLP of a checked config. */
  constructor(config: GPT2Config) {
    super();
    const inner = config.nInner ?? 4 * config.nEmbd;
    this.cFc = new Conv1D(config.nEmbd, inner, config.initializerRange);
    this.cProj = new Conv1D(inner, config.nEmbd, config.initializerRange / Math.sqrt(2 * config.nLayer));
    this.act = ACTIVATIONS[config.activationFunction];
    this.dropout = new nn.Dropout(config.residPdrop);
  }

  /** cProj(act(cFc(x))), dropped out. */
  forward(x: Tensor): Tensor {
    return this.dropout.forward(this.cProj.forward(this.act(this.cFc.forward(x))));
  }
}

/** A pre-norm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)). */
export class GPT2Block extends nn.Module<[x: Tensor, layer: number, cache: KVCache | undefined], Tensor> {
  static override readonly registeredNames: nn.RegisteredNames<GPT2Block> = { ln1: 'ln_1', ln2: 'ln_2' };

  /** The LayerNorm before attention. */
  ln1: nn.LayerNorm;
  /** Causal self-attention. */
  attn: GPT2Attention;
  /** The LayerNorm before the MLP. */
  ln2: nn.LayerNorm;
  /** The feed-forward part. */
  mlp: GPT2MLP;

  /** A randomly initialised block of a checked config. */
  constructor(config: GPT2Config) {
    super();
    this.ln1 = new nn.LayerNorm(config.nEmbd, config.layerNormEpsilon);
    this.attn = new GPT2Attention(config);
    this.ln2 = new nn.LayerNorm(config.nEmbd, config.layerNormEpsilon);
    this.mlp = new GPT2MLP(config);
  }

  /** `x` [B, T, C] through the block, as layer `layer` of the cache. */
  forward(x: Tensor, layer: number, cache: KVCache | undefined): Tensor {
    const h = x.add(this.attn.forward(this.ln1.forward(x), layer, cache));
    return h.add(this.mlp.forward(this.ln2.forward(h)));
  }
}

/**
 * Hugging Face's `GPT2Model`: token and position embeddings, `nLayer` blocks and a final
 * LayerNorm; `forward(inputIds, { cache })` gives the hidden states `[batch, seq, nEmbd]`.
 * Parameters are named as Hugging Face's (`wte.weight`, `h.0.attn.c_attn.weight`, `ln_f.bias`, …).
 */
export class GPT2Model extends nn.Module<[inputIds: Tensor, options?: CausalLMForwardOptions], Tensor> {
  static override readonly registeredNames: nn.RegisteredNames<GPT2Model> = { lnF: 'ln_f' };

  /** The checked configuration. */
  readonly config: GPT2Config;
  /** Token embeddings `[vocabSize, nEmbd]`. */
  wte: nn.Embedding;
  /** Position embeddings `[nPositions, nEmbd]`. */
  wpe: nn.Embedding;
  /** Dropout on the summed embeddings. */
  drop: nn.Dropout;
  /** The transformer blocks. */
  h: nn.ModuleList<GPT2Block>;
  /** The final LayerNorm. */
  lnF: nn.LayerNorm;

  /** A randomly initialised model (Hugging Face's initialisation); absent config fields take GPT-2's defaults. */
  constructor(config: Partial<GPT2Config> = {}) {
    super();
    this.config = resolveGPT2Config(config, 'GPT2Model');
    const { vocabSize, nPositions, nEmbd, nLayer, initializerRange } = this.config;
    this.wte = new nn.Embedding(vocabSize, nEmbd);
    this.wpe = new nn.Embedding(nPositions, nEmbd);
    nn.init.normal_(this.wte.weight, 0, initializerRange);
    nn.init.normal_(this.wpe.weight, 0, initializerRange);
    this.drop = new nn.Dropout(this.config.embdPdrop);
    this.h = new nn.ModuleList(Array.from({ length: nLayer }, () => new GPT2Block(this.config)));
    this.lnF = new nn.LayerNorm(nEmbd, this.config.layerNormEpsilon);
  }

  /**
   * Hidden states for `inputIds` (int32 `[batch, seq]`), which continue the cache's positions
   * when `cache` is given (their keys and values are appended to it). Ids outside the vocabulary
   * (checked where they can be read synchronously, as on the cpu) and sequences longer than
   * `nPositions` are errors.
   */
  forward(inputIds: Tensor, options: CausalLMForwardOptions = {}): Tensor {
    const { cache } = options;
    const past = this.checkInput(inputIds, cache);
    const T = inputIds.shape[1]!;
    const positions = arange(past, past + T, { dtype: int32, device: inputIds.device });
    let x = this.drop.forward(this.wte.forward(inputIds).add(this.wpe.forward(positions)));
    [...this.h].forEach((block, layer) => {
      x = block.forward(x, layer, cache);
    });
    return this.lnF.forward(x);
  }

  /** Checks the ids and the cache; returns the number of positions already cached. */
  private checkInput(inputIds: Tensor, cache: KVCache | undefined): number {
    const op = `${this.constructor.name}.forward`;
    if (!(inputIds instanceof Tensor)) throw new TypeError(`${op}: inputIds must be a Tensor of token ids, got ${typeof inputIds}`);
    if (inputIds.dtype !== int32) {
      throw new DTypeError(`${op}: inputIds must be int32 token ids, got ${inputIds.dtype.name}; convert with inputIds.int()`, op, inputIds.dtype.name);
    }
    if (inputIds.ndim !== 2) {
      throw new ShapeError(`${op}: inputIds must be [batch, seq], got shape [${inputIds.shape.join(', ')}]; add a batch dim with inputIds.unsqueeze(0)`, op);
    }
    if (cache !== undefined && cache.numLayers !== this.config.nLayer) {
      throw new ValueError(`${op}: the cache has ${cache.numLayers} layers but the model ${this.config.nLayer}; make it with new KVCache(model.numLayers)`);
    }
    const past = cache?.length ?? 0;
    const end = past + inputIds.shape[1]!;
    if (end > this.config.nPositions) {
      throw new ValueError(
        `${op}: ${end} positions (${past} cached + ${inputIds.shape[1]} new) exceed the model's nPositions (${this.config.nPositions}); ` +
          `shorten the input or generate fewer tokens`,
      );
    }
    if (inputIds.device.type === 'cpu') {
      const ids = inputIds.dataSync();
      const V = this.config.vocabSize;
      const at = ids.findIndex((id) => !(id >= 0 && id < V));
      if (at >= 0) {
        throw new ValueError(
          `${op}: token id ${ids[at]} (row ${Math.floor(at / inputIds.shape[1]!)}, position ${at % inputIds.shape[1]!}) is outside the vocabulary 0..${V - 1}; ` +
            `tokenize with this model's tokenizer`,
        );
      }
    }
    return past;
  }
}

/**
 * Hugging Face's `GPT2LMHeadModel`: `GPT2Model` under `transformer` and an LM head whose weight is
 * the token embedding's own Parameter (`lm_head.weight` is `transformer.wte.weight`, tied as in
 * PyTorch). A `CausalLM`: `forward(inputIds, { cache })` gives the logits `[batch, seq, vocabSize]`.
 */
export class GPT2LMHeadModel extends nn.Module<[inputIds: Tensor, options?: CausalLMForwardOptions], Tensor> implements CausalLM {
  static override readonly registeredNames: nn.RegisteredNames<GPT2LMHeadModel> = { lmHead: 'lm_head' };

  /** The body. */
  transformer: GPT2Model;
  /** Hidden states to logits; its weight is `transformer.wte.weight`. */
  lmHead: nn.Linear;

  /** A randomly initialised model (Hugging Face's initialisation); absent config fields take GPT-2's defaults. */
  constructor(config: Partial<GPT2Config> = {}) {
    super();
    this.transformer = new GPT2Model(config);
    const { nEmbd, vocabSize } = this.transformer.config;
    this.lmHead = new nn.Linear(nEmbd, vocabSize, false);
    this.lmHead.weight = this.transformer.wte.weight;
  }

  /** A randomly initialised model of a config.json's settings (see `gpt2ConfigFromJson`). */
  static fromConfigJson(json: Readonly<Record<string, unknown>>): GPT2LMHeadModel {
    return new GPT2LMHeadModel(gpt2ConfigFromJson(json));
  }

  /**
   * A pretrained GPT-2 from a Hub repo id (`'openai-community/gpt2'`) or a local folder with
   * config.json and model.safetensors (or shards), in eval mode as Hugging Face's. Checkpoints
   * saved by `GPT2LMHeadModel` (keys `transformer.…`) and by `GPT2Model` (the Hub's GPT-2 files:
   * no prefix, no `lm_head`, and the `attn.bias` / `attn.masked_bias` mask buffers, which are
   * skipped) both load. `device` and `dtype` say where the weights go.
   * (`idOrDir` may also be `ModelFiles` or Blobs by file name; in a browser a string is a Hub repo id.)
   */
  static async fromPretrained(idOrDir: PretrainedSource, options: PretrainedOptions = {}): Promise<GPT2LMHeadModel> {
    return pretrainedModel(idOrDir, options, {
      build: (config) => GPT2LMHeadModel.fromConfigJson(config),
      keys: () => ({ renameKey: gpt2CheckpointKey, tiedKeys: { 'lm_head.weight': 'transformer.wte.weight' } }),
    });
  }

  /** The checked configuration. */
  get config(): GPT2Config {
    return this.transformer.config;
  }

  /** Transformer blocks (the size of a `KVCache` for this model). */
  get numLayers(): number {
    return this.transformer.config.nLayer;
  }

  /** Logits `[B, T, vocabSize]` of every position of `inputIds` `[B, T]` (int32); with a cache, positions continue from `cache.length`. */
  forward(inputIds: Tensor, options: CausalLMForwardOptions = {}): Tensor {
    return this.lmHead.forward(this.transformer.forward(inputIds, options));
  }
}

/**
 * The `GPT2LMHeadModel` key of a GPT-2 checkpoint's key: `GPT2Model` checkpoints (the Hub's files)
 * lack the `transformer.` prefix; their attention-mask buffers `h.{i}.attn.bias` and
 * `h.{i}.attn.masked_bias` are not weights (undefined: skip them).
 */
export function gpt2CheckpointKey(fileKey: string): string | undefined {
  if (/(^|\.)attn\.(bias|masked_bias)$/.test(fileKey)) return undefined;
  return fileKey.startsWith('transformer.') || fileKey.startsWith('lm_head.') ? fileKey : `transformer.${fileKey}`;
}
