// Timing and result checks shared by the benchmarks.

/**
 * measure()'s defaults; a library timed in another process (PyTorch) gets the same rules. Up to 101
 * timed runs: 15 runs of a 1.3 ms training step spanned 20 ms, too short a window for a steady median
 * (the MLP step's figure moved by 2× between runs).
 */
export const MEASURE_DEFAULTS = Object.freeze({ warmup: 1, warmupMs: 500, budgetMs: 1500, coldCapMs: 8000, minReps: 3, maxReps: 101, oneRunIfSlow: true });

/**
 * The median wall time of `run` (which must return only once the work is done), after warm-up
 * (at least `warmup` runs and `warmupMs` milliseconds).
 * The number of timed runs adapts to a time budget, so a slow library at a large size costs a few
 * runs, not minutes: the first warm-up run is timed, and after a warm-up slower than a third of
 * the budget only one run is timed. A warm-up slower than `coldCapMs` is reported as it is
 * (`reps: 0`, a cold figure, marked in the table): at that length, what warm-up would remove
 * (compiling kernels, JIT) is lost in the noise, and another run would cost as long again.
 * `oneRunIfSlow: false` turns both shortcuts off (always the full warm-up and at least `minReps`
 * timed runs), for runs whose first is slow for reasons the next runs don't share.
 */
export async function measure(run, options = {}) {
  const { warmup, warmupMs, budgetMs, coldCapMs, minReps, maxReps, oneRunIfSlow } = { ...MEASURE_DEFAULTS, ...options };
  const slow = (ms) => oneRunIfSlow && ms > budgetMs / 3;
  let first = 0;
  // At least `warmup` runs, and more until `warmupMs` has passed (a WebAssembly engine compiles a
  // kernel's optimised code only once it is hot: the first runs of a fast workload measure the
  // baseline compiler), unless the first run alone is slow.
  const warmupStart = performance.now();
  for (let i = 0; i < warmup || (performance.now() - warmupStart < warmupMs && !slow(first)); i++) {
    const t0 = performance.now();
    await run();
    if (i === 0) first = performance.now() - t0;
    await turnOfTheEventLoop();
  }
  if (oneRunIfSlow && first > coldCapMs) return { ms: first, reps: 0 };
  const times = [];
  const timed = async () => {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
    await turnOfTheEventLoop();
  };
  // The first timed run, warm, sets the count (the warm-up may include compiling kernels).
  await timed();
  const reps = slow(first) ? 1 : Math.max(minReps, Math.min(maxReps, Math.floor(budgetMs / Math.max(times[0], 1e-3))));
  while (times.length < reps) await timed();
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], reps };
}

/**
 * One untimed macrotask between runs, as a real program's event loop gives (a DataLoader yields
 * one per batch): finalizers run there, so a library that frees memory by garbage collection (ours)
 * reuses it as it would in a program, instead of touching fresh pages on every run. Libraries that
 * free explicitly (tfjs, jax-js) are unaffected.
 */
function turnOfTheEventLoop() {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * How far `got` is from `ref`: the largest absolute difference, and that difference relative to
 * the largest magnitude in `ref` (a norm-wise relative error, which stays meaningful where single
 * elements of a sum cancel to nearly zero).
 */
export function compare(ref, got) {
  if (got.length !== ref.length) return { maxAbs: Infinity, rel: Infinity, note: `length ${got.length}, expected ${ref.length}` };
  let maxAbs = 0;
  let scale = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(got[i] - ref[i]);
    if (!(d <= maxAbs)) maxAbs = d; // also catches NaN
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  return { maxAbs, rel: maxAbs / (scale || 1) };
}

/** A number for a table: three significant figures or so. */
export function fmt(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toPrecision(2);
}

/** An error as one short line (for table footnotes and the json). */
export function errorLine(err) {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.split('\n')[0].slice(0, 240);
}
