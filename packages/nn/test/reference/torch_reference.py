# Reference values for @core/nn's tests, computed with PyTorch 1.13 in float64:
#   python3 torch_reference.py > torch-1.13.json
# Each entry holds an op's outputs (y) and the gradients of sum(w·y) for the upstream gradient
# given next to the call (ones unless stated), flattened row-major. The tests read the JSON only.
import json
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings('ignore')
D = torch.float64


def L(t):
    return [float('%.17g' % v) for v in t.detach().reshape(-1).tolist()]


out = {}
# ---- act ----
X1 = [[-3.5, -3, -1.2, -0.3, 0], [0.4, 1.7, 3, 3.2, 25]]
def case(name, fn, xs=X1):
    x = torch.tensor(xs, dtype=D, requires_grad=True)
    y = fn(x)
    y.backward(torch.ones_like(y))
    out[name] = {'y': L(y), 'g': L(x.grad)}
case('elu', lambda x: F.elu(x))
case('elu0.5', lambda x: F.elu(x, 0.5))
case('selu', lambda x: F.selu(x))
case('softplus', lambda x: F.softplus(x))
case('softplus2,5', lambda x: F.softplus(x, 2, 5))
case('mish', lambda x: F.mish(x))
case('hardswish', lambda x: F.hardswish(x))
case('hardsigmoid', lambda x: F.hardsigmoid(x))
case('softsign', lambda x: F.softsign(x))
case('glu0', lambda x: F.glu(x, 0))
X3 = [[[-1.5, 2.0], [0.0, -0.5], [3.0, -2.0]], [[0.7, -0.1], [-4.0, 1.0], [0.0, 0.2]]]
x = torch.tensor(X3, dtype=D, requires_grad=True); w = torch.tensor([0.25, -0.5, 2.0], dtype=D, requires_grad=True)
y = F.prelu(x, w); y.backward(torch.ones_like(y)); out['prelu3'] = {'y': L(y), 'g': L(x.grad), 'gw': L(w.grad)}
x = torch.tensor(X3, dtype=D, requires_grad=True); w = torch.tensor([0.25], dtype=D, requires_grad=True)
y = F.prelu(x, w); y.backward(torch.ones_like(y)); out['prelu1'] = {'y': L(y), 'g': L(x.grad), 'gw': L(w.grad)}

# ---- loss ----
I = [[0.5, -1.2, 2.0], [0.3, 0.9, -0.4]]
T = [[0.1, -1.0, 0.2], [1.5, 0.9, -2.9]]
def pair(name, fn, a=I, b=T):
    x = torch.tensor(a, dtype=D, requires_grad=True); t = torch.tensor(b, dtype=D, requires_grad=True)
    y = fn(x, t); y.backward(torch.ones_like(y))
    out[name] = {'y': L(y), 'gx': L(x.grad), 'gt': L(t.grad)}
for red in ['mean', 'sum', 'none']:
    pair('l1-'+red, lambda x, t: F.l1_loss(x, t, reduction=red))
    pair('smoothl1-'+red, lambda x, t: F.smooth_l1_loss(x, t, reduction=red))
    pair('huber-'+red, lambda x, t: F.huber_loss(x, t, reduction=red))
pair('smoothl1-beta0.5', lambda x, t: F.smooth_l1_loss(x, t, beta=0.5, reduction='none'))
pair('smoothl1-beta0', lambda x, t: F.smooth_l1_loss(x, t, beta=0.0, reduction='none'))
pair('huber-delta0.5', lambda x, t: F.huber_loss(x, t, delta=0.5, reduction='none'))
LP = torch.log_softmax(torch.tensor(I, dtype=D), 1).tolist()
P = [[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]]
for red in ['mean', 'sum', 'none', 'batchmean']:
    x = torch.tensor(LP, dtype=D, requires_grad=True); t = torch.tensor(P, dtype=D)
    y = F.kl_div(x, t, reduction=red); y.backward(torch.ones_like(y))
    out['kl-'+red] = {'y': L(y), 'gx': L(x.grad)}
LT = torch.log(torch.tensor([[0.2, 0.05, 0.75], [0.5, 0.25, 0.25]], dtype=D)).tolist()
pair('kl-logtarget', lambda x, t: F.kl_div(x, t, reduction='batchmean', log_target=True), LP, LT)
out['LP'] = LP; out['LT'] = LT
A = [[0.5, -1.0, 2.0, 0.3], [1.0, 1.0, -0.5, 0.2], [-0.7, 0.4, 0.1, 0.9]]
B = [[0.4, -0.8, 1.5, 1.0], [-1.0, 0.5, 0.5, 0.0], [0.6, -0.4, 0.3, 0.8]]
Y = [1.0, -1.0, -1.0]
for red in ['none', 'mean', 'sum']:
    x = torch.tensor(A, dtype=D, requires_grad=True); z = torch.tensor(B, dtype=D, requires_grad=True)
    y = F.cosine_embedding_loss(x, z, torch.tensor(Y, dtype=D), margin=0.1, reduction=red); y.backward(torch.ones_like(y))
    out['cosemb-'+red] = {'y': L(y), 'g1': L(x.grad), 'g2': L(z.grad)}
x = torch.tensor(A[0], dtype=D, requires_grad=True); z = torch.tensor(B[0], dtype=D)
y = F.cosine_embedding_loss(x, z, torch.tensor(-1.0, dtype=D), margin=-0.5); y.backward(); out['cosemb-1d'] = {'y': L(y), 'g1': L(x.grad)}
R1 = [0.5, -0.3, 1.2, 0.0]; R2 = [0.1, 0.4, 1.0, 0.05]; YR = [1.0, -1.0, -1.0, 1.0]
for red in ['none', 'mean']:
    x = torch.tensor(R1, dtype=D, requires_grad=True); z = torch.tensor(R2, dtype=D, requires_grad=True)
    y = F.margin_ranking_loss(x, z, torch.tensor(YR, dtype=D), margin=0.2, reduction=red); y.backward(torch.ones_like(y))
    out['rank-'+red] = {'y': L(y), 'g1': L(x.grad), 'g2': L(z.grad)}
# cosine similarity
x = torch.tensor(A, dtype=D, requires_grad=True); z = torch.tensor(B, dtype=D, requires_grad=True)
y = F.cosine_similarity(x, z); y.backward(torch.ones_like(y)); out['cos'] = {'y': L(y), 'g1': L(x.grad), 'g2': L(z.grad)}
x = torch.tensor([[A[0]], [A[1]]], dtype=D, requires_grad=True); z = torch.tensor(B, dtype=D, requires_grad=True)
y = F.cosine_similarity(x, z, dim=-1); y.backward(torch.ones_like(y)); out['cos-bcast'] = {'y': L(y), 'g1': L(x.grad), 'g2': L(z.grad), 'shape': list(y.shape)}
x = torch.tensor([[1e-10, 0.0], [0.0, 0.0], [1.0, 2.0]], dtype=D, requires_grad=True); z = torch.tensor([[1.0, 1.0], [1.0, 0.0], [3.0, -1.0]], dtype=D, requires_grad=True)
y = F.cosine_similarity(x, z, 1, 1e-8); y.backward(torch.ones_like(y)); out['cos-eps'] = {'y': L(y), 'g1': L(x.grad), 'g2': L(z.grad)}
# normalize
for (p, dim) in [(2, 1), (1, 0), (float('inf'), 1), (3, 1), (0.5, 1)]:
    x = torch.tensor(A, dtype=D, requires_grad=True)
    y = F.normalize(x, p, dim); y.backward(torch.tensor(B, dtype=D)); out['normalize-%s-%d' % (p, dim)] = {'y': L(y), 'g': L(x.grad)}
x = torch.tensor([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]], dtype=D, requires_grad=True)
y = F.normalize(x); y.backward(torch.ones_like(y)); out['normalize-zero'] = {'y': L(y), 'g': L(x.grad)}

# ---- norm ----
g = torch.Generator().manual_seed(0)
X = (torch.rand(2, 6, 3, generator=g, dtype=D) * 4 - 2)
X = torch.round(X * 100) / 100
out['X'] = X.tolist()
W = torch.tensor([0.5, 1.5, -1.0, 2.0, 0.25, 1.0], dtype=D); Bn = torch.tensor([0.1, -0.2, 0.3, 0.0, 0.5, -1.0], dtype=D)
G = torch.round(torch.rand(2, 6, 3, generator=g, dtype=D) * 200 - 100) / 100
out['G'] = G.tolist()
x = X.clone().requires_grad_(); w = W.clone().requires_grad_(); b = Bn.clone().requires_grad_()
y = F.group_norm(x, 3, w, b, 1e-5); y.backward(G); out['gn'] = {'y': L(y), 'gx': L(x.grad), 'gw': L(w.grad), 'gb': L(b.grad)}
x = X.clone().requires_grad_()
y = F.group_norm(x, 2); y.backward(G); out['gn2-noaffine'] = {'y': L(y), 'gx': L(x.grad)}
# instance norm with running stats
x = X.clone().requires_grad_(); w = W.clone().requires_grad_(); b = Bn.clone().requires_grad_()
rm = torch.tensor([0.1, 0.2, 0.0, -0.1, 0.3, 0.0], dtype=D); rv = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5, 1.0], dtype=D)
y = F.instance_norm(x, rm, rv, w, b, True, 0.2, 1e-5); y.backward(G)
out['in'] = {'y': L(y), 'gx': L(x.grad), 'gw': L(w.grad), 'gb': L(b.grad), 'rm': L(rm), 'rv': L(rv)}
rm2 = torch.tensor([0.1, 0.2, 0.0, -0.1, 0.3, 0.0], dtype=D); rv2 = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5, 1.0], dtype=D)
x = X.clone().requires_grad_()
y = F.instance_norm(x, rm2, rv2, None, None, False, 0.2, 1e-5); y.backward(G)
out['in-eval'] = {'y': L(y), 'gx': L(x.grad)}
# module InstanceNorm2d
m = torch.nn.InstanceNorm2d(6, affine=True, track_running_stats=True).double()
x4 = X.reshape(2, 6, 3, 1).repeat(1, 1, 1, 2)
y = m(x4); out['in2d-train'] = {'y': L(y), 'rm': L(m.running_mean), 'rv': L(m.running_var), 'nbt': int(m.num_batches_tracked)}
m.eval(); y = m(x4 * 2); out['in2d-eval'] = {'y': L(y)}

# ---- emb ----
W0 = [[3.0, 4.0], [0.3, 0.4], [-1.0, 2.0], [0.0, 0.0], [6.0, -8.0]]
out['W0'] = W0
idx = torch.tensor([[0, 2], [2, 1]])
w = torch.tensor(W0, dtype=D)
y = F.embedding(idx, w, max_norm=2.0); out['maxnorm'] = {'y': L(y), 'w': L(w)}
w = torch.tensor(W0, dtype=D)
y = F.embedding(idx, w, max_norm=1.5, norm_type=1); out['maxnorm-p1'] = {'y': L(y), 'w': L(w)}
w = torch.tensor(W0, dtype=D, requires_grad=True)
y = F.embedding(torch.tensor([0, 2, 2, 1, 2, 4]), w, scale_grad_by_freq=True); y.backward(torch.ones_like(y)); out['freq'] = {'g': L(w.grad)}
w = torch.tensor(W0, dtype=D, requires_grad=True)
y = F.embedding(torch.tensor([0, 2, 2, 1, 3]), w, padding_idx=2, scale_grad_by_freq=True); y.backward(torch.ones_like(y) * 2); out['freq-pad'] = {'g': L(w.grad)}
# embedding bag
inp = torch.tensor([0, 2, 2, 1, 4, 3, 1])
offs = torch.tensor([0, 3, 3, 5])
for mode in ['sum', 'mean', 'max']:
    w = torch.tensor(W0, dtype=D, requires_grad=True)
    y = F.embedding_bag(inp, w, offs, mode=mode); y.backward(torch.tensor([[1.0, 2.0], [0.5, -1], [3, 3], [1, 1]], dtype=D))
    out['bag-' + mode] = {'y': L(y), 'g': L(w.grad)}
w = torch.tensor(W0, dtype=D, requires_grad=True)
psw = torch.tensor([0.5, 1, 2, -1, 0.25, 3, 1], dtype=D, requires_grad=True)
y = F.embedding_bag(inp, w, offs, mode='sum', per_sample_weights=psw); y.backward(torch.ones_like(y))
out['bag-psw'] = {'y': L(y), 'g': L(w.grad), 'gp': L(psw.grad)}
for mode in ['mean', 'max']:
    w = torch.tensor(W0, dtype=D, requires_grad=True)
    y = F.embedding_bag(inp, w, offs, mode=mode, padding_idx=2); y.backward(torch.ones_like(y))
    out['bag-pad-' + mode] = {'y': L(y), 'g': L(w.grad)}
w = torch.tensor(W0, dtype=D)
y = F.embedding_bag(torch.tensor([[0, 2, 4], [1, 1, 3]]), w, mode='mean'); out['bag-2d'] = {'y': L(y)}
y = F.embedding_bag(inp, w, torch.tensor([0, 3, 3, 5, 7]), mode='sum', include_last_offset=True); out['bag-last'] = {'y': L(y)}
# clip grad norm
def clip(nt, maxn):
    a = torch.nn.Parameter(torch.zeros(2, 2, dtype=D)); b = torch.nn.Parameter(torch.zeros(3, dtype=D)); c = torch.nn.Parameter(torch.zeros(1, dtype=D))
    a.grad = torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=D); b.grad = torch.tensor([-4.0, 0.25, 1.0], dtype=D)
    t = torch.nn.utils.clip_grad_norm_([a, b, c], maxn, nt)
    return {'total': float(t), 'a': L(a.grad), 'b': L(b.grad)}
for nt, mx in [(2, 1.0), (1, 5.0), (float('inf'), 2.0), (3, 100.0), (0.5, 10.0)]:
    out['clip-%s-%s' % (nt, mx)] = clip(nt, mx)

out['inputs'] = {'X1': X1, 'X3': X3, 'I': I, 'T': T, 'P': P, 'A': A, 'B': B, 'Y': Y, 'R1': R1, 'R2': R2, 'YR': YR, 'W': W.tolist(), 'Bn': Bn.tolist()}
print('{\n' + ',\n'.join(json.dumps(k) + ': ' + json.dumps(v) for k, v in out.items()) + '\n}')
