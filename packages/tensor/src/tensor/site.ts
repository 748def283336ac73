// Where a tensor was created, for device-mismatch messages. Capturing a stack is the only cost on the
// happy path: V8 records frames eagerly but formats them only when `.stack` is read, i.e. on error.

let tracking = true;

/** Turn creation-site capture off (saves ~1 µs per tensor) or on. On by default. */
export function setCreationSiteTracking(on: boolean): void {
  tracking = on;
}

export type CreationSite = { readonly stack?: string } | undefined;

export function captureSite(): CreationSite {
  if (!tracking) return undefined;
  // V8 (Node, Chromium) can capture without building an Error; other engines get a plain Error.
  if (typeof Error.captureStackTrace !== 'function') return new Error();
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, captureSite);
  return holder;
}

// Frames inside this library (core, other @core packages, backends) are skipped: the site is the
// first frame of the user's own code.
const INTERNAL = /[\\/](?:@core|packages[\\/](?:tensor|nn|optim|data|backend-[\w-]+|conformance))[\\/](?:src|dist)[\\/]|[\\/]node_modules[\\/]@core[\\/]|^node:|\(node:|<anonymous>/;

/** "file:line:col" of the first non-library frame, or undefined. */
export function formatSite(site: CreationSite): string | undefined {
  const stack = site?.stack;
  if (!stack) return undefined;
  for (const line of stack.split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/|\/|[A-Za-z]:\\|https?:\/\/)[^()\s]*:\d+:\d+)\)?\s*$/.exec(line.trim());
    if (!m) continue;
    const loc = m[1]!;
    if (INTERNAL.test(loc) || /[\\/]node_modules[\\/](?:vitest|@vitest|tinypool|vite)[\\/]/.test(loc)) continue;
    return loc.replace(/^file:\/\//, '');
  }
  return undefined;
}
