/**
 * The CPU backend in TypeScript, for Node and browsers. Importing the package registers the 'cpu'
 * device with @core/tensor.
 *
 * @module \@core/backend-cpu
 */
// Importing the package registers the cpu device with core.
import { registerBackend } from '@core/tensor';
import { createCpuBackend } from './backend.js';

registerBackend({ name: 'cpu', priority: 100, create: () => createCpuBackend() });

export { createCpuBackend, type CpuBackendOptions } from './backend.js';
export { CpuStorage, type CpuArray } from './storage.js';
export { CpuKernels, CpuFused } from './kernels/index.js';
