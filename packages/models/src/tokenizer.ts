// Tokenizers of Hugging Face repos (tokenizer.json + tokenizer_config.json), through
// @huggingface/tokenizers, with the ids as numbers and batches as int32 tensors for the models.
import { Tokenizer as HubTokenizer } from '@huggingface/tokenizers';
import { bindArguments, int32, tensor, ValueError, type Tensor } from '@core/tensor';
import { readJson } from './model-files.js';
import { pretrainedFiles, type PretrainedOptions, type PretrainedSource } from './pretrained.js';

/** The files a tokenizer is built from. */
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];

/** Options of {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /** Add the special tokens the tokenizer's post-processor adds (BERT's `[CLS]`…`[SEP]`, Llama's `<s>`); default true, as in Python. */
  addSpecialTokens?: boolean;
}

/** Options of {@link Tokenizer.encodeBatch}. */
export interface EncodeBatchOptions extends EncodeOptions {
  /** Which end shorter sequences are padded at: `'right'` (default) or `'left'` (for generation). */
  paddingSide?: 'left' | 'right';
}

/** Options of {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Leave out special tokens (e.g. `<|endoftext|>`); default false. */
  skipSpecialTokens?: boolean;
}

/** A padded batch: ids and which of them are real tokens, both int32 `[batch, longest]`. */
export interface BatchEncoding {
  /** The token ids, padded with the pad token's id. */
  readonly inputIds: Tensor;
  /** 1 for a token of the text, 0 for padding. */
  readonly attentionMask: Tensor;
}

/** A special token as tokenizer_config.json gives it: a string, or an object with its `content`. */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') return (value as { content: string }).content;
  return undefined;
}

/**
 * A tokenizer from a Hugging Face `tokenizer.json` (byte-level BPE as GPT-2's and Llama 3's,
 * SentencePiece-style BPE, WordPiece as BERT's…) and its `tokenizer_config.json`, with Python's
 * defaults: `encode` adds the special tokens, `decode` keeps them unless asked.
 *
 * ```ts
 * const tokenizer = await Tokenizer.fromPretrained('openai-community/gpt2');
 * const ids = tokenizer.encode('Hello world'); // [15496, 995]
 * tokenizer.decode(ids);                       // 'Hello world'
 * ```
 */
export class Tokenizer {
  /** The id of the end-of-sequence token, when the tokenizer has one. */
  readonly eosTokenId: number | undefined;
  /** The id of the beginning-of-sequence token, when the tokenizer has one. */
  readonly bosTokenId: number | undefined;
  /** The id of the padding token, when the tokenizer has one (GPT-2's has none). */
  readonly padTokenId: number | undefined;
  /** Tokens in the vocabulary, added tokens included (Python's `len(tokenizer)`): one more than the largest id. */
  readonly vocabSize: number;
  readonly #inner: HubTokenizer;

  /**
   * A tokenizer from the parsed `tokenizer.json` and `tokenizer_config.json` (and, as older repos
   * keep the special tokens there, `special_tokens_map.json`, whose entries the config's override).
   */
  constructor(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown> = {}, specialTokensMap: Record<string, unknown> = {}) {
    const config = { ...specialTokensMap, ...tokenizerConfig };
    this.#inner = new HubTokenizer(tokenizerJson, config);
    const idOf = (key: string): number | undefined => {
      const text = tokenText(config[key]);
      return text === undefined ? undefined : this.#inner.token_to_id(text);
    };
    this.eosTokenId = idOf('eos_token');
    this.bosTokenId = idOf('bos_token');
    this.padTokenId = idOf('pad_token');
    let largest = -1;
    for (const id of this.#inner.get_vocab(true).values()) largest = Math.max(largest, id);
    this.vocabSize = largest + 1;
  }

  /**
   * The tokenizer of a Hub repo or a local folder (Node), or of ModelFiles or Blobs by file name:
   * `tokenizer.json` (required), and `tokenizer_config.json` and `special_tokens_map.json` when
   * there. From the Hub, only these files are downloaded; the Hub options are those of
   * {@link PretrainedOptions}.
   */
  static async fromPretrained(source: PretrainedSource, options: PretrainedOptions = {}): Promise<Tokenizer> {
    const { files } = await pretrainedFiles('Tokenizer.fromPretrained', source, options, TOKENIZER_FILES);
    const optional = async (name: string) => ((await files.has(name)) ? readJson(files, name) : {});
    return new Tokenizer(await readJson(files, 'tokenizer.json'), await optional('tokenizer_config.json'), await optional('special_tokens_map.json'));
  }

  /** The token ids of `text`. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    if (typeof text !== 'string') throw new TypeError(`Tokenizer.encode(): expected a string, got ${text === null ? 'null' : typeof text}`);
    const { addSpecialTokens = true } = bindArguments('Tokenizer.encode', [options], [], ['addSpecialTokens']) as EncodeOptions;
    return this.#inner.encode(text, { add_special_tokens: addSpecialTokens }).ids;
  }

  /** The text of `ids` (numbers, or a 1-D int tensor's values read with `await t.data()`). */
  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    const { skipSpecialTokens = false } = bindArguments('Tokenizer.decode', [options], [], ['skipSpecialTokens']) as DecodeOptions;
    const list = Array.from(ids ?? [], Number);
    const bad = list.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= this.vocabSize);
    if (bad >= 0) throw new ValueError(`Tokenizer.decode(): id ${list[bad]} at position ${bad} is not a token id (0 ≤ id < ${this.vocabSize})`);
    return this.#inner.decode(list, { skip_special_tokens: skipSpecialTokens });
  }

  /**
   * The ids of several texts as one int32 `[batch, longest]` tensor, shorter ones padded with the
   * pad token (at the right unless `paddingSide: 'left'`), and the attention mask that marks the
   * real tokens. Padding needs a pad token: for a tokenizer without one (GPT-2), set it in
   * tokenizer_config.json (`"pad_token": "<|endoftext|>"`), or pass texts of equal token length.
   */
  encodeBatch(texts: readonly string[], options: EncodeBatchOptions = {}): BatchEncoding {
    if (!Array.isArray(texts) || texts.length === 0) throw new TypeError('Tokenizer.encodeBatch(): expected a non-empty array of strings');
    const { paddingSide = 'right', ...encodeOptions } = bindArguments('Tokenizer.encodeBatch', [options], [], ['addSpecialTokens', 'paddingSide']) as EncodeBatchOptions;
    if (paddingSide !== 'left' && paddingSide !== 'right') throw new TypeError(`Tokenizer.encodeBatch(): paddingSide must be 'left' or 'right', got ${String(paddingSide)}`);
    const rows = texts.map((text) => this.encode(text, encodeOptions));
    const longest = Math.max(...rows.map((r) => r.length));
    if (this.padTokenId === undefined && rows.some((r) => r.length !== longest)) {
      throw new ValueError('Tokenizer.encodeBatch(): the texts need padding, but the tokenizer has no pad token; set "pad_token" in its tokenizer_config.json (GPT-2 uses "<|endoftext|>")');
    }
    const ids = new Int32Array(rows.length * longest);
    const mask = new Int32Array(rows.length * longest);
    rows.forEach((row, i) => {
      const start = i * longest + (paddingSide === 'left' ? longest - row.length : 0);
      ids.fill(this.padTokenId ?? 0, i * longest, (i + 1) * longest);
      ids.set(row, start);
      mask.fill(1, start, start + row.length);
    });
    const shape = [rows.length, longest];
    return { inputIds: tensor(ids, { dtype: int32 }).reshape(shape), attentionMask: tensor(mask, { dtype: int32 }).reshape(shape) };
  }
}
