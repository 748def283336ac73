// Shared by the tests: the configuration under test (set by test/run.mjs), a started backend
// (failing loudly, with the install hint, when WebGPU has no adapter), registered if asked, and
// the float32 bits of a tensor for bit-for-bit comparisons, and the conformance expectations.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { registerBackend, type Tensor } from '@core/tensor';
import { createWebGPUBackend, NODE_INSTALL_HINT, type WebGPUBackend, type WebGPUBackendOptions } from '../src/index.js';

export type Config = 'lavapipe' | 'swiftshader';

/** The software-Vulkan configuration these tests run in (test/run.mjs sets it with VK_ICD_FILENAMES). */
export const CONFIG: Config | undefined = process.env.WEBGPU_TEST_CONFIG as Config | undefined;

export async function startBackend(options: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  try {
    return await createWebGPUBackend(options);
  } catch (e) {
    throw new Error(
      `WebGPU is required by these tests but did not start: ${(e as Error).message}\n` +
        `  (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? 'unset'}; run them with \`pnpm --filter @core/backend-webgpu test\`, which sets it; ${NODE_INSTALL_HINT})`,
    );
  }
}

/** Starts the backend and registers it as the 'webgpu' device (priority 200). */
export async function registeredBackend(options: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  const backend = await startBackend(options);
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
  return backend;
}

/** A tensor's values as float32 bit patterns (converted to float32 first), for bit-for-bit comparisons. */
export async function float32Bits(t: Tensor): Promise<number[]> {
  return Array.from(new Uint32Array(new Float32Array(await t.float().data()).buffer));
}

/**
 * The conformance expectations of this configuration: the backend's file in @core/conformance plus,
 * for SwiftShader, the entries of test/expectations/swiftshader.json (that driver's own gaps, each
 * with its reason).
 */
export function conformanceExpectations(): { backend: string; expectations: unknown[] } {
  const read = (relative: string): { expectations: unknown[] } => JSON.parse(readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8'));
  const extra = CONFIG === 'swiftshader' ? read('./expectations/swiftshader.json').expectations : [];
  return { backend: 'webgpu', expectations: [...read('../../conformance/expectations/webgpu.json').expectations, ...extra] };
}
