// Python peers on the CPU: PyTorch eager and NumPy, each in a Python child process
// (test/bench/overhead_torch.py) that times each workload itself and answers in JSON, so only the
// machine and the inputs are shared with the JavaScript libraries. Each loads only where a python3
// can import it (Debian: apt-get install python3-torch / python3-numpy; PYTHON=/path/to/python
// picks the interpreter); elsewhere its column says why and the bench goes on without it.
// Threads: availableParallelism(), the cores ours and jax-js use (torch.set_num_threads; NumPy's
// BLAS through OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS).
// Completion: eager CPU ops return once computed; a result is freed when the next replaces it.
// Float32 arrays travel as base64 of their bytes (a 2048² matrix is 16 MiB, too much as a JSON list).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MEASURE_DEFAULTS } from '../measure.mjs';

const SCRIPT = fileURLToPath(new URL('../../overhead_torch.py', import.meta.url));

/**
 * The interpreters tried, in order: $PYTHON alone when set; else `python3` on the PATH, then the
 * system's /usr/bin/python3, which Debian's python3-torch installs into (a pyenv or venv python3
 * on the PATH does not see it).
 */
const PYTHONS = process.env.PYTHON ? [process.env.PYTHON] : ['python3', '/usr/bin/python3'];

/** Float32Arrays as { f32: base64 }, other typed arrays as lists. */
function encode(key, value) {
  if (value instanceof Float32Array) return { f32: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  return ArrayBuffer.isView(value) ? Array.from(value) : value;
}

function decode(output) {
  const bytes = Buffer.from(output.f32, 'base64');
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();
}

/** A peer run by overhead_torch.py with `module` (torch or numpy), offering the workload `kinds`. */
function pythonPeer({ id, label, module, kinds, lacks, threadsNote }) {
  let child = null;
  let replies = null;

  /** The next JSON line the child prints (it prints one per request, one at start). */
  async function reply() {
    const { value, done } = await replies.next();
    if (done) throw new Error(`${SCRIPT} exited`);
    const json = JSON.parse(value);
    if (json.error) throw new Error(json.error);
    return json;
  }

  /** Starts the child on `python`; resolves with its first line once the module is imported, or throws why not. */
  async function start(python, threads) {
    const env = { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) };
    child = spawn(python, [SCRIPT, String(threads), module], { stdio: ['pipe', 'pipe', 'inherit'], env });
    const failed = once(child, 'error').then(([err]) => { throw new Error(`did not start (${err.code ?? err.message})`); });
    replies = createInterface({ input: child.stdout, crlfDelay: Infinity })[Symbol.asyncIterator]();
    const started = reply();
    // Whichever loses the race must not end the process as an unhandled rejection.
    failed.catch(() => {});
    started.catch(() => {});
    try {
      return await Promise.race([started, failed]);
    } catch (err) {
      child.kill();
      throw err;
    }
  }

  /** One workload, timed in the child: the bench brings its `measured` time and the output of a call. */
  async function timed(kind, data, { calls = 1, measure = {} } = {}) {
    // big.add(big) sends its one tensor once.
    const sent = JSON.stringify({ ...data, ...(data.b === data.a ? { b: undefined } : {}) }, encode);
    const options = { ...MEASURE_DEFAULTS, ...measure };
    child.stdin.write(`{"kind":${JSON.stringify(kind)},"data":${sent},"calls":${calls},"measure":${JSON.stringify(options)}}\n`);
    const { ms, reps, output } = await reply();
    return { measured: { ms, reps }, output: () => decode(output) };
  }

  return {
    id,
    label,
    package: module,
    version: null,
    threads: null,
    completion: `the call itself (${module} CPU ops return once computed); timed in Python by test/bench/overhead_torch.py`,
    notes: [],
    lacks,
    async init() {
      const threads = availableParallelism();
      const failures = [];
      for (const python of PYTHONS) {
        try {
          const hello = await start(python, threads);
          this.version = hello.version;
          this.threads = hello.threads;
          this.notes.push(`${python} (Python ${hello.python}); ${threadsNote(threads)}`);
          return;
        } catch (err) {
          failures.push(`${python}: ${err.message}`);
        }
      }
      throw new Error(`no python3 here imports ${module}, ${label} skipped (${failures.join('; ')})`);
    },
    ...Object.fromEntries(kinds.map((kind) => [kind, (data, options) => timed(kind, data, options)])),
  };
}

export const torch = pythonPeer({
  id: 'torch',
  label: 'PyTorch',
  module: 'torch',
  kinds: ['add', 'matmul', 'mulSumBackward', 'conv2d', 'softmaxCrossEntropy', 'mlp', 'mnistNet', 'gpt'],
  threadsNote: (threads) => `torch.set_num_threads(${threads}), the threads ours and jax-js use here`,
});

/** NumPy has no conv2d or autograd: its column has matmul, add and softmax + cross-entropy only. */
export const numpy = pythonPeer({
  id: 'numpy',
  label: 'NumPy',
  module: 'numpy',
  kinds: ['add', 'matmul', 'softmaxCrossEntropy', 'mlp'],
  lacks: (kind) => (kind === 'conv2d' ? 'NumPy has no conv2d' : 'NumPy has no autograd'),
  threadsNote: (threads) => `BLAS threads ${threads} (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), the threads ours and jax-js use here`,
});
