// Factories: tensor(), zeros/ones/full/empty, arange, linspace, the random factories (checked
// bit-for-bit against an independent Philox4x32-10 written here), *Like factories and argument
// errors.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import {
  arange, bfloat16, bool, DTypeError, empty, emptyLike, float16, float32, float64, full, fullLike, Generator, int32,
  linspace, manualSeed, ones, onesLike, rand, randint, randintLike, randLike, randn, randnLike, roundToFloat16,
  ShapeError, tensor, ValueError, zeros, zerosLike, type Tensor,
} from '@core/tensor';
import { registerFakeBackend } from './helpers/fake-backend.js';
import { expectClose, expectError, flat } from './helpers/assert.js';

registerFakeBackend();

function vals(t: Tensor): number[] {
  return Array.from(t.dataSync());
}

async function anyVals(t: Tensor): Promise<number[]> {
  return flat(await t.toArray());
}

// ---- an independent Philox4x32-10 (Random123), with BigInt products ----

const M0 = 0xd2511f53n;
const M1 = 0xcd9e8d57n;
const MASK = 0xffffffffn;

function philoxBlock(ctr: readonly number[], key: readonly number[]): number[] {
  let [c0, c1, c2, c3] = ctr.map(BigInt) as [bigint, bigint, bigint, bigint];
  let [k0, k1] = key.map(BigInt) as [bigint, bigint];
  for (let r = 0; r < 10; r++) {
    const p0 = M0 * c0;
    const p1 = M1 * c2;
    [c0, c1, c2, c3] = [(p1 >> 32n) ^ c1 ^ k0, p1 & MASK, (p0 >> 32n) ^ c3 ^ k1, p0 & MASK];
    k0 = (k0 + 0x9e3779b9n) & MASK;
    k1 = (k1 + 0xbb67ae85n) & MASK;
  }
  return [c0, c1, c2, c3].map(Number);
}

/** The spec's stream (RandomSpec): element i is word i mod 4 of the block at counter offset + ⌊i/4⌋. */
function referenceBits(seed: number, offset: number, n: number): number[] {
  const key = [seed % 2 ** 32, Math.floor(seed / 2 ** 32)];
  const out: number[] = [];
  for (let i = 0; i < n; i += 4) {
    const counter = offset + i / 4;
    const block = philoxBlock([counter % 2 ** 32, Math.floor(counter / 2 ** 32), 0, 0], key);
    for (let w = 0; w < 4 && i + w < n; w++) out.push(block[w]!);
  }
  return out;
}

const uniformOf = (bits: number) => (bits >>> 8) * 2 ** -24;
const randintOf = (bits: number, low: number, high: number) => low + Number((BigInt(bits) * BigInt(high - low)) >> 32n);

function maxOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => (b > a ? b : a), -Infinity);
}
function minOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => (b < a ? b : a), Infinity);
}
function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
function variance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
}

describe('tensor(): data in, dtype inference', () => {
  it('nested number arrays → float32 with the nested shape and values', () => {
    const t = tensor([[1, 2, 3], [4, 5, 6]]);
    expect(t.dtype).toBe(float32);
    expect(t.shape).toEqual([2, 3]);
    expect(vals(t)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(tensor([[[0.1]]]).shape).toEqual([1, 1, 1]);
    expect(vals(tensor([0.1]))).toEqual([Math.fround(0.1)]);
  });

  it('a number → 0-dim float32; a boolean → 0-dim bool', async () => {
    const s = tensor(3.5);
    expect(s.shape).toEqual([]);
    expect(s.dtype).toBe(float32);
    expect(await s.item()).toBe(3.5);
    expect(await s.toArray()).toBe(3.5);
    const b = tensor(true);
    expect(b.dtype).toBe(bool);
    expect(b.shape).toEqual([]);
    expect(await b.item()).toBe(1);
  });

  it('booleans → bool; booleans mixed with numbers → float32', () => {
    const b = tensor([[true, false], [false, true]]);
    expect(b.dtype).toBe(bool);
    expect(vals(b)).toEqual([1, 0, 0, 1]);
    const m = tensor([true, 2]);
    expect(m.dtype).toBe(float32);
    expect(vals(m)).toEqual([1, 2]);
  });

  it('typed arrays are 1-D and keep their type: Float32Array → float32, Float64Array → float64, Int32Array → int32', () => {
    const f = tensor(new Float32Array([1.5, 2.5]));
    expect(f.dtype).toBe(float32);
    expect(f.shape).toEqual([2]);
    const d = tensor(new Float64Array([0.1, 0.2]));
    expect(d.dtype).toBe(float64);
    expect(vals(d)).toEqual([0.1, 0.2]); // not rounded to f32
    const i = tensor(new Int32Array([-7, 2 ** 31 - 1]));
    expect(i.dtype).toBe(int32);
    expect(vals(i)).toEqual([-7, 2 ** 31 - 1]);
    expect(tensor(new Uint8Array([1, 255])).dtype).toBe(int32);
    expectError(() => tensor(new Uint16Array([1])), DTypeError, 'Uint16Array is ambiguous');
  });

  it('the data is copied: changing the source array afterwards does not change the tensor', () => {
    const src = new Float32Array([1, 2, 3]);
    const t = tensor(src);
    src[0] = 100;
    const nested = [[1, 2]];
    const u = tensor(nested);
    nested[0]![0] = 100;
    expect(vals(t)).toEqual([1, 2, 3]);
    expect(vals(u)).toEqual([1, 2]);
  });

  it('an explicit dtype converts: float16 rounds (RND-1), int32 rejects non-integers, bool is x != 0', () => {
    expect(vals(tensor([2049, 1 / 3, 65520], { dtype: float16 }))).toEqual([2048, roundToFloat16(1 / 3), Infinity]);
    expect(tensor([1, 2], { dtype: int32 }).dtype).toBe(int32);
    expectError(() => tensor([1, 1.5], { dtype: int32 }), ValueError, 'value 1.5 at flat index 1 is not an int32');
    expectError(() => tensor([2 ** 31], { dtype: int32 }), ValueError, 'is not an int32');
    expect(vals(tensor([0, -2, NaN], { dtype: bool }))).toEqual([0, 1, 1]);
    expect(vals(tensor(new Int32Array([3]), { dtype: float64 }))).toEqual([3]);
  });

  it('empty arrays: [] → shape [0] float32; [[], []] → [2, 0]', () => {
    const e = tensor([]);
    expect(e.shape).toEqual([0]);
    expect(e.dtype).toBe(float32);
    expect(tensor([[], []]).shape).toEqual([2, 0]);
  });

  it('ragged arrays → ShapeError "expected sequence of length …"', () => {
    expectError(() => tensor([[1, 2], [3]]), ShapeError, 'expected sequence of length 2 at dim 1 (got 1)');
    expectError(() => tensor([[1, 2], [3, 4, 5]]), ShapeError, 'expected sequence of length 2 at dim 1 (got 3)');
    expectError(() => tensor([[[1], [2]], [[3]]]), ShapeError, 'expected sequence of length 2 at dim 1 (got 1)');
    expectError(() => tensor([[1, 2], 3] as never), ShapeError, 'expected a sequence of length 2 at dim 1');
    expectError(() => tensor([1, [2]] as never), ShapeError, 'expected a number or boolean');
    expectError(() => tensor(['a'] as never), ShapeError, 'expected a number or boolean');
  });

  it('tensor(data, { device: "fake" }) puts the data on fake:0', async () => {
    const t = tensor([[1, 2]], { device: 'fake', dtype: bfloat16 });
    expect(t.device.toString()).toBe('fake:0');
    expect(t.dtype).toBe(bfloat16);
    expect(await t.toArray()).toEqual([[1, 2]]);
  });
});

describe('zeros / ones / full / empty', () => {
  it('zeros and ones: float32 by default, any dtype and device', async () => {
    expect(vals(zeros([2, 2]))).toEqual([0, 0, 0, 0]);
    expect(zeros([2, 2]).dtype).toBe(float32);
    expect(vals(ones([3], { dtype: int32 }))).toEqual([1, 1, 1]);
    expect(ones([3], { dtype: int32 }).dtype).toBe(int32);
    expect(vals(ones([2], { dtype: bool }))).toEqual([1, 1]);
    expect(vals(ones([2], { dtype: float16 }))).toEqual([1, 1]);
    const f = ones([2, 1], { device: 'fake:1', dtype: float64 });
    expect(f.device.toString()).toBe('fake:1');
    expect(f.dtype).toBe(float64);
    expect(await anyVals(f)).toEqual([1, 1]);
    expect(zeros([]).shape).toEqual([]);
    expect(zeros([0, 4]).numel()).toBe(0);
  });

  it('full: the fill value, float32 for numbers, bool for booleans, explicit dtype rounds', () => {
    expect(vals(full([2], 2.5))).toEqual([2.5, 2.5]);
    expect(full([2], 7).dtype).toBe(float32);
    const b = full([2], true);
    expect(b.dtype).toBe(bool);
    expect(vals(b)).toEqual([1, 1]);
    expect(vals(full([1], 2049, { dtype: float16 }))).toEqual([2048]);
    expect(vals(full([1], 1 + 2 ** -8, { dtype: bfloat16 }))).toEqual([1]);
    expect(Number.isNaN(vals(full([1], NaN))[0])).toBe(true);
    expect(vals(full([1], -Infinity))).toEqual([-Infinity]);
    expect(() => full([2], 'a' as never)).toThrow(TypeError);
  });

  it('empty: the shape, dtype and device, contents unspecified', () => {
    const e = empty([3, 2], { dtype: int32, device: 'fake' });
    expect(e.shape).toEqual([3, 2]);
    expect(e.dtype).toBe(int32);
    expect(e.device.toString()).toBe('fake:0');
    expect(empty([4]).dtype).toBe(float32);
  });

  it('bad shapes and dtypes throw typed errors', () => {
    expectError(() => zeros([-1]), ShapeError, 'sizes must be non-negative integers, got [-1]');
    expectError(() => ones([2, 1.5]), ShapeError, 'sizes must be non-negative integers');
    expectError(() => empty(3 as never), ShapeError, 'shape must be an array of sizes');
    expectError(() => zeros([2], { dtype: 'float32' as never }), DTypeError, 'unknown dtype float32');
    expectError(() => full([2], 1, { dtype: {} as never }), DTypeError, 'unknown dtype');
    expectError(() => zeros([2], { dtype: int32, requiresGrad: true }), DTypeError, 'only floating point tensors can require gradients');
    expect(zeros([2], { requiresGrad: true }).requiresGrad).toBe(true);
  });
});

describe('arange', () => {
  it('integers → int32: arange(end), arange(start, end), negative step', () => {
    const a = arange(5);
    expect(a.dtype).toBe(int32);
    expect(vals(a)).toEqual([0, 1, 2, 3, 4]);
    expect(vals(arange(2, 6))).toEqual([2, 3, 4, 5]);
    expect(vals(arange(5, 0, -2))).toEqual([5, 3, 1]);
    expect(vals(arange(-3, 3, 2))).toEqual([-3, -1, 1]);
    expect(arange(0).shape).toEqual([0]);
    expect(arange(3, 3).shape).toEqual([0]);
  });

  it('non-integer arguments → float32; the size is ⌈(end − start) / step⌉', () => {
    const a = arange(0, 1, 0.25);
    expect(a.dtype).toBe(float32);
    expect(vals(a)).toEqual([0, 0.25, 0.5, 0.75]);
    expect(vals(arange(0.5, 3))).toEqual([0.5, 1.5, 2.5]);
    expect(arange(0, 1, 0.1).shape).toEqual([10]);
    expect(arange(1, 2.5, 0.5).shape).toEqual([3]);
    expectClose(vals(arange(1, 0, -0.3)), [1, 0.7, 0.4, 0.1].map(Math.fround), { atol: 1e-7 });
  });

  it('options: dtype and device, also as the second argument (arange(5, { dtype }))', async () => {
    const a = arange(0, 6, 2, { dtype: float64 });
    expect(a.dtype).toBe(float64);
    expect(vals(a)).toEqual([0, 2, 4]);
    const b = arange(4, { dtype: float32, device: 'fake' });
    expect(b.dtype).toBe(float32);
    expect(b.device.toString()).toBe('fake:0');
    expect(await anyVals(b)).toEqual([0, 1, 2, 3]);
    expect(arange(1, 3, { dtype: float16 }).dtype).toBe(float16);
    // an integer dtype with a fractional step: computed in float, then cast (truncated)
    expect(vals(arange(0, 2, 0.5, { dtype: int32 }))).toEqual([0, 0, 1, 1]);
  });

  it('errors: step 0, non-finite bounds, a step whose sign cannot reach end', () => {
    expectError(() => arange(0, 5, 0), ValueError, 'step must be nonzero');
    expectError(() => arange(0, Infinity), ValueError, 'end must be a finite number, got Infinity');
    expectError(() => arange(NaN), ValueError, 'must be a finite number, got NaN');
    expectError(() => arange(0, 1, Infinity), ValueError, 'step must be a finite number');
    expectError(() => arange(0, 5, -1), ValueError, 'upper bound and larger bound inconsistent with step sign');
    expectError(() => arange(5, 0, 1), ValueError, 'inconsistent with step sign');
  });
});

describe('linspace', () => {
  it('evenly spaced, both ends included, float32 by default', () => {
    const l = linspace(0, 1, 5);
    expect(l.dtype).toBe(float32);
    expect(vals(l)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(vals(linspace(3, -3, 4))).toEqual([3, 1, -1, -3]);
    // integer dtypes: computed in float and truncated, like PyTorch's [0, 3, 6, 10]
    const i = linspace(0, 10, 4, { dtype: int32 });
    expect(i.dtype).toBe(int32);
    expect(vals(i)).toEqual([0, 3, 6, 10]);
  });

  it("PyTorch's symmetric formula: the second half counts back from end (checked in float64)", () => {
    const [a, b, n] = [0, 1, 10];
    const step = (b - a) / (n - 1);
    const expected = Array.from({ length: n }, (_, i) => (i < Math.floor(n / 2) ? a + step * i : b - step * (n - 1 - i)));
    const naive = Array.from({ length: n }, (_, i) => a + step * i);
    expect(naive[6]).not.toBe(expected[6]); // the check below can tell the formulas apart
    expect(vals(linspace(a, b, n, { dtype: float64 }))).toEqual(expected);
    expect(vals(linspace(a, b, n, { dtype: float64 }))[n - 1]).toBe(1); // the end is exact
    // and it is exactly symmetric around the midpoint
    const s = vals(linspace(-1, 1, 7, { dtype: float64 }));
    for (let i = 0; i < 7; i++) expect(s[i]! + s[6 - i]!).toBe(0);
  });

  it('steps 0 → empty, steps 1 → [start]; bad steps or non-finite bounds → ValueError', () => {
    expect(linspace(0, 1, 0).shape).toEqual([0]);
    expect(vals(linspace(2, 5, 1))).toEqual([2]);
    expectError(() => linspace(0, 1, -1), ValueError, 'number of steps must be a non-negative integer');
    expectError(() => linspace(0, 1, 2.5), ValueError, 'non-negative integer');
    expectError(() => linspace(0, NaN, 3), ValueError, 'end must be a finite number');
    expectError(() => linspace(-Infinity, 0, 3), ValueError, 'start must be a finite number');
  });
});

describe('random factories', () => {
  it('the Philox reference used here matches Random123\'s known-answer vectors', () => {
    const hex = (xs: number[]) => xs.map((x) => x.toString(16).padStart(8, '0'));
    expect(hex(philoxBlock([0, 0, 0, 0], [0, 0]))).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
    expect(hex(philoxBlock([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff]))).toEqual(['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd']);
    expect(hex(philoxBlock([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]))).toEqual(['d16cfe09', '94fdcceb', '5001e420', '24126ea1']);
  });

  it('rand: bit-exact against the Philox stream; consecutive calls continue it (offset += ⌈n/4⌉)', () => {
    const seed = 2 ** 32 + 12345; // both key words non-zero
    manualSeed(seed);
    const a = rand([3, 3]);
    const b = rand([5]);
    expect(vals(a)).toEqual(referenceBits(seed, 0, 9).map(uniformOf));
    expect(vals(b)).toEqual(referenceBits(seed, 3, 5).map(uniformOf));
    manualSeed(seed);
    expect(vals(rand([9]))).toEqual(vals(a)); // reproducible
    manualSeed(seed + 1);
    expect(vals(rand([9]))).not.toEqual(vals(a));
  });

  it('randint: bit-exact low + ⌊bits·(high − low) / 2^32⌋, for both signatures', () => {
    manualSeed(7);
    const a = randint(-5, 1000, [101]);
    expect(a.dtype).toBe(int32);
    expect(vals(a)).toEqual(referenceBits(7, 0, 101).map((b) => randintOf(b, -5, 1000)));
    manualSeed(7);
    const b = randint(10, [6]);
    expect(vals(b)).toEqual(referenceBits(7, 0, 6).map((x) => randintOf(x, 0, 10)));
    manualSeed(7);
    expect(vals(randint(0, 10, [6]))).toEqual(vals(b));
    // the full int32 range (range 2^32) needs exact 64-bit arithmetic
    manualSeed(7);
    expect(vals(randint(-(2 ** 31), 2 ** 31, [8]))).toEqual(referenceBits(7, 0, 8).map((x) => randintOf(x, -(2 ** 31), 2 ** 31)));
  });

  it('randn: Box–Muller over two uniform draws, within 2e-5 of the float64 formula', () => {
    manualSeed(99);
    const n = 1001;
    const z = vals(randn([n]));
    const u1 = referenceBits(99, 0, n).map(uniformOf);
    const u2 = referenceBits(99, Math.ceil(n / 4), n).map(uniformOf);
    const expected = u1.map((u, i) => Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * u2[i]!));
    // computed in float32 step by step: a few f32 ulps of the ≈5-magnitude intermediates
    expectClose(z, expected, { atol: 2e-5, rtol: 2e-5 });
  });

  it('the same seed gives the same numbers on cpu and fake (bit-identical rand/randint, randn within 1e-6)', async () => {
    for (const [name, make] of [
      ['rand', (device: string) => rand([257], { device })],
      ['randint', (device: string) => randint(-3, 17, [257], { device })],
      ['rand f16', (device: string) => rand([64], { device, dtype: float16 })],
    ] as const) {
      manualSeed(31337);
      const c = vals(make('cpu'));
      manualSeed(31337);
      const f = await anyVals(make('fake:1'));
      expect(f, name).toEqual(c);
    }
    manualSeed(5);
    const c = vals(randn([300]));
    manualSeed(5);
    const f = await anyVals(randn([300], { device: 'fake' }));
    expectClose(f, c, { atol: 1e-6 });
  });

  it('rand is in [0, 1) with mean ≈ 1/2 and variance ≈ 1/12; randn has mean ≈ 0 and variance ≈ 1', () => {
    manualSeed(1);
    const u = vals(rand([100000]));
    expect(minOf(u)).toBeGreaterThanOrEqual(0);
    expect(maxOf(u)).toBeLessThan(1);
    expect(Math.abs(mean(u) - 0.5)).toBeLessThan(0.01); // σ of the mean ≈ 0.0009
    expect(Math.abs(variance(u) - 1 / 12)).toBeLessThan(0.004);
    const z = vals(randn([100000]));
    expect(Math.abs(mean(z))).toBeLessThan(0.03); // σ of the mean ≈ 0.003
    expect(Math.abs(variance(z) - 1)).toBeLessThan(0.05);
    expect(z.filter((x) => Math.abs(x) > 1.96).length / z.length).toBeCloseTo(0.05, 1);
  });

  it('rand in float16/bfloat16 is never 1 (values keep only the bits the type has)', () => {
    manualSeed(2024);
    const n = 1 << 17; // P(an f32 uniform rounds up to 1 in f16) = 2^-12 per draw: ≈ 32 would hit 1 unguarded
    const h = rand([n], { dtype: float16 });
    expect(h.dtype).toBe(float16);
    const hv = vals(h);
    expect(maxOf(hv)).toBeLessThan(1);
    expect(maxOf(hv)).toBe(1 - 2 ** -11);
    expect(minOf(hv)).toBe(0);
    expect(hv.every((v) => Number.isInteger(v * 2 ** 11))).toBe(true);
    const b = rand([n], { dtype: bfloat16 });
    const bv = vals(b);
    expect(maxOf(bv)).toBe(1 - 2 ** -8);
    expect(bv.every((v) => v >= 0 && v < 1 && Number.isInteger(v * 2 ** 8))).toBe(true);
    expect(Math.abs(mean(hv) - 0.5)).toBeLessThan(0.01);
    expect(rand([2], { dtype: float64 }).dtype).toBe(float64);
  });

  it('randint: values within [low, high), every value appears, dtype option', () => {
    manualSeed(3);
    const r = vals(randint(-3, 4, [7000]));
    expect(minOf(r)).toBe(-3);
    expect(maxOf(r)).toBe(3);
    for (let v = -3; v <= 3; v++) expect(r.filter((x) => x === v).length).toBeGreaterThan(800); // ≈ 1000 each
    const one = vals(randint(5, 6, [10]));
    expect(one).toEqual(new Array(10).fill(5));
    const f = randint(0, 3, [20], { dtype: float32 });
    expect(f.dtype).toBe(float32);
    expect(vals(f).every((v) => v === 0 || v === 1 || v === 2)).toBe(true);
  });

  it('randint errors: high ≤ low, non-integers, ranges outside int32', () => {
    expectError(() => randint(5, 5, [2]), ValueError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
    expectError(() => randint(0, [2]), ValueError, 'from=0 >= to=0');
    expectError(() => randint(0, 2.5, [2]), ValueError, 'low and high must be integers');
    expectError(() => randint(0, 2 ** 31 + 1, [2]), ValueError, 'must fit in int32');
    expectError(() => randint(0, 5, [-2]), ShapeError, 'sizes must be non-negative integers');
  });

  it('a Generator in the options gives its own reproducible stream and leaves the default one alone', () => {
    manualSeed(11);
    const expectedDefault = vals(rand([6]));
    manualSeed(11);
    const g = new Generator(123);
    const a = rand([6], { generator: g });
    expect(vals(a)).toEqual(referenceBits(123, 0, 6).map(uniformOf));
    expect(vals(rand([6]))).toEqual(expectedDefault); // default stream not advanced by g
    expect(g.getState()).toEqual({ seed: 123, offset: 2 });
    const b = randint(0, 100, [4], { generator: g });
    expect(vals(b)).toEqual(referenceBits(123, 2, 4).map((x) => randintOf(x, 0, 100)));
    g.setState({ seed: 123, offset: 2 });
    expect(vals(randint(0, 100, [4], { generator: g }))).toEqual(vals(b));
    expect(g.initialSeed()).toBe(123);
    const g2 = new Generator(123);
    const z1 = vals(randn([10], { generator: g2 }));
    g2.manualSeed(123);
    expect(vals(randn([10], { generator: g2 }))).toEqual(z1);
  });

  it('bad random arguments: integer dtypes for rand/randn, negative or unsafe seeds', () => {
    expectError(() => rand([2], { dtype: int32 }), DTypeError, 'rand(): expected a floating point dtype, got int32');
    expectError(() => randn([2], { dtype: bool }), DTypeError, 'randn(): expected a floating point dtype, got bool');
    expectError(() => rand([-1]), ShapeError, 'sizes must be non-negative integers');
    expectError(() => manualSeed(-1), ValueError, 'seed must be a non-negative safe integer');
    expectError(() => manualSeed(2 ** 53), ValueError, 'non-negative safe integer');
    expectError(() => new Generator(1.5), ValueError, 'non-negative safe integer');
  });
});

describe('*Like factories', () => {
  it('zerosLike/onesLike/fullLike/emptyLike: shape, dtype and values', () => {
    const src = tensor([[1, 2, 3], [4, 5, 6]], { dtype: int32 });
    for (const [name, t, v] of [
      ['zerosLike', zerosLike(src), 0], ['onesLike', onesLike(src), 1], ['fullLike', fullLike(src, 7), 7],
    ] as const) {
      expect(t.shape, name).toEqual([2, 3]);
      expect(t.dtype, name).toBe(int32);
      expect(vals(t), name).toEqual(new Array(6).fill(v));
    }
    const e = emptyLike(src, { dtype: float16 });
    expect(e.shape).toEqual([2, 3]);
    expect(e.dtype).toBe(float16);
    expect(vals(fullLike(src, 2.5, { dtype: float32 }))).toEqual(new Array(6).fill(2.5));
    // a transposed source gives the transposed shape
    expect(zerosLike(src.t()).shape).toEqual([3, 2]);
  });

  it('randLike/randnLike/randintLike draw from the same stream as rand/randn/randint', () => {
    const src = zeros([4, 5], { dtype: float16 });
    manualSeed(8);
    const a = randLike(src);
    manualSeed(8);
    expect(a.dtype).toBe(float16);
    expect(vals(a)).toEqual(vals(rand([4, 5], { dtype: float16 })));
    manualSeed(8);
    const b = randnLike(zeros([3]));
    manualSeed(8);
    expect(vals(b)).toEqual(vals(randn([3])));
    manualSeed(8);
    const c = randintLike(zeros([6], { dtype: int32 }), 2, 9);
    manualSeed(8);
    expect(c.dtype).toBe(int32);
    expect(vals(c)).toEqual(vals(randint(2, 9, [6])));
    const g = new Generator(4);
    expect(vals(randLike(zeros([3]), { generator: g }))).toEqual(referenceBits(4, 0, 3).map(uniformOf));
  });

  it('*Like of a non-tensor is a TypeError; randLike of an int tensor is a DTypeError', () => {
    expect(() => zerosLike([1, 2] as never)).toThrow(TypeError);
    expectError(() => randLike(zeros([2], { dtype: int32 })), DTypeError, 'expected a floating point dtype, got int32');
  });
});
