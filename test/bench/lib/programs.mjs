// The two training programs bench:cpu times, as modules of this library: pytorch/examples mnist's
// Net and a small GPT in nanoGPT's shape (dropout 0). test/ports has line-by-line TypeScript ports
// of both; the bench runs plain JavaScript, so it has its own compact ones. Parameter names are
// PyTorch's, the same as those of the PyTorch twins in test/bench/overhead_torch.py: the shared
// initial weights are loaded by name on both sides.
import { F, nn } from '@core/nn';
import { arange, int32, noGrad, tensor } from '@core/tensor';

/** One training step as a loop writes it: zero the grads, the loss of the inputs, backward, update; returns the loss. */
export function trainingStep(optimizer, lossOf) {
  return (...inputs) => {
    optimizer.zeroGrad();
    const loss = lossOf(...inputs);
    loss.backward();
    optimizer.step();
    return loss;
  };
}

/** main.py's Net: two 3×3 convolutions, max pooling, dropout, two Linears, log-probabilities [N, 10] of images [N, 1, 28, 28]. */
export class Net extends nn.Module {
  constructor() {
    super();
    this.conv1 = new nn.Conv2d(1, 32, 3, 1);
    this.conv2 = new nn.Conv2d(32, 64, 3, 1);
    this.dropout1 = new nn.Dropout(0.25);
    this.dropout2 = new nn.Dropout(0.5);
    this.fc1 = new nn.Linear(9216, 128);
    this.fc2 = new nn.Linear(128, 10);
  }

  forward(x) {
    x = F.maxPool2d(F.relu(this.conv2.call(F.relu(this.conv1.call(x)))), 2);
    x = F.relu(this.fc1.call(this.dropout1.call(x).flatten(1)));
    return F.logSoftmax(this.fc2.call(this.dropout2.call(x)), 1);
  }
}

/** Causal self-attention: one Linear makes q, k and v of every head; F.scaledDotProductAttention, as nanoGPT takes where the library has it. */
class CausalSelfAttention extends nn.Module {
  constructor({ nEmbd, nHead }) {
    super();
    this.nHead = nHead;
    this.c_attn = new nn.Linear(nEmbd, 3 * nEmbd);
    this.c_proj = new nn.Linear(nEmbd, nEmbd);
  }

  forward(x) {
    const [B, T, C] = x.shape;
    const [q, k, v] = this.c_attn.call(x).split(C, 2).map((t) => t.view([B, T, this.nHead, C / this.nHead]).transpose(1, 2));
    const y = F.scaledDotProductAttention(q, k, v, { isCausal: true });
    return this.c_proj.call(y.transpose(1, 2).contiguous().view([B, T, C]));
  }
}

/** Linear to 4× the width, exact GELU, Linear back. */
class MLP extends nn.Module {
  constructor({ nEmbd }) {
    super();
    this.c_fc = new nn.Linear(nEmbd, 4 * nEmbd);
    this.c_proj = new nn.Linear(4 * nEmbd, nEmbd);
  }

  forward(x) {
    return this.c_proj.call(F.gelu(this.c_fc.call(x)));
  }
}

/** A pre-norm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)). */
class Block extends nn.Module {
  constructor(config) {
    super();
    this.ln_1 = new nn.LayerNorm(config.nEmbd);
    this.attn = new CausalSelfAttention(config);
    this.ln_2 = new nn.LayerNorm(config.nEmbd);
    this.mlp = new MLP(config);
  }

  forward(x) {
    x = x.add(this.attn.call(this.ln_1.call(x)));
    return x.add(this.mlp.call(this.ln_2.call(x)));
  }
}

/** nanoGPT's GPT without dropout: `call(idx, targets)` is the mean cross-entropy of the next tokens; lm_head shares wte's weight. */
export class GPT extends nn.Module {
  constructor(config) {
    super();
    this.transformer = new nn.ModuleDict({
      wte: new nn.Embedding(config.vocabSize, config.nEmbd),
      wpe: new nn.Embedding(config.blockSize, config.nEmbd),
      h: new nn.ModuleList(Array.from({ length: config.nLayer }, () => new Block(config))),
      ln_f: new nn.LayerNorm(config.nEmbd),
    });
    this.lm_head = new nn.Linear(config.nEmbd, config.vocabSize, { bias: false });
    this.transformer.wte.weight = this.lm_head.weight;
  }

  forward(idx, targets) {
    const t = this.transformer;
    let x = t.wte.call(idx).add(t.wpe.call(arange(0, idx.shape[1], { dtype: int32 })));
    for (const block of t.h) x = block.call(x);
    const logits = this.lm_head.call(t.ln_f.call(x));
    return F.crossEntropy(logits.view([-1, logits.shape.at(-1)]), targets.view([-1]));
  }
}

/**
 * Copies `weights` ({ name: Float32Array }) into `model`'s parameters of those names; throws when
 * the names are not exactly the model's (a program that drifted from its PyTorch twin).
 */
export function loadWeights(model, weights) {
  const named = model.namedParameters();
  const have = named.map(([name]) => name).sort();
  const given = Object.keys(weights).sort();
  if (have.join() !== given.join()) throw new Error(`the shared weights name ${given.join(', ')}; the model has ${have.join(', ')}`);
  noGrad(() => {
    for (const [name, p] of named) p.copy_(tensor(weights[name]).reshape(p.shape));
  });
}
