// Finding a GPU: `navigator.gpu` where the platform has one (browsers, Deno), else the `webgpu`
// npm package (Dawn) in Node, chosen at run time. A missing implementation or adapter is an error
// with the reason and, in Node, the hint to install a Vulkan driver.
import { WebGPUUnavailableError } from './errors.js';

/** A device requested by {@link acquireDevice}, with what is known about it. */
export interface AcquiredDevice {
  /** The device, created with `shader-f16` when available and the adapter's buffer limits. */
  readonly device: GPUDevice;
  /** The adapter it came from. */
  readonly adapter: GPUAdapter;
  /** Where the device came from: 'navigator.gpu' or 'webgpu (Dawn)'. */
  readonly source: string;
  /** The adapter has `shader-f16` and the device was created with it. */
  readonly shaderF16: boolean;
  /** A short description of the adapter, for messages. */
  readonly description: string;
}

/** How {@link acquireDevice} finds its GPU. */
export interface AcquireOptions {
  /** Use this GPU object (a `navigator.gpu`, or `create([...])` of the `webgpu` package) instead of looking for one. */
  readonly gpu?: GPU;
  /** Do not request `shader-f16` even when the adapter has it (tests the packed float16 path). */
  readonly disableShaderF16?: boolean;
  /** Passed to `requestAdapter()`. */
  readonly powerPreference?: GPUPowerPreference;
}

/** What to do when Node has no WebGPU adapter (part of the error messages). */
export const NODE_INSTALL_HINT =
  'in Node, WebGPU runs on a Vulkan driver: install one (on Debian, `scripts/install-webgpu-deps.sh` installs lavapipe from ' +
  'bookworm-backports) and point VK_ICD_FILENAMES at its ICD json, e.g. /usr/share/vulkan/icd.d/lvp_icd.json';

type Dawn = { create(flags: string[]): GPU; globals: Record<string, unknown> };

let dawnGpu: GPU | null = null;

async function nodeGpu(): Promise<GPU> {
  if (dawnGpu) return dawnGpu;
  let mod: Dawn;
  try {
    // A variable specifier keeps bundlers from pulling the Node-only package into browser builds.
    const name = 'webgpu';
    mod = (await import(/* @vite-ignore */ name)) as Dawn;
  } catch (e) {
    throw new WebGPUUnavailableError(
      `no WebGPU implementation: navigator.gpu is absent and the 'webgpu' package (Dawn for Node) could not be loaded (${(e as Error).message})`,
    );
  }
  const create = mod.create ?? (mod as unknown as { default: Dawn }).default?.create;
  dawnGpu = create([]);
  return dawnGpu;
}

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string';
}

/** A WebGPU entry point and where it came from. */
export interface FoundGpu {
  /** The `GPU` object (`navigator.gpu`, or Dawn's). */
  readonly gpu: GPU;
  /** 'navigator.gpu' or 'webgpu (Dawn)'. */
  readonly source: string;
}

/** The GPU entry point of this platform: `navigator.gpu`, else Dawn (the `webgpu` package) in Node. */
export async function findGpu(): Promise<FoundGpu> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return { gpu: nav.gpu, source: 'navigator.gpu' };
  if (isNode()) return { gpu: await nodeGpu(), source: 'webgpu (Dawn)' };
  throw new WebGPUUnavailableError('no WebGPU implementation: navigator.gpu is absent (use a browser with WebGPU enabled, or Node with the webgpu package)');
}

/** Request an adapter and a device with the features and limits this backend uses. */
export async function acquireDevice(options: AcquireOptions = {}): Promise<AcquiredDevice> {
  const { gpu, source } = options.gpu ? { gpu: options.gpu, source: 'given GPU' } : await findGpu();
  const adapter = await gpu.requestAdapter(options.powerPreference ? { powerPreference: options.powerPreference } : {});
  if (!adapter) {
    const hint = source === 'webgpu (Dawn)' ? `; ${NODE_INSTALL_HINT}` : '';
    throw new WebGPUUnavailableError(`no WebGPU adapter: ${source} returned null from requestAdapter()${hint}`);
  }
  const shaderF16 = adapter.features.has('shader-f16') && !options.disableShaderF16;
  const limits = adapter.limits;
  const requiredLimits: Record<string, number> = {
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    maxBufferSize: limits.maxBufferSize,
    maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
    maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
    maxStorageBuffersPerShaderStage: Math.min(limits.maxStorageBuffersPerShaderStage, 10),
  };
  const device = await adapter.requestDevice({
    requiredFeatures: shaderF16 ? ['shader-f16'] : [],
    requiredLimits,
  });
  const info = (adapter as { info?: GPUAdapterInfo }).info;
  const description = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s) => s).join(' ') || 'unknown adapter';
  return { device, adapter, source, shaderF16, description };
}
