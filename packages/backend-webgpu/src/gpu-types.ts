// WebGPU's types in this package's public declarations. They come from @webgpu/types, which itself
// needs the DOM lib (VideoFrame, EventTarget…), so a Node program type-checked without the DOM lib
// could not load them. Each public GPU type is therefore WebGPU's own wherever the program has it
// (its global `GPUDevice`, `GPUBuffer`… are declared: @webgpu/types, or the `webgpu` package's
// types), and a plain `object` elsewhere. Inside this package it is always WebGPU's own.

/**
 * The WebGPU interface `Name` ('GPU', 'GPUAdapter', 'GPUDevice', 'GPUBuffer') where the program has
 * WebGPU's types, else `object`.
 */
export type WebGPUType<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : object;

/** WebGPU's `GPUPowerPreference`. */
export type PowerPreference = 'low-power' | 'high-performance';
