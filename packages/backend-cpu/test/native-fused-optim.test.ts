// The Adadelta and RMSprop fused kernels: the TypeScript ones against PyTorch's values (float32 and
// float64 tensors, strided views too), the native and the wasm float32 ones bit for bit with them
// over every option combination and several steps of state (one thread's share and several
// threads' chunks, a tail shorter than a vector), and what each refuses or leaves to the other.
import type { AdadeltaSpec, DTypeName, RMSpropSpec } from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCpuBackend } from '../src/backend.js';
import { CpuFused } from '../src/kernels/index.js';
import { loadNative, type NativePath } from '../src/native.js';
import { WasmRuntime } from '../src/wasm/runtime.js';
import { backend, type Ref, seeded } from './helpers.js';

const loaded = loadNative({ native: true, threads: 2 });
if (!('info' in loaded)) throw new Error(`the addon did not load: ${loaded.reason}`);
const native: NativePath = loaded;

/** A contiguous [n] view of `dtype` over a fresh storage holding `data` from `offset` (NaN before it). */
function vec(data: ArrayLike<number>, dtype: DTypeName = 'float32', offset = 0): Ref {
  const storage = backend.alloc(0, dtype, offset + data.length);
  storage.data.fill(NaN);
  (storage.data as Float32Array).set(Array.from(data), offset);
  return { storage, dtype, shape: [data.length], strides: [1], offset };
}

const values = (r: Ref): number[] => Array.from(r.storage.data.subarray(r.offset, r.offset + r.shape[0]!));
/** The float32 bits of a contiguous ref's elements, every NaN as the one NaN (its sign and payload are not specified). */
const bits = (r: Ref): number[] => Array.from(new Uint32Array(Float32Array.from(values(r), (x) => (Number.isNaN(x) ? NaN : x)).buffer));

/** The first index where two refs' bits differ, or -1. */
const firstDifference = (a: Ref, b: Ref): number => {
  const [x, y] = [bits(a), bits(b)];
  return x.length !== y.length ? 0 : x.findIndex((v, i) => v !== y[i]);
};

/** `n` seeded floats in [lo, hi). */
function floats(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = seeded(seed);
  return Float32Array.from({ length: n }, () => next(lo, hi));
}

// The worked example: p = [1, −2, 0.5, 3] and three gradients, as the PyTorch values below used.
const P0 = [1, -2, 0.5, 3];
const GRADS = [[0.5, -1, 2, 0.25], [0.1, 0.3, -0.7, 1.5], [-0.4, 0.2, 0.9, -2]];

const ADADELTA: AdadeltaSpec = { lr: 1, rho: 0.9, eps: 1e-6, weightDecay: 0, maximize: false };
const RMSPROP: RMSpropSpec = { lr: 0.01, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false };

/** Three steps of the TypeScript Adadelta kernel on the worked example in `dtype`, the state `strided` (every other element of its storage) if asked. */
function adadeltaExample(spec: AdadeltaSpec, dtype: DTypeName, strided = false): number[] {
  const p = vec(P0, dtype, 1);
  const state = (): Ref => (strided ? { ...vec(new Array(8).fill(0), dtype), shape: [4], strides: [2] } : vec([0, 0, 0, 0], dtype));
  const [v, u] = [state(), state()];
  for (const g of GRADS) CpuFused.adadelta(p, vec(g, dtype), v, u, spec);
  return values(p);
}

function rmspropExample(spec: RMSpropSpec, dtype: DTypeName): number[] {
  const p = vec(P0, dtype);
  const zeros = () => vec([0, 0, 0, 0], dtype);
  const [v, b, a] = [zeros(), spec.momentum > 0 ? zeros() : null, spec.centered ? zeros() : null];
  for (const g of GRADS) CpuFused.rmsprop(p, vec(g, dtype), v, b, a, spec);
  return values(p);
}

describe('the TypeScript Adadelta and RMSprop kernels', () => {
  // PyTorch 1.13, float32, foreach=False: p = torch.tensor([1., -2., .5, 3.], requires_grad=True),
  // the three gradients above, then `p` after three steps of:
  const cases: [string, () => (dtype: DTypeName) => number[], number[]][] = [
    ['Adadelta(lr=1, rho=0.9, eps=1e-6, weight_decay=0.1)', () => (d) => adadeltaExample({ ...ADADELTA, weightDecay: 0.1 }, d),
      [0.9974973201751709, -1.997231364250183, 0.496244877576828, 2.9967732429504395]],
    ['Adadelta(lr=0.5, rho=0.8, eps=1e-6, maximize=True)', () => (d) => adadeltaExample({ ...ADADELTA, lr: 0.5, rho: 0.8, maximize: true }, d),
      [1.0003880262374878, -2.0002503395080566, 0.5012874007225037, 3.0008883476257324]],
    ['RMSprop(lr=0.01)', () => (d) => rmspropExample(RMSPROP, d), [0.9423910975456238, -1.9478574991226196, 0.39377427101135254, 2.881100654602051]],
    ['RMSprop(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.9, centered=True, maximize=True)',
      () => (d) => rmspropExample({ ...RMSPROP, alpha: 0.9, weightDecay: 0.1, momentum: 0.9, centered: true, maximize: true }, d),
      [1.063893437385559, -2.0435874462127686, 0.580741822719574, 2.94403076171875]],
  ];
  for (const [name, make, want] of cases) {
    it(`${name}: three steps give PyTorch's parameter in float32 and float64 (within 2e-6 relative)`, () => {
      for (const dtype of ['float32', 'float64'] as const) {
        make()(dtype).forEach((x, i) => expect(Math.abs(x - want[i]!), `${dtype} element ${i}`).toBeLessThanOrEqual(2e-6 * Math.abs(want[i]!)));
      }
    });
  }

  it('strided state views give the contiguous result, and only the view\'s elements change', () => {
    const spec = { ...ADADELTA, weightDecay: 0.1 };
    expect(adadeltaExample(spec, 'float32', true)).toEqual(adadeltaExample(spec, 'float32'));
    const v: Ref = { ...vec(new Array(8).fill(0)), shape: [4], strides: [2] };
    CpuFused.adadelta(vec(P0), vec(GRADS[0]!), v, vec([0, 0, 0, 0]), spec);
    expect(Array.from(v.storage.data).filter((_, i) => i % 2 === 1)).toEqual([0, 0, 0, 0]);
  });

  it('refuse half types, RMSprop buffers that do not match the spec and a grad of another shape, leaving the tensors unchanged', () => {
    const half = (): Ref => ({ ...vec([0, 0, 0, 0], 'bfloat16') });
    expect(() => CpuFused.adadelta(half(), half(), half(), half(), ADADELTA)).toThrow(/adadelta: takes float32 or float64 tensors, got bfloat16/);
    const p = vec(P0);
    expect(() => CpuFused.rmsprop(p, vec(GRADS[0]!), vec([0, 0, 0, 0]), null, null, { ...RMSPROP, momentum: 0.9 })).toThrow(TypeError);
    expect(() => CpuFused.rmsprop(p, vec(GRADS[0]!), vec([0, 0, 0, 0]), null, vec([0, 0, 0, 0]), RMSPROP)).toThrow(/gradAvg exactly when centered/);
    expect(() => CpuFused.rmsprop(p, vec([1, 2]), vec([0, 0, 0, 0]), null, null, RMSPROP)).toThrow(/rmsprop: grad has shape \[2\], expected \[4\]/);
    expect(values(p)).toEqual(P0);
  });
});

/** Every combination of the boolean options in `keys`, each on or off. */
function combinations<K extends string>(keys: readonly K[]): Record<K, boolean>[] {
  return Array.from({ length: 2 ** keys.length }, (_, m) => Object.fromEntries(keys.map((k, i) => [k, ((m >> i) & 1) === 1])) as Record<K, boolean>);
}

/** A gradient with special values among seeded ones. */
function gradient(n: number, seed: number): Float32Array {
  const g = floats(n, seed, -3, 3);
  [g[5], g[6], g[7], g[8]] = [NaN, Infinity, 0, -0];
  return g;
}

describe('native Adadelta and RMSprop: the TypeScript kernels\' bits', () => {
  const sizes = [5003, 100003]; // one task, and chunks over two threads

  for (const o of combinations(['weightDecay', 'maximize'] as const)) {
    const spec: AdadeltaSpec = { lr: 0.7, rho: 0.85, eps: 1e-6, weightDecay: o.weightDecay ? 0.05 : 0, maximize: o.maximize };
    it(`Adadelta ${JSON.stringify(o)}: three steps give the same bits in every tensor`, async () => {
      for (const n of sizes) {
        const make = () => [vec(floats(n, 1), 'float32', 2), vec(new Float32Array(n)), vec(new Float32Array(n), 'float32', 5)] as const;
        const [got, want] = [make(), make()];
        for (let step = 1; step <= 3; step++) {
          const g = vec(gradient(n, step));
          expect(native.adadelta(got[0], g, got[1], got[2], spec)).toBe(true);
          CpuFused.adadelta(want[0], g, want[1], want[2], spec);
          await new Promise((resolve) => setImmediate(resolve));
        }
        got.forEach((r, k) => expect(firstDifference(r, want[k]!), `tensor ${k}, n ${n}`).toBe(-1));
      }
    });
  }

  for (const o of combinations(['weightDecay', 'maximize', 'momentum', 'centered'] as const)) {
    const spec: RMSpropSpec = { ...RMSPROP, alpha: 0.9, weightDecay: o.weightDecay ? 0.05 : 0, momentum: o.momentum ? 0.8 : 0, centered: o.centered, maximize: o.maximize };
    it(`RMSprop ${JSON.stringify(o)}: three steps give the same bits in every tensor`, async () => {
      for (const n of sizes) {
        const make = () => [vec(floats(n, 1), 'float32', 2), vec(new Float32Array(n)), o.momentum ? vec(new Float32Array(n), 'float32', 3) : null, o.centered ? vec(new Float32Array(n)) : null] as const;
        const [got, want] = [make(), make()];
        for (let step = 1; step <= 3; step++) {
          const g = vec(gradient(n, step));
          expect(native.rmsprop(got[0], g, got[1], got[2], got[3], spec)).toBe(true);
          CpuFused.rmsprop(want[0], g, want[1], want[2], want[3], spec);
          await new Promise((resolve) => setImmediate(resolve));
        }
        got.forEach((r, k) => r && expect(firstDifference(r, want[k]!), `tensor ${k}, n ${n}`).toBe(-1));
      }
    });
  }

  it('leave float64, small, strided and shared-storage tensors to the TypeScript kernels', () => {
    const n = 5000;
    const fresh = (dtype: DTypeName = 'float32'): Ref => vec(new Float32Array(n), dtype);
    const p = fresh();
    expect(native.adadelta(fresh('float64'), fresh('float64'), fresh('float64'), fresh('float64'), ADADELTA)).toBe(false);
    expect(native.adadelta(vec([1, 2]), vec([1, 2]), vec([0, 0]), vec([0, 0]), ADADELTA)).toBe(false);
    expect(native.adadelta(p, p, fresh(), fresh(), ADADELTA)).toBe(false); // the grad is the param's storage
    expect(native.rmsprop(p, fresh(), { ...fresh(), shape: [2500], strides: [2] }, null, null, RMSPROP)).toBe(false);
    expect(native.rmsprop(p, fresh(), fresh(), null, fresh('float64'), { ...RMSPROP, centered: true })).toBe(false);
  });

  it("the backend's adadelta and rmsprop give the same bits with the native path on and off", () => {
    const n = 1 << 14;
    const run = (native: boolean) => {
      const be = createCpuBackend({ native, wasm: false });
      const ref = (data: Float32Array): Ref => {
        const storage = be.alloc(0, 'float32', n);
        be.write(storage, data, 0);
        return { storage, dtype: 'float32', shape: [n], strides: [1], offset: 0 };
      };
      const [p, v, u] = [ref(floats(n, 3)), ref(new Float32Array(n)), ref(new Float32Array(n))];
      be.fused!.adadelta!(p, ref(gradient(n, 4)), v, u, ADADELTA);
      be.fused!.rmsprop!(p, ref(gradient(n, 5)), v, null, u, { ...RMSPROP, centered: true });
      return Array.from(new Uint32Array((be.readSync!(p.storage) as Float32Array).buffer));
    };
    expect(run(true)).toEqual(run(false));
  });
});

describe('wasm Adadelta and RMSprop: the TypeScript kernels\' bits', () => {
  const W = createCpuBackend({ threads: 2, native: false });
  /** A contiguous float32 [n] in W's heap holding `data`. */
  const heap = (data: Float32Array): Ref => {
    const storage = W.alloc(0, 'float32', data.length);
    W.write(storage, data, 0);
    return { storage, dtype: 'float32', shape: [data.length], strides: [1], offset: 0 };
  };
  const zeros = (n: number) => new Float32Array(n);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Three steps of `wasm` on heap tensors and of `ts` on plain ones from the same data: same bits; the wasm task ran. */
  function compare(task: string, n: number, state: (n: number) => (Float32Array | null)[], step: (refs: (Ref | null)[], g: Ref, wasm: boolean) => void): void {
    const ran = vi.spyOn(WasmRuntime.prototype, 'run');
    const [got, want] = [state(n).map((d) => d && heap(d)), state(n).map((d) => d && vec(d))];
    for (let k = 1; k <= 3; k++) {
      step(got, heap(gradient(n, k)), true);
      step(want, vec(gradient(n, k)), false);
    }
    expect(ran.mock.calls.filter(([kernel]) => kernel === task).length).toBe(3);
    got.forEach((r, k) => r && expect(firstDifference({ ...r, storage: { ...r.storage, data: W.readSync!(r.storage) } } as Ref, want[k]!), `tensor ${k}, n ${n}`).toBe(-1));
  }

  for (const n of [70003, 6]) {
    for (const o of combinations(['weightDecay', 'maximize'] as const)) {
      it(`Adadelta ${JSON.stringify(o)}, ${n} elements`, () => {
        const spec: AdadeltaSpec = { lr: 0.7, rho: 0.85, eps: 1e-6, weightDecay: o.weightDecay ? 0.05 : 0, maximize: o.maximize };
        compare('adadelta_task', n, (n) => [floats(n, 1), zeros(n), zeros(n)], ([p, v, u], g, wasm) => (wasm ? W.fused!.adadelta! : CpuFused.adadelta)(p!, g, v!, u!, spec));
      });
    }
    for (const o of combinations(['weightDecay', 'maximize', 'momentum', 'centered'] as const)) {
      it(`RMSprop ${JSON.stringify(o)}, ${n} elements`, () => {
        const spec: RMSpropSpec = { ...RMSPROP, alpha: 0.9, weightDecay: o.weightDecay ? 0.05 : 0, momentum: o.momentum ? 0.8 : 0, centered: o.centered, maximize: o.maximize };
        compare('rmsprop_task', n, (n) => [floats(n, 1), zeros(n), o.momentum ? zeros(n) : null, o.centered ? zeros(n) : null],
          ([p, v, b, a], g, wasm) => (wasm ? W.fused!.rmsprop! : CpuFused.rmsprop)(p!, g, v!, b!, a!, spec));
      });
    }
  }
});
