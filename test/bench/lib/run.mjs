// What the benchmarks that measure several libraries side by side (cpu.mjs, overhead.mjs) share:
// their flags, loading the libraries, the loop over workloads and libraries, and the end of a run.
import { compare, errorLine, measure } from './measure.mjs';
import { resultsTable, writeReport } from './report.mjs';
import { writeGuide } from '../guide.mjs';

/** `--name=value` flags as an object (`--name` alone is 'true'); anything else is an error naming `script`. */
export function parseArgs(script, argv = process.argv.slice(2)) {
  return Object.fromEntries(argv.map((a) => {
    const m = /^--([\w-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a} (see the header of ${script})`);
    return [m[1], m[2] ?? 'true'];
  }));
}

/** Where each library's adapter is: [module in lib/libraries, export, package], by library id. */
const ADAPTERS = {
  ours: ['ours.mjs', 'ours', '@core/backend-cpu'],
  'ours-sites-off': ['ours.mjs', 'oursSitesOff', '@core/backend-cpu'],
  'ours-compiled': ['ours.mjs', 'oursCompiled', '@core/backend-cpu'],
  'ours-bf16': ['ours.mjs', 'oursBf16', '@core/backend-cpu'],
  'tfjs-cpu': ['tfjs.mjs', 'tfjsCpu', '@tensorflow/tfjs-backend-cpu'],
  'tfjs-wasm': ['tfjs.mjs', 'tfjsWasm', '@tensorflow/tfjs-backend-wasm'],
  'jax-wasm': ['jax.mjs', 'jaxWasm', '@jax-js/jax'],
  torch: ['python.mjs', 'torch', 'torch'],
  numpy: ['python.mjs', 'numpy', 'numpy'],
};

/**
 * Loads and starts each library of `ids` (those in `only`, when given) on its own: one that fails is
 * reported in its column (its `error`), and the rest run. Logs one line per library.
 */
export async function loadLibraries(ids, only) {
  const libraries = [];
  for (const id of ids) {
    if (only && !only.includes(id)) continue;
    const [path, name, pkg] = ADAPTERS[id];
    let lib;
    try {
      lib = (await import(new URL(`./libraries/${path}`, import.meta.url).href))[name];
      if (!lib) throw new Error(`${path} exports no ${name}`);
    } catch (err) {
      lib = { id, label: id, package: pkg, error: errorLine(err) };
    }
    if (!lib.error) {
      try {
        await lib.init();
      } catch (err) {
        lib.error = errorLine(err);
      }
    }
    console.error(lib.error ? `${lib.id}: not loaded: ${lib.error}` : `${lib.id}: ${lib.package} ${lib.version}, ${lib.threads ?? '?'} thread(s)${lib.notes?.length ? `; ${lib.notes.join('; ')}` : ''}`);
    libraries.push(lib);
  }
  return libraries;
}

/**
 * Each workload on each library: `lib[w.kind](data, { calls, measure })` makes a bench ({ run,
 * output, dispose? }), measured with lib/measure.mjs (`run(w.calls)` when the workload sets `calls`;
 * the workload's `measure` options over the run's) unless the bench brings its own `measured`
 * { ms, reps } (a library timed in another process, by the same options), then its output checked
 * against ours. `w.value(ms)` turns the median time into the figure reported;
 * `w.output?.(out, bench)` puts a peer's output in our layout. Returns the report's rows.
 */
export async function runWorkloads(workloads, libraries, { budgetMs }) {
  const rows = [];
  for (const w of workloads) {
    const data = w.inputs();
    const results = {};
    let reference = null;
    for (const lib of libraries) {
      if (lib.error) continue;
      // A library without this workload (NumPy has no conv2d) leaves its cell empty, with the reason
      // where the library (`lacks(kind)`) or the workload (`absent`) gives one.
      if (typeof lib[w.kind] !== 'function') {
        const reason = lib.lacks?.(w.kind) ?? w.absent;
        if (reason) results[lib.id] = { absent: reason };
        continue;
      }
      let bench = null;
      // A pause first: worker threads of the library before (ours and jax-js spin a while before
      // sleeping) must not take cores from this one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        // A library that traces its first runs (compile) sets how many of them are warm-up.
        const options = { warmup: Math.max(w.warmup ?? 1, lib.minWarmup ?? 0), budgetMs, ...w.measure };
        bench = await lib[w.kind](data, { calls: w.calls, measure: options });
        const { ms, reps } = bench.measured ?? await measure(() => bench.run(w.calls), options);
        let out = await bench.output();
        if (w.output) out = w.output(out, bench);
        results[lib.id] = { value: w.value(ms), ms, reps };
        if (lib.id === 'ours') reference = out;
        else if (reference) {
          const { maxAbs, rel } = compare(reference, out);
          // A library computing in lower precision (ours under bf16 autocast) brings its own tolerance.
          results[lib.id].check = { maxAbs, rel, ok: rel <= (lib.tolerance ?? w.tolerance) };
        }
      } catch (err) {
        results[lib.id] = { error: errorLine(err) };
      } finally {
        try { await bench?.dispose?.(); } catch { /* a failed dispose must not hide the result */ }
      }
      const r = results[lib.id];
      const shown = r.error ? `error: ${r.error}` : `${r.value.toPrecision(3)} ${w.unit} (${r.ms.toFixed(2)} ms × ${r.reps || 'cold'})${r.check ? ` rel err ${r.check.rel.toExponential(1)}${r.check.ok ? '' : ' ✗ CHECK FAILED'}` : ''}`;
      console.error(`${w.id.padEnd(14)} ${lib.id.padEnd(10)} ${shown}`);
    }
    rows.push({ id: w.id, workload: w.workload, unit: w.unit, tolerance: w.tolerance, ...(w.target != null ? { target: w.target } : {}), results });
  }
  return rows;
}

/** The libraries as the report lists them. */
export function librariesOf(libraries) {
  return libraries.map((l) => ({
    id: l.id, label: l.label, package: l.package, version: l.version ?? null, threads: l.threads ?? null,
    completion: l.completion ?? null, notes: l.notes ?? [], ...(l.native ? { native: l.native } : {}), ...(l.error ? { error: l.error } : {}),
  }));
}

/**
 * Prints the table and, unless the run was partial, writes docs/benchmarks/<bench>.md and .json and
 * regenerates the guide; then exits (the libraries' worker threads would keep Node alive).
 */
export function finishRun(report, { started, partial }) {
  console.log(`\n${resultsTable(report)}\n`);
  console.log(`${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (partial) {
    console.log(`partial run (${partial}): docs/benchmarks not written`);
  } else {
    for (const f of writeReport(report)) console.log(`wrote ${f}`);
    console.log(`wrote ${writeGuide()}`);
  }
  process.exit(0);
}
