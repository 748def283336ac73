// GradScaler (GS-1..GS-14 of pytorch-semantics.md §7) on the CPU backend: one test per statement,
// PyTorch's exact messages, and the promise that unscale/update never read the device.
import '@core/backend-cpu';
import {
  AmpError, GradScaler, ValueError, ampForeachNonFiniteCheckAndUnscale_, ampUpdateScale_, bfloat16, float16, float32, float64,
  getBackend, int32, type Backend, memoryStats, registerBackend, roundToBFloat16, tensor, zeros, type Tensor,
} from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectError, expectRejection } from '../helpers/assert.js';

/** The CPU backend, typed with its readSync (which it always has), for spying. */
const cpuBackend = () => getBackend('cpu') as Backend & { readSync: NonNullable<Backend['readSync']> };

const FIX = 'This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.';

/** A minimal optimizer: the structural shape the scaler needs, with a step that records its calls. */
function mockOptimizer(params: Tensor[], result: unknown = 'stepped') {
  const calls: unknown[][] = [];
  return {
    paramGroups: [{ params }],
    calls,
    step: (...args: unknown[]) => {
      calls.push(args);
      return result;
    },
  };
}

/** A leaf with a grad already in place (as after backward()). */
function withGrad(values: number[], grad: number[], dtype = float32): Tensor {
  const p = tensor(values, { dtype });
  p.grad = tensor(grad, { dtype });
  return p;
}

const f32 = (x: number) => Math.fround(x);
const values = (t: Tensor) => Array.from(t.dataSync());

afterEach(() => {
  vi.restoreAllMocks();
});

describe('GS-1 constructor', () => {
  it('GS-1: warns once and disables when the device type has no available backend', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const s = new GradScaler(); // 'cuda', as in PyTorch; no cuda backend here
    expect(s.isEnabled()).toBe(false);
    expect(s.deviceType).toBe('cuda');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith('GradScaler is enabled, but cuda is not available.  Disabling.');
    // Disabled before the factor checks, as in PyTorch: bad factors don't raise then.
    expect(new GradScaler('cuda', { growthFactor: 0.5 }).isEnabled()).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('GS-1: a registered backend that failed to start counts as unavailable too', () => {
    registerBackend({ name: 'broken', priority: 1, create: () => { throw new Error('no adapter'); } });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(new GradScaler('broken').isEnabled()).toBe(false);
    expect(warn).toHaveBeenCalledWith('GradScaler is enabled, but broken is not available.  Disabling.');
  });

  it("GS-1: defaults are init_scale 2^16, growth 2, backoff 0.5, interval 2000", () => {
    const s = new GradScaler('cpu');
    expect(s.isEnabled()).toBe(true);
    expect(s.getScale()).toBe(65536);
    expect(s.getGrowthFactor()).toBe(2);
    expect(s.getBackoffFactor()).toBe(0.5);
    expect(s.getGrowthInterval()).toBe(2000);
    expect(s.getGrowthTracker()).toBe(0);
  });

  it('GS-1: bad factors raise the AssertionError messages when enabled', () => {
    expectError(() => new GradScaler('cpu', { growthFactor: 1 }), AmpError, 'The growth factor must be > 1.0.');
    expectError(() => new GradScaler('cpu', { growthFactor: Number.NaN }), AmpError, 'The growth factor must be > 1.0.');
    expectError(() => new GradScaler('cpu', { backoffFactor: 1 }), AmpError, 'The backoff factor must be < 1.0.');
    expect(new GradScaler('cpu', { growthFactor: 1, backoffFactor: 2, enabled: false }).isEnabled()).toBe(false);
  });
});

describe('GS-2 lazy scale', () => {
  it('GS-2: the scale (f32, 0-dim) and tracker (int32, 0-dim, 0) appear on the first scale(), on its tensor\'s device', () => {
    const s = new GradScaler('cpu', { initScale: 0.1 });
    expect(s._scale).toBeNull();
    expect(s._growthTracker).toBeNull();
    expect(s.getScale()).toBe(0.1); // init_scale itself, not yet rounded to f32
    s.scale(tensor([1]));
    const scale = s._scale!;
    const tracker = s._growthTracker!;
    expect([scale.dtype, scale.shape, scale.device.toString()]).toEqual([float32, [], 'cpu']);
    expect([tracker.dtype, tracker.shape, tracker.device.toString()]).toEqual([int32, [], 'cpu']);
    expect(values(scale)).toEqual([f32(0.1)]);
    expect(values(tracker)).toEqual([0]);
    expect(s.getScale()).toBe(f32(0.1));
    // Later scale() calls reuse them.
    s.scale(tensor([2]));
    expect(s._scale).toBe(scale);
  });
});

describe('GS-3 scale()', () => {
  it('GS-3: disabled returns its argument itself, whatever it is', () => {
    const s = new GradScaler('cpu', { enabled: false });
    const t = tensor([1, 2]);
    const list = [t, [t]];
    expect(s.scale(t)).toBe(t);
    expect(s.scale(list)).toBe(list);
    expect(s.scale(42 as unknown)).toBe(42);
  });

  it('GS-3: a tensor gives x * scale, and gradients flow through it', () => {
    const s = new GradScaler('cpu', { initScale: 8 });
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const y = s.scale(x.sum());
    expect(values(y)).toEqual([48]);
    y.backward();
    expect(values(x.grad!)).toEqual([8, 8, 8]);
  });

  it('GS-3: promotion: an f16 0-dim loss gives f32; f16[n] stays f16 (computed in f32, no overflow of the scale)', () => {
    const s = new GradScaler('cpu');
    const loss = s.scale(tensor(1.5, { dtype: float16 }));
    expect(loss.dtype).toBe(float32);
    expect(loss.shape).toEqual([]);
    expect(values(loss)).toEqual([98304]); // above f16's max: f32 keeps it
    const out = s.scale(tensor([0.5, 0.25, 2], { dtype: float16 }));
    expect(out.dtype).toBe(float16);
    expect(values(out)).toEqual([32768, 16384, Infinity]); // 65536 itself is Inf in f16; 0.5·65536 is not
    const b = s.scale(tensor([3], { dtype: bfloat16 }));
    expect(b.dtype).toBe(bfloat16);
    expect(values(b)).toEqual([196608]);
  });

  it('GS-3: nested arrays keep their structure', () => {
    const s = new GradScaler('cpu', { initScale: 2 });
    const [a, [b, [c]]] = s.scale([tensor([1]), [tensor([2]), [tensor([3])]]] as const);
    expect([values(a), values(b), values(c)]).toEqual([[2], [4], [6]]);
    const nested = s.scale([[tensor([1])], []]);
    expect(Array.isArray(nested)).toBe(true);
    expect(nested[1]).toEqual([]);
  });

  it('GS-3: other iterables become a lazy map', () => {
    const s = new GradScaler('cpu', { initScale: 2 });
    const lazy = s.scale(new Set([tensor([1]), tensor([5])]));
    expect(Array.isArray(lazy)).toBe(false);
    expect([...lazy].map(values)).toEqual([[2], [10]]);
    // Lazy: a bad element raises only when reached.
    const bad = s.scale(new Set<unknown>([tensor([1]), 'x']));
    const it = bad[Symbol.iterator]();
    expect(values(it.next().value as Tensor)).toEqual([2]);
    expectError(() => it.next(), ValueError, 'outputs must be a Tensor or an iterable of Tensors');
  });

  it('GS-3: anything else raises ValueError "outputs must be a Tensor or an iterable of Tensors"', () => {
    const s = new GradScaler('cpu');
    for (const bad of [3, 'loss', null, undefined, { loss: 1 }]) {
      const e = expectError(() => s.scale(bad as unknown), ValueError);
      expect(e.message).toBe('outputs must be a Tensor or an iterable of Tensors');
    }
    expectError(() => s.scale([tensor([1]), 2]), ValueError, 'outputs must be a Tensor or an iterable of Tensors');
  });
});

describe('GS-4 per-optimizer stages', () => {
  it('GS-4: READY → UNSCALED → STEPPED per optimizer; update() resets all to READY', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const a = mockOptimizer([withGrad([1], [1])]);
    const b = mockOptimizer([withGrad([1], [1])]);
    s.unscale(a);
    expectError(() => s.unscale(a), AmpError, 'unscale_() has already been called on this optimizer since the last update().');
    s.unscale(b); // b has its own state
    await s.step(a);
    expectError(() => s.unscale(a), AmpError, 'unscale_() is being called after step().');
    await expectRejection(() => s.step(a), AmpError, 'step() has already been called since the last update().');
    await s.step(b);
    s.update();
    for (const opt of [a, b]) {
      opt.paramGroups[0]!.params[0]!.grad = tensor([1]);
      s.unscale(opt); // READY again
    }
  });
});

describe('GS-5 unscale()', () => {
  it('GS-5: disabled is a no-op', () => {
    const s = new GradScaler('cpu', { enabled: false });
    const p = withGrad([1], [4]);
    const g = p.grad!;
    s.unscale(mockOptimizer([p]));
    expect(p.grad).toBe(g);
    expect(values(g)).toEqual([4]);
  });

  it('GS-5: before any scale(), unscale_/step/update raise with their own names', async () => {
    const s = new GradScaler('cpu');
    const opt = mockOptimizer([withGrad([1], [1])]);
    expect(expectError(() => s.unscale(opt), AmpError).message).toBe(`Attempted unscale_ but _scale is None.  ${FIX}`);
    expect((await expectRejection(() => s.step(opt), AmpError)).message).toBe(`Attempted step but _scale is None.  ${FIX}`);
    expect(expectError(() => s.update(), AmpError).message).toBe(`Attempted update but _scale is None.  ${FIX}`);
  });

  it('GS-5: inv_scale = f32(1/f64(scale)); grads are unscaled in place, keeping their objects', () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    s.update(3);
    const p = withGrad([0, 0, 0], [3, 1, -6]);
    const grad = p.grad!;
    s.unscale(mockOptimizer([p]));
    const inv = f32(1 / 3);
    expect(p.grad).toBe(grad);
    expect(values(grad)).toEqual([f32(3 * inv), inv, f32(-6 * inv)]);
  });

  it('GS-5: an f16 grad raises ValueError before any grad changes; bf16, f32 and f64 grads are fine', async () => {
    const s = new GradScaler('cpu', { initScale: 4 });
    s.scale(tensor([1]));
    const p32 = withGrad([0], [8]);
    const p16 = withGrad([0], [8], float16);
    const opt = mockOptimizer([p32, p16]);
    expectError(() => s.unscale(opt), ValueError, 'Attempting to unscale FP16 gradients.');
    expect(values(p32.grad!)).toEqual([8]); // untouched, and the stage is still READY
    p16.grad = null; // None grads are skipped
    const pb = withGrad([0], [8], bfloat16);
    const p64 = withGrad([0], [8], float64);
    opt.paramGroups[0]!.params.push(pb, p64);
    s.unscale(opt);
    expect([values(p32.grad!), values(pb.grad!), values(p64.grad!)]).toEqual([[2], [2], [2]]);
    expect([pb.grad!.dtype, p64.grad!.dtype]).toEqual([bfloat16, float64]);
    expect(p16.grad).toBeNull();
    expect(await s.step(opt)).toBe('stepped');
  });

  it('GS-5: bf16 grads are read as f32, multiplied by the f32 inv_scale, and rounded once', () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    s.update(3);
    const raw = Array.from({ length: 64 }, (_, i) => roundToBFloat16(1 + i * 0.37));
    const p = withGrad(raw.map(() => 0), raw, bfloat16);
    s.unscale(mockOptimizer([p]));
    const inv = f32(1 / 3);
    const opmath = raw.map((v) => roundToBFloat16(f32(v * inv)));
    const inBF16 = raw.map((v) => roundToBFloat16(v * roundToBFloat16(inv)));
    expect(opmath.some((v, i) => v !== inBF16[i])).toBe(true); // the two methods differ here
    expect(values(p.grad!)).toEqual(opmath);
  });

  it('GS-5: no host sync: unscale and update read nothing from the device', async () => {
    const cpu = cpuBackend();
    const s = new GradScaler('cpu');
    const p = tensor([1, 2], { requiresGrad: true });
    const opt = mockOptimizer([p]);
    const read = vi.spyOn(cpu, 'read');
    const readSync = vi.spyOn(cpu, 'readSync');
    s.scale(p.mul(p).sum()).backward();
    s.unscale(opt);
    expect(read).not.toHaveBeenCalled();
    expect(readSync).not.toHaveBeenCalled();
    await s.step(opt);
    expect(read).toHaveBeenCalledTimes(1); // GS-7: the one sync
    s.update();
    expect(s.getScale()).toBe(65536); // from the host mirror
    expect(s.getGrowthTracker()).toBe(1);
    expect(read).toHaveBeenCalledTimes(1);
    expect(readSync).not.toHaveBeenCalled();
  });
});

describe('GS-6 _amp_foreach_non_finite_check_and_unscale_', () => {
  const inv = (v: number) => tensor(v);

  it('GS-6: sets found_inf for Inf or NaN, unscales every grad in place, Inf and NaN stay', () => {
    const found = zeros([]);
    const a = tensor([2, Infinity, -4]);
    const b = tensor([Number.NaN, 8], { dtype: bfloat16 });
    ampForeachNonFiniteCheckAndUnscale_([a, b], found, inv(0.5));
    expect(values(found)).toEqual([1]);
    expect(values(a)).toEqual([1, Infinity, -2]);
    const bv = values(b);
    expect(Number.isNaN(bv[0])).toBe(true);
    expect(bv[1]).toBe(4);
    const negInf = zeros([]);
    ampForeachNonFiniteCheckAndUnscale_([tensor([1, -Infinity])], negInf, inv(1));
    expect(values(negInf)).toEqual([1]);
  });

  it('GS-6: found_inf is never cleared; finite grads leave it at 0', () => {
    const found = zeros([]);
    ampForeachNonFiniteCheckAndUnscale_([tensor([1, 2])], found, inv(1));
    expect(values(found)).toEqual([0]);
    ampForeachNonFiniteCheckAndUnscale_([tensor([Infinity])], found, inv(1));
    ampForeachNonFiniteCheckAndUnscale_([tensor([1, 2])], found, inv(1));
    expect(values(found)).toEqual([1]);
  });

  it('GS-6: checks the values before unscaling (an overflow by inv_scale > 1 is not flagged)', () => {
    const found = zeros([]);
    const g = tensor([3e38]);
    ampForeachNonFiniteCheckAndUnscale_([g], found, inv(4));
    expect(values(g)).toEqual([Infinity]);
    expect(values(found)).toEqual([0]);
  });

  it('GS-6: an empty list is a no-op, even with bad arguments; empty grads are fine', () => {
    const found = zeros([]);
    expect(() => ampForeachNonFiniteCheckAndUnscale_([], zeros([2]), tensor([1, 2]))).not.toThrow();
    ampForeachNonFiniteCheckAndUnscale_([zeros([0])], found, inv(2));
    expect(values(found)).toEqual([0]);
  });

  it('GS-6: argument checks', () => {
    const g = [tensor([1])];
    expectError(() => ampForeachNonFiniteCheckAndUnscale_(g, zeros([]), tensor([1, 2])), AmpError, 'inv_scale must be a 1-element tensor.');
    expectError(() => ampForeachNonFiniteCheckAndUnscale_(g, zeros([2]), inv(1)), AmpError, 'found_inf must be a 1-element tensor.');
    expectError(() => ampForeachNonFiniteCheckAndUnscale_(g, zeros([]), tensor(1, { dtype: float64 })), AmpError, 'inv_scale must be a float tensor.');
    expectError(() => ampForeachNonFiniteCheckAndUnscale_(g, zeros([], { dtype: bfloat16 }), inv(1)), AmpError, 'found_inf must be a float tensor.');
  });
});

describe('GS-7 step()', () => {
  it('GS-7: disabled returns optimizer.step(...args), closures included', async () => {
    const s = new GradScaler('cpu', { enabled: false });
    const opt = mockOptimizer([withGrad([1], [Infinity])], 0.25);
    const closure = () => 1;
    expect(await s.step(opt, closure)).toBe(0.25);
    expect(opt.calls).toEqual([[closure]]);
  });

  it('GS-7: a closure raises "Closure use is not currently supported if GradScaler is enabled."', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const opt = mockOptimizer([withGrad([1], [1])]);
    const e = await expectRejection(() => s.step(opt, () => 1), AmpError);
    expect(e.message).toBe('Closure use is not currently supported if GradScaler is enabled.');
    expect(opt.calls).toEqual([]);
  });

  it('GS-7: from READY it unscales first; clean grads → returns optimizer.step(...args)', async () => {
    const s = new GradScaler('cpu', { initScale: 4 });
    s.scale(tensor([1]));
    const p = withGrad([1], [8]);
    const opt = mockOptimizer([p], 'result');
    expect(await s.step(opt, 'a', 2)).toBe('result');
    expect(opt.calls).toEqual([['a', 2]]);
    expect(values(p.grad!)).toEqual([2]);
    await expectRejection(() => s.step(opt), AmpError, 'step() has already been called since the last update().');
  });

  it('GS-7: Inf/NaN grads → the step is skipped, returns undefined, grads stay unscaled', async () => {
    const s = new GradScaler('cpu', { initScale: 4 });
    s.scale(tensor([1]));
    const p = withGrad([1, 2], [8, Number.NaN]);
    const opt = mockOptimizer([p]);
    expect(await s.step(opt)).toBeUndefined();
    expect(opt.calls).toEqual([]);
    expect(values(p.grad!)[0]).toBe(2);
    await expectRejection(() => s.step(opt), AmpError, 'step() has already been called since the last update().');
  });

  it('GS-7: no grads at all → "No inf checks were recorded for this optimizer."', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const opt = mockOptimizer([tensor([1])]);
    const e = await expectRejection(() => s.step(opt), AmpError);
    expect(e.message).toBe('No inf checks were recorded for this optimizer.');
  });

  it('GS-7: a second step() while the first awaits its read is refused', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const opt = mockOptimizer([withGrad([1], [1])]);
    const first = s.step(opt);
    await expectRejection(() => s.step(opt), AmpError, 'step() has already been called since the last update().');
    await first;
    expect(opt.calls.length).toBe(1);
  });
});

describe('GS-8 update(newScale)', () => {
  it('GS-8: disabled is a no-op', () => {
    const s = new GradScaler('cpu', { enabled: false });
    expect(() => s.update()).not.toThrow();
    expect(() => s.update(5)).not.toThrow();
    expect(s.getScale()).toBe(1);
  });

  it('GS-8: a number fills the scale (rounded to f32); the tracker is untouched; states reset', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const opt = mockOptimizer([withGrad([1], [1])]);
    await s.step(opt);
    s.update();
    expect(s.getGrowthTracker()).toBe(1);
    opt.paramGroups[0]!.params[0]!.grad = tensor([1]);
    await s.step(opt);
    s.update(0.1);
    expect(values(s._scale!)).toEqual([f32(0.1)]);
    expect(s.getScale()).toBe(f32(0.1));
    expect(s.getGrowthTracker()).toBe(1);
    expect(values(s._growthTracker!)).toEqual([1]);
    s.unscale(opt); // READY again
  });

  it('GS-8: a tensor new scale is copied; it must be 1-element, on the device type, without requiresGrad', () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const reason = 'new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False.';
    expect(expectError(() => s.update(tensor([1, 2])), AmpError).message).toBe(reason);
    expect(expectError(() => s.update(tensor([2], { requiresGrad: true })), AmpError).message).toBe(reason);
    expectError(() => s.update('2' as unknown as number), AmpError, reason);
    s.update(tensor([512]));
    expect(values(s._scale!)).toEqual([512]);
    expect(s.getScale()).toBe(512); // the host read it synchronously: a CPU scale can be
    s.update(tensor(3, { dtype: float64 }));
    expect(s.getScale()).toBe(3);
    expect(s.getGrowthTracker()).toBe(0);
  });

  it('GS-8: "No inf checks were recorded prior to update." without unscale/step', () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    expect(expectError(() => s.update(), AmpError).message).toBe('No inf checks were recorded prior to update.');
    s.unscale(mockOptimizer([tensor([1])])); // an optimizer without grads records nothing either
    expectError(() => s.update(), AmpError, 'No inf checks were recorded prior to update.');
  });

  it('GS-8: update() after unscale() without step() still updates on the device', () => {
    const s = new GradScaler('cpu', { initScale: 8 });
    s.scale(tensor([1]));
    s.unscale(mockOptimizer([withGrad([1], [Infinity])]));
    s.update();
    expect(values(s._scale!)).toEqual([4]);
    expect(s.getScale()).toBe(4); // the host didn't know found_inf: a synchronous read on CPU
    expect(s.getGrowthTracker()).toBe(0);
  });
});

describe('GS-9 _amp_update_scale_', () => {
  function run(scale: number, tracker: number, found: number, growth: number, backoff: number, interval: number) {
    const s = tensor(scale);
    const t = tensor(tracker, { dtype: int32 });
    const out = ampUpdateScale_(s, t, tensor(found), growth, backoff, interval);
    expect(out).toBe(s);
    return [values(s)[0], values(t)[0]];
  }

  it('GS-9: found → scale·backoff, tracker 0; clean → tracker+1, growth exactly at the interval', () => {
    expect(run(1024, 5, 1, 2, 0.5, 10)).toEqual([512, 0]);
    expect(run(1024, 5, 0, 2, 0.5, 10)).toEqual([1024, 6]);
    expect(run(1024, 9, 0, 2, 0.5, 10)).toEqual([2048, 0]);
    expect(run(1024, 0, 0, 2, 0.5, 1)).toEqual([2048, 0]);
    expect(run(1024, 3, 2, 2, 0.5, 4)).toEqual([512, 0]); // a sum of flags, not only 1
  });

  it('GS-9: products are f64 rounded once to f32', () => {
    // Find a scale where f32(s·0.3) ≠ f32(s·f32(0.3)): the f64 product must win.
    let s = 1;
    while (f32(s * 0.3) === f32(s * f32(0.3))) s = f32(s * 1.37);
    expect(run(s, 0, 1, 2, 0.3, 2000)).toEqual([f32(s * 0.3), 0]);
    let g = 1;
    while (f32(g * 1.3) === f32(g * f32(1.3))) g = f32(g * 1.37);
    expect(run(g, 1, 0, 1.3, 0.5, 2)).toEqual([f32(g * 1.3), 0]);
  });

  it('GS-9: growth never makes the scale Inf (the tracker still resets); nothing stops it falling below 1', () => {
    expect(run(2 ** 127, 1, 0, 2, 0.5, 2)).toEqual([2 ** 127, 0]);
    expect(run(0.75, 0, 1, 2, 0.5, 2)).toEqual([0.375, 0]);
  });

  it('GS-9: argument checks', () => {
    const ok = () => [tensor(1), tensor(0, { dtype: int32 }), tensor(0)] as const;
    const [s, t, f] = ok();
    expectError(() => ampUpdateScale_(s, tensor(0), f, 2, 0.5, 1), AmpError, 'growth_tracker must be an int tensor.');
    expectError(() => ampUpdateScale_(tensor(1, { dtype: int32 }), t, f, 2, 0.5, 1), AmpError, 'current_scale must be a float tensor.');
    expectError(() => ampUpdateScale_(s, t, tensor(0, { dtype: float64 }), 2, 0.5, 1), AmpError, 'found_inf must be a float tensor.');
    expectError(() => ampUpdateScale_(tensor([1, 2]), t, f, 2, 0.5, 1), AmpError, 'current_scale must be a 1-element tensor.');
    expectError(() => ampUpdateScale_(s, tensor([0, 0], { dtype: int32 }), f, 2, 0.5, 1), AmpError, 'growth_tracker must be a 1-element tensor.');
    expectError(() => ampUpdateScale_(s, t, tensor([0, 0]), 2, 0.5, 1), AmpError, 'found_inf must be a 1-element tensor.');
  });
});

describe('GS-10 defaults', () => {
  it('GS-10: an overflow takes 65536 to 32768 and resets the tracker', async () => {
    const s = new GradScaler('cpu');
    s.scale(tensor([1]));
    const opt = mockOptimizer([withGrad([1], [1])]);
    await s.step(opt);
    s.update();
    expect([s.getScale(), s.getGrowthTracker()]).toEqual([65536, 1]);
    opt.paramGroups[0]!.params[0]!.grad = tensor([Infinity]);
    await s.step(opt);
    s.update();
    expect([s.getScale(), s.getGrowthTracker()]).toEqual([32768, 0]);
    expect([await s.getScaleAsync(), await s.getGrowthTrackerAsync()]).toEqual([32768, 0]);
  });
});

describe('GS-11 several optimizers', () => {
  it('GS-11: each step is skipped only for its own Inf/NaN; one update() backs off if any had them', async () => {
    const s = new GradScaler('cpu', { initScale: 16, growthInterval: 1 });
    s.scale(tensor([1]));
    const pa = withGrad([1], [16]);
    const pb = withGrad([1], [Infinity]);
    const a = mockOptimizer([pa], 'a');
    const b = mockOptimizer([pb], 'b');
    expect(await s.step(a)).toBe('a');
    expect(await s.step(b)).toBeUndefined();
    expect([a.calls.length, b.calls.length]).toEqual([1, 0]);
    s.update();
    expect(s.getScale()).toBe(8); // backed off, although a was clean (and growthInterval is 1)
    pa.grad = tensor([8]);
    pb.grad = tensor([8]);
    expect([await s.step(a), await s.step(b)]).toEqual(['a', 'b']);
    s.update();
    expect(s.getScale()).toBe(16);
    expect(await s.getScaleAsync()).toBe(16);
  });
});

describe('GS-12 getters and setters', () => {
  it('GS-12: getScale() is 1 when disabled; getGrowthTracker() 0; isEnabled; factor and interval accessors', () => {
    const off = new GradScaler('cpu', { enabled: false, initScale: 8 });
    expect([off.getScale(), off.getGrowthTracker(), off.isEnabled()]).toEqual([1, 0, false]);
    const s = new GradScaler('cpu', { initScale: 8, growthFactor: 3, backoffFactor: 0.25, growthInterval: 7 });
    expect([s.getScale(), s.getGrowthFactor(), s.getBackoffFactor(), s.getGrowthInterval()]).toEqual([8, 3, 0.25, 7]);
    s.setGrowthFactor(4);
    s.setBackoffFactor(0.125);
    s.setGrowthInterval(9);
    expect([s.getGrowthFactor(), s.getBackoffFactor(), s.getGrowthInterval()]).toEqual([4, 0.125, 9]);
  });

  it('GS-12: new factors take effect at the next update()', async () => {
    const s = new GradScaler('cpu', { initScale: 8, growthInterval: 100 });
    s.scale(tensor([1]));
    s.setGrowthInterval(1);
    s.setGrowthFactor(4);
    const opt = mockOptimizer([withGrad([1], [1])]);
    await s.step(opt);
    s.update();
    expect([s.getScale(), await s.getScaleAsync()]).toEqual([32, 32]);
  });
});

describe('GS-13 state dict', () => {
  it('GS-13: stateDict() holds the five values; {} when disabled', async () => {
    const s = new GradScaler('cpu', { initScale: 8, growthInterval: 10 });
    expect(s.stateDict()).toEqual({ scale: 8, growthFactor: 2, backoffFactor: 0.5, growthInterval: 10, _growthTracker: 0 });
    s.scale(tensor([1]));
    await s.step(mockOptimizer([withGrad([1], [1])]));
    s.update();
    expect(s.stateDict()).toEqual({ scale: 8, growthFactor: 2, backoffFactor: 0.5, growthInterval: 10, _growthTracker: 1 });
    expect(await s.stateDictAsync()).toEqual(s.stateDict());
    expect(new GradScaler('cpu', { enabled: false }).stateDict()).toEqual({});
  });

  it('GS-13: loadStateDict sets all five (device tensors too); no-op when disabled; {} raises', async () => {
    const sd = { scale: 256, growthFactor: 4, backoffFactor: 0.25, growthInterval: 3, _growthTracker: 2 };
    const off = new GradScaler('cpu', { enabled: false });
    off.loadStateDict(sd);
    expect(off.stateDict()).toEqual({});
    const s = new GradScaler('cpu');
    const e = expectError(() => s.loadStateDict({}), AmpError);
    expect(e.message).toBe('The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.');
    s.loadStateDict(sd); // before the scale exists: it starts from these values
    expect(s.stateDict()).toEqual(sd);
    s.scale(tensor([1]));
    expect([values(s._scale!), values(s._growthTracker!)]).toEqual([[256], [2]]);
    const opt = mockOptimizer([withGrad([1], [1])]);
    await s.step(opt);
    s.update(); // 3rd clean update: ×4
    expect([s.getScale(), s.getGrowthTracker()]).toEqual([1024, 0]);
    const other = new GradScaler('cpu');
    other.scale(tensor([1]));
    other.loadStateDict(s.stateDict()); // after the scale exists: fills it
    expect([values(other._scale!), values(other._growthTracker!)]).toEqual([[1024], [0]]);
    expect(other.stateDict()).toEqual(s.stateDict());
  });
});

describe('GS-14 CPU scaler', () => {
  it('GS-14: GradScaler("cpu") runs the same loop, with bf16 grads', async () => {
    const s = new GradScaler('cpu', { initScale: 4 });
    const p = tensor([1, 2], { dtype: bfloat16, requiresGrad: true });
    const opt = mockOptimizer([p]);
    s.scale(p.mul(p).sum()).backward();
    expect(p.grad!.dtype).toBe(bfloat16);
    expect(values(p.grad!)).toEqual([8, 16]);
    expect(await s.step(opt)).toBe('stepped');
    expect(values(p.grad!)).toEqual([2, 4]);
    s.update();
    expect(s.getGrowthTracker()).toBe(1);
  });
});

describe('enabled: false', () => {
  it('every method is a cheap pass-through that allocates nothing', async () => {
    const s = new GradScaler('cpu', { enabled: false });
    const p = withGrad([1], [Infinity]);
    const opt = mockOptimizer([p], 'ran');
    const loss = tensor(2);
    const before = memoryStats('cpu').allocations;
    expect(s.scale(loss)).toBe(loss);
    s.unscale(opt);
    s.unscale_(opt);
    expect(await s.step(opt)).toBe('ran'); // no inf check: it always steps
    s.update();
    s.update(3);
    expect([s.getScale(), s.getGrowthTracker(), await s.getScaleAsync()]).toEqual([1, 0, 1]);
    expect(s.stateDict()).toEqual({});
    s.loadStateDict({});
    expect(memoryStats('cpu').allocations).toBe(before);
    expect(values(p.grad!)).toEqual([Infinity]);
  });
});
