// A GPT in the shape of nanoGPT's model.py, written with this library's PyTorch-named API:
// token and position embeddings, dropout, a stack of pre-norm transformer blocks (causal
// self-attention and a 4× GELU MLP, each added to the residual stream), a final LayerNorm and a
// language-model head that shares its weight with the token embedding.
import { F, nn } from '@core/nn';
import type { ParamGroupInput, AdamOptions } from '@core/optim';
import { arange, int32, type Tensor } from '@core/tensor';

/** The model's sizes. */
export interface GPTConfig {
  /** Tokens in the vocabulary. */
  readonly vocabSize: number;
  /** The longest context, in tokens. */
  readonly blockSize: number;
  /** Transformer blocks. */
  readonly nLayer: number;
  /** Attention heads per block (must divide nEmbd). */
  readonly nHead: number;
  /** The width of the residual stream. */
  readonly nEmbd: number;
  /** Dropout probability (embeddings, attention weights, residual branches). */
  readonly dropout: number;
  /** Biases in the Linear and LayerNorm layers. */
  readonly bias: boolean;
}

/** The standard deviation of every weight at initialisation (nanoGPT's, after GPT-2). */
const INIT_STD = 0.02;

/** Multi-head causal self-attention: one Linear makes q, k and v; each head attends to earlier positions only. */
class CausalSelfAttention extends nn.Module {
  readonly cAttn: nn.Linear;
  readonly cProj: nn.Linear;
  readonly residDropout: nn.Dropout;

  constructor(private readonly config: GPTConfig) {
    super();
    if (config.nEmbd % config.nHead !== 0) throw new Error(`nEmbd (${config.nEmbd}) must be a multiple of nHead (${config.nHead})`);
    this.cAttn = new nn.Linear(config.nEmbd, 3 * config.nEmbd, { bias: config.bias });
    this.cProj = new nn.Linear(config.nEmbd, config.nEmbd, { bias: config.bias });
    this.residDropout = new nn.Dropout(config.dropout);
  }

  forward(x: Tensor): Tensor {
    const [B, T, C] = x.shape as [number, number, number];
    const { nHead, dropout } = this.config;
    // [B, T, 3C] → q, k, v of [B, nHead, T, C / nHead].
    const [q, k, v] = this.cAttn.forward(x).split(C, 2).map((t) => t.view([B, T, nHead, C / nHead]).transpose(1, 2)) as [Tensor, Tensor, Tensor];
    const y = F.scaledDotProductAttention(q, k, v, { dropoutP: this.training ? dropout : 0, isCausal: true });
    return this.residDropout.forward(this.cProj.forward(y.transpose(1, 2).contiguous().view([B, T, C])));
  }
}

/** The feed-forward half of a block: Linear to 4× the width, GELU, Linear back. */
class MLP extends nn.Module {
  readonly cFc: nn.Linear;
  readonly gelu: nn.GELU = new nn.GELU();
  readonly cProj: nn.Linear;
  readonly dropout: nn.Dropout;

  constructor(config: GPTConfig) {
    super();
    this.cFc = new nn.Linear(config.nEmbd, 4 * config.nEmbd, { bias: config.bias });
    this.cProj = new nn.Linear(4 * config.nEmbd, config.nEmbd, { bias: config.bias });
    this.dropout = new nn.Dropout(config.dropout);
  }

  forward(x: Tensor): Tensor {
    return this.dropout.forward(this.cProj.forward(this.gelu.forward(this.cFc.forward(x))));
  }
}

/** A pre-norm transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)). */
class Block extends nn.Module {
  readonly ln1: nn.LayerNorm;
  readonly attn: CausalSelfAttention;
  readonly ln2: nn.LayerNorm;
  readonly mlp: MLP;

  constructor(config: GPTConfig) {
    super();
    this.ln1 = new nn.LayerNorm(config.nEmbd, { bias: config.bias });
    this.attn = new CausalSelfAttention(config);
    this.ln2 = new nn.LayerNorm(config.nEmbd, { bias: config.bias });
    this.mlp = new MLP(config);
  }

  forward(x: Tensor): Tensor {
    const h = x.add(this.attn.forward(this.ln1.forward(x)));
    return h.add(this.mlp.forward(this.ln2.forward(h)));
  }
}

/** nanoGPT's GPT: `forward(idx)` maps int32 token ids [B, T] (T ≤ blockSize) to next-token logits [B, T, vocabSize]. */
export class GPT extends nn.Module {
  /** Token embedding; its weight is also the head's. */
  readonly wte: nn.Embedding;
  /** Position embedding. */
  readonly wpe: nn.Embedding;
  readonly drop: nn.Dropout;
  /** The transformer blocks. */
  readonly h: nn.ModuleList<Block>;
  /** The final LayerNorm. */
  readonly lnF: nn.LayerNorm;
  /** The language-model head (no bias), tied to `wte`. */
  readonly lmHead: nn.Linear;

  constructor(readonly config: GPTConfig) {
    super();
    this.wte = new nn.Embedding(config.vocabSize, config.nEmbd);
    this.wpe = new nn.Embedding(config.blockSize, config.nEmbd);
    this.drop = new nn.Dropout(config.dropout);
    this.h = new nn.ModuleList(Array.from({ length: config.nLayer }, () => new Block(config)));
    this.lnF = new nn.LayerNorm(config.nEmbd, { bias: config.bias });
    this.lmHead = new nn.Linear(config.nEmbd, config.vocabSize, { bias: false });
    // Weight tying: one Parameter in two modules; parameters() lists it once, under wte.weight.
    this.lmHead.weight = this.wte.weight;
    this.initWeights();
  }

  /** nanoGPT's init: every Linear and Embedding weight N(0, 0.02), biases 0; residual projections N(0, 0.02/√(2·nLayer)). */
  private initWeights(): void {
    for (const m of this.modules()) {
      if (m instanceof nn.Linear || m instanceof nn.Embedding) nn.init.normal_(m.weight, 0, INIT_STD);
      if (m instanceof nn.Linear && m.bias) nn.init.zeros_(m.bias);
    }
    const residualStd = INIT_STD / Math.sqrt(2 * this.config.nLayer);
    for (const block of this.h) {
      nn.init.normal_(block.attn.cProj.weight, 0, residualStd);
      nn.init.normal_(block.mlp.cProj.weight, 0, residualStd);
    }
  }

  forward(idx: Tensor): Tensor {
    const T = idx.shape[1]!;
    if (idx.ndim !== 2 || T > this.config.blockSize) {
      throw new Error(`GPT.forward: expected token ids of shape [B, T] with T ≤ blockSize ${this.config.blockSize}, got [${idx.shape.join(', ')}]`);
    }
    const pos = arange(T, { dtype: int32, device: idx.device });
    let x = this.drop.forward(this.wte.forward(idx).add(this.wpe.forward(pos)));
    for (const block of this.h) x = block.forward(x);
    return this.lmHead.forward(this.lnF.forward(x));
  }

  /** Mean cross entropy of the logits for `idx` against the next tokens `targets` (both [B, T]). */
  loss(idx: Tensor, targets: Tensor): Tensor {
    const logits = this.forward(idx);
    return F.crossEntropy(logits.view([-1, this.config.vocabSize]), targets.view([-1]));
  }

  /** The number of parameters, each shared one once, without the position embedding (as nanoGPT counts). */
  numParams(): number {
    return this.parameters().reduce((n, p) => n + p.numel(), 0) - this.wpe.weight.numel();
  }
}

/**
 * AdamW's two parameter groups by nanoGPT's rule (configure_optimizers): every parameter of two or
 * more dimensions (matmul weights and embeddings) decays by `weightDecay`; the rest (biases,
 * LayerNorm weights) does not. A tied weight is listed once.
 */
export function paramGroups(model: nn.Module, weightDecay: number): [ParamGroupInput<AdamOptions>, ParamGroupInput<AdamOptions>] {
  const params = model.parameters().filter((p) => p.requiresGrad);
  return [
    { params: params.filter((p) => p.ndim >= 2), weightDecay },
    { params: params.filter((p) => p.ndim < 2), weightDecay: 0 },
  ];
}
