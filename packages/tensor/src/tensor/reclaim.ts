// How storages that the garbage collector found unreachable get freed, without waiting for the
// event loop (docs/guides/memory.md).
//
// A FinalizationRegistry's callbacks run only between event-loop turns, so a loop that never
// yields, or awaits only promises that are already resolved, would never free a tensor it dropped.
// Two things keep memory bounded anyway:
// - In Node, the registry comes from a context where V8's `cleanupSome` exists: every allocation
//   first runs the callbacks of storages already collected, synchronously.
// - Core counts the bytes of storages not yet freed. When they pass a watermark (what was live
//   after the last reclaim, plus 64 MiB, four times the largest storage freed in the last round, up
//   to 256 MiB, or twice the JavaScript heap, whichever is largest), core
//   asks the engine for a full collection (V8 processes finalization
//   records only in full collections) and runs the callbacks. Where the engine offers neither
//   (browsers), it warns once with the fix.

/** What the registry keeps per storage to free it: never the Storage itself. */
export interface Held {
  readonly backend: { free(handle: unknown): void };
  readonly handle: unknown;
  readonly bytes: number;
  /** Set when the storage was freed explicitly: the record then does nothing when its owner is collected. */
  freed: boolean;
}

interface Engine {
  readonly registry: FinalizationRegistry<Held>;
  /** Runs the callbacks of storages the collector has already found, now; null where the engine can't. */
  readonly cleanupSome: (() => void) | null;
  /** A full collection, now (V8 finds unreachable storages only in full collections); null where the engine can't. */
  readonly collect: (() => void) | null;
  /** Bytes the JavaScript heap uses now, what a full collection's cost grows with; null where unknown. */
  readonly heapBytes: (() => number) | null;
}

interface NodeProcess {
  env?: Record<string, string | undefined>;
  getBuiltinModule?: (id: string) => unknown;
}

interface V8Module {
  setFlagsFromString(flags: string): void;
  getHeapStatistics(): { used_heap_size: number };
}
interface VmModule { createContext(): object; runInContext(code: string, context: object): unknown }
type CleanupSomeRegistry = FinalizationRegistry<Held> & { cleanupSome(): void };
type GcFunction = () => void;

const MIN_WATERMARK = 64 * 2 ** 20;

/**
 * The headroom is also at least LARGEST_FACTOR times the largest storage freed (explicitly or
 * found by the collector) since the previous reclaim, up to MAX_LARGEST_HEADROOM: tensors
 * that come and go, not those kept (a model, a dataset). A training step's live bytes swing by a
 * few of its largest tensors within the step (a convolution's columns live from its forward pass
 * to its backward pass), and a headroom not well above that swing forces a full collection at
 * nearly every step:
 * the mnist Net's float32 step (42 MiB columns) forced 71 in 70 steps at a flat 64 MiB, 20 with
 * this, for 10% more steps/s; an MLP whose tensors are small keeps the 64 MiB, which a larger flat
 * headroom made slower (its garbage spread over twice the memory).
 */
const LARGEST_FACTOR = 4;
const MAX_LARGEST_HEADROOM = 256 * 2 ** 20;

/**
 * What one pending storage counts for: its bytes, but at least about what its tensor, storage,
 * backend handle, finalization record and the op's bookkeeping take on the JavaScript heap, so a
 * loop of tiny tensors reaches the watermark too (measured: a synchronous loop of 200,000
 * `randn([16]).mul(2).add(1)` peaks at a 44 MiB heap with 2 KiB here, 530 MiB with 512 bytes).
 */
const MIN_ACCOUNTED_BYTES = 2048;

export function accountedBytes(bytes: number): number {
  return Math.max(bytes, MIN_ACCOUNTED_BYTES);
}

let live = 0;
let watermark = MIN_WATERMARK;
/** The largest storage (accounted bytes) freed since the last reclaim; the next reclaim's headroom counts it. */
let largestFreed = 0;
let warned = false;
let finalizedSinceReclaim = 0;

/** Counts `held` freed, once: its bytes leave the live ones and count for the next headroom. False when it already was. */
function markFreed(held: Held): boolean {
  if (held.freed) return false;
  held.freed = true;
  live -= held.bytes;
  if (held.bytes > largestFreed) largestFreed = held.bytes;
  return true;
}

function finalize(held: Held): void {
  if (!markFreed(held)) return;
  finalizedSinceReclaim++;
  held.backend.free(held.handle);
}

/**
 * Node: a FinalizationRegistry with `cleanupSome` and a `gc` function, taken from a fresh context
 * created while V8's flags for them were on. A flag this process did not start with is turned off
 * again at once, so no other context sees it. `CORE_SYNC_RECLAIM=0` opts out.
 */
function nodeEngine(): Engine | null {
  const proc = (globalThis as { process?: NodeProcess }).process;
  if (typeof proc?.getBuiltinModule !== 'function' || proc.env?.CORE_SYNC_RECLAIM === '0') return null;
  try {
    const v8 = proc.getBuiltinModule('node:v8') as V8Module;
    const vm = proc.getBuiltinModule('node:vm') as VmModule;
    const own = globalThis as { gc?: unknown; FinalizationRegistry: { prototype: object } };
    const flags = [
      ...('cleanupSome' in own.FinalizationRegistry.prototype ? [] : ['harmony-weak-refs-with-cleanup-some']),
      ...(typeof own.gc === 'function' ? [] : ['expose-gc']),
    ];
    for (const flag of flags) v8.setFlagsFromString(`--${flag}`);
    let found: unknown;
    try {
      found = vm.runInContext('[FinalizationRegistry, typeof gc === "function" ? gc : null]', vm.createContext());
    } finally {
      for (const flag of flags) v8.setFlagsFromString(`--no-${flag}`);
    }
    const [Registry, gc] = found as [typeof FinalizationRegistry, GcFunction | null];
    if (typeof (Registry.prototype as Partial<CleanupSomeRegistry>).cleanupSome !== 'function') return null;
    const registry = new Registry<Held>(finalize) as CleanupSomeRegistry;
    return {
      registry,
      cleanupSome: () => registry.cleanupSome(),
      collect: gc,
      heapBytes: () => v8.getHeapStatistics().used_heap_size,
    };
  } catch {
    return null; // an engine without these flags: the portable path below
  }
}

const engine: Engine = nodeEngine() ?? { registry: new FinalizationRegistry(finalize), cleanupSome: null, collect: null, heapBytes: null };

/** Watch `owner`: when it is collected, `held.backend.free(held.handle)` runs. */
export function track(owner: object, held: Held): void {
  live += held.bytes;
  // No unregister token: registering with one costs twice as much, and an explicit free only
  // marks the record (see untrack).
  engine.registry.register(owner, held);
}

/** `owner` was freed explicitly: its record, still registered, will do nothing. */
export function untrack(held: Held): void {
  markFreed(held);
}

/** Called before every allocation of `bytes`: frees what the collector already found, and reclaims past the watermark. */
export function beforeAllocate(bytes: number): void {
  engine.cleanupSome?.();
  if (live + bytes > watermark) reclaim();
}

function reclaim(): void {
  const { collect, cleanupSome } = engine;
  if (collect && cleanupSome) {
    collect();
    cleanupSome();
  } else if (finalizedSinceReclaim === 0 && !warned) {
    warned = true;
    console.warn(
      `@core/tensor: ${Math.round(live / 2 ** 20)} MiB of tensors are waiting to be freed. Tensors that are no longer reachable are freed ` +
        'between turns of the event loop, and this code has not yielded to it since they were created. ' +
        'Await something each step (e.g. `await loss.item()`, which yields) or call dispose() on tensors you no longer need. See docs/guides/memory.md.',
    );
  }
  finalizedSinceReclaim = 0;
  // A full collection costs in proportion to the JavaScript heap: allocating twice that much
  // between two keeps the cost per allocated byte bounded in a large program too. The headroom is
  // added to what is live, not a multiple of it: with much live memory (a model, a compiled
  // program), twice the live bytes let as much garbage pile up, all of it fresh memory, which
  // made a convolution next to a 120 MiB program 10× slower than next to none.
  watermark = live + Math.max(MIN_WATERMARK, 2 * (engine.heapBytes?.() ?? 0), Math.min(LARGEST_FACTOR * largestFreed, MAX_LARGEST_HEADROOM));
  largestFreed = 0;
}

/**
 * @internal True when core frees collected storages at allocation time and bounds pending ones
 * itself (Node): a backend then needs no tricks of its own to make the engine collect.
 */
export function reclaimsSynchronously(): boolean {
  return engine.collect !== null && engine.cleanupSome !== null;
}

/**
 * Resolves after one turn of the event loop (a macrotask), so that finalizers the engine has
 * queued run first. The reads users await (`item()`, `data()`, `toArray()`) end with it.
 */
export function nextTurn(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(null);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}
