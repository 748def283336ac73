// The webgpu backend's own contract beyond the conformance suite: registration and the failure
// path, capabilities per configuration, the buffer-size limit, device loss, the pool, batching
// and the pipeline cache, 16-bit writes at odd offsets, bit-exact agreement with the cpu backend
// on exact-rounded ops over many bit patterns, and Philox bits.
import {
  availableDevices, bestDevice, float16BitsToNumber, bfloat16BitsToNumber, registerBackend, type DTypeName, type HostArray, type TensorRef,
} from '@core/tensor';
import { createCpuBackend, type CpuStorage } from '@core/backend-cpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWebGPUBackend, WebGPUBufferLimitError, WebGPUDeviceLostError, WebGPUUnavailableError, type WebGPUBackend, type WebGPUStorage,
} from '../src/index.js';
import { CONFIG, startBackend } from './helpers.js';

let gpu: WebGPUBackend;
const cpu = createCpuBackend();

beforeAll(async () => {
  gpu = await startBackend();
});

afterAll(() => gpu?.destroy());

function ref<S>(storage: S, dtype: DTypeName, shape: number[], strides?: number[], offset = 0): TensorRef<S> {
  const s = strides ?? shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  return { storage, dtype, shape, strides: s, offset };
}

function upload(data: HostArray, dtype: DTypeName): WebGPUStorage {
  const s = gpu.alloc(0, dtype, data.length);
  gpu.write(s, data, 0);
  return s;
}

function uploadCpu(data: HostArray, dtype: DTypeName): CpuStorage {
  const s = cpu.alloc(0, dtype, data.length);
  cpu.write(s, data, 0);
  return s;
}

/** n random 16-bit patterns, with every exponent and both signs. */
function randomHalves(n: number, seed: number): Uint16Array {
  let x = seed >>> 0;
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 16;
  }
  return out;
}

function randomFloats(n: number, seed: number): Float32Array {
  let x = seed >>> 0;
  const u = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const y = (Math.imul(x ^ (x >>> 15), 2246822519) >>> 0) ^ (x >>> 13);
    u[i] = y >>> 0;
  }
  return new Float32Array(u.buffer);
}

/** Same bits, except that any NaN matches any NaN (payloads may differ, RND-5). */
function expectSameBits(dtype: DTypeName, got: HostArray, want: HostArray, what: string): void {
  expect(got.length).toBe(want.length);
  const isNaNAt = (a: HostArray, i: number) =>
    dtype === 'float16' ? Number.isNaN(float16BitsToNumber(a[i]!)) : dtype === 'bfloat16' ? Number.isNaN(bfloat16BitsToNumber(a[i]!)) : Number.isNaN(a[i]!);
  const gb = dtype === 'float32' ? new Uint32Array((got as Float32Array).buffer, got.byteOffset, got.length) : got;
  const wb = dtype === 'float32' ? new Uint32Array((want as Float32Array).buffer, want.byteOffset, want.length) : want;
  let bad = 0;
  let first = '';
  for (let i = 0; i < want.length; i++) {
    if (isNaNAt(want, i) && isNaNAt(got, i)) continue;
    if (gb[i] !== wb[i]) {
      if (bad === 0) first = `at ${i}: got bits ${gb[i]!.toString(16)}, expected ${wb[i]!.toString(16)}`;
      bad++;
    }
  }
  expect(bad, `${what}: ${bad} of ${want.length} differ, first ${first}`).toBe(0);
}

describe('registration and availability', () => {
  it('registers webgpu (priority 200) and reports it available', async () => {
    await import('../src/index.js');
    const webgpu = (await availableDevices()).find((d) => d.type === 'webgpu');
    expect(webgpu, 'the webgpu backend must be registered by importing the package').toBeDefined();
    expect(webgpu!.available, `webgpu unavailable: ${webgpu!.reason}`).toBe(true);
    expect(webgpu!.priority).toBe(200);
  });

  it('a null adapter rejects with a typed error and the reason; bestDevice() falls through to cpu', async () => {
    const noAdapter = { requestAdapter: async () => null } as unknown as GPU;
    await expect(createWebGPUBackend({ gpu: noAdapter })).rejects.toBeInstanceOf(WebGPUUnavailableError);
    await expect(createWebGPUBackend({ gpu: noAdapter })).rejects.toThrow(/no WebGPU adapter/);
    registerBackend({ name: 'cpu', priority: 100, create: () => createCpuBackend() });
    registerBackend({ name: 'webgpu', priority: 200, create: () => createWebGPUBackend({ gpu: noAdapter }) });
    const webgpu = (await availableDevices()).find((d) => d.type === 'webgpu')!;
    expect(webgpu.available).toBe(false);
    expect(webgpu.reason).toMatch(/no WebGPU adapter/);
    expect((await bestDevice()).type).toBe('cpu');
  });
});

describe('capabilities', () => {
  it('declares the dtypes, no syncRead, and the adapter limit', () => {
    const c = gpu.capabilities;
    for (const d of ['float32', 'float16', 'bfloat16', 'int32', 'bool'] as const) expect(c.dtypes[d]).toEqual({ storage: true, compute: true });
    expect(c.dtypes.float64).toBeUndefined();
    expect(c.syncRead).toBe(false);
    expect(gpu.readSync).toBeUndefined();
    expect(c.maxBufferBytes).toBe(Math.min(gpu.device.limits.maxStorageBufferBindingSize, gpu.device.limits.maxBufferSize));
  });

  it('uses native f16 exactly when the adapter has shader-f16 (lavapipe: yes, SwiftShader: no)', () => {
    expect(gpu.shaderF16).toBe(gpu.device.features.has('shader-f16'));
    expect(gpu.capabilities.features.includes('shader-f16')).toBe(gpu.shaderF16);
    if (CONFIG === 'lavapipe') expect(gpu.shaderF16).toBe(true);
    if (CONFIG === 'swiftshader') expect(gpu.shaderF16).toBe(false);
  });
});

describe('storage', () => {
  it('refuses a tensor larger than one storage binding with a typed error, before touching the device', () => {
    const limit = gpu.device.limits.maxStorageBufferBindingSize;
    const before = gpu.memoryStats(0);
    let error: unknown;
    try {
      gpu.alloc(0, 'float32', Math.floor(limit / 4) + 1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WebGPUBufferLimitError);
    expect((error as WebGPUBufferLimitError).limit).toBe(limit);
    expect((error as Error).message).toMatch(/maxStorageBufferBindingSize/);
    expect(gpu.memoryStats(0)).toEqual(before);
    // bool is 4 bytes on the device: the limit applies to those bytes.
    expect(() => gpu.alloc(0, 'bool', Math.floor(limit / 4) + 1)).toThrow(WebGPUBufferLimitError);
  });

  it('reuses pooled buffers of a size class instead of asking the device', () => {
    const a = gpu.alloc(0, 'float32', 1000);
    gpu.free(a);
    const reserved = gpu.memoryStats(0).reservedBytes;
    const b = gpu.alloc(0, 'float32', 990); // the same size class
    expect(gpu.memoryStats(0).reservedBytes).toBe(reserved);
    gpu.free(b);
  });

  it('writes 16-bit elements at odd offsets and lengths without touching neighbours', async () => {
    for (const dtype of ['float16', 'bfloat16'] as const) {
      const base = randomHalves(11, 7);
      const s = upload(base, dtype);
      gpu.write(s, Uint16Array.of(0x1234, 0x5678, 0x9abc), 3);
      gpu.write(s, Uint16Array.of(0x4242), 10);
      const want = base.slice();
      want.set([0x1234, 0x5678, 0x9abc], 3);
      want[10] = 0x4242;
      expect(Array.from(await gpu.read(s))).toEqual(Array.from(want));
      gpu.free(s);
    }
  });

  it('a lost device fails later operations with a typed error', async () => {
    const other = await startBackend();
    const s = other.alloc(0, 'float32', 4);
    other.destroy();
    await other.device.lost;
    expect(() => other.alloc(0, 'float32', 4)).toThrow(WebGPUDeviceLostError);
    await expect(other.read(s)).rejects.toBeInstanceOf(WebGPUDeviceLostError);
  });
});

describe('execution', () => {
  it('batches many ops into one submit and caches pipelines', async () => {
    const x = upload(Float32Array.from({ length: 64 }, (_, i) => i), 'float32');
    const y = gpu.alloc(0, 'float32', 64);
    gpu.kernels.unary('exp', ref(x, 'float32', [64]), ref(y, 'float32', [64])); // builds the pipeline
    await gpu.read(y);
    const before = gpu.stats();
    for (let i = 0; i < 50; i++) gpu.kernels.unary('exp', ref(i % 2 ? y : x, 'float32', [64]), ref(i % 2 ? x : y, 'float32', [64]));
    await gpu.read(y);
    const after = gpu.stats();
    expect(after.dispatches - before.dispatches).toBe(50);
    expect(after.submits - before.submits).toBe(1);
    expect(after.pipelines).toBe(before.pipelines);
    gpu.free(x);
    gpu.free(y);
  });

  const EXACT_BINARY = ['add', 'sub', 'mul', 'div'] as const;
  for (const dtype of ['float32', 'float16', 'bfloat16'] as const) {
    it(`${dtype}: add/sub/mul/div and casts match the cpu backend bit for bit over 20,000 bit patterns`, async () => {
      // SwiftShader flushes subnormal operands of + − × (see test/expectations/swiftshader.json): keep them out there.
      const flush = CONFIG === 'swiftshader';
      const clean = (a: HostArray): HostArray => {
        if (!flush) return a;
        const out = a.slice();
        for (let i = 0; i < out.length; i++) {
          const bits = dtype === 'float32' ? new Uint32Array(Float32Array.of(out[i]!).buffer)[0]! : out[i]!;
          const expMask = dtype === 'float32' ? 0x7f800000 : dtype === 'float16' ? 0x7c00 : 0x7f80;
          if ((bits & expMask) === 0) out[i] = 0;
        }
        return out;
      };
      const n = 20000;
      const a = clean(dtype === 'float32' ? randomFloats(n, 1) : randomHalves(n, 1));
      const b = clean(dtype === 'float32' ? randomFloats(n, 2) : randomHalves(n, 2));
      const ga = upload(a, dtype);
      const gb = upload(b, dtype);
      const ca = uploadCpu(a, dtype);
      const cb = uploadCpu(b, dtype);
      for (const op of EXACT_BINARY) {
        if (flush && op !== 'div') continue; // div is emulated in integer arithmetic: exact everywhere
        const go = gpu.alloc(0, dtype, n);
        const co = cpu.alloc(0, dtype, n);
        gpu.kernels.binary(op, ref(ga, dtype, [n]), ref(gb, dtype, [n]), ref(go, dtype, [n]));
        cpu.kernels.binary(op, ref(ca, dtype, [n]), ref(cb, dtype, [n]), ref(co, dtype, [n]));
        expectSameBits(dtype, await gpu.read(go), cpu.readSync!(co), `${dtype} ${op}`);
        gpu.free(go);
      }
      for (const to of ['float32', 'float16', 'bfloat16', 'int32', 'bool'] as const) {
        if (to === dtype || to === 'int32') continue; // float → int32 out of range is unspecified
        const go = gpu.alloc(0, to, n);
        const co = cpu.alloc(0, to, n);
        gpu.kernels.cast(ref(ga, dtype, [n]), ref(go, to, [n]));
        cpu.kernels.cast(ref(ca, dtype, [n]), ref(co, to, [n]));
        expectSameBits(to, await gpu.read(go), cpu.readSync!(co), `cast ${dtype} → ${to}`);
        gpu.free(go);
      }
      gpu.free(ga);
      gpu.free(gb);
    });
  }

  it('random: Philox4x32-10 bits identical to the cpu backend, across the 2^32 counter carry', async () => {
    const n = 4099;
    for (const spec of [
      { key: [0x12345678, 0x9abcdef0] as [number, number], offset: 2 ** 32 - 300, distribution: { kind: 'uniform' as const } },
      { key: [7, 0] as [number, number], offset: 5, distribution: { kind: 'randint' as const, low: -1000, high: 12345 } },
      { key: [1, 2] as [number, number], offset: 0, distribution: { kind: 'randint' as const, low: -(2 ** 31), high: 2 ** 31 } },
    ]) {
      const dtype = spec.distribution.kind === 'uniform' ? 'float32' : 'int32';
      const go = gpu.alloc(0, dtype, n);
      const co = cpu.alloc(0, dtype, n);
      gpu.kernels.random(ref(go, dtype, [n]), spec);
      cpu.kernels.random(ref(co, dtype, [n]), spec);
      expectSameBits(dtype, await gpu.read(go), cpu.readSync!(co), `random ${spec.distribution.kind}`);
      gpu.free(go);
    }
  });

  it('matmul: batched, transposed and broadcast operands agree with the cpu backend', async () => {
    const [B, M, K, N] = [3, 37, 45, 29];
    const a = randomFloats(B * M * K, 3).map((v) => (Number.isFinite(v) ? Math.sign(v) * (Math.abs(v) % 4) : 1));
    const b = randomFloats(K * N, 4).map((v) => (Number.isFinite(v) ? Math.sign(v) * (Math.abs(v) % 4) : 1));
    const ga = upload(a, 'float32');
    const gb = upload(b, 'float32');
    const ca = uploadCpu(a, 'float32');
    const cb = uploadCpu(b, 'float32');
    // b is [N, K] read transposed as [1, K, N] and broadcast over the batch.
    const bRef = <S>(s: S) => ref(s, 'float32', [1, K, N], [0, 1, K]);
    const go = gpu.alloc(0, 'float32', B * M * N);
    const co = cpu.alloc(0, 'float32', B * M * N);
    gpu.kernels.matmul(ref(ga, 'float32', [B, M, K]), bRef(gb), ref(go, 'float32', [B, M, N]), 'float32');
    cpu.kernels.matmul(ref(ca, 'float32', [B, M, K]), bRef(cb), ref(co, 'float32', [B, M, N]), 'float32');
    const got = (await gpu.read(go)) as Float32Array;
    const want = cpu.readSync!(co) as Float32Array;
    for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(want[i]!)));
  });
});
