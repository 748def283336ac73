// A GPT-like language model for the compile tests and measurements: token and position embeddings,
// pre-norm blocks (causal self-attention through F.scaledDotProductAttention, a GELU MLP), a final
// LayerNorm and a head tied to the token embedding; the loss is the next-token cross entropy.
import { F, nn } from '@core/nn';
import { arange, int32, type Tensor } from '@core/tensor';

/** The model's sizes. */
export interface TinyGptConfig {
  readonly vocab: number;
  readonly context: number;
  readonly width: number;
  readonly heads: number;
  readonly layers: number;
}

class SelfAttention extends nn.Module<[x: Tensor], Tensor> {
  readonly qkv: nn.Linear;
  readonly proj: nn.Linear;

  constructor(private readonly width: number, private readonly heads: number) {
    super();
    this.qkv = new nn.Linear(width, 3 * width);
    this.proj = new nn.Linear(width, width);
  }

  forward(x: Tensor): Tensor {
    const [b, t] = x.shape as [number, number, number];
    const split = (u: Tensor) => u.view([b, t, this.heads, this.width / this.heads]).transpose(1, 2);
    const [q, k, v] = this.qkv.call(x).split(this.width, 2).map(split) as [Tensor, Tensor, Tensor];
    const y = F.scaledDotProductAttention(q, k, v, { isCausal: true });
    return this.proj.call(y.transpose(1, 2).contiguous().view([b, t, this.width]));
  }
}

class Block extends nn.Module<[x: Tensor], Tensor> {
  readonly norm1: nn.LayerNorm;
  readonly attention: SelfAttention;
  readonly norm2: nn.LayerNorm;
  readonly up: nn.Linear;
  readonly down: nn.Linear;

  constructor(width: number, heads: number) {
    super();
    this.norm1 = new nn.LayerNorm(width);
    this.attention = new SelfAttention(width, heads);
    this.norm2 = new nn.LayerNorm(width);
    this.up = new nn.Linear(width, 4 * width);
    this.down = new nn.Linear(4 * width, width);
  }

  forward(x: Tensor): Tensor {
    const h = x.add(this.attention.call(this.norm1.call(x)));
    return h.add(this.down.call(F.gelu(this.up.call(this.norm2.call(h)))));
  }
}

/** `call(tokens, targets)`: the mean next-token cross entropy of int32 `tokens` [B, T] against `targets` [B, T]. */
export class TinyGpt extends nn.Module<[tokens: Tensor, targets: Tensor], Tensor> {
  readonly tokens: nn.Embedding;
  readonly positions: nn.Embedding;
  readonly blocks: nn.ModuleList;
  readonly norm: nn.LayerNorm;
  readonly head: nn.Linear;

  constructor(config: TinyGptConfig) {
    super();
    this.tokens = new nn.Embedding(config.vocab, config.width);
    this.positions = new nn.Embedding(config.context, config.width);
    this.blocks = new nn.ModuleList(Array.from({ length: config.layers }, () => new Block(config.width, config.heads)));
    this.norm = new nn.LayerNorm(config.width);
    this.head = new nn.Linear(config.width, config.vocab, { bias: false });
    this.head.weight = this.tokens.weight;
  }

  forward(tokens: Tensor, targets: Tensor): Tensor {
    const t = tokens.shape[1]!;
    let x = this.tokens.call(tokens).add(this.positions.call(arange(0, t, { dtype: int32, device: tokens.device })));
    for (const block of this.blocks) x = (block as Block).call(x);
    const logits = this.head.call(this.norm.call(x));
    return F.crossEntropy(logits.view([-1, logits.shape.at(-1)!]), targets.view([-1]));
  }
}
