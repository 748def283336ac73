# Reference values for hooks.test.ts and weight-norm.test.ts, computed with PyTorch 1.13 in float64:
#   python3 hooks_reference.py > hooks-1.13.json
# Inputs and parameters come from seq (test/sine-inputs.ts has the same formula), so the tests
# rebuild them instead of reading them. Values are flattened row-major.
import json
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm, weight_norm

warnings.filterwarnings('ignore')
D = torch.float64


def seq(shape, c, scale=1.0):  # scale·sin(0.37·i + c) over the flat index i
    return torch.tensor([scale * math.sin(0.37 * i + c) for i in range(math.prod(shape))], dtype=D).reshape(shape)


def L(t):
    return [float('%.17g' % v) for v in t.detach().reshape(-1).tolist()]


def linear(i, o):  # weight ← seq(shape, 0.5, 0.5), bias ← seq(shape, 1.5, 0.5)
    m = nn.Linear(i, o).double()
    with torch.no_grad():
        m.weight.copy_(seq(m.weight.shape, 0.5, 0.5))
        m.bias.copy_(seq(m.bias.shape, 1.5, 0.5))
    return m


def conv():  # Conv2d(2, 3, 2): the same filling
    m = nn.Conv2d(2, 3, 2).double()
    with torch.no_grad():
        m.weight.copy_(seq(m.weight.shape, 0.5, 0.5))
        m.bias.copy_(seq(m.bias.shape, 1.5, 0.5))
    return m


out = {}

# ---- module hooks on Linear(3, 2): x = seq([4, 3], 0.1), upstream gradient seq([4, 2], 2.0) ----
m = linear(3, 2)
seen = {}
m.register_full_backward_hook(lambda mod, gi, go: seen.update(gi=gi[0], go=go[0]))
x = seq([4, 3], 0.1).requires_grad_()
y = m(x)
y.backward(seq([4, 2], 2.0))
out['linear-backward-hook'] = {'y': L(y), 'gradInput': L(seen['gi']), 'gradOutput': L(seen['go']), 'xGrad': L(x.grad), 'weightGrad': L(m.weight.grad)}
m = linear(3, 2)
m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
m.register_forward_hook(lambda mod, args, y: y + 1)
out['linear-forward-hooks'] = {'y': L(m(seq([4, 3], 0.1)))}

# ---- weight_norm: g ← seq(g.shape, 3.0) after applying, upstream gradient seq(y.shape, 2.0) ----
def wn_case(name, m, x, dim):
    weight_norm(m, dim=dim)
    g0 = m.weight_g.detach().clone()
    with torch.no_grad():
        m.weight_g.copy_(seq(m.weight_g.shape, 3.0))
    y = m(x)
    y.backward(seq(y.shape, 2.0))
    out[name] = {'keys': list(m.state_dict().keys()), 'gShape': list(m.weight_g.shape), 'g0': L(g0), 'y': L(y),
                 'weight': L(m.weight), 'gGrad': L(m.weight_g.grad), 'vGrad': L(m.weight_v.grad), 'biasGrad': L(m.bias.grad)}
wn_case('wn-linear-dim0', linear(3, 4), seq([5, 3], 0.1), 0)
wn_case('wn-linear-dim1', linear(3, 4), seq([5, 3], 0.1), 1)
wn_case('wn-linear-dimNone', linear(3, 4), seq([5, 3], 0.1), None)
wn_case('wn-conv-dim0', conv(), seq([1, 2, 3, 3], 0.1), 0)

# ---- spectral_norm: u ← seq(u.shape, 0.2), v ← seq(v.shape, 0.7) after applying ----
def sn_case(name, m, x, n, dim):
    spectral_norm(m, n_power_iterations=n, dim=dim)
    with torch.no_grad():
        m.weight_u.copy_(seq(m.weight_u.shape, 0.2))
        m.weight_v.copy_(seq(m.weight_v.shape, 0.7))
    y = m(x)  # training: n power iterations update u and v in place
    y.backward(seq(y.shape, 2.0))
    entry = {'keys': list(m.state_dict().keys()), 'y': L(y), 'weight': L(m.weight), 'u': L(m.weight_u), 'v': L(m.weight_v),
             'origGrad': L(m.weight_orig.grad), 'biasGrad': L(m.bias.grad)}
    m.eval()
    with torch.no_grad():
        m.weight_u.copy_(seq(m.weight_u.shape, 0.2))
        m.weight_v.copy_(seq(m.weight_v.shape, 0.7))
    entry['yEval'] = L(m(x))  # eval: sigma from the given u and v, no iteration
    out[name] = entry
sn_case('sn-linear', linear(3, 4), seq([5, 3], 0.1), 1, None)
sn_case('sn-linear-3iter', linear(3, 4), seq([5, 3], 0.1), 3, None)
sn_case('sn-conv-dim1', conv(), seq([1, 2, 3, 3], 0.1), 1, 1)

print(json.dumps(out, indent=1))
