/**
 * The CPU backend for Node and browsers: WebAssembly SIMD kernels on worker threads for the hot
 * float32 ops, in Node a native addon for float32 matmuls (AVX-512/AVX2 GEMM, or OpenBLAS) and
 * bfloat16 ones (AVX512-BF16), and
 * TypeScript kernels for everything else. Importing the package registers the 'cpu'
 * device with @core/tensor.
 *
 * @module \@core/backend-cpu
 */
// Importing the package registers the cpu device with core.
import { registerBackend } from '@core/tensor';
import { createCpuBackend } from './backend.js';

registerBackend({ name: 'cpu', priority: 100, create: () => createCpuBackend() });

export { createCpuBackend, type CpuBackend, type CpuBackendOptions, type CpuWasmInfo } from './backend.js';
export type { CpuGemmPath, CpuHalfGemmPath, CpuNativeInfo, CpuNativeLoaded, CpuNativeUnavailable } from './native.js';
export { CpuStorage, type CpuArray } from './storage.js';
export { CpuKernels, CpuFused } from './kernels/index.js';
