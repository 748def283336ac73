// Where a tensor was created, for device-mismatch messages. The location is reduced to a
// "file:line:col" string at once: an unformatted V8 stack would keep every frame's receiver (other
// tensors, modules) alive, chaining each tensor to the ones it came from.

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
function firstUserFrame(previous: PrepareStackTrace | undefined): PrepareStackTrace {
  return (error, frames) => {
    const user = frames.find((f) => {
      const file = f.getFileName();
      return file && !isInternal(file);
    });
    if (!user) return undefined;
    if (!previous) return `${user.getFileName()!.replace(/^file:\/\//, '')}:${user.getLineNumber()}:${user.getColumnNumber()}`;
    const formatted = previous(error, [user]);
    return typeof formatted === 'string' ? userLocation(formatted) : undefined;
  };
}

/** While set, every new tensor gets this site without a stack capture (see withCreationSite). */
let fixedSite: CreationSite | null = null;

/**
 * Runs `fn` with one creation site, captured now, for every tensor it creates: library code that
 * creates many tensors on behalf of one user call (backward) pays for one stack capture, not one
 * per tensor, and the site is that user call either way.
 */
export function withCreationSite<T>(fn: () => T): T {
  if (!tracking || fixedSite !== null) return fn();
  fixedSite = captureSite();
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
  const previous = ErrorV8.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  ErrorV8.prepareStackTrace = firstUserFrame(previous);
  // Library frames can be many (a layer's forward → functional op → autocast → kernel).
  Error.stackTraceLimit = 40;
  try {
    const holder: { stack?: unknown } = {};
    ErrorV8.captureStackTrace(holder, captureSite);
    return holder.stack as CreationSite; // reading .stack runs firstUserFrame now
  } finally {
    ErrorV8.prepareStackTrace = previous;
    Error.stackTraceLimit = limit;
  }
}
