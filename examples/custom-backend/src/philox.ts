// Philox4x32-10 (Salmon et al., SC'11): the counter-based generator the contract's RandomSpec
// names, so that the same seed gives the same numbers here as on every other backend.
const M0 = 0xd2511f53n;
const M1 = 0xcd9e8d57n;
const MASK = 0xffffffffn;

function block(c0: bigint, c1: bigint, k0: bigint, k1: bigint): bigint[] {
  let x = [c0, c1, 0n, 0n];
  for (let round = 0; round < 10; round++) {
    const p0 = M0 * x[0]!;
    const p1 = M1 * x[2]!;
    x = [((p1 >> 32n) ^ x[1]! ^ k0) & MASK, p1 & MASK, ((p0 >> 32n) ^ x[3]! ^ k1) & MASK, p0 & MASK];
    k0 = (k0 + 0x9e3779b9n) & MASK;
    k1 = (k1 + 0xbb67ae85n) & MASK;
  }
  return x;
}

/** Word i comes from the block at counter offset + floor(i / 4) (128-bit counter, low word first). */
export function philoxWords(key: readonly [number, number], offset: number, count: number): number[] {
  const words: number[] = [];
  for (let i = 0; i < count; i += 4) {
    const counter = BigInt(offset) + BigInt(i / 4);
    const b = block(counter & MASK, counter >> 32n, BigInt(key[0] >>> 0), BigInt(key[1] >>> 0));
    for (let w = 0; w < 4 && i + w < count; w++) words.push(Number(b[w]));
  }
  return words;
}
