"""PyTorch (eager, CPU) for the overhead bench: started by test/bench/lib/libraries/torch.mjs.

    python3 test/bench/overhead_torch.py THREADS

Prints one JSON line: {"version", "threads", "python"} once torch is imported and
torch.set_num_threads(THREADS) is set, or {"error"} when torch cannot be imported (and exits).
Then reads one JSON request a line from stdin and answers each with one JSON line:

    {"kind", "data", "calls", "measure": {"warmup", "warmupMs", "budgetMs", "minReps", "maxReps", "oneRunIfSlow", ...}}
    -> {"ms", "reps", "output": [...]} or {"error"}

A timed run is `calls` calls of the workload in a plain loop (each result dropped when the next is
made), timed as a whole; warm-up and the number of runs follow test/bench/lib/measure.mjs.
"""

import json
import platform
import sys
import time


def workload(torch, kind, d):
    """The function one call runs, made from the request's data (the same numbers as the JS side)."""

    def f32(values, shape):
        return torch.tensor(values, dtype=torch.float32).reshape(shape)

    if kind == "add":
        shape = d.get("shape") or [len(d["a"])]
        a = f32(d["a"], shape)
        b = f32(d["b"], shape) if "b" in d else a  # no b: big.add(big), one tensor
        return lambda: a.add(b)
    if kind == "matmul":
        n = d["n"]
        m, k = d.get("m", n), d.get("k", n)
        x, w = f32(d["a"], [m, k]), f32(d["b"], [k, n])
        return lambda: x.matmul(w)
    if kind == "mulSumBackward":
        a = f32(d["a"], [-1])
        w = f32(d["w"], [-1]).requires_grad_()

        def step():
            w.grad = None  # what optimizer.zero_grad() does (set_to_none)
            w.mul(a).sum().backward()
            return w.grad

        return step
    raise ValueError(f"unknown workload kind {kind}")


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


def answer(torch, request):
    call = workload(torch, request["kind"], request["data"])
    calls = request["calls"]
    last = []

    def run():
        result = None
        for _ in range(calls):
            result = call()
        last[:] = [result]

    seconds, reps = measure(run, **request["measure"])
    return {"ms": seconds * 1e3, "reps": reps, "output": last[0].detach().reshape(-1).tolist()}


def main():
    threads = int(sys.argv[1])
    try:
        import torch
    except Exception as err:  # ImportError, or a broken install
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return
    torch.set_num_threads(threads)
    print(json.dumps({"version": torch.__version__, "threads": torch.get_num_threads(), "python": platform.python_version()}), flush=True)
    for line in sys.stdin:
        try:
            reply = answer(torch, json.loads(line))
        except Exception as err:
            reply = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
