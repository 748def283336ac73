// The fixture is a GPT-2-style byte-level BPE of 491 tokens + <|endoftext|>, learned from a short
// corpus by test/fixtures/tokenizer-bpe/make_tokenizer.py, which also wrote expected.json with its
// own reference BPE.
import '@core/backend-cpu';
import { int32, ValueError } from '@core/tensor';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commitOf } from '../../hub/test/helpers/fake-hub.js';
import { startHub } from '../../hub/test/helpers/setup.js';
import { PretrainedError, Tokenizer } from '../src/index.js';
import { tempDir } from './helpers/checkpoints.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/tokenizer-bpe', import.meta.url));
const read = async (name: string) => JSON.parse(await readFile(join(FIXTURE, name), 'utf8')) as Record<string, unknown>;
const vocab = ((await read('tokenizer.json')).model as { vocab: Record<string, number> }).vocab;
const merges = ((await read('tokenizer.json')).model as { merges: string[] }).merges;
const EOS = 491;

describe('Tokenizer (byte-level BPE)', () => {
  it('reads tokenizer.json and tokenizer_config.json from a folder: special token ids and vocabulary size', async () => {
    const tokenizer = await Tokenizer.fromPretrained(FIXTURE);
    expect(vocab['<|endoftext|>']).toBe(EOS);
    expect([tokenizer.eosTokenId, tokenizer.bosTokenId, tokenizer.padTokenId, tokenizer.vocabSize]).toEqual([EOS, EOS, undefined, 492]);
  });

  it('encodes as the merges say, worked by hand', async () => {
    const tokenizer = await Tokenizer.fromPretrained(FIXTURE);
    // ' the' is Ġ t h e in byte symbols; the merges 'Ġ t', 'h e', then 'Ġt he' join it into one token.
    for (const merge of ['Ġ t', 'h e', 'Ġt he']) expect(merges).toContain(merge);
    expect(tokenizer.encode(' the')).toEqual([vocab['Ġthe']]);
    // No merge joins z and q: two byte tokens. A space alone is Ġ.
    expect(merges.some((m) => m.startsWith('z ') || m.endsWith(' q'))).toBe(false);
    expect(tokenizer.encode('zq ')).toEqual([vocab.z, vocab.q, vocab['Ġ']]);
    // é is the UTF-8 bytes C3 A9, shown as Ã and ©.
    expect(tokenizer.encode('é')).toEqual([vocab['Ã'], vocab['©']]);
  });

  it('matches the reference BPE of the fixture script', async () => {
    const tokenizer = await Tokenizer.fromPretrained(FIXTURE);
    const expected = (await read('expected.json')) as Record<string, number[]>;
    for (const [text, ids] of Object.entries(expected)) expect(tokenizer.encode(text), text).toEqual(ids);
  });

  it('decodes back to the text, keeping special tokens unless skipSpecialTokens', async () => {
    const tokenizer = await Tokenizer.fromPretrained(FIXTURE);
    for (const text of ['Hello world!', ' the quick brown fox', "It's 2024, isn't it?", 'héllo ☃ 日本語\n\ttabs  and  spaces']) {
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
    const ids = tokenizer.encode('Hello<|endoftext|> world');
    expect(ids).toContain(EOS);
    expect(tokenizer.decode(ids)).toBe('Hello<|endoftext|> world');
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe('Hello world');
    expect(() => tokenizer.decode([5, 492])).toThrow(new ValueError('Tokenizer.decode(): id 492 at position 1 is not a token id (0 ≤ id < 492)'));
    expect(() => tokenizer.decode([1], { skipSpecial: true } as never)).toThrow(/unexpected keyword argument 'skipSpecial'/);
  });

  it('encodes a batch into int32 ids and attention mask, padded right or left with the pad token', async () => {
    const dir = await tempDir();
    await copyFile(join(FIXTURE, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...(await read('tokenizer_config.json')), pad_token: '<|endoftext|>' }));
    const tokenizer = await Tokenizer.fromPretrained(dir);
    const a = tokenizer.encode('Hello world!');
    const b = tokenizer.encode(' the');
    const right = tokenizer.encodeBatch(['Hello world!', ' the']);
    expect(right.inputIds.dtype).toBe(int32);
    expect(await right.inputIds.toArray()).toEqual([a, [...b, EOS, EOS]]);
    expect(await right.attentionMask.toArray()).toEqual([[1, 1, 1], [1, 0, 0]]);
    const left = tokenizer.encodeBatch(['Hello world!', ' the'], { paddingSide: 'left' });
    expect(await left.inputIds.toArray()).toEqual([a, [EOS, EOS, ...b]]);
    expect(await left.attentionMask.toArray()).toEqual([[1, 1, 1], [0, 0, 1]]);
  });

  it('refuses to pad without a pad token', async () => {
    const tokenizer = await Tokenizer.fromPretrained(FIXTURE);
    expect(() => tokenizer.encodeBatch(['Hello world!', ' the'])).toThrow(/the tokenizer has no pad token/);
    expect((await tokenizer.encodeBatch([' the', ' the']).inputIds.toArray())).toEqual([[vocab['Ġthe']], [vocab['Ġthe']]]);
  });

  it('names the missing tokenizer.json', async () => {
    const dir = await tempDir();
    await expect(Tokenizer.fromPretrained(dir)).rejects.toMatchObject({ reason: 'missing-file', file: join(dir, 'tokenizer.json') });
    await expect(Tokenizer.fromPretrained(dir)).rejects.toBeInstanceOf(PretrainedError);
  });

  it('downloads only the tokenizer files from a Hub repo', async () => {
    const commit = commitOf('tok');
    const files = {
      'tokenizer.json': await readFile(join(FIXTURE, 'tokenizer.json'), 'utf8'),
      'tokenizer_config.json': await readFile(join(FIXTURE, 'tokenizer_config.json'), 'utf8'),
      'config.json': '{}',
      'model.safetensors': new Uint8Array(16),
    };
    const fixture = await startHub([{ id: 'org/tok', commits: { [commit]: files }, refs: { main: commit } }]);
    const tokenizer = await Tokenizer.fromPretrained('org/tok', fixture.options);
    expect(tokenizer.encode(' the')).toEqual([vocab['Ġthe']]);
    expect(await fixture.list(`${fixture.repoDir('org/tok')}/snapshots/${commit}`)).toEqual(['tokenizer.json', 'tokenizer_config.json']);
  });
});
