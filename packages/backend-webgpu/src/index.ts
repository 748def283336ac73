/// <reference types="@webgpu/types" />
// Importing the package registers the webgpu device with core. The factory is async: it finds a
// GPU (navigator.gpu in browsers, the `webgpu` package's Dawn in Node), and rejects with the reason
// when there is none, so `availableDevices()` reports it and `bestDevice()` falls through to cpu.
import { registerBackend } from '@core/tensor';
import { createWebGPUBackend } from './backend.js';
import { probeWebGPU } from './device.js';

// The probe lets bestDevice() pass over a software adapter (lavapipe, SwiftShader) without starting Dawn here.
registerBackend({ name: 'webgpu', priority: 200, create: () => createWebGPUBackend(), probe: probeWebGPU });

export { createWebGPUBackend, type WebGPUBackend, type WebGPUBackendOptions, type WebGPUStats } from './backend.js';
export { acquireDevice, findGpu, NODE_INSTALL_HINT, type AcquiredDevice, type AcquireOptions, type FoundGpu } from './device.js';
export {
  WebGPUError, WebGPUUnavailableError, WebGPUDeviceLostError, WebGPUOutOfMemoryError, WebGPUBufferLimitError, WebGPUValidationError,
} from './errors.js';
export { WebGPUStorage, sizeClass } from './storage.js';
