import type {
  AdamSpec, ArgReduceOp, Backend, BinaryOp, Capabilities, CompareOp, CrossEntropySpec, DTypeName, DTypeSupport, HostArray, MemoryStats,
  RandomSpec, ReduceOp, TensorRef, UnaryOp,
} from '@core/tensor';
import { CudaUnavailableError } from './errors.js';
import { DTYPE_CODES, loadAddon, type CudaAddon, type CudaDeviceInfo, type CudaProbe, type CudaStats, type GemmMode, type NativeRef } from './native.js';
import { CudaStorage, ITEM_BYTES } from './storage.js';

const IMPLEMENTS_CONTRACT = '1.1.0';
const FULL: DTypeSupport = { storage: true, compute: true };

// Op codes: positions in native/cuda/kernels/args.h's enums. The tables are checked against the
// contract's op lists, so a new primitive is a compile error here until the kernel exists.
const UNARY_CODES = {
  neg: 0, abs: 1, sign: 2, exp: 3, expm1: 4, log: 5, log1p: 6, sqrt: 7, rsqrt: 8, reciprocal: 9, sin: 10, cos: 11, tan: 12,
  tanh: 13, sigmoid: 14, erf: 15, relu: 16, floor: 17, ceil: 18, round: 19, trunc: 20, logicalNot: 21,
} as const satisfies Record<UnaryOp, number>;
const BINARY_CODES = {
  add: 0, sub: 1, mul: 2, div: 3, pow: 4, maximum: 5, minimum: 6, remainder: 7, atan2: 8, logicalAnd: 9, logicalOr: 10,
} as const satisfies Record<BinaryOp, number>;
const COMPARE_CODES = { eq: 0, ne: 1, lt: 2, le: 3, gt: 4, ge: 5 } as const satisfies Record<CompareOp, number>;
const REDUCE_CODES = { sum: 0, prod: 1, max: 2, min: 3 } as const satisfies Record<ReduceOp, number>;
const ARG_CODES = { argmax: 0, argmin: 1 } as const satisfies Record<ArgReduceOp, number>;

/** Options of {@link createCudaBackend}. */
export interface CudaBackendOptions {
  /** The addon's path (default: this package's build/Release/core_cuda.node, or CORE_CUDA_ADDON). */
  readonly addonPath?: string;
  /** Which GEMM runs matmul on every device (default 'auto', or CORE_CUDA_GEMM). */
  readonly gemm?: GemmMode;
}

/** What the cuda backend adds to the contract: the devices it found and its counters. */
export interface CudaBackend extends Backend<CudaStorage> {
  /** The devices, as the driver describes them. */
  readonly devices: readonly CudaDeviceInfo[];
  /** The driver's CUDA version (1000·major + 10·minor). */
  readonly driverVersion: number;
  /** Counters of device `index`. */
  stats(index: number): CudaStats;
  /** Choose the GEMM for device `index` (tests and benchmarks compare cuBLASLt with our kernels). */
  setGemmMode(index: number, mode: GemmMode): void;
  /** Give the cached blocks of device `index` back to the driver. */
  emptyCache(index: number): void;
}

/**
 * Probe CUDA without registering anything: loads the addon (if built) and asks the driver. Never
 * throws; `available: false` comes with the precise reason.
 */
export function probeCuda(addonPath?: string): CudaProbe {
  const loaded = loadAddon(addonPath);
  if ('reason' in loaded) return { available: false, reason: loaded.reason, deviceCount: 0, driverVersion: 0, devices: [] };
  return loaded.addon.probe();
}

/**
 * Start the cuda backend. Rejects with {@link CudaUnavailableError} (its message is the reason core
 * reports) when the addon is missing or there is no usable driver or device.
 */
export async function createCudaBackend(options: CudaBackendOptions = {}): Promise<CudaBackend> {
  const loaded = loadAddon(options.addonPath);
  if ('reason' in loaded) throw new CudaUnavailableError(loaded.reason);
  const probe = loaded.addon.probe();
  if (!probe.available) throw new CudaUnavailableError(probe.reason);
  const backend = makeBackend(loaded.addon, probe);
  const mode = options.gemm ?? (process.env.CORE_CUDA_GEMM as GemmMode | undefined);
  if (mode) for (let i = 0; i < probe.deviceCount; i++) backend.setGemmMode(i, mode);
  return backend;
}

function makeBackend(addon: CudaAddon, probe: CudaProbe): CudaBackend {
  const capabilities: Capabilities = {
    dtypes: { float32: FULL, float16: FULL, bfloat16: FULL, int32: FULL, bool: FULL },
    syncRead: false,
    maxBufferBytes: Math.min(...probe.devices.map((d) => d.totalMemory)),
    features: ['native-f16', 'native-bf16', ...(probe.devices.some((d) => d.cublasLt) ? ['cublaslt'] : []), ...probe.devices.map((d) => `sm_${d.computeCapability.replace('.', '')}`)],
    strictNumerics: true,
    pinnedMemory: true,
  };

  const live = (s: CudaStorage, what: string): void => {
    if (!s.live) throw new Error(`cuda ${what}: the ${s.dtype} storage of ${s.numel} elements on cuda:${s.device} was freed`);
  };
  const ref = (r: TensorRef<CudaStorage>): NativeRef => {
    live(r.storage, 'kernel');
    const dtype = DTYPE_CODES[r.dtype];
    if (dtype === undefined) throw new TypeError(`cuda: dtype ${r.dtype} is not supported`);
    return { ptr: r.storage.ptr, dtype, shape: r.shape, strides: r.strides, offset: r.offset };
  };
  const dev = (r: TensorRef<CudaStorage>): number => r.storage.device;

  const backend: CudaBackend = {
    name: 'cuda',
    contractVersion: IMPLEMENTS_CONTRACT,
    deviceCount: probe.deviceCount,
    capabilities,
    devices: probe.devices,
    driverVersion: probe.driverVersion,

    alloc(index: number, dtype: DTypeName, numel: number): CudaStorage {
      const item = ITEM_BYTES[dtype];
      if (item === undefined) throw new TypeError(`cuda: dtype ${dtype} is not supported (float32, float16, bfloat16, int32, bool)`);
      return new CudaStorage(index, addon.alloc(index, numel * item), dtype, numel);
    },
    free(storage: CudaStorage): void {
      if (!storage.live) return;
      storage.live = false;
      addon.free(storage.device, storage.ptr);
    },
    write(storage: CudaStorage, data: HostArray, offset: number): void {
      live(storage, 'write');
      addon.write(storage.device, storage.ptr, offset * (ITEM_BYTES[storage.dtype] ?? 1), data);
    },
    async read(storage: CudaStorage): Promise<HostArray> {
      live(storage, 'read');
      const buffer = await addon.read(storage.device, storage.ptr, storage.byteLength);
      switch (storage.dtype) {
        case 'float32': return new Float32Array(buffer);
        case 'float16': case 'bfloat16': return new Uint16Array(buffer);
        case 'int32': return new Int32Array(buffer);
        case 'bool': return new Uint8Array(buffer);
        default: throw new TypeError(`cuda: dtype ${storage.dtype} is not supported`);
      }
    },
    synchronize(index: number): Promise<void> {
      return addon.synchronize(index);
    },
    memoryStats(index: number): MemoryStats {
      return addon.memoryStats(index);
    },
    stats: (index) => addon.stats(index),
    setGemmMode: (index, mode) => addon.setGemmMode(index, mode),
    emptyCache: (index) => addon.emptyCache(index),

    kernels: {
      unary: (op, x, out) => addon.unary(dev(out), UNARY_CODES[op], ref(x), ref(out)),
      binary: (op, a, b, out) => addon.binary(dev(out), BINARY_CODES[op], ref(a), ref(b), ref(out)),
      compare: (op, a, b, out) => addon.compare(dev(out), COMPARE_CODES[op], ref(a), ref(b), ref(out)),
      where: (cond, a, b, out) => addon.where(dev(out), ref(cond), ref(a), ref(b), ref(out)),
      cast: (x, out) => addon.cast(dev(out), ref(x), ref(out)),
      copy: (x, out) => addon.copy(dev(out), ref(x), ref(out)),
      fill: (out, value) => addon.fill(dev(out), ref(out), value),
      // Accumulation: f32 for floating inputs (half types included), wrapping int32 for int32.
      reduce: (op, x, axes, out, _accumulate) => addon.reduce(dev(out), REDUCE_CODES[op], ref(x), axes, ref(out)),
      argReduce: (op, x, axis, out) => addon.argReduce(dev(out), ARG_CODES[op], ref(x), axis, ref(out)),
      matmul: (a, b, out, _accumulate) => addon.matmul(dev(out), ref(a), ref(b), ref(out)),
      gather: (x, dim, index, out) => addon.gather(dev(out), ref(x), dim, ref(index), ref(out)),
      scatterAdd: (out, dim, index, src) => addon.scatterAdd(dev(out), ref(out), dim, ref(index), ref(src)),
      random: (out, spec: RandomSpec) => {
        const d = spec.distribution;
        if (d.kind === 'uniform') addon.random(dev(out), ref(out), spec.key[0], spec.key[1], spec.offset, 0, 0, 0);
        else addon.random(dev(out), ref(out), spec.key[0], spec.key[1], spec.offset, 1, d.low, d.high - d.low);
      },
    },

    fused: {
      softmax: (x, dim, out) => addon.softmax(dev(out), ref(x), dim, ref(out), false),
      logSoftmax: (x, dim, out) => addon.softmax(dev(out), ref(x), dim, ref(out), true),
      crossEntropy: (x, target, spec: CrossEntropySpec, out) =>
        addon.crossEntropy(dev(out), ref(x), ref(target), spec.ignoreIndex, spec.labelSmoothing, ref(out)),
      unscaleAndCheck: (grads, foundInf, invScale) => addon.unscaleAndCheck(dev(foundInf), grads.map(ref), ref(foundInf), ref(invScale)),
      adamw: (param, grad, expAvg, expAvgSq, maxExpAvgSq, spec: AdamSpec) =>
        addon.adam(dev(param), ref(param), ref(grad), ref(expAvg), ref(expAvgSq), maxExpAvgSq ? ref(maxExpAvgSq) : null, {
          // Derived in double and rounded once to f32 in the addon, like the decomposition's scalar operands.
          oneMinusBeta1: 1 - spec.beta1,
          beta2: spec.beta2,
          oneMinusBeta2: 1 - spec.beta2,
          eps: spec.eps,
          weightDecay: spec.weightDecay,
          decayFactor: 1 - spec.lr * spec.weightDecay,
          stepSize: spec.stepSize,
          biasCorrection2Sqrt: spec.biasCorrection2Sqrt,
          decoupled: spec.decoupled,
          maximize: spec.maximize,
        }),
    },
  };
  return backend;
}
