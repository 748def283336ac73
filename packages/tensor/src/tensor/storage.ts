// A device allocation shared by a tensor and its views. Freed when the last tensor over it is
// disposed, or when the garbage collector finds it unreachable (reclaim.ts says when that runs).
import type { Backend } from '../backend/contract.js';
import type { DType } from '../dtype/dtype.js';
import type { Device } from '../device/device.js';
import { RECORDED, type RecordedAllocation } from '../compile/state.js';
import { accountedBytes, beforeAllocate, track, untrack, type Held } from './reclaim.js';

let allocations = 0;

/** @internal The serial number the next storage will get: storages made from now on have one at least as large. */
export function nextStorageSerial(): number {
  return allocations + 1;
}

export class Storage {
  private users = 0;
  /** @internal Order of creation: which storages an autograd pass made itself. */
  readonly serial = ++allocations;
  private freed = false;
  /** Bumped by every in-place write; autograd checks saved tensors against it. Shared by views. */
  version = 0;
  private readonly held: Held;
  /** The backend that allocated it (never a compiled function's recording proxy). */
  readonly backend: Backend<unknown>;

  constructor(
    backend: Backend<unknown>,
    readonly handle: unknown,
    readonly device: Device,
    readonly dtype: DType,
    readonly numel: number,
    /** Page-locked host memory (CPU storages only): see `Tensor.pinMemory()`. */
    readonly pinned: boolean = false,
  ) {
    // Allocated by a compiled function's recording proxy: keep its real backend and free through
    // what the recording defers frees with, never the proxy (see RECORDED).
    const recorded = (backend as { [RECORDED]?: RecordedAllocation })[RECORDED];
    this.backend = recorded?.backend ?? backend;
    // The registry's record must not reach this Storage, or it would never be collected.
    this.held = { backend: recorded ?? backend, handle, bytes: accountedBytes(numel * dtype.itemsize), freed: false };
    track(this, this.held);
  }

  static allocate(backend: Backend<unknown>, device: Device, dtype: DType, numel: number, pinned = false): Storage {
    beforeAllocate(accountedBytes(numel * dtype.itemsize));
    return new Storage(backend, backend.alloc(device.index ?? 0, dtype.name, numel), device, dtype, numel, pinned);
  }

  /** @internal Record an in-place write. */
  bumpVersion(): void {
    this.version++;
  }

  get isFreed(): boolean {
    return this.freed;
  }

  /** @internal How many tensors use this storage (views included, kernel-only views not). */
  get userCount(): number {
    return this.users;
  }

  /** @internal One more tensor uses this storage. */
  retain(): void {
    this.users++;
  }

  /** @internal A tensor over this storage was disposed; free at the last one. */
  release(): void {
    if (--this.users <= 0) this.free();
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    untrack(this.held);
    this.held.backend.free(this.handle);
  }
}
