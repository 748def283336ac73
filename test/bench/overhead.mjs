// Overhead benchmark: what one call of a tiny op costs, in µs, where the work itself is next to
// nothing and what is left is the library (dispatch, dtype/device rules, autograd bookkeeping, the
// tensor objects, freeing them). Ours runs twice, with creation-site tracking on (the default) and
// off; in the same run, the same calls on tfjs-cpu, tfjs-wasm, jax-js wasm and, where `python3` can
// import torch, PyTorch eager. Writes docs/benchmarks/overhead.md and overhead.json, then
// regenerates docs/guides/benchmarks.md.
//
//   npx -y pnpm@12.4.2 bench:overhead                      (builds the packages first)
//   node test/bench/overhead.mjs --only=add-4 --libs=ours,ours-sites-off --budget=500
// --only (workload ids) and --libs make a partial run, which prints but writes nothing.
// --budget is the time one library may spend on one workload's timed runs (ms, default 1000).
import { availableParallelism } from 'node:os';
import { randn } from './lib/data.mjs';
import { reportHeader } from './lib/report.mjs';
import { finishRun, librariesOf, loadLibraries, parseArgs, runWorkloads } from './lib/run.mjs';

const args = parseArgs('test/bench/overhead.mjs');
const budgetMs = Number(args.budget ?? 1000);
const only = args.only?.split(',');
const libs = args.libs?.split(',');

/** Calls in one timed run: a plain synchronous loop, timed as a whole, then one wait for the last result. */
const CALLS = 1000;

/** µs per call from the median time of one run of `calls` calls. */
const perCall = (calls) => (ms) => (ms * 1000) / calls;

/** Elementwise results round once, the same way everywhere; sums and products may differ in order. */
const TOL_EXACT = 1e-6;
const TOL_SUMS = 1e-5;

const big = randn(256 * 256, 7);

/**
 * The workloads, with the per-call figure the team aims for (`target`, µs). `kind` is the library
 * adapters' method (lib/libraries/*.mjs), shared with the cpu bench where the op is the same.
 */
const WORKLOADS = [
  {
    id: 'add-4', kind: 'add', workload: '`a.add(b)`, 4 floats', target: 2, tolerance: TOL_EXACT,
    inputs: () => ({ a: randn(4, 1), b: randn(4, 2) }),
  },
  {
    id: 'mul-sum-backward', kind: 'mulSumBackward', workload: '`w.mul(a).sum().backward()`, 4 floats', target: 15, tolerance: TOL_EXACT,
    inputs: () => ({ a: randn(4, 3), w: randn(4, 4) }),
  },
  {
    id: 'matmul-1x16', kind: 'matmul', workload: '`x.matmul(W)`, 1×16 @ 16×16', target: 2.5, tolerance: TOL_SUMS,
    inputs: () => ({ m: 1, k: 16, n: 16, a: randn(16, 5), b: randn(256, 6) }),
  },
  {
    id: 'add-256x256-loop', kind: 'add', workload: '`big.add(big)`, 256×256 floats, never-yielding loop', target: 20, tolerance: TOL_EXACT,
    inputs: () => ({ a: big, b: big, shape: [256, 256] }),
  },
  // At least three timed runs each, even where the first run is slow: here that is a cold start
  // (ours grows its memory in the first never-yielding loop), not a long workload.
].map((w) => ({ unit: 'µs/call', calls: CALLS, value: perCall(CALLS), measure: { oneRunIfSlow: false }, ...w }))
  .filter((w) => !only || only.includes(w.id));

const libraries = await loadLibraries(['ours', 'ours-sites-off', 'tfjs-cpu', 'tfjs-wasm', 'jax-wasm', 'torch'], libs);
const started = performance.now();
const rows = await runWorkloads(WORKLOADS, libraries, { budgetMs });

const listed = librariesOf(libraries);
const peers = listed.filter((l) => !l.id.startsWith('ours')).map((l) => l.id);
const report = {
  ...reportHeader('overhead', 'Overhead benchmark: µs per call of tiny ops'),
  lowerIsBetter: true,
  method: [
    `fp32; every library gets the same seeded inputs, made before timing. A timed run is a plain synchronous \`for\` loop of ${CALLS} calls of the workload, timed as a whole, that never yields to the event loop; each result is dropped (ours, PyTorch) or disposed (tfjs: \`dispose()\` of each result when the next is made, no \`tf.tidy\`; jax-js: \`dispose()\` likewise) as its users free it, and the run ends by waiting once for the last result (below). The figure is the run's time divided by ${CALLS}: **µs per call, lower is better**.`,
    `Each figure is the median of at least three runs after warm-up (at least 0.5 s of runs), with one untimed turn of the event loop between runs and a 100 ms pause between libraries; the number of runs adapts to a budget of ${budgetMs} ms per library and workload. The JavaScript libraries share one Node process, all loaded before the first run, so each runs with the others' code and memory on the heap, as in a program that uses several. Within a run nothing yields, and FinalizationRegistry callbacks run only between tasks: a library that frees dropped results by garbage collection (ours) must free them without the event loop's help, or hold them all until the run ends. The 256×256 row measures that, with ${CALLS} × 256 KiB of results per run.`,
    '`w.mul(a).sum().backward()`: ours and PyTorch set `w.grad = null` before each call (what `zeroGrad()` does), so every call makes a fresh gradient; tfjs calls a `tf.grad` function and jax-js a `grad` function (eager, no `jit`), each made once before timing, which return the gradient.',
    'Columns: ours with creation-site tracking on (the default: each new tensor records where user code made it, for device-mismatch messages) and off (`setCreationSiteTracking(false)`, during the timed runs only). `target` is the cost per call the team aims for. `ours / best peer` divides ours (sites on) by the fastest peer of the row, named in the cell: above 1 that peer is faster; `ours / target` above 1 misses the target.',
    `Checks: each result of the last call is compared with ours: relative error = max |peer − ours| / max |ours|, tolerance ${TOL_EXACT} (${TOL_SUMS} for matmul). A failed check is marked ✗.`,
    `ours: device 'cpu', with whatever kernels and threads the installed @core/backend-cpu provides (${availableParallelism()} cores here). PyTorch runs in a child Python process (test/bench/overhead_torch.py) that times its own loops by the same rules; without torch installed its column says so and the rest runs.`,
  ],
  libraries: listed,
  ratios: [
    { numerator: 'ours', denominator: peers, label: 'ours / best peer' },
    { numerator: 'ours', denominator: 'target', label: 'ours / target' },
  ],
  rows,
};

finishRun(report, { started, partial: (only || libs) && '--only / --libs' });
