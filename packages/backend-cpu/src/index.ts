/**
 * The CPU backend for Node and browsers: WebAssembly SIMD kernels on worker threads for the hot
 * float32 ops, TypeScript kernels for everything else. Importing the package registers the 'cpu'
 * device with @core/tensor.
 *
 * @module \@core/backend-cpu
 */
// Importing the package registers the cpu device with core.
import { registerBackend } from '@core/tensor';
import { createCpuBackend } from './backend.js';

registerBackend({ name: 'cpu', priority: 100, create: () => createCpuBackend() });

export { createCpuBackend, type CpuBackend, type CpuBackendOptions, type CpuWasmInfo } from './backend.js';
export { CpuStorage, type CpuArray } from './storage.js';
export { CpuKernels, CpuFused } from './kernels/index.js';
