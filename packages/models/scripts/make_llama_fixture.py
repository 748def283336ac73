"""Writes the Llama-style decoder's parity fixtures: test/fixtures/llama-tiny (grouped-query
attention, untied head) and test/fixtures/llama-tiny-tied (one key/value head per query head, head
tied to the embeddings, head_dim given apart from hidden_size / heads).

The model is Hugging Face's LlamaForCausalLM math written in plain torch 1.13 under its exact
parameter names: RMSNorm computed in float32 and cast back before the weight, rotary embeddings
with rotate_half over [freqs, freqs], repeat_kv for grouped-query attention, eager causal softmax
attention in float32, a SwiGLU MLP. Each folder gets config.json, model.safetensors and
expected.safetensors:
  input_ids, logits            fp32 logits of a [2, 7] batch
  logits_f64                   the same computed in float64: how far PyTorch's own fp32 is from exact
  logits_autocast_bf16         the same under torch.autocast('cpu', torch.bfloat16)
  logits_bf16                  the same with the whole model in bfloat16
  prompt, greedy               a [1, 5] prompt and its greedy continuation by 32 tokens ([1, 37])
  grad.<name>                  gradients of next-token cross entropy on input_ids (llama-tiny only)
  adamw.<name>                 some weights after one AdamW step (lr 1e-2) on those gradients (llama-tiny only)

Run from packages/models: python3 scripts/make_llama_fixture.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from write_safetensors import write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))


class RMSNorm(torch.nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float64 if dtype == torch.float64 else torch.float32)  # float64 only for the exact reference
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c['num_attention_heads'], c['num_key_value_heads'], c['head_dim']
        bias = c['attention_bias']
        self.q_proj = torch.nn.Linear(c['hidden_size'], self.heads * self.head_dim, bias=bias)
        self.k_proj = torch.nn.Linear(c['hidden_size'], self.kv_heads * self.head_dim, bias=bias)
        self.v_proj = torch.nn.Linear(c['hidden_size'], self.kv_heads * self.head_dim, bias=bias)
        self.o_proj = torch.nn.Linear(self.heads * self.head_dim, c['hidden_size'], bias=bias)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        groups = self.heads // self.kv_heads  # HF's repeat_kv: each key/value head serves `groups` query heads in a row
        k = k[:, :, None].expand(b, self.kv_heads, groups, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, groups, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim)
        causal = torch.full((t, t), torch.finfo(scores.dtype).min, dtype=scores.dtype).triu(1)
        weights = torch.softmax(scores + causal, dim=-1, dtype=torch.float32).to(q.dtype)
        out = (weights @ v).transpose(1, 2).reshape(b, t, self.heads * self.head_dim)
        return self.o_proj(out)


class MLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i, bias = c['hidden_size'], c['intermediate_size'], c['mlp_bias']
        self.gate_proj = torch.nn.Linear(h, i, bias=bias)
        self.up_proj = torch.nn.Linear(h, i, bias=bias)
        self.down_proj = torch.nn.Linear(i, h, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c['hidden_size'], c['rms_norm_eps'])
        self.post_attention_layernorm = RMSNorm(c['hidden_size'], c['rms_norm_eps'])

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = torch.nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.layers = torch.nn.ModuleList([Layer(c) for _ in range(c['num_hidden_layers'])])
        self.norm = RMSNorm(c['hidden_size'], c['rms_norm_eps'])

    def forward(self, ids):
        x = self.embed_tokens(ids)
        d = self.c['head_dim']
        inv_freq = 1.0 / (self.c['rope_theta'] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        freqs = torch.arange(ids.shape[1]).float()[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


class ForCausalLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = Model(c)
        self.lm_head = torch.nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        if c['tie_word_embeddings']:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, ids):
        return self.lm_head(self.model(ids))


def randomize(model, embed_std):
    """Weights large enough that logits spread out (greedy argmax far from ties) yet of size ~10 at
    most, so that 1e-5 is a few float32 roundings of them; norms not all ones."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith('norm.weight'):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith('bias'):
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) * (embed_std if 'embed' in name else 2.0 / math.sqrt(p.shape[-1])))


def greedy(model, prompt, steps):
    ids = prompt
    smallest_gap = math.inf
    for _ in range(steps):
        last = model(ids)[:, -1]
        top = last.topk(2, dim=-1).values
        smallest_gap = min(smallest_gap, (top[:, 0] - top[:, 1]).min().item())
        ids = torch.cat([ids, last.argmax(-1, keepdim=True)], dim=1)
    return ids, smallest_gap


def make(name, config, seed, train):
    torch.manual_seed(seed)
    c = dict(config)
    c.setdefault('head_dim', c['hidden_size'] // c['num_attention_heads'])
    model = ForCausalLM(c)
    randomize(model, 0.35 if c['tie_word_embeddings'] else 1.0)  # a tied head's logits scale with the embeddings
    model.eval()
    out = os.path.join(HERE, '..', 'test', 'fixtures', name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(config, f, indent=2)
        f.write('\n')
    # HF leaves a tied lm_head.weight out of the file.
    weights = {k: v.clone() for k, v in model.state_dict().items() if not (c['tie_word_embeddings'] and k == 'lm_head.weight')}
    write_safetensors(os.path.join(out, 'model.safetensors'), weights, {'format': 'pt'})

    ids = torch.randint(0, c['vocab_size'], (2, 7))
    prompt = torch.randint(0, c['vocab_size'], (1, 5))
    expected = {'input_ids': ids.int(), 'prompt': prompt.int()}
    with torch.no_grad():
        expected['logits'] = model(ids)
        exact = ForCausalLM(c)
        exact.load_state_dict(model.state_dict())
        expected['logits_f64'] = exact.double().eval()(ids)
        with torch.autocast('cpu', dtype=torch.bfloat16):
            expected['logits_autocast_bf16'] = model(ids).float()
        generated, gap = greedy(model, prompt, 32)
        assert gap > 1e-3, f'{name}: greedy top-2 gap {gap} is too small to compare argmax across implementations'
        expected['greedy'] = generated.int()
        bf16 = ForCausalLM(c)
        bf16.load_state_dict(weights, strict=not c['tie_word_embeddings'])
        expected['logits_bf16'] = bf16.to(torch.bfloat16).eval()(ids).float()
    if train:
        model.train()
        logits = model(ids)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, c['vocab_size']), ids[:, 1:].reshape(-1))
        loss.backward()
        expected['loss'] = loss.detach().reshape(1)
        for k, p in model.named_parameters():
            expected['grad.' + k] = p.grad.clone()
        torch.optim.AdamW(model.parameters(), lr=1e-2).step()
        for k in ['model.embed_tokens.weight', 'model.layers.1.self_attn.k_proj.weight', 'model.layers.1.mlp.down_proj.weight',
                  'model.layers.0.input_layernorm.weight', 'model.norm.weight', 'lm_head.weight']:
            expected['adamw.' + k] = dict(model.named_parameters())[k].detach().clone()
    write_safetensors(os.path.join(out, 'expected.safetensors'), expected)


BASE = {
    'architectures': ['LlamaForCausalLM'],
    'model_type': 'llama',
    'vocab_size': 96,
    'hidden_size': 32,
    'intermediate_size': 64,
    'num_hidden_layers': 2,
    'num_attention_heads': 4,
    'num_key_value_heads': 2,
    'hidden_act': 'silu',
    'max_position_embeddings': 128,
    'rms_norm_eps': 1e-6,
    'rope_theta': 10000.0,
    'tie_word_embeddings': False,
    'attention_bias': False,
    'mlp_bias': False,
    'attention_dropout': 0.0,
    'bos_token_id': 1,
    'eos_token_id': 2,
    'torch_dtype': 'float32',
}

if __name__ == '__main__':
    make('llama-tiny', BASE, 0, train=True)
    make('llama-tiny-tied', {**BASE, 'num_key_value_heads': 4, 'head_dim': 16, 'tie_word_embeddings': True,
                             'attention_bias': True, 'rope_theta': 500000.0}, 1, train=False)
