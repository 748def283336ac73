// A second, GPU-like test backend: device type 'fake' with two devices. It delegates every
// primitive to a private CPU backend instance, but has no `readSync` (so, like a GPU, its tensors
// can only be read with `await`), declares pinned-memory support, and keeps memory statistics per
// device index.
import { createCpuBackend } from '@core/backend-cpu';
import { registerBackend, type Backend, type FusedKernels, type Kernels, type MemoryStats } from '@core/tensor';

export const FAKE = 'fake';
export const FAKE_PRIORITY = 50;

export interface FakeOptions {
  /** Declare pinned-memory support (default true). */
  readonly pinnedMemory?: boolean;
  /** Device type name (default 'fake'); other names build look-alike backends for registry tests. */
  readonly name?: string;
}

/** Build the 'fake' backend (or a look-alike named `options.name`) over a fresh CPU backend. */
export function createFakeBackend(options: FakeOptions = {}): Backend<unknown> {
  const inner = createCpuBackend() as Backend<unknown>;
  const owner = new Map<unknown, { index: number; bytes: number }>();
  const itemsize = { float32: 4, float16: 2, bfloat16: 2, float64: 8, int32: 4, bool: 1 } as const;

  function checkIndex(index: number, what: string): void {
    if (!Number.isInteger(index) || index < 0 || index >= 2) throw new RangeError(`fake ${what}: no device ${index}`);
  }

  const backend: Backend<unknown> = {
    name: options.name ?? FAKE,
    contractVersion: inner.contractVersion,
    deviceCount: 2,
    capabilities: { ...inner.capabilities, syncRead: false, pinnedMemory: options.pinnedMemory ?? true },
    alloc(index, dtype, numel) {
      checkIndex(index, 'alloc');
      const s = inner.alloc(0, dtype, numel);
      owner.set(s, { index, bytes: numel * itemsize[dtype] });
      return s;
    },
    free(storage) {
      owner.delete(storage);
      inner.free(storage);
    },
    write: (storage, data, offset) => inner.write(storage, data, offset),
    // Resolve on a later microtask, like a device that has to finish queued work first.
    read: async (storage) => {
      await Promise.resolve();
      return inner.read(storage);
    },
    synchronize: async (index) => {
      checkIndex(index, 'synchronize');
      await inner.synchronize(0);
    },
    memoryStats(index): MemoryStats {
      checkIndex(index, 'memoryStats');
      let allocatedBytes = 0;
      let allocations = 0;
      for (const o of owner.values()) {
        if (o.index === index) { allocatedBytes += o.bytes; allocations++; }
      }
      return { allocatedBytes, allocations, reservedBytes: allocatedBytes };
    },
    kernels: guard(inner.kernels as unknown as Record<string, (...args: unknown[]) => void>) as unknown as Kernels<unknown>,
    ...(inner.fused ? { fused: guard(inner.fused as Record<string, (...args: unknown[]) => void>) as Partial<FusedKernels<unknown>> } : {}),
  };

  /**
   * Like a real accelerator, the kernels only accept this backend's own storages, all on one
   * device: a CPU storage (or a fake:1 one in a fake:0 op) reaching a kernel is a core bug.
   */
  function guard(table: Record<string, (...args: unknown[]) => void>): Record<string, (...args: unknown[]) => void> {
    const out: Record<string, (...args: unknown[]) => void> = {};
    for (const [name, fn] of Object.entries(table)) {
      out[name] = (...args: unknown[]) => {
        let device: number | undefined;
        for (const a of args) {
          if (typeof a !== 'object' || a === null || !('storage' in a)) continue;
          const o = owner.get((a as { storage: unknown }).storage);
          if (!o) throw new Error(`fake kernel ${name}: got a storage this backend did not allocate (or already freed)`);
          if (device !== undefined && o.index !== device) throw new Error(`fake kernel ${name}: storages of fake:${device} and fake:${o.index} in one call`);
          device = o.index;
        }
        fn.apply(table, args);
      };
    }
    return out;
  }
  // No readSync on purpose: `'readSync' in backend` must be false.
  return backend;
}

/** Register (or re-register) the 'fake' backend with priority 50. */
export function registerFakeBackend(options: FakeOptions = {}): void {
  registerBackend({ name: FAKE, priority: FAKE_PRIORITY, create: () => createFakeBackend(options) });
}
