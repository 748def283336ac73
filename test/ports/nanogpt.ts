// karpathy/nanoGPT's model.py, ported line by line to this library's PyTorch-named API.
//
// What a port has to change, and nothing else: module fields keep PyTorch's snake_case names
// (`c_attn`, `ln_f`, `lm_head`), because field names are state-dict keys and a checkpoint written
// by PyTorch must load by its own keys; everything else follows the library's naming rule
// (camelCase for config fields, methods and locals). `module(x)` is `module.call(x)`.
// `@torch.no_grad()` is `noGrad(() => …)`. Python's `x[:, [-1], :]` is `x.index([':', [-1], ':'])`.
import { F, nn } from '@core/nn';
import { AdamW } from '@core/optim';
import { arange, cat, int32, multinomial, noGrad, ones, topk, tril, zeros, type Tensor } from '@core/tensor';

/** LayerNorm with an optional bias (nanoGPT's own class: PyTorch 1.13's nn.LayerNorm has no `bias=False`). */
export class LayerNorm extends nn.Module {
  /** The scale, ones at first. */
  weight: Tensor;
  /** The shift, zeros at first; null without bias. */
  bias: Tensor | null;

  /** A LayerNorm over a last dim of `ndim`, with or without a bias. */
  constructor(ndim: number, bias: boolean) {
    super();
    this.weight = nn.Parameter(ones([ndim]));
    this.bias = bias ? nn.Parameter(zeros([ndim])) : null;
  }

  /** F.layerNorm with eps 1e-5. */
  forward(input: Tensor): Tensor {
    return F.layerNorm(input, this.weight.shape, this.weight, this.bias, 1e-5);
  }
}

/** nanoGPT's GPTConfig, with its defaults (GPT-2 124M's sizes, vocabulary padded to 50304). */
export interface GPTConfig {
  /** The longest context, in tokens. */
  blockSize: number;
  /** Tokens in the vocabulary. */
  vocabSize: number;
  /** Transformer blocks. */
  nLayer: number;
  /** Attention heads per block. */
  nHead: number;
  /** The width of the residual stream. */
  nEmbd: number;
  /** Dropout probability. */
  dropout: number;
  /** Biases in Linears and LayerNorms (GPT-2 has them; without is a little better and faster). */
  bias: boolean;
  /**
   * Attention through F.scaledDotProductAttention (true) or nanoGPT's manual path, a tril mask
   * buffer with maskedFill and softmax (false). nanoGPT picks by whether torch has
   * scaled_dot_product_attention; this library has it, so the default is true. The manual path
   * registers the `attn.bias` buffers that a PyTorch 1.x checkpoint holds.
   */
  flash: boolean;
}

/** `GPTConfig(**overrides)`: nanoGPT's defaults with `overrides` applied. */
export function gptConfig(overrides: Partial<GPTConfig> = {}): GPTConfig {
  return { blockSize: 1024, vocabSize: 50304, nLayer: 12, nHead: 12, nEmbd: 768, dropout: 0.0, bias: true, flash: true, ...overrides };
}

/** Multi-head causal self-attention: one Linear makes q, k and v for every head at once. */
export class CausalSelfAttention extends nn.Module {
  /** Key, query and value projections for all heads, in one. */
  readonly c_attn: nn.Linear;
  /** The output projection. */
  readonly c_proj: nn.Linear;
  /** Dropout of the attention weights (manual path; the flash path passes dropoutP). */
  readonly attn_dropout: nn.Dropout;
  /** Dropout of the output. */
  readonly resid_dropout: nn.Dropout;
  /** Heads. */
  readonly nHead: number;
  /** The width of the residual stream. */
  readonly nEmbd: number;
  /** Dropout probability. */
  readonly dropout: number;
  /** Whether attention goes through F.scaledDotProductAttention. */
  readonly flash: boolean;
  /** The manual path's causal mask [1, 1, blockSize, blockSize], a buffer (absent on the flash path). */
  declare bias: Tensor | undefined;

  /** The attention of one block. */
  constructor(config: GPTConfig) {
    super();
    if (config.nEmbd % config.nHead !== 0) throw new RangeError(`nEmbd (${config.nEmbd}) must be a multiple of nHead (${config.nHead})`);
    this.c_attn = new nn.Linear(config.nEmbd, 3 * config.nEmbd, { bias: config.bias });
    this.c_proj = new nn.Linear(config.nEmbd, config.nEmbd, { bias: config.bias });
    this.attn_dropout = new nn.Dropout(config.dropout);
    this.resid_dropout = new nn.Dropout(config.dropout);
    this.nHead = config.nHead;
    this.nEmbd = config.nEmbd;
    this.dropout = config.dropout;
    this.flash = config.flash;
    if (!this.flash) {
      // Causal mask so that attention only applies to the left in the input sequence.
      this.registerBuffer('bias', tril(ones([config.blockSize, config.blockSize])).view([1, 1, config.blockSize, config.blockSize]));
    }
  }

  /** [B, T, C] → [B, T, C]: each position attends to itself and the positions before it. */
  forward(x: Tensor): Tensor {
    const [B, T, C] = x.shape as [number, number, number];
    // Query, key and value for all heads, the head moved forward to be a batch dim: [B, nh, T, hs].
    let [q, k, v] = this.c_attn.call(x).split(this.nEmbd, 2) as [Tensor, Tensor, Tensor];
    k = k.view([B, T, this.nHead, C / this.nHead]).transpose(1, 2);
    q = q.view([B, T, this.nHead, C / this.nHead]).transpose(1, 2);
    v = v.view([B, T, this.nHead, C / this.nHead]).transpose(1, 2);
    let y: Tensor;
    if (this.flash) {
      y = F.scaledDotProductAttention(q, k, v, { attnMask: null, dropoutP: this.training ? this.dropout : 0, isCausal: true });
    } else {
      // (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
      let att = q.matmul(k.transpose(-2, -1)).mul(1.0 / Math.sqrt(k.shape.at(-1)!));
      att = att.maskedFill(this.bias!.index([':', ':', `:${T}`, `:${T}`]).eq(0), -Infinity);
      att = F.softmax(att, -1);
      att = this.attn_dropout.call(att);
      y = att.matmul(v); // (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    }
    y = y.transpose(1, 2).contiguous().view([B, T, C]); // the heads side by side again
    return this.resid_dropout.call(this.c_proj.call(y));
  }
}

/** The feed-forward half of a block: Linear to 4× the width, GELU, Linear back, dropout. */
export class MLP extends nn.Module {
  /** Up-projection. */
  readonly c_fc: nn.Linear;
  /** The nonlinearity (exact erf GELU). */
  readonly gelu: nn.GELU;
  /** Down-projection. */
  readonly c_proj: nn.Linear;
  /** Dropout of the output. */
  readonly dropout: nn.Dropout;

  /** The MLP of one block. */
  constructor(config: GPTConfig) {
    super();
    this.c_fc = new nn.Linear(config.nEmbd, 4 * config.nEmbd, { bias: config.bias });
    this.gelu = new nn.GELU();
    this.c_proj = new nn.Linear(4 * config.nEmbd, config.nEmbd, { bias: config.bias });
    this.dropout = new nn.Dropout(config.dropout);
  }

  /** [B, T, C] → [B, T, C]. */
  forward(x: Tensor): Tensor {
    x = this.c_fc.call(x);
    x = this.gelu.call(x);
    x = this.c_proj.call(x);
    x = this.dropout.call(x);
    return x;
  }
}

/** A pre-norm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)). */
export class Block extends nn.Module {
  /** The norm before attention. */
  readonly ln_1: LayerNorm;
  /** Causal self-attention. */
  readonly attn: CausalSelfAttention;
  /** The norm before the MLP. */
  readonly ln_2: LayerNorm;
  /** The feed-forward part. */
  readonly mlp: MLP;

  /** One block. */
  constructor(config: GPTConfig) {
    super();
    this.ln_1 = new LayerNorm(config.nEmbd, config.bias);
    this.attn = new CausalSelfAttention(config);
    this.ln_2 = new LayerNorm(config.nEmbd, config.bias);
    this.mlp = new MLP(config);
  }

  /** [B, T, C] → [B, T, C]. */
  forward(x: Tensor): Tensor {
    x = x.add(this.attn.call(this.ln_1.call(x)));
    x = x.add(this.mlp.call(this.ln_2.call(x)));
    return x;
  }
}

/**
 * The modules GPT keeps in its `transformer` ModuleDict. A ModuleDict registers its entries as
 * fields, so `transformer.wte` works as in Python; its type knows each entry's type only through
 * `get('wte')`, so this intersection types the fields.
 */
export type TransformerModules = nn.ModuleDict & {
  /** Token embedding, tied to lm_head. */
  wte: nn.Embedding;
  /** Position embedding. */
  wpe: nn.Embedding;
  /** Dropout of the summed embeddings. */
  drop: nn.Dropout;
  /** The blocks. */
  h: nn.ModuleList<Block>;
  /** The final norm. */
  ln_f: LayerNorm;
};

/** nanoGPT's GPT: `call(idx, targets?)` gives `[logits, loss]`, loss null without targets. */
export class GPT extends nn.Module<[idx: Tensor, targets?: Tensor | null], [logits: Tensor, loss: Tensor | null]> {
  /** The sizes (cropBlockSize changes blockSize). */
  readonly config: GPTConfig;
  /** wte, wpe, drop, h and ln_f. */
  readonly transformer: TransformerModules;
  /** The language-model head, without bias; its weight is wte's. */
  readonly lm_head: nn.Linear;

  /** A GPT with nanoGPT's initialisation, drawn from the global generator (`manualSeed`). */
  constructor(config: GPTConfig) {
    super();
    this.config = config;
    this.transformer = new nn.ModuleDict<nn.AnyModule>({
      wte: new nn.Embedding(config.vocabSize, config.nEmbd),
      wpe: new nn.Embedding(config.blockSize, config.nEmbd),
      drop: new nn.Dropout(config.dropout),
      h: new nn.ModuleList(Array.from({ length: config.nLayer }, () => new Block(config))),
      ln_f: new LayerNorm(config.nEmbd, config.bias),
    }) as TransformerModules;
    this.lm_head = new nn.Linear(config.nEmbd, config.vocabSize, { bias: false });
    // Weight tying: one Parameter in two modules, listed once by parameters().
    this.transformer.wte.weight = this.lm_head.weight;
    // Init all weights, then the special scaled init of the residual projections, per GPT-2's paper.
    this.apply((m) => this._initWeights(m));
    for (const [pn, p] of this.namedParameters()) {
      if (pn.endsWith('c_proj.weight')) nn.init.normal_(p, 0.0, 0.02 / Math.sqrt(2 * config.nLayer));
    }
  }

  /** Parameters, a tied one once; without the position embedding unless `nonEmbedding` is false. */
  getNumParams(nonEmbedding = true): number {
    let nParams = this.parameters().reduce((n, p) => n + p.numel(), 0);
    if (nonEmbedding) nParams -= this.transformer.wpe.weight.numel();
    return nParams;
  }

  /** N(0, 0.02) for Linear and Embedding weights, zero Linear biases. */
  _initWeights(module: nn.AnyModule): void {
    if (module instanceof nn.Linear) {
      nn.init.normal_(module.weight, 0.0, 0.02);
      if (module.bias !== null) nn.init.zeros_(module.bias);
    } else if (module instanceof nn.Embedding) {
      nn.init.normal_(module.weight, 0.0, 0.02);
    }
  }

  /** Logits for every position and the mean cross entropy against `targets`; without targets, the last position's logits only. */
  forward(idx: Tensor, targets: Tensor | null = null): [logits: Tensor, loss: Tensor | null] {
    const [, t] = idx.shape as [number, number];
    if (t > this.config.blockSize) throw new RangeError(`Cannot forward sequence of length ${t}, block size is only ${this.config.blockSize}`);
    const pos = arange(0, t, { dtype: int32, device: idx.device }); // shape (t)
    const tokEmb = this.transformer.wte.call(idx); // (b, t, n_embd)
    const posEmb = this.transformer.wpe.call(pos); // (t, n_embd)
    let x = this.transformer.drop.call(tokEmb.add(posEmb));
    for (const block of this.transformer.h) x = block.call(x);
    x = this.transformer.ln_f.call(x);
    if (targets !== null) {
      const logits = this.lm_head.call(x);
      const loss = F.crossEntropy(logits.view([-1, logits.shape.at(-1)!]), targets.view([-1]), { ignoreIndex: -1 });
      return [logits, loss];
    }
    // Inference: the lm_head on the last position only (a list index keeps the time dim).
    return [this.lm_head.call(x.index([':', [-1], ':'])), null];
  }

  /** Shrink the block size (e.g. to load a GPT-2 checkpoint into a smaller model): crops wpe and the mask buffers. */
  cropBlockSize(blockSize: number): void {
    if (blockSize > this.config.blockSize) throw new RangeError(`cropBlockSize(${blockSize}): larger than the block size ${this.config.blockSize}`);
    this.config.blockSize = blockSize;
    this.transformer.wpe.weight = nn.Parameter(this.transformer.wpe.weight.index(`:${blockSize}`));
    for (const block of this.transformer.h) {
      if (block.attn.bias !== undefined) block.attn.bias = block.attn.bias.index([':', ':', `:${blockSize}`, `:${blockSize}`]);
    }
  }

  /** AdamW with two groups: every ≥2-D parameter (matmul weights, embeddings) decays, biases and LayerNorm weights do not. */
  configureOptimizers(weightDecay: number, learningRate: number, betas: [number, number]): AdamW {
    const paramDict = new Map(this.namedParameters().filter(([, p]) => p.requiresGrad));
    const decayParams = [...paramDict.values()].filter((p) => p.ndim >= 2);
    const nodecayParams = [...paramDict.values()].filter((p) => p.ndim < 2);
    const optimGroups = [
      { params: decayParams, weightDecay },
      { params: nodecayParams, weightDecay: 0.0 },
    ];
    return new AdamW(optimGroups, { lr: learningRate, betas });
  }

  /**
   * Continue each row of `idx` (int32 [b, t]) by `maxNewTokens` tokens, each sampled from the
   * softmax of the last logits / temperature, kept to the `topK` likeliest when given. The context
   * is cropped to the last blockSize tokens. Call `eval()` first.
   */
  generate(idx: Tensor, maxNewTokens: number, temperature = 1.0, topK: number | null = null): Tensor {
    return noGrad(() => {
      for (let i = 0; i < maxNewTokens; i++) {
        const idxCond = idx.shape[1]! <= this.config.blockSize ? idx : idx.index([':', `-${this.config.blockSize}:`]);
        let [logits] = this.call(idxCond);
        logits = logits.index([':', -1, ':']).div(temperature);
        if (topK !== null) {
          const { values: v } = topk(logits, Math.min(topK, logits.shape.at(-1)!));
          logits.indexPut_(logits.lt(v.index([':', [-1]])), -Infinity);
        }
        const probs = F.softmax(logits, -1);
        const idxNext = multinomial(probs, 1);
        idx = cat([idx, idxNext], 1);
      }
      return idx;
    });
  }
}
