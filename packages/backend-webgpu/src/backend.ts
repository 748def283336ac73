import type { Backend, Capabilities, DTypeName, DTypeSupport, HostArray, MemoryStats, PreparedCall, PreparedProgram, PrepareOptions, WriteHint } from '@core/tensor';
import { acquireDevice, SOFTWARE_ADAPTER, type AcquireOptions, type AcquiredDevice } from './device.js';
import type { WebGPUType } from './gpu-types.js';
import { WebGPUBufferLimitError } from './errors.js';
import { createKernels, type KernelContext } from './kernels.js';
import { WebGPUPreparedProgram } from './prepared.js';
import { Runtime } from './runtime.js';
import { deviceItemSize, sizeClass, WebGPUStorage } from './storage.js';
import type { ShaderEnv } from './wgsl/gen.js';

// 1.6.0: `prepare` reads its options (`deadAfter`, for fusion); the fused kernels added in 1.6.0 and 1.7.0 are optional.
const IMPLEMENTS_CONTRACT = '1.6.0';
const FULL: DTypeSupport = { storage: true, compute: true };
const DTYPES: readonly DTypeName[] = ['float32', 'float16', 'bfloat16', 'int32', 'bool'];

/** Options of {@link createWebGPUBackend}. */
export interface WebGPUBackendOptions extends AcquireOptions {
  /** Use this device instead of requesting one (its features decide the float16 layout). */
  readonly device?: WebGPUType<'GPUDevice'>;
}

/** Counters of a WebGPU backend, for tests and profiling. */
export interface WebGPUStats {
  /** Compute dispatches queued since the backend started. */
  readonly dispatches: number;
  /** Command buffers submitted (each carries many dispatches). */
  readonly submits: number;
  /** Compute pipelines built and cached. */
  readonly pipelines: number;
  /** Bytes of freed buffers kept for reuse. */
  readonly pooledBytes: number;
  /** Host → device copies queued through mapped staging buffers (non-blocking, pinned sources). */
  readonly stagedUploads: number;
}

/** What a WebGPU backend adds to the contract: the device and how it was set up. */
export interface WebGPUBackend extends Backend<WebGPUStorage> {
  /** The GPU device every storage and kernel of this backend lives on. */
  readonly device: WebGPUType<'GPUDevice'>;
  /** float16 is stored as array<f16> (true) or packed two per u32 (false). */
  readonly shaderF16: boolean;
  /** Adapter description and where WebGPU came from. */
  readonly adapterInfo: string;
  /** Counters for tests and profiling. */
  stats(): WebGPUStats;
  /** Release the device (tests; a backend is normally kept for the process). */
  destroy(): void;
}

/** Start a WebGPU backend: finds a GPU (navigator.gpu, else Dawn in Node), requests a device, builds the kernels. */
export async function createWebGPUBackend(options: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  let acquired: Pick<AcquiredDevice, 'device' | 'shaderF16' | 'description' | 'source'>;
  if (options.device) {
    const shaderF16 = options.device.features.has('shader-f16') && !options.disableShaderF16;
    acquired = { device: options.device, shaderF16, description: 'given device', source: 'given device' };
  } else {
    acquired = await acquireDevice(options);
  }
  return makeBackend(acquired.device, acquired.shaderF16, `${acquired.description} via ${acquired.source}`);
}


function makeBackend(device: GPUDevice, shaderF16: boolean, adapterInfo: string): WebGPUBackend {
  const rt = new Runtime(device);
  const env: ShaderEnv = { f16Native: shaderF16 };
  const bindingLimit = device.limits.maxStorageBufferBindingSize;
  const maxBufferBytes = Math.min(bindingLimit, device.limits.maxBufferSize);

  const capabilities: Capabilities = {
    dtypes: Object.fromEntries(DTYPES.map((d) => [d, FULL])),
    syncRead: false,
    maxBufferBytes,
    // A software rasteriser (lavapipe, SwiftShader) runs on the CPU: bestDevice() then prefers the cpu backend.
    features: [shaderF16 ? 'shader-f16' : 'float16-packed', ...(SOFTWARE_ADAPTER.test(adapterInfo) ? ['software-adapter'] : [])],
    strictNumerics: true,
    // Non-blocking copies from pinned tensors are queued through mapped staging buffers (write()).
    pinnedMemory: true,
  };

  const live = new Set<WebGPUStorage>();
  let allocatedBytes = 0;
  let liveCapacity = 0;

  function own(storage: WebGPUStorage, what: string): void {
    if (!live.has(storage)) {
      const why = storage instanceof WebGPUStorage && storage.freed ? 'has already been freed' : 'was not allocated by this backend';
      throw new Error(`webgpu ${what}: the storage ${why}`);
    }
  }

  function checkDevice(index: number, what: string): void {
    if (index !== 0) throw new RangeError(`webgpu ${what}: device index ${index} does not exist (the webgpu backend has one device, 0)`);
  }

  function allocate(dtype: DTypeName, numel: number, what: string): WebGPUStorage {
    rt.check();
    if (!Number.isSafeInteger(numel) || numel < 0) throw new RangeError(`webgpu ${what}: numel must be a non-negative integer, got ${numel}`);
    if (!DTYPES.includes(dtype)) throw new TypeError(`webgpu ${what}: the webgpu backend cannot store ${dtype}`);
    const bytes = numel * deviceItemSize(dtype);
    if (bytes > bindingLimit) {
      throw new WebGPUBufferLimitError(
        `webgpu ${what}: ${numel} ${dtype} elements need ${bytes} bytes on the device, more than one storage binding may hold ` +
          `(maxStorageBufferBindingSize ${bindingLimit} bytes on this adapter); split the tensor or use another device`,
        bytes,
        bindingLimit,
      );
    }
    const capacity = sizeClass(Math.max(bytes, 4));
    return new WebGPUStorage(dtype, numel, bytes, rt.pool.acquire(capacity), capacity);
  }

  function releaseStorage(s: WebGPUStorage): void {
    rt.pool.release(s.capacity, s.release());
  }

  // Temporaries go back to the pool as soon as the dispatches using them are queued: every later
  // use of a pooled buffer is ordered after them on the queue (host writes flush first).
  const temps: WebGPUStorage[] = [];
  const ctx: KernelContext = {
    rt,
    env,
    temp(dtype, numel) {
      // A prepared program keeps its calls' temporaries: its bind groups point at them.
      if (rt.sink instanceof WebGPUPreparedProgram) return rt.sink.temp(dtype, numel);
      const s = allocate(dtype, numel, 'temporary');
      temps.push(s);
      return s;
    },
  };
  function releaseTemps(): void {
    while (temps.length > 0) releaseStorage(temps.pop()!);
  }
  const made = createKernels(ctx);
  const wrap = <T extends object>(table: T): T =>
    Object.fromEntries(Object.entries(table).map(([k, fn]) => [k, (...args: unknown[]) => {
      const sink = rt.sink;
      if (sink instanceof WebGPUPreparedProgram) {
        sink.uses(args);
        // A prepared program's varying call with its last run's arguments: its commands stand.
        if (sink.unchanged(args)) return undefined;
      }
      try {
        return (fn as (...a: unknown[]) => unknown)(...args);
      } finally {
        releaseTemps();
      }
    }])) as T;
  const kernels = wrap(made.kernels);
  const fused = wrap(made.fused);

  function write(storage: WebGPUStorage, data: HostArray, offset: number, hint?: WriteHint): void {
    own(storage, 'write');
    rt.check();
    if (rt.sink instanceof WebGPUPreparedProgram) rt.sink.uses([storage]);
    const { dtype } = storage;
    if (!isArrayFor(dtype, data)) throw new TypeError(`webgpu write: a ${dtype} storage takes its host array type, got ${data.constructor.name}`);
    if (!Number.isInteger(offset) || offset < 0 || offset + data.length > storage.numel) {
      throw new RangeError(`webgpu write: ${data.length} elements at offset ${offset} do not fit a storage of ${storage.numel}`);
    }
    if (data.length === 0) return;
    // A non-blocking copy from pinned memory is queued behind the device's work through a mapped
    // staging buffer; anything else (a pageable source, as in PyTorch) flushes the work first.
    const queued = hint?.nonBlocking === true && hint.pinned;
    const put = (byteOffset: number, view: ArrayBufferView) => {
      if (queued) rt.stagedWrite(storage.buffer, byteOffset, view);
      else rt.writeBuffer(storage.buffer, byteOffset, view);
    };
    if (dtype === 'bool') {
      put(offset * 4, Uint32Array.from(data as Uint8Array));
      return;
    }
    if (dtype !== 'float16' && dtype !== 'bfloat16') {
      put(offset * 4, data);
      return;
    }
    // 16-bit elements: buffer copies move whole 4-byte words, so an odd offset or length goes
    // through a temporary and a copy kernel that writes exactly the elements asked for.
    if (offset % 2 === 0 && data.length % 2 === 0) {
      put(offset * 2, data);
      return;
    }
    const n = data.length;
    const padded = new Uint16Array(n + (n % 2));
    padded.set(data as Uint16Array);
    const t = ctx.temp(dtype, padded.length);
    rt.writeBuffer(t.buffer, 0, padded);
    kernels.copy( // releases the temporary once the copy is queued
      { storage: t, dtype, shape: [n], strides: [1], offset: 0 },
      { storage, dtype, shape: [n], strides: [1], offset },
    );
  }

  async function read(storage: WebGPUStorage): Promise<HostArray> {
    own(storage, 'read');
    const { dtype, numel } = storage;
    const bytes = await rt.read(storage.buffer, numel * deviceItemSize(dtype));
    switch (dtype) {
      case 'float32': return new Float32Array(bytes);
      case 'int32': return new Int32Array(bytes);
      case 'bool': return Uint8Array.from(new Uint32Array(bytes), (v) => (v !== 0 ? 1 : 0));
      case 'float16':
      case 'bfloat16': return new Uint16Array(bytes, 0, numel);
      default: throw new TypeError(`webgpu read: no host layout for ${dtype}`);
    }
  }

  const backend: WebGPUBackend = {
    name: 'webgpu',
    contractVersion: IMPLEMENTS_CONTRACT,
    deviceCount: 1,
    capabilities,
    device,
    shaderF16,
    adapterInfo,

    alloc(index: number, dtype: DTypeName, numel: number): WebGPUStorage {
      checkDevice(index, 'alloc');
      const s = allocate(dtype, numel, 'alloc');
      live.add(s);
      allocatedBytes += s.byteLength;
      liveCapacity += s.capacity;
      return s;
    },

    free(storage: WebGPUStorage): void {
      own(storage, 'free');
      live.delete(storage);
      allocatedBytes -= storage.byteLength;
      liveCapacity -= storage.capacity;
      releaseStorage(storage);
    },

    write,

    read(storage: WebGPUStorage): Promise<HostArray> {
      try {
        return read(storage);
      } catch (e) {
        return Promise.reject(e);
      }
    },

    synchronize(index: number): Promise<void> {
      try {
        checkDevice(index, 'synchronize');
      } catch (e) {
        return Promise.reject(e);
      }
      return rt.synchronize();
    },

    memoryStats(index: number): MemoryStats {
      checkDevice(index, 'memoryStats');
      return { allocatedBytes, allocations: live.size, reservedBytes: liveCapacity + rt.pool.pooledBytes };
    },

    kernels,
    fused,

    prepare(calls: readonly PreparedCall[], options?: PrepareOptions<WebGPUStorage>): PreparedProgram {
      const temps = { allocate: (dtype: DTypeName, numel: number) => allocate(dtype, numel, 'temporary'), release: releaseStorage };
      return new WebGPUPreparedProgram(rt, temps, calls, env, options?.deadAfter);
    },

    stats() {
      return { dispatches: rt.dispatches, submits: rt.submits, pipelines: rt.pipelineCount, pooledBytes: rt.pool.pooledBytes, stagedUploads: rt.stagedUploads };
    },

    destroy() {
      rt.destroy();
    },
  };
  return backend;
}

function isArrayFor(dtype: DTypeName, data: unknown): boolean {
  switch (dtype) {
    case 'float32': return data instanceof Float32Array;
    case 'float16':
    case 'bfloat16': return data instanceof Uint16Array;
    case 'int32': return data instanceof Int32Array;
    case 'bool': return data instanceof Uint8Array;
    default: return false;
  }
}
