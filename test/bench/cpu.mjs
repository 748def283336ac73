// CPU benchmark: this library on device 'cpu' (through the public API) against the JavaScript
// peers a user could pick instead — tfjs-backend-cpu, tfjs-backend-wasm and @jax-js/jax's wasm
// device — and, where a python3 imports them, NumPy and PyTorch eager on the CPU (child processes
// of this one), in one run, on the same seeded fp32 data, each result checked against ours.
// Writes docs/benchmarks/cpu.md and cpu.json, then regenerates docs/guides/benchmarks.md.
//
//   npx -y pnpm@12.4.2 bench:cpu                     (builds the packages first)
//   node test/bench/cpu.mjs --only=matmul,mlp --libs=ours,jax-wasm --budget=500
// --only (workload ids or kinds) and --libs make a partial run, which prints but writes nothing.
// Library ids: ours, ours-compiled (the training steps through compile()), ours-bf16 (the training
// steps under bf16 autocast), tfjs-cpu, tfjs-wasm,
// jax-wasm, numpy, torch. The training steps: mlp, mnist-net (pytorch/examples mnist), gpt (nanoGPT),
// and mlp-tiny and gpt-tiny, overhead-bound sizes where compile()'s replay is what is measured.
// --budget is the time one library may spend on one workload's timed runs (ms, default 1500).
import { availableParallelism } from 'node:os';
import { labels, nchwToNhwc, oihwToHwio, oneHot, randn, transpose, uniform } from './lib/data.mjs';
import { reportHeader } from './lib/report.mjs';
import { finishRun, librariesOf, loadLibraries, parseArgs, runWorkloads } from './lib/run.mjs';

const args = parseArgs('test/bench/cpu.mjs');
const budgetMs = Number(args.budget ?? 1500);
const only = args.only?.split(',');
const libs = args.libs?.split(',');

/** Relative error allowed against ours (max |peer − ours| / max |ours|): fp32 sums in another order. */
const TOL_SUMS = 1e-4;
/** Elementwise add rounds once, the same way everywhere. */
const TOL_EXACT = 1e-6;
/**
 * Warm-up of the training steps, every library alike: a training loop runs thousands of steps, and
 * a JavaScript one takes seconds to settle (V8 sizes its heap, and core's reclaim watermark follows
 * it). Measured here: our eager MLP step at 890 steps/s after 0.5 s of warm-up, 1,080–1,350 after
 * 5 s, and rising over the first ~5 s in one process; NumPy's figure does not move.
 */
const TRAINING_WARMUP_MS = 5000;

const MLP_SIZES = [784, 256, 10];
const MLP_BATCH = 128;
const NET_BATCH = 64;
const GPT_CONFIG = { vocabSize: 65, blockSize: 32, nLayer: 2, nHead: 4, nEmbd: 64 };
const GPT_BATCH = 8;
/** Overhead-bound twins of the MLP and GPT steps: the work is next to nothing, so what is timed is the library per step (compile()'s replay). */
const TINY_MLP_SIZES = [8, 16, 4];
const TINY_MLP_BATCH = 4;
const TINY_GPT_CONFIG = { vocabSize: 16, blockSize: 8, nLayer: 2, nHead: 2, nEmbd: 16 };
const TINY_GPT_BATCH = 2;
/** Why the JavaScript peers have no cell for the two training programs. */
const TRAINING_PEERS = 'the training programs are written for ours and PyTorch only';

/** The workloads: how to make the inputs, and how a median time becomes the figure reported. */
const WORKLOADS = [
  ...[128, 256, 512, 1024, 2048].map((n) => ({
    id: `matmul-${n}`, kind: 'matmul', workload: `matmul ${n}×${n}`, unit: 'GFLOPS', tolerance: TOL_SUMS,
    inputs: () => ({ n, a: randn(n * n, 1), b: randn(n * n, 2) }),
    value: (ms) => (2 * n ** 3) / (ms * 1e6),
  })),
  mlp('mlp', MLP_SIZES, MLP_BATCH),
  mlp('mlp-tiny', TINY_MLP_SIZES, TINY_MLP_BATCH),
  {
    id: 'mnist-net', kind: 'mnistNet', unit: 'steps/s', tolerance: TOL_SUMS, absent: TRAINING_PEERS,
    measure: { warmupMs: TRAINING_WARMUP_MS },
    workload: `pytorch/examples mnist Net train step, batch ${NET_BATCH} of 1×28×28, Adadelta lr 1.0`,
    // The check compares the losses of steps 1 and 2, run without dropout (eval mode); the timed steps train with it.
    warmup: 2,
    inputs: () => ({ batch: NET_BATCH, lr: 1.0, x: randn(NET_BATCH * 28 * 28, 60), labels: labels(NET_BATCH, 10, 61), weights: netWeights() }),
    value: (ms) => 1000 / ms,
  },
  gpt('gpt', GPT_CONFIG, GPT_BATCH),
  gpt('gpt-tiny', TINY_GPT_CONFIG, TINY_GPT_BATCH),
  {
    id: 'add-1m', kind: 'add', workload: 'add, 2 × 1M floats', unit: 'GB/s', tolerance: TOL_EXACT,
    inputs: () => ({ a: randn(2 ** 20, 3), b: randn(2 ** 20, 4) }),
    // Two 4-byte reads and one write per element: 12 MB moved per call.
    value: (ms) => (12 * 2 ** 20) / (ms * 1e6),
  },
  conv('conv2d-demo', 64, 1, 8, 28),
  conv('conv2d-32-64', 64, 32, 64, 14),
  {
    id: 'softmax-ce', kind: 'softmaxCrossEntropy', workload: 'softmax + cross-entropy forward, [128, 1000]', unit: 'calls/s', tolerance: TOL_SUMS,
    inputs: () => {
      const y = labels(128, 1000, 21);
      return { rows: 128, classes: 1000, logits: randn(128 * 1000, 20, 3), labels: y, onehot: oneHot(y, 1000) };
    },
    value: (ms) => 1000 / ms,
  },
].filter((w) => !only || only.includes(w.id) || only.includes(w.kind));

/** The MLP [in, hidden, out] train step (ReLU, softmax cross-entropy, SGD) on `batch` samples. */
function mlp(id, sizes, batch) {
  const [inF, hidden, outF] = sizes;
  return {
    id, kind: 'mlp', workload: `MLP ${sizes.join('→')} train step, batch ${batch}, SGD`, unit: 'steps/s', tolerance: TOL_SUMS,
    measure: { warmupMs: TRAINING_WARMUP_MS },
    // Two warm-up steps: the check compares the losses of steps 1 and 2 (so it covers the update).
    warmup: 2,
    inputs: () => {
      const w1 = uniform(hidden * inF, 11, 1 / Math.sqrt(inF));
      const w2 = uniform(outF * hidden, 13, 1 / Math.sqrt(hidden));
      const y = labels(batch, outF, 15);
      return {
        batch, sizes, lr: 0.05,
        x: randn(batch * inF, 10), labels: y, onehot: oneHot(y, outF),
        w1, b1: uniform(hidden, 12, 1 / Math.sqrt(inF)), w2, b2: uniform(outF, 14, 1 / Math.sqrt(hidden)),
        w1t: transpose(w1, hidden, inF), w2t: transpose(w2, outF, hidden),
      };
    },
    value: (ms) => 1000 / ms,
  };
}

/** The nanoGPT-shaped train step of `config` (AdamW) on `batch` windows of tokens. */
function gpt(id, config, batch) {
  const { blockSize, vocabSize, nLayer, nEmbd, nHead } = config;
  return {
    id, kind: 'gpt', unit: 'steps/s', tolerance: TOL_SUMS, absent: TRAINING_PEERS,
    measure: { warmupMs: TRAINING_WARMUP_MS },
    workload: `GPT train step (nanoGPT, ${nLayer} layers, ${nEmbd} wide, ${nHead} heads, block ${blockSize}, ${vocabSize} tokens), batch ${batch}, AdamW`,
    warmup: 2,
    inputs: () => {
      // Windows of blockSize + 1 tokens: each position's target is the next token.
      const tokens = labels(batch * (blockSize + 1), vocabSize, 62);
      const window = (from) => Int32Array.from({ length: batch * blockSize }, (_, i) => tokens[Math.floor(i / blockSize) * (blockSize + 1) + (i % blockSize) + from]);
      return {
        batch, config, idx: window(0), targets: window(1), weights: gptWeights(config),
        // nanoGPT's config/train_shakespeare_char.py (no gradient clipping here).
        optimizer: { lr: 1e-3, betas: [0.9, 0.99], weightDecay: 0.1 },
      };
    },
    value: (ms) => 1000 / ms,
  };
}

/** A 3×3, stride 1, padding 1 conv2d: batch × cin × size² → batch × cout × size². */
function conv(id, batch, cin, cout, size) {
  const inputShape = [batch, cin, size, size];
  const weightShape = [cout, cin, 3, 3];
  return {
    id, kind: 'conv2d', unit: 'GFLOPS', tolerance: TOL_SUMS,
    workload: `conv2d ${cin}→${cout} ch, ${size}×${size}, 3×3, batch ${batch}`,
    inputs: () => {
      const x = randn(batch * cin * size * size, 30 + cin);
      const w = uniform(cout * cin * 9, 40 + cin, 1 / Math.sqrt(cin * 9));
      return { inputShape, weightShape, padding: 1, x, w, xNhwc: nchwToNhwc(x, inputShape), wHwio: oihwToHwio(w, weightShape) };
    },
    // tfjs computes in NHWC: its output is put back in NCHW for the check.
    output: (out, bench) => (bench.layout === 'NHWC' ? nchwToNhwc(out, [batch, cout, size, size], true) : out),
    value: (ms) => (2 * batch * cout * size * size * cin * 9) / (ms * 1e6),
  };
}

/** The Net's initial weights by PyTorch name: PyTorch's default init, uniform in ±1/√fan_in for weights and biases. */
function netWeights() {
  const layers = [['conv1', 32, 1 * 9], ['conv2', 64, 32 * 9], ['fc1', 128, 9216], ['fc2', 10, 128]];
  return Object.fromEntries(layers.flatMap(([name, out, fanIn], i) => [
    [`${name}.weight`, uniform(out * fanIn, 50 + 2 * i, 1 / Math.sqrt(fanIn))],
    [`${name}.bias`, uniform(out, 51 + 2 * i, 1 / Math.sqrt(fanIn))],
  ]));
}

/**
 * The GPT's initial weights by PyTorch name, as nanoGPT initialises them: N(0, 0.02) for Linear and
 * Embedding weights (N(0, 0.02/√(2·layers)) for the residual projections), zero biases, LayerNorms
 * at ones and zeros; lm_head.weight is transformer.wte.weight.
 */
function gptWeights({ vocabSize, blockSize, nLayer, nEmbd: C }) {
  let seed = 70;
  const normal = (n, std = 0.02) => randn(n, seed++, std);
  const norm = (name) => [[`${name}.weight`, new Float32Array(C).fill(1)], [`${name}.bias`, new Float32Array(C)]];
  const linear = (name, out, inF, std) => [[`${name}.weight`, normal(out * inF, std)], [`${name}.bias`, new Float32Array(out)]];
  const residual = 0.02 / Math.sqrt(2 * nLayer);
  const blocks = Array.from({ length: nLayer }, (_, i) => `transformer.h.${i}`).flatMap((h) => [
    ...norm(`${h}.ln_1`), ...linear(`${h}.attn.c_attn`, 3 * C, C), ...linear(`${h}.attn.c_proj`, C, C, residual),
    ...norm(`${h}.ln_2`), ...linear(`${h}.mlp.c_fc`, 4 * C, C), ...linear(`${h}.mlp.c_proj`, C, 4 * C, residual),
  ]);
  return Object.fromEntries([
    ['transformer.wte.weight', normal(vocabSize * C)],
    ['transformer.wpe.weight', normal(blockSize * C)],
    ...blocks,
    ...norm('transformer.ln_f'),
  ]);
}

// ---- the run ----------------------------------------------------------------------------------------

const libraries = await loadLibraries(['ours', 'ours-compiled', 'ours-bf16', 'tfjs-cpu', 'tfjs-wasm', 'jax-wasm', 'numpy', 'torch'], libs);
const started = performance.now();
const rows = await runWorkloads(WORKLOADS, libraries, { budgetMs });

const listed = librariesOf(libraries);
const report = {
  ...reportHeader('cpu', 'CPU benchmark'),
  method: [
    `fp32 throughout; every library gets the same seeded inputs. Each figure is the median of several timed runs after warm-up (at least 0.5 s of runs; 5 s for the training steps, which a JavaScript library runs slower in its first seconds), with one untimed turn of the event loop between runs (as a program's DataLoader gives: garbage-collected memory is reused) and a 100 ms pause between libraries (so idle worker threads of one don't take cores from the next); the number of runs adapts to a budget of ${budgetMs} ms per library and workload.`,
    'Each timed run ends when the result is computed, as each library requires (below). Higher is better in every unit; a ratio above 1 means ours is faster.',
    `Checks: each peer's result is compared with ours (the output tensor; for a training step, the losses of the first two steps from the same initial weights, run without dropout): relative error = max |peer − ours| / max |ours|, tolerance ${TOL_SUMS} (${TOL_EXACT} for add). A failed check is marked ✗.`,
    `ours: device 'cpu', which uses whatever kernels and threads the installed @core/backend-cpu provides (${availableParallelism()} cores here; its native path and the CPU features it found are listed below). "ours, compiled" runs the same training steps through \`compile()\`; its traces are warm-up, and "compiled / eager" is its figure over ours. "ours, bf16 autocast" computes each training step's loss under \`autocast({ deviceType: 'cpu', dtype: bfloat16 })\`; "bf16 / fp32" is its figure over ours, and its check allows bfloat16's rounding (relative 3e-2).`,
    'The two training programs: pytorch/examples mnist\'s Net as main.py trains it (dropout on after the two checked steps), and a small GPT in nanoGPT\'s shape (dropout 0, no gradient clipping, AdamW as its configure_optimizers sets it up), both from the same seeded weights in every library (test/bench/lib/programs.mjs and their PyTorch twins in test/bench/overhead_torch.py). Ours attends with F.scaledDotProductAttention, as nanoGPT does where the library has it; PyTorch before 2.0 has none, and there nanoGPT\'s masked-softmax path runs.',
    'NumPy and PyTorch run in child Python processes (test/bench/overhead_torch.py) that time their own loops by the same rules; without them installed their columns say so and the rest runs. An empty cell gives the reason in a note: NumPy has no conv2d or autograd, the JavaScript peers have no port of the two training programs.',
  ],
  libraries: listed,
  ratios: listed.filter((l) => l.id !== 'ours').map((l) => (l.id === 'ours-compiled' || l.id === 'ours-bf16'
    ? { numerator: l.id, denominator: 'ours', label: l.id === 'ours-compiled' ? 'compiled / eager' : 'bf16 / fp32' }
    : { numerator: 'ours', denominator: l.id })),
  rows,
};

finishRun(report, { started, partial: (only || libs) && '--only / --libs' });
