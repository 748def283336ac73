// A character-level vocabulary and what is computed from a text's tokens. Nothing here reads the
// book, so a web page that ships its own copy of the text uses it too (examples/browser).

/** A character-level vocabulary: every distinct character of a text, sorted by code point, numbered from 0. */
export class CharVocab {
  /** The characters, index = token id. */
  readonly chars: readonly string[];
  readonly #ids: Map<string, number>;

  /** The vocabulary of `text` (or of the characters given, in that order, as a checkpoint stores them). */
  constructor(chars: Iterable<string>) {
    this.chars = [...new Set(chars)];
    this.#ids = new Map(this.chars.map((c, i) => [c, i]));
  }

  /** The vocabulary of the characters `text` uses, sorted by code point. */
  static of(text: string): CharVocab {
    return new CharVocab([...new Set(text)].sort());
  }

  /** The number of tokens. */
  get size(): number {
    return this.chars.length;
  }

  /** The token ids of `text`; a character outside the vocabulary is an error naming it. */
  encode(text: string): Int32Array {
    const chars = [...text];
    const out = new Int32Array(chars.length);
    chars.forEach((c, i) => {
      const id = this.#ids.get(c);
      if (id === undefined) throw new Error(`the character ${JSON.stringify(c)} at position ${i} is not in the vocabulary of ${this.size} characters: use only characters of the training text`);
      out[i] = id;
    });
    return out;
  }

  /** The text of token ids; an id outside [0, size) is an error. */
  decode(ids: ArrayLike<number>): string {
    return Array.from(ids, (id, i) => {
      const c = this.chars[id];
      if (c === undefined) throw new Error(`token id ${id} at position ${i} is outside the vocabulary of ${this.size} characters`);
      return c;
    }).join('');
  }
}

/** The first `fraction` of the tokens (train) and the rest (val), as nanoGPT splits a text. */
export function splitTokens(tokens: Int32Array, fraction = 0.9): { train: Int32Array; val: Int32Array } {
  const n = Math.floor(tokens.length * fraction);
  return { train: tokens.subarray(0, n), val: tokens.subarray(n) };
}

/**
 * The entropy, in nats, of the token frequencies of `tokens`: the mean loss of the best model
 * that ignores context (each token predicted by its frequency in these very tokens). A model
 * that learned anything about context scores below it.
 */
export function unigramEntropy(tokens: ArrayLike<number>): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < tokens.length; i++) counts.set(tokens[i]!, (counts.get(tokens[i]!) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / tokens.length;
    h -= p * Math.log(p);
  }
  return h;
}
