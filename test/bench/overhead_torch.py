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
    raise ValueError(f"unknown workload kind {kind}")


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
