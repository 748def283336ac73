// Elementwise fusion in the cpu backend's prepared programs (src/wasm/fusion.ts, fused_task in
// wasm/kernels.c): consecutive bound elementwise calls over one element count run as one task, tile
// by tile. Checked here: chains with broadcasts (scalars and rows), casts, compares and where equal
// the calls made one by one, bit for bit; a seeded fuzz of random chains; results that
// PrepareOptions.deadAfter calls dead are not written (nor computed when nothing reads them) while
// every other result is; calls whose accesses would see the tile order are not fused; compiled
// MLP+SGD and small attention steps equal eager for many steps; explain() counts the fused chains.
import { compile, manualSeed, noGrad, randn, tensor, type PreparedCall, type PrepareOptions, type Tensor, type TensorRef } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend, type CpuBackend } from '../src/backend.js';
import '../src/index.js';
import { CpuPreparedProgram } from '../src/prepared.js';
import { CpuStorage } from '../src/storage.js';
import { strides } from './helpers.js';
import { TILE } from '../src/wasm/fusion.js';

type Ref = TensorRef<CpuStorage>;
type DType = 'float32' | 'float16' | 'bfloat16' | 'bool' | 'int32';

/** Backend.prepare, with core's options. */
function prepare(b: CpuBackend, calls: readonly PreparedCall[], options?: PrepareOptions<CpuStorage>): CpuPreparedProgram {
  return b.prepare!(calls, options) as CpuPreparedProgram;
}

const call = (run: () => void): PreparedCall => ({ run, varies: false });

/** A seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Host values for a storage of `dtype`: specials included for the floating types. */
function values(dtype: DType, n: number, random: () => number): Float32Array | Uint16Array | Uint8Array | Int32Array {
  if (dtype === 'bool') return Uint8Array.from({ length: n }, () => (random() < 0.5 ? 1 : 0));
  if (dtype === 'int32') return Int32Array.from({ length: n }, () => Math.floor(random() * 7) - 3);
  const specials = [0, -0, Infinity, -Infinity, NaN, 1e-40, 65504, 7e4, 1 / 3];
  const f = Float32Array.from({ length: n }, () => (random() < 0.05 ? specials[Math.floor(random() * specials.length)]! : (random() - 0.5) * 8));
  if (dtype === 'float32') return f;
  // 16-bit patterns: any pattern is a value (NaNs included).
  return Uint16Array.from({ length: n }, (_, i) => (random() < 0.03 ? Math.floor(random() * 65536) : dtype === 'bfloat16' ? new Uint32Array(f.buffer)[i]! >>> 16 : Math.floor(random() * 0x7c00) | (random() < 0.5 ? 0x8000 : 0)));
}

/** Bits of a storage's contents, any dtype. */
function bits(b: CpuBackend, s: CpuStorage): number[] {
  const data = b.readSync!(s);
  return data instanceof Float32Array ? Array.from(new Uint32Array(data.buffer, data.byteOffset, data.length)) : Array.from(data as ArrayLike<number>);
}

/**
 * A program twice over: the same calls on two sets of storages with the same contents, one made
 * call by call (eager), one prepared. `build` gets an allocator and returns the calls.
 */
function twin(b: CpuBackend, seed: number, build: (alloc: (dtype: DType, shape: readonly number[], fill?: number) => Ref) => (() => void)[]) {
  const sets = [0, 1].map(() => {
    const random = rng(seed);
    const storages: CpuStorage[] = [];
    const alloc = (dtype: DType, shape: readonly number[], fill?: number): Ref => {
      const n = shape.reduce((p, d) => p * d, 1);
      const storage = b.alloc(0, dtype, n);
      const data = values(dtype, n, random);
      if (fill !== undefined) data.fill(fill);
      b.write(storage, data, 0);
      storages.push(storage);
      return { storage, dtype, shape, strides: strides(shape), offset: 0 };
    };
    return { calls: build(alloc), storages };
  });
  return { eager: sets[0]!, prepared: sets[1]! };
}

/** Runs `eager` call by call and `prepared` as a prepared program `runs` times; returns the program. */
function runBoth(b: CpuBackend, t: ReturnType<typeof twin>, options?: PrepareOptions<CpuStorage>, runs = 2): CpuPreparedProgram {
  const program = prepare(b, t.prepared.calls.map(call), options);
  for (let r = 0; r < runs; r++) {
    t.eager.calls.forEach((c) => c());
    expect(program.run()).toBe(true);
  }
  return program;
}

const scalar = (r: Ref, shape: readonly number[]): Ref => ({ ...r, shape, strides: shape.map(() => 0) });
const row = (r: Ref, shape: readonly [number, number]): Ref => ({ ...r, shape, strides: [0, 1] });

describe('cpu fused elementwise chains', () => {
  for (const [name, options] of [['1 thread', { threads: 1 }], ['2 threads', { threads: 2 }], ['a plain memory', { sharedMemory: false }]] as const) {
    it(`broadcast scalars and rows, casts, compares and where give the calls' bits (${name})`, () => {
      const b = createCpuBackend({ native: false, ...options });
      for (const [m, n] of [[3, 100], [37, 128], [90, 100], [300, 256]] as const) {
        const shape = [m, n];
        const t = twin(b, m * n, (alloc) => {
          const x = alloc('float32', shape);
          const y = alloc('float32', shape);
          const s = alloc('float32', [1]);
          const bias = alloc('float32', [n]);
          const a = alloc('float32', shape, 0);
          const c = alloc('float32', shape, 0);
          const mask = alloc('bool', shape, 0);
          const w = alloc('float32', shape, 0);
          const h = alloc('bfloat16', shape, 0);
          const hf = alloc('float16', shape, 0);
          const back = alloc('float32', shape, 0);
          const hb = alloc('bfloat16', shape, 0);
          const out = alloc('float32', shape, 0);
          const k = b.kernels;
          return [
            () => k.binary('mul', x, scalar(s, shape), a), // a = x · s
            () => k.binary('add', a, row(bias, [m, n]), c), // c = a + bias (rows)
            () => k.compare('gt', c, y, mask),
            () => k.where(mask, c, scalar(s, shape), w),
            () => k.cast(w, h),
            () => k.cast(w, hf),
            () => k.binary('mul', h, h, hb), // bf16 arithmetic
            () => k.cast(hb, back),
            () => k.unary('relu', back, out),
            () => k.binary('sub', out, a, out), // in place, the same pattern
            () => k.unary('sqrt', out, out),
          ];
        });
        const program = runBoth(b, t);
        expect(program.description).toBe(`cpu: 11 calls, 11 bound to wasm tasks in 1 run (1 fused chain), 0 made as calls`);
        t.eager.storages.forEach((s, i) => expect(bits(b, t.prepared.storages[i]!), `storage ${i} of ${m}×${n}`).toEqual(bits(b, s)));
        program.release();
      }
    });
  }

  it('half arithmetic, int32 compares, bool casts and copies fuse too', () => {
    const b = createCpuBackend({ native: false });
    const n = 3 * TILE + 5;
    const t = twin(b, 7, (alloc) => {
      const p = alloc('float16', [n]);
      const q = alloc('float16', [n]);
      const i = alloc('int32', [n]);
      const j = alloc('int32', [n]);
      const r = alloc('float16', [n], 0);
      const lt = alloc('bool', [n], 0);
      const f = alloc('float32', [n], 0);
      const g = alloc('float16', [n], 0);
      const copy = alloc('float16', [n], 0);
      const k = b.kernels;
      return [
        () => k.binary('div', p, q, r),
        () => k.unary('abs', r, r),
        () => k.compare('le', i, j, lt),
        () => k.cast(lt, f),
        () => k.where(lt, r, q, g),
        () => k.copy(g, copy),
      ];
    });
    const program = runBoth(b, t);
    expect(program.description).toContain('in 1 run (1 fused chain)');
    t.eager.storages.forEach((s, i) => expect(bits(b, t.prepared.storages[i]!), `storage ${i}`).toEqual(bits(b, s)));
  });

  it('a seeded fuzz of random chains, with random dead intermediates, equals the calls made one by one', () => {
    const random = rng(2024);
    let fusedTrials = 0;
    for (let trial = 0; trial < 60; trial++) {
      const threads = trial % 3 === 0 ? 2 : 1;
      const b = createCpuBackend({ native: false, threads });
      const sizes = [[1, 1], [1, 7], [3, 64], [5, 200], [1, 3000], [3, 5000], [4, TILE], [40, 1024]] as const;
      const [m, n] = sizes[Math.floor(random() * sizes.length)]!;
      const shape = [m, n];
      const seed = Math.floor(random() * 1e9);
      const steps = 2 + Math.floor(random() * 10);
      const choices = Array.from({ length: 64 }, () => random());
      /** Storages (by allocation order) the prepared set may leave unwritten, and the call they die after. */
      const deadness: { after: number; storage: number }[] = [];
      const t = twin(b, seed, (alloc) => {
        let c = 0;
        const pick = () => choices[c++ % choices.length]!;
        /** Values the chain can read: their storage's allocation order, and the last call that reads or writes it. */
        const pool: { ref: Ref; id: number; last: number }[] = [];
        let nextId = 0;
        const make = (dtype: DType, s: readonly number[], fill?: number) => ({ ref: alloc(dtype, s, fill), id: nextId++ });
        for (const dtype of ['float32', 'float32', 'bfloat16', 'float16'] as const) pool.push({ ...make(dtype, shape), last: -1 });
        const inputs = pool.length;
        const scalarRef = make('float32', [1]).ref;
        const rowRef = make('float32', [n]).ref;
        const calls: (() => void)[] = [];
        const of = (dtype: string) => pool.filter((p) => p.ref.dtype === dtype);
        /** An operand of the call at index `at`. */
        const operand = (dtype: DType, at: number): Ref => {
          const u = pick();
          if (dtype === 'float32' && u < 0.05) return scalar(scalarRef, shape);
          if (u < 0.1) {
            // Element 0 of a value of the chain, broadcast: a later write over it must end the chain.
            const list = of(dtype);
            const p = list[Math.floor(pick() * list.length)]!;
            p.last = at;
            return scalar(p.ref, shape);
          }
          if (dtype === 'float32' && u < 0.2 && n >= 64 && m > 1) return row(rowRef, [m, n]);
          const list = of(dtype);
          const p = list[Math.floor(pick() * list.length)]!;
          p.last = at;
          return p.ref;
        };
        const result = (dtype: DType, at: number) => {
          const r = { ...make(dtype, shape, 0), last: at };
          pool.push(r);
          return r.ref;
        };
        for (let k = 0; k < steps; k++) {
          const kind = pick();
          const dtypes = ['float32', 'bfloat16', 'float16'];
          const dtype = dtypes[Math.floor(pick() * dtypes.length)] as DType;
          const kb = b.kernels;
          const at = calls.length;
          if (kind < 0.3) {
            const op = (['add', 'sub', 'mul', 'div'] as const)[Math.floor(pick() * 4)]!;
            const [x, y] = [operand(dtype, at), operand(dtype, at)];
            // In place now and then, over a value that may have been read broadcast before.
            const out = pick() < 0.25 && x.strides[0] !== 0 && pool.indexOf(pool.find((p) => p.ref === x)!) >= 4 ? x : result(dtype, at);
            calls.push(() => kb.binary(op, x, y, out));
          } else if (kind < 0.5) {
            const op = (['neg', 'abs', 'sqrt', 'relu'] as const)[Math.floor(pick() * 4)]!;
            const x = operand(dtype, at);
            // In place now and then (x itself, when x is a whole storage of this shape).
            const out = pick() < 0.25 && x.strides[1] === 1 && x.shape.length === 2 && x.strides[0] !== 0 ? x : result(dtype, at);
            calls.push(() => kb.unary(op, x, out));
          } else if (kind < 0.75) {
            const op = (['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const)[Math.floor(pick() * 6)]!;
            const [x, y] = [operand(dtype, at), operand(dtype, at)];
            const mask = make('bool', shape, 0);
            pool.push({ ...mask, last: at + 1 }); // read by the where next
            calls.push(() => kb.compare(op, x, y, mask.ref));
            const [p, q] = [operand(dtype, at + 1), operand(dtype, at + 1)];
            const out = result(dtype, at + 1);
            calls.push(() => kb.where(mask.ref, p, q, out));
          } else {
            const x = operand(dtype, at);
            const to: DType = dtype === 'float32' ? (pick() < 0.5 ? 'bfloat16' : 'float16') : 'float32';
            const out = result(to, at);
            calls.push(() => kb.cast(x, out));
          }
        }
        // Some results (never an input) are dead after the last call that reads or writes them.
        for (const p of pool.slice(inputs)) if (pick() < 0.5) deadness.push({ after: p.last, storage: p.id });
        return calls;
      });
      const callCount = t.prepared.calls.length;
      const deadAfter: CpuStorage[][] = Array.from({ length: callCount }, () => []);
      const deadIds = new Set<number>();
      for (const d of deadness) {
        deadAfter[d.after]!.push(t.prepared.storages[d.storage]!);
        deadIds.add(d.storage);
      }
      const program = runBoth(b, t, { deadAfter }, 1);
      if (program.description.includes('fused chain')) fusedTrials++;
      t.eager.storages.forEach((s, i) => {
        if (!deadIds.has(i)) expect(bits(b, t.prepared.storages[i]!), `trial ${trial}, storage ${i}`).toEqual(bits(b, s));
      });
      program.release();
    }
    expect(fusedTrials).toBeGreaterThan(40);
  });
});

describe('cpu fused chains: what is written', () => {
  const n = 3 * TILE + 17;
  /** a = x·y, b = a + x, c = relu(b), d = −x (read by nobody): one chain. a, b and d start as 7s. */
  function chain(b: CpuBackend) {
    const random = rng(5);
    const put = (dtype: DType, fill?: number): Ref => {
      const storage = b.alloc(0, dtype, n);
      const data = values(dtype, n, random);
      if (fill !== undefined) data.fill(fill);
      b.write(storage, data, 0);
      return { storage, dtype, shape: [n], strides: [1], offset: 0 };
    };
    const [x, y, a, s, c, d] = [put('float32'), put('float32'), put('float32', 7), put('float32', 7), put('float32', 0), put('float32', 7)];
    const k = b.kernels;
    const calls = [() => k.binary('mul', x, y, a), () => k.binary('add', a, x, s), () => k.unary('relu', s, c), () => k.unary('neg', x, d)];
    return { x, y, a, s, c, d, calls };
  }

  it('results deadAfter calls dead stay in the tile (unwritten) or are not computed; the others are written as the calls write them', () => {
    const b = createCpuBackend({ native: false });
    const eager = chain(b);
    eager.calls.forEach((f) => f());
    const all = chain(b);
    const kept = prepare(b, all.calls.map(call));
    kept.run();
    for (const key of ['a', 's', 'c', 'd'] as const) expect(bits(b, all[key].storage), key).toEqual(bits(b, eager[key].storage));
    expect(kept.description).toBe('cpu: 4 calls, 4 bound to wasm tasks in 1 run (1 fused chain), 0 made as calls');

    const some = chain(b);
    const program = prepare(b, some.calls.map(call), { deadAfter: [[], [some.a.storage], [some.s.storage], [some.d.storage]] });
    program.run();
    expect(bits(b, some.c.storage)).toEqual(bits(b, eager.c.storage));
    const sevens = new Array<number>(n).fill(new Uint32Array(Float32Array.of(7).buffer)[0]!);
    for (const key of ['a', 's', 'd'] as const) expect(bits(b, some[key].storage), key).toEqual(sevens);
  });

  it('a result dead only after a call outside the chain is written: that call reads it', () => {
    const b = createCpuBackend({ native: false });
    const make = () => {
      const c = chain(b);
      const e: Ref = { ...c.c, storage: b.alloc(0, 'float32', n) };
      return { ...c, e, calls: [c.calls[0]!, c.calls[1]!, () => b.kernels.unary('exp', c.a, e)] };
    };
    const eager = make();
    eager.calls.forEach((f) => f());
    const p = make();
    const program = prepare(b, p.calls.map(call), { deadAfter: [[], [], [p.a.storage]] });
    expect(program.description).toBe('cpu: 3 calls, 2 bound to wasm tasks in 1 run (1 fused chain), 1 made as calls');
    program.run();
    expect(bits(b, p.e.storage)).toEqual(bits(b, eager.e.storage));
    expect(bits(b, p.a.storage)).toEqual(bits(b, eager.a.storage));
  });

  it('calls whose accesses would see the tile order are not fused: a later write over an earlier broadcast read, a shifted read of an earlier write', () => {
    const b = createCpuBackend({ native: false });
    const make = () => {
      const c = chain(b);
      const k = b.kernels;
      const s0 = scalar(c.y, [n]);
      const shifted: Ref = { ...c.a, shape: [n - 1], offset: 1 };
      const head: Ref = { ...c.s, shape: [n - 1] };
      return {
        ...c,
        calls: [
          () => k.binary('add', c.x, s0, c.a), // reads y[0] for every element
          () => k.unary('neg', c.x, c.y), // then writes y
          () => k.unary('abs', shifted, head), // reads a one element on
        ],
      };
    };
    const eager = make();
    eager.calls.forEach((f) => f());
    const p = make();
    const program = prepare(b, p.calls.map(call));
    expect(program.description).toBe('cpu: 3 calls, 3 bound to wasm tasks, 0 made as calls');
    program.run();
    for (const key of ['a', 'y', 's'] as const) expect(bits(b, p[key].storage), key).toEqual(bits(b, eager[key].storage));
  });
});

describe('cpu fused chains in compiled steps', () => {
  const bitsOf = async (t: Tensor) => Array.from(new Uint32Array(new Float32Array(await t.data()).buffer));

  async function compare(make: () => { params: Tensor[]; step: (x: Tensor) => Tensor }, inputs: Tensor[]) {
    const runOnce = async (compiled: boolean) => {
      const m = make();
      const fn = compiled ? compile(m.step) : undefined;
      const losses: number[][] = [];
      for (let i = 0; i < inputs.length; i++) losses.push(await bitsOf((fn ?? m.step)(inputs[i]!)));
      return { losses, params: await Promise.all(m.params.map(bitsOf)), explain: fn?.explain() };
    };
    const eager = await runOnce(false);
    const comp = await runOnce(true);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    return comp.explain!;
  }

  it('an MLP with SGD and momentum gives eager\'s losses and parameters, bit for bit, for 25 steps; explain() counts the fused chains', async () => {
    manualSeed(11);
    const inputs = Array.from({ length: 25 }, () => randn([8, 12]));
    const target = randn([8, 3]);
    const make = () => {
      manualSeed(4);
      const w1 = randn([32, 12]).mul(0.3).detach().requiresGrad_();
      const b1 = randn([32]).mul(0.1).detach().requiresGrad_();
      const w2 = randn([3, 32]).mul(0.3).detach().requiresGrad_();
      const params = [w1, b1, w2];
      const buffers = params.map((p) => p.mul(0).detach());
      const step = (x: Tensor) => {
        for (const p of params) p.grad = null;
        const h = x.matmul(w1.t()).add(b1).relu();
        const loss = h.matmul(w2.t()).sub(target).square().mean();
        loss.backward();
        noGrad(() => params.forEach((p, i) => {
          buffers[i]!.mul_(0.9).add_(p.grad!);
          p.sub_(buffers[i]!.mul(0.05));
        }));
        return loss;
      };
      return { params, step };
    };
    const info = await compare(make, inputs);
    expect(info.programs[0]!.replay).toMatch(/^prepared \(cpu: \d+ calls, \d+ bound to wasm tasks in \d+ runs? \([1-9]\d* fused chains?\), \d+ made as calls\)$/);
  });

  it('a small attention block (causal mask, softmax, layer norm by hand, ReLU MLP) gives eager\'s bits for 15 steps', async () => {
    manualSeed(12);
    const T = 8;
    const D = 16;
    const inputs = Array.from({ length: 15 }, () => randn([T, D]));
    const target = randn([T, D]);
    const causal = tensor(Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => (j <= i ? 1 : 0)))).gt(0);
    const make = () => {
      manualSeed(5);
      const w = () => randn([D, D]).mul(0.25).detach().requiresGrad_();
      const [wq, wk, wv, w1, w2] = [w(), w(), w(), w(), w()];
      const gain = randn([D]).mul(0.1).add(1).detach().requiresGrad_();
      const params = [wq, wk, wv, w1, w2, gain];
      const step = (x: Tensor) => {
        for (const p of params) p.grad = null;
        const att = x.matmul(wq).matmul(x.matmul(wk).t()).mul(0.25).maskedFill(causal.logicalNot(), -1e9).softmax(-1);
        const r = x.add(att.matmul(x.matmul(wv)));
        const d = r.sub(r.mean(-1, true));
        const norm = d.div(d.square().mean(-1, true).add(1e-5).sqrt()).mul(gain);
        const out = r.add(norm.matmul(w1).relu().matmul(w2));
        const loss = out.sub(target).square().mean();
        loss.backward();
        noGrad(() => params.forEach((p) => p.sub_(p.grad!.mul(0.02))));
        return loss;
      };
      return { params, step };
    };
    const info = await compare(make, inputs);
    expect(info.programs[0]!.replay).toMatch(/\([1-9]\d* fused chains\)/);
  });
});
