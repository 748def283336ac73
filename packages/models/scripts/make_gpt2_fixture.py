"""Writes the tiny GPT-2 parity fixtures of @core/models' tests (plain torch 1.13, no transformers).

    python3 packages/models/scripts/make_gpt2_fixture.py

A GPT-2 with Hugging Face's exact parameter names and math (Conv1D weights stored [in, out],
gelu_new, LayerNorm, scaled attention under a causal mask, lm_head tied to wte), random weights
from a fixed seed, written to test/fixtures:

  gpt2-tiny/config.json            Hugging Face's config.json keys
  gpt2-tiny/model.safetensors      the state dict as GPT2LMHeadModel.state_dict() names it
  gpt2-tiny/expected.json          inputs, greedy continuation, optimiser settings, loss
  gpt2-tiny/expected.safetensors   logits, bf16-autocast logits, gradients, weights after AdamW
  gpt2-tiny-hub/config.json        the same config
  gpt2-tiny-hub/model.safetensors  the same weights as the Hub's GPT-2 files hold them: no
                                   'transformer.' prefix, no lm_head, attn.bias / attn.masked_bias

References are computed in float64 (the tests run float32) except the bf16 drift, which is
PyTorch's own float32 vs bf16-autocast difference on CPU.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from write_safetensors import write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'test', 'fixtures')

CONFIG = {
    'architectures': ['GPT2LMHeadModel'],
    'model_type': 'gpt2',
    'vocab_size': 64,
    'n_positions': 48,
    'n_embd': 16,
    'n_layer': 2,
    'n_head': 2,
    'n_inner': None,
    'layer_norm_epsilon': 1e-5,
    'activation_function': 'gelu_new',
    'resid_pdrop': 0.1,
    'embd_pdrop': 0.1,
    'attn_pdrop': 0.1,
    'bos_token_id': 0,
    'eos_token_id': 0,
}
# eps 1e-4 rather than AdamW's 1e-8: the first step moves each weight by lr·g/(|g| + eps), and the
# key bias's gradient is zero up to rounding (softmax ignores a shift shared by all keys), about
# 1e-8 in float32; with a tiny eps that rounding noise would decide its step (as it does between
# PyTorch's own float32 and float64 runs).
ADAMW = {'lr': 1e-3, 'betas': [0.9, 0.999], 'eps': 1e-4, 'weightDecay': 0.01}
NEW_TOKENS = 32


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def conv1d(x, w, b):
    # Hugging Face's Conv1D: weight [in, out], addmm over the flattened leading dims.
    return torch.addmm(b, x.reshape(-1, x.shape[-1]), w).reshape(*x.shape[:-1], w.shape[1])


def forward(p, ids):
    """GPT2LMHeadModel's forward in eval mode (no dropout): logits [B, T, V]."""
    c = CONFIG
    B, T = ids.shape
    nh, d = c['n_head'], c['n_embd']
    hd = d // nh
    eps = c['layer_norm_epsilon']
    h = p['transformer.wte.weight'][ids] + p['transformer.wpe.weight'][torch.arange(T)]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(c['n_layer']):
        pre = f'transformer.h.{i}.'
        x = F.layer_norm(h, (d,), p[pre + 'ln_1.weight'], p[pre + 'ln_1.bias'], eps)
        qkv = conv1d(x, p[pre + 'attn.c_attn.weight'], p[pre + 'attn.c_attn.bias'])
        q, k, v = (t.reshape(B, T, nh, hd).permute(0, 2, 1, 3) for t in qkv.split(d, dim=2))
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], hd ** 0.5, dtype=w.dtype)
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = F.softmax(w, dim=-1).type(v.dtype)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).reshape(B, T, d)
        h = h + conv1d(a, p[pre + 'attn.c_proj.weight'], p[pre + 'attn.c_proj.bias'])
        x = F.layer_norm(h, (d,), p[pre + 'ln_2.weight'], p[pre + 'ln_2.bias'], eps)
        m = gelu_new(conv1d(x, p[pre + 'mlp.c_fc.weight'], p[pre + 'mlp.c_fc.bias']))
        h = h + conv1d(m, p[pre + 'mlp.c_proj.weight'], p[pre + 'mlp.c_proj.bias'])
    h = F.layer_norm(h, (d,), p['transformer.ln_f.weight'], p['transformer.ln_f.bias'], eps)
    return torch.matmul(h, p['lm_head.weight'].t())


def random_parameters(gen):
    """The state dict's tensors in GPT2LMHeadModel.state_dict() order (float64); lm_head is wte."""
    c = CONFIG
    d, v, n = c['n_embd'], c['vocab_size'], c['n_positions']
    inner = c['n_inner'] or 4 * d

    def normal(*shape, std=0.2, mean=0.0):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * std + mean

    p = {'transformer.wte.weight': normal(v, d, std=0.3), 'transformer.wpe.weight': normal(n, d, std=0.1)}
    for i in range(c['n_layer']):
        pre = f'transformer.h.{i}.'
        p[pre + 'ln_1.weight'] = normal(d, std=0.1, mean=1.0)
        p[pre + 'ln_1.bias'] = normal(d, std=0.1)
        p[pre + 'attn.c_attn.weight'] = normal(d, 3 * d, std=0.4)
        p[pre + 'attn.c_attn.bias'] = normal(3 * d, std=0.1)
        p[pre + 'attn.c_proj.weight'] = normal(d, d)
        p[pre + 'attn.c_proj.bias'] = normal(d, std=0.1)
        p[pre + 'ln_2.weight'] = normal(d, std=0.1, mean=1.0)
        p[pre + 'ln_2.bias'] = normal(d, std=0.1)
        p[pre + 'mlp.c_fc.weight'] = normal(d, inner)
        p[pre + 'mlp.c_fc.bias'] = normal(inner, std=0.1)
        p[pre + 'mlp.c_proj.weight'] = normal(inner, d)
        p[pre + 'mlp.c_proj.bias'] = normal(d, std=0.1)
    p['transformer.ln_f.weight'] = normal(d, std=0.1, mean=1.0)
    p['transformer.ln_f.bias'] = normal(d, std=0.1)
    return p


def with_head(p):
    """The state dict with lm_head.weight, the same tensor as wte (tied, as in PyTorch)."""
    return {**p, 'lm_head.weight': p['transformer.wte.weight']}


def greedy(p, prompt):
    """Greedy continuation of NEW_TOKENS tokens, no cache; asserts every argmax wins clearly."""
    ids = prompt.clone()
    gaps = []
    for _ in range(NEW_TOKENS):
        last = forward(p, ids)[:, -1, :]
        top = last.topk(2, dim=-1).values
        gaps.append((top[:, 0] - top[:, 1]).min().item())
        ids = torch.cat([ids, last.argmax(-1, keepdim=True)], dim=1)
    assert min(gaps) > 1e-3, f'an argmax is too close to call in float32: gap {min(gaps)}'
    return ids[:, prompt.shape[1]:]


def loss_of(logits, ids):
    """Next-token cross entropy: position t predicts token t + 1, mean over all predictions."""
    V = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))


def adamw_step(p, ids):
    """Gradients of the loss and the weights after one AdamW step (lm_head shares wte's tensor)."""
    leaves = {k: t.clone().requires_grad_(True) for k, t in p.items()}
    loss = loss_of(forward(with_head(leaves), ids), ids)
    loss.backward()
    grads = {k: t.grad.clone() for k, t in leaves.items()}
    opt = torch.optim.AdamW(leaves.values(), lr=ADAMW['lr'], betas=tuple(ADAMW['betas']), eps=ADAMW['eps'], weight_decay=ADAMW['weightDecay'])
    opt.step()
    return loss.item(), grads, {k: t.detach() for k, t in leaves.items()}


def write_json(path, value):
    with open(path, 'w') as f:
        json.dump(value, f, indent=2)
        f.write('\n')


def f32(tensors, prefix=''):
    return {prefix + k: t.detach().float() for k, t in tensors.items()}


def main():
    torch.set_num_threads(1)  # one summation order, so that a rerun writes the same bytes
    gen = torch.Generator().manual_seed(1234)
    p = random_parameters(gen)
    V = CONFIG['vocab_size']
    ids = torch.randint(1, V, (2, 10), generator=gen)
    prompt = torch.randint(1, V, (2, 8), generator=gen)

    logits = forward(with_head(p), ids)
    generated = greedy(with_head(p), prompt)
    loss, grads, stepped = adamw_step(p, ids)

    # PyTorch's own half-precision drift: float32 weights, float32 run vs CPU bf16 autocast run.
    p32 = with_head({k: t.float() for k, t in p.items()})
    with torch.no_grad():
        logits32 = forward(p32, ids)
        with torch.autocast('cpu', dtype=torch.bfloat16):
            logits_bf16 = forward(p32, ids).float()

    tiny = os.path.join(FIXTURES, 'gpt2-tiny')
    hub = os.path.join(FIXTURES, 'gpt2-tiny-hub')
    os.makedirs(tiny, exist_ok=True)
    os.makedirs(hub, exist_ok=True)
    write_json(os.path.join(tiny, 'config.json'), CONFIG)
    write_json(os.path.join(hub, 'config.json'), CONFIG)
    write_safetensors(os.path.join(tiny, 'model.safetensors'), f32(with_head(p)))
    P = CONFIG['n_positions']
    hub_weights = {k[len('transformer.'):]: t.float() for k, t in p.items()}
    for i in range(CONFIG['n_layer']):
        hub_weights[f'h.{i}.attn.bias'] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
        hub_weights[f'h.{i}.attn.masked_bias'] = torch.tensor(-1e4)
    write_safetensors(os.path.join(hub, 'model.safetensors'), hub_weights)
    write_json(os.path.join(tiny, 'expected.json'), {
        'inputIds': ids.tolist(),
        'prompt': prompt.tolist(),
        'generated': generated.tolist(),
        'adamw': ADAMW,
        'loss': loss,
    })
    write_safetensors(os.path.join(tiny, 'expected.safetensors'), {
        'logits': logits.float(),
        'logits_fp32_torch': logits32,
        'logits_bf16_torch': logits_bf16,
        **f32(grads, 'grad.'),
        **f32(stepped, 'adamw.'),
    })
    drift = (logits_bf16 - logits32).abs().max().item()
    print(f'loss {loss:.6f}; torch bf16 drift {drift:.4g}; generated {generated.tolist()}')


if __name__ == '__main__':
    main()
