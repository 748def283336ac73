// The beginner-facing parts of mixed precision: ampConfig's one flag, anomaly mode, and the
// stability guard that names the op that went non-finite and falls back fp16 → bf16 → fp32.
import '@core/backend-cpu';
import { createCpuBackend } from '@core/backend-cpu';
import { F, nn } from '@core/nn';
import {
  ampConfig, AnomalyError, autocast, autocastPolicy, bfloat16, detectAnomaly, DTypeError, float16, noGrad, randint, randn,
  getBackend, registerAutocastPolicy, registerBackend, StabilityGuard, tensor, TensorError, type Backend,
} from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { expectError, here } from '../helpers/assert.js';

// A device type whose backend computes float16 but not bfloat16, with the cuda-like policy table.
registerBackend({
  name: 'halfonly',
  priority: 1,
  create: (): Backend<unknown> => {
    const cpu = createCpuBackend();
    const { bfloat16: _dropped, ...dtypes } = cpu.capabilities.dtypes;
    // No autocastSpeed: a backend that does not say counts as faster wherever it computes.
    const capabilities = { ...cpu.capabilities, dtypes: { ...dtypes, bfloat16: { storage: true, compute: false } }, autocastSpeed: undefined };
    return { ...cpu, name: 'halfonly', capabilities };
  },
});

/** A cpu backend under another name that reports how fast autocast is there. */
function speedDevice(name: string, autocastSpeed: Backend['capabilities']['autocastSpeed']): void {
  registerBackend({
    name,
    priority: 1,
    create: (): Backend<unknown> => {
      const cpu = createCpuBackend();
      return { ...cpu, name, capabilities: { ...cpu.capabilities, autocastSpeed } };
    },
  });
  registerAutocastPolicy(name, autocastPolicy('cpu')!);
}
speedDevice('slowhalf', { bfloat16: { faster: false, reason: 'no AVX512-BF16 here' }, float16: { faster: false, reason: 'no float16 arithmetic' } });
speedDevice('fastbf16', { bfloat16: { faster: true, reason: 'vdpbf16ps' }, float16: { faster: false, reason: 'no float16 arithmetic' } });
speedDevice('fastfp16', { bfloat16: { faster: false, reason: 'bf16 widens' } });
registerAutocastPolicy('halfonly', {
  defaultDtype: float16, allowedDtypes: [float16, bfloat16], lowerPrecision: ['matmul', 'linear'], fp32: ['crossEntropy'],
  fp32FirstArg: [], promote: [], banned: {},
});

describe('ampConfig: one flag', () => {
  it('auto picks bf16 without a scaler where the backend computes it and calls it faster, and says why', () => {
    const c = ampConfig('fastbf16');
    expect(c).toMatchObject({ mode: 'bf16', enabled: true, dtype: bfloat16, useScaler: false });
    expect(c.reason).toMatch(/bf16 on fastbf16/);
  });

  it('auto falls back to off where autocast is not faster than float32, naming why for each dtype; explicit modes still work', () => {
    const c = ampConfig('slowhalf');
    expect(c).toMatchObject({ mode: 'off', enabled: false, dtype: null, useScaler: false });
    expect(c.reason).toBe('amp auto → off on slowhalf, training in float32: bfloat16 is not faster than float32 there (no AVX512-BF16 here); float16 is not faster either (no float16 arithmetic)');
    expect(ampConfig('slowhalf', 'bf16')).toMatchObject({ mode: 'bf16', enabled: true, dtype: bfloat16 });
    expect(ampConfig('slowhalf', 'fp16')).toMatchObject({ mode: 'fp16', enabled: true, useScaler: true });
    // A dtype the backend leaves out counts as faster: fp16 with a scaler, saying why not bf16.
    expect(ampConfig('fastfp16')).toMatchObject({ mode: 'fp16', useScaler: true, reason: expect.stringContaining('bfloat16 is not faster than float32 there (bf16 widens)') });
  });

  it('auto on the cpu follows what the cpu backend reports', () => {
    const speed = getBackend('cpu').capabilities.autocastSpeed?.bfloat16;
    const c = ampConfig('cpu');
    expect(c.mode).toBe(speed === undefined || speed.faster ? 'bf16' : 'off');
    if (speed && !speed.faster) expect(c.reason).toContain(speed.reason);
  });

  it('fp16 asks for a GradScaler; off is float32', () => {
    expect(ampConfig('cpu', 'fp16')).toMatchObject({ mode: 'fp16', dtype: float16, useScaler: true });
    expect(ampConfig('cpu', 'off')).toMatchObject({ mode: 'off', enabled: false, dtype: null, useScaler: false });
  });

  it('auto falls back to fp16 with scaling where bfloat16 is not computed', () => {
    const c = ampConfig('halfonly');
    expect(c).toMatchObject({ mode: 'fp16', useScaler: true });
    expect(c.reason).toMatch(/no bfloat16/);
  });

  it('an explicit dtype the device cannot do is a DTypeError naming what to use', () => {
    expectError(() => ampConfig('halfonly', 'bf16'), DTypeError, "cannot autocast to bfloat16; use 'fp16' or 'auto'");
    expect(() => ampConfig('cpu', 'fp8' as never)).toThrow(/mode must be auto, bf16, fp16 or off/);
  });
});

describe('anomaly mode', () => {
  it('names the first op that turned finite values into Inf, and the line that ran it', () => {
    const x = tensor([1, 100, 1000]);
    let error: unknown;
    let line = 0;
    try {
      detectAnomaly(() => {
        const y = x.mul(2);
        line = here().line + 1;
        return y.exp().sum();
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AnomalyError);
    const a = error as AnomalyError;
    expect(a.op).toBe('exp');
    expect(a.value).toBe('Inf');
    expect(a.site).toContain(`guard.test.ts:${line}:`);
    expect(a.message).toContain('exp produced Inf from finite inputs');
  });

  it('does not blame ops that only pass on a NaN they were given', () => {
    const x = tensor([NaN, 1]);
    expect(() => detectAnomaly(() => x.add(1).mul(2).sum())).not.toThrow();
  });

  it('runs the function unchanged when nothing goes wrong, and only when synchronous', () => {
    expect(detectAnomaly(() => 41 + 1)).toBe(42);
    expect(() => detectAnomaly(() => Promise.resolve(1))).toThrow(/must be synchronous/);
  });
});

describe('the stability guard', () => {
  // Large weights and inputs: the linear layer's float32 result overflows float16 (max 65504) when it
  // is rounded to it (PyTorch's single rounding, bias included), but not bfloat16.
  function unstableSetup() {
    const model = new nn.Linear(64, 4);
    noGrad(() => model.weight.fill_(40));
    const x = randn([8, 64]).abs().mul(40);
    const y = randint(0, 4, [8]);
    return { model, x, y, lossFn: () => F.crossEntropy(model.forward(x), y) };
  }

  it('catches a deliberately unstable fp16 setup, names the overflowing cast, and recovers by falling back to bf16', async () => {
    const { lossFn } = unstableSetup();
    const logs: string[] = [];
    const guard = new StabilityGuard('cpu', ampConfig('cpu', 'fp16'), { log: (m) => logs.push(m) });
    const losses: number[] = [];
    for (let step = 0; step < 3; step++) {
      const loss = await autocast(guard.autocastOptions, lossFn).item();
      losses.push(loss);
      guard.observe(loss, { rerun: lossFn });
    }
    expect(Number.isFinite(losses[0]!)).toBe(false);
    expect(losses.slice(1).every(Number.isFinite)).toBe(true);
    expect(guard.config.mode).toBe('bf16');
    expect(guard.events).toHaveLength(1);
    const event = guard.events[0]!;
    expect(event.cause).toBe('non-finite loss');
    expect(event.anomaly?.op).toBe('cast');
    expect(event.anomaly?.site).toContain('guard.test.ts');
    expect(logs[0]).toMatch(/^amp guard: step 1: loss is NaN; first non-finite value: cast produced Inf at .*guard\.test\.ts:\d+:\d+; falling back fp16 → bf16$/);
  });

  it('treats a run of skipped steps as unstable (threshold configurable), and falls back bf16 → fp32', () => {
    const logs: string[] = [];
    const guard = new StabilityGuard('cpu', ampConfig('cpu', 'bf16'), { maxSkippedSteps: 3, log: (m) => logs.push(m) });
    expect(guard.observe(1.0, { skipped: true })).toBeNull();
    expect(guard.observe(1.0, { skipped: true })).toBeNull();
    expect(guard.observe(1.0)).toBeNull(); // a good step resets the run
    guard.observe(1.0, { skipped: true });
    guard.observe(1.0, { skipped: true });
    const event = guard.observe(1.0, { skipped: true });
    expect(event).toMatchObject({ cause: 'skipped steps', step: 6 });
    expect(event?.to?.mode).toBe('off');
    expect(guard.autocastOptions).toMatchObject({ deviceType: 'cpu', enabled: false });
    expect(logs[0]).toBe('amp guard: step 6: 3 steps in a row were skipped for Inf/NaN gradients; falling back bf16 → fp32');
  });

  it('in fp32 it reports without changing anything; with fallback: false it only reports', () => {
    const logs: string[] = [];
    const off = new StabilityGuard('cpu', ampConfig('cpu', 'off'), { log: (m) => logs.push(m) });
    expect(off.observe(NaN)?.to).toBeNull();
    expect(logs[0]).toMatch(/already in fp32/);
    const report = new StabilityGuard('cpu', ampConfig('cpu', 'fp16'), { fallback: false, log: () => {} });
    expect(report.observe(Infinity)?.to).toBeNull();
    expect(report.config.mode).toBe('fp16');
  });

  it('rejects a nonsense threshold', () => {
    expectError(() => new StabilityGuard('cpu', ampConfig('cpu'), { maxSkippedSteps: 0 }), TensorError, 'maxSkippedSteps must be a positive integer');
  });
});
