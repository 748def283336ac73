// Build-time data for the pages, shipped as gzipped files. Each is a virtual module
// (`virtual:<name>`) whose default export is the file's URL — an emitted asset in a build, a path
// the dev server answers under `vite dev` — and whose named exports describe it. The browser
// inflates the file with DecompressionStream (src/page.ts: fetchGzipped).
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

/** What a packed file holds before gzip, and the numbers the virtual module exports about it. */
export interface Packed {
  readonly raw: Uint8Array;
  readonly exports: Readonly<Record<string, number>>;
}

/** A plugin shipping `pack()`'s bytes, gzipped, as `virtual:<name>`; `pack` runs once, when the module is first loaded. */
export function gzippedAsset(name: string, pack: () => Packed): Plugin {
  const virtual = `virtual:${name}`;
  const resolved = `\0${virtual}`;
  const devUrl = `/@${name}.gz`;
  let packed: { bytes: Buffer; exports: Packed['exports'] } | undefined;
  const get = () => {
    if (!packed) {
      const { raw, exports } = pack();
      packed = { bytes: gzipSync(raw, { level: 9 }), exports };
    }
    return packed;
  };
  let serve = false;
  return {
    name,
    configResolved(config) { serve = config.command === 'serve'; },
    resolveId(id) { return id === virtual ? resolved : undefined; },
    load(id) {
      if (id !== resolved) return undefined;
      const { bytes, exports } = get();
      const named = Object.entries(exports).map(([key, value]) => `export const ${key} = ${JSON.stringify(value)};`).join('\n');
      if (serve) return `export default ${JSON.stringify(devUrl)};\n${named}`;
      const ref = this.emitFile({ type: 'asset', name: `${name}.gz`, source: bytes });
      return `export default import.meta.ROLLUP_FILE_URL_${ref};\n${named}`;
    },
    configureServer(server) {
      server.middlewares.use(devUrl, (_req, res) => {
        res.setHeader('content-type', 'application/octet-stream');
        res.end(get().bytes);
      });
    },
  };
}
