// The browser build of @core/backend-cuda: CUDA needs Node.js and a native addon, so this entry
// registers 'cuda' with a factory that rejects with the reason; `bestDevice()` then falls through
// to webgpu or cpu exactly as on a Node machine without a GPU. No Node built-ins are imported.
import { registerBackend } from '@core/tensor';
import type { CudaBackend, CudaBackendOptions } from './backend.js';
import { CudaUnavailableError } from './errors.js';
import type { CudaProbe } from './native.js';

const REASON = 'CUDA needs Node.js (the cuda backend is a native addon); in a browser use the webgpu backend';

registerBackend({ name: 'cuda', priority: 300, create: () => createCudaBackend() });

/** Always unavailable in a browser. */
export function probeCuda(_addonPath?: string): CudaProbe {
  return { available: false, reason: REASON, deviceCount: 0, driverVersion: 0, devices: [] };
}

/** Always rejects with {@link CudaUnavailableError} in a browser. */
export async function createCudaBackend(_options: CudaBackendOptions = {}): Promise<CudaBackend> {
  throw new CudaUnavailableError(REASON);
}

export type { CudaBackend, CudaBackendOptions } from './backend.js';
export { CudaUnavailableError } from './errors.js';
export { CudaStorage } from './storage.js';
export type { CudaDeviceInfo, CudaProbe, CudaStats, GemmMode } from './native.js';
