// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), written
// with BigInt products so the 32×32→64-bit multiply is obviously exact, and the two distributions
// the contract's RandomSpec defines. This is what "same seed ⇒ same numbers on every backend" means.

const M0 = 0xd2511f53n;
const M1 = 0xcd9e8d57n;
const W0 = 0x9e3779b9n;
const W1 = 0xbb67ae85n;
const MASK = 0xffffffffn;

/** Ten rounds on the counter (c0..c3) with key (k0, k1); returns four 32-bit words. */
export function philoxBlock(counter: readonly [number, number, number, number], key: readonly [number, number]): number[] {
  let [x0, x1, x2, x3] = counter.map((v) => BigInt(v >>> 0)) as [bigint, bigint, bigint, bigint];
  let k0 = BigInt(key[0] >>> 0);
  let k1 = BigInt(key[1] >>> 0);
  for (let round = 0; round < 10; round++) {
    const p0 = M0 * x0; // 64-bit products
    const p1 = M1 * x2;
    const hi0 = p0 >> 32n;
    const lo0 = p0 & MASK;
    const hi1 = p1 >> 32n;
    const lo1 = p1 & MASK;
    [x0, x1, x2, x3] = [(hi1 ^ x1 ^ k0) & MASK, lo1, (hi0 ^ x3 ^ k1) & MASK, lo0];
    k0 = (k0 + W0) & MASK;
    k1 = (k1 + W1) & MASK;
  }
  return [x0, x1, x2, x3].map(Number);
}

/**
 * The 32-bit words for `count` elements starting at block counter `offset`: element i is word
 * (i mod 4) of the block at counter offset + floor(i / 4), whose 128-bit counter is
 * (low 32 bits, carry bits, 0, 0).
 */
export function philoxWords(key: readonly [number, number], offset: number, count: number): number[] {
  const words: number[] = [];
  for (let i = 0; i < count; i++) {
    const counter = BigInt(offset) + BigInt(Math.floor(i / 4));
    const block = philoxBlock([Number(counter & MASK), Number(counter >> 32n), 0, 0], key);
    words.push(block[i % 4]!);
  }
  return words;
}

/** The key a seed maps to: (seed mod 2^32, floor(seed / 2^32)). */
export function keyOf(seed: number): [number, number] {
  return [seed % 2 ** 32 >>> 0, Math.floor(seed / 2 ** 32) >>> 0];
}

/** uniform: the top 24 bits scaled into [0, 1), exact in float32. */
export function uniformFromWord(w: number): number {
  return (w >>> 8) * 2 ** -24;
}

/** randint: low + floor(w · (high − low) / 2^32), in exact integer arithmetic. */
export function randintFromWord(w: number, low: number, high: number): number {
  return low + Number((BigInt(w >>> 0) * BigInt(high - low)) >> 32n);
}
