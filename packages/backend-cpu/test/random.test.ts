import { describe, expect, it } from 'vitest';
import { mulhi32, philox4x32_10, scaleBits } from '../src/kernels/random.js';
import { K, output, storageValues, values, view } from './helpers.js';

function block(c: [number, number, number, number], k: [number, number]): number[] {
  const out = new Uint32Array(4);
  philox4x32_10(c[0], c[1], c[2], c[3], k[0], k[1], out);
  return Array.from(out);
}

/** The bits of element i of the stream, straight from the block function. */
function bitsAt(key: [number, number], offset: number, i: number): number {
  const counter = offset + Math.floor(i / 4);
  return block([counter % 2 ** 32, Math.floor(counter / 2 ** 32), 0, 0], key)[i % 4]!;
}

describe('Philox4x32-10', () => {
  it('reproduces the Random123 known-answer vectors', () => {
    expect(block([0, 0, 0, 0], [0, 0])).toEqual([0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    expect(block([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff])).toEqual([0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
    expect(block([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0])).toEqual([0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]);
  });

  it('computes the high word of 32×32-bit products exactly', () => {
    const samples = [0, 1, 0xffff, 0x10000, 0xd2511f53, 0xcd9e8d57, 0xffffffff, 0x80000000, 0x12345678, 0xdeadbeef];
    for (const a of samples) {
      for (const b of samples) expect(mulhi32(a, b), `${a}·${b}`).toBe(Number((BigInt(a) * BigInt(b)) >> 32n));
    }
  });

  it('scales bits to a range exactly', () => {
    const cases: [number, number][] = [[0xffffffff, 2 ** 32], [0xffffffff, 0xffffffff], [0x80000000, 3], [0xfffffffe, 1000003], [12345, 7], [0, 5]];
    for (const [bits, range] of cases) {
      expect(scaleBits(bits, range), `${bits}·${range}`).toBe(Number((BigInt(bits) * BigInt(range)) >> 32n));
    }
  });
});

describe('random', () => {
  const key: [number, number] = [0x01234567, 0x89abcdef];

  it('fills uniform float32 values (bits >>> 8)·2^-24 from word i mod 4 of block offset + i/4', () => {
    const n = 10; // not a multiple of 4
    const out = output('float32', [2, 5]);
    K.random(out, { key, offset: 7, distribution: { kind: 'uniform' } });
    const expected = Array.from({ length: n }, (_, i) => (bitsAt(key, 7, i) >>> 8) * 2 ** -24);
    expect(values(out)).toEqual(expected);
    // Offsets continue the same stream: offset 8 starts at element 4 of offset 7.
    const next = output('float32', [6]);
    K.random(next, { key, offset: 8, distribution: { kind: 'uniform' } });
    expect(values(next)).toEqual(expected.slice(4));
  });

  it('stays in [0, 1), is exact in f32 and looks uniform', () => {
    const n = 4096;
    const out = output('float32', [n]);
    K.random(out, { key: [42, 0], offset: 0, distribution: { kind: 'uniform' } });
    const v = values(out);
    let sum = 0;
    for (const x of v) {
      expect(x >= 0 && x < 1).toBe(true);
      expect(Number.isInteger(x * 2 ** 24)).toBe(true);
      sum += x;
    }
    expect(Math.abs(sum / n - 0.5)).toBeLessThan(0.02);
    expect(new Set(v).size).toBeGreaterThan(n - 5);
  });

  it('carries the counter into the second word past 2^32', () => {
    const out = output('float32', [8]);
    K.random(out, { key, offset: 2 ** 32 - 1, distribution: { kind: 'uniform' } });
    const last = block([0xffffffff, 0, 0, 0], key);
    const carried = block([0, 1, 0, 0], key);
    expect(values(out)).toEqual([...last, ...carried].map((b) => (b >>> 8) * 2 ** -24));
  });

  it('gives the same numbers for the same key and offset, different ones otherwise', () => {
    const a = output('float32', [16]);
    const b = output('float32', [16]);
    const c = output('float32', [16]);
    K.random(a, { key: [1, 2], offset: 100, distribution: { kind: 'uniform' } });
    K.random(b, { key: [1, 2], offset: 100, distribution: { kind: 'uniform' } });
    K.random(c, { key: [1, 3], offset: 100, distribution: { kind: 'uniform' } });
    expect(values(a)).toEqual(values(b));
    expect(values(a)).not.toEqual(values(c));
  });

  it('draws randint = low + floor(bits·(high − low)/2^32) within bounds', () => {
    const ranges: [number, number][] = [[-3, 5], [0, 3], [-(2 ** 31), 2 ** 31 - 1], [10, 11], [-1000, 1000003]];
    for (const [low, high] of ranges) {
      const n = 257;
      const out = output('int32', [n]);
      K.random(out, { key, offset: 3, distribution: { kind: 'randint', low, high } });
      const got = values(out);
      got.forEach((v, i) => {
        const expected = low + Number((BigInt(bitsAt(key, 3, i)) * BigInt(high - low)) >> 32n);
        expect(v, `[${low}, ${high}) #${i}`).toBe(expected);
        expect(v >= low && v < high).toBe(true);
      });
    }
    const small = output('int32', [4096]);
    K.random(small, { key, offset: 0, distribution: { kind: 'randint', low: 0, high: 3 } });
    expect(new Set(values(small))).toEqual(new Set([0, 1, 2]));
  });

  it('writes at the view offset only and rejects bad specs', () => {
    const out = view('float32', [-1, -1, -1, -1, -1], [3], [1], 1);
    K.random(out, { key, offset: 0, distribution: { kind: 'uniform' } });
    const s = storageValues(out);
    expect([s[0], s[4]]).toEqual([-1, -1]);
    expect(s.slice(1, 4)).toEqual([0, 1, 2].map((i) => (bitsAt(key, 0, i) >>> 8) * 2 ** -24));
    expect(() => K.random(output('int32', [1]), { key, offset: 0, distribution: { kind: 'randint', low: 2, high: 2 } })).toThrow(/low < high/);
    expect(() => K.random(output('int32', [1]), { key, offset: 0, distribution: { kind: 'uniform' } })).toThrow(/floating out/);
    expect(() => K.random(output('float32', [1]), { key, offset: -1, distribution: { kind: 'uniform' } })).toThrow(/offset/);
  });
});
