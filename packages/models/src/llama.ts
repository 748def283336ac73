// A Llama-style decoder under Hugging Face's parameter names (LlamaForCausalLM), with its math:
// RMSNorm computed in float32 and cast back before the weight, rotary position embeddings in the
// rotate_half convention, grouped-query attention and a SwiGLU MLP. Rotary frequencies are computed,
// never stored (Hugging Face's inv_freq is a non-persistent buffer), so `stateDict()` keys equal a
// checkpoint's.
import { nn, F } from '@core/nn';
import {
  arange, cat, DTypeError, float32, int32, ones, ShapeError, tensor, ValueError, type DType, type Tensor,
} from '@core/tensor';
import type { CausalLM, CausalLMForwardOptions, KVCache } from './causal-lm.js';
import { causalMask } from './causal-mask.js';
import { checkDropout, checkPositiveInteger, readConfigJson, withDefaults, type ConfigJsonKeys } from './config-json.js';
import { pretrainedModel } from './from-pretrained.js';
import type { PretrainedOptions, PretrainedSource } from './pretrained.js';

/** A Llama-style decoder's sizes and options: Hugging Face's `LlamaConfig` in camelCase. */
export interface LlamaConfig {
  /** Tokens in the vocabulary (`vocab_size`). */
  readonly vocabSize: number;
  /** Width of the residual stream (`hidden_size`). */
  readonly hiddenSize: number;
  /** Width of the MLP's gate and up projections (`intermediate_size`). */
  readonly intermediateSize: number;
  /** Decoder layers (`num_hidden_layers`). */
  readonly numHiddenLayers: number;
  /** Query heads (`num_attention_heads`). */
  readonly numAttentionHeads: number;
  /** Key/value heads, dividing numAttentionHeads; fewer is grouped-query attention (`num_key_value_heads`, default numAttentionHeads). */
  readonly numKeyValueHeads?: number;
  /** Width of each head (`head_dim`, default hiddenSize / numAttentionHeads). */
  readonly headDim?: number;
  /** Added to the mean square in RMSNorm (`rms_norm_eps`, default 1e-6). */
  readonly rmsNormEps?: number;
  /** Base of the rotary frequencies (`rope_theta`, default 10000). */
  readonly ropeTheta?: number;
  /** The context the model was trained for (`max_position_embeddings`, default 2048); informative, as in Hugging Face: longer inputs run. */
  readonly maxPositionEmbeddings?: number;
  /** The LM head shares the token embeddings' weight (`tie_word_embeddings`, default false). */
  readonly tieWordEmbeddings?: boolean;
  /** The q/k/v/o projections have biases (`attention_bias`, default false). */
  readonly attentionBias?: boolean;
  /** The MLP's projections have biases (`mlp_bias`, default false). */
  readonly mlpBias?: boolean;
  /** Dropout on the attention weights in training (`attention_dropout`, default 0). */
  readonly attentionDropout?: number;
}

/** A LlamaConfig with every default filled in. */
export type ResolvedLlamaConfig = Required<LlamaConfig>;

const JSON_KEYS: ConfigJsonKeys<LlamaConfig> = {
  vocabSize: ['vocab_size', 'number'],
  hiddenSize: ['hidden_size', 'number'],
  intermediateSize: ['intermediate_size', 'number'],
  numHiddenLayers: ['num_hidden_layers', 'number'],
  numAttentionHeads: ['num_attention_heads', 'number'],
  numKeyValueHeads: ['num_key_value_heads', 'number'],
  headDim: ['head_dim', 'number'],
  rmsNormEps: ['rms_norm_eps', 'number'],
  ropeTheta: ['rope_theta', 'number'],
  maxPositionEmbeddings: ['max_position_embeddings', 'number'],
  tieWordEmbeddings: ['tie_word_embeddings', 'boolean'],
  attentionBias: ['attention_bias', 'boolean'],
  mlpBias: ['mlp_bias', 'boolean'],
  attentionDropout: ['attention_dropout', 'number'],
};

/**
 * A LlamaConfig from Hugging Face's config.json (parsed): its snake_case keys, and `LlamaConfig`'s
 * defaults in Python for the sizes it leaves out (vocab 32000, hidden 4096, intermediate 11008, 32
 * layers, 32 heads). Only the SiLU activation and no `rope_scaling` are supported: others are a
 * ValueError rather than a model that computes something else.
 */
export function llamaConfigFromJson(json: Readonly<Record<string, unknown>>): LlamaConfig {
  const read = readConfigJson('llamaConfigFromJson', json, JSON_KEYS);
  if (json.hidden_act !== undefined && json.hidden_act !== 'silu') {
    throw new ValueError(`llamaConfigFromJson: hidden_act ${JSON.stringify(json.hidden_act)} is not supported (only 'silu', Llama's)`);
  }
  if (json.rope_scaling !== undefined && json.rope_scaling !== null) {
    throw new ValueError(`llamaConfigFromJson: rope_scaling ${JSON.stringify(json.rope_scaling)} is not supported; only plain rotary embeddings (rope_scaling null) are`);
  }
  return { vocabSize: 32000, hiddenSize: 4096, intermediateSize: 11008, numHiddenLayers: 32, numAttentionHeads: 32, ...read };
}

/** `config` with its defaults, checked: sizes positive integers, heads dividing the width, key/value heads dividing the heads. */
export function resolveLlamaConfig(config: LlamaConfig): ResolvedLlamaConfig {
  const model = 'LlamaConfig';
  for (const field of ['vocabSize', 'hiddenSize', 'intermediateSize', 'numHiddenLayers', 'numAttentionHeads'] as const) {
    checkPositiveInteger(model, field, config[field]);
  }
  const { hiddenSize, numAttentionHeads } = config;
  if (config.headDim == null && hiddenSize % numAttentionHeads !== 0) {
    throw new ValueError(`${model}: hiddenSize (${hiddenSize}) must be divisible by numAttentionHeads (${numAttentionHeads}), or give headDim`);
  }
  const resolved = withDefaults({
    numKeyValueHeads: numAttentionHeads, headDim: hiddenSize / numAttentionHeads, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 2048,
    tieWordEmbeddings: false, attentionBias: false, mlpBias: false, attentionDropout: 0,
  }, config);
  checkPositiveInteger(model, 'numKeyValueHeads', resolved.numKeyValueHeads);
  checkPositiveInteger(model, 'headDim', resolved.headDim);
  if (numAttentionHeads % resolved.numKeyValueHeads !== 0) {
    throw new ValueError(`${model}: numAttentionHeads (${numAttentionHeads}) must be a multiple of numKeyValueHeads (${resolved.numKeyValueHeads})`);
  }
  if (resolved.headDim % 2 !== 0) throw new ValueError(`${model}: headDim must be even for rotary embeddings, got ${resolved.headDim}`);
  if (!(resolved.rmsNormEps >= 0)) throw new ValueError(`${model}: rmsNormEps must be >= 0, got ${resolved.rmsNormEps}`);
  if (!(resolved.ropeTheta > 0)) throw new ValueError(`${model}: ropeTheta must be > 0, got ${resolved.ropeTheta}`);
  checkDropout(model, 'attentionDropout', resolved.attentionDropout);
  return resolved;
}

/**
 * Hugging Face's LlamaRMSNorm: x / √(mean(x²) + eps) computed in float32, cast back to x's dtype,
 * then times the weight (nn.RMSNorm multiplies before the cast, which rounds half-precision
 * inputs differently).
 */
export class LlamaRMSNorm extends nn.Module {
  /** The scale [hiddenSize], initially ones. */
  weight: Tensor;
  /** Added to the mean square. */
  readonly eps: number;

  /** A norm over the last dim of size `hiddenSize`. */
  constructor(hiddenSize: number, eps: number) {
    super();
    this.weight = nn.Parameter(ones([hiddenSize]));
    this.eps = eps;
  }

  /** The normalised `x`, scaled. */
  forward(x: Tensor): Tensor {
    const x32 = x.to(float32);
    return this.weight.mul(x32.mul(x32.square().mean(-1, true).add(this.eps).rsqrt()).to(x.dtype));
  }
}

/** The last dim's halves [a, b] as [−b, a]: the rotation partner of each feature under Hugging Face's rotary layout. */
function rotateHalf(x: Tensor): Tensor {
  const [a, b] = x.chunk(2, -1) as [Tensor, Tensor];
  return cat([b.neg(), a], -1);
}

/** Rotary embedding of `x` [B, heads, T, D] at the angles whose cos and sin are [T, D]. */
function applyRotary(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  return x.mul(cos).add(rotateHalf(x).mul(sin));
}

/** Self-attention with rotary positions and `numKeyValueHeads` key/value heads shared by the query heads in groups. */
export class LlamaAttention extends nn.Module<[Tensor, Tensor, Tensor, KVCache | undefined]> {
  static override readonly registeredNames: nn.RegisteredNames<LlamaAttention> = { qProj: 'q_proj', kProj: 'k_proj', vProj: 'v_proj', oProj: 'o_proj' };
  /** Queries. */
  qProj: nn.Linear;
  /** Keys. */
  kProj: nn.Linear;
  /** Values. */
  vProj: nn.Linear;
  /** Output. */
  oProj: nn.Linear;
  /** The layer's index: its slot in the KV cache. */
  readonly layerIdx: number;
  readonly #config: ResolvedLlamaConfig;

  /** The attention of layer `layerIdx`. */
  constructor(config: ResolvedLlamaConfig, layerIdx: number) {
    super();
    this.layerIdx = layerIdx;
    const { hiddenSize, numAttentionHeads, numKeyValueHeads, headDim, attentionBias } = config;
    this.qProj = new nn.Linear(hiddenSize, numAttentionHeads * headDim, attentionBias);
    this.kProj = new nn.Linear(hiddenSize, numKeyValueHeads * headDim, attentionBias);
    this.vProj = new nn.Linear(hiddenSize, numKeyValueHeads * headDim, attentionBias);
    this.oProj = new nn.Linear(numAttentionHeads * headDim, hiddenSize, attentionBias);
    this.#config = config;
  }

  /** Attention of `x` [B, T, hidden] at the rotary angles `cos`, `sin` [T, headDim], after the cached positions. */
  forward(x: Tensor, cos: Tensor, sin: Tensor, cache: KVCache | undefined): Tensor {
    const { numAttentionHeads, numKeyValueHeads, headDim, attentionDropout } = this.#config;
    const [batch, length] = x.shape as [number, number, number];
    const heads = (t: Tensor, count: number): Tensor => t.view([batch, length, count, headDim]).transpose(1, 2);
    const q = applyRotary(heads(this.qProj.forward(x), numAttentionHeads), cos, sin);
    let k = applyRotary(heads(this.kProj.forward(x), numKeyValueHeads), cos, sin);
    let v = heads(this.vProj.forward(x), numKeyValueHeads);
    if (cache !== undefined) [k, v] = cache.update(this.layerIdx, k, v);
    // Hugging Face's repeat_kv: query head h reads key/value head ⌊h / groups⌋.
    const groups = numAttentionHeads / numKeyValueHeads;
    if (groups > 1) [k, v] = [k.repeatInterleave(groups, 1), v.repeatInterleave(groups, 1)];
    const out = F.scaledDotProductAttention(q, k, v, { ...causalMask(length, k.shape[2]!, x.device), dropoutP: this.training ? attentionDropout : 0 });
    return this.oProj.forward(out.transpose(1, 2).reshape([batch, length, numAttentionHeads * headDim]));
  }
}

/** The SwiGLU MLP: down_proj(silu(gate_proj(x)) · up_proj(x)). */
export class LlamaMLP extends nn.Module {
  static override readonly registeredNames: nn.RegisteredNames<LlamaMLP> = { gateProj: 'gate_proj', upProj: 'up_proj', downProj: 'down_proj' };
  /** The gate, through SiLU. */
  gateProj: nn.Linear;
  /** The value the gate scales. */
  upProj: nn.Linear;
  /** Back to the hidden size. */
  downProj: nn.Linear;

  /** The MLP of a layer of `config`. */
  constructor(config: ResolvedLlamaConfig) {
    super();
    const { hiddenSize, intermediateSize, mlpBias } = config;
    this.gateProj = new nn.Linear(hiddenSize, intermediateSize, mlpBias);
    this.upProj = new nn.Linear(hiddenSize, intermediateSize, mlpBias);
    this.downProj = new nn.Linear(intermediateSize, hiddenSize, mlpBias);
  }

  /** The MLP of `x` [..., hidden]. */
  forward(x: Tensor): Tensor {
    return this.downProj.forward(F.silu(this.gateProj.forward(x)).mul(this.upProj.forward(x)));
  }
}

/** One pre-norm decoder layer: x + attention(norm(x)), then + mlp(norm(·)). */
export class LlamaDecoderLayer extends nn.Module<[Tensor, Tensor, Tensor, KVCache | undefined]> {
  static override readonly registeredNames: nn.RegisteredNames<LlamaDecoderLayer> = {
    selfAttn: 'self_attn', inputLayernorm: 'input_layernorm', postAttentionLayernorm: 'post_attention_layernorm',
  };
  /** Self-attention. */
  selfAttn: LlamaAttention;
  /** The MLP. */
  mlp: LlamaMLP;
  /** The norm before attention. */
  inputLayernorm: LlamaRMSNorm;
  /** The norm before the MLP. */
  postAttentionLayernorm: LlamaRMSNorm;

  /** Layer `layerIdx` of a decoder of `config`. */
  constructor(config: ResolvedLlamaConfig, layerIdx: number) {
    super();
    this.selfAttn = new LlamaAttention(config, layerIdx);
    this.mlp = new LlamaMLP(config);
    this.inputLayernorm = new LlamaRMSNorm(config.hiddenSize, config.rmsNormEps);
    this.postAttentionLayernorm = new LlamaRMSNorm(config.hiddenSize, config.rmsNormEps);
  }

  /** The layer's output for `x` [B, T, hidden] at the rotary angles `cos`, `sin`. */
  forward(x: Tensor, cos: Tensor, sin: Tensor, cache: KVCache | undefined): Tensor {
    const h = x.add(this.selfAttn.forward(this.inputLayernorm.forward(x), cos, sin, cache));
    return h.add(this.mlp.forward(this.postAttentionLayernorm.forward(h)));
  }
}

/** A tied LM head's key and the key it shares its weight with. */
const TIED_HEAD: Readonly<Record<string, string>> = { 'lm_head.weight': 'model.embed_tokens.weight' };

/** Checkpoint keys as model keys: older Hugging Face files also hold each layer's non-persistent `rotary_emb.inv_freq`, skipped. */
function skipRotaryBuffers(key: string): string | undefined {
  return key.endsWith('.rotary_emb.inv_freq') ? undefined : key;
}

/** The checks every forward pass makes on its token ids and cache. */
function checkForwardInputs(model: string, inputIds: Tensor, numLayers: number, cache: KVCache | undefined): void {
  if (inputIds.dtype !== int32) {
    throw new DTypeError(`${model}.forward(): inputIds must be int32 token ids, got ${inputIds.dtype.name}; convert with inputIds.int()`, `${model}.forward`, inputIds.dtype.name);
  }
  if (inputIds.ndim !== 2 || inputIds.shape[1] === 0) {
    throw new ShapeError(`${model}.forward(): inputIds must be [batch, seq] with seq >= 1, got [${inputIds.shape.join(', ')}]; add a batch dim with inputIds.unsqueeze(0)`, `${model}.forward`);
  }
  if (cache !== undefined && cache.numLayers !== numLayers) {
    throw new ValueError(`${model}.forward(): the KVCache has ${cache.numLayers} layers but the model has ${numLayers}; make it with new KVCache(model.numLayers)`);
  }
}

/** The decoder without its LM head: token ids [B, T] to final hidden states [B, T, hidden]. */
export class LlamaModel extends nn.Module<[Tensor, CausalLMForwardOptions?]> {
  static override readonly registeredNames: nn.RegisteredNames<LlamaModel> = { embedTokens: 'embed_tokens' };
  /** The configuration, defaults filled in. */
  readonly config: ResolvedLlamaConfig;
  /** Token embeddings [vocab, hidden]. */
  embedTokens: nn.Embedding;
  /** The decoder layers. */
  layers: nn.ModuleList<LlamaDecoderLayer>;
  /** The final norm. */
  norm: LlamaRMSNorm;
  /** Rotary frequencies 1/θ^(2i/headDim) as float32 on the host, rounded as PyTorch computes them in float32. */
  readonly #invFreq: Float32Array;

  /** A randomly initialised decoder; load weights with `loadStateDict` or use `LlamaForCausalLM.fromPretrained`. */
  constructor(config: LlamaConfig) {
    super();
    this.config = resolveLlamaConfig(config);
    const { vocabSize, hiddenSize, numHiddenLayers, rmsNormEps, headDim, ropeTheta } = this.config;
    this.embedTokens = new nn.Embedding(vocabSize, hiddenSize);
    this.layers = new nn.ModuleList(Array.from({ length: numHiddenLayers }, (_, i) => new LlamaDecoderLayer(this.config, i)));
    this.norm = new LlamaRMSNorm(hiddenSize, rmsNormEps);
    this.#invFreq = Float32Array.from({ length: headDim / 2 }, (_, i) => 1 / Math.fround(ropeTheta ** Math.fround((2 * i) / headDim)));
  }

  /** A randomly initialised decoder of Hugging Face's config.json (parsed); see `llamaConfigFromJson`. */
  static fromConfigJson(json: Readonly<Record<string, unknown>>): LlamaModel {
    return new LlamaModel(llamaConfigFromJson(json));
  }

  /**
   * The decoder of a Hub repo id or a local folder, on `options.device` in `options.dtype`, in eval
   * mode: a LlamaModel checkpoint, or a LlamaForCausalLM one whose `model.` prefix is dropped and
   * whose `lm_head.weight` is skipped.
   * (`idOrDir` may also be `ModelFiles` or Blobs by file name; in a browser a string is a Hub repo id.)
   */
  static async fromPretrained(idOrDir: PretrainedSource, options: PretrainedOptions = {}): Promise<LlamaModel> {
    return pretrainedModel(idOrDir, options, {
      build: (config) => LlamaModel.fromConfigJson(config),
      keys: () => ({ renameKey: (key) => (key === 'lm_head.weight' ? undefined : skipRotaryBuffers(key.replace(/^model\./, ''))) }),
    });
  }

  /** cos and sin [T, headDim] of the rotary angles of positions start..start+T−1, in `dtype`. */
  #rotary(start: number, length: number, like: Tensor, dtype: DType): [Tensor, Tensor] {
    const positions = arange(start, start + length, { dtype: float32, device: like.device });
    const freqs = positions.unsqueeze(1).mul(tensor(this.#invFreq, { device: like.device }).unsqueeze(0));
    const angles = cat([freqs, freqs], -1);
    return [angles.cos().to(dtype), angles.sin().to(dtype)];
  }

  /** The final hidden states of `inputIds` [B, T] (int32); with a cache, positions continue from `cache.length` and the new keys and values are appended. */
  forward(inputIds: Tensor, options: CausalLMForwardOptions = {}): Tensor {
    const { cache } = options;
    checkForwardInputs('LlamaModel', inputIds, this.config.numHiddenLayers, cache);
    let x = this.embedTokens.forward(inputIds);
    const [cos, sin] = this.#rotary(cache?.length ?? 0, inputIds.shape[1]!, x, x.dtype);
    for (const layer of this.layers) x = layer.forward(x, cos, sin, cache);
    return this.norm.forward(x);
  }
}

/** The decoder with its LM head: Hugging Face's LlamaForCausalLM, a `CausalLM` for `generate`. */
export class LlamaForCausalLM extends nn.Module<[Tensor, CausalLMForwardOptions?]> implements CausalLM {
  static override readonly registeredNames: nn.RegisteredNames<LlamaForCausalLM> = { lmHead: 'lm_head' };
  /** The decoder. */
  model: LlamaModel;
  /** Hidden states to logits [vocab, hidden]; its weight is `model.embedTokens.weight` itself when `tieWordEmbeddings`. */
  lmHead: nn.Linear;

  /** A randomly initialised model of `config`. */
  constructor(config: LlamaConfig) {
    super();
    this.model = new LlamaModel(config);
    const { hiddenSize, vocabSize, tieWordEmbeddings } = this.model.config;
    this.lmHead = new nn.Linear(hiddenSize, vocabSize, false);
    if (tieWordEmbeddings) this.lmHead.weight = this.model.embedTokens.weight;
  }

  /** A randomly initialised model of Hugging Face's config.json (parsed); see `llamaConfigFromJson`. */
  static fromConfigJson(json: Readonly<Record<string, unknown>>): LlamaForCausalLM {
    return new LlamaForCausalLM(llamaConfigFromJson(json));
  }

  /**
   * A model of a Hub repo id or a local folder in Hugging Face's layout (config.json and
   * model.safetensors or its shards), on `options.device` in `options.dtype`, in eval mode.
   * Checkpoints from older Hugging Face versions also hold each layer's `rotary_emb.inv_freq`: they
   * are skipped (the frequencies are computed from the config); a tied head may be absent.
   * (`idOrDir` may also be `ModelFiles` or Blobs by file name; in a browser a string is a Hub repo id.)
   */
  static async fromPretrained(idOrDir: PretrainedSource, options: PretrainedOptions = {}): Promise<LlamaForCausalLM> {
    return pretrainedModel(idOrDir, options, {
      build: (config) => LlamaForCausalLM.fromConfigJson(config),
      keys: (model) => ({ renameKey: skipRotaryBuffers, tiedKeys: model.config.tieWordEmbeddings ? TIED_HEAD : {} }),
    });
  }

  /** The configuration, defaults filled in. */
  get config(): ResolvedLlamaConfig {
    return this.model.config;
  }

  /** Decoder layers (the size of a `KVCache` for this model). */
  get numLayers(): number {
    return this.model.config.numHiddenLayers;
  }

  /** Logits [B, T, vocab] of every position of `inputIds` [B, T] (int32); with a cache, positions continue from `cache.length`. */
  forward(inputIds: Tensor, options: CausalLMForwardOptions = {}): Tensor {
    return this.lmHead.forward(this.model.forward(inputIds, options));
  }
}
