// Finding a GPU: `navigator.gpu` where the platform has one (browsers, Deno), else the `webgpu`
// npm package (Dawn) in Node, chosen at run time. A missing implementation or adapter is an error
// with the reason and, in Node, the hint to install a Vulkan driver.
//
// Dawn prints what it meets while looking for adapters (no Vulkan loader, no driver, clamped
// limits) from native code straight to the process's stderr, where no JavaScript can catch it. So
// in Node the first look is a quiet probe: a child process asks Dawn for an adapter with its stderr
// piped back; when it finds none, the backend is unavailable with Dawn's messages as the reason, and
// this process never loads Vulkan. CORE_WEBGPU_DEBUG=1 skips the probe: Dawn then prints here.
import type { BackendProbe } from '@core/tensor';
import { WebGPUUnavailableError } from './errors.js';
import type { PowerPreference, WebGPUType } from './gpu-types.js';

/** A device requested by {@link acquireDevice}, with what is known about it. */
export interface AcquiredDevice {
  /** The device, created with `shader-f16` when available and the adapter's buffer limits. */
  readonly device: WebGPUType<'GPUDevice'>;
  /** The adapter it came from. */
  readonly adapter: WebGPUType<'GPUAdapter'>;
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
  readonly gpu?: WebGPUType<'GPU'>;
  /** Do not request `shader-f16` even when the adapter has it (tests the packed float16 path). */
  readonly disableShaderF16?: boolean;
  /** Passed to `requestAdapter()`. */
  readonly powerPreference?: PowerPreference;
}

/** What to do when Node has no WebGPU adapter (part of the error messages). */
export const NODE_INSTALL_HINT =
  'in Node, WebGPU runs on a Vulkan driver: install one (on Debian, `scripts/install-webgpu-deps.sh` installs lavapipe from ' +
  'bookworm-backports) and point VK_ICD_FILENAMES at its ICD json, e.g. /usr/share/vulkan/icd.d/lvp_icd.json';

type Dawn = { create(flags: string[]): GPU; globals: Record<string, unknown> };

/** The environment variable that lets Dawn print its native messages in this process (`CORE_WEBGPU_DEBUG=1`). */
const WEBGPU_DEBUG_ENV = 'CORE_WEBGPU_DEBUG';

const DAWN_SOURCE = 'webgpu (Dawn)';

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
  readonly gpu: WebGPUType<'GPU'>;
  /** 'navigator.gpu' or 'webgpu (Dawn)'. */
  readonly source: string;
}

/** The GPU entry point of this platform: `navigator.gpu`, else Dawn (the `webgpu` package) in Node. */
export async function findGpu(): Promise<FoundGpu> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return { gpu: nav.gpu, source: 'navigator.gpu' };
  if (isNode()) return { gpu: await nodeGpu(), source: DAWN_SOURCE };
  throw new WebGPUUnavailableError('no WebGPU implementation: navigator.gpu is absent (use a browser with WebGPU enabled, or Node with the webgpu package)');
}

/** @internal Adapters that are software Vulkan/D3D implementations running on the CPU. */
export const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|swiftshader|microsoft basic render/i;

/**
 * What starting the backend would find, without starting it in this process (the registry's
 * `probe`): in Node, the quiet probe's answer; null in browsers (where starting is quiet and cheap)
 * or when the probe can't tell.
 */
export async function probeWebGPU(): Promise<BackendProbe | null> {
  if (!isNode() || debugging() || (globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu) return null;
  const probe = await (dawnProbe ??= probeDawn());
  if (!probe) return null;
  return { available: probe.adapter, features: probe.adapter && SOFTWARE_ADAPTER.test(probe.description) ? ['software-adapter'] : [] };
}

/** Request an adapter and a device with the features and limits this backend uses. */
export async function acquireDevice(options: AcquireOptions = {}): Promise<AcquiredDevice> {
  const { gpu, source } = options.gpu ? { gpu: options.gpu, source: 'given GPU' } : await findGpu();
  if (source === DAWN_SOURCE && !debugging()) {
    const probe = await (dawnProbe ??= probeDawn());
    if (probe?.adapter === false) {
      const said = probe.messages ? ` (Dawn: ${probe.messages})` : '';
      throw new WebGPUUnavailableError(`no WebGPU adapter: ${source} found none${said}; ${NODE_INSTALL_HINT}; ${WEBGPU_DEBUG_ENV}=1 shows Dawn's own output`);
    }
  }
  const adapter = await gpu.requestAdapter(options.powerPreference ? { powerPreference: options.powerPreference } : {});
  if (!adapter) {
    const hint = source === DAWN_SOURCE ? `; ${NODE_INSTALL_HINT}` : '';
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

// ---- the quiet probe (Node) ----

function debugging(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[WEBGPU_DEBUG_ENV];
  return value !== undefined && value !== '' && value !== '0';
}

/** What the probe saw: whether Dawn found an adapter, which one, and what Dawn printed, on one line. */
interface DawnProbe {
  readonly adapter: boolean;
  /** The adapter's vendor, architecture, device and description, as acquireDevice() describes it. */
  readonly description: string;
  readonly messages: string;
}

/** One probe per process: the answer does not change while it runs. */
let dawnProbe: Promise<DawnProbe | null> | undefined;

// Run by `node --input-type=module -e`, with the `webgpu` package's URL as its argument.
const PROBE_SCRIPT = [
  'const { create } = await import(process.argv[1]);',
  'const adapter = await create([]).requestAdapter();',
  'const info = adapter?.info ?? {};',
  "const description = [info.vendor, info.architecture, info.device, info.description].filter((s) => s).join(' ');",
  'process.stdout.write(JSON.stringify({ adapter: adapter !== null, description }));',
  'process.exit(0);',
].join('\n');

// Node built-ins through specifiers bundlers do not follow (this path runs in Node only).
const NODE_CHILD_PROCESS = 'node:child_process';
const NODE_MODULE = 'node:module';
const NODE_URL = 'node:url';

/**
 * Ask Dawn for an adapter in a child process, Dawn's stderr piped here. Null when the probe itself
 * could not run or answer (then the adapter is requested in this process, as without the probe).
 */
async function probeDawn(): Promise<DawnProbe | null> {
  try {
    const [{ spawn }, { createRequire }, { pathToFileURL }] = await Promise.all([
      import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_CHILD_PROCESS) as Promise<typeof import('node:child_process')>,
      import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_MODULE) as Promise<typeof import('node:module')>,
      import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_URL) as Promise<typeof import('node:url')>,
    ]);
    // `webgpu` as this module resolves it: from its URL in the ESM build, through `require` in the CommonJS one.
    const here = (import.meta as { url?: string }).url;
    const entry = here ? createRequire(here).resolve('webgpu') : require.resolve('webgpu');
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE_SCRIPT, pathToFileURL(entry).href], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      windowsHide: true,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', resolve);
    });
    const answer = code === 0 ? (JSON.parse(out) as { adapter?: unknown; description?: unknown }) : null;
    if (typeof answer?.adapter !== 'boolean') return null;
    return { adapter: answer.adapter, description: typeof answer.description === 'string' ? answer.description : '', messages: oneLine(err) };
  } catch {
    return null;
  }
}

/** Dawn's messages on one line: severity prefixes and source locations dropped, repeats once. */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('at '));
  const text = [...new Set(lines.map((l) => l.replace(/^(Warning|Error|Info): /, '')))].join('; ');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
