// Random numbers: the same seed gives bit-identical rand/randint on every backend. Expected values
// come from the oracle's own Philox4x32-10; for a backend that is not the cpu, the cpu backend's
// numbers for the same seed are compared too.
import { Generator, manualSeed, rand, randint, randn, type Device, type DTypeName, type Tensor } from '@core/tensor';
import { expectTensor } from '../check.js';
import { dtypeObject } from '../inputs.js';
import { roundTo } from '../oracle/dtype.js';
import { nd, vector } from '../oracle/ndarray.js';
import { keyOf, philoxWords, randintFromWord, uniformFromWord } from '../oracle/philox.js';
import { cpuSkip, type Case, type Env } from '../types.js';

const SEEDS = [0, 1, 42, 2 ** 32 + 7, 2 ** 53 - 1];
const SIZES = [1, 7, 1000];

/** The uniform values a generator at (seed, offset) gives for n elements. */
function uniforms(seed: number, offset: number, n: number): number[] {
  return philoxWords(keyOf(seed), offset, n).map(uniformFromWord);
}

/** rand() in a half dtype keeps only the bits the type has, so rounding never reaches 1. */
function truncated(u: number, dtype: DTypeName): number {
  const bits = dtype === 'float16' ? 11 : dtype === 'bfloat16' ? 8 : 0;
  return bits === 0 ? roundTo(dtype, u) : Math.floor(u * 2 ** bits) * 2 ** -bits;
}

export function randomCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `random/${id}`, category: 'random', op, dtype, run, ...(skip ? { skip } : {}) });
  const needs = (...ds: DTypeName[]) => {
    const missing = ds.find((d) => !env.compute.has(d));
    return missing ? `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` : undefined;
  };
  const check = (label: string, t: Tensor, values: number[], dtype: DTypeName, d: Device = dev) =>
    expectTensor(t, { value: vector(values), dtype }, { label, cls: 'exact', device: d });

  for (const seed of SEEDS) {
    for (const n of SIZES) {
      add(`rand/seed-${seed}/n-${n}`, 'rand', 'float32', () =>
        check(`rand([${n}]) with seed ${seed}`, rand([n], { device: dev, generator: new Generator(seed) }), uniforms(seed, 0, n), 'float32'));
      add(`randint/seed-${seed}/n-${n}`, 'randint', 'int32', () => {
        const words = philoxWords(keyOf(seed), 0, n);
        return check(`randint(-5, 1000, [${n}]) with seed ${seed}`, randint(-5, 1000, [n], { device: dev, generator: new Generator(seed) }),
          words.map((w) => randintFromWord(w, -5, 1000)), 'int32');
      }, needs('int32'));
    }
  }
  for (const dtype of ['float16', 'bfloat16', 'float64'] as const) {
    add(`rand/dtype/${dtype}`, 'rand', dtype, () =>
      check(`rand([333], { dtype: ${dtype} })`, rand([333], { device: dev, dtype: dtypeObject(dtype), generator: new Generator(7) }),
        uniforms(7, 0, 333).map((u) => truncated(u, dtype)), dtype), needs(dtype, 'float32'));
  }
  for (const [low, high] of [[-(2 ** 31), 2 ** 31], [0, 1], [-3, 3], [1000, 1001 + 2 ** 20]] as const) {
    add(`randint/range/${low}..${high}`, 'randint', 'int32', () => {
      const words = philoxWords(keyOf(99), 0, 501);
      return check(`randint(${low}, ${high})`, randint(low, high, [501], { device: dev, generator: new Generator(99) }), words.map((w) => randintFromWord(w, low, high)), 'int32');
    }, needs('int32'));
  }
  add('stream/continues', 'rand', 'float32', async () => {
    // Each call reserves ceil(n / 4) Philox blocks: a second call starts at the next block.
    const g = new Generator(5);
    const first = rand([5], { device: dev, generator: g });
    const second = rand([6], { device: dev, generator: g });
    await check('first rand([5])', first, uniforms(5, 0, 5), 'float32');
    return check('second rand([6]) continues at block 2', second, uniforms(5, 2, 6), 'float32');
  });
  add('stream/counter-carry', 'rand', 'float32', () => {
    // Blocks at counters 2^32 − 1 and 2^32: the low word wraps and carries into the second word.
    const g = new Generator(3).setState({ seed: 3, offset: 2 ** 32 - 1 });
    return check('rand([8]) across the 2^32 counter boundary', rand([8], { device: dev, generator: g }), uniforms(3, 2 ** 32 - 1, 8), 'float32');
  });
  add('stream/manualSeed', 'rand', 'float32', () => {
    manualSeed(1234);
    return check('manualSeed(1234); rand([9])', rand([9], { device: dev }), uniforms(1234, 0, 9), 'float32');
  });
  add('stream/empty', 'rand', 'float32', async () => {
    const g = new Generator(8);
    await check('rand([0])', rand([0], { device: dev, generator: g }), [], 'float32');
    return check('rand after an empty draw starts at block 0', rand([4], { device: dev, generator: g }), uniforms(8, 0, 4), 'float32');
  });
  add('randn/box-muller', 'randn', 'float32', async () => {
    // randn = sqrt(−2·log(1 − u1))·cos(2π·u2), each op in f32: transcendental, so not bit-exact.
    const n = 64;
    const g = new Generator(11);
    const u1 = uniforms(11, 0, n);
    const u2 = uniforms(11, Math.ceil(n / 4), n);
    const f = Math.fround;
    const want = u1.map((a, i) => f(f(Math.sqrt(f(f(Math.log(f(1 - a))) * -2))) * f(Math.cos(f(u2[i]! * f(2 * Math.PI))))));
    // cos near its zeros is ill-conditioned: allow the absolute error of one f32 ulp of 2π·u2, times the radius.
    return expectTensor(randn([n], { device: dev, generator: g }), { value: vector(want), dtype: 'float32', bound: new Float64Array(n).fill(4e-6) }, { label: 'randn([64]) (Box–Muller)', cls: 'approx', device: dev });
  });
  if (env.cpu || env.cpuPresence === 'absent') {
    for (const seed of [0, 2 ** 32 + 7]) {
      add(`same-as-cpu/rand/seed-${seed}`, 'rand', 'float32', async () => {
        const ref = await rand([777], { device: env.cpu!, generator: new Generator(seed) }).data();
        return expectTensor(rand([777], { device: dev, generator: new Generator(seed) }), { value: nd([777], ref), dtype: 'float32' }, { label: `rand on ${dev} vs cpu, seed ${seed}`, cls: 'exact', device: dev });
      }, cpuSkip(env));
      add(`same-as-cpu/randint/seed-${seed}`, 'randint', 'int32', async () => {
        const ref = await randint(-1000, 1000, [777], { device: env.cpu!, generator: new Generator(seed) }).data();
        return expectTensor(randint(-1000, 1000, [777], { device: dev, generator: new Generator(seed) }), { value: nd([777], ref), dtype: 'int32' }, { label: `randint on ${dev} vs cpu, seed ${seed}`, cls: 'exact', device: dev });
      }, cpuSkip(env, needs('int32')));
    }
  }
  return cases;
}
