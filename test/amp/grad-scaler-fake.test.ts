// GradScaler on a GPU-like device: the 'fake' backend has no synchronous reads, so everything the
// scaler does on the device must be queued, and step() must await its one read.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { AmpError, GradScaler, float32, registerBackend, getBackend, int32, manualSeed, randn, tensor, type Tensor } from '@core/tensor';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from '../helpers/assert.js';
import { createFakeBackend, registerFakeBackend } from '../helpers/fake-backend.js';

beforeAll(() => {
  registerFakeBackend();
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function bytes(params: readonly Tensor[]): Promise<string[]> {
  return Promise.all(params.map(async (p) => Buffer.from((await p.data()).buffer).toString('hex')));
}

function mockOptimizer(params: Tensor[]) {
  let steps = 0;
  return { paramGroups: [{ params }], step: () => { steps++; return steps; }, get steps() { return steps; } };
}

describe('GradScaler on a device without synchronous reads', () => {
  it('GS-2/GS-7/GS-14: the scale lives on fake:0; step awaits the one read; update and getScale read nothing', async () => {
    manualSeed(3);
    const fake = getBackend('fake');
    expect(fake.readSync).toBeUndefined();
    const model = new nn.Sequential(new nn.Linear(4, 3), new nn.ReLU(), new nn.Linear(3, 1)).to('fake');
    const x = randn([8, 4]).to('fake');
    const y = randn([8, 1]).to('fake');
    const opt = new SGD(model.parameters(), { lr: 0.1 });
    const scaler = new GradScaler('fake', { initScale: 256, growthInterval: 2 });
    expect(scaler.isEnabled()).toBe(true);
    const read = vi.spyOn(fake, 'read');
    const trajectory: number[] = [];
    for (let step = 0; step < 6; step++) {
      opt.zeroGrad();
      let loss = F.mseLoss(model.forward(x), y);
      if (step === 3) loss = loss.mul(Infinity);
      const before = await bytes(model.parameters());
      const r0 = read.mock.calls.length;
      scaler.scale(loss).backward();
      if (step === 0) {
        expect(scaler._scale!.device.toString()).toBe('fake:0');
        expect([scaler._scale!.dtype, scaler._growthTracker!.dtype]).toEqual([float32, int32]);
      }
      const pending = scaler.step(opt);
      expect(pending).toBeInstanceOf(Promise);
      await pending;
      scaler.update();
      trajectory.push(scaler.getScale());
      expect(read.mock.calls.length - r0).toBe(1);
      const after = await bytes(model.parameters());
      if (step === 3) expect(after).toEqual(before);
      else expect(after).not.toEqual(before);
    }
    expect(trajectory).toEqual([256, 512, 512, 256, 256, 512]);
    expect(await scaler.getScaleAsync()).toBe(512);
  });

  it('GS-12: a stale mirror makes getScale() ask for getScaleAsync(); the next step() refreshes it within its one read', async () => {
    const fake = getBackend('fake');
    const scaler = new GradScaler('fake', { initScale: 64 });
    const p = tensor([1, 2], { device: 'fake', requiresGrad: true });
    const opt = mockOptimizer([p]);
    scaler.scale(p.sum().mul(Infinity)).backward();
    scaler.unscale(opt); // found_inf stays on the device:
    scaler.update(); // the host can't know the new scale
    const e = expectError(() => scaler.getScale(), AmpError, 'await scaler.getScaleAsync()');
    expect(e.message).toContain('fake:0');
    expectError(() => scaler.getGrowthTracker(), AmpError, 'await scaler.getGrowthTrackerAsync()');
    expectError(() => scaler.stateDict(), AmpError);
    expect(await scaler.getScaleAsync()).toBe(32);
    expect(await scaler.getGrowthTrackerAsync()).toBe(0);
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([32, 0]);
    expect(await scaler.stateDictAsync()).toEqual({ scale: 32, growthFactor: 2, backoffFactor: 0.5, growthInterval: 2000, _growthTracker: 0 });

    scaler.update(tensor(1000, { device: 'fake' })); // stale again
    expectError(() => scaler.getScale(), AmpError, 'getScaleAsync');
    const read = vi.spyOn(fake, 'read');
    p.grad = null;
    scaler.scale(p.sum()).backward();
    await scaler.step(opt);
    expect(read).toHaveBeenCalledTimes(1); // flag, scale and tracker in one read
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([1000, 0]);
    scaler.update();
    expect([scaler.getScale(), scaler.getGrowthTracker()]).toEqual([1000, 1]);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('GS-8: a tensor new scale must be on the scaler\'s device type', () => {
    const scaler = new GradScaler('fake');
    scaler.scale(tensor([1], { device: 'fake' }));
    expectError(() => scaler.update(tensor(2)), AmpError,
      'new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False.');
  });

  it('GS-5/GS-11: grads on two devices get per-device inv_scale and found_inf; one update sums them', async () => {
    const scaler = new GradScaler('fake', { initScale: 8, growthInterval: 1 });
    const a = tensor([16, 8], { device: 'fake:0' });
    const b = tensor([8], { device: 'fake:1' });
    a.grad = tensor([16, 8], { device: 'fake:0' });
    b.grad = tensor([Infinity], { device: 'fake:1' });
    const opt = mockOptimizer([a, b]);
    scaler.scale(tensor(1, { device: 'fake:0' }));
    const fake = getBackend('fake');
    const read = vi.spyOn(fake, 'read');
    expect(await scaler.step(opt)).toBeUndefined();
    expect(read).toHaveBeenCalledTimes(2); // one flag per device, read together
    expect(opt.steps).toBe(0);
    expect(Array.from(await a.grad.data())).toEqual([2, 1]); // unscaled on fake:0
    expect(Array.from(await b.grad!.data())).toEqual([Infinity]);
    scaler.update();
    expect([scaler.getScale(), await scaler.getScaleAsync()]).toEqual([4, 4]);
    a.grad = tensor([4], { device: 'fake:0' });
    b.grad = tensor([4], { device: 'fake:1' });
    expect(await scaler.step(opt)).toBe(1);
    expect(Array.from(await b.grad.data())).toEqual([1]); // inv_scale reached fake:1 from the host mirror
    scaler.update();
    expect([scaler.getScale(), await scaler.getScaleAsync()]).toEqual([8, 8]);
  });

  it('GS-3: scaling outputs on another device than the scale uses the host-known value', () => {
    const scaler = new GradScaler('fake', { initScale: 4 });
    scaler.scale(tensor(1, { device: 'fake:0' }));
    const [onCpu, onFake1] = scaler.scale([tensor([1, 2]), tensor([3], { device: 'fake:1' })]);
    expect(Array.from(onCpu.dataSync())).toEqual([4, 8]);
    expect(onFake1.device.toString()).toBe('fake:1');
  });

  it('GS-9: on a device without float64 compute the factors round to f32 first, and the host mirror follows', async () => {
    const base = createFakeBackend({ name: 'narrow' });
    registerBackend({
      name: 'narrow',
      priority: 1,
      create: () => ({ ...base, capabilities: { ...base.capabilities, dtypes: { ...base.capabilities.dtypes, float64: { storage: true, compute: false } } } }),
    });
    const f32 = Math.fround;
    const growth = 1.3;
    const backoff = 0.3;
    const scaler = new GradScaler('narrow', { initScale: 1000, growthFactor: growth, backoffFactor: backoff, growthInterval: 2 });
    const p = tensor([1, 2], { device: 'narrow', requiresGrad: true });
    const opt = mockOptimizer([p]);
    let expected = f32(1000);
    let differs = 0;
    for (let i = 0; i < 40; i++) {
      p.grad = null;
      const overflow = i % 3 === 2;
      scaler.scale(overflow ? p.sum().mul(Infinity) : p.sum()).backward();
      await scaler.step(opt);
      scaler.update();
      const factor = overflow ? backoff : i % 3 === 1 ? growth : 1; // clean pairs grow on their 2nd update
      if (factor !== 1) {
        if (f32(expected * f32(factor)) !== f32(expected * factor)) differs++;
        expected = f32(expected * f32(factor));
      }
      expect(scaler.getScale(), `iteration ${i}`).toBe(expected);
      expect(await scaler.getScaleAsync(), `device at ${i}`).toBe(expected);
    }
    expect(differs).toBeGreaterThan(0);
  });
});
