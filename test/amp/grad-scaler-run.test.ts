// GradScaler in training loops (GS-* end to end): injected overflows give exactly the scale
// trajectory and skipped steps GS-9/GS-10 imply, skipped steps leave every parameter bit-identical,
// the only device read per step is step()'s, and the host mirror of the scale never drifts.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { AdamW, SGD } from '@core/optim';
import { GradScaler, getBackend, type Backend, manualSeed, randn, tensor, type Tensor } from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { prng } from '../helpers/random.js';

/** The CPU backend, typed with its readSync (which it always has), for spying. */
const cpuBackend = () => getBackend('cpu') as Backend & { readSync: NonNullable<Backend['readSync']> };

const f32 = (x: number) => Math.fround(x);

/** Raw bytes of every parameter, to compare bit for bit. */
function snapshot(params: readonly Tensor[]): Uint8Array[] {
  return params.map((p) => new Uint8Array(p.dataSync().slice().buffer));
}

function expectBitIdentical(a: Uint8Array[], b: Uint8Array[], what: string): void {
  expect(a.length).toBe(b.length);
  a.forEach((bytes, i) => expect(Buffer.from(bytes).equals(Buffer.from(b[i]!)), `${what}: param ${i}`).toBe(true));
}

// initScale 1024, growth ×2 every 3 clean updates, backoff ½; overflows at steps 2, 3 and 9.
const OVERFLOW = new Set([2, 3, 9]);
const STEPS = 13;
const SCALES = [1024, 1024, 512, 256, 256, 256, 512, 512, 512, 256, 256, 256, 512];
const TRACKERS = [1, 2, 0, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('scripted runs with injected overflows', () => {
  it('GS-7/GS-9: SGD (momentum): the exact scale trajectory, skipped steps, untouched params, one read per step', async () => {
    manualSeed(7);
    const model = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 1));
    const twin = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 1));
    twin.loadStateDict(model.stateDict());
    const x = randn([16, 4]);
    const y = randn([16, 1]);
    const opt = new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    const twinOpt = new SGD(twin.parameters(), { lr: 0.05, momentum: 0.9 });
    const scaler = new GradScaler('cpu', { initScale: 1024, growthInterval: 3 });
    const optStep = vi.spyOn(opt, 'step');
    const cpu = cpuBackend();
    const read = vi.spyOn(cpu, 'read');
    const readSync = vi.spyOn(cpu, 'readSync');
    const reads = () => [read.mock.calls.length, readSync.mock.calls.length];

    const scales: number[] = [];
    const trackers: number[] = [];
    const skipped: number[] = [];
    for (let step = 0; step < STEPS; step++) {
      opt.zeroGrad();
      let loss = F.mseLoss(model.forward(x), y);
      // Inf at 2 and 9 (1e38 · scale overflows f32), NaN at 3.
      if (OVERFLOW.has(step)) loss = loss.mul(step === 3 ? Number.NaN : 1e38);
      const before = snapshot(model.parameters());
      const r0 = reads();
      scaler.scale(loss).backward();
      scaler.unscale(opt);
      expect(reads(), 'scale/backward/unscale read nothing').toEqual(r0);
      const stepsBefore = optStep.mock.calls.length;
      expect(await scaler.step(opt)).toBeUndefined(); // SGD.step() returns undefined; a skipped step too
      const ran = optStep.mock.calls.length > stepsBefore;
      expect(reads(), 'step reads once').toEqual([r0[0]! + 1, r0[1]]);
      scaler.update();
      expect(reads(), 'update reads nothing').toEqual([r0[0]! + 1, r0[1]]);
      scales.push(scaler.getScale());
      trackers.push(scaler.getGrowthTracker());
      expect(reads(), 'getScale/getGrowthTracker use the host mirror').toEqual([r0[0]! + 1, r0[1]]);

      if (!ran) {
        skipped.push(step);
        expectBitIdentical(snapshot(model.parameters()), before, `skipped step ${step}`);
      } else {
        // The twin trains without scaling on the clean steps only; power-of-two scales are exact.
        twinOpt.zeroGrad();
        F.mseLoss(twin.forward(x), y).backward();
        twinOpt.step();
      }
      expectBitIdentical(snapshot(model.parameters()), snapshot(twin.parameters()), `step ${step} vs the unscaled twin`);
    }
    expect(skipped).toEqual([...OVERFLOW]);
    expect(scales).toEqual(SCALES);
    expect(trackers).toEqual(TRACKERS);
    expect(await scaler.getScaleAsync()).toBe(512);
  });

  it('GS-7/GS-9: AdamW with an fp16 activation: a loss ×1e5 overflows fp16 gradients; skipped steps leave params and moments alone', async () => {
    manualSeed(11);
    const l1 = new nn.Linear(6, 12);
    const l2 = new nn.Linear(12, 2);
    const forward = (x: Tensor) => l2.forward(l1.forward(x).half().relu().float());
    const params = [...l1.parameters(), ...l2.parameters()];
    const x = randn([8, 6]);
    const y = randn([8, 2]);
    const opt = new AdamW(params, { lr: 1e-2 });
    const scaler = new GradScaler('cpu', { initScale: 1024, growthInterval: 3 });
    const optStep = vi.spyOn(opt, 'step');
    const scales: number[] = [];
    const skipped: number[] = [];
    for (let step = 0; step < STEPS; step++) {
      opt.zeroGrad();
      let loss = F.mseLoss(forward(x), y);
      if (OVERFLOW.has(step)) loss = loss.mul(1e5); // finite in f32; its gradient overflows at the f16 activation
      const before = snapshot(params);
      const moments = params.map((p) => opt.state.get(p));
      const adamSteps = moments.map((m) => m?.step);
      const momentBytes = snapshot(moments.flatMap((m) => (m ? [m.expAvg, m.expAvgSq] : [])));
      scaler.scale(loss).backward();
      expect(Number.isFinite((await loss.item()) * scaler.getScale())).toBe(true);
      const stepsBefore = optStep.mock.calls.length;
      await scaler.step(opt);
      const ran = optStep.mock.calls.length > stepsBefore;
      scaler.update();
      scales.push(scaler.getScale());
      if (!ran) {
        skipped.push(step);
        expectBitIdentical(snapshot(params), before, `skipped step ${step}`);
        expect(params.map((p) => opt.state.get(p)?.step)).toEqual(adamSteps);
        expectBitIdentical(snapshot(moments.flatMap((m) => (m ? [m.expAvg, m.expAvgSq] : []))), momentBytes, `moments at ${step}`);
      } else {
        expect(snapshot(params).some((b, i) => !Buffer.from(b).equals(Buffer.from(before[i]!)))).toBe(true);
      }
    }
    expect(skipped).toEqual([...OVERFLOW]);
    expect(scales).toEqual(SCALES);
  });
});

describe('GS-10 with the defaults', () => {
  it('GS-10: 65536 grows ×2 on exactly the 2000th consecutive clean update, then the tracker restarts', async () => {
    const scaler = new GradScaler('cpu');
    const p = tensor([1, 2], { requiresGrad: true });
    const opt = new SGD([p], { lr: 0 });
    const iterate = async (overflow = false) => {
      opt.zeroGrad();
      scaler.scale(overflow ? p.sum().mul(Infinity) : p.sum()).backward();
      const r = await scaler.step(opt);
      scaler.update();
      return r;
    };
    expect(await iterate(true)).toBeUndefined();
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([32768, 0]);
    scaler.update(65536);
    for (let i = 1; i < 2000; i++) await iterate();
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([65536, 1999]);
    expect([await scaler.getScaleAsync(), await scaler.getGrowthTrackerAsync()]).toEqual([65536, 1999]);
    await iterate();
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([131072, 0]);
    expect([await scaler.getScaleAsync(), await scaler.getGrowthTrackerAsync()]).toEqual([131072, 0]);
    await iterate(true);
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([65536, 0]);
  });
});

describe('GS-12 the host mirror', () => {
  it('GS-12: over a long random run with f64-sensitive factors, getScale() = the device = an independent GS-9 model', async () => {
    const growth = 1.7;
    const backoff = 0.3;
    const interval = 4;
    const scaler = new GradScaler('cpu', { initScale: 3000, growthFactor: growth, backoffFactor: backoff, growthInterval: interval });
    const p = tensor([1, -2, 3], { requiresGrad: true });
    const opt = new SGD([p], { lr: 0 });
    const readSync = vi.spyOn(cpuBackend(), 'readSync');
    const rand = prng(2024);
    let model = { scale: f32(3000), tracker: 0 };
    const gs9 = (found: boolean) => {
      if (found) return { scale: f32(model.scale * backoff), tracker: 0 };
      const s = model.tracker + 1;
      if (s !== interval) return { scale: model.scale, tracker: s };
      const c = f32(model.scale * growth);
      return { scale: Number.isFinite(c) ? c : model.scale, tracker: 0 };
    };
    let staleEvents = 0;
    let f64Mattered = 0;
    for (let i = 0; i < 400; i++) {
      opt.zeroGrad();
      const overflow = rand() < 0.3;
      scaler.scale(overflow ? p.sum().mul(Infinity) : p.sum()).backward();
      const kind = rand();
      if (kind < 0.05) {
        const v = 1 + rand() * 1e4;
        await scaler.step(opt);
        scaler.update(v); // the host knows a number
        model = { scale: f32(v), tracker: model.tracker };
      } else if (kind < 0.1) {
        const v = 1 + rand() * 1e4;
        await scaler.step(opt);
        scaler.update(tensor(v)); // on the device only: stale until read
        model = { scale: f32(v), tracker: model.tracker };
        staleEvents++;
      } else if (kind < 0.15) {
        scaler.unscale(opt); // no step: the host never sees found_inf
        scaler.update();
        model = gs9(overflow);
        staleEvents++;
      } else {
        await scaler.step(opt);
        scaler.update();
        const next = gs9(overflow);
        if (overflow && next.scale !== f32(model.scale * f32(backoff))) f64Mattered++;
        if (!overflow && next.tracker === 0 && next.scale !== f32(model.scale * f32(growth))) f64Mattered++;
        model = next;
      }
      expect([scaler.getScale(), scaler.getGrowthTracker()], `iteration ${i}`).toEqual([model.scale, model.tracker]);
      expect([await scaler.getScaleAsync(), await scaler.getGrowthTrackerAsync()], `device at ${i}`).toEqual([model.scale, model.tracker]);
    }
    expect(staleEvents).toBeGreaterThan(10);
    expect(f64Mattered).toBeGreaterThan(5); // the run does exercise f64-vs-f32 rounding
    // Only stale mirrors were read synchronously (one scale and at most one tracker read each).
    expect(readSync.mock.calls.length).toBeLessThanOrEqual(2 * staleEvents);
    expect(readSync.mock.calls.length).toBeGreaterThanOrEqual(staleEvents);
  });
});
