import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ampConfig } from '@core/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMnist } from '../src/mnist.js';
import { train, type TrainConfig } from '../src/train.js';

const small: TrainConfig = { device: 'cpu', model: 'mlp', epochs: 2, batchSize: 32, lr: 2e-3, seed: 7, amp: 'off' };
const data = loadMnist({ limit: 320 });
const dirs: string[] = [];

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'train-mnist-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the training loop', () => {
  it('loads 8,000 training and 2,000 held-out real digits with every class present', () => {
    const full = loadMnist();
    expect(full.trainImages.shape).toEqual([8000, 1, 28, 28]);
    expect(full.testImages.shape).toEqual([2000, 1, 28, 28]);
    const counts = new Array(10).fill(0);
    for (const label of full.testLabels.dataSync()) counts[label]++;
    expect(Math.min(...counts)).toBeGreaterThan(120); // 139 for the fixed split
    const pixels = full.trainImages.slice(0, 0, 10).dataSync();
    expect(Math.max(...pixels)).toBeLessThanOrEqual(1);
    expect(pixels.some((v) => v > 0.5)).toBe(true);
  });

  it('gives bit-identical losses for the same seed, and different ones for another seed', async () => {
    const a = await train(small, {}, data);
    const b = await train(small, {}, data);
    expect(a.stepLosses.length).toBe(20);
    expect(b.stepLosses).toEqual(a.stepLosses);
    const c = await train({ ...small, seed: 8 }, {}, data);
    expect(c.stepLosses).not.toEqual(a.stepLosses);
    // It learns: the last losses are well below the first.
    expect(a.stepLosses.slice(-5).reduce((s, v) => s + v) / 5).toBeLessThan(a.stepLosses[0]! * 0.8);
  });

  it('resumes from a checkpoint with the same losses as an uninterrupted run', async () => {
    const dir = await scratch();
    const whole = await train({ ...small, checkpoint: join(dir, 'whole') }, {}, data);
    const first = await train({ ...small, stopAfterEpochs: 1, checkpoint: join(dir, 'part') }, {}, data);
    expect(first.epochs.length).toBe(1);
    const resumed = await train({ ...small, resume: join(dir, 'part'), checkpoint: join(dir, 'part') }, {}, data);
    expect(resumed.stepLosses).toEqual(whole.stepLosses);
    expect(resumed.epochs.map((e) => e.testAccuracy)).toEqual(whole.epochs.map((e) => e.testAccuracy));
  });

  it('--amp bf16 and fp16 train with autocast (fp16 with a GradScaler), auto as ampConfig picks, and say which', async () => {
    // 'auto' takes bf16 only where the cpu backend reports bf16 autocast faster than float32, else trains in float32.
    const auto = ampConfig('cpu').mode;
    for (const amp of ['bf16', 'fp16', 'auto'] as const) {
      const r = await train({ ...small, epochs: 1, amp }, {}, data);
      expect(r.stepLosses.every(Number.isFinite)).toBe(true);
      expect(r.epochs[0]!.amp).toBe(amp === 'auto' ? auto : amp);
      expect(r.notices.join('\n')).toMatch(amp === 'fp16' ? /fp16 autocast on cpu with a GradScaler/ : amp === 'bf16' ? /bf16/ : /amp auto → /);
      expect(r.stepLosses.slice(-3).reduce((a, b) => a + b) / 3).toBeLessThan(r.stepLosses[0]!);
    }
  });

  it('mixed-precision runs are deterministic and resume exactly too', async () => {
    const dir = await scratch();
    const bf16 = { ...small, amp: 'bf16' as const };
    const whole = await train(bf16, {}, data);
    await train({ ...bf16, stopAfterEpochs: 1, checkpoint: join(dir, 'amp') }, {}, data);
    const resumed = await train({ ...bf16, resume: join(dir, 'amp') }, {}, data);
    expect(resumed.stepLosses).toEqual(whole.stepLosses);
  });

  it('--compile replays the training step with the same losses and test accuracy, bit for bit, for both models and with fp16', async () => {
    // 320 digits in batches of 48: six full batches and one of 32 per epoch, so the last batch traces a second program.
    for (const [model, amp] of [['mlp', 'off'], ['cnn', 'off'], ['mlp', 'fp16']] as const) {
      const config = { ...small, model, amp, batchSize: 48 };
      const eager = await train(config, {}, data);
      const compiled = await train({ ...config, compile: true }, {}, data);
      expect(compiled.stepLosses).toEqual(eager.stepLosses);
      expect(compiled.epochs.map((e) => e.testAccuracy)).toEqual(eager.epochs.map((e) => e.testAccuracy));
      expect(compiled.notices.join('\n')).toContain('compiled training step: recorded on its second call');
      // 14 calls: 1–3 trace the full batches (AdamW's state is made on call 1), 7 traces the last batch, and so does 14 (its second call).
      expect(compiled.notices.join('\n')).toContain('compiled training step: 9 of 14 calls replayed');
    }
  });

  it('explains an unavailable --device', async () => {
    await expect(train({ ...small, device: 'cuda' }, {}, data)).rejects.toThrow(/--device cuda: cuda is unavailable \((no NVIDIA driver|driver too old|no device|the native addon)/);
  });
});
