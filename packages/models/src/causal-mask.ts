// Causal attention over a KV cache. The new queries are the last positions of the keys (the cached
// keys come first), so query i may see keys 0..(cached + i): a causal mask aligned bottom-right.
// PyTorch's isCausal is aligned top-left (query i sees keys 0..i), which is only right without a cache.
import type { F } from '@core/nn';
import { bool, ones, type Device } from '@core/tensor';

/**
 * The mask arguments of `F.scaledDotProductAttention` for `queryLength` new positions attending to
 * `keyLength` keys, the earlier (cached) ones first: each query sees the keys up to its own position.
 * One new query sees every key (no mask); without cached keys this is `isCausal`; otherwise a bool
 * mask `[queryLength, keyLength]` aligned bottom-right.
 */
export function causalMask(queryLength: number, keyLength: number, device: Device): Pick<F.ScaledDotProductAttentionOptions, 'attnMask' | 'isCausal'> {
  if (queryLength === 1) return {};
  if (queryLength === keyLength) return { isCausal: true };
  return { attnMask: ones([queryLength, keyLength], { dtype: bool, device }).tril(keyLength - queryLength) };
}
