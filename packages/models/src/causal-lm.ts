// What generation needs from a decoder: logits for the new tokens, given the keys and values of
// the earlier ones. GPT-2 and the Llama-style decoder implement `CausalLM`; `generate` drives any.
import { cat, type Tensor } from '@core/tensor';

/**
 * Keys and values of the positions seen so far, one pair per layer, each `[batch, heads, seen, headDim]`.
 * A decoder calls `update` once per layer per forward pass; generation then feeds one token per step.
 */
export class KVCache {
  /** Layers of the decoder the cache serves: one key/value pair each. */
  readonly numLayers: number;
  private readonly keys: (Tensor | undefined)[];
  private readonly values: (Tensor | undefined)[];

  /** An empty cache for a decoder of `numLayers` layers. */
  constructor(numLayers: number) {
    this.numLayers = numLayers;
    this.keys = new Array<Tensor | undefined>(numLayers).fill(undefined);
    this.values = new Array<Tensor | undefined>(numLayers).fill(undefined);
  }

  /** Positions cached so far (0 before the first forward pass); the next token's position. */
  get length(): number {
    return this.keys[0]?.shape[2] ?? 0;
  }

  /** Appends this pass's `key` and `value` for `layer` along the sequence dim and returns all of them so far. */
  update(layer: number, key: Tensor, value: Tensor): [Tensor, Tensor] {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.numLayers) {
      throw new RangeError(`KVCache.update: layer ${layer} is out of range for a cache of ${this.numLayers} layers`);
    }
    const k = this.keys[layer] === undefined ? key : cat([this.keys[layer]!, key], 2);
    const v = this.values[layer] === undefined ? value : cat([this.values[layer]!, value], 2);
    this.keys[layer] = k;
    this.values[layer] = v;
    return [k, v];
  }
}

/** Options of a decoder's forward pass. */
export interface CausalLMForwardOptions {
  /** Keys and values of earlier positions; the new tokens continue from `cache.length`, and their keys and values are appended. */
  readonly cache?: KVCache;
}

/** A decoder-only language model: token ids `[batch, seq]` (int32) in, next-token logits `[batch, seq, vocab]` out. */
export interface CausalLM {
  /** Layers, for sizing a `KVCache`. */
  readonly numLayers: number;
  /** The logits of every input position. */
  forward(inputIds: Tensor, options?: CausalLMForwardOptions): Tensor;
}
