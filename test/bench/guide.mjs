// docs/guides/benchmarks.md, generated from the benchmark results in docs/benchmarks/*.json (and
// nothing else, so the page changes only when a bench is run again). Each bench script calls
// writeGuide() after writing its json; test/docs/benchmarks-guide.test.ts fails when the page is
// stale.
//
//   node test/bench/guide.mjs            regenerate the page from the committed json files
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BENCHMARKS_DIR, machineLine, runBody } from './lib/report.mjs';

export const GUIDE = fileURLToPath(new URL('../../docs/guides/benchmarks.md', import.meta.url));
export const REGENERATE = 'node test/bench/guide.mjs (or cd test && UPDATE_DOCS=1 npx vitest run docs/benchmarks-guide)';

/** What the guide says about each bench it knows; a json file for another bench gets a plain section. */
const SECTIONS = {
  cpu: {
    heading: 'CPU: this library against tfjs and jax-js',
    about: [
      "`bench:cpu` runs this library's `cpu` device through the public API (the same calls a user writes: `a.matmul(b)`, `F.conv2d`, `nn.Sequential` + `F.crossEntropy` + `loss.backward()` + `SGD`) and, in the same process on the same inputs, the JavaScript libraries a user could pick instead: TensorFlow.js on its plain-JavaScript `cpu` backend and its WebAssembly `wasm` backend (XNNPACK), and jax-js on its `wasm` device; and, where a `python3` on the machine imports them, NumPy and PyTorch eager on the CPU, each in a child Python process that times its own loops by the same rules (NumPy has no conv2d or autograd, so its cells for those are empty, with a note saying so). The JavaScript peers are devDependencies of the bench package (`test/bench/package.json`) only. Our column's notes say which native path ran (the GEMM, its threads and the CPU features) or why none did; the json report keeps it as `native`.",
      "Besides the small MLP, two real training programs run against PyTorch, from the same seeded weights: pytorch/examples mnist's `Net` as its main.py trains it (two convolutions, max pooling, dropout, two Linears, `nll_loss`, Adadelta at lr 1.0, batch 64), and a small GPT in nanoGPT's shape (2 layers, 64 wide, 4 heads, block 32, 65 tokens, batch 8, AdamW). The column \"ours, compiled\" runs the three training steps through `compile()` (see [Compiling a training step](compile.md)); \"compiled / eager\" is what compiling buys.",
      'Each ratio column is ours divided by one peer: **above 1 ours is faster, below 1 the peer is**; 0.5× means the peer does twice the work in the same time.',
    ],
  },
  webgpu: {
    heading: 'WebGPU: the webgpu device against the cpu device',
    about: [
      "`bench:webgpu` runs the same programs on this library's `webgpu` and `cpu` devices. On machines without a GPU, WebGPU runs on a software Vulkan driver (lavapipe) that itself runs on the CPU: there the figures compare two ways of using the same cores and say little about a real GPU, where the same command measures what the GPU buys.",
      'The ratio column is webgpu divided by cpu: above 1 webgpu is faster.',
    ],
  },
  overhead: {
    heading: 'Overhead: µs per call of tiny ops',
    about: [
      "`bench:overhead` measures what one call costs when the work is next to nothing (4 floats, a 1×16 row times a 16×16 matrix): what is left is the library's own cost per op (dispatch, dtype and device rules, autograd bookkeeping, making and freeing tensors), which decides how fast small models and eager code run. A 256×256 add in a loop that never yields to the event loop adds the cost of freeing results inside such a loop. This library runs twice, with creation-site tracking on (the default) and off (`setCreationSiteTracking(false)`); the peers are those of `bench:cpu` and PyTorch eager on the CPU, where a `python3` on the machine imports torch (Debian: `apt-get install python3-torch`; otherwise its column says it was skipped).",
      '**Lower is better** here: every figure is µs per call, so a ratio above 1 means ours is slower.',
    ],
  },
};

/** The results in docs/benchmarks/*.json, cpu first, then the others by name. */
export function loadResults(dir = BENCHMARKS_DIR) {
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const reports = files.map((f) => JSON.parse(readFileSync(`${dir}${f}`, 'utf8')));
  const order = Object.keys(SECTIONS);
  const rank = (r) => (order.includes(r.bench) ? order.indexOf(r.bench) : order.length);
  return reports.sort((a, b) => rank(a) - rank(b) || a.bench.localeCompare(b.bench));
}

function section(report) {
  const known = SECTIONS[report.bench];
  return [
    `## ${known?.heading ?? report.title}`,
    '',
    ...(known ? [...known.about.flatMap((p) => [p, '']), ''] : []),
    `Last run: ${report.date}, \`${report.command}\`, on ${machineLine(report.machine)}. The full report: [docs/benchmarks/${report.bench}.md](../benchmarks/${report.bench}.md).`,
    '',
    ...runBody(report),
  ].join('\n').replace(/\n{3,}/g, '\n\n');
}

/** The whole page. */
export function renderGuide(reports = loadResults()) {
  const benches = new Set(reports.map((r) => r.bench));
  const missing = Object.keys(SECTIONS).filter((b) => !benches.has(b));
  return [
    '# Benchmarks',
    '',
    '<!-- Generated by test/bench/guide.mjs from docs/benchmarks/*.json; do not edit by hand. The bench commands regenerate it. -->',
    '',
    'How fast this library runs, measured by scripts in `test/bench/` that anyone can run on their own machine. The tables below are the last committed runs; their figures depend on the machine they were taken on (named with each table), so read the ratios within one table rather than comparing figures across machines.',
    '',
    '## Running the benchmarks',
    '',
    'From the repository root, after `npx -y pnpm@12.4.2 install`:',
    '',
    '```sh',
    'npx -y pnpm@12.4.2 bench:cpu      # ours vs tfjs-cpu, tfjs-wasm, jax-js wasm, NumPy, PyTorch: a few minutes',
    'npx -y pnpm@12.4.2 bench:webgpu   # webgpu vs cpu; needs a WebGPU adapter (scripts/install-webgpu-deps.sh installs lavapipe)',
    'npx -y pnpm@12.4.2 bench:overhead # µs per call of tiny ops: ours (creation sites on and off) vs tfjs, jax-js, PyTorch: about a minute',
    '```',
    '',
    'Each command builds the packages it needs, prints a table, writes `docs/benchmarks/<bench>.md` and a machine-readable `<bench>.json`, and regenerates this page from the json files. A part of the CPU benchmark, for working on one kernel, prints without writing anything:',
    '',
    '```sh',
    'npx -y pnpm@12.4.2 turbo run build --filter=@core/bench^...   # once, after changing a package',
    'node test/bench/cpu.mjs --only=matmul,mlp --libs=ours,jax-wasm --budget=500',
    '```',
    '',
    '`--only` takes workload ids or kinds (`matmul-1024`, `matmul`, `mlp`, `mnist-net`, `gpt`, `add-1m`, `conv2d`, `softmax-ce`), `--libs` library ids (`ours`, `ours-compiled`, `tfjs-cpu`, `tfjs-wasm`, `jax-wasm`, `numpy`, `torch`), and `--budget` the milliseconds each library may spend on each workload\'s timed runs. `node test/bench/overhead.mjs` takes the same flags, with its workload ids (`add-4`, `mul-sum-backward`, `matmul-1x16`, `add-256x256-loop`) and one more library id (`ours-sites-off`; NumPy is not among its peers). Benchmarks are not part of `npx -y pnpm@12.4.2 test`. Run them on a quiet machine: anything else using the cores (a build, a browser) shows up in the figures.',
    '',
    '## Reading the tables',
    '',
    '- **Units.** Every unit is higher-is-better, except the overhead table\'s µs per call, where lower is better. Matrix multiply and convolution: GFLOPS, billions of floating-point operations per second, counting a multiply-add as two (matmul of two N×N matrices: 2N³; conv2d: 2 × batch × out channels × output pixels × in channels × kernel area). The training steps (the MLP with SGD, the MNIST Net with Adadelta, the GPT with AdamW: forward, loss, backward, update): steps per second. Elementwise add: GB/s of memory traffic, 12 bytes per element (two 4-byte reads, one write). Softmax + cross-entropy: calls per second. Overhead: microseconds per call.',
    '- **Timing.** Inputs are made before timing starts. Each figure is the median of several runs after a warm-up run; a run counts only once its result is computed (each library says how it waits), and an untimed turn of the event loop separates runs, as in a program, so memory freed by the garbage collector is reused. The number of runs adapts to a time budget, so a slow library at a large size is timed once or twice: a figure marked `*` is a single cold run.',
    '- **Ratios.** A column headed `A / B` is A\'s figure divided by B\'s for the same row: 2.00× means A does twice the work per second, 0.50× half (in the overhead table, where figures are times, 2.00× means A takes twice as long). Ratios from one table share the machine, the inputs and the moment, so they travel between machines far better than the figures do.',
    '- **Checks.** Every result is compared with this library\'s: a row marked ✗ computed something else (the note under the table gives the error), and its figures do not count. `error` means the library threw on that workload, `not loaded` that it could not start here; the note says why.',
    '- **Threads.** The list under each heading gives each library\'s version and the threads it ran on. Every library runs as its users get it on that machine, with as many threads as it will use there (tfjs-wasm has none in Node), so more threads is part of a library\'s figure, not an unfair advantage.',
    '',
    ...reports.map(section),
    ...missing.map((b) => `## ${SECTIONS[b].heading}\n\nNo results committed yet: run \`npx -y pnpm@12.4.2 bench:${b}\`.\n`),
  ].join('\n').replace(/\n{3,}/g, '\n\n').replace(/\n+$/, '\n');
}

/** Regenerate the page; returns its path. */
export function writeGuide() {
  writeFileSync(GUIDE, renderGuide());
  return GUIDE;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(`wrote ${writeGuide()}`);
}
