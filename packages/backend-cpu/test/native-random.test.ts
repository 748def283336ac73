// The native path's random fills: the addon's Philox4x32-10 stream against the TypeScript kernel's,
// bit for bit, for uniform float32 and randint int32/float32 values over offsets on both sides of
// 2^32 (where the counter's carry word turns on), counts that end mid-block and fills large enough
// to split between threads; and what it leaves to the TypeScript kernel.
import type { RandomSpec } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuKernels } from '../src/kernels/index.js';
import { loadNative, type NativePath } from '../src/native.js';
import { backend, type Ref, strides } from './helpers.js';

const loaded = loadNative({ native: true, threads: 2 });
if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
const native: NativePath = loaded;

/** A fresh contiguous out of `count` elements at element `offset` of a storage filled with 7s (which a fill must overwrite). */
function out(dtype: 'float32' | 'int32' | 'float64', count: number, offset = 0): Ref {
  const storage = backend.alloc(0, dtype, offset + count + 3);
  storage.data.fill(7);
  return { storage, dtype, shape: [count], strides: [1], offset };
}

/** The raw bits of a ref's whole storage (guard elements included), any NaN reading the same. */
function bits(ref: Ref): Uint32Array {
  return new Uint32Array(ref.storage.data.buffer, ref.storage.data.byteOffset, ref.storage.data.length);
}

/** Fills one out natively (which must take it) and one with the TypeScript kernel; both storages whole. */
function both(dtype: 'float32' | 'int32', count: number, spec: RandomSpec, offset = 0): [Uint32Array, Uint32Array] {
  const got = out(dtype, count, offset);
  const want = out(dtype, count, offset);
  expect(native.random(got, spec)).toBe(true);
  CpuKernels.random(want, spec);
  return [bits(got), bits(want)];
}

const OFFSETS = [0, 1, 5, 2 ** 32 - 20, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 3, 2 ** 40 + 12345, 2 ** 52];
const COUNTS = [64, 65, 66, 67, 255, 4099];
const KEYS: [number, number][] = [[0, 0], [0xdeadbeef, 0x12345678], [4294967295, 4294967295]];

describe('native random', () => {
  it('matches the Random123 known answer for counter 0, key 0', () => {
    // Philox4x32-10 of counter (0, 0, 0, 0) and key (0, 0) is 6627e8d5 e169c58d bc57ac4c 9b00dbd8
    // (Random123's kat_vectors); randint over [−2^31, 2^31) gives bits − 2^31 exactly.
    const o = out('int32', 64);
    expect(native.random(o, { key: [0, 0], offset: 0, distribution: { kind: 'randint', low: -(2 ** 31), high: 2 ** 31 } })).toBe(true);
    const words = [...(o.storage.data as Int32Array).subarray(0, 4)].map((v) => (v + 2 ** 31).toString(16).padStart(8, '0'));
    expect(words).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
  });

  it('gives the TypeScript kernel uniform float32 bits over offsets across 2^32, counts that end mid-block, and keys', async () => {
    for (const key of KEYS) {
      await new Promise((resolve) => setImmediate(resolve)); // the TypeScript fills take a while
      for (const offset of OFFSETS) {
        for (const count of COUNTS) {
          const [got, want] = both('float32', count, { key, offset, distribution: { kind: 'uniform' } }, count % 3);
          expect(got, `key ${key}, offset ${offset}, count ${count}`).toEqual(want);
        }
      }
    }
  });

  it('gives the TypeScript kernel randint bits into int32 and float32, ranges up to 2^32 included', () => {
    const ranges: [number, number][] = [[0, 10], [-5, 5], [-(2 ** 31), 2 ** 31], [2 ** 31 - 3, 2 ** 31], [-1000003, 999999937]];
    for (const [low, high] of ranges) {
      for (const offset of [0, 2 ** 32 - 1, 2 ** 44 + 1]) {
        const spec: RandomSpec = { key: [12345, 678], offset, distribution: { kind: 'randint', low, high } };
        const [got, want] = both('int32', 1001, spec, 1);
        expect(got, `int32 [${low}, ${high}) at ${offset}`).toEqual(want);
      }
    }
    // float32 out: the value low + k is formed in double and rounded once, as the TypeScript store rounds it.
    for (const [low, high] of [[0, 2 ** 32], [-(2 ** 40), -(2 ** 40) + 2 ** 32], [3, 1e6]] as [number, number][]) {
      const [got, want] = both('float32', 999, { key: [1, 2], offset: 77, distribution: { kind: 'randint', low, high } });
      expect(got, `float32 [${low}, ${high})`).toEqual(want);
    }
  });

  it('splits large fills between threads with the same bits as one thread', () => {
    // 100 001 elements: four tasks of 8192 blocks on 2 threads, the last block partial.
    const spec: RandomSpec = { key: [0x9e3779b9, 7], offset: 2 ** 32 - 10000, distribution: { kind: 'uniform' } };
    const [got, want] = both('float32', 100001, spec, 2);
    const differs = got.findIndex((w, i) => w !== want[i]);
    expect(differs, `first difference at word ${differs}`).toBe(-1);
  });

  it('fills through the backend with native on exactly as with it off', () => {
    const on = createCpuBackend({ native: true });
    const off = createCpuBackend({ native: false });
    const spec: RandomSpec = { key: [42, 0], offset: 2 ** 32 - 7, distribution: { kind: 'uniform' } };
    const [a, b] = [on, off].map((be) => {
      const storage = be.alloc(0, 'float32', 5000);
      be.kernels.random({ storage, dtype: 'float32', shape: [50, 100], strides: strides([50, 100]), offset: 0 }, spec);
      return be.readSync!(storage) as Float32Array;
    });
    expect(on.native.loaded).toBe(true);
    expect(a).toEqual(b);
  });

  it('leaves to the TypeScript kernel what it does not take, which then fills or words the error', () => {
    const uniform: RandomSpec = { key: [1, 1], offset: 0, distribution: { kind: 'uniform' } };
    // Too few elements to pay for the call, a strided out, a float64 out, an offset past 2^53.
    expect(native.random(out('float32', 63), uniform)).toBe(false);
    const strided: Ref = { ...out('float32', 200), shape: [100], strides: [2] };
    expect(native.random(strided, uniform)).toBe(false);
    expect(native.random(out('float64', 100), uniform)).toBe(false);
    expect(native.random(out('float32', 100), { ...uniform, offset: 2 ** 53 })).toBe(false);
    // randint values that int32 cannot hold, and bad bounds: the TypeScript kernel's RangeError.
    expect(native.random(out('int32', 100), { ...uniform, distribution: { kind: 'randint', low: 0, high: 2 ** 32 } })).toBe(false);
    const bad: RandomSpec = { ...uniform, distribution: { kind: 'randint', low: 5, high: 5 } };
    expect(native.random(out('int32', 100), bad)).toBe(false);
    expect(() => createCpuBackend({ native: true }).kernels.random(out('int32', 100), bad)).toThrow(/randint needs integers low < high/);
  });
});
