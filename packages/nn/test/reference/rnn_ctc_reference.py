# Reference values for rnn.test.ts, ctc.test.ts and one-hot.test.ts, computed with PyTorch 1.13 in
# float64:
#   python3 rnn_ctc_reference.py > rnn-ctc-1.13.json
# Inputs and parameters come from one formula, written again in the tests (sine-inputs.ts's `seq`):
# seq(shape, c, scale) = scale·sin(0.37·i + c) over the flat index i; state-dict entry j of a module
# is seq(shape, 0.5 + j, 0.5). Each recurrent case backpropagates
#   loss = Σ out·seq(out.shape, 2.0) + Σ h_n·seq(h_n.shape, 2.5) [+ Σ c_n·seq(c_n.shape, 3.0)]
# and records the outputs and the gradients of the input, the initial state and every parameter.
# Values are flattened row-major; NaN and ±Infinity are written as strings ('NaN', 'Infinity').
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

D = torch.float64


def seq(shape, c, scale=1.0):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(0.37 * i + c) for i in range(n)], dtype=D).reshape(shape)


def fill(module):
    with torch.no_grad():
        for j, (_, p) in enumerate(module.state_dict(keep_vars=True).items()):
            p.copy_(seq(p.shape, 0.5 + j, 0.5))


def flat(t):
    # JSON has no NaN or Infinity: those are written as the strings JavaScript's Number() reads.
    return [float('%.12g' % v) if math.isfinite(v) else str(v).replace('nan', 'NaN').replace('inf', 'Infinity') for v in t.detach().reshape(-1).tolist()]


def weigh(t, c):
    return (t * seq(t.shape, c)).sum()


out = {}


def recurrent(name, module, x_shape, h0=None, c0=None):
    """Run module on seq(x_shape, 0.1) (and initial states seq(·, 0.3, 0.5), seq(·, 0.7, 0.5))."""
    module = module.to(D)
    fill(module)
    x = seq(x_shape, 0.1).requires_grad_()
    state = None
    leaves = [x]
    if h0 is not None:
        h = seq(h0, 0.3, 0.5).requires_grad_()
        leaves.append(h)
        state = h
        if c0 is not None:
            c = seq(c0, 0.7, 0.5).requires_grad_()
            leaves.append(c)
            state = (h, c)
    y, hn = module(x, state) if state is not None else module(x)
    entry = {'keys': list(module.state_dict().keys()), 'out': flat(y)}
    loss = weigh(y, 2.0)
    if isinstance(hn, tuple):
        entry['hn'], entry['cn'] = flat(hn[0]), flat(hn[1])
        loss = loss + weigh(hn[0], 2.5) + weigh(hn[1], 3.0)
    else:
        entry['hn'] = flat(hn)
        loss = loss + weigh(hn, 2.5)
    loss.backward()
    entry['gx'] = flat(x.grad)
    if len(leaves) > 1:
        entry['gh0'] = flat(leaves[1].grad)
    if len(leaves) > 2:
        entry['gc0'] = flat(leaves[2].grad)
    entry['gparams'] = {k: flat(p.grad) for k, p in module.named_parameters()}
    out[name] = entry


torch.manual_seed(0)
recurrent('lstm-2l-bi-batchfirst', nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True), [2, 5, 3], [4, 2, 4], [4, 2, 4])
recurrent('gru-2l-bi-batchfirst', nn.GRU(3, 4, 2, batch_first=True, bidirectional=True), [2, 5, 3], [4, 2, 4])
recurrent('lstm-proj-2l-bi', nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2), [4, 2, 3], [4, 2, 2], [4, 2, 4])
recurrent('rnn-relu-2l-nobias', nn.RNN(3, 4, 2, nonlinearity='relu', bias=False), [4, 2, 3])
recurrent('rnn-tanh-bi-unbatched', nn.RNN(3, 4, bidirectional=True), [5, 3], [2, 4])
recurrent('gru-unbatched', nn.GRU(3, 4), [5, 3])
recurrent('lstm-unbatched', nn.LSTM(3, 4, batch_first=True), [5, 3], [1, 4], [1, 4])


def cell(name, module, x_shape, h_shape, lstm=False):
    module = module.to(D)
    fill(module)
    x = seq(x_shape, 0.1).requires_grad_()
    h = seq(h_shape, 0.3, 0.5).requires_grad_()
    entry = {'keys': list(module.state_dict().keys())}
    if lstm:
        c = seq(h_shape, 0.7, 0.5).requires_grad_()
        h1, c1 = module(x, (h, c))
        entry['h'], entry['c'] = flat(h1), flat(c1)
        (weigh(h1, 2.5) + weigh(c1, 3.0)).backward()
        entry['gc0'] = flat(c.grad)
    else:
        h1 = module(x, h)
        entry['h'] = flat(h1)
        weigh(h1, 2.5).backward()
    entry['gx'], entry['gh0'] = flat(x.grad), flat(h.grad)
    entry['gparams'] = {k: flat(p.grad) for k, p in module.named_parameters()}
    out[name] = entry


cell('rnncell-tanh', nn.RNNCell(3, 4), [2, 3], [2, 4])
cell('rnncell-relu-nobias', nn.RNNCell(3, 4, bias=False, nonlinearity='relu'), [2, 3], [2, 4])
cell('lstmcell', nn.LSTMCell(3, 4), [2, 3], [2, 4], lstm=True)
cell('grucell', nn.GRUCell(3, 4), [2, 3], [2, 4])
cell('grucell-unbatched', nn.GRUCell(3, 4), [3], [4])

# ---- CTC ----
# log_probs = log_softmax(seq([6, 3, 5], 0.2, 2.0), 2): T = 6, N = 3, C = 5.
LOGITS = seq([6, 3, 5], 0.2, 2.0)
TARGETS = [[1, 2, 2], [3, 1, 0], [4, 4, 4]]
INPUT_LENGTHS = [6, 5, 4]
TARGET_LENGTHS = [3, 2, 0]


def ctc(name, targets=TARGETS, input_lengths=INPUT_LENGTHS, target_lengths=TARGET_LENGTHS, blank=0, zero_infinity=False, reductions=('none', 'sum', 'mean'), concatenated=False):
    """For each reduction: the loss, its gradient w.r.t. log_probs as a leaf (PyTorch's formula), and w.r.t. the logits."""
    for reduction in reductions:
        t = torch.tensor(targets)
        if concatenated:
            t = torch.cat([t[n, :target_lengths[n]] for n in range(len(target_lengths))])
        logits = LOGITS.clone().requires_grad_()
        lp = logits.log_softmax(2).detach().requires_grad_()
        args = (t, torch.tensor(input_lengths), torch.tensor(target_lengths))
        kw = dict(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
        loss = F.ctc_loss(lp, *args, **kw)
        up = seq(loss.shape, 1.5, 1.0).add(2.0)  # an upstream gradient in [1, 3]
        (loss * up).sum().backward()
        (F.ctc_loss(logits.log_softmax(2), *args, **kw) * up).sum().backward()
        out[f'{name}-{reduction}'] = {'loss': flat(loss), 'up': flat(up), 'glp': flat(lp.grad), 'glogits': flat(logits.grad)}


ctc('ctc')
ctc('ctc-concat', concatenated=True, reductions=('none',))
ctc('ctc-blank4', targets=[[1, 2, 2], [3, 1, 0], [0, 0, 0]], blank=4, reductions=('none',))
# Sample 0 needs 5 frames for 1,1,1 (a blank between repeats) but has 4: its loss is infinite.
ctc('ctc-infeasible', targets=[[1, 1, 1], [3, 1, 0], [4, 4, 4]], input_lengths=[4, 5, 4], reductions=('none', 'mean'))
ctc('ctc-zeroinf', targets=[[1, 1, 1], [3, 1, 0], [4, 4, 4]], input_lengths=[4, 5, 4], zero_infinity=True, reductions=('none', 'mean'))
lp1 = LOGITS[:, 0].log_softmax(1).requires_grad_()
l1 = F.ctc_loss(lp1, torch.tensor([1, 2, 2]), torch.tensor([6]), torch.tensor([3]), reduction='none')
l1.backward()
out['ctc-unbatched'] = {'loss': flat(l1), 'glp': flat(lp1.grad)}

# ---- one_hot ----
out['onehot'] = {'y': flat(F.one_hot(torch.tensor([[0, 2], [3, 1]]))), 'y5': flat(F.one_hot(torch.tensor([0, 2, 3, 1]), 5))}

# ---- autocast (AC-7, AC-8, AC-9): float32 modules and inputs in a CPU bfloat16 region ----
# PyTorch 1.13 lists none of the recurrent ops for CPU autocast: their products (linear) run in
# bfloat16 and the gate arithmetic promotes with the float32 states, so LSTM and GRU (and their
# cells) give float32 while a plain RNN gives bfloat16. ctc_loss is float32 there.
def autocast_recurrent(name, module, x_shape, cell=False):
    fill(module)
    x = seq(x_shape, 0.1).float()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        y = module(x)
    parts = (y if isinstance(y, tuple) else (y,)) if cell else (y[0], *(y[1] if isinstance(y[1], tuple) else (y[1],)))
    out[name] = {'keys': list(module.state_dict().keys()), 'dtypes': [str(t.dtype).replace('torch.', '') for t in parts], **{f'y{k}': flat(t.double()) for k, t in enumerate(parts)}}


autocast_recurrent('autocast-lstm-2l', nn.LSTM(3, 4, 2), [3, 2, 3])
autocast_recurrent('autocast-gru-bi', nn.GRU(3, 4, bidirectional=True), [3, 2, 3])
autocast_recurrent('autocast-rnn-tanh', nn.RNN(3, 4), [3, 2, 3])
autocast_recurrent('autocast-rnn-relu', nn.RNN(3, 4, nonlinearity='relu'), [3, 2, 3])
autocast_recurrent('autocast-lstmcell', nn.LSTMCell(3, 4), [2, 3], cell=True)
autocast_recurrent('autocast-grucell', nn.GRUCell(3, 4), [2, 3], cell=True)
autocast_recurrent('autocast-rnncell-tanh', nn.RNNCell(3, 4), [2, 3], cell=True)
with torch.autocast('cpu', dtype=torch.bfloat16):
    lp16 = LOGITS.float().log_softmax(2).bfloat16()
    l16 = F.ctc_loss(lp16, torch.tensor(TARGETS), torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS), reduction='none')
out['autocast-ctc'] = {'dtypes': [str(l16.dtype).replace('torch.', '')], 'y0': flat(l16.double())}

print(json.dumps(out, separators=(',', ':')))
