# The reference numbers of test/model.test.ts, from PyTorch 1.13 (float32, cpu): nanoGPT's GPT
# forward pass, loss and gradients for a tiny model whose every parameter is set by fill() below.
# PyTorch 1.13 has no F.scaled_dot_product_attention, so attention is written as its math:
# softmax(q·kᵀ/√d + causal mask)·v. Run: python3 gpt_reference.py
import math
import torch
import torch.nn.functional as F

V, T, L, H, C = 7, 5, 2, 2, 8  # vocab, block size, layers, heads, width (bias on, dropout 0)


def fill(name, shape):
    # Every parameter: 0.3·sin(0.37·k + h), k the flat index, h the sum of the name's char codes mod 97.
    h = sum(ord(c) for c in name) % 97
    n = math.prod(shape)
    return (0.3 * torch.sin(0.37 * torch.arange(n, dtype=torch.float64) + h)).float().reshape(shape).requires_grad_()


P = {'wte.weight': fill('wte.weight', (V, C)), 'wpe.weight': fill('wpe.weight', (T, C))}
for i in range(L):
    for name, shape in [('ln1.weight', (C,)), ('ln1.bias', (C,)), ('attn.cAttn.weight', (3 * C, C)), ('attn.cAttn.bias', (3 * C,)),
                        ('attn.cProj.weight', (C, C)), ('attn.cProj.bias', (C,)), ('ln2.weight', (C,)), ('ln2.bias', (C,)),
                        ('mlp.cFc.weight', (4 * C, C)), ('mlp.cFc.bias', (4 * C,)), ('mlp.cProj.weight', (C, 4 * C)), ('mlp.cProj.bias', (C,))]:
        P[f'h.{i}.{name}'] = fill(f'h.{i}.{name}', shape)
P['lnF.weight'] = fill('lnF.weight', (C,))
P['lnF.bias'] = fill('lnF.bias', (C,))

idx = torch.tensor([[0, 3, 6, 2, 1], [5, 5, 4, 0, 2]])
targets = torch.tensor([[3, 6, 2, 1, 4], [5, 4, 0, 2, 6]])


def ln(x, p):
    return F.layer_norm(x, (C,), P[p + '.weight'], P[p + '.bias'])


x = P['wte.weight'][idx] + P['wpe.weight'][torch.arange(T)]
mask = torch.ones(T, T).tril().bool()
for i in range(L):
    p = f'h.{i}.'
    q, k, v = F.linear(ln(x, p + 'ln1'), P[p + 'attn.cAttn.weight'], P[p + 'attn.cAttn.bias']).split(C, dim=2)
    q, k, v = (t.view(2, T, H, C // H).transpose(1, 2) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1) / math.sqrt(C // H)).masked_fill(~mask, float('-inf')).softmax(-1)
    y = (att @ v).transpose(1, 2).contiguous().view(2, T, C)
    x = x + F.linear(y, P[p + 'attn.cProj.weight'], P[p + 'attn.cProj.bias'])
    hidden = F.gelu(F.linear(ln(x, p + 'ln2'), P[p + 'mlp.cFc.weight'], P[p + 'mlp.cFc.bias']))
    x = x + F.linear(hidden, P[p + 'mlp.cProj.weight'], P[p + 'mlp.cProj.bias'])
logits = F.linear(ln(x, 'lnF'), P['wte.weight'])  # the head shares the token embedding
loss = F.cross_entropy(logits.view(-1, V), targets.view(-1))
loss.backward()
print('loss', repr(loss.item()))
print('logits[1, 4]', [round(v, 6) for v in logits[1, 4].tolist()])
for name in ['wte.weight', 'wpe.weight', 'h.0.attn.cAttn.weight', 'h.1.mlp.cProj.bias', 'lnF.weight']:
    print(name, 'grad norm', repr(P[name].grad.norm().item()))
