// Loading the backend under test and describing it as an Env: which device it serves, what it
// declares, and which second device the device and transfer cases use.
import {
  availableDevices, cpu, device, getBackend, isAvailable, listBackends, registerBackend,
  type Backend, type BackendFactory, type DTypeName,
} from '@core/tensor';
import type { CpuPresence, Env } from '../types.js';

/**
 * How a run gets its backend: a Backend object (registered under its name), a BackendFactory (as
 * for registerBackend), the device type of a backend that is already registered (e.g. after
 * `import '@core/backend-cpu'`), or nothing when the loader registers it itself and
 * `options.device` (or the single newly registered name) says which.
 */
export type BackendLoader = () => Backend<any> | BackendFactory | string | void | Promise<Backend<any> | BackendFactory | string | void>;

/** Options for loading the backend under test. */
export interface LoadOptions {
  /** Device type to test, when the loader registers several or returns nothing. */
  readonly device?: string;
  /**
   * Run without the cpu backend (default false; the CLI's default is true): the runner never
   * imports `@core/backend-cpu`, so the backend is tested the way a program that imports only it
   * uses it, and core must not need the cpu behind its back. Cases that need the cpu device are
   * skipped with ISOLATED_SKIP, and the report counts them. A process cannot un-import a module: when
   * the cpu backend is already registered (the cpu is under test, or something imported it first)
   * isolation does not apply, `Env.cpuPresence` says so, and those cases run. Not isolated, the
   * runner imports `@core/backend-cpu` as the reference host device for a backend that is not cpu.
   */
  readonly isolated?: boolean;
}

/** The suite could not start: the backend did not load, or which device to test is unclear. */
export class ConformanceSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceSetupError';
  }
}

function isBackend(x: unknown): x is Backend<unknown> {
  return typeof x === 'object' && x !== null && 'kernels' in x && 'alloc' in x && typeof (x as Backend).name === 'string';
}

function isFactory(x: unknown): x is BackendFactory {
  return typeof x === 'object' && x !== null && typeof (x as BackendFactory).create === 'function' && typeof (x as BackendFactory).name === 'string';
}

/**
 * Where the run stands with the cpu backend, importing `@core/backend-cpu` (the reference host
 * device for a backend that is not cpu) unless the run is isolated or the cpu is already registered.
 */
async function settleCpu(name: string, isolated: boolean): Promise<CpuPresence> {
  if (name === 'cpu') return 'under-test';
  if (listBackends().includes('cpu')) return 'already-registered';
  if (isolated) return 'absent';
  await import('@core/backend-cpu');
  return 'registered-by-runner';
}

/** Register (if needed) and start the backend under test; register the cpu reference device unless the run is isolated. */
export async function prepareEnv(load: BackendLoader | undefined, options: LoadOptions = {}): Promise<Env> {
  const before = new Set(listBackends());
  const loaded = await load?.();
  let name: string | undefined;
  if (isBackend(loaded)) {
    const backend = loaded;
    // Replacing a registered backend (a wrapped cpu, say) keeps its priority for bestDevice().
    const priority = before.has(backend.name) ? ((await availableDevices()).find((d) => d.type === backend.name)?.priority ?? 0) : 0;
    registerBackend({ name: backend.name, priority, create: () => backend });
    name = backend.name;
  } else if (isFactory(loaded)) {
    registerBackend(loaded);
    name = loaded.name;
  } else if (typeof loaded === 'string') {
    name = loaded;
  }
  name = options.device ?? name;
  if (name === undefined) {
    const added = listBackends().filter((n) => !before.has(n));
    if (added.length !== 1) {
      throw new ConformanceSetupError(
        `conformance: cannot tell which backend to test (the loader registered ${added.length === 0 ? 'none' : added.join(', ')}); ` +
          'return the Backend object or its device type from the loader, or pass { device }',
      );
    }
    name = added[0]!;
  }
  const cpuPresence = await settleCpu(name, options.isolated ?? false);
  const availability = await availableDevices();
  const mine = availability.find((a) => a.type === name);
  if (!mine) throw new ConformanceSetupError(`conformance: no backend named '${name}' is registered (registered: ${listBackends().join(', ') || 'none'})`);
  if (!mine.available) throw new ConformanceSetupError(`conformance: the '${name}' backend is unavailable: ${mine.reason}`);
  const backend = getBackend(name);
  const dtypes = Object.entries(backend.capabilities.dtypes) as [DTypeName, { storage: boolean; compute: boolean }][];
  const fused = new Set(Object.entries(backend.fused ?? {}).filter(([, f]) => typeof f === 'function').map(([k]) => k));
  return {
    name,
    backend,
    device: name === 'cpu' ? cpu : device(name, 0),
    peer: backend.deviceCount > 1 && name !== 'cpu' ? device(name, 1) : null,
    cpu: name !== 'cpu' && isAvailable('cpu') ? cpu : null,
    cpuPresence,
    compute: new Set(dtypes.filter(([, s]) => s?.compute).map(([d]) => d)),
    storage: new Set(dtypes.filter(([, s]) => s?.storage).map(([d]) => d)),
    strictNumerics: backend.capabilities.strictNumerics,
    syncRead: typeof backend.readSync === 'function',
    fused,
  };
}
