// The cuda backend where it cannot run (this CI machine: nvcc, no GPU, no driver): importing
// registers it, starting it fails with the precise reason, and bestDevice() falls through.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '@core/backend-cpu';
import { availableDevices, bestDevice, BackendUnavailableError, isAvailable, listBackends, tensor } from '@core/tensor';
import { CudaUnavailableError, createCudaBackend, probeCuda } from '../src/index.js';
import { defaultAddonPath, loadAddon } from '../src/native.js';

const REASONS = [/^no NVIDIA driver \(libcuda\.so\.1 not found\)$/, /^driver too old: needs ≥ CUDA 13\.0/, /^no device/, /^the native addon/];
const addonBuilt = existsSync(defaultAddonPath());
// No GPU device nodes and no driver library in the usual places: the driver cannot be there.
const noDriver = !existsSync('/dev/nvidiactl') && !['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/lib64/libcuda.so.1', '/usr/local/cuda/compat/libcuda.so.1'].some(existsSync);
const probe = probeCuda();

describe.skipIf(probe.available)('cuda unavailable', () => {
  it('importing the package registers the cuda device', () => {
    expect(listBackends()).toContain('cuda');
  });

  it('availableDevices() reports cuda unavailable with the probe\'s precise reason', async () => {
    const cuda = (await availableDevices()).find((d) => d.type === 'cuda');
    expect(cuda).toBeDefined();
    expect(cuda!.available).toBe(false);
    expect(cuda!.deviceCount).toBe(0);
    expect(cuda!.reason).toBe(probe.reason);
    expect(REASONS.some((r) => r.test(cuda!.reason!))).toBe(true);
    expect(isAvailable('cuda')).toBe(false);
  });

  it.runIf(addonBuilt && noDriver)('with the addon built and no driver, the reason is exactly the missing libcuda.so.1', () => {
    expect(probe).toEqual({ available: false, reason: 'no NVIDIA driver (libcuda.so.1 not found)', deviceCount: 0, driverVersion: 0, devices: [] });
  });

  it.runIf(!addonBuilt)('without the addon (no nvcc at build time), the reason says to build it', () => {
    expect(probe.reason).toMatch(/^the native addon was not built .*build:native/);
  });

  it('bestDevice() falls through to the next backend', async () => {
    const best = await bestDevice();
    expect(best.type).not.toBe('cuda');
    expect(best.type).toBe('cpu');
  });

  it('a tensor on cuda fails with BackendUnavailableError carrying the reason', async () => {
    await availableDevices();
    let error: unknown;
    try {
      tensor([1, 2, 3], { device: 'cuda' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toContain(probe.reason);
  });

  it('createCudaBackend() rejects with CudaUnavailableError and the reason', async () => {
    const e = await createCudaBackend().catch((err: unknown) => err);
    expect(e).toBeInstanceOf(CudaUnavailableError);
    expect((e as CudaUnavailableError).reason).toBe(probe.reason);
  });

  it('createCudaBackend() with a missing addon rejects with the "not built" reason', async () => {
    const e = await createCudaBackend({ addonPath: '/nonexistent/core_cuda.node' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(CudaUnavailableError);
    expect((e as CudaUnavailableError).reason).toMatch(/^the native addon was not built \(\/nonexistent\/core_cuda\.node is missing: nvcc was not found/);
    expect(probeCuda('/nonexistent/core_cuda.node')).toMatchObject({ available: false, deviceCount: 0, devices: [] });
  });

  it('a missing addon file is reported, not thrown', () => {
    const r = loadAddon(join('/nonexistent', 'core_cuda.node'));
    expect('reason' in r && r.reason).toMatch(/^the native addon was not built \(\/nonexistent\/core_cuda\.node is missing/);
  });
});
