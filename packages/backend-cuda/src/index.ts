// Importing the package registers the cuda device with core (priority 300: above webgpu and cpu).
// The factory loads the native addon and asks the driver; without an addon, a driver or a device it
// rejects with the reason, so `availableDevices()` reports it and `bestDevice()` falls through.
import { registerBackend } from '@core/tensor';
import { createCudaBackend } from './backend.js';

registerBackend({ name: 'cuda', priority: 300, create: () => createCudaBackend() });

export { createCudaBackend, probeCuda, type CudaBackend, type CudaBackendOptions, type CudaFusionStatus } from './backend.js';
export { CudaUnavailableError } from './errors.js';
export { CudaStorage } from './storage.js';
export type { CudaDeviceInfo, CudaProbe, CudaStats, GemmMode } from './native.js';
