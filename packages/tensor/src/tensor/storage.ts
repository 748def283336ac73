// A device allocation shared by a tensor and its views. Freed when the last tensor over it is
// disposed, or when the garbage collector finds it unreachable.
import type { Backend } from '../backend/contract.js';
import type { DType } from '../dtype/dtype.js';
import type { Device } from '../device/device.js';
import { TensorError } from '../errors/errors.js';

interface Held {
  readonly backend: Backend<unknown>;
  readonly handle: unknown;
}

const collector = new FinalizationRegistry<Held>((h) => h.backend.free(h.handle));

export class Storage {
  private users = 0;
  private freed = false;
  /** Bumped by every in-place write; autograd checks saved tensors against it. Shared by views. */
  version = 0;
  private readonly token = {};

  constructor(
    readonly backend: Backend<unknown>,
    readonly handle: unknown,
    readonly device: Device,
    readonly dtype: DType,
    readonly numel: number,
    /** Page-locked host memory (CPU storages only): see `Tensor.pinMemory()`. */
    readonly pinned: boolean = false,
  ) {
    collector.register(this, { backend, handle }, this.token);
  }

  static allocate(backend: Backend<unknown>, device: Device, dtype: DType, numel: number, pinned = false): Storage {
    return new Storage(backend, backend.alloc(device.index ?? 0, dtype.name, numel), device, dtype, numel, pinned);
  }

  /** @internal Record an in-place write. */
  bumpVersion(): void {
    this.version++;
  }

  get isFreed(): boolean {
    return this.freed;
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
    collector.unregister(this.token);
    this.backend.free(this.handle);
  }

  assertLive(op: string): void {
    if (this.freed) throw new TensorError(`${op}: this tensor was disposed; its memory is gone`);
  }
}
