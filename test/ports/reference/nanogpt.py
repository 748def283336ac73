"""PyTorch 1.13 reference for test/ports/nanogpt.test.ts.

nanoGPT's model.py (GPTConfig, LayerNorm with optional bias, CausalSelfAttention, MLP, Block, GPT
with weight tying, _init_weights, configure_optimizers, generate) and its train.py loop (get_batch,
AdamW, warmup + cosine learning rate set on the param groups each iteration, gradient
accumulation, clip_grad_norm_, GradScaler, zero_grad(set_to_none=True), estimate_loss), at a tiny
size. PyTorch 1.13 has no F.scaled_dot_product_attention, so attention takes nanoGPT's manual path
(tril mask buffer + masked_fill). Dropout is 0, nanoGPT's default, so both libraries run the same
computation whatever their random streams.

It writes, into ../fixtures:
  nanogpt.safetensors  the initial state dict (float32, PyTorch's key names, attn.bias buffers included)
  nanogpt.json         the tokens, the recorded get_batch draws, and the runs (iterations 0..max_iters,
                       30 optimizer steps): every micro-step loss and every estimate_loss, in float32
                       and under torch.autocast('cpu', bfloat16),
                       the greedy (top_k=1) continuation after the float32 run, and structure facts.

Run from the repository root: python3 test/ports/reference/nanogpt.py
"""
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

from fixture_io import write_json, write_state_dict

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures')


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.register_buffer('bias', torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 65
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for p in param_dict.values() if p.dim() >= 2]
        nodecay_params = [p for p in param_dict.values() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0},
        ]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# The opening of Coriolanus (public domain), in the 65-character vocabulary of nanoGPT's shakespeare_char.
TEXT = """First Citizen:
Before we proceed any further, hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved rather to die than to famish?

All:
Resolved. resolved.

First Citizen:
First, you know Caius Marcius is chief enemy to the people.

All:
We know't, we know't.

First Citizen:
Let us kill him, and we'll have corn at our own price.
Is't a verdict?

All:
No more talking on't; let it be done: away, away!

Second Citizen:
One word, good citizens.

First Citizen:
We are accounted poor citizens, the patricians good.
What authority surfeits on would relieve us: if they
would yield us but the superfluity, while it were
wholesome, we might guess they relieved us humanely;
but they think we are too dear: the leanness that
afflicts us, the object of our misery, is as an
inventory to particularise their abundance; our
sufferance is a gain to them Let us revenge this with
our pikes, ere we become rakes: for the gods know I
speak this in hunger for bread, not in thirst for revenge.
"""
VOCAB = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# train.py's settings, scaled down (shakespeare_char's learning rate, betas and decay).
TRAIN = dict(
    batch_size=8, gradient_accumulation_steps=2, max_iters=29, eval_interval=10, eval_iters=2,
    learning_rate=1e-3, weight_decay=1e-1, beta1=0.9, beta2=0.99, grad_clip=1.0,
    warmup_iters=5, lr_decay_iters=30, min_lr=1e-4, seed=1337, batch_seed=2024,
)


def get_lr(it, c):
    if it < c['warmup_iters']:
        return c['learning_rate'] * (it + 1) / (c['warmup_iters'] + 1)
    if it > c['lr_decay_iters']:
        return c['min_lr']
    decay_ratio = (it - c['warmup_iters']) / (c['lr_decay_iters'] - c['warmup_iters'])
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return c['min_lr'] + coeff * (c['learning_rate'] - c['min_lr'])


def train(model, data, c, ctx):
    """train.py's loop; returns every micro-step loss, the estimate_loss records and the get_batch draws."""
    block_size = model.config.block_size
    batches = torch.Generator().manual_seed(c['batch_seed'])
    draws = []

    def get_batch(split):
        d = data[split]
        ix = torch.randint(len(d) - block_size, (c['batch_size'],), generator=batches)
        draws.append(ix.tolist())
        x = torch.stack([d[i:i + block_size] for i in ix])
        y = torch.stack([d[i + 1:i + 1 + block_size] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(c['eval_iters'])
            for k in range(c['eval_iters']):
                X, Y = get_batch(split)
                with ctx():
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    optimizer = model.configure_optimizers(c['weight_decay'], c['learning_rate'], (c['beta1'], c['beta2']))
    scaler = torch.cuda.amp.GradScaler(enabled=False)  # train.py enables it for float16 only
    micro_losses, evals = [], []
    X, Y = get_batch('train')
    iter_num = 0
    while True:
        lr = get_lr(iter_num, c)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        if iter_num % c['eval_interval'] == 0:
            evals.append({'iter': iter_num, **estimate_loss()})
        for micro_step in range(c['gradient_accumulation_steps']):
            with ctx():
                logits, loss = model(X, Y)
                loss = loss / c['gradient_accumulation_steps']
            micro_losses.append(loss.item() * c['gradient_accumulation_steps'])
            X, Y = get_batch('train')
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), c['grad_clip'])
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        iter_num += 1
        if iter_num > c['max_iters']:
            break
    return micro_losses, evals, draws


def fp32():
    return torch.autocast('cpu', enabled=False)


def bf16():
    return torch.autocast('cpu', dtype=torch.bfloat16)


def main():
    torch.manual_seed(TRAIN['seed'])
    config = GPTConfig()
    model = GPT(config)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}
    write_state_dict(os.path.join(FIXTURES, 'nanogpt.safetensors'), init_state)

    tokens = torch.tensor([VOCAB.index(ch) for ch in TEXT], dtype=torch.long)
    n = int(0.9 * len(tokens))
    data = {'train': tokens[:n], 'val': tokens[n:]}

    losses32, evals32, draws = train(model, data, TRAIN, fp32)
    prompt = torch.tensor([[VOCAB.index('\n')]], dtype=torch.long)
    model.eval()
    greedy = model.generate(prompt, 24, top_k=1)[0].tolist()

    model16 = GPT(config)
    model16.load_state_dict(init_state)
    losses16, evals16, draws16 = train(model16, data, TRAIN, bf16)
    assert draws16 == draws

    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    no_bias = GPT(GPTConfig(bias=False))
    write_json(os.path.join(FIXTURES, 'nanogpt.json'), {
        'torch': torch.__version__,
        'config': {k: getattr(config, k) for k in ['block_size', 'vocab_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias']},
        'train': TRAIN,
        'vocab': VOCAB,
        'tokens': tokens.tolist(),
        'draws': draws,
        'lrs': [get_lr(it, TRAIN) for it in range(TRAIN['max_iters'] + 1)],
        'fp32': {'losses': losses32, 'evals': evals32},
        'bf16': {'losses': losses16, 'evals': evals16},
        'greedy': greedy,
        'num_params': model.get_num_params(),
        'groups': [{'tensors': len(g['params']), 'numel': sum(p.numel() for p in g['params']), 'weight_decay': g['weight_decay']}
                   for g in optimizer.param_groups],
        'no_bias_state': {k: list(v.shape) for k, v in no_bias.state_dict().items()},
    })


if __name__ == '__main__':
    main()
