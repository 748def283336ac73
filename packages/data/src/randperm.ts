// A random permutation drawn from the counter-based generator, for shuffling.
import { type Generator, isAvailable, randint } from '@core/tensor';

/**
 * PyTorch's CPU `randperm` algorithm: a forward Fisher–Yates where step i swaps position i with
 * i + (r_i mod (n − i)). The n − 1 draws r_i come from one `randint(0, 2^31, [n − 1])` call, so an
 * epoch advances the generator once, and the order depends only on (seed, offset): the same on
 * every backend. The modulo bias is below n / 2^31.
 */
export async function randperm(n: number, generator: Generator): Promise<Int32Array> {
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  if (n < 2) return perm;
  // The draws are read on the host; any backend gives the same numbers, the CPU just reads fastest.
  const draws = randint(0, 2 ** 31, [n - 1], { generator, ...(isAvailable('cpu') ? { device: 'cpu' } : {}) });
  const r = (await draws.data()) as Int32Array;
  draws.dispose();
  for (let i = 0; i < n - 1; i++) {
    const j = i + (r[i]! % (n - i));
    const t = perm[i]!;
    perm[i] = perm[j]!;
    perm[j] = t;
  }
  return perm;
}
