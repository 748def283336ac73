// What a prepared program (prepared.ts) learns while it binds one call: the call runs with `binding.record`
// set, the wasm runtime notes the task it would run instead of running it, `addressOf` notes the
// storages whose addresses went into the argument block, and a storage's host array refuses to be
// read (HostAccess), so a TypeScript or native kernel stops before it touches any element.
import type { CpuStorage } from './storage.js';

/** One call's binding: the wasm tasks it asked for (the last one's arguments kept) and the storages they address. */
export interface BindRecord {
  /** Storages whose heap addresses the call put into an argument block. */
  readonly storages: CpuStorage[];
  /** Tasks runs asked for (a bound call has exactly one). */
  runs: number;
  /** The last run's kernel (index into threads.ts KERNEL_NAMES), task count and threads. */
  kernel: number;
  tasks: number;
  threads: number;
  /** Heap allocations made while binding (a call that needs temporaries cannot be bound). */
  allocations: number;
  /** Byte address of the argument block the last run read. */
  args: number;
}

/** The record of the call being bound, or null (the common case: kernels run). */
export const binding: { record: BindRecord | null } = { record: null };

/** Thrown by a storage's host array while a call is bound: that call is made, not bound. */
export class HostAccess extends Error {
  constructor() {
    super('cpu: a kernel read a host array while a prepared program bound its call');
  }
}

export function newRecord(): BindRecord {
  return { storages: [], runs: 0, kernel: -1, tasks: 0, threads: 0, allocations: 0, args: 0 };
}
