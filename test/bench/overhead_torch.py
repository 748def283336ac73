"""PyTorch (eager, CPU) or NumPy as a benchmark peer: started by test/bench/lib/libraries/python.mjs
for the overhead bench (PyTorch) and the cpu bench (PyTorch and NumPy).

    python3 test/bench/overhead_torch.py THREADS [torch|numpy]

Prints one JSON line: {"version", "threads", "python"} once the library is imported (torch:
torch.set_num_threads(THREADS) set; numpy: its BLAS threads are what OPENBLAS_NUM_THREADS and
OMP_NUM_THREADS, set by the parent, make them), or {"error"} when it cannot be imported (and exits).
Then reads one JSON request a line from stdin and answers each with one JSON line:

    {"kind", "data", "calls", "measure": {"warmup", "warmupMs", "budgetMs", "minReps", "maxReps", "oneRunIfSlow", ...}}
    -> {"ms", "reps", "output": {"f32": base64}} or {"error"}

Float32 arrays travel as {"f32": base64 of their little-endian bytes}, other arrays as lists. A
timed run is `calls` calls of the workload in a plain loop (each result dropped when the next is
made), timed as a whole; warm-up and the number of runs follow test/bench/lib/measure.mjs.
"""

import base64
import json
import platform
import sys
import time


def decode(value):
    """A request value: {"f32": base64} as a float32 NumPy array, anything else as it came."""
    import numpy as np

    if isinstance(value, dict) and "f32" in value:
        return np.frombuffer(base64.b64decode(value["f32"]), dtype="<f4").copy()
    return value


def torch_workload(torch, kind, d):
    """The function one call runs and the function giving its output, from the request's data (the same numbers as the JS side)."""
    F = torch.nn.functional

    def f32(values, shape):
        return torch.from_numpy(decode(values)).reshape(shape) if isinstance(values, dict) else torch.tensor(values, dtype=torch.float32).reshape(shape)

    if kind == "add":
        shape = d.get("shape") or [-1]
        a = f32(d["a"], shape)
        b = f32(d["b"], shape) if "b" in d else a  # no b: big.add(big), one tensor
        return lambda: a.add(b), None
    if kind == "matmul":
        n = d["n"]
        m, k = d.get("m", n), d.get("k", n)
        x, w = f32(d["a"], [m, k]), f32(d["b"], [k, n])
        return lambda: x.matmul(w), None
    if kind == "mulSumBackward":
        a = f32(d["a"], [-1])
        w = f32(d["w"], [-1]).requires_grad_()

        def step():
            w.grad = None  # what optimizer.zero_grad() does (set_to_none)
            w.mul(a).sum().backward()
            return w.grad

        return step, None
    if kind == "conv2d":
        x, w = f32(d["x"], d["inputShape"]), f32(d["w"], d["weightShape"])
        return lambda: F.conv2d(x, w, None, padding=d["padding"]), None
    if kind == "softmaxCrossEntropy":
        logits, target = f32(d["logits"], [d["rows"], d["classes"]]), torch.tensor(d["labels"], dtype=torch.int64)
        return lambda: F.cross_entropy(logits, target), None
    if kind == "mlp":
        in_f, hidden, out_f = d["sizes"]
        model = torch.nn.Sequential(torch.nn.Linear(in_f, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, out_f))
        with torch.no_grad():  # the shared initial weights, [out, in]
            for p, key, shape in zip(model.parameters(), ["w1", "b1", "w2", "b2"], [[hidden, in_f], [hidden], [out_f, hidden], [out_f]]):
                p.copy_(f32(d[key], shape))
        optimizer = torch.optim.SGD(model.parameters(), lr=d["lr"])
        x, target = f32(d["x"], [d["batch"], in_f]), torch.tensor(d["labels"], dtype=torch.int64)
        losses = []

        def step():
            loss = F.cross_entropy(model(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

        return step, lambda: losses[:2]
    if kind in ("mnistNet", "gpt"):
        return train_program(torch, kind, d, f32)
    raise ValueError(f"unknown workload kind {kind}")


def train_program(torch, kind, d, f32):
    """The two training programs (test/bench/lib/programs.mjs has ours), from the shared weights; the
    first two steps run in eval mode (no dropout) so that their losses can be compared with ours."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        """pytorch/examples mnist's Net."""

        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
            self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = F.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
            return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)

    class Block(nn.Module):
        """nanoGPT's pre-norm block without dropout: causal self-attention, then a 4x GELU MLP."""

        def __init__(self, width, heads, block):
            super().__init__()
            self.heads = heads
            self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = nn.Module()
            self.attn.c_attn, self.attn.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Module()
            self.mlp.c_fc, self.mlp.c_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.register_buffer("mask", torch.ones(block, block).tril().bool())

        def attention(self, x):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in self.attn.c_attn(x).split(C, 2))
            if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0: nanoGPT's flash path
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # nanoGPT's manual path
                att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
                y = F.softmax(att.masked_fill(~self.mask[:T, :T], float("-inf")), dim=-1) @ v
            return self.attn.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

        def forward(self, x):
            x = x + self.attention(self.ln_1(x))
            return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        """nanoGPT's GPT (dropout 0), its lm_head tied to the token embedding."""

        def __init__(self, vocab, block, layers, heads, width):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, width), wpe=nn.Embedding(block, width),
                h=nn.ModuleList([Block(width, heads, block) for _ in range(layers)]), ln_f=nn.LayerNorm(width)))
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            t = self.transformer
            x = t.wte(idx) + t.wpe(torch.arange(idx.shape[1]))
            for block in t.h:
                x = block(x)
            logits = self.lm_head(t.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    if kind == "mnistNet":
        model = Net()
        optimizer = torch.optim.Adadelta(model.parameters(), lr=d["lr"])
        inputs = (f32(d["x"], [d["batch"], 1, 28, 28]), torch.tensor(d["labels"], dtype=torch.int64))
        loss_of = lambda x, y: F.nll_loss(model(x), y)  # noqa: E731
    else:
        c = d["config"]
        model = GPT(c["vocabSize"], c["blockSize"], c["nLayer"], c["nHead"], c["nEmbd"])
        o = d["optimizer"]
        decay = [p for p in model.parameters() if p.dim() >= 2]
        rest = [p for p in model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": o["weightDecay"]}, {"params": rest, "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=o["lr"], betas=tuple(o["betas"]))
        shape = [d["batch"], c["blockSize"]]
        inputs = tuple(torch.tensor(d[key], dtype=torch.int64).view(shape) for key in ("idx", "targets"))
        loss_of = lambda x, y: model(x, y)  # noqa: E731
    named = dict(model.named_parameters())
    if sorted(named) != sorted(d["weights"]):
        raise ValueError(f"the shared weights name {sorted(d['weights'])}, the model has {sorted(named)}")
    with torch.no_grad():
        for name, p in named.items():
            p.copy_(f32(d["weights"][name], p.shape))
    model.eval()
    losses = []

    def step():
        if len(losses) == 2:
            model.train()
        optimizer.zero_grad()
        loss = loss_of(*inputs)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    return step, lambda: losses[:2]


def numpy_workload(np, kind, d):
    """NumPy's counterpart of torch_workload, for the workloads a NumPy user writes in a line or two."""

    def f32(values, shape):
        return decode(values).astype(np.float32).reshape(shape)

    if kind == "add":
        shape = d.get("shape") or [-1]
        a = f32(d["a"], shape)
        b = f32(d["b"], shape) if "b" in d else a
        return lambda: a + b, None
    if kind == "matmul":
        n = d["n"]
        m, k = d.get("m", n), d.get("k", n)
        x, w = f32(d["a"], [m, k]), f32(d["b"], [k, n])
        return lambda: x @ w, None
    if kind == "softmaxCrossEntropy":
        logits, target = f32(d["logits"], [d["rows"], d["classes"]]), np.asarray(d["labels"])

        def loss():
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            return np.float32(-log_probs[np.arange(len(target)), target].mean())

        return loss, None
    if kind == "mlp":
        # The train step by hand, as a NumPy user writes it: forward, softmax cross-entropy's
        # gradient back through ReLU, and SGD, all in float32.
        in_f, hidden, out_f = d["sizes"]
        w1, b1 = f32(d["w1"], [hidden, in_f]), f32(d["b1"], [hidden])
        w2, b2 = f32(d["w2"], [out_f, hidden]), f32(d["b2"], [out_f])
        x, target = f32(d["x"], [d["batch"], in_f]), np.asarray(d["labels"])
        rows, lr, count = np.arange(len(target)), np.float32(d["lr"]), np.float32(len(target))
        losses = []

        def step():
            h = x @ w1.T + b1
            a = np.maximum(h, np.float32(0))
            z = a @ w2.T + b2
            e = np.exp(z - z.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            losses.append(float(-np.log(p[rows, target]).mean()))
            g = p
            g[rows, target] -= np.float32(1)
            g /= count
            ga = g @ w2
            ga[h <= 0] = 0
            w2[...] -= lr * (g.T @ a)
            b2[...] -= lr * g.sum(axis=0)
            w1[...] -= lr * (ga.T @ x)
            b1[...] -= lr * ga.sum(axis=0)

        return step, lambda: losses[:2]
    raise ValueError(f"NumPy has no {kind} of its own (not measured)")


def measure(run, warmup, warmupMs, budgetMs, minReps, maxReps, oneRunIfSlow, **_):
    """Median seconds of `run` after warm-up, by measure()'s rules (test/bench/lib/measure.mjs, minus its cold-run cap)."""

    def slow(seconds):
        return oneRunIfSlow and seconds * 1e3 > budgetMs / 3

    start = time.perf_counter()
    first = None
    runs = 0
    while runs < warmup or ((time.perf_counter() - start) * 1e3 < warmupMs and not slow(first)):
        t0 = time.perf_counter()
        run()
        if first is None:
            first = time.perf_counter() - t0
        runs += 1
    times = []

    def timed():
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)

    timed()
    reps = 1 if slow(first) else max(minReps, min(maxReps, int(budgetMs // max(times[0] * 1e3, 1e-3))))
    while len(times) < reps:
        timed()
    times.sort()
    return times[len(times) // 2], reps


def answer(library, make, request):
    call, output = make(library, request["kind"], request["data"])
    calls = request["calls"]
    last = []

    def run():
        result = None
        for _ in range(calls):
            result = call()
        last[:] = [result]

    seconds, reps = measure(run, **request["measure"])
    import numpy as np

    value = output() if output else last[0]
    value = value.detach().numpy() if hasattr(value, "detach") else value
    data = np.ascontiguousarray(np.asarray(value, dtype="<f4").reshape(-1))
    return {"ms": seconds * 1e3, "reps": reps, "output": {"f32": base64.b64encode(data.tobytes()).decode("ascii")}}


def main():
    threads = int(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "torch"
    try:
        library = __import__(name)
        import numpy  # noqa: F401 (the arrays travel through it)
    except Exception as err:  # ImportError, or a broken install
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return
    if name == "torch":
        library.set_num_threads(threads)
        threads = library.get_num_threads()
    make = torch_workload if name == "torch" else numpy_workload
    print(json.dumps({"version": library.__version__, "threads": threads, "python": platform.python_version()}), flush=True)
    for line in sys.stdin:
        try:
            reply = answer(library, make, json.loads(line))
        except Exception as err:
            reply = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
