// What the wasm runtime asks of its host, without importing Node: the code runs in browsers too,
// so Node's modules are reached through process.getBuiltinModule (Node ≥ 20.16) when it exists.

interface NodeProcess {
  env?: Record<string, string | undefined>;
  versions?: { node?: string };
  getBuiltinModule?: (id: string) => unknown;
}

function nodeProcess(): NodeProcess | undefined {
  return (globalThis as { process?: NodeProcess }).process;
}

/** True in Node (and runtimes that present its `process`). */
export function isNode(): boolean {
  return typeof nodeProcess()?.versions?.node === 'string';
}

/** An environment variable, in Node; undefined elsewhere. */
export function env(name: string): string | undefined {
  return nodeProcess()?.env?.[name];
}

/** A Node built-in module (`node:os`, `node:v8`, …), or undefined outside Node or before Node 20.16. */
export function nodeModule<T>(id: string): T | undefined {
  return nodeProcess()?.getBuiltinModule?.(id) as T | undefined;
}

/** Threads for parallel kernels: CORE_CPU_THREADS when it is a positive integer, else the machine's cores (at most `cap`). */
export function defaultThreads(cap: number): number {
  const fromEnv = Number(env('CORE_CPU_THREADS') ?? NaN);
  if (Number.isInteger(fromEnv) && fromEnv >= 1) return fromEnv;
  const os = nodeModule<{ availableParallelism?: () => number; cpus: () => unknown[] }>('node:os');
  const cores = os ? (os.availableParallelism?.() ?? os.cpus().length) : ((globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1);
  return Math.max(1, Math.min(cap, cores));
}
