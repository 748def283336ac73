import { CONTRACT_VERSION } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { CpuStorage } from '../src/storage.js';

describe('cpu backend: identity and capabilities', () => {
  it('declares itself', () => {
    const be = createCpuBackend();
    expect(be.name).toBe('cpu');
    expect(be.deviceCount).toBe(1);
    expect(be.contractVersion).toBe(CONTRACT_VERSION);
    expect(be.capabilities.syncRead).toBe(true);
    expect(be.capabilities.strictNumerics).toBe(true);
    expect(be.capabilities.pinnedMemory).toBe(false);
    expect(be.capabilities.features).toEqual([]);
    expect(be.capabilities.maxBufferBytes).toBe(2 ** 31 - 1);
    for (const dtype of ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'bool'] as const) {
      expect(be.capabilities.dtypes[dtype]).toEqual({ storage: true, compute: true });
    }
    expect(be.kernels).not.toBe(CpuKernels); // the wasm kernels, falling back to CpuKernels
    expect(be.wasm?.active).toBe(true);
    expect(typeof be.fused?.softmax).toBe('function');
    expect(typeof be.fused?.logSoftmax).toBe('function');
    expect(createCpuBackend({ wasm: false, native: false }).kernels).toBe(CpuKernels);
    expect(createCpuBackend({ wasm: false }).wasm).toBeNull();
  });

  it('takes replacement kernels', () => {
    const kernels = { ...CpuKernels };
    expect(createCpuBackend({ kernels }).kernels).toBe(kernels);
  });
});

describe('cpu backend: storage', () => {
  it('allocates the host array of each dtype', () => {
    const be = createCpuBackend();
    const cases = [
      ['float32', Float32Array], ['float16', Uint16Array], ['bfloat16', Uint16Array],
      ['float64', Float64Array], ['int32', Int32Array], ['bool', Uint8Array],
    ] as const;
    for (const [dtype, ctor] of cases) {
      const s = be.alloc(0, dtype, 3);
      expect(s).toBeInstanceOf(CpuStorage);
      expect(s.dtype).toBe(dtype);
      expect(s.numel).toBe(3);
      expect(s.data).toBeInstanceOf(ctor);
      expect(s.data.length).toBe(3);
    }
  });

  it('writes at an offset and reads a copy, sync and async', async () => {
    const be = createCpuBackend();
    const s = be.alloc(0, 'float32', 4);
    be.write(s, new Float32Array([0, 0, 0, 0]), 0);
    be.write(s, new Float32Array([1.5, -2]), 2);
    const a = be.readSync!(s);
    expect(Array.from(a)).toEqual([0, 0, 1.5, -2]);
    a[0] = 99; // the read is a copy
    expect(Array.from(await be.read(s))).toEqual([0, 0, 1.5, -2]);
    await be.synchronize(0);
  });

  it('keeps half bit patterns as written', () => {
    const be = createCpuBackend();
    const s = be.alloc(0, 'float16', 3);
    be.write(s, new Uint16Array([0x7e01, 0x8000, 0x3c00]), 0); // a NaN with payload, −0, 1
    expect(Array.from(be.readSync!(s))).toEqual([0x7e01, 0x8000, 0x3c00]);
  });

  it('rejects wrong host arrays, out-of-range writes and other devices', () => {
    const be = createCpuBackend();
    const s = be.alloc(0, 'float16', 2);
    expect(() => be.write(s, new Float32Array(2), 0)).toThrow(/float16 storage takes its host array type, got Float32Array/);
    expect(() => be.write(s, new Uint16Array(2), 1)).toThrow(/do not fit/);
    expect(() => be.alloc(1, 'float32', 1)).toThrow(/device index 1/);
    expect(() => be.alloc(0, 'float32', -1)).toThrow(/non-negative integer/);
    expect(() => be.alloc(0, 'float64', 2 ** 28)).toThrow(/more than/);
    expect(() => be.memoryStats(2)).toThrow(/device index 2/);
  });

  it('tracks bytes and allocations, and frees exactly once', async () => {
    const be = createCpuBackend({ wasm: false }); // plain arrays: reserved equals allocated
    expect(be.memoryStats(0)).toEqual({ allocatedBytes: 0, allocations: 0, reservedBytes: 0 });
    const a = be.alloc(0, 'float16', 10);
    const b = be.alloc(0, 'float64', 3);
    const c = be.alloc(0, 'bool', 0);
    expect(be.memoryStats(0)).toEqual({ allocatedBytes: 20 + 24, allocations: 3, reservedBytes: 44 });
    be.free(a);
    expect(be.memoryStats(0)).toEqual({ allocatedBytes: 24, allocations: 2, reservedBytes: 24 });
    expect(() => be.free(a)).toThrow(/already been freed/);
    expect(() => be.readSync!(a)).toThrow(/already been freed/);
    await expect(be.read(a)).rejects.toThrow(/already been freed/);
    expect(() => a.data).toThrow(/used after free/);
    be.free(b);
    be.free(c);
    expect(be.memoryStats(0)).toEqual({ allocatedBytes: 0, allocations: 0, reservedBytes: 0 });
  });

  it('with wasm kernels, reserves the heap in use: at least the live bytes, kept when freed for reuse', () => {
    const be = createCpuBackend();
    const a = be.alloc(0, 'float32', 1000);
    expect(a.address).toBeGreaterThan(0);
    const { allocatedBytes, reservedBytes } = be.memoryStats(0);
    expect(allocatedBytes).toBe(4000);
    expect(reservedBytes).toBeGreaterThanOrEqual(allocatedBytes);
    be.free(a);
    expect(be.memoryStats(0)).toMatchObject({ allocatedBytes: 0, allocations: 0, reservedBytes });
  });

  it('refuses storages of another backend instance', () => {
    const one = createCpuBackend();
    const two = createCpuBackend();
    const s = one.alloc(0, 'int32', 1);
    expect(() => two.free(s)).toThrow(/not allocated by this backend/);
    expect(one.memoryStats(0).allocations).toBe(1);
  });
});
