// The 'jsref' backend: one object satisfying Backend<JsStorage>, the contract core defines.
import { CONTRACT_VERSION, type Backend, type Capabilities, type DTypeName, type HostArray, type Kernels, type MemoryStats } from '@core/tensor';
import { JsKernels } from './kernels.js';
import { decode, encode, JsStorage } from './values.js';

export const NAME = 'jsref';

const CAPABILITIES: Capabilities = {
  dtypes: {
    float32: { storage: true, compute: true },
    float64: { storage: true, compute: true },
    int32: { storage: true, compute: true },
    bool: { storage: true, compute: true },
    // Stored (and converted with .to()), but not computed in: core raises a DTypeError for
    // float16 math on this device before any kernel sees it.
    float16: { storage: true, compute: false },
    // bfloat16 is left out entirely: tensors of it cannot be created here.
  },
  syncRead: false, // like a GPU: results are read with `await`
  maxBufferBytes: 2 ** 27, // core refuses larger tensors before calling alloc()
  features: ['float64-accumulation'],
  strictNumerics: true,
  pinnedMemory: false,
};

export interface JsRefOptions {
  /** Number of devices ('jsref:0', 'jsref:1', …). Default 2. */
  readonly deviceCount?: number;
  /** Called before every kernel with its name: a hook for logging or counting ops. */
  readonly onKernel?: (name: string) => void;
}

export function createJsRefBackend(options: JsRefOptions = {}): Backend<JsStorage> {
  const deviceCount = options.deviceCount ?? 2;
  const live = new Set<JsStorage>();

  function checkDevice(index: number, what: string): void {
    if (!Number.isInteger(index) || index < 0 || index >= deviceCount) {
      throw new RangeError(`jsref ${what}: there is no device ${index} (this backend has ${deviceCount})`);
    }
  }

  function own(storage: JsStorage, what: string): void {
    if (!live.has(storage)) throw new Error(`jsref ${what}: the storage is not live (freed, or from another backend)`);
  }

  const kernels = options.onKernel ? traced(JsKernels, options.onKernel) : JsKernels;

  return {
    name: NAME,
    contractVersion: CONTRACT_VERSION,
    deviceCount,
    capabilities: CAPABILITIES,

    alloc(index: number, dtype: DTypeName, numel: number): JsStorage {
      checkDevice(index, 'alloc');
      if (!CAPABILITIES.dtypes[dtype]?.storage) throw new TypeError(`jsref alloc: ${dtype} is not stored on this backend`);
      const storage = new JsStorage(index, dtype, numel);
      live.add(storage);
      return storage;
    },
    free(storage: JsStorage): void {
      own(storage, 'free');
      live.delete(storage);
      storage.values = null;
    },
    write(storage: JsStorage, data: HostArray, offset: number): void {
      own(storage, 'write');
      if (offset < 0 || offset + data.length > storage.numel) throw new RangeError(`jsref write: ${data.length} elements at ${offset} do not fit ${storage.numel}`);
      storage.live('write').set(decode(storage.dtype, data), offset);
    },
    async read(storage: JsStorage): Promise<HostArray> {
      own(storage, 'read');
      await Promise.resolve(); // results arrive later, as from a device queue
      return encode(storage.dtype, storage.live('read'));
    },
    synchronize(index: number): Promise<void> {
      checkDevice(index, 'synchronize');
      return Promise.resolve();
    },
    memoryStats(index: number): MemoryStats {
      checkDevice(index, 'memoryStats');
      let allocatedBytes = 0;
      let allocations = 0;
      for (const s of live) {
        if (s.device !== index) continue;
        allocatedBytes += s.numel * 8; // every value is a float64
        allocations++;
      }
      return { allocatedBytes, allocations, reservedBytes: allocatedBytes };
    },
    kernels,
    // No `fused` kernels: core runs the decompositions of softmax and logSoftmax.
  };
}

/** The same kernels, each announcing itself first. */
function traced(k: Kernels<JsStorage>, onKernel: (name: string) => void): Kernels<JsStorage> {
  const out = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(k) as [string, (...args: unknown[]) => void][]) {
    out[name] = (...args: unknown[]) => {
      onKernel(typeof args[0] === 'string' ? `${name}:${args[0]}` : name);
      fn(...args);
    };
  }
  return out as unknown as Kernels<JsStorage>;
}

export default createJsRefBackend;
