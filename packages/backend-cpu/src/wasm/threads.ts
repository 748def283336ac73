// A pool of worker threads that run wasm kernel tasks on the shared memory, the calling thread
// taking part. One job at a time: the caller publishes (kernel, argument block, task count) in a
// control block, workers claim task numbers with compare-and-swap on a counter tagged with the
// job's generation (so a late-waking worker can never run a task of a job that has moved on), and
// the caller returns once every task is done.

import { isNode, nodeModule } from './host.js';

/**
 * Control block layout, in int32 words: 0 job generation (workers wait on it), 1 kernel index,
 * 2 argument block address, 3 task count, 5 tasks finished, 6 park (non-zero: stop spinning and
 * sleep), 7 workers asleep, 16 + t tasks run by thread t (ever);
 * int64 word 4 (bytes 32–39) is the claim counter, generation << 32 | next task, so a claim can
 * only succeed in the job it was read for. The two functions below are shipped to workers as source text, so they use these
 * word numbers literally and refer to nothing outside themselves.
 */
export const CONTROL_BYTES = 128;
/** How long a worker spins for the next job before it sleeps, in milliseconds. */
const SPIN_MS = 2;
/** At most this many threads (the per-thread task counters fill the control block). */
export const MAX_THREADS = 16;

/** Kernels the pool can run: `(thread, task, args)` exports of the module. */
export const KERNEL_NAMES = ['gemm_task', 'elementwise_task', 'reduce_f32_task', 'softmax_f32_task', 'adamw_task', 'adadelta_task', 'rmsprop_task', 'cross_entropy_task', 'transpose32_task', 'axis_task', 'fused_task'] as const;
export type PoolKernel = (typeof KERNEL_NAMES)[number];

type TaskFn = (thread: number, task: number, args: number) => void;

/** Claims and runs tasks of the current job until none is left (the workers' loop body too). */
function runTasks(control: Int32Array, claims: BigInt64Array, fns: readonly TaskFn[], thread: number, generation: number): void {
  const fn = fns[control[1]];
  const args = control[2];
  const tasks = control[3];
  const tag = BigInt(generation) << 32n;
  for (;;) {
    const claim = Atomics.load(claims, 4);
    if (claim - tag >= BigInt(tasks) || claim < tag) return; // every task taken, or a newer job
    if (Atomics.compareExchange(claims, 4, claim, claim + 1n) !== claim) continue;
    fn(thread, Number(claim - tag), args);
    Atomics.add(control, 16 + thread, 1);
    if (Atomics.add(control, 5, 1) + 1 === tasks) Atomics.notify(control, 5);
  }
}

interface WorkerInit {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  controlAddress: number;
  thread: number;
  kernelNames: readonly string[];
  spinMs: number;
}

/** A worker's life: instantiate the module on the shared memory, then run jobs forever. */
function workerMain(init: WorkerInit, run: typeof runTasks): void {
  const instance = new WebAssembly.Instance(init.module, { env: { memory: init.memory } });
  const fns = init.kernelNames.map((name) => instance.exports[name] as TaskFn);
  const control = new Int32Array(init.memory.buffer, init.controlAddress, 32);
  const claims = new BigInt64Array(init.memory.buffer, init.controlAddress, 16);
  let seen = 0;
  for (;;) {
    // Spin for up to spinMs (2 ms) before sleeping (as OpenMP runtimes do), so the kernels of a training
    // step, which come a few microseconds apart, start without a futex wake-up each; unless the
    // caller parks the pool, as it does before native kernels, whose threads need these cores.
    let generation = Atomics.load(control, 0);
    const until = performance.now() + init.spinMs;
    for (let spin = 0; generation === seen; spin++) {
      generation = Atomics.load(control, 0);
      if (Atomics.load(control, 6) !== 0 || ((spin & 1023) === 1023 && performance.now() > until)) break;
    }
    if (generation === seen) {
      Atomics.add(control, 7, 1);
      Atomics.wait(control, 0, seen);
      Atomics.sub(control, 7, 1);
      generation = Atomics.load(control, 0);
    }
    seen = generation;
    run(control, claims, fns, init.thread, generation);
  }
}

const WORKER_BODY = `const runTasks = ${runTasks.toString()};
const workerMain = ${workerMain.toString()};`;
const NODE_BOOT = `${WORKER_BODY}
require('node:worker_threads').parentPort.once('message', (init) => workerMain(init, runTasks));`;
const BROWSER_BOOT = `${WORKER_BODY}
self.onmessage = (event) => workerMain(event.data, runTasks);`;

interface WorkerLike {
  postMessage(message: unknown): void;
  unref?(): void;
}

type NodeWorkerThreads = { Worker: new (source: string, options: { eval: true }) => WorkerLike };

function nodeWorkerThreads(): NodeWorkerThreads | undefined {
  return nodeModule<NodeWorkerThreads>('node:worker_threads');
}

function workersAvailable(): boolean {
  return nodeWorkerThreads() !== undefined || (typeof (globalThis as { Worker?: unknown }).Worker === 'function' && typeof Blob !== 'undefined');
}

function startWorker(): WorkerLike | null {
  const nodeThreads = nodeWorkerThreads();
  if (nodeThreads) {
    const worker = new nodeThreads.Worker(NODE_BOOT, { eval: true });
    worker.unref?.(); // idle kernel threads must not keep the process alive
    return worker;
  }
  const BrowserWorker = (globalThis as { Worker?: new (url: string) => WorkerLike }).Worker;
  if (BrowserWorker && typeof Blob !== 'undefined' && typeof URL?.createObjectURL === 'function') {
    return new BrowserWorker(URL.createObjectURL(new Blob([BROWSER_BOOT], { type: 'text/javascript' })));
  }
  return null;
}

/** Whether this thread may block in Atomics.wait (Node's main thread may; a browser's may not). */
function canBlock(): boolean {
  return isNode() || typeof (globalThis as { document?: unknown }).document === 'undefined';
}

export class ThreadPool {
  /** Threads that run tasks, the calling thread included (workers start on the first parallel job). */
  readonly threads: number;
  private readonly control: Int32Array;
  private readonly claims: BigInt64Array;
  private readonly fns: TaskFn[];
  private readonly blocking = canBlock();
  private generation = 0;
  private started = false;
  /** Whether workers may be spinning after a job (cleared by `park`). */
  private spinning = false;

  constructor(
    private readonly module: WebAssembly.Module,
    private readonly memory: WebAssembly.Memory,
    exports: WebAssembly.Exports,
    private readonly controlAddress: number,
    threads: number,
    /** How long a worker spins for the next job before it sleeps. */
    private readonly spinMs = SPIN_MS,
  ) {
    this.control = new Int32Array(memory.buffer, controlAddress, CONTROL_BYTES / 4);
    this.claims = new BigInt64Array(memory.buffer, controlAddress, CONTROL_BYTES / 8);
    this.fns = KERNEL_NAMES.map((name) => exports[name] as TaskFn);
    this.threads = threads > 1 && workersAvailable() ? Math.min(threads, MAX_THREADS) : 1;
  }

  /** Starts the workers; until each has instantiated the module, the others take its tasks. */
  private start(): void {
    this.started = true;
    for (let thread = 1; thread < this.threads; thread++) {
      const worker = startWorker();
      if (!worker) throw new Error('cpu wasm: a worker thread could not be started');
      const init: WorkerInit = { module: this.module, memory: this.memory, controlAddress: this.controlAddress, thread, kernelNames: KERNEL_NAMES, spinMs: this.spinMs };
      worker.postMessage(init);
    }
  }

  /** Tasks each thread has run in parallel jobs so far (thread 0 is the caller's). */
  tasksRun(): number[] {
    // One thread never runs parallel jobs (and its plain memory may have moved when it grew).
    if (this.threads === 1) return [0];
    return Array.from({ length: this.threads }, (_, t) => Atomics.load(this.control, 16 + t));
  }

  /**
   * Sends workers spinning after the last job to sleep at once: the caller is about to run work of
   * its own threads (the native kernels), and a spinning worker would take a core from them.
   */
  park(): void {
    if (!this.spinning) return;
    this.spinning = false;
    Atomics.store(this.control, 6, 1);
  }

  /** Workers asleep now (the others spin or run tasks, or have not started). */
  sleeping(): number {
    return this.threads === 1 ? 0 : Atomics.load(this.control, 7);
  }

  /** Runs tasks 0 … tasks−1 of `kernel` over the pool (on this thread alone when `threads` is 1) and returns when all are done. */
  run(kernel: PoolKernel, args: number, tasks: number, threads = this.threads): void {
    this.runIndex(KERNEL_NAMES.indexOf(kernel), args, tasks, threads);
  }

  /** `run` with the kernel as its index in KERNEL_NAMES (prepared programs keep indices). */
  runIndex(index: number, args: number, tasks: number, threads: number): void {
    if (this.threads === 1 || tasks === 1 || threads === 1) {
      const fn = this.fns[index];
      for (let task = 0; task < tasks; task++) fn(0, task, args);
      return;
    }
    if (!this.started) this.start();
    const control = this.control;
    // Generations count up from 1 and wrap within int32 (the workers' `seen` starts at 0).
    const generation = (this.generation = (this.generation % 0x7fffffff) + 1);
    control[1] = index;
    control[2] = args;
    control[3] = tasks;
    if (!this.spinning) {
      this.spinning = true;
      Atomics.store(control, 6, 0);
    }
    Atomics.store(control, 5, 0);
    Atomics.store(this.claims, 4, BigInt(generation) << 32n);
    Atomics.store(control, 0, generation);
    Atomics.notify(control, 0);
    runTasks(control, this.claims, this.fns, 0, generation);
    for (let done = Atomics.load(control, 5), spin = 0; done < tasks; done = Atomics.load(control, 5), spin++) {
      if (this.blocking && spin > 1000) Atomics.wait(control, 5, done, 1);
    }
  }
}
