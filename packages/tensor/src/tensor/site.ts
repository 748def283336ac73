// Where a tensor was created, for device-mismatch messages. Only factories, `.to()` to another
// device and a few library entry points (an optimizer step) capture a stack: that costs
// microseconds. An op's results inherit the site of its first tensor input, which the dispatch's
// device rule records (inheritSite) before the op allocates anything: a tensor on the wrong device
// got there where its data was made or moved, and that is the line the message names.
//
// The location is reduced to a "file:line:col" string at once: an unformatted V8 stack would keep
// every frame's receiver (other tensors, modules) alive, chaining each tensor to the ones it came from.

let tracking = true;

/** Turn creation-site capture off (saves a few µs per op) or on. On by default. */
export function setCreationSiteTracking(on: boolean): void {
  tracking = on;
}

/** "file:line:col" of the user code that created a tensor, or undefined. */
export type CreationSite = string | undefined;

// Frames inside this library (core, other @core packages, backends) and the runtime are skipped:
// the site is the first frame of the user's own code.
const INTERNAL = /[\\/](?:@core|packages[\\/](?:tensor|nn|optim|data|backend-[\w-]+|conformance))[\\/](?:src|dist)[\\/]|[\\/]node_modules[\\/](?:@core|vitest|@vitest|tinypool|vite|vite-node)[\\/]|^node:|\(node:|<anonymous>/;
const LOCATION = /\(?((?:file:\/\/|\/|[A-Za-z]:\\|https?:\/\/)[^()\s]*:\d+:\d+)\)?\s*$/;

/** The first user location in a formatted stack (any engine's format), without the file:// scheme. */
export function userLocation(stack: string): string | undefined {
  for (const line of stack.split('\n')) {
    const m = LOCATION.exec(line.trim());
    if (m && !INTERNAL.test(m[1]!)) return m[1]!.replace(/^file:\/\//, '');
  }
  return undefined;
}

const internalFiles = new Map<string, boolean>();

/** INTERNAL.test per file name, memoised: a program has few files and many tensors. */
function isInternal(file: string): boolean {
  let internal = internalFiles.get(file);
  if (internal === undefined) {
    internal = INTERNAL.test(file);
    if (internalFiles.size < 10_000) internalFiles.set(file, internal);
  }
  return internal;
}

interface CallSite {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
}
type PrepareStackTrace = (error: Error, frames: CallSite[]) => unknown;

/**
 * V8: pick the first user frame from the structured trace and format only that one, through the
 * installed formatter when there is one (source-map support in tsx, vitest, …), so the location
 * matches what the user's own stack traces show.
 */
function firstUserFrame(installed: PrepareStackTrace | undefined): PrepareStackTrace {
  if (installed === lastInstalled && lastPicker) return lastPicker;
  const previous = addsNothing(installed) ? undefined : installed;
  lastInstalled = installed;
  return (lastPicker = (error, frames) => {
    const user = frames.find((f) => {
      const file = f.getFileName();
      return file && !isInternal(file);
    });
    if (!user) return undefined;
    if (!previous) return `${user.getFileName()!.replace(/^file:\/\//, '')}:${user.getLineNumber()}:${user.getColumnNumber()}`;
    const formatted = previous(error, [user]);
    return typeof formatted === 'string' ? userLocation(formatted) : undefined;
  });
}
let lastInstalled: PrepareStackTrace | undefined;
let lastPicker: PrepareStackTrace | undefined;

/** Node's own formatter changes nothing about a location unless source maps are on: skip it. */
function addsNothing(formatter: PrepareStackTrace | undefined): boolean {
  const proc = (globalThis as { process?: { sourceMapsEnabled?: boolean } }).process;
  return formatter?.name === 'ErrorPrepareStackTrace' && proc?.sourceMapsEnabled === false;
}

/** While set, every new tensor gets this site without a stack capture (see withCreationSite). */
let fixedSite: CreationSite | null = null;

/** The site of the running op's first tensor input: what its results inherit. */
let opSite: CreationSite = undefined;

/** Called by the device rule with an op's first tensor input's site: the op's results inherit it. */
export function inheritSite(site: CreationSite): void {
  opSite = site;
}

/** The site of a tensor created now: the fixed one (inside withCreationSite), else the running op's. */
export function currentSite(): CreationSite {
  if (!tracking) return undefined;
  return fixedSite !== null ? fixedSite : opSite;
}

/**
 * Runs `fn` with one creation site, captured now, for every tensor it creates: factories, and
 * library code that creates many tensors on behalf of one user call (an optimizer step), pay for
 * one stack capture, and the site is that user call.
 */
export function withCreationSite<T>(fn: () => T): T {
  if (!tracking || fixedSite !== null) return fn();
  return withSite(captureSite(), fn);
}

/** Runs `fn` with `site` (captured earlier, e.g. before an await) for every tensor it creates. */
export function withSite<T>(site: CreationSite, fn: () => T): T {
  if (!tracking || fixedSite !== null) return fn();
  fixedSite = site;
  try {
    return fn();
  } finally {
    fixedSite = null;
  }
}

export function captureSite(): CreationSite {
  if (!tracking) return undefined;
  if (fixedSite !== null) return fixedSite;
  const ErrorV8 = Error as ErrorConstructor & { prepareStackTrace?: PrepareStackTrace };
  if (typeof ErrorV8.captureStackTrace !== 'function') return userLocation(new Error().stack ?? '');
  // Few frames usually suffice (user → factory → here) and each costs; a layer's forward can nest
  // deeper (forward → functional op → autocast → factory), so look further when none was found.
  return firstUserSite(ErrorV8, SHALLOW_FRAMES) ?? firstUserSite(ErrorV8, DEEP_FRAMES);
}

const SHALLOW_FRAMES = 4;
const DEEP_FRAMES = 40;

function firstUserSite(ErrorV8: ErrorConstructor & { prepareStackTrace?: PrepareStackTrace }, frames: number): CreationSite {
  const previous = ErrorV8.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  ErrorV8.prepareStackTrace = firstUserFrame(previous);
  Error.stackTraceLimit = frames;
  try {
    const holder: { stack?: unknown } = {};
    ErrorV8.captureStackTrace(holder, captureSite);
    return holder.stack as CreationSite; // reading .stack runs firstUserFrame now
  } finally {
    ErrorV8.prepareStackTrace = previous;
    Error.stackTraceLimit = limit;
  }
}
