// Build-time step: the `mnist` package's digits are 21 MB of JSON floats (10 files, one per class).
// The page needs only a few thousand, so this packs the first PER_CLASS digits of each class into
// one compact binary — a byte per pixel (the JSON holds byte/255 rounded to 3 decimals, so
// round(v·255) gives the original byte back) and a byte per label — shipped gzipped as the
// virtual module `virtual:mnist-digits` (assets.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Plugin } from 'vite';
import { gzippedAsset, type Packed } from './assets';

const SIDE = 28;
const PIXELS = SIDE * SIDE;

/** Layout: [count·784 pixel bytes, class-interleaved][count label bytes]; exports `count`. */
export function packDigits(perClass: number): Packed {
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
  return { raw, exports: { count } };
}

/** The first `perClass` digits of each class as `virtual:mnist-digits`. */
export function mnistDigits({ perClass = 500 }: { perClass?: number } = {}): Plugin {
  return gzippedAsset('mnist-digits', () => packDigits(perClass));
}
