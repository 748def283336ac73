// Build-time step: the `mnist` package's digits are 21 MB of JSON floats (10 files, one per class).
// The page needs only a few thousand, so this packs the first PER_CLASS digits of each class into
// one compact binary — a byte per pixel (the JSON holds byte/255 rounded to 3 decimals, so
// round(v·255) gives the original byte back) and a byte per label — gzipped. The browser
// inflates it with DecompressionStream. Exposed as the virtual module `virtual:mnist-digits`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

const SIDE = 28;
const PIXELS = SIDE * SIDE;
const VIRTUAL = 'virtual:mnist-digits';
const RESOLVED = '\0' + VIRTUAL;
const DEV_URL = '/@mnist-digits.gz';

/** Layout: [count·784 pixel bytes, class-interleaved][count label bytes], gzipped. */
export function packDigits(perClass: number): { bytes: Buffer; count: number } {
  const require = createRequire(import.meta.url);
  const dir = require.resolve('mnist/package.json').replace(/package\.json$/, 'src/digits/');
  const classes = Array.from({ length: 10 }, (_, label) => (JSON.parse(readFileSync(`${dir}${label}.json`, 'utf8')) as { data: number[] }).data);
  const take = Math.min(perClass, ...classes.map((d) => Math.floor(d.length / PIXELS)));
  const count = take * 10;
  const raw = new Uint8Array(count * (PIXELS + 1));
  let at = 0;
  // Interleave classes (0,1,…,9,0,1,…) so any prefix is balanced.
  for (let i = 0; i < take; i++) {
    for (let label = 0; label < 10; label++) {
      const src = classes[label]!;
      for (let p = 0; p < PIXELS; p++) raw[at * PIXELS + p] = Math.round(src[i * PIXELS + p]! * 255);
      raw[count * PIXELS + at] = label;
      at++;
    }
  }
  return { bytes: gzipSync(raw, { level: 9 }), count };
}

export function mnistDigits({ perClass = 500 }: { perClass?: number } = {}): Plugin {
  let packed: { bytes: Buffer; count: number } | undefined;
  const get = () => (packed ??= packDigits(perClass));
  let serve = false;
  return {
    name: 'mnist-digits',
    configResolved(config) { serve = config.command === 'serve'; },
    resolveId(id) { return id === VIRTUAL ? RESOLVED : undefined; },
    load(id) {
      if (id !== RESOLVED) return undefined;
      const { count } = get();
      if (serve) return `export default ${JSON.stringify(DEV_URL)};\nexport const count = ${count};`;
      const ref = this.emitFile({ type: 'asset', name: 'mnist-digits.gz', source: get().bytes });
      return `export default import.meta.ROLLUP_FILE_URL_${ref};\nexport const count = ${count};`;
    },
    configureServer(server) {
      server.middlewares.use(DEV_URL, (_req, res) => {
        res.setHeader('content-type', 'application/octet-stream');
        res.end(get().bytes);
      });
    },
  };
}
