// Backend registry. It lives on globalThis so that two copies of core in one process (a bundling or
// ESM/CJS mistake) share the backends and the second copy warns about the first.
import { BackendUnavailableError } from '../errors/errors.js';
import { CONTRACT_VERSION, type Backend, type BackendFactory } from './contract.js';
import { setDeviceTypeSource } from '../device/device.js';

declare const __CORE_VERSION__: string;
const VERSION = typeof __CORE_VERSION__ === 'string' ? __CORE_VERSION__ : '0.0.0-dev';

type Entry =
  | { readonly factory: BackendFactory; state: 'registered' }
  | { readonly factory: BackendFactory; state: 'starting'; promise: Promise<void> }
  | { readonly factory: BackendFactory; state: 'ready'; backend: Backend<unknown> }
  | { readonly factory: BackendFactory; state: 'failed'; reason: string };

interface SharedRegistry {
  readonly entries: Map<string, Entry>;
  /** One id per loaded copy of core, with its version. */
  readonly copies: { id: symbol; version: string }[];
}

const KEY = Symbol.for('@core/tensor/registry');
const self = Symbol('@core/tensor copy');
const g = globalThis as { [KEY]?: SharedRegistry };
const shared: SharedRegistry = (g[KEY] ??= { entries: new Map(), copies: [] });
shared.copies.push({ id: self, version: VERSION });
if (shared.copies.length === 2) {
  console.warn(
    `@core/tensor: two copies of core are loaded in this process (versions ${shared.copies.map((c) => c.version).join(' and ')}). ` +
      'Tensors made by one are not recognised by the other. Make every package resolve the same @core/tensor ' +
      '(pnpm dedupe; and import it only through ESM or only through CJS).',
  );
}

/** How many copies of core this process has loaded (1 unless something is duplicated). */
export function loadedCoreCopies(): number {
  return shared.copies.length;
}

const BUILTIN_TYPES = ['cpu', 'cuda', 'webgpu'];
setDeviceTypeSource(
  (t) => BUILTIN_TYPES.includes(t) || shared.entries.has(t),
  () => [...new Set([...BUILTIN_TYPES, ...shared.entries.keys()])],
);

const PACKAGE_HINT: Record<string, string> = {
  cpu: '@core/backend-cpu',
  webgpu: '@core/backend-webgpu',
  cuda: '@core/backend-cuda',
};

function majorOf(v: string): string {
  return v.split('.')[0] ?? v;
}

function validate(b: Backend<unknown>, factory: BackendFactory): void {
  if (b.name !== factory.name) throw new Error(`it reports the name '${b.name}' but was registered as '${factory.name}'`);
  if (majorOf(b.contractVersion) !== majorOf(CONTRACT_VERSION)) {
    throw new Error(`it implements contract ${b.contractVersion}, core needs ${majorOf(CONTRACT_VERSION)}.x`);
  }
  if (!(b.deviceCount >= 1)) throw new Error('it reports no device');
}

function settle(factory: BackendFactory, result: Backend<unknown> | Error): Entry {
  if (result instanceof Error) return { factory, state: 'failed', reason: result.message };
  try {
    validate(result, factory);
    return { factory, state: 'ready', backend: result };
  } catch (e) {
    return { factory, state: 'failed', reason: (e as Error).message };
  }
}

function isPromiseLike(x: unknown): x is PromiseLike<Backend<unknown>> {
  return typeof (x as { then?: unknown } | null)?.then === 'function';
}

/** Run a registered factory once; async factories leave the entry 'starting' until they settle. */
function start(name: string): Entry | undefined {
  const entry = shared.entries.get(name);
  if (!entry || entry.state !== 'registered') return entry;
  const { factory } = entry;
  let made: Backend<unknown> | PromiseLike<Backend<unknown>>;
  try {
    made = factory.create();
  } catch (e) {
    const failed = settle(factory, e instanceof Error ? e : new Error(String(e)));
    shared.entries.set(name, failed);
    return failed;
  }
  if (isPromiseLike(made)) {
    const promise = Promise.resolve(made).then(
      (b) => void shared.entries.set(name, settle(factory, b)),
      (e: unknown) => void shared.entries.set(name, settle(factory, e instanceof Error ? e : new Error(String(e)))),
    );
    const starting: Entry = { factory, state: 'starting', promise };
    shared.entries.set(name, starting);
    return starting;
  }
  const settled = settle(factory, made);
  shared.entries.set(name, settled);
  return settled;
}

/**
 * Register a backend factory under its device type. Importing a backend package does this. A later
 * registration with the same name replaces an earlier one (hot reload, tests).
 */
export function registerBackend(factory: BackendFactory): void {
  if (!factory || typeof factory.name !== 'string' || typeof factory.create !== 'function') {
    throw new TypeError('registerBackend({ name, priority, create }) needs a name and a create() function');
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(factory.name)) {
    throw new TypeError(`registerBackend: '${factory.name}' is not a valid device type name (letters, digits, _)`);
  }
  shared.entries.set(factory.name, { factory, state: 'registered' });
}

/** Names of registered backends, in registration order. */
export function listBackends(): string[] {
  return [...shared.entries.keys()];
}

/**
 * @internal Whether the registered, not yet started backend `type` should stay unstarted while a
 * better device is available: its probe says it is unavailable, or a software adapter. False when
 * it has started already, has no probe, or the probe can't tell.
 */
export async function probeSaysSkip(type: string): Promise<boolean> {
  const entry = shared.entries.get(type);
  if (entry?.state !== 'registered' || typeof entry.factory.probe !== 'function') return false;
  try {
    const probe = await entry.factory.probe();
    return probe !== null && (!probe.available || probe.features.includes('software-adapter'));
  } catch {
    return false;
  }
}

/** The started backend for a device type, or a BackendUnavailableError that says why not. */
export function getBackend(type: string): Backend<unknown> {
  const entry = start(type);
  if (entry?.state === 'ready') return entry.backend;
  throw unavailable(type, entry);
}

function unavailable(type: string, entry: Entry | undefined): BackendUnavailableError {
  if (!entry) {
    const pkg = PACKAGE_HINT[type];
    const reason = 'no backend registered';
    const hint = pkg ? `import '${pkg}'` : `import the package that registers the '${type}' backend`;
    return new BackendUnavailableError(`No backend for device type '${type}' is registered: ${hint} first.`, type, reason);
  }
  if (entry.state === 'starting') {
    return new BackendUnavailableError(
      `The '${type}' backend is still starting: \`await bestDevice()\` or \`await availableDevices()\` before using it.`,
      type,
      'starting',
    );
  }
  const reason = entry.state === 'failed' ? entry.reason : 'not started';
  return new BackendUnavailableError(`The '${type}' backend is unavailable: ${reason}`, type, reason);
}

/** True when the device type's backend has started (sync factories start on first ask). */
export function isAvailable(type: string): boolean {
  return start(type)?.state === 'ready';
}

/** One registered backend's state, as `availableDevices()` reports it. */
export interface DeviceAvailability {
  /** The device type, e.g. 'cpu'. */
  readonly type: string;
  /** Whether its backend started. */
  readonly available: boolean;
  /** Why it is unavailable (the factory's error), when it is. */
  readonly reason?: string;
  /** Its registered priority (higher wins in `bestDevice()`). */
  readonly priority: number;
  /** How many devices it serves (0 when unavailable). */
  readonly deviceCount: number;
}

/** Start every registered backend and report each one's availability. */
export async function availableDevices(): Promise<DeviceAvailability[]> {
  return startAll(listBackends());
}

/** @internal Start the named backends (all at once) and say which are available. */
export async function startAll(names: readonly string[]): Promise<DeviceAvailability[]> {
  for (const n of names) start(n);
  await Promise.all(names.map((n) => { const e = shared.entries.get(n); return e?.state === 'starting' ? e.promise : undefined; }));
  return names.map((type): DeviceAvailability => {
    const e = shared.entries.get(type)!;
    const priority = e.factory.priority;
    if (e.state === 'ready') return { type, available: true, priority, deviceCount: e.backend.deviceCount };
    return { type, available: false, reason: e.state === 'failed' ? e.reason : e.state, priority, deviceCount: 0 };
  });
}
