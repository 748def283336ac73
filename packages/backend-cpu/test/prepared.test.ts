// Backend.prepare on the cpu backend (bound calls, src/prepared.ts): a call that ends in one wasm
// task is bound to an argument block of the program's own and handed straight to the thread pool at
// each run; every other call is made as a call. Checked here: results equal the kernels' own, bit
// for bit, for bound and made calls and for compiled training steps; prepare runs nothing; varying
// calls bind again per run (another storage, another spec, a storage outside the heap); freed
// storages, release and heap growth; errors and the backend without wasm kernels.
import { compile, getBackend, manualSeed, noGrad, randn, tensor, type PreparedCall, type Tensor, type TensorRef } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { createCpuBackend, type CpuBackend } from '../src/backend.js';
import '../src/index.js';
import { CpuStorage } from '../src/storage.js';
import { strides } from './helpers.js';

type Ref = TensorRef<CpuStorage>;

/** A float32 (or int32) ref over a new storage of `b` holding `values`. */
function put(b: CpuBackend, values: readonly number[], shape: readonly number[] = [values.length], dtype: 'float32' | 'int32' = 'float32'): Ref {
  const storage = b.alloc(0, dtype, values.length);
  b.write(storage, dtype === 'float32' ? Float32Array.from(values) : Int32Array.from(values), 0);
  return { storage, dtype, shape, strides: strides(shape), offset: 0 };
}

const seq = (n: number, scale = 0.37, shift = 0): number[] => Array.from({ length: n }, (_, i) => Math.sin(i * scale + shift) * 2);
const bitsOf = (b: CpuBackend, r: Ref): number[] => Array.from(new Uint32Array(new Float32Array(b.readSync!(r.storage) as Float32Array).buffer));
const call = (run: () => void, varies = false): PreparedCall => ({ run, varies });

/** A program over fresh storages: a bound add, a made erf (TypeScript), a bound matmul, a bound sum, a made multi-axis sum (heap temporaries). */
function program(b: CpuBackend) {
  const x = put(b, seq(24), [1, 4, 6]);
  const y = put(b, seq(24, 0.11, 1), [1, 4, 6]);
  const w = put(b, seq(18, 0.5), [1, 6, 3]);
  const s = put(b, new Array<number>(24).fill(0), [1, 4, 6]);
  const e = put(b, new Array<number>(24).fill(0), [1, 4, 6]);
  const m = put(b, new Array<number>(12).fill(0), [1, 4, 3]);
  const r = put(b, new Array<number>(3).fill(0), [1, 1, 3]);
  const z = put(b, new Array<number>(24).fill(0), [2, 3, 4]);
  const zs = put(b, new Array<number>(3).fill(0), [1, 3, 1]);
  const z3: Ref = { ...z, shape: [2, 3, 4], strides: [12, 4, 1] };
  const calls = [
    call(() => b.kernels.binary('add', x, y, s)),
    call(() => b.kernels.unary('erf', s, e)),
    call(() => b.kernels.matmul(e, w, m, 'float32')),
    call(() => b.kernels.reduce('sum', m, [1], r, 'float32')),
    call(() => b.kernels.reduce('sum', z3, [0, 2], zs, 'float32')),
  ];
  const outs = [s, e, m, r, zs];
  return { x, y, z, calls, outs, inputs: [x, y, w, z] };
}

describe('cpu prepare: bound calls', () => {
  it('binds wasm tasks, makes the other calls, and gives the kernels\' bits run after run', () => {
    const b = createCpuBackend({ native: false });
    const eager = program(b);
    eager.calls.forEach((c) => c.run());
    const want = eager.outs.map((o) => bitsOf(b, o));

    const p = program(b);
    const prepared = b.prepare!(p.calls);
    expect(prepared.description).toBe('cpu: 5 calls, 3 bound to wasm tasks, 2 made as calls');
    for (let i = 0; i < 3; i++) {
      expect(prepared.run()).toBe(true);
      expect(p.outs.map((o) => bitsOf(b, o))).toEqual(want);
    }
    // New input values (same storages) reach the bound calls.
    b.write(p.x.storage, Float32Array.from(seq(24, 0.9)), 0);
    b.write(eager.x.storage, Float32Array.from(seq(24, 0.9)), 0);
    eager.calls.forEach((c) => c.run());
    prepared.run();
    expect(p.outs.map((o) => bitsOf(b, o))).toEqual(eager.outs.map((o) => bitsOf(b, o)));
    prepared.release();
  });

  it('runs nothing at prepare: outputs keep their contents until the first run', () => {
    const b = createCpuBackend({ native: false });
    const p = program(b);
    const before = p.outs.map((o) => bitsOf(b, o));
    const prepared = b.prepare!(p.calls);
    expect(p.outs.map((o) => bitsOf(b, o))).toEqual(before);
    // A host array is readable again once prepare is done (the bind gate is closed only while binding).
    expect(p.x.storage.data.length).toBe(24);
    prepared.run();
    expect(bitsOf(b, p.outs[0]!)).not.toEqual(before[0]);
    prepared.release();
  });

  it('binds a varying call again at each run: another storage, then one outside the heap (made as a call that run)', () => {
    const b = createCpuBackend({ native: false });
    const a1 = put(b, seq(16));
    const a2 = put(b, seq(16, 0.2, 3));
    const host: Ref = { ...a1, storage: new CpuStorage('float32', 16) };
    (host.storage.data as Float32Array).set(seq(16, 0.7, 1));
    const out = put(b, new Array<number>(16).fill(0));
    const scale = put(b, new Array<number>(16).fill(1.5));
    let input = a1;
    const prepared = b.prepare!([call(() => b.kernels.binary('mul', input, scale, out), true)]);
    expect(prepared.description).toBe('cpu: 1 calls, 1 bound to wasm tasks, 0 made as calls');
    for (const next of [a1, a2, host, a2]) {
      input = next;
      prepared.run();
      const want = Float32Array.from(next.storage.data as Float32Array, (v) => Math.fround(v * 1.5));
      expect(b.readSync!(out.storage)).toEqual(want);
    }
    prepared.release();
  });

  it('a call split into tasks over the worker threads reads its own block: a bound mul of 2^17 elements', () => {
    const b = createCpuBackend({ native: false, threads: 2 });
    const n = 1 << 17;
    const x = put(b, seq(n, 0.001));
    const y = put(b, seq(n, 0.002, 1));
    const out = put(b, new Array<number>(n).fill(0));
    const want = put(b, new Array<number>(n).fill(0));
    const negated = put(b, new Array<number>(n).fill(0));
    b.kernels.binary('mul', x, y, want);
    const prepared = b.prepare!([call(() => b.kernels.binary('mul', x, y, out)), call(() => b.kernels.unary('neg', out, negated))]);
    expect(prepared.description).toBe('cpu: 2 calls, 2 bound to wasm tasks in 1 run (1 fused chain), 0 made as calls');
    prepared.run();
    expect(bitsOf(b, out)).toEqual(bitsOf(b, want));
    expect(bitsOf(b, negated)).toEqual(bitsOf(b, want).map((u) => (u ^ 0x80000000) >>> 0));
    expect(b.wasm!.threads).toBe(2);
    prepared.release();
  });

  it('an empty call does nothing; a varying one that stops being empty is bound at that run', () => {
    const b = createCpuBackend({ native: false });
    const empty: Ref = { ...put(b, []), shape: [0], strides: [1] };
    const x = put(b, seq(5));
    const out = put(b, new Array<number>(5).fill(0));
    let input: [Ref, Ref] = [empty, empty];
    const prepared = b.prepare!([call(() => b.kernels.unary('abs', empty, empty)), call(() => b.kernels.unary('abs', input[0], input[1]), true)]);
    expect(prepared.description).toBe('cpu: 2 calls, 0 bound to wasm tasks, 0 made as calls');
    prepared.run();
    input = [x, out];
    prepared.run();
    expect(Array.from(b.readSync!(out.storage))).toEqual(seq(5).map((v) => Math.abs(Math.fround(v))));
    prepared.release();
  });

  it('a varying Adam update takes each run\'s spec, bit for bit with the kernel', () => {
    const b = createCpuBackend({ native: false });
    const make = () => [put(b, seq(40)), put(b, seq(40, 0.3, 2)), put(b, new Array<number>(40).fill(0)), put(b, new Array<number>(40).fill(0))] as const;
    const spec = (step: number) => {
      const lr = 0.01 / step;
      return { lr, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, decoupled: true, maximize: false, step, stepSize: lr / (1 - 0.9 ** step), biasCorrection2Sqrt: Math.sqrt(1 - 0.99 ** step) };
    };
    const e = make();
    const p = make();
    let step = 1;
    const prepared = b.prepare!([call(() => b.fused!.adamw!(p[0], p[1], p[2], p[3], null, spec(step)), true)]);
    for (; step <= 5; step++) {
      b.fused!.adamw!(e[0], e[1], e[2], e[3], null, spec(step));
      prepared.run();
      expect([0, 2, 3].map((i) => bitsOf(b, p[i]!))).toEqual([0, 2, 3].map((i) => bitsOf(b, e[i]!)));
    }
    prepared.release();
  });
});

describe('cpu prepare: invalidation and fallbacks', () => {
  it('run throws once a storage a bound call uses is freed, naming it', () => {
    const b = createCpuBackend({ native: false });
    const p = program(b);
    const prepared = b.prepare!(p.calls);
    prepared.run();
    b.free(p.y.storage);
    expect(() => prepared.run()).toThrow('cpu: a prepared program uses a float32 storage of 24 elements that has been freed');
    prepared.release();
  });

  it('a varying call that now addresses a freed storage throws before any call runs', () => {
    const b = createCpuBackend({ native: false });
    const a = put(b, seq(8));
    const gone = put(b, seq(8));
    const out = put(b, new Array<number>(8).fill(0));
    const other = put(b, new Array<number>(8).fill(0));
    let input = a;
    const prepared = b.prepare!([call(() => b.kernels.unary('neg', a, other)), call(() => b.kernels.unary('relu', input, out), true)]);
    prepared.run();
    b.free(gone.storage);
    input = gone;
    b.write(a.storage, Float32Array.from([9, 9, 9, 9, 9, 9, 9, 9]), 0);
    expect(() => prepared.run()).toThrow('has been freed');
    expect(Array.from(b.readSync!(other.storage))).toEqual(seq(8).map((v) => -Math.fround(v))); // the first call did not run again
    prepared.release();
  });

  it('run after release throws; release gives the argument blocks back to the heap', () => {
    const b = createCpuBackend({ native: false });
    const p = program(b);
    const before = b.memoryStats(0).reservedBytes;
    const prepared = b.prepare!(p.calls);
    prepared.release();
    prepared.release();
    expect(() => prepared.run()).toThrow('cpu: a prepared program was run after release()');
    // The freed block is reused by the next program of the same size: the heap does not grow.
    const again = b.prepare!(p.calls);
    expect(b.memoryStats(0).reservedBytes).toBeLessThanOrEqual(before + 3 * 256 + 64);
    again.release();
  });

  it('survives the growth of a plain (unshared) wasm memory, whose buffer detaches: bound and made calls still give the kernels\' bits', () => {
    const b = createCpuBackend({ native: false, sharedMemory: false });
    expect(b.wasm!.shared).toBe(false);
    const eager = program(b);
    eager.calls.forEach((c) => c.run());
    const want = eager.outs.map((o) => bitsOf(b, o));
    const p = program(b);
    const prepared = b.prepare!(p.calls);
    prepared.run();
    const buffer = p.x.storage.data.buffer;
    const big = b.alloc(0, 'float32', 16 << 20); // 64 MiB: the memory grows
    expect(p.x.storage.data.buffer).not.toBe(buffer);
    for (const o of p.outs) b.write(o.storage, new Float32Array(o.storage.numel), 0);
    prepared.run();
    expect(p.outs.map((o) => bitsOf(b, o))).toEqual(want);
    b.free(big);
    prepared.release();
  });

  it('a call that throws at prepare makes prepare throw (core then replays call by call), and leaves host arrays readable', () => {
    const b = createCpuBackend({ native: false });
    const x = put(b, seq(6));
    const out = put(b, new Array<number>(4).fill(0));
    expect(() => b.prepare!([call(() => b.kernels.binary('add', x, x, out))])).toThrow();
    expect(x.storage.data.length).toBe(6);
  });

  it('without the wasm kernels the backend has no prepare', () => {
    expect(createCpuBackend({ wasm: false }).prepare).toBeUndefined();
  });
});

describe('cpu prepare: compiled training steps', () => {
  /** A tiny GELU-ish MLP step (erf and exp in TypeScript, the rest wasm), targets written inside the step, SGD by hand. */
  function model(seed: number) {
    manualSeed(seed);
    const w1 = randn([16, 8]).mul(0.3).detach().requiresGrad_();
    const b1 = randn([16]).mul(0.1).detach().requiresGrad_();
    const w2 = randn([4, 16]).mul(0.3).detach().requiresGrad_();
    const params = [w1, b1, w2];
    const step = (x: Tensor, lr: number) => {
      for (const p of params) p.grad = null;
      const h = x.matmul(w1.t()).add(b1);
      const act = h.mul(h.mul(0.7071).erf().add(1)).mul(0.5).add(h.neg().exp().mul(0.01));
      const y = tensor([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]);
      const loss = act.matmul(w2.t()).sub(y).square().mean();
      loss.backward();
      noGrad(() => params.forEach((p) => p.sub_(p.grad!.mul(lr))));
      return loss;
    };
    return { params, step };
  }

  it('replays with prepared bound calls and gives eager\'s loss and parameter bits for 30 steps', async () => {
    const bits = async (t: Tensor) => Array.from(new Uint32Array(new Float32Array(await t.data()).buffer));
    manualSeed(3);
    const xs = Array.from({ length: 30 }, () => randn([4, 8]));
    const runOnce = async (compiled: boolean) => {
      const m = model(1);
      const compiledStep = compiled ? compile(m.step) : undefined;
      const step = compiledStep ?? m.step;
      const losses: number[][] = [];
      for (const x of xs) losses.push(await bits(step(x, 0.05)));
      return { losses, params: await Promise.all(m.params.map(bits)), explain: () => compiledStep!.explain() };
    };
    const eager = await runOnce(false);
    const comp = await runOnce(true);
    expect(comp.losses).toEqual(eager.losses);
    expect(comp.params).toEqual(eager.params);
    const info = comp.explain();
    expect(info.replays).toBe(28);
    expect(info.programs[0]!.replay).toMatch(/^prepared \(cpu: \d+ calls, \d+ bound to wasm tasks(?: in \d+ runs? \(\d+ fused chains?\))?, [1-9]\d* made as calls\)$/);
    expect(getBackend('cpu').prepare).toBeDefined();
  });
});
