// GradScaler (GS-*) on the backend's device: the scaler's state machine and misuse errors, and its
// two device-side composites (`ampForeachNonFiniteCheckAndUnscale_`, `ampUpdateScale_`) against the
// oracle's GS-6/GS-9 arithmetic (src/oracle/amp.ts). Scale and tracker values are read with
// getScaleAsync()/getGrowthTrackerAsync() and tensor reads are awaited, so backends without
// synchronous reads run every case; the sync getters are checked against them (the host mirror).
// Cases that inject Inf/NaN skip on backends declaring non-strict numerics.
import { SGD } from '@core/optim';
import {
  AmpError, ampForeachNonFiniteCheckAndUnscale_, ampUpdateScale_, DTypeError, GradScaler, ValueError,
  type DTypeName, type GradScalerOptions, type ScalableOptimizer, type Tensor,
} from '@core/tensor';
import { expectEqual, expectRejects, expectTensor, expectThrows, expectTrue, fmt } from '../check.js';
import { stored, toDevice, upload, type Layout } from '../inputs.js';
import { hasNonFinite, invScale, scaleTrajectory, unscaleValue, updateScale, type ScaleState } from '../oracle/amp.js';
import { roundTo } from '../oracle/dtype.js';
import { map, nd, scalar, vector, type NdArray } from '../oracle/ndarray.js';
import { Rng } from '../rng.js';
import { withFused } from './table.js';
import { fail, type Case, type Env, type Measure } from '../types.js';

/** An optimizer that records its step() calls and returns a marker, so step()'s return value shows. */
class RecordingOptimizer implements ScalableOptimizer {
  calls = 0;
  readonly args: unknown[][] = [];
  readonly inner: SGD;

  constructor(params: Tensor[], lr: number) {
    this.inner = new SGD(params, { lr });
  }

  get paramGroups(): ScalableOptimizer['paramGroups'] {
    return this.inner.paramGroups;
  }

  step(...args: unknown[]): string {
    this.calls++;
    this.args.push(args);
    this.inner.step();
    return 'stepped';
  }
}

async function values(t: Tensor): Promise<number[]> {
  return Array.from(await t.data(), Number);
}

function expectSameBits(label: string, before: readonly number[], after: readonly number[]): void {
  const i = before.findIndex((v, k) => !Object.is(v, after[k]));
  if (i >= 0 || before.length !== after.length) fail(`${label}: element ${i} changed from ${fmt(before[i]!)} to ${fmt(after[i]!)}`);
}

/** A scripted iteration: clean grads, or grads holding an Inf or a NaN. */
type Flag = 'clean' | 'inf' | 'nan';
const FLAGS: Readonly<Record<string, Flag>> = { c: 'clean', i: 'inf', n: 'nan' };
const script = (s: string): Flag[] => [...s].map((ch) => FLAGS[ch]!);

export function gradScalerCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `gradscaler/${id}`, category: 'gradscaler', op, dtype, run, ...(skip ? { skip } : {}) });
  const needs = (...ds: DTypeName[]): string | undefined => {
    const missing = ds.find((d) => !env.compute.has(d));
    return missing ? `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` : undefined;
  };
  const needsStorage = (d: DTypeName) => (env.storage.has(d) ? undefined : `declared capabilities: the ${env.name} backend does not declare storage for ${d}`);
  const nonFinite = env.strictNumerics ? undefined : `the ${env.name} backend declares strictNumerics: false (the inf/NaN checks need IEEE Inf and NaN)`;
  const base = needs('float32', 'int32');
  const scaler = (options: GradScalerOptions = {}) => new GradScaler(env.name, options);
  const leaf = (v: readonly number[], dtype: DTypeName = 'float32', on = dev) => toDevice(vector(v), dtype, on, true);
  const vec = (v: readonly number[], dtype: DTypeName = 'float32', on = dev) => toDevice(vector(v), dtype, on);
  const setGrad = (p: Tensor, v: readonly number[], dtype: DTypeName = p.dtype.name) => {
    p.grad = toDevice(nd(p.shape, v), dtype, p.device);
    return p.grad;
  };
  /** Start the scaler's lazy state on this device (GS-2). */
  const start = (s: GradScaler, on = dev) => s.scale(vec([1], 'float32', on));
  const scaleAndTracker = async (s: GradScaler) => ({ scale: await s.getScaleAsync(), tracker: await s.getGrowthTrackerAsync() });

  /**
   * Run `flags` through step()/update() with one optimizer and compare, after every update, the
   * scale and tracker (device and host mirror), whether the step was skipped, and that a skipped
   * step left the parameters bit-identical, with the oracle's GS-9 trajectory.
   */
  const runScript = async (s: GradScaler, flags: readonly Flag[], init: ScaleState, f: { growth: number; backoff: number; interval: number }, label: string) => {
    const p = leaf([0.5, -1, 2, 0.25]);
    const opt = new RecordingOptimizer([p], 0.5);
    start(s);
    const want = scaleTrajectory(init, flags.map((x) => x !== 'clean'), f.growth, f.backoff, f.interval);
    for (let i = 0; i < flags.length; i++) {
      const where = `${label}, update ${i + 1} (${flags[i]})`;
      const bad = flags[i] === 'inf' ? Infinity : flags[i] === 'nan' ? NaN : 3;
      setGrad(p, [1, -2, bad, 0.5]);
      const before = await values(p);
      const calls = opt.calls;
      const ret = await s.step(opt);
      if (flags[i] === 'clean') {
        expectEqual(`${where}: step() returns optimizer.step()'s result`, ret, 'stepped');
      } else {
        expectEqual(`${where}: a skipped step() returns`, ret, undefined);
        expectEqual(`${where}: optimizer.step() calls`, opt.calls, calls);
        expectSameBits(`${where}: parameters after a skipped step`, before, await values(p));
      }
      s.update();
      const got = await scaleAndTracker(s);
      if (!Object.is(got.scale, want[i]!.scale) || got.tracker !== want[i]!.tracker) {
        fail(`${where}: scale ${fmt(got.scale)}, tracker ${got.tracker}; GS-9 gives scale ${fmt(want[i]!.scale)}, tracker ${want[i]!.tracker}`);
      }
      expectEqual(`${where}: getScale() (the host mirror) vs the device`, s.getScale(), got.scale);
      expectEqual(`${where}: getGrowthTracker() (the host mirror) vs the device`, s.getGrowthTracker(), got.tracker);
    }
    return want.at(-1)!;
  };

  // ---- GS-1: the constructor ----
  add('GS-1/defaults', 'GradScaler', '-', () => {
    const s = scaler();
    expectEqual('isEnabled()', s.isEnabled(), true);
    expectEqual('getScale() before scale() (init_scale)', s.getScale(), 65536);
    expectEqual('getGrowthFactor()', s.getGrowthFactor(), 2);
    expectEqual('getBackoffFactor()', s.getBackoffFactor(), 0.5);
    expectEqual('getGrowthInterval()', s.getGrowthInterval(), 2000);
    expectEqual('getGrowthTracker()', s.getGrowthTracker(), 0);
  }, base);
  add('GS-1/bad-factors', 'GradScaler', '-', () => {
    expectThrows('growthFactor 1', () => scaler({ growthFactor: 1 }), AmpError, 'The growth factor must be > 1.0.');
    expectThrows('backoffFactor 1', () => scaler({ backoffFactor: 1 }), AmpError, 'The backoff factor must be < 1.0.');
    expectThrows('backoffFactor NaN', () => scaler({ backoffFactor: NaN }), AmpError, 'The backoff factor must be < 1.0.');
    const off = scaler({ enabled: false, growthFactor: 0.5, backoffFactor: 2 });
    expectEqual('a disabled scaler does not check its factors', off.isEnabled(), false);
  }, base);

  // ---- GS-2: lazy creation on the device of the first scaled tensor ----
  add('GS-2/lazy-on-device', 'scale', 'float32', async () => {
    const s = scaler({ initScale: 1024 });
    expectEqual('_scale before the first scale()', s._scale, null);
    expectEqual('getScale() before the first scale()', s.getScale(), 1024);
    const y = s.scale(vec([2]).reshape([]));
    const sc = s._scale;
    const tr = s._growthTracker;
    if (!sc || !tr) fail('scale() did not create the scale and the growth tracker');
    expectTrue(`the scale lives on ${dev}`, sc.device.equals(dev), `it is on ${sc.device}`);
    expectTrue(`the growth tracker lives on ${dev}`, tr.device.equals(dev), `it is on ${tr.device}`);
    await expectTensor(sc, { value: scalar(1024), dtype: 'float32' }, { label: 'the scale (float32, 0-dim)', cls: 'exact', device: dev });
    await expectTensor(tr, { value: scalar(0), dtype: 'int32' }, { label: 'the growth tracker (int32, 0-dim)', cls: 'exact', device: dev });
    return expectTensor(y, { value: scalar(2048), dtype: 'float32' }, { label: 'scale(2)', cls: 'exact', device: dev });
  }, base);
  add('GS-2/lazy-on-peer', 'scale', 'float32', async () => {
    const peer = env.peer!;
    const s = scaler({ initScale: 8 });
    s.scale(vec([1], 'float32', peer));
    expectTrue(`the scale lives on the first scaled tensor's device ${peer}`, s._scale!.device.equals(peer), `it is on ${s._scale!.device}`);
    const y = s.scale(vec([1.5, -2]));
    return expectTensor(y, { value: vector([12, -16]), dtype: 'float32' }, { label: `scaling a tensor on ${dev} with the scale on ${peer}`, cls: 'exact', device: dev });
  }, base ?? (env.peer ? undefined : `no second device: the ${env.name} backend has one device`));

  // ---- GS-3: scale() ----
  add('GS-3/tensor-and-gradient', 'scale', 'float32', async () => {
    const s = scaler({ initScale: 3000.5 });
    const x = leaf([0.1, -7, 2.5]);
    const y = s.scale(x);
    await expectTensor(y, { value: map(vector([0.1, -7, 2.5]), (v) => Math.fround(Math.fround(v) * 3000.5)), dtype: 'float32' }, { label: 'scale(x) = x · scale', cls: 'exact', device: dev });
    y.sum().backward();
    return expectTensor(x.grad!, { value: vector([3000.5, 3000.5, 3000.5]), dtype: 'float32' }, { label: 'gradient through scale()', cls: 'exact', device: dev });
  }, base);
  for (const half of ['float16', 'bfloat16'] as const) {
    add(`GS-3/promotion/${half}`, 'scale', half, async () => {
      // A 0-dim half loss times the 0-dim float32 scale is float32; a half tensor with dims stays
      // half, computed in float32 and rounded once (so 65536 · x is not the half-rounded scale · x).
      const s = scaler({ initScale: 1024 });
      const loss = toDevice(scalar(3.5), half, dev);
      await expectTensor(s.scale(loss), { value: scalar(3584), dtype: 'float32' }, { label: `scale(0-dim ${half})`, cls: 'exact', device: dev });
      const v = [0.5, -3, 10.25, 0.099975586];
      const x = toDevice(vector(v.map((a) => roundTo(half, a))), half, dev);
      const want = v.map((a) => roundTo(half, Math.fround(roundTo(half, a) * 1024)));
      return expectTensor(s.scale(x), { value: vector(want), dtype: half }, { label: `scale(${half}[4])`, cls: 'exact', device: dev });
    }, base ?? needsStorage(half));
  }
  add('GS-3/overflow-in-float16', 'scale', 'float16', async () => {
    // PyTorch's f16 output overflows to Inf when x·scale > 65504: that is what step() detects.
    const s = scaler();
    const x = toDevice(vector([1, 0.5, -2]), 'float16', dev);
    return expectTensor(s.scale(x), { value: vector([Infinity, 32768, -Infinity]), dtype: 'float16' }, { label: 'scale(float16) with the default 65536', cls: 'exact', device: dev });
  }, base ?? needsStorage('float16') ?? nonFinite);
  add('GS-3/structures', 'scale', 'float32', async () => {
    const s = scaler({ initScale: 4 });
    const [a, b, c] = [vec([1]), vec([2, 3]), vec([-0.5])];
    const out = s.scale([a, [b, c]] as const) as unknown as [Tensor, [Tensor, Tensor]];
    expectTrue('a nested array keeps its structure', Array.isArray(out) && out.length === 2 && Array.isArray(out[1]) && out[1].length === 2);
    await expectTensor(out[0], { value: vector([4]), dtype: 'float32' }, { label: 'scale([a, [b, c]])[0]', cls: 'exact', device: dev });
    await expectTensor(out[1][0], { value: vector([8, 12]), dtype: 'float32' }, { label: 'scale([a, [b, c]])[1][0]', cls: 'exact', device: dev });
    await expectTensor(out[1][1], { value: vector([-2]), dtype: 'float32' }, { label: 'scale([a, [b, c]])[1][1]', cls: 'exact', device: dev });
    const lazy = s.scale(new Set([a, b]));
    expectTrue('another iterable becomes a lazy map (not an array)', !Array.isArray(lazy) && typeof (lazy as Iterable<Tensor>)[Symbol.iterator] === 'function');
    const items = [...(lazy as Iterable<Tensor>)];
    await expectTensor(items[1]!, { value: vector([8, 12]), dtype: 'float32' }, { label: 'the lazy map\'s second item', cls: 'exact', device: dev });
    expectThrows('scale(5)', () => s.scale(5 as unknown as Tensor), ValueError, 'outputs must be a Tensor or an iterable of Tensors');
    expectThrows('scale([x, 5])', () => s.scale([a, 5] as unknown as Tensor[]), ValueError, 'outputs must be a Tensor or an iterable of Tensors');
  }, base);

  // ---- GS-4/GS-5: unscale() and the per-optimizer stages ----
  add('GS-5/before-scale', 'unscale', '-', async () => {
    const p = leaf([1]);
    setGrad(p, [1]);
    const opt = new RecordingOptimizer([p], 0.1);
    const s = scaler();
    const fix = 'This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.';
    expectThrows('unscale() before scale()', () => s.unscale(opt), AmpError, 'Attempted unscale_ but _scale is None.', fix);
    await expectRejects('step() before scale()', () => s.step(opt), AmpError, 'Attempted step but _scale is None.');
    expectThrows('update() before scale()', () => s.update(), AmpError, 'Attempted update but _scale is None.');
  }, base);
  add('GS-4/stages', 'unscale', '-', async () => {
    const p = leaf([1, 2]);
    const opt = new RecordingOptimizer([p], 0.1);
    const s = scaler({ initScale: 2 });
    start(s);
    setGrad(p, [2, 4]);
    s.unscale(opt);
    expectThrows('a second unscale()', () => s.unscale(opt), AmpError, 'unscale_() has already been called on this optimizer since the last update().');
    await s.step(opt);
    expectThrows('unscale() after step()', () => s.unscale(opt), AmpError, 'unscale_() is being called after step().');
    await expectRejects('a second step()', () => s.step(opt), AmpError, 'step() has already been called since the last update().');
    s.update();
    setGrad(p, [2, 4]);
    s.unscale(opt); // READY again after update()
    await expectTensor(p.grad!, { value: vector([1, 2]), dtype: 'float32' }, { label: 'unscaled after update() reset the stage', cls: 'exact', device: dev });
  }, base);
  for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
    add(`GS-5/unscale-in-place/${dtype}`, 'unscale', dtype, async () => {
      // inv_scale = f32(1/scale) for a scale whose reciprocal is inexact; grads keep their objects.
      const scale = 3000.5;
      const inv = invScale(scale);
      const rng = new Rng(`gs5/${dtype}`);
      const v = Array.from({ length: 6 }, () => roundTo(dtype, rng.uniform(-5000, 5000)));
      const p = leaf(v.map(() => 0), dtype);
      const q = leaf([1, 2], dtype); // no grad: skipped
      const opt = new RecordingOptimizer([p, q], 0.1);
      const s = scaler({ initScale: scale });
      start(s);
      const g = setGrad(p, v);
      s.unscale(opt);
      expectTrue('unscale() works in place (the grad is the same tensor)', p.grad === g);
      expectEqual('a parameter without a grad keeps none', q.grad, null);
      return expectTensor(g, { value: vector(v.map((x) => unscaleValue(x, dtype, inv))), dtype }, { label: `${dtype} grads · f32(1/${scale})`, cls: 'exact', device: dev });
    }, base ?? needs(dtype));
  }
  add('GS-5/float16-grads', 'unscale', 'float16', async () => {
    const f = leaf([1, 2]);
    const h = leaf([1, 2], 'float16');
    const opt = new RecordingOptimizer([f, h], 0.1);
    const s = scaler({ initScale: 4 });
    start(s);
    setGrad(f, [8, 12]);
    setGrad(h, [8, 12]);
    expectThrows('unscale() with a float16 grad', () => s.unscale(opt), ValueError, 'Attempting to unscale FP16 gradients.');
    return expectTensor(f.grad!, { value: vector([8, 12]), dtype: 'float32' }, { label: 'the float32 grad is untouched (the check comes first)', cls: 'exact', device: dev });
  }, base ?? needsStorage('float16'));

  // ---- GS-6: the unscale-and-check composite ----
  const gs6: Array<{ id: string; values: number[][]; found0?: number; scale?: number; layouts?: Layout[]; numerics?: boolean }> = [
    { id: 'finite', values: [[3, -4, 1000.5, 0.125, -0.0, 7], [2, 6]] },
    { id: 'inf', values: [[3, -4, 1000.5], [2, Infinity, 6]], numerics: true },
    { id: '-inf', values: [[-Infinity, -4], [2]], numerics: true },
    { id: 'nan', values: [[3, NaN, 5], [2, 6]], numerics: true },
    { id: 'found-stays-set', values: [[3, 4], [5]], found0: 1 },
    { id: 'inv-scale-1', values: [[3, -4.5, 0.1], [2]], scale: 1 },
    { id: 'views', values: [[3, -4, 1000.5, 0.125, 5, 6], [2, -6, Infinity, 1, 3, 4]], layouts: ['strided', 'transposed'], numerics: true },
    { id: 'empty-grad', values: [[], [2, 6]] },
  ];
  // Each GS-6 case runs through the backend's fused unscaleAndCheck kernel and through the
  // decomposition (core falls back to it for non-contiguous grads, so 'views' checks that too).
  const fusedSkip = (variant: 'fused' | 'decomposed') =>
    (variant === 'fused' && !env.fused.has('unscaleAndCheck') ? `the ${env.name} backend registers no fused unscaleAndCheck kernel (the decomposition is checked by the /decomposed cases)` : undefined);
  for (const variant of ['fused', 'decomposed'] as const) {
    for (const dtype of ['float32', 'float64', 'bfloat16', 'float16'] as const) {
      for (const sc of gs6) {
        add(`GS-6/${dtype}/${sc.id}/${variant}`, 'ampForeachNonFiniteCheckAndUnscale_', dtype, async (): Promise<Measure> => {
          const scale = sc.scale ?? 3000.5;
          const inv = invScale(scale);
          const inputs = sc.values.map((v, k) => {
            const layout = sc.layouts?.[k] ?? 'contiguous';
            const value = layout === 'transposed' ? nd([2, v.length / 2], v.map((x) => roundTo(dtype, x))) : nd([v.length], v.map((x) => roundTo(dtype, x)));
            return { value, dtype, layout } as const;
          });
          const stores = inputs.map(stored);
          const bases = stores.map((st) => toDevice(st.base, dtype, dev));
          const grads = bases.map((b, k) => stores[k]!.view(b));
          const found = toDevice(scalar(sc.found0 ?? 0), 'float32', dev);
          const invT = toDevice(scalar(inv), 'float32', dev);
          withFused(variant, () => ampForeachNonFiniteCheckAndUnscale_(grads, found, invT));
          const anyBad = inputs.some((i) => hasNonFinite(i.value.data));
          await expectTensor(found, { value: scalar(sc.found0 || anyBad ? 1 : 0), dtype: 'float32' }, { label: 'found_inf', cls: 'exact', device: dev });
          for (let k = 0; k < inputs.length; k++) {
            // Through the stored base: the view's elements are unscaled, the others (sentinels) untouched.
            const expectedView = map(inputs[k]!.value, (v) => unscaleValue(v, dtype, inv));
            const expectedBase = stored({ value: expectedView, dtype, layout: inputs[k]!.layout }).base;
            await expectTensor(bases[k]!, { value: expectedBase, dtype }, { label: `grad ${k} (${inputs[k]!.layout}) after unscaling by f32(1/${scale})`, cls: 'exact', device: dev });
          }
          return {};
        }, base ?? needs(dtype) ?? (sc.numerics ? nonFinite : undefined) ?? fusedSkip(variant));
      }
    }
    add(`GS-6/mixed-dtypes/${variant}`, 'ampForeachNonFiniteCheckAndUnscale_', '-', async () => {
      const inv = invScale(3000.5);
      const dtypes = (['float32', 'float64', 'bfloat16', 'float16'] as const).filter((d) => env.compute.has(d));
      const v = [1000.5, -7, 0.3];
      const grads = dtypes.map((d) => vec(v.map((x) => roundTo(d, x)), d));
      const found = vec([0]).reshape([]);
      withFused(variant, () => ampForeachNonFiniteCheckAndUnscale_(grads, found, vec([inv]).reshape([])));
      await expectTensor(found, { value: scalar(0), dtype: 'float32' }, { label: 'found_inf', cls: 'exact', device: dev });
      for (const [k, d] of dtypes.entries()) {
        await expectTensor(grads[k]!, { value: vector(v.map((x) => unscaleValue(roundTo(d, x), d, inv))), dtype: d }, { label: `the ${d} grad in a mixed list`, cls: 'exact', device: dev });
      }
    }, base ?? fusedSkip(variant));
    add(`GS-6/check-before-unscale/${variant}`, 'ampForeachNonFiniteCheckAndUnscale_', 'float32', async () => {
      // The check reads the values before unscaling: 1e38 · 4 overflows but is not flagged.
      const g = vec([1e38, 1]);
      const found = vec([0]).reshape([]);
      withFused(variant, () => ampForeachNonFiniteCheckAndUnscale_([g], found, vec([4]).reshape([])));
      await expectTensor(found, { value: scalar(0), dtype: 'float32' }, { label: 'found_inf', cls: 'exact', device: dev });
      return expectTensor(g, { value: vector([Infinity, 4]), dtype: 'float32' }, { label: 'grad · 4', cls: 'exact', device: dev });
    }, base ?? nonFinite ?? fusedSkip(variant));
  }
  add('GS-6/arguments', 'ampForeachNonFiniteCheckAndUnscale_', '-', () => {
    const g = [vec([1, 2])];
    const found = vec([0]).reshape([]);
    const inv = vec([0.5]).reshape([]);
    ampForeachNonFiniteCheckAndUnscale_([], vec([0, 0]), vec([1, 1])); // an empty list: a no-op before any check
    expectThrows('a 2-element inv_scale', () => ampForeachNonFiniteCheckAndUnscale_(g, found, vec([1, 1])), AmpError, 'inv_scale must be a 1-element tensor.');
    expectThrows('a 2-element found_inf', () => ampForeachNonFiniteCheckAndUnscale_(g, vec([0, 0]), inv), AmpError, 'found_inf must be a 1-element tensor.');
    expectThrows('an int32 found_inf', () => ampForeachNonFiniteCheckAndUnscale_(g, toDevice(scalar(0), 'int32', dev), inv), AmpError, 'found_inf must be a float tensor.');
    if (env.storage.has('float64')) {
      expectThrows('a float64 inv_scale', () => ampForeachNonFiniteCheckAndUnscale_(g, found, toDevice(scalar(0.5), 'float64', dev)), AmpError, 'inv_scale must be a float tensor.');
    }
    expectThrows('an int32 grad', () => ampForeachNonFiniteCheckAndUnscale_([vec([1, 2], 'int32')], found, inv), DTypeError, "_amp_foreach_non_finite_check_and_unscale_ not implemented for 'int32'");
    if (env.peer) {
      expectThrows(`a grad on ${env.peer} with found_inf on ${dev}`, () => ampForeachNonFiniteCheckAndUnscale_([vec([1], 'float32', env.peer!)], found, inv), AmpError, 'scaled_grads must be on the same device');
    }
  }, base);

  // ---- GS-9: the scale-update composite ----
  const gs9: Array<{ id: string; init: number; growth: number; backoff: number; interval: number; flags: string; f64?: boolean }> = [
    { id: 'powers-of-two', init: 1024, growth: 2, backoff: 0.5, interval: 3, flags: 'ccicccccciicccc' },
    { id: 'f32-factors', init: 1000.1, growth: 3, backoff: 0.375, interval: 2, flags: 'cccciccicccc' },
    { id: 'f64-products', init: 12345.678, growth: 1.7, backoff: 0.3, interval: 2, flags: 'ccccicciccccicc', f64: true },
    { id: 'nan-counts-as-found', init: 64, growth: 2, backoff: 0.25, interval: 2, flags: 'ccnccn' },
    { id: 'growth-never-inf', init: 2 ** 127, growth: 2, backoff: 0.5, interval: 1, flags: 'ccicc' },
    { id: 'falls-below-1', init: 2, growth: 2, backoff: 0.5, interval: 100, flags: 'iiiiii' },
  ];
  for (const v of gs9) {
    const numerics = v.flags.includes('i') || v.flags.includes('n') ? nonFinite : undefined;
    const f64 = v.f64 ? needs('float64') : undefined;
    const why = f64 ? `${f64}: GS-9's products of a scale and a factor that is not a float32 value are float64` : undefined;
    add(`GS-9/ampUpdateScale_/${v.id}`, 'ampUpdateScale_', 'float32', async () => {
      const scaleT = vec([v.init]).reshape([]);
      const tracker = toDevice(scalar(0), 'int32', dev);
      let state: ScaleState = { scale: Math.fround(v.init), tracker: 0 };
      for (const [i, flag] of script(v.flags).entries()) {
        const found = vec([flag === 'clean' ? 0 : flag === 'inf' ? 1 : NaN]).reshape([]);
        const ret = ampUpdateScale_(scaleT, tracker, found, v.growth, v.backoff, v.interval);
        expectTrue('ampUpdateScale_ returns the scale tensor', ret === scaleT);
        state = updateScale(state, flag !== 'clean', v.growth, v.backoff, v.interval);
        const [s] = await values(scaleT);
        const [t] = await values(tracker);
        if (!Object.is(s, state.scale) || t !== state.tracker) fail(`${v.id}, update ${i + 1} (found ${flag}): scale ${fmt(s!)}, tracker ${t}; GS-9 gives scale ${fmt(state.scale)}, tracker ${state.tracker}`);
      }
    }, base ?? why ?? numerics);
    add(`GS-9/scaler/${v.id}`, 'update', 'float32', async () => {
      const s = scaler({ initScale: v.init, growthFactor: v.growth, backoffFactor: v.backoff, growthInterval: v.interval });
      await runScript(s, script(v.flags), { scale: Math.fround(v.init), tracker: 0 }, v, v.id);
    }, base ?? why ?? numerics);
  }
  add('GS-9/arguments', 'ampUpdateScale_', '-', () => {
    const sc = vec([8]).reshape([]);
    const tr = toDevice(scalar(0), 'int32', dev);
    const fo = vec([0]).reshape([]);
    expectThrows('a float32 growth tracker', () => ampUpdateScale_(sc, vec([0]).reshape([]), fo, 2, 0.5, 3), AmpError, 'growth_tracker must be an int tensor.');
    expectThrows('an int32 scale', () => ampUpdateScale_(toDevice(scalar(8), 'int32', dev), tr, fo, 2, 0.5, 3), AmpError, 'current_scale must be a float tensor.');
    expectThrows('an int32 found_inf', () => ampUpdateScale_(sc, tr, toDevice(scalar(0), 'int32', dev), 2, 0.5, 3), AmpError, 'found_inf must be a float tensor.');
    expectThrows('a 2-element scale', () => ampUpdateScale_(vec([8, 8]), tr, fo, 2, 0.5, 3), AmpError, 'current_scale must be a 1-element tensor.');
  }, base);

  // ---- GS-7: step() ----
  add('GS-7/steps-with-clean-grads', 'step', 'float32', async () => {
    const p = leaf([0.5, -1, 2, 0.25]);
    const opt = new RecordingOptimizer([p], 0.5);
    const s = scaler({ initScale: 1024 });
    start(s);
    const g = [1, -2, 0.375, 3];
    setGrad(p, g.map((x) => x * 1024));
    const ret = await s.step(opt, 'extra');
    expectEqual('step() returns optimizer.step()\'s result', ret, 'stepped');
    expectEqual('optimizer.step() receives step()\'s extra arguments', JSON.stringify(opt.args), JSON.stringify([['extra']]));
    await expectTensor(p.grad!, { value: vector(g), dtype: 'float32' }, { label: 'grads unscaled by step()', cls: 'exact', device: dev });
    return expectTensor(p.detach(), { value: vector([0.5, -1, 2, 0.25].map((x, i) => Math.fround(x - 0.5 * g[i]!))), dtype: 'float32' }, { label: 'parameters after the step (p − lr·g, g unscaled)', cls: 'exact', device: dev });
  }, base);
  for (const bad of [Infinity, -Infinity, NaN]) {
    add(`GS-7/skips-on-${String(bad).toLowerCase()}`, 'step', 'float32', async () => {
      const p = leaf([0.5, -1, 2, 0.25]);
      const q = leaf([3, 4]);
      const opt = new RecordingOptimizer([p, q], 0.5);
      const s = scaler({ initScale: 1024 });
      start(s);
      setGrad(p, [1024, -2048, bad, 512]);
      setGrad(q, [2048, 1024]);
      const before = [...(await values(p)), ...(await values(q))];
      const ret = await s.step(opt);
      expectEqual('a skipped step() returns', ret, undefined);
      expectEqual('optimizer.step() calls', opt.calls, 0);
      expectSameBits('parameters after a skipped step (bit-identical)', before, [...(await values(p)), ...(await values(q))]);
      await expectTensor(p.grad!, { value: vector([1, -2, bad, 0.5]), dtype: 'float32' }, { label: 'grads stay unscaled; the non-finite one stays', cls: 'exact', device: dev });
      s.update();
      expectEqual('the scale after update()', await s.getScaleAsync(), 512);
    }, base ?? nonFinite);
  }
  add('GS-7/unscale-then-step', 'step', 'float32', async () => {
    const p = leaf([1, 1]);
    const opt = new RecordingOptimizer([p], 1);
    const s = scaler({ initScale: 8 });
    start(s);
    setGrad(p, [8, 16]);
    s.unscale(opt);
    await s.step(opt);
    return expectTensor(p.detach(), { value: vector([0, -1]), dtype: 'float32' }, { label: 'step() after unscale() unscales once', cls: 'exact', device: dev });
  }, base);
  add('GS-7/errors', 'step', '-', async () => {
    const p = leaf([1]);
    const opt = new RecordingOptimizer([p], 0.1);
    const s = scaler();
    start(s);
    setGrad(p, [1]);
    await expectRejects('step() with a closure', () => s.step(opt, () => 1), AmpError, 'Closure use is not currently supported if GradScaler is enabled.');
    const empty = new RecordingOptimizer([leaf([1])], 0.1);
    await expectRejects('step() of an optimizer without grads', () => s.step(empty), AmpError, 'No inf checks were recorded for this optimizer.');
  }, base);

  // ---- GS-8: update() ----
  add('GS-8/new-scale', 'update', 'float32', async () => {
    const p = leaf([1, 2]);
    const opt = new RecordingOptimizer([p], 0.5);
    const s = scaler({ initScale: 4, growthInterval: 10 });
    start(s);
    setGrad(p, [4, 8]);
    await s.step(opt);
    s.update(); // tracker 1
    s.update(123.4);
    expectEqual('the scale after update(123.4) (rounded to float32)', await s.getScaleAsync(), Math.fround(123.4));
    expectEqual('the tracker is untouched by update(number)', await s.getGrowthTrackerAsync(), 1);
    s.update(vec([77]));
    expectEqual('the scale after update(tensor [77])', await s.getScaleAsync(), 77);
    expectEqual('the tracker is untouched by update(tensor)', await s.getGrowthTrackerAsync(), 1);
    const msg = 'new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False.';
    expectThrows('update() with a tensor that requires grad', () => s.update(leaf([2])), AmpError, msg);
    expectThrows('update() with a 2-element tensor', () => s.update(vec([2, 2])), AmpError, msg);
    const other = env.cpu;
    if (other) expectThrows(`update() with a tensor on ${other}`, () => s.update(vec([2], 'float32', other)), AmpError, msg);

    // The stages were reset: a new iteration runs.
    setGrad(p, [77, 154]);
    expectEqual('step() after update(newScale)', await s.step(opt), 'stepped');
  }, base);
  add('GS-8/no-inf-checks', 'update', '-', () => {
    const s = scaler();
    start(s);
    expectThrows('update() with no unscale()/step() since scale()', () => s.update(), AmpError, 'No inf checks were recorded prior to update.');
  }, base);
  add('GS-8/update-after-unscale-without-step', 'update', 'float32', async () => {
    // The device flags decide, with no step() to read them: the host cannot know the new scale.
    const p = leaf([1, 2]);
    const opt = new RecordingOptimizer([p], 0.5);
    const s = scaler({ initScale: 256 });
    start(s);
    setGrad(p, [1, Infinity]);
    s.unscale(opt);
    s.update();
    expectEqual('the scale after an Inf seen only by unscale()', await s.getScaleAsync(), 128);
    expectEqual('the tracker', await s.getGrowthTrackerAsync(), 0);
  }, base ?? nonFinite);

  // ---- GS-10: the default trajectory, short form (a small growth interval) ----
  add('GS-10/overflows-and-growth', 'GradScaler', 'float32', async () => {
    // The defaults but growthInterval 3: losses are scaled by powers of two, so every unscaled
    // gradient is exactly x and every parameter exactly p − lr·x; steps 3, 4 and 8 overflow.
    const s = scaler({ growthInterval: 3 });
    const init = [0.5, -0.25, 1];
    const p = leaf(init);
    const opt = new RecordingOptimizer([p], 2 ** -4);
    const rng = new Rng('gs10');
    const overflow = new Set([3, 4, 8]);
    const flags: boolean[] = [];
    const ref = Float64Array.from(init);
    for (let step = 1; step <= 12; step++) {
      const x = [0, 1, 2].map(() => Math.fround(rng.uniform(-1, 1)));
      const big = overflow.has(step);
      const xs = big ? x.map((v) => Math.fround(v * 1e36)) : x; // 65536 · 1e36 overflows float32
      const before = await values(p);
      const loss = p.mul(vec(xs)).sum();
      s.scale(loss).backward();
      const ret = await s.step(opt);
      s.update();
      opt.inner.zeroGrad();
      flags.push(big);
      const want = scaleTrajectory({ scale: 65536, tracker: 0 }, flags, 2, 0.5, 3).at(-1)!;
      const got = await scaleAndTracker(s);
      if (!Object.is(got.scale, want.scale) || got.tracker !== want.tracker) fail(`step ${step}: scale ${fmt(got.scale)}, tracker ${got.tracker}; expected ${fmt(want.scale)}, ${want.tracker}`);
      if (step === 3) expectEqual('the first overflow takes 65536 to', got.scale, 32768);
      if (big) {
        expectEqual(`step ${step} (overflow) returns`, ret, undefined);
        expectSameBits(`parameters after the skipped step ${step}`, before, await values(p));
      } else {
        expectEqual(`step ${step} returns`, ret, 'stepped');
        x.forEach((v, i) => { ref[i] = Math.fround(ref[i]! - 2 ** -4 * v); });
      }
    }
    expectEqual('optimizer steps taken', opt.calls, 12 - overflow.size);
    return expectTensor(p.detach(), { value: vector(Array.from(ref)), dtype: 'float32' }, { label: 'parameters after 12 steps (9 taken)', cls: 'exact', device: dev });
  }, base ?? nonFinite);

  // ---- GS-11: several optimizers, several devices ----
  add('GS-11/own-inf-only', 'step', 'float32', async () => {
    const p1 = leaf([1, 2]);
    const p2 = leaf([3, 4]);
    const o1 = new RecordingOptimizer([p1], 0.5);
    const o2 = new RecordingOptimizer([p2], 0.5);
    const s = scaler({ initScale: 256, growthInterval: 100 });
    start(s);
    setGrad(p1, [256, 512]);
    setGrad(p2, [256, Infinity]);
    const before2 = await values(p2);
    expectEqual('step() of the optimizer with clean grads', await s.step(o1), 'stepped');
    expectEqual('step() of the optimizer with an Inf', await s.step(o2), undefined);
    expectSameBits('the skipped optimizer\'s parameters', before2, await values(p2));
    s.update();
    expectEqual('one update() backs off once', await s.getScaleAsync(), 128);
    expectEqual('and resets the tracker', await s.getGrowthTrackerAsync(), 0);
    setGrad(p1, [128, 128]);
    setGrad(p2, [128, 256]);
    expectEqual('next iteration, optimizer 1', await s.step(o1), 'stepped');
    expectEqual('next iteration, optimizer 2', await s.step(o2), 'stepped');
    s.update();
    expectEqual('a clean update() counts once', await s.getGrowthTrackerAsync(), 1);
    await expectTensor(p1.detach(), { value: vector([0, 0.5]), dtype: 'float32' }, { label: 'optimizer 1 stepped twice', cls: 'exact', device: dev });
    return expectTensor(p2.detach(), { value: vector([2.5, 3]), dtype: 'float32' }, { label: 'optimizer 2 stepped once', cls: 'exact', device: dev });
  }, base ?? nonFinite);
  add('GS-11/two-devices', 'step', 'float32', async () => {
    const peer = env.peer!;
    const a = leaf([1, 2]);
    const b = leaf([3, 4], 'float32', peer);
    const opt = new RecordingOptimizer([a, b], 1);
    const s = scaler({ initScale: 16, growthInterval: 100 });
    start(s);
    setGrad(a, [16, 32]);
    setGrad(b, [NaN, 16]);
    expectEqual(`step() with a NaN only on ${peer}`, await s.step(opt), undefined);
    await expectTensor(a.grad!, { value: vector([1, 2]), dtype: 'float32' }, { label: `grads on ${dev} unscaled`, cls: 'exact', device: dev });
    s.update();
    expectEqual('the scale after the NaN on the other device', await s.getScaleAsync(), 8);
    setGrad(a, [8, 8]);
    setGrad(b, [16, 8]);
    expectEqual('a clean step over both devices', await s.step(opt), 'stepped');
    s.update();
    await expectTensor(a.detach(), { value: vector([0, 1]), dtype: 'float32' }, { label: `parameters on ${dev}`, cls: 'exact', device: dev });
    await expectTensor(b.detach(), { value: vector([1, 3]), dtype: 'float32' }, { label: `parameters on ${peer}`, cls: 'exact', device: peer });
    return expectTensor(b.detach(), { value: vector([1, 3]), dtype: 'float32' }, { label: `parameters on ${peer}`, cls: 'exact', device: peer });
  }, base ?? nonFinite ?? (env.peer ? undefined : `no second device: the ${env.name} backend has one device`));

  // Two update() paths move a value between devices synchronously: a new scale given on another
  // device of the type, and a found-inf flag that unscale() left on another device with no step()
  // to bring it to the host. A backend without synchronous reads cannot do that transfer: core
  // must raise its "needs an async read" error (as autograd does across devices) and not hang.
  const noSync = 'needs an async read';
  const peerSkip = env.peer ? undefined : `no second device: the ${env.name} backend has one device`;
  add('GS-8/new-scale-on-other-device', 'update', 'float32', async () => {
    const peer = env.peer!;
    const s = scaler({ initScale: 4 });
    start(s);
    const next = vec([9], 'float32', peer);
    if (!env.syncRead) {
      expectThrows(`update(tensor on ${peer}) on a backend without synchronous reads`, () => s.update(next), Error, noSync);
      return;
    }
    s.update(next);
    expectEqual(`the scale after update(tensor on ${peer})`, await s.getScaleAsync(), 9);
  }, base ?? peerSkip);
  add('GS-8/unscale-only-flag-on-other-device', 'update', 'float32', async () => {
    const peer = env.peer!;
    const s = scaler({ initScale: 8 });
    start(s); // the scale lives on this device
    const c = leaf([1], 'float32', peer);
    const opt = new RecordingOptimizer([c], 1);
    setGrad(c, [Infinity]);
    s.unscale(opt);
    if (!env.syncRead) {
      expectThrows(`update() with an unread found-inf flag on ${peer}, on a backend without synchronous reads`, () => s.update(), Error, noSync);
      return;
    }
    s.update();
    expectEqual(`the scale after an Inf on ${peer} seen only by unscale()`, await s.getScaleAsync(), 4);
    expectEqual('the tracker', await s.getGrowthTrackerAsync(), 0);
  }, base ?? nonFinite ?? peerSkip);

  // ---- GS-12: getters, setters, the host mirror ----
  add('GS-12/setters', 'GradScaler', 'float32', async () => {
    const s = scaler({ initScale: 10 });
    s.setGrowthFactor(4);
    s.setBackoffFactor(0.25);
    s.setGrowthInterval(1);
    expectEqual('getGrowthFactor()', s.getGrowthFactor(), 4);
    expectEqual('getBackoffFactor()', s.getBackoffFactor(), 0.25);
    expectEqual('getGrowthInterval()', s.getGrowthInterval(), 1);
    await runScript(s, script('cc'), { scale: 10, tracker: 0 }, { growth: 4, backoff: 0.25, interval: 1 }, 'new factors');
  }, base);
  add('GS-12/mirror-after-tensor-update', 'getScale', 'float32', async () => {
    const p = leaf([1]);
    const opt = new RecordingOptimizer([p], 0.5);
    const s = scaler({ initScale: 4, growthInterval: 10 });
    start(s);
    s.update(vec([77]).reshape([]));
    if (env.syncRead) expectEqual('getScale() after update(tensor) (a sync read)', s.getScale(), 77);
    else expectThrows('getScale() after update(tensor) on a device without sync reads', () => s.getScale(), AmpError, 'getScaleAsync');
    expectEqual('getScaleAsync()', await s.getScaleAsync(), 77);
    setGrad(p, [77]);
    await s.step(opt);
    s.update();
    expectEqual('getScale() after the next step() and update()', s.getScale(), 77);
    expectEqual('getGrowthTracker()', s.getGrowthTracker(), 1);
  }, base);

  // ---- GS-13: state dict ----
  add('GS-13/round-trip', 'stateDict', 'float32', async () => {
    const f = { growth: 3, backoff: 0.375, interval: 3 };
    const s1 = scaler({ initScale: 1000.1, growthFactor: 3, backoffFactor: 0.375, growthInterval: 3 });
    const mid = await runScript(s1, script('cciccc'), { scale: Math.fround(1000.1), tracker: 0 }, f, 'before saving');
    const sd = s1.stateDict();
    const sdAsync = await s1.stateDictAsync();
    expectEqual('stateDict() keys', Object.keys(sd).sort().join(','), '_growthTracker,backoffFactor,growthFactor,growthInterval,scale');
    expectEqual('stateDict() vs stateDictAsync()', JSON.stringify(sd), JSON.stringify(sdAsync));
    const want = { scale: mid.scale, growthFactor: 3, backoffFactor: 0.375, growthInterval: 3, _growthTracker: mid.tracker };
    for (const [k, v] of Object.entries(want)) expectEqual(`stateDict().${k}`, (sd as Record<string, number>)[k], v);
    const s2 = scaler();
    s2.loadStateDict(sd);
    expectEqual('getScale() of a fresh scaler after loadStateDict()', s2.getScale(), mid.scale);
    expectEqual('getGrowthTracker() after loadStateDict()', s2.getGrowthTracker(), mid.tracker);
    expectEqual('getGrowthInterval() after loadStateDict()', s2.getGrowthInterval(), 3);
    const s3 = scaler({ initScale: 5 });
    start(s3); // device tensors already exist: loading fills them
    s3.loadStateDict(sd);
    const got3 = await scaleAndTracker(s3);
    expectEqual('the device scale after loadStateDict()', got3.scale, mid.scale);
    expectEqual('the device tracker after loadStateDict()', got3.tracker, mid.tracker);
    // Both continue exactly like the original.
    const rest = script('ccicc');
    await runScript(s2, rest, mid, f, 'loaded into a fresh scaler');
    await runScript(s3, rest, mid, f, 'loaded into a started scaler');
  }, base ?? nonFinite);
  add('GS-13/disabled-and-empty', 'stateDict', '-', () => {
    const off = scaler({ enabled: false });
    expectEqual('stateDict() of a disabled scaler', JSON.stringify(off.stateDict()), '{}');
    off.loadStateDict({ scale: 3, growthFactor: 2, backoffFactor: 0.5, growthInterval: 1, _growthTracker: 0 });
    expectEqual('loadStateDict() is a no-op when disabled', off.getScale(), 1);
    expectThrows('loadStateDict({}) when enabled', () => scaler().loadStateDict({}), AmpError, 'The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.');
  }, base);

  // ---- enabled: false ----
  add('disabled/pass-through', 'GradScaler', 'float32', async () => {
    const s = scaler({ enabled: false });
    const x = vec([1, 2]);
    expectTrue('scale(x) returns x itself', s.scale(x) === x);
    const list = [x];
    expectTrue('scale([x]) returns its argument itself', s.scale(list) === list);
    const p = leaf([1, 2]);
    const opt = new RecordingOptimizer([p], 0.5);
    const g = setGrad(p, [4, 8]);
    s.unscale(opt);
    expectTrue('unscale() leaves the grad tensor', p.grad === g);
    await expectTensor(g, { value: vector([4, 8]), dtype: 'float32' }, { label: 'grad after a disabled unscale()', cls: 'exact', device: dev });
    const closure = () => 1;
    expectEqual('step() returns optimizer.step()\'s result', await s.step(opt, closure), 'stepped');
    expectTrue('step() passes its arguments on, a closure included', opt.args[0]?.[0] === closure);
    s.update();
    s.update(5);
    expectEqual('getScale()', s.getScale(), 1);
    expectEqual('getScaleAsync()', await s.getScaleAsync(), 1);
    expectEqual('getGrowthTracker()', s.getGrowthTracker(), 0);
    expectEqual('isEnabled()', s.isEnabled(), false);
    expectEqual('_scale', s._scale, null);
    return expectTensor(p.detach(), { value: vector([-1, -2]), dtype: 'float32' }, { label: 'parameters stepped with the unscaled grads', cls: 'exact', device: dev });
  }, base);
  return cases;
}
