// PyTorch, eager, on the CPU: a Python child process (test/bench/overhead_torch.py) that times each
// workload itself and answers in JSON, so only the machine and the inputs are shared with the
// JavaScript libraries. Loads only where a python3 can import torch (Debian: apt-get install
// python3-torch; PYTHON=/path/to/python picks the interpreter); elsewhere the column says why and
// the bench goes on without it.
// Threads: torch.set_num_threads(availableParallelism()), the cores ours and jax-js use.
// Completion: eager CPU ops return once computed; a result is freed when the next replaces it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MEASURE_DEFAULTS } from '../measure.mjs';

const SCRIPT = fileURLToPath(new URL('../../overhead_torch.py', import.meta.url));

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

/**
 * The interpreters tried, in order: $PYTHON alone when set; else `python3` on the PATH, then the
 * system's /usr/bin/python3, which Debian's python3-torch installs into (a pyenv or venv python3
 * on the PATH does not see it).
 */
const PYTHONS = process.env.PYTHON ? [process.env.PYTHON] : ['python3', '/usr/bin/python3'];

/** Starts the child on `python`; resolves with its first line once torch is imported, or throws why not. */
async function start(python, threads) {
  child = spawn(python, [SCRIPT, String(threads)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const failed = once(child, 'error').then(([err]) => { throw new Error(`did not start (${err.code ?? err.message})`); });
  replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
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
  // Typed arrays as plain lists; big.add(big) sends its one tensor once.
  const sent = JSON.stringify({ ...data, ...(data.b === data.a ? { b: undefined } : {}) }, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v));
  const options = { ...MEASURE_DEFAULTS, ...measure };
  child.stdin.write(`{"kind":${JSON.stringify(kind)},"data":${sent},"calls":${calls},"measure":${JSON.stringify(options)}}\n`);
  const { ms, reps, output } = await reply();
  return { measured: { ms, reps }, output: () => Float32Array.from(output) };
}

export const torch = {
  id: 'torch',
  label: 'PyTorch',
  package: 'torch',
  version: null,
  threads: null,
  completion: 'the call itself (eager CPU ops return once computed); timed in Python by test/bench/overhead_torch.py',
  notes: [],
  async init() {
    const threads = availableParallelism();
    const failures = [];
    for (const python of PYTHONS) {
      try {
        const hello = await start(python, threads);
        this.version = hello.version;
        this.threads = hello.threads;
        this.notes.push(`${python} (Python ${hello.python}); torch.set_num_threads(${threads}), the threads ours and jax-js use here`);
        return;
      } catch (err) {
        failures.push(`${python}: ${err.message}`);
      }
    }
    throw new Error(`no python3 here imports torch, PyTorch skipped (${failures.join('; ')})`);
  },
  add: (data, options) => timed('add', data, options),
  matmul: (data, options) => timed('matmul', data, options),
  mulSumBackward: (data, options) => timed('mulSumBackward', data, options),
};
