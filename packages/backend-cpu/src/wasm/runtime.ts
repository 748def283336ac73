// The WebAssembly side of the CPU backend: the memory that holds tensors (WasmHeap), the compiled
// kernels module, and the thread pool. The heap exists from the start; the module is compiled
// synchronously in Node and asynchronously in browsers (Chrome refuses synchronous compiles of
// large modules on the main thread), and until it is ready the TypeScript kernels run instead.
import { SHARED_MODULE_BASE64, SHARED_RELAXED_MODULE_BASE64, SINGLE_MODULE_BASE64, SINGLE_RELAXED_MODULE_BASE64 } from './binary.js';
import { RESERVED_BYTES, WasmHeap } from './heap.js';
import { defaultThreads, env, isNode, nodeModule } from './host.js';
import { CONTROL_BYTES, KERNEL_NAMES, type PoolKernel, ThreadPool } from './threads.js';
import { binding } from '../bind.js';

/** 4 GiB: all a wasm32 memory can address. */
const MAX_PAGES = 65536;
/** Smaller reservations for engines that refuse 4 GiB of shared address space (32-bit hosts). */
const FALLBACK_MAX_PAGES = [16384, 4096];
const INITIAL_PAGES = 16; // 1 MiB; the heap grows as tensors arrive
/** Bytes per argument block; each kernel call writes one (calls never overlap). */
export const ARGS_BYTES = 256;

export interface WasmRuntimeOptions {
  /** Threads for large kernels, this one included; default: CORE_CPU_THREADS, else the machine's cores (at most 8). */
  readonly threads?: number;
  /** false: a plain memory and one thread, as in pages without cross-origin isolation. */
  readonly sharedMemory?: boolean;
  /** How long a worker spins for the next job before it sleeps (default 2 ms; tests lengthen it). */
  readonly spinMs?: number;
}

function decode(base64: string): Uint8Array {
  if (typeof atob === 'function') return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  throw new Error('cpu wasm: no base64 decoder (atob) in this environment');
}

/**
 * Whether this engine runs relaxed SIMD (f32x4.relaxed_madd: one fused multiply-add where the CPU
 * has FMA), detected by validating the relaxed module. Node 20's V8 has it behind
 * --experimental-wasm-relaxed-simd (on by default from V8 11.4, i.e. Node 22 and current
 * browsers), so on Node the flag is switched on first; CORE_CPU_RELAXED_SIMD=0 opts out of both.
 */
function relaxedSimd(relaxedBytes: Uint8Array): boolean {
  if (env('CORE_CPU_RELAXED_SIMD') === '0') return false;
  if (WebAssembly.validate(relaxedBytes as BufferSource)) return true;
  const v8 = nodeModule<{ setFlagsFromString?: (flags: string) => void }>('node:v8');
  if (!v8?.setFlagsFromString) return false;
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  return WebAssembly.validate(relaxedBytes as BufferSource);
}

/** A shared memory when the engine allows one (SharedArrayBuffer: Node, cross-origin-isolated pages), else a plain one. */
function createMemory(wantShared: boolean): { memory: WebAssembly.Memory; shared: boolean; maxPages: number } {
  if (wantShared && typeof SharedArrayBuffer === 'function') {
    for (const maxPages of [MAX_PAGES, ...FALLBACK_MAX_PAGES]) {
      try {
        return { memory: new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: maxPages, shared: true }), shared: true, maxPages };
      } catch {
        // try a smaller reservation
      }
    }
  }
  return { memory: new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAX_PAGES }), shared: false, maxPages: MAX_PAGES };
}

/** Views of the memory that follow it when a plain (non-shared) memory grows and detaches its buffer. */
export class MemoryViews {
  private buffer: ArrayBuffer | SharedArrayBuffer | null = null;
  private f32v = new Float32Array(0);
  private i32v = new Int32Array(0);
  constructor(private readonly memory: WebAssembly.Memory) {}
  private refresh(): void {
    const buffer = this.memory.buffer;
    if (buffer !== this.buffer) {
      this.buffer = buffer;
      this.f32v = new Float32Array(buffer);
      this.i32v = new Int32Array(buffer);
    }
  }
  get f32(): Float32Array {
    this.refresh();
    return this.f32v;
  }
  get i32(): Int32Array {
    this.refresh();
    return this.i32v;
  }
}

export class WasmRuntime {
  readonly heap: WasmHeap;
  readonly views: MemoryViews;
  /** Set once the kernels module is instantiated. */
  private kernels: { exports: WebAssembly.Exports; pool: ThreadPool; scratch: number; scratchBytes: number; args: number } | null = null;
  /** Why the kernels are not running, when they are not. */
  failure: string | null = null;
  /** Resolves when the kernels module is ready (or has failed, see `failure`). */
  readonly ready: Promise<void>;
  /** Whether the module uses relaxed SIMD (fused multiply-adds in matmul). */
  readonly relaxedSimd: boolean;

  constructor(options: WasmRuntimeOptions = {}) {
    const { memory, shared, maxPages } = createMemory(options.sharedMemory ?? true);
    this.heap = new WasmHeap(memory, shared, maxPages);
    this.views = new MemoryViews(memory);
    const threads = shared ? Math.max(1, Math.floor(options.threads ?? defaultThreads(8))) : 1;
    const relaxedBytes = decode(shared ? SHARED_RELAXED_MODULE_BASE64 : SINGLE_RELAXED_MODULE_BASE64);
    this.relaxedSimd = relaxedSimd(relaxedBytes);
    const bytes = this.relaxedSimd ? relaxedBytes : decode(shared ? SHARED_MODULE_BASE64 : SINGLE_MODULE_BASE64);
    const start = (module: WebAssembly.Module): void => {
      try {
        this.instantiate(module, threads, options.spinMs);
      } catch (error) {
        this.failure = `the kernels module did not start: ${(error as Error).message}`;
      }
    };
    if (isNode()) {
      let module: WebAssembly.Module | null = null;
      try {
        module = new WebAssembly.Module(bytes as BufferSource);
      } catch (error) {
        this.failure = `the kernels module did not compile (does this engine have WebAssembly SIMD?): ${(error as Error).message}`;
      }
      if (module) start(module);
      this.ready = Promise.resolve();
    } else {
      this.ready = WebAssembly.compile(bytes as BufferSource).then(start, (error: Error) => {
        this.failure = `the kernels module did not compile: ${error.message}`;
      });
    }
  }

  private instantiate(module: WebAssembly.Module, threads: number, spinMs: number | undefined): void {
    const memory = this.heap.memory;
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const exports = instance.exports;
    // The module's static data ends at __heap_base: it must lie in the reserved bottom of the memory.
    const heapBase = (exports.__heap_base as WebAssembly.Global | undefined)?.value as number | undefined;
    if (heapBase === undefined || heapBase > RESERVED_BYTES) {
      throw new Error(`its static data ends at ${heapBase ?? 'an unknown address'}, above the ${RESERVED_BYTES} bytes the heap leaves it`);
    }
    const scratchBytes = (exports.gemm_scratch_bytes as () => number)();
    const control = this.heap.alloc(CONTROL_BYTES);
    const args = this.heap.alloc(ARGS_BYTES);
    if (control < 0 || args < 0) throw new Error('no memory for the control block');
    this.views.i32.fill(0, control >> 2, (control + CONTROL_BYTES) >> 2);
    const pool = new ThreadPool(module, memory, exports, control, threads, spinMs);
    const scratch = this.heap.alloc(scratchBytes * pool.threads);
    if (scratch < 0) throw new Error('no memory for thread scratch');
    this.kernels = { exports, pool, scratch, scratchBytes, args };
  }

  /** True when the wasm kernels can run now. */
  get active(): boolean {
    return this.kernels !== null;
  }

  /** Threads that run large kernels (1 until the module is ready). */
  get threads(): number {
    return this.kernels?.pool.threads ?? 1;
  }

  /** Tasks each thread has run in parallel jobs so far (thread 0 is the caller's). */
  tasksRun(): number[] {
    return this.kernels?.pool.tasksRun() ?? [];
  }

  /** Per-thread scratch: base address and bytes per thread. */
  get scratch(): { base: number; bytes: number } {
    const k = this.need();
    return { base: k.scratch, bytes: k.scratchBytes };
  }

  /** The argument block's address (int32 words written through `views.i32`). */
  get args(): number {
    return this.need().args;
  }

  /** A constant the module reports (e.g. gemm tile limits). */
  call(name: string, ...values: number[]): number {
    return (this.need().exports[name] as (...v: number[]) => number)(...values);
  }

  /**
   * Runs `tasks` tasks of a kernel over the thread pool, or all on this thread when there is one
   * task or the caller chose one thread (a small GEMM split in tiles: waking a worker costs more).
   */
  run(kernel: PoolKernel, tasks: number, threads = this.threads): void {
    const k = this.need();
    const record = binding.record;
    if (record !== null) {
      // A prepared program binds this call: note the task instead of running it (bind.ts).
      record.runs++;
      record.kernel = KERNEL_NAMES.indexOf(kernel);
      record.tasks = tasks;
      record.threads = threads;
      record.args = k.args;
      return;
    }
    k.pool.run(kernel, k.args, tasks, threads);
  }

  /** Sends the pool's spinning workers to sleep (before the native kernels run on their own threads). */
  park(): void {
    this.kernels?.pool.park();
  }

  /** Workers asleep now. */
  sleepingWorkers(): number {
    return this.kernels?.pool.sleeping() ?? 0;
  }

  /** Runs a kernel (its KERNEL_NAMES index) on an argument block of the caller's, e.g. a prepared program's. */
  runAt(kernel: number, args: number, tasks: number, threads: number): void {
    this.need().pool.runIndex(kernel, args, tasks, threads);
  }

  private need(): NonNullable<WasmRuntime['kernels']> {
    if (!this.kernels) throw new Error(`cpu wasm: kernels are not ready${this.failure ? ` (${this.failure})` : ''}`);
    return this.kernels;
  }
}
