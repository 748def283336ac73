// The fused attention kernel (contract 1.4.0) called directly on the webgpu backend, against a
// float64 reference written from the contract's formula: score = scale·q·k + mask over the keys
// that take part, logSumExp = log Σ exp(score), out = Σ exp(score − logSumExp)·v. Shapes that are
// not multiples of the tiles, head dims up to 256 and wider ones (the chunked path), strided and
// broadcast masks at offsets, causal masking with L < S and L > S, fully masked rows, NaN inputs,
// and float16/bfloat16 (packed or native storage, whichever the adapter gives) computed in f32.
import {
  bfloat16BitsToNumber, float16BitsToNumber, float32ToBFloat16Bits, float32ToFloat16Bits, type HostArray, type TensorRef,
} from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend, WebGPUStorage } from '../src/index.js';
import { ATTENTION_MAX_CHUNK, ATTENTION_TILE_FLOATS, attentionPlan } from '../src/wgsl/attention.js';
import { startBackend } from './helpers.js';

type FloatDType = 'float32' | 'float16' | 'bfloat16';
type Ref = TensorRef<WebGPUStorage>;

let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await startBackend();
});
afterAll(() => gpu?.destroy());

/** How each dtype is stored on the host, and its unit roundoff (the error of one rounding to it). */
const CODECS: Record<FloatDType, { encode(values: number[]): HostArray; decode(a: HostArray): number[]; roundoff: number }> = {
  float32: { encode: (xs) => Float32Array.from(xs), decode: (a) => Array.from(a as Float32Array), roundoff: 2 ** -24 },
  float16: { encode: (xs) => Uint16Array.from(xs, float32ToFloat16Bits), decode: (a) => Array.from(a as Uint16Array, float16BitsToNumber), roundoff: 2 ** -11 },
  bfloat16: { encode: (xs) => Uint16Array.from(xs, float32ToBFloat16Bits), decode: (a) => Array.from(a as Uint16Array, bfloat16BitsToNumber), roundoff: 2 ** -8 },
};

/** Deterministic values in [−1, 1). */
function uniform(n: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
}

/** The value written around every operand: an element read or written by mistake shows. */
const SENTINEL = 7.5;

const made: WebGPUStorage[] = [];
afterAll(() => made.forEach((s) => gpu.free(s)));

/**
 * A storage holding `values` (rounded to `dtype`) from element `offset`, SENTINEL elsewhere (one
 * extra element at the end), and those values as stored.
 */
function store(dtype: FloatDType, values: number[], offset: number): { storage: WebGPUStorage; stored: number[] } {
  const all = [...new Array<number>(offset).fill(SENTINEL), ...values, SENTINEL];
  const storage = gpu.alloc(0, dtype, all.length);
  made.push(storage);
  const host = CODECS[dtype].encode(all);
  gpu.write(storage, host, 0);
  return { storage, stored: CODECS[dtype].decode(host) };
}

function contiguous(storage: WebGPUStorage, dtype: FloatDType, shape: number[], offset: number): Ref {
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  return { storage, dtype, shape, strides, offset };
}

/** A mask view [B, L, S] over a storage of `size` elements: element (b, l, s) at offset + b·sb + l·sl + s·ss. */
interface MaskLayout {
  readonly size: number;
  readonly strides: [number, number, number];
  readonly offset: number;
  /** The value stored at element `i` of the storage. */
  readonly fill: (i: number) => number;
}

interface Problem {
  readonly B: number;
  readonly L: number;
  readonly S: number;
  readonly E: number;
  readonly Ev: number;
  readonly dtype?: FloatDType;
  readonly scale?: number;
  readonly isCausal?: boolean;
  readonly mask?: MaskLayout;
  /** Changes q, k and v (as generated, before they are stored) to plant NaNs. */
  readonly edit?: (t: { q: number[]; k: number[]; v: number[] }) => void;
  /** Offsets of q, k, v and out in their storages. */
  readonly offsets?: [number, number, number, number];
}

interface Result {
  readonly out: number[];
  readonly lse: number[];
  /** out's storage as read back, sentinels included, and where out starts in it. */
  readonly outStorage: number[];
  readonly outOffset: number;
}

/** The contract's formula in float64 over the values as stored. */
function reference(p: Required<Pick<Problem, 'B' | 'L' | 'S' | 'E' | 'Ev'>>, q: number[], k: number[], v: number[], scale: number, isCausal: boolean,
  mask: ((b: number, l: number, s: number) => number) | null): { out: number[]; lse: number[] } {
  const { B, L, S, E, Ev } = p;
  const out: number[] = [];
  const lse: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let l = 0; l < L; l++) {
      const scores: Array<[number, number]> = [];
      for (let s = 0; s < S; s++) {
        if (isCausal && s > l) continue;
        let dot = 0;
        for (let e = 0; e < E; e++) dot += q[(b * L + l) * E + e]! * k[(b * S + s) * E + e]!;
        scores.push([s, scale * dot + (mask ? mask(b, l, s) : 0)]);
      }
      const m = scores.reduce((acc, [, x]) => (Number.isNaN(acc) || Number.isNaN(x) ? NaN : Math.max(acc, x)), -Infinity);
      if (m === -Infinity) {
        lse.push(-Infinity);
        for (let c = 0; c < Ev; c++) out.push(NaN);
        continue;
      }
      const logSumExp = m + Math.log(scores.reduce((acc, [, x]) => acc + Math.exp(x - m), 0));
      lse.push(logSumExp);
      for (let c = 0; c < Ev; c++) out.push(scores.reduce((acc, [s, x]) => acc + Math.exp(x - logSumExp) * v[(b * S + s) * Ev + c]!, 0));
    }
  }
  return { out, lse };
}

/** Runs the kernel on `p` and returns what it wrote with the reference's values. */
async function run(p: Problem): Promise<{ got: Result; want: { out: number[]; lse: number[] } }> {
  const { B, L, S, E, Ev } = p;
  const dtype = p.dtype ?? 'float32';
  const scale = p.scale ?? 1 / Math.sqrt(E);
  const [qo, ko, vo, oo] = p.offsets ?? [3, 1, 2, 1];
  const t = { q: uniform(B * L * E, 1 + E), k: uniform(B * S * E, 2 + S), v: uniform(B * S * Ev, 3 + Ev) };
  p.edit?.(t);
  const q = store(dtype, t.q, qo);
  const k = store(dtype, t.k, ko);
  const v = store(dtype, t.v, vo);
  const out = store(dtype, new Array<number>(B * L * Ev).fill(SENTINEL), oo);
  const lse = store('float32', new Array<number>(B * L).fill(SENTINEL), 2);
  let maskRef: Ref | null = null;
  let maskAt: ((b: number, l: number, s: number) => number) | null = null;
  if (p.mask) {
    const { size, strides, offset, fill } = p.mask;
    const m = store(dtype, Array.from({ length: size }, (_, i) => fill(i)), 0);
    maskRef = { storage: m.storage, dtype, shape: [B, L, S], strides, offset };
    maskAt = (b, l, s) => m.stored[offset + b * strides[0] + l * strides[1] + s * strides[2]]!;
  }
  gpu.fused!.attention!(
    contiguous(q.storage, dtype, [B, L, E], qo), contiguous(k.storage, dtype, [B, S, E], ko), contiguous(v.storage, dtype, [B, S, Ev], vo),
    maskRef, { scale, isCausal: p.isCausal ?? false }, contiguous(out.storage, dtype, [B, L, Ev], oo), contiguous(lse.storage, 'float32', [B, L], 2),
  );
  const outStorage = CODECS[dtype].decode(await gpu.read(out.storage));
  const lseStorage = Array.from((await gpu.read(lse.storage)) as Float32Array);
  const slice = (xs: number[], from: number) => xs.slice(from, xs.length - 1);
  const want = reference(p, slice(q.stored, qo), slice(k.stored, ko), slice(v.stored, vo), scale, p.isCausal ?? false, maskAt);
  expect(lseStorage.slice(0, 2), 'the elements before logSumExp').toEqual([SENTINEL, SENTINEL]);
  expect(lseStorage.at(-1), 'the element after logSumExp').toBe(SENTINEL);
  return { got: { out: slice(outStorage, oo), lse: slice(lseStorage, 2), outStorage, outOffset: oo }, want };
}

/**
 * out within 1e-5 of max|out| (plus one rounding to a half dtype), logSumExp within 1e-5
 * relative, NaN exactly where the reference has NaN, −∞ where it has −∞, and out's neighbours
 * in its storage untouched.
 */
function expectMatches({ got, want }: Awaited<ReturnType<typeof run>>, dtype: FloatDType = 'float32'): void {
  expect(got.out.length).toBe(want.out.length);
  expect(got.outStorage.slice(0, got.outOffset).every((x) => x === SENTINEL) && got.outStorage.at(-1) === SENTINEL, 'out\'s neighbours').toBe(true);
  const maxAbs = want.out.reduce((m, w) => (Number.isFinite(w) ? Math.max(m, Math.abs(w)) : m), 0);
  const { roundoff } = CODECS[dtype];
  // Collected, then compared once: thousands of expect calls are slow.
  const wrong: string[] = [];
  const check = (what: string, g: number, w: number, tol: number) => {
    const ok = Number.isNaN(w) ? Number.isNaN(g) : w === -Infinity ? g === -Infinity : Math.abs(g - w) <= tol;
    if (!ok) wrong.push(`${what}: ${g} vs ${w}`);
  };
  want.out.forEach((w, i) => check(`out[${i}]`, got.out[i]!, w, roundoff * Math.abs(w) + 1e-5 * maxAbs));
  want.lse.forEach((w, i) => check(`logSumExp[${i}]`, got.lse[i]!, w, 1e-5 * (1 + Math.abs(w))));
  expect(wrong.slice(0, 10), `${wrong.length} elements differ`).toEqual([]);
}

describe('attention: the kernel against the float64 formula', () => {
  // [B, L, S, E, Ev]: L ≠ S, E ≠ Ev, L and S off the tiles (64 rows; 32–64 keys for these head
  // dims), S = 1, L = 1, B > 1, a head dim of 256 (8 keys per tile), and E = 300, Ev = 260, wider
  // than a shader holds whole (the chunked path: two q·k chunks, two Ev chunks).
  const shapes: Array<[number, number, number, number, number]> = [
    [1, 1, 1, 1, 1],
    [2, 5, 7, 3, 4],
    [3, 70, 45, 16, 24],
    [1, 1, 130, 8, 8],
    [2, 65, 1, 8, 5],
    [1, 40, 33, 256, 256],
    [2, 66, 50, 300, 260],
  ];
  for (const [B, L, S, E, Ev] of shapes) {
    it(`[B, L, S, E, Ev] = [${B}, ${L}, ${S}, ${E}, ${Ev}], scale 1/√E`, async () => {
      expectMatches(await run({ B, L, S, E, Ev }));
    });
  }

  it('E = 300, Ev = 260 does take the chunked path, and every plan fits the limits every WebGPU device has', () => {
    const wide = attentionPlan(300, 260);
    expect([wide.chunkedE, wide.vChunk < 260]).toEqual([true, true]);
    expect(attentionPlan(256, 256).chunkedE).toBe(false);
    for (const E of [1, 2, 3, 7, 64, 100, 255, 256, 257, 511, 512, 1000, 4096]) {
      for (const Ev of [1, 5, 64, 128, 256, 257, 300, 4096]) {
        const { qkChunk, vChunk, keys } = attentionPlan(E, Ev);
        expect(keys).toBeGreaterThanOrEqual(1);
        // 16 KiB of workgroup storage for the K and V tiles; WGSL's 8 KiB of function-scope memory for the private arrays.
        expect(keys * (qkChunk + vChunk)).toBeLessThanOrEqual(ATTENTION_TILE_FLOATS);
        expect((qkChunk + vChunk + keys) * 4).toBeLessThanOrEqual(8192);
        expect(Math.max(qkChunk, vChunk)).toBeLessThanOrEqual(ATTENTION_MAX_CHUNK);
      }
    }
  });

  it('more workgroups than one dispatch dimension takes (B = 65537: folded into two rows of the grid, the one past the end idle)', async () => {
    expectMatches(await run({ B: 65537, L: 1, S: 2, E: 1, Ev: 1 }));
  });

  it('another scale, and operands at offset 0', async () => {
    expectMatches(await run({ B: 2, L: 9, S: 11, E: 6, Ev: 3, scale: 0.7, offsets: [0, 0, 0, 0] }));
  });

  it('is one dispatch and allocates nothing on the device (the [L, S] scores are never stored)', async () => {
    const [B, L, S, E, Ev] = [2, 130, 200, 16, 16];
    const q = store('float32', uniform(B * L * E, 5), 0);
    const k = store('float32', uniform(B * S * E, 6), 0);
    const v = store('float32', uniform(B * S * Ev, 7), 0);
    const out = store('float32', new Array<number>(B * L * Ev).fill(0), 0);
    const lse = store('float32', new Array<number>(B * L).fill(0), 0);
    await gpu.synchronize(0);
    const before = { stats: gpu.stats(), memory: gpu.memoryStats(0) };
    gpu.fused!.attention!(contiguous(q.storage, 'float32', [B, L, E], 0), contiguous(k.storage, 'float32', [B, S, E], 0), contiguous(v.storage, 'float32', [B, S, Ev], 0),
      null, { scale: 0.25, isCausal: false }, contiguous(out.storage, 'float32', [B, L, Ev], 0), contiguous(lse.storage, 'float32', [B, L], 0));
    const after = { stats: gpu.stats(), memory: gpu.memoryStats(0) };
    expect(after.stats.dispatches - before.stats.dispatches).toBe(1);
    expect(after.memory).toEqual(before.memory);
    expect(after.stats.pooledBytes).toBe(before.stats.pooledBytes);
    await gpu.synchronize(0);
  });
});

describe('attention: masks', () => {
  const [B, L, S, E, Ev] = [2, 67, 100, 24, 20]; // two row tiles, two key tiles (64 keys each)
  const hash = (i: number) => uniform(1, 1000 + i)[0]!;

  it('an [L, S] mask broadcast over the batch (stride 0) at an offset', async () => {
    const mask: MaskLayout = { size: 3 + L * S, strides: [0, S, 1], offset: 3, fill: (i) => 2 * hash(i) };
    expectMatches(await run({ B, L, S, E, Ev, mask }));
  });

  it('a key-padding mask [B, S] broadcast over the queries, −∞ on the last keys of batch 1', async () => {
    const mask: MaskLayout = { size: 1 + B * S, strides: [S, 0, 1], offset: 1, fill: (i) => (i - 1 >= S + S - 3 ? -Infinity : 0) };
    const r = await run({ B, L, S, E, Ev, mask });
    expect(r.want.out.every(Number.isFinite)).toBe(true);
    expectMatches(r);
  });

  it('a full mask read through transposed strides ([B, S, L] storage): a fully masked row gives NaN and logSumExp −∞, a NaN in the mask a NaN row', async () => {
    // Element (b, l, s) lives at 5 + b·S·L + s·L + l.
    const at = (b: number, l: number, s: number) => 5 + b * S * L + s * L + l;
    const fill = (i: number) => {
      const j = i - 5;
      const [b, s, l] = [Math.floor(j / (S * L)), Math.floor(j / L) % S, j % L];
      if (b === 1 && l === 2) return -Infinity;
      if (b === 0 && l === 4 && s === 1) return NaN;
      return s % 3 === 0 ? -Infinity : hash(i);
    };
    const mask: MaskLayout = { size: at(B - 1, L - 1, S - 1) + 1, strides: [S * L, 1, L], offset: 5, fill };
    const r = await run({ B, L, S, E, Ev, mask });
    expect(r.got.lse[L + 2]).toBe(-Infinity);
    expect(r.got.out.slice((L + 2) * Ev, (L + 3) * Ev).every(Number.isNaN)).toBe(true);
    expect(Number.isNaN(r.got.lse[4]!)).toBe(true);
    expectMatches(r);
  });

  it('one value broadcast over everything (strides 0, 0, 0) shifts logSumExp and leaves out as it is', async () => {
    const mask: MaskLayout = { size: 4, strides: [0, 0, 0], offset: 2, fill: () => 0.5 };
    const masked = await run({ B, L, S, E, Ev, mask });
    const plain = await run({ B, L, S, E, Ev });
    expectMatches(masked);
    masked.got.lse.forEach((x, i) => expect(Math.abs(x - 0.5 - plain.got.lse[i]!)).toBeLessThanOrEqual(1e-5));
  });
});

describe('attention: isCausal', () => {
  it('L < S: row l sees keys 0..l', async () => {
    expectMatches(await run({ B: 2, L: 5, S: 9, E: 4, Ev: 3, isCausal: true }));
  });

  it('L > S over several row and key tiles: rows past S see every key', async () => {
    expectMatches(await run({ B: 2, L: 150, S: 100, E: 16, Ev: 8, isCausal: true }));
  });

  it('a NaN key at s = 70 reaches rows l ≥ 70 only: the keys above the diagonal take no part', async () => {
    const [B, L, S, E, Ev] = [1, 140, 120, 8, 8];
    const r = await run({ B, L, S, E, Ev, isCausal: true, edit: (t) => { t.k[70 * E + 3] = NaN; } });
    expect(r.got.lse.slice(0, 70).every(Number.isFinite)).toBe(true);
    expect(r.got.lse.slice(70).every(Number.isNaN)).toBe(true);
    expectMatches(r);
  });

  it('causal with the chunked head dims', async () => {
    expectMatches(await run({ B: 1, L: 70, S: 66, E: 260, Ev: 270, isCausal: true }));
  });
});

describe('attention: NaN inputs propagate', () => {
  it('a NaN in q makes its row NaN; a NaN in v makes its column NaN in every row of its batch', async () => {
    const [B, L, S, E, Ev] = [2, 10, 12, 6, 5];
    const r = await run({ B, L, S, E, Ev, edit: (t) => { t.q[(L + 3) * E] = NaN; t.v[(0 * S + 2) * Ev + 1] = NaN; } });
    expect(Number.isNaN(r.got.lse[L + 3]!)).toBe(true);
    expect(r.got.out.filter(Number.isNaN).length).toBe(Ev + L); // row (1, 3) and column 1 of batch 0
    expectMatches(r);
  });
});

describe('attention: half dtypes (computed in f32, out rounded once)', () => {
  for (const dtype of ['float16', 'bfloat16'] as const) {
    it(`${dtype}, with a broadcast mask, at odd offsets (packed words shared with the neighbours)`, async () => {
      const [B, L, S, E, Ev] = [2, 70, 45, 32, 16];
      const mask: MaskLayout = { size: 1 + L * S, strides: [0, S, 1], offset: 1, fill: (i) => (i % 7 === 0 ? -Infinity : uniform(1, i)[0]!) };
      expectMatches(await run({ B, L, S, E, Ev, dtype, mask, offsets: [1, 3, 1, 1] }), dtype);
    });

    it(`${dtype}, causal, E = Ev = 256`, async () => {
      expectMatches(await run({ B: 1, L: 20, S: 30, E: 256, Ev: 256, dtype, isCausal: true }), dtype);
    });
  }
});

describe('attention: bad operands', () => {
  it('are refused before anything runs, out left as it was', async () => {
    const [B, L, S, E, Ev] = [1, 3, 4, 2, 2];
    const q = store('float32', uniform(B * L * E, 1), 0);
    const kv = store('float32', uniform(B * S * E, 2), 0);
    const out = store('float32', new Array<number>(B * L * Ev).fill(9), 0);
    const lse16 = store('float16', new Array<number>(B * L).fill(9), 0);
    const lse = store('float32', new Array<number>(B * L).fill(9), 0);
    const call = (v: Ref, logSumExp: Ref) => gpu.fused!.attention!(contiguous(q.storage, 'float32', [B, L, E], 0), contiguous(kv.storage, 'float32', [B, S, E], 0), v,
      null, { scale: 1, isCausal: false }, contiguous(out.storage, 'float32', [B, L, Ev], 0), logSumExp);
    const before = gpu.stats().dispatches;
    expect(() => call(contiguous(kv.storage, 'float32', [B, S, Ev], 0), contiguous(lse16.storage, 'float16', [B, L], 0)))
      .toThrow(/logSumExp is float16, expected float32/);
    expect(() => call(contiguous(kv.storage, 'float32', [B, S + 1, Ev], 0), contiguous(lse.storage, 'float32', [B, L], 0))).toThrow(RangeError);
    expect(() => call({ ...contiguous(kv.storage, 'float32', [B, S, Ev], 0), strides: [S * Ev, 1, S] }, contiguous(lse.storage, 'float32', [B, L], 0)))
      .toThrow(/v must be contiguous/);
    expect(gpu.stats().dispatches).toBe(before);
    expect(Array.from((await gpu.read(out.storage)) as Float32Array).slice(0, B * L * Ev)).toEqual(new Array<number>(B * L * Ev).fill(9));
  });
});
