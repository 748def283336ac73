// Prepared programs (Backend.prepare) of the cpu backend: bound calls. At prepare each call runs once
// with a bind record set (bind.ts): a call that ends in one wasm task is bound, its argument block
// copied into a block of the program's own in the wasm heap, and a run hands that block straight to
// the thread pool — no shape checks, stride collapsing, tile choice or argument packing again, and
// nothing allocated. A call that reads a host array (a TypeScript or native kernel), takes heap
// temporaries or runs several tasks is made as a call at every run. Heap addresses never move (a
// plain memory that grows detaches its buffer, not its addresses), so a bound block stays valid for
// as long as the storages it addresses are allocated: run() checks that they are. A varying call
// binds again at each run, and one that no longer ends in one wasm task is made as a call that
// time, so run() never has to refuse (return false). Consecutive bound elementwise calls over one
// element count run as one fused task (wasm/fusion.ts), which skips the stores PrepareOptions.deadAfter
// says nobody reads.
import type { PrepareOptions, PreparedCall, PreparedProgram } from '@core/tensor';
import { binding, HostAccess, newRecord, type BindRecord } from './bind.js';
import type { CpuStorage } from './storage.js';
import { canJoin, chainWords, decodeElt, join, newChain, writeChain, type Chain } from './wasm/fusion.js';
import { ARGS_BYTES, type WasmRuntime } from './wasm/runtime.js';
import { KERNEL_NAMES } from './wasm/threads.js';

/** What a call does at a run. */
const NONE = 0; // nothing (its tensors are empty)
const TASK = 1; // its bound wasm task
const CALL = 2; // the call itself

const ARGS_WORDS = ARGS_BYTES / 4;
const ELEMENTWISE = KERNEL_NAMES.indexOf('elementwise_task');
const FUSED = KERNEL_NAMES.indexOf('fused_task');

/**
 * The chains of two or more consecutive calls that can run as one fused task: bound elementwise
 * calls that do not vary (an empty call between them does nothing, so it does not end a chain).
 */
function findChains(calls: readonly PreparedCall[], kinds: Uint8Array, records: readonly (BindRecord | null)[], snapshots: readonly (Int32Array | null)[]): Chain[] {
  const chains: Chain[] = [];
  let chain: Chain | null = null;
  const close = (): void => {
    if (chain !== null && chain.calls.length > 1) chains.push(chain);
    chain = null;
  };
  for (let i = 0; i < calls.length; i++) {
    if (calls[i]!.varies) {
      close();
      continue;
    }
    if (kinds[i] === NONE) continue;
    const record = records[i]!;
    const elt = kinds[i] === TASK && record.kernel === ELEMENTWISE ? decodeElt(i, snapshots[i]!, record.storages, record.tasks, record.threads) : null;
    if (elt === null) close();
    else if (chain !== null && canJoin(chain, elt)) join(chain, elt);
    else {
      close();
      chain = newChain(elt);
    }
  }
  close();
  return chains;
}

/** Binds `run` once into `record` (cleared first): the record, or null when the call read a host array. Nothing runs either way. */
function bind(run: () => void, record: BindRecord = newRecord()): BindRecord | null {
  record.storages.length = 0;
  record.runs = 0;
  record.allocations = 0;
  binding.record = record;
  try {
    run();
  } catch (e) {
    if (e instanceof HostAccess) return null;
    throw e;
  } finally {
    binding.record = null;
  }
  return record;
}

/** What a bind record says the call does at a run. */
function kindOf(record: BindRecord | null): number {
  if (record === null || record.allocations > 0 || record.runs > 1) return CALL;
  return record.runs === 0 ? NONE : TASK;
}

function checkLive(storages: Iterable<CpuStorage>): void {
  for (const s of storages) {
    if (s.freed) {
      throw new Error(`cpu: a prepared program uses a ${s.dtype} storage of ${s.numel} elements that has been freed; keep the tensors its calls use alive, or compile the function again`);
    }
  }
}

export class CpuPreparedProgram implements PreparedProgram {
  readonly description: string;
  private readonly runs: (() => void)[];
  /** Per call: NONE, TASK or CALL for the next run. */
  private readonly kinds: Uint8Array;
  private readonly kernels: Int32Array;
  private readonly tasks: Int32Array;
  private readonly threads: Int32Array;
  /** Per call: its argument block's byte address in the heap, or -1. */
  private readonly blocks: Int32Array;
  /** The calls that vary and have a block: bound anew at every run. */
  private readonly rebound: Int32Array;
  /** The storages the bound calls that do not vary address. */
  private readonly storages: readonly CpuStorage[];
  private block = -1;
  private blockBytes = 0;
  /** The record varying calls bind into at each run (a run allocates nothing). */
  private readonly record = newRecord();
  private released = false;

  constructor(private readonly rt: WasmRuntime, calls: readonly PreparedCall[], options: PrepareOptions<CpuStorage> = {}) {
    const n = calls.length;
    this.runs = calls.map((c) => c.run);
    this.kinds = new Uint8Array(n);
    this.kernels = new Int32Array(n);
    this.tasks = new Int32Array(n);
    this.threads = new Int32Array(n);
    this.blocks = new Int32Array(n).fill(-1);
    // Every bound call's arguments pass through the runtime's one block: each is copied out at once.
    const snapshots: (Int32Array | null)[] = [];
    const records = calls.map((c) => {
      const record = bind(c.run);
      const at = record === null ? 0 : record.args >> 2;
      snapshots.push(kindOf(record) === TASK ? rt.views.i32.slice(at, at + ARGS_WORDS) : null);
      return record;
    });
    const storages = new Set<CpuStorage>();
    const withBlock: number[] = [];
    const rebound: number[] = [];
    records.forEach((record, i) => {
      const kind = kindOf(record);
      this.kinds[i] = kind;
      if (kind === CALL) return;
      // A varying call gets a block even when empty now: its next arguments may need one.
      if (calls[i]!.varies) rebound.push(i);
      else if (kind === NONE) return;
      else for (const s of record!.storages) storages.add(s);
      withBlock.push(i);
    });
    this.rebound = Int32Array.from(rebound);
    this.storages = [...storages];
    checkLive(this.storages);
    const bound = this.count(TASK);
    // Fused chains: the first call runs the chain's fused task, the others nothing.
    const chains = findChains(calls, this.kinds, records, snapshots);
    const fused = new Set<number>();
    for (const chain of chains) for (const c of chain.calls) fused.add(c.index);
    const plain = withBlock.filter((i) => !fused.has(i));
    const chainBytes = chains.map((chain) => Math.ceil((chainWords(chain) * 4) / 64) * 64);
    this.blockBytes = plain.length * ARGS_BYTES + chainBytes.reduce((sum, b) => sum + b, 0);
    if (this.blockBytes > 0) {
      this.block = rt.heap.alloc(this.blockBytes);
      if (this.block < 0) throw new Error(`cpu prepare: the wasm heap has no room for ${this.blockBytes} bytes of argument blocks`);
    }
    // Views after the allocation: a plain memory that grew has a new buffer.
    const words = rt.views.i32;
    plain.forEach((i, k) => {
      const block = (this.blocks[i] = this.block + k * ARGS_BYTES);
      if (this.kinds[i] !== TASK) return;
      words.set(snapshots[i]!, block >> 2);
      this.task(i, records[i]!);
    });
    const deadAfter = options.deadAfter;
    const deadSets = deadAfter?.map((list) => new Set(list));
    const dead = (storage: CpuStorage, from: number, to: number): boolean => {
      if (deadSets === undefined) return false;
      for (let e = from; e <= to; e++) if (deadSets[e]?.has(storage)) return true;
      return false;
    };
    let at = this.block + plain.length * ARGS_BYTES;
    chains.forEach((chain, k) => {
      const head = chain.calls[0]!;
      writeChain(chain, words, at >> 2, rt.scratch, dead);
      for (const c of chain.calls) this.kinds[c.index] = NONE;
      this.kinds[head.index] = TASK;
      this.blocks[head.index] = at;
      this.kernels[head.index] = FUSED;
      this.tasks[head.index] = head.tasks;
      this.threads[head.index] = head.threads;
      at += chainBytes[k]!;
    });
    const runs = this.count(TASK);
    const made = this.count(CALL);
    this.description = chains.length === 0
      ? `cpu: ${n} calls, ${bound} bound to wasm tasks, ${made} made as calls`
      : `cpu: ${n} calls, ${bound} bound to wasm tasks in ${runs} run${runs === 1 ? '' : 's'} (${chains.length} fused chain${chains.length === 1 ? '' : 's'}), ${made} made as calls`;
  }

  private count(kind: number): number {
    return this.kinds.reduce((sum, k) => sum + (k === kind ? 1 : 0), 0);
  }

  /** Notes a bound call's task. */
  private task(i: number, record: BindRecord): void {
    this.kernels[i] = record.kernel;
    this.tasks[i] = record.tasks;
    this.threads[i] = record.threads;
  }

  run(): boolean {
    if (this.released) throw new Error('cpu: a prepared program was run after release()');
    checkLive(this.storages);
    const { rt, kinds } = this;
    // Varying calls bind again for their new arguments (one that now reads a host array is made as a call this time).
    for (let k = 0; k < this.rebound.length; k++) {
      const i = this.rebound[k]!;
      const record = bind(this.runs[i]!, this.record);
      const kind = kindOf(record);
      kinds[i] = kind;
      if (kind !== TASK) continue;
      checkLive(record!.storages);
      // Its arguments are still in the runtime's block: into its own.
      const from = record!.args >> 2;
      rt.views.i32.copyWithin(this.blocks[i]! >> 2, from, from + ARGS_WORDS);
      this.task(i, record!);
    }
    const n = kinds.length;
    for (let i = 0; i < n; i++) {
      const kind = kinds[i];
      if (kind === TASK) rt.runAt(this.kernels[i]!, this.blocks[i]!, this.tasks[i]!, this.threads[i]!);
      else if (kind === CALL) this.runs[i]!();
    }
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.block >= 0) this.rt.heap.free(this.block, this.blockBytes);
    this.block = -1;
  }
}
