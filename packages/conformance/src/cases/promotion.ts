// Type promotion (TP-1..6) and rounding (RND-1..7): result dtypes and values of mixed-dtype ops,
// in-place casting rules, half-precision ops computed in f32 and rounded once, and fp32 → fp16/bf16
// rounding done by the backend's cast kernel, checked against PyTorch's documented values.
import {
  cat, DTypeError, float16BitsToNumber, bfloat16BitsToNumber, ones, tensor, where, type DTypeName, type Tensor,
} from '@core/tensor';
import { expectTensor, expectThrows } from '../check.js';
import { dtypeObject, toDevice } from '../inputs.js';
import { ALL_DTYPES, promote, roundTo, storeResult } from '../oracle/dtype.js';
import { nd, vector, zipWith, type NdArray } from '../oracle/ndarray.js';
import { Rng } from '../rng.js';
import type { Case, Env } from '../types.js';

type Operand = { value: NdArray; dtype: DTypeName } | number | boolean;

export function promotionCases(env: Env): Case[] {
  const cases: Case[] = [];
  const need = (compute: DTypeName[], store: DTypeName[]): string | undefined => {
    const c = compute.find((d) => !env.compute.has(d));
    if (c) return `declared capabilities: the ${env.name} backend does not declare compute for ${c}`;
    const s = store.find((d) => !env.storage.has(d));
    return s ? `declared capabilities: the ${env.name} backend does not declare storage for ${s}` : undefined;
  };
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `promotion/${id}`, category: 'promotion', op, dtype, run, ...(skip ? { skip } : {}) });
  const up = (o: Operand): Tensor | number | boolean => (typeof o === 'object' ? toDevice(o.value, o.dtype, env.device) : o);

  // TP-1: every pair of dtypes under add (bool+bool is or) and mul.
  for (const a of ALL_DTYPES) {
    for (const b of ALL_DTYPES) {
      if (a === b) continue;
      const r = promote(a, b);
      add(`TP-1/add/${a}+${b}`, 'add (mixed)', r, async () => {
        const rng = new Rng(`TP-1/${a}+${b}`);
        const va = nd([2, 3], () => roundTo(a, a === 'bool' ? rng.int(0, 2) : rng.uniform(-3, 3) * (a === 'int32' ? 10 : 1)));
        const vb = nd([3], () => roundTo(b, b === 'bool' ? rng.int(0, 2) : rng.uniform(-3, 3) * (b === 'int32' ? 10 : 1)));
        const y = toDevice(va, a, env.device).add(toDevice(vb, b, env.device));
        // Both operands are converted to the result dtype, then added once.
        const value = nd([2, 3], (i) => {
          const x = roundTo(r, va.data[i]!);
          const z = roundTo(r, vb.data[i % 3]!);
          return r === 'bool' ? (x !== 0 || z !== 0 ? 1 : 0) : storeResult(r, x + z);
        });
        return expectTensor(y, { value, dtype: r }, { label: `${a} + ${b}`, cls: 'exact', device: env.device });
      }, need([r], [a, b]));
    }
  }

  // TP-1 beyond add: cat, where and comparisons promote their tensor operands the same way.
  for (const [a, b] of [['float16', 'bfloat16'], ['int32', 'float16'], ['bool', 'float32'], ['float32', 'float64']] as const) {
    const r = promote(a, b);
    const va = vector([1, 0, 2.5, -3].map((v) => roundTo(a, v)));
    const vb = vector([1, 0.1, 2.5, 7].map((v) => roundTo(b, v)));
    const conv = (x: NdArray) => nd(x.shape, (i) => roundTo(r, x.data[i]!));
    add(`TP-1/cat/${a}+${b}`, 'cat (mixed)', r, async () => {
      const y = cat([toDevice(va, a, env.device), toDevice(vb, b, env.device)]);
      return expectTensor(y, { value: nd([8], [...conv(va).data, ...conv(vb).data]), dtype: r }, { label: `cat([${a}, ${b}])`, cls: 'exact', device: env.device });
    }, need([], [a, b, r]));
    add(`TP-1/where/${a}+${b}`, 'where (mixed)', r, async () => {
      const cond = toDevice(vector([1, 0, 0, 1]), 'bool', env.device);
      const y = where(cond, toDevice(va, a, env.device), toDevice(vb, b, env.device));
      return expectTensor(y, { value: nd([4], (i) => ([1, 0, 0, 1][i] ? conv(va) : conv(vb)).data[i]!), dtype: r }, { label: `where(cond, ${a}, ${b})`, cls: 'exact', device: env.device });
    }, need([r], [a, b]));
    add(`TP-1/eq/${a}+${b}`, 'eq (mixed)', r, async () => {
      const y = toDevice(va, a, env.device).eq(toDevice(vb, b, env.device));
      return expectTensor(y, { value: nd([4], (i) => (conv(va).data[i] === conv(vb).data[i] ? 1 : 0)), dtype: 'bool' }, { label: `${a} == ${b} (compared in ${r})`, cls: 'exact', device: env.device });
    }, need([r], [a, b]));
  }

  // TP-2/TP-3: tiers (dim > 0 tensors, then 0-dim tensors, then JS numbers).
  const tiers: Array<{ id: string; a: Operand; b: Operand; op: 'add' | 'mul' | 'div'; want: DTypeName }> = [
    { id: 'f16[n]+f32-0dim', a: { value: vector([1.5, -2.25, 3]), dtype: 'float16' }, b: { value: nd([], [0.1]), dtype: 'float32' }, op: 'add', want: 'float16' },
    { id: 'bf16[n]+f64-0dim', a: { value: vector([1.5, -2.25, 3]), dtype: 'bfloat16' }, b: { value: nd([], [0.1]), dtype: 'float64' }, op: 'add', want: 'bfloat16' },
    { id: 'int32[n]+f16-0dim', a: { value: vector([1, -2, 3000]), dtype: 'int32' }, b: { value: nd([], [0.5]), dtype: 'float16' }, op: 'add', want: 'float16' },
    { id: 'int32[n]+1.5', a: { value: vector([1, -2, 16777217]), dtype: 'int32' }, b: 1.5, op: 'add', want: 'float32' },
    { id: 'int32[n]*2.5', a: { value: vector([1, -2, 7]), dtype: 'int32' }, b: 2.5, op: 'mul', want: 'float32' },
    { id: 'bool[n]+1', a: { value: vector([1, 0, 1]), dtype: 'bool' }, b: 1, op: 'add', want: 'int32' },
    { id: 'bool[n]+true', a: { value: vector([1, 0, 0]), dtype: 'bool' }, b: true, op: 'add', want: 'bool' },
    { id: 'f16-0dim+f32-0dim', a: { value: nd([], [1.5]), dtype: 'float16' }, b: { value: nd([], [0.1]), dtype: 'float32' }, op: 'add', want: 'float32' },
    { id: 'f16-0dim+1.5', a: { value: nd([], [0.25]), dtype: 'float16' }, b: 1.5, op: 'add', want: 'float16' },
    { id: 'f16[n]*2', a: { value: vector([1.5, 60000, -3]), dtype: 'float16' }, b: 2, op: 'mul', want: 'float16' },
    { id: 'f32[n]+f64-0dim', a: { value: vector([1, 2, 3]), dtype: 'float32' }, b: { value: nd([], [0.1]), dtype: 'float64' }, op: 'add', want: 'float32' },
    { id: 'bf16-0dim+f16[n]', a: { value: nd([], [0.1]), dtype: 'bfloat16' }, b: { value: vector([1, 2.5, -4]), dtype: 'float16' }, op: 'add', want: 'float16' },
    { id: 'int32[n]/int32[n]', a: { value: vector([1, -7, 9]), dtype: 'int32' }, b: { value: vector([3, 2, -4]), dtype: 'int32' }, op: 'div', want: 'float32' },
    { id: 'bool[n]*f16[n]', a: { value: vector([1, 0, 1]), dtype: 'bool' }, b: { value: vector([0.1, 2, -3]), dtype: 'float16' }, op: 'mul', want: 'float16' },
  ];
  for (const t of tiers) {
    const dtypes = [t.a, t.b].flatMap((o) => (typeof o === 'object' ? [o.dtype] : []));
    add(`TP-3/${t.id}`, `${t.op} (tiers)`, t.want, async () => {
      const y = (up(t.a) as Tensor)[t.op](up(t.b) as never);
      // Every operand is converted to the compute dtype: the result dtype, except that half ops
      // with a JS number compute in f32 and round once (PyTorch's opmath).
      const hasNumber = [t.a, t.b].some((o) => typeof o !== 'object');
      const computeIn: DTypeName = (t.want === 'float16' || t.want === 'bfloat16') && hasNumber ? 'float32' : t.want;
      const conv = (o: Operand) => (typeof o === 'object' ? o.value : nd([], [Number(o)]));
      const A = conv(t.a);
      const B = conv(t.b);
      const f = { add: (x: number, z: number) => x + z, mul: (x: number, z: number) => x * z, div: (x: number, z: number) => x / z }[t.op];
      const value = zipWith([A, B], (x, z) => {
        const [p, q] = [roundTo(computeIn, x), roundTo(computeIn, z)];
        return t.want === 'bool' ? (p !== 0 || q !== 0 ? 1 : 0) : storeResult(t.want, f(p, q));
      });
      return expectTensor(y, { value, dtype: t.want }, { label: `${t.id}`, cls: 'exact', device: env.device });
    }, need([t.want], dtypes));
  }

  // TP-4: in-place ops compute in the promoted dtype and store only if canCast allows.
  add('TP-4/f16.add_(f32)', 'add_ (mixed)', 'float16', async () => {
    const x = toDevice(vector([1, 2048, -3]), 'float16', env.device);
    x.add_(toDevice(vector([0.1, 1, 1e-4]), 'float32', env.device));
    const value = vector([1 + Math.fround(0.1), 2049, -3 + Math.fround(1e-4)].map((v) => roundTo('float16', Math.fround(v))));
    return expectTensor(x, { value, dtype: 'float16' }, { label: 'f16.add_(f32) stores the f32 sum rounded to f16', cls: 'exact', device: env.device });
  }, need(['float32'], ['float16']));
  add('TP-4/int32.add_(1.5)', 'add_ (mixed)', 'int32', () => {
    const x = toDevice(vector([1, 2]), 'int32', env.device);
    expectThrows('int32.add_(1.5)', () => x.add_(1.5), DTypeError, "result type float32 can't be cast to the desired output type int32");
  }, need(['float32'], ['int32']));
  add('TP-4/bool.add_(int32)', 'add_ (mixed)', 'bool', () => {
    const x = toDevice(vector([1, 0]), 'bool', env.device);
    expectThrows('bool.add_(int32)', () => x.add_(toDevice(vector([1, 2]), 'int32', env.device)), DTypeError, "can't be cast to the desired output type bool");
  }, need(['int32'], ['bool']));
  add('TP-4/f32.mul_(f64-0dim)', 'mul_ (mixed)', 'float32', async () => {
    const x = toDevice(vector([1, 3]), 'float32', env.device);
    x.mul_(toDevice(nd([], [0.1]), 'float64', env.device));
    return expectTensor(x, { value: vector([Math.fround(Math.fround(0.1)), Math.fround(3 * Math.fround(0.1))]), dtype: 'float32' }, { label: 'f32.mul_(f64 0-dim)', cls: 'exact', device: env.device });
  }, need(['float32'], ['float64']));

  // TP-5: matrix products never promote.
  add('TP-5/matmul-f32@f16', 'matmul (mixed)', '-', () => {
    const a = toDevice(nd([2, 2], [1, 2, 3, 4]), 'float32', env.device);
    const b = toDevice(nd([2, 2], [1, 2, 3, 4]), 'float16', env.device);
    expectThrows('matmul(float32, float16)', () => a.matmul(b), DTypeError, 'expected input and other to have the same dtype, but got: float32 != float16');
    expectThrows('mm(float32, float16)', () => a.mm(b), DTypeError, 'expected self and mat2 to have the same dtype');
  }, need([], ['float16']));

  // TP-6: half-precision reductions and matmul accumulate in f32; elementwise half ops round once.
  for (const [dtype, n] of [['float16', 3000], ['bfloat16', 300]] as const) {
    const skip = need([dtype], [dtype]);
    add(`TP-6/sum-ones-${n}/${dtype}`, 'sum (accumulation)', dtype, async () => {
      // A half accumulator would stall at 2048 (f16) or 256 (bf16).
      const x = ones([n], { dtype: dtypeObject(dtype), device: env.device });
      return expectTensor(x.sum(), { value: nd([], [n]), dtype }, { label: `sum of ${n} ${dtype} ones`, cls: 'exact', device: env.device });
    }, skip);
    add(`TP-6/mean-ones-${n}/${dtype}`, 'mean (accumulation)', dtype, async () => {
      const x = ones([n], { dtype: dtypeObject(dtype), device: env.device });
      return expectTensor(x.mean(), { value: nd([], [1]), dtype }, { label: `mean of ${n} ${dtype} ones`, cls: 'exact', device: env.device });
    }, skip);
    add(`TP-6/matmul-ones-K${n}/${dtype}`, 'matmul (accumulation)', dtype, async () => {
      const a = ones([1, n], { dtype: dtypeObject(dtype), device: env.device });
      const b = ones([n, 1], { dtype: dtypeObject(dtype), device: env.device });
      return expectTensor(a.matmul(b), { value: nd([1, 1], [n]), dtype }, { label: `ones[1,${n}] @ ones[${n},1] in ${dtype}`, cls: 'exact', device: env.device });
    }, skip);
    add(`TP-6/scalar-opmath/${dtype}`, 'mul (scalar opmath)', dtype, async () => {
      // x * 0.1 keeps 0.1 in f32 (PyTorch's opmath) and rounds once; rounding 0.1 to the half
      // type first gives a different answer for these x.
      const xs: number[] = [];
      for (let k = 0; xs.length < 8 && k < 4096; k++) {
        const x = roundTo(dtype, 1 + k / 64);
        if (storeResult(dtype, x * Math.fround(0.1)) !== storeResult(dtype, x * roundTo(dtype, 0.1))) xs.push(x);
      }
      const y = toDevice(vector(xs), dtype, env.device).mul(0.1);
      return expectTensor(y, { value: vector(xs.map((x) => storeResult(dtype, x * Math.fround(0.1)))), dtype }, { label: `${dtype} * 0.1`, cls: 'exact', device: env.device });
    }, need([dtype, 'float32'], [dtype]));
    add(`TP-6/sum-dtype-float32/${dtype}`, 'sum (dtype=)', dtype, async () => {
      const x = toDevice(vector([1, 2, 3.5]), dtype, env.device);
      return expectTensor(x.sum(null, false, { dtype: dtypeObject('float32') }), { value: nd([], [6.5]), dtype: 'float32' }, { label: `sum(${dtype}, dtype=float32)`, cls: 'exact', device: env.device });
    }, need([dtype, 'float32'], [dtype]));
  }
  add('TP-6/sum-int-and-bool', 'sum (int)', 'int32', async () => {
    const b = toDevice(vector([1, 0, 1, 1]), 'bool', env.device);
    await expectTensor(b.sum(), { value: nd([], [3]), dtype: 'int32' }, { label: 'sum(bool) is int32', cls: 'exact', device: env.device });
    const i = toDevice(vector([2147483647, 1]), 'int32', env.device);
    return expectTensor(i.sum(), { value: nd([], [-2147483648]), dtype: 'int32' }, { label: 'sum(int32) wraps', cls: 'exact', device: env.device });
  }, need(['int32'], ['bool']));

  // Dtype rules that raise (the messages are PyTorch's).
  const rejects: Array<{ id: string; dtype: DTypeName; fn: (x: Tensor) => unknown; fragment: string }> = [
    { id: 'mean-int32', dtype: 'int32', fn: (x) => x.mean(), fragment: 'mean(): could not infer output dtype' },
    { id: 'var-int32', dtype: 'int32', fn: (x) => x.var(), fragment: 'var(): input dtype should be a floating point dtype' },
    { id: 'softmax-int32', dtype: 'int32', fn: (x) => x.softmax(0), fragment: 'softmax(): expected a floating point tensor' },
    { id: 'neg-bool', dtype: 'bool', fn: (x) => x.neg(), fragment: 'Negation, the `-` operator, on a bool tensor is not supported' },
    { id: 'sub-bool', dtype: 'bool', fn: (x) => x.sub(x), fragment: 'Subtraction, the `-` operator, with two bool tensors is not supported' },
    { id: 'where-float-condition', dtype: 'float32', fn: (x) => where(x, x, x), fragment: 'where expected condition to be a boolean tensor' },
    { id: 'requiresGrad-int32', dtype: 'int32', fn: (x) => x.requiresGrad_(), fragment: 'only Tensors of floating point dtype can require gradients' },
    { id: 'matmul-bool', dtype: 'bool', fn: (x) => x.reshape([1, 2]).matmul(x.reshape([2, 1])), fragment: 'not implemented for bool' },
  ];
  for (const r of rejects) {
    add(`rules/${r.id}`, 'dtype rules', r.dtype, () => {
      const x = toDevice(vector([1, 0]), r.dtype, env.device);
      expectThrows(r.id, () => r.fn(x), DTypeError, r.fragment);
    }, need([], [r.dtype]));
  }

  // Promotion of int/bool inputs to float ops (the 'float' dtype rule): exp(int32) is float32.
  for (const [op, f] of [['exp', Math.exp], ['sqrt', Math.sqrt], ['sigmoid', (v: number) => 1 / (1 + Math.exp(-v))]] as const) {
    for (const from of ['int32', 'bool'] as const) {
      add(`float-rule/${op}/${from}`, `${op} (int → float)`, from, async () => {
        const values = from === 'bool' ? [0, 1, 1] : [0, 3, 10];
        const x = toDevice(vector(values), from, env.device);
        const y = op === 'exp' ? x.exp() : op === 'sqrt' ? x.sqrt() : x.sigmoid();
        return expectTensor(y, { value: vector(values.map((v) => Math.fround(f(v)))), dtype: 'float32' }, { label: `${op}(${from})`, cls: 'approx', device: env.device });
      }, need(['float32'], [from]));
    }
  }

  // RND-1..7: rounding into f16/bf16 by the backend's cast kernel.
  const rnd: Array<{ id: string; from: DTypeName; to: DTypeName; inputs: number[]; want: number[] }> = [
    { id: 'RND-1/f16-max-and-overflow', from: 'float32', to: 'float16', inputs: [65504, 65519.99, 65520, -65520, 1e5], want: [65504, 65504, Infinity, -Infinity, Infinity] },
    { id: 'RND-2/f16-subnormals', from: 'float32', to: 'float16', inputs: [2 ** -24, 2 ** -25, 1.5 * 2 ** -25, -0, 3 * 2 ** -25, 2 ** -26], want: [2 ** -24, 0, 2 ** -24, -0, 2 * 2 ** -24, 0] },
    { id: 'RND-3/f16-ties-to-even', from: 'float32', to: 'float16', inputs: [2049, 2051, 1 + 2 ** -11, 1 + 3 * 2 ** -11], want: [2048, 2052, 1, 1.001953125] },
    { id: 'RND-4/bf16-ties-to-even', from: 'float32', to: 'bfloat16', inputs: [1 + 2 ** -8, 1 + 3 * 2 ** -8, -0, 1e-40], want: [1, 1.015625, -0, 2 ** -133] },
    { id: 'RND-4/bf16-overflow', from: 'float32', to: 'bfloat16', inputs: [3.4028234663852886e38, f32(0x7f7f8000), f32(0x7f7f7fff), Infinity, -Infinity], want: [Infinity, Infinity, bfloat16BitsToNumber(0x7f7f), Infinity, -Infinity] },
    { id: 'RND-5/nan', from: 'float32', to: 'float16', inputs: [NaN, -NaN], want: [NaN, NaN] },
    { id: 'RND-5/nan-bf16', from: 'float32', to: 'bfloat16', inputs: [NaN], want: [NaN] },
    { id: 'RND-7/f64-rounds-twice', from: 'float64', to: 'float16', inputs: [1 + 2 ** -11 + 2 ** -40], want: [1] },
    { id: 'RND-7/f64-to-bf16', from: 'float64', to: 'bfloat16', inputs: [1 + 2 ** -8 + 2 ** -40], want: [1] },
  ];
  for (const r of rnd) {
    add(r.id, `to(${r.to})`, r.from, async () => {
      const y = toDevice(vector(r.inputs), r.from, env.device).to(dtypeObject(r.to));
      return expectTensor(y, { value: vector(r.want), dtype: r.to }, { label: `${r.id}: ${r.from} → ${r.to}`, cls: 'exact', device: env.device });
    }, need([], [r.from, r.to]));
  }
  for (const [half, decode] of [['float16', float16BitsToNumber], ['bfloat16', bfloat16BitsToNumber]] as const) {
    for (const to of ['float32', 'float64'] as const) {
      add(`RND-6/every-${half}-to-${to}`, `to(${to})`, half, async () => {
        // All 65536 bit patterns (NaN patterns arrive as NaN): widening is exact.
        const values = Array.from({ length: 65536 }, (_, h) => decode(h));
        const y = tensor(values, { dtype: dtypeObject(half), device: env.device }).to(dtypeObject(to));
        return expectTensor(y, { value: vector(values), dtype: to }, { label: `every ${half} value → ${to}`, cls: 'exact', device: env.device });
      }, need([], [half, to]));
    }
    add(`RND-1/random-f32-to-${half}`, `to(${half})`, 'float32', async () => {
      // 20,000 random finite f32 bit patterns of every magnitude.
      const rng = new Rng(`RND/random/${half}`);
      const bits = new Uint32Array(20000);
      for (let i = 0; i < bits.length; i++) bits[i] = (rng.int(0, 2 ** 16) * 2 ** 16 + rng.int(0, 2 ** 16)) >>> 0;
      const values = Array.from(new Float32Array(bits.buffer)).filter(Number.isFinite);
      const y = tensor(Float32Array.from(values), { device: env.device }).to(dtypeObject(half));
      return expectTensor(y, { value: vector(values.map((v) => roundTo(half, v))), dtype: half }, { label: `random f32 → ${half}`, cls: 'exact', device: env.device });
    }, need([], ['float32', half]));
    add(`RND-7/random-f64-to-${half}`, `to(${half})`, 'float64', async () => {
      const rng = new Rng(`RND/random64/${half}`);
      const values = Array.from({ length: 5000 }, () => (rng.next() - 0.5) * 2 ** rng.int(-30, 20));
      const y = tensor(Float64Array.from(values), { device: env.device }).to(dtypeObject(half));
      return expectTensor(y, { value: vector(values.map((v) => roundTo(half, v))), dtype: half }, { label: `random f64 → ${half} (through f32)`, cls: 'exact', device: env.device });
    }, need([], ['float64', half]));
  }
  add('RND-1/random-f64-to-float32', 'to(float32)', 'float64', async () => {
    const rng = new Rng('RND/random64/f32');
    const values = Array.from({ length: 5000 }, () => (rng.next() - 0.5) * 2 ** rng.int(-140, 120));
    const y = tensor(Float64Array.from(values), { device: env.device }).to(dtypeObject('float32'));
    return expectTensor(y, { value: vector(values.map(Math.fround)), dtype: 'float32' }, { label: 'random f64 → f32', cls: 'exact', device: env.device });
  }, need([], ['float64', 'float32']));

  return cases;
}

function f32(bits: number): number {
  return new Float32Array(new Uint32Array([bits]).buffer)[0]!;
}
